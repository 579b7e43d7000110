// SPDX-License-Identifier: Apache-2.0
// Reading tensor files ahead into the page cache, in large folios (declared in fileio.h).
//
// Why not POSIX_FADV_WILLNEED: the kernel's forced read-ahead puts every page of the range into the page cache as
// its own 4 KiB folio, and every later read of the file (ours, msprobe's, any program's) then pays a lookup per
// 4 KiB. `probescope-benchcomparelarge --warm-from willneed|plain|ours` on the GB pair (2.243 GB of .pt, Linux 6.18,
// ext4): read() of the warm files 8.57 GB/s after WILLNEED, 8.23 GB/s after a plain read (small folios first,
// larger as the read-ahead ramps up), 15.58 GB/s after our read through a MADV_HUGEPAGE mapping (folios of up to
// 2 MiB); the warm compare with 2 threads 0.298, 0.247 and 0.206 s. The last is what is done here: each 4 MiB
// window is mapped, marked MADV_HUGEPAGE and filled with MADV_POPULATE_READ (which reports a file cut short as an
// error, never a SIGBUS: no byte of the mapping is touched), then unmapped. The kernel's own read-ahead of the
// reader that follows keeps the large folios going (docs/compare-performance.md, "Large folios").
#include "core/util/fileio.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <fcntl.h>
#include <mutex>
#include <stop_token>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <thread>
#include <unistd.h>

namespace probescope {

namespace {

constexpr std::uint64_t kWindow = std::uint64_t { 4 } << 20; ///< two 2 MiB folios: the huge-page read-ahead's unit
constexpr std::size_t kMaxQueued = 16; ///< read-ahead requests waiting at most; more are dropped (it is a hint)
constexpr std::uint64_t kLargeFile = std::uint64_t { 1 } << 20; ///< smaller files are read whole in one read()

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22 // Linux 5.14; older kernels answer EINVAL and the advice below is used instead
#endif

#ifndef __NR_cachestat
#define __NR_cachestat 451 // Linux 6.5, the same number on every architecture
#endif

/// Whether the page of `fd` holding byte `offset` is in the page cache, without reading it: cachestat (Linux 6.5).
/// A read, even a non-blocking one (RWF_NOWAIT), would start the kernel's read-ahead around a missing page in 4 KiB
/// folios, and a cached page at the start of a window keeps the huge-page read-ahead below from that whole window.
/// Older kernels (no cachestat, and no large folios on ext4 either) are asked with a non-blocking read of one byte.
bool pageCached(int fd, std::uint64_t offset)
{
    struct Range
    {
        std::uint64_t offset;
        std::uint64_t length;
    };
    struct Stat
    {
        std::uint64_t cached, dirty, writeback, evicted, recentlyEvicted;
    };
    static std::atomic<bool> noCachestat { false };
    if (!noCachestat.load(std::memory_order_relaxed)) {
        const Range range { offset, 1 };
        Stat stat {};
        if (::syscall(__NR_cachestat, fd, &range, &stat, 0) == 0)
            return stat.cached > 0;
        if (errno != ENOSYS)
            return true; // not a file cachestat knows: leave it alone
        noCachestat = true;
    }
    char byte = 0;
    iovec one { &byte, 1 };
    return ::preadv2(fd, &one, 1, static_cast<off_t>(offset), RWF_NOWAIT) == 1;
}

enum class Filled
{
    Done,        ///< read into the page cache, or stopped (cancelled, the file shorter than the range)
    Unsupported, ///< the kernel cannot populate a mapping: the caller falls back to POSIX_FADV_WILLNEED
};

/// Reads [offset, end) of `fd` into the page cache a window at a time through a MADV_HUGEPAGE mapping.
Filled fillLarge(int fd, std::uint64_t offset, std::uint64_t end, const std::stop_token& stop)
{
    for (std::uint64_t at = offset & ~(kWindow - 1); at < end; at += kWindow) {
        if (stop.stop_requested())
            return Filled::Done;
        const auto length = static_cast<std::size_t>(std::min(kWindow, end - at));
        void* p = ::mmap(nullptr, length, PROT_READ, MAP_SHARED, fd, static_cast<off_t>(at));
        if (p == MAP_FAILED)
            return Filled::Unsupported;
        ::madvise(p, length, MADV_HUGEPAGE); // no transparent huge pages: ordinary folios, still read
        const int rc = ::madvise(p, length, MADV_POPULATE_READ);
        const int err = errno;
        ::munmap(p, length);
        if (rc != 0)
            return err == EINVAL ? Filled::Unsupported : Filled::Done; // EFAULT: the file ends before the range
    }
    return Filled::Done;
}

void fill(int fd, std::uint64_t offset, std::uint64_t end, const std::stop_token& stop)
{
    if (fillLarge(fd, offset, end, stop) == Filled::Unsupported)
        ::posix_fadvise(fd, static_cast<off_t>(offset), static_cast<off_t>(end - offset), POSIX_FADV_WILLNEED);
}

/// One thread that reads queued files ahead while the caller computes, started on first use and stopped (its
/// current window finished, the rest of the queue dropped) when the process exits.
class BackgroundReader
{
public:
    static BackgroundReader& instance()
    {
        static BackgroundReader reader;
        return reader;
    }

    /// Queues [offset, offset + length) of `fd`, which it closes when done.
    void push(int fd, std::uint64_t offset, std::uint64_t length)
    {
        std::lock_guard lock(m_mutex);
        if (m_queue.size() >= kMaxQueued) {
            ::close(fd);
            return;
        }
        m_queue.push_back({ fd, offset, length });
        if (!m_thread.joinable())
            m_thread = std::jthread([this](std::stop_token stop) { run(stop); });
        m_wake.notify_one();
    }

    void drain()
    {
        std::unique_lock lock(m_mutex);
        m_idle.wait(lock, [this] { return m_queue.empty() && !m_busy; });
    }

    ~BackgroundReader()
    {
        if (m_thread.joinable()) {
            m_thread.request_stop();
            m_thread.join();
        }
        for (const Request& r : m_queue)
            ::close(r.fd);
    }

private:
    struct Request
    {
        int fd;
        std::uint64_t offset;
        std::uint64_t length;
    };

    BackgroundReader() = default;

    void run(const std::stop_token& stop)
    {
        for (;;) {
            Request r {};
            {
                std::unique_lock lock(m_mutex);
                m_busy = false;
                m_idle.notify_all();
                if (!m_wake.wait(lock, stop, [this] { return !m_queue.empty(); }))
                    return;
                r = m_queue.front();
                m_queue.pop_front();
                m_busy = true;
            }
            fill(r.fd, r.offset, r.offset + r.length, stop);
            ::close(r.fd);
        }
    }

    std::mutex m_mutex;
    std::condition_variable_any m_wake;
    std::condition_variable m_idle;
    std::deque<Request> m_queue;
    bool m_busy = false;
    std::jthread m_thread; // last: stopped and joined before the members it uses go
};

} // namespace

void readAheadUnlessCached(int fd, std::uint64_t offset, std::uint64_t length)
{
    // The caller reads the range next, front to back: its first window now (the caller would wait for it anyway);
    // the kernel's read-ahead then carries the window's large folios on as the caller's reads reach its end.
    if (length < kLargeFile || pageCached(fd, offset))
        return;
    const std::uint64_t end = offset + length;
    const std::uint64_t firstEnd = offset + std::min(length, kWindow);
    fill(fd, offset, firstEnd, std::stop_token {});
    // And the last window: a .pt's zip directory is read next, and a read there would start the kernel's read-ahead
    // in 4 KiB folios, which would keep the large folios from the rest of that window when the reads get there.
    if (const std::uint64_t lastStart = std::max(firstEnd, (end - 1) & ~(kWindow - 1)); lastStart < end)
        fill(fd, lastStart, end, std::stop_token {});
}

void readAheadInBackground(int fd, std::uint64_t offset, std::uint64_t length)
{
    if (length < kLargeFile || pageCached(fd, offset)) {
        ::close(fd);
        return;
    }
    BackgroundReader::instance().push(fd, offset, length);
}

void waitForBackgroundReadAhead()
{
    BackgroundReader::instance().drain();
}

} // namespace probescope
