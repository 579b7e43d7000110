// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "util/diagnostic.h"

#include <QString>

#include <atomic>
#include <cstdint>
#include <memory>
#include <thread>
#include <utility>
#include <vector>

namespace probescope::ui {

/**
 * @brief Progress and cancellation of one background run: the worker writes, the GUI thread reads.
 *
 * Lock-free, because core reports progress from its compare threads for every row.
 */
class RunProgress final : public ProgressSink
{
public:
    void setRange(std::uint64_t total) override { m_total.store(total, std::memory_order_relaxed); }
    void advance(std::uint64_t done) override { m_done.store(done, std::memory_order_relaxed); }
    bool isCancelled() const override { return m_cancelled.load(std::memory_order_relaxed); }

    void cancel() { m_cancelled.store(true, std::memory_order_relaxed); }
    /// Done over total in [0, 1]; 0 before the range is known.
    double fraction() const;

private:
    std::atomic<std::uint64_t> m_total { 0 };
    std::atomic<std::uint64_t> m_done { 0 };
    std::atomic<bool> m_cancelled { false };
};

/**
 * @brief Worker threads of superseded runs, joined once they end so the GUI thread never waits
 * for a cancelled analysis to notice its flag. The owner joins the rest when it is destroyed.
 */
class RetiredThreads
{
public:
    RetiredThreads() = default;
    RetiredThreads(const RetiredThreads&) = delete;
    RetiredThreads& operator=(const RetiredThreads&) = delete;
    ~RetiredThreads() { joinAll(); }

    /// `ended` turns true as the last thing the thread does.
    void add(std::thread thread, std::shared_ptr<const std::atomic<bool>> ended);
    /// Joins the threads that have ended (each join is then immediate).
    void reap();
    void joinAll();
    std::size_t size() const { return m_threads.size(); }

private:
    std::vector<std::pair<std::thread, std::shared_ptr<const std::atomic<bool>>>> m_threads;
};

/// What core's cancelled analyses return (session.cancelled).
bool isCancellation(const Diagnostic& diagnostic);
/// "file:line:col: error [id]: message", as a QString.
QString formatDiagnostic(const Diagnostic& diagnostic);

} // namespace probescope::ui
