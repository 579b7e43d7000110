// SPDX-License-Identifier: Apache-2.0
#include "core/job/scheduler.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <thread>

namespace probescope::job {

LocalThreadScheduler::LocalThreadScheduler(unsigned threads)
    : m_threads(std::max(1u, threads))
{
}

std::vector<std::string> LocalThreadScheduler::run(std::size_t count,
                                                   const std::function<std::string(std::size_t)>& runPair)
{
    std::vector<std::string> out(count);
    std::atomic<std::size_t> next { 0 };
    std::mutex doneMutex;
    auto worker = [&] {
        for (std::size_t i = next++; i < count; i = next++) {
            out[i] = runPair(i); // each slot is written by one thread only
            if (onPairDone) {
                const std::lock_guard lock(doneMutex);
                onPairDone();
            }
        }
    };
    const unsigned extra = static_cast<unsigned>(std::min<std::size_t>(m_threads, count)) - (count > 0 ? 1 : 0);
    std::vector<std::jthread> threads;
    for (unsigned t = 0; t < extra; ++t)
        threads.emplace_back(worker);
    worker();
    return out;
}

} // namespace probescope::job
