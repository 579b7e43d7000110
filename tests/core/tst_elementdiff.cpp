// SPDX-License-Identifier: Apache-2.0
// Tests for core/tensor/elementdiff: element-wise differences, histograms, slices, worst elements and the
// summary. Oracles: hand-computed values, a brute-force full sort, and msprobe's own compare result of the
// fixture (expected/nostack/step0/compare_result.csv, row Functional.gelu.0.forward.output.0).
#include "core/tensor/elementdiff.h"
#include "core/tensor/tensor.h"
#include "testconfig.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <vector>

using namespace probescope;
using namespace probescope::tensor;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNan = std::numeric_limits<double>::quiet_NaN();

template<typename T>
Tensor makeTensor(DType dtype, std::vector<std::int64_t> shape, const std::vector<T>& values)
{
    Tensor t;
    t.dtype = dtype;
    t.shape = std::move(shape);
    t.data.resize(values.size() * sizeof(T));
    if (!values.empty()) // memcpy from an empty vector's null data() is undefined
        std::memcpy(t.data.data(), values.data(), t.data.size());
    return t;
}

Tensor makeFloat(std::vector<std::int64_t> shape, const std::vector<float>& values)
{
    return makeTensor(DType::Float32, std::move(shape), values);
}

Tensor makeDouble(std::vector<std::int64_t> shape, const std::vector<double>& values)
{
    return makeTensor(DType::Float64, std::move(shape), values);
}

Tensor makeHalfBits(DType dtype, std::vector<std::int64_t> shape, const std::vector<std::uint16_t>& bits)
{
    return makeTensor(dtype, std::move(shape), bits);
}


std::vector<float> iota(std::size_t n, float start = 0)
{
    std::vector<float> v(n);
    std::iota(v.begin(), v.end(), start);
    return v;
}

Tensor fixtureTensor(const char* side, const char* name, int step = 0)
{
    const auto dir = probescope::testing::fixturesDir() / "modelA_tensor_mix" / side / ("step" + std::to_string(step))
        / "rank" / "dump_tensor_data";
    auto t = loadTensorFile(dir, name);
    EXPECT_TRUE(t.ok()) << (t.ok() ? "" : t.error().format());
    return t.ok() ? std::move(t).value() : Tensor {};
}

} // namespace

TEST(ElementDiff, DifferencesFollowMsprobe)
{
    EXPECT_DOUBLE_EQ(absoluteDifference(1.5, -0.5), 2.0);
    EXPECT_DOUBLE_EQ(relativeDifference(3.0, 2.0), 0.5);
    EXPECT_DOUBLE_EQ(relativeDifference(-3.0, 2.0), 2.5);
    // Bench 0: msprobe adds eps to both, so the error is |npu| / eps.
    EXPECT_DOUBLE_EQ(relativeDifference(1e-3, 0.0), std::fabs((1e-3 + kRelativeEpsilon) - kRelativeEpsilon) / kRelativeEpsilon);
    EXPECT_EQ(relativeDifference(0.0, 0.0), 0.0);
    // Same non-finite values on both sides agree; different ones do not.
    EXPECT_EQ(absoluteDifference(kNan, kNan), 0.0);
    EXPECT_EQ(absoluteDifference(kInf, kInf), 0.0);
    EXPECT_EQ(relativeDifference(-kInf, -kInf), 0.0);
    EXPECT_EQ(absoluteDifference(kInf, -kInf), kInf);
    EXPECT_TRUE(std::isnan(absoluteDifference(kNan, 1.0)));
    EXPECT_TRUE(std::isnan(relativeDifference(1.0, kNan)));
}

TEST(ElementDiff, ShapesAndSizesAreChecked)
{
    const std::vector<std::int64_t> huge { std::int64_t { 1 } << 40, std::int64_t { 1 } << 40 };
    auto overflow = checkedNumel(huge);
    ASSERT_FALSE(overflow.ok());
    EXPECT_EQ(overflow.error().id, "tensor.shape-invalid");
    const std::vector<std::int64_t> negative { 3, -1 };
    EXPECT_EQ(checkedNumel(negative).error().id, "tensor.shape-invalid");
    const std::vector<std::int64_t> empty {};
    EXPECT_EQ(*checkedNumel(empty), 1);

    // A shape claiming more elements than the data holds never lets at() read past the buffer.
    Tensor lying = makeFloat({ 4 }, { 1, 2 });
    auto view = ElementView::single(lying);
    ASSERT_FALSE(view.ok());
    EXPECT_EQ(view.error().id, "tensor.size-mismatch");
    Tensor absurd = makeFloat({ std::int64_t { 1 } << 62, 4 }, { 1 });
    EXPECT_EQ(ElementView::single(absurd).error().id, "tensor.shape-invalid");

    const Tensor a = makeFloat({ 2, 3 }, iota(6));
    const Tensor b = makeFloat({ 3, 2 }, iota(6));
    auto diff = ElementView::pair(a, b, ElementKind::AbsDiff);
    ASSERT_FALSE(diff.ok());
    EXPECT_EQ(diff.error().id, "tensor.shape-mismatch");
    EXPECT_NE(diff.error().message.find("[2, 3]"), std::string::npos);
    EXPECT_NE(diff.error().message.find("[3, 2]"), std::string::npos);
    // Each side alone can still be shown.
    auto benchOnly = ElementView::pair(a, b, ElementKind::Bench);
    ASSERT_TRUE(benchOnly.ok());
    EXPECT_EQ(benchOnly->shape(), (std::vector<std::int64_t> { 3, 2 }));
    EXPECT_EQ(summarizeDifference(a, b).error().id, "tensor.shape-mismatch");
    EXPECT_EQ(worstElements(a, b, 3).error().id, "tensor.shape-mismatch");
}

TEST(ElementDiff, HalfAndBfloat16AreReadExactly)
{
    // 1.0, 1/3 rounded, the largest half, the smallest subnormal half.
    const Tensor half = makeHalfBits(DType::Float16, { 4 }, { 0x3C00, 0x3555, 0x7BFF, 0x0001 });
    // 1.0, 1/3 rounded to bfloat16, -2.0, +inf.
    const Tensor bf = makeHalfBits(DType::BFloat16, { 4 }, { 0x3F80, 0x3EAB, 0xC000, 0x7F80 });
    auto h = ElementView::single(half);
    auto b = ElementView::single(bf);
    ASSERT_TRUE(h.ok() && b.ok());
    EXPECT_EQ(h->at(0), 1.0);
    EXPECT_EQ(h->at(1), 0.333251953125);
    EXPECT_EQ(h->at(2), 65504.0);
    EXPECT_EQ(h->at(3), std::ldexp(1.0, -24));
    EXPECT_EQ(b->at(1), 0.333984375);
    EXPECT_EQ(b->at(2), -2.0);
    EXPECT_EQ(b->at(3), kInf);
    // A pair of different dtypes but one shape compares element by element in double.
    auto d = ElementView::pair(half, bf, ElementKind::AbsDiff);
    ASSERT_TRUE(d.ok());
    EXPECT_EQ(d->at(1), 0.333984375 - 0.333251953125);
    EXPECT_EQ(d->at(3), kInf);
}

TEST(ElementDiff, BlockReadsMatchElementReadsForEveryDtype)
{
    // 0..23 in every dtype (bool: alternating), compared through read() (blocks) and at() (one by one).
    for (DType dtype : { DType::Bool, DType::UInt8, DType::Int8, DType::Int16, DType::Int32, DType::Int64, DType::Float16,
                         DType::BFloat16, DType::Float32, DType::Float64 }) {
        Tensor t;
        t.dtype = dtype;
        t.shape = { 4, 6 };
        const std::size_t size = dtypeSize(dtype);
        t.data.resize(24 * size);
        for (int i = 0; i < 24; ++i) {
            std::byte* p = t.data.data() + static_cast<std::size_t>(i) * size;
            switch (dtype) {
            case DType::Bool:
            case DType::UInt8:
            case DType::Int8:
                *p = static_cast<std::byte>(dtype == DType::Bool ? i % 2 : i);
                break;
            case DType::Int16: {
                const auto v = static_cast<std::int16_t>(-i);
                std::memcpy(p, &v, 2);
                break;
            }
            case DType::Int32: {
                const std::int32_t v = i * 1000;
                std::memcpy(p, &v, 4);
                break;
            }
            case DType::Int64: {
                const std::int64_t v = (std::int64_t { 1 } << 40) + i;
                std::memcpy(p, &v, 8);
                break;
            }
            case DType::Float16: {
                const std::uint16_t v = floatToHalf(static_cast<float>(i) / 3);
                std::memcpy(p, &v, 2);
                break;
            }
            case DType::BFloat16: {
                const std::uint16_t v = floatToBfloat16(static_cast<float>(i) / 3);
                std::memcpy(p, &v, 2);
                break;
            }
            case DType::Float32: {
                const float v = static_cast<float>(i) / 3;
                std::memcpy(p, &v, 4);
                break;
            }
            case DType::Float64: {
                const double v = i / 3.0;
                std::memcpy(p, &v, 8);
                break;
            }
            }
        }
        auto view = ElementView::single(t);
        ASSERT_TRUE(view.ok());
        for (std::int64_t i = 0; i < 24; ++i)
            ASSERT_EQ(view->at(i), t.valueAt(i)) << torchName(dtype) << " " << i;
        double out[8];
        view->read(0, 1, 8, out);
        for (int i = 0; i < 8; ++i)
            EXPECT_EQ(out[i], t.valueAt(i)) << torchName(dtype);
        view->read(5, 6, 3, out); // a column: 5, 11, 17
        EXPECT_EQ(out[2], t.valueAt(17)) << torchName(dtype);
        view->read(20, 2, 4, out); // 20, 22, then two past the end
        EXPECT_EQ(out[1], t.valueAt(22));
        EXPECT_TRUE(std::isnan(out[2]));
        EXPECT_TRUE(std::isnan(out[3]));
        view->read(-1, 1, 2, out);
        EXPECT_TRUE(std::isnan(out[0]));
        EXPECT_EQ(out[1], t.valueAt(0));
    }
    // Differences in blocks longer than one internal block (2048) agree with element reads.
    std::vector<float> a(5000);
    std::vector<float> b(5000);
    for (std::size_t i = 0; i < a.size(); ++i) {
        a[i] = static_cast<float>(i % 97) - 40.0f;
        b[i] = static_cast<float>(i % 89) - 40.0f;
    }
    const Tensor ta = makeFloat({ 5000 }, a);
    const Tensor tb = makeFloat({ 5000 }, b);
    for (ElementKind kind : { ElementKind::AbsDiff, ElementKind::RelDiff }) {
        auto v = ElementView::pair(ta, tb, kind);
        ASSERT_TRUE(v.ok());
        std::vector<double> out(5000);
        v->read(0, 1, 5000, out.data());
        for (std::int64_t i = 0; i < 5000; i += 37)
            ASSERT_EQ(out[static_cast<std::size_t>(i)], v->at(i)) << i;
        EXPECT_EQ(out[4999], v->at(4999));
    }
}

TEST(ElementDiff, HistogramCountsBinsAndNonFiniteApart)
{
    const Tensor t = makeFloat({ 8 }, { 0.0f, 1.0f, 2.0f, 3.0f, 4.0f, static_cast<float>(kNan), static_cast<float>(kInf),
                                        static_cast<float>(-kInf) });
    auto view = ElementView::single(t);
    ASSERT_TRUE(view.ok());
    auto range = finiteRange(*view);
    ASSERT_TRUE(range.has_value());
    EXPECT_EQ(range->lo, 0.0);
    EXPECT_EQ(range->hi, 4.0);
    EXPECT_EQ(range->finite, 5);

    auto h = histogram(*view, 4);
    ASSERT_TRUE(h.ok());
    EXPECT_EQ(h->counts, (std::vector<std::int64_t> { 1, 1, 1, 2 })); // the last bin includes hi
    EXPECT_EQ(h->nan, 1);
    EXPECT_EQ(h->posInf, 1);
    EXPECT_EQ(h->negInf, 1);
    EXPECT_EQ(h->total, 8);
    EXPECT_DOUBLE_EQ(h->binWidth(), 1.0);
    EXPECT_DOUBLE_EQ(h->binStart(2), 2.0);
    EXPECT_DOUBLE_EQ(h->binCenter(0), 0.5);

    // An explicit (shared) range counts what falls outside.
    auto clipped = histogram(*view, 2, ValueRange { 1.0, 3.0, 0 });
    ASSERT_TRUE(clipped.ok());
    EXPECT_EQ(clipped->counts, (std::vector<std::int64_t> { 1, 2 }));
    EXPECT_EQ(clipped->below, 1);
    EXPECT_EQ(clipped->above, 1);

    EXPECT_EQ(histogram(*view, 0).error().id, "tensor.argument");
    EXPECT_EQ(histogram(*view, kMaxHistogramBins + 1).error().id, "tensor.argument");
    EXPECT_EQ(histogram(*view, 4, ValueRange { 2.0, 1.0, 0 }).error().id, "tensor.argument");
    EXPECT_EQ(histogram(*view, 4, ValueRange { 0.0, kInf, 0 }).error().id, "tensor.argument");
}

TEST(ElementDiff, HistogramOfExtremeAndConstantValues)
{
    // A range over nearly all doubles must not overflow (hi - lo is inf in double).
    const Tensor t = makeDouble({ 3 }, { -1.7e308, 0.0, 1.7e308 });
    auto h = histogram(*ElementView::single(t), 2);
    ASSERT_TRUE(h.ok());
    EXPECT_EQ(h->counts, (std::vector<std::int64_t> { 1, 2 }));
    EXPECT_TRUE(std::isfinite(h->binWidth()));
    EXPECT_DOUBLE_EQ(h->binStart(1), 0.0);

    const Tensor constant = makeFloat({ 3 }, { 7, 7, 7 });
    auto c = histogram(*ElementView::single(constant), 5);
    ASSERT_TRUE(c.ok());
    EXPECT_LT(c->lo, 7.0);
    EXPECT_GT(c->hi, 7.0);
    EXPECT_EQ(std::accumulate(c->counts.begin(), c->counts.end(), std::int64_t { 0 }), 3);

    const Tensor allNan = makeFloat({ 2 }, { static_cast<float>(kNan), static_cast<float>(kNan) });
    EXPECT_FALSE(finiteRange(*ElementView::single(allNan)).has_value());
    auto n = histogram(*ElementView::single(allNan), 3);
    ASSERT_TRUE(n.ok());
    EXPECT_EQ(n->nan, 2);
    EXPECT_EQ(std::accumulate(n->counts.begin(), n->counts.end(), std::int64_t { 0 }), 0);
}

TEST(ElementDiff, Log10HistogramOfDifferences)
{
    // float64: 1e-3 and 1e-2 in float32 are not exact decades, and the bin edges would fall on them.
    const Tensor t = makeDouble({ 6 }, { 0.0, 1e-3, 1e-2, 1.0, 10.0, kNan });
    auto h = histogramLog10(*ElementView::single(t), 4);
    ASSERT_TRUE(h.ok());
    EXPECT_NEAR(h->lo, -3.0, 1e-6);
    EXPECT_NEAR(h->hi, 1.0, 1e-6);
    EXPECT_EQ(h->counts, (std::vector<std::int64_t> { 1, 1, 0, 2 }));
    EXPECT_EQ(h->nonPositive, 1);
    EXPECT_EQ(h->nan, 1);
    EXPECT_EQ(h->total, 6);
    auto zeros = histogramLog10(*ElementView::single(makeFloat({ 2 }, { 0, 0 })), 3);
    ASSERT_TRUE(zeros.ok());
    EXPECT_EQ(zeros->nonPositive, 2);
    EXPECT_EQ(histogramLog10(*ElementView::single(t), 0).error().id, "tensor.argument");
}

TEST(ElementDiff, SlicesOfNdTensors)
{
    // t[i][j][k] = 12 i + 4 j + k
    const Tensor t = makeFloat({ 2, 3, 4 }, iota(24));
    auto view = ElementView::single(t);
    ASSERT_TRUE(view.ok());

    auto def = extractSlice(*view, defaultSlice(t.shape));
    ASSERT_TRUE(def.ok());
    EXPECT_EQ(def->rows, 3);
    EXPECT_EQ(def->cols, 4);
    EXPECT_EQ(def->at(2, 3), 11.0);

    // Axes 0 and 2 with axis 1 held at 2: t[r][2][c] = 12 r + 8 + c.
    auto s = extractSlice(*view, SliceSpec { 0, 2, { 0, 2, 0 } });
    ASSERT_TRUE(s.ok());
    EXPECT_EQ(s->rows, 2);
    EXPECT_EQ(s->cols, 4);
    for (std::int64_t r = 0; r < 2; ++r)
        for (std::int64_t c = 0; c < 4; ++c) {
            EXPECT_EQ(s->at(r, c), static_cast<double>(12 * r + 8 + c));
            EXPECT_EQ(static_cast<double>(s->flatIndexOf(r, c)), s->at(r, c));
        }

    // Transposed: rows along axis 2, columns along axis 0, axis 1 at 1.
    auto tr = extractSlice(*view, SliceSpec { 2, 0, { 0, 1, 0 } });
    ASSERT_TRUE(tr.ok());
    EXPECT_EQ(tr->rows, 4);
    EXPECT_EQ(tr->cols, 2);
    EXPECT_EQ(tr->at(3, 1), 12.0 + 4.0 + 3.0);

    // A single row along axis 1.
    auto row = extractSlice(*view, SliceSpec { -1, 1, { 1, 0, 2 } });
    ASSERT_TRUE(row.ok());
    EXPECT_EQ(row->rows, 1);
    EXPECT_EQ(row->cols, 3);
    EXPECT_EQ(row->at(0, 2), 12.0 + 8.0 + 2.0);

    EXPECT_EQ(extractSlice(*view, SliceSpec { 1, 1, {} }).error().id, "tensor.argument");
    EXPECT_EQ(extractSlice(*view, SliceSpec { 0, 3, {} }).error().id, "tensor.argument");
    EXPECT_EQ(extractSlice(*view, SliceSpec { 0, 2, { 0, 3, 0 } }).error().id, "tensor.argument");
    EXPECT_EQ(extractSlice(*view, SliceSpec { 0, 2, { 0, 0 } }).error().id, "tensor.argument");
    EXPECT_EQ(extractSlice(*view, SliceSpec { 1, 2, { 0, 0, 0 } }, 11).error().id, "tensor.argument");
}

TEST(ElementDiff, SlicesOfZeroAndOneDimensionalAndEmptyTensors)
{
    const Tensor scalar = makeFloat({}, { 42 });
    auto s = extractSlice(*ElementView::single(scalar), defaultSlice(scalar.shape));
    ASSERT_TRUE(s.ok());
    EXPECT_EQ(s->rows, 1);
    EXPECT_EQ(s->cols, 1);
    EXPECT_EQ(s->at(0, 0), 42.0);
    EXPECT_TRUE(unravelIndex(scalar.shape, 0).empty());

    const Tensor vec = makeFloat({ 5 }, iota(5, 1));
    auto v = extractSlice(*ElementView::single(vec), defaultSlice(vec.shape));
    ASSERT_TRUE(v.ok());
    EXPECT_EQ(v->rows, 1);
    EXPECT_EQ(v->cols, 5);
    EXPECT_EQ(v->at(0, 4), 5.0);

    const Tensor empty = makeFloat({ 3, 0 }, {});
    auto e = extractSlice(*ElementView::single(empty), defaultSlice(empty.shape));
    ASSERT_TRUE(e.ok());
    EXPECT_TRUE(e->values.empty());
}

TEST(ElementDiff, IndicesRoundTrip)
{
    const std::vector<std::int64_t> shape { 4, 16, 32 };
    for (std::int64_t flat : { 0, 1, 31, 32, 511, 2047 }) {
        const auto idx = unravelIndex(shape, flat);
        EXPECT_EQ(ravelIndex(shape, idx), flat);
    }
    EXPECT_EQ(unravelIndex(shape, 32 * 16 + 33), (std::vector<std::int64_t> { 1, 1, 1 }));
    const std::vector<std::int64_t> out { 4, 0, 0 };
    EXPECT_FALSE(ravelIndex(shape, out).has_value());
    const std::vector<std::int64_t> shortIndex { 0, 0 };
    EXPECT_FALSE(ravelIndex(shape, shortIndex).has_value());
}

TEST(ElementDiff, DownsampleKeepsTheWorstCell)
{
    Slice2D s;
    s.rows = 4;
    s.cols = 4;
    s.rowStride = 4;
    s.colStride = 1;
    s.values = { 1, 2, 0, 0, //
                 -9, 3, 0, 0, //
                 0, 0, 5, 5, //
                 0, kNan, 5, 5 };
    const Slice2D maxMag = downsample(s, 2, 2, Pooling::MaxMagnitude);
    ASSERT_EQ(maxMag.rows, 2);
    ASSERT_EQ(maxMag.cols, 2);
    EXPECT_EQ(maxMag.at(0, 0), -9.0);
    EXPECT_EQ(maxMag.at(0, 1), 0.0);
    EXPECT_TRUE(std::isnan(maxMag.at(1, 0))); // a NaN never hides behind its neighbours
    EXPECT_EQ(maxMag.at(1, 1), 5.0);
    EXPECT_EQ(maxMag.rowStride, 8);
    EXPECT_EQ(maxMag.colStride, 2);

    const Slice2D mean = downsample(s, 2, 2, Pooling::Mean);
    EXPECT_DOUBLE_EQ(mean.at(0, 0), (1 + 2 - 9 + 3) / 4.0);
    EXPECT_DOUBLE_EQ(mean.at(1, 0), 0.0); // mean of the three finite values

    const Slice2D same = downsample(s, 10, 10, Pooling::Mean);
    EXPECT_EQ(same.values.size(), 16u);
    const Slice2D odd = downsample(s, 3, 1, Pooling::Mean);
    EXPECT_EQ(odd.rows, 2);
    EXPECT_EQ(odd.cols, 1);
}

TEST(ElementDiff, WorstElementsRankNanFirstThenLargestThenLowestIndex)
{
    const Tensor npu = makeFloat({ 2, 3 }, { 1, 5, 3, static_cast<float>(kNan), 0, 2 });
    const Tensor bench = makeFloat({ 2, 3 }, { 1, 1, 1, 0, 4, 0 });
    auto worst = worstElements(npu, bench, 4);
    ASSERT_TRUE(worst.ok());
    ASSERT_EQ(worst->size(), 4u);
    EXPECT_EQ((*worst)[0].flatIndex, 3); // NaN difference
    EXPECT_EQ((*worst)[0].index, (std::vector<std::int64_t> { 1, 0 }));
    EXPECT_EQ((*worst)[1].flatIndex, 1); // |5 - 1| = 4
    EXPECT_EQ((*worst)[2].flatIndex, 4); // |0 - 4| = 4, later index
    EXPECT_EQ((*worst)[3].flatIndex, 2); // |3 - 1| = 2 ties with index 5 (|2 - 0|) and wins by index
    EXPECT_EQ((*worst)[1].npu, 5.0);
    EXPECT_EQ((*worst)[1].bench, 1.0);
    EXPECT_EQ((*worst)[1].absDiff, 4.0);
    EXPECT_EQ((*worst)[1].relDiff, 4.0);

    auto byRel = worstElements(npu, bench, 2, ElementKind::RelDiff);
    ASSERT_TRUE(byRel.ok());
    EXPECT_EQ((*byRel)[0].flatIndex, 3); // NaN
    EXPECT_EQ((*byRel)[1].flatIndex, 5); // 2 / eps

    EXPECT_EQ(worstElements(npu, bench, 1000)->size(), 6u); // k is clamped
    EXPECT_TRUE(worstElements(npu, bench, 0)->empty());
    EXPECT_EQ(worstElements(npu, bench, 2, ElementKind::Npu).error().id, "tensor.argument");
}

TEST(ElementDiff, SummaryCountsThresholdsAndCosine)
{
    const Tensor npu = makeFloat({ 4 }, { 1.0f, 2.001f, 3.0f, 0.0f });
    const Tensor bench = makeFloat({ 4 }, { 1.0f, 2.0f, 3.03f, 0.0f });
    auto s = summarizeDifference(npu, bench);
    ASSERT_TRUE(s.ok());
    EXPECT_EQ(s->count, 4);
    EXPECT_NEAR(s->maxAbs, 0.03, 1e-6);
    EXPECT_EQ(s->maxAbsIndex, 2);
    EXPECT_NEAR(s->maxRel, 0.03 / 3.03, 1e-6);
    EXPECT_EQ(s->maxRelIndex, 2);
    EXPECT_EQ(s->overOneThousandth, 1);   // index 1 is 0.0005 off, index 2 0.0099
    EXPECT_EQ(s->overFiveThousandths, 1); // only index 2 (0.0099)
    EXPECT_EQ(s->nonFinite, 0);
    const double dot = 1.0 + double(2.001f) * 2.0 + 3.0 * double(3.03f);
    const double nn = 1.0 + double(2.001f) * double(2.001f) + 9.0;
    const double bb = 1.0 + 4.0 + double(3.03f) * double(3.03f);
    EXPECT_NEAR(s->cosine, dot / std::sqrt(nn * bb), 1e-15);

    auto zeros = summarizeDifference(makeFloat({ 2 }, { 0, 0 }), makeFloat({ 2 }, { 0, 0 }));
    EXPECT_EQ(zeros->cosine, 1.0);
    auto oneZero = summarizeDifference(makeFloat({ 2 }, { 0, 0 }), makeFloat({ 2 }, { 1, 0 }));
    EXPECT_TRUE(std::isnan(oneZero->cosine));

    const std::vector<double> a { 1, kNan, 3 };
    const std::vector<double> b { 1, 2, 3 };
    auto spans = summarizeDifference(a, b);
    ASSERT_TRUE(spans.ok());
    EXPECT_EQ(spans->nonFinite, 1);
    EXPECT_EQ(spans->overOneThousandth, 1); // NaN counts as failing, as in msprobe
    EXPECT_EQ(spans->maxAbs, 0.0);
    const std::vector<double> shortB { 1 };
    EXPECT_EQ(summarizeDifference(a, shortB).error().id, "tensor.shape-mismatch");
}

TEST(ElementDiff, FixtureGeluOutputMatchesMsprobe)
{
    const Tensor npu = fixtureTensor("npu", "Functional.gelu.0.forward.output.0.pt");
    const Tensor bench = fixtureTensor("bench", "Functional.gelu.0.forward.output.0.pt");
    ASSERT_EQ(npu.shape, (std::vector<std::int64_t> { 4, 16, 32 }));
    auto s = summarizeDifference(npu, bench);
    ASSERT_TRUE(s.ok()) << s.error().format();
    // msprobe 1.2.2's row: Cosine 0.879928374486, MaxAbsErr 1.163048326969, MaxRelativeErr 4594.5234375
    // (computed in float32 there), One Thousandth 0.00537109375 (11 of 2048 below), Five 0.02197265625 (45).
    EXPECT_NEAR(s->maxAbs, 1.163048326969, 1e-12);
    EXPECT_NEAR(s->cosine, 0.879928374486, 1e-12);
    EXPECT_NEAR(s->maxRel, 4594.5234375, 4594.5234375 * 1e-6);
    EXPECT_EQ(s->count, 2048);
    EXPECT_EQ(s->overOneThousandth, 2048 - 11);
    EXPECT_EQ(s->overFiveThousandths, 2048 - 45);

    // Worst elements against a brute-force full sort.
    auto worst = worstElements(npu, bench, 25);
    ASSERT_TRUE(worst.ok());
    ASSERT_EQ(worst->size(), 25u);
    std::vector<std::int64_t> order(2048);
    std::iota(order.begin(), order.end(), 0);
    auto diffAt = [&](std::int64_t i) { return std::fabs(npu.valueAt(i) - bench.valueAt(i)); };
    std::stable_sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) { return diffAt(a) > diffAt(b); });
    for (std::size_t i = 0; i < 25; ++i) {
        EXPECT_EQ((*worst)[i].flatIndex, order[i]) << i;
        EXPECT_EQ((*worst)[i].absDiff, diffAt(order[i]));
    }
    EXPECT_EQ((*worst)[0].absDiff, s->maxAbs);
    EXPECT_EQ((*worst)[0].flatIndex, s->maxAbsIndex);
    EXPECT_EQ(ravelIndex(npu.shape, (*worst)[0].index), (*worst)[0].flatIndex);

    // The gelu input is identical on both sides.
    auto in = summarizeDifference(fixtureTensor("npu", "Functional.gelu.0.forward.input.0.pt"),
                                  fixtureTensor("bench", "Functional.gelu.0.forward.input.0.pt"));
    ASSERT_TRUE(in.ok());
    EXPECT_EQ(in->maxAbs, 0.0);
    EXPECT_EQ(in->overOneThousandth, 0);
}

TEST(ElementDiff, SliceSummaryOfTheFixture)
{
    const Tensor npu = fixtureTensor("npu", "Functional.gelu.0.forward.output.0.pt");
    const Tensor bench = fixtureTensor("bench", "Functional.gelu.0.forward.output.0.pt");
    auto whole = summarizeDifference(npu, bench);
    ASSERT_TRUE(whole.ok());
    const std::vector<std::int64_t> at = unravelIndex(npu.shape, whole->maxAbsIndex);
    // The slice through the worst element has the same maximum, at the same place.
    SliceSpec spec { 1, 2, { at[0], 0, 0 } };
    auto n = extractSlice(*ElementView::pair(npu, bench, ElementKind::Npu), spec);
    auto b = extractSlice(*ElementView::pair(npu, bench, ElementKind::Bench), spec);
    auto d = extractSlice(*ElementView::pair(npu, bench, ElementKind::AbsDiff), spec);
    ASSERT_TRUE(n.ok() && b.ok() && d.ok());
    auto part = summarizeDifference(n->values, b->values);
    ASSERT_TRUE(part.ok());
    EXPECT_EQ(part->maxAbs, whole->maxAbs);
    EXPECT_EQ(d->values[static_cast<std::size_t>(part->maxAbsIndex)], whole->maxAbs);
    EXPECT_EQ(n->flatIndexOf(at[1], at[2]), whole->maxAbsIndex);

    // The same straight from the tensors, without materialising the slices; indices are the tensor's.
    auto direct = summarizeDifference(npu, bench, spec);
    ASSERT_TRUE(direct.ok());
    EXPECT_EQ(direct->maxAbs, whole->maxAbs);
    EXPECT_EQ(direct->maxAbsIndex, whole->maxAbsIndex);
    EXPECT_EQ(direct->count, 16 * 32);
    EXPECT_EQ(direct->overOneThousandth, part->overOneThousandth);
    EXPECT_EQ(direct->cosine, part->cosine);
    EXPECT_EQ(summarizeDifference(npu, bench, SliceSpec { 1, 1, {} }).error().id, "tensor.argument");
}
