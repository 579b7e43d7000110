// SPDX-License-Identifier: Apache-2.0
// The whole job's plan kept small (issue 37, memory flat in the number of ranks): compare::CompactPlan makes the pairs
// msprobe's directory mode and the viewer plan (order, suffixes, output folders, stack files, places on one side only,
// warnings), and a job holds a few dozen bytes a pair while it plans and runs, not a PlannedPair (about 700 bytes).
#include "core/compare/pipeline/plan.h"
#include "core/job/jobcompare.h"
#include "tempdir.h"

#include <gtest/gtest.h>

#include <malloc.h>

#include <algorithm>
#include <atomic>
#include <string>
#include <vector>

using namespace probescope;
namespace fs = std::filesystem;

namespace {

const char* const kDump = R"({"task": "statistics", "level": "L1", "data": {}})";

/// npu:   step0/{rank0,rank1,rank2,rank10}  step1/{rank0,rank1,rank3}        step2/{rank0}
/// bench: step0/{rank0,rank1,rank2,rank11}  step1/{rank0,rank1,rank4,rank5}  step3/{rank0}
/// npu/step0/rank1 has a stack.json beside its dump.json.
struct MixedJob
{
    probescope::testing::TempDir dir;
    MixedJob()
    {
        for (const char* at : { "step0/rank0", "step0/rank1", "step0/rank2", "step0/rank10", "step1/rank0",
                                "step1/rank1", "step1/rank3", "step2/rank0" })
            dir.write(std::string("npu/") + at + "/dump.json", kDump);
        for (const char* at : { "step0/rank0", "step0/rank1", "step0/rank2", "step0/rank11", "step1/rank0",
                                "step1/rank1", "step1/rank4", "step1/rank5", "step3/rank0" })
            dir.write(std::string("bench/") + at + "/dump.json", kDump);
        dir.write("npu/step0/rank1/stack.json", "{}");
    }
    compare::CompareInput input(const std::string& below = "") const
    {
        // ("npu" / "" would end the path with a '/', and every path planned with it)
        compare::CompareInput in;
        in.npuPath = below.empty() ? dir.path() / "npu" : dir.path() / "npu" / below;
        in.benchPath = below.empty() ? dir.path() / "bench" : dir.path() / "bench" / below;
        return in;
    }
};

struct Expected
{
    std::int64_t step;
    std::string npu;
    std::string bench;
};

void expectPairs(const compare::CompactPlan& plan, const fs::path& root, const std::vector<Expected>& expected,
                 bool stepFolders, bool stackBeside, const std::string& below = "")
{
    ASSERT_EQ(plan.size(), expected.size());
    const compare::JobPlan whole = plan.expand();
    ASSERT_EQ(whole.pairs.size(), expected.size());
    for (std::size_t i = 0; i < expected.size(); ++i) {
        const Expected& e = expected[i];
        const compare::PlannedPair p = plan.pair(i);
        const std::string step = "step" + std::to_string(e.step);
        const fs::path npuDir = below.empty() ? root / "npu" / step / e.npu : root / "npu" / below / e.npu;
        const fs::path benchDir = below.empty() ? root / "bench" / step / e.bench : root / "bench" / below / e.bench;
        EXPECT_EQ(p.step, e.step) << i;
        EXPECT_EQ(plan.step(i), e.step) << i;
        EXPECT_EQ(p.npu.rankLabel, e.npu) << i;
        EXPECT_EQ(p.bench.rankLabel, e.bench) << i;
        EXPECT_EQ(p.npu.dir.string(), npuDir.string()) << i;
        EXPECT_EQ(p.npu.dumpFile.string(), (npuDir / "dump.json").string()) << i;
        EXPECT_EQ(p.bench.dumpFile.string(), (benchDir / "dump.json").string()) << i;
        EXPECT_EQ(p.npu.stepLabel, step) << i;
        EXPECT_EQ(p.npu.rank, std::optional<std::int64_t>(std::stoll(e.npu.substr(4)))) << i;
        EXPECT_EQ(plan.npuRank(i), p.npu.rank) << i;
        EXPECT_EQ(p.outSubdir, stepFolders ? step : std::string()) << i;
        EXPECT_EQ(p.suffix, "_" + e.npu + "-" + e.bench) << i; // msprobe 1.2's rank-pair suffix
        const bool stack = stackBeside && e.step == 0 && e.npu == "rank1";
        EXPECT_EQ(p.stackMode, stack) << i;
        EXPECT_EQ(p.stackFile.has_value(), stack) << i;
        if (stack) {
            EXPECT_EQ(p.stackFile->string(), (npuDir / "stack.json").string());
        }
        // planPairs' pair is the same, field by field.
        const compare::PlannedPair& w = whole.pairs[i];
        EXPECT_EQ(w.npu.dumpFile.string(), p.npu.dumpFile.string()) << i;
        EXPECT_EQ(w.bench.dumpFile.string(), p.bench.dumpFile.string()) << i;
        EXPECT_EQ(w.suffix, p.suffix) << i;
        EXPECT_EQ(w.outSubdir, p.outSubdir) << i;
        EXPECT_EQ(w.stackMode, p.stackMode) << i;
    }
    EXPECT_EQ(plan.writesStepFolders(), stepFolders);
}

std::vector<std::string> ids(const Diagnostics& diagnostics)
{
    std::vector<std::string> out;
    for (const Diagnostic& d : diagnostics)
        out.push_back(d.id);
    return out;
}

/// Two dump roots of `ranks` ranks x 2 steps each.
compare::CompareInput writeRanks(const probescope::testing::TempDir& dir, int ranks)
{
    for (const char* side : { "npu", "bench" }) {
        for (const char* step : { "step0", "step1" }) {
            for (int rank = 0; rank < ranks; ++rank)
                dir.write(std::string(side) + "/" + step + "/rank" + std::to_string(rank) + "/dump.json", kDump);
        }
    }
    compare::CompareInput input;
    input.npuPath = dir.path() / "npu";
    input.benchPath = dir.path() / "bench";
    return input;
}

/// The heap in use (every arena, and the chunks malloc maps), or 0 where malloc does not say (a sanitizer's).
std::size_t heapInUse()
{
    const struct mallinfo2 m = ::mallinfo2();
    return m.uordblks + m.hblkhd;
}

} // namespace

// The viewer's plan (ranks by name, one side's rank a warning): the pairs in msprobe's order (rank10 before rank2),
// each with its files, suffix and output folder; the places on one side only, with their warnings, in plan order.
TEST(Plan, TheSmallPlanPairsAsTheViewerDoes)
{
    MixedJob job;
    compare::PlanOptions options;
    options.strictRanks = false;
    options.stackBeside = false;
    auto plan = compare::planPairsCompact(job.input(), options);
    ASSERT_TRUE(plan) << plan.error().format();
    expectPairs(*plan, job.dir.path(),
                { { 0, "rank0", "rank0" }, { 0, "rank1", "rank1" }, { 0, "rank10", "rank11" }, { 0, "rank2", "rank2" },
                  { 1, "rank0", "rank0" }, { 1, "rank1", "rank1" } },
                true, false);
    EXPECT_EQ(ids(plan->diagnostics()),
              (std::vector<std::string> { "session.step-unpaired", "session.step-unpaired", "session.rank-order",
                                          "session.rank-unpaired", "session.rank-unpaired", "session.rank-unpaired" }));
    EXPECT_NE(plan->diagnostics()[2].message.find("(NPU rank10 with bench rank11)"), std::string::npos);
    struct Place
    {
        bool npuSide;
        std::int64_t step;
        std::string rank;
        std::size_t diagnostic;
    };
    const std::vector<Place> places = { { true, 2, "rank0", 0 }, { false, 3, "rank0", 1 }, { true, 1, "rank3", 3 },
                                        { false, 1, "rank4", 4 }, { false, 1, "rank5", 5 } };
    ASSERT_EQ(plan->unpairedCount(), places.size());
    const compare::JobPlan whole = plan->expand();
    ASSERT_EQ(whole.unpaired.size(), places.size());
    for (std::size_t i = 0; i < places.size(); ++i) {
        const compare::UnpairedPlace u = plan->unpaired(i);
        const std::string step = "step" + std::to_string(places[i].step);
        EXPECT_EQ(u.npuSide, places[i].npuSide) << i;
        EXPECT_EQ(u.step, places[i].step) << i;
        EXPECT_EQ(plan->unpairedStep(i), places[i].step) << i;
        EXPECT_EQ(u.location.rankLabel, places[i].rank) << i;
        EXPECT_EQ(plan->unpairedRank(i), u.location.rank) << i;
        EXPECT_EQ(u.location.dumpFile.string(),
                  (job.dir.path() / (u.npuSide ? "npu" : "bench") / step / places[i].rank / "dump.json").string());
        EXPECT_EQ(u.outSubdir, step) << i;
        EXPECT_EQ(u.diagnostic.format(), plan->diagnostics()[places[i].diagnostic].format()) << i;
        EXPECT_EQ(whole.unpaired[i].location.dumpFile.string(), u.location.dumpFile.string()) << i;
    }
    // planPairs is the same plan.
    auto planned = compare::planPairs(job.input(), options);
    ASSERT_TRUE(planned);
    ASSERT_EQ(planned->pairs.size(), plan->size());
    EXPECT_EQ(ids(planned->diagnostics), ids(plan->diagnostics()));
}

// msprobe's directory mode: two step folders pair their ranks in sorted order with a warning when the names differ,
// stack.json beside an NPU dump turns stack mode on; a step with more ranks on one side is refused.
TEST(Plan, TheSmallPlanPairsAsMsprobeDoes)
{
    MixedJob job;
    compare::PlanOptions options; // msprobe 1.2, strict ranks, stack.json beside
    auto steps = compare::planPairsCompact(job.input("step0"), options);
    ASSERT_TRUE(steps) << steps.error().format();
    expectPairs(*steps, job.dir.path(),
                { { 0, "rank0", "rank0" }, { 0, "rank1", "rank1" }, { 0, "rank10", "rank11" },
                  { 0, "rank2", "rank2" } },
                false, true, "step0");
    EXPECT_EQ(ids(steps->diagnostics()), (std::vector<std::string> { "session.rank-order" }));

    auto roots = compare::planPairsCompact(job.input(), options);
    ASSERT_FALSE(roots);
    EXPECT_EQ(roots.error().id, "compare.input");
    EXPECT_NE(roots.error().message.find("the NPU folder has 3 ranks and the bench folder 4"), std::string::npos)
        << roots.error().message;

    // Two rank folders: one pair, no suffix, no output folder; the stack file beside the NPU dump.
    auto one = compare::planPairsCompact(job.input("step0/rank1"), options);
    ASSERT_TRUE(one) << one.error().format();
    ASSERT_EQ(one->size(), 1u);
    const compare::PlannedPair p = one->pair(0);
    EXPECT_EQ(p.suffix, "");
    EXPECT_EQ(p.outSubdir, "");
    EXPECT_EQ(p.step, 0);
    EXPECT_TRUE(p.stackMode);
    EXPECT_EQ(p.stackFile->string(), (job.dir.path() / "npu/step0/rank1/stack.json").string());
    EXPECT_FALSE(one->writesStepFolders());
}

// What the plan holds: its two tables of rank folders and a record a pair, a few dozen bytes a pair (a PlannedPair
// is about 700 with its text: held whole again, this fails).
TEST(Plan, TheJobsPlanHoldsAFewDozenBytesAPair)
{
    probescope::testing::TempDir dir;
    constexpr int kRanks = 400;
    const compare::CompareInput input = writeRanks(dir, kRanks);
    auto plan = compare::planPairsCompact(input, compare::PlanOptions {});
    ASSERT_TRUE(plan) << plan.error().format();
    ASSERT_EQ(plan->size(), 2u * kRanks);
    const double perPair = double(plan->bytes()) / double(plan->size());
    RecordProperty("plan_bytes_per_pair", std::to_string(perPair));
    EXPECT_LT(perPair, 160.0) << "bytes a pair";
    EXPECT_GT(perPair, 24.0); // the pair's record and its two rank folders' at least: the measure measures
    // The last pair is made from the table as the first: the text is all there.
    EXPECT_EQ(plan->pair(plan->size() - 1).npu.dumpFile.string(),
              (dir.path() / "npu/step1/rank99/dump.json").string());
}

// The whole job's heap while it plans (sampled at every folder the walk lists) and when its loop is about to start
// grows by a few dozen bytes a pair from 100 to 800 ranks: no side's discovery of RankLocations, no PlannedPair.
TEST(WholeJobLoop, TheJobsHeapWhilePlanningGrowsByAFewDozenBytesAPair)
{
    if (heapInUse() == 0)
        GTEST_SKIP() << "malloc does not report its heap here (a sanitizer's)";
    struct Sampling : ProgressSink
    {
        mutable std::size_t peak = 0;
        std::atomic<bool> planned { false };
        void setRange(std::uint64_t) override {}
        void advance(std::uint64_t) override {}
        bool isCancelled() const override
        {
            peak = std::max(peak, heapInUse());
            return planned.load(); // the loop starts no pair: the plan alone is measured
        }
    };
    auto peakOf = [](int ranks) -> std::size_t {
        probescope::testing::TempDir dir;
        const compare::CompareInput input = writeRanks(dir, ranks);
        Sampling progress;
        job::WholeJobOptions options;
        options.progress = &progress;
        options.onPlanned = [&](const Diagnostics&) {
            (void)progress.isCancelled(); // the plan as the loop gets it
            progress.planned = true;
        };
        const std::size_t before = heapInUse();
        progress.peak = before;
        auto result = job::runWholeJob(input, dir.path() / "out", compare::JobOptions {}, options);
        EXPECT_FALSE(result);
        if (!result) {
            EXPECT_EQ(result.error().id, "compare.cancelled");
        }
        return progress.peak - before;
    };
    const std::size_t small = peakOf(100);
    const std::size_t large = peakOf(800);
    const double perPair = (double(large) - double(small)) / (2.0 * (800 - 100));
    RecordProperty("heap_bytes_per_pair", std::to_string(perPair));
    EXPECT_LT(perPair, 300.0) << "small " << small << " B, large " << large << " B";
}
