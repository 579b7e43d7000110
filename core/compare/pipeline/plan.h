// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/dump/dumplayout.h"
#include "core/util/diagnostic.h"
#include "core/util/profile.h"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace probescope::compare {

/// What to compare, as msprobe's compare.json says it (paths relative to the current folder).
struct CompareInput
{
    std::filesystem::path npuPath; ///< a dump root, step folder, rank folder or dump file
    std::filesystem::path benchPath;
    std::optional<std::filesystem::path> stackPath;
};

Result<CompareInput> readCompareJson(const std::filesystem::path& path);

/// One NPU rank paired with one bench rank, in one step: the unit of work of every compare.
struct PlannedPair
{
    dump::RankLocation npu;
    dump::RankLocation bench;
    std::int64_t step = -1;   ///< the NPU side's step number; -1 when the dumps have no step folders
    std::string outSubdir;    ///< "step0" when the inputs are dump roots: that step's outputs go to OUT/step0
    std::string suffix;       ///< "" for a single pair; the profile's rank-pair suffix in directory mode
    bool stackMode = false;   ///< add the NPU stack column (msprobe's stack mode)
    std::optional<dump::CompactPath> stackFile; ///< kept as text, as the ranks' paths are (issue 37)
};

struct PlanOptions
{
    Profile profile = Profile::Msprobe12;
    bool stackFlag = false; ///< -s: decides stack mode when compare.json names a stack_path (msprobe 1.2)
    /// msprobe's directory mode: both sides must hold as many ranks, paired in the sorted order of their folder
    /// names, else the plan fails. Off (the viewer): ranks pair by number and an unpaired rank is a warning.
    bool strictRanks = true;
    /// Stack mode for pairs without a stack_path: msprobe's rule (stack.json beside the NPU dump.json turns it on).
    /// Off: never (the viewer shows stacks in its detail panel instead of a column).
    bool stackBeside = true;
    /// Given to both sides' discovery (dump::DiscoverOptions::progress): a cancel stops the folder walk under way
    /// and the plan fails with `layout.cancelled`. Null: never cancelled.
    const ProgressSink* progress = nullptr;
};

/// A (step, rank) place that one side has and the other lacks: planned, but it cannot be compared.
struct UnpairedPlace
{
    bool npuSide = true;            ///< true: only the NPU dump has it; false: only the bench dump
    dump::RankLocation location;    ///< the rank that has no counterpart
    std::int64_t step = -1;         ///< its step number, -1 without step folders
    std::string outSubdir;          ///< "step3" below a dump root, as a pair of that step would have
    Diagnostic diagnostic;          ///< the warning that says so (session.step-unpaired, session.rank-unpaired)
};

/// The pairs of a compare, and what was skipped on the way.
struct JobPlan
{
    std::vector<PlannedPair> pairs; ///< by step, then in msprobe's rank order (folder names as strings)
    Diagnostics diagnostics;        ///< steps or ranks present on one side only (warnings), folders skipped
    /// Every rank of a step (or, in the viewer, every rank) that is on one side only, by step: what the whole job
    /// lists as not compared. The warnings in `diagnostics` say the same once per step.
    std::vector<UnpairedPlace> unpaired;
    std::vector<std::int64_t> steps() const;
};

/**
 * @brief The (step, rank) pairs of two inputs at any level: the one place that pairs steps and ranks.
 *
 * Both inputs are located with dump::discoverDump (the one walker of step/rank layouts). Two dump files, or two
 * rank folders, are one pair (suffix ""). Two step folders are msprobe's directory mode (compare-spec A.12): rank
 * pairs with the profile's suffix. Two dump roots holding step folders compare every step: steps pair by number
 * (when each side holds one step, whatever their numbers), and each step's outputs go to OUT/step{N}.
 */
Result<JobPlan> planPairs(const CompareInput& input, const PlanOptions& options);

} // namespace probescope::compare
