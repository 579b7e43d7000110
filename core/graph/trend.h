// SPDX-License-Identifier: Apache-2.0
#pragma once
// msprobe 26's data2db output (`*.trend.db`): the statistics of every tensor slot per step and rank.

#include "core/util/diagnostic.h"

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace probescope::graph {

/// One monitored tensor slot ("Module.conv.conv1.Conv2d.input.0" in micro step 2).
struct TrendTarget
{
    std::string name;
    std::int64_t vppStage = 0;
    std::int64_t microStep = 0;
};

/// The statistics of one target in one (step, rank) for one metric (forward, backward, ...).
struct TrendValue
{
    std::int64_t step = 0;
    std::int64_t rank = 0;
    std::uint32_t target = 0; ///< index into TrendTable::targets
    std::uint32_t metric = 0; ///< index into TrendTable::metrics
    std::optional<double> norm, max, min, mean;
};

/// The step x rank x module table, sorted by (step, rank, target, metric).
struct TrendTable
{
    std::string path;
    std::vector<std::string> metrics;     ///< monitoring_metrics by id order ("forward", "backward", ...)
    std::vector<TrendTarget> targets;     ///< monitoring_targets by id order
    std::vector<TrendValue> values;
    std::vector<std::int64_t> steps;      ///< distinct, ascending
    std::vector<std::int64_t> ranks;      ///< distinct, ascending
    std::vector<std::string> modules;     ///< distinct target names without the .input.N / .output.N tail, first-seen order
    std::vector<std::string> warnings;    ///< what the reader could not take in (a -wal beside the file, sqlitedb.h)
};

/// "Module.conv.conv1.Conv2d.input.0" -> "Module.conv.conv1.Conv2d": the module (or API) a target belongs to, as
/// TrendTable::modules names it.
std::string trendModuleOf(const std::string& target);

/// Reads a `.trend.db` read-only (errors, id graph.trend, name the file).
Result<std::shared_ptr<const TrendTable>> readTrendDb(const std::filesystem::path& path);

} // namespace probescope::graph
