// SPDX-License-Identifier: Apache-2.0
#pragma once
// The run_ut section of a config.json (-config): white_list, black_list, error_data_path, checked as
// msprobe checks them, every error at the file, line and column of the value it is about.

#include "core/util/diagnostic.h"

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace probescope::runut {

/// One list entry with where it was written (for messages about it later).
struct ConfigName
{
    std::string name;
    SourceLocation where;
};

struct RunUtConfig
{
    std::vector<ConfigName> whiteList;
    std::vector<ConfigName> blackList;
    std::optional<std::filesystem::path> errorDataPath; ///< as written; checked to exist
    std::string section;                                 ///< "run_ut", "acc_check", or "" when absent
    Diagnostics warnings;                                ///< ignored online keys, a missing section
};

/**
 * @brief Reads the run_ut section of a config.json (msprobe 26 calls it acc_check; both are read).
 *
 * Rules (msprobe's RunUTConfig): white_list and black_list are lists of strings; error_data_path is a
 * string naming an existing path (relative paths are taken from the current folder, as Python does).
 * The online keys (is_online, nfs_path, host, port, rank_list, tls_path) are type-checked and ignored;
 * is_online: true is an error, online pre-check is not part of ProbeScope. Any other key in the
 * section is an error. A config without the section gives defaults and a warning. Other top-level
 * keys belong to the dump configuration and are not looked at here.
 * Error id: `runut.config` (also for unreadable files and JSON syntax errors).
 */
Result<RunUtConfig> readRunUtConfig(const std::filesystem::path& path);
Result<RunUtConfig> parseRunUtConfig(std::string_view text, const std::string& fileName);

} // namespace probescope::runut
