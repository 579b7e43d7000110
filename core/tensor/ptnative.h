// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/tensor/tensor.h"

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace probescope::tensor {

/**
 * @brief Reads the bytes of a torch.save archive holding one plain tensor, without LibTorch.
 *
 * Accepts only what torch.save writes for a single dense tensor: a zip of STORED records under one
 * folder (`data.pkl`, `data/<key>`, `version`, and the `byteorder` / `.data/serialization_id`
 * records newer torch adds), and a protocol-2 pickle calling `torch._utils._rebuild_tensor_v2` on
 * one persistent storage. Everything else is refused with the ids loadPt documents. It is meant to
 * be stricter than LibTorch: whatever it accepts, LibTorch reads to the same dtype, shape and bytes.
 * `path` only names the file in diagnostics.
 */
Result<Tensor> parsePtArchive(std::string_view bytes, const std::filesystem::path& path);

/**
 * @brief loadPt with a chosen limit for reading the whole file at once.
 *
 * Files up to `wholeFileLimit` bytes are read with one read(); larger ones with pread() of just
 * the zip directory, the pickle and the storage, so a large tensor is not held twice. loadPt uses
 * a few MiB; tests pass 0 to drive the pread path with small files.
 */
Result<Tensor> loadPtNative(const std::filesystem::path& path, std::uint64_t wholeFileLimit);

/// A growable byte buffer that is never zero-filled (reused from file to file by openPtStream).
class ReadBuffer
{
public:
    std::byte* reserve(std::size_t bytes);
    /// Frees the memory when it holds more than `keep` bytes.
    void trim(std::size_t keep);

private:
    std::unique_ptr<std::byte[]> m_data;
    std::size_t m_capacity = 0;
};

/**
 * @brief A .pt file opened to stream its elements: checked as loadPt checks it, the elements not read.
 *
 * Files up to `wholeFileLimit` bytes are read whole into `buffer` (one read(); the elements are then at
 * memory()); larger ones keep the file open and their elements are read where they lie (fd() at
 * dataOffset()), so a caller can read them a piece at a time with pread. A view that is not contiguous
 * (rare: torch.save of a slice) is gathered into memory. The PtStream must not outlive `buffer`.
 */
class PtStream
{
public:
    PtStream() = default;
    PtStream(PtStream&& other) noexcept;
    PtStream& operator=(PtStream&& other) noexcept;
    PtStream(const PtStream&) = delete;
    PtStream& operator=(const PtStream&) = delete;
    ~PtStream();

    DType dtype() const { return m_dtype; }
    const std::vector<std::int64_t>& shape() const { return m_shape; }
    std::int64_t numel() const { return m_numel; }
    const std::byte* memory() const { return m_memory; } ///< the elements, or nullptr: then fd()
    int fd() const { return m_fd; }
    std::uint64_t dataOffset() const { return m_dataOffset; }

private:
    friend Result<PtStream> openPtStream(const std::filesystem::path&, ReadBuffer&, std::uint64_t);
    DType m_dtype = DType::Float32;
    std::vector<std::int64_t> m_shape;
    std::int64_t m_numel = 0;
    const std::byte* m_memory = nullptr;
    std::vector<std::byte> m_gathered; ///< a non-contiguous view, gathered
    int m_fd = -1;
    std::uint64_t m_dataOffset = 0;
};

/// Error ids as loadPt.
Result<PtStream> openPtStream(const std::filesystem::path& path, ReadBuffer& buffer,
                              std::uint64_t wholeFileLimit = std::uint64_t { 1 } << 20);

/// Why a pickle stream was refused, and where.
struct PickleProblem
{
    std::uint64_t offset = 0; ///< byte offset inside the pickle stream
    std::string message;
    bool notATensor = false; ///< well-formed, but holds Python objects LibTorch cannot rebuild
};

/**
 * @brief Dry-runs a torch.save pickle (data.pkl) before LibTorch's unpickler sees it (core/tensortorch's guard).
 *
 * LibTorch 1.13 trusts the stream: a damaged opcode can pop an empty stack, index past a mark or
 * ask for a memo slot billions of entries away, which crashes the process instead of throwing.
 * This runs the native reader's pickle machine, which simulates the stack, marks and memo for exactly the
 * opcodes LibTorch understands and refuses anything that would reach undefined behaviour there: one pickle
 * walker for both readers.
 */
std::optional<PickleProblem> checkTorchPickle(std::string_view stream);

} // namespace probescope::tensor
