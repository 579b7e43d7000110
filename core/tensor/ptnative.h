// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "tensor/tensor.h"

#include <cstdint>
#include <filesystem>
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

} // namespace probescope::tensor
