// SPDX-License-Identifier: Apache-2.0
// Era C real-data metrics (compare-spec §5.2-5.4): squeeze, the validation chain, the relative error in
// the common float type with that type's epsilon, and EucDist.
#include "core/compare/msprobe26/msprobe26.h"

#include "core/compare/pytext.h"
#include "core/tensor/dtype.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <vector>

namespace probescope::compare::msprobe26 {

namespace {

using tensor::DType;
using tensor::Tensor;

constexpr double kFloat64Eps = 2.220446049250313e-16;
constexpr float kFloat32Eps = 1.1920929e-07f;

/// The first n elements as float64, the dtype decided once per tensor: typed loops the compiler can
/// vectorise instead of a dtype switch per element. float16 alone goes through Tensor::valueAt (its exact
/// conversion lives in the tensor library).
template<typename T>
void widen(const Tensor& t, std::vector<double>& out)
{
    const std::byte* p = t.data.data();
    for (std::size_t i = 0; i < out.size(); ++i) {
        T v;
        std::memcpy(&v, p + i * sizeof(T), sizeof(T));
        out[i] = static_cast<double>(v);
    }
}

void toFloat64(const Tensor& t, std::vector<double>& out)
{
    switch (t.dtype) {
    case DType::Float32: widen<float>(t, out); return;
    case DType::Float64: widen<double>(t, out); return;
    case DType::Int64: widen<std::int64_t>(t, out); return;
    case DType::Int32: widen<std::int32_t>(t, out); return;
    case DType::Int16: widen<std::int16_t>(t, out); return;
    case DType::Int8: widen<std::int8_t>(t, out); return;
    case DType::UInt8: widen<std::uint8_t>(t, out); return;
    case DType::Bool: {
        const std::byte* p = t.data.data();
        for (std::size_t i = 0; i < out.size(); ++i)
            out[i] = p[i] != std::byte { 0 } ? 1.0 : 0.0;
        return;
    }
    case DType::BFloat16: {
        // bfloat16 is the upper half of a float32.
        const std::byte* p = t.data.data();
        for (std::size_t i = 0; i < out.size(); ++i) {
            std::uint16_t h;
            std::memcpy(&h, p + i * 2, 2);
            const std::uint32_t bits = static_cast<std::uint32_t>(h) << 16;
            float f;
            std::memcpy(&f, &bits, 4);
            out[i] = f;
        }
        return;
    }
    case DType::Float16:
        break;
    }
    for (std::size_t i = 0; i < out.size(); ++i)
        out[i] = t.valueAt(static_cast<std::int64_t>(i));
}

RealDataMetrics allCells(const Cell& c)
{
    return msprobe26::RealDataMetrics { c, c, c, c, c, c };
}

bool isNumpyFloat(DType t)
{
    return t == DType::Float16 || t == DType::Float32 || t == DType::Float64;
}

/// np.squeeze: every size-1 dimension goes, so [1, N] becomes [N] and [1] a 0-d array.
std::vector<std::int64_t> squeezed(const std::vector<std::int64_t>& shape)
{
    std::vector<std::int64_t> out;
    for (const std::int64_t d : shape) {
        if (d != 1)
            out.push_back(d);
    }
    return out;
}

/// msprobe's loader widens bfloat16 to float32; every other dtype is kept.
DType loadedType(DType t)
{
    return t == DType::BFloat16 ? DType::Float32 : t;
}

double roundToHalf(double x)
{
    return tensor::halfToFloat(tensor::floatToHalf(static_cast<float>(x)));
}

/// np.result_type of two 0-d arrays, reduced to what the arithmetic precision needs: Float16, Float32,
/// Float64 or Int64 (any integer/bool pair, exact in double for the values dumps hold).
DType promote0d(DType a, DType b)
{
    const bool fa = isNumpyFloat(a);
    const bool fb = isNumpyFloat(b);
    if (!fa && !fb)
        return DType::Int64;
    if (fa && fb) {
        if (a == DType::Float64 || b == DType::Float64)
            return DType::Float64;
        return (a == DType::Float32 || b == DType::Float32) ? DType::Float32 : DType::Float16;
    }
    const DType f = fa ? a : b;
    const DType i = fa ? b : a;
    const bool small = i == DType::Bool || i == DType::UInt8 || i == DType::Int8;
    if (f == DType::Float64)
        return DType::Float64;
    if (small)
        return f;
    if (i == DType::Int16)
        return DType::Float32;
    return DType::Float64;
}

void maxWithNan(double& acc, double x)
{
    if (std::isnan(acc))
        return;
    if (std::isnan(x) || x > acc)
        acc = x;
}

Cell formatted(double v)
{
    if (std::isnan(v))
        return Cell::text("Nan");
    return Cell::number(fmt12(v));
}

/// x·x the way numpy's linalg.norm gets it: BLAS ddot. Debian's numpy uses the reference BLAS, whose
/// ddot adds the products strictly left to right (five per loop turn, same order).
double blasDot(const std::vector<double>& x, const std::vector<double>& y)
{
    double sum = 0;
    for (std::size_t i = 0; i < x.size(); ++i)
        sum += x[i] * y[i];
    return sum;
}

} // namespace

RealDataMetrics compareTensors(const Tensor& npuTensor, const Tensor& benchTensor)
{
    const Cell unsupported = Cell::text("unsupported");
    const std::int64_t n = npuTensor.numel();
    if (n < 0 || static_cast<std::uint64_t>(n) * tensor::dtypeSize(npuTensor.dtype) != npuTensor.data.size()
        || benchTensor.numel() < 0
        || static_cast<std::uint64_t>(benchTensor.numel()) * tensor::dtypeSize(benchTensor.dtype)
            != benchTensor.data.size())
        return allCells(unsupported); // "Data is unreadable."
    if (n == 0)
        return allCells(unsupported); // "This is empty data, can not compare."
    const auto npuShape = squeezed(npuTensor.shape);
    const auto benchShape = squeezed(benchTensor.shape);
    if (npuShape != benchShape)
        return allCells(Cell::text("shape unmatched"));
    const bool zeroD = npuShape.empty();
    const DType nt = loadedType(npuTensor.dtype);
    const DType bt = loadedType(benchTensor.dtype);

    std::vector<double> nv(static_cast<std::size_t>(n));
    std::vector<double> bv(static_cast<std::size_t>(n));
    toFloat64(npuTensor, nv);
    toFloat64(benchTensor, bv);

    if (!zeroD) {
        bool invalid = false;
        bool masksDiffer = false;
        for (std::size_t i = 0; i < nv.size(); ++i) {
            invalid = invalid || !std::isfinite(nv[i]) || !std::isfinite(bv[i]);
            masksDiffer = masksDiffer || std::isinf(nv[i]) != std::isinf(bv[i]) || std::isnan(nv[i]) != std::isnan(bv[i]);
        }
        if (invalid && masksDiffer)
            return allCells(Cell::text("N/A"));
        if (invalid) {
            // Same positions on both sides: msprobe zeroes them (the signs of infinities are not compared).
            for (std::size_t i = 0; i < nv.size(); ++i) {
                if (!std::isfinite(nv[i])) {
                    nv[i] = 0;
                    bv[i] = 0;
                }
            }
        }
    }

    // Relative error in T = result_type(npu, bench, float32) with T's epsilon at bench zeros.
    const DType rn = isNumpyFloat(nt) ? nt : DType::Float64;
    const DType rb = isNumpyFloat(bt) ? bt : DType::Float64;
    const bool wide = rn == DType::Float64 || rb == DType::Float64;
    std::vector<double> re(nv.size());
    double maxRelative = -std::numeric_limits<double>::infinity();
    for (std::size_t i = 0; i < nv.size(); ++i) {
        double r = 0;
        if (wide) {
            double a = nv[i];
            double b = bv[i];
            if (b == 0) {
                a += kFloat64Eps;
                b += kFloat64Eps;
            }
            r = std::fabs((a - b) / b);
        } else {
            float a = static_cast<float>(nv[i]);
            float b = static_cast<float>(bv[i]);
            if (b == 0) {
                a += kFloat32Eps;
                b += kFloat32Eps;
            }
            const float d = a - b;
            r = std::fabs(static_cast<double>(d / b));
        }
        re[i] = r;
        maxWithNan(maxRelative, r);
    }

    msprobe26::RealDataMetrics m;
    // Cosine and EucDist on the flattened float64 arrays.
    if (zeroD) {
        m.cosine = unsupported;
        m.eucDist = unsupported;
    } else {
        if (nv.size() == 1) {
            m.cosine = unsupported;
        } else {
            const double dot = blasDot(nv, bv);
            const double na = std::sqrt(blasDot(nv, nv));
            const double nb = std::sqrt(blasDot(bv, bv));
            if (na <= kFloat64Eps && nb <= kFloat64Eps) {
                m.cosine = Cell::number(1.0);
            } else if (na <= kFloat64Eps || nb <= kFloat64Eps) {
                m.cosine = Cell::text("Nan");
            } else {
                const double c = dot / (na * nb);
                if (std::isnan(c)) {
                    m.cosine = Cell::text("Nan");
                } else {
                    double v = fmt12(c);
                    if (v > 0.9999)
                        v = round6(v);
                    m.cosine = Cell::number(v);
                }
            }
        }
        std::vector<double> diff(nv.size());
        for (std::size_t i = 0; i < nv.size(); ++i)
            diff[i] = nv[i] - bv[i];
        m.eucDist = Cell::number(std::sqrt(blasDot(diff, diff)));
    }

    // MaxAbsErr: float64 on flattened arrays; a 0-d pair keeps numpy's promoted scalar type.
    double maxAbs = -std::numeric_limits<double>::infinity();
    if (zeroD) {
        const DType p = (nt == DType::Bool) ? DType::Float64 : promote0d(nt, bt);
        double d = 0;
        switch (p) {
        case DType::Float16:
            d = roundToHalf(static_cast<float>(nv[0]) - static_cast<float>(bv[0]));
            break;
        case DType::Float32:
            d = static_cast<float>(nv[0]) - static_cast<float>(bv[0]);
            break;
        default:
            d = nv[0] - bv[0];
            break;
        }
        maxAbs = std::fabs(d);
    } else {
        for (std::size_t i = 0; i < nv.size(); ++i)
            maxWithNan(maxAbs, std::fabs(nv[i] - bv[i]));
    }
    m.maxAbsErr = formatted(maxAbs);
    m.maxRelativeErr = formatted(maxRelative);

    if (zeroD) {
        m.oneThousandthErrRatio = unsupported;
        m.fiveThousandthsErrRatio = unsupported;
    } else {
        // numpy compares a float32 array with a Python float in float32.
        const double one = wide ? 0.001 : static_cast<double>(static_cast<float>(0.001));
        const double five = wide ? 0.005 : static_cast<double>(static_cast<float>(0.005));
        std::size_t belowOne = 0;
        std::size_t belowFive = 0;
        for (const double r : re) {
            belowOne += r < one ? 1 : 0;
            belowFive += r < five ? 1 : 0;
        }
        const auto size = static_cast<double>(re.size());
        m.oneThousandthErrRatio = re.empty() ? Cell::text("Nan") : Cell::number(fmt12(static_cast<double>(belowOne) / size));
        m.fiveThousandthsErrRatio = re.empty() ? Cell::text("Nan") : Cell::number(fmt12(static_cast<double>(belowFive) / size));
    }
    return m;
}

} // namespace probescope::compare::msprobe26
