// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/tensor/tensor.h"
#include "core/util/diagnostic.h"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <vector>

/**
 * Element-level views of one tensor or of an NPU/bench pair, for the tensor inspector: histograms,
 * 2-D slices, element-wise differences, the worst elements and a summary. Values are read element
 * by element (Tensor::valueAt: float16/bfloat16 exactly), never copied whole, so a view of a large
 * tensor costs no memory beyond the tensor itself; only slices and histograms allocate.
 *
 * Error ids: tensor.shape-invalid (negative dimension, element count overflowing int64),
 * tensor.size-mismatch (data bytes do not match the shape), tensor.shape-mismatch (pair of different
 * shapes), tensor.argument (bad bins, range, axes or indices).
 */
namespace probescope::tensor {

/// np.finfo(float).eps: msprobe adds it to both values where the bench value is 0 (compare-spec A.6).
inline constexpr double kRelativeEpsilon = 2.220446049250313e-16;

/// Which values of a pair are shown.
enum class ElementKind : std::uint8_t {
    Npu,
    Bench,
    AbsDiff, ///< |npu - bench|
    RelDiff, ///< |npu - bench| / |bench|, msprobe's epsilon where bench is 0
};

const char* elementKindName(ElementKind kind); ///< "NPU", "bench", "|NPU − bench|", "relative error"

/// |npu - bench|; 0 where both are NaN or the same infinity (msprobe zeroes such positions on both sides).
inline double absoluteDifference(double npu, double bench)
{
    if (npu == bench || (std::isnan(npu) && std::isnan(bench)))
        return 0.0;
    return std::fabs(npu - bench);
}

/// |npu - bench| / |bench| with msprobe's epsilon added to both where bench is 0; 0 where both agree as in
/// absoluteDifference.
inline double relativeDifference(double npu, double bench)
{
    if (npu == bench || (std::isnan(npu) && std::isnan(bench)))
        return 0.0;
    if (bench == 0) {
        bench += kRelativeEpsilon;
        npu += kRelativeEpsilon;
    }
    return std::fabs((npu - bench) / bench);
}

/// numel of a shape, checked: tensor.shape-invalid for a negative dimension or an int64 overflow.
Result<std::int64_t> checkedNumel(std::span<const std::int64_t> shape);

/// Row-major multi-index of flat element `flat` (empty for a 0-d shape). `flat` must be in range.
std::vector<std::int64_t> unravelIndex(std::span<const std::int64_t> shape, std::int64_t flat);

/// Flat index of a multi-index; std::nullopt when the rank differs or an index is out of range.
std::optional<std::int64_t> ravelIndex(std::span<const std::int64_t> shape, std::span<const std::int64_t> index);

/**
 * @brief The elements of one tensor, or an element-wise function of two same-shape tensors.
 *
 * Holds pointers: the tensors must outlive the view. Cheap to copy.
 */
class ElementView
{
public:
    /// The values of one tensor (kind Npu). Errors: tensor.shape-invalid, tensor.size-mismatch.
    static Result<ElementView> single(const Tensor& tensor);
    /// One kind of values of a pair. Bench alone needs no NPU match, so shapes may differ for kind Bench
    /// (and Npu); the difference kinds need the same shape (tensor.shape-mismatch).
    static Result<ElementView> pair(const Tensor& npu, const Tensor& bench, ElementKind kind);

    ElementKind kind() const { return m_kind; }
    const std::vector<std::int64_t>& shape() const { return *m_shape; }
    std::int64_t numel() const { return m_numel; }

    /// Element `i` (row-major); NaN when out of range. Inline, with the dtype's reader chosen once at
    /// construction: views are walked element by element over tensors of millions of elements.
    double at(std::int64_t i) const
    {
        if (i < 0 || i >= m_numel)
            return std::numeric_limits<double>::quiet_NaN();
        switch (m_kind) {
        case ElementKind::Npu:
            return npuAt(i);
        case ElementKind::Bench:
            return benchAt(i);
        case ElementKind::AbsDiff:
            return absoluteDifference(npuAt(i), benchAt(i));
        case ElementKind::RelDiff:
            return relativeDifference(npuAt(i), benchAt(i));
        }
        return std::numeric_limits<double>::quiet_NaN();
    }

    /// Elements first, first + stride, … (count of them) into out; NaN for any out of range. The fast path
    /// for rows and whole tensors: one dtype dispatch per call instead of one per element.
    void read(std::int64_t first, std::int64_t stride, std::int64_t count, double* out) const;

    /// Reads one element of a dtype as double (exactly as Tensor::valueAt does).
    using Reader = double (*)(const std::byte*);
    /// Reads `count` elements, `stride` apart, starting at element `first`.
    using BlockReader = void (*)(const std::byte* data, std::int64_t first, std::int64_t stride, std::int64_t count,
                                 double* out);

private:
    ElementView() = default;
    double npuAt(std::int64_t i) const { return m_npuRead(m_npuData + static_cast<std::size_t>(i) * m_npuSize); }
    double benchAt(std::int64_t i) const
    {
        return m_benchRead(m_benchData + static_cast<std::size_t>(i) * m_benchSize);
    }

    const std::byte* m_npuData = nullptr;
    const std::byte* m_benchData = nullptr;
    Reader m_npuRead = nullptr;
    Reader m_benchRead = nullptr;
    BlockReader m_npuBlock = nullptr;
    BlockReader m_benchBlock = nullptr;
    std::size_t m_npuSize = 0;
    std::size_t m_benchSize = 0;
    const std::vector<std::int64_t>* m_shape = nullptr;
    ElementKind m_kind = ElementKind::Npu;
    std::int64_t m_numel = 0;
};

/// Lowest and highest finite value and how many values are finite.
struct ValueRange
{
    double lo = 0;
    double hi = 0;
    std::int64_t finite = 0;
};

/// std::nullopt when no value is finite (or the view is empty).
std::optional<ValueRange> finiteRange(const ElementView& view);

/**
 * @brief Counts of values in equal-width bins over [lo, hi]; NaN and infinities are counted apart.
 *
 * The last bin includes hi. A degenerate range (lo == hi) is widened to [lo - 0.5, lo + 0.5] (or by
 * half of |lo| when that is larger) so a constant tensor still shows one bar.
 */
struct Histogram
{
    double lo = 0;
    double hi = 0;
    std::vector<std::int64_t> counts;
    std::int64_t nan = 0;
    std::int64_t posInf = 0;
    std::int64_t negInf = 0;
    std::int64_t below = 0; ///< finite values under lo (only with an explicit range)
    std::int64_t above = 0; ///< finite values over hi
    std::int64_t nonPositive = 0; ///< values <= 0 (histogramLog10 only: they have no logarithm)
    std::int64_t total = 0; ///< every value seen

    double binWidth() const;
    double binStart(std::size_t bin) const;
    double binCenter(std::size_t bin) const;
};

inline constexpr std::size_t kMaxHistogramBins = 1 << 20;

/// Histogram of a view with `bins` bins (1..kMaxHistogramBins) over `range` (finite, lo <= hi), or over
/// the view's own finite range when none is given. Errors: tensor.argument.
Result<Histogram> histogram(const ElementView& view, std::size_t bins, std::optional<ValueRange> range = {});

/**
 * @brief Histogram of log10 of the positive values: differences span many decades, so equal-width bins
 * of the values themselves put nearly everything into the first bin.
 *
 * lo and hi are in log10 units; values <= 0 (equal elements, for a difference) are counted in
 * nonPositive, NaN and infinities apart as in histogram().
 */
Result<Histogram> histogramLog10(const ElementView& view, std::size_t bins);

/// Which two axes of an N-d view form the slice; every other axis is held at `fixed[axis]`.
struct SliceSpec
{
    int rowAxis = 0; ///< -1: a single row (what 0-d and 1-d views have)
    int colAxis = 1; ///< -1: a single column (what 0-d views have)
    std::vector<std::int64_t> fixed; ///< one index per axis; entries of rowAxis/colAxis are ignored; may be empty (all 0)
};

/// The default slice of a shape: the last two axes (1 row for 1-d, 1 × 1 for 0-d), others at 0.
SliceSpec defaultSlice(std::span<const std::int64_t> shape);

/// A 2-D slice, row-major: values[r * cols + c].
struct Slice2D
{
    std::int64_t rows = 0;
    std::int64_t cols = 0;
    std::vector<double> values;
    /// Flat index in the view of element (r, c) is origin + r * rowStride + c * colStride.
    std::int64_t origin = 0;
    std::int64_t rowStride = 0;
    std::int64_t colStride = 0;

    double at(std::int64_t r, std::int64_t c) const { return values[static_cast<std::size_t>(r * cols + c)]; }
    std::int64_t flatIndexOf(std::int64_t r, std::int64_t c) const { return origin + r * rowStride + c * colStride; }
};

/// Extracts a slice (an empty one for an empty view). Errors (tensor.argument): axes out of range or equal,
/// a fixed index out of range, more than maxElements elements.
Result<Slice2D> extractSlice(const ElementView& view, const SliceSpec& spec,
                             std::int64_t maxElements = std::int64_t { 1 } << 28);

/// How a downsampled cell summarises its block.
enum class Pooling : std::uint8_t {
    Mean,         ///< mean of the finite values (NaN when none)
    MaxMagnitude, ///< the value of largest magnitude, sign kept; NaN wins (so no bad element hides)
};

/// A slice reduced to at most maxRows × maxCols cells by blocks of equal size (strides are those of the
/// block origin; the result is for display only). Returns the slice unchanged when it already fits.
Slice2D downsample(const Slice2D& slice, std::int64_t maxRows, std::int64_t maxCols, Pooling pooling);

/// One of the worst elements of a pair.
struct WorstElement
{
    std::int64_t flatIndex = 0;
    std::vector<std::int64_t> index; ///< multi-index (empty for 0-d)
    double npu = 0;
    double bench = 0;
    double absDiff = 0;
    double relDiff = 0;
};

/**
 * @brief The k elements with the largest `by` (AbsDiff or RelDiff), worst first; k is clamped to the size.
 *
 * NaN counts as worse than any number (a NaN difference means the two sides disagree on NaN/inf);
 * ties keep the lower flat index first, so the result is deterministic. Uses a bounded heap: memory
 * O(k), time O(n log k). Errors: tensor.shape-mismatch, tensor.argument (by not a difference kind).
 */
Result<std::vector<WorstElement>> worstElements(const Tensor& npu, const Tensor& bench, std::size_t k,
                                                ElementKind by = ElementKind::AbsDiff);

/// Key figures of the element-wise difference of a pair (or of a slice pair).
struct DiffSummary
{
    std::int64_t count = 0;
    double maxAbs = 0;                    ///< over elements with a finite difference (NaN when there are none)
    std::int64_t maxAbsIndex = -1;        ///< flat index (in the tensor or slice) of maxAbs
    double maxRel = 0;
    std::int64_t maxRelIndex = -1;
    std::int64_t overOneThousandth = 0;   ///< relative error > 0.001 or NaN (msprobe counts NaN as failing)
    std::int64_t overFiveThousandths = 0; ///< relative error > 0.005 or NaN
    std::int64_t nonFinite = 0;           ///< elements whose difference is NaN or infinite
    double cosine = 0;                    ///< cosine similarity over finite pairs; NaN when a side is all zero
};

/// Summary of two same-shape tensors. Errors: tensor.shape-mismatch, tensor.shape-invalid, tensor.size-mismatch.
Result<DiffSummary> summarizeDifference(const Tensor& npu, const Tensor& bench);
/// Summary over one slice of two same-shape tensors; indices in the result are flat indices of the tensors.
/// Errors: as summarizeDifference and extractSlice.
Result<DiffSummary> summarizeDifference(const Tensor& npu, const Tensor& bench, const SliceSpec& slice);
/// Summary of two same-size value arrays (tensor.shape-mismatch).
Result<DiffSummary> summarizeDifference(std::span<const double> npu, std::span<const double> bench);

} // namespace probescope::tensor
