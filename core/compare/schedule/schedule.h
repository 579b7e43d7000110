// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace probescope::compare {

/// One pair done on a worker: its place in the plan and the text its work returned.
struct PairDone
{
    std::size_t index = 0;
    std::string text;
};

/**
 * @brief What a schedule runs for a loop over pairs (compare::runPairs, pipeline/comparerun.h): the work of a pair,
 * what settles a batch of done pairs on the worker that ran them, and where the results go.
 *
 * The texts are all that crosses processes: a pair's work reads its dumps and writes its outputs itself.
 */
struct PairTask
{
    /// Runs pair `index` on any worker (any thread, any process); the text is what the coordinator receives.
    std::function<std::string(std::size_t index)> work;
    /// Optional, on the worker that ran them, before their results leave it, one batch at a time per process: the
    /// whole job's durability barrier and the journal that vouches for the batch (it may rewrite a text: a pair whose
    /// entry could not be written). Called every `settleEvery`, when `window` results wait, and at the end; without
    /// it every result is delivered as soon as it is done.
    std::function<void(std::vector<PairDone>& batch)> settle;
    std::chrono::milliseconds settleEvery { 5000 };
    /// On the coordinator, one call at a time, in any order: a pair's result. false = start no further pair.
    std::function<bool(PairDone&& done)> deliver;
    /// On the coordinator: the first index the caller has not consumed yet (the results are consumed in plan order).
    /// A local worker starts no pair `window` or more beyond it, so at most about `window` results are held back
    /// whatever the number of pairs. Null: unbounded.
    std::function<std::size_t()> frontier;
    std::size_t window = 256;
    /// Asked before each pair is started: true = start no further pair (a cancel). Null: never.
    std::function<bool()> cancelled;
};

/**
 * @brief The seam between a loop over pairs and whatever runs them: local threads, or (outside core/, so that core
 * never depends on MPI) processes of a cluster.
 *
 * A pair job is self-contained: it reads its two dumps, writes its outputs and returns a small serialised summary.
 * That is all a cluster engine has to move between processes, and why results cannot depend on how the pairs were
 * spread. The MPI engine (app/cli/mpischeduler.cpp) is a plugin compiled against this header alone: everything it
 * needs of the base class is inline here, and a change of the virtual functions is a new plugin ABI
 * (docs/scale-out.md).
 */
class PairScheduler
{
public:
    virtual ~PairScheduler() = default;
    /// Runs `task.work(i)` once for every i in [0, count) (unless delivery stops or the task is cancelled), in any
    /// order and on any worker, settles the results on their worker and delivers them on the coordinator.
    virtual void schedule(std::size_t count, const PairTask& task) = 0;
    /// Whether this process writes the job summary and prints the result (always true for local threads).
    virtual bool isCoordinator() const { return true; }
    /// The coordinator's `value` on every worker (the timestamp all pairs of one job share).
    virtual std::string shareFromCoordinator(std::string value) { return value; }
    /// Returns when every process got here, with each process's `report` on the coordinator (its own first),
    /// {} elsewhere: each process made its outputs durable before the coordinator writes the job summary that
    /// vouches for them, and reports what it could not (docs/scale-out.md, "Durability").
    virtual std::vector<std::string> gatherAtEnd(std::string report) { return { std::move(report) }; }

    /// schedule() with every result kept, indexed by pair: {} on processes that are not the coordinator.
    std::vector<std::string> run(std::size_t count, const std::function<std::string(std::size_t)>& runPair);

    /// Called on the coordinator each time a pair is done (any thread, one call at a time per scheduler): the job's
    /// progress line. Set by the caller before schedule().
    std::function<void()> onPairDone;
};

/// Pairs on `threads` local threads, taken dynamically (a big pair does not hold up the others' queue) but never
/// more than the task's window ahead of the first pair not yet consumed. One thread runs the pairs in plan order and
/// delivers each before the next starts (a run that stops at a pair starts none after it).
class LocalThreadScheduler final : public PairScheduler
{
public:
    explicit LocalThreadScheduler(unsigned threads);
    void schedule(std::size_t count, const PairTask& task) override;

private:
    unsigned m_threads;
};

} // namespace probescope::compare
