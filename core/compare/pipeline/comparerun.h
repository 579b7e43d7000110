// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/compare/table/comparetable.h"
#include "core/compare/output/csvwriter.h"
#include "core/compare/output/tablecsv.h"
#include "core/compare/verdict/firstfailure.h"
#include "core/compare/pipeline/pipeline.h"
#include "core/compare/pipeline/plan.h"
#include "core/compare/schedule/schedule.h"
#include "core/util/csv.h"
#include "core/util/diagnostic.h"
#include "core/util/profile.h"

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace probescope::compare {

/// msprobe 1.2.2 (default), msprobe 26.0.0 or ptdbg_ascend 6.0 (util/profile.h: the one profile type).
using probescope::Profile;

/// One compared pair and where its files went.
struct PairResult
{
    std::string suffix; ///< "" for a single pair, "_rank0-rank0" in directory mode
    std::filesystem::path npuDump;
    std::filesystem::path benchDump;
    std::shared_ptr<const CompareTable> table;
    std::filesystem::path csvFile;
    std::filesystem::path xlsxFile;
    std::filesystem::path advisorFile;
    FirstFailure firstFailure; ///< in execution order (docs/tree.md)
    std::filesystem::path mappingFile; ///< data_mapping*.yaml that -lm generated, when it did
    Diagnostics diagnostics;           ///< about the options for this pair (an ignored -lm, a mapping item skipped)
    std::int64_t step = -1;            ///< the NPU side's step (-1 without step folders)
    std::string outSubdir;             ///< "step0" when the inputs were dump roots, else ""
    /// The load step's findings on both dumps (dump::loadReport): a cut file, wrong types, invalid UTF-8,
    /// unknown keys; and compare.empty-dump, compare.tensor-unreadable. Errors here make the run exit 1.
    Diagnostics inputDiagnostics;
    bool refused = false; ///< not compared: a dump has errors and JobOptions::salvage is off (table is empty)
    /// With salvage: for each damaged dump what was read and what was lost (dump::LoadReport::salvageText).
    std::vector<std::string> salvaged;
};

/// Index of the pair whose culprit ran earliest (the rank that diverges first), or -1 if none fails.
/// Ranks run in parallel, so "earliest" compares positions in each rank's own execution order.
long firstDivergingPair(const std::vector<PairResult>& results);

/**
 * @brief The one loop over pairs: the compare run of every profile (below), the whole job (core/job, on threads or
 * MPI, with its resume journal and durability batches) and the graph writer. What varies is the work per pair and
 * the schedule.
 *
 * Runs `task.work` for every pair on `scheduler` (null: one local thread, in plan order, each pair consumed before
 * the next starts: the compare run's behaviour) and hands each result to `consume` on the coordinator IN PLAN ORDER as
 * it completes: results that come early wait in a reorder window of at most about `task.window` pairs (local
 * threads start no pair further ahead), so a caller keeps only what it wants of each result. `consume` returning
 * false stops the loop (no pair is started after, and none is consumed after); `task.cancelled` too. A pair whose
 * result never arrived (a lost worker) is consumed with an empty text. On a process that is not the coordinator (a
 * cluster worker) nothing is consumed. `task.deliver` and `task.frontier` are the
 * loop's own.
 */
struct PairLoop
{
    std::size_t count = 0;
    PairScheduler* scheduler = nullptr;
    PairTask task;
    std::function<bool(std::size_t index, std::string&& text)> consume;
};
enum class PairLoopEnd : std::uint8_t { Complete, Stopped, Cancelled };
PairLoopEnd runPairs(const PairLoop& loop);

/// runPairs on one local thread for results that stay in this process (a compare's tables, the graph writer's graphs):
/// `work(i)` gives pair i's result, kept in plan order, or an error, which stops the loop and is returned.
template <class T>
Result<std::vector<T>> runPairsInProcess(std::size_t count, const std::function<Result<T>(std::size_t index)>& work)
{
    std::vector<T> results;
    results.reserve(count);
    std::optional<Result<T>> last; // one thread: each pair is consumed before the next starts
    std::optional<Diagnostic> error;
    PairLoop loop;
    loop.count = count;
    loop.task.work = [&](std::size_t index) {
        last.emplace(work(index));
        return std::string();
    };
    loop.consume = [&](std::size_t, std::string&&) {
        if (!*last) {
            error = last->error();
            return false;
        }
        results.push_back(std::move(**last));
        last.reset();
        return true;
    };
    runPairs(loop);
    if (error)
        return *error;
    return results;
}

/// The one loop over the pairs of a compare run, for every profile (runCompareJob, ptdbg::runPtdbgJob): creates
/// `outDir`, takes one time stamp for all the run's file names (`timestamp`, or the local time when empty) and hands
/// each pair, in plan order, to the profile's `work`, which compares and writes it (on runPairs above, one local
/// thread). A pair that cannot be compared comes back as a PairResult (refused, with its diagnostics) and the loop
/// goes on; an error from `work` (a bad option, a cancel, an output that cannot be written) stops the run and is
/// returned.
using PairWork = std::function<Result<PairResult>(std::size_t index, const std::string& stamp)>;
Result<std::vector<PairResult>> runPairs(std::size_t count, const std::filesystem::path& outDir,
                                         const std::string& timestamp, const PairWork& work);

/// The pairs msprobe 1.2.2 would compare for an input (compare/pipeline/plan.h, strict rank pairing).
Result<std::vector<PlannedPair>> planPairs(const CompareInput& input, const JobOptions& options);

/// Plans, compares (compare/pipeline/pipeline.h) and writes every pair into `outDir` (created if missing); a dump root
/// writes each step's outputs into `outDir`/step{N}. A pair whose dump cannot be read, or has errors while
/// options.salvage is off, is a PairResult with `refused` set; the other pairs still run. Existing files are never
/// overwritten: names carry the timestamp, and a name already taken gets "_1", "_2", ... after it. Steps or ranks
/// present on one side only are warnings in the first pair's diagnostics.
Result<std::vector<PairResult>> runCompareJob(const CompareInput& input, const std::filesystem::path& outDir,
                                              const JobOptions& options, ProgressSink* progress = nullptr);

/// A text cell that a spreadsheet would run as a formula gets a leading apostrophe (util/csv.h; see docs/compare.md).
using probescope::guardFormula;

} // namespace probescope::compare
