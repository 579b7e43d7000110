// SPDX-License-Identifier: Apache-2.0
// The kernels' compensated sums (SumOrder::Compensated, the msprobe 1.2 profile's) against a plain scalar reference
// written here: Knuth's TwoSum per lane, element i of a chunk in lane i mod 4, the lanes folded in lane order and the
// chunks combined in chunk order, each with compensation. The kernels take Fast2Sum where it is exact and TwoSum or
// Neumaier's step elsewhere (core/compare/metrics/kernelsimpl.h, addGroup); every bit of every sum must be the
// reference's, on both kernel builds, the float32 pass and the float64 path, with and without Σ (n - b)².
#include "core/compare/metrics/kernels.h"
#include "core/tensor/dtype.h"
#include "core/util/workgroup.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

using namespace probescope;
using namespace probescope::compare;
using probescope::tensor::DType;

namespace {

/// A compensated sum as the kernels keep it (Sum: value = sum + compensation).
struct RefSum
{
    double s = 0;
    double c = 0;
};

/// Knuth's TwoSum: c gets the exact rounding error of s + p, whatever the magnitudes. With `blind`, Dekker's
/// Fast2Sum instead, which is exact only when |s| >= |p|: the test shows its data needs the kernels' check.
void twoSum(RefSum& r, double p, bool blind = false)
{
    const double t = r.s + p;
    if (blind) {
        r.c += p - (t - r.s);
    } else {
        const double bp = t - r.s;
        r.c += (r.s - (t - bp)) + (p - bp);
    }
    r.s = t;
}

/// `part` added to `total` as a Sum: its sum with TwoSum, then its compensation.
void addSum(RefSum& total, const RefSum& part)
{
    twoSum(total, part.s);
    total.c += part.c;
}

struct RefSums
{
    RefSum dot, nn, bb, dd;
};

/// The reference: per chunk 4 lanes of TwoSum, folded in lane order; chunks combined in order. An inf/NaN on
/// the NPU side zeroes both sides (as msprobe does where the masks agree, and as the kernels do).
template<typename T>
RefSums referenceSums(const T* npu, const T* bench, std::size_t count, bool diff, bool blind = false)
{
    RefSums total;
    for (std::size_t first = 0; first < count; first += kernels::kChunkElements) {
        const std::size_t end = std::min<std::size_t>(count, first + kernels::kChunkElements);
        RefSums lanes[4];
        for (std::size_t i = first; i < end; ++i) {
            const bool finite = std::isfinite(static_cast<double>(npu[i]));
            const double x = finite ? static_cast<double>(npu[i]) : 0.0;
            const double y = finite ? static_cast<double>(bench[i]) : 0.0;
            RefSums& l = lanes[(i - first) % 4];
            twoSum(l.dot, x * y, blind);
            twoSum(l.nn, x * x, blind);
            twoSum(l.bb, y * y, blind);
            if (diff)
                twoSum(l.dd, (x - y) * (x - y), blind);
        }
        RefSums chunk;
        for (const RefSums& l : lanes) {
            addSum(chunk.dot, l.dot);
            addSum(chunk.nn, l.nn);
            addSum(chunk.bb, l.bb);
            addSum(chunk.dd, l.dd);
        }
        addSum(total.dot, chunk.dot);
        addSum(total.nn, chunk.nn);
        addSum(total.bb, chunk.bb);
        addSum(total.dd, chunk.dd);
    }
    return total;
}

/// Same bits, or NaN on both sides (an inf or NaN on the bench side only turns a compensation into NaN, and which
/// NaN is not part of any output).
::testing::AssertionResult sameValue(const char* what, double kernel, double reference)
{
    if (std::memcmp(&kernel, &reference, sizeof kernel) == 0 || (std::isnan(kernel) && std::isnan(reference)))
        return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << what << ": kernel " << kernel << " (bits " << std::bit_cast<std::uint64_t>(kernel)
                                         << "), reference " << reference << " (bits "
                                         << std::bit_cast<std::uint64_t>(reference) << ")";
}

void expectSums(const kernels::PairStats& k, const RefSums& r)
{
    EXPECT_TRUE(sameValue("dot.sum", k.dot.sum, r.dot.s));
    EXPECT_TRUE(sameValue("dot.compensation", k.dot.compensation, r.dot.c));
    EXPECT_TRUE(sameValue("npuSq.sum", k.npuSq.sum, r.nn.s));
    EXPECT_TRUE(sameValue("npuSq.compensation", k.npuSq.compensation, r.nn.c));
    EXPECT_TRUE(sameValue("benchSq.sum", k.benchSq.sum, r.bb.s));
    EXPECT_TRUE(sameValue("benchSq.compensation", k.benchSq.compensation, r.bb.c));
    EXPECT_TRUE(sameValue("diffSq.sum", k.diffSq.sum, r.dd.s));
    EXPECT_TRUE(sameValue("diffSq.compensation", k.diffSq.compensation, r.dd.c));
}

/// Mixed magnitudes (10^±e), exact zeros, subnormals, exact cancellations (the negation of an earlier value),
/// spikes far above everything before them (|s| < |p| mid-stream: the kernels' Fast2Sum check must fail there) and
/// inf/NaN at the same positions on both sides (or, with `oneSided`, on the bench side only).
template<typename T>
void mixedPair(std::size_t n, std::uint32_t seed, bool oneSided, std::vector<T>& npu, std::vector<T>& bench)
{
    constexpr bool f32 = sizeof(T) == 4;
    const double maxExp = f32 ? 30 : 140;
    const double subnormal = f32 ? 1e-42 : 5e-320;
    std::mt19937_64 rng(seed);
    std::normal_distribution<double> normal(0.0, 1.0);
    std::uniform_real_distribution<double> uniform(0.0, 1.0);
    npu.resize(n);
    bench.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
        const double u = uniform(rng);
        double b = 0;
        if (u < 0.05)
            b = 0;
        else if (u < 0.08)
            b = subnormal * std::floor(1 + 100 * uniform(rng));
        else if (u < 0.13 && i >= 8)
            b = -static_cast<double>(bench[i - 4]); // the same lane: its sum goes back
        else if (u < 0.14)
            b = normal(rng) * std::pow(10.0, maxExp * 0.9);
        else
            b = normal(rng) * std::pow(10.0, maxExp * (uniform(rng) - 0.5) * 0.6);
        bench[i] = static_cast<T>(b);
        const double v = uniform(rng);
        double x = bench[i];
        if (v < 0.3)
            x = bench[i];
        else if (v < 0.45)
            x = -static_cast<double>(bench[i]);
        else if (v < 0.5)
            x = 0;
        else if (v < 0.55)
            x = normal(rng) * std::pow(10.0, maxExp * 0.9);
        else
            x = static_cast<double>(bench[i]) * (1 + 1e-3 * normal(rng));
        npu[i] = static_cast<T>(x);
        const double w = uniform(rng);
        if (w < 0.002) {
            bench[i] = std::numeric_limits<T>::infinity();
            if (!oneSided)
                npu[i] = std::numeric_limits<T>::infinity();
        } else if (w < 0.004) {
            bench[i] = std::numeric_limits<T>::quiet_NaN();
            if (!oneSided)
                npu[i] = -std::numeric_limits<T>::quiet_NaN();
        }
    }
}

template<typename T>
kernels::Operand operandOf(const std::vector<T>& v)
{
    kernels::Operand o;
    o.dtype = sizeof(T) == 4 ? DType::Float32 : DType::Float64;
    o.memory = reinterpret_cast<const std::byte*>(v.data());
    return o;
}

/// The kernels' sums of the first `count` elements against the reference, on every build and path that applies.
template<typename T>
void checkPrefixes(const std::vector<T>& npu, const std::vector<T>& bench, const std::vector<std::size_t>& counts)
{
    constexpr bool f32 = sizeof(T) == 4;
    const DType dtype = f32 ? DType::Float32 : DType::Float64;
    const kernels::RelErrRule rule = kernels::ruleMsprobe12(dtype, dtype);
    SerialSplitter serial;
    for (const bool generic : { false, true }) {
        kernels::forceGenericKernels(generic);
        for (const bool float64Pass : f32 ? std::vector<bool> { false, true } : std::vector<bool> { false }) {
            kernels::forceFloat64Pass(float64Pass);
            for (const bool diff : { false, true }) {
                for (const std::size_t count : counts) {
                    SCOPED_TRACE(std::string(f32 ? "float32" : "float64") + (generic ? " generic" : " best")
                                 + (float64Pass ? " float64 path" : "") + (diff ? " diff" : "") + " count "
                                 + std::to_string(count));
                    const auto stats = kernels::pairStats(operandOf(npu), operandOf(bench), count, rule, diff, serial);
                    expectSums(stats, referenceSums(npu.data(), bench.data(), count, diff));
                    if (::testing::Test::HasFailure()) {
                        kernels::forceFloat64Pass(false);
                        kernels::forceGenericKernels(false);
                        return; // one failing case says it; thousands would bury it
                    }
                }
            }
        }
    }
    kernels::forceFloat64Pass(false);
    kernels::forceGenericKernels(false);
}

std::vector<std::size_t> testCounts()
{
    std::vector<std::size_t> counts;
    for (std::size_t n = 0; n <= 1000; ++n)
        counts.push_back(n);
    for (const std::size_t n : { std::size_t { 1024 }, std::size_t { 4099 }, kernels::kChunkElements,
                                 kernels::kChunkElements * 2 + 1003 })
        counts.push_back(n);
    return counts;
}

} // namespace

TEST(CompensatedSums, EveryBitIsTheScalarTwoSumReferences)
{
    const std::vector<std::size_t> counts = testCounts();
    const std::size_t n = counts.back();
    {
        std::vector<float> npu, bench;
        mixedPair(n, 21, false, npu, bench);
        checkPrefixes(npu, bench, counts);
    }
    {
        std::vector<double> npu, bench;
        mixedPair(n, 22, false, npu, bench);
        checkPrefixes(npu, bench, counts);
    }
}

TEST(CompensatedSums, InfOrNanOnOneSideOnlyGivesTheReferencesSumsOrNan)
{
    // Differing masks: the bench's inf/NaN stay in, products overflow or are NaN; the sums must be the reference's
    // bit for bit where finite and NaN where it is NaN. Float64 inputs of up to 1e126 also overflow squares.
    const std::vector<std::size_t> counts = { 0, 1, 7, 8, 9, 100, 333, 1000, 4099, kernels::kChunkElements + 17 };
    {
        std::vector<float> npu, bench;
        mixedPair(counts.back(), 23, true, npu, bench);
        checkPrefixes(npu, bench, counts);
    }
    {
        std::vector<double> npu, bench;
        mixedPair(counts.back(), 24, true, npu, bench);
        for (std::size_t i = 50; i < npu.size(); i += 997)
            npu[i] = bench[i] = 1e200; // squares overflow to inf
        checkPrefixes(npu, bench, counts);
    }
}

TEST(CompensatedSums, ASpikeMidStreamTakesTheExactPath)
{
    // 64 ones, then 4 elements of 1e10 (products 1e20, far above the 16 each lane holds), then ones again. Fast2Sum
    // taken blindly there loses each lane's 16 (fl(16 - 1e20) + 1e20 = 0): the reference shows the data tells the
    // two apart, and the kernels must give the exact compensation, on every build and path.
    for (const std::size_t n : { std::size_t { 72 }, std::size_t { 1000 } }) {
        std::vector<float> npu(n, 1.0f);
        for (std::size_t i = 64; i < 68; ++i)
            npu[i] = 1e10f;
        const std::vector<float> bench = npu;
        const RefSums exact = referenceSums(npu.data(), bench.data(), n, true);
        const RefSums blind = referenceSums(npu.data(), bench.data(), n, true, true);
        EXPECT_EQ(exact.nn.c - blind.nn.c, 64.0); // 4 lanes × 16
        checkPrefixes(npu, bench, { n });
        const std::vector<double> wideNpu(npu.begin(), npu.end());
        const std::vector<double> wideBench(bench.begin(), bench.end());
        checkPrefixes(wideNpu, wideBench, { n });
    }
}
