// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/util/diagnostic.h"

#include <cstddef>
#include <functional>

namespace probescope {

/// Number of worker threads to use for `requested` (0 = one per hardware thread, at least 1).
unsigned resolveThreadCount(unsigned requested);

/**
 * @brief Runs job(i) for every i in [0, count) on `threads` threads (the calling thread is one of them).
 *
 * Jobs are handed out in index order; each job must only write to its own slot, so the result does not
 * depend on the thread count. `progress` (if any) gets setRange(count) and advance() from the workers and
 * must be thread-safe. Returns false if the sink asked to cancel (remaining jobs are not started).
 */
bool parallelFor(std::size_t count, unsigned threads, const std::function<void(std::size_t)>& job,
                 ProgressSink* progress = nullptr);

} // namespace probescope
