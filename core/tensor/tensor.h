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

/**
 * @brief Max, Min, Mean and Norm (L2) as msprobe writes them, computed in one pass with double accumulation.
 *
 * Follows torch: one NaN element makes all four values NaN (nanCount says how many there were);
 * infinities propagate (inf and -inf together give a NaN mean). An empty tensor has count 0 and
 * NaN for all four values, where torch refuses max/min and msprobe writes null.
 * Bool counts as 0/1 and integers are converted to double.
 */
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

/**
 * @brief Reads a NumPy .npy file (versions 1-3, C or Fortran order, either byte order).
 *
 * Error ids: tensor.missing, io.read, tensor.npy-format (no magic), tensor.npy-version,
 * tensor.npy-header (unparsable header, negative or overflowing shape), tensor.dtype-unsupported,
 * tensor.truncated (less data than the shape needs), tensor.npy-trailing (more data).
 */
Result<Tensor> loadNpy(const std::filesystem::path& path);

/**
 * @brief Reads a .pt file written by torch.save (zip format) holding one tensor.
 *
 * Error ids: tensor.missing, io.read, tensor.pt-format (not a zip: legacy format or not a .pt),
 * tensor.pt-corrupt (damaged archive or pickle), tensor.pt-not-tensor (dict, list, other object),
 * tensor.dtype-unsupported (complex, quantized, ...). Never crashes on damaged input.
 */
Result<Tensor> loadPt(const std::filesystem::path& path);

/**
 * @brief Resolves a data_name under a tensor folder, refusing names that would leave it.
 *
 * Rejects absolute names, any ".." component, NUL bytes, and names whose real path (symlinks resolved)
 * lies outside the real path of `tensorDir`. Returns the real (link-free) path of the file.
 * Error ids: tensor.path-invalid (empty, NUL, link loop), tensor.path-escape, tensor.missing.
 */
Result<std::filesystem::path> resolveDataFile(const std::filesystem::path& tensorDir, std::string_view dataName);

/// resolveDataFile + loadPt/loadNpy chosen by extension (.pt/.pth, .npy; else tensor.format-unknown).
Result<Tensor> loadTensorFile(const std::filesystem::path& tensorDir, std::string_view dataName);

/**
 * @brief Compares a loaded tensor with what dump.json says about it (dtype text as written, shape).
 *
 * Errors: tensor.dtype-unknown, tensor.dtype-mismatch, tensor.shape-mismatch. A bfloat16 entry
 * held as float32 is only a warning, tensor.dtype-widened: numpy has no bfloat16, so MindSpore
 * dumps widen it when saving .npy.
 */
Diagnostics checkAgainstMetadata(const Tensor& t, std::string_view dtypeText, const std::vector<std::int64_t>& shape,
                                 const std::string& fileForMessages);

} // namespace probescope::tensor
