// SPDX-License-Identifier: Apache-2.0
#include "ui/jobs/planjob.h"

#include "ui/jobs/jobsupport.h"

#include <QtConcurrent/QtConcurrentRun>

#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>

namespace probescope::ui {

struct PlanJob::Run
{
    JobProgress progress;
    std::mutex mutex;
    std::condition_variable ended;
    bool done = false;
    std::optional<Result<session::SessionPlan>> result;
};

PlanJob::PlanJob(QObject* parent)
    : QObject(parent)
{
    prepareJobPool(m_pool);
    m_poll.setInterval(100);
    connect(&m_poll, &QTimer::timeout, this, &PlanJob::poll);
}

PlanJob::~PlanJob()
{
    if (m_run)
        m_run->progress.cancel();
    // The runs touch only their own Run, but the work the caller gave may not outlive the window.
    m_pool.waitForDone();
}

void PlanJob::start(Work work)
{
    if (m_run)
        m_run->progress.cancel();
    m_result.reset();
    auto run = std::make_shared<Run>();
    m_run = run;
    m_clock.start();
    (void)QtConcurrent::run(&m_pool, [run, work = std::move(work)] {
        std::optional<Result<session::SessionPlan>> result;
        try {
            result.emplace(work(run->progress));
        } catch (const std::exception& e) {
            // Out of memory on a huge layout, say: the open fails with the reason instead of ending the program.
            result.emplace(makeError("session.plan", {}, e.what()));
        }
        const std::lock_guard lock(run->mutex);
        run->result = std::move(result);
        run->done = true;
        run->ended.notify_all();
    });
    m_poll.start();
    emit progressChanged(0, 0, 0.0);
}

bool PlanJob::waitFor(int ms)
{
    if (!m_run)
        return m_result.has_value();
    {
        std::unique_lock lock(m_run->mutex);
        if (!m_run->ended.wait_for(lock, std::chrono::milliseconds(ms), [&] { return m_run->done; }))
            return false;
        m_result = std::move(m_run->result);
    }
    m_run.reset();
    m_poll.stop();
    return true;
}

std::optional<Result<session::SessionPlan>> PlanJob::takeResult()
{
    auto out = std::move(m_result);
    m_result.reset();
    return out;
}

void PlanJob::cancel()
{
    if (!m_run)
        return;
    forget();
    emit cancelled();
}

void PlanJob::forget()
{
    m_result.reset();
    if (!m_run)
        return;
    m_run->progress.cancel();
    m_run.reset(); // the worker keeps its Run alive until it notices; its result goes with it
    m_poll.stop();
}

void PlanJob::poll()
{
    if (!m_run) {
        m_poll.stop();
        return;
    }
    bool done = false;
    {
        const std::lock_guard lock(m_run->mutex);
        done = m_run->done;
        if (done)
            m_result = std::move(m_run->result);
    }
    emit progressChanged(static_cast<qint64>(m_run->progress.done()), static_cast<qint64>(m_run->progress.total()),
                         static_cast<double>(m_clock.elapsed()) / 1000.0);
    if (!done)
        return;
    m_run.reset();
    m_poll.stop();
    emit finished();
}

} // namespace probescope::ui
