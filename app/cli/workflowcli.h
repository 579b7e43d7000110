// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <optional>

// probescope-cli's commands of msprobe 26's run-alone workflow (issue 34): `overflow_check` / `nan_analyze`
// (docs/overflow-check.md), `data2db --format monitor` and `anomaly_analyse` (docs/monitor.md).
namespace probescope::cli {

/// Runs the command when argv[1] names one of them and returns its exit status (0, 1 bad input, 2 usage);
/// nullopt for any other command.
std::optional<int> runWorkflowCommand(int argc, char** argv);

} // namespace probescope::cli
