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
};

/// A contiguous CPU tensor with the values of `t`, or undefined when there are none to read.
at::Tensor readable(const at::Tensor& t);
/// Max, Min, Mean, Norm of a readable() tensor in one pass (double accumulation), msprobe's rules.
Stats stats(const at::Tensor& readableTensor);
/// msprobe's "md5" (zlib's CRC-32 of the bytes, bfloat16 widened first), 8 hex digits.
std::string md5(const at::Tensor& readableTensor);
/// Whether torch.save has a storage class for the tensor's dtype (else no .pt is written).
bool savable(const at::Tensor& readableTensor);
/// Writes the tensor as torch 1.13's torch.save does (see ptwriter.h). Error id: collect.io.
std::optional<Diagnostic> savePt(const at::Tensor& readableTensor, const std::filesystem::path& path);

} // namespace probescope::collect::leaf
