// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/compare/pipeline/pipeline.h"
#include "core/compare/pipeline/plan.h"
#include "core/job/scheduler.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

// probescope-cli's whole-job compare (issue 15): every (step, rank) pair of two dump roots, the job summary and
// the cross-rank origin. Kept apart from main.cpp's option parsing, which calls these two functions.
namespace probescope::cli {

struct JobCliArgs
{
    std::string steps; ///< --step as given: "0,2" (empty = every step)
    std::string ranks; ///< --rank as given
    bool resume = false;       ///< --resume
    unsigned pairThreads = 1;  ///< --pair-threads N: pairs compared at once
};

/// "0,2,5" -> {0, 2, 5}; nullopt when a member is not a non-negative number.
std::optional<std::vector<std::int64_t>> parseNumberList(std::string_view text);

/// Whether the compare is a whole-job compare: two dump roots with step folders, --step/--rank/--resume given,
/// or more than one process started by an MPI launcher.
/// (A compare of two dump files, rank folders or step folders without these options stays as it was, except
/// under an MPI launcher, where the job spreads its pairs over the processes.)
bool isWholeJob(const compare::CompareInput& input, const compare::JobOptions& options, const JobCliArgs& args);

/// Runs it and prints each pair as the step-level compare does, then the job; the last line names the origin.
/// Exit status: 0; 1 when a pair failed to compare (the others are complete), a step is on one side only (not
/// compared), the summary could not be written, or the input is bad; 2 usage.
int runJobCompare(const compare::CompareInput& input, const std::string& out, const compare::JobOptions& options,
                  const JobCliArgs& args);

/// Whether an MPI launcher (mpirun, mpiexec, srun with PMI) started more than one process (mpiloader.cpp).
bool launchedByMpi();

/// The MPI pair scheduler from libprobescope-cli-mpi.so, opened on demand; null with `error` when it cannot be.
std::unique_ptr<job::PairScheduler> loadMpiScheduler(std::string& error);

} // namespace probescope::cli
