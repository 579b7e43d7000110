// SPDX-License-Identifier: Apache-2.0
#include "ui/jobs/overviewjob.h"

#include <QMetaObject>
#include <QtConcurrent/QtConcurrentRun>

#include <chrono>
#include <exception>
#include <utility>

namespace probescope::ui {

struct OverviewJob::Run
{
    std::uint64_t generation = 0;
    session::SessionPlan plan;
    std::vector<std::size_t> pairs;
    CompareSettings settings;
    JobProgress progress;
};

OverviewJob::OverviewJob(QObject* parent)
    : QObject(parent)
{
    registerJobMetaTypes();
    prepareJobPool(m_pool);
}

OverviewJob::~OverviewJob()
{
    if (m_run)
        m_run->progress.cancel();
    // Superseded runs were cancelled by start(); every run posts to `this`.
    m_pool.waitForDone();
}

void OverviewJob::start(const session::SessionPlan& plan, std::vector<std::size_t> pairIndexes,
                        const CompareSettings& settings)
{
    if (m_run)
        m_run->progress.cancel();
    auto run = std::make_shared<Run>();
    run->generation = ++m_generation;
    run->plan = plan;
    for (const std::size_t i : pairIndexes) {
        if (i < plan.pairs.size())
            run->pairs.push_back(i);
    }
    run->settings = settings;
    m_run = run;
    m_running = true;
    (void)QtConcurrent::run(&m_pool, [this, run] { work(run); });
}

void OverviewJob::startStep(const session::SessionPlan& plan, std::int64_t step, const CompareSettings& settings)
{
    start(plan, plan.pairsOfStep(step), settings);
}

void OverviewJob::startAll(const session::SessionPlan& plan, const CompareSettings& settings)
{
    std::vector<std::size_t> all(plan.pairs.size());
    for (std::size_t i = 0; i < all.size(); ++i)
        all[i] = i;
    start(plan, std::move(all), settings);
}

void OverviewJob::cancel()
{
    if (m_running && m_run)
        m_run->progress.cancel();
}

template<typename F>
void OverviewJob::post(std::uint64_t generation, F deliver)
{
    // `this` outlives the worker (the destructor joins it); stale generations are dropped here.
    QMetaObject::invokeMethod(
        this,
        [this, generation, deliver = std::move(deliver)]() mutable {
            if (m_run && m_run->generation == generation && m_running)
                deliver();
        },
        Qt::QueuedConnection);
}

void OverviewJob::work(std::shared_ptr<Run> run)
{
    const std::uint64_t generation = run->generation;
    session::AnalysisOptions options;
    run->settings.applyTo(options);
    options.readStacks = false; // summaries only
    const std::size_t total = run->pairs.size();
    std::size_t done = 0;
    std::vector<session::PairSummary> batch;
    auto lastBatch = std::chrono::steady_clock::now();
    auto flush = [&] {
        if (!batch.empty())
            post(generation, [this, summaries = std::exchange(batch, {})] { emit summariesReady(summaries); });
        lastBatch = std::chrono::steady_clock::now();
    };
    for (const std::size_t index : run->pairs) {
        if (run->progress.isCancelled())
            break;
        post(generation, [this, index] { emit pairStarted(index); });
        Result<std::shared_ptr<const session::PairAnalysis>> result =
            makeError("session.internal", {}, "the analysis did not run");
        try {
            result = session::analysePair(run->plan.pairs[index], options, &run->progress);
        } catch (const std::exception& e) {
            result = makeError("session.internal", {}, std::string("the analysis stopped: ") + e.what());
        }
        if (run->progress.isCancelled())
            break;
        if (result) {
            batch.push_back(session::summarize(**result, index));
            if (std::chrono::steady_clock::now() - lastBatch >= std::chrono::milliseconds(kBatchIntervalMs))
                flush();
        } else {
            post(generation, [this, index, message = formatDiagnostic(result.error())] {
                emit pairFailed(index, message);
            });
        }
        ++done;
        post(generation, [this, done, total] { emit progress(done, total); });
    }
    if (!run->progress.isCancelled())
        flush();
    const bool wasCancelled = run->progress.isCancelled();
    post(generation, [this, wasCancelled] {
        m_running = false;
        if (wasCancelled)
            emit cancelled();
        else
            emit finished();
    });
}

} // namespace probescope::ui
