// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <optional>

// probescope-cli's msprobe graph commands (docs/graph.md): `info FILE.vis.db|FILE.vis|FILE.trend.db` and
// `graph -tp NPU [-gp BENCH] -o OUT ...`.
namespace probescope::cli {

/// Runs the command when argv names one of the graph commands and returns its exit status (0, 1 bad input,
/// 2 usage); nullopt when argv is another command (main.cpp then goes on as before).
std::optional<int> runGraphCommand(int argc, char** argv);

} // namespace probescope::cli
