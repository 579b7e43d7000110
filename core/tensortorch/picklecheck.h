// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace probescope::tensor {

/// Why a pickle stream was refused, and where.
struct PickleProblem
{
    std::uint64_t offset = 0; ///< byte offset inside the pickle stream
    std::string message;
    bool notATensor = false; ///< well-formed, but holds Python objects LibTorch cannot rebuild
};

/**
 * @brief Dry-runs a torch.save pickle (data.pkl) before LibTorch's unpickler sees it.
 *
 * LibTorch 1.13 trusts the stream: a damaged opcode can pop an empty stack, index past a mark or
 * ask for a memo slot billions of entries away, which crashes the process instead of throwing.
 * This check simulates the stack, marks and memo of the pickle machine for exactly the opcodes
 * LibTorch understands and refuses anything that would reach undefined behaviour there.
 * It does not build values, so it cannot tell whether the result is a tensor.
 */
std::optional<PickleProblem> checkTorchPickle(std::string_view stream);

} // namespace probescope::tensor
