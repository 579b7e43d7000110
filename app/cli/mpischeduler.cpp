// SPDX-License-Identifier: Apache-2.0
// The MPI engine of the whole-job compare: a plugin (libprobescope-cli-mpi.so) that probescope-cli opens only
// when an MPI launcher started it (mpiloader.cpp), so the CLI itself never needs an MPI runtime.
//
// Rank 0 coordinates: it hands out pair indices a few at a time (one at a time near the end) to whichever worker
// asks (a big pair does not hold up the others) and receives only each pair's summary text (about 1 KB), which it
// delivers to the loop (compare::runPairs) as it comes, so rank 0 holds no more than the reorder window. Workers read
// their dumps from the shared file system, write the pair's outputs themselves and settle them (one durability
// barrier, then the batch's --resume journal) before their summaries leave the worker.
#include "core/job/scheduler.h"

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr int kTagResult = 1; ///< worker -> rank 0: a request for pairs, with the results settled since its last one
constexpr int kTagWork = 2;   ///< rank 0 -> worker: int64 first pair, int64 count (0 = no more pairs)
constexpr int kTagDone = 3;   ///< worker -> rank 0: its last results, after it was told there is no more work

class MpiScheduler final : public probescope::job::PairScheduler
{
public:
    MpiScheduler()
    {
        int initialized = 0;
        MPI_Initialized(&initialized);
        if (!initialized) {
            int provided = 0;
            MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
            m_owned = true;
        }
        MPI_Comm_rank(MPI_COMM_WORLD, &m_rank);
        MPI_Comm_size(MPI_COMM_WORLD, &m_size);
    }
    ~MpiScheduler() override
    {
        if (m_owned)
            MPI_Finalize();
    }

    bool isCoordinator() const override { return m_rank == 0; }

    std::vector<std::string> gatherAtEnd(std::string report) override
    {
        int size = static_cast<int>(report.size());
        std::vector<int> sizes(m_rank == 0 ? static_cast<std::size_t>(m_size) : 0);
        MPI_Gather(&size, 1, MPI_INT, sizes.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
        std::vector<int> offsets(sizes.size());
        std::string all;
        if (m_rank == 0) {
            int total = 0;
            for (std::size_t i = 0; i < sizes.size(); ++i) {
                offsets[i] = total;
                total += sizes[i];
            }
            all.resize(static_cast<std::size_t>(total));
        }
        MPI_Gatherv(report.data(), size, MPI_CHAR, all.data(), sizes.data(), offsets.data(), MPI_CHAR, 0,
                    MPI_COMM_WORLD);
        std::vector<std::string> out;
        for (std::size_t i = 0; i < sizes.size(); ++i)
            out.push_back(all.substr(static_cast<std::size_t>(offsets[i]), static_cast<std::size_t>(sizes[i])));
        return out;
    }

    std::string shareFromCoordinator(std::string value) override
    {
        std::uint64_t size = value.size();
        MPI_Bcast(&size, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
        value.resize(size);
        MPI_Bcast(value.data(), static_cast<int>(size), MPI_CHAR, 0, MPI_COMM_WORLD);
        return value;
    }

    void schedule(std::size_t count, const probescope::job::PairTask& task) override
    {
        if (m_size == 1) {
            Held held;
            for (std::size_t i = 0; i < count && !(task.cancelled && task.cancelled()); ++i) {
                held.add(i, task.work(i));
                if (onPairDone)
                    onPairDone();
                if (held.due(task) && !deliverAll(held.settle(task), task))
                    return;
            }
            deliverAll(held.settle(task), task);
            return;
        }
        if (m_rank == 0)
            coordinate(count, task);
        else
            work(task);
    }

private:
    /// A worker's done pairs not yet settled (the job's durability barrier and journal run on the process that
    /// compared them, before their results leave it: docs/scale-out.md, "Durability").
    struct Held
    {
        std::vector<probescope::job::PairDone> pairs;
        std::chrono::steady_clock::time_point since = std::chrono::steady_clock::now();

        void add(std::size_t index, std::string text) { pairs.push_back({ index, std::move(text) }); }
        bool due(const probescope::job::PairTask& task) const
        {
            return !task.settle || pairs.size() >= std::max<std::size_t>(task.window / 2, 1)
                || std::chrono::steady_clock::now() - since >= task.settleEvery;
        }
        std::vector<probescope::job::PairDone> settle(const probescope::job::PairTask& task)
        {
            std::vector<probescope::job::PairDone> batch;
            batch.swap(pairs);
            since = std::chrono::steady_clock::now();
            if (task.settle && !batch.empty())
                task.settle(batch);
            return batch;
        }
    };

    static bool deliverAll(std::vector<probescope::job::PairDone>&& batch, const probescope::job::PairTask& task)
    {
        bool go = true;
        for (probescope::job::PairDone& done : batch)
            go = task.deliver(std::move(done)) && go;
        return go;
    }

    /// The pairs one request takes: a few at a time while many are left, so that a worker does not wait for a
    /// round trip to rank 0 after every small pair (a statistics pair of a small model takes under a millisecond,
    /// the round trip about as long, spinning); one at a time near the end, so that the workers finish together.
    static std::size_t chunkOf(std::size_t left, int workers)
    {
        return std::clamp<std::size_t>(left / (4 * static_cast<std::size_t>(std::max(1, workers))), 1, 32);
    }

    /// Rank 0: hands out pairs, and delivers the settled results the workers send with their requests. A worker's
    /// message: int64 pairs done since its last message (the progress line), then (int64 index, uint64 size, text)
    /// per settled result. kTagDone is a worker's last message, after it was told there is no more work.
    void coordinate(std::size_t count, const probescope::job::PairTask& task)
    {
        std::size_t next = 0;
        bool more = true; // false once delivery stopped or the task was cancelled: no pair is handed out after
        int active = m_size - 1;
        std::vector<char> buffer;
        while (active > 0) {
            // Polled with naps instead of MPI_Probe: Open MPI's blocking probe spins, and rank 0 would take a
            // core from the workers for nothing (a pair takes milliseconds or more, a nap 0.2 ms).
            MPI_Status status;
            for (int ready = 0;;) {
                MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &ready, &status);
                if (ready)
                    break;
                std::this_thread::sleep_for(std::chrono::microseconds(200));
            }
            const int tag = status.MPI_TAG;
            int bytes = 0;
            MPI_Get_count(&status, MPI_CHAR, &bytes);
            buffer.resize(static_cast<std::size_t>(bytes));
            MPI_Recv(buffer.data(), bytes, MPI_CHAR, status.MPI_SOURCE, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            std::size_t at = 0;
            if (buffer.size() >= sizeof(std::int64_t)) {
                std::int64_t done = 0;
                std::memcpy(&done, buffer.data(), sizeof done);
                at = sizeof done;
                for (std::int64_t d = 0; onPairDone && d < done; ++d)
                    onPairDone();
            }
            while (at + 2 * sizeof(std::int64_t) <= buffer.size()) {
                std::int64_t index = -1;
                std::uint64_t size = 0;
                std::memcpy(&index, buffer.data() + at, sizeof index);
                std::memcpy(&size, buffer.data() + at + sizeof index, sizeof size);
                at += sizeof index + sizeof size;
                if (size > buffer.size() - at)
                    break;
                if (index >= 0 && static_cast<std::size_t>(index) < count)
                    more = task.deliver({ static_cast<std::size_t>(index), std::string(buffer.data() + at, size) })
                        && more;
                at += size;
            }
            if (tag == kTagDone) {
                --active;
                continue;
            }
            more = more && !(task.cancelled && task.cancelled());
            const std::size_t take = more && next < count ? chunkOf(count - next, m_size - 1) : 0;
            const std::int64_t work[2] = { static_cast<std::int64_t>(next), static_cast<std::int64_t>(take) };
            next += take;
            MPI_Send(work, 2, MPI_INT64_T, status.MPI_SOURCE, kTagWork, MPI_COMM_WORLD);
        }
    }

    void work(const probescope::job::PairTask& task)
    {
        Held held;
        std::int64_t doneSince = 0;
        std::vector<probescope::job::PairDone> settled; // sent with the next message
        auto message = [&] {
            std::string m(reinterpret_cast<const char*>(&doneSince), sizeof doneSince);
            doneSince = 0;
            for (const probescope::job::PairDone& d : settled) {
                const std::int64_t index = static_cast<std::int64_t>(d.index);
                const std::uint64_t size = d.text.size();
                m.append(reinterpret_cast<const char*>(&index), sizeof index);
                m.append(reinterpret_cast<const char*>(&size), sizeof size);
                m += d.text;
            }
            settled.clear();
            return m;
        };
        while (true) {
            const std::string request = message();
            MPI_Send(request.data(), static_cast<int>(request.size()), MPI_CHAR, 0, kTagResult, MPI_COMM_WORLD);
            std::int64_t work[2] = { 0, 0 };
            MPI_Recv(work, 2, MPI_INT64_T, 0, kTagWork, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (work[1] <= 0)
                break;
            for (std::int64_t index = work[0]; index < work[0] + work[1]; ++index) {
                held.add(static_cast<std::size_t>(index), task.work(static_cast<std::size_t>(index)));
                ++doneSince;
            }
            if (held.due(task)) {
                for (probescope::job::PairDone& d : held.settle(task))
                    settled.push_back(std::move(d));
            }
        }
        for (probescope::job::PairDone& d : held.settle(task))
            settled.push_back(std::move(d));
        const std::string last = message();
        MPI_Send(last.data(), static_cast<int>(last.size()), MPI_CHAR, 0, kTagDone, MPI_COMM_WORLD);
    }

    int m_rank = 0;
    int m_size = 1;
    bool m_owned = false;
};

} // namespace

extern "C" {

__attribute__((visibility("default"))) int probescope_cli_mpi_abi()
{
    // 2: PairScheduler::gatherAtEnd and onPairDone (issue 37). 3: schedule() streams a PairTask's results (settled on
    // the worker, delivered to the coordinator as they come) instead of run() returning them all (issue 38).
    return 3;
}

__attribute__((visibility("default"))) probescope::job::PairScheduler* probescope_cli_mpi_make_scheduler()
{
    return new MpiScheduler();
}
}
