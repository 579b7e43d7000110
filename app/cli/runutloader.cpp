// SPDX-License-Identifier: Apache-2.0
// The CLI side: finds and opens the run_ut plugin with dlopen, only when `run-ut` runs.
#include "runutplugin.h"

#include "plugindirs.h"

#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <system_error>
#include <vector>

namespace probescope::cli {

namespace {

constexpr const char* kPluginFile = "libprobescope-cli-runut.so";

} // namespace

const RunUtPlugin* loadRunUtPlugin(std::string& error)
{
    static std::once_flag once;
    static RunUtPlugin plugin;
    static bool loaded = false;
    static std::string tried;
    std::call_once(once, [] {
        for (const std::filesystem::path& dir : pluginDirs()) {
            const std::string file = (dir / kPluginFile).string();
            // Never closed: LibTorch's static state does not survive dlclose.
            void* handle = ::dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
            if (!handle) {
                const char* why = ::dlerror();
                tried += "\n  " + file + ": " + (why ? why : "cannot be loaded");
                continue;
            }
            auto abi = reinterpret_cast<int (*)()>(::dlsym(handle, "probescope_cli_runut_abi"));
            auto cuda = reinterpret_cast<bool (*)()>(::dlsym(handle, "probescope_cli_runut_cuda_available"));
            auto make = reinterpret_cast<runut::Replayer* (*)(const runut::ReplayOptions*)>(
                ::dlsym(handle, "probescope_cli_runut_make_replayer"));
            if (!abi || !cuda || !make) {
                tried += "\n  " + file + ": not a probescope-cli run_ut plugin";
                continue;
            }
            if (abi() != PROBESCOPE_CLI_RUNUT_ABI) {
                tried += "\n  " + file + ": built for another probescope-cli (plugin interface "
                    + std::to_string(abi()) + ", expected " + std::to_string(PROBESCOPE_CLI_RUNUT_ABI) + ")";
                continue;
            }
            plugin.cudaAvailable = cuda;
            plugin.makeReplayer = make;
            loaded = true;
            return;
        }
    });
    if (!loaded) {
        error = "the run_ut plugin (" + std::string(kPluginFile) + ", LibTorch) could not be loaded; tried:" + tried;
        return nullptr;
    }
    return &plugin;
}

} // namespace probescope::cli
