// SPDX-License-Identifier: Apache-2.0
#pragma once
// compare_by_op on two arrays wherever they are (in memory, or .npy files streamed a chunk at a time): the
// ptdbg profile's metrics from the shared kernels (core/compare/metrics/kernels.h, its ptdbg section).

#include "core/compare/metrics/kernels.h"
#include "core/compare/ptdbg/ptdbgcompare.h"
#include "core/compare/metrics/pairside.h"
#include "core/util/workgroup.h"

#include <optional>
#include <vector>

namespace probescope::compare::ptdbg {

/**
 * @brief compareArrays on two sides, the pair's chunks handed to `splitter` (idle threads help; the cells are the
 * same for any thread count). nullopt when a file side could not be read to its end.
 */
std::optional<PtdbgMetrics> compareSides(const PairSide& npu, const PairSide& bench, bool fuzzyNames,
                                         Splitter& splitter);

} // namespace probescope::compare::ptdbg
