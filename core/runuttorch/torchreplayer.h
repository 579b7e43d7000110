// SPDX-License-Identifier: Apache-2.0
#pragma once
// run_ut's replay of one API call with LibTorch (run-ut-spec §4). This header is LibTorch-free: the
// runner and the CLI include it without paying for LibTorch's headers; only the three sources of
// ProbeScope::runuttorch see them.

#include "core/runut/replayer.h"

#include <memory>
#include <string>
#include <vector>

namespace probescope::runuttorch {

/**
 * @brief A Replayer that rebuilds each call's inputs (real data or random from the statistics), runs
 * the API on `options.device` in its own dtypes and on the CPU bench with msprobe's upcasting, forward
 * and backward. One instance per worker thread.
 *
 * Random inputs of a call come from a generator seeded by (options.seed, call.fullName), so they do
 * not depend on the order, the worker or a resume. LibTorch's intra-op thread count is set on the
 * calling thread before each replay (see docs/run-ut-replay.md).
 */
std::unique_ptr<runut::Replayer> makeTorchReplayer(const runut::ReplayOptions& options);

/// The msprobe API names with an entry in the replay table ("Functional.gelu", "Tensor.__mul__", ...),
/// sorted. `Aten.*` (any aten operator by schema name) and other Torch/Tensor names that are plain aten
/// operators are replayable too and are not listed one by one.
std::vector<std::string> replayableApis();

/// True when this LibTorch build has CUDA and a device is present.
bool cudaAvailable();

} // namespace probescope::runuttorch
