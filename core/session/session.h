// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/compare/pipeline/comparerun.h"
#include "core/compare/pipeline/pipeline.h"
#include "core/compare/table/comparetable.h"
#include "core/compare/verdict/firstfailure.h"
#include "core/compare/msprobe26/commmerge.h"
#include "core/dump/dumplayout.h"
#include "core/dump/rankdump.h"
#include "core/job/origin.h"
#include "core/session/nodestatus.h"
#include "core/tree/constructtree.h"
#include "core/util/diagnostic.h"

#include <array>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace probescope::session {

/// How a rank folder is named to people: its folder name ("rank0", "rank", "proc12"), else "rank{N}" / "rank".
std::string rankName(const dump::RankLocation& rank);

/// One NPU rank paired with one bench rank, in one step (compare/pipeline/plan.h), as a viewer names it.
struct RankPair : compare::PlannedPair
{
    std::string label() const; ///< "step0 · rank0 ↔ rank0" (or "rank ↔ rank")
};

/**
 * @brief What a GUI session can show for two opened inputs: every step/rank pair.
 *
 * Inputs may be at any level (dump root, step folder, rank folder, a dump.json), or `npu` may be
 * msprobe's compare.json with `bench` empty. Steps present on one side only are reported and skipped;
 * within a step, ranks pair by rank number (msprobe's compare_distributed pairs them by sorted name,
 * which is the same for the rank0..rankN layouts msprobe writes).
 */
struct SessionPlan
{
    std::filesystem::path npuInput;
    std::filesystem::path benchInput;
    std::vector<RankPair> pairs; ///< sorted by step, then NPU rank
    Diagnostics diagnostics;

    std::vector<std::int64_t> steps() const;
    std::vector<std::size_t> pairsOfStep(std::int64_t step) const;
};

/// `progress` (may be null) is looked at during both sides' folder walks: a cancel stops the walk under way and the
/// plan fails with `layout.cancelled`.
Result<SessionPlan> planSession(const std::filesystem::path& npu, const std::filesystem::path& bench,
                                const ProgressSink* progress = nullptr);

/// The loaded, not yet compared, pair: what a viewer shows first.
struct PairSkeleton
{
    RankPair pair;
    std::shared_ptr<const dump::RankDump> npu;
    std::shared_ptr<const dump::RankDump> bench;
    std::shared_ptr<const tree::ConstructTree> tree; ///< over the NPU dump
    Diagnostics diagnostics;
    /// Known before the dumps are read when the skeleton comes from the reopen cache (npu and bench are null
    /// then; the analysis's own skeleton has them).
    std::optional<compare::CompareMode> mode;
    bool fromCache = false;
    /// The tree was built from the NPU dump's keys and published before the dumps were read in full (npu and bench
    /// are null then): what loading found is shown when the analysis finishes, as for a skeleton from the cache.
    bool early = false;
};

/// A finished analysis of one pair. Immutable; published whole.
struct PairAnalysis
{
    std::shared_ptr<const PairSkeleton> skeleton;
    std::shared_ptr<const compare::CompareTable> table;
    std::shared_ptr<const NodeStatusTable> status;
    compare::FirstFailure firstFailure;
    /// stack.json of each side, read after the compare (`present` is false without one); null when
    /// AnalysisOptions::readStacks is off.
    std::shared_ptr<const dump::StackMap> npuStack;
    std::shared_ptr<const dump::StackMap> benchStack;
    Diagnostics stackDiagnostics; ///< a stack.json that could not be read
    Diagnostics notes;            ///< about the mapping options for this pair (an ignored -lm, a skipped item)
    /// The pipeline's own findings on the inputs (compare::PairOutcome::inputDiagnostics): beyond each dump's load
    /// diagnostics, an empty dump, a tensor folder leaving its dump, unreadable tensor files. A viewer shows them
    /// with the load problems; errors among them make the scripted mode exit 1, as the CLI does.
    Diagnostics inputDiagnostics;
    /// The manual matches the pair was compared with (AnalysisOptions::manualMatches): what an export repeats.
    std::optional<graph::VisConfig> manualMatches;
    double seconds = 0; ///< wall time from start to finish
    bool reopened = false; ///< the reopen cache showed this result before the analysis ran (paircache.h)
};

/// A batch of rows whose metrics arrived, and the nodes whose own status changed with them.
struct StatusUpdate
{
    std::vector<std::uint32_t> nodes;
    std::vector<Status> own;
};

struct AnalysisOptions
{
    unsigned threads = 0;  ///< tensor pairs compared at once (0 = hardware threads)
    bool fuzzy = false;
    compare::Profile profile = compare::Profile::Msprobe12;
    /// msprobe's stack mode: the NPU_Stack_Info column from stack.json beside the NPU dump (the detail panel
    /// shows stacks either way).
    bool stackMode = false;
    /// -dm / -cm / -am / -lm, as compare::JobOptions has them (an empty path = the option without a file).
    std::optional<std::filesystem::path> dataMapping;
    std::optional<std::filesystem::path> cellMapping;
    std::optional<std::filesystem::path> apiMapping;
    std::optional<std::filesystem::path> layerMapping;
    /// Manual matches (the graph view's, issue 27): compare::JobOptions::manualMatches. With them the reopen cache
    /// is neither read nor written (it is keyed on the dumps and the options without matches).
    std::optional<graph::VisConfig> manualMatches;
    /// Read both stack.json files at the end (PairAnalysis::npuStack/benchStack); the rank overview needs none.
    bool readStacks = true;
    /// The reopen cache's folder (session/paircache.h); empty = none. When it holds this pair with these options
    /// and unchanged inputs, its tree and statuses are published at once (skeletonReady with a skeleton without
    /// dumps, then layoutReady with the final statuses) and the analysis then runs in full without streaming
    /// again. The caller writes the cache after a finished analysis (writePairCache), off its critical path.
    std::filesystem::path cacheDir;
    /// From this size of the NPU dump.json on, the tree is shown from the dump's keys before the dumps are read in
    /// full (PairSkeleton::early); smaller pairs are read first (a 64 MB dump.json reads in a fraction of a second).
    std::uint64_t earlyTreeBytes = std::uint64_t { 64 } << 20;
    /// Called once, from the worker, when both dumps are loaded and the tree is built (before the compare).
    std::function<void(std::shared_ptr<const PairSkeleton>)> skeletonReady;
    /// Called from the worker when the rows are laid out, with every node's status so far
    /// (md5 final; statistics without msprobe's highlights, which need every row; real-data rows Pending). Then `statusUpdate` follows in batches.
    std::function<void(std::shared_ptr<const NodeStatusTable>)> layoutReady;
    /// Batches of nodes whose own status changed as tensor metrics were computed (worker threads,
    /// serialised: never two calls at once).
    std::function<void(StatusUpdate)> statusUpdate;
};

/// Loads, compares and judges one pair. Progress stages: load (0-10 %), compare (10-99 %), verdicts.
Result<std::shared_ptr<const PairAnalysis>> analysePair(const RankPair& pair, const AnalysisOptions& options,
                                                        ProgressSink* progress = nullptr);

/// A line of the rank overview.
struct PairSummary
{
    std::size_t pairIndex = 0;
    std::array<std::uint32_t, 6> counts {}; ///< nodes per own Status
    compare::FirstFailure firstFailure;
    std::uint32_t nodes = 0;
    /// The first failure placed among the rank's communication calls (job::locateFailure), for
    /// job::findJobOrigin; `failed` is false when nothing fails.
    job::RankFailure failure;
    /// What was lost when a side's dump was cut or damaged and read partially (dump::LoadReport::salvageText,
    /// one line per side), empty for clean dumps.
    std::string salvaged;
    /// The pair's communication rows (Distributed.*) with merge_result's metrics: what the whole-job view's
    /// communication table merges over the ranks of a step without reading any workbook (issue 35). Null when the
    /// pair had no compare table.
    std::shared_ptr<const compare::msprobe26::RankCommRows> comm;
};

PairSummary summarize(const PairAnalysis& analysis, std::size_t pairIndex);

/// Row name -> dump.json entry key ("Functional.gelu.0.forward.input.0" -> "Functional.gelu.0.forward").
std::string entryKeyOfRow(const std::string& rowName);

} // namespace probescope::session
