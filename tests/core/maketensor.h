// SPDX-License-Identifier: Apache-2.0
#pragma once
// Tensors made in tests from a list of values, stored as torch stores them in each dtype: shared by the metric tests
// (tst_realdata, tst_kernels, tst_sumorder, tst_ptdbg).

#include "core/tensor/dtype.h"
#include "core/tensor/tensor.h"

#include <cstdint>
#include <utility>
#include <vector>

namespace probescope::testing {

/// A tensor of `dtype` and `shape` holding `values` (converted as torch would store them).
inline tensor::Tensor makeTensor(tensor::DType dtype, std::vector<std::int64_t> shape, const std::vector<double>& values)
{
    using tensor::DType;
    const auto append = [](std::vector<std::byte>& out, auto v) {
        const auto* p = reinterpret_cast<const std::byte*>(&v);
        out.insert(out.end(), p, p + sizeof v);
    };
    tensor::Tensor t;
    t.dtype = dtype;
    t.shape = std::move(shape);
    for (const double v : values) {
        switch (dtype) {
        case DType::Bool:
            append(t.data, static_cast<std::uint8_t>(v != 0 ? 1 : 0));
            break;
        case DType::UInt8:
            append(t.data, static_cast<std::uint8_t>(v));
            break;
        case DType::Int8:
            append(t.data, static_cast<std::int8_t>(v));
            break;
        case DType::Int16:
            append(t.data, static_cast<std::int16_t>(v));
            break;
        case DType::Int32:
            append(t.data, static_cast<std::int32_t>(v));
            break;
        case DType::Int64:
            append(t.data, static_cast<std::int64_t>(v));
            break;
        case DType::Float16:
            append(t.data, tensor::floatToHalf(static_cast<float>(v)));
            break;
        case DType::BFloat16:
            append(t.data, tensor::floatToBfloat16(static_cast<float>(v)));
            break;
        case DType::Float32:
            append(t.data, static_cast<float>(v));
            break;
        case DType::Float64:
            append(t.data, v);
            break;
        }
    }
    return t;
}

/// A 1-d tensor of `dtype` holding `values`.
inline tensor::Tensor makeTensor(tensor::DType dtype, const std::vector<double>& values)
{
    return makeTensor(dtype, { static_cast<std::int64_t>(values.size()) }, values);
}

} // namespace probescope::testing
