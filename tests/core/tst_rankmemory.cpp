// SPDX-License-Identifier: Apache-2.0
// Issue 37, memory flat in the number of ranks: `compare -da` and `overflow_check` hold a few dozen bytes a rank
// folder of discovery (dump::RankTable), not a dump::RankLocation (about 340 bytes with its two paths' text) or a
// path a folder. Measured as the C++ heap's peak while the whole command runs, at a few dozen and at a few hundred
// ranks: this program counts every operator new and delete (its own replacements, below), so the peak is exact, not
// sampled.
#include "core/compare/msprobe26/diffanalyze.h"
#include "core/dump/dumplayout.h"
#include "core/dumpinfo/dumpinfo.h"
#include "core/overflow/overflowcheck.h"
#include "tempdir.h"

#include <gtest/gtest.h>

#include <malloc.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <string>
#include <vector>

namespace {

std::atomic<std::size_t> g_live { 0 };
std::atomic<std::size_t> g_peak { 0 };

void* counted(std::size_t size)
{
    void* p = std::malloc(size == 0 ? 1 : size);
    if (!p)
        throw std::bad_alloc();
    const std::size_t live = g_live.fetch_add(::malloc_usable_size(p)) + ::malloc_usable_size(p);
    std::size_t peak = g_peak.load();
    while (live > peak && !g_peak.compare_exchange_weak(peak, live)) {
    }
    return p;
}

void uncounted(void* p) noexcept
{
    if (!p)
        return;
    g_live.fetch_sub(::malloc_usable_size(p));
    std::free(p);
}

} // namespace

// Every unaligned form goes through the two above, the nothrow ones too: libstdc++'s stable_sort takes its buffer
// with new(nothrow) and gives it back with plain delete, so a form left to the runtime (AddressSanitizer's, in
// dev-asan) would be paired with one of these. The aligned forms are not used by the code measured; they stay the
// runtime's, new and delete alike.
void* operator new(std::size_t size) { return counted(size); }
void* operator new[](std::size_t size) { return counted(size); }
void* operator new(std::size_t size, const std::nothrow_t&) noexcept
{
    try {
        return counted(size);
    } catch (const std::bad_alloc&) {
        return nullptr;
    }
}
void* operator new[](std::size_t size, const std::nothrow_t& tag) noexcept { return operator new(size, tag); }
void operator delete(void* p) noexcept { uncounted(p); }
void operator delete[](void* p) noexcept { uncounted(p); }
void operator delete(void* p, std::size_t) noexcept { uncounted(p); }
void operator delete[](void* p, std::size_t) noexcept { uncounted(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { uncounted(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { uncounted(p); }

using namespace probescope;
namespace fs = std::filesystem;

namespace {

/// A rank of a small model: a compute op and a communication op (the search's graph keeps a node of it, as msprobe's).
std::string rankDump()
{
    const std::string stat = R"({"type": "torch.Tensor", "dtype": "torch.float32", "shape": [2], "Max": 1.0, "Min": 0.0, )"
                             R"("Mean": 0.5, "Norm": 1.0, "requires_grad": false})";
    const std::string entry = R"({"input_args": [)" + stat + R"(], "input_kwargs": {}, "output": [)" + stat + "]}";
    return R"({"task": "statistics", "level": "L1", "framework": "pytorch", "dump_data_dir": null, "data": {)"
           R"("Torch.relu.0.forward": )" + entry + R"(, "Distributed.all_reduce.0.forward": )" + entry + "}}";
}

/// `side`/step0/rank{0..ranks-1}/dump.json under `dir`.
void writeStep(const probescope::testing::TempDir& dir, const std::string& side, int ranks)
{
    for (int rank = 0; rank < ranks; ++rank)
        dir.write(side + "/step0/rank" + std::to_string(rank) + "/dump.json", rankDump());
}

/// The heap's peak above where it stood, while `run` runs.
template <class Run>
std::size_t peakWhile(const Run& run)
{
    const std::size_t before = g_live.load();
    g_peak.store(before);
    run();
    return g_peak.load() - before;
}

/// Bytes a rank the peak grows by from `small` to `large` ranks of `heapAt(ranks)`.
template <class HeapAt>
double bytesPerRank(int small, int large, const HeapAt& heapAt)
{
    const std::size_t atSmall = heapAt(small);
    const std::size_t atLarge = heapAt(large);
    return (double(atLarge) - double(atSmall)) / double(large - small);
}

} // namespace

// -da: both sides' discovery as tables, the rank folders as a number and a name, the rank numbers in sorted vectors,
// the staged tables' stems in one buffer; what is left a rank is the result (its table's path and log line) and
// msprobe's search (a node a communication op): about 200 bytes a rank. With both sides' discovery held as
// RankLocations, the rank folders as paths, the ranks in std::sets and a StagedTable and a set entry a staged table it
// measured about 1,250 and failed.
TEST(RankMemory, DiffAnalyzeGrowsByUnder400BytesARank)
{
    // Two threads, so batches of 64 ranks whatever the machine, and whole batches both times: what a batch holds of
    // its ranks (their reports) and the dumps in flight are as many at both sizes. (With 50 and 400 ranks on two
    // threads the first size filled 50 of the 64 places, and the two threads' timing moved the peak: 320-370 bytes a
    // rank, once over 400.)
    const double perRank = bytesPerRank(128, 768, [](int ranks) {
        probescope::testing::TempDir dir;
        writeStep(dir, "npu", ranks);
        writeStep(dir, "bench", ranks);
        compare::msprobe26::DiffAnalyzeOptions options;
        options.timestamp = "20260101000000";
        options.threads = 2;
        return peakWhile([&] {
            auto result = compare::msprobe26::runDiffAnalyze(dir.path() / "npu/step0", dir.path() / "bench/step0",
                                                             dir.path() / "out", options);
            ASSERT_TRUE(result) << result.error().format();
            EXPECT_FALSE(result->refused);
            EXPECT_EQ(result->rankTables.size(), std::size_t(ranks));
        });
    });
    RecordProperty("heap_bytes_per_rank", std::to_string(perRank));
    EXPECT_LT(perRank, 400.0) << "bytes a rank";
    EXPECT_GT(perRank, 100.0); // its table's path and log line at least: the measure measures
}

// overflow_check: discovery's table and a (rank, record) pair a rank, each location made when its rank is loaded; the
// rest is msprobe's search: about 165 bytes a rank. With discovery's RankLocations, a std::map of their pointers by
// rank and a vector of (rank, pointer) it measured 575-600 and failed.
TEST(RankMemory, OverflowCheckGrowsByUnder300BytesARank)
{
    // Whole chunks of 64 ranks both times: the dumps in flight are as many.
    const double perRank = bytesPerRank(128, 768, [](int ranks) {
        probescope::testing::TempDir dir;
        writeStep(dir, "npu", ranks);
        return peakWhile([&] {
            auto result = overflow::runOverflowCheck(dir.path() / "npu/step0", dir.path() / "out");
            ASSERT_TRUE(result) << result.error().format();
            EXPECT_FALSE(result->analyzeFile); // no NaN: nothing written
        });
    });
    RecordProperty("heap_bytes_per_rank", std::to_string(perRank));
    EXPECT_LT(perRank, 300.0) << "bytes a rank";
    EXPECT_GT(perRank, 20.0);
}

// info's head from discovery's table is the head formatInfo makes from its RankLocations (steps, distinct rank labels,
// rank dumps, the layout's warnings), on a layout with two steps, a rank on one step only and a folder without a dump.
TEST(RankMemory, InfoHeadFromTheTableIsTheHeadFromLocations)
{
    probescope::testing::TempDir dir;
    for (const char* at : { "step0/rank0", "step0/rank1", "step0/rank10", "step1/rank0", "step1/rank2" })
        dir.write(std::string("job/") + at + "/dump.json", rankDump());
    fs::create_directories(dir.path() / "job/step1/rank3");
    auto layout = dump::discoverDump(dir.path() / "job");
    ASSERT_TRUE(layout) << layout.error().format();
    auto compact = dump::discoverCompact(dir.path() / "job");
    ASSERT_TRUE(compact) << compact.error().format();
    const std::string head = dumpinfo::formatInfoHead(*compact);
    const auto ranks = dumpinfo::inspectLayout(*layout);
    std::string parts;
    for (const dumpinfo::RankInfo& rank : ranks)
        parts += dumpinfo::formatRankInfo(rank);
    EXPECT_EQ(head + parts, dumpinfo::formatInfo(*layout, ranks)); // formatInfo is its head, then a part a rank
    EXPECT_NE(head.find("steps: 2 (0, 1)   ranks: 4   rank dumps: 5\n"), std::string::npos) << head;
    EXPECT_NE(head.find("layout.no-dump-file"), std::string::npos) << head;
}
