// SPDX-License-Identifier: Apache-2.0
#include "ui/jobs/backgroundtask.h"

#include <QtConcurrent/QtConcurrentRun>

namespace probescope::ui {

BackgroundTask::BackgroundTask(QObject* parent)
    : QObject(parent)
{
    m_poll.setInterval(100);
    connect(&m_poll, &QTimer::timeout, this, &BackgroundTask::emitProgress);
    connect(&m_watcher, &QFutureWatcher<void>::finished, this, [this] {
        m_poll.stop();
        m_running = false;
        emitProgress();
        emit finished();
    });
}

BackgroundTask::~BackgroundTask()
{
    // The work holds a reference to m_progress: it must have returned before the members go.
    m_progress.cancel();
    m_watcher.disconnect(this);
    m_watcher.waitForFinished();
}

bool BackgroundTask::start(Work work)
{
    if (isRunning())
        return false;
    m_progress.reset();
    m_running = true;
    ProgressSink* sink = &m_progress;
    m_watcher.setFuture(QtConcurrent::run([work = std::move(work), sink] { work(*sink); }));
    m_poll.start();
    emit progressChanged(0, 0);
    return true;
}

bool BackgroundTask::isRunning() const
{
    // True from start() until finished() is emitted, so a caller never sees "idle" before the result.
    return m_running;
}

void BackgroundTask::cancel()
{
    m_progress.cancel();
}

void BackgroundTask::waitForFinished()
{
    m_watcher.waitForFinished();
}

void BackgroundTask::emitProgress()
{
    emit progressChanged(static_cast<qint64>(m_progress.done()), static_cast<qint64>(m_progress.total()));
}

} // namespace probescope::ui
