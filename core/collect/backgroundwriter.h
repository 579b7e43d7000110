// SPDX-License-Identifier: Apache-2.0
// The collector's background writer: one thread that computes statistics and writes .pt files and
// json entries while the model goes on computing (docs/collect.md, "Writing while the model
// computes"). No LibTorch here: a job is a closure built by torchcollect.cpp around its snapshots.
#pragma once

#include "core/util/diagnostic.h"

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>

#include <sys/types.h>

namespace probescope::collect {

/// What the background writer did so far (see PrecisionDebugger::writerStats()).
struct BackgroundWriterCounts
{
    std::uint64_t boundBytes = 0;
    std::uint64_t queuedBytes = 0;     ///< held by queued and running jobs now
    std::uint64_t peakQueuedBytes = 0; ///< the most ever held at once
    std::uint64_t jobsDone = 0;
    std::uint64_t jobsDropped = 0;     ///< not run: an earlier job of the same folder failed
    double waitSeconds = 0;            ///< producers blocked on a full queue, summed
};

/**
 * @brief A FIFO of write jobs run by one thread, bounded by the bytes the queued jobs hold.
 *
 * Waking the thread for every small entry would cost a context switch each (hundreds per step of a
 * small model): once the queue is empty the thread keeps looking for 2 ms before it sleeps, and
 * push() wakes a sleeping thread only; a full or large queue, drain() and the destructor always do.
 *
 * push() blocks while the job's bytes would take the queue past the bound, unless the queue is empty
 * (so one job larger than the bound still goes, alone): memory stays bounded when the disk is slower
 * than the producer. Jobs run in order, one at a time; a job's bytes count until it has run and been
 * destroyed. When a job fails, the jobs after it are dropped (counted) until clearFailure(): entries
 * are published in order, and a hole in the middle of a dump would go unnoticed.
 *
 * In a child made by fork() the thread does not exist: drain() and the destructor leave the queue to
 * the parent, whose thread writes it, instead of waiting forever (a child that exit()s, say).
 */
class BackgroundWriter
{
public:
    using Job = std::function<std::optional<Diagnostic>()>;

    explicit BackgroundWriter(std::uint64_t boundBytes);
    ~BackgroundWriter(); ///< runs what is queued, then ends the thread
    BackgroundWriter(const BackgroundWriter&) = delete;
    BackgroundWriter& operator=(const BackgroundWriter&) = delete;

    void push(std::uint64_t bytes, Job job);
    /// Returns once every job pushed before has run.
    void drain();
    /// A job failed since clearFailure() (later ones are being dropped).
    bool failed() const;
    /// If a job failed since clearFailure(), counts one more entry as dropped (not queued) and returns true.
    /// One step under the lock, so an entry offered just after a failure is counted as every later one is,
    /// whether the thread reached the failing job before or after it was offered.
    bool dropIfFailed();
    /// The first failure since clearFailure(), once (nullopt afterwards and when there was none); its
    /// message tells how many jobs were dropped after it so far.
    std::optional<Diagnostic> takeFailure();
    /// Runs later jobs again (after drain(): a new folder).
    void clearFailure();
    BackgroundWriterCounts counts() const;

private:
    void run();

    mutable std::mutex m_mutex;
    std::condition_variable m_work;  ///< the thread: a job is there, or stop
    std::condition_variable m_space; ///< producers: bytes were freed; drain(): the queue emptied
    std::deque<std::pair<std::uint64_t, Job>> m_queue;
    bool m_running = false; ///< the thread runs a job (its bytes still count)
    bool m_asleep = false;  ///< the thread waits without a timeout: push() must wake it
    bool m_wake = false;    ///< drain() or a blocked push() wants the queue written now
    bool m_stop = false;
    bool m_failed = false;
    bool m_failureTaken = false;
    std::optional<Diagnostic> m_failure;
    std::uint64_t m_droppedSinceFailure = 0;
    BackgroundWriterCounts m_counts;
    pid_t m_pid; ///< the process whose thread runs the jobs
    std::thread m_thread;
};

} // namespace probescope::collect
