// SPDX-License-Identifier: Apache-2.0
#pragma once
// probescope-cli's run_ut replay (LibTorch) lives in a plugin, libprobescope-cli-runut.so, so that every
// other command starts without LibTorch (its static initialisers alone cost ~0.3 s and ~120 MB). This
// header is the contract between the CLI and the plugin; it is LibTorch-free.

#include "core/runut/replayer.h"

#include <memory>
#include <string>

/// Bumped whenever the entry points or the types they pass change (the plugin and the CLI must agree).
#define PROBESCOPE_CLI_RUNUT_ABI 1

extern "C" {
/// PROBESCOPE_CLI_RUNUT_ABI of the plugin.
int probescope_cli_runut_abi();
/// True when this LibTorch build has CUDA and a device is present.
bool probescope_cli_runut_cuda_available();
/// A new replayer (runuttorch::makeTorchReplayer); the caller owns it and deletes it through its vtable.
probescope::runut::Replayer* probescope_cli_runut_make_replayer(const probescope::runut::ReplayOptions* options);
}

namespace probescope::cli {

/// The resolved entry points of a loaded plugin.
struct RunUtPlugin
{
    bool (*cudaAvailable)() = nullptr;
    probescope::runut::Replayer* (*makeReplayer)(const probescope::runut::ReplayOptions*) = nullptr;
};

/**
 * @brief Loads libprobescope-cli-runut.so on first call and keeps it loaded (LibTorch does not survive
 * dlclose). Searched: $PROBESCOPE_PLUGIN_DIR, <executable dir>/../lib/probescope, the build tree's
 * lib/probescope. nullptr when it cannot be loaded; `error` then names every file tried and why.
 */
const RunUtPlugin* loadRunUtPlugin(std::string& error);

} // namespace probescope::cli
