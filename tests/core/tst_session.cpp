// SPDX-License-Identifier: Apache-2.0
// The viewer's core: pairing of opened inputs, staged analysis with streamed verdicts, node statuses.
#include "core/session/session.h"
#include "core/session/paircache.h"
#include "core/dump/keyscan.h"
#include "core/tree/constructtree.h"

#include "core/compare/pipeline/comparerun.h"
#include "core/compare/verdict/firstfailure.h"
#include "core/compare/pipeline/profiles.h"
#include "core/compare/table/pytext.h"
#include "fixtureguard.h"
#include "tempdir.h"
#include "testconfig.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <mutex>

using namespace probescope;
using namespace probescope::session;
namespace fs = std::filesystem;

namespace {

fs::path fixture(const std::string& name, const std::string& side) { return probescope::testing::fixturesDir() / name / side; }

std::shared_ptr<const PairAnalysis> analyse(const RankPair& pair, AnalysisOptions options = {})
{
    auto result = analysePair(pair, options);
    EXPECT_TRUE(result.ok()) << (result.ok() ? "" : result.error().format());
    return result.ok() ? *result : nullptr;
}

tree::NodeId nodeOf(const PairAnalysis& a, std::string_view key)
{
    auto id = a.skeleton->tree->find(key);
    EXPECT_TRUE(id.has_value()) << key;
    return id.value_or(tree::NodeId {});
}

class CancelAfter final : public ProgressSink
{
public:
    explicit CancelAfter(std::uint64_t after)
        : m_after(after)
    {
    }
    void setRange(std::uint64_t) override {}
    void advance(std::uint64_t done) override { m_max = std::max<std::uint64_t>(m_max, done); }
    bool isCancelled() const override { return m_max >= m_after; }

private:
    std::uint64_t m_after;
    std::atomic<std::uint64_t> m_max { 0 };
};

} // namespace

TEST(SessionPlan, PairsStepsAndRanksFromRoots)
{
    auto plan = planSession(fixture("modelA_statistics_mix", "npu"), fixture("modelA_statistics_mix", "bench"));
    ASSERT_TRUE(plan.ok()) << plan.error().format();
    ASSERT_EQ(plan->pairs.size(), 2u);
    EXPECT_EQ(plan->steps(), (std::vector<std::int64_t> { 0, 1 }));
    EXPECT_EQ(plan->pairs[1].step, 1);
    EXPECT_EQ(plan->pairs[0].label(), "step0 \u00b7 rank \u2194 rank");
    EXPECT_EQ(plan->pairsOfStep(1), (std::vector<std::size_t> { 1 }));
}

TEST(SessionPlan, AnyLevelAndCompareJson)
{
    const fs::path npu = fixture("modelA_md5_mix", "npu") / "step1" / "rank";
    const fs::path bench = fixture("modelA_md5_mix", "bench") / "step0";
    auto plan = planSession(npu / "dump.json", bench);
    ASSERT_TRUE(plan.ok()) << plan.error().format();
    ASSERT_EQ(plan->pairs.size(), 1u);
    EXPECT_EQ(plan->pairs[0].npu.dumpFile, npu / "dump.json");

    probescope::testing::TempDir dir;
    const fs::path json = dir.path() / "compare.json";
    std::ofstream(json) << R"({"npu_path": ")" << (npu / "dump.json").string() << R"(", "bench_path": ")"
                        << (bench / "rank" / "dump.json").string() << R"(", "is_print_compare_log": true})";
    auto fromJson = planSession(json, {});
    ASSERT_TRUE(fromJson.ok()) << fromJson.error().format();
    EXPECT_EQ(fromJson->pairs.size(), 1u);

    auto missing = planSession(dir.path() / "nothing", bench);
    ASSERT_FALSE(missing.ok());
    auto alone = planSession(npu, {});
    ASSERT_FALSE(alone.ok());
    EXPECT_EQ(alone.error().id, "session.input");
}

TEST(SessionPlan, UnpairedStepsAreReported)
{
    auto plan = planSession(fixture("modelA_md5_mix", "npu"), fixture("modelA_md5_mix", "bench") / "step0");
    ASSERT_TRUE(plan.ok()) << plan.error().format();
    // Root (two steps) against one step folder: step 0 pairs, step 1 is reported.
    ASSERT_EQ(plan->pairs.size(), 1u);
    EXPECT_EQ(plan->pairs[0].step, 0);
    ASSERT_FALSE(plan->diagnostics.empty());
    EXPECT_EQ(plan->diagnostics[0].id, "session.step-unpaired");
}

class SessionFixtures : public ::testing::TestWithParam<std::string>
{
};

TEST_P(SessionFixtures, StatusesAndFirstFailure)
{
    auto plan = planSession(fixture(GetParam(), "npu"), fixture(GetParam(), "bench"));
    ASSERT_TRUE(plan.ok());
    std::shared_ptr<const PairSkeleton> skeleton;
    std::shared_ptr<const NodeStatusTable> layout;
    AnalysisOptions options;
    options.threads = 2;
    options.skeletonReady = [&](std::shared_ptr<const PairSkeleton> s) {
        EXPECT_FALSE(layout) << "the tree comes before the verdicts";
        skeleton = std::move(s);
    };
    options.layoutReady = [&](std::shared_ptr<const NodeStatusTable> s) { layout = std::move(s); };
    auto a = analyse(plan->pairs[0], options);
    ASSERT_TRUE(a);
    ASSERT_TRUE(skeleton && layout);
    EXPECT_EQ(a->skeleton, skeleton);
    EXPECT_TRUE(a->firstFailure.found);
    EXPECT_EQ(a->firstFailure.key, "Functional.gelu.0.forward");

    const NodeStatusTable& s = *a->status;
    const tree::ConstructTree& tree = *a->skeleton->tree;
    ASSERT_EQ(s.own.size(), tree.size());
    const auto gelu = nodeOf(*a, "Functional.gelu.0.forward");
    EXPECT_TRUE(isFailing(s.own[gelu.value]));
    EXPECT_EQ(s.own[nodeOf(*a, "Tensor.reshape.0.forward").value], Status::Unmatched);
    EXPECT_EQ(s.own[nodeOf(*a, "Functional.conv2d.0.forward").value], Status::Pass);
    // Each node's rows are exactly the table rows naming its entry, in table order.
    std::size_t total = 0;
    for (std::uint32_t n = 0; n < tree.size(); ++n) {
        long previous = -1;
        for (std::uint32_t r : s.rowsOf(tree::NodeId { n })) {
            EXPECT_EQ(a->table->npuEntry[r], n);
            EXPECT_GT(static_cast<long>(r), previous);
            previous = r;
            ++total;
        }
    }
    EXPECT_EQ(total, a->table->rows.size());
    // Aggregation: every ancestor of gelu is at least as bad and counts it below.
    for (tree::NodeId p = tree.node(gelu).parent; p.valid(); p = tree.node(p).parent) {
        EXPECT_GE(s.subtree[p.value], s.own[gelu.value]);
        EXPECT_GE(s.failingBelow[p.value], 1u);
    }
    std::uint32_t counted = 0;
    for (auto c : s.counts)
        counted += c;
    EXPECT_EQ(counted, tree.size());
    // md5 verdicts are final at layout time; statistics rows lack msprobe's highlights (they need every
    // row), so they can only get worse; real-data rows wait for their tensors.
    if (GetParam() == "modelA_md5_mix")
        EXPECT_EQ(layout->own, s.own);
    else if (GetParam() == "modelA_statistics_mix") {
        EXPECT_NE(layout->own, s.own);
        for (std::size_t n = 0; n < s.own.size(); ++n)
            EXPECT_LE(layout->own[n], s.own[n]);
    } else {
        EXPECT_EQ(layout->own[gelu.value], Status::Pending);
    }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, SessionFixtures,
                         ::testing::Values("modelA_tensor_mix", "modelA_statistics_mix", "modelA_md5_mix"));

TEST(Session, StreamedUpdatesEndInTheFinalStatuses)
{
    auto plan = planSession(fixture("modelA_tensor_mix", "npu"), fixture("modelA_tensor_mix", "bench"));
    ASSERT_TRUE(plan.ok());
    std::mutex mutex;
    std::vector<Status> own;
    int batches = 0;
    AnalysisOptions options;
    options.threads = 2;
    options.layoutReady = [&](std::shared_ptr<const NodeStatusTable> s) { own = s->own; };
    options.statusUpdate = [&](StatusUpdate u) {
        std::lock_guard lock(mutex);
        ++batches;
        ASSERT_EQ(u.nodes.size(), u.own.size());
        for (std::size_t i = 0; i < u.nodes.size(); ++i)
            own[u.nodes[i]] = u.own[i];
    };
    auto a = analyse(plan->pairs[0], options);
    ASSERT_TRUE(a);
    EXPECT_GE(batches, 0);
    // Streamed statuses know only Accuracy; the final ones add msprobe's highlights. Errors seen while
    // streaming stay errors.
    const auto gelu = nodeOf(*a, "Functional.gelu.0.forward");
    EXPECT_EQ(a->status->own[gelu.value], Status::Error);
    for (std::size_t n = 0; n < own.size(); ++n) {
        if (own[n] == Status::Error) {
            EXPECT_EQ(a->status->own[n], Status::Error) << a->skeleton->tree->node(tree::NodeId { static_cast<std::uint32_t>(n) }).key;
        }
    }
}

TEST(Session, CancelStopsTheCompare)
{
    auto plan = planSession(fixture("modelA_tensor_mix", "npu"), fixture("modelA_tensor_mix", "bench"));
    ASSERT_TRUE(plan.ok());
    CancelAfter sink(150); // inside the compare stage (100..990)
    AnalysisOptions options;
    options.threads = 1;
    bool skeleton = false;
    options.skeletonReady = [&](auto) { skeleton = true; };
    auto result = analysePair(plan->pairs[0], options, &sink);
    ASSERT_FALSE(result.ok());
    EXPECT_EQ(result.error().id, "session.cancelled");
    EXPECT_TRUE(skeleton);
}

TEST(Session, MetricsAndBands)
{
    auto plan = planSession(fixture("modelA_tensor_mix", "npu"), fixture("modelA_tensor_mix", "bench"));
    ASSERT_TRUE(plan.ok());
    auto a = analyse(plan->pairs[0]);
    ASSERT_TRUE(a);
    const auto gelu = nodeOf(*a, "Functional.gelu.0.forward");
    const NodeMetrics& m = a->status->metrics[gelu.value];
    // The fixture README: output.0 Cosine 0.879928374486, MaxAbsErr 1.163048326969.
    EXPECT_NEAR(m.cosine, 0.879928374486, 1e-9);
    EXPECT_NEAR(m.maxAbsErr, 1.163048326969, 1e-9);
    EXPECT_NEAR(metricValue(m, Metric::Cosine), m.cosine, 0);
    EXPECT_GT(m.index, 0.0);
    ColorBands bands;
    EXPECT_EQ(bandOf(Status::Error, m, bands), Status::Error);
    bands.scheme = ColorBands::Scheme::ContinuousIndex;
    bands.warningFrom = 0.0;
    bands.errorFrom = 1.01; // nothing reaches it
    EXPECT_EQ(bandOf(Status::Error, m, bands), Status::Warning);
    EXPECT_EQ(bandOf(Status::Unmatched, m, bands), Status::Unmatched);

    auto stats = planSession(fixture("modelA_statistics_mix", "npu"), fixture("modelA_statistics_mix", "bench"));
    ASSERT_TRUE(stats.ok());
    auto s = analyse(stats->pairs[0]);
    ASSERT_TRUE(s);
    const auto sg = nodeOf(*s, "Functional.gelu.0.forward");
    // Max diff 0.6028804779052734 and NormRelativeErr 14.730211114889538% on output.0.
    EXPECT_NEAR(s->status->metrics[sg.value].maxAbsErr, 0.6028804779052734, 1e-12);
    EXPECT_NEAR(s->status->metrics[sg.value].normRelErr, 0.14730211114889538, 1e-12);
    EXPECT_NEAR(s->status->metrics[sg.value].maxRelErr, 0.3978603002238321, 1e-12);
}

TEST(Session, SummariesFeedTheJobOrigin)
{
    auto plan = planSession(fixture("modelA_statistics_mix", "npu"), fixture("modelA_statistics_mix", "bench"));
    ASSERT_TRUE(plan.ok());
    std::vector<probescope::job::RankFailure> failures;
    for (std::size_t i = 0; i < plan->pairs.size(); ++i) {
        auto a = analyse(plan->pairs[i]);
        ASSERT_TRUE(a);
        const PairSummary s = summarize(*a, i);
        EXPECT_EQ(s.nodes, a->skeleton->tree->size());
        EXPECT_EQ(s.failure.step, plan->pairs[i].step);
        EXPECT_EQ(s.failure.failed, !s.firstFailure.key.empty());
        EXPECT_EQ(s.failure.key, s.firstFailure.key);
        EXPECT_EQ(s.failure.executionIndex, s.firstFailure.executionIndex);
        EXPECT_EQ(s.failure.commBefore, 0u) << "no communication in these dumps";
        EXPECT_TRUE(s.salvaged.empty());
        failures.push_back(s.failure);
    }
    // Steps run one after the other: step 0's culprit is the origin whatever step 1's position.
    const probescope::job::JobOrigin origin = probescope::job::findJobOrigin(failures);
    ASSERT_TRUE(origin.fails);
    EXPECT_EQ(origin.step, 0);
    EXPECT_EQ(origin.key, "Functional.gelu.0.forward");
}

TEST(Session, SummaryPlacesTheFailureAmongCommunicationsAndSaysWhatWasSalvaged)
{
    const fs::path inputs = probescope::testing::fixturesDir() / "msprobe26_da" / "SYNTH_allreduce_group_2r" / "inputs";
    probescope::testing::TempDir dir;
    fs::copy(inputs, dir.path() / "job", fs::copy_options::recursive);
    const fs::path cut = dir.path() / "job" / "npu" / "step0" / "rank0" / "dump.json";
    fs::permissions(cut, fs::perms::owner_write, fs::perm_options::add);
    fs::resize_file(cut, fs::file_size(cut) * 2 / 3);
    auto plan = planSession(dir.path() / "job" / "npu", dir.path() / "job" / "bench");
    ASSERT_TRUE(plan.ok());
    ASSERT_EQ(plan->pairs.size(), 2u);
    auto rank0 = analyse(plan->pairs[0]);
    auto rank1 = analyse(plan->pairs[1]);
    ASSERT_TRUE(rank0);
    ASSERT_TRUE(rank1);
    const PairSummary s0 = summarize(*rank0, 0);
    const PairSummary s1 = summarize(*rank1, 1);
    EXPECT_NE(s0.salvaged.find("cut after"), std::string::npos) << s0.salvaged;
    EXPECT_TRUE(s1.salvaged.empty());
    EXPECT_EQ(s1.failure.rankLabel, "rank1");
    EXPECT_EQ(s1.failure.rank, 1);
    EXPECT_EQ(s1.failure.key, "Functional.relu.0.forward");
    EXPECT_EQ(s1.failure.commBefore, 1u) << "after Distributed.all_reduce.0";
    EXPECT_EQ(s1.failure.nextCommKey, "Distributed.all_reduce.1.forward");
}

// A large pair shows its tree from the NPU keys before the dumps are read (earlyTreeBytes; 64 MB by default, 0 here).
TEST_P(SessionFixtures, TheEarlyTreeIsTheDumpsTreeAndIsShownOnce)
{
    auto plan = planSession(fixture(GetParam(), "npu"), fixture(GetParam(), "bench"));
    ASSERT_TRUE(plan.ok());
    const auto& pair = plan->pairs[0];
    // The tree from the keys is the tree of the dump, node for node.
    auto rank = dump::loadRank(pair.npu);
    auto keys = dump::scanDumpKeys(pair.npu.dumpFile);
    ASSERT_TRUE(rank.ok() && keys.ok());
    const auto full = tree::ConstructTree::build(*rank);
    const auto early = tree::ConstructTree::buildFromKeys(*keys, (*rank)->construct, pair.npu.dumpFile);
    EXPECT_FALSE(early->hasRank());
    EXPECT_EQ(early->keysHash(), full->keysHash());
    tree::PrintOptions print;
    print.showExecutionIndex = true;
    EXPECT_EQ(tree::printTree(*early, print), tree::printTree(*full, print));
    const auto gelu = early->find("Functional.gelu.0.forward");
    ASSERT_TRUE(gelu.has_value());
    EXPECT_EQ(gelu, full->find("Functional.gelu.0.forward"));

    std::vector<std::shared_ptr<const PairSkeleton>> skeletons;
    bool layoutSeen = false;
    AnalysisOptions options;
    options.earlyTreeBytes = 0;
    options.skeletonReady = [&](std::shared_ptr<const PairSkeleton> s) {
        EXPECT_FALSE(layoutSeen) << "the tree comes before the verdicts";
        skeletons.push_back(std::move(s));
    };
    options.layoutReady = [&](auto) { layoutSeen = true; };
    auto a = analyse(pair, options);
    ASSERT_TRUE(a);
    ASSERT_EQ(skeletons.size(), 1u) << "the dumps' tree is the same: it is not shown again";
    const PairSkeleton& shown = *skeletons[0];
    EXPECT_TRUE(shown.early);
    EXPECT_FALSE(shown.npu) << "shown before the dumps were read";
    ASSERT_TRUE(shown.mode.has_value());
    EXPECT_EQ(*shown.mode, a->table->mode);
    EXPECT_TRUE(layoutSeen);
    // The analysis keeps the tree the viewer has, with its dumps.
    EXPECT_TRUE(a->skeleton->early);
    EXPECT_EQ(a->skeleton->tree, shown.tree);
    ASSERT_TRUE(a->skeleton->npu && a->skeleton->bench);
    EXPECT_TRUE(a->skeleton->npu->construct.present) << "construct.json read once, by the early tree, kept by the rank";
    EXPECT_EQ(a->firstFailure.key, "Functional.gelu.0.forward");
}

TEST(Session, EntryKeyOfRow)
{
    EXPECT_EQ(entryKeyOfRow("Functional.gelu.0.forward.output.0"), "Functional.gelu.0.forward");
    EXPECT_EQ(entryKeyOfRow("Module.block.Block.forward.0.input.0"), "Module.block.Block.forward.0");
    EXPECT_EQ(entryKeyOfRow("Module.conv.conv1.Conv2d.parameters_grad.weight"),
              "Module.conv.conv1.Conv2d.parameters_grad");
}

// stack.json is the largest file after dump.json: the analysis reads it after the compare, not before
// the tree, and the rank overview (readStacks off) never reads it.
TEST(Session, StacksAreReadAfterTheCompare)
{
    auto plan = planSession(fixture("modelA_statistics_mix", "npu"), fixture("modelA_statistics_mix", "bench"));
    ASSERT_TRUE(plan.ok());
    AnalysisOptions options;
    bool sawSkeleton = false;
    options.skeletonReady = [&](std::shared_ptr<const PairSkeleton> s) {
        sawSkeleton = true;
        EXPECT_TRUE(s->npu->stackDeferred);
        EXPECT_FALSE(s->npu->stack.present);
        EXPECT_FALSE(s->bench->construct.present) << "the tree is built from the NPU side alone";
        EXPECT_TRUE(s->npu->construct.present);
    };
    auto a = analyse(plan->pairs[0], options);
    ASSERT_TRUE(a && sawSkeleton);
    ASSERT_TRUE(a->npuStack && a->benchStack);
    EXPECT_TRUE(a->npuStack->present);
    EXPECT_TRUE(a->benchStack->present);
    EXPECT_TRUE(a->stackDiagnostics.empty());
    const auto* frames = a->npuStack->frames("Functional.gelu.0.forward");
    ASSERT_NE(frames, nullptr);
    EXPECT_FALSE(frames->empty());
    // The same frames as loading the rank with its stack.
    auto full = dump::loadRank(plan->pairs[0].npu);
    ASSERT_TRUE(full.ok());
    ASSERT_NE((*full)->stack.frames("Functional.gelu.0.forward"), nullptr);
    EXPECT_EQ(*(*full)->stack.frames("Functional.gelu.0.forward"), *frames);

    options.readStacks = false;
    options.skeletonReady = {};
    auto overview = analyse(plan->pairs[0], options);
    ASSERT_TRUE(overview);
    EXPECT_FALSE(overview->npuStack);
}

TEST(Session, ABrokenStackIsReportedNotFatal)
{
    probescope::testing::TempDir dir;
    for (const char* side : { "npu", "bench" }) {
        fs::create_directories(dir.path() / side);
        for (const char* f : { "dump.json", "construct.json" })
            fs::copy_file(fixture("modelA_statistics_mix", side) / "step0" / "rank" / f, dir.path() / side / f);
    }
    std::ofstream(dir.path() / "npu" / "stack.json") << "{\"0\": [[\"Functional.gelu.0.forward\"";
    auto plan = planSession(dir.path() / "npu", dir.path() / "bench");
    ASSERT_TRUE(plan.ok());
    auto a = analyse(plan->pairs[0]);
    ASSERT_TRUE(a);
    EXPECT_EQ(a->firstFailure.key, "Functional.gelu.0.forward");
    ASSERT_EQ(a->stackDiagnostics.size(), 1u);
    EXPECT_NE(a->stackDiagnostics[0].location.file.find("stack.json"), std::string::npos);
    EXPECT_FALSE(a->npuStack->present);
}

// ---- One pipeline: the viewer's analysis is the CLI's compare, with every option ----------------------------

namespace {

fs::path mappingData(const std::string& set) { return probescope::testing::testDataDir() / "mapping" / set; }

/// The CSV the CLI's job writes for one pair with `job`'s options (the same pipeline, run through runCompareJob).
std::string jobCsv(const fs::path& npu, const fs::path& bench, compare::JobOptions job)
{
    probescope::testing::TempDir out;
    job.advisor = false;
    auto results = compare::runCompareJob(compare::CompareInput { npu, bench, std::nullopt }, out.path(), job);
    EXPECT_TRUE(results.ok()) << (results.ok() ? "" : results.error().format());
    if (!results.ok() || results->size() != 1 || results->front().table->rows.empty())
        return {};
    return compare::tableCsv(*results->front().table);
}

std::size_t unmatchedRows(const compare::CompareTable& table)
{
    return static_cast<std::size_t>(std::count(table.matched.begin(), table.matched.end(), false));
}

} // namespace

TEST(SessionPipeline, DataMappingAsTheCliHasIt)
{
    const fs::path npu = mappingData("ms_pt") / "npu" / "dump.json";
    const fs::path bench = mappingData("ms_pt") / "bench" / "dump.json";
    auto plan = planSession(npu, bench);
    ASSERT_TRUE(plan.ok()) << plan.error().format();
    AnalysisOptions options;
    options.profile = compare::Profile::Msprobe26;
    auto plain = analyse(plan->pairs.front(), options);
    ASSERT_TRUE(plain);
    EXPECT_EQ(unmatchedRows(*plain->table), 22u) << "no NPU row name equals a bench row name (tests/data/mapping)";

    options.dataMapping = mappingData("ms_pt") / "data_mapping.yaml";
    auto mapped = analyse(plan->pairs.front(), options);
    ASSERT_TRUE(mapped);
    EXPECT_EQ(mapped->table->rows.size(), 22u);
    EXPECT_EQ(unmatchedRows(*mapped->table), 20u) << "-dm maps two rows (tests/data/mapping/README.md)";

    compare::JobOptions job;
    job.profile = compare::Profile::Msprobe26;
    job.dataMapping = options.dataMapping;
    EXPECT_EQ(compare::msprobe26::rules().csv(*mapped->table), [&] {
        probescope::testing::TempDir out;
        auto r = compare::runCompareJob(compare::CompareInput { npu, bench, std::nullopt }, out.path(), job);
        return r.ok() ? compare::msprobe26::rules().csv(*r->front().table) : std::string();
    }());
}

TEST(SessionPipeline, LayerMappingAsTheCliHasIt)
{
    const fs::path npu = mappingData("layer") / "npu" / "dump.json";
    const fs::path bench = mappingData("layer") / "bench" / "dump.json";
    auto plan = planSession(npu, bench);
    ASSERT_TRUE(plan.ok()) << plan.error().format();
    auto plain = analyse(plan->pairs.front());
    ASSERT_TRUE(plain);
    AnalysisOptions options;
    options.layerMapping = mappingData("layer") / "layer_mapping.yaml";
    options.stackMode = true; // the CLI's rule: stack.json beside the NPU dump.json gives the stack column
    auto mapped = analyse(plan->pairs.front(), options);
    ASSERT_TRUE(mapped);
    // msprobe 1.2's -lm: every one of the 28 rows finds its bench row (cli.compare_map_lm_12).
    EXPECT_EQ(mapped->table->rows.size(), 28u);
    EXPECT_EQ(unmatchedRows(*mapped->table), 0u);
    EXPECT_NE(compare::tableCsv(*plain->table), compare::tableCsv(*mapped->table)) << "-lm must change the table";
    compare::JobOptions job;
    job.layerMapping = options.layerMapping;
    EXPECT_EQ(compare::tableCsv(*mapped->table), jobCsv(npu, bench, job));
}

TEST(SessionPipeline, StackModeAddsTheStackColumn)
{
    const fs::path demo = probescope::testing::sourceDir() / "resources" / "demo";
    const fs::path npu = demo / "npu" / "step0" / "rank";
    const fs::path bench = demo / "bench" / "step0" / "rank";
    ASSERT_TRUE(fs::is_regular_file(npu / "stack.json"));
    auto plan = planSession(npu, bench);
    ASSERT_TRUE(plan.ok()) << plan.error().format();
    AnalysisOptions options;
    options.readStacks = false;
    auto plain = analyse(plan->pairs.front(), options);
    ASSERT_TRUE(plain);
    EXPECT_LT(plain->table->column("NPU_Stack_Info"), 0) << "the viewer has no stack column unless asked";
    options.stackMode = true;
    auto stacked = analyse(plan->pairs.front(), options);
    ASSERT_TRUE(stacked);
    const int column = stacked->table->column("NPU_Stack_Info");
    ASSERT_GE(column, 0);
    // The first row of an API call carries its stack (msprobe fills it on the entry's first row).
    bool anyStack = false;
    for (const auto& row : stacked->table->rows)
        anyStack = anyStack || compare::excelText(row[static_cast<std::size_t>(column)]).find("File ") != std::string::npos;
    EXPECT_TRUE(anyStack);
    // The CLI puts the column in by msprobe's rule (stack.json beside the NPU dump): the same table.
    EXPECT_EQ(compare::tableCsv(*stacked->table), jobCsv(npu / "dump.json", bench / "dump.json", {}));
}

TEST(SessionPipeline, AMappingTheDumpsDoNotAllowIsAnError)
{
    const fs::path demo = probescope::testing::sourceDir() / "resources" / "demo";
    auto plan = planSession(demo / "npu" / "step0", demo / "bench" / "step0");
    ASSERT_TRUE(plan.ok()) << plan.error().format();
    AnalysisOptions options;
    options.cellMapping = fs::path(); // -cm on a PyTorch dump in msprobe 1.2
    auto result = analysePair(plan->pairs.front(), options);
    ASSERT_FALSE(result.ok());
    EXPECT_EQ(result.error().id, "compare.option");
}

// Issue 17: a pair opened before shows its tree and statuses from the reopen cache at once; the analysis
// still runs in full and ends in the same statuses; a changed input or a damaged cache file is not used.
TEST(PairCache, AReopenPublishesTheCachedTreeAndStatusesFirst)
{
    probescope::testing::TempDir dir;
    const fs::path npu = dir.path() / "npu";
    const fs::path bench = dir.path() / "bench";
    fs::copy(fixture("modelA_statistics_mix", "npu"), npu, fs::copy_options::recursive);
    fs::copy(fixture("modelA_statistics_mix", "bench"), bench, fs::copy_options::recursive);
    auto plan = planSession(npu, bench);
    ASSERT_TRUE(plan.ok());
    const RankPair& pair = plan->pairs[0];
    AnalysisOptions options;
    options.cacheDir = dir.path() / "cache";
    const fs::path file = pairCacheFile(options.cacheDir, pair, options);
    EXPECT_FALSE(readPairCache(file, pair, options)); // nothing cached yet

    auto first = analyse(pair, options);
    ASSERT_TRUE(first);
    EXPECT_FALSE(first->reopened);
    ASSERT_FALSE(writePairCache(file, pair, options, *first).has_value());
    EXPECT_TRUE(fs::is_regular_file(file));
    EXPECT_EQ(file.parent_path(), options.cacheDir); // in the cache folder, never beside the dumps
    auto cached = readPairCache(file, pair, options);
    ASSERT_TRUE(cached);
    EXPECT_FALSE(cached->tree->hasRank());
    ASSERT_EQ(cached->tree->size(), first->skeleton->tree->size());
    EXPECT_EQ(tree::printTree(*cached->tree), tree::printTree(*first->skeleton->tree));
    EXPECT_EQ(cached->tree->find(first->firstFailure.key), first->firstFailure.node);
    EXPECT_FALSE(cached->tree->find("Functional.nothing.0.forward"));
    EXPECT_EQ(cached->status->own, first->status->own);
    EXPECT_EQ(cached->status->rowIndex, first->status->rowIndex);
    EXPECT_EQ(cached->firstFailure.key, first->firstFailure.key);
    EXPECT_EQ(cached->firstFailure.summary, first->firstFailure.summary);
    EXPECT_EQ(cached->mode, first->table->mode);

    // The reopen: the cached skeleton (no dumps yet) and the final statuses come before anything is read.
    std::vector<std::shared_ptr<const PairSkeleton>> skeletons;
    std::vector<std::shared_ptr<const NodeStatusTable>> layouts;
    int updates = 0;
    AnalysisOptions again = options;
    again.skeletonReady = [&](std::shared_ptr<const PairSkeleton> s) { skeletons.push_back(s); };
    again.layoutReady = [&](std::shared_ptr<const NodeStatusTable> s) { layouts.push_back(s); };
    again.statusUpdate = [&](StatusUpdate) { ++updates; };
    auto second = analyse(pair, again);
    ASSERT_TRUE(second);
    ASSERT_EQ(skeletons.size(), 1u); // published once, from the cache
    EXPECT_TRUE(skeletons[0]->fromCache);
    EXPECT_FALSE(skeletons[0]->npu);
    EXPECT_EQ(skeletons[0]->mode, first->table->mode);
    ASSERT_EQ(layouts.size(), 1u);
    EXPECT_EQ(layouts[0]->own, first->status->own);
    EXPECT_EQ(updates, 0);
    EXPECT_TRUE(second->reopened);
    EXPECT_EQ(second->skeleton->tree, skeletons[0]->tree); // the tree the viewer holds, now with its dumps beside it
    EXPECT_TRUE(second->skeleton->npu && second->skeleton->bench);
    EXPECT_EQ(second->status->own, first->status->own);
    EXPECT_EQ(second->firstFailure.key, first->firstFailure.key);

    // An input changed since: the cache is stale and not used.
    const fs::path dump = pair.npu.dumpFile;
    fs::last_write_time(dump, fs::last_write_time(dump) + std::chrono::seconds(5));
    EXPECT_FALSE(readPairCache(file, pair, options));
    skeletons.clear();
    auto third = analyse(pair, again);
    ASSERT_TRUE(third);
    EXPECT_FALSE(third->reopened);
    ASSERT_EQ(skeletons.size(), 1u);
    EXPECT_FALSE(skeletons[0]->fromCache);
    ASSERT_FALSE(writePairCache(file, pair, options, *third).has_value());
    EXPECT_TRUE(readPairCache(file, pair, options));

    // Other options are another cache file.
    AnalysisOptions fuzzy = options;
    fuzzy.fuzzy = true;
    EXPECT_NE(pairCacheFile(options.cacheDir, pair, fuzzy), file);
    EXPECT_FALSE(readPairCache(file, pair, fuzzy));

    // A damaged cache file is ignored, never trusted.
    const auto size = fs::file_size(file);
    fs::resize_file(file, size / 2);
    EXPECT_FALSE(readPairCache(file, pair, options));
    {
        std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
        f.seekp(static_cast<std::streamoff>(size / 4));
        f.put('\x7f');
    }
    EXPECT_FALSE(readPairCache(file, pair, options));
}

namespace {

/// Sets (or unsets, with nullptr) an environment variable for one scope.
class ScopedEnv
{
public:
    ScopedEnv(const char* name, const char* value)
        : m_name(name)
    {
        if (const char* old = std::getenv(name))
            m_old = old;
        if (value)
            ::setenv(name, value, 1);
        else
            ::unsetenv(name);
    }
    ~ScopedEnv()
    {
        if (m_old)
            ::setenv(m_name, m_old->c_str(), 1);
        else
            ::unsetenv(m_name);
    }

private:
    const char* m_name;
    std::optional<std::string> m_old;
};

} // namespace

// Issue 25: with HOME unset the cache went to the shared /tmp/probescope-cache, where another user can plant links.
TEST(PairCache, WithoutAPrivateFolderTheCacheIsOffNeverShared)
{
    probescope::testing::TempDir dir;
    ScopedEnv own("PROBESCOPE_CACHE_DIR", nullptr);
    ScopedEnv xdg("XDG_CACHE_HOME", nullptr);
    {
        ScopedEnv home("HOME", nullptr);
        std::string why;
        EXPECT_EQ(defaultCacheDir(&why), fs::path());
        EXPECT_NE(why.find("the reopen cache is off"), std::string::npos) << why;
        EXPECT_NE(why.find("HOME"), std::string::npos) << why;
    }
    // A folder writable by others, or a symbolic link, is passed over for the next choice; none left: off.
    const fs::path shared = dir.path() / "shared";
    fs::create_directories(shared);
    fs::permissions(shared, fs::perms::all);
    fs::create_directory_symlink(dir.path() / "elsewhere", dir.path() / "link");
    fs::create_directories(dir.path() / "elsewhere");
    {
        ScopedEnv ownShared("PROBESCOPE_CACHE_DIR", shared.c_str());
        ScopedEnv home("HOME", nullptr);
        std::string why;
        EXPECT_EQ(defaultCacheDir(&why), fs::path());
        EXPECT_NE(why.find("writable by other users"), std::string::npos) << why;
        EXPECT_TRUE(cacheDirProblem(shared));
        EXPECT_TRUE(cacheDirProblem(dir.path() / "link"));
        ScopedEnv xdgLink("XDG_CACHE_HOME", dir.path().c_str());
        fs::create_directory_symlink(dir.path() / "elsewhere", dir.path() / "probescope");
        EXPECT_EQ(defaultCacheDir(), fs::path()); // $XDG_CACHE_HOME/probescope is a link
        fs::remove(dir.path() / "probescope");
        EXPECT_EQ(defaultCacheDir(), dir.path() / "probescope"); // missing: created 0700 by the first write
    }
}

// A planted link in or as the cache folder is never followed: nothing is read through it, written into its target,
// or pruned there; pruning removes only the cache's own regular files.
TEST(PairCache, PlantedLinksAreNeverFollowedAndOnlyCacheFilesArePruned)
{
    probescope::testing::TempDir dir;
    auto plan = planSession(fixture("modelA_statistics_mix", "npu"), fixture("modelA_statistics_mix", "bench"));
    ASSERT_TRUE(plan.ok());
    const RankPair& pair = plan->pairs[0];
    AnalysisOptions options;
    const auto analysis = analyse(pair, options);
    ASSERT_TRUE(analysis);

    // The cache folder is a link to someone's folder holding a file with the cache's name pattern.
    const fs::path victim = dir.path() / "victim";
    fs::create_directories(victim);
    const fs::path victimFile = victim / "pair-0123456789abcdef.pspair";
    std::ofstream(victimFile) << "someone's file";
    const fs::path linked = dir.path() / "linked-cache";
    fs::create_directory_symlink(victim, linked);
    const fs::path viaLink = pairCacheFile(linked, pair, options);
    const auto refused = writePairCache(viaLink, pair, options, *analysis, 0);
    ASSERT_TRUE(refused.has_value());
    EXPECT_NE(refused->find("symbolic link"), std::string::npos) << *refused;
    EXPECT_TRUE(fs::exists(victimFile)); // not pruned
    EXPECT_FALSE(fs::exists(victim / viaLink.filename())); // nothing written there
    EXPECT_FALSE(readPairCache(viaLink, pair, options));

    // A private cache folder: created 0700.
    const fs::path cache = dir.path() / "cache";
    const fs::path file = pairCacheFile(cache, pair, options);
    ASSERT_FALSE(writePairCache(file, pair, options, *analysis).has_value());
    EXPECT_EQ(fs::status(cache).permissions() & (fs::perms::group_all | fs::perms::others_all), fs::perms::none);
    ASSERT_TRUE(readPairCache(file, pair, options));

    // A link planted at the cache file's name is not read through (even to a valid cache file) ...
    const fs::path copy = dir.path() / "copy.pspair";
    fs::copy_file(file, copy);
    fs::remove(file);
    fs::create_symlink(copy, file);
    EXPECT_FALSE(readPairCache(file, pair, options));
    // ... and a write replaces the link itself, leaving its target as it was.
    const auto before = fs::file_size(copy);
    ASSERT_FALSE(writePairCache(file, pair, options, *analysis).has_value());
    EXPECT_FALSE(fs::is_symlink(file));
    EXPECT_EQ(fs::file_size(copy), before);

    // Pruning (keep 0): links and files without the cache's name pattern stay, and so do link targets.
    fs::create_symlink(victimFile, cache / "pair-00000000000000aa.pspair");
    std::ofstream(cache / "notes.pspair") << "not a cache file";
    std::ofstream(cache / "pair-00000000000000bb.pspair") << "an old cache file";
    fs::last_write_time(cache / "pair-00000000000000bb.pspair",
                        fs::last_write_time(file) - std::chrono::hours(1));
    ASSERT_FALSE(writePairCache(file, pair, options, *analysis, 1).has_value());
    EXPECT_TRUE(fs::exists(file));
    EXPECT_FALSE(fs::exists(cache / "pair-00000000000000bb.pspair")); // the oldest cache file went
    EXPECT_TRUE(fs::is_symlink(cache / "pair-00000000000000aa.pspair"));
    EXPECT_TRUE(fs::exists(victimFile));
    EXPECT_TRUE(fs::exists(cache / "notes.pspair"));

    // A damaged cache file is a miss: the reopen analyses in full instead of trusting it.
    fs::resize_file(file, fs::file_size(file) / 3);
    EXPECT_FALSE(readPairCache(file, pair, options));
    AnalysisOptions again = options;
    again.cacheDir = cache;
    bool fromCache = false;
    again.skeletonReady = [&](std::shared_ptr<const PairSkeleton> s) { fromCache = fromCache || s->fromCache; };
    auto reopened = analyse(pair, again);
    ASSERT_TRUE(reopened);
    EXPECT_FALSE(reopened->reopened);
    EXPECT_FALSE(fromCache);
}

// ---- issue 33: a NaN or Inf NPU statistic against a finite bench one is a divergence in ProbeScope's verdict ----

namespace {

/// `text` with the Max of the first output tensor of `key` written as `spelling` (a JSON token or text).
std::string withOutputMax(std::string text, std::string_view key, std::string_view spelling)
{
    const std::size_t entry = text.find("\"" + std::string(key) + "\"");
    EXPECT_NE(entry, std::string::npos) << key;
    const std::size_t output = text.find("\"output\"", entry);
    const std::size_t max = text.find("\"Max\": ", output);
    EXPECT_NE(max, std::string::npos);
    const std::size_t value = max + 7;
    const std::size_t end = text.find_first_of(",}", value);
    return text.replace(value, end - value, spelling);
}

/// The first output row of `key` in a ptdbg .pkl with its max written as `spelling`.
std::string withPklOutputMax(std::string text, std::string_view key, std::string_view spelling)
{
    const std::size_t row = text.find("[\"" + std::string(key) + ".output");
    EXPECT_NE(row, std::string::npos) << key;
    const std::size_t eol = text.find('\n', row);
    const std::size_t summary = text.rfind(", [", eol); // the summary list [max, min, mean, norm] ends the row
    const std::size_t value = summary + 3;
    const std::size_t end = text.find(',', value);
    return text.replace(value, end - value, spelling);
}

using probescope::testing::readAll;

} // namespace

TEST(NonFiniteVerdict, ANanStatisticAgainstAFiniteOneNamesThatNodeFirstInEveryProfile)
{
    // modelA's culprit is the gelu (docs); the conv2d that runs first is clean on both sides. Its NPU output's Max
    // made NaN (as a token, as text) or Infinity, against the bench's finite Max: that node diverges first.
    const fs::path pair = probescope::testing::fixturesDir() / "modelA_statistics_mix";
    PROBESCOPE_REQUIRE_FIXTURE(pair / "npu/step0/rank/dump.json");
    const std::string key = "Functional.conv2d.0.forward";
    const std::string npuText = readAll(pair / "npu/step0/rank/dump.json");
    probescope::testing::TempDir tmp;
    for (const std::string_view spelling : { std::string_view("NaN"), std::string_view("\"nan\""),
                                             std::string_view("Infinity") }) {
        SCOPED_TRACE(std::string(spelling));
        const fs::path npu = tmp.path() / "npu/step0/rank";
        fs::remove_all(tmp.path() / "npu");
        fs::create_directories(npu);
        std::ofstream(npu / "dump.json", std::ios::binary) << withOutputMax(npuText, key, spelling);
        for (const char* f : { "construct.json", "stack.json" })
            fs::copy_file(pair / "npu/step0/rank" / f, npu / f);
        const fs::path bench = pair / "bench/step0/rank";
        for (const compare::Profile profile : { compare::Profile::Msprobe12, compare::Profile::Msprobe26 }) {
            SCOPED_TRACE(std::string(profileName(profile)));
            // The CLI's path: the job's first failing node.
            compare::JobOptions job;
            job.profile = profile;
            job.advisor = false;
            job.timestamp = "20260101000000";
            const fs::path out = tmp.path() / ("out-" + std::string(profileName(profile)));
            fs::remove_all(out);
            auto results = compare::runCompareJob({ npu / "dump.json", bench / "dump.json", {} }, out, job);
            ASSERT_TRUE(results.ok()) << results.error().format();
            ASSERT_EQ(results->size(), 1u);
            EXPECT_EQ((*results)[0].firstFailure.key, key) << (*results)[0].firstFailure.summary;
            EXPECT_TRUE((*results)[0].firstFailure.found) << (*results)[0].firstFailure.summary;
            // The viewer's path: the first failing node and the node's own status.
            auto plan = planSession(npu / "dump.json", bench / "dump.json");
            ASSERT_TRUE(plan.ok()) << plan.error().format();
            AnalysisOptions options;
            options.profile = profile;
            auto a = analyse(plan->pairs.at(0), options);
            ASSERT_TRUE(a);
            EXPECT_EQ(a->firstFailure.key, key) << a->firstFailure.summary;
            EXPECT_EQ(a->status->own[nodeOf(*a, key).value], Status::Error);
        }
    }

    // ptdbg's .pkl: the same for the conv2d of the legacy statistics dump (NaN as ptdbg's json.dump writes it).
    const fs::path legacy = probescope::testing::fixturesDir() / "legacy_ptdbg/summary_mode";
    const fs::path pkl = legacy / "npu/ptdbg_dump_v6.0/step0/rank0/dump.pkl";
    PROBESCOPE_REQUIRE_FIXTURE(pkl);
    const fs::path npuPkl = tmp.path() / "pkl/npu/rank0/dump.pkl";
    fs::create_directories(npuPkl.parent_path());
    std::ofstream(npuPkl, std::ios::binary) << withPklOutputMax(readAll(pkl), key, "NaN");
    const fs::path benchPkl = legacy / "bench/ptdbg_dump_v6.0/step0/rank0/dump.pkl";
    compare::JobOptions job;
    job.profile = compare::Profile::Ptdbg;
    job.timestamp = "20260101000000";
    auto results = compare::runCompareJob({ npuPkl, benchPkl, {} }, tmp.path() / "out-ptdbg", job);
    ASSERT_TRUE(results.ok()) << results.error().format();
    ASSERT_EQ(results->size(), 1u);
    ASSERT_FALSE((*results)[0].refused) << (*results)[0].inputDiagnostics.size();
    EXPECT_EQ((*results)[0].firstFailure.key, key) << (*results)[0].firstFailure.summary;
    auto plan = planSession(npuPkl, benchPkl);
    ASSERT_TRUE(plan.ok()) << plan.error().format();
    AnalysisOptions options;
    options.profile = compare::Profile::Ptdbg;
    auto a = analyse(plan->pairs.at(0), options);
    ASSERT_TRUE(a);
    EXPECT_EQ(a->firstFailure.key, key) << a->firstFailure.summary;
    EXPECT_EQ(a->status->own[nodeOf(*a, key).value], Status::Error);
}

TEST(NonFiniteVerdict, OnlyANonFiniteNpuStatisticAgainstAFiniteBenchOneCounts)
{
    compare::CompareTable table;
    table.header = { "NPU Name", "NPU max", "NPU min", "NPU mean", "NPU l2norm", "Bench max", "Bench min", "Bench mean",
                     "Bench l2norm" };
    const auto row = [](compare::Cell npu, compare::Cell bench) {
        return std::vector<compare::Cell> { compare::Cell::text("x"), npu, compare::Cell::number(1), compare::Cell::number(1),
                                            compare::Cell::number(1), bench, compare::Cell::number(1),
                                            compare::Cell::number(1), compare::Cell::number(1) };
    };
    const compare::NonFiniteStatistics check(table);
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const double inf = std::numeric_limits<double>::infinity();
    using compare::Cell;
    EXPECT_TRUE(check.diverges(row(Cell::number(nan), Cell::number(2))));
    EXPECT_TRUE(check.diverges(row(Cell::number(-inf), Cell::number(2))));
    EXPECT_TRUE(check.diverges(row(Cell::text("nan"), Cell::number(2))));
    EXPECT_TRUE(check.diverges(row(Cell::text("Nan"), Cell::text("2.5"))));
    EXPECT_TRUE(check.diverges(row(Cell::text("-Infinity"), Cell::integer(3))));
    EXPECT_FALSE(check.diverges(row(Cell::number(nan), Cell::number(nan)))) << "both sides NaN: no divergence here";
    EXPECT_FALSE(check.diverges(row(Cell::number(inf), Cell::text("inf"))));
    EXPECT_FALSE(check.diverges(row(Cell::number(2), Cell::number(nan)))) << "only the NPU side's non-finite value";
    EXPECT_FALSE(check.diverges(row(Cell::text("N/A"), Cell::number(2)))) << "no statistic is no verdict";
    EXPECT_FALSE(check.diverges(row(Cell::none(), Cell::number(2))));
    EXPECT_FALSE(check.diverges(row(Cell::number(2), Cell::number(3))));
}
