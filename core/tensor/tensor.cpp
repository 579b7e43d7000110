// SPDX-License-Identifier: Apache-2.0
#include "core/tensor/tensor.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

namespace probescope::tensor {

// Tensor::data is documented as little-endian; reading it with memcpy relies on the host agreeing.
static_assert(std::endian::native == std::endian::little, "ProbeScope's tensor code assumes a little-endian host");

namespace {

template<typename T>
T load(const std::byte* p)
{
    T value;
    std::memcpy(&value, p, sizeof(T));
    return value;
}

double elementAt(DType dtype, const std::byte* p)
{
    switch (dtype) {
    case DType::Bool:
        return load<std::uint8_t>(p) != 0 ? 1.0 : 0.0;
    case DType::UInt8:
        return load<std::uint8_t>(p);
    case DType::Int8:
        return load<std::int8_t>(p);
    case DType::Int16:
        return load<std::int16_t>(p);
    case DType::Int32:
        return load<std::int32_t>(p);
    case DType::Int64:
        return static_cast<double>(load<std::int64_t>(p));
    case DType::Float16:
        return halfToFloat(load<std::uint16_t>(p));
    case DType::BFloat16:
        return bfloat16ToFloat(load<std::uint16_t>(p));
    case DType::Float32:
        return load<float>(p);
    case DType::Float64:
        return load<double>(p);
    }
    return std::numeric_limits<double>::quiet_NaN();
}

} // namespace

std::int64_t Tensor::numel() const
{
    std::int64_t n = 1;
    for (std::int64_t d : shape)
        n *= d;
    return n;
}

double Tensor::valueAt(std::int64_t i) const
{
    // Out of range (or a tensor whose data does not match its shape) reads as NaN rather than past the buffer.
    const std::size_t size = dtypeSize(dtype);
    if (i < 0 || static_cast<std::uint64_t>(i) >= data.size() / size)
        return std::numeric_limits<double>::quiet_NaN();
    return elementAt(dtype, data.data() + static_cast<std::size_t>(i) * size);
}

namespace {

/// The statistics loop for one element type: the type is chosen once per tensor, not per element, and the
/// sums run in element order as before (same bits as the element-wise version).
template<typename Load>
void accumulateStats(const std::byte* p, std::size_t count, std::size_t size, bool floating, Load load,
                     TensorStats& stats, double& maxValue, double& minValue, double& sum, double& sumSquares)
{
    for (std::size_t i = 0; i < count; ++i, p += size) {
        const double v = load(p);
        if (floating) {
            if (std::isnan(v)) {
                ++stats.nanCount;
                continue; // max/min become NaN below; sums would only carry the NaN along
            }
            if (std::isinf(v))
                ++stats.infCount;
        }
        if (v > maxValue)
            maxValue = v;
        if (v < minValue)
            minValue = v;
        sum += v;
        sumSquares += v * v;
    }
}

} // namespace

TensorStats computeStats(const Tensor& t)
{
    constexpr double nan = std::numeric_limits<double>::quiet_NaN();
    TensorStats stats;
    const std::size_t size = dtypeSize(t.dtype);
    const std::size_t count = t.data.size() / size;
    stats.count = static_cast<std::int64_t>(count);
    if (count == 0) {
        // torch refuses max/min of an empty tensor and msprobe writes null for all four; NaN is our "no value".
        stats.max = stats.min = stats.mean = stats.norm = nan;
        return stats;
    }

    double maxValue = -std::numeric_limits<double>::infinity();
    double minValue = std::numeric_limits<double>::infinity();
    double sum = 0;
    double sumSquares = 0;
    const bool floating = isFloating(t.dtype);
    const std::byte* p = t.data.data();
    auto run = [&](auto load) { accumulateStats(p, count, size, floating, load, stats, maxValue, minValue, sum, sumSquares); };
    switch (t.dtype) {
    case DType::Float32:
        run([](const std::byte* q) -> double { return load<float>(q); });
        break;
    case DType::BFloat16:
        run([](const std::byte* q) -> double { return bfloat16ToFloat(load<std::uint16_t>(q)); });
        break;
    case DType::Float64:
        run([](const std::byte* q) -> double { return load<double>(q); });
        break;
    case DType::Float16:
        run([](const std::byte* q) -> double { return halfToFloat(load<std::uint16_t>(q)); });
        break;
    default: // integers and bool: rare in statistics that matter for speed
        run([dtype = t.dtype](const std::byte* q) -> double { return elementAt(dtype, q); });
        break;
    }

    if (stats.nanCount > 0) {
        // Like torch.max/min/mean/norm: one NaN poisons every statistic.
        stats.max = stats.min = stats.mean = stats.norm = nan;
        return stats;
    }
    stats.max = maxValue;
    stats.min = minValue;
    stats.mean = sum / static_cast<double>(count);
    stats.norm = std::sqrt(sumSquares);
    return stats;
}

} // namespace probescope::tensor
