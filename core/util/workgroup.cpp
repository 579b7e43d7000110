// SPDX-License-Identifier: Apache-2.0
#include "core/util/workgroup.h"

#include "core/util/parallel.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

namespace probescope {

void SerialSplitter::run(std::size_t count, const std::function<void(std::size_t)>& part)
{
    for (std::size_t k = 0; k < count; ++k)
        part(k);
}

namespace {

/// Parts of one run() call; lives on the stack of the thread that called run().
struct Batch
{
    const std::function<void(std::size_t)>* part = nullptr;
    std::size_t count = 0;
    std::size_t next = 0;    ///< guarded by Group::mutex
    std::size_t pending = 0; ///< parts not finished yet; guarded by Group::mutex
};

class Group final : public Splitter
{
public:
    Group(std::size_t jobs, unsigned threads, const std::function<void(std::size_t, Splitter&)>* job,
          ProgressSink* progress)
        : m_jobs(jobs)
        , m_threads(threads)
        , m_job(job)
        , m_progress(progress)
    {
    }

    unsigned threads() const override { return m_threads; }

    void run(std::size_t count, const std::function<void(std::size_t)>& part) override
    {
        if (count == 0)
            return;
        Batch batch;
        batch.part = &part;
        batch.count = count;
        batch.pending = count;
        std::unique_lock lock(m_mutex);
        m_batches.push_back(&batch);
        m_wake.notify_all();
        // Work on our own parts first, then wait for the ones other threads took.
        while (batch.next < batch.count) {
            const std::size_t k = batch.next++;
            if (batch.next == batch.count)
                removeBatch(&batch);
            lock.unlock();
            part(k);
            lock.lock();
            --batch.pending;
        }
        m_done.wait(lock, [&] { return batch.pending == 0; });
    }

    void worker()
    {
        std::unique_lock lock(m_mutex);
        while (true) {
            if (!m_batches.empty()) {
                Batch* batch = m_batches.front();
                const std::size_t k = batch->next++;
                if (batch->next == batch->count)
                    removeBatch(batch);
                lock.unlock();
                (*batch->part)(k);
                lock.lock();
                if (--batch->pending == 0)
                    m_done.notify_all();
                continue;
            }
            if (m_nextJob < m_jobs && !m_cancelled) {
                const std::size_t i = m_nextJob++;
                ++m_running;
                lock.unlock();
                if (m_progress && m_progress->isCancelled()) {
                    lock.lock();
                    m_cancelled = true;
                    --m_running;
                    m_wake.notify_all();
                    continue;
                }
                (*m_job)(i, *this);
                const std::size_t finished = m_finished.fetch_add(1, std::memory_order_relaxed) + 1;
                if (m_progress)
                    m_progress->advance(finished);
                lock.lock();
                --m_running;
                m_wake.notify_all();
                continue;
            }
            // Nothing to take: wait while a running job may still split, else we are done.
            if (m_running == 0)
                return;
            m_wake.wait(lock);
        }
    }

    bool cancelled() const { return m_cancelled; }

private:
    void removeBatch(Batch* batch) { m_batches.erase(std::find(m_batches.begin(), m_batches.end(), batch)); }

    std::size_t m_jobs;
    unsigned m_threads;
    const std::function<void(std::size_t, Splitter&)>* m_job;
    ProgressSink* m_progress;
    std::mutex m_mutex;
    std::condition_variable m_wake; ///< new parts, or a job finished
    std::condition_variable m_done; ///< a part finished
    std::deque<Batch*> m_batches;   ///< batches with parts not yet taken, oldest first
    std::size_t m_nextJob = 0;
    std::size_t m_running = 0;
    bool m_cancelled = false;
    std::atomic<std::size_t> m_finished { 0 };
};

} // namespace

ThreadSplitter::ThreadSplitter(unsigned threads)
    : m_threads(resolveThreadCount(threads))
{
}

void ThreadSplitter::run(std::size_t count, const std::function<void(std::size_t)>& part)
{
    const std::function<void(std::size_t, Splitter&)> job = [&](std::size_t, Splitter& splitter) {
        splitter.run(count, part);
    };
    parallelForSplittable(1, m_threads, job);
}

bool parallelForSplittable(std::size_t count, unsigned threads,
                           const std::function<void(std::size_t, Splitter&)>& job, ProgressSink* progress)
{
    if (progress)
        progress->setRange(count);
    // No job, no helper: a statistics pair has no tensor pair, and a thread made to find nothing costs a clone.
    const unsigned n = count == 0 ? 1u : resolveThreadCount(threads);
    Group group(count, n, &job, progress);
    std::vector<std::thread> pool;
    pool.reserve(n - 1);
    for (unsigned t = 1; t < n; ++t)
        pool.emplace_back([&group] { group.worker(); });
    group.worker();
    for (auto& th : pool)
        th.join();
    return !group.cancelled();
}

} // namespace probescope
