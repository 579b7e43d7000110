// SPDX-License-Identifier: Apache-2.0
#include "core/tensor/elementdiff.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

namespace probescope::tensor {

namespace {

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();

Diagnostic argumentError(std::string message)
{
    return makeError("tensor.argument", {}, std::move(message));
}

std::string shapeText(std::span<const std::int64_t> shape)
{
    std::string text = "[";
    for (std::size_t i = 0; i < shape.size(); ++i) {
        if (i)
            text += ", ";
        text += std::to_string(shape[i]);
    }
    return text + "]";
}

/// numel checked against the shape and the data size, so that at() can never read past the buffer.
Result<std::int64_t> checkedTensorNumel(const Tensor& t, const char* side)
{
    auto numel = checkedNumel(t.shape);
    if (!numel)
        return numel.error();
    const std::size_t size = dtypeSize(t.dtype);
    const auto n = static_cast<std::uint64_t>(*numel);
    if (n > t.data.size() / size || n * size != t.data.size())
        return makeError("tensor.size-mismatch", {},
                         std::string(side) + " tensor of shape " + shapeText(t.shape) + " holds "
                             + std::to_string(t.data.size()) + " bytes, not " + std::to_string(n) + " elements of "
                             + std::to_string(size) + " bytes");
    return numel;
}

Diagnostic shapeMismatch(const Tensor& npu, const Tensor& bench)
{
    return makeError("tensor.shape-mismatch", {},
                     "the NPU tensor has shape " + shapeText(npu.shape) + " but the bench tensor has "
                         + shapeText(bench.shape) + ": no element-wise difference");
}

template<typename T>
double readAs(const std::byte* p)
{
    T value;
    std::memcpy(&value, p, sizeof value);
    return static_cast<double>(value);
}

double readBool(const std::byte* p)
{
    return std::to_integer<std::uint8_t>(*p) != 0 ? 1.0 : 0.0;
}

std::uint16_t bits16(const std::byte* p)
{
    std::uint16_t bits;
    std::memcpy(&bits, p, sizeof bits);
    return bits;
}

double readHalf(const std::byte* p)
{
    return halfToFloat(bits16(p));
}

double readBfloat16(const std::byte* p)
{
    return bfloat16ToFloat(bits16(p));
}

/// The same conversions as Tensor::valueAt, without its per-element dtype switch and bounds check
/// (views check the size once).
ElementView::Reader readerFor(DType dtype)
{
    switch (dtype) {
    case DType::Bool:
        return readBool;
    case DType::UInt8:
        return readAs<std::uint8_t>;
    case DType::Int8:
        return readAs<std::int8_t>;
    case DType::Int16:
        return readAs<std::int16_t>;
    case DType::Int32:
        return readAs<std::int32_t>;
    case DType::Int64:
        return readAs<std::int64_t>;
    case DType::Float16:
        return readHalf;
    case DType::BFloat16:
        return readBfloat16;
    case DType::Float32:
        return readAs<float>;
    case DType::Float64:
        return readAs<double>;
    }
    return readAs<double>;
}

template<typename T>
void readBlockAs(const std::byte* data, std::int64_t first, std::int64_t stride, std::int64_t count, double* out)
{
    const std::byte* p = data + static_cast<std::size_t>(first) * sizeof(T);
    if (stride == 1) { // contiguous: a loop the compiler can vectorise
        for (std::int64_t i = 0; i < count; ++i) {
            T value;
            std::memcpy(&value, p + static_cast<std::size_t>(i) * sizeof(T), sizeof value);
            out[i] = static_cast<double>(value);
        }
        return;
    }
    const auto step = static_cast<std::ptrdiff_t>(stride) * static_cast<std::ptrdiff_t>(sizeof(T));
    for (std::int64_t i = 0; i < count; ++i, p += step) {
        T value;
        std::memcpy(&value, p, sizeof value);
        out[i] = static_cast<double>(value);
    }
}

template<double (*Read)(const std::byte*), std::size_t Size>
void readBlockWith(const std::byte* data, std::int64_t first, std::int64_t stride, std::int64_t count, double* out)
{
    const std::byte* p = data + static_cast<std::size_t>(first) * Size;
    const auto step = static_cast<std::ptrdiff_t>(stride) * static_cast<std::ptrdiff_t>(Size);
    for (std::int64_t i = 0; i < count; ++i, p += step)
        out[i] = Read(p);
}

ElementView::BlockReader blockReaderFor(DType dtype)
{
    switch (dtype) {
    case DType::Bool:
        return readBlockWith<readBool, 1>;
    case DType::UInt8:
        return readBlockAs<std::uint8_t>;
    case DType::Int8:
        return readBlockAs<std::int8_t>;
    case DType::Int16:
        return readBlockAs<std::int16_t>;
    case DType::Int32:
        return readBlockAs<std::int32_t>;
    case DType::Int64:
        return readBlockAs<std::int64_t>;
    case DType::Float16:
        return readBlockWith<readHalf, 2>;
    case DType::BFloat16:
        return readBlockWith<readBfloat16, 2>;
    case DType::Float32:
        return readBlockAs<float>;
    case DType::Float64:
        return readBlockAs<double>;
    }
    return readBlockAs<double>;
}

/// Elements are processed in blocks of this many: big enough to amortise the dispatch, small enough for
/// the stack and the L1 cache.
constexpr std::int64_t kBlock = 2048;

/// Calls fn(firstIndex, values, count) for consecutive blocks of the whole view.
template<typename Fn>
void forEachBlock(const ElementView& view, Fn fn)
{
    double buffer[kBlock];
    for (std::int64_t first = 0; first < view.numel(); first += kBlock) {
        const std::int64_t n = std::min(kBlock, view.numel() - first);
        view.read(first, 1, n, buffer);
        fn(first, buffer, n);
    }
}

/// A constant tensor still gets one visible bar: an empty range is widened around its value.
void widenDegenerate(Histogram& h)
{
    if (h.lo == h.hi) {
        const double pad = std::max(0.5, std::fabs(h.lo) / 2);
        h.lo -= pad;
        h.hi += pad;
    }
}

/// Puts finite values into the bins of h (the last bin includes hi).
struct Binner
{
    explicit Binner(const Histogram& h)
        // Halves keep (x - lo) finite even when lo and hi are near the largest doubles.
        : halfLo(h.lo / 2)
        , halfSpan(h.hi / 2 - h.lo / 2)
        , binCount(static_cast<double>(h.counts.size()))
    {
    }
    void add(Histogram& h, double x) const
    {
        if (x < h.lo) {
            ++h.below;
        } else if (x > h.hi) {
            ++h.above;
        } else {
            const double t = (x / 2 - halfLo) / halfSpan * binCount;
            const auto bin = std::min(h.counts.size() - 1, static_cast<std::size_t>(std::max(0.0, std::floor(t))));
            ++h.counts[bin];
        }
    }
    double halfLo;
    double halfSpan;
    double binCount;
};

/// Compensated sum (Knuth's branch-free TwoSum): cosines of large tensors stay accurate to the last digits
/// shown, at a few additions per element and no unpredictable branch.
struct CompensatedSum
{
    double sum = 0;
    double compensation = 0;
    void add(double x)
    {
        const double t = sum + x;
        const double bp = t - sum;
        compensation += (sum - (t - bp)) + (x - bp);
        sum = t;
    }
    double value() const { return sum + compensation; }
};

/// Accumulates a DiffSummary element by element (the caller feeds blocks).
class SummaryBuilder
{
public:
    void add(std::int64_t index, double n, double b)
    {
        ++m_s.count;
        const double a = absoluteDifference(n, b);
        const double r = relativeDifference(n, b);
        if (!std::isfinite(a) || !std::isfinite(r))
            ++m_s.nonFinite;
        if (std::isfinite(a) && (m_s.maxAbsIndex < 0 || a > m_s.maxAbs)) {
            m_s.maxAbs = a;
            m_s.maxAbsIndex = index;
        }
        if (std::isfinite(r) && (m_s.maxRelIndex < 0 || r > m_s.maxRel)) {
            m_s.maxRel = r;
            m_s.maxRelIndex = index;
        }
        // NaN is not below the thresholds, so msprobe counts it as failing; so do we.
        if (!(r <= 0.001))
            ++m_s.overOneThousandth;
        if (!(r <= 0.005))
            ++m_s.overFiveThousandths;
        if (std::isfinite(n) && std::isfinite(b)) {
            m_dot.add(n * b);
            m_npuSquares.add(n * n);
            m_benchSquares.add(b * b);
        }
    }

    DiffSummary finish()
    {
        if (m_s.maxAbsIndex < 0)
            m_s.maxAbs = kNan;
        if (m_s.maxRelIndex < 0)
            m_s.maxRel = kNan;
        const double npuNorm = std::sqrt(m_npuSquares.value());
        const double benchNorm = std::sqrt(m_benchSquares.value());
        // msprobe's rule: two all-zero sides are identical; one all-zero side has no direction to compare.
        if (npuNorm <= kRelativeEpsilon && benchNorm <= kRelativeEpsilon)
            m_s.cosine = m_s.count > 0 ? 1.0 : kNan;
        else if (npuNorm <= kRelativeEpsilon || benchNorm <= kRelativeEpsilon)
            m_s.cosine = kNan;
        else
            m_s.cosine = m_dot.value() / (npuNorm * benchNorm);
        return m_s;
    }

private:
    DiffSummary m_s;
    CompensatedSum m_dot;
    CompensatedSum m_npuSquares;
    CompensatedSum m_benchSquares;
};

} // namespace

const char* elementKindName(ElementKind kind)
{
    switch (kind) {
    case ElementKind::Npu:
        return "NPU";
    case ElementKind::Bench:
        return "bench";
    case ElementKind::AbsDiff:
        return "|NPU \u2212 bench|";
    case ElementKind::RelDiff:
        return "relative error";
    }
    return "?";
}

Result<std::int64_t> checkedNumel(std::span<const std::int64_t> shape)
{
    std::int64_t n = 1;
    for (const std::int64_t d : shape) {
        if (d < 0)
            return makeError("tensor.shape-invalid", {}, "shape " + shapeText(shape) + " has a negative dimension");
        if (__builtin_mul_overflow(n, d, &n))
            return makeError("tensor.shape-invalid", {}, "shape " + shapeText(shape) + " has more elements than int64 holds");
    }
    return n;
}

std::vector<std::int64_t> unravelIndex(std::span<const std::int64_t> shape, std::int64_t flat)
{
    std::vector<std::int64_t> index(shape.size(), 0);
    for (std::size_t a = shape.size(); a-- > 0;) {
        if (shape[a] <= 0)
            return index;
        index[a] = flat % shape[a];
        flat /= shape[a];
    }
    return index;
}

std::optional<std::int64_t> ravelIndex(std::span<const std::int64_t> shape, std::span<const std::int64_t> index)
{
    if (index.size() != shape.size())
        return std::nullopt;
    std::int64_t flat = 0;
    for (std::size_t a = 0; a < shape.size(); ++a) {
        if (index[a] < 0 || index[a] >= shape[a])
            return std::nullopt;
        flat = flat * shape[a] + index[a]; // cannot overflow: below numel, which was checked by the caller's view
    }
    return flat;
}

// ---------------------------------------------------------------------------------------------

Result<ElementView> ElementView::single(const Tensor& tensor)
{
    auto numel = checkedTensorNumel(tensor, "the");
    if (!numel)
        return numel.error();
    ElementView v;
    v.m_npuData = tensor.data.data();
    v.m_npuRead = readerFor(tensor.dtype);
    v.m_npuBlock = blockReaderFor(tensor.dtype);
    v.m_npuSize = dtypeSize(tensor.dtype);
    v.m_shape = &tensor.shape;
    v.m_kind = ElementKind::Npu;
    v.m_numel = *numel;
    return v;
}

Result<ElementView> ElementView::pair(const Tensor& npu, const Tensor& bench, ElementKind kind)
{
    auto npuNumel = checkedTensorNumel(npu, "the NPU");
    if (!npuNumel)
        return npuNumel.error();
    auto benchNumel = checkedTensorNumel(bench, "the bench");
    if (!benchNumel)
        return benchNumel.error();
    const bool difference = kind == ElementKind::AbsDiff || kind == ElementKind::RelDiff;
    if (difference && npu.shape != bench.shape)
        return shapeMismatch(npu, bench);
    ElementView v;
    v.m_npuData = npu.data.data();
    v.m_npuRead = readerFor(npu.dtype);
    v.m_npuBlock = blockReaderFor(npu.dtype);
    v.m_npuSize = dtypeSize(npu.dtype);
    v.m_benchData = bench.data.data();
    v.m_benchRead = readerFor(bench.dtype);
    v.m_benchBlock = blockReaderFor(bench.dtype);
    v.m_benchSize = dtypeSize(bench.dtype);
    v.m_kind = kind;
    v.m_shape = kind == ElementKind::Bench ? &bench.shape : &npu.shape;
    v.m_numel = kind == ElementKind::Bench ? *benchNumel : *npuNumel;
    return v;
}

void ElementView::read(std::int64_t first, std::int64_t stride, std::int64_t count, double* out) const
{
    if (count <= 0)
        return;
    std::int64_t span = 0;
    std::int64_t last = 0;
    const bool inRange = !__builtin_mul_overflow(stride, count - 1, &span) && !__builtin_add_overflow(first, span, &last)
        && first >= 0 && first < m_numel && last >= 0 && last < m_numel;
    if (!inRange) { // rare: element by element, NaN where out of range
        for (std::int64_t i = 0; i < count; ++i)
            out[i] = at(first + i * stride);
        return;
    }
    switch (m_kind) {
    case ElementKind::Npu:
        m_npuBlock(m_npuData, first, stride, count, out);
        return;
    case ElementKind::Bench:
        m_benchBlock(m_benchData, first, stride, count, out);
        return;
    case ElementKind::AbsDiff:
    case ElementKind::RelDiff:
        break;
    }
    double bench[kBlock];
    for (std::int64_t done = 0; done < count; done += kBlock) {
        const std::int64_t n = std::min(kBlock, count - done);
        const std::int64_t from = first + done * stride;
        m_npuBlock(m_npuData, from, stride, n, out + done);
        m_benchBlock(m_benchData, from, stride, n, bench);
        if (m_kind == ElementKind::AbsDiff) {
            for (std::int64_t i = 0; i < n; ++i)
                out[done + i] = absoluteDifference(out[done + i], bench[i]);
        } else {
            for (std::int64_t i = 0; i < n; ++i)
                out[done + i] = relativeDifference(out[done + i], bench[i]);
        }
    }
}

std::optional<ValueRange> finiteRange(const ElementView& view)
{
    ValueRange r;
    forEachBlock(view, [&](std::int64_t, const double* values, std::int64_t n) {
        for (std::int64_t i = 0; i < n; ++i) {
            const double x = values[i];
            if (!std::isfinite(x))
                continue;
            if (r.finite == 0 || x < r.lo)
                r.lo = x;
            if (r.finite == 0 || x > r.hi)
                r.hi = x;
            ++r.finite;
        }
    });
    if (r.finite == 0)
        return std::nullopt;
    return r;
}

// ---------------------------------------------------------------------------------------------

double Histogram::binWidth() const
{
    // Divided first: hi - lo can overflow for a range spanning most of the doubles.
    return counts.empty() ? 0.0 : hi / static_cast<double>(counts.size()) - lo / static_cast<double>(counts.size());
}

double Histogram::binStart(std::size_t bin) const
{
    if (counts.empty())
        return lo;
    // A convex combination of lo and hi never overflows.
    const double f = static_cast<double>(bin) / static_cast<double>(counts.size());
    return lo * (1.0 - f) + hi * f;
}

double Histogram::binCenter(std::size_t bin) const
{
    if (counts.empty())
        return lo;
    const double f = (static_cast<double>(bin) + 0.5) / static_cast<double>(counts.size());
    return lo * (1.0 - f) + hi * f;
}

namespace {

std::optional<Diagnostic> badBinCount(std::size_t bins)
{
    if (bins >= 1 && bins <= kMaxHistogramBins)
        return std::nullopt;
    return argumentError("a histogram needs 1 to " + std::to_string(kMaxHistogramBins) + " bins, not "
                         + std::to_string(bins));
}

/// Sets up `bins` bins over [lo, hi] and counts the view into them; with `log10`, the bins hold log10 of the
/// positive values and values <= 0 go to nonPositive.
Histogram fillHistogram(const ElementView& view, std::size_t bins, double lo, double hi, bool log10)
{
    Histogram h;
    h.lo = lo;
    h.hi = hi;
    widenDegenerate(h);
    h.counts.assign(bins, 0);
    const Binner binner(h);
    forEachBlock(view, [&](std::int64_t, const double* values, std::int64_t n) {
        for (std::int64_t i = 0; i < n; ++i) {
            const double x = values[i];
            if (std::isnan(x))
                ++h.nan;
            else if (std::isinf(x))
                ++(x > 0 ? h.posInf : h.negInf);
            else if (!log10)
                binner.add(h, x);
            else if (x <= 0)
                ++h.nonPositive;
            else
                binner.add(h, std::log10(x));
        }
        h.total += n;
    });
    return h;
}

} // namespace

Result<Histogram> histogram(const ElementView& view, std::size_t bins, std::optional<ValueRange> range)
{
    if (auto bad = badBinCount(bins))
        return *bad;
    if (range && (!std::isfinite(range->lo) || !std::isfinite(range->hi) || range->lo > range->hi))
        return argumentError("a histogram range must be finite with lo <= hi");
    if (!range)
        range = finiteRange(view);
    return fillHistogram(view, bins, range ? range->lo : 0.0, range ? range->hi : 1.0, false);
}

Result<Histogram> histogramLog10(const ElementView& view, std::size_t bins)
{
    if (auto bad = badBinCount(bins))
        return *bad;
    // log10 is monotonic: the range comes from the extreme positive values, one logarithm each.
    double lo = 0;
    double hi = 0;
    bool any = false;
    forEachBlock(view, [&](std::int64_t, const double* values, std::int64_t n) {
        for (std::int64_t i = 0; i < n; ++i) {
            const double x = values[i];
            if (!(x > 0) || std::isinf(x))
                continue;
            lo = any ? std::min(lo, x) : x;
            hi = any ? std::max(hi, x) : x;
            any = true;
        }
    });
    return fillHistogram(view, bins, any ? std::log10(lo) : 0.0, any ? std::log10(hi) : 1.0, true);
}

// ---------------------------------------------------------------------------------------------

SliceSpec defaultSlice(std::span<const std::int64_t> shape)
{
    SliceSpec spec;
    const int rank = static_cast<int>(shape.size());
    spec.rowAxis = rank >= 2 ? rank - 2 : -1;
    spec.colAxis = rank >= 1 ? rank - 1 : -1;
    spec.fixed.assign(shape.size(), 0);
    return spec;
}

namespace {

/// Rows, columns, origin and strides of a slice of `shape` (no values), with every argument checked.
Result<Slice2D> sliceGeometry(const std::vector<std::int64_t>& shape, std::int64_t numel, const SliceSpec& spec,
                              std::int64_t maxElements)
{
    const int rank = static_cast<int>(shape.size());
    auto axisOk = [rank](int axis) { return axis >= -1 && axis < rank; };
    if (!axisOk(spec.rowAxis) || !axisOk(spec.colAxis))
        return argumentError("slice axes " + std::to_string(spec.rowAxis) + ", " + std::to_string(spec.colAxis)
                             + " do not exist in shape " + shapeText(shape));
    if (spec.rowAxis >= 0 && spec.rowAxis == spec.colAxis)
        return argumentError("the slice's row and column axes must differ");
    if (!spec.fixed.empty() && spec.fixed.size() != shape.size())
        return argumentError("a slice needs one fixed index per axis (" + std::to_string(rank) + "), not "
                             + std::to_string(spec.fixed.size()));

    Slice2D slice;
    if (numel == 0)
        return slice;
    std::vector<std::int64_t> strides(shape.size(), 1);
    for (int a = rank - 1; a > 0; --a)
        strides[static_cast<std::size_t>(a - 1)] = strides[static_cast<std::size_t>(a)] * shape[static_cast<std::size_t>(a)];
    for (int a = 0; a < rank; ++a) {
        if (a == spec.rowAxis || a == spec.colAxis)
            continue;
        const std::int64_t idx = spec.fixed.empty() ? 0 : spec.fixed[static_cast<std::size_t>(a)];
        if (idx < 0 || idx >= shape[static_cast<std::size_t>(a)])
            return argumentError("index " + std::to_string(idx) + " of axis " + std::to_string(a) + " is outside 0.."
                                 + std::to_string(shape[static_cast<std::size_t>(a)] - 1));
        slice.origin += idx * strides[static_cast<std::size_t>(a)];
    }
    slice.rows = spec.rowAxis >= 0 ? shape[static_cast<std::size_t>(spec.rowAxis)] : 1;
    slice.cols = spec.colAxis >= 0 ? shape[static_cast<std::size_t>(spec.colAxis)] : 1;
    slice.rowStride = spec.rowAxis >= 0 ? strides[static_cast<std::size_t>(spec.rowAxis)] : 0;
    slice.colStride = spec.colAxis >= 0 ? strides[static_cast<std::size_t>(spec.colAxis)] : 0;
    // rows and cols are distinct factors of numel (checked against int64), so their product cannot overflow.
    if (slice.rows * slice.cols > maxElements)
        return argumentError("a slice of " + std::to_string(slice.rows) + " × " + std::to_string(slice.cols)
                             + " elements exceeds the limit of " + std::to_string(maxElements));
    return slice;
}

} // namespace

Result<Slice2D> extractSlice(const ElementView& view, const SliceSpec& spec, std::int64_t maxElements)
{
    auto geometry = sliceGeometry(view.shape(), view.numel(), spec, maxElements);
    if (!geometry)
        return geometry.error();
    Slice2D slice = std::move(geometry).value();
    slice.values.resize(static_cast<std::size_t>(slice.rows * slice.cols));
    for (std::int64_t r = 0; r < slice.rows; ++r)
        view.read(slice.flatIndexOf(r, 0), slice.colStride, slice.cols, slice.values.data() + r * slice.cols);
    return slice;
}

Slice2D downsample(const Slice2D& slice, std::int64_t maxRows, std::int64_t maxCols, Pooling pooling)
{
    maxRows = std::max<std::int64_t>(1, maxRows);
    maxCols = std::max<std::int64_t>(1, maxCols);
    if (slice.rows <= maxRows && slice.cols <= maxCols)
        return slice;
    const std::int64_t fr = (slice.rows + maxRows - 1) / maxRows;
    const std::int64_t fc = (slice.cols + maxCols - 1) / maxCols;
    Slice2D out;
    out.rows = (slice.rows + fr - 1) / fr;
    out.cols = (slice.cols + fc - 1) / fc;
    out.origin = slice.origin;
    out.rowStride = slice.rowStride * fr;
    out.colStride = slice.colStride * fc;
    out.values.resize(static_cast<std::size_t>(out.rows * out.cols));
    for (std::int64_t R = 0; R < out.rows; ++R) {
        for (std::int64_t C = 0; C < out.cols; ++C) {
            double best = 0;
            bool haveBest = false;
            bool sawNan = false;
            CompensatedSum sum;
            std::int64_t finite = 0;
            for (std::int64_t r = R * fr; r < std::min(slice.rows, (R + 1) * fr); ++r) {
                for (std::int64_t c = C * fc; c < std::min(slice.cols, (C + 1) * fc); ++c) {
                    const double x = slice.at(r, c);
                    if (std::isnan(x)) {
                        sawNan = true;
                        continue;
                    }
                    if (!haveBest || std::fabs(x) > std::fabs(best)) {
                        best = x;
                        haveBest = true;
                    }
                    if (pooling == Pooling::Mean && std::isfinite(x)) {
                        sum.add(x);
                        ++finite;
                    }
                }
            }
            double value = kNan;
            if (pooling == Pooling::MaxMagnitude)
                value = sawNan || !haveBest ? kNan : best;
            else if (finite > 0)
                value = sum.value() / static_cast<double>(finite);
            out.values[static_cast<std::size_t>(R * out.cols + C)] = value;
        }
    }
    return out;
}

// ---------------------------------------------------------------------------------------------

Result<std::vector<WorstElement>> worstElements(const Tensor& npu, const Tensor& bench, std::size_t k, ElementKind by)
{
    if (by != ElementKind::AbsDiff && by != ElementKind::RelDiff)
        return argumentError("the worst elements are ranked by the absolute or the relative difference");
    auto view = ElementView::pair(npu, bench, by);
    if (!view)
        return view.error();
    const auto n = static_cast<std::uint64_t>(view->numel());
    k = static_cast<std::size_t>(std::min<std::uint64_t>(k, n));
    std::vector<WorstElement> result;
    if (k == 0)
        return result;

    struct Candidate
    {
        double key;
        std::int64_t index;
    };
    // worse(a, b): a ranks before b. NaN first, then larger keys, then lower indices.
    auto worse = [](const Candidate& a, const Candidate& b) {
        const bool nanA = std::isnan(a.key);
        const bool nanB = std::isnan(b.key);
        if (nanA != nanB)
            return nanA;
        if (!nanA && a.key != b.key)
            return a.key > b.key;
        return a.index < b.index;
    };
    // A heap ordered by `worse` keeps the least bad kept candidate on top, ready to be evicted.
    std::vector<Candidate> heap;
    heap.reserve(k);
    forEachBlock(*view, [&](std::int64_t first, const double* values, std::int64_t count) {
        for (std::int64_t i = 0; i < count; ++i) {
            const Candidate c { values[i], first + i };
            if (heap.size() < k) {
                heap.push_back(c);
                std::push_heap(heap.begin(), heap.end(), worse);
            } else if (worse(c, heap.front())) {
                std::pop_heap(heap.begin(), heap.end(), worse);
                heap.back() = c;
                std::push_heap(heap.begin(), heap.end(), worse);
            }
        }
    });
    std::sort_heap(heap.begin(), heap.end(), worse);
    result.reserve(heap.size());
    for (const Candidate& c : heap) {
        WorstElement w;
        w.flatIndex = c.index;
        w.index = unravelIndex(npu.shape, c.index);
        w.npu = npu.valueAt(c.index);
        w.bench = bench.valueAt(c.index);
        w.absDiff = absoluteDifference(w.npu, w.bench);
        w.relDiff = relativeDifference(w.npu, w.bench);
        result.push_back(std::move(w));
    }
    return result;
}

Result<DiffSummary> summarizeDifference(const Tensor& npu, const Tensor& bench)
{
    auto view = ElementView::pair(npu, bench, ElementKind::AbsDiff);
    if (!view)
        return view.error();
    const ElementView n = *ElementView::pair(npu, bench, ElementKind::Npu);
    const ElementView b = *ElementView::pair(npu, bench, ElementKind::Bench);
    SummaryBuilder builder;
    double benchValues[kBlock];
    forEachBlock(n, [&](std::int64_t first, const double* npuValues, std::int64_t count) {
        b.read(first, 1, count, benchValues);
        for (std::int64_t i = 0; i < count; ++i)
            builder.add(first + i, npuValues[i], benchValues[i]);
    });
    return builder.finish();
}

Result<DiffSummary> summarizeDifference(const Tensor& npu, const Tensor& bench, const SliceSpec& spec)
{
    auto view = ElementView::pair(npu, bench, ElementKind::AbsDiff);
    if (!view)
        return view.error();
    auto geometry = sliceGeometry(view->shape(), view->numel(), spec, std::numeric_limits<std::int64_t>::max());
    if (!geometry)
        return geometry.error();
    const Slice2D& g = *geometry;
    const ElementView n = *ElementView::pair(npu, bench, ElementKind::Npu);
    const ElementView b = *ElementView::pair(npu, bench, ElementKind::Bench);
    SummaryBuilder builder;
    double npuValues[kBlock];
    double benchValues[kBlock];
    for (std::int64_t r = 0; r < g.rows; ++r) {
        for (std::int64_t c0 = 0; c0 < g.cols; c0 += kBlock) {
            const std::int64_t count = std::min(kBlock, g.cols - c0);
            const std::int64_t first = g.flatIndexOf(r, c0);
            n.read(first, g.colStride, count, npuValues);
            b.read(first, g.colStride, count, benchValues);
            for (std::int64_t i = 0; i < count; ++i)
                builder.add(first + i * g.colStride, npuValues[i], benchValues[i]);
        }
    }
    return builder.finish();
}

Result<DiffSummary> summarizeDifference(std::span<const double> npu, std::span<const double> bench)
{
    if (npu.size() != bench.size())
        return makeError("tensor.shape-mismatch", {},
                         std::to_string(npu.size()) + " NPU values against " + std::to_string(bench.size())
                             + " bench values: no element-wise difference");
    SummaryBuilder builder;
    for (std::size_t i = 0; i < npu.size(); ++i)
        builder.add(static_cast<std::int64_t>(i), npu[i], bench[i]);
    return builder.finish();
}

} // namespace probescope::tensor
