// SPDX-License-Identifier: Apache-2.0
#pragma once
// msprobe 26's data2db output (`*.trend.db`): the statistics of every tensor slot per step and rank.

#include "core/util/diagnostic.h"

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace probescope::graph {

/// One monitored tensor slot ("Module.conv.conv1.Conv2d.input.0" in micro step 2).
struct TrendTarget
{
    std::string name;
    std::int64_t vppStage = 0;
    std::int64_t microStep = 0;
};

/// One row of trend_data: one target in one (step, rank) for one metric (actv, grad_reduced, forward, ...). Its
/// statistics are in TrendTable::stats (TrendTable::stat).
struct TrendValue
{
    std::int64_t step = 0;
    std::int64_t rank = 0;
    std::uint32_t target = 0; ///< index into TrendTable::targets
    std::uint32_t metric = 0; ///< index into TrendTable::metrics
};

/// The step x rank x module table, sorted by (step, rank, target, metric).
struct TrendTable
{
    std::string path;
    std::vector<std::string> metrics;     ///< monitoring_metrics by id order ("forward", "backward", ...)
    std::vector<TrendTarget> targets;     ///< monitoring_targets by id order
    std::vector<TrendValue> values;
    /// The statistic columns trend_data has, in its column order: whatever data2db wrote (msprobe's monitor dbs:
    /// the monitor's ops, e.g. min, max, norm, zeros, nans, mean; or norm alone), not a fixed set.
    std::vector<std::string> statistics;
    /// values.size() x statistics.size(), row by row; nullopt = NULL (msprobe writes NaN as NULL).
    std::vector<std::optional<double>> stats;
    std::vector<std::int64_t> steps;      ///< distinct, ascending
    std::vector<std::int64_t> ranks;      ///< distinct, ascending
    std::vector<std::string> modules;     ///< distinct target names without the .input.N / .output.N tail, first-seen order
    std::vector<std::string> warnings;    ///< what the reader could not take in (a -wal beside the file, sqlitedb.h)

    /// The index of a statistic column by name ("norm"), or nullopt when the db has no such column.
    std::optional<std::size_t> statisticIndex(std::string_view name) const;
    /// A statistic of values[value]; nullopt for NULL or a statistic the db does not have.
    std::optional<double> stat(std::size_t value, std::size_t statistic) const;
    /// A statistic of `v` (an element of `values`) by name; nullopt for NULL or a column the db does not have.
    std::optional<double> stat(const TrendValue& v, std::string_view name) const;
};

/// "Module.conv.conv1.Conv2d.input.0" -> "Module.conv.conv1.Conv2d": the module (or API) a target belongs to, as
/// TrendTable::modules names it.
std::string trendModuleOf(const std::string& target);

/// Reads a `.trend.db` read-only (errors, id graph.trend, name the file).
Result<std::shared_ptr<const TrendTable>> readTrendDb(const std::filesystem::path& path);

} // namespace probescope::graph
