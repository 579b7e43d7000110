// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/compare/msprobe26/msprobe26.h"
#include "core/dump/dumplayout.h"
#include "core/dump/jsondocument.h"
#include "core/util/diagnostic.h"

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

/**
 * msprobe 26.0.0's first-divergence analysis, `msprobe compare -tp STEP -gp STEP -da`
 * (../shared/docs/msprobe26-diff-analyze-spec.md; our decisions in docs/msprobe26-da.md).
 *
 * Phase A writes one rank table per rank pair (compare_result_rank<N>_<ts>.json); phase B reads every rank
 * table in the output folder and names the first diverging node(s) of the job (diff_analyze_<ns>.json).
 */
namespace probescope::compare::msprobe26 {

/// The rank-table JSON of one compared pair (json.dump(indent=4) text: ops keyed by batch name, with
/// is_same and op_items).
std::string rankTableJson(const msprobe26::DaTable& table);

/// One rank table as phase B reads it back.
struct RankTableFile
{
    int rank = 0;
    std::filesystem::path path;
    std::shared_ptr<const dump::JsonDocument> document;
};

/**
 * @brief Phase B on rank tables already read (ascending rank order is the caller's map order).
 *
 * Returns the diff_analyze JSON text (indent 2), std::nullopt when no node diverges, or the error where
 * msprobe itself crashes (a peer rank without a table, a src/dst value that is not an integer).
 * `log` receives the pass headers msprobe prints.
 */
Result<std::optional<std::string>> analyzeRankTables(const std::map<int, RankTableFile>& tables,
                                                     std::vector<std::string>* log = nullptr);

/// The rank of a file name as msprobe's _resolve_input_path reads it (compare_result_rank<N>_….json), or
/// nullopt for a name it skips.
std::optional<int> rankOfTableFileName(const std::string& name);

struct DiffAnalyzeOptions
{
    std::string timestamp; ///< YYYYmmddHHMMSS of the rank tables; local time now when empty
    /// --salvage: analyse what the damaged rank dumps hold (a rank without a readable dump is left out) instead
    /// of refusing the run; DiffAnalyzeResult::salvaged says what was lost.
    bool salvage = false;
    /// Rank pairs compared at once (0 = one per hardware thread); never changes what is written or said.
    unsigned threads = 0;
};

struct DiffAnalyzeResult
{
    /// Written by this run, in rank order (a path's text alone: 10,000 of them, issue 37).
    std::vector<dump::CompactPath> rankTables;
    std::optional<std::filesystem::path> analyzeFile; ///< diff_analyze_<ns>.json, if a node diverges
    Diagnostics diagnostics; ///< ranks skipped as msprobe skips them (no table), stale tables analysed
    std::vector<std::string> log; ///< what msprobe logs, in its order
    /// The load step's findings on the rank dumps (dump::loadReport, compare.empty-dump, compare.da-no-dump): the
    /// same refusal as the compare pipeline's. Any error here makes a CLI run exit 1, salvaged or not.
    Diagnostics inputDiagnostics;
    /// A rank dump has errors and salvage is off: nothing was written (no rank table, no diff_analyze file).
    bool refused = false;
    /// With salvage: for each damaged dump what was read and what was lost (dump::LoadReport::salvageText).
    std::vector<std::string> salvaged;
};

/**
 * @brief The whole `-da` run: rank dirs of two step folders paired, every rank dump loaded through the load
 * step (dump::loadRank + dump::loadReport, as the compare pipeline does), rank tables written into outDir
 * (created if missing) through the one output writer, then phase B over every rank table in outDir.
 *
 * A damaged rank dump (cut, mistyped, invalid UTF-8, empty, not JSON) or a rank folder without dump.json
 * refuses the run (`refused`, nothing written) unless options.salvage; a rank table in outDir that is not a
 * rank table is an error naming the file and position, before anything is written.
 * Errors (exit 1 in the CLI): no rank folders, different rank counts, damaged rank tables, and msprobe's crashes
 * in phase B.
 */
Result<DiffAnalyzeResult> runDiffAnalyze(const std::filesystem::path& npuStep, const std::filesystem::path& benchStep,
                                         const std::filesystem::path& outDir, const DiffAnalyzeOptions& options = {});

} // namespace probescope::compare::msprobe26
