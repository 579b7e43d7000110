// SPDX-License-Identifier: Apache-2.0
// The folders a collector writes into, for the C++ API (collectorstate.cpp) and the Python module alike:
// a rank folder is claimed fresh, and nothing below dump_path is reached through a symlink.
#pragma once

#include "core/util/diagnostic.h"

#include <filesystem>
#include <optional>
#include <string>

namespace probescope::collect {

/**
 * @brief Creates `dumpPath/stepFolder/rankFolder` (and `dump_tensor_data` in it when `tensorFolder`) for a
 * new run.
 *
 * dump_path itself (and its parents) is the user's choice and is created as given. Below it every folder
 * must be a real directory: a symlink planted at `step0`, `rank0` or `dump_tensor_data` would send whole
 * ranks or .pt files outside dump_path, so one is refused (error id collect.dump-path), never followed. The
 * rank folder must not exist yet: a rerun into a used dump_path would otherwise mix its files with the old
 * run's (or, through the old run's hard links, rewrite them), so an existing one is refused with a message
 * naming it; nothing of the earlier run is touched. `stepFolder` may be empty (level debug of the Python
 * module: dump_path/rank). docs/collect.md, "Where the files go", states the rule.
 */
std::optional<Diagnostic> claimRankFolder(const std::filesystem::path& dumpPath, const std::string& stepFolder,
                                          const std::string& rankFolder, bool tensorFolder);

/// Whether `path` is a real directory, not a symlink to one (lstat).
bool isRealDirectory(const std::filesystem::path& path);

} // namespace probescope::collect
