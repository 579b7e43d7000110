// SPDX-License-Identifier: Apache-2.0
#include "core/job/jobcompare.h"
#include "core/job/origin.h"
#include "core/job/scheduler.h"
#include "core/util/outputfile.h"
#include "core/util/utf8text.h"
#include "jobjournal.h"
#include "tempdir.h"
#include "testconfig.h"

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <fstream>
#include <functional>
#include <mutex>
#include <set>
#include <thread>

using namespace probescope::job;
using probescope::testing::ScratchDir;

namespace {

RankFailure failing(std::int64_t step, std::int64_t rank, std::string key, std::uint32_t exec, std::uint32_t commBefore,
                    std::string nextComm = {})
{
    RankFailure f;
    f.step = step;
    f.rank = rank;
    f.rankLabel = "rank" + std::to_string(rank);
    f.failed = true;
    f.found = true;
    f.key = std::move(key);
    f.executionIndex = exec;
    f.commBefore = commBefore;
    f.nextCommKey = std::move(nextComm);
    return f;
}

RankFailure passing(std::int64_t step, std::int64_t rank)
{
    RankFailure f;
    f.step = step;
    f.rank = rank;
    f.rankLabel = "rank" + std::to_string(rank);
    return f;
}

} // namespace

TEST(JobOrigin, NothingFails)
{
    const JobOrigin o = findJobOrigin({ passing(0, 0), passing(0, 1) });
    EXPECT_FALSE(o.fails);
    EXPECT_TRUE(o.chain.empty());
}

// The rank that receives bad data fails earlier in its own execution order than the sender; execution indices
// of different ranks cannot be compared, communication order can.
TEST(JobOrigin, OwnFailureBeatsAnEarlierReceivingNode)
{
    const JobOrigin o = findJobOrigin({
        failing(0, 0, "Distributed.recv.0.forward", 1, 1),
        failing(0, 1, "Functional.gelu.2.forward", 40, 1, "Distributed.send.0.forward"),
        passing(0, 2),
    });
    ASSERT_TRUE(o.fails);
    EXPECT_EQ(o.rank, 1);
    EXPECT_EQ(o.key, "Functional.gelu.2.forward");
    ASSERT_EQ(o.chain.size(), 2u);
    EXPECT_EQ(o.chain[0].key, "Distributed.send.0.forward");
    EXPECT_EQ(o.chain[0].role, "sent");
    EXPECT_EQ(o.chain[1].rank, 0);
    EXPECT_EQ(o.chain[1].role, "received");
}

TEST(JobOrigin, FewerCommunicationsBeforeTheFailureWins)
{
    const JobOrigin o = findJobOrigin({
        failing(0, 0, "Functional.linear.5.forward", 3, 2),
        failing(0, 1, "Functional.linear.1.forward", 90, 1),
    });
    EXPECT_EQ(o.rank, 1);
    EXPECT_EQ(o.key, "Functional.linear.1.forward");
}

TEST(JobOrigin, EarliestFailingStepWins)
{
    const JobOrigin o = findJobOrigin({
        failing(3, 0, "Functional.linear.0.forward", 0, 0),
        failing(1, 1, "Functional.linear.9.forward", 50, 4),
    });
    EXPECT_EQ(o.step, 1);
    EXPECT_EQ(o.rank, 1);
}

TEST(JobOrigin, OnlyCommunicationFailuresTakeTheFirstCollective)
{
    const JobOrigin o = findJobOrigin({
        failing(0, 0, "Distributed.all_reduce.3.forward", 30, 3),
        failing(0, 1, "Distributed.all_reduce.1.forward", 12, 1),
        failing(0, 2, "Distributed.all_reduce.3.forward", 30, 3),
    });
    EXPECT_EQ(o.rank, 1);
    EXPECT_EQ(o.key, "Distributed.all_reduce.1.forward");
    ASSERT_EQ(o.chain.size(), 2u); // the two later receivers; the origin's own node is no extra link
    EXPECT_EQ(o.chain[0].rank, 0);
    EXPECT_EQ(o.chain[1].rank, 2);
}

TEST(JobOrigin, TiesGoToTheLowerRank)
{
    const JobOrigin o = findJobOrigin({
        failing(0, 7, "Functional.gelu.1.forward", 4, 1),
        failing(0, 2, "Functional.gelu.1.forward", 4, 1),
    });
    EXPECT_EQ(o.rank, 2);
}

TEST(LocalThreadScheduler, RunsEveryPairOnceAndKeepsTheirOrder)
{
    for (unsigned threads : { 1u, 3u, 16u }) {
        LocalThreadScheduler scheduler(threads);
        std::atomic<int> calls { 0 };
        std::set<std::thread::id> workers;
        std::mutex m;
        const auto out = scheduler.run(40, [&](std::size_t i) {
            ++calls;
            std::lock_guard lock(m);
            workers.insert(std::this_thread::get_id());
            return std::to_string(i * i);
        });
        ASSERT_EQ(out.size(), 40u);
        EXPECT_EQ(calls.load(), 40);
        for (std::size_t i = 0; i < out.size(); ++i)
            EXPECT_EQ(out[i], std::to_string(i * i));
        EXPECT_LE(workers.size(), threads);
    }
    LocalThreadScheduler scheduler(4);
    EXPECT_TRUE(scheduler.run(0, [](std::size_t) { return std::string("x"); }).empty());
}

// ---- runWholeJob on a tiny root written by the test: two ranks, one step, statistics.

namespace {

/// A statistics dump.json of two calls; `scale` multiplies the gelu output (1 = the bench's values).
std::string statsDump(double scale)
{
    auto leaf = [](double v) {
        return R"({"type": "torch.Tensor", "dtype": "torch.float32", "shape": [4], "Max": )" + std::to_string(v)
            + R"(, "Min": )" + std::to_string(-v) + R"(, "Mean": 0.1, "Norm": )" + std::to_string(2 * v)
            + R"(, "requires_grad": false})";
    };
    return R"({"task": "statistics", "level": "L1", "framework": "pytorch", "dump_data_dir": null, "data": {)"
           R"("Functional.linear.0.forward": {"input_args": [)" + leaf(1.0) + R"(], "input_kwargs": {}, "output": [)"
        + leaf(2.0) + R"(]}, "Functional.gelu.0.forward": {"input_args": [)" + leaf(2.0)
        + R"(], "input_kwargs": {}, "output": [)" + leaf(3.0 * scale) + "]}}}";
}

struct TinyJob
{
    probescope::testing::TempDir dir;
    probescope::compare::CompareInput input;
    probescope::compare::JobOptions options;
    /// `folder`: where below the temp dir the two roots go (a name with odd bytes, say).
    explicit TinyJob(const std::string& folder = "")
    {
        for (const char* rank : { "rank0", "rank1" }) {
            const double scale = std::string(rank) == "rank1" ? 5.0 : 1.0;
            dir.write(folder + std::string("npu/step0/") + rank + "/dump.json", statsDump(scale));
            dir.write(folder + std::string("npu/step0/") + rank + "/construct.json", "{}");
            dir.write(folder + std::string("bench/step0/") + rank + "/dump.json", statsDump(1.0));
            dir.write(folder + std::string("bench/step0/") + rank + "/construct.json", "{}");
        }
        input.npuPath = dir.path() / (folder + "npu");
        input.benchPath = dir.path() / (folder + "bench");
        options.advisor = false;
        options.timestamp = "20260101000000";
    }
};

} // namespace

TEST(WholeJob, SummarisesEveryPairAndFindsTheFailingRank)
{
    TinyJob job;
    const auto out = job.dir.path() / "out";
    auto result = runWholeJob(job.input, out, job.options, {});
    ASSERT_TRUE(result) << result.error().format();
    ASSERT_EQ(result->pairs.size(), 2u);
    EXPECT_EQ(result->pairs[0].failingRows, 0u);
    EXPECT_GT(result->pairs[1].failingRows, 0u);
    EXPECT_EQ(result->pairs[1].failure.key, "Functional.gelu.0.forward");
    EXPECT_EQ(result->origin.rankLabel, "rank1");
    EXPECT_TRUE(std::filesystem::exists(out / "step0" / "compare_result_rank1-rank1_20260101000000.csv"));
    EXPECT_TRUE(std::filesystem::exists(out / "job_summary.csv"));
    EXPECT_EQ(originLine(*result), "job origin: step 0 rank1 Functional.gelu.0.forward (execution index 1)");
}

TEST(WholeJob, ACorruptRankIsReportedAndTheOthersComplete)
{
    TinyJob job;
    job.dir.write("npu/step0/rank0/dump.json", "{\"task\": \"statistics\", \"data\": {\"x\": [}");
    auto result = runWholeJob(job.input, job.dir.path() / "out", job.options, {});
    ASSERT_TRUE(result) << result.error().format();
    ASSERT_EQ(result->failedPairs(), 1u);
    EXPECT_FALSE(result->pairs[0].compared);
    EXPECT_EQ(result->pairs[0].errorId, "json.syntax");
    EXPECT_NE(result->pairs[0].error.find("rank0/dump.json:1:"), std::string::npos) << result->pairs[0].error;
    EXPECT_TRUE(result->pairs[1].compared);
    EXPECT_EQ(result->origin.rankLabel, "rank1");
    EXPECT_NE(jobSummaryJson(*result).find("\"pairs_failed_to_compare\": [\n  {"), std::string::npos);
}

TEST(WholeJob, ResumeKeepsCompletePairsAndRedoesAPairWhoseFileChanged)
{
    TinyJob job;
    const auto out = job.dir.path() / "out";
    ASSERT_TRUE(runWholeJob(job.input, out, job.options, {}));
    // rank1's table cut short (as by a killed writer): its size no longer matches its entry.
    const auto table = out / "step0" / "compare_result_rank1-rank1_20260101000000.csv";
    std::filesystem::resize_file(table, 10);
    WholeJobOptions resume;
    resume.resume = true;
    job.options.timestamp = "20260102000000";
    auto result = runWholeJob(job.input, out, job.options, resume);
    ASSERT_TRUE(result) << result.error().format();
    EXPECT_TRUE(result->pairs[0].resumed);
    EXPECT_FALSE(result->pairs[1].resumed);
    EXPECT_FALSE(std::filesystem::exists(table)); // the incomplete output of the first run is gone
    EXPECT_TRUE(std::filesystem::exists(out / "step0" / "compare_result_rank1-rank1_20260102000000.csv"));
    EXPECT_TRUE(std::filesystem::exists(out / "step0" / "compare_result_rank0-rank0_20260101000000.csv"));
    EXPECT_EQ(result->origin.rankLabel, "rank1");
}

TEST(WholeJob, StepAndRankListsSelect)
{
    TinyJob job;
    WholeJobOptions select;
    select.ranks = { 1 };
    auto result = runWholeJob(job.input, job.dir.path() / "out", job.options, select);
    ASSERT_TRUE(result);
    ASSERT_EQ(result->pairs.size(), 1u);
    EXPECT_EQ(result->pairs[0].npuRank, "rank1");
    select.steps = { 4 };
    auto none = runWholeJob(job.input, job.dir.path() / "out", job.options, select);
    ASSERT_FALSE(none);
    EXPECT_EQ(none.error().id, "job.empty");
}

// ---- Issue 25: the whole job says what it did not compare, never replaces its summary, survives odd bytes in
// paths, and --resume trusts only entries whose inputs are unchanged.

namespace {

std::string markerOf(const std::filesystem::path& out, const char* rank)
{
    return (out / "step0" / ".probescope" / (std::string("pair_") + rank + "-" + rank + ".json")).string();
}

} // namespace

TEST(WholeJob, TheDemoRootAsTheNpuSideIsRefusedNotACrash)
{
    probescope::compare::CompareInput input;
    input.npuPath = probescope::testing::sourceDir() / "resources/demo";
    input.benchPath = probescope::testing::sourceDir() / "resources/demo/bench";
    probescope::testing::TempDir dir;
    auto result = runWholeJob(input, dir.path() / "out", {}, {});
    ASSERT_FALSE(result);
    EXPECT_EQ(result.error().id, "dump.duplicate-place");
    EXPECT_NE(result.error().message.find("demo/npu/step0/rank/dump.json"), std::string::npos);
    EXPECT_NE(result.error().message.find("demo/bench/step0/rank/dump.json"), std::string::npos);
}

TEST(WholeJob, AStepOnOneSideIsListedAsNotCompared)
{
    TinyJob job;
    job.dir.write("npu/step1/rank0/dump.json", statsDump(1.0));
    job.dir.write("npu/step1/rank1/dump.json", statsDump(1.0));
    job.dir.write("bench/step2/rank0/dump.json", statsDump(1.0));
    const auto out = job.dir.path() / "out";
    auto result = runWholeJob(job.input, out, job.options, {});
    ASSERT_TRUE(result) << result.error().format();
    ASSERT_EQ(result->pairs.size(), 5u);
    EXPECT_EQ(result->comparedOrFailed(), 2u);
    EXPECT_EQ(result->oneSidedPlaces(), 3u);
    EXPECT_EQ(result->failedPairs(), 0u);
    EXPECT_TRUE(result->pairs[1].compared);
    EXPECT_EQ(result->pairs[2].step, 1);
    EXPECT_EQ(result->pairs[2].onlyIn, "npu");
    EXPECT_EQ(result->pairs[2].npuRank, "rank0");
    EXPECT_EQ(result->pairs[2].errorId, "session.step-unpaired");
    EXPECT_NE(result->pairs[2].error.find("the bench dump has no step 1"), std::string::npos) << result->pairs[2].error;
    EXPECT_EQ(result->pairs[4].step, 2);
    EXPECT_EQ(result->pairs[4].onlyIn, "bench");
    EXPECT_TRUE(result->pairs[4].npuDump.empty());
    EXPECT_FALSE(std::filesystem::exists(out / "step1")); // nothing compared there

    const std::string summaryText = probescope::testing::readAll(result->summaryJson);
    const auto summary = nlohmann::json::parse(summaryText);
    // The pairs are spliced into the summary one by one (no DOM of every pair): the bytes are still those of the
    // whole document dumped at once.
    EXPECT_EQ(summary.dump(1) + "\n", summaryText);
    ASSERT_EQ(summary.at("pairs").size(), 5u);
    EXPECT_EQ(summary["pairs"][4]["only_in"], "bench");
    ASSERT_EQ(summary.at("pairs_not_compared").size(), 3u);
    EXPECT_EQ(summary["pairs_not_compared"][2]["only_in"], "bench");
    EXPECT_EQ(summary["pairs_failed_to_compare"].size(), 0u);
    const std::string csv = probescope::testing::readAll(result->summaryCsv);
    EXPECT_NE(csv.find("\n1,rank0,,npu-only,"), std::string::npos) << csv;
    EXPECT_NE(csv.find("\n2,,rank0,bench-only,"), std::string::npos) << csv;

    // --step 0 leaves the one-sided steps out of the job, as it leaves out their pairs.
    WholeJobOptions step0;
    step0.steps = { 0 };
    auto only0 = runWholeJob(job.input, out, job.options, step0);
    ASSERT_TRUE(only0);
    EXPECT_EQ(only0->oneSidedPlaces(), 0u);
}

TEST(WholeJob, TheSummaryIsNeverReplaced)
{
    TinyJob job;
    const auto out = job.dir.path() / "out";
    auto first = runWholeJob(job.input, out, job.options, {});
    ASSERT_TRUE(first);
    EXPECT_EQ(first->summaryCsv, out / "job_summary.csv");
    EXPECT_EQ(first->summaryJson, out / "job_summary.json");
    const std::string before = probescope::testing::readAll(out / "job_summary.json");
    job.dir.write("npu/step0/rank0/dump.json", "{\"task\": \"statistics\", \"data\": {\"x\": [}"); // differs now
    auto second = runWholeJob(job.input, out, job.options, {});
    ASSERT_TRUE(second);
    EXPECT_EQ(second->summaryCsv, out / "job_summary_1.csv");
    EXPECT_EQ(second->summaryJson, out / "job_summary_1.json"); // the same tag for both
    EXPECT_EQ(probescope::testing::readAll(out / "job_summary.json"), before);
    EXPECT_NE(probescope::testing::readAll(out / "job_summary_1.json"), before);
    // A stray json with the next tag: both files move on to a tag free for both.
    job.dir.write("out/job_summary_2.json", "mine");
    auto third = runWholeJob(job.input, out, job.options, {});
    ASSERT_TRUE(third);
    EXPECT_EQ(third->summaryCsv, out / "job_summary_3.csv");
    EXPECT_FALSE(std::filesystem::exists(out / "job_summary_2.csv"));
    EXPECT_EQ(probescope::testing::readAll(out / "job_summary_2.json"), "mine");
}

TEST(WholeJob, ASummaryThatCannotBeWrittenKeepsThePairsAndNamesTheFinalFile)
{
    TinyJob job;
    job.dir.write("npu/step0/rank0/dump.json", "{\"task\": \"statistics\", \"data\": {\"x\": [}");
    ScratchDir scratch; // 1,000 files
    const auto out = scratch.path() / "out";
    std::filesystem::create_directories(out);
    std::ofstream(out / "job_summary.csv") << "";
    for (int n = 1; n < 1000; ++n)
        std::ofstream(out / ("job_summary_" + std::to_string(n) + ".csv")) << "";
    auto result = runWholeJob(job.input, out, job.options, {});
    ASSERT_TRUE(result) << result.error().format();
    ASSERT_TRUE(result->summaryError);
    EXPECT_EQ(result->summaryError->id, "job.output");
    EXPECT_NE(result->summaryError->format().find((out / "job_summary.csv").string()), std::string::npos);
    EXPECT_EQ(result->summaryError->format().find(".tmp"), std::string::npos) << result->summaryError->format();
    ASSERT_EQ(result->pairs.size(), 2u); // the per-pair results are all there to print
    EXPECT_EQ(result->pairs[0].errorId, "json.syntax");
    EXPECT_TRUE(result->pairs[1].compared);
    EXPECT_FALSE(std::filesystem::exists(out / "job_summary.json")); // never a csv without its json
}

// Issue 37: one durability barrier per batch instead of an fsync per file. When the barrier fails (the full-disk
// seam's fsync step; a real syncfs reports EIO or ENOSPC), nothing vouches for the outputs: no journal entry, so
// --resume compares the pairs again, and no summary; the error names OUT.
TEST(WholeJob, OutputsThatCannotBeMadeDurableGetNoEntryAndNoSummary)
{
    TinyJob job;
    const auto out = job.dir.path() / "out";
    probescope::setTestFullDisk("fsync:all");
    auto result = runWholeJob(job.input, out, job.options, {});
    probescope::setTestFullDisk("");
    ASSERT_TRUE(result) << result.error().format();
    ASSERT_TRUE(result->summaryError);
    EXPECT_EQ(result->summaryError->id, "job.output");
    EXPECT_NE(result->summaryError->format().find("cannot make the outputs durable in " + out.string()),
              std::string::npos)
        << result->summaryError->format();
    EXPECT_FALSE(std::filesystem::exists(out / "job_summary.csv"));
    EXPECT_FALSE(std::filesystem::exists(out / "job_summary.json"));
    ASSERT_EQ(result->pairs.size(), 2u);
    for (const PairSummary& s : result->pairs) {
        EXPECT_FALSE(s.compared);
        EXPECT_EQ(s.errorId, "job.output");
    }
    EXPECT_TRUE(probescope::testing::journalFiles(out).empty());
    // The tables themselves were written whole (renamed into place); a rerun with --resume redoes the pairs and
    // ends as a fresh run does.
    EXPECT_TRUE(std::filesystem::exists(out / "step0" / "compare_result_rank1-rank1_20260101000000.csv"));
    WholeJobOptions resume;
    resume.resume = true;
    auto again = runWholeJob(job.input, out, job.options, resume);
    ASSERT_TRUE(again) << again.error().format();
    EXPECT_FALSE(again->summaryError);
    EXPECT_FALSE(again->pairs[1].resumed);
    EXPECT_TRUE(again->pairs[1].compared);
    EXPECT_EQ(probescope::testing::entriesFor(out, "step0/rank1-rank1"), 1u);
    EXPECT_EQ(again->origin.rankLabel, "rank1");
}

// The progress of a job: the range is the number of pairs and every pair advances it once, on any thread.
TEST(WholeJob, ReportsProgressPerPair)
{
    struct Counting : probescope::ProgressSink
    {
        std::uint64_t total = 0;
        std::vector<std::uint64_t> seen;
        void setRange(std::uint64_t t) override { total = t; }
        void advance(std::uint64_t done) override { seen.push_back(done); }
        bool isCancelled() const override { return false; }
    } progress;
    TinyJob job;
    LocalThreadScheduler two(2);
    WholeJobOptions options;
    options.scheduler = &two;
    options.progress = &progress;
    auto result = runWholeJob(job.input, job.dir.path() / "out", job.options, options);
    ASSERT_TRUE(result) << result.error().format();
    EXPECT_EQ(progress.total, 2u);
    EXPECT_EQ(progress.seen, (std::vector<std::uint64_t> { 1, 2 }));
    EXPECT_FALSE(two.onPairDone); // the job's callback is not left behind in the caller's scheduler
}

TEST(WholeJob, OddBytesInADumpPathAreEscapedInTheSummary)
{
    TinyJob job("odd\xff\xfe/");
    const auto out = job.dir.path() / "out";
    auto result = runWholeJob(job.input, out, job.options, {});
    ASSERT_TRUE(result) << result.error().format();
    ASSERT_FALSE(result->summaryError) << result->summaryError->format();
    ASSERT_EQ(result->pairs.size(), 2u);
    EXPECT_TRUE(result->pairs[0].compared);
    const std::string text = probescope::testing::readAll(result->summaryJson);
    EXPECT_TRUE(probescope::isValidUtf8(text));
    const auto summary = nlohmann::json::parse(text);
    EXPECT_EQ(summary.dump(1) + "\n", text); // escaped bytes: the same as the whole document dumped at once
    const std::string npuDump = summary["pairs"][0]["npu_dump"];
    EXPECT_NE(npuDump.find("odd\\xff\\xfe/npu/step0/rank0/dump.json"), std::string::npos) << npuDump;
    EXPECT_TRUE(probescope::isValidUtf8(probescope::testing::readAll(result->summaryCsv)));
    // The journal's entries hold the same escaping, and --resume trusts them.
    WholeJobOptions resume;
    resume.resume = true;
    auto again = runWholeJob(job.input, out, job.options, resume);
    ASSERT_TRUE(again);
    EXPECT_TRUE(again->pairs[0].resumed);
    EXPECT_TRUE(again->pairs[1].resumed);
    EXPECT_EQ(again->pairs[0].npuDump, result->pairs[0].npuDump); // raw bytes, as planned
    EXPECT_EQ(probescope::testing::readAll(again->summaryJson), text);
}

TEST(WholeJob, ResumeAfterADumpChangedEqualsAFreshRun)
{
    TinyJob job;
    const auto resumed = job.dir.path() / "resumed";
    const auto fresh = job.dir.path() / "fresh";
    ASSERT_TRUE(runWholeJob(job.input, resumed, job.options, {}));
    // rank0's NPU dump changes to values of the same length, and its mtime is set back: only ctime tells.
    const auto dump = job.input.npuPath / "step0/rank0/dump.json";
    const auto mtime = std::filesystem::last_write_time(dump);
    const std::string old = probescope::testing::readAll(dump);
    std::this_thread::sleep_for(std::chrono::milliseconds(20)); // past the clock tick of the first write
    job.dir.write("npu/step0/rank0/dump.json", statsDump(1.5));
    ASSERT_EQ(probescope::testing::readAll(dump).size(), old.size());
    std::filesystem::last_write_time(dump, mtime);

    WholeJobOptions resume;
    resume.resume = true;
    auto again = runWholeJob(job.input, resumed, job.options, resume);
    ASSERT_TRUE(again) << again.error().format();
    EXPECT_FALSE(again->pairs[0].resumed); // its dump changed: compared again
    EXPECT_TRUE(again->pairs[1].resumed);
    auto full = runWholeJob(job.input, fresh, job.options, {});
    ASSERT_TRUE(full);
    EXPECT_EQ(probescope::testing::readAll(again->summaryJson), probescope::testing::readAll(full->summaryJson));
    EXPECT_EQ(probescope::testing::readAll(again->summaryCsv), probescope::testing::readAll(full->summaryCsv));
    for (const char* table : { "step0/compare_result_rank0-rank0_20260101000000.csv",
                               "step0/compare_result_rank1-rank1_20260101000000.csv" })
        EXPECT_EQ(probescope::testing::readAll(resumed / table), probescope::testing::readAll(fresh / table)) << table;
}

// The marker files of the version before the journal (one a pair) are read as they were: a damaged one, one of an
// older ProbeScope or a symlink at a marker's name is never trusted.
TEST(WholeJob, ADamagedForeignOrSymlinkedOldMarkerIsNeverTrusted)
{
    TinyJob job;
    const auto out = job.dir.path() / "out";
    ASSERT_TRUE(runWholeJob(job.input, out, job.options, {}));
    probescope::testing::journalsToOldMarkers(out);
    WholeJobOptions resume;
    resume.resume = true;

    // Damaged: cut in half.
    const std::string marker0 = markerOf(out, "rank0");
    const std::string good = probescope::testing::readAll(marker0);
    job.dir.write(std::filesystem::path(marker0).lexically_relative(job.dir.path()), good.substr(0, good.size() / 2));
    // Another version: the marker of an older ProbeScope (no version, no inputs).
    const std::string marker1 = markerOf(out, "rank1");
    auto old = nlohmann::json::parse(probescope::testing::readAll(marker1));
    old.erase("marker_version");
    old.erase("inputs");
    job.dir.write(std::filesystem::path(marker1).lexically_relative(job.dir.path()), old.dump());
    auto result = runWholeJob(job.input, out, job.options, resume);
    ASSERT_TRUE(result);
    EXPECT_FALSE(result->pairs[0].resumed);
    EXPECT_FALSE(result->pairs[1].resumed);
    EXPECT_TRUE(result->pairs[0].compared && result->pairs[1].compared);

    // A symlink at the marker's name, to a copy of a valid marker: not read, and never written through (the pair's new
    // entry goes into a journal; the link stays as it is).
    probescope::testing::journalsToOldMarkers(out);
    const auto target = job.dir.path() / "elsewhere.json";
    job.dir.write("elsewhere.json", probescope::testing::readAll(marker0));
    std::filesystem::remove(marker0);
    std::filesystem::create_symlink(target, marker0);
    const std::string targetBefore = probescope::testing::readAll(target);
    auto linked = runWholeJob(job.input, out, job.options, resume);
    ASSERT_TRUE(linked);
    EXPECT_FALSE(linked->pairs[0].resumed);
    EXPECT_TRUE(linked->pairs[1].resumed);
    EXPECT_TRUE(std::filesystem::is_symlink(marker0));
    EXPECT_EQ(probescope::testing::readAll(target), targetBefore);
    EXPECT_EQ(probescope::testing::entriesFor(out, "step0/rank0-rank0"), 1u);
    EXPECT_EQ(probescope::testing::entriesFor(out, "step0/rank1-rank1"), 0u); // kept by its marker

    // Options that change the outputs (--xlsx) make every entry stale: the journal's and the old marker.
    job.options.xlsx = true;
    auto xlsx = runWholeJob(job.input, out, job.options, resume);
    ASSERT_TRUE(xlsx);
    EXPECT_FALSE(xlsx->pairs[0].resumed);
    EXPECT_FALSE(xlsx->pairs[1].resumed);
}

// ---- Issue 37: one journal file per batch of pairs instead of one marker file per pair.

namespace {

/// The journal file that holds `key`'s latest entry, and that entry's line number in it.
std::pair<std::filesystem::path, std::size_t> latestEntry(const std::filesystem::path& out, const std::string& key)
{
    std::pair<std::filesystem::path, std::size_t> found;
    for (const auto& journal : probescope::testing::journalFiles(out)) {
        const auto entries = probescope::testing::journalEntries(journal);
        for (std::size_t i = 0; i < entries.size(); ++i) {
            if (entries[i].value("pair", std::string()) == key)
                found = { journal, i };
        }
    }
    return found;
}

/// Replaces line `line` of `journal` by `text` (a damaged or hand-edited journal).
void editLine(const std::filesystem::path& journal, std::size_t line, const std::string& text)
{
    std::vector<std::string> lines;
    {
        std::ifstream in(journal);
        for (std::string l; std::getline(in, l);)
            lines.push_back(l);
    }
    ASSERT_LT(line, lines.size());
    lines[line] = text;
    std::ofstream out(journal, std::ios::trunc);
    for (const std::string& l : lines)
        out << l << '\n';
}

} // namespace

// A job folder written by the version before the journal: --resume keeps its pairs from their marker files, writes no
// journal for them, and ends with the summary the first run wrote; so does the run after it (the markers stay).
TEST(WholeJob, ResumeReadsTheMarkersOfTheVersionBeforeTheJournal)
{
    TinyJob job;
    const auto out = job.dir.path() / "out";
    auto first = runWholeJob(job.input, out, job.options, {});
    ASSERT_TRUE(first) << first.error().format();
    ASSERT_EQ(probescope::testing::journalFiles(out).size(), 1u);
    EXPECT_EQ(probescope::testing::journalEntries(probescope::testing::journalFiles(out)[0]).size(), 2u);
    probescope::testing::journalsToOldMarkers(out);
    ASSERT_TRUE(std::filesystem::is_regular_file(markerOf(out, "rank0")));
    ASSERT_TRUE(std::filesystem::is_regular_file(markerOf(out, "rank1")));
    WholeJobOptions resume;
    resume.resume = true;
    for (int run = 0; run < 2; ++run) {
        auto again = runWholeJob(job.input, out, job.options, resume);
        ASSERT_TRUE(again) << again.error().format();
        EXPECT_TRUE(again->pairs[0].resumed) << run;
        EXPECT_TRUE(again->pairs[1].resumed) << run;
        EXPECT_EQ(probescope::testing::readAll(again->summaryJson), probescope::testing::readAll(first->summaryJson));
        EXPECT_EQ(probescope::testing::readAll(again->summaryCsv), probescope::testing::readAll(first->summaryCsv));
        EXPECT_TRUE(probescope::testing::journalFiles(out).empty()); // nothing compared, nothing to journal
    }
}

// A damaged or edited journal line costs only its pair a compare; a journal that is not one at all costs nothing.
TEST(WholeJob, ADamagedJournalLineIsComparedAgainAndTheOthersKept)
{
    TinyJob job;
    WholeJobOptions resume;
    resume.resume = true;
    struct Damage
    {
        const char* what;
        std::function<std::string(const std::string& line)> edit;
    };
    const Damage damages[] = {
        { "cut in half", [](const std::string& line) { return line.substr(0, line.size() / 2); } },
        { "its start damaged", [](const std::string& line) { return "{\"pear" + line.substr(6); } },
        { "an output's size edited",
          [](const std::string& line) {
              auto j = nlohmann::json::parse(line);
              const std::string key = j["pair"].dump();
              j.erase("pair");
              j["file_sizes"][0] = j["file_sizes"][0].get<std::uint64_t>() + 1;
              return "{\"pair\":" + key + "," + j.dump().substr(1);
          } },
        { "another format's version",
          [](const std::string& line) {
              std::string edited = line;
              edited.replace(edited.find("\"marker_version\":2"), 18, "\"marker_version\":3");
              return edited;
          } },
    };
    for (const Damage& damage : damages) {
        const auto out = job.dir.path() / ("out-" + std::string(damage.what));
        ASSERT_TRUE(runWholeJob(job.input, out, job.options, {}));
        const auto [journal, line] = latestEntry(out, "step0/rank0-rank0");
        ASSERT_FALSE(journal.empty());
        std::ifstream in(journal);
        std::string text;
        for (std::size_t i = 0; i <= line; ++i)
            std::getline(in, text);
        in.close();
        editLine(journal, line, damage.edit(text));
        auto again = runWholeJob(job.input, out, job.options, resume);
        ASSERT_TRUE(again) << again.error().format();
        EXPECT_FALSE(again->pairs[0].resumed) << damage.what;
        EXPECT_TRUE(again->pairs[0].compared) << damage.what;
        EXPECT_TRUE(again->pairs[1].resumed) << damage.what;
        const auto journals = probescope::testing::journalFiles(out);
        ASSERT_EQ(journals.size(), 2u) << damage.what; // the first run's and the redo's
        const auto redo = probescope::testing::journalEntries(journals[1]);
        ASSERT_EQ(redo.size(), 1u) << damage.what;
        EXPECT_EQ(redo[0].at("pair"), "step0/rank0-rank0") << damage.what;
        // The pair's new entry, in a new journal, is trusted by the next run.
        auto third = runWholeJob(job.input, out, job.options, resume);
        ASSERT_TRUE(third);
        EXPECT_TRUE(third->pairs[0].resumed) << damage.what;
        EXPECT_TRUE(third->pairs[1].resumed) << damage.what;
    }
    // A journal that is none (binary bytes, an empty file, a newer number): read past, never a crash.
    const auto out = job.dir.path() / "out-garbage";
    ASSERT_TRUE(runWholeJob(job.input, out, job.options, {}));
    job.dir.write("out-garbage/.probescope/journal/journal_7.jsonl", std::string("\0\xff{\"pair\":\"\\", 13));
    job.dir.write("out-garbage/.probescope/journal/journal_8.jsonl", "");
    job.dir.write("out-garbage/.probescope/journal/journal_9.jsonl", "{\"pair\":\"step0/rank1-rank1\",\"compared\":tru");
    auto again = runWholeJob(job.input, out, job.options, resume);
    ASSERT_TRUE(again) << again.error().format();
    EXPECT_TRUE(again->pairs[0].resumed);
    EXPECT_FALSE(again->pairs[1].resumed); // its latest entry is the damaged one of journal_9
    EXPECT_TRUE(again->pairs[1].compared);
}

// Journals are claimed, never replaced: a symlink or a foreign file at a journal's name is left as it is (and a
// symlink is never read), the job's journal takes the next free number; a journal folder that is a symlink is refused.
TEST(WholeJob, AJournalNameTakenBySymlinkOrForeignFileIsNeverOverwritten)
{
    TinyJob job;
    const auto out = job.dir.path() / "out";
    job.dir.write("theirs.jsonl", "theirs\n");
    job.dir.write("out/.probescope/journal/journal_2.jsonl", "mine\n");
    std::filesystem::create_symlink(job.dir.path() / "theirs.jsonl", out / ".probescope/journal/journal_1.jsonl");
    auto first = runWholeJob(job.input, out, job.options, {});
    ASSERT_TRUE(first) << first.error().format();
    EXPECT_TRUE(first->pairs[0].compared && first->pairs[1].compared);
    EXPECT_EQ(probescope::testing::readAll(job.dir.path() / "theirs.jsonl"), "theirs\n");
    EXPECT_TRUE(std::filesystem::is_symlink(out / ".probescope/journal/journal_1.jsonl"));
    EXPECT_EQ(probescope::testing::readAll(out / ".probescope/journal/journal_2.jsonl"), "mine\n");
    const auto ours = out / ".probescope/journal/journal_3.jsonl";
    ASSERT_TRUE(std::filesystem::is_regular_file(ours));
    EXPECT_EQ(probescope::testing::journalEntries(ours).size(), 2u);

    // A symlink with a later number, to a journal whose entry for rank0 is stale: never read, so rank0 is kept.
    const std::string good = probescope::testing::readAll(ours);
    std::string stale = good;
    stale.replace(stale.find("\"marker_version\":2"), 18, "\"marker_version\":3");
    job.dir.write("stale.jsonl", stale);
    std::filesystem::create_symlink(job.dir.path() / "stale.jsonl", out / ".probescope/journal/journal_10.jsonl");
    WholeJobOptions resume;
    resume.resume = true;
    auto again = runWholeJob(job.input, out, job.options, resume);
    ASSERT_TRUE(again) << again.error().format();
    EXPECT_TRUE(again->pairs[0].resumed);
    EXPECT_TRUE(again->pairs[1].resumed);
    // A new run's journal sorts after every name taken, the symlink's too.
    job.options.timestamp = "20260103000000";
    ASSERT_TRUE(runWholeJob(job.input, out, job.options, {}));
    EXPECT_TRUE(std::filesystem::is_regular_file(out / ".probescope/journal/journal_11.jsonl"));
    EXPECT_EQ(probescope::testing::readAll(job.dir.path() / "stale.jsonl"), stale);

    // The journal folder itself a symlink: nothing is written through it; the pairs are not complete.
    const auto linked = job.dir.path() / "linked";
    std::filesystem::create_directories(job.dir.path() / "elsewhere");
    std::filesystem::create_directories(linked / ".probescope");
    std::filesystem::create_directory_symlink(job.dir.path() / "elsewhere", linked / ".probescope/journal");
    auto refused = runWholeJob(job.input, linked, job.options, {});
    ASSERT_TRUE(refused) << refused.error().format();
    for (const PairSummary& s : refused->pairs) {
        EXPECT_FALSE(s.compared);
        EXPECT_EQ(s.errorId, "job.output");
        EXPECT_NE(s.error.find("symlink"), std::string::npos) << s.error;
    }
    EXPECT_TRUE(std::filesystem::is_empty(job.dir.path() / "elsewhere"));
}

// Resumed runs add journals and never replace one: every entry of an earlier run stays for the pairs a run skips, and
// a later entry for a pair wins over an earlier one.
TEST(WholeJob, ConsecutiveResumedRunsKeepEveryEntry)
{
    TinyJob job;
    const auto out = job.dir.path() / "out";
    WholeJobOptions only0;
    only0.ranks = { 0 };
    ASSERT_TRUE(runWholeJob(job.input, out, job.options, only0));
    WholeJobOptions resume;
    resume.resume = true;
    auto second = runWholeJob(job.input, out, job.options, resume);
    ASSERT_TRUE(second) << second.error().format();
    EXPECT_TRUE(second->pairs[0].resumed);
    EXPECT_FALSE(second->pairs[1].resumed);
    auto third = runWholeJob(job.input, out, job.options, resume);
    ASSERT_TRUE(third) << third.error().format();
    EXPECT_TRUE(third->pairs[0].resumed);
    EXPECT_TRUE(third->pairs[1].resumed);
    auto journals = probescope::testing::journalFiles(out);
    ASSERT_EQ(journals.size(), 2u);
    EXPECT_EQ(journals[0].filename(), "journal_1.jsonl");
    EXPECT_EQ(probescope::testing::journalEntries(journals[0]).at(0).at("pair"), "step0/rank0-rank0");
    EXPECT_EQ(probescope::testing::journalEntries(journals[1]).at(0).at("pair"), "step0/rank1-rank1");
    EXPECT_EQ(probescope::testing::readAll(third->summaryJson), probescope::testing::readAll(second->summaryJson));

    // A full run (no --resume) with another timestamp: its entries are the latest, so --resume keeps its tables.
    job.options.timestamp = "20260105000000";
    ASSERT_TRUE(runWholeJob(job.input, out, job.options, {}));
    auto fourth = runWholeJob(job.input, out, job.options, resume);
    ASSERT_TRUE(fourth);
    ASSERT_EQ(fourth->pairs.size(), 2u);
    for (const PairSummary& s : fourth->pairs) {
        EXPECT_TRUE(s.resumed);
        ASSERT_EQ(s.files.size(), 1u);
        EXPECT_NE(s.files[0].find("_20260105000000.csv"), std::string::npos) << s.files[0];
    }
    EXPECT_EQ(probescope::testing::journalFiles(out).size(), 3u);
}

TEST(WholeJob, RanksPairedAcrossDifferentNamesAreSaid)
{
    // msprobe pairs rank folders in sorted order when the counts agree: rank1 (NPU only) with rank2 (bench only).
    TinyJob job;
    std::filesystem::rename(job.input.benchPath / "step0/rank1", job.input.benchPath / "step0/rank2");
    auto result = runWholeJob(job.input, job.dir.path() / "out", job.options, {});
    ASSERT_TRUE(result) << result.error().format();
    ASSERT_EQ(result->pairs.size(), 2u);
    EXPECT_EQ(result->pairs[1].benchRank, "rank2");
    const auto said = std::find_if(result->diagnostics.begin(), result->diagnostics.end(),
                                   [](const probescope::Diagnostic& d) { return d.id == "session.rank-order"; });
    ASSERT_NE(said, result->diagnostics.end());
    EXPECT_NE(said->message.find("(NPU rank1 with bench rank2)"), std::string::npos) << said->message;
}
