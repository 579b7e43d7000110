// SPDX-License-Identifier: Apache-2.0
#include "core/compare/kernels.h"

#include <atomic>
#include <cpuid.h>
#include <immintrin.h>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <memory>
#include <unistd.h>

namespace probescope::compare::kernels {

using tensor::DType;

namespace generic {
PairStats fusedStats(DType npuType, const std::byte* npu, DType benchType, const std::byte* bench, std::size_t count,
                     const RelErrRule& rule, bool wantDiffSq);
void toFloat64(DType dtype, const std::byte* source, std::size_t count, double* out);
} // namespace generic
namespace avx2 {
PairStats fusedStats(DType npuType, const std::byte* npu, DType benchType, const std::byte* bench, std::size_t count,
                     const RelErrRule& rule, bool wantDiffSq);
void toFloat64(DType dtype, const std::byte* source, std::size_t count, double* out);
} // namespace avx2

namespace {

// np.finfo(float).eps: msprobe 1.2.2 adds this float64 constant whatever the array's dtype.
constexpr double kFloatEps = 2.220446049250313e-16;

std::atomic<bool> g_forceGeneric { false };

/// F16C from CPUID leaf 1 (ECX bit 29): clang 14's __builtin_cpu_supports does not know "f16c", and the fuzz preset
/// builds core/compare with it.
bool haveF16c()
{
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    return __get_cpuid(1, &eax, &ebx, &ecx, &edx) != 0 && (ecx & bit_F16C) != 0;
}

bool haveAvx2()
{
    static const bool avx2 = __builtin_cpu_supports("avx2") && haveF16c();
    return avx2 && !g_forceGeneric.load(std::memory_order_relaxed);
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

void addTo(Sum& total, double& comp, const Sum& part)
{
    const double t = total.sum + part.sum;
    comp += std::fabs(total.sum) >= std::fabs(part.sum) ? (total.sum - t) + part.sum : (part.sum - t) + total.sum;
    total.sum = t;
    comp += part.compensation;
}

} // namespace

void forceGenericKernels(bool generic)
{
    g_forceGeneric = generic;
}

bool usingAvx2Kernels()
{
    return haveAvx2();
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
    switch (rule.compute) {
    case DType::Float16:
        // np.float16(0.001), np.float16(0.005): numpy converts double -> half directly.
        rule.one = 0.0010004043579101562;
        rule.five = 0.005001068115234375;
        break;
    case DType::Float32:
        rule.one = static_cast<float>(0.001);
        rule.five = static_cast<float>(0.005);
        break;
    default:
        break;
    }
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
    // One buffer per side and thread, a chunk at most: kept for the thread's next chunk.
    thread_local ChunkBuffer npuBuffer;
    thread_local ChunkBuffer benchBuffer;
    const std::uint64_t first = chunk * kChunkElements;
    if (first >= count)
        return {};
    const auto m = static_cast<std::size_t>(count - first < kChunkElements ? count - first : kChunkElements);
    const std::byte* n = fetch(npu, first, m, npuBuffer);
    const std::byte* b = n ? fetch(bench, first, m, benchBuffer) : nullptr;
    if (!n || !b) {
        PairStats failed;
        failed.ioFailed = true;
        return failed;
    }
    return haveAvx2() ? avx2::fusedStats(npu.dtype, n, bench.dtype, b, m, rule, wantDiffSq)
                      : generic::fusedStats(npu.dtype, n, bench.dtype, b, m, rule, wantDiffSq);
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
    out.dot.compensation = dotComp;
    out.npuSq.compensation = npuComp;
    out.benchSq.compensation = benchComp;
    out.diffSq.compensation = diffComp;
    return out;
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
    return combine(parts);
}

void plainSums(const Operand& npu, const Operand& bench, std::uint64_t count, double& dot, double& npuSq,
               double& benchSq, double& diffSq)
{
    ChunkBuffer npuBuffer;
    ChunkBuffer benchBuffer;
    std::vector<double> n(kChunkElements);
    std::vector<double> b(kChunkElements);
    dot = npuSq = benchSq = diffSq = 0;
    for (std::uint64_t first = 0; first < count; first += kChunkElements) {
        const auto m = static_cast<std::size_t>(count - first < kChunkElements ? count - first : kChunkElements);
        const std::byte* pn = fetch(npu, first, m, npuBuffer);
        const std::byte* pb = pn ? fetch(bench, first, m, benchBuffer) : nullptr;
        if (!pn || !pb)
            return;
        toFloat64(npu.dtype, pn, m, n.data());
        toFloat64(bench.dtype, pb, m, b.data());
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

/// ptdbg's change of a float32 block, from the raw elements into float32 copies: where b is ±0, n += eps and b = eps.
void patchFloat32(const std::byte* npu, const std::byte* bench, std::size_t k, float eps, float* n, float* b)
{
    typedef float V4f __attribute__((vector_size(16)));
    const V4f e = V4f {} + eps;
    std::size_t i = 0;
    for (; i + 4 <= k; i += 4) {
        V4f x;
        V4f y;
        std::memcpy(&x, npu + i * 4, sizeof x);
        std::memcpy(&y, bench + i * 4, sizeof y);
        const auto z = y == V4f {};
        x = z ? x + e : x;
        y = z ? e : y;
        std::memcpy(n + i, &x, sizeof x);
        std::memcpy(b + i, &y, sizeof y);
    }
    for (; i < k; ++i) {
        float x;
        float y;
        std::memcpy(&x, npu + i * 4, 4);
        std::memcpy(&y, bench + i * 4, 4);
        const bool z = y == 0;
        n[i] = z ? x + eps : x;
        b[i] = z ? eps : y;
    }
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
    switch (rule.compute) {
    case DType::Float16:
        r.one = 0.0010004043579101562; // np.float16(0.001): double -> half directly
        r.five = 0.005001068115234375;
        break;
    case DType::Float32:
        r.one = static_cast<float>(0.001);
        r.five = static_cast<float>(0.005);
        break;
    default:
        break;
    }
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
    thread_local std::vector<float> nf(kPtdbgBlock);
    thread_local std::vector<float> bf(kPtdbgBlock);
    thread_local std::vector<std::uint16_t> nh(kPtdbgBlock);
    thread_local std::vector<std::uint16_t> bh(kPtdbgBlock);
    thread_local std::vector<PairStats> parts;
    const std::uint64_t first = chunk * kChunkElements;
    if (first >= count)
        return {};
    const auto m = static_cast<std::size_t>(count - first < kChunkElements ? count - first : kChunkElements);
    const std::byte* n = fetch(npu, first, m, npuBuffer);
    const std::byte* b = n ? fetch(bench, first, m, benchBuffer) : nullptr;
    if (!n || !b) {
        PairStats failed;
        failed.ioFailed = true;
        return failed;
    }
    const RelErrRule rel = relRuleOf(rule);
    if (!rule.benchFloat)
        return chunkStats(Operand { npu.dtype, n }, Operand { bench.dtype, b }, m, 0, rel, false);
    const std::size_t npuSize = tensor::dtypeSize(npu.dtype);
    const std::size_t benchSize = tensor::dtypeSize(bench.dtype);
    const double eps = ptdbgEps(rule.benchType);
    const bool npuFloat = ptdbgIsFloat(rule.npuType);
    const bool float32Pair = npu.dtype == DType::Float32 && bench.dtype == DType::Float32;
    const bool float16Pair = npu.dtype == DType::Float16 && bench.dtype == DType::Float16;
    parts.clear();
    for (std::size_t start = 0; start < m; start += kPtdbgBlock) {
        const std::size_t k = m - start < kPtdbgBlock ? m - start : kPtdbgBlock;
        const std::byte* nb = n + start * npuSize;
        const std::byte* bb = b + start * benchSize;
        if (!ptdbgAnyZero(bench.dtype, bb, k)) {
            parts.push_back(chunkStats(Operand { npu.dtype, nb }, Operand { bench.dtype, bb }, k, 0, rel, false));
            continue;
        }
        if (float32Pair) {
            // The usual case (ReLU zeros in float32 dumps): the changed values are float32 values, so the block is
            // changed in float32 copies, branch-free, and the pass widens them as it widens any float32 block.
            patchFloat32(nb, bb, k, static_cast<float>(eps), nf.data(), bf.data());
            parts.push_back(chunkStats(Operand { DType::Float32, reinterpret_cast<const std::byte*>(nf.data()) },
                                       Operand { DType::Float32, reinterpret_cast<const std::byte*>(bf.data()) }, k, 0,
                                       rel, false));
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
    return combine(parts);
}

} // namespace probescope::compare::kernels
