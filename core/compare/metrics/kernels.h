// SPDX-License-Identifier: Apache-2.0
#pragma once
// The real-data metric kernels shared by every compare profile: one fused pass over an NPU/bench pair of
// element arrays gives the dot products of the cosine, EucDist's sum of squares, MaxAbsErr, MaxRelErr, the
// thousandth ratios and the inf/nan checks; plain sums in the order a profile's reference tool uses
// (SumOrder, pairwiseSum). See docs/compare-performance.md for the design, the order decisions and figures.

#include "core/tensor/dtype.h"
#include "core/util/workgroup.h"

#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

namespace probescope {
class MappedFile;
} // namespace probescope

namespace probescope::compare::kernels {

/**
 * @brief Where one side's elements are: in memory, or in a file at a byte offset (read with pread, one
 * chunk at a time, into a reused buffer: nothing is zero-filled and nothing larger than a chunk is held).
 * Memory may be a file's mapping: the kernels then check it after their pass and report a file cut short under
 * the map as a failed read (ioFailed), as pread's short read.
 */
struct Operand
{
    tensor::DType dtype = tensor::DType::Float32;
    const std::byte* memory = nullptr; ///< the elements, when in memory
    int fd = -1;                       ///< else this file (not owned), from fileOffset
    std::uint64_t fileOffset = 0;
    const MappedFile* mapping = nullptr; ///< the mapping `memory` points into, if any (not owned)
};

/**
 * @brief How one element pair's relative error |(n - b) / b| is formed; the profiles differ only here.
 *
 * At a bench zero, n becomes n + npuEps rounded to npuEpsType (npuEps 0: n unchanged) and b becomes
 * benchAtZero; then the difference and the quotient are rounded to `compute`, as numpy computes them in
 * the arrays' common type. msprobe 1.2: ruleMsprobe12(); msprobe 26: compute = float32 or float64, both
 * eps the type's own (npuEpsType = compute, npuEps = benchAtZero = finfo(compute).eps).
 */
struct RelErrRule
{
    tensor::DType compute = tensor::DType::Float32; ///< Float16, Float32 or Float64
    tensor::DType npuEpsType = tensor::DType::Float32; ///< Float32 or Float64 (ignored when npuEps is 0)
    double npuEps = 0;
    double benchAtZero = 0;
    double one = 0.001; ///< thresholds as numpy compares them (already rounded to `compute`)
    double five = 0.005;
    /// ptdbg's float32 pairs (0 = none): where the bench element is ±0 it becomes this, and the NPU element gets it
    /// added in float32, before anything else (numpy's in-place change of both arrays), fused into the pass.
    float zeroBenchEps = 0;
};

/// msprobe 1.2.2's rule for arrays of the loaded types npu and bench (bfloat16 already counted as float32).
RelErrRule ruleMsprobe12(tensor::DType npu, tensor::DType bench);

/**
 * @brief msprobe 26.0.0's rule (compare-spec §5.3): a side that is not float16/32/64 (after bfloat16 became
 * float32) is cast to float64; T = result_type(npu, bench, float32), so float32 unless a side is float64;
 * T's own epsilon is added to both sides at bench zeros, and the thresholds are compared in T.
 */
RelErrRule ruleMsprobe26(tensor::DType npu, tensor::DType bench);

/**
 * @brief In which order the sums Σ n·b, Σ n², Σ b², Σ (n - b)² of a pair are formed (docs/compare-performance.md,
 * "Summation order"). Both give the same result for any thread count.
 */
enum class SumOrder
{
    /// 4 lanes with Neumaier compensation inside fixed chunks, the chunks combined in chunk order: the most
    /// accurate, and chunks can run on idle threads (msprobe 1.2 profile).
    Compensated,
    /// One float64 running sum per quantity, strictly in element order, no compensation: what the reference
    /// BLAS ddot under Debian's numpy computes for `x.dot(y)` and `np.linalg.norm(x)` (msprobe 26's Cosine and
    /// EucDist, exact to the last digit). A pair is one chain: its chunks are read in order on one thread.
    LeftToRight,
};

/// A compensated sum: the result is sum + compensation.
struct Sum
{
    double sum = 0;
    double compensation = 0;
    double value() const { return sum + compensation; }
};

/// What one chunk (or a whole pair, once chunks are combined) gives.
struct PairStats
{
    /// The sums; with SumOrder::LeftToRight the running sums up to the chunk's end (compensation 0).
    Sum dot;      ///< Σ n·b, on float64 values
    Sum npuSq;    ///< Σ n²
    Sum benchSq;  ///< Σ b²
    Sum diffSq;   ///< Σ (n - b)², when asked for (EucDist)
    double maxAbs = -std::numeric_limits<double>::infinity(); ///< max |n - b| in float64
    double maxRel = -std::numeric_limits<double>::infinity(); ///< max of the relative errors
    bool absNan = false; ///< a NaN among |n - b| (max is then NaN, as np.max)
    bool relNan = false;
    std::uint64_t belowOne = 0; ///< relative errors < rule.one (NaN counts as not below)
    std::uint64_t belowFive = 0;
    bool anyInvalid = false;  ///< an inf or NaN on either side
    bool masksDiffer = false; ///< inf/NaN positions or kinds differ between the sides
    bool ioFailed = false;    ///< a file read failed or came short
};

/// Elements per chunk: fixed, so chunk boundaries (and so every sum) do not depend on the thread count.
constexpr std::uint64_t kChunkElements = std::uint64_t { 1 } << 16;

/// From this many chunks (4 Mi elements, 16 MB of float32) a left-to-right pair lets idle threads help: a
/// helped chunk is read and widened twice, which pays only when a thread would otherwise wait.
constexpr std::uint64_t kLeftToRightSplitChunks = 64;

/**
 * @brief Stats of elements [chunk·kChunkElements, …) of a pair of `count` elements each.
 *
 * Positions where either side is inf or NaN are handled as msprobe does when the masks agree: both
 * values count as 0 (anyInvalid and masksDiffer report what was seen; with masksDiffer the other
 * figures are meaningless). Each block of the chunk is converted to float64 once, in bulk, then one
 * pass computes everything with 4-lane compensated sums, vectorised (AVX2 where the CPU has it; the
 * generic build has the same lanes and no FMA contraction, so both give the same bits).
 */
PairStats chunkStats(const Operand& npu, const Operand& bench, std::uint64_t count, std::uint64_t chunk,
                     const RelErrRule& rule, bool wantDiffSq);

/**
 * @brief chunkStats in a given order. With SumOrder::LeftToRight the sums continue from `carry`'s sums (the
 * previous chunk's result; nullptr for chunk 0), so chunks must be computed one after the other.
 */
PairStats chunkStats(const Operand& npu, const Operand& bench, std::uint64_t count, std::uint64_t chunk,
                     const RelErrRule& rule, bool wantDiffSq, SumOrder order, const PairStats* carry);

/// Which figures one fused pass computes. All but the kernels' own left-to-right split use All: there the
/// chain takes SumsOnly where an idle thread took OthersOnly (max, counts, masks) of the same chunk.
enum class FusedPart
{
    All,
    SumsOnly,
    OthersOnly,
};

/// chunkStats computing only `part` (SumsOnly: the sums, left to right only; OthersOnly: no sums).
PairStats chunkStats(const Operand& npu, const Operand& bench, std::uint64_t count, std::uint64_t chunk,
                     const RelErrRule& rule, bool wantDiffSq, SumOrder order, const PairStats* carry, FusedPart part);

/// Combines chunk results in chunk order (the sums with compensation).
PairStats combine(const std::vector<PairStats>& chunks);

/**
 * @brief chunkStats over the whole pair, the chunks handed to `splitter` (every idle thread helps) and
 * combined in chunk order: the result is the same for any thread count.
 */
PairStats pairStats(const Operand& npu, const Operand& bench, std::uint64_t count, const RelErrRule& rule,
                    bool wantDiffSq, Splitter& splitter);

/**
 * @brief pairStats in a given order.
 *
 * SumOrder::LeftToRight: a left-to-right sum is one chain that no split reproduces, so one thread runs it
 * through the chunks in order. On a pair of kLeftToRightSplitChunks chunks or more, idle threads take chunks
 * from the end and compute everything but the sums there (FusedPart::OthersOnly); the chain then adds those
 * chunks' products only (SumsOnly) and the figures merge exactly (max, counts, flags), so the result is the
 * same for any thread count. Smaller pairs run on one thread; pairs still run side by side on -j threads.
 */
PairStats pairStats(const Operand& npu, const Operand& bench, std::uint64_t count, const RelErrRule& rule,
                    bool wantDiffSq, Splitter& splitter, SumOrder order);

/// The type a plain sum accumulates in: numpy sums a float32 (or float16) array in float32, a float64 one in
/// float64 (`np.sum(x, dtype=np.float64)` asks for float64 on any array).
enum class Accumulate
{
    Float64,
    Float32,
};

/**
 * @brief Σ of `count` elements in numpy's order (np.add.reduce of a contiguous 1-d array, umath
 * loops_utils.h.src): below 8 elements left to right from 0; up to 128 eight interleaved accumulators
 * folded as ((r0+r1)+(r2+r3))+((r4+r5)+(r6+r7)), then the rest left to right; above 128 the two halves
 * [0, n2) and [n2, n) with n2 = n/2 rounded down to a multiple of 8, summed recursively and added.
 *
 * Every element is first converted to `acc` (float16/bfloat16 exactly; float64 to float32 rounds, as numpy's
 * cast does). `block` > 0 models numpy's buffered reduction, used when the sum needs a cast (e.g.
 * `np.sum(f32, dtype=np.float64)`: `np.getbufsize()` = 8192 elements at a time): each block is summed
 * pairwise and added to a running total left to right; 0 = one block (no cast; a float16 array is also one
 * block, summed in float32: the caller rounds the result to float16 as numpy does). Operands in a file are read in pieces that follow
 * the recursion, so the result is the one of the array in memory. The two halves of a large range are
 * handed to `splitter`; the tree is fixed by `count`, so the result does not depend on the thread count.
 * ioFailed (if given) is set when a file read fails.
 */
double pairwiseSum(const Operand& values, std::uint64_t count, Accumulate acc, Splitter& splitter,
                   std::uint64_t block = 0, bool* ioFailed = nullptr);

/// Σ of `count` elements strictly left to right from 0, accumulated in `acc` (each element converted to it).
double leftToRightSum(const Operand& values, std::uint64_t count, Accumulate acc, bool* ioFailed = nullptr);

/**
 * @brief Plain sequential Σ n·b, Σ n², Σ b², Σ (n - b)² with inf/NaN positions zeroed: the fallback when a
 * compensated sum overflows (compensation would turn inf into NaN; a plain sum gives inf as BLAS does).
 */
void plainSums(const Operand& npu, const Operand& bench, std::uint64_t count, double& dot, double& npuSq,
               double& benchSq, double& diffSq);

/// Tests and benchmarks: run the baseline x86-64 build of the kernels even where AVX2 is there.
void forceGenericKernels(bool generic);
/// Which build of the kernels runs: the best the CPU has (AVX-512 for the compensated lanes, else AVX2, else the
/// baseline), or at most AVX2, or the baseline. Every build gives the same bits.
enum class KernelBuild
{
    Best,
    Avx2,
    Generic,
};
/// Tests and benchmarks: run at most `build` (forceGenericKernels(true) is KernelBuild::Generic).
void forceKernelBuild(KernelBuild build);
/// True when the AVX2 build of the kernels runs.
bool usingAvx2Kernels();
/// True when the AVX-512 build runs the compensated lanes.
bool usingAvx512Kernels();
/// Tests: widen float32 pairs to float64 as every other pair is (no float32 pass); the bits must be the same.
void forceFloat64Pass(bool on);
bool float64PassForced();

/// Widens `count` elements of `dtype` to float64 (bool as 0/1, float16/bfloat16 exactly), in bulk.
void toFloat64(tensor::DType dtype, const std::byte* source, std::size_t count, double* out);

// =====================================================================================================
// ptdbg 6.0 (h-kptdbg): the ptdbg profile's pass on top of the kernels above. Kept apart on purpose (the
// kernels above are shared with the summation-order work); it only calls chunkStats and combine.
// =====================================================================================================

/**
 * @brief ptdbg 6.0's compare_by_op changes its arrays before any metric: where the bench is 0, the bench
 * becomes its type's eps and the NPU n + that eps (in the NPU's own type, in place); Cosine, MaxAbsErr and the
 * inf/NaN check then see the changed arrays and the relative error is taken in the arrays' common type with
 * inf/NaN positions still in it (so NaN). An integer bench is not changed (numpy copies it to float64 first).
 */
struct PtdbgRule
{
    bool benchFloat = true;                     ///< false: integer or bool bench, msprobe-like float64 rule
    tensor::DType benchType = tensor::DType::Float32; ///< Float16, Float32 or Float64 when benchFloat
    tensor::DType npuType = tensor::DType::Float32;   ///< the NPU array's type (an integer NPU adds in float64)
    tensor::DType compute = tensor::DType::Float32;   ///< the relative error's type (Float16, Float32, Float64)
};

/// ptdbg's rule for two .npy arrays of these types.
PtdbgRule rulePtdbg(tensor::DType npu, tensor::DType bench);

/// PairStats of chunk `chunk` (kChunkElements elements) under ptdbg's rule: dot/sums/maxAbs on the changed
/// arrays, maxRel NaN (relNan) where an inf/NaN sits. Fixed sub-blocks: the same bits for any thread count.
PairStats ptdbgChunkStats(const Operand& npu, const Operand& bench, std::uint64_t count, std::uint64_t chunk,
                          const PtdbgRule& rule);

/// ptdbgChunkStats over the whole pair, chunks on `splitter`'s idle threads, combined in chunk order.
PairStats ptdbgPairStats(const Operand& npu, const Operand& bench, std::uint64_t count, const PtdbgRule& rule,
                         Splitter& splitter);

} // namespace probescope::compare::kernels
