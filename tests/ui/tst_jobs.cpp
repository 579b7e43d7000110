// SPDX-License-Identifier: Apache-2.0
// The background jobs of ui/jobs on the real msprobe fixtures: signal order, coalescing and throttling,
// cancel, reopen and destruction mid-run (run under ASan too), the rank overview job; the progress
// bridge and BackgroundTask.
#include "ui/jobs/backgroundtask.h"
#include "ui/jobs/comparecontroller.h"
#include "ui/jobs/jobprogress.h"
#include "ui/jobs/overviewjob.h"
#include "ui/jobs/planjob.h"
#include "core/session/session.h"
#include "core/tempdir.h"
#include "testconfig.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QSignalSpy>
#include <QTest>
#include <QTimer>

#include <chrono>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <thread>
#include <string>
#include <vector>

namespace {

using namespace probescope;
using probescope::ui::CompareController;
using probescope::ui::CompareSettings;
using probescope::ui::OverviewJob;

const char* const kFixtures[] = { "modelA_tensor_mix", "modelA_statistics_mix", "modelA_md5_mix" };
constexpr const char* kGelu = "Functional.gelu.0.forward";
// Generous: the ASan build runs the tensor compare several times slower.
constexpr int kTimeoutMs = 180000;

const session::SessionPlan& planOf(const std::string& name)
{
    static std::map<std::string, session::SessionPlan> cache;
    auto it = cache.find(name);
    if (it == cache.end()) {
        const auto dir = probescope::testing::fixturesDir() / name;
        auto plan = session::planSession(dir / "npu", dir / "bench");
        EXPECT_TRUE(plan.ok()) << (plan.ok() ? "" : plan.error().format());
        it = cache.emplace(name, plan.ok() ? *plan : session::SessionPlan {}).first;
    }
    return it->second;
}

std::size_t step0(const session::SessionPlan& plan)
{
    const auto pairs = plan.pairsOfStep(0);
    return pairs.empty() ? plan.pairs.size() : pairs.front();
}

/// Everything a controller says, in order, with the time it arrived.
struct Recorder
{
    enum class Kind { Skeleton, Layout, Batch, Progress, Finished, Failed, Cancelled };
    struct Event
    {
        Kind kind;
        qint64 ms;
        std::shared_ptr<const session::PairSkeleton> skeleton;
        std::shared_ptr<const session::NodeStatusTable> layout;
        session::StatusUpdate batch;
        double fraction = 0;
        double remaining = 0;
        QString stage;
        std::shared_ptr<const session::PairAnalysis> analysis;
        QString message;
    };

    explicit Recorder(CompareController& c)
    {
        clock.start();
        QObject::connect(&c, &CompareController::skeletonReady, &c, [this](auto s) {
            events.push_back({ Kind::Skeleton, clock.elapsed(), s, {}, {}, 0, 0, {}, {}, {} });
        });
        QObject::connect(&c, &CompareController::layoutReady, &c, [this](auto l) {
            events.push_back({ Kind::Layout, clock.elapsed(), {}, l, {}, 0, 0, {}, {}, {} });
        });
        QObject::connect(&c, &CompareController::statusBatch, &c, [this](const session::StatusUpdate& u) {
            events.push_back({ Kind::Batch, clock.elapsed(), {}, {}, u, 0, 0, {}, {}, {} });
        });
        QObject::connect(&c, &CompareController::progress, &c,
                         [this](const QString& stage, double fraction, double, double remaining) {
                             events.push_back(
                                 { Kind::Progress, clock.elapsed(), {}, {}, {}, fraction, remaining, stage, {}, {} });
                         });
        QObject::connect(&c, &CompareController::finished, &c, [this](auto a) {
            events.push_back({ Kind::Finished, clock.elapsed(), {}, {}, {}, 0, 0, {}, a, {} });
        });
        QObject::connect(&c, &CompareController::failed, &c, [this](const QString& m) {
            events.push_back({ Kind::Failed, clock.elapsed(), {}, {}, {}, 0, 0, {}, {}, m });
        });
        QObject::connect(&c, &CompareController::cancelled, &c, [this] {
            events.push_back({ Kind::Cancelled, clock.elapsed(), {}, {}, {}, 0, 0, {}, {}, {} });
        });
    }

    int count(Kind k) const
    {
        return int(std::count_if(events.begin(), events.end(), [k](const Event& e) { return e.kind == k; }));
    }
    bool ended() const { return count(Kind::Finished) + count(Kind::Failed) + count(Kind::Cancelled) > 0; }
    const Event* first(Kind k) const
    {
        for (const Event& e : events) {
            if (e.kind == k)
                return &e;
        }
        return nullptr;
    }

    QElapsedTimer clock;
    std::vector<Event> events;
};

bool waitFor(const std::function<bool()>& done)
{
    return QTest::qWaitFor(done, kTimeoutMs);
}

class ControllerOnFixture : public ::testing::TestWithParam<const char*>
{
};

TEST_P(ControllerOnFixture, FullRunEmitsSkeletonLayoutBatchesThenFinished)
{
    const session::SessionPlan& plan = planOf(GetParam());
    ASSERT_FALSE(plan.pairs.empty());
    CompareController controller;
    Recorder rec(controller);
    EXPECT_FALSE(controller.isRunning());
    controller.start(plan, step0(plan), CompareSettings { 2, false, compare::Profile::Msprobe12 });
    EXPECT_TRUE(controller.isRunning());
    ASSERT_TRUE(waitFor([&] { return rec.ended(); }));
    EXPECT_FALSE(controller.isRunning());

    ASSERT_EQ(rec.count(Recorder::Kind::Finished), 1) << "failed: "
        << (rec.first(Recorder::Kind::Failed) ? rec.first(Recorder::Kind::Failed)->message.toStdString() : "");
    EXPECT_EQ(rec.count(Recorder::Kind::Skeleton), 1);
    EXPECT_EQ(rec.count(Recorder::Kind::Layout), 1);
    EXPECT_EQ(rec.count(Recorder::Kind::Failed), 0);
    EXPECT_EQ(rec.count(Recorder::Kind::Cancelled), 0);
    // Order: skeleton, then layout, then any batches; finished last.
    std::vector<Recorder::Kind> order;
    for (const auto& e : rec.events) {
        if (e.kind != Recorder::Kind::Progress)
            order.push_back(e.kind);
    }
    ASSERT_GE(order.size(), 3u);
    EXPECT_EQ(order.front(), Recorder::Kind::Skeleton);
    EXPECT_EQ(order[1], Recorder::Kind::Layout);
    EXPECT_EQ(order.back(), Recorder::Kind::Finished);
    for (std::size_t i = 2; i + 1 < order.size(); ++i)
        EXPECT_EQ(order[i], Recorder::Kind::Batch);

    RecordProperty("batches", rec.count(Recorder::Kind::Batch));
    RecordProperty("progress", rec.count(Recorder::Kind::Progress));
    RecordProperty("ms", int(rec.events.back().ms));
    const auto& analysis = rec.events.back().analysis;
    ASSERT_TRUE(analysis);
    EXPECT_TRUE(analysis->firstFailure.found);
    EXPECT_EQ(analysis->firstFailure.key, kGelu);
    const auto& skeleton = rec.first(Recorder::Kind::Skeleton)->skeleton;
    EXPECT_EQ(analysis->skeleton, skeleton) << "finished refers to the skeleton sent first";
    EXPECT_EQ(rec.first(Recorder::Kind::Layout)->layout->own.size(), skeleton->tree->size());

    // Batches: only real nodes, no node twice in one batch, never closer than the pump interval
    // except the last flush right before finished.
    std::vector<qint64> batchTimes;
    for (const auto& e : rec.events) {
        if (e.kind != Recorder::Kind::Batch)
            continue;
        batchTimes.push_back(e.ms);
        EXPECT_EQ(e.batch.nodes.size(), e.batch.own.size());
        std::set<std::uint32_t> seen;
        for (const auto n : e.batch.nodes) {
            EXPECT_LT(n, skeleton->tree->size());
            EXPECT_TRUE(seen.insert(n).second) << "node " << n << " twice in one batch";
        }
    }
    for (std::size_t i = 1; i + 1 < batchTimes.size(); ++i)
        EXPECT_GE(batchTimes[i] - batchTimes[i - 1], 40) << "batches are coalesced";
    // Progress: at most 20 per second, fractions in [0, 1] and never going back.
    double lastFraction = -1;
    qint64 lastMs = -1000;
    for (const auto& e : rec.events) {
        if (e.kind != Recorder::Kind::Progress)
            continue;
        EXPECT_GE(e.fraction, 0.0);
        EXPECT_LE(e.fraction, 1.0);
        EXPECT_GE(e.fraction, lastFraction);
        EXPECT_GE(e.ms - lastMs, 45) << "progress is throttled";
        EXPECT_FALSE(e.stage.isEmpty());
        lastFraction = e.fraction;
        lastMs = e.ms;
    }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, ControllerOnFixture, ::testing::ValuesIn(kFixtures),
                         [](const ::testing::TestParamInfo<const char*>& param) {
                             std::string name = param.param;
                             return name.substr(7, name.size() - 7 - 4);
                         });

TEST(CompareController, CancelRightAfterSkeletonEndsCancelled)
{
    const session::SessionPlan& plan = planOf("modelA_tensor_mix");
    CompareController controller;
    Recorder rec(controller);
    QObject::connect(&controller, &CompareController::skeletonReady, &controller, [&] { controller.cancel(); });
    controller.start(plan, step0(plan), CompareSettings { 1, false, compare::Profile::Msprobe12 });
    ASSERT_TRUE(waitFor([&] { return rec.ended(); }));
    EXPECT_EQ(rec.count(Recorder::Kind::Cancelled), 1);
    EXPECT_EQ(rec.count(Recorder::Kind::Finished), 0);
    EXPECT_EQ(rec.count(Recorder::Kind::Failed), 0);
    EXPECT_EQ(rec.events.back().kind, Recorder::Kind::Cancelled);
    EXPECT_FALSE(controller.isRunning());
    // Nothing arrives afterwards.
    const std::size_t n = rec.events.size();
    QTest::qWait(200);
    EXPECT_EQ(rec.events.size(), n);
}

TEST(CompareController, CancelBeforeAnythingArrives)
{
    const session::SessionPlan& plan = planOf("modelA_statistics_mix");
    CompareController controller;
    Recorder rec(controller);
    controller.start(plan, step0(plan));
    controller.cancel();
    ASSERT_TRUE(waitFor([&] { return rec.ended(); }));
    EXPECT_EQ(rec.count(Recorder::Kind::Cancelled), 1);
    EXPECT_EQ(rec.count(Recorder::Kind::Finished), 0);
    controller.cancel(); // no run: harmless
    QTest::qWait(100);
    EXPECT_EQ(rec.count(Recorder::Kind::Cancelled), 1);
}

TEST(CompareController, ReopenMidRunDeliversOnlyTheSecondRun)
{
    const session::SessionPlan& first = planOf("modelA_tensor_mix");
    const session::SessionPlan& second = planOf("modelA_statistics_mix");
    CompareController controller;
    Recorder rec(controller);
    std::size_t reopenedAt = 0;
    bool reopened = false;
    QObject::connect(&controller, &CompareController::skeletonReady, &controller, [&] {
        if (reopened)
            return;
        reopened = true;
        reopenedAt = rec.events.size(); // the recorder's slot ran first: the first skeleton is recorded
        controller.start(second, step0(second), CompareSettings { 2, false, compare::Profile::Msprobe12 });
    });
    const std::uint64_t generation = controller.generation();
    controller.start(first, step0(first), CompareSettings { 1, false, compare::Profile::Msprobe12 });
    ASSERT_TRUE(waitFor([&] { return rec.ended(); }));
    QTest::qWait(300); // anything the first run still had queued would arrive now
    ASSERT_TRUE(reopened);
    EXPECT_EQ(controller.generation(), generation + 2);
    ASSERT_GE(reopenedAt, 1u);
    const auto& firstSkeleton = rec.events[reopenedAt - 1].skeleton;
    ASSERT_TRUE(firstSkeleton);
    EXPECT_NE(firstSkeleton->pair.npu.dir.string().find("tensor"), std::string::npos);

    const std::string secondDir = second.pairs[step0(second)].npu.dir.string();
    int skeletons = 0;
    std::shared_ptr<const session::PairSkeleton> secondSkeleton;
    for (std::size_t i = reopenedAt; i < rec.events.size(); ++i) {
        const auto& e = rec.events[i];
        switch (e.kind) {
        case Recorder::Kind::Skeleton:
            ++skeletons;
            secondSkeleton = e.skeleton;
            EXPECT_EQ(e.skeleton->pair.npu.dir.string(), secondDir);
            break;
        case Recorder::Kind::Layout:
            ASSERT_TRUE(secondSkeleton) << "a layout before the second run's skeleton";
            EXPECT_EQ(e.layout->own.size(), secondSkeleton->tree->size());
            break;
        case Recorder::Kind::Batch:
            ADD_FAILURE() << "statistics mode streams no batches; this one came from the first run";
            break;
        case Recorder::Kind::Finished:
            EXPECT_EQ(e.analysis->skeleton->pair.npu.dir.string(), secondDir);
            break;
        case Recorder::Kind::Failed:
        case Recorder::Kind::Cancelled: ADD_FAILURE() << "the superseded run must stay silent"; break;
        case Recorder::Kind::Progress: break;
        }
    }
    EXPECT_EQ(skeletons, 1);
    EXPECT_EQ(rec.count(Recorder::Kind::Finished), 1);
    EXPECT_EQ(rec.count(Recorder::Kind::Layout), 1) << "the first run's layout was dropped";
}

TEST(CompareController, RapidRestartsOnlyTheLastIsHeard)
{
    const session::SessionPlan& plan = planOf("modelA_md5_mix");
    CompareController controller;
    Recorder rec(controller);
    for (int i = 0; i < 5; ++i)
        controller.start(plan, step0(plan));
    controller.start(plan, plan.pairsOfStep(1).at(0));
    ASSERT_TRUE(waitFor([&] { return rec.ended(); }));
    QTest::qWait(300);
    EXPECT_EQ(rec.count(Recorder::Kind::Skeleton), 1);
    EXPECT_EQ(rec.count(Recorder::Kind::Finished), 1);
    EXPECT_EQ(rec.count(Recorder::Kind::Cancelled), 0);
    EXPECT_EQ(rec.first(Recorder::Kind::Finished)->analysis->skeleton->pair.step, 1);
}

TEST(CompareController, DestroyingMidRunIsSafe)
{
    const session::SessionPlan& plan = planOf("modelA_tensor_mix");
    // Right after start.
    {
        auto* controller = new CompareController;
        controller->start(plan, step0(plan), CompareSettings { 1, false, compare::Profile::Msprobe12 });
        delete controller;
    }
    // After the skeleton, with the compare running and queued wake-ups in flight.
    bool skeleton = false;
    bool destroyed = false;
    auto* controller = new CompareController;
    QObject::connect(controller, &CompareController::skeletonReady, [&] { skeleton = true; });
    QObject::connect(controller, &QObject::destroyed, [&] { destroyed = true; });
    controller->start(plan, step0(plan), CompareSettings { 1, false, compare::Profile::Msprobe12 });
    ASSERT_TRUE(waitFor([&] { return skeleton; }));
    delete controller;
    EXPECT_TRUE(destroyed);
    QTest::qWait(300); // a stale queued call would touch freed memory here (ASan)
    // Destroyed from inside its own slot via deleteLater.
    auto* third = new CompareController;
    QObject::connect(third, &CompareController::layoutReady, third, &QObject::deleteLater);
    bool gone = false;
    QObject::connect(third, &QObject::destroyed, [&] { gone = true; });
    third->start(plan, step0(plan), CompareSettings { 1, false, compare::Profile::Msprobe12 });
    ASSERT_TRUE(waitFor([&] { return gone; }));
    QTest::qWait(200);
}

TEST(CompareController, FailuresAreReportedWithTheDiagnostic)
{
    CompareController controller;
    Recorder rec(controller);
    session::SessionPlan plan;
    session::RankPair pair;
    pair.npu.dir = "/nonexistent/npu/step0/rank0";
    pair.npu.dumpFile = pair.npu.dir / "dump.json";
    pair.bench.dir = "/nonexistent/bench/step0/rank0";
    pair.bench.dumpFile = pair.bench.dir / "dump.json";
    plan.pairs.push_back(pair);
    controller.start(plan, 0);
    ASSERT_TRUE(waitFor([&] { return rec.ended(); }));
    ASSERT_EQ(rec.count(Recorder::Kind::Failed), 1);
    EXPECT_EQ(rec.count(Recorder::Kind::Skeleton), 0);
    const QString message = rec.first(Recorder::Kind::Failed)->message;
    EXPECT_TRUE(message.contains("/nonexistent/")) << message.toStdString();
    EXPECT_TRUE(message.contains("error [")) << message.toStdString();

    Recorder again(controller);
    controller.start(plan, 7);
    ASSERT_TRUE(waitFor([&] { return again.ended(); }));
    ASSERT_EQ(again.count(Recorder::Kind::Failed), 1);
    EXPECT_TRUE(again.first(Recorder::Kind::Failed)->message.contains("session.no-pair"));
}

// A scripted analysis: the real result of a fixture, streamed as a fast compare would stream it
// (thousands of small batches and progress steps), so coalescing and throttling can be checked.
CompareController::Analyser streamingAnalyser(std::chrono::milliseconds duration, bool untilCancelled = false)
{
    return [duration, untilCancelled](const session::RankPair& pair, const session::AnalysisOptions& options,
                                      ProgressSink* progress) -> Result<std::shared_ptr<const session::PairAnalysis>> {
        session::AnalysisOptions plain;
        plain.threads = 2;
        auto real = session::analysePair(pair, plain);
        if (!real)
            return real.error();
        const auto& a = **real;
        progress->setRange(1000);
        options.skeletonReady(a.skeleton);
        auto pending = std::make_shared<session::NodeStatusTable>(*a.status);
        std::fill(pending->own.begin(), pending->own.end(), session::Status::Pending);
        session::aggregate(*pending, *a.skeleton->tree);
        options.layoutReady(pending);
        const auto start = std::chrono::steady_clock::now();
        const std::size_t n = a.status->own.size();
        for (std::size_t i = 0;; ++i) {
            const auto elapsed = std::chrono::steady_clock::now() - start;
            if (progress->isCancelled())
                return makeError("session.cancelled", {}, "the analysis was cancelled");
            if (!untilCancelled && elapsed >= duration)
                break;
            if (untilCancelled && elapsed >= std::chrono::seconds(60))
                return makeError("test.timeout", {}, "never cancelled");
            // Each node first passes through a wrong status, then gets its real one.
            session::StatusUpdate u;
            u.nodes = { std::uint32_t(i % n), std::uint32_t(i % n) };
            u.own = { session::Status::Warning, a.status->own[i % n] };
            options.statusUpdate(std::move(u));
            progress->advance(std::min<std::uint64_t>(999, 100 + 900 * std::uint64_t(elapsed / std::chrono::milliseconds(1))
                                                                  / std::uint64_t(duration.count() + 1)));
            std::this_thread::sleep_for(std::chrono::microseconds(200));
        }
        return real;
    };
}

TEST(CompareController, StreamedBatchesAreCoalescedAndProgressThrottled)
{
    const session::SessionPlan& plan = planOf("modelA_statistics_mix");
    CompareController controller;
    controller.setAnalyser(streamingAnalyser(std::chrono::milliseconds(700)));
    Recorder rec(controller);
    controller.start(plan, step0(plan));
    ASSERT_TRUE(waitFor([&] { return rec.ended(); }));
    ASSERT_EQ(rec.count(Recorder::Kind::Finished), 1);
    const auto& analysis = rec.events.back().analysis;
    const qint64 span = rec.events.back().ms - rec.first(Recorder::Kind::Layout)->ms;

    // Batches arrive at the pump rate, not at the producer's (about 3000 updates were sent).
    const int batches = rec.count(Recorder::Kind::Batch);
    EXPECT_GE(batches, 3);
    EXPECT_LE(batches, span / 45 + 2) << "span " << span << " ms";
    std::vector<session::Status> last(analysis->status->own.size(), session::Status::Pending);
    qint64 previous = -1;
    std::size_t batchIndex = 0;
    for (const auto& e : rec.events) {
        if (e.kind != Recorder::Kind::Batch)
            continue;
        ++batchIndex;
        if (previous >= 0 && batchIndex < std::size_t(batches)) {
            EXPECT_GE(e.ms - previous, 40);
        }
        previous = e.ms;
        std::set<std::uint32_t> seen;
        for (std::size_t k = 0; k < e.batch.nodes.size(); ++k) {
            EXPECT_TRUE(seen.insert(e.batch.nodes[k]).second) << "coalesced: one entry per node";
            last[e.batch.nodes[k]] = e.batch.own[k];
        }
    }
    // The last value per node wins: every node ends with its real status, never the transient warning.
    for (std::size_t n = 0; n < last.size(); ++n)
        ASSERT_EQ(last[n], analysis->status->own[n]) << "node " << n;

    const int progressEvents = rec.count(Recorder::Kind::Progress);
    EXPECT_GE(progressEvents, 3);
    EXPECT_LE(progressEvents, rec.events.back().ms / 50 + 1) << "at most 20 per second";
    const Recorder::Event* late = nullptr;
    bool comparing = false;
    for (const auto& e : rec.events) {
        if (e.kind == Recorder::Kind::Progress) {
            late = &e;
            comparing = comparing || e.stage == QString("Comparing");
        }
    }
    ASSERT_TRUE(late);
    EXPECT_TRUE(comparing) << "the stage follows analysePair's fractions";
    EXPECT_GT(late->fraction, 0.5);
    EXPECT_GE(late->remaining, 0.0) << "an estimate once the compare is under way";
}

TEST(CompareController, CancelStopsAScriptedRunMidStream)
{
    const session::SessionPlan& plan = planOf("modelA_md5_mix");
    CompareController controller;
    controller.setAnalyser(streamingAnalyser(std::chrono::milliseconds(0), true));
    Recorder rec(controller);
    QObject::connect(&controller, &CompareController::statusBatch, &controller, [&] { controller.cancel(); });
    controller.start(plan, step0(plan));
    ASSERT_TRUE(waitFor([&] { return rec.ended(); }));
    EXPECT_EQ(rec.count(Recorder::Kind::Cancelled), 1);
    EXPECT_EQ(rec.count(Recorder::Kind::Failed), 0) << "the analyser saw the cancel flag (no timeout)";
    EXPECT_EQ(rec.count(Recorder::Kind::Batch), 1) << "nothing after the cancel but cancelled()";
}

TEST(CompareController, DestroyingWhileStreamingIsSafe)
{
    const session::SessionPlan& plan = planOf("modelA_md5_mix");
    auto* controller = new CompareController;
    controller->setAnalyser(streamingAnalyser(std::chrono::milliseconds(0), true));
    bool streaming = false;
    QObject::connect(controller, &CompareController::statusBatch, [&] { streaming = true; });
    controller->start(plan, step0(plan));
    ASSERT_TRUE(waitFor([&] { return streaming; }));
    delete controller; // cancels; the analyser notices and the worker is joined
    QTest::qWait(200);
}

// ------------------------------------------------------------------------------------------------

TEST(OverviewJob, SummarisesEveryPairThenFinishes)
{
    const session::SessionPlan& plan = planOf("modelA_statistics_mix");
    ASSERT_EQ(plan.pairs.size(), 2u);
    OverviewJob job;
    std::vector<session::PairSummary> summaries;
    std::vector<std::size_t> started;
    std::vector<std::pair<std::size_t, std::size_t>> progress;
    int finished = 0;
    int cancelled = 0;
    QObject::connect(&job, &OverviewJob::pairStarted, [&](std::size_t i) { started.push_back(i); });
    QObject::connect(&job, &OverviewJob::summariesReady, [&](const std::vector<session::PairSummary>& batch) {
        summaries.insert(summaries.end(), batch.begin(), batch.end());
    });
    QObject::connect(&job, &OverviewJob::progress, [&](std::size_t d, std::size_t t) { progress.emplace_back(d, t); });
    QObject::connect(&job, &OverviewJob::finished, [&] { ++finished; });
    QObject::connect(&job, &OverviewJob::cancelled, [&] { ++cancelled; });
    job.startAll(plan);
    EXPECT_TRUE(job.isRunning());
    ASSERT_TRUE(waitFor([&] { return finished + cancelled > 0; }));
    EXPECT_FALSE(job.isRunning());
    EXPECT_EQ(finished, 1);
    EXPECT_EQ(cancelled, 0);
    ASSERT_EQ(summaries.size(), 2u);
    EXPECT_EQ(started, (std::vector<std::size_t> { 0, 1 }));
    ASSERT_EQ(progress.size(), 2u);
    EXPECT_EQ(progress.back(), (std::pair<std::size_t, std::size_t> { 2, 2 }));
    const std::size_t s0 = step0(plan);
    const auto it = std::find_if(summaries.begin(), summaries.end(), [&](auto& s) { return s.pairIndex == s0; });
    ASSERT_NE(it, summaries.end());
    EXPECT_EQ(it->firstFailure.key, kGelu);
    EXPECT_GT(it->nodes, 0u);

    // One step only.
    summaries.clear();
    finished = 0;
    job.startStep(plan, 1);
    ASSERT_TRUE(waitFor([&] { return finished > 0; }));
    ASSERT_EQ(summaries.size(), 1u);
    EXPECT_EQ(plan.pairs[summaries[0].pairIndex].step, 1);
}

TEST(OverviewJob, CancelAndDestroyMidRun)
{
    const session::SessionPlan& plan = planOf("modelA_tensor_mix");
    {
        OverviewJob job;
        int finished = 0;
        int cancelled = 0;
        QObject::connect(&job, &OverviewJob::finished, [&] { ++finished; });
        QObject::connect(&job, &OverviewJob::cancelled, [&] { ++cancelled; });
        job.startAll(plan, CompareSettings { 1, false, compare::Profile::Msprobe12 });
        // Cancelled on the spot, while the worker has at most begun its first pair. (It was cancelled from the
        // handler of pairStarted, which the GUI thread runs only when it next processes events: on a loaded machine
        // the worker had finished both pairs by then, and the run rightly ended as finished.)
        job.cancel();
        ASSERT_TRUE(waitFor([&] { return finished + cancelled > 0; }));
        EXPECT_EQ(cancelled, 1);
        EXPECT_EQ(finished, 0);
        EXPECT_FALSE(job.isRunning());
    }
    {
        // Restart: the first run is dropped silently.
        OverviewJob job;
        int finished = 0;
        std::vector<std::size_t> summarised;
        QObject::connect(&job, &OverviewJob::finished, [&] { ++finished; });
        QObject::connect(&job, &OverviewJob::summariesReady, [&](const std::vector<session::PairSummary>& batch) {
            for (const session::PairSummary& s : batch)
                summarised.push_back(s.pairIndex);
        });
        job.startAll(plan, CompareSettings { 1, false, compare::Profile::Msprobe12 });
        job.startStep(plan, 1, CompareSettings { 2, false, compare::Profile::Msprobe12 });
        ASSERT_TRUE(waitFor([&] { return finished > 0; }));
        QTest::qWait(200);
        EXPECT_EQ(finished, 1);
        EXPECT_EQ(summarised, plan.pairsOfStep(1));
    }
    {
        auto* job = new OverviewJob;
        job->startAll(plan, CompareSettings { 1, false, compare::Profile::Msprobe12 });
        QTest::qWait(20);
        delete job;
        QTest::qWait(200);
    }
}

// ------------------------------------------------------------------------------------------------

TEST(JobProgress, KeepsTheLargestCountAndTheCancelFlag)
{
    probescope::ui::JobProgress p;
    EXPECT_EQ(p.fraction(), 0.0) << "no range yet";
    p.setRange(200);
    p.advance(50);
    p.advance(20); // a slower worker reporting late
    EXPECT_EQ(p.done(), 50u);
    EXPECT_DOUBLE_EQ(p.fraction(), 0.25);
    p.advance(400);
    EXPECT_DOUBLE_EQ(p.fraction(), 1.0) << "clamped";
    EXPECT_FALSE(p.isCancelled());
    p.cancel();
    EXPECT_TRUE(p.isCancelled());
    p.reset();
    EXPECT_FALSE(p.isCancelled());
    EXPECT_EQ(p.done(), 0u);
    EXPECT_EQ(p.total(), 0u);
}

TEST(JobProgress, ManyWritersEndAtTheirLargestCount)
{
    probescope::ui::JobProgress p;
    p.setRange(4 * 10000);
    std::vector<std::thread> writers;
    for (int w = 0; w < 4; ++w) {
        writers.emplace_back([&p, w] {
            for (std::uint64_t i = 1; i <= 10000; ++i)
                p.advance(std::uint64_t(w) * 10000 + i);
        });
    }
    for (auto& t : writers)
        t.join();
    EXPECT_EQ(p.done(), 40000u);
}

using probescope::ui::BackgroundTask;

TEST(BackgroundTask, ReportsProgressAndHonoursCancel)
{
    BackgroundTask task;
    task.setPollInterval(10);
    QSignalSpy progress(&task, &BackgroundTask::progressChanged);
    QSignalSpy finished(&task, &BackgroundTask::finished);
    std::atomic<bool> stoppedEarly { false };
    ASSERT_TRUE(task.start([&](ProgressSink& p) {
        p.setRange(1000);
        for (std::uint64_t i = 1; i <= 1000; ++i) {
            if (p.isCancelled()) {
                stoppedEarly = true;
                return;
            }
            p.advance(i);
            std::this_thread::sleep_for(std::chrono::milliseconds(2));
        }
    }));
    EXPECT_TRUE(task.isRunning());
    QTest::qWait(100);
    task.cancel();
    ASSERT_TRUE(finished.wait(10000));
    EXPECT_TRUE(stoppedEarly.load());
    EXPECT_FALSE(task.isRunning());
    ASSERT_FALSE(progress.isEmpty());
    EXPECT_EQ(progress.back().at(1).toLongLong(), 1000);
    EXPECT_LT(progress.back().at(0).toLongLong(), 1000);
}

} // namespace

// Issue 37: what is opened is planned on the pool. While the work is held the GUI thread serves its events and sees
// its progress; cancel returns at once and the held work's result never arrives; a quick result is taken on the
// spot (waitFor) and a slower one by finished(); a superseded run is never delivered.
TEST(PlanJob, PlansOffTheGuiThreadAndACancelledResultNeverArrives)
{
    using probescope::ui::PlanJob;
    PlanJob job;
    QSignalSpy finished(&job, &PlanJob::finished);
    QSignalSpy cancelled(&job, &PlanJob::cancelled);
    QSignalSpy progress(&job, &PlanJob::progressChanged);
    std::atomic<bool> release { false };
    std::atomic<bool> returned { false };
    std::atomic<bool> offThread { false };
    const std::thread::id gui = std::this_thread::get_id();
    auto held = [&](ProgressSink& sink) -> Result<session::SessionPlan> {
        offThread = std::this_thread::get_id() != gui;
        sink.setRange(9);
        sink.advance(7);
        while (!release && !sink.isCancelled())
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        while (!release) // ignores the cancel for a while, as a walk inside one big folder would
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        returned = true;
        return session::SessionPlan {};
    };
    int ticks = 0;
    QTimer tick;
    QObject::connect(&tick, &QTimer::timeout, [&] { ++ticks; });
    tick.start(5);
    job.start(held);
    EXPECT_FALSE(job.waitFor(0));
    EXPECT_TRUE(job.isRunning());
    ASSERT_TRUE(QTest::qWaitFor([&] { return !progress.isEmpty() && progress.back().at(0).toLongLong() == 7
                                                && progress.back().at(1).toLongLong() == 9; }, 10000));
    EXPECT_TRUE(offThread);
    EXPECT_GT(ticks, 0);
    EXPECT_TRUE(job.isRunning());
    job.cancel();
    EXPECT_FALSE(job.isRunning());
    EXPECT_EQ(cancelled.size(), 1);
    release = true;
    ASSERT_TRUE(QTest::qWaitFor([&] { return returned.load(); }, 10000));
    QTest::qWait(300);
    EXPECT_TRUE(finished.isEmpty());
    EXPECT_FALSE(job.takeResult());

    job.start([](ProgressSink&) -> Result<session::SessionPlan> { return makeError("ui.open", {}, "nothing here"); });
    ASSERT_TRUE(job.waitFor(10000));
    auto quick = job.takeResult();
    ASSERT_TRUE(quick);
    ASSERT_FALSE(quick->ok());
    EXPECT_EQ(quick->error().message, "nothing here");
    QTest::qWait(300);
    EXPECT_TRUE(finished.isEmpty());

    release = false;
    returned = false;
    job.start(held); // superseded at once: its result is dropped
    job.start([](ProgressSink&) -> Result<session::SessionPlan> {
        session::SessionPlan plan;
        plan.npuInput = "second";
        return plan;
    });
    release = true;
    ASSERT_TRUE(finished.wait(10000));
    auto second = job.takeResult();
    ASSERT_TRUE(second && second->ok());
    EXPECT_EQ((*second)->npuInput, "second");
    ASSERT_TRUE(QTest::qWaitFor([&] { return returned.load(); }, 10000));
    QTest::qWait(300);
    EXPECT_EQ(finished.size(), 1);
    EXPECT_EQ(cancelled.size(), 1);
}

// Issue 37: the plan's folder walks honour the Cancel. The work plans a real job of 4,000 rank folders; the sink it
// hands to session::planSession holds the walk at its 50th folder until the GUI thread has pressed Cancel, so the
// cancel lands mid-walk on any machine. The walk then stops at its next folder (no further look at the cancel) and
// the worker returns at once with layout.cancelled instead of finishing both sides in the background.
TEST(PlanJob, ACancelStopsTheFolderWalkOfALargeJob)
{
    using probescope::ui::PlanJob;
    probescope::testing::ScratchDir dir;
    for (int step = 0; step < 2; ++step) {
        for (int r = 0; r < 2000; ++r) {
            const auto rank = dir.path() / ("step" + std::to_string(step)) / ("rank" + std::to_string(r));
            std::filesystem::create_directories(rank);
            std::ofstream(rank / "dump.json") << R"({"task": "statistics", "level": "L1", "data": {}})";
        }
    }
    struct Seen
    {
        std::atomic<bool> reached { false };
        std::atomic<bool> returned { false };
        std::atomic<int> looks { 0 };
        std::atomic<int> looksAfterCancel { 0 };
        std::atomic<bool> walkCancelled { false };
    };
    // Holds the walk at its 50th look until the job's own sink is cancelled, then counts the looks after that.
    class Holding : public ProgressSink
    {
    public:
        Holding(ProgressSink& job, Seen& seen)
            : m_job(job)
            , m_seen(seen)
        {
        }
        void setRange(std::uint64_t total) override { m_job.setRange(total); }
        void advance(std::uint64_t done) override { m_job.advance(done); }
        bool isCancelled() const override
        {
            if (++m_seen.looks == 50) {
                m_seen.reached = true;
                for (int i = 0; i < 10000 && !m_job.isCancelled(); ++i)
                    std::this_thread::sleep_for(std::chrono::milliseconds(1));
            }
            const bool cancelled = m_job.isCancelled();
            if (cancelled)
                ++m_seen.looksAfterCancel;
            return cancelled;
        }

    private:
        ProgressSink& m_job;
        Seen& m_seen;
    };
    auto seen = std::make_shared<Seen>();
    const std::filesystem::path root = dir.path();
    PlanJob job;
    QSignalSpy finished(&job, &PlanJob::finished);
    QSignalSpy cancelled(&job, &PlanJob::cancelled);
    job.start([seen, root](ProgressSink& progress) -> Result<session::SessionPlan> {
        const Holding holding(progress, *seen);
        auto plan = session::planSession(root, root, &holding);
        seen->walkCancelled = !plan.ok() && plan.error().id == "layout.cancelled";
        seen->returned = true;
        return plan;
    });
    ASSERT_TRUE(QTest::qWaitFor([&] { return seen->reached.load(); }, 10000));
    EXPECT_FALSE(seen->returned);
    job.cancel();
    QElapsedTimer clock;
    clock.start();
    ASSERT_TRUE(QTest::qWaitFor([&] { return seen->returned.load(); }, 10000));
    EXPECT_LT(clock.elapsed(), 2000); // the rest of a 4,000-folder walk, twice, is not done
    EXPECT_TRUE(seen->walkCancelled);
    EXPECT_EQ(seen->looks.load(), 50); // held at the 50th look, which then saw the cancel: no folder after it
    EXPECT_EQ(seen->looksAfterCancel.load(), 1);
    QTest::qWait(200);
    EXPECT_EQ(cancelled.size(), 1);
    EXPECT_TRUE(finished.isEmpty());
    EXPECT_FALSE(job.takeResult());

    // The same job, never cancelled, is planned whole: 2 steps × 2,000 ranks, paired with themselves.
    job.start([root](ProgressSink& progress) { return session::planSession(root, root, &progress); });
    ASSERT_TRUE(job.waitFor(60000));
    auto whole = job.takeResult();
    ASSERT_TRUE(whole && whole->ok()) << (whole ? whole->error().format() : std::string("no result"));
    EXPECT_EQ((*whole)->pairs.size(), 4000u);
}
