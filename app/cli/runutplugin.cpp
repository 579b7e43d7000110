// SPDX-License-Identifier: Apache-2.0
// The plugin side: built into libprobescope-cli-runut.so only, together with ProbeScope::runuttorch.
#include "runutplugin.h"

#include "core/runuttorch/torchreplayer.h"

#define PROBESCOPE_EXPORT __attribute__((visibility("default")))

extern "C" PROBESCOPE_EXPORT int probescope_cli_runut_abi()
{
    return PROBESCOPE_CLI_RUNUT_ABI;
}

extern "C" PROBESCOPE_EXPORT bool probescope_cli_runut_cuda_available()
{
    return probescope::runuttorch::cudaAvailable();
}

extern "C" PROBESCOPE_EXPORT probescope::runut::Replayer*
probescope_cli_runut_make_replayer(const probescope::runut::ReplayOptions* options)
{
    return probescope::runuttorch::makeTorchReplayer(*options).release();
}
