// SPDX-License-Identifier: Apache-2.0
// The tensor leaves' statistics, md5 and .pt files of torchcollect.cpp, for the Python module
// (core/collect/python), which walks Python's arguments itself but must write the same values.
#pragma once

#include "core/util/diagnostic.h"

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

namespace probescope::collect::leaf {

struct Stats
{
    enum class Kind : std::uint8_t { None, Number, Integer, Boolean };
    Kind kind = Kind::None;       ///< None: empty or unreadable tensor (msprobe writes null)
    double max = 0, min = 0, mean = 0, norm = 0;
    std::int64_t integer = 0;     ///< Kind::Integer: a 0-d integer tensor's item()
    bool any = false, all = true; ///< Kind::Boolean
    bool overflow = false;        ///< an inf or nan element
    /// msprobe's Max_except_inf_nan / Min_except_inf_nan: set when Max / Min is inf or NaN.
    std::optional<double> maxExceptInfNan, minExceptInfNan;
};

/// A contiguous CPU tensor with the values of `t`, or undefined when there are none to read.
at::Tensor readable(const at::Tensor& t);
/// Max, Min, Mean, Norm of a readable() tensor as msprobe 1.2.2 computes them (torch's own reductions in the
/// dtype msprobe uses; see torchcollect.cpp, summarize). `values`: the tensor as the model has it (detached),
/// whose layout decides torch's summation order; undefined = the readable copy.
Stats stats(const at::Tensor& readableTensor, const at::Tensor& values = {});
/// msprobe's "md5" (zlib's CRC-32 of the bytes, bfloat16 widened first), 8 hex digits.
std::string md5(const at::Tensor& readableTensor);
/// Whether torch.save has a storage class for the tensor's dtype (else no .pt is written).
bool savable(const at::Tensor& readableTensor);
/// Writes the tensor as torch 1.13's torch.save does (see ptwriter.h). Error id: collect.io.
std::optional<Diagnostic> savePt(const at::Tensor& readableTensor, const std::filesystem::path& path);

} // namespace probescope::collect::leaf
