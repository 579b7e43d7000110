// SPDX-License-Identifier: Apache-2.0
#include "plugindirs.h"

#include <cstdlib>
#include <system_error>

namespace probescope::cli {

std::vector<std::filesystem::path> pluginDirs()
{
    std::vector<std::filesystem::path> dirs;
    if (const char* env = std::getenv("PROBESCOPE_PLUGIN_DIR"); env && *env)
        dirs.emplace_back(env);
    std::error_code ec;
    const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
    if (!ec)
        dirs.push_back(self.parent_path() / ".." / "lib" / "probescope");
#ifdef PROBESCOPE_CLI_PLUGIN_BUILD_DIR
    dirs.emplace_back(PROBESCOPE_CLI_PLUGIN_BUILD_DIR);
#endif
    return dirs;
}

} // namespace probescope::cli
