// SPDX-License-Identifier: Apache-2.0
// The summation-order policies of core/compare/kernels (docs/compare-performance.md, "Summation order"):
// left to right (msprobe 26's BLAS ddot) and numpy's pairwise sum, each against a reference written here,
// from memory and from a file, with the same bits for any thread count and in both kernel builds.
#include "core/compare/metrics/kernels.h"
#include "core/compare/msprobe26/msprobe26.h"
#include "core/compare/table/pytext.h"
#include "core/tensor/dtype.h"
#include "core/tensor/tensor.h"
#include "core/compare/metrics/pairside.h"
#include "maketensor.h"
#include "tempdir.h"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

using namespace probescope;
using namespace probescope::compare;
using probescope::tensor::DType;
using probescope::tensor::Tensor;
using probescope::testing::makeTensor;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

/// Activations with exact zeros, and NPU values off by up to 1e-3 relative.
void randomPair(std::size_t n, std::uint32_t seed, std::vector<double>& npu, std::vector<double>& bench)
{
    std::mt19937_64 rng(seed);
    std::normal_distribution<double> normal(0.0, 1.0);
    std::uniform_real_distribution<double> uniform(0.0, 1.0);
    npu.resize(n);
    bench.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
        const double b = uniform(rng) < 0.1 ? 0.0 : normal(rng) * 3;
        bench[i] = b;
        npu[i] = b + normal(rng) * 1e-3 * std::fabs(b);
    }
}

/// The reference: the four sums in plain sequential float64, inf/NaN positions zeroed as msprobe does.
struct Sequential
{
    double dot = 0, nn = 0, bb = 0, dd = 0;
};

Sequential sequentialSums(const Tensor& n, const Tensor& b)
{
    Sequential s;
    for (std::int64_t i = 0; i < n.numel(); ++i) {
        double x = n.valueAt(i);
        double y = b.valueAt(i);
        if (!std::isfinite(x)) {
            x = 0;
            y = 0;
        }
        s.dot += x * y;
        s.nn += x * x;
        s.bb += y * y;
        s.dd += (x - y) * (x - y);
    }
    return s;
}

bool sameBits(double a, double b)
{
    return std::memcmp(&a, &b, sizeof a) == 0;
}

/// numpy's pairwise_sum as its C source reads, written out with indices: the test's independent reference.
template<typename T>
T referencePairwise(const std::vector<T>& a, std::size_t first, std::size_t n)
{
    if (n < 8) {
        T res = 0;
        for (std::size_t i = 0; i < n; ++i)
            res = res + a[first + i];
        return res;
    }
    if (n <= 128) {
        std::vector<T> r(a.begin() + static_cast<std::ptrdiff_t>(first), a.begin() + static_cast<std::ptrdiff_t>(first + 8));
        std::size_t i = 8;
        while (i + 8 <= n) {
            for (std::size_t j = 0; j < 8; ++j)
                r[j] = r[j] + a[first + i + j];
            i += 8;
        }
        const T left = (r[0] + r[1]) + (r[2] + r[3]);
        const T right = (r[4] + r[5]) + (r[6] + r[7]);
        T res = left + right;
        for (; i < n; ++i)
            res = res + a[first + i];
        return res;
    }
    const std::size_t half = n / 2 - (n / 2) % 8;
    return referencePairwise(a, first, half) + referencePairwise(a, first + half, n - half);
}

/// numpy's buffered reduction: `block` elements summed pairwise at a time, the blocks added left to right.
template<typename T>
T referenceBuffered(const std::vector<T>& a, std::size_t block)
{
    T total = 0;
    for (std::size_t first = 0; first < a.size(); first += block)
        total = total + referencePairwise(a, first, std::min(block, a.size() - first));
    return total;
}

/// The pair's elements written to a file after a 12-byte header (the elements lie at an offset, as in a .pt).
struct FileOperand
{
    probescope::testing::TempDir dir;
    int fd = -1;
    explicit FileOperand(const Tensor& t)
    {
        const auto path = dir.path() / "values.bin";
        {
            std::ofstream out(path, std::ios::binary);
            out.write("header bytes", 12);
            out.write(reinterpret_cast<const char*>(t.data.data()), static_cast<std::streamsize>(t.data.size()));
        }
        fd = ::open(path.c_str(), O_RDONLY);
    }
    ~FileOperand() { ::close(fd); }
    kernels::Operand operand(DType dtype) const { return kernels::Operand { dtype, nullptr, fd, 12 }; }
};

} // namespace

TEST(SumOrder, LeftToRightIsOneFloat64ChainInElementOrder)
{
    // Three chunks and a bit: the chain must carry across chunk and block boundaries and the 4-element groups.
    const std::size_t n = kernels::kChunkElements * 3 + 777;
    std::vector<double> nv, bv;
    randomPair(n, 21, nv, bv);
    nv[5] = bv[5] = kInf; // same positions on both sides: zeroed, as msprobe does
    for (const DType dtype : { DType::Float32, DType::Float16, DType::Float64 }) {
        SCOPED_TRACE(tensor::torchName(dtype));
        const Tensor a = makeTensor(dtype, nv);
        const Tensor b = makeTensor(dtype, bv);
        const Sequential expected = sequentialSums(a, b);
        const auto rule = kernels::ruleMsprobe26(dtype, dtype);
        SerialSplitter serial;
        ThreadSplitter three(3);
        for (const bool generic : { false, true }) {
            kernels::forceGenericKernels(generic);
            for (Splitter* splitter : { static_cast<Splitter*>(&serial), static_cast<Splitter*>(&three) }) {
                const auto s = kernels::pairStats(pairSideOf(a).operand, pairSideOf(b).operand, n, rule, true, *splitter,
                                                  kernels::SumOrder::LeftToRight);
                EXPECT_TRUE(sameBits(s.dot.sum, expected.dot)) << s.dot.sum << " vs " << expected.dot;
                EXPECT_TRUE(sameBits(s.npuSq.sum, expected.nn));
                EXPECT_TRUE(sameBits(s.benchSq.sum, expected.bb));
                EXPECT_TRUE(sameBits(s.diffSq.sum, expected.dd));
                EXPECT_EQ(s.dot.compensation, 0.0);
                EXPECT_TRUE(s.anyInvalid);
                EXPECT_FALSE(s.masksDiffer);
            }
        }
        kernels::forceGenericKernels(false);
        // The policy matters: the compensated order gives other last bits on this data.
        SerialSplitter again;
        const auto compensated = kernels::pairStats(pairSideOf(a).operand, pairSideOf(b).operand, n, rule, true, again);
        EXPECT_FALSE(sameBits(compensated.dot.value(), expected.dot) && sameBits(compensated.npuSq.value(), expected.nn)
                     && sameBits(compensated.benchSq.value(), expected.bb)
                     && sameBits(compensated.diffSq.value(), expected.dd));
    }
}

TEST(SumOrder, LeftToRightChainsKeepElementOrderAtEveryLengthAndType)
{
    // The fused pass adds each group's products to the four chains as one transposed vector per element: every
    // length around the groups of 4 and 8 and the 1024-element blocks must still give a plain loop's bits. Values
    // over 24 binary orders of magnitude make any change of order show in the last bits; inf and NaN at the same
    // positions on both sides are zeroed; without EucDist Σ (n - b)² stays untouched.
    std::mt19937_64 rng(37);
    std::uniform_real_distribution<double> mantissa(-1.0, 1.0);
    std::uniform_int_distribution<int> exponent(-12, 12);
    std::vector<std::size_t> lengths;
    for (std::size_t n = 1; n <= 19; ++n)
        lengths.push_back(n);
    for (const std::size_t n : { 1021u, 1024u, 1027u, 2048u + 5u, 4099u })
        lengths.push_back(n);
    for (const DType dtype : { DType::Float32, DType::Float16, DType::BFloat16, DType::Float64, DType::Int32 }) {
        for (const std::size_t n : lengths) {
            SCOPED_TRACE(std::string(tensor::torchName(dtype)) + " n=" + std::to_string(n));
            std::vector<double> nv(n), bv(n);
            for (std::size_t i = 0; i < n; ++i) {
                const double scale = std::ldexp(1.0, exponent(rng));
                bv[i] = dtype == DType::Int32 ? std::round(mantissa(rng) * 1000) : mantissa(rng) * scale;
                nv[i] = dtype == DType::Int32 ? bv[i] + std::round(mantissa(rng) * 3) : bv[i] * (1 + mantissa(rng) * 1e-2);
            }
            if (n > 9 && dtype != DType::Int32) {
                nv[n / 2] = bv[n / 2] = std::numeric_limits<double>::quiet_NaN();
                nv[n - 3] = bv[n - 3] = -kInf;
            }
            const Tensor a = makeTensor(dtype, nv);
            const Tensor b = makeTensor(dtype, bv);
            const Sequential expected = sequentialSums(a, b);
            const auto rule = kernels::ruleMsprobe26(dtype, dtype);
            SerialSplitter serial;
            for (const bool generic : { false, true }) {
                kernels::forceGenericKernels(generic);
                for (const bool float64 : { false, true }) {
                    kernels::forceFloat64Pass(float64);
                    for (const bool diff : { true, false }) {
                        const auto s = kernels::pairStats(pairSideOf(a).operand, pairSideOf(b).operand, n, rule, diff,
                                                          serial, kernels::SumOrder::LeftToRight);
                        EXPECT_TRUE(sameBits(s.dot.sum, expected.dot)) << generic << float64 << diff;
                        EXPECT_TRUE(sameBits(s.npuSq.sum, expected.nn)) << generic << float64 << diff;
                        EXPECT_TRUE(sameBits(s.benchSq.sum, expected.bb)) << generic << float64 << diff;
                        EXPECT_TRUE(sameBits(s.diffSq.sum, diff ? expected.dd : 0.0)) << generic << float64 << diff;
                        EXPECT_FALSE(s.masksDiffer);
                    }
                }
            }
            kernels::forceFloat64Pass(false);
            kernels::forceGenericKernels(false);
        }
    }
}

TEST(SumOrder, LeftToRightFromAFileEqualsMemory)
{
    const std::size_t n = kernels::kChunkElements * 2 + 3;
    std::vector<double> nv, bv;
    randomPair(n, 4, nv, bv);
    const Tensor a = makeTensor(DType::Float32, nv);
    const Tensor b = makeTensor(DType::Float32, bv);
    const FileOperand fa(a);
    const FileOperand fb(b);
    ASSERT_GE(fa.fd, 0);
    const auto rule = kernels::ruleMsprobe26(DType::Float32, DType::Float32);
    SerialSplitter serial;
    const auto memory = kernels::pairStats(pairSideOf(a).operand, pairSideOf(b).operand, n, rule, true, serial, kernels::SumOrder::LeftToRight);
    const auto file = kernels::pairStats(fa.operand(DType::Float32), fb.operand(DType::Float32), n, rule, true, serial,
                                         kernels::SumOrder::LeftToRight);
    EXPECT_TRUE(sameBits(memory.dot.sum, file.dot.sum));
    EXPECT_TRUE(sameBits(memory.diffSq.sum, file.diffSq.sum));
    EXPECT_EQ(memory.maxRel, file.maxRel);
    EXPECT_EQ(memory.belowOne, file.belowOne);
    // A file shorter than the operand says is an I/O failure, never a partial sum.
    kernels::Operand past = fb.operand(DType::Float32);
    past.fileOffset += 8;
    EXPECT_TRUE(kernels::pairStats(pairSideOf(a).operand, past, n, rule, true, serial, kernels::SumOrder::LeftToRight).ioFailed);
}

TEST(SumOrder, PairwiseMatchesNumpysRecursion)
{
    std::mt19937_64 rng(9);
    std::normal_distribution<double> normal(0.0, 1.0);
    const std::size_t chunk = kernels::kChunkElements;
    for (const std::size_t n : { std::size_t { 0 }, std::size_t { 1 }, std::size_t { 7 }, std::size_t { 8 },
                                 std::size_t { 9 }, std::size_t { 127 }, std::size_t { 128 }, std::size_t { 129 },
                                 std::size_t { 1000 }, chunk - 1, chunk, chunk + 1, 3 * chunk + 13,
                                 (std::size_t { 1 } << 20) + 3 }) {
        SCOPED_TRACE(n);
        std::vector<double> values(n);
        for (double& v : values)
            v = normal(rng) * 1000 + 1e-3; // large and small terms: the order shows in the last bits
        const Tensor t = makeTensor(DType::Float32, values);
        std::vector<double> as64(n);
        std::vector<float> as32(n);
        for (std::size_t i = 0; i < n; ++i) {
            as64[i] = t.valueAt(static_cast<std::int64_t>(i));
            as32[i] = static_cast<float>(as64[i]);
        }
        const double expected64 = referencePairwise(as64, 0, n);
        const auto expected32 = static_cast<double>(referencePairwise(as32, 0, n));
        const double buffered64 = referenceBuffered(as64, 8192);
        const FileOperand file(t);
        ASSERT_GE(file.fd, 0);
        SerialSplitter serial;
        ThreadSplitter three(3);
        for (Splitter* splitter : { static_cast<Splitter*>(&serial), static_cast<Splitter*>(&three) }) {
            for (const kernels::Operand& op : { pairSideOf(t).operand, file.operand(DType::Float32) }) {
                bool failed = true;
                EXPECT_TRUE(sameBits(kernels::pairwiseSum(op, n, kernels::Accumulate::Float64, *splitter, 0, &failed),
                                     expected64));
                EXPECT_FALSE(failed);
                EXPECT_TRUE(sameBits(kernels::pairwiseSum(op, n, kernels::Accumulate::Float32, *splitter), expected32));
                EXPECT_TRUE(sameBits(kernels::pairwiseSum(op, n, kernels::Accumulate::Float64, *splitter, 8192),
                                     buffered64));
            }
        }
    }
}

TEST(SumOrder, PairwiseAndLeftToRightDifferAsNumpyAndBlasDo)
{
    // float32: 2^24 then 4096 ones. Left to right every 1 is lost (2^24 + 1 rounds back to 2^24); numpy's pairwise
    // sum adds the ones among themselves first. In float64 both are exact.
    std::vector<double> values(4097, 1.0);
    values[0] = 16777216.0;
    const Tensor t = makeTensor(DType::Float32, values);
    SerialSplitter serial;
    bool failed = true;
    EXPECT_EQ(kernels::leftToRightSum(pairSideOf(t).operand, values.size(), kernels::Accumulate::Float32, &failed), 16777216.0);
    EXPECT_FALSE(failed);
    std::vector<float> as32(values.begin(), values.end());
    const double pairwise32 = kernels::pairwiseSum(pairSideOf(t).operand, values.size(), kernels::Accumulate::Float32, serial);
    EXPECT_EQ(pairwise32, static_cast<double>(referencePairwise(as32, 0, as32.size())));
    EXPECT_GT(pairwise32, 16777216.0 + 4000);
    EXPECT_EQ(kernels::leftToRightSum(pairSideOf(t).operand, values.size(), kernels::Accumulate::Float64), 16777216.0 + 4096);
    EXPECT_EQ(kernels::pairwiseSum(pairSideOf(t).operand, values.size(), kernels::Accumulate::Float64, serial), 16777216.0 + 4096);
}

TEST(SumOrder, Msprobe26RelativeErrorRule)
{
    // T = result_type(npu, bench, float32) with T's epsilon (compare-spec §5.3); non-float sides become float64.
    for (const auto& [n, b] : { std::pair { DType::Float32, DType::Float32 }, std::pair { DType::Float16, DType::Float16 },
                                std::pair { DType::BFloat16, DType::Float16 } }) {
        const auto rule = kernels::ruleMsprobe26(n, b);
        EXPECT_EQ(rule.compute, DType::Float32);
        EXPECT_EQ(rule.npuEps, static_cast<double>(1.1920929e-07f));
        EXPECT_EQ(rule.benchAtZero, static_cast<double>(1.1920929e-07f));
        EXPECT_EQ(rule.one, static_cast<double>(0.001f));
    }
    for (const auto& [n, b] : { std::pair { DType::Float64, DType::Float32 }, std::pair { DType::Float32, DType::Int64 },
                                std::pair { DType::Bool, DType::Float16 } }) {
        const auto rule = kernels::ruleMsprobe26(n, b);
        EXPECT_EQ(rule.compute, DType::Float64);
        EXPECT_EQ(rule.npuEps, 2.220446049250313e-16);
        EXPECT_EQ(rule.five, 0.005);
    }
}

TEST(SumOrder, Msprobe26CosineAndEucDistAreTheLeftToRightSums)
{
    const std::size_t n = kernels::kChunkElements * 2 + 101;
    std::vector<double> nv, bv;
    randomPair(n, 33, nv, bv);
    const Tensor a = makeTensor(DType::Float32, nv);
    const Tensor b = makeTensor(DType::Float32, bv);
    const Sequential s = sequentialSums(a, b);
    SerialSplitter serial;
    ThreadSplitter two(2);
    for (Splitter* splitter : { static_cast<Splitter*>(&serial), static_cast<Splitter*>(&two) }) {
        const auto m = msprobe26::compareTensors(a, b, *splitter);
        ASSERT_TRUE(m.eucDist.isFloat());
        EXPECT_TRUE(sameBits(std::get<double>(m.eucDist.value), std::sqrt(s.dd)));
        double cosine = fmt12(s.dot / (std::sqrt(s.nn) * std::sqrt(s.bb)));
        if (cosine > 0.9999)
            cosine = round6(cosine);
        ASSERT_TRUE(m.cosine.isFloat());
        EXPECT_EQ(std::get<double>(m.cosine.value), cosine);
    }
}

namespace {

/// Runs the parts one after the other in a chosen order, and says it has `threads` threads: so a test decides
/// which part of a split runs first (the helpers before the chain: they take every chunk).
class OrderedSplitter final : public Splitter
{
public:
    OrderedSplitter(unsigned threads, bool lastFirst) : m_threads(threads), m_lastFirst(lastFirst) {}
    void run(std::size_t count, const std::function<void(std::size_t)>& part) override
    {
        for (std::size_t i = 0; i < count; ++i)
            part(m_lastFirst ? count - 1 - i : i);
    }
    unsigned threads() const override { return m_threads; }

private:
    unsigned m_threads;
    bool m_lastFirst;
};

} // namespace

TEST(SumOrder, LeftToRightSplitWithHelpersGivesTheSameBits)
{
    // A pair large enough that idle threads may help (kLeftToRightSplitChunks), with an inf pair and a bench zero.
    const std::size_t n = kernels::kChunkElements * kernels::kLeftToRightSplitChunks + 999;
    std::vector<double> nv, bv;
    randomPair(n, 77, nv, bv);
    nv[n - 10] = bv[n - 10] = kInf;
    const Tensor a = makeTensor(DType::Float16, nv);
    const Tensor b = makeTensor(DType::Float16, bv);
    const auto rule = kernels::ruleMsprobe26(DType::Float16, DType::Float16);
    SerialSplitter serial;
    const auto one = kernels::pairStats(pairSideOf(a).operand, pairSideOf(b).operand, n, rule, true, serial, kernels::SumOrder::LeftToRight);
    const Sequential expected = sequentialSums(a, b);
    EXPECT_TRUE(sameBits(one.dot.sum, expected.dot));
    EXPECT_TRUE(sameBits(one.diffSq.sum, expected.dd));
    EXPECT_TRUE(one.anyInvalid);
    OrderedSplitter helpersFirst(3, true); // the helpers take every chunk, the chain only sums
    OrderedSplitter chainFirst(2, false);  // the chain takes every chunk, the helper finds none
    ThreadSplitter three(3);               // whatever the scheduler does
    for (Splitter* splitter : { static_cast<Splitter*>(&helpersFirst), static_cast<Splitter*>(&chainFirst),
                                static_cast<Splitter*>(&three) }) {
        const auto s = kernels::pairStats(pairSideOf(a).operand, pairSideOf(b).operand, n, rule, true, *splitter,
                                          kernels::SumOrder::LeftToRight);
        EXPECT_TRUE(sameBits(s.dot.sum, one.dot.sum));
        EXPECT_TRUE(sameBits(s.npuSq.sum, one.npuSq.sum));
        EXPECT_TRUE(sameBits(s.benchSq.sum, one.benchSq.sum));
        EXPECT_TRUE(sameBits(s.diffSq.sum, one.diffSq.sum));
        EXPECT_EQ(s.maxAbs, one.maxAbs);
        EXPECT_EQ(s.maxRel, one.maxRel);
        EXPECT_EQ(s.belowOne, one.belowOne);
        EXPECT_EQ(s.belowFive, one.belowFive);
        EXPECT_EQ(s.anyInvalid, one.anyInvalid);
        EXPECT_EQ(s.masksDiffer, one.masksDiffer);
        EXPECT_FALSE(s.ioFailed);
    }
}
