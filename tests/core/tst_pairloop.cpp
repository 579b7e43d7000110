// SPDX-License-Identifier: Apache-2.0
// compare::runPairs, the one loop over pairs (issue 38): results in plan order whatever order the pairs finish in, a
// stop and a cancel, the window, the settle step; and the whole job on it: the same summary on one thread and on many,
// streamed pair by pair (issue 37: memory flat in the number of ranks).
#include "core/compare/pipeline/comparerun.h"
#include "core/compare/schedule/schedule.h"
#include "core/job/jobcompare.h"
#include "jobjournal.h"
#include "tempdir.h"
#include "testconfig.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <set>
#include <thread>

using namespace probescope;
namespace fs = std::filesystem;
using compare::LocalThreadScheduler;
using compare::PairDone;
using compare::PairLoop;
using compare::PairLoopEnd;
using compare::runPairs;

namespace {

/// Waits (at most 10 s, so that a broken schedule fails instead of hanging) until `pred` holds.
template <class Pred>
bool waitFor(Pred pred)
{
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!pred()) {
        if (std::chrono::steady_clock::now() > until)
            return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return true;
}

} // namespace

TEST(PairLoop, ResultsArriveInPlanOrderWhenLaterPairsFinishFirst)
{
    LocalThreadScheduler four(4);
    std::mutex m;
    std::vector<std::size_t> finished; // the order the work ended in
    std::vector<std::size_t> consumed;
    std::atomic<int> laterDone { 0 };
    PairLoop loop;
    loop.count = 30;
    loop.scheduler = &four;
    loop.task.work = [&](std::size_t i) {
        // Pair 0 ends only after three later pairs ended: its result comes last of those, yet is consumed first.
        if (i == 0) {
            EXPECT_TRUE(waitFor([&] { return laterDone.load() >= 3; }));
        }
        {
            const std::lock_guard lock(m);
            finished.push_back(i);
        }
        if (i != 0)
            ++laterDone;
        return "pair " + std::to_string(i);
    };
    loop.consume = [&](std::size_t i, std::string&& text) {
        EXPECT_EQ(text, "pair " + std::to_string(i));
        consumed.push_back(i);
        return true;
    };
    EXPECT_EQ(runPairs(loop), PairLoopEnd::Complete);
    ASSERT_EQ(consumed.size(), 30u);
    for (std::size_t i = 0; i < consumed.size(); ++i)
        EXPECT_EQ(consumed[i], i);
    ASSERT_EQ(finished.size(), 30u);
    EXPECT_NE(finished.front(), 0u); // the reorder was needed
}

TEST(PairLoop, OneThreadRunsAndConsumesEachPairBeforeTheNext)
{
    std::vector<std::string> events;
    PairLoop loop;
    loop.count = 3;
    loop.task.work = [&](std::size_t i) {
        events.push_back("work " + std::to_string(i));
        return std::string();
    };
    loop.consume = [&](std::size_t i, std::string&&) {
        events.push_back("consume " + std::to_string(i));
        return true;
    };
    EXPECT_EQ(runPairs(loop), PairLoopEnd::Complete);
    EXPECT_EQ(events, (std::vector<std::string> { "work 0", "consume 0", "work 1", "consume 1", "work 2", "consume 2" }));
}

// A pair in the middle fails (the compare run's option error, an output that cannot be written): the pairs before it
// are consumed, none after, and on one thread none after is even started.
TEST(PairLoop, AFailingPairInTheMiddleStopsTheLoop)
{
    for (unsigned threads : { 1u, 4u }) {
        LocalThreadScheduler schedule(threads);
        std::atomic<std::size_t> started { 0 };
        std::vector<std::size_t> consumed;
        PairLoop loop;
        loop.count = 20;
        loop.scheduler = &schedule;
        loop.task.work = [&](std::size_t i) {
            ++started;
            return i == 7 ? std::string("failed") : std::string("ok");
        };
        loop.consume = [&](std::size_t i, std::string&& text) {
            consumed.push_back(i);
            return text == "ok";
        };
        EXPECT_EQ(runPairs(loop), PairLoopEnd::Stopped) << threads;
        ASSERT_EQ(consumed.size(), 8u) << threads;
        EXPECT_EQ(consumed.back(), 7u);
        if (threads == 1) {
            EXPECT_EQ(started.load(), 8u);
        }
    }
}

TEST(PairLoop, ACancelStartsNoFurtherPair)
{
    for (unsigned threads : { 1u, 3u }) {
        LocalThreadScheduler schedule(threads);
        std::atomic<std::size_t> started { 0 };
        std::atomic<bool> cancel { false };
        std::vector<std::size_t> consumed;
        PairLoop loop;
        loop.count = 50;
        loop.scheduler = &schedule;
        loop.task.work = [&](std::size_t) {
            if (++started == 5)
                cancel = true;
            return std::string();
        };
        loop.task.cancelled = [&] { return cancel.load(); };
        loop.consume = [&](std::size_t i, std::string&&) {
            consumed.push_back(i);
            return true;
        };
        EXPECT_EQ(runPairs(loop), PairLoopEnd::Cancelled) << threads;
        EXPECT_LE(started.load(), 5u + threads) << threads; // those already running when it came end
        EXPECT_GE(started.load(), 5u);
        for (std::size_t i = 0; i < consumed.size(); ++i)
            EXPECT_EQ(consumed[i], i); // what is consumed is a prefix of the plan
    }
}

// The window: no pair starts `window` or more beyond the first pair not consumed, so a slow pair holds back at most
// that many results, whatever the number of pairs.
TEST(PairLoop, NoPairStartsAWindowAheadOfTheFirstNotConsumed)
{
    LocalThreadScheduler four(4);
    std::atomic<std::size_t> consumedUpTo { 0 }; // pairs consumed
    std::atomic<std::size_t> worstLead { 0 };
    std::atomic<bool> release { false };
    PairLoop loop;
    loop.count = 200;
    loop.scheduler = &four;
    loop.task.window = 8;
    loop.task.work = [&](std::size_t i) {
        std::size_t lead = i - consumedUpTo.load();
        for (std::size_t w = worstLead.load(); lead > w && !worstLead.compare_exchange_weak(w, lead);)
            ;
        if (i == 10) {
            // Slow: the others run into the window meanwhile, then it lets go.
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
            release = true;
        }
        return std::string();
    };
    loop.consume = [&](std::size_t, std::string&&) {
        ++consumedUpTo;
        return true;
    };
    EXPECT_EQ(runPairs(loop), PairLoopEnd::Complete);
    EXPECT_TRUE(release.load());
    EXPECT_EQ(consumedUpTo.load(), 200u);
    EXPECT_LT(worstLead.load(), 8u);
    EXPECT_GE(worstLead.load(), 4u); // it did run ahead of the slow pair
}

// The settle step (the whole job's durability barrier and markers) sees every result once, on a batch, before the
// result is delivered, and may rewrite it.
TEST(PairLoop, EveryResultIsSettledOnceBeforeItIsConsumed)
{
    LocalThreadScheduler three(3);
    std::mutex m;
    std::multiset<std::size_t> settled;
    std::size_t batches = 0;
    std::vector<std::string> consumed;
    PairLoop loop;
    loop.count = 100;
    loop.scheduler = &three;
    loop.task.window = 16;
    loop.task.work = [](std::size_t i) { return std::to_string(i); };
    loop.task.settle = [&](std::vector<PairDone>& batch) {
        const std::lock_guard lock(m);
        ++batches;
        for (PairDone& d : batch) {
            settled.insert(d.index);
            d.text += " settled";
        }
    };
    loop.consume = [&](std::size_t i, std::string&& text) {
        EXPECT_EQ(text, std::to_string(i) + " settled");
        consumed.push_back(text);
        return true;
    };
    EXPECT_EQ(runPairs(loop), PairLoopEnd::Complete);
    EXPECT_EQ(consumed.size(), 100u);
    EXPECT_EQ(settled.size(), 100u);
    for (std::size_t i = 0; i < 100; ++i)
        EXPECT_EQ(settled.count(i), 1u);
    EXPECT_GT(batches, 1u);      // in batches (the window forces one at the latest every 8 results) ...
    EXPECT_LT(batches, 100u);    // ... not one per pair
}

// A scheduler that loses a result (a cluster worker gone): the loop still consumes that pair, with an empty text.
TEST(PairLoop, AResultThatNeverArrivesIsConsumedEmpty)
{
    struct Lossy final : compare::PairScheduler
    {
        void schedule(std::size_t count, const compare::PairTask& task) override
        {
            for (std::size_t i = 0; i < count; ++i) {
                std::string text = task.work(i);
                if (i != 2)
                    task.deliver({ i, std::move(text) });
            }
        }
    } lossy;
    std::vector<std::string> consumed;
    PairLoop loop;
    loop.count = 4;
    loop.scheduler = &lossy;
    loop.task.work = [](std::size_t i) { return "r" + std::to_string(i); };
    loop.consume = [&](std::size_t, std::string&& text) {
        consumed.push_back(text);
        return true;
    };
    EXPECT_EQ(runPairs(loop), PairLoopEnd::Complete);
    EXPECT_EQ(consumed, (std::vector<std::string> { "r0", "r1", "", "r3" }));
}

// ---- The whole job on the loop.

namespace {

/// A statistics dump.json: a linear, an all_reduce whose output `scale` multiplies, then a gelu fed by it.
std::string statsDump(double scale)
{
    struct Call
    {
        const char* key;
        double in;
        double out;
    };
    const Call calls[] = { { "Functional.linear.0.forward", 1.0, 2.0 },
                           { "Distributed.all_reduce.0.forward", 2.0, 2.0 * scale },
                           { "Functional.gelu.0.forward", 2.0 * scale, 3.0 * scale } };
    std::string data;
    for (const Call& c : calls) {
        const auto tensor = [](double v) {
            const std::string x = std::to_string(v);
            return "{\"type\": \"torch.Tensor\", \"dtype\": \"torch.float32\", \"shape\": [4], \"Max\": " + x
                + ", \"Min\": -" + x + ", \"Mean\": 0.1, \"Norm\": " + std::to_string(2 * v)
                + ", \"requires_grad\": false}";
        };
        data += (data.empty() ? "\"" : ", \"") + std::string(c.key) + "\": {\"input_args\": [" + tensor(c.in)
            + "], \"input_kwargs\": {}, \"output\": [" + tensor(c.out) + "]}";
    }
    return "{\"task\": \"statistics\", \"level\": \"L1\", \"framework\": \"pytorch\", \"dump_data_dir\": null, "
           "\"data\": {" + data + "}}";
}

/// 12 ranks x 2 steps; ranks 5 and up of step 1 diverge (rank 5 first), rank 3 of step 0 is corrupt, and a step
/// 2 only the NPU side has.
struct RanksJob
{
    probescope::testing::TempDir dir;
    compare::CompareInput input;
    compare::JobOptions options;
    RanksJob()
    {
        for (int step = 0; step < 2; ++step) {
            for (int rank = 0; rank < 12; ++rank) {
                const std::string at = "/step" + std::to_string(step) + "/rank" + std::to_string(rank) + "/";
                const double scale = step == 1 && rank >= 5 ? 4.0 : 1.0;
                dir.write("npu" + at + "dump.json", step == 0 && rank == 3 ? "{\"task\": [" : statsDump(scale));
                dir.write("npu" + at + "construct.json", "{}");
                dir.write("bench" + at + "dump.json", statsDump(1.0));
                dir.write("bench" + at + "construct.json", "{}");
            }
        }
        dir.write("npu/step2/rank0/dump.json", statsDump(1.0));
        input.npuPath = dir.path() / "npu";
        input.benchPath = dir.path() / "bench";
        options.advisor = false;
        options.timestamp = "20260101000000";
    }
};

} // namespace

TEST(WholeJobLoop, TheSummaryIsTheSameOnOneThreadAndOnMany)
{
    RanksJob job;
    auto one = job::runWholeJob(job.input, job.dir.path() / "one", job.options, {});
    ASSERT_TRUE(one) << one.error().format();
    ASSERT_EQ(one->pairs.size(), 25u);
    EXPECT_EQ(one->failedPairs(), 1u);
    EXPECT_EQ(one->oneSidedPlaces(), 1u);
    EXPECT_EQ(one->failingPairs(), 7u);
    EXPECT_EQ(one->origin.step, 1);
    EXPECT_EQ(one->origin.rankLabel, "rank5") << job::originLine(*one);
    const std::string csv = probescope::testing::readAll(job.dir.path() / "one" / "job_summary.csv");
    const std::string json = probescope::testing::readAll(job.dir.path() / "one" / "job_summary.json");
    EXPECT_EQ(csv, job::jobSummaryCsv(*one)); // the streamed file is the text of the whole result
    EXPECT_EQ(json, job::jobSummaryJson(*one));
    for (unsigned threads : { 3u, 8u }) {
        LocalThreadScheduler schedule(threads);
        job::WholeJobOptions options;
        options.scheduler = &schedule;
        std::vector<job::PairSummary> streamed;
        options.onPair = [&](const job::PairSummary& s) { streamed.push_back(s); };
        bool plannedFirst = false;
        options.onPlanned = [&](const Diagnostics& d) {
            plannedFirst = streamed.empty();
            EXPECT_EQ(d.size(), one->diagnostics.size());
        };
        const auto out = job.dir.path() / ("threads" + std::to_string(threads));
        auto many = job::runWholeJob(job.input, out, job.options, options);
        ASSERT_TRUE(many) << many.error().format();
        EXPECT_TRUE(plannedFirst);
        EXPECT_TRUE(many->pairs.empty()); // streamed: the job keeps no list of its pairs
        EXPECT_EQ(many->comparedOrFailed(), one->comparedOrFailed());
        EXPECT_EQ(many->failedPairs(), 1u);
        EXPECT_EQ(many->failingPairs(), 7u);
        EXPECT_EQ(job::originLine(*many), job::originLine(*one));
        EXPECT_EQ(probescope::testing::readAll(out / "job_summary.csv"), csv) << threads;
        EXPECT_EQ(probescope::testing::readAll(out / "job_summary.json"), json) << threads;
        ASSERT_EQ(streamed.size(), one->pairs.size());
        for (std::size_t i = 0; i < streamed.size(); ++i) {
            EXPECT_EQ(streamed[i].step, one->pairs[i].step) << i;
            EXPECT_EQ(streamed[i].npuRank, one->pairs[i].npuRank) << i;
            EXPECT_EQ(streamed[i].onlyIn, one->pairs[i].onlyIn) << i;
            EXPECT_EQ(streamed[i].files, one->pairs[i].files) << i;
        }
        EXPECT_EQ(probescope::testing::entriesFor(out, "step1/rank11-rank11"), 1u);
        // Nothing of the summary's making is left beside it (the pending files were claimed, the spool removed).
        std::set<std::string> names;
        for (const auto& e : fs::directory_iterator(out))
            names.insert(e.path().filename().string());
        EXPECT_EQ(names,
                  (std::set<std::string> { ".probescope", "job_summary.csv", "job_summary.json", "step0", "step1" }));
    }
}

// Issue 37: the files a job writes are its tables, one journal per settled batch (a batch is every 5 s or 1,024 pairs,
// whichever comes first) and its two summaries; no file per pair besides its table. The journals hold one entry per
// compared pair, in plan order within a journal, whatever the number of threads.
TEST(WholeJobLoop, AJobWritesOneJournalPerBatchNotAFilePerPair)
{
    RanksJob job;
    for (unsigned threads : { 1u, 3u }) {
        LocalThreadScheduler schedule(threads);
        job::WholeJobOptions options;
        options.scheduler = &schedule;
        const auto out = job.dir.path() / ("out" + std::to_string(threads));
        const auto start = std::chrono::steady_clock::now();
        auto result = job::runWholeJob(job.input, out, job.options, options);
        const auto seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        ASSERT_TRUE(result) << result.error().format();
        const std::size_t compared = result->comparedOrFailed() - result->failedPairs();
        ASSERT_EQ(compared, 23u); // 24 pairs, one of them corrupt; the NPU-only step 2 is not compared
        std::size_t tables = 0, others = 0;
        for (const auto& e : fs::recursive_directory_iterator(out)) {
            if (!e.is_regular_file())
                continue;
            const std::string name = e.path().filename().string();
            if (name.rfind("compare_result_", 0) == 0)
                ++tables;
            else if (name != "job_summary.csv" && name != "job_summary.json")
                ++others;
        }
        const auto journals = probescope::testing::journalFiles(out);
        EXPECT_EQ(tables, compared);
        EXPECT_EQ(others, journals.size()) << "a file besides the tables, the journals and the summaries";
        ASSERT_GE(journals.size(), 1u);
        // One batch unless the machine took longer than a barrier interval (5 s) for the job.
        EXPECT_LE(journals.size(), 1u + static_cast<std::size_t>(seconds / 5.0)) << seconds << " s";
        std::map<std::string, std::size_t> planned; // key -> place in the plan
        for (std::size_t i = 0; i < result->pairs.size(); ++i) {
            const job::PairSummary& p = result->pairs[i];
            planned["step" + std::to_string(p.step) + "/" + p.npuRank + "-" + p.benchRank] = i;
        }
        std::set<std::string> keys;
        for (const auto& journal : journals) {
            std::size_t previous = 0;
            for (const auto& entry : probescope::testing::journalEntries(journal)) {
                const std::string key = entry.at("pair");
                EXPECT_TRUE(keys.insert(key).second) << key << " journaled twice";
                ASSERT_EQ(planned.count(key), 1u) << key;
                EXPECT_GE(planned[key], previous) << "not in plan order within " << journal;
                previous = planned[key];
            }
        }
        EXPECT_EQ(keys.size(), compared);
        EXPECT_EQ(keys.count("step0/rank3-rank3"), 0u); // the corrupt pair has no entry: a rerun tries it again
    }
}

TEST(WholeJobLoop, ACancelledJobWritesNoSummary)
{
    struct CancelAfter : ProgressSink
    {
        std::atomic<std::uint64_t> done { 0 };
        void setRange(std::uint64_t) override {}
        void advance(std::uint64_t d) override { done = d; }
        bool isCancelled() const override { return done.load() >= 3; }
    } progress;
    RanksJob job;
    job::WholeJobOptions options;
    options.progress = &progress;
    const auto out = job.dir.path() / "out";
    auto result = job::runWholeJob(job.input, out, job.options, options);
    ASSERT_FALSE(result);
    EXPECT_EQ(result.error().id, "compare.cancelled");
    EXPECT_EQ(progress.done.load(), 3u); // one thread: no pair started after the cancel
    EXPECT_FALSE(std::filesystem::exists(out / "job_summary.csv"));
    EXPECT_FALSE(std::filesystem::exists(out / "job_summary.json"));
    // The pairs done are complete: their entries are journaled, so --resume keeps them.
    EXPECT_EQ(probescope::testing::entriesFor(out, "step0/rank0-rank0"), 1u);
    EXPECT_EQ(probescope::testing::entriesFor(out, "step0/rank1-rank1"), 1u);
}

// A cancel before any pair stops the whole job in its folder walk (dump::DiscoverOptions::progress, given by
// runWholeJob to the plan): the job ends with the walk's error and writes nothing, not even the output folder's files.
TEST(WholeJobLoop, ACancelDuringThePlanStopsTheFolderWalk)
{
    struct Cancelled : ProgressSink
    {
        mutable std::atomic<std::uint64_t> checks { 0 };
        void setRange(std::uint64_t) override {}
        void advance(std::uint64_t) override {}
        bool isCancelled() const override { ++checks; return true; }
    } progress;
    RanksJob job;
    job::WholeJobOptions options;
    options.progress = &progress;
    const auto out = job.dir.path() / "out";
    auto result = job::runWholeJob(job.input, out, job.options, options);
    ASSERT_FALSE(result);
    EXPECT_EQ(result.error().id, "layout.cancelled");
    EXPECT_EQ(progress.checks.load(), 1u); // the first folder's check: nothing walked after it
    EXPECT_FALSE(std::filesystem::exists(out / "job_summary.csv"));
    EXPECT_FALSE(std::filesystem::exists(out / "step0"));
}

// A cluster worker runs its pairs but consumes nothing: its results went to the coordinator, which alone writes the
// summary and prints (mpirun -n 3 printed every pair a second time as "returned no summary" on each worker).
TEST(PairLoop, AWorkerThatIsNotTheCoordinatorConsumesNothing)
{
    struct Worker final : compare::PairScheduler
    {
        bool isCoordinator() const override { return false; }
        void schedule(std::size_t count, const compare::PairTask& task) override
        {
            for (std::size_t i = 1; i < count; i += 2)
                task.work(i); // its share; the results leave the process
        }
    } worker;
    std::size_t worked = 0;
    std::size_t consumed = 0;
    PairLoop loop;
    loop.count = 6;
    loop.scheduler = &worker;
    loop.task.work = [&](std::size_t) {
        ++worked;
        return std::string("x");
    };
    loop.consume = [&](std::size_t, std::string&&) {
        ++consumed;
        return true;
    };
    EXPECT_EQ(runPairs(loop), PairLoopEnd::Complete);
    EXPECT_EQ(worked, 3u);
    EXPECT_EQ(consumed, 0u);
}

// Issue 37: the plan of many rank folders (each RankLocation kept as text) pairs them as msprobe's directory mode
// does: by step, then by folder name as a string (rank0, rank1, rank10, rank100, ...), each pair naming its two files.
TEST(Plan, ManyRankFoldersPairInMsprobeOrder)
{
    probescope::testing::TempDir tmp;
    constexpr int kRanks = 120;
    const std::string dump = R"({"task": "statistics", "level": "L1", "data": {}})";
    std::vector<std::string> names;
    for (int rank = 0; rank < kRanks; ++rank)
        names.push_back("rank" + std::to_string(rank));
    for (const char* side : { "npu", "bench" }) {
        for (const char* step : { "step0", "step1" }) {
            for (const std::string& name : names)
                tmp.write(std::string(side) + "/" + step + "/" + name + "/dump.json", dump);
        }
    }
    std::sort(names.begin(), names.end());
    compare::CompareInput input;
    input.npuPath = tmp.path() / "npu";
    input.benchPath = tmp.path() / "bench";
    compare::PlanOptions options;
    options.profile = Profile::Msprobe26;
    auto plan = compare::planPairs(input, options);
    ASSERT_TRUE(plan.ok()) << plan.error().format();
    ASSERT_EQ(plan->pairs.size(), 2u * kRanks);
    EXPECT_TRUE(plan->unpaired.empty());
    for (std::size_t i = 0; i < plan->pairs.size(); ++i) {
        const compare::PlannedPair& pair = plan->pairs[i];
        const std::string step = "step" + std::to_string(i / kRanks);
        const std::string& rank = names[i % kRanks];
        EXPECT_EQ(pair.step, std::int64_t(i / kRanks));
        EXPECT_EQ(pair.outSubdir, step);
        EXPECT_EQ(pair.npu.dumpFile.string(), (tmp.path() / "npu" / step / rank / "dump.json").string());
        EXPECT_EQ(pair.bench.dumpFile.string(), (tmp.path() / "bench" / step / rank / "dump.json").string());
        EXPECT_EQ(pair.npu.dir.path(), tmp.path() / "npu" / step / rank);
        EXPECT_EQ(pair.npu.rankLabel, rank);
    }
}

// Issue 37: a small pair, or one of many compared at once (JobOptions::pairsInParallel), is loaded, flattened and its
// tree built on the calling thread alone; the side threads a viewer's hooks keep give the same outcome and files.
TEST(WholeJobLoop, APairOnItsThreadAloneComparesAsWithSideThreads)
{
    RanksJob job;
    auto plan = compare::planPairs(job.input, compare::PlanOptions {});
    ASSERT_TRUE(plan) << plan.error().format();
    const auto mappings = compare::readMappingFiles(job.options);
    ASSERT_TRUE(mappings);
    std::size_t compared = 0;
    for (const compare::PlannedPair& pair : plan->pairs) {
        if (pair.npu.rankLabel != "rank5" && pair.npu.rankLabel != "rank0")
            continue;
        std::atomic<int> loadedCalls { 0 };
        compare::PairHooks hooks; // a viewer: the bench is loaded and the tree built beside the compare
        hooks.loaded = [&](std::shared_ptr<const compare::LoadedPair>) { ++loadedCalls; };
        auto threaded = compare::comparePair(pair, *mappings, job.options, hooks);
        compare::JobOptions alone = job.options;
        alone.pairsInParallel = true;
        auto inlined = compare::comparePair(pair, *mappings, alone, {});
        ASSERT_TRUE(threaded) << threaded.error().format();
        ASSERT_TRUE(inlined) << inlined.error().format();
        EXPECT_EQ(loadedCalls.load(), 1);
        ASSERT_TRUE(inlined->loaded && inlined->loaded->tree);
        EXPECT_EQ(inlined->loaded->tree->size(), threaded->loaded->tree->size());
        EXPECT_EQ(inlined->firstFailure.key, threaded->firstFailure.key);
        EXPECT_EQ(inlined->table->rows.size(), threaded->table->rows.size());
        const std::string name = std::to_string(pair.step) + pair.npu.rankLabel;
        auto a = compare::writePairOutputs(*threaded, job.dir.path() / "threaded" / name, "20260101000000", job.options);
        auto b = compare::writePairOutputs(*inlined, job.dir.path() / "inlined" / name, "20260101000000", alone);
        ASSERT_TRUE(a && b);
        ASSERT_FALSE(a->csvFile.empty());
        EXPECT_EQ(probescope::testing::readAll(b->csvFile), probescope::testing::readAll(a->csvFile)) << name;
        if (pair.step == 1 && pair.npu.rankLabel == "rank5") {
            EXPECT_FALSE(inlined->firstFailure.key.empty()); // the diverging rank fails both ways
        }
        ++compared;
    }
    EXPECT_EQ(compared, 4u); // rank0 and rank5 of both steps
}
