// SPDX-License-Identifier: Apache-2.0
#include "core/compare/schedule/schedule.h"

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace probescope::compare {

std::vector<std::string> PairScheduler::run(std::size_t count, const std::function<std::string(std::size_t)>& runPair)
{
    std::vector<std::string> out(isCoordinator() ? count : 0);
    PairTask task;
    task.work = runPair;
    task.deliver = [&](PairDone&& done) {
        if (done.index < out.size())
            out[done.index] = std::move(done.text);
        return true;
    };
    schedule(count, task);
    return out;
}

LocalThreadScheduler::LocalThreadScheduler(unsigned threads)
    : m_threads(std::max(1u, threads))
{
}

void LocalThreadScheduler::schedule(std::size_t count, const PairTask& task)
{
    using Clock = std::chrono::steady_clock;
    std::mutex mutex; // guards everything below
    std::condition_variable changed;
    std::size_t next = 0;
    bool stop = false;
    bool settling = false; // one thread settles and delivers at a time
    std::vector<PairDone> unsettled;
    auto lastSettle = Clock::now();

    // Settles the results waiting (outside the lock: a durability barrier takes a while) and delivers them; called
    // and returns with `lock` held.
    auto settleAndDeliver = [&](std::unique_lock<std::mutex>& lock) {
        settling = true;
        do {
            std::vector<PairDone> batch;
            batch.swap(unsettled);
            lastSettle = Clock::now();
            lock.unlock();
            if (task.settle && !batch.empty())
                task.settle(batch);
            bool go = true;
            for (PairDone& done : batch)
                go = task.deliver(std::move(done)) && go;
            lock.lock();
            stop = stop || !go;
            changed.notify_all();
            // Without a settle step results go out as they come: those that arrived meanwhile go now.
        } while (!task.settle && !unsettled.empty());
        settling = false;
    };
    auto ahead = [&] { return task.frontier && next >= task.frontier() + std::max<std::size_t>(task.window, 1); };

    auto worker = [&] {
        std::unique_lock lock(mutex);
        while (true) {
            while (!stop && next < count && ahead()) {
                // Too far ahead of the first result not consumed: what waits here may be what it needs.
                if (!unsettled.empty() && !settling)
                    settleAndDeliver(lock);
                else
                    changed.wait(lock);
            }
            if (!stop && next < count && task.cancelled && task.cancelled())
                stop = true;
            if (stop || next >= count) {
                changed.notify_all();
                return;
            }
            const std::size_t index = next++;
            lock.unlock();
            std::string text = task.work(index);
            lock.lock();
            unsettled.push_back(PairDone { index, std::move(text) });
            if (onPairDone)
                onPairDone();
            const bool due = !task.settle || unsettled.size() >= std::max<std::size_t>(task.window / 2, 1)
                || Clock::now() - lastSettle >= task.settleEvery;
            if (due && !settling)
                settleAndDeliver(lock);
        }
    };
    const unsigned extra = static_cast<unsigned>(std::min<std::size_t>(m_threads, count)) - (count > 0 ? 1 : 0);
    {
        std::vector<std::jthread> threads;
        for (unsigned t = 0; t < extra; ++t)
            threads.emplace_back(worker);
        worker();
    }
    std::unique_lock lock(mutex);
    if (!unsettled.empty())
        settleAndDeliver(lock); // the last batch (results of pairs done after a stop are still delivered)
}

} // namespace probescope::compare
