// SPDX-License-Identifier: Apache-2.0
#pragma once

// The schedule moved below the pipeline (core/compare/schedule), so that compare::runPairs, the one loop over pairs,
// can take it; the whole job's names stay for the MPI plugin and other users.
#include "core/compare/schedule/schedule.h"

namespace probescope::job {

using PairScheduler = compare::PairScheduler;
using LocalThreadScheduler = compare::LocalThreadScheduler;
using PairTask = compare::PairTask;
using PairDone = compare::PairDone;

} // namespace probescope::job
