// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "ui/jobs/jobprogress.h"
#include "core/util/diagnostic.h"

#include <QFutureWatcher>
#include <QObject>
#include <QTimer>

#include <functional>

namespace probescope::ui {

/**
 * @brief Runs one blocking function on the Qt thread pool with progress and Cancel (docs/gui-jobs.md).
 *
 * The work receives the task's ProgressSink; whatever it produces it stores in state it captured.
 * progressChanged() is emitted from the GUI thread every `pollInterval` ms while the work runs and once
 * at the end; finished() follows when the work has returned. Destroying a running task cancels it and
 * waits, so the work may safely use the sink until it returns.
 */
class BackgroundTask : public QObject
{
    Q_OBJECT
public:
    using Work = std::function<void(ProgressSink& progress)>;

    explicit BackgroundTask(QObject* parent = nullptr);
    ~BackgroundTask() override;

    /// Starts `work`; returns false (and does nothing) while another run is under way.
    bool start(Work work);
    bool isRunning() const;
    /// Asks the work to stop; it sees isCancelled() and returns early. finished() still follows.
    void cancel();
    bool isCancelRequested() const { return m_progress.isCancelled(); }
    /// Blocks until the work has returned (tests, shutdown). Emits nothing by itself.
    void waitForFinished();
    void setPollInterval(int ms) { m_poll.setInterval(ms); }

signals:
    void progressChanged(qint64 done, qint64 total);
    void finished();

private:
    void emitProgress();

    JobProgress m_progress;
    QFutureWatcher<void> m_watcher;
    QTimer m_poll;
    bool m_running = false;
};

} // namespace probescope::ui
