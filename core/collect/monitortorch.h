// SPDX-License-Identifier: Apache-2.0
// The monitor's LibTorch half, shared by the C++ TrainerMon and the Python module's (python/monitorbind.cpp).
#pragma once

#include "core/collect/monitorsession.h"
#include "probescope/collect/trainermon.h"

#include <ATen/core/Tensor.h>

#include <string>
#include <vector>

namespace probescope::collect::monitor {

/// The cells of `ops` for one tensor, as msprobe 26's get_metrics computes them (a failing op gives NaN).
Row stats(const at::Tensor& tensor, const std::vector<std::string>& ops, double eps);
/// msprobe's row for a value that is not a tensor: NaN in every op.
Row missingRow(std::size_t ops);
/// Rank (RANK), output folder (MONITOR_OUTPUT_DIR, else ./monitor_output) and group of `options`.
RunInfo runInfoFrom(const MonitorOptions& options);
/// Whether "module_ranks" lets `rank` write (empty: every rank).
bool rankMonitored(const MonitorConfig& config, std::int64_t rank);

} // namespace probescope::collect::monitor
