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
    // The build tree's plugin folder serves the binary of that build tree only: an installed or unpacked
    // probescope-cli must find exactly the plugins its packages installed (and say which package is missing),
    // not pick them up from whatever build happens to lie at the path it was compiled in.
    const std::filesystem::path buildRoot
        = std::filesystem::weakly_canonical(std::filesystem::path(PROBESCOPE_CLI_PLUGIN_BUILD_DIR) / ".." / "..", ec);
    const std::filesystem::path selfPath = std::filesystem::weakly_canonical(self, ec);
    const auto rel = selfPath.lexically_relative(buildRoot);
    if (!ec && !rel.empty() && *rel.begin() != "..")
        dirs.emplace_back(PROBESCOPE_CLI_PLUGIN_BUILD_DIR);
#endif
    return dirs;
}

} // namespace probescope::cli
