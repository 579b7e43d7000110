// SPDX-License-Identifier: Apache-2.0
// probescope-benchkernels: the metric pass of each profile over two float32 arrays in memory, in ns per element
// pair, on the calling thread (its CPU time, best of --repeat). It isolates the kernels from the file reads that a
// compare adds around them (probescope-benchcomparelarge times those): "every profile within 1.1x" of issue 37 is
// decided by these passes once the page cache is warm.
//
//   probescope-benchkernels [--elements N] [--repeat R] [--generic | --avx2]
//
// The default N is one chunk (kernels::kChunkElements, 256 KiB per side): a compare reads each chunk of a tensor into
// a buffer of that size and runs the pass over it while it is in the core's L2 cache, so that is what is timed; each
// timing passes over the arrays often enough to take about 16M element pairs. A larger N shows the pass reading
// from memory instead.
//
// Each bench array has zeros in three patterns: none, every 16th element (the generated GB pair's pattern: one
// zero in every other group of 8), and half of the elements at random (a ReLU's output). ptdbg changes the pairs
// where the bench element is zero, so the patterns can matter to it.

#include "benchargs.h"
#include "machineinfo.h"

#include "core/compare/metrics/kernels.h"

#include <algorithm>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

namespace {

using namespace probescope::compare::kernels;
using probescope::tensor::DType;

struct Arrays
{
    std::vector<float> npu;
    std::vector<float> bench;
};

/// Bench values ~N(0, 1), NPU values the bench's with a relative error of about 1e-3; then the zeros.
Arrays makeArrays(std::size_t n, const std::string& zeros)
{
    Arrays a { std::vector<float>(n), std::vector<float>(n) };
    std::mt19937 gen(1);
    std::normal_distribution<float> normal;
    std::bernoulli_distribution half(0.5);
    for (std::size_t i = 0; i < n; ++i) {
        float b = normal(gen);
        if ((zeros == "every-16th" && i % 16 == 0) || (zeros == "half-random" && half(gen)))
            b = 0;
        a.bench[i] = b;
        a.npu[i] = b == 0 ? 1e-3f * normal(gen) : b * (1 + 1e-3f * normal(gen));
    }
    return a;
}

/// Best CPU seconds of `repeat` timings of `passes` runs of `pass`, per run; `sink` keeps the results alive.
template<typename Pass>
double best(int repeat, std::size_t passes, Pass pass, double& sink)
{
    double bestSeconds = 1e30;
    for (int r = 0; r < repeat; ++r) {
        const double startMs = probescope::bench::threadCpuMs();
        for (std::size_t p = 0; p < passes; ++p)
            sink += pass();
        bestSeconds = std::min(bestSeconds, (probescope::bench::threadCpuMs() - startMs) / 1e3 / double(passes));
    }
    return bestSeconds;
}

} // namespace

int main(int argc, char** argv)
{
    std::size_t elements = kChunkElements;
    int repeat = 7;
    KernelBuild build = KernelBuild::Best;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--elements") {
            if (!probescope::bench::parseNumber(probescope::bench::optionValue(argv[0], argc, argv, i), elements)
                || elements == 0) {
                std::fprintf(stderr, "%s: --elements needs a positive number\n", argv[0]);
                return 2;
            }
        } else if (a == "--repeat") {
            if (!probescope::bench::parseNumber(probescope::bench::optionValue(argv[0], argc, argv, i), repeat)
                || repeat <= 0) {
                std::fprintf(stderr, "%s: --repeat needs a positive number\n", argv[0]);
                return 2;
            }
        } else if (a == "--generic") {
            build = KernelBuild::Generic;
        } else if (a == "--avx2") {
            build = KernelBuild::Avx2;
        } else {
            std::fprintf(stderr, "usage: %s [--elements N] [--repeat R] [--generic | --avx2]\n", argv[0]);
            return 2;
        }
    }
    forceKernelBuild(build);
    const auto machine = probescope::bench::measureMachine();
    const std::size_t passes = std::max<std::size_t>(1, (std::size_t { 1 } << 24) / elements);
    const char* kernels = usingAvx512Kernels() ? "AVX-512 (compensated lanes) and AVX2"
        : usingAvx2Kernels()                   ? "AVX2"
                                               : "generic";
    std::printf("probescope-benchkernels: %zu float32 element pairs (%.2f MB per side), %zu passes a timing, %s "
                "kernels, best of %d, CPU time of one thread\n",
                elements, double(elements) * 4 / 1e6, passes, kernels, repeat);
    probescope::bench::printMachine(machine);
    std::printf("  floor: copying a pair's 8 bytes at memcpy speed (as a compare's read() into its chunk buffer does) "
                "takes %.3f ns\n",
                8.0 / machine.copyGBps);
    const auto r12 = ruleMsprobe12(DType::Float32, DType::Float32);
    const auto r26 = ruleMsprobe26(DType::Float32, DType::Float32);
    const auto rp = rulePtdbg(DType::Float32, DType::Float32);
    double sink = 0;
    for (const std::string zeros : { "none", "every-16th", "half-random" }) {
        const Arrays data = makeArrays(elements, zeros);
        const Operand npu { DType::Float32, reinterpret_cast<const std::byte*>(data.npu.data()) };
        const Operand bench { DType::Float32, reinterpret_cast<const std::byte*>(data.bench.data()) };
        const std::uint64_t chunks = (elements + kChunkElements - 1) / kChunkElements;
        // Each profile's pass as its row computes it on one thread: msprobe 1.2 chunk by chunk, msprobe 26 left to
        // right from chunk to chunk, ptdbg chunk by chunk with its own rule.
        const double t12 = best(repeat, passes, [&] {
            double s = 0;
            for (std::uint64_t c = 0; c < chunks; ++c)
                s += chunkStats(npu, bench, elements, c, r12, false).dot.sum;
            return s;
        }, sink);
        const double t26 = best(repeat, passes, [&] {
            PairStats carry;
            for (std::uint64_t c = 0; c < chunks; ++c)
                carry = chunkStats(npu, bench, elements, c, r26, true, SumOrder::LeftToRight, c ? &carry : nullptr);
            return carry.dot.sum;
        }, sink);
        const double tp = best(repeat, passes, [&] {
            double s = 0;
            for (std::uint64_t c = 0; c < chunks; ++c)
                s += ptdbgChunkStats(npu, bench, elements, c, rp).dot.sum;
            return s;
        }, sink);
        const double fastest = std::min({ t12, t26, tp });
        auto ns = [&](double t) { return t / double(elements) * 1e9; };
        std::printf("  bench zeros %-11s  msprobe-1.2 %.3f  msprobe-26 %.3f  ptdbg %.3f ns per pair; "
                    "slowest %.2fx the fastest\n",
                    zeros.c_str(), ns(t12), ns(t26), ns(tp), std::max({ t12, t26, tp }) / fastest);
    }
    volatile double keep = sink; // every pass's result is used: no pass is optimised away
    (void)keep;
    return 0;
}
