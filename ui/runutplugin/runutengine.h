// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "ui/runutplugin/runutbackend.h"

#include <memory>

namespace probescope::ui {

/**
 * @brief The backend that really replays: core/runut's runner with core/runuttorch's LibTorch replayer.
 *
 * A plugin (libprobescope-runut.so, loaded by loadRunUtBackend) so that only a run of run_ut loads LibTorch; no LibTorch header is
 * included here or in its source. One worker: the GUI stays responsive on a 2-core machine and results
 * arrive in dump order (the runner writes them in that order whatever the workers).
 */
std::unique_ptr<RunUtBackend> makeRunUtEngineBackend();

} // namespace probescope::ui
