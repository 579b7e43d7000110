// SPDX-License-Identifier: Apache-2.0
#include "core/util/parallel.h"

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

namespace probescope {

unsigned resolveThreadCount(unsigned requested)
{
    if (requested > 0)
        return requested;
    // Asked once: glibc reads /sys/devices/system/cpu/online on every call, and a whole job asks a few times a pair.
    static const unsigned hardware = std::max(1u, std::thread::hardware_concurrency());
    return hardware;
}

bool parallelFor(std::size_t count, unsigned threads, const std::function<void(std::size_t)>& job,
                 ProgressSink* progress)
{
    if (progress)
        progress->setRange(count);
    std::atomic<std::size_t> next { 0 };
    std::atomic<std::size_t> done { 0 };
    std::atomic<bool> cancelled { false };
    auto worker = [&] {
        while (!cancelled.load(std::memory_order_relaxed)) {
            const std::size_t i = next.fetch_add(1, std::memory_order_relaxed);
            if (i >= count)
                return;
            if (progress && progress->isCancelled()) {
                cancelled = true;
                return;
            }
            job(i);
            const std::size_t finished = done.fetch_add(1, std::memory_order_relaxed) + 1;
            if (progress)
                progress->advance(finished);
        }
    };
    const unsigned n = static_cast<unsigned>(std::min<std::size_t>(resolveThreadCount(threads), std::max<std::size_t>(count, 1)));
    std::vector<std::thread> pool;
    pool.reserve(n - 1);
    for (unsigned t = 1; t < n; ++t)
        pool.emplace_back(worker);
    worker();
    for (auto& th : pool)
        th.join();
    return !cancelled.load();
}

} // namespace probescope
