// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "util/diagnostic.h"

#include <QFutureWatcher>
#include <QObject>
#include <QTimer>

#include <atomic>
#include <cstdint>
#include <functional>

namespace probescope::ui {

/**
 * @brief A ProgressSink that worker threads write and the GUI thread reads.
 *
 * Only atomics: core calls advance() from many threads, sometimes thousands of times a second, so the
 * GUI polls instead of receiving a queued signal per call.
 */
class ProgressBridge final : public ProgressSink
{
public:
    void setRange(std::uint64_t total) override { m_total.store(total); }
    void advance(std::uint64_t done) override
    {
        // advance() takes the absolute count; workers can report out of order, keep the largest.
        std::uint64_t seen = m_done.load();
        while (done > seen && !m_done.compare_exchange_weak(seen, done)) {
        }
    }
    bool isCancelled() const override { return m_cancelled.load(); }

    void cancel() { m_cancelled.store(true); }
    void reset()
    {
        m_total.store(0);
        m_done.store(0);
        m_cancelled.store(false);
    }
    std::uint64_t total() const { return m_total.load(); }
    std::uint64_t done() const { return m_done.load(); }

private:
    std::atomic<std::uint64_t> m_total { 0 };
    std::atomic<std::uint64_t> m_done { 0 };
    std::atomic<bool> m_cancelled { false };
};

/**
 * @brief Runs one blocking function on the Qt thread pool with progress and Cancel.
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

    ProgressBridge m_progress;
    QFutureWatcher<void> m_watcher;
    QTimer m_poll;
    bool m_running = false;
};

} // namespace probescope::ui
