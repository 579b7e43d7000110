// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/util/diagnostic.h"

#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

/**
 * `msprobe data2db --data DIR --db OUT --format monitor [--micro_step true|false] [--mapping FILE]` of msprobe 26
 * (core/monitor/csv2db.py, db_utils.py): the monitor's CSV folders of a run turned into OUT/monitor_data.trend.db,
 * the db the trend view reads (docs/monitor.md).
 *
 * Input layouts: msprobe's v1 folders `<time>-rank<R>-<uid>/<metric>_<a>-<b>.csv` (what data2db 26 reads), and the
 * monitor_v2 folders `rank_<R>/<metric>_step<a>-<b>.csv` (ProbeScope reads them too). <metric> is one of actv,
 * actv_grad, exp_avg, exp_avg_sq, grad_unreduced, grad_reduced, param_origin, param_updated, other; the statistic
 * columns are those of norm, min, max, zeros, nans, mean, entropy, softmax_max, sr, kernel_norm, std_x, jacobian,
 * proxy, token_similarity the CSVs have.
 */
namespace probescope::monitor {

struct Data2DbOptions
{
    bool microStep = true; ///< --micro_step: steps counted in micro steps (msprobe's default true)
    /// --mapping: (old, new) pairs replaced in every target name, in the file's order.
    std::vector<std::pair<std::string, std::string>> mapping;
};

struct Data2DbResult
{
    std::filesystem::path db;         ///< OUT/monitor_data.trend.db
    std::size_t ranks = 0;
    std::size_t files = 0;            ///< CSV files read
    std::size_t rows = 0;             ///< trend_data rows written
    std::vector<std::string> log;     ///< msprobe's lines ("Rank 0 inserted 544 rows")
    Diagnostics warnings;             ///< rows msprobe skips ("Skip invalid row in FILE")
};

/// Reads a --mapping JSON file: an object of text to text. Errors name the file and position.
Result<std::vector<std::pair<std::string, std::string>>> readNameMapping(const std::filesystem::path& path);

/**
 * @brief Converts a monitor output folder. `outDir` is created when missing; the db is built in a temporary file and
 * claimed under OUT/monitor_data.trend.db, which must not exist yet (msprobe deletes an old one; ProbeScope never
 * replaces a file: error monitor.db-exists). Errors: no monitor folder or no CSV of a known metric (monitor.no-data),
 * a CSV that cannot be read or split (its file and line).
 */
Result<Data2DbResult> monitorToDb(const std::filesystem::path& dataDir, const std::filesystem::path& outDir,
                                  const Data2DbOptions& options);

/// Whether `dir` is a monitor output folder: it holds a rank folder monitorToDb reads (v1 `<time>-rank<R>-<uid>` or
/// v2 `rank_<R>`). A viewer asks before opening a folder as a dump.
bool isMonitorOutput(const std::filesystem::path& dir);

/// The rank of a v1 monitor folder name as msprobe's OUTPUT_DIR_PATTERN `([\w-]{0,20})-rank(\d{1,5})-` reads it
/// (matched at the start); nullopt for a name it skips.
std::optional<std::string> monitorFolderRank(const std::string& name);

/// get_tags_from_target: the (tag, category) pairs of a target name, "module" for each non-number part and
/// "layer" for "<part>.<number>".
std::vector<std::pair<std::string, std::string>> tagsOfTarget(const std::string& name);

} // namespace probescope::monitor
