// SPDX-License-Identifier: Apache-2.0
#include "ui/jobs/comparecontroller.h"

#include "core/session/paircache.h"

#include <QMetaObject>
#include <QtConcurrent/QtConcurrentRun>

#include <exception>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

namespace probescope::ui {

namespace {

constexpr auto kPumpInterval = std::chrono::milliseconds(50);

QString stageOf(double fraction)
{
    // analysePair's stages: load 0-10 %, compare 10-99 %, verdicts.
    if (fraction < 0.1)
        return CompareController::tr("Loading dumps");
    if (fraction < 0.99)
        return CompareController::tr("Comparing");
    return CompareController::tr("Judging nodes");
}

} // namespace

struct CompareController::Run
{
    std::uint64_t generation = 0;
    JobProgress progress;
    std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();

    // Written by the worker, taken by the GUI thread.
    std::mutex mutex;
    std::shared_ptr<const session::PairSkeleton> skeleton;
    std::shared_ptr<const session::NodeStatusTable> layout;
    session::StatusUpdate pending;
    bool ended = false;
    std::shared_ptr<const session::PairAnalysis> analysis;
    std::optional<Diagnostic> error;

    // GUI thread only.
    bool skeletonSent = false;
    bool layoutSent = false;
    bool endSent = false;
    double lastFraction = -1;
    RemainingTimeEstimator remaining;
};

CompareController::CompareController(QObject* parent)
    : QObject(parent)
{
    registerJobMetaTypes();
    prepareJobPool(m_pool);
    m_timer.setInterval(kPumpInterval);
    m_timer.setTimerType(Qt::PreciseTimer);
    connect(&m_timer, &QTimer::timeout, this, [this] { pump(true); });
}

CompareController::~CompareController()
{
    m_timer.stop();
    if (m_run)
        m_run->progress.cancel();
    // Superseded runs were cancelled when they were retired; every run posts to `this`.
    m_pool.waitForDone();
    // Queued wake-ups still posted to this object are discarded by ~QObject.
}

bool CompareController::isRunning() const
{
    return m_run && !m_run->endSent;
}

void CompareController::retireCurrent()
{
    // The run ends on its own once core sees the flag; whatever it still posts is dropped by generation.
    if (m_run)
        m_run->progress.cancel();
    m_run.reset();
}

void CompareController::start(const session::SessionPlan& plan, std::size_t pairIndex, const Settings& settings)
{
    retireCurrent();
    auto run = std::make_shared<Run>();
    run->generation = ++m_generation;
    m_run = run;
    m_pairIndex = pairIndex;
    m_lastProgress = {};
    m_lastBatch = {};
    m_timer.start();
    if (pairIndex >= plan.pairs.size()) {
        {
            std::lock_guard lock(run->mutex);
            run->ended = true;
            run->error = makeError("session.no-pair", {}, "the session has no pair " + std::to_string(pairIndex));
        }
        wake(run->generation);
        return;
    }
    // The future is not kept: the run reports through `run` and wake(), and the destructor waits for
    // the pool.
    (void)QtConcurrent::run(&m_pool, [this, run, pair = plan.pairs[pairIndex], settings, analyser = m_analyser] {
        work(run, pair, settings, analyser);
    });
}

void CompareController::cancel()
{
    if (isRunning())
        m_run->progress.cancel();
}

void CompareController::setAnalyser(Analyser analyser)
{
    m_analyser = std::move(analyser);
}

void CompareController::work(std::shared_ptr<Run> run, session::RankPair pair, Settings settings, Analyser analyser)
{
    const std::uint64_t generation = run->generation;
    session::AnalysisOptions options;
    settings.applyTo(options);
    options.skeletonReady = [this, run, generation](std::shared_ptr<const session::PairSkeleton> skeleton) {
        {
            std::lock_guard lock(run->mutex);
            run->skeleton = std::move(skeleton);
        }
        wake(generation);
    };
    options.layoutReady = [this, run, generation](std::shared_ptr<const session::NodeStatusTable> status) {
        {
            std::lock_guard lock(run->mutex);
            run->layout = std::move(status);
        }
        wake(generation);
    };
    // Batches are only stored: the GUI timer takes them, which is what coalesces them.
    options.statusUpdate = [run](session::StatusUpdate update) {
        std::lock_guard lock(run->mutex);
        run->pending.nodes.insert(run->pending.nodes.end(), update.nodes.begin(), update.nodes.end());
        run->pending.own.insert(run->pending.own.end(), update.own.begin(), update.own.end());
    };

    Result<std::shared_ptr<const session::PairAnalysis>> result =
        makeError("session.internal", {}, "the analysis did not run");
    try {
        result = analyser ? analyser(pair, options, &run->progress)
                          : session::analysePair(pair, options, &run->progress);
    } catch (const std::exception& e) {
        // Core does not throw, but an allocation can fail on a huge dump; report it, do not terminate.
        result = makeError("session.internal", {}, std::string("the analysis stopped: ") + e.what());
    }
    {
        std::lock_guard lock(run->mutex);
        run->ended = true;
        if (result)
            run->analysis = *result;
        else
            run->error = result.error();
    }
    wake(generation);
    // The reopen cache is written once the result is on its way to the GUI: off the user's wait. A cache that
    // cannot be written only costs the next open its head start.
    if (result && !options.cacheDir.empty() && !options.manualMatches && !(*result)->reopened)
        (void)session::writePairCache(session::pairCacheFile(options.cacheDir, pair, options), pair, options, **result);
}

void CompareController::wake(std::uint64_t generation)
{
    // `this` outlives every worker: the destructor joins them before QObject tears down the queue.
    QMetaObject::invokeMethod(
        this,
        [this, generation] {
            if (m_run && m_run->generation == generation)
                pump(false);
        },
        Qt::QueuedConnection);
}

namespace {

// Keeps the last status of each node, in first-seen order.
session::StatusUpdate coalesce(session::StatusUpdate in)
{
    std::unordered_map<std::uint32_t, std::size_t> slot;
    session::StatusUpdate out;
    for (std::size_t i = 0; i < in.nodes.size() && i < in.own.size(); ++i) {
        auto [it, inserted] = slot.emplace(in.nodes[i], out.nodes.size());
        if (inserted) {
            out.nodes.push_back(in.nodes[i]);
            out.own.push_back(in.own[i]);
        } else {
            out.own[it->second] = in.own[i];
        }
    }
    return out;
}

} // namespace

void CompareController::pump(bool tick)
{
    const std::shared_ptr<Run> run = m_run;
    if (!run || run->endSent)
        return;
    std::shared_ptr<const session::PairSkeleton> skeleton;
    std::shared_ptr<const session::NodeStatusTable> layout;
    session::StatusUpdate batch;
    bool ended = false;
    std::shared_ptr<const session::PairAnalysis> analysis;
    std::optional<Diagnostic> error;
    {
        std::lock_guard lock(run->mutex);
        ended = run->ended;
        if (!run->skeletonSent && run->skeleton)
            skeleton = run->skeleton;
        const bool skeletonOut = run->skeletonSent || skeleton;
        if (skeletonOut && !run->layoutSent && run->layout)
            layout = run->layout;
        const bool layoutOut = run->layoutSent || layout;
        if (layoutOut && (tick || ended)) {
            batch = std::move(run->pending);
            run->pending = {};
        }
        if (ended) {
            analysis = run->analysis;
            error = run->error;
        }
    }
    // A slot may start another run (then stop at once) or cancel this one (then say nothing more but
    // cancelled(), even if the worker had more ready).
    auto superseded = [&] { return m_run != run; };
    auto live = [&] { return !superseded() && !run->progress.isCancelled(); };
    if (skeleton && live()) {
        run->skeletonSent = true;
        emit skeletonReady(skeleton);
        if (superseded())
            return;
    }
    if (layout && live()) {
        run->layoutSent = true;
        emit layoutReady(layout);
        if (superseded())
            return;
    }
    const auto now = std::chrono::steady_clock::now();
    if (!batch.nodes.empty() && live() && !ended && now - m_lastBatch < kPumpInterval) {
        // A late timer tick can follow the previous one closely; keep the batch for the next tick.
        std::lock_guard lock(run->mutex);
        batch.nodes.insert(batch.nodes.end(), run->pending.nodes.begin(), run->pending.nodes.end());
        batch.own.insert(batch.own.end(), run->pending.own.begin(), run->pending.own.end());
        run->pending = std::move(batch);
        batch = {};
    }
    if (!batch.nodes.empty() && live()) {
        m_lastBatch = now;
        emit statusBatch(coalesce(std::move(batch)));
        if (superseded())
            return;
    }
    if (!ended && live() && now - m_lastProgress >= kPumpInterval) {
        const double fraction = run->progress.fraction();
        if (fraction != run->lastFraction) {
            run->lastFraction = fraction;
            m_lastProgress = now;
            const double elapsed = std::chrono::duration<double>(now - run->started).count();
            const double remaining = run->remaining.add(elapsed, fraction);
            emit progress(stageOf(fraction), fraction, elapsed, remaining);
            if (superseded())
                return;
        }
    }
    if (!ended)
        return;
    run->endSent = true;
    m_timer.stop();
    if (run->progress.isCancelled())
        emit cancelled();
    else if (analysis)
        emit finished(analysis);
    else
        emit failed(error ? formatDiagnostic(*error) : tr("the analysis failed"));
}

} // namespace probescope::ui
