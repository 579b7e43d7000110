// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/compare/pipeline/pipeline.h"
#include "core/compare/pipeline/plan.h"
#include "core/job/origin.h"
#include "core/job/scheduler.h"
#include "core/util/diagnostic.h"

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace probescope::job {

/// One pair of the job as the summary lists it. Everything here is deterministic: no timings, no worker id.
struct PairSummary
{
    std::int64_t step = -1;
    std::string outSubdir;              ///< "step0", or "" below a dump root
    std::string npuRank;                ///< rank folder names as on disk
    std::string benchRank;
    std::int64_t rank = -1;             ///< NPU rank number, -1 for a bare folder
    std::string npuDump;                ///< as planned (the paths given on the command line, extended)
    std::string benchDump;
    bool compared = false;              ///< false: the pair failed to compare (see error)
    std::string errorId;                ///< the Diagnostic id when it failed
    std::string error;                  ///< the Diagnostic, formatted (file:line:col)
    std::uint64_t rows = 0;
    std::uint64_t failingRows = 0;
    RankFailure failure;                ///< first failing node and communication position
    std::string firstFailureSummary;
    std::string worstMetric;            ///< column name of the worst value ("" when none)
    std::string worstValue;
    std::string worstNode;              ///< row name holding it
    std::vector<std::string> files;     ///< outputs relative to OUT, in the order they were written
    bool resumed = false;               ///< taken from a complete earlier run (not written to the summary)
    /// "npu" or "bench": a (step, rank) place only that side has (a step on one side only). Not compared: its
    /// rank label and dump are that side's, the other side's are empty; errorId/error hold the plan's warning.
    std::string onlyIn;
};

/// What a whole-job compare runs on top of the compare options.
struct WholeJobOptions
{
    std::vector<std::int64_t> steps; ///< --step 0,2: only these steps (empty = every step)
    std::vector<std::int64_t> ranks; ///< --rank 1,3: only these NPU ranks (empty = every rank)
    bool resume = false;             ///< --resume: keep pairs whose outputs are complete (the journal, see runWholeJob)
    PairScheduler* scheduler = nullptr; ///< null = one local thread
    ProgressSink* progress = nullptr;   ///< pairs done, on the coordinator (from the scheduler's threads); a cancel
                                        ///< starts no further pair and ends the job with compare.cancelled
    /// Set: each pair (and place on one side only) is handed here on the coordinator in plan order as soon as it and
    /// the pairs before it are complete, and JobResult::pairs stays empty, so the job's memory does not grow with its
    /// pairs (issue 37); the counts and the origin are still in the JobResult. Unset: JobResult::pairs holds them all.
    std::function<void(const PairSummary&)> onPair;
    /// On the coordinator, once the job is planned and before the first pair is handed to onPair: the plan's notes
    /// (JobResult::diagnostics), so that a caller printing as the pairs come can print them first.
    std::function<void(const Diagnostics&)> onPlanned;
};

struct JobResult
{
    std::vector<PairSummary> pairs;     ///< in plan order (by step, then rank folder name); one-sided places too
    JobOrigin origin;
    Diagnostics diagnostics;            ///< of the plan (steps or ranks on one side only, folders skipped)
    bool coordinator = true;            ///< false on workers of a cluster run: pairs and origin are empty
    std::filesystem::path summaryCsv;   ///< the names the summary got (job_summary.csv, or _1, _2, ... on reruns)
    std::filesystem::path summaryJson;
    std::optional<Diagnostic> summaryError; ///< the summary could not be written (the pairs are still complete)
    /// Counted as the pairs come (with WholeJobOptions::onPair, `pairs` is empty).
    struct Counts
    {
        std::size_t places = 0;   ///< every pair and one-sided place
        std::size_t failed = 0;   ///< pairs that failed to compare
        std::size_t oneSided = 0; ///< places on one side only
        std::size_t failing = 0;  ///< compared pairs with a failing row
    } counts;
    std::size_t failedPairs() const { return counts.failed; }      ///< not counting one-sided places
    std::size_t oneSidedPlaces() const { return counts.oneSided; } ///< places on one side only, not compared
    std::size_t failingPairs() const { return counts.failing; }
    std::size_t comparedOrFailed() const { return counts.places - counts.oneSided; }
};

/**
 * @brief Compares every (step, rank) pair of two inputs, writes each pair's outputs as the step-level compare
 * does (compare/pipeline/pipeline.h, OUT/step{N}/compare_result_{npu rank folder}-{bench rank folder}_{ts}.csv), then
 * OUT/job_summary.csv and OUT/job_summary.json.
 *
 * A pair that cannot be compared (a corrupt dump.json in one rank) is recorded with its diagnostic and the others
 * still run; a step on one side only is listed as not compared (PairSummary::onlyIn). Completeness for --resume:
 * after a pair's files are written and made durable (one util/outputfile DeferredSync barrier for a batch of pairs,
 * not an fsync per file), its entry (its summary, the size and times of every input it read, the size of every
 * output) goes into the batch's journal, one new file OUT/.probescope/journal/journal_{N}.jsonl per batch (never
 * replacing an earlier one); a pair counts as done when its latest entry (a journal line, or the marker file
 * pairMarkerPath() that versions before the journal wrote) is of this version, its inputs are unchanged and every
 * file it lists exists with the size recorded. Pairs that failed to compare get no entry, so a rerun tries them
 * again. The summary files are claimed under a free name (never replaced); when they
 * cannot be written, summaryError says why and the pairs are still returned. Fatal only: no pair planned, mapping
 * files unreadable, OUT not writable.
 */
Result<JobResult> runWholeJob(const compare::CompareInput& input, const std::filesystem::path& outDir,
                              const compare::JobOptions& options, const WholeJobOptions& jobOptions);

/// OUT/{outSubdir}/.probescope/pair_{npu rank folder}-{bench rank folder}.json (a dot folder: never an output): the
/// --resume marker of versions before the journal, still read when no journal names the pair.
std::filesystem::path pairMarkerPath(const std::filesystem::path& outDir, const compare::PlannedPair& pair);

/// The summary as CSV and JSON (the texts of job_summary.csv and job_summary.json).
std::string jobSummaryCsv(const JobResult& result);
std::string jobSummaryJson(const JobResult& result);

/// The last line the CLI prints: the origin rank and node, or that nothing fails.
std::string originLine(const JobResult& result);

} // namespace probescope::job
