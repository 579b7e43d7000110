// SPDX-License-Identifier: Apache-2.0
// The MPI engine of the whole-job compare: a plugin (libprobescope-cli-mpi.so) that probescope-cli opens only
// when an MPI launcher started it (mpiloader.cpp), so the CLI itself never needs an MPI runtime.
//
// Rank 0 coordinates: it hands out pair indices a few at a time (one at a time near the end) to whichever worker
// asks (a big pair does not hold up the others) and gathers only each pair's summary text (about 1 KB). Workers read their dumps from the
// shared file system and write the pair's outputs themselves.
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

constexpr int kTagResult = 1; ///< worker -> rank 0: the results since its last request (none: ready for the first)
constexpr int kTagWork = 2;   ///< rank 0 -> worker: int64 first pair, int64 count (0 = no more pairs)

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

    std::vector<std::string> run(std::size_t count, const std::function<std::string(std::size_t)>& runPair) override
    {
        if (m_size == 1) {
            std::vector<std::string> out;
            for (std::size_t i = 0; i < count; ++i) {
                out.push_back(runPair(i));
                if (onPairDone)
                    onPairDone();
            }
            return out;
        }
        return m_rank == 0 ? coordinate(count) : work(runPair);
    }

private:
    /// The pairs one request takes: a few at a time while many are left, so that a worker does not wait for a
    /// round trip to rank 0 after every small pair (a statistics pair of a small model takes under a millisecond,
    /// the round trip about as long, spinning); one at a time near the end, so that the workers finish together.
    static std::size_t chunkOf(std::size_t left, int workers)
    {
        return std::clamp<std::size_t>(left / (4 * static_cast<std::size_t>(std::max(1, workers))), 1, 32);
    }

    std::vector<std::string> coordinate(std::size_t count)
    {
        std::vector<std::string> out(count);
        std::size_t next = 0;
        int active = m_size - 1;
        std::vector<char> buffer;
        while (active > 0) {
            // Polled with naps instead of MPI_Probe: Open MPI's blocking probe spins, and rank 0 would take a
            // core from the workers for nothing (a pair takes milliseconds or more, a nap 0.2 ms).
            MPI_Status status;
            for (int ready = 0;;) {
                MPI_Iprobe(MPI_ANY_SOURCE, kTagResult, MPI_COMM_WORLD, &ready, &status);
                if (ready)
                    break;
                std::this_thread::sleep_for(std::chrono::microseconds(200));
            }
            int bytes = 0;
            MPI_Get_count(&status, MPI_CHAR, &bytes);
            buffer.resize(static_cast<std::size_t>(bytes));
            MPI_Recv(buffer.data(), bytes, MPI_CHAR, status.MPI_SOURCE, kTagResult, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            // The worker's results since its last request: (int64 index, uint64 size, text) each.
            std::size_t at = 0;
            while (at + 2 * sizeof(std::int64_t) <= buffer.size()) {
                std::int64_t index = -1;
                std::uint64_t size = 0;
                std::memcpy(&index, buffer.data() + at, sizeof index);
                std::memcpy(&size, buffer.data() + at + sizeof index, sizeof size);
                at += sizeof index + sizeof size;
                if (size > buffer.size() - at)
                    break;
                if (index >= 0 && static_cast<std::size_t>(index) < count) {
                    out[static_cast<std::size_t>(index)].assign(buffer.data() + at, size);
                    if (onPairDone)
                        onPairDone();
                }
                at += size;
            }
            const std::size_t take = next < count ? chunkOf(count - next, m_size - 1) : 0;
            const std::int64_t work[2] = { static_cast<std::int64_t>(next), static_cast<std::int64_t>(take) };
            next += take;
            active -= take == 0;
            MPI_Send(work, 2, MPI_INT64_T, status.MPI_SOURCE, kTagWork, MPI_COMM_WORLD);
        }
        return out;
    }

    std::vector<std::string> work(const std::function<std::string(std::size_t)>& runPair)
    {
        std::string message; // nothing done yet: the first request carries no result
        while (true) {
            MPI_Send(message.data(), static_cast<int>(message.size()), MPI_CHAR, 0, kTagResult, MPI_COMM_WORLD);
            std::int64_t work[2] = { 0, 0 };
            MPI_Recv(work, 2, MPI_INT64_T, 0, kTagWork, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (work[1] <= 0)
                return {};
            message.clear();
            for (std::int64_t index = work[0]; index < work[0] + work[1]; ++index) {
                const std::string summary = runPair(static_cast<std::size_t>(index));
                const std::uint64_t size = summary.size();
                message.append(reinterpret_cast<const char*>(&index), sizeof index);
                message.append(reinterpret_cast<const char*>(&size), sizeof size);
                message += summary;
            }
        }
    }

    int m_rank = 0;
    int m_size = 1;
    bool m_owned = false;
};

} // namespace

extern "C" {

__attribute__((visibility("default"))) int probescope_cli_mpi_abi()
{
    return 2; // 2: PairScheduler::gatherAtEnd and onPairDone (issue 37)
}

__attribute__((visibility("default"))) probescope::job::PairScheduler* probescope_cli_mpi_make_scheduler()
{
    return new MpiScheduler();
}
}
