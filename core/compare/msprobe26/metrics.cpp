// SPDX-License-Identifier: Apache-2.0
// Era C real-data metrics (compare-spec §5.2-5.4): squeeze, the validation chain, the relative error in
// the common float type with that type's epsilon, and EucDist. Every figure of a pair comes from the metric
// kernels (compare/metrics/kernels.h) in one streamed pass, the sums left to right as msprobe 26's BLAS adds them;
// only a 0-d pair (one element) is computed here.
#include "core/compare/msprobe26/msprobe26.h"

#include "core/compare/metrics/kernels.h"
#include "core/compare/table/pytext.h"
#include "core/compare/metrics/realdata.h"
#include "core/tensor/dtype.h"
#include "core/compare/metrics/pairside.h"
#include "core/tensor/resolver.h"

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
constexpr const char* kUnsupported = "unsupported";

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

Cell formatted(double v)
{
    if (std::isnan(v))
        return Cell::text("Nan");
    return Cell::number(fmt12(v));
}

/// The one element of each side of a 0-d pair, as float64 (kernels::toFloat64: float16 exactly).
double firstElement(DType dtype, const std::byte* data)
{
    double v = 0;
    kernels::toFloat64(dtype, data, 1, &v);
    return v;
}

/// A 0-d pair (§5.2): Cosine, EucDist and the ratios unsupported; MaxAbsErr in numpy's promoted scalar type;
/// MaxRelativeErr in T with T's epsilon at a bench zero. No inf/nan step (msprobe skips it for 0-d).
RealDataMetrics zeroDMetrics(DType npuType, double npuValue, DType benchType, double benchValue)
{
    const DType nt = loadedType(npuType);
    const DType bt = loadedType(benchType);
    const Cell unsupported = Cell::text(kUnsupported);
    const kernels::RelErrRule rule = kernels::ruleMsprobe26(nt, bt);
    double r = 0;
    if (rule.compute == DType::Float64) {
        double a = npuValue;
        double b = benchValue;
        if (b == 0) {
            a += rule.npuEps;
            b += rule.benchAtZero;
        }
        r = std::fabs((a - b) / b);
    } else {
        float a = static_cast<float>(npuValue);
        float b = static_cast<float>(benchValue);
        if (b == 0) {
            a += static_cast<float>(rule.npuEps);
            b += static_cast<float>(rule.benchAtZero);
        }
        const float d = a - b;
        r = std::fabs(static_cast<double>(d / b));
    }
    const DType p = (nt == DType::Bool) ? DType::Float64 : promote0d(nt, bt);
    double d = 0;
    switch (p) {
    case DType::Float16:
        d = roundToHalf(static_cast<float>(npuValue) - static_cast<float>(benchValue));
        break;
    case DType::Float32:
        d = static_cast<float>(npuValue) - static_cast<float>(benchValue);
        break;
    default:
        d = npuValue - benchValue;
        break;
    }
    msprobe26::RealDataMetrics m;
    m.cosine = unsupported;
    m.eucDist = unsupported;
    m.maxAbsErr = formatted(std::fabs(d));
    m.maxRelativeErr = formatted(r);
    m.oneThousandthErrRatio = unsupported;
    m.fiveThousandthsErrRatio = unsupported;
    return m;
}

/// One side as the kernels read it (pairside.h), with its shape as msprobe 26 compares it: squeezed.
struct Side : PairSide
{
    std::vector<std::int64_t> squeezedShape;
};

/// A loaded tensor or a streamed file.
template <class Elements>
Side sideOf(const Elements& elements)
{
    Side side { pairSideOf(elements), {} };
    side.squeezedShape = squeezed(*side.shape);
    return side;
}

/**
 * The pair after the emptiness and shape steps, not 0-d: the kernels' one pass (sums left to right, as the
 * reference BLAS ddot behind msprobe 26's x.dot(y) and np.linalg.norm; docs/compare-performance.md), then
 * the inf/nan step and the six cells. nullopt when a file read failed or came short.
 */
std::optional<RealDataMetrics> pairMetrics(const Side& npu, const Side& bench, Splitter& splitter)
{
    const auto count = static_cast<std::uint64_t>(npu.numel);
    const kernels::RelErrRule rule = kernels::ruleMsprobe26(npu.dtype, bench.dtype);
    const kernels::PairStats stats = kernels::pairStats(npu.operand, bench.operand, count, rule, true, splitter,
                                                        kernels::SumOrder::LeftToRight);
    if (stats.ioFailed)
        return std::nullopt;
    // Same positions on both sides: the kernels zeroed them (the signs of infinities are not compared).
    if (stats.anyInvalid && stats.masksDiffer)
        return allCells(Cell::text("N/A"));

    msprobe26::RealDataMetrics m;
    if (count == 1) {
        m.cosine = Cell::text(kUnsupported);
    } else {
        const double na = std::sqrt(stats.npuSq.sum);
        const double nb = std::sqrt(stats.benchSq.sum);
        if (na <= kFloat64Eps && nb <= kFloat64Eps) {
            m.cosine = Cell::number(1.0);
        } else if (na <= kFloat64Eps || nb <= kFloat64Eps) {
            m.cosine = Cell::text("Nan");
        } else {
            const double c = stats.dot.sum / (na * nb);
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
    m.eucDist = Cell::number(std::sqrt(stats.diffSq.sum));
    m.maxAbsErr = stats.absNan ? Cell::text("Nan") : formatted(stats.maxAbs);
    m.maxRelativeErr = stats.relNan ? Cell::text("Nan") : formatted(stats.maxRel);
    const auto size = static_cast<double>(count);
    m.oneThousandthErrRatio = Cell::number(fmt12(static_cast<double>(stats.belowOne) / size));
    m.fiveThousandthsErrRatio = Cell::number(fmt12(static_cast<double>(stats.belowFive) / size));
    return m;
}

/// The empty and shape steps, then pairMetrics (nullopt: a read failed). 0-d pairs are the caller's.
std::optional<RealDataMetrics> checkedMetrics(const Side& npu, const Side& bench, Splitter& splitter)
{
    if (npu.numel == 0)
        return allCells(Cell::text(kUnsupported)); // "This is empty data, can not compare."
    if (npu.squeezedShape != bench.squeezedShape)
        return allCells(Cell::text("shape unmatched"));
    return pairMetrics(npu, bench, splitter);
}

bool consistent(const Tensor& t)
{
    const std::int64_t n = t.numel();
    return n >= 0 && static_cast<std::uint64_t>(n) * tensor::dtypeSize(t.dtype) == t.data.size();
}

/// A data name the streamed reader takes (.pt/.pth, any case); others (.npy) are loaded whole.
bool isPtName(const std::string& name)
{
    const auto dot = name.rfind('.');
    if (dot == std::string::npos)
        return false;
    std::string ext = name.substr(dot);
    for (char& c : ext)
        c = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
    return ext == ".pt" || ext == ".pth";
}

std::string unreadableText(const std::string& name, const Diagnostic& error)
{
    return "Dump file: " + name + " " + std::string(kUnreadableMark) + " " + error.format();
}

} // namespace

RealDataMetrics compareTensors(const Tensor& npuTensor, const Tensor& benchTensor)
{
    SerialSplitter serial;
    return compareTensors(npuTensor, benchTensor, serial);
}

RealDataMetrics compareTensors(const Tensor& npuTensor, const Tensor& benchTensor, Splitter& splitter)
{
    if (!consistent(npuTensor) || !consistent(benchTensor))
        return allCells(Cell::text(kUnsupported)); // "Data is unreadable."
    const Side npu = sideOf(npuTensor);
    const Side bench = sideOf(benchTensor);
    if (npu.numel != 0 && npu.squeezedShape == bench.squeezedShape && npu.squeezedShape.empty())
        return zeroDMetrics(npu.dtype, firstElement(npu.dtype, npuTensor.data.data()), bench.dtype,
                            firstElement(bench.dtype, benchTensor.data.data()));
    // Memory operands never fail to read.
    return *checkedMetrics(npu, bench, splitter);
}

TensorFilesOutcome compareTensorFiles(const tensor::TensorResolver& npuTensors, const std::string& npuName,
                                      const tensor::TensorResolver& benchTensors, const std::string& benchName,
                                      Splitter& splitter, const std::function<void()>& readAhead)
{
    TensorFilesOutcome out;
    out.metrics = allCells(Cell::text(kUnsupported));
    // A file that is there but damaged (a .pt cut short), or a name leaving the dump, must not end as "pass": the
    // row says why and the run fails (issue 25). A missing file stays msprobe's "unsupported".
    auto loadWhole = [&]() {
        auto nt = npuTensors.load(npuName);
        if (!nt) {
            if (nt.error().id != "tensor.missing")
                out.unreadable = unreadableText(npuName, nt.error());
            return;
        }
        auto bt = benchTensors.load(benchName);
        if (!bt) {
            if (bt.error().id != "tensor.missing")
                out.unreadable = unreadableText(benchName, bt.error());
            return;
        }
        out.metrics = compareTensors(*nt, *bt, splitter);
    };
    if (!isPtName(npuName) || !isPtName(benchName)) {
        loadWhole();
        return out;
    }
    // Two read buffers per thread, reused from pair to pair (small files are read whole into them).
    thread_local tensor::ReadBuffer npuBuffer;
    thread_local tensor::ReadBuffer benchBuffer;
    auto npuStream = npuTensors.openPt(npuName, npuBuffer);
    if (!npuStream) {
        if (npuStream.error().id != "tensor.missing")
            out.unreadable = unreadableText(npuName, npuStream.error());
        return out;
    }
    auto benchStream = benchTensors.openPt(benchName, benchBuffer);
    if (!benchStream) {
        if (benchStream.error().id != "tensor.missing")
            out.unreadable = unreadableText(benchName, benchStream.error());
        return out;
    }
    const Side npu = sideOf(*npuStream);
    const Side bench = sideOf(*benchStream);
    if (npu.numel != 0 && npu.squeezedShape == bench.squeezedShape && npu.squeezedShape.empty()) {
        // 0-d: one element each, in memory when the files are small (always, for one element).
        if (npu.operand.memory && bench.operand.memory)
            out.metrics = zeroDMetrics(npu.dtype, firstElement(npu.dtype, npu.operand.memory), bench.dtype,
                                       firstElement(bench.dtype, bench.operand.memory));
        else
            loadWhole();
        return out;
    }
    if (readAhead && (!npu.operand.memory || !bench.operand.memory))
        readAhead();
    if (const std::optional<RealDataMetrics> m = checkedMetrics(npu, bench, splitter)) {
        out.metrics = *m;
    } else {
        Diagnostic error = makeError("tensor.truncated", SourceLocation { npuName, std::nullopt, 0, 0 },
                                     "a read of " + npuName + " or " + benchName
                                         + " failed or came short (did a file change while it was compared?)");
        out.unreadable = unreadableText(npuName, error);
    }
    return out;
}

} // namespace probescope::compare::msprobe26
