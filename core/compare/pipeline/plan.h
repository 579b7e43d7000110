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

class ProfileRules;

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

/**
 * @brief planPairs' plan, kept small: what a whole job holds of its plan from start to end.
 *
 * A PlannedPair is about 700 bytes (two locations with their paths' text, the suffix, the output folder); a job of
 * 10,000 ranks x 2 steps held 20,000 of them, and both sides' discovery while planning (issue 37: memory flat in the
 * number of ranks). This keeps both sides' ranks in dump::RankTable records (32 bytes a rank folder) and each pair
 * as the two ranks' places in them (24 bytes); pair(i) makes the PlannedPair planPairs plans, byte for byte (the
 * suffix, output folder and stack file by the same rules), when the job gets to it. planPairs is this, expanded.
 */
class CompactPlan
{
public:
    std::size_t size() const { return m_pairs.size(); }
    PlannedPair pair(std::size_t i) const;
    std::int64_t step(std::size_t i) const { return m_pairs[i].step; }
    std::optional<std::int64_t> npuRank(std::size_t i) const { return m_npu.rank(m_pairs[i].npu); }

    std::size_t unpairedCount() const { return m_unpaired.size(); }
    UnpairedPlace unpaired(std::size_t i) const;
    std::int64_t unpairedStep(std::size_t i) const { return m_unpaired[i].step; }
    std::optional<std::int64_t> unpairedRank(std::size_t i) const;

    const Diagnostics& diagnostics() const { return m_diagnostics; }
    /// Whether the pairs' outputs go to OUT/step{N} (the inputs are dump roots): planPairs' outSubdir of any pair.
    bool writesStepFolders() const { return m_root && !m_single && !m_pairs.empty(); }
    /// The heap the plan holds, about (a test bounds it per pair: it must not hold PlannedPairs again).
    std::size_t bytes() const;
    /// planPairs' JobPlan: every pair and unpaired place made.
    JobPlan expand() const;

private:
    friend Result<CompactPlan> planPairsCompact(const CompareInput& input, const PlanOptions& options);
    enum class Stack : std::uint8_t { None, Given, Beside };
    struct Pair
    {
        std::int64_t step = -1;
        std::uint32_t npu = 0;   ///< its place in m_npu
        std::uint32_t bench = 0; ///< its place in m_bench
        Stack stack = Stack::None;
    };
    struct Unpaired
    {
        std::int64_t step = -1;
        std::uint32_t rank = 0;       ///< its place in its side's table
        std::uint32_t diagnostic = 0; ///< its warning in m_diagnostics
        bool npuSide = true;
    };
    std::string outSubdirOf(const dump::RankLocation& r, std::int64_t step) const;

    dump::RankTable m_npu;
    dump::RankTable m_bench;
    std::vector<Pair> m_pairs;
    std::vector<Unpaired> m_unpaired;
    Diagnostics m_diagnostics;
    const ProfileRules* m_rules = nullptr;
    std::optional<dump::CompactPath> m_stackPath; ///< compare.json's stack_path (Stack::Given)
    bool m_stackFlag = false;
    bool m_root = false;   ///< dump roots: each step's outputs go to OUT/step{N}
    bool m_single = false; ///< one pair of two dump files or rank folders (no suffix, no output folder)
};

/// planPairs' plan as a CompactPlan (the same pairs, order, places on one side only and diagnostics).
Result<CompactPlan> planPairsCompact(const CompareInput& input, const PlanOptions& options);

} // namespace probescope::compare
