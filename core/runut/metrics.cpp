// SPDX-License-Identifier: Apache-2.0
// The tensor part of run_ut's judge (run-ut-spec §5.2-5.5). msprobe computes on numpy arrays; the
// working type here is the one numpy would pick for the pair: float64 when either side is float64
// (an fp32 device output against its fp64 bench), float32 otherwise (fp16/bf16 devices against their
// fp32 bench), so that roundings of |d - b| and of the relative error match. Reductions (sums behind
// means, the RMSE and the cosine) accumulate in double; numpy sums float32 arrays pairwise in float32,
// so float32 means can differ from msprobe's in the last printed digit (docs/run-ut-standards.md).
#include "core/runut/metrics.h"

#include "core/compare/metrics/kernels.h"
#include "core/tensor/dtype.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

namespace probescope::runut::detail {

namespace {

using tensor::DType;
using tensor::Tensor;

constexpr double kPyFloatEps = 2.220446049250313e-16; // np.finfo(float).eps, cosine's "all zero" bound
constexpr double kBf16Max = 3.3895313892515355e38;    // CompareConst.BFLOAT16_MAX

std::size_t elementCount(const Tensor& t)
{
    const std::size_t size = tensor::dtypeSize(t.dtype);
    const auto n = static_cast<std::size_t>(std::max<std::int64_t>(t.numel(), 0));
    return std::min(n, t.data.size() / size);
}

template<typename T>
T readRaw(const std::byte* p)
{
    T v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

/// The values of `t` as W (every dtype here is exact in double; in float for all but int32/int64/float64,
/// which never meet a float working type).
template<typename W>
std::vector<W> load(const Tensor& t)
{
    const std::size_t n = elementCount(t);
    const std::size_t size = tensor::dtypeSize(t.dtype);
    if constexpr (std::is_same_v<W, double>) {
        // The compare kernels' bulk widening (vectorised; the same exact values as the loop below). The metrics
        // themselves are not the kernels' (docs/compare-performance.md, "run_ut"): they stay element-wise here.
        std::vector<double> out(n);
        compare::kernels::toFloat64(t.dtype, t.data.data(), n, out.data());
        return out;
    }
    std::vector<W> out(n);
    const std::byte* p = t.data.data();
    for (std::size_t i = 0; i < n; ++i, p += size) {
        switch (t.dtype) {
        case DType::Bool:
            out[i] = static_cast<W>(readRaw<std::uint8_t>(p) != 0 ? 1 : 0);
            break;
        case DType::UInt8:
            out[i] = static_cast<W>(readRaw<std::uint8_t>(p));
            break;
        case DType::Int8:
            out[i] = static_cast<W>(readRaw<std::int8_t>(p));
            break;
        case DType::Int16:
            out[i] = static_cast<W>(readRaw<std::int16_t>(p));
            break;
        case DType::Int32:
            out[i] = static_cast<W>(readRaw<std::int32_t>(p));
            break;
        case DType::Int64:
            out[i] = static_cast<W>(readRaw<std::int64_t>(p));
            break;
        case DType::Float16:
            out[i] = static_cast<W>(tensor::halfToFloat(readRaw<std::uint16_t>(p)));
            break;
        case DType::BFloat16:
            out[i] = static_cast<W>(tensor::bfloat16ToFloat(readRaw<std::uint16_t>(p)));
            break;
        case DType::Float32:
            out[i] = static_cast<W>(readRaw<float>(p));
            break;
        case DType::Float64:
            out[i] = static_cast<W>(readRaw<double>(p));
            break;
        }
    }
    return out;
}

std::vector<std::int64_t> loadInts(const Tensor& t)
{
    const std::size_t n = elementCount(t);
    std::vector<std::int64_t> out(n);
    const std::size_t size = tensor::dtypeSize(t.dtype);
    const std::byte* p = t.data.data();
    for (std::size_t i = 0; i < n; ++i, p += size) {
        switch (t.dtype) {
        case DType::Bool:
            out[i] = readRaw<std::uint8_t>(p) != 0 ? 1 : 0;
            break;
        case DType::UInt8:
            out[i] = readRaw<std::uint8_t>(p);
            break;
        case DType::Int8:
            out[i] = readRaw<std::int8_t>(p);
            break;
        case DType::Int16:
            out[i] = readRaw<std::int16_t>(p);
            break;
        case DType::Int32:
            out[i] = readRaw<std::int32_t>(p);
            break;
        case DType::Int64:
            out[i] = readRaw<std::int64_t>(p);
            break;
        default:
            out[i] = static_cast<std::int64_t>(t.valueAt(static_cast<std::int64_t>(i)));
            break;
        }
    }
    return out;
}

const char* numpyName(DType t)
{
    switch (t) {
    case DType::Bool:
        return "bool";
    case DType::UInt8:
        return "uint8";
    case DType::Int8:
        return "int8";
    case DType::Int16:
        return "int16";
    case DType::Int32:
        return "int32";
    case DType::Int64:
        return "int64";
    case DType::Float16:
        return "float16";
    case DType::BFloat16:
    case DType::Float32:
        return "float32";
    case DType::Float64:
        return "float64";
    }
    return "?";
}

enum class Group : std::uint8_t { Float, Bool, Int, Other };

/// msprobe's check_dtype_comparable groups (numpy dtypes).
Group groupOf(DType t)
{
    switch (t) {
    case DType::Float16:
    case DType::Float32:
    case DType::Float64:
        return Group::Float;
    case DType::Bool:
    case DType::UInt8:
        return Group::Bool;
    case DType::Int8:
    case DType::Int32:
    case DType::Int64:
        return Group::Int;
    default:
        return Group::Other;
    }
}

bool isIntegerLike(DType t)
{
    return !tensor::isFloating(t);
}

void setMetric(DetailRow& row, Metric m, double value, NumberKind kind)
{
    row.metric(m) = value;
    row.kinds[static_cast<std::size_t>(m)] = kind;
}

/// A ratio that msprobe returns as the Python int 0 when its mask is empty.
void setRatio(DetailRow& row, Metric m, std::size_t count, std::size_t total)
{
    if (total == 0)
        setMetric(row, m, 0, NumberKind::Int);
    else
        setMetric(row, m, static_cast<double>(count) / static_cast<double>(total), NumberKind::Float64);
}

template<typename W>
constexpr NumberKind kindOf()
{
    return sizeof(W) == sizeof(double) ? NumberKind::Float64 : NumberKind::Float32;
}

/// StandardConfig (§5.5), keyed by the device torch dtype; anything else takes the fp32 values.
struct Thresholds
{
    double smallValue;
    double atol;
    double rtol;
};

Thresholds thresholdsFor(DType device, Standard s)
{
    switch (device) {
    case DType::Float16:
        if (s == Standard::Accumulative)
            return { 1.0, 0x1p-8, 0x1p-8 };
        if (s == Standard::AbsoluteThreshold)
            return { 0x1p-10, 0x1p-16, 0x1p-10 };
        return { 0x1p-10, 1e-16, 0x1p-10 };
    case DType::BFloat16:
        if (s == Standard::Accumulative)
            return { 1.0, 0x1p-7, 0x1p-7 };
        if (s == Standard::AbsoluteThreshold)
            return { 0x1p-10, 1e-16, 0x1p-8 };
        return { 0x1p-10, 1e-16, 0x1p-8 };
    default:
        if (s == Standard::Accumulative)
            return { 1.0, 0x1p-11, 0x1p-11 };
        return { 0x1p-20, 0x1p-30, 0x1p-20 };
    }
}

/// One float comparison: b and d as numpy holds them (after the bf16 cast), W the working type.
template<typename W>
struct FloatPair
{
    std::vector<W> b, d;
    DType benchNp = DType::Float32;  ///< numpy dtype of the bench array
    DType deviceNp = DType::Float32; ///< numpy dtype of the device array
    DType deviceTorch = DType::Float32;
    W eps = 0;

    std::size_t size() const { return b.size(); }

    /// b.astype(d.dtype)
    W benchAsDevice(W x) const
    {
        if (deviceNp == DType::Float16)
            return static_cast<W>(tensor::halfToFloat(tensor::floatToHalf(static_cast<float>(x))));
        if (deviceNp == DType::Float32)
            return static_cast<W>(static_cast<float>(x));
        return x;
    }
    bool bothFinite(std::size_t i) const { return std::isfinite(d[i]) && std::isfinite(benchAsDevice(b[i])); }
    W absErr(std::size_t i) const { return std::abs(d[i] - b[i]); }
};

template<typename W>
void benchmarkMetrics(const FloatPair<W>& p, DetailRow& row)
{
    const Thresholds th = thresholdsFor(p.deviceTorch, Standard::Benchmark);
    const W smallValue = static_cast<W>(th.smallValue);
    const W atol = static_cast<W>(th.atol);
    const std::size_t n = p.size();
    std::size_t smallCount = 0, smallErr = 0, masked = 0, larger = 0, smaller = 0, relCount = 0;
    double squares = 0, relSum = 0;
    W relMax = 0;
    for (std::size_t i = 0; i < n; ++i) {
        const W bd = p.benchAsDevice(p.b[i]);
        const bool finite = std::isfinite(p.d[i]) && std::isfinite(bd);
        const W ae = p.absErr(i);
        const W ab = std::abs(p.b[i]);
        const bool small = ab <= smallValue && finite;
        if (small) {
            ++smallCount;
            if (ae > atol)
                ++smallErr;
        }
        if (!finite || small) {
            ++masked;
        } else {
            const W sq = ae * ae;
            squares += static_cast<double>(sq);
            const W rel = ae / (ab + p.eps);
            relMax = relCount == 0 ? rel : std::max(relMax, rel);
            relSum += static_cast<double>(rel);
            ++relCount;
        }
        if (p.d[i] > bd)
            ++larger;
        else if (p.d[i] < bd)
            ++smaller;
    }
    setRatio(row, Metric::SmallValueErrRatio, smallErr, smallCount);
    // np.mean of the masked squares is a W scalar; the correction factor is float64 arithmetic.
    const W mse = static_cast<W>(squares / static_cast<double>(n));
    const double scaled = static_cast<double>(mse)
        * (static_cast<double>(n) / (static_cast<double>(n) - static_cast<double>(masked) + 1e-4) + 1e-4);
    setMetric(row, Metric::Rmse, std::sqrt(scaled), NumberKind::Float64);
    const auto diff = larger > smaller ? larger - smaller : smaller - larger;
    setMetric(row, Metric::Eb, static_cast<double>(diff) / static_cast<double>(n), NumberKind::Float64);
    // Masked elements hold -1: the max is then -1 unless something is left, and max < 0 gives the int 0.
    if (relCount == 0)
        setMetric(row, Metric::MaxRelErr, 0, NumberKind::Int);
    else
        setMetric(row, Metric::MaxRelErr, static_cast<double>(relMax), kindOf<W>());
    if (relCount == 0)
        setMetric(row, Metric::MeanRelErr, 0, NumberKind::Int);
    else
        setMetric(row, Metric::MeanRelErr, static_cast<double>(static_cast<W>(relSum / static_cast<double>(relCount))),
                  kindOf<W>());
}

template<typename W>
void absoluteMetrics(const FloatPair<W>& p, const Thresholds& th, DetailRow& row)
{
    const W smallValue = static_cast<W>(th.smallValue);
    const W atol = static_cast<W>(th.atol);
    const W rtol = static_cast<W>(th.rtol);
    double clipMax = DBL_MAX;
    if (p.deviceTorch == DType::BFloat16)
        clipMax = kBf16Max;
    else if (p.deviceNp == DType::Float16)
        clipMax = 65504.0;
    else if (p.deviceNp == DType::Float32)
        clipMax = FLT_MAX;
    const W hi = static_cast<W>(clipMax);
    const std::size_t n = p.size();
    std::size_t infNan = 0, infNanFail = 0, normal = 0, relFail = 0, smallCount = 0, absFail = 0;
    for (std::size_t i = 0; i < n; ++i) {
        const W bd = p.benchAsDevice(p.b[i]);
        const bool finite = std::isfinite(p.d[i]) && std::isfinite(bd);
        const W ae = p.absErr(i);
        const W abse = std::abs(p.b[i]) + p.eps;
        const bool small = std::abs(p.b[i]) <= smallValue && finite;
        if (finite && !small) {
            ++normal;
            if (ae / abse > rtol)
                ++relFail;
        }
        if (small) {
            ++smallCount;
            if (ae > atol)
                ++absFail;
        }
        if (!finite) {
            ++infNan;
            // np.clip keeps NaN; the difference is taken in the device dtype, where it may overflow.
            const W bc = std::isnan(bd) ? bd : std::clamp(bd, -hi, hi);
            const W dc = std::isnan(p.d[i]) ? p.d[i] : std::clamp(p.d[i], -hi, hi);
            W diff = std::abs(dc - bc);
            if (p.deviceNp == DType::Float32)
                diff = static_cast<W>(std::abs(static_cast<float>(dc) - static_cast<float>(bc)));
            else if (p.deviceNp == DType::Float16)
                diff = static_cast<W>(tensor::halfToFloat(tensor::floatToHalf(static_cast<float>(diff))));
            const bool pass = diff / abse <= rtol || (std::isnan(p.d[i]) && std::isnan(bc));
            if (!pass)
                ++infNanFail;
        }
    }
    setRatio(row, Metric::InfNanErrRate, infNanFail, infNan);
    setRatio(row, Metric::RelErrRate, relFail, normal);
    setRatio(row, Metric::AbsErrRate, absFail, smallCount);
}

template<typename W>
void errorBalance(const FloatPair<W>& p, DetailRow& row)
{
    std::size_t larger = 0, smaller = 0;
    for (std::size_t i = 0; i < p.size(); ++i) {
        const W bd = p.benchAsDevice(p.b[i]);
        if (p.d[i] > bd)
            ++larger;
        else if (p.d[i] < bd)
            ++smaller;
    }
    const auto diff = larger > smaller ? larger - smaller : smaller - larger;
    setMetric(row, Metric::Eb, static_cast<double>(diff) / static_cast<double>(p.size()), NumberKind::Float64);
}

/// ULP for fp16/bf16/fp32 devices; T is float64 for fp32, float32 otherwise, as in msprobe.
template<typename T, typename W>
void ulpMetricsIn(const FloatPair<W>& p, DetailRow& row)
{
    double minEb = -126;
    double mantissa = 23;
    double threshold = 32;
    if (p.deviceTorch == DType::Float16) {
        minEb = -14;
        mantissa = 10;
        threshold = 1;
    } else if (p.deviceTorch == DType::BFloat16) {
        mantissa = 7;
        threshold = 1;
    }
    const std::size_t n = p.size();
    T maxUlp = 0;
    bool anyNan = false;
    double sum = 0;
    std::size_t over = 0;
    for (std::size_t i = 0; i < n; ++i) {
        const W ab = std::abs(p.b[i]);
        // np.log2 runs in the bench dtype: in float32 it can round up to the next integer.
        W eb = ab == 0 ? W(0) : std::floor(std::log2(ab));
        eb = std::max(eb, static_cast<W>(minEb));
        const T scale = static_cast<T>(std::exp2(static_cast<W>(-eb + static_cast<W>(mantissa))));
        const T diff = static_cast<T>(static_cast<T>(p.d[i]) - static_cast<T>(p.b[i]));
        const T ulp = std::abs(diff * scale);
        if (std::isnan(ulp))
            anyNan = true;
        else if (i == 0 || ulp > maxUlp)
            maxUlp = ulp;
        sum += static_cast<double>(ulp);
        if (ulp > static_cast<T>(threshold))
            ++over;
    }
    const NumberKind kind = sizeof(T) == sizeof(double) ? NumberKind::Float64 : NumberKind::Float32;
    setMetric(row, Metric::UlpMax, anyNan ? std::numeric_limits<double>::quiet_NaN() : static_cast<double>(maxUlp),
              kind);
    setMetric(row, Metric::UlpMean, static_cast<double>(static_cast<T>(sum / static_cast<double>(n))), kind);
    setMetric(row, Metric::UlpOverRatio, static_cast<double>(over) / static_cast<double>(n), NumberKind::Float64);
}

template<typename W>
void ulpMetrics(const FloatPair<W>& p, DetailRow& row)
{
    if (p.deviceTorch == DType::Float32)
        ulpMetricsIn<double>(p, row);
    else
        ulpMetricsIn<float>(p, row);
}

template<typename W>
void newStandard(const FloatPair<W>& p, const CompareContext& ctx, DetailRow& row)
{
    const Standard s = dispatchStandard(ctx.apiName, tensor::torchName(p.deviceTorch), ctx.inputWasFp8, ctx.profile);
    const std::size_t n = p.size();
    switch (s) {
    case Standard::Benchmark:
        benchmarkMetrics(p, row);
        break;
    case Standard::AbsoluteThreshold:
        absoluteMetrics(p, thresholdsFor(p.deviceTorch, s), row);
        break;
    case Standard::Accumulative:
        absoluteMetrics(p, thresholdsFor(p.deviceTorch, s), row);
        errorBalance(p, row);
        break;
    case Standard::Binary: {
        std::size_t diff = 0;
        for (std::size_t i = 0; i < n; ++i)
            diff += p.b[i] != p.d[i] ? 1 : 0;
        setMetric(row, Metric::BinaryErrRate, static_cast<double>(diff) / static_cast<double>(n), NumberKind::Float64);
        break;
    }
    case Standard::Ulp:
        ulpMetrics(p, row);
        break;
    case Standard::Thousandth: {
        std::size_t within = 0;
        const W t = static_cast<W>(0.001);
        for (std::size_t i = 0; i < n; ++i)
            within += std::abs(p.absErr(i) / (std::abs(p.b[i]) + p.eps)) < t ? 1 : 0;
        setMetric(row, Metric::Ratio1000, static_cast<double>(within) / static_cast<double>(n), NumberKind::Float64);
        break;
    }
    }
}

struct Cosine
{
    std::optional<double> value; ///< nullopt = SPACE
    bool ok = false;
    std::string message;
};

template<typename W>
Cosine cosineSimilarity(const FloatPair<W>& p, Profile profile)
{
    const std::size_t n = p.size();
    if (n == 1)
        return { std::nullopt, true, "All the data in device dump data is scalar. Please refer to other compare algorithms." };
    double dMax = 0, bMax = 0;
    bool nan = false;
    for (std::size_t i = 0; i < n; ++i) {
        const double d = std::abs(static_cast<double>(p.d[i]));
        const double b = std::abs(static_cast<double>(p.b[i]));
        nan = nan || std::isnan(d) || std::isnan(b);
        dMax = std::max(dMax, d);
        bMax = std::max(bMax, b);
    }
    if (!nan) {
        if (dMax <= kPyFloatEps && bMax <= kPyFloatEps)
            return { std::nullopt, true, "All the data in device and bench outputs are zero." };
        if (dMax <= kPyFloatEps)
            return { std::nullopt, false, "All the data is zero in device dump data." };
        if (bMax <= kPyFloatEps)
            return { std::nullopt, false, "All the data is zero in bench dump data." };
    }
    double dot = 0, dd = 0, bb = 0;
    if (nan) {
        dot = std::numeric_limits<double>::quiet_NaN();
    } else {
        for (std::size_t i = 0; i < n; ++i) {
            const double d = static_cast<double>(p.d[i]) / dMax;
            const double b = static_cast<double>(p.b[i]) / bMax;
            dot += d * b;
            dd += d * d;
            bb += b * b;
        }
    }
    double cos = dot / (std::sqrt(dd) * std::sqrt(bb));
    Cosine out;
    if (std::isnan(cos)) {
        out.message = "Dump data has NaN when comparing with Cosine Similarity.";
        out.value = cos;
        out.ok = profile == Profile::Msprobe26;
        return out;
    }
    cos = std::clamp(cos, -1.0, 1.0);
    out.value = cos;
    out.ok = cos > 0.99;
    return out;
}

template<typename W>
void compareFloat(const FloatPair<W>& p, const CompareContext& ctx, DetailRow& row)
{
    std::string& message = row.message;
    const bool supported = p.deviceTorch == DType::Float16 || p.deviceTorch == DType::BFloat16
        || p.deviceTorch == DType::Float32;
    if (supported) {
        newStandard(p, ctx, row);
    } else {
        message += "The data type ";
        message += tensor::torchName(p.deviceTorch);
        message += " is not supported for new precision standard."; // no line end, as in msprobe
    }

    const Cosine cos = cosineSimilarity(p, ctx.profile);
    row.cosine = cos.value;
    row.kinds[static_cast<std::size_t>(Metric::Cosine)] = NumberKind::Float64;
    message += cos.message;
    message += '\n';
    if (!cos.ok) {
        message += "Cosine similarity is less than 0.99, consider as error, skip other check and set to SPACE.\n";
        row.status = "error";
        return;
    }

    const std::size_t n = p.size();
    W maxAbs = 0;
    bool nan = false;
    std::size_t within[3] = { 0, 0, 0 };
    const W limits[3] = { static_cast<W>(0.01), static_cast<W>(0.001), static_cast<W>(0.0001) };
    for (std::size_t i = 0; i < n; ++i) {
        const W ae = p.absErr(i);
        if (std::isnan(ae))
            nan = true;
        else
            maxAbs = std::max(maxAbs, ae);
        const W rel = std::abs(ae / (std::abs(p.b[i]) + p.eps));
        for (int k = 0; k < 3; ++k)
            within[k] += rel < limits[k] ? 1 : 0;
    }
    const double maxAbsValue = nan ? std::numeric_limits<double>::quiet_NaN() : static_cast<double>(maxAbs);
    setMetric(row, Metric::MaxAbsErr, maxAbsValue, kindOf<W>());
    if (maxAbsValue < 0.001) {
        message += "Max abs error is less than 0.001, consider as pass, skip other check and set to SPACE.\n";
        row.status = "pass";
        return;
    }
    const auto ratio = [&](int k) { return static_cast<double>(within[k]) / static_cast<double>(n); };
    const auto ok = [&](int k, double t) { return ratio(k) > 1 - t; };
    const bool half = p.deviceTorch == DType::Float16 || p.deviceTorch == DType::BFloat16;
    if (half) {
        setMetric(row, Metric::Ratio100, ratio(0), NumberKind::Float64);
        if (!ok(0, 0.01)) {
            message += "Relative error is greater than 0.01, consider as error, skip other check and set to SPACE.\n";
            row.status = "error";
            return;
        }
    }
    setMetric(row, Metric::Ratio1000, ratio(1), NumberKind::Float64);
    if (half) {
        if (ok(1, 0.001)) {
            message += "Relative error is less than 0.001, consider as pass, skip other check and set to SPACE.\n";
            row.status = "pass";
        } else {
            message += "Relative error is greater than 0.001, consider as warning, skip other check and set to SPACE.\n";
            row.status = "warning";
        }
        return;
    }
    setMetric(row, Metric::Ratio10000, ratio(2), NumberKind::Float64);
    if (!ok(1, 0.001)) {
        message += "Relative error is greater than 0.001, consider as error, skip other check and set to SPACE.\n";
        row.status = "error";
        return;
    }
    if (!ok(2, 0.0001)) {
        message += "Relative error is greater than 0.0001, consider as warning, skip other check and set to SPACE.\n";
        row.status = "warning";
        return;
    }
    message += "Relative error is less than 0.0001, consider as pass.\n";
    row.status = "pass";
}

template<typename W>
FloatPair<W> makePair(const Tensor& bench, const Tensor& device, DType benchNp, DType deviceNp)
{
    FloatPair<W> p;
    p.b = load<W>(bench);
    p.d = load<W>(device);
    p.benchNp = benchNp;
    p.deviceNp = deviceNp;
    p.deviceTorch = device.dtype;
    if (device.dtype == DType::BFloat16)
        p.eps = static_cast<W>(0x1p-8);
    else if (benchNp == DType::Float16)
        p.eps = static_cast<W>(0x1p-10);
    else if (benchNp == DType::Float32)
        p.eps = static_cast<W>(FLT_EPSILON);
    else
        p.eps = static_cast<W>(DBL_EPSILON);
    return p;
}

const std::vector<std::string>& defaultQuantizationApis()
{
    static const std::vector<std::string> apis { "npu_rms_norm_dynamic_quant", "npu_dynamic_quant",
                                                 "npu_quant_lightning_indexer" };
    return apis;
}

} // namespace

std::string shapeTupleText(const std::vector<std::int64_t>& shape)
{
    std::string out = "(";
    for (std::size_t i = 0; i < shape.size(); ++i) {
        if (i)
            out += ", ";
        out += std::to_string(shape[i]);
    }
    if (shape.size() == 1)
        out += ',';
    out += ')';
    return out;
}

std::string torchSizeText(const std::vector<std::int64_t>& shape)
{
    std::string out = "torch.Size([";
    for (std::size_t i = 0; i < shape.size(); ++i) {
        if (i)
            out += ", ";
        out += std::to_string(shape[i]);
    }
    out += "])";
    return out;
}

bool dropoutPasses(const Tensor& bench, const Tensor& device)
{
    const std::size_t n = elementCount(bench);
    if (n < 100)
        return true;
    const auto zeros = [](const Tensor& t) {
        std::size_t count = 0;
        for (const double v : load<double>(t))
            count += v == 0 ? 1 : 0;
        return count;
    };
    const std::size_t zb = zeros(bench);
    const std::size_t zd = zeros(device);
    const std::size_t diff = zb > zd ? zb - zd : zd - zb;
    return static_cast<double>(diff) / static_cast<double>(n) < 0.1;
}

void compareTensors(const Tensor& bench, const Tensor& device, const CompareContext& ctx, DetailRow& row)
{
    row.benchDtype = tensor::torchName(bench.dtype);
    row.deviceDtype = tensor::torchName(device.dtype);
    row.shape = shapeTupleText(device.shape);

    if (bench.shape != device.shape) {
        row.status = "error";
        row.message = "The shape of bench" + torchSizeText(bench.shape) + " and npu" + torchSizeText(device.shape)
            + " not equal.";
        return;
    }
    // A bf16 device output is compared as float32 on both sides; numpy has no bfloat16 either way.
    const bool bf16 = device.dtype == DType::BFloat16;
    const DType benchNp = bf16 || bench.dtype == DType::BFloat16 ? DType::Float32 : bench.dtype;
    const DType deviceNp = bf16 ? DType::Float32 : device.dtype;
    const Group g = groupOf(benchNp);
    if (g == Group::Other || g != groupOf(deviceNp)) {
        row.status = "error";
        row.message = std::string("Bench out dtype is ") + numpyName(benchNp) + " but npu output dtype is "
            + numpyName(deviceNp) + ", cannot compare.";
        return;
    }
    const auto n = static_cast<std::size_t>(std::max<std::int64_t>(bench.numel(), 0));
    if (elementCount(bench) != n || elementCount(device) != n) {
        row.status = "error";
        row.message = "The tensor data does not match its shape.";
        return;
    }
    if (n == 0) {
        row.status = ctx.profile == Profile::Msprobe26 ? "SKIP" : "error";
        row.message = "There is not bench calculation result.";
        return;
    }

    if (isIntegerLike(benchNp)) {
        const auto b = loadInts(bench);
        const auto d = loadInts(device);
        const auto& quant = ctx.quantizationApis ? *ctx.quantizationApis : defaultQuantizationApis();
        if (ctx.profile == Profile::Msprobe26
            && std::find(quant.begin(), quant.end(), ctx.apiName) != quant.end()) {
            std::int64_t maxDiff = 0;
            for (std::size_t i = 0; i < n; ++i)
                maxDiff = std::max(maxDiff, d[i] > b[i] ? d[i] - b[i] : b[i] - d[i]);
            setMetric(row, Metric::MaxAbsErr, static_cast<double>(maxDiff), NumberKind::Int);
            row.status = maxDiff <= 1 ? "pass" : "error";
            return;
        }
        std::size_t diff = 0;
        for (std::size_t i = 0; i < n; ++i)
            diff += b[i] != d[i] ? 1 : 0;
        row.message = std::string("Compare algorithm is not supported for ") + numpyName(benchNp)
            + " data. Only judged by Error Rate.\n";
        setMetric(row, Metric::BinaryErrRate, static_cast<double>(diff) / static_cast<double>(n), NumberKind::Float64);
        row.status = diff == 0 ? "pass" : "error";
        return;
    }

    if (benchNp == DType::Float64 || deviceNp == DType::Float64)
        compareFloat(makePair<double>(bench, device, benchNp, deviceNp), ctx, row);
    else
        compareFloat(makePair<float>(bench, device, benchNp, deviceNp), ctx, row);
}

} // namespace probescope::runut::detail
