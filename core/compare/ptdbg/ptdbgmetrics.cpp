// SPDX-License-Identifier: Apache-2.0
// ptdbg 6.0's compare_by_op on two .npy arrays. Unlike msprobe, ptdbg computes the relative error in the
// bench array's own float type (float32 for float32 dumps), after adding that type's epsilon to the zero
// elements of both arrays *in place*; Cosine and MaxAbsErr then see those changed arrays in float64.
#include "core/compare/ptdbg/ptdbgmetrics.h"

#include "core/compare/table/pytext.h"
#include "core/tensor/dtype.h"

#include <cmath>
#include <string>
#include <unistd.h>

namespace probescope::compare::ptdbg {

namespace {

using tensor::DType;

constexpr double kFloatEpsilon = 2.220446049250313e-16; // np.finfo(float).eps

bool isFloat(DType t)
{
    return t == DType::Float16 || t == DType::Float32 || t == DType::Float64 || t == DType::BFloat16;
}

/// The float type numpy computes a binary operation of two arrays in (float arrays only).
DType promote(DType a, DType b)
{
    if (a == DType::Float64 || b == DType::Float64 || !isFloat(a) || !isFloat(b))
        return DType::Float64;
    if (a == DType::Float32 || b == DType::Float32 || a == DType::BFloat16 || b == DType::BFloat16)
        return DType::Float32;
    return DType::Float16;
}

double roundTo(DType t, double x)
{
    switch (t) {
    case DType::Float16:
        return tensor::halfToFloat(tensor::floatToHalf(static_cast<float>(x)));
    case DType::Float32:
    case DType::BFloat16: // .npy has no bfloat16: ptdbg saved those as float32
        return static_cast<float>(x);
    default:
        return x;
    }
}

/// numpy's float16 loops compute in float32 and round back; float32 ones in float32.
double subIn(DType t, double a, double b)
{
    if (t == DType::Float64)
        return a - b;
    return roundTo(t, static_cast<float>(a) - static_cast<float>(b));
}

double divIn(DType t, double a, double b)
{
    if (t == DType::Float64)
        return a / b;
    return roundTo(t, static_cast<float>(a) / static_cast<float>(b));
}

double addIn(DType t, double a, double b)
{
    if (t == DType::Float64)
        return a + b;
    return roundTo(t, static_cast<float>(a) + static_cast<float>(b));
}

/// np.finfo(dtype).eps
double epsOf(DType t)
{
    switch (t) {
    case DType::Float16:
        return 0.0009765625;
    case DType::Float32:
    case DType::BFloat16:
        return 1.1920928955078125e-07;
    default:
        return kFloatEpsilon;
    }
}

Cell text(const char* s)
{
    return Cell::text(s);
}

Cell formatted(double x)
{
    return Cell::number(fmt12(x));
}

} // namespace

std::string checkAccuracy(const Cell& cosine, const Cell& maxAbsErr)
{
    auto isText = [](const Cell& c, std::string_view s) { return c.isString() && c.asString() == s; };
    if (isText(cosine, "shape unmatched"))
        return "Unmatched";
    if (isText(cosine, "Nan") || isText(maxAbsErr, "Nan"))
        return "Nan";
    if (isText(cosine, "N/A") || isText(maxAbsErr, "N/A"))
        return "No";
    // float() of any other text ("unsupported") fails: ptdbg logs a warning and says Nan.
    if (!cosine.isNumeric() || !maxAbsErr.isNumeric())
        return "Nan";
    const double cos = cosine.asDouble();
    const double maxAbs = maxAbsErr.asDouble();
    if (cos < 0.99 && maxAbs > 0.001)
        return "No";
    if (cos < 0.9 || maxAbs > 1)
        return "No";
    return "Yes";
}

namespace {

/// Element i of one side as float64 (read with pread when the side is a file).
std::optional<double> valueOf(const PairSide& side, std::int64_t i)
{
    const std::size_t size = tensor::dtypeSize(side.dtype);
    std::byte raw[8] = {};
    const std::byte* p = nullptr;
    if (side.operand.memory) {
        p = side.operand.memory + static_cast<std::size_t>(i) * size;
    } else {
        const auto offset = static_cast<off_t>(side.operand.fileOffset + static_cast<std::uint64_t>(i) * size);
        if (::pread(side.operand.fd, raw, size, offset) != static_cast<ssize_t>(size))
            return std::nullopt;
        p = raw;
    }
    double v = 0;
    kernels::toFloat64(side.dtype, p, 1, &v);
    return v;
}

/// A 0-d pair (a Python scalar or a 0-d tensor): only MaxAbsErr and MaxRelativeErr, element by element.
std::optional<PtdbgMetrics> scalarMetrics(const PairSide& npu, const PairSide& bench)
{
    const std::optional<double> nv = valueOf(npu, 0);
    const std::optional<double> bv = valueOf(bench, 0);
    if (!nv || !bv)
        return std::nullopt;
    double n = *nv;
    double b = *bv;
    const DType nType = npu.dtype;
    const DType bType = bench.dtype;
    // get_relative_err
    double rel = 0;
    if (isFloat(bType)) {
        const double eps = epsOf(bType);
        if (b == 0) {
            b = addIn(bType, b, eps);
            n = isFloat(nType) ? addIn(nType, n, roundTo(bType, eps)) : n + eps;
        }
        const DType relType = promote(nType, bType);
        rel = std::abs(divIn(relType, subIn(relType, n, b), b));
    } else {
        // astype(float) copies: the zero elements change only in the copies.
        double nc = n;
        double bc = b;
        if (bc == 0) {
            bc += kFloatEpsilon;
            nc += kFloatEpsilon;
        }
        rel = std::abs((nc - bc) / bc);
    }
    PtdbgMetrics m;
    const bool boolean = nType == DType::Bool;
    const DType absType = boolean ? DType::Float64 : promote(nType, bType);
    double diff = 0;
    if (!boolean && !isFloat(nType) && !isFloat(bType))
        diff = n - b; // integer arithmetic, exact for the values a scalar holds
    else
        diff = subIn(absType, n, b);
    m.cosine = text("unsupported");
    m.maxAbsErr = formatted(std::abs(diff));
    m.maxRelativeErr = std::isnan(rel) ? text("Nan") : formatted(rel);
    m.oneThousandthErrRatio = m.fiveThousandthsErrRatio = text("Nan");
    m.message = "This is type of scalar data, can not compare.";
    return m;
}

/// A sum of the kernels, or (overflowed: compensation turns inf into NaN) the plain sum's inf.
double sumValue(const kernels::Sum& s)
{
    const double v = s.value();
    return std::isnan(v) && std::isinf(s.sum) ? s.sum : v;
}

} // namespace

std::optional<PtdbgMetrics> compareSides(const PairSide& npu, const PairSide& bench, bool fuzzyNames,
                                         Splitter& splitter)
{
    PtdbgMetrics m;
    auto fill = [&m](const Cell& c) {
        m.cosine = m.maxAbsErr = m.maxRelativeErr = m.oneThousandthErrRatio = m.fiveThousandthsErrRatio = c;
    };
    // ptdbg computes the relative error before it checks the shapes and crashes on a mismatch (numpy
    // cannot index one array with the other's mask); ProbeScope reports the shape mismatch instead.
    if (*npu.shape != *bench.shape) {
        fill(text("shape unmatched"));
        m.message = "Shape of NPU and bench Tensor do not match. Skipped.";
        return m;
    }
    if (npu.shape->empty())
        return scalarMetrics(npu, bench);
    const std::int64_t count = npu.numel;
    if (count == 0) {
        m.cosine = text("unsupported");
        m.maxAbsErr = m.maxRelativeErr = Cell::integer(0);
        m.oneThousandthErrRatio = m.fiveThousandthsErrRatio = Cell::integer(0);
        m.message = "This is empty data, can not compare.";
        return m;
    }

    // One fused pass (kernels.h, ptdbg's section): get_relative_err's in-place eps at bench zeros,
    // handle_inf_nan, the cosine's sums, MaxAbsErr, MaxRelativeErr and both ratios.
    const kernels::PtdbgRule rule = kernels::rulePtdbg(npu.dtype, bench.dtype);
    const kernels::PairStats stats =
        kernels::ptdbgPairStats(npu.operand, bench.operand, static_cast<std::uint64_t>(count), rule, splitter);
    if (stats.ioFailed)
        return std::nullopt;
    if (stats.anyInvalid && stats.masksDiffer) {
        fill(text("N/A"));
        m.message = "The position of inf or nan in NPU and bench Tensor do not match.";
        return m;
    }

    // cosine_similarity on float64 copies.
    std::string message;
    if (count == 1) {
        m.cosine = text("unsupported");
    } else {
        const double aNorm = std::sqrt(sumValue(stats.npuSq));
        const double bNorm = std::sqrt(sumValue(stats.benchSq));
        if (aNorm <= kFloatEpsilon && bNorm <= kFloatEpsilon) {
            m.cosine = Cell::number(1.0);
        } else if (aNorm <= kFloatEpsilon || bNorm <= kFloatEpsilon) {
            m.cosine = text("Nan");
        } else {
            const double cos = sumValue(stats.dot) / (aNorm * bNorm);
            if (std::isnan(cos))
                m.cosine = text("Nan");
            else {
                const double v = fmt12(cos);
                m.cosine = Cell::number(v > 0.99999 ? 1.0 : v); // correct_data
            }
        }
    }
    m.maxAbsErr = formatted(stats.maxAbs);
    if (stats.relNan) {
        m.maxRelativeErr = text("Nan");
        message = "Cannot compare by MaxRelativeError, the data contains nan in dump data.";
    } else {
        m.maxRelativeErr = formatted(stats.maxRel);
    }
    // rel_err_ratio: the threshold is compared in the relative error's own type (kernels' rule).
    const auto size = static_cast<double>(count);
    m.oneThousandthErrRatio = formatted(static_cast<double>(stats.belowOne) / size);
    m.fiveThousandthsErrRatio = formatted(static_cast<double>(stats.belowFive) / size);
    // Only MaxRelativeErr's message survives: ptdbg overwrites the Cosine one and resets the dtype one.
    m.message = message;
    if (fuzzyNames)
        m.message += " Fuzzy matching data, the comparison accuracy may be affected.";
    return m;
}

PtdbgMetrics compareArrays(const tensor::Tensor& npuTensor, const tensor::Tensor& benchTensor, bool fuzzyNames)
{
    SerialSplitter serial;
    // Memory operands never fail to read.
    return *compareSides(pairSideOf(npuTensor), pairSideOf(benchTensor), fuzzyNames, serial);
}

} // namespace probescope::compare::ptdbg
