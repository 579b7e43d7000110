// SPDX-License-Identifier: Apache-2.0
// Tests for core/compare/kernels: the fused pass against a plain element-by-element oracle, results that
// do not depend on the thread count, streaming from a file, and the streamed .pt open.
#include "core/compare/metrics/kernels.h"
#include "core/compare/metrics/realdata.h"
#include "core/tensor/dtype.h"
#include "core/compare/metrics/pairside.h"
#include "core/tensor/ptnative.h"
#include "core/tensor/tensor.h"
#include "core/util/fileio.h"
#include "maketensor.h"
#include "tempdir.h"
#include "fixtureguard.h"
#include "testconfig.h"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <cstring>
#include <fstream>
#include <limits>
#include <random>
#include <vector>

using namespace probescope;
using namespace probescope::compare;
using probescope::tensor::DType;
using probescope::tensor::Tensor;
using probescope::testing::makeTensor;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNan = std::numeric_limits<double>::quiet_NaN();

/// Random activations with exact zeros (ReLU-like), a few bench zeros and small NPU errors.
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
        npu[i] = b + (uniform(rng) < 0.5 ? normal(rng) * 1e-3 * std::fabs(b) : 0.0);
    }
}

/// The oracle: element by element, in float64 sequential order, with msprobe 1.2's rule spelled out.
struct Oracle
{
    double dot = 0, nn = 0, bb = 0, maxAbs = -kInf, maxRel = -kInf;
    std::uint64_t one = 0, five = 0;
};

Oracle oracle(const Tensor& n, const Tensor& b)
{
    Oracle o;
    const kernels::RelErrRule rule = kernels::ruleMsprobe12(n.dtype, b.dtype);
    long double dot = 0, nn = 0, bb = 0; // wider accumulation: the kernel must agree to ~1e-15
    for (std::int64_t i = 0; i < n.numel(); ++i) {
        double x = n.valueAt(i);
        double y = b.valueAt(i);
        if (!std::isfinite(x)) {
            x = 0;
            y = 0;
        }
        dot += static_cast<long double>(x) * y;
        nn += static_cast<long double>(x) * x;
        bb += static_cast<long double>(y) * y;
        o.maxAbs = std::max(o.maxAbs, std::fabs(x - y));
        if (y == 0) {
            y = rule.benchAtZero;
            x = rule.npuEps == 0 ? x : static_cast<float>(static_cast<float>(x) + static_cast<float>(rule.npuEps));
        }
        double r = 0;
        if (rule.compute == DType::Float16) {
            auto half = [](float v) { return tensor::halfToFloat(tensor::floatToHalf(v)); };
            const float d = half(static_cast<float>(x) - static_cast<float>(y));
            r = std::fabs(static_cast<double>(half(d / static_cast<float>(y))));
        } else if (rule.compute == DType::Float64) {
            r = std::fabs((x - y) / y);
        } else {
            const float d = static_cast<float>(x) - static_cast<float>(y);
            r = std::fabs(static_cast<double>(d / static_cast<float>(y)));
        }
        o.maxRel = std::isnan(r) || std::isnan(o.maxRel) ? kNan : std::max(o.maxRel, r);
        o.one += r < rule.one ? 1 : 0;
        o.five += r < rule.five ? 1 : 0;
    }
    o.dot = static_cast<double>(dot);
    o.nn = static_cast<double>(nn);
    o.bb = static_cast<double>(bb);
    return o;
}

void expectSameBits(const kernels::PairStats& a, const kernels::PairStats& b)
{
    EXPECT_EQ(std::memcmp(&a.dot, &b.dot, sizeof a.dot), 0);
    EXPECT_EQ(std::memcmp(&a.npuSq, &b.npuSq, sizeof a.npuSq), 0);
    EXPECT_EQ(std::memcmp(&a.benchSq, &b.benchSq, sizeof a.benchSq), 0);
    EXPECT_EQ(std::memcmp(&a.diffSq, &b.diffSq, sizeof a.diffSq), 0);
    EXPECT_EQ(a.maxAbs, b.maxAbs);
    EXPECT_EQ(a.maxRel, b.maxRel);
    EXPECT_EQ(a.belowOne, b.belowOne);
    EXPECT_EQ(a.belowFive, b.belowFive);
    EXPECT_EQ(a.absNan, b.absNan);
    EXPECT_EQ(a.relNan, b.relNan);
    EXPECT_EQ(a.anyInvalid, b.anyInvalid);
    EXPECT_EQ(a.masksDiffer, b.masksDiffer);
}

/// Every build of the kernels: the best this CPU has (AVX-512 for the compensated lanes), at most AVX2, the baseline.
constexpr kernels::KernelBuild kEveryBuild[] = { kernels::KernelBuild::Best, kernels::KernelBuild::Avx2,
                                                  kernels::KernelBuild::Generic };

std::string buildName(kernels::KernelBuild build)
{
    return build == kernels::KernelBuild::Best ? "best" : build == kernels::KernelBuild::Avx2 ? "avx2" : "generic";
}

} // namespace

TEST(MetricKernels, FusedPassMatchesElementwiseOracle)
{
    // 3.5 chunks, so chunk combination and a partial last block are covered.
    const std::size_t n = kernels::kChunkElements * 3 + kernels::kChunkElements / 2 + 3;
    std::vector<double> nv, bv;
    randomPair(n, 7, nv, bv);
    nv[10] = bv[10] = kInf; // same positions: zeroed on both sides
    nv[200000] = bv[200000] = kNan;
    for (const DType dtype : { DType::Float32, DType::Float64, DType::BFloat16, DType::Float16 }) {
        SCOPED_TRACE(tensor::torchName(dtype));
        const Tensor a = makeTensor(dtype, nv);
        const Tensor b = makeTensor(dtype, bv);
        SerialSplitter serial;
        const auto stats = kernels::pairStats(pairSideOf(a).operand, pairSideOf(b).operand, n, kernels::ruleMsprobe12(dtype, dtype),
                                              true, serial);
        const Oracle o = oracle(a, b);
        EXPECT_TRUE(stats.anyInvalid);
        EXPECT_FALSE(stats.masksDiffer);
        EXPECT_NEAR(stats.dot.value(), o.dot, std::fabs(o.dot) * 1e-15);
        EXPECT_NEAR(stats.npuSq.value(), o.nn, o.nn * 1e-15);
        EXPECT_NEAR(stats.benchSq.value(), o.bb, o.bb * 1e-15);
        EXPECT_EQ(stats.maxAbs, o.maxAbs);
        if (std::isnan(o.maxRel)) // float16 cannot add eps: 0 / 0 at a pair of zeros
            EXPECT_TRUE(stats.relNan);
        else
            EXPECT_EQ(stats.maxRel, o.maxRel);
        EXPECT_EQ(stats.belowOne, o.one);
        EXPECT_EQ(stats.belowFive, o.five);
        EXPECT_GT(o.one, 0u);
        EXPECT_LT(o.one, n); // the noise makes the ratios non-trivial
    }
}

TEST(MetricKernels, WideningMatchesScalarConversion)
{
    // Every float16 bit pattern (zeros, subnormals, normals, inf, NaN) widens as tensor::halfToFloat does.
    std::vector<std::uint16_t> bits(65536);
    for (std::size_t i = 0; i < bits.size(); ++i)
        bits[i] = static_cast<std::uint16_t>(i);
    std::vector<double> out(bits.size());
    kernels::toFloat64(DType::Float16, reinterpret_cast<const std::byte*>(bits.data()), bits.size(), out.data());
    for (std::size_t i = 0; i < bits.size(); ++i) {
        const double expected = tensor::halfToFloat(bits[i]);
        if (std::isnan(expected))
            EXPECT_TRUE(std::isnan(out[i])) << i;
        else
            EXPECT_EQ(std::memcmp(&out[i], &expected, sizeof expected), 0) << i;
    }
}

TEST(MetricKernels, ResultsDoNotDependOnThreadCount)
{
    const std::size_t n = kernels::kChunkElements * 9 + 17;
    std::vector<double> nv, bv;
    randomPair(n, 11, nv, bv);
    const Tensor a = makeTensor(DType::Float32, nv);
    const Tensor b = makeTensor(DType::Float32, bv);
    const auto rule = kernels::ruleMsprobe12(DType::Float32, DType::Float32);
    SerialSplitter serial;
    const auto one = kernels::pairStats(pairSideOf(a).operand, pairSideOf(b).operand, n, rule, true, serial);
    for (const unsigned threads : { 2u, 3u, 8u }) {
        SCOPED_TRACE(threads);
        ThreadSplitter splitter(threads);
        expectSameBits(kernels::pairStats(pairSideOf(a).operand, pairSideOf(b).operand, n, rule, true, splitter), one);
        const RealDataMetrics m1 = compareTensors(a, b, serial);
        const RealDataMetrics mt = compareTensors(a, b, splitter);
        EXPECT_EQ(m1.cosine.value, mt.cosine.value);
        EXPECT_EQ(m1.maxAbsErr.value, mt.maxAbsErr.value);
        EXPECT_EQ(m1.maxRelativeErr.value, mt.maxRelativeErr.value);
        EXPECT_EQ(m1.oneThousandthErrRatio.value, mt.oneThousandthErrRatio.value);
        EXPECT_EQ(m1.message, mt.message);
    }
}

TEST(MetricKernels, GenericAndAvx2BuildsGiveTheSameBits)
{
    const std::size_t n = kernels::kChunkElements + 1001;
    std::vector<double> nv, bv;
    randomPair(n, 5, nv, bv);
    for (const DType dtype : { DType::Float32, DType::Float16, DType::Float64 }) {
        SCOPED_TRACE(tensor::torchName(dtype));
        const Tensor a = makeTensor(dtype, nv);
        const Tensor b = makeTensor(dtype, bv);
        const auto rule = kernels::ruleMsprobe12(dtype, dtype);
        SerialSplitter serial;
        const auto best = kernels::pairStats(pairSideOf(a).operand, pairSideOf(b).operand, n, rule, true, serial);
        kernels::forceGenericKernels(true);
        EXPECT_FALSE(kernels::usingAvx2Kernels());
        EXPECT_FALSE(kernels::usingAvx512Kernels());
        const auto generic = kernels::pairStats(pairSideOf(a).operand, pairSideOf(b).operand, n, rule, true, serial);
        kernels::forceKernelBuild(kernels::KernelBuild::Avx2);
        EXPECT_FALSE(kernels::usingAvx512Kernels());
        const auto avx2 = kernels::pairStats(pairSideOf(a).operand, pairSideOf(b).operand, n, rule, true, serial);
        kernels::forceGenericKernels(false);
        expectSameBits(generic, best);
        expectSameBits(avx2, best);
    }
}

TEST(MetricKernels, Float32PassGivesTheBitsOfTheFloat64Path)
{
    // The float32 pass (raw elements, 8 float32 lanes for the relative errors, TwoSum compensation) against the
    // float64 path every other dtype takes, on pairs with bench zeros, inf/NaN blocks (those take the float64
    // path inside the float32 pass too), a length that is no multiple of 8 and chunk boundaries: every figure
    // the same bits, for both profiles' rules, both sum orders, with and without EucDist, both kernel builds.
    const std::size_t n = 2 * kernels::kChunkElements + 1003;
    std::vector<double> nv, bv;
    randomPair(n, 11, nv, bv);
    nv[5000] = kInf; // one block with an inf on both sides at the same place
    bv[5000] = kInf;
    nv[90000] = std::numeric_limits<double>::quiet_NaN(); // and one where only the NPU has a NaN
    for (std::size_t i = 100000; i < 100100; ++i)
        nv[i] = bv[i] * 1e30; // relative errors far above the thresholds, large products
    const Tensor a = makeTensor(DType::Float32, nv);
    const Tensor b = makeTensor(DType::Float32, bv);
    for (const kernels::KernelBuild build : kEveryBuild) {
        kernels::forceKernelBuild(build);
        for (const auto& rule : { kernels::ruleMsprobe12(DType::Float32, DType::Float32),
                                  kernels::ruleMsprobe26(DType::Float32, DType::Float32) }) {
            for (const auto order : { kernels::SumOrder::Compensated, kernels::SumOrder::LeftToRight }) {
                for (const bool diff : { false, true }) {
                    SCOPED_TRACE(buildName(build) + (diff ? " diff" : "")
                                 + (order == kernels::SumOrder::Compensated ? " compensated" : " left to right")
                                 + " eps " + std::to_string(rule.npuEps));
                    SerialSplitter serial;
                    const auto fast = kernels::pairStats(pairSideOf(a).operand, pairSideOf(b).operand, n, rule, diff, serial, order);
                    kernels::forceFloat64Pass(true);
                    const auto wide = kernels::pairStats(pairSideOf(a).operand, pairSideOf(b).operand, n, rule, diff, serial, order);
                    kernels::forceFloat64Pass(false);
                    expectSameBits(fast, wide);
                    EXPECT_TRUE(fast.anyInvalid);
                    EXPECT_TRUE(fast.masksDiffer);
                }
            }
        }
        // The same without any inf/NaN (every block on the float32 pass), with EucDist.
        std::vector<double> fn = nv;
        fn[5000] = fn[90000] = 1.5;
        std::vector<double> fb = bv;
        fb[5000] = 2.5;
        const Tensor fa = makeTensor(DType::Float32, fn);
        const Tensor fbt = makeTensor(DType::Float32, fb);
        const auto rule = kernels::ruleMsprobe12(DType::Float32, DType::Float32);
        SerialSplitter serial;
        const auto fast = kernels::pairStats(pairSideOf(fa).operand, pairSideOf(fbt).operand, n, rule, true, serial);
        kernels::forceFloat64Pass(true);
        const auto wide = kernels::pairStats(pairSideOf(fa).operand, pairSideOf(fbt).operand, n, rule, true, serial);
        kernels::forceFloat64Pass(false);
        expectSameBits(fast, wide);
        EXPECT_FALSE(fast.anyInvalid);
        EXPECT_GT(fast.belowOne, 0u);
        EXPECT_LT(fast.belowOne, n);
    }
    kernels::forceGenericKernels(false);
}

// ptdbg's change of float32 arrays (a ±0 bench element becomes eps, the NPU element gets eps added in float32) is
// made by the pass as it reads (RelErrRule::zeroBenchEps): every bit is that of the pass over arrays changed
// beforehand, on the float32 pass and the float64 one (inf/NaN blocks), with both kernel builds.
TEST(MetricKernels, PtdbgZeroChangeInThePassIsTheChangeMadeBeforehand)
{
    const std::size_t n = kernels::kChunkElements * 2 + 5000 + 3;
    std::vector<double> nv, bv;
    randomPair(n, 23, nv, bv);
    for (std::size_t i = 0; i < n; i += 7)
        bv[i] = (i / 7) % 2 == 0 ? 0.0 : -0.0; // ReLU-like zeros, both signs
    nv[14] = 1e30;                             // a large NPU value at a bench zero
    nv[700] = bv[700] = kInf;                  // a block with inf on both sides
    nv[7000] = std::numeric_limits<double>::quiet_NaN(); // a bench zero under an NPU NaN
    bv[7000] = 0.0;
    const float eps = 1.1920928955078125e-07f;
    std::vector<double> cn = nv, cb = bv;
    for (std::size_t i = 0; i < n; ++i) {
        if (static_cast<float>(cb[i]) != 0)
            continue;
        cb[i] = eps;
        cn[i] = static_cast<float>(cn[i]) + eps;
    }
    const Tensor a = makeTensor(DType::Float32, nv), b = makeTensor(DType::Float32, bv);
    const Tensor ca = makeTensor(DType::Float32, cn), cbt = makeTensor(DType::Float32, cb);
    const auto rule = kernels::rulePtdbg(DType::Float32, DType::Float32);
    // The reference: the arrays changed beforehand, through the generic float64 path (no float32 pass at all).
    SerialSplitter serial;
    kernels::forceGenericKernels(true);
    kernels::forceFloat64Pass(true);
    const auto reference = kernels::ptdbgPairStats(pairSideOf(ca).operand, pairSideOf(cbt).operand, n, rule, serial);
    kernels::forceFloat64Pass(false);
    EXPECT_TRUE(reference.anyInvalid);
    EXPECT_GT(reference.belowOne, 0u);
    // Every kernel build and pass, on the arrays as dumped and on the arrays changed beforehand, gives its bits:
    // the float32 pass that changes the elements as it reads them (and stages them a group ahead) included.
    for (const kernels::KernelBuild build : kEveryBuild) {
        for (const bool wide : { false, true }) {
            SCOPED_TRACE(buildName(build) + (wide ? " float64 pass" : " float32 pass"));
            kernels::forceKernelBuild(build);
            kernels::forceFloat64Pass(wide);
            const auto inPass = kernels::ptdbgPairStats(pairSideOf(a).operand, pairSideOf(b).operand, n, rule, serial);
            const auto before = kernels::ptdbgPairStats(pairSideOf(ca).operand, pairSideOf(cbt).operand, n, rule, serial);
            kernels::forceFloat64Pass(false);
            expectSameBits(inPass, reference);
            expectSameBits(before, reference);
        }
    }
    kernels::forceGenericKernels(false);
}

// The float32 pass stages the changed groups of 8 two groups ahead: arrays of every length around those groups give
// the bits of the float64 path (which changes and sums element by element), bench zeros in every position.
TEST(MetricKernels, PtdbgZeroChangeOnShortArraysIsTheFloat64Paths)
{
    const auto rule = kernels::rulePtdbg(DType::Float32, DType::Float32);
    SerialSplitter serial;
    for (std::size_t n = 1; n <= 41; ++n) {
        SCOPED_TRACE("n = " + std::to_string(n));
        std::vector<double> nv, bv;
        randomPair(n, static_cast<std::uint32_t>(100 + n), nv, bv);
        for (std::size_t i = n % 3; i < n; i += 3)
            bv[i] = 0.0;
        const Tensor a = makeTensor(DType::Float32, nv), b = makeTensor(DType::Float32, bv);
        kernels::forceGenericKernels(true);
        kernels::forceFloat64Pass(true);
        const auto reference = kernels::ptdbgPairStats(pairSideOf(a).operand, pairSideOf(b).operand, n, rule, serial);
        kernels::forceFloat64Pass(false);
        for (const kernels::KernelBuild build : kEveryBuild) {
            SCOPED_TRACE(buildName(build));
            kernels::forceKernelBuild(build);
            expectSameBits(kernels::ptdbgPairStats(pairSideOf(a).operand, pairSideOf(b).operand, n, rule, serial),
                           reference);
        }
    }
    kernels::forceGenericKernels(false);
}

TEST(MetricKernels, SplitJobsRunOnEveryThreadAndInOrder)
{
    // Three jobs, the second splits into 50 parts: every part runs once, whatever thread takes it.
    std::vector<int> ran(50, 0);
    std::vector<int> jobs(3, 0);
    const bool done = parallelForSplittable(3, 2, [&](std::size_t i, Splitter& splitter) {
        ++jobs[i];
        if (i == 1)
            splitter.run(ran.size(), [&](std::size_t k) { ++ran[k]; });
    });
    EXPECT_TRUE(done);
    EXPECT_EQ(jobs, std::vector<int>(3, 1));
    EXPECT_EQ(ran, std::vector<int>(50, 1));
}

TEST(MetricKernels, AnIdleThreadHelpsWithALargeJob)
{
    // One job, two threads: part 0 (run by the job's own thread) waits until some part has run on the
    // other thread, which happens only if the splitter hands parts to idle threads. Fails after 20 s
    // rather than hanging.
    std::mutex mutex;
    std::condition_variable helped;
    std::thread::id owner;
    bool otherThreadRan = false;
    bool timedOut = false;
    parallelForSplittable(1, 2, [&](std::size_t, Splitter& splitter) {
        owner = std::this_thread::get_id();
        splitter.run(8, [&](std::size_t k) {
            std::unique_lock lock(mutex);
            if (std::this_thread::get_id() != owner) {
                otherThreadRan = true;
                helped.notify_all();
            } else if (k == 0) {
                timedOut = !helped.wait_for(lock, std::chrono::seconds(20), [&] { return otherThreadRan; });
            }
        });
    });
    EXPECT_TRUE(otherThreadRan);
    EXPECT_FALSE(timedOut);
}

TEST(MetricKernels, FileOperandsStreamLikeMemory)
{
    const std::size_t n = kernels::kChunkElements * 2 + 5;
    std::vector<double> nv, bv;
    randomPair(n, 3, nv, bv);
    const Tensor a = makeTensor(DType::Float32, nv);
    const Tensor b = makeTensor(DType::Float32, bv);
    probescope::testing::TempDir dir;
    const auto path = dir.path() / "pair.bin";
    {
        std::ofstream out(path, std::ios::binary);
        out.write("head", 4); // the elements start at an offset, as in a .pt file
        out.write(reinterpret_cast<const char*>(a.data.data()), static_cast<std::streamsize>(a.data.size()));
        out.write(reinterpret_cast<const char*>(b.data.data()), static_cast<std::streamsize>(b.data.size()));
    }
    const int fd = ::open(path.c_str(), O_RDONLY);
    ASSERT_GE(fd, 0);
    kernels::Operand fa { DType::Float32, nullptr, fd, 4 };
    kernels::Operand fb { DType::Float32, nullptr, fd, 4 + a.data.size() };
    const auto rule = kernels::ruleMsprobe12(DType::Float32, DType::Float32);
    SerialSplitter serial;
    ThreadSplitter two(2);
    const auto fromMemory = kernels::pairStats(pairSideOf(a).operand, pairSideOf(b).operand, n, rule, false, serial);
    expectSameBits(kernels::pairStats(fa, fb, n, rule, false, two), fromMemory);
    // A file shorter than its operand says is an I/O failure, not silently wrong numbers.
    kernels::Operand past { DType::Float32, nullptr, fd, 4 + a.data.size() + 8 };
    EXPECT_TRUE(kernels::pairStats(fa, past, n, rule, false, serial).ioFailed);
    ::close(fd);
}

TEST(MetricKernels, StreamedPtOpenGivesLoadPtsElements)
{
    const auto dir = probescope::testing::fixturesDir() / "modelA_tensor_mix/npu/step0/rank/dump_tensor_data";
    PROBESCOPE_REQUIRE_FIXTURE(dir);
    int checked = 0;
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
        if (++checked > 40)
            break;
        const auto loaded = tensor::loadPt(entry.path());
        ASSERT_TRUE(loaded) << entry.path();
        for (const std::uint64_t limit : { std::uint64_t { 1 } << 20, std::uint64_t { 0 } }) {
            tensor::ReadBuffer buffer;
            const auto stream = tensor::openPtStream(entry.path(), buffer, limit);
            ASSERT_TRUE(stream) << entry.path();
            EXPECT_EQ(stream->dtype(), loaded->dtype);
            EXPECT_EQ(stream->shape(), loaded->shape);
            std::vector<std::byte> bytes(loaded->data.size());
            if (stream->memory()) {
                std::memcpy(bytes.data(), stream->memory(), bytes.size());
            } else {
                ASSERT_EQ(::pread(stream->fd(), bytes.data(), bytes.size(), static_cast<off_t>(stream->dataOffset())),
                          static_cast<ssize_t>(bytes.size()));
            }
            EXPECT_EQ(bytes, loaded->data) << entry.path() << " limit " << limit;
        }
    }
    EXPECT_GT(checked, 0);
}

TEST(MetricKernels, StreamedPtOpenReportsDamage)
{
    probescope::testing::TempDir dir;
    const auto path = dir.path() / "bad.pt";
    std::ofstream(path, std::ios::binary) << "not a zip at all";
    tensor::ReadBuffer buffer;
    const auto stream = tensor::openPtStream(path, buffer);
    ASSERT_FALSE(stream);
    EXPECT_EQ(stream.error().id, "tensor.pt-format");
    EXPECT_EQ(stream.error().location.file, path.string());
    EXPECT_EQ(tensor::openPtStream(dir.path() / "missing.pt", buffer).error().id, "tensor.missing");
}

namespace {

/// Mapped tensor reads on for a test's scope (the default is pread), back off after it.
struct MappedReadsOn
{
    MappedReadsOn() { tensor::setMappedReads(true); }
    ~MappedReadsOn()
    {
        tensor::setMappedReads(false);
        MappedFile::setMapHookForTests(nullptr);
    }
};

/// The map hook of the truncation tests: cuts g_cutPath to g_cutTo bytes right after it is mapped.
std::filesystem::path g_cutPath;
std::uint64_t g_cutTo = 0;
void cutAfterMapping(const std::filesystem::path& path)
{
    if (path == g_cutPath)
        std::filesystem::resize_file(path, g_cutTo);
}

const std::filesystem::path kMixNpu = "modelA_tensor_mix/npu/step0/rank/dump_tensor_data";
const std::filesystem::path kMixBench = "modelA_tensor_mix/bench/step0/rank/dump_tensor_data";

} // namespace

// A mapped read gives the bits the pread path gives, for every profile's order (the streams are opened with the
// whole-file limit 0, so every file takes the large-file path).
TEST(MetricKernels, MappedStreamsGiveThePreadPathsBits)
{
    const auto npuDir = probescope::testing::fixturesDir() / kMixNpu;
    const auto benchDir = probescope::testing::fixturesDir() / kMixBench;
    PROBESCOPE_REQUIRE_FIXTURE(npuDir);
    const MappedReadsOn on;
    ThreadSplitter two(2);
    int compared = 0;
    for (const auto& entry : std::filesystem::directory_iterator(npuDir)) {
        const auto benchPath = benchDir / entry.path().filename();
        if (!std::filesystem::exists(benchPath) || compared >= 40)
            continue;
        tensor::ReadBuffer b1, b2, b3, b4;
        tensor::setMappedReads(false);
        const auto npuRead = tensor::openPtStream(entry.path(), b1, 0);
        const auto benchRead = tensor::openPtStream(benchPath, b2, 0);
        tensor::setMappedReads(true);
        const auto npuMapped = tensor::openPtStream(entry.path(), b3, 0);
        const auto benchMapped = tensor::openPtStream(benchPath, b4, 0);
        ASSERT_TRUE(npuRead && benchRead && npuMapped && benchMapped) << entry.path();
        if (npuRead->shape() != benchRead->shape() || npuRead->numel() == 0)
            continue;
        EXPECT_EQ(npuRead->mapping(), nullptr);
        ASSERT_NE(npuMapped->mapping(), nullptr) << entry.path();
        EXPECT_EQ(npuMapped->fd(), -1); // the mapping holds the file
        const auto count = static_cast<std::uint64_t>(npuRead->numel());
        const auto r12 = kernels::ruleMsprobe12(npuRead->dtype(), benchRead->dtype());
        const auto r26 = kernels::ruleMsprobe26(npuRead->dtype(), benchRead->dtype());
        const auto rd = kernels::rulePtdbg(npuRead->dtype(), benchRead->dtype());
        const auto pr = [](const auto& st) { return pairSideOf(*st).operand; };
        const auto viaRead12 = kernels::pairStats(pr(npuRead), pr(benchRead), count, r12, false, two);
        const auto viaMap12 = kernels::pairStats(pr(npuMapped), pr(benchMapped), count, r12, false, two);
        EXPECT_FALSE(viaMap12.ioFailed);
        expectSameBits(viaMap12, viaRead12);
        expectSameBits(kernels::pairStats(pr(npuMapped), pr(benchMapped), count, r26, true, two,
                                          kernels::SumOrder::LeftToRight),
                       kernels::pairStats(pr(npuRead), pr(benchRead), count, r26, true, two,
                                          kernels::SumOrder::LeftToRight));
        expectSameBits(kernels::ptdbgPairStats(pr(npuMapped), pr(benchMapped), count, rd, two),
                       kernels::ptdbgPairStats(pr(npuRead), pr(benchRead), count, rd, two));
        ++compared;
    }
    EXPECT_GT(compared, 10);
}

// A .pt cut short by another process after its elements were mapped (the test hook cuts it right after the map) is
// a failed read in every profile's pass, as a short pread is: never a SIGBUS, never numbers from the zeros.
TEST(MetricKernels, PtCutShortUnderTheMapFailsTheReadNotTheProcess)
{
    const auto npuDir = probescope::testing::fixturesDir() / kMixNpu;
    PROBESCOPE_REQUIRE_FIXTURE(npuDir);
    const auto source = npuDir / "Module.block.attn.qkv.Linear.forward.0.output.0.pt"; // 13 KB, float32
    PROBESCOPE_REQUIRE_FIXTURE(source);
    probescope::testing::TempDir dir;
    const auto intact = dir.path() / "intact.pt";
    std::filesystem::copy_file(source, intact);
    const MappedReadsOn on;
    ThreadSplitter two(2);
    tensor::ReadBuffer intactBuffer;
    const auto bench = tensor::openPtStream(intact, intactBuffer, 0);
    ASSERT_TRUE(bench);
    const auto count = static_cast<std::uint64_t>(bench->numel());
    ASSERT_NE(bench->mapping(), nullptr);
    // Where the elements end in the file (the zip's directory follows them).
    std::string fileBytes(std::filesystem::file_size(intact), '\0');
    std::ifstream(intact, std::ios::binary).read(fileBytes.data(), static_cast<std::streamsize>(fileBytes.size()));
    const std::string_view elements = bench->mapping()->text();
    const std::size_t elementsAt = fileBytes.find(elements);
    ASSERT_NE(elementsAt, std::string::npos);
    const std::uint64_t elementsEnd = elementsAt + elements.size();
    ASSERT_GT(elementsEnd, 8192u + 300u);
    // A cut on a page boundary inside the elements (the pages after it fault) and one 300 bytes before their end
    // (inside a page: no fault, only the file's size shows it).
    for (const std::uint64_t cutTo : { std::uint64_t { 8192 }, elementsEnd - 300 }) {
        const auto path = dir.path() / ("cut" + std::to_string(cutTo) + ".pt");
        std::filesystem::copy_file(source, path);
        std::filesystem::permissions(path, std::filesystem::perms::owner_write, std::filesystem::perm_options::add);
        g_cutPath = path;
        g_cutTo = cutTo;
        MappedFile::setMapHookForTests(cutAfterMapping);
        tensor::ReadBuffer buffer;
        const auto npu = tensor::openPtStream(path, buffer, 0);
        MappedFile::setMapHookForTests(nullptr);
        ASSERT_TRUE(npu) << npu.error().format();
        ASSERT_NE(npu->mapping(), nullptr);
        ASSERT_EQ(std::filesystem::file_size(path), cutTo);
        const auto n = pairSideOf(*npu).operand;
        const auto b = pairSideOf(*bench).operand;
        EXPECT_TRUE(kernels::pairStats(n, b, count, kernels::ruleMsprobe12(DType::Float32, DType::Float32), false, two)
                        .ioFailed)
            << cutTo;
        EXPECT_TRUE(kernels::pairStats(b, n, count, kernels::ruleMsprobe26(DType::Float32, DType::Float32), true, two,
                                       kernels::SumOrder::LeftToRight)
                        .ioFailed)
            << cutTo;
        EXPECT_TRUE(kernels::ptdbgPairStats(n, b, count, kernels::rulePtdbg(DType::Float32, DType::Float32), two).ioFailed)
            << cutTo;
        bool sumFailed = false;
        kernels::pairwiseSum(n, count, kernels::Accumulate::Float64, two, 0, &sumFailed);
        EXPECT_TRUE(sumFailed);
    }
}

// A file cut short between its open (TensorFolder::open took its size) and the read of its archive is the file's
// error naming it, with mapped reads on or off.
TEST(MetricKernels, PtCutShortBetweenOpenAndReadIsTheFilesError)
{
    const auto source = probescope::testing::fixturesDir() / kMixNpu / "Module.block.attn.qkv.Linear.forward.0.output.0.pt";
    PROBESCOPE_REQUIRE_FIXTURE(source);
    const MappedReadsOn on;
    for (const bool mapped : { false, true }) {
        tensor::setMappedReads(mapped);
        probescope::testing::TempDir dir;
        const auto path = dir.path() / "cut.pt";
        std::filesystem::copy_file(source, path);
        std::filesystem::permissions(path, std::filesystem::perms::owner_write, std::filesystem::perm_options::add);
        const tensor::TensorFolder folder(dir.path());
        auto opened = folder.open("cut.pt");
        ASSERT_TRUE(opened);
        std::filesystem::resize_file(path, std::filesystem::file_size(path) / 2);
        tensor::ReadBuffer buffer;
        const auto stream = tensor::openPtStream(std::move(opened).value(), buffer, 0);
        ASSERT_FALSE(stream) << mapped;
        EXPECT_NE(stream.error().location.file.find("cut.pt"), std::string::npos) << stream.error().format();
    }
}

