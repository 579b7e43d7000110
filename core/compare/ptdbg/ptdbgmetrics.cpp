// SPDX-License-Identifier: Apache-2.0
// ptdbg 6.0's compare_by_op on two .npy arrays. Unlike msprobe, ptdbg computes the relative error in the
// bench array's own float type (float32 for float32 dumps), after adding that type's epsilon to the zero
// elements of both arrays *in place*; Cosine and MaxAbsErr then see those changed arrays in float64.
#include "core/compare/ptdbg/ptdbgcompare.h"

#include "core/compare/pytext.h"
#include "core/tensor/dtype.h"

#include <cmath>
#include <limits>
#include <string>

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

/// max of an array the numpy way: a NaN anywhere gives NaN.
double npMax(const std::vector<double>& v)
{
    double m = -std::numeric_limits<double>::infinity();
    for (const double x : v) {
        if (std::isnan(x))
            return x;
        m = std::max(m, x);
    }
    return m;
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

PtdbgMetrics compareArrays(const tensor::Tensor& npuTensor, const tensor::Tensor& benchTensor, bool fuzzyNames)
{
    PtdbgMetrics m;
    auto fill = [&m](const Cell& c) {
        m.cosine = m.maxAbsErr = m.maxRelativeErr = m.oneThousandthErrRatio = m.fiveThousandthsErrRatio = c;
    };
    // ptdbg computes the relative error before it checks the shapes and crashes on a mismatch (numpy
    // cannot index one array with the other's mask); ProbeScope reports the shape mismatch instead.
    if (npuTensor.shape != benchTensor.shape) {
        fill(text("shape unmatched"));
        m.message = "Shape of NPU and bench Tensor do not match. Skipped.";
        return m;
    }
    const std::int64_t count = npuTensor.numel();
    std::vector<double> n(static_cast<std::size_t>(count));
    std::vector<double> b(static_cast<std::size_t>(count));
    for (std::int64_t i = 0; i < count; ++i) {
        n[static_cast<std::size_t>(i)] = npuTensor.valueAt(i);
        b[static_cast<std::size_t>(i)] = benchTensor.valueAt(i);
    }
    const DType nType = npuTensor.dtype;
    const DType bType = benchTensor.dtype;

    // get_relative_err
    std::vector<double> rel(n.size());
    DType relType = DType::Float64;
    if (isFloat(bType)) {
        const double eps = epsOf(bType);
        for (std::size_t i = 0; i < n.size(); ++i) {
            if (b[i] == 0) {
                b[i] = addIn(bType, b[i], eps);
                n[i] = isFloat(nType) ? addIn(nType, n[i], roundTo(bType, eps)) : n[i] + eps;
            }
        }
        relType = promote(nType, bType);
        for (std::size_t i = 0; i < n.size(); ++i)
            rel[i] = std::abs(divIn(relType, subIn(relType, n[i], b[i]), b[i]));
    } else {
        // astype(float) copies: the zero elements change only in the copies.
        for (std::size_t i = 0; i < n.size(); ++i) {
            double nv = n[i];
            double bv = b[i];
            if (bv == 0) {
                bv += kFloatEpsilon;
                nv += kFloatEpsilon;
            }
            rel[i] = std::abs((nv - bv) / bv);
        }
    }

    if (npuTensor.shape.empty()) {
        // A 0-d array: a Python scalar or a 0-d tensor.
        const bool boolean = nType == DType::Bool;
        const DType absType = boolean ? DType::Float64 : promote(nType, bType);
        double diff = 0;
        if (!boolean && !isFloat(nType) && !isFloat(bType))
            diff = n[0] - b[0]; // integer arithmetic, exact for the values a scalar holds
        else
            diff = subIn(absType, n[0], b[0]);
        m.cosine = text("unsupported");
        m.maxAbsErr = formatted(std::abs(diff));
        m.maxRelativeErr = std::isnan(rel[0]) ? text("Nan") : formatted(rel[0]);
        m.oneThousandthErrRatio = m.fiveThousandthsErrRatio = text("Nan");
        m.message = "This is type of scalar data, can not compare.";
        return m;
    }
    if (count == 0) {
        m.cosine = text("unsupported");
        m.maxAbsErr = m.maxRelativeErr = Cell::integer(0);
        m.oneThousandthErrRatio = m.fiveThousandthsErrRatio = Cell::integer(0);
        m.message = "This is empty data, can not compare.";
        return m;
    }

    // handle_inf_nan on the arrays changed above.
    bool anySpecial = false;
    bool samePositions = true;
    for (std::size_t i = 0; i < n.size(); ++i) {
        const bool nInf = std::isinf(n[i]);
        const bool bInf = std::isinf(b[i]);
        const bool nNan = std::isnan(n[i]);
        const bool bNan = std::isnan(b[i]);
        anySpecial = anySpecial || nInf || bInf || nNan || bNan;
        samePositions = samePositions && nInf == bInf && nNan == bNan;
    }
    if (anySpecial) {
        if (!samePositions) {
            fill(text("N/A"));
            m.message = "The position of inf or nan in NPU and bench Tensor do not match.";
            return m;
        }
        for (std::size_t i = 0; i < n.size(); ++i) {
            if (std::isinf(n[i]) || std::isnan(n[i]))
                n[i] = 0;
            if (std::isinf(b[i]) || std::isnan(b[i]))
                b[i] = 0;
        }
    }

    // cosine_similarity on float64 copies.
    std::string message;
    if (n.size() == 1) {
        m.cosine = text("unsupported");
    } else {
        long double dot = 0;
        long double nn = 0;
        long double bb = 0;
        for (std::size_t i = 0; i < n.size(); ++i) {
            dot += static_cast<long double>(n[i]) * b[i];
            nn += static_cast<long double>(n[i]) * n[i];
            bb += static_cast<long double>(b[i]) * b[i];
        }
        const double aNorm = std::sqrt(static_cast<double>(nn));
        const double bNorm = std::sqrt(static_cast<double>(bb));
        if (aNorm <= kFloatEpsilon && bNorm <= kFloatEpsilon) {
            m.cosine = Cell::number(1.0);
        } else if (aNorm <= kFloatEpsilon || bNorm <= kFloatEpsilon) {
            m.cosine = text("Nan");
        } else {
            const double cos = static_cast<double>(dot) / (aNorm * bNorm);
            if (std::isnan(cos))
                m.cosine = text("Nan");
            else {
                const double v = fmt12(cos);
                m.cosine = Cell::number(v > 0.99999 ? 1.0 : v); // correct_data
            }
        }
    }
    double maxAbs = 0;
    for (std::size_t i = 0; i < n.size(); ++i)
        maxAbs = std::max(maxAbs, std::abs(n[i] - b[i]));
    m.maxAbsErr = formatted(maxAbs);
    const double maxRel = npMax(rel);
    if (std::isnan(maxRel)) {
        m.maxRelativeErr = text("Nan");
        message = "Cannot compare by MaxRelativeError, the data contains nan in dump data.";
    } else {
        m.maxRelativeErr = formatted(maxRel);
    }
    // rel_err_ratio: the threshold is compared in the relative error's own type.
    // np.float16(0.001) rounds the double straight to half (no float step), hence the constants.
    const double t1 = relType == DType::Float16 ? 0.0010004043579101562 : roundTo(relType, 0.001);
    const double t5 = relType == DType::Float16 ? 0.005001068115234375 : roundTo(relType, 0.005);
    std::size_t below1 = 0;
    std::size_t below5 = 0;
    for (const double r : rel) {
        below1 += r < t1;
        below5 += r < t5;
    }
    m.oneThousandthErrRatio = formatted(static_cast<double>(below1) / static_cast<double>(rel.size()));
    m.fiveThousandthsErrRatio = formatted(static_cast<double>(below5) / static_cast<double>(rel.size()));
    // Only MaxRelativeErr's message survives: ptdbg overwrites the Cosine one and resets the dtype one.
    m.message = message;
    if (fuzzyNames)
        m.message += " Fuzzy matching data, the comparison accuracy may be affected.";
    return m;
}

} // namespace probescope::compare::ptdbg
