// SPDX-License-Identifier: Apache-2.0
// The tensor leaves of a dump, for both front ends of the collector (the C++ API's torchcollect.cpp and the
// Python module, core/collect/python): msprobe 1.2.2's statistics, md5, .pt files and the leaf's JSON text.
// The one place these are computed and laid out, so both write the same bytes.
#pragma once

#include "core/dump/dumpwriter.h"
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
/// Max, Min, Mean, Norm of a readable() tensor as msprobe 1.2.2 computes them (get_stat_info_sync: torch's own
/// reductions in the dtype msprobe uses; see leafstats.cpp). `values`: the tensor as the model has it (detached),
/// whose layout decides torch's summation order; undefined = the readable copy.
Stats stats(const at::Tensor& readableTensor, const at::Tensor& values = {});
/// msprobe's "md5" (zlib's CRC-32 of the bytes, bfloat16 widened first), 8 hex digits.
std::string md5(const at::Tensor& readableTensor);
/// Whether torch.save has a storage class for the tensor's dtype (else no .pt is written).
bool savable(const at::Tensor& readableTensor);
/// Writes the tensor as torch 1.13's torch.save does (see ptwriter.h). Error id: collect.io.
std::optional<Diagnostic> savePt(const at::Tensor& readableTensor, const std::filesystem::path& path);

/// Statistic `i` (0 Max, 1 Min, 2 Mean, 3 Norm) as PyJsonWriter writes it (number(), integer(), boolean(), null()).
void appendStatistic(std::string& out, const Stats& s, int i);

/// Opens a tensor's leaf object and writes its first members: type, dtype, shape.
void beginTensorLeaf(dump::PyJsonWriter& json, const at::Tensor& t);
/// The leaf of a tensor as msprobe writes it: type, dtype, shape, Max, Min, Mean, Norm, requires_grad,
/// Max_except_inf_nan / Min_except_inf_nan (when Max / Min is inf or NaN), then data_name (only for a tensor
/// whose .pt file is written) and md5, each when given. `t` is the tensor as the model has it.
void writeTensorLeaf(dump::PyJsonWriter& json, const at::Tensor& t, const Stats& s, const std::string* dataName,
                     const std::string* md5Text);

} // namespace probescope::collect::leaf
