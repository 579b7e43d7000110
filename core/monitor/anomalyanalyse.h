// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/util/diagnostic.h"

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

/**
 * msprobe 26's monitor anomaly_processor (`python -m msprobe.core.monitor.anomaly_processor -d DIR -o OUT -k K
 * -s STEPS`): the earliest K anomalies of a run's anomaly_detected/rank<R>/anomaly.json files, ordered by step,
 * micro step, training stage (actv 0; actv_grad, pre/post/acc_grad 1; exp_avg(_sq) 2; else -1), VPP and PP stage
 * (ascending in the forward stage, descending else) and call id, written as anomaly_analyse.json (json.dump
 * indent 1). Ties keep the order msprobe's own selection gives (sorted(), or heapq.nsmallest over (anomaly, index)
 * pairs whose == compares rank, step, micro_step, pp_stage, vpp_stage, call_id): docs/monitor.md.
 */
namespace probescope::monitor {

struct AnomalyAnalyseOptions
{
    std::size_t topK = 8;                   ///< -k (> 0)
    std::optional<std::vector<long long>> steps; ///< -s: only these steps; none or empty = every step
    /// The order the rank folders are loaded in (folder names). Empty: sorted by name (msprobe takes os.listdir's
    /// order, which the file system decides). The golden tests give msprobe's recorded order.
    std::vector<std::string> loadOrder;
};

struct AnomalyAnalyseResult
{
    std::string json;                  ///< anomaly_analyse.json's text
    std::vector<std::string> messages; ///< the messages of the selected anomalies, in order (msprobe logs them)
    Diagnostics warnings;              ///< entries msprobe skips with a warning (not an anomaly record)
};

/// Reads DIR's <folder>/anomaly.json files and selects the top K. Errors name the file (and line:col): a file
/// that is not JSON, or an anomaly whose sort fields are not integers (msprobe fails comparing them).
Result<AnomalyAnalyseResult> analyseAnomalies(const std::filesystem::path& dir, const AnomalyAnalyseOptions& options);

/// "[1, 2]" as msprobe's -s reads it (ast.literal_eval to a list of ints); nullopt with `error` otherwise.
std::optional<std::vector<long long>> parseStepList(const std::string& text, std::string& error);

} // namespace probescope::monitor
