// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace probescope::job {

/**
 * @brief The seam between the whole-job compare and whatever runs its pairs: local threads, or (outside core/,
 * so that core never depends on MPI) processes of a cluster.
 *
 * A pair job is self-contained: it reads its two dumps, writes its outputs and returns a small serialised
 * summary (the per-pair marker text, see jobcompare.h). That is all a cluster engine has to move between
 * processes, and why results cannot depend on how the pairs were spread.
 */
class PairScheduler
{
public:
    virtual ~PairScheduler() = default;
    /// Runs `runPair(i)` once for every i in [0, count), in any order and on any worker, and returns the
    /// summaries indexed by i. Only the coordinator (isCoordinator()) gets them; other workers get {}.
    virtual std::vector<std::string> run(std::size_t count, const std::function<std::string(std::size_t)>& runPair) = 0;
    /// Whether this process writes the job summary and prints the result (always true for local threads).
    virtual bool isCoordinator() const { return true; }
    /// The coordinator's `value` on every worker (the timestamp all pairs of one job share).
    virtual std::string shareFromCoordinator(std::string value) { return value; }
    /// Returns when every process got here, with each process's `report` on the coordinator (its own first),
    /// {} elsewhere: each process made its outputs durable before the coordinator writes the job summary that
    /// vouches for them, and reports what it could not (docs/scale-out.md, "Durability").
    virtual std::vector<std::string> gatherAtEnd(std::string report) { return { std::move(report) }; }

    /// Called on the coordinator each time a pair's summary arrives (any thread, one call at a time per
    /// scheduler): the job's progress line. Set by the whole-job compare before run().
    std::function<void()> onPairDone;
};

/// Pairs on `threads` local threads, taken dynamically (a big pair does not hold up the others' queue).
class LocalThreadScheduler final : public PairScheduler
{
public:
    explicit LocalThreadScheduler(unsigned threads);
    std::vector<std::string> run(std::size_t count, const std::function<std::string(std::size_t)>& runPair) override;

private:
    unsigned m_threads;
};

} // namespace probescope::job
