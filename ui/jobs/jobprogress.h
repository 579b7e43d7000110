// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/util/diagnostic.h"

#include <atomic>
#include <cstdint>

namespace probescope::ui {

/**
 * @brief The one bridge from core's ProgressSink to the GUI: worker threads write it, the GUI thread
 * polls it (see docs/gui-jobs.md).
 *
 * Only atomics: core calls advance() from all its compare threads, for every row, sometimes thousands
 * of times a second, so the GUI reads the counts on a timer instead of receiving a queued call per
 * advance(). The cancel flag is the job's one cancel channel: core's long operations only look at
 * isCancelled().
 */
class JobProgress final : public ProgressSink
{
public:
    void setRange(std::uint64_t total) override { m_total.store(total, std::memory_order_relaxed); }
    /// Takes the absolute count; workers can report out of order, so the largest count is kept.
    void advance(std::uint64_t done) override
    {
        std::uint64_t seen = m_done.load(std::memory_order_relaxed);
        while (done > seen && !m_done.compare_exchange_weak(seen, done, std::memory_order_relaxed)) {
        }
    }
    bool isCancelled() const override { return m_cancelled.load(std::memory_order_relaxed); }

    void cancel() { m_cancelled.store(true, std::memory_order_relaxed); }
    /// Back to nothing done, not cancelled (before a job object is reused for another run).
    void reset();
    std::uint64_t total() const { return m_total.load(std::memory_order_relaxed); }
    std::uint64_t done() const { return m_done.load(std::memory_order_relaxed); }
    /// Done over total in [0, 1]; 0 before the range is known.
    double fraction() const;

private:
    std::atomic<std::uint64_t> m_total { 0 };
    std::atomic<std::uint64_t> m_done { 0 };
    std::atomic<bool> m_cancelled { false };
};

} // namespace probescope::ui
