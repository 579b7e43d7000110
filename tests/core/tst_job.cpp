// SPDX-License-Identifier: Apache-2.0
#include "core/job/jobcompare.h"
#include "core/job/origin.h"
#include "core/job/scheduler.h"
#include "tempdir.h"

#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <set>
#include <thread>

using namespace probescope::job;

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
    TinyJob()
    {
        for (const char* rank : { "rank0", "rank1" }) {
            const double scale = std::string(rank) == "rank1" ? 5.0 : 1.0;
            dir.write(std::string("npu/step0/") + rank + "/dump.json", statsDump(scale));
            dir.write(std::string("npu/step0/") + rank + "/construct.json", "{}");
            dir.write(std::string("bench/step0/") + rank + "/dump.json", statsDump(1.0));
            dir.write(std::string("bench/step0/") + rank + "/construct.json", "{}");
        }
        input.npuPath = dir.path() / "npu";
        input.benchPath = dir.path() / "bench";
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
    // rank1's table cut short (as by a killed writer): its size no longer matches the marker.
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
