// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "ui/jobs/jobprogress.h"
#include "core/session/session.h"

#include <QElapsedTimer>
#include <QObject>
#include <QThreadPool>
#include <QTimer>

#include <functional>
#include <memory>
#include <optional>

namespace probescope::ui {

/**
 * @brief Plans what is opened (both sides' discovery, then the pairs) on a worker thread, with progress and
 * Cancel, so that opening a job of thousands of ranks never holds the GUI thread (issue 37: 1.27 s at 3,000
 * ranks).
 *
 * The caller gives the work (MainWindow: pairProblem, then session::planSession); it reports its stages through
 * the sink it is given and looks at its cancel between them. One run at a time: start() supersedes the run under
 * way, whose result is then dropped unseen. The result is taken either at once, by waitFor() and takeResult()
 * (a small input is planned before the user could see a progress bar), or when finished() says it is ready.
 * cancel() returns at once and the run's result is never delivered, so a cancelled open leaves nothing behind;
 * the worker stops at its next look at the cancel (MainWindow's work gives the sink to both sides' discovery,
 * dump::discoverDump, which looks at it before each folder it lists, so a cancelled walk of thousands of rank
 * folders ends within one folder instead of finishing in the background).
 */
class PlanJob : public QObject
{
    Q_OBJECT
public:
    using Work = std::function<Result<session::SessionPlan>(ProgressSink& progress)>;

    explicit PlanJob(QObject* parent = nullptr);
    ~PlanJob() override;

    /// Starts `work` on the pool; a run under way is cancelled and forgotten (no signal of it follows).
    void start(Work work);
    /// Waits up to `ms` for the run to end; true when it has, and its result is then ready for takeResult()
    /// (finished() is not emitted for it).
    bool waitFor(int ms);
    /// The result of the run that ended (after finished(), or after waitFor() returned true); empty otherwise.
    std::optional<Result<session::SessionPlan>> takeResult();
    /// Stops the run under way, if any, and emits cancelled(); the result of that run is never delivered.
    void cancel();
    /// Stops and forgets the run under way without a signal (what is opened next replaces it).
    void forget();
    bool isRunning() const { return m_run != nullptr; }

signals:
    /// Polled every 100 ms while the run goes: the stages done of the total, and the seconds since the start.
    void progressChanged(qint64 done, qint64 total, double elapsed);
    void finished();
    void cancelled();

private:
    struct Run;
    void poll();

    QThreadPool m_pool;
    QTimer m_poll;
    QElapsedTimer m_clock;
    std::shared_ptr<Run> m_run;
    std::optional<Result<session::SessionPlan>> m_result;
};

} // namespace probescope::ui
