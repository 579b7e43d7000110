// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "tensor/dtype.h"
#include "util/diagnostic.h"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string_view>
#include <vector>

namespace probescope::tensor {

/// A dense, C-contiguous, little-endian tensor held in memory.
struct Tensor
{
    DType dtype = DType::Float32;
    std::vector<std::int64_t> shape; ///< empty for a 0-d tensor
    std::vector<std::byte> data;     ///< numel() * dtypeSize(dtype) bytes

    std::int64_t numel() const;
    /// Element i converted to double (bool -> 0/1, float16/bfloat16 exactly).
    double valueAt(std::int64_t i) const;
};

/// Max, Min, Mean and Norm (L2) as msprobe writes them, computed in one pass with double accumulation.
struct TensorStats
{
    double max = 0;
    double min = 0;
    double mean = 0;
    double norm = 0;
    std::int64_t nanCount = 0;
    std::int64_t infCount = 0;
    std::int64_t count = 0;
};

TensorStats computeStats(const Tensor& t);

/// Reads a NumPy .npy file (versions 1-3, C or Fortran order, either byte order).
Result<Tensor> loadNpy(const std::filesystem::path& path);

/// Reads a .pt file written by torch.save (zip format) holding one tensor.
Result<Tensor> loadPt(const std::filesystem::path& path);

/**
 * @brief Resolves a data_name under a tensor folder, refusing names that would leave it.
 *
 * Rejects absolute names, any ".." component, NUL bytes, and names whose real path (symlinks resolved)
 * lies outside the real path of `tensorDir`.
 */
Result<std::filesystem::path> resolveDataFile(const std::filesystem::path& tensorDir, std::string_view dataName);

/// resolveDataFile + loadPt/loadNpy chosen by extension.
Result<Tensor> loadTensorFile(const std::filesystem::path& tensorDir, std::string_view dataName);

/// Compares a loaded tensor with what dump.json says about it (dtype text as written, shape).
Diagnostics checkAgainstMetadata(const Tensor& t, std::string_view dtypeText, const std::vector<std::int64_t>& shape,
                                 const std::string& fileForMessages);

} // namespace probescope::tensor
