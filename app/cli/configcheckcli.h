// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <optional>

// probescope-cli's msprobe 26 setup checks (docs/config-check.md): `config_check -d [train.sh] [config.yaml]
// [-o pack.zip]`, `config_check -c bench.zip cmp.zip [-o OUT]` (two checkpoint folders: the checkpoint compare) and
// `merge_result -i DIR -o OUT -config merge.yaml`.
namespace probescope::cli {

/// Runs the command when argv names config_check or merge_result and returns its exit status (0, 1 bad input,
/// 2 usage); nullopt for another command.
std::optional<int> runConfigCheckCommand(int argc, char** argv);

} // namespace probescope::cli
