// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <filesystem>
#include <vector>

namespace probescope::cli {

/// Where probescope-cli looks for its on-demand plugins (run-ut's LibTorch replay, the MPI engine), in order:
/// $PROBESCOPE_PLUGIN_DIR, <prefix>/lib/probescope beside the installed binary, then the build tree's folder.
std::vector<std::filesystem::path> pluginDirs();

} // namespace probescope::cli
