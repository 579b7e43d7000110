// SPDX-License-Identifier: Apache-2.0
#include "backgroundwriter.h"

#include <chrono>
#include <system_error>
#include <utility>

#include <unistd.h>

namespace probescope::collect {

BackgroundWriter::BackgroundWriter(std::uint64_t boundBytes)
    : m_pid(::getpid())
{
    m_counts.boundBytes = boundBytes;
    m_thread = std::thread([this] { run(); });
}

BackgroundWriter::~BackgroundWriter()
{
    if (::getpid() != m_pid) {
        // A forked child: the thread is the parent's; let go of its handle (joining would wait forever).
        try {
            m_thread.detach();
        } catch (const std::system_error&) {
        }
        return;
    }
    {
        const std::lock_guard lock(m_mutex);
        m_stop = true;
    }
    m_work.notify_one();
    m_thread.join(); // run() empties the queue before it returns
}

namespace {

/// How long the thread keeps looking for more jobs before it sleeps until woken.
constexpr auto kLinger = std::chrono::milliseconds(2);
/// A queue this long or this large wakes the thread at once.
constexpr std::size_t kWakeJobs = 32;
constexpr std::uint64_t kWakeBytes = std::uint64_t(1) << 20;

} // namespace

void BackgroundWriter::push(std::uint64_t bytes, Job job)
{
    std::unique_lock lock(m_mutex);
    const auto fits = [&] {
        return m_counts.queuedBytes == 0 || m_counts.queuedBytes + bytes <= m_counts.boundBytes;
    };
    if (!fits()) {
        const auto t0 = std::chrono::steady_clock::now();
        m_wake = true;
        m_work.notify_one();
        m_space.wait(lock, fits);
        m_counts.waitSeconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
    m_counts.queuedBytes += bytes;
    if (m_counts.queuedBytes > m_counts.peakQueuedBytes)
        m_counts.peakQueuedBytes = m_counts.queuedBytes;
    m_queue.emplace_back(bytes, std::move(job));
    const bool wake = m_asleep || m_queue.size() >= kWakeJobs || m_counts.queuedBytes >= kWakeBytes;
    lock.unlock();
    if (wake)
        m_work.notify_one();
}

void BackgroundWriter::drain()
{
    if (::getpid() != m_pid)
        return; // a forked child: the parent's thread writes this queue
    std::unique_lock lock(m_mutex);
    m_wake = true;
    m_work.notify_one();
    m_space.wait(lock, [&] { return m_queue.empty() && !m_running; });
}

bool BackgroundWriter::failed() const
{
    const std::lock_guard lock(m_mutex);
    return m_failed;
}

bool BackgroundWriter::dropIfFailed()
{
    const std::lock_guard lock(m_mutex);
    if (!m_failed)
        return false;
    ++m_counts.jobsDropped;
    ++m_droppedSinceFailure;
    return true;
}

std::optional<Diagnostic> BackgroundWriter::takeFailure()
{
    const std::lock_guard lock(m_mutex);
    if (!m_failure || m_failureTaken)
        return std::nullopt;
    m_failureTaken = true;
    Diagnostic d = *m_failure;
    d.message += " (written in the background: this entry and the " + std::to_string(m_droppedSinceFailure)
        + " entries after it were not written; dump.json ends at the last complete entry before it)";
    return d;
}

void BackgroundWriter::clearFailure()
{
    const std::lock_guard lock(m_mutex);
    m_failed = false;
    m_failureTaken = false;
    m_failure.reset();
    m_droppedSinceFailure = 0;
}

BackgroundWriterCounts BackgroundWriter::counts() const
{
    const std::lock_guard lock(m_mutex);
    return m_counts;
}

void BackgroundWriter::run()
{
    std::unique_lock lock(m_mutex);
    for (;;) {
        if (m_queue.empty()) {
            if (m_stop)
                return; // nothing left to write
            // Linger for more jobs (push() does not wake the thread then), then sleep until woken.
            m_work.wait_for(lock, kLinger, [&] { return m_stop || m_wake || !m_queue.empty(); });
            if (m_queue.empty() && !m_stop) {
                m_asleep = true;
                m_work.wait(lock, [&] { return m_stop || !m_queue.empty(); });
                m_asleep = false;
            }
            m_wake = false;
            continue;
        }
        auto [bytes, job] = std::move(m_queue.front());
        m_queue.pop_front();
        m_running = true;
        const bool drop = m_failed;
        lock.unlock();
        std::optional<Diagnostic> problem;
        if (!drop)
            problem = job();
        job = nullptr; // frees the snapshots before their bytes leave the count
        lock.lock();
        m_running = false;
        m_counts.queuedBytes -= bytes;
        if (drop) {
            ++m_counts.jobsDropped;
            ++m_droppedSinceFailure;
        } else if (problem) {
            ++m_counts.jobsDropped; // its entry is not written either
            m_failed = true;
            m_failure = std::move(problem);
        } else {
            ++m_counts.jobsDone;
        }
        m_space.notify_all();
    }
}

} // namespace probescope::collect
