// SPDX-License-Identifier: Apache-2.0
// The monitor's config.json (msprobe 26's TrainerMon config), LibTorch-free: the C++ TrainerMon (trainermon.h) and
// the Python module's read it with this one parser.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace probescope::collect {

/// One alert rule of the config's "alert": {"rules": [...]} (msprobe's AnomalyScanner.load_rules).
struct MonitorAlertRule
{
    enum class Kind : std::uint8_t { Turbulence, Nan };
    Kind kind = Kind::Nan;
    std::optional<double> threshold; ///< AnomalyTurbulence: required; AnomalyNan: optional |value| bound
};

/// The monitor's config.json (msprobe 26's validate_config and TrainerMon.set_config, the keys ProbeScope acts on).
struct MonitorConfig
{
    /// "targets" keys in file order ("0:name" names one VPP chunk; a bare name every chunk). Empty in the file:
    /// {"": {}} (every module and parameter), as msprobe does.
    std::vector<std::string> targets;
    std::vector<std::string> ops;    ///< valid "ops" in order, then "shape" and "dtype" (validate_ops)
    double eps = 1e-8;
    int ndigits = 6;                 ///< CSV rounding
    std::vector<std::int64_t> moduleRanks; ///< "module_ranks": empty = every rank
    bool xyDistribution = false;     ///< activations (actv) and their gradients (actv_grad)
    bool allXy = false;              ///< no "targets" with xy_distribution: every module
    bool forwardOnly = false;
    bool backwardOnly = false;
    bool wgDistribution = false;     ///< weight gradients (grad_unreduced, grad_reduced)
    bool mvDistribution = false;     ///< Adam's exp_avg and exp_avg_sq
    bool paramDistribution = false;  ///< param_origin, param_updated
    bool squashName = false;
    bool monitorMbsGrad = false;     ///< grad_unreduced per micro step
    std::vector<MonitorAlertRule> alertRules; ///< in order: the first rule that fires names the anomaly
    bool alertDump = false;          ///< "alert": {"dump": true}: anomaly_detected/rank<R>/anomaly.json
    std::int64_t stepCountPerRecord = 1;
    std::int64_t startStep = 0;
    std::int64_t collectTimes = 100000000;
    std::int64_t stepInterval = 1;
    /// What msprobe logs and goes on from (an unknown op, a rule it skips, an invalid start_step replaced by
    /// the default, a feature ProbeScope does not collect).
    std::vector<std::string> warnings;
};

/// Reads and validates the monitor's config.json as msprobe does. Throws CollectError("collect.monitor-config")
/// naming the file, line and column for what msprobe refuses (a wrong type, an unknown rule, a negative threshold,
/// step_count_per_record outside 1..1e6, ndigits outside 1..20).
MonitorConfig loadMonitorConfig(const std::string& path);
/// Same, from text; `fileName` names it in messages.
MonitorConfig parseMonitorConfigText(std::string_view text, const std::string& fileName = "monitor_config.json");

/// msprobe's squash_param_name: the part from the last ".layer(s)." (else ".embedding(s).", ".final", ".output",
/// ".norm") on, or the name itself.
std::string squashParamName(const std::string& name);

} // namespace probescope::collect
