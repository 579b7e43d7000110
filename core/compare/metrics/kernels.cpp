// SPDX-License-Identifier: Apache-2.0
#include "core/compare/metrics/kernels.h"
#include "core/util/fileio.h"

#include <algorithm>
#include <atomic>
#include <cpuid.h>
#include <immintrin.h>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <memory>
#include <tuple>
#include <type_traits>
#include <utility>
#include <unistd.h>

namespace probescope::compare::kernels {

using tensor::DType;

namespace generic {
PairStats fusedStats(DType npuType, const std::byte* npu, DType benchType, const std::byte* bench, std::size_t count,
                     const RelErrRule& rule, bool wantDiffSq, SumOrder order, const PairStats& carry,
                     FusedPart part);
void toFloat64(DType dtype, const std::byte* source, std::size_t count, double* out);
} // namespace generic
namespace avx2 {
PairStats fusedStats(DType npuType, const std::byte* npu, DType benchType, const std::byte* bench, std::size_t count,
                     const RelErrRule& rule, bool wantDiffSq, SumOrder order, const PairStats& carry,
                     FusedPart part);
void toFloat64(DType dtype, const std::byte* source, std::size_t count, double* out);
} // namespace avx2
namespace avx512 {
PairStats fusedStats(DType npuType, const std::byte* npu, DType benchType, const std::byte* bench, std::size_t count,
                     const RelErrRule& rule, bool wantDiffSq, SumOrder order, const PairStats& carry,
                     FusedPart part);
} // namespace avx512

namespace {

// np.finfo(float).eps: msprobe 1.2.2 adds this float64 constant whatever the array's dtype.
constexpr double kFloatEps = 2.220446049250313e-16;
// np.finfo(np.float32).eps: msprobe 26 adds it in float32 arrays.
constexpr float kFloat32Eps = 1.1920929e-07f;

std::atomic<KernelBuild> g_forcedBuild { KernelBuild::Best };

/// F16C from CPUID leaf 1 (ECX bit 29): clang 14's __builtin_cpu_supports does not know "f16c", and the fuzz preset
/// builds core/compare with it.
bool haveF16c()
{
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    return __get_cpuid(1, &eax, &ebx, &ecx, &edx) != 0 && (ecx & bit_F16C) != 0;
}

bool haveAvx2()
{
    // FMA too: the AVX2 build adds on the multiply pipes (sameSum in kernelsimpl.h). Every AVX2 CPU so far has it.
    static const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && haveF16c();
    return avx2 && g_forcedBuild.load(std::memory_order_relaxed) != KernelBuild::Generic;
}

/// AVX-512 F, VL, DQ and BW, with the OS saving the registers (libgcc's check reads XCR0 as well as CPUID).
bool haveAvx512()
{
    static const bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl")
        && __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512bw");
    return avx512 && haveAvx2() && g_forcedBuild.load(std::memory_order_relaxed) == KernelBuild::Best;
}

int floatRank(DType t)
{
    return t == DType::Float16 ? 0 : t == DType::Float32 ? 1 : 2;
}

/// Elements [first, first + count) of one side: a pointer into memory, or read into `buffer` (reused, never
/// zero-filled: make_unique_for_overwrite, grown only when a chunk needs more).
struct ChunkBuffer
{
    std::unique_ptr<std::byte[]> data;
    std::size_t capacity = 0;

    std::byte* reserve(std::size_t bytes)
    {
        if (bytes > capacity) {
            data = std::make_unique_for_overwrite<std::byte[]>(bytes);
            capacity = bytes;
        }
        return data.get();
    }
};

const std::byte* fetch(const Operand& side, std::uint64_t first, std::size_t count, ChunkBuffer& buffer)
{
    const std::size_t size = tensor::dtypeSize(side.dtype);
    if (side.memory)
        return side.memory + first * size;
    std::size_t length = count * size;
    std::byte* out = buffer.reserve(length);
    auto offset = static_cast<off_t>(side.fileOffset + first * size);
    std::byte* to = out;
    while (length > 0) {
        const ssize_t got = ::pread(side.fd, to, length, offset);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            return nullptr; // an error, or the file shrank since it was opened
        to += got;
        offset += got;
        length -= static_cast<std::size_t>(got);
    }
    return out;
}

/// Chunk `chunk` of a pair of `count` elements: its length (0 past the end) and both sides' bytes, each a pointer
/// into memory or read into the caller's buffer; the bench side is not read when the NPU side could not be.
struct PairChunk
{
    std::size_t length = 0;
    const std::byte* npu = nullptr;
    const std::byte* bench = nullptr;
    bool readFailed() const { return !npu || !bench; }
};

PairChunk fetchChunk(const Operand& npu, const Operand& bench, std::uint64_t count, std::uint64_t chunk,
                     ChunkBuffer& npuBuffer, ChunkBuffer& benchBuffer)
{
    PairChunk c;
    const std::uint64_t first = chunk * kChunkElements;
    if (first >= count)
        return c;
    c.length = static_cast<std::size_t>(count - first < kChunkElements ? count - first : kChunkElements);
    c.npu = fetch(npu, first, c.length, npuBuffer);
    c.bench = c.npu ? fetch(bench, first, c.length, benchBuffer) : nullptr;
    return c;
}

PairStats ioFailure()
{
    PairStats failed;
    failed.ioFailed = true;
    return failed;
}

/// Whether a mapped side's file was cut short under the map while the pass read it (its pages then read as zeros).
bool cutShort(const Operand& side)
{
    return side.mapping && side.mapping->damaged();
}

/// A pass's result, failed when either side's mapping was cut short during it.
PairStats checked(PairStats stats, const Operand& npu, const Operand& bench)
{
    if (!stats.ioFailed && (cutShort(npu) || cutShort(bench)))
        stats.ioFailed = true;
    return stats;
}

void addTo(Sum& total, double& comp, const Sum& part)
{
    const double t = total.sum + part.sum;
    comp += std::fabs(total.sum) >= std::fabs(part.sum) ? (total.sum - t) + part.sum : (part.sum - t) + total.sum;
    total.sum = t;
    comp += part.compensation;
}

/// Everything of a chunk but the sums, folded into `out` (max, NaN flags, counts, masks, I/O).
void mergeOthers(PairStats& out, const PairStats& c)
{
    out.maxAbs = c.maxAbs > out.maxAbs ? c.maxAbs : out.maxAbs;
    out.maxRel = c.maxRel > out.maxRel ? c.maxRel : out.maxRel;
    out.absNan = out.absNan || c.absNan;
    out.relNan = out.relNan || c.relNan;
    out.belowOne += c.belowOne;
    out.belowFive += c.belowFive;
    out.anyInvalid = out.anyInvalid || c.anyInvalid;
    out.masksDiffer = out.masksDiffer || c.masksDiffer;
    out.ioFailed = out.ioFailed || c.ioFailed;
}

} // namespace

namespace {
std::atomic<bool> g_forceFloat64 { false };

/// The 1 per mille and 5 per mille thresholds as numpy compares them in `compute`: np.float16(0.001) and
/// np.float16(0.005) (numpy converts double -> half directly), their float32 casts, or the doubles themselves.
/// Every profile's rule (msprobe 1.2, msprobe 26, ptdbg) takes its thresholds from here.
std::pair<double, double> thresholdsFor(DType compute)
{
    switch (compute) {
    case DType::Float16:
        return { 0.0010004043579101562, 0.005001068115234375 };
    case DType::Float32:
        return { static_cast<float>(0.001), static_cast<float>(0.005) };
    default:
        return { 0.001, 0.005 };
    }
}
} // namespace

void forceFloat64Pass(bool on)
{
    g_forceFloat64 = on;
}

bool float64PassForced()
{
    return g_forceFloat64.load(std::memory_order_relaxed);
}

void forceGenericKernels(bool generic)
{
    g_forcedBuild = generic ? KernelBuild::Generic : KernelBuild::Best;
}

void forceKernelBuild(KernelBuild build)
{
    g_forcedBuild = build;
}

bool usingAvx2Kernels()
{
    return haveAvx2();
}

bool usingAvx512Kernels()
{
    return haveAvx512();
}

RelErrRule ruleMsprobe12(DType npu, DType bench)
{
    // Integer arrays: numpy would cast both to float64 (integer bench), or cannot add eps in place to an
    // integer NPU array (realdata.cpp widens it instead); bfloat16 arrives here as float32.
    DType nt = npu == DType::BFloat16 ? DType::Float32 : npu;
    DType bt = bench == DType::BFloat16 ? DType::Float32 : bench;
    if (!tensor::isFloating(bt))
        nt = bt = DType::Float64;
    else if (!tensor::isFloating(nt))
        nt = DType::Float64;
    RelErrRule rule;
    rule.compute = floatRank(nt) >= floatRank(bt) ? nt : bt;
    // x + np.finfo(float).eps in x's own type: float16 cannot hold 2^-52, so it adds 0 there.
    auto eps = [](DType t) -> double {
        return t == DType::Float16 ? 0.0 : t == DType::Float32 ? static_cast<double>(static_cast<float>(kFloatEps)) : kFloatEps;
    };
    rule.npuEpsType = nt;
    rule.npuEps = eps(nt);
    rule.benchAtZero = eps(bt); // 0 + eps, in the bench's type
    std::tie(rule.one, rule.five) = thresholdsFor(rule.compute);
    return rule;
}

RelErrRule ruleMsprobe26(DType npu, DType bench)
{
    auto numpyFloat = [](DType t) { return t == DType::Float16 || t == DType::Float32 || t == DType::Float64; };
    const DType nt = npu == DType::BFloat16 ? DType::Float32 : npu;
    const DType bt = bench == DType::BFloat16 ? DType::Float32 : bench;
    const bool wide = !numpyFloat(nt) || !numpyFloat(bt) || nt == DType::Float64 || bt == DType::Float64;
    RelErrRule rule;
    if (wide) {
        rule.compute = rule.npuEpsType = DType::Float64;
        rule.npuEps = rule.benchAtZero = kFloatEps;
    } else {
        rule.compute = rule.npuEpsType = DType::Float32;
        rule.npuEps = rule.benchAtZero = kFloat32Eps; // 0 + eps in float32 is eps
    }
    std::tie(rule.one, rule.five) = thresholdsFor(rule.compute);
    return rule;
}

void toFloat64(DType dtype, const std::byte* source, std::size_t count, double* out)
{
    if (haveAvx2())
        avx2::toFloat64(dtype, source, count, out);
    else
        generic::toFloat64(dtype, source, count, out);
}

PairStats chunkStats(const Operand& npu, const Operand& bench, std::uint64_t count, std::uint64_t chunk,
                     const RelErrRule& rule, bool wantDiffSq)
{
    return chunkStats(npu, bench, count, chunk, rule, wantDiffSq, SumOrder::Compensated, nullptr);
}

PairStats chunkStats(const Operand& npu, const Operand& bench, std::uint64_t count, std::uint64_t chunk,
                     const RelErrRule& rule, bool wantDiffSq, SumOrder order, const PairStats* carry)
{
    return chunkStats(npu, bench, count, chunk, rule, wantDiffSq, order, carry, FusedPart::All);
}

PairStats chunkStats(const Operand& npu, const Operand& bench, std::uint64_t count, std::uint64_t chunk,
                     const RelErrRule& rule, bool wantDiffSq, SumOrder order, const PairStats* carry, FusedPart part)
{
    static const PairStats zero;
    const PairStats& from = carry && order == SumOrder::LeftToRight ? *carry : zero;
    // One buffer per side and thread, a chunk at most: kept for the thread's next chunk.
    thread_local ChunkBuffer npuBuffer;
    thread_local ChunkBuffer benchBuffer;
    const PairChunk c = fetchChunk(npu, bench, count, chunk, npuBuffer, benchBuffer);
    if (c.length == 0)
        return from;
    if (c.readFailed())
        return ioFailure();
    const std::size_t m = c.length;
    const std::byte* n = c.npu;
    const std::byte* b = c.bench;
    // The AVX-512 build for the compensated lanes (SumOrder::Compensated: msprobe 1.2, ptdbg): 4-6 % faster there. The
    // left-to-right chains (msprobe 26) ran 5 % slower in it, so they keep the AVX2 build (probescope-benchkernels).
    const bool lanes = order != SumOrder::LeftToRight && part != FusedPart::OthersOnly;
    if (lanes && haveAvx512())
        return avx512::fusedStats(npu.dtype, n, bench.dtype, b, m, rule, wantDiffSq, order, from, part);
    return haveAvx2() ? avx2::fusedStats(npu.dtype, n, bench.dtype, b, m, rule, wantDiffSq, order, from, part)
                      : generic::fusedStats(npu.dtype, n, bench.dtype, b, m, rule, wantDiffSq, order, from, part);
}

PairStats combine(const std::vector<PairStats>& chunks)
{
    PairStats out;
    double dotComp = 0;
    double npuComp = 0;
    double benchComp = 0;
    double diffComp = 0;
    for (const PairStats& c : chunks) {
        addTo(out.dot, dotComp, c.dot);
        addTo(out.npuSq, npuComp, c.npuSq);
        addTo(out.benchSq, benchComp, c.benchSq);
        addTo(out.diffSq, diffComp, c.diffSq);
        mergeOthers(out, c);
    }
    out.dot.compensation = dotComp;
    out.npuSq.compensation = npuComp;
    out.benchSq.compensation = benchComp;
    out.diffSq.compensation = diffComp;
    return out;
}

PairStats pairStats(const Operand& npu, const Operand& bench, std::uint64_t count, const RelErrRule& rule,
                    bool wantDiffSq, Splitter& splitter, SumOrder order)
{
    if (order == SumOrder::Compensated)
        return pairStats(npu, bench, count, rule, wantDiffSq, splitter);
    // Left to right: one chain through every chunk, in order; the other figures merge as they come.
    const std::uint64_t chunks = (count + kChunkElements - 1) / kChunkElements;
    PairStats out;
    if (chunks < kLeftToRightSplitChunks || splitter.threads() == 1) {
        for (std::uint64_t k = 0; k < chunks; ++k) {
            const PairStats c = chunkStats(npu, bench, count, k, rule, wantDiffSq, order, &out);
            if (c.ioFailed) {
                out.ioFailed = true;
                return out;
            }
            out.dot = c.dot;
            out.npuSq = c.npuSq;
            out.benchSq = c.benchSq;
            out.diffSq = c.diffSq;
            mergeOthers(out, c);
        }
        return checked(out, npu, bench);
    }
    // Part 0 is the chain, front to back; the other parts (run only by threads that are idle) take chunks from
    // the back for everything but the sums, until they meet the chain. Each chunk is claimed once (CAS), so
    // every figure but the sums is computed exactly once, and the sums always by the chain.
    enum : std::uint8_t { kFree = 0, kChain = 1, kHelper = 2 };
    const auto n = static_cast<std::size_t>(chunks);
    std::unique_ptr<std::atomic<std::uint8_t>[]> state(new std::atomic<std::uint8_t>[n]);
    for (std::size_t k = 0; k < n; ++k)
        state[k].store(kFree, std::memory_order_relaxed);
    std::vector<PairStats> helped(n);
    std::atomic<std::size_t> fromBack { n };
    PairStats chain;
    splitter.run(splitter.threads(), [&](std::size_t part) {
        if (part == 0) {
            for (std::size_t k = 0; k < n; ++k) {
                std::uint8_t expected = kFree;
                const bool mine = state[k].compare_exchange_strong(expected, kChain, std::memory_order_acq_rel);
                const PairStats c = chunkStats(npu, bench, count, k, rule, wantDiffSq, order, &chain,
                                               mine ? FusedPart::All : FusedPart::SumsOnly);
                if (c.ioFailed) {
                    chain.ioFailed = true;
                    return;
                }
                chain.dot = c.dot;
                chain.npuSq = c.npuSq;
                chain.benchSq = c.benchSq;
                chain.diffSq = c.diffSq;
                if (mine)
                    mergeOthers(chain, c);
            }
            return;
        }
        for (;;) {
            std::size_t back = fromBack.load(std::memory_order_relaxed);
            do {
                if (back == 0)
                    return;
            } while (!fromBack.compare_exchange_weak(back, back - 1, std::memory_order_relaxed));
            const std::size_t k = back - 1;
            std::uint8_t expected = kFree;
            if (!state[k].compare_exchange_strong(expected, kHelper, std::memory_order_acq_rel))
                return; // the chain is here: everything before is its own
            helped[k] = chunkStats(npu, bench, count, k, rule, wantDiffSq, order, nullptr, FusedPart::OthersOnly);
        }
    });
    out = chain;
    // max, counts and flags merge exactly in any order; chunk order keeps it obvious.
    for (std::size_t k = 0; k < n; ++k) {
        if (state[k].load(std::memory_order_relaxed) == kHelper)
            mergeOthers(out, helped[k]);
    }
    return checked(out, npu, bench);
}

PairStats pairStats(const Operand& npu, const Operand& bench, std::uint64_t count, const RelErrRule& rule,
                    bool wantDiffSq, Splitter& splitter)
{
    const std::uint64_t chunks = (count + kChunkElements - 1) / kChunkElements;
    std::vector<PairStats> parts(static_cast<std::size_t>(chunks));
    if (chunks == 1 || splitter.threads() == 1) {
        for (std::size_t k = 0; k < parts.size(); ++k)
            parts[k] = chunkStats(npu, bench, count, k, rule, wantDiffSq);
    } else {
        splitter.run(parts.size(), [&](std::size_t k) { parts[k] = chunkStats(npu, bench, count, k, rule, wantDiffSq); });
    }
    return checked(combine(parts), npu, bench);
}

void plainSums(const Operand& npu, const Operand& bench, std::uint64_t count, double& dot, double& npuSq,
               double& benchSq, double& diffSq)
{
    ChunkBuffer npuBuffer;
    ChunkBuffer benchBuffer;
    std::vector<double> n(kChunkElements);
    std::vector<double> b(kChunkElements);
    dot = npuSq = benchSq = diffSq = 0;
    for (std::uint64_t chunk = 0; chunk * kChunkElements < count; ++chunk) {
        const PairChunk c = fetchChunk(npu, bench, count, chunk, npuBuffer, benchBuffer);
        if (c.readFailed())
            return;
        const std::size_t m = c.length;
        toFloat64(npu.dtype, c.npu, m, n.data());
        toFloat64(bench.dtype, c.bench, m, b.data());
        for (std::size_t i = 0; i < m; ++i) {
            const double x = std::isfinite(n[i]) ? n[i] : 0.0;
            const double y = std::isfinite(n[i]) ? b[i] : 0.0;
            dot += x * y;
            npuSq += x * x;
            benchSq += y * y;
            diffSq += (x - y) * (x - y);
        }
    }
}


// ---------------------------------------------------------------------------------------------
// Plain sums in a reference tool's order (kernels.h: pairwiseSum, leftToRightSum)

namespace {

/// numpy's pairwise_sum (umath loops_utils.h.src) on `n` values already in the accumulation type T.
template<typename T>
T pairwiseInMemory(const T* a, std::size_t n)
{
    constexpr std::size_t kBlock = 128; // numpy's PW_BLOCKSIZE
    if (n < 8) {
        T res = 0;
        for (std::size_t i = 0; i < n; ++i)
            res += a[i];
        return res;
    }
    if (n <= kBlock) {
        T r[8];
        for (int j = 0; j < 8; ++j)
            r[j] = a[j];
        std::size_t i = 8;
        for (; i < n - (n % 8); i += 8) {
            for (int j = 0; j < 8; ++j)
                r[j] += a[i + static_cast<std::size_t>(j)];
        }
        T res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for (; i < n; ++i)
            res += a[i];
        return res;
    }
    std::size_t n2 = n / 2;
    n2 -= n2 % 8;
    return pairwiseInMemory(a, n2) + pairwiseInMemory(a + n2, n - n2);
}

/// numpy's split of a pairwise range of n > 128 elements.
std::uint64_t pairwiseSplit(std::uint64_t n)
{
    std::uint64_t n2 = n / 2;
    return n2 - n2 % 8;
}

/// Elements [first, first + n) of `values` converted to float64 and to float (thread-local buffers).
struct Converted
{
    const double* f64 = nullptr;
    const float* f32 = nullptr;
};

Converted convertRange(const Operand& values, std::uint64_t first, std::size_t n, Accumulate acc)
{
    thread_local ChunkBuffer raw;
    thread_local std::vector<double> f64;
    thread_local std::vector<float> f32;
    const std::byte* p = fetch(values, first, n, raw);
    if (!p)
        return {};
    if (f64.size() < n)
        f64.resize(n);
    toFloat64(values.dtype, p, n, f64.data());
    Converted out;
    out.f64 = f64.data();
    if (acc == Accumulate::Float32) {
        if (f32.size() < n)
            f32.resize(n);
        for (std::size_t i = 0; i < n; ++i)
            f32[i] = static_cast<float>(f64[i]); // exact from float16/bfloat16/float32; float64 rounds as astype
        out.f32 = f32.data();
    }
    return out;
}

/// The ranges of numpy's recursion over [first, first + n) that are at most kChunkElements long, in order.
void pairwiseLeaves(std::uint64_t first, std::uint64_t n, std::vector<std::pair<std::uint64_t, std::uint64_t>>& out)
{
    if (n <= kChunkElements) {
        out.emplace_back(first, n);
        return;
    }
    const std::uint64_t n2 = pairwiseSplit(n);
    pairwiseLeaves(first, n2, out);
    pairwiseLeaves(first + n2, n - n2, out);
}

/// The leaves' sums folded back up the same tree (next: the leaf to take).
template<typename T>
T pairwiseFold(std::uint64_t n, const std::vector<T>& leaves, std::size_t& next)
{
    if (n <= kChunkElements)
        return leaves[next++];
    const std::uint64_t n2 = pairwiseSplit(n);
    const T left = pairwiseFold(n2, leaves, next);
    const T right = pairwiseFold(n - n2, leaves, next);
    return left + right;
}

template<typename T>
T pairwiseOf(const Operand& values, std::uint64_t first, std::uint64_t n, Accumulate acc, Splitter& splitter,
             bool& failed)
{
    std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges;
    pairwiseLeaves(first, n, ranges);
    std::vector<T> leaves(ranges.size());
    std::vector<char> bad(ranges.size(), 0);
    auto leaf = [&](std::size_t k) {
        const auto m = static_cast<std::size_t>(ranges[k].second);
        if (m == 0) {
            leaves[k] = 0; // an empty array: nothing to read
            return;
        }
        const Converted c = convertRange(values, ranges[k].first, m, acc);
        if (!c.f64) {
            bad[k] = 1;
            return;
        }
        if constexpr (std::is_same_v<T, float>)
            leaves[k] = pairwiseInMemory(c.f32, m);
        else
            leaves[k] = pairwiseInMemory(c.f64, m);
    };
    if (ranges.size() == 1 || splitter.threads() == 1) {
        for (std::size_t k = 0; k < ranges.size(); ++k)
            leaf(k);
    } else {
        splitter.run(ranges.size(), leaf);
    }
    for (const char b : bad)
        failed = failed || b != 0;
    std::size_t next = 0;
    return pairwiseFold(n, leaves, next);
}

template<typename T>
double pairwiseTotal(const Operand& values, std::uint64_t count, Accumulate acc, Splitter& splitter,
                     std::uint64_t block, bool& failed)
{
    if (block == 0 || block >= count)
        return static_cast<double>(T(0) + pairwiseOf<T>(values, 0, count, acc, splitter, failed));
    // Buffered: the blocks are independent sums (computed on any thread), added in block order.
    const std::uint64_t blocks = (count + block - 1) / block;
    std::vector<T> parts(static_cast<std::size_t>(blocks));
    std::vector<char> bad(parts.size(), 0);
    // Enough blocks per part that a part is worth handing over.
    const std::uint64_t perPart = std::max<std::uint64_t>(1, kChunkElements / block);
    const std::uint64_t partCount = (blocks + perPart - 1) / perPart;
    SerialSplitter serial;
    auto part = [&](std::size_t p) {
        bool partFailed = false;
        for (std::uint64_t k = p * perPart; k < std::min(blocks, (p + 1) * perPart); ++k) {
            const std::uint64_t first = k * block;
            parts[static_cast<std::size_t>(k)] =
                pairwiseOf<T>(values, first, std::min(block, count - first), acc, serial, partFailed);
        }
        bad[p] = partFailed ? 1 : 0;
    };
    if (partCount == 1 || splitter.threads() == 1) {
        for (std::size_t p = 0; p < partCount; ++p)
            part(p);
    } else {
        splitter.run(static_cast<std::size_t>(partCount), part);
    }
    for (const char b : bad)
        failed = failed || b != 0;
    T total = 0;
    for (const T v : parts)
        total += v;
    return static_cast<double>(total);
}

} // namespace

double pairwiseSum(const Operand& values, std::uint64_t count, Accumulate acc, Splitter& splitter,
                   std::uint64_t block, bool* ioFailed)
{
    bool failed = false;
    const double sum = acc == Accumulate::Float32 ? pairwiseTotal<float>(values, count, acc, splitter, block, failed)
                                                  : pairwiseTotal<double>(values, count, acc, splitter, block, failed);
    failed = failed || cutShort(values);
    if (ioFailed)
        *ioFailed = failed;
    return sum;
}

double leftToRightSum(const Operand& values, std::uint64_t count, Accumulate acc, bool* ioFailed)
{
    double sum64 = 0;
    float sum32 = 0;
    bool failed = false;
    for (std::uint64_t first = 0; first < count && !failed; first += kChunkElements) {
        const auto m = static_cast<std::size_t>(std::min(kChunkElements, count - first));
        const Converted c = convertRange(values, first, m, acc);
        if (!c.f64) {
            failed = true;
            break;
        }
        if (acc == Accumulate::Float32) {
            for (std::size_t i = 0; i < m; ++i)
                sum32 += c.f32[i];
        } else {
            for (std::size_t i = 0; i < m; ++i)
                sum64 += c.f64[i];
        }
    }
    failed = failed || cutShort(values);
    if (ioFailed)
        *ioFailed = failed;
    return acc == Accumulate::Float32 ? static_cast<double>(sum32) : sum64;
}

// =====================================================================================================
// ptdbg 6.0 (h-kptdbg): see kernels.h. Only chunkStats, combine, fetch and toFloat64 are used from above.
// =====================================================================================================

namespace {

/// Elements widened at a time to look for bench zeros (and to change them): 2 x 32 KiB of float64.
constexpr std::size_t kPtdbgBlock = 4096;

bool ptdbgIsFloat(DType t)
{
    return t == DType::Float16 || t == DType::Float32 || t == DType::Float64 || t == DType::BFloat16;
}

/// np.finfo(dtype).eps of a float array (.npy has no bfloat16: ptdbg saved those as float32).
double ptdbgEps(DType t)
{
    return t == DType::Float16 ? 0.0009765625 : t == DType::Float64 ? kFloatEps : 1.1920928955078125e-07;
}

/// a + b in the float type t, as numpy adds in place (float16 through float32, which rounds correctly).
double ptdbgAdd(DType t, double a, double b)
{
    if (t == DType::Float64)
        return a + b;
    const float sum = static_cast<float>(a) + static_cast<float>(b);
    return t == DType::Float16 ? tensor::halfToFloat(tensor::floatToHalf(sum)) : sum;
}

/// Whether a float block holds a zero (+0 or -0: every bit but the sign clear), read on the raw bits.
template<typename Bits>
bool anyZeroBits(const std::byte* p, std::size_t k)
{
    // 16 bytes at a time with GCC vector extensions (SSE2 in this baseline build): -O2 does not vectorise the loop.
    typedef Bits V __attribute__((vector_size(16)));
    constexpr std::size_t kLanes = 16 / sizeof(Bits);
    V acc = {};
    std::size_t i = 0;
    for (; i + kLanes <= k; i += kLanes) {
        V v;
        std::memcpy(&v, p + i * sizeof(Bits), sizeof v);
        acc |= __builtin_convertvector((v << 1) == V {}, V);
    }
    bool zero = false;
    for (std::size_t j = 0; j < kLanes; ++j)
        zero = zero || acc[j] != 0;
    for (; i < k; ++i) {
        Bits v;
        std::memcpy(&v, p + i * sizeof(Bits), sizeof v);
        zero = zero || static_cast<Bits>(v << 1) == 0;
    }
    return zero;
}

bool ptdbgAnyZero(DType t, const std::byte* p, std::size_t k)
{
    switch (t) {
    case DType::Float64:
        return anyZeroBits<std::uint64_t>(p, k);
    case DType::Float32:
        return anyZeroBits<std::uint32_t>(p, k);
    default: // float16, bfloat16
        return anyZeroBits<std::uint16_t>(p, k);
    }
}

/// ptdbg's change of a float16 block into float16 copies: where b is ±0, b = eps and n = half(float(n) + eps) (numpy's
/// float16 loop: in float32, rounded to nearest even). Scalar, with the software conversions.
void patchFloat16(const std::byte* npu, const std::byte* bench, std::size_t k, float eps, std::uint16_t* n,
                  std::uint16_t* b)
{
    std::memcpy(n, npu, k * 2);
    std::memcpy(b, bench, k * 2);
    for (std::size_t i = 0; i < k; ++i) {
        if (static_cast<std::uint16_t>(b[i] << 1) != 0)
            continue;
        b[i] = tensor::floatToHalf(eps);
        n[i] = tensor::floatToHalf(tensor::halfToFloat(n[i]) + eps);
    }
}

/// patchFloat16 with F16C, 8 elements at a time (vcvtph2ps / vcvtps2ph round to nearest even as floatToHalf does;
/// a NaN stays a NaN). Only called where the CPU has F16C and AVX.
__attribute__((target("avx,f16c"))) void patchFloat16F16c(const std::byte* npu, const std::byte* bench, std::size_t k,
                                                           float eps, std::uint16_t* n, std::uint16_t* b)
{
    const __m256 e = _mm256_set1_ps(eps);
    const __m128i eBits = _mm_set1_epi16(static_cast<short>(tensor::floatToHalf(eps)));
    const __m128i magnitude = _mm_set1_epi16(0x7FFF);
    std::size_t i = 0;
    for (; i + 8 <= k; i += 8) {
        const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(npu + i * 2));
        const __m128i y = _mm_loadu_si128(reinterpret_cast<const __m128i*>(bench + i * 2));
        const __m128i zero = _mm_cmpeq_epi16(_mm_and_si128(y, magnitude), _mm_setzero_si128());
        const __m128i sum = _mm256_cvtps_ph(_mm256_add_ps(_mm256_cvtph_ps(x), e), _MM_FROUND_TO_NEAREST_INT);
        _mm_storeu_si128(reinterpret_cast<__m128i*>(n + i), _mm_blendv_epi8(x, sum, zero));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(b + i), _mm_blendv_epi8(y, eBits, zero));
    }
    if (i < k)
        patchFloat16(npu + i * 2, bench + i * 2, k - i, eps, n + i, b + i);
}

RelErrRule relRuleOf(const PtdbgRule& rule)
{
    RelErrRule r;
    r.compute = rule.compute;
    r.npuEpsType = DType::Float64;
    if (!rule.benchFloat) {
        // astype(float) copies, eps added to both at a bench zero, all in float64.
        r.npuEps = kFloatEps;
        r.benchAtZero = kFloatEps;
    }
    // Otherwise the bench zeros are already changed: a zero left is an inf/NaN position the kernel zeroed,
    // whose relative error is 0/0 = NaN, as ptdbg's inf - inf or NaN there.
    std::tie(r.one, r.five) = thresholdsFor(rule.compute);
    return r;
}

} // namespace

PtdbgRule rulePtdbg(DType npu, DType bench)
{
    PtdbgRule rule;
    rule.npuType = npu;
    rule.benchType = bench;
    rule.benchFloat = ptdbgIsFloat(bench);
    // ptdbg's promotion of two float arrays (an integer side makes float64).
    if (!rule.benchFloat || !ptdbgIsFloat(npu) || npu == DType::Float64 || bench == DType::Float64)
        rule.compute = DType::Float64;
    else if (npu == DType::Float16 && bench == DType::Float16)
        rule.compute = DType::Float16;
    else
        rule.compute = DType::Float32;
    return rule;
}

PairStats ptdbgChunkStats(const Operand& npu, const Operand& bench, std::uint64_t count, std::uint64_t chunk,
                          const PtdbgRule& rule)
{
    thread_local ChunkBuffer npuBuffer;
    thread_local ChunkBuffer benchBuffer;
    thread_local std::vector<double> nd(kPtdbgBlock);
    thread_local std::vector<double> bd(kPtdbgBlock);
    thread_local std::vector<std::uint16_t> nh(kPtdbgBlock);
    thread_local std::vector<std::uint16_t> bh(kPtdbgBlock);
    thread_local std::vector<PairStats> parts;
    const PairChunk c = fetchChunk(npu, bench, count, chunk, npuBuffer, benchBuffer);
    if (c.length == 0)
        return {};
    if (c.readFailed())
        return ioFailure();
    const std::size_t m = c.length;
    const std::byte* n = c.npu;
    const std::byte* b = c.bench;
    const RelErrRule rel = relRuleOf(rule);
    if (!rule.benchFloat)
        return chunkStats(Operand { npu.dtype, n }, Operand { bench.dtype, b }, m, 0, rel, false);
    const std::size_t npuSize = tensor::dtypeSize(npu.dtype);
    const std::size_t benchSize = tensor::dtypeSize(bench.dtype);
    const double eps = ptdbgEps(rule.benchType);
    const bool npuFloat = ptdbgIsFloat(rule.npuType);
    const bool float32Pair = npu.dtype == DType::Float32 && bench.dtype == DType::Float32;
    const bool float16Pair = npu.dtype == DType::Float16 && bench.dtype == DType::Float16;
    // The usual case (float32 dumps, ReLU zeros): the pass changes the elements itself as it reads them
    // (RelErrRule::zeroBenchEps; the changed values are float32 values), a no-op in a block without a zero.
    RelErrRule patched = rel;
    patched.zeroBenchEps = static_cast<float>(eps);
    parts.clear();
    for (std::size_t start = 0; start < m; start += kPtdbgBlock) {
        const std::size_t k = m - start < kPtdbgBlock ? m - start : kPtdbgBlock;
        const std::byte* nb = n + start * npuSize;
        const std::byte* bb = b + start * benchSize;
        if (float32Pair) {
            parts.push_back(chunkStats(Operand { npu.dtype, nb }, Operand { bench.dtype, bb }, k, 0, patched, false));
            continue;
        }
        if (!ptdbgAnyZero(bench.dtype, bb, k)) {
            parts.push_back(chunkStats(Operand { npu.dtype, nb }, Operand { bench.dtype, bb }, k, 0, rel, false));
            continue;
        }
        if (float16Pair) {
            // float16 pairs: changed in float16 copies (n + eps rounded as numpy's float16 loop: in float32, then to
            // half), so the pass widens them with F16C as any float16 block.
            if (haveAvx2())
                patchFloat16F16c(nb, bb, k, static_cast<float>(eps), nh.data(), bh.data());
            else
                patchFloat16(nb, bb, k, static_cast<float>(eps), nh.data(), bh.data());
            parts.push_back(chunkStats(Operand { DType::Float16, reinterpret_cast<const std::byte*>(nh.data()) },
                                       Operand { DType::Float16, reinterpret_cast<const std::byte*>(bh.data()) }, k, 0,
                                       rel, false));
            continue;
        }
        // Other dtypes: changed in float64 copies, then the same pass on those.
        toFloat64(bench.dtype, bb, k, bd.data());
        toFloat64(npu.dtype, nb, k, nd.data());
        for (std::size_t i = 0; i < k; ++i) {
            if (bd[i] != 0)
                continue;
            bd[i] = eps;
            nd[i] = npuFloat ? ptdbgAdd(rule.npuType, nd[i], eps) : nd[i] + eps;
        }
        parts.push_back(chunkStats(Operand { DType::Float64, reinterpret_cast<const std::byte*>(nd.data()) },
                                   Operand { DType::Float64, reinterpret_cast<const std::byte*>(bd.data()) }, k, 0,
                                   rel, false));
    }
    return combine(parts);
}

PairStats ptdbgPairStats(const Operand& npu, const Operand& bench, std::uint64_t count, const PtdbgRule& rule,
                         Splitter& splitter)
{
    const std::uint64_t chunks = (count + kChunkElements - 1) / kChunkElements;
    std::vector<PairStats> parts(static_cast<std::size_t>(chunks));
    if (chunks == 1 || splitter.threads() == 1) {
        for (std::size_t k = 0; k < parts.size(); ++k)
            parts[k] = ptdbgChunkStats(npu, bench, count, k, rule);
    } else {
        splitter.run(parts.size(), [&](std::size_t k) { parts[k] = ptdbgChunkStats(npu, bench, count, k, rule); });
    }
    return checked(combine(parts), npu, bench);
}

} // namespace probescope::compare::kernels
