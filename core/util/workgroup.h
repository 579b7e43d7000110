// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/util/diagnostic.h"

#include <cstddef>
#include <functional>

namespace probescope {

/**
 * @brief Lets a running job hand parts of itself to idle threads.
 *
 * run(count, part) calls part(k) for every k in [0, count), on the calling thread and on any thread of
 * the group that has nothing else to do, and returns when all parts are done. Parts must write only
 * their own slot; whoever combines them does so in k order, so results do not depend on which thread
 * ran which part, nor on the thread count.
 */
class Splitter
{
public:
    virtual ~Splitter() = default;
    virtual void run(std::size_t count, const std::function<void(std::size_t)>& part) = 0;
    /// Threads that may take part in run() (1: run() is a plain loop).
    virtual unsigned threads() const = 0;
};

/// A Splitter that runs every part on the calling thread.
class SerialSplitter final : public Splitter
{
public:
    void run(std::size_t count, const std::function<void(std::size_t)>& part) override;
    unsigned threads() const override { return 1; }
};

/// A Splitter of its own `threads` threads (0 = one per hardware thread), for one large job run alone.
class ThreadSplitter final : public Splitter
{
public:
    explicit ThreadSplitter(unsigned threads);
    void run(std::size_t count, const std::function<void(std::size_t)>& part) override;
    unsigned threads() const override { return m_threads; }

private:
    unsigned m_threads;
};

/**
 * @brief parallelFor whose jobs can split themselves: job(i, splitter) may call splitter.run(), and the
 * parts are taken by every thread that is idle, before it starts a new job.
 *
 * So a few large jobs (one 2 GB tensor pair) keep every thread busy, and many small ones run side by
 * side as with parallelFor. Threads take new jobs only when no part is waiting, which bounds the jobs in
 * flight by the thread count. Progress and cancellation as parallelFor (jobs, not parts, are counted).
 */
bool parallelForSplittable(std::size_t count, unsigned threads,
                           const std::function<void(std::size_t, Splitter&)>& job, ProgressSink* progress = nullptr);

} // namespace probescope
