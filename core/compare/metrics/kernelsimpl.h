// SPDX-License-Identifier: Apache-2.0
// The body of the fused metric pass, compiled twice: kernelsgeneric.cpp (baseline x86-64) and
// kernelsavx2.cpp (-mavx2). Both use the same 4 lanes and no FMA contraction (-ffp-contract=off), so the
// two builds give the same bits and only the speed depends on the CPU.
// Include with PROBESCOPE_KERNEL_NS defined to the namespace of the build.
#include "core/compare/metrics/kernels.h"
#include "core/tensor/dtype.h"

#include <bit>
#include <cmath>
#if defined(__F16C__) || defined(__AVX__)
#include <immintrin.h>
#endif
#include <cstdint>
#include <cstring>
#include <limits>

namespace probescope::compare::kernels::PROBESCOPE_KERNEL_NS {

using tensor::DType;

namespace {

constexpr std::size_t kBlock = 1024; ///< elements widened at a time: 2 x 8 KiB of float64 stays in L1
constexpr int kLanes = 4;

template<typename T>
inline T loadAs(const std::byte* p)
{
    T v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

/// float16 bits to float, branch-free so that the loop vectorises (same values as tensor::halfToFloat).
inline float halfBits(std::uint16_t h)
{
    const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
    const std::uint32_t em = h & 0x7FFFu;
    std::uint32_t bits = (em << 13) + 0x38000000u;      // rebias 15 -> 127
    bits += em >= 0x7C00u ? 0x38000000u : 0u;          // inf / NaN: exponent all ones
    const float sub = static_cast<float>(em) * 5.9604644775390625e-8f; // subnormal: em * 2^-24, exact
    const float magnitude = em < 0x0400u ? sub : std::bit_cast<float>(bits);
    return std::bit_cast<float>(std::bit_cast<std::uint32_t>(magnitude) | sign);
}

template<DType T>
constexpr std::size_t kSize = T == DType::Float64 || T == DType::Int64 ? 8
    : T == DType::Float32 || T == DType::Int32                      ? 4
    : T == DType::Float16 || T == DType::BFloat16 || T == DType::Int16 ? 2
                                                                       : 1;

template<DType T>
void widen(const std::byte* src, std::size_t n, double* out)
{
    std::size_t i = 0;
#ifdef __F16C__
    if constexpr (T == DType::Float16) {
        // The hardware conversion is exact too (only a signalling NaN comes back quiet: still a NaN).
        for (; i + 4 <= n; i += 4) {
            const __m128i halves = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(src + i * 2));
            _mm256_storeu_pd(out + i, _mm256_cvtps_pd(_mm_cvtph_ps(halves)));
        }
    }
#endif
    for (; i < n; ++i) {
        const std::byte* p = src + i * kSize<T>;
        if constexpr (T == DType::Float32)
            out[i] = loadAs<float>(p);
        else if constexpr (T == DType::Float64)
            out[i] = loadAs<double>(p);
        else if constexpr (T == DType::BFloat16)
            out[i] = std::bit_cast<float>(static_cast<std::uint32_t>(loadAs<std::uint16_t>(p)) << 16);
        else if constexpr (T == DType::Float16)
            out[i] = halfBits(loadAs<std::uint16_t>(p));
        else if constexpr (T == DType::Bool)
            out[i] = loadAs<std::uint8_t>(p) != 0 ? 1.0 : 0.0;
        else if constexpr (T == DType::UInt8)
            out[i] = loadAs<std::uint8_t>(p);
        else if constexpr (T == DType::Int8)
            out[i] = loadAs<std::int8_t>(p);
        else if constexpr (T == DType::Int16)
            out[i] = loadAs<std::int16_t>(p);
        else if constexpr (T == DType::Int32)
            out[i] = loadAs<std::int32_t>(p);
        else
            out[i] = static_cast<double>(loadAs<std::int64_t>(p));
    }
}

float roundHalf(float x)
{
    return tensor::halfToFloat(tensor::floatToHalf(x));
}

/// |(n - b) / b| with both operations rounded to R (float16 through float32, which rounds correctly).
template<DType R>
inline double relError(double n, double b)
{
    if constexpr (R == DType::Float64) {
        return std::fabs((n - b) / b);
    } else if constexpr (R == DType::Float32) {
        const float d = static_cast<float>(n) - static_cast<float>(b);
        return std::fabs(static_cast<double>(d / static_cast<float>(b)));
    } else {
        const float d = roundHalf(static_cast<float>(n) - static_cast<float>(b));
        return std::fabs(static_cast<double>(roundHalf(d / static_cast<float>(b))));
    }
}

/// n + eps rounded to E (E = Bool stands for "no eps": n unchanged).
template<DType E>
inline double withEps(double n, double eps)
{
    if constexpr (E == DType::Float64)
        return n + eps;
    else if constexpr (E == DType::Float32)
        return static_cast<float>(n) + static_cast<float>(eps);
    else
        return n;
}

struct Lanes
{
    double s[kLanes] = {};
    double c[kLanes] = {};

    /// Neumaier's step per lane: the compensation catches what each addition loses.
    inline void add(int j, double p)
    {
        const double t = s[j] + p;
        c[j] += std::fabs(s[j]) >= std::fabs(p) ? (s[j] - t) + p : (p - t) + s[j];
        s[j] = t;
    }

    /// The lanes folded in lane order, with compensation.
    Sum fold() const
    {
        Sum out;
        double comp = 0;
        for (int j = 0; j < kLanes; ++j) {
            const double t = out.sum + s[j];
            comp += std::fabs(out.sum) >= std::fabs(s[j]) ? (out.sum - t) + s[j] : (s[j] - t) + out.sum;
            out.sum = t;
            comp += c[j];
        }
        out.compensation = comp;
        return out;
    }
};

struct Accumulators
{
    Lanes dot, nn, bb, dd;
    /// SumOrder::LeftToRight: Σ n·b, Σ n², Σ b², Σ (n - b)², one running sum each, in element order.
    double serial[4] = {};
    double maxAbs[kLanes];
    double maxRel[kLanes];
    std::uint64_t absNan[kLanes] = {};
    std::uint64_t relNan[kLanes] = {};
    std::uint64_t below1[kLanes] = {};
    std::uint64_t below5[kLanes] = {};
    Accumulators()
    {
        for (int j = 0; j < kLanes; ++j)
            maxAbs[j] = maxRel[j] = -std::numeric_limits<double>::infinity();
    }
};

/// Zeroes inf/NaN positions (as msprobe does when both sides have them at the same places) and records
/// what was seen. Only called for blocks that hold a non-finite value.
void fixInvalid(double* n, double* b, std::size_t count, PairStats& out)
{
    for (std::size_t i = 0; i < count; ++i) {
        const bool nf = std::isfinite(n[i]);
        const bool bf = std::isfinite(b[i]);
        if (nf && bf)
            continue;
        out.anyInvalid = true;
        if (std::isinf(n[i]) != std::isinf(b[i]) || std::isnan(n[i]) != std::isnan(b[i]))
            out.masksDiffer = true;
        if (!nf) {
            n[i] = 0;
            b[i] = 0;
        }
    }
}

// GCC vector extensions: 4 float64 lanes, lowered to AVX2 or to SSE2 pairs with the same element-wise
// IEEE operations, so both builds give the same bits (the scalar step below is the same per lane).
typedef double V4d __attribute__((vector_size(32)));
typedef long long V4l __attribute__((vector_size(32)));
typedef float V4f __attribute__((vector_size(16)));

inline V4d vabs(V4d x)
{
    return reinterpret_cast<V4d>(reinterpret_cast<V4l>(x) & 0x7FFFFFFFFFFFFFFFLL);
}

inline V4d load4(const double* p)
{
    V4d v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

/// Each lane rounded to float16 and back (round to nearest even, as numpy's float16 loops).
inline V4f roundHalf4(V4f x)
{
#ifdef __F16C__
    __m128 v;
    std::memcpy(&v, &x, sizeof v);
    const __m128 back = _mm_cvtph_ps(_mm_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT));
    std::memcpy(&x, &back, sizeof x);
#else
    for (int j = 0; j < kLanes; ++j)
        x[j] = roundHalf(x[j]);
#endif
    return x;
}

/// 4 lanes of a compensated sum in registers, loaded from and stored back to Lanes.
struct LaneRegisters
{
    V4d s = {};
    V4d c = {};
    inline void load(const Lanes& lanes)
    {
        std::memcpy(&s, lanes.s, sizeof s);
        std::memcpy(&c, lanes.c, sizeof c);
    }
    inline void store(Lanes& lanes) const
    {
        std::memcpy(lanes.s, &s, sizeof s);
        std::memcpy(lanes.c, &c, sizeof c);
    }
    /// Dekker's Fast2Sum, for when every lane has |s| >= |p| (the caller checks): (s - t) + p is then the exact
    /// rounding error of t = s + p (Neumaier's first branch as it is, and the value TwoSum gives), in 3
    /// additions where Neumaier takes 5 and TwoSum 6.
    inline void addOrdered(V4d p)
    {
        const V4d t = s + p;
        c += (s - t) + p;
        s = t;
    }
};

#ifdef __AVX__
/// Whether addGroup checks for Fast2Sum. Not in the generic build: its 4-lane vectors are SSE2 pairs kept largely in
/// memory, where the check and the branch cost more than the additions they save (measured 6.9 -> 8.1 ns per
/// element pair); it keeps the former step, which gives the same bits.
constexpr bool kCheckedFast2Sum = true;

/// True when every lane of a comparison is true.
inline bool allLanes(V4l m)
{
    __m256d v;
    std::memcpy(&v, &m, sizeof v);
    return _mm256_movemask_pd(v) == 0xF;
}
#else
constexpr bool kCheckedFast2Sum = false;

inline bool allLanes(V4l)
{
    return false;
}
#endif

struct VecSum : LaneRegisters
{
    inline void add(V4d p)
    {
        const V4d t = s + p;
        c += vabs(s) >= vabs(p) ? (s - t) + p : (p - t) + s;
        s = t;
    }
};

/// How the fused loop forms the sums: compensated lanes, SumOrder::LeftToRight's chains, or not at all
/// (FusedPart::OthersOnly).
enum class SumMode
{
    Lanes,
    Serial,
    None,
};

/// SumMode::Serial's four running sums (Σ n·b, Σ n², Σ b², Σ (n - b)²), one chain each, in the lanes of one
/// vector: each element adds its four products with one vector addition (each lane is still its own chain).
struct Chains
{
    V4d sums;
    Chains(double dot, double nn, double bb, double dd) : sums { dot, nn, bb, dd } {}
    /// Back to Accumulators::serial; without Diff Σ (n - b)² is left as it was.
    template<bool Diff>
    void store(double* serial) const
    {
        for (int k = 0; k < (Diff ? 4 : 3); ++k)
            serial[k] = sums[k];
    }
};

/// The products of one group of 4 elements added to the sums: to the chains in element order (Serial) or to
/// the 4 compensated lanes (Lanes); nothing for SumMode::None.
template<bool Diff, SumMode S, typename LaneSum>
inline void addGroup(V4d x, V4d y, V4d d, Chains& chains, LaneSum& dot, LaneSum& nn, LaneSum& bb, LaneSum& dd)
{
    if constexpr (S == SumMode::Serial) {
        const V4d pd = x * y;
        const V4d pn = x * x;
        const V4d pb = y * y;
        const V4d pdd = d * d;
        // The products transposed (column j: element j's four), then added element by element: the same
        // additions in the same order as four scalar chains, with 8 shuffles and 4 additions instead of 12
        // lane extractions and 16 scalar additions.
        const V4d lo01 = __builtin_shufflevector(pd, pn, 0, 4, 2, 6);  // pd0 pn0 pd2 pn2
        const V4d hi01 = __builtin_shufflevector(pd, pn, 1, 5, 3, 7);  // pd1 pn1 pd3 pn3
        const V4d lo23 = __builtin_shufflevector(pb, pdd, 0, 4, 2, 6); // pb0 pdd0 pb2 pdd2
        const V4d hi23 = __builtin_shufflevector(pb, pdd, 1, 5, 3, 7); // pb1 pdd1 pb3 pdd3
        chains.sums += __builtin_shufflevector(lo01, lo23, 0, 1, 4, 5); // element 0
        chains.sums += __builtin_shufflevector(hi01, hi23, 0, 1, 4, 5); // element 1
        chains.sums += __builtin_shufflevector(lo01, lo23, 2, 3, 6, 7); // element 2
        chains.sums += __builtin_shufflevector(hi01, hi23, 2, 3, 6, 7); // element 3
    } else if constexpr (S == SumMode::Lanes) {
        const V4d pd = x * y;
        const V4d pn = x * x;
        const V4d pb = y * y;
        const V4d pdd = d * d;
        // Fast2Sum wherever it is exact: when every lane of every sum has |s| >= |p| before this add, which is
        // almost always once a chunk's first groups are in (Σ n², Σ b², Σ (n - b)² only grow). Its error term is
        // the one LaneSum::add computes (Neumaier: the very same operations; TwoSum: the same value, the exact
        // rounding error — only the sign of a zero error may differ, and c, which starts at +0, never becomes
        // -0, since x + y is -0 only when both are), so c and s evolve bit for bit as with add alone. A lane
        // that fails (|s| < |p|, a NaN) sends the group to add. The squares are never negative (nor -0) and
        // their sums neither, so `s >= p` is `|s| >= |p|` there, NaN included.
        V4l ordered = (vabs(dot.s) >= vabs(pd)) & (nn.s >= pn) & (bb.s >= pb);
        if constexpr (Diff)
            ordered &= dd.s >= pdd;
        if (kCheckedFast2Sum && allLanes(ordered)) [[likely]] {
            dot.addOrdered(pd);
            nn.addOrdered(pn);
            bb.addOrdered(pb);
            if constexpr (Diff)
                dd.addOrdered(pdd);
        } else {
            dot.add(pd);
            nn.add(pn);
            bb.add(pb);
            if constexpr (Diff)
                dd.add(pdd);
        }
    }
}

/// The 4-lane loop over whole groups of 4 for float32/float64 relative errors; returns where it stopped.
/// SumMode::Serial: the products of each group are added to the chains in element order.
template<DType R, DType E, bool Diff, SumMode S>
std::size_t accumulateVector(const double* n, const double* b, std::size_t count, const RelErrRule& rule,
                             Accumulators& a)
{
    Chains chains { a.serial[0], a.serial[1], a.serial[2], a.serial[3] };
    VecSum dot, nn, bb, dd;
    V4d maxAbs, maxRel;
    V4l absNan = {}, relNan = {}, below1 = {}, below5 = {};
    dot.load(a.dot);
    nn.load(a.nn);
    bb.load(a.bb);
    dd.load(a.dd);
    std::memcpy(&maxAbs, a.maxAbs, sizeof maxAbs);
    std::memcpy(&maxRel, a.maxRel, sizeof maxRel);
    const V4d zero = {};
    const V4d npuEps = zero + rule.npuEps;
    const V4d benchAtZero = zero + rule.benchAtZero;
    const V4d one = zero + rule.one;
    const V4d five = zero + rule.five;
    std::size_t i = 0;
    for (; i + kLanes <= count; i += kLanes) {
        const V4d x = load4(n + i);
        const V4d y = load4(b + i);
        const V4d d = x - y;
        addGroup<Diff, S>(x, y, d, chains, dot, nn, bb, dd);
        const V4d ad = vabs(d);
        absNan |= ad != ad;
        maxAbs = ad > maxAbs ? ad : maxAbs;
        const V4l isZero = y == zero;
        V4d xEps = x;
        if constexpr (E == DType::Float64)
            xEps = x + npuEps;
        else if constexpr (E == DType::Float32)
            xEps = __builtin_convertvector(__builtin_convertvector(x, V4f) + __builtin_convertvector(npuEps, V4f), V4d);
        const V4d xe = isZero ? xEps : x;
        const V4d ye = isZero ? benchAtZero : y;
        V4d r;
        if constexpr (R == DType::Float64) {
            r = vabs((xe - ye) / ye);
        } else if constexpr (R == DType::Float16) {
            const V4f yf = __builtin_convertvector(ye, V4f);
            const V4f diff = roundHalf4(__builtin_convertvector(xe, V4f) - yf);
            r = vabs(__builtin_convertvector(roundHalf4(diff / yf), V4d));
        } else {
            const V4f yf = __builtin_convertvector(ye, V4f);
            const V4f q = (__builtin_convertvector(xe, V4f) - yf) / yf;
            r = vabs(__builtin_convertvector(q, V4d));
        }
        relNan |= r != r;
        maxRel = r > maxRel ? r : maxRel;
        below1 -= r < one; // a true comparison is -1
        below5 -= r < five;
    }
    dot.store(a.dot);
    nn.store(a.nn);
    bb.store(a.bb);
    dd.store(a.dd);
    std::memcpy(a.maxAbs, &maxAbs, sizeof maxAbs);
    std::memcpy(a.maxRel, &maxRel, sizeof maxRel);
    chains.store<Diff>(a.serial);
    for (int j = 0; j < kLanes; ++j) {
        a.absNan[j] |= absNan[j] != 0 ? 1u : 0u;
        a.relNan[j] |= relNan[j] != 0 ? 1u : 0u;
        a.below1[j] += static_cast<std::uint64_t>(below1[j]);
        a.below5[j] += static_cast<std::uint64_t>(below5[j]);
    }
    return i;
}

/// 4 float32 elements at p widened to float64 (exact). With AVX one vcvtps2pd from memory: GCC lowers the
/// memcpy + __builtin_convertvector of the generic spelling to two 2-lane conversions through the stack.
inline V4d widen4(const std::byte* p)
{
#ifdef __AVX__
    const __m256d w = _mm256_cvtps_pd(_mm_loadu_ps(reinterpret_cast<const float*>(p)));
    V4d v;
    std::memcpy(&v, &w, sizeof v);
    return v;
#else
    V4f f;
    std::memcpy(&f, p, sizeof f);
    return __builtin_convertvector(f, V4d);
#endif
}

/// a + k·b for k = ±1: the IEEE sum a ± b, bit for bit (k·b is exact and fma rounds once). With FMA it runs on
/// the multiply pipes, which the sums leave idle, instead of the two add pipes that bound the compensated
/// sums. For finite values only: a NaN's payload may travel differently through an fma.
inline V4d sameSum(V4d a, V4d b, double k)
{
#ifdef __FMA__
    __m256d av;
    __m256d bv;
    std::memcpy(&av, &a, sizeof av);
    std::memcpy(&bv, &b, sizeof bv);
    const __m256d r = _mm256_fmadd_pd(bv, _mm256_set1_pd(k), av);
    V4d v;
    std::memcpy(&v, &r, sizeof v);
    return v;
#else
    return k > 0 ? a + b : a - b;
#endif
}

#ifdef __AVX512F__
typedef double V8d __attribute__((vector_size(64)));

inline __m512d asM512(V8d v)
{
    __m512d m;
    std::memcpy(&m, &v, sizeof m);
    return m;
}

inline V8d fromM512(__m512d m)
{
    V8d v;
    std::memcpy(&v, &m, sizeof v);
    return v;
}

/// sameSum on 8 lanes.
inline V8d sameSum(V8d a, V8d b, double k)
{
    return fromM512(_mm512_fmadd_pd(asM512(b), _mm512_set1_pd(k), asM512(a)));
}

#endif

/// Knuth's TwoSum on every lane: s + p into s, its exact rounding error into c (the float32 pass's step; its values
/// are finite).
template<typename V>
inline void twoSum(V& s, V& c, V p)
{
    const V t = s + p;
    const V bp = t - s;
    c += (s - (t - bp)) + (p - bp);
    s = t;
}

/// Dekker's Fast2Sum on every lane, for when every lane has |s| >= |p| (the caller checks), with the error term's two
/// additions on the multiply pipes (sameSum): every value is finite, so the bits are those of the plain additions.
template<typename V>
inline void fast2SumOnFma(V& s, V& c, V p)
{
    const V t = s + p;
    c += sameSum(sameSum(s, t, -1.0), p, 1.0);
    s = t;
}

#ifdef __AVX512F__

/// The AVX-512 build keeps two compensated sums in one 8-lane register (lanes 0-3 the first sum's 4 lanes, 4-7 the
/// second's): Σ n·b beside Σ n², Σ b² beside Σ (n - b)². Each lane is still its own chain with the same operations in
/// the same order, so the bits are those of two LaneRegisters; one instruction does the work of two, which is what
/// the compensated pass is bound by (its additions), and 32 registers hold both pairs and their compensations.
constexpr bool kPairedLanes = true;

inline V8d join(V4d lo, V4d hi)
{
    return __builtin_shufflevector(lo, hi, 0, 1, 2, 3, 4, 5, 6, 7);
}

struct PairedLanes
{
    V8d s = {};
    V8d c = {};
    void load(const Lanes& lo, const Lanes& hi)
    {
        s = join(load4(lo.s), load4(hi.s));
        c = join(load4(lo.c), load4(hi.c));
    }
    /// The halves as values: taking the registers' address would keep them in memory for the whole pass (the ptdbg
    /// pass's empty asm with its memory clobber then stores and reloads them every iteration).
    void store(Lanes& lo, Lanes& hi) const
    {
        const V4d sums[4] = { __builtin_shufflevector(s, s, 0, 1, 2, 3), __builtin_shufflevector(s, s, 4, 5, 6, 7),
                              __builtin_shufflevector(c, c, 0, 1, 2, 3), __builtin_shufflevector(c, c, 4, 5, 6, 7) };
        std::memcpy(lo.s, &sums[0], sizeof lo.s);
        std::memcpy(hi.s, &sums[1], sizeof hi.s);
        std::memcpy(lo.c, &sums[2], sizeof lo.c);
        std::memcpy(hi.c, &sums[3], sizeof hi.c);
    }
    inline void add(V8d p) { twoSum(s, c, p); }
    inline void addOrdered(V8d p) { fast2SumOnFma(s, c, p); }
};

/// addGroup's compensated lanes on PairedLanes: {Σ n·b | Σ n²} and {Σ b² | Σ (n - b)²} (without Diff the second
/// half adds +0, which leaves it as it is and always passes the check). The check is addGroup's: every lane has
/// |s| >= |p| (for the sums of squares |x| is x).
template<bool Diff>
inline void addGroupPaired(V4d x, V4d y, V4d d, PairedLanes& dotNn, PairedLanes& bbDd)
{
    const V8d pDotNn = join(x, x) * join(y, x);
    const V4d dd = Diff ? d : V4d {};
    const V8d bd = join(y, dd);
    const V8d pBbDd = bd * bd;
    const __mmask8 first = _mm512_cmp_pd_mask(_mm512_abs_pd(asM512(dotNn.s)), _mm512_abs_pd(asM512(pDotNn)), _CMP_GE_OQ);
    const __mmask8 second = _mm512_cmp_pd_mask(asM512(bbDd.s), asM512(pBbDd), _CMP_GE_OQ);
    if ((first & second) == 0xFF) [[likely]] {
        dotNn.addOrdered(pDotNn);
        bbDd.addOrdered(pBbDd);
    } else {
        dotNn.add(pDotNn);
        bbDd.add(pBbDd);
    }
}
#else
constexpr bool kPairedLanes = false;
#endif

typedef float V8f __attribute__((vector_size(32)));
typedef int V8i __attribute__((vector_size(32)));

/// True when no float32 element of either array is inf or NaN (exponent bits all ones), on the raw bits.
inline bool allFiniteFloat32(const std::byte* n, const std::byte* b, std::size_t count)
{
    const V8i expMask = V8i {} + 0x7F800000;
    V8i bad = {};
    std::size_t i = 0;
    for (; i + 8 <= count; i += 8) {
        V8i x;
        V8i y;
        std::memcpy(&x, n + i * 4, sizeof x);
        std::memcpy(&y, b + i * 4, sizeof y);
        bad |= ((x & expMask) == expMask) | ((y & expMask) == expMask);
    }
    bool any = false;
    for (int j = 0; j < 8; ++j)
        any = any || bad[j] != 0;
    for (; i < count; ++i)
        any = any || !std::isfinite(loadAs<float>(n + i * 4)) || !std::isfinite(loadAs<float>(b + i * 4));
    return !any;
}

/// The fused pass for two float32 arrays with no inf/NaN whose relative error is taken in float32 (the
/// common case): the elements are read where they lie (no float64 copy), the relative errors run on 8 float32
/// lanes, and the float64 sums see the very same products in the very same lanes and order as
/// accumulateVector. The compensation uses Knuth's TwoSum instead of Neumaier's branch: both give the exact
/// rounding error of each addition (float32 products cannot overflow float64), so the bits are the same.
/// Returns how many elements it took (a multiple of 8; the caller runs the rest through the float64 path).
template<DType E, bool Diff, SumMode S, bool Patch = false>
std::size_t accumulateFloat32(const std::byte* npu, const std::byte* bench, std::size_t count, const RelErrRule& rule,
                              Accumulators& a)
{
    struct TwoSum : LaneRegisters
    {
        inline void add(V4d p) { twoSum(s, c, p); }
        /// LaneRegisters::addOrdered with (s - t) + p on the multiply pipes.
        inline void addOrdered(V4d p) { fast2SumOnFma(s, c, p); }
    };
    Chains chains { a.serial[0], a.serial[1], a.serial[2], a.serial[3] };
    TwoSum dot, nn, bb, dd;
    constexpr bool paired = S == SumMode::Lanes && kPairedLanes;
#ifdef __AVX512F__
    PairedLanes dotNn, bbDd;
    if constexpr (paired) {
        dotNn.load(a.dot, a.nn);
        bbDd.load(a.bb, a.dd);
    }
#endif
    V4d maxAbs;
    V8f maxRel = V8f {} - std::numeric_limits<float>::infinity();
    V8i relNan = {}, below1 = {}, below5 = {};
    dot.load(a.dot);
    nn.load(a.nn);
    bb.load(a.bb);
    dd.load(a.dd);
    std::memcpy(&maxAbs, a.maxAbs, sizeof maxAbs);
    const V8f zero = {};
    const V8f npuEps = zero + static_cast<float>(rule.npuEps);
    const V8f benchAtZero = zero + static_cast<float>(rule.benchAtZero);
    const V8f one = zero + static_cast<float>(rule.one);
    const V8f five = zero + static_cast<float>(rule.five);
    const V8f patchEps = zero + rule.zeroBenchEps;
    // Patch: RelErrRule::zeroBenchEps, as patchWidened below. Each group is changed two iterations ahead and stored
    // into a ring of four slots, then widened from there (vcvtps2pd from memory). Widened straight from the
    // registers (an extract per half) the sums waited on the load, the change and the extract in every iteration;
    // one iteration ahead they still waited on the store's forwarding. probescope-benchkernels (tests/bench), one
    // chunk in L2: 0.93 ns per pair from registers, 0.80 one ahead, 0.78 two ahead, 0.77 for the same pass with
    // the sums fed the unchanged elements (wrong, the bound). The empty asm keeps GCC from forwarding the stores in
    // registers (which brings the extracts back).
    alignas(32) float stage[4][16];
    auto stagePatched = [&](std::size_t at, float* slot) {
        V8f xv;
        V8f yv;
        std::memcpy(&xv, npu + at * 4, sizeof xv);
        std::memcpy(&yv, bench + at * 4, sizeof yv);
        const V8i z = yv == zero;
        xv = z ? xv + patchEps : xv;
        yv = z ? patchEps : yv;
        std::memcpy(slot, &xv, sizeof xv);
        std::memcpy(slot + 8, &yv, sizeof yv);
    };
    if constexpr (Patch) {
        if (count >= 8)
            stagePatched(0, stage[0]);
        if (count >= 16)
            stagePatched(8, stage[1]);
    }
    std::size_t i = 0;
    for (; i + 8 <= count; i += 8) {
        V8f xf;
        V8f yf;
        V4d x0, x1, y0, y1;
        if constexpr (Patch) {
            const float* now = stage[(i / 8) % 4];
            // Near the end a group stages itself again (into a slot no iteration reads): no read past the arrays.
            stagePatched(i + 24 <= count ? i + 16 : i, stage[(i / 8 + 2) % 4]);
            asm volatile("" : : "r"(stage) : "memory");
            std::memcpy(&xf, now, sizeof xf);
            std::memcpy(&yf, now + 8, sizeof yf);
            x0 = widen4(reinterpret_cast<const std::byte*>(now));
            x1 = widen4(reinterpret_cast<const std::byte*>(now + 4));
            y0 = widen4(reinterpret_cast<const std::byte*>(now + 8));
            y1 = widen4(reinterpret_cast<const std::byte*>(now + 12));
        } else {
            std::memcpy(&xf, npu + i * 4, sizeof xf);
            std::memcpy(&yf, bench + i * 4, sizeof yf);
            x0 = widen4(npu + i * 4);
            x1 = widen4(npu + i * 4 + 16);
            y0 = widen4(bench + i * 4);
            y1 = widen4(bench + i * 4 + 16);
        }
        const V4d d0 = x0 - y0;
        const V4d d1 = x1 - y1;
#ifdef __AVX512F__
        if constexpr (paired) {
            addGroupPaired<Diff>(x0, y0, d0, dotNn, bbDd); // elements i .. i+3, then i+4 .. i+7
            addGroupPaired<Diff>(x1, y1, d1, dotNn, bbDd);
        } else
#endif
        {
            addGroup<Diff, S>(x0, y0, d0, chains, dot, nn, bb, dd); // elements i .. i+3, then i+4 .. i+7
            addGroup<Diff, S>(x1, y1, d1, chains, dot, nn, bb, dd);
        }
        // Finite inputs: |n - b| is never NaN, and max is order-free.
        const V4d ad0 = vabs(d0);
        const V4d ad1 = vabs(d1);
        maxAbs = ad0 > maxAbs ? ad0 : maxAbs;
        maxAbs = ad1 > maxAbs ? ad1 : maxAbs;
        V8f xe = xf;
        V8f ye = yf;
        if constexpr (!Patch) {
            const V8i isZero = yf == zero;
            if constexpr (E == DType::Float32)
                xe = isZero ? xf + npuEps : xf;
            ye = isZero ? benchAtZero : yf;
        }
        const V8f q = (xe - ye) / ye;
        const V8f r = reinterpret_cast<V8f>(reinterpret_cast<V8i>(q) & 0x7FFFFFFF);
        // Patched, no bench element is ±0 and every element is finite: (n - b) / b is never NaN.
        if constexpr (!Patch)
            relNan |= r != r;
        maxRel = r > maxRel ? r : maxRel;
        below1 -= r < one;
        below5 -= r < five;
    }
    if constexpr (paired) {
#ifdef __AVX512F__
        Lanes unusedDd;
        dotNn.store(a.dot, a.nn);
        bbDd.store(a.bb, Diff ? a.dd : unusedDd);
#endif
    } else {
        dot.store(a.dot);
        nn.store(a.nn);
        bb.store(a.bb);
        dd.store(a.dd);
    }
    std::memcpy(a.maxAbs, &maxAbs, sizeof maxAbs);
    chains.store<Diff>(a.serial);
    // Copied out whole: indexing the vectors themselves makes them memory for the whole pass, which the ptdbg pass's
    // memory clobber then stores and reloads every iteration (the other passes run as fast either way).
    int nanOut[8], below1Out[8], below5Out[8];
    float maxRelOut[8];
    std::memcpy(nanOut, &relNan, sizeof nanOut);
    std::memcpy(below1Out, &below1, sizeof below1Out);
    std::memcpy(below5Out, &below5, sizeof below5Out);
    std::memcpy(maxRelOut, &maxRel, sizeof maxRelOut);
    for (int j = 0; j < 8; ++j) {
        const int lane = j % kLanes; // counts and maxima are order-free: any lane will do
        a.relNan[lane] |= nanOut[j] != 0 ? 1u : 0u;
        const double r = maxRelOut[j];
        a.maxRel[lane] = r > a.maxRel[lane] ? r : a.maxRel[lane];
        a.below1[lane] += static_cast<std::uint64_t>(below1Out[j]);
        a.below5[lane] += static_cast<std::uint64_t>(below5Out[j]);
    }
    return i;
}

/// RelErrRule::zeroBenchEps on widened float32 elements: where b is ±0, b = eps and n = float(n) + eps in float32 (n
/// holds a float32 value exactly). Before the inf/NaN repair, as ptdbg changes the arrays before anything else.
void patchWidened(double* n, double* b, std::size_t count, float eps)
{
    for (std::size_t i = 0; i < count; ++i) {
        if (b[i] != 0)
            continue;
        b[i] = eps;
        n[i] = static_cast<float>(n[i]) + eps;
    }
}

/// True when no element of either array is inf or NaN (both fail `|x| <= max`).
inline bool allFinite(const double* n, const double* b, std::size_t count)
{
    const V4d largest = V4d {} + std::numeric_limits<double>::max();
    V4l ok = V4l {} - 1;
    std::size_t i = 0;
    for (; i + kLanes <= count; i += kLanes)
        ok &= (vabs(load4(n + i)) <= largest) & (vabs(load4(b + i)) <= largest);
    bool all = (ok[0] & ok[1] & ok[2] & ok[3]) != 0;
    for (; i < count; ++i)
        all = all && std::fabs(n[i]) <= std::numeric_limits<double>::max() && std::fabs(b[i]) <= std::numeric_limits<double>::max();
    return all;
}

template<DType R, DType E, bool Diff, SumMode S>
void accumulate(const double* n, const double* b, std::size_t count, const RelErrRule& rule, Accumulators& a)
{
    const double npuEps = rule.npuEps;
    const double benchAtZero = rule.benchAtZero;
    const double one = rule.one;
    const double five = rule.five;
    std::size_t i = 0;
    // Element i goes to lane i % 4 whatever the CPU, so the sums do not depend on the build.
    auto step = [&](int j, double x, double y) {
        const double d = x - y;
        if constexpr (S == SumMode::Serial) {
            a.serial[0] += x * y;
            a.serial[1] += x * x;
            a.serial[2] += y * y;
            if constexpr (Diff)
                a.serial[3] += d * d;
        } else if constexpr (S == SumMode::Lanes) {
            a.dot.add(j, x * y);
            a.nn.add(j, x * x);
            a.bb.add(j, y * y);
            if constexpr (Diff)
                a.dd.add(j, d * d);
        }
        const double ad = std::fabs(d);
        a.absNan[j] |= ad != ad ? 1u : 0u;
        a.maxAbs[j] = ad > a.maxAbs[j] ? ad : a.maxAbs[j];
        const bool zero = y == 0;
        const double xe = zero ? withEps<E>(x, npuEps) : x;
        const double ye = zero ? benchAtZero : y;
        const double r = relError<R>(xe, ye);
        a.relNan[j] |= r != r ? 1u : 0u;
        a.maxRel[j] = r > a.maxRel[j] ? r : a.maxRel[j];
        a.below1[j] += r < one ? 1u : 0u;
        a.below5[j] += r < five ? 1u : 0u;
    };
    i = accumulateVector<R, E, Diff, S>(n, b, count, rule, a);
    for (; i < count; ++i)
        step(static_cast<int>(i % kLanes), n[i], b[i]);
}

using Float32Fn = std::size_t (*)(const std::byte*, const std::byte*, std::size_t, const RelErrRule&, Accumulators&);

/// The float32 fast pass for this rule and mode, or nullptr when it does not apply (see accumulateFloat32).
Float32Fn float32PassFor(DType npuType, DType benchType, const RelErrRule& rule, bool diff, SumMode mode)
{
    if (npuType != DType::Float32 || benchType != DType::Float32 || rule.compute != DType::Float32
        || float64PassForced())
        return nullptr;
    const bool eps = rule.npuEps != 0;
    if (rule.zeroBenchEps != 0) // ptdbg's compensated pass only; anything else takes the float64 path's patch
        return mode == SumMode::Lanes && !diff && !eps ? accumulateFloat32<DType::Bool, false, SumMode::Lanes, true>
                                                       : nullptr;
    if (eps && rule.npuEpsType != DType::Float32)
        return nullptr;
    switch (mode) {
    case SumMode::Serial:
        if (eps)
            return diff ? accumulateFloat32<DType::Float32, true, SumMode::Serial>
                        : accumulateFloat32<DType::Float32, false, SumMode::Serial>;
        return diff ? accumulateFloat32<DType::Bool, true, SumMode::Serial>
                    : accumulateFloat32<DType::Bool, false, SumMode::Serial>;
    case SumMode::None:
        return eps ? accumulateFloat32<DType::Float32, false, SumMode::None>
                   : accumulateFloat32<DType::Bool, false, SumMode::None>;
    default:
        if (eps)
            return diff ? accumulateFloat32<DType::Float32, true, SumMode::Lanes>
                        : accumulateFloat32<DType::Float32, false, SumMode::Lanes>;
        return diff ? accumulateFloat32<DType::Bool, true, SumMode::Lanes>
                    : accumulateFloat32<DType::Bool, false, SumMode::Lanes>;
    }
}

using WidenFn = void (*)(const std::byte*, std::size_t, double*);

WidenFn widenFor(DType t)
{
    switch (t) {
    case DType::Bool:
        return widen<DType::Bool>;
    case DType::UInt8:
        return widen<DType::UInt8>;
    case DType::Int8:
        return widen<DType::Int8>;
    case DType::Int16:
        return widen<DType::Int16>;
    case DType::Int32:
        return widen<DType::Int32>;
    case DType::Int64:
        return widen<DType::Int64>;
    case DType::Float16:
        return widen<DType::Float16>;
    case DType::BFloat16:
        return widen<DType::BFloat16>;
    case DType::Float32:
        return widen<DType::Float32>;
    case DType::Float64:
        return widen<DType::Float64>;
    }
    return widen<DType::Float32>;
}

using AccumulateFn = void (*)(const double*, const double*, std::size_t, const RelErrRule&, Accumulators&);

template<DType R, DType E>
AccumulateFn accumulateFor(bool diff, SumMode mode)
{
    switch (mode) {
    case SumMode::Serial:
        return diff ? accumulate<R, E, true, SumMode::Serial> : accumulate<R, E, false, SumMode::Serial>;
    case SumMode::None:
        return accumulate<R, E, false, SumMode::None>;
    default:
        return diff ? accumulate<R, E, true, SumMode::Lanes> : accumulate<R, E, false, SumMode::Lanes>;
    }
}

template<DType R>
AccumulateFn accumulateFor(const RelErrRule& rule, bool diff, SumMode mode)
{
    if (rule.npuEps == 0)
        return accumulateFor<R, DType::Bool>(diff, mode);
    if (rule.npuEpsType == DType::Float64)
        return accumulateFor<R, DType::Float64>(diff, mode);
    return accumulateFor<R, DType::Float32>(diff, mode);
}

AccumulateFn accumulateFor(const RelErrRule& rule, bool diff, SumMode mode)
{
    switch (rule.compute) {
    case DType::Float16:
        return accumulateFor<DType::Float16>(rule, diff, mode);
    case DType::Float64:
        return accumulateFor<DType::Float64>(rule, diff, mode);
    default:
        return accumulateFor<DType::Float32>(rule, diff, mode);
    }
}

/// FusedPart::SumsOnly: the left-to-right chains alone (the same products, added in the same order as the
/// SumMode::Serial loop, so the bits are the same).
template<bool Diff>
void serialSums(const double* n, const double* b, std::size_t count, double* sums)
{
    double dot = sums[0];
    double nn = sums[1];
    double bb = sums[2];
    double dd = sums[3];
    for (std::size_t i = 0; i < count; ++i) {
        const double x = n[i];
        const double y = b[i];
        dot += x * y;
        nn += x * x;
        bb += y * y;
        if constexpr (Diff) {
            const double d = x - y;
            dd += d * d;
        }
    }
    sums[0] = dot;
    sums[1] = nn;
    sums[2] = bb;
    sums[3] = dd;
}

} // namespace

void toFloat64(DType dtype, const std::byte* source, std::size_t count, double* out)
{
    widenFor(dtype)(source, count, out);
}

/// The fused pass over `count` elements of two in-memory arrays; with SumOrder::LeftToRight the sums go on
/// from carry's.
PairStats fusedStats(DType npuType, const std::byte* npu, DType benchType, const std::byte* bench,
                     std::size_t count, const RelErrRule& rule, bool wantDiffSq, SumOrder order,
                     const PairStats& carry, FusedPart part)
{
    const bool serial = order == SumOrder::LeftToRight && part != FusedPart::OthersOnly;
    const WidenFn widenNpu = widenFor(npuType);
    const WidenFn widenBench = widenFor(benchType);
    const SumMode mode = part == FusedPart::OthersOnly ? SumMode::None
        : serial                                        ? SumMode::Serial
                                                        : SumMode::Lanes;
    const AccumulateFn run = accumulateFor(rule, wantDiffSq, mode);
    const bool sumsOnly = serial && part == FusedPart::SumsOnly;
    const Float32Fn float32Pass = sumsOnly ? nullptr : float32PassFor(npuType, benchType, rule, wantDiffSq, mode);
    const std::size_t npuSize = tensor::dtypeSize(npuType);
    const std::size_t benchSize = tensor::dtypeSize(benchType);
    alignas(64) double n[kBlock];
    alignas(64) double b[kBlock];
    Accumulators acc;
    if (serial) {
        acc.serial[0] = carry.dot.sum;
        acc.serial[1] = carry.npuSq.sum;
        acc.serial[2] = carry.benchSq.sum;
        acc.serial[3] = carry.diffSq.sum;
    }
    PairStats out;
    for (std::size_t first = 0; first < count; first += kBlock) {
        const std::size_t m = count - first < kBlock ? count - first : kBlock;
        if (float32Pass && allFiniteFloat32(npu + first * 4, bench + first * 4, m)) {
            // Whole groups of 8 straight from the float32 elements; the rest (the chunk's last block only)
            // through the float64 path below, in the same lanes (8 is a multiple of the 4 lanes).
            const std::size_t done = float32Pass(npu + first * 4, bench + first * 4, m, rule, acc);
            if (done < m) {
                widenNpu(npu + (first + done) * 4, m - done, n);
                widenBench(bench + (first + done) * 4, m - done, b);
                if (rule.zeroBenchEps != 0)
                    patchWidened(n, b, m - done, rule.zeroBenchEps);
                run(n, b, m - done, rule, acc);
            }
            continue;
        }
        widenNpu(npu + first * npuSize, m, n);
        widenBench(bench + first * benchSize, m, b);
        if (rule.zeroBenchEps != 0)
            patchWidened(n, b, m, rule.zeroBenchEps);
        // inf and NaN fail `|x| <= max`; the test is vectorised, the repair is not (it is rare).
        if (!allFinite(n, b, m))
            fixInvalid(n, b, m, out);
        if (!sumsOnly)
            run(n, b, m, rule, acc);
        else if (wantDiffSq)
            serialSums<true>(n, b, m, acc.serial);
        else
            serialSums<false>(n, b, m, acc.serial);
    }
    if (serial) {
        out.dot.sum = acc.serial[0];
        out.npuSq.sum = acc.serial[1];
        out.benchSq.sum = acc.serial[2];
        out.diffSq.sum = acc.serial[3];
    } else {
        out.dot = acc.dot.fold();
        out.npuSq = acc.nn.fold();
        out.benchSq = acc.bb.fold();
        out.diffSq = acc.dd.fold();
    }
    for (int j = 0; j < kLanes; ++j) {
        out.absNan = out.absNan || acc.absNan[j] != 0;
        out.relNan = out.relNan || acc.relNan[j] != 0;
        out.maxAbs = acc.maxAbs[j] > out.maxAbs ? acc.maxAbs[j] : out.maxAbs;
        out.maxRel = acc.maxRel[j] > out.maxRel ? acc.maxRel[j] : out.maxRel;
        out.belowOne += acc.below1[j];
        out.belowFive += acc.below5[j];
    }
    return out;
}

} // namespace probescope::compare::kernels::PROBESCOPE_KERNEL_NS
