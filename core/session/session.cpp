// SPDX-License-Identifier: Apache-2.0
#include "core/session/session.h"

#include "core/compare/verdict/firstfailure.h"
#include "core/compare/msprobe26/msprobe26.h"
#include "core/compare/ptdbg/ptdbgcompare.h"
#include "core/dump/loadreport.h"
#include "core/session/paircache.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <set>
#include <thread>

namespace probescope::session {

namespace fs = std::filesystem;

namespace {

Diagnostic cancelledError(const RankPair& pair)
{
    return makeError("session.cancelled", fileLocation(pair.npu.dumpFile), "the analysis was cancelled");
}

} // namespace

std::string rankName(const dump::RankLocation& r)
{
    if (!r.rankLabel.empty())
        return r.rankLabel;
    return r.rank ? "rank" + std::to_string(*r.rank) : std::string("rank");
}

std::string RankPair::label() const
{
    std::string out;
    if (step >= 0)
        out = "step" + std::to_string(step) + " \u00b7 ";
    return out + rankName(npu) + " \u2194 " + rankName(bench);
}

std::vector<std::int64_t> SessionPlan::steps() const
{
    std::vector<std::int64_t> out;
    for (const RankPair& p : pairs) {
        if (out.empty() || out.back() != p.step)
            out.push_back(p.step);
    }
    return out;
}

std::vector<std::size_t> SessionPlan::pairsOfStep(std::int64_t step) const
{
    std::vector<std::size_t> out;
    for (std::size_t i = 0; i < pairs.size(); ++i) {
        if (pairs[i].step == step)
            out.push_back(i);
    }
    return out;
}

Result<SessionPlan> planSession(const fs::path& npuInput, const fs::path& benchInput, const ProgressSink* progress)
{
    SessionPlan plan;
    plan.npuInput = npuInput;
    plan.benchInput = benchInput;
    fs::path npuPath = npuInput;
    fs::path benchPath = benchInput;
    std::error_code ec;
    // msprobe's compare.json names both sides (and maybe a stack file) in one file.
    if (benchInput.empty()) {
        const std::string name = npuInput.filename().string();
        if (!fs::is_regular_file(npuInput, ec) || npuInput.extension() != ".json" || name == "dump.json"
            || name == "debug.json")
            return makeError("session.input", fileLocation(npuInput),
                             "open a bench dump too, or give msprobe's compare.json naming both sides");
        if (compare::ptdbg::isPtdbgCompareJson(npuInput)) {
            // ptdbg_ascend's input_param: the two .pkl files (their .npy folders are found beside them).
            auto input = compare::ptdbg::readPtdbgCompareJson(npuInput);
            if (!input)
                return input.error();
            npuPath = input->npuPkl;
            benchPath = input->benchPkl;
        } else {
            auto input = compare::readCompareJson(npuInput);
            if (!input)
                return input.error();
            npuPath = input->npuPath;
            benchPath = input->benchPath;
        }
    }
    // The compare's own planner pairs steps and ranks (the one place that does); a viewer is lenient where msprobe
    // is strict: ranks pair by folder name and an unpaired one is a warning, files may face folders.
    compare::PlanOptions options;
    options.strictRanks = false;
    options.stackBeside = false;
    options.progress = progress;
    auto planned = compare::planPairs(compare::CompareInput { npuPath, benchPath, std::nullopt }, options);
    if (!planned)
        return planned.error();
    plan.diagnostics = std::move(planned->diagnostics);
    for (compare::PlannedPair& p : planned->pairs)
        plan.pairs.push_back(RankPair { std::move(p) });
    // A viewer lists ranks by number (the compare's msprobe order sorts folder names as strings).
    std::stable_sort(plan.pairs.begin(), plan.pairs.end(), [](const RankPair& a, const RankPair& b) {
        return std::pair(a.step, a.npu.rank.value_or(-1)) < std::pair(b.step, b.npu.rank.value_or(-1));
    });
    return plan;
}

namespace {

// Both stack.json files, side by side (each can be as large as half its dump.json).
void readStacks(const PairSkeleton& skeleton, PairAnalysis& analysis)
{
    auto read = [](const dump::RankDump& rank, std::shared_ptr<const dump::StackMap>& out, Diagnostics& problems) {
        auto stack = dump::readRankStack(rank);
        if (stack) {
            out = std::make_shared<const dump::StackMap>(std::move(*stack));
        } else {
            out = std::make_shared<const dump::StackMap>();
            problems.push_back(stack.error());
        }
    };
    Diagnostics benchProblems;
    std::thread benchReader([&] { read(*skeleton.bench, analysis.benchStack, benchProblems); });
    read(*skeleton.npu, analysis.npuStack, analysis.stackDiagnostics);
    benchReader.join();
    analysis.stackDiagnostics.insert(analysis.stackDiagnostics.end(), benchProblems.begin(), benchProblems.end());
}

} // namespace

Result<std::shared_ptr<const PairAnalysis>> analysePair(const RankPair& pair, const AnalysisOptions& options,
                                                        ProgressSink* progress)
{
    const auto started = std::chrono::steady_clock::now();
    constexpr std::uint64_t kTotal = 1000;
    compare::JobOptions job;
    job.profile = options.profile;
    job.fuzzy = options.fuzzy;
    job.threads = options.threads;
    job.dataMapping = options.dataMapping;
    job.cellMapping = options.cellMapping;
    job.apiMapping = options.apiMapping;
    job.layerMapping = options.layerMapping;
    job.manualMatches = options.manualMatches;
    // The viewer shows what a damaged dump still holds and says what was lost (its load diagnostics and banner);
    // refusing is the CLI's default.
    job.salvage = true;
    auto mappingFiles = compare::readMappingFiles(job);
    if (!mappingFiles)
        return mappingFiles.error();
    compare::PlannedPair planned = pair;
    planned.stackMode = false;
    planned.stackFile.reset();
    if (options.stackMode) {
        const fs::path stack = pair.npu.dumpFile.parent_path() / "stack.json";
        std::error_code ec;
        if (fs::is_regular_file(stack, ec)) {
            planned.stackMode = true;
            planned.stackFile = stack;
        }
    }
    std::shared_ptr<const PairSkeleton> published;
    // A pair opened before: its tree and statuses are shown at once, from the cache, while the analysis runs.
    std::optional<CachedPair> cached;
    if (!options.cacheDir.empty() && !options.manualMatches && (options.skeletonReady || options.layoutReady))
        cached = readPairCache(pairCacheFile(options.cacheDir, pair, options), pair, options);
    if (cached) {
        auto skeleton = std::make_shared<PairSkeleton>();
        skeleton->pair = pair;
        skeleton->tree = cached->tree;
        skeleton->mode = cached->mode;
        skeleton->fromCache = true;
        if (options.skeletonReady)
            options.skeletonReady(skeleton);
        if (options.layoutReady)
            options.layoutReady(cached->status);
    }
    // Set once the dumps are read and the tree is the cached one: nothing is published again.
    std::atomic<bool> quiet = false;
    compare::PairHooks hooks;
    // Without a cached tree, the viewer gets the tree from the NPU dump's keys while the dumps are read (at a
    // million entries, seconds before they are).
    std::shared_ptr<const tree::ConstructTree> earlyTree;
    std::optional<compare::CompareMode> earlyMode;
    std::error_code sizeError;
    const auto npuBytes = std::filesystem::file_size(pair.npu.dumpFile, sizeError);
    if (!cached && options.skeletonReady && !sizeError && npuBytes >= options.earlyTreeBytes) {
        hooks.earlyTree = [&](std::shared_ptr<const tree::ConstructTree> tree, std::optional<compare::CompareMode> mode) {
            auto skeleton = std::make_shared<PairSkeleton>();
            skeleton->pair = pair;
            skeleton->tree = tree;
            skeleton->mode = mode;
            skeleton->early = true;
            earlyTree = std::move(tree);
            earlyMode = mode;
            options.skeletonReady(skeleton);
        };
    }
    hooks.loaded = [&](std::shared_ptr<const compare::LoadedPair> loaded) {
        auto skeleton = std::make_shared<PairSkeleton>();
        skeleton->pair = pair;
        skeleton->npu = loaded->npu;
        skeleton->bench = loaded->bench;
        skeleton->tree = loaded->tree;
        skeleton->diagnostics = loaded->diagnostics;
        // The viewer keeps the tree it was given: the dumps' own tree must be the same, node for node.
        if (cached && loaded->tree->size() == cached->tree->size() && loaded->tree->keysHash() == cached->keysHash) {
            skeleton->tree = cached->tree;
            skeleton->fromCache = true;
            quiet = true;
        }
        bool shown = quiet;
        if (earlyTree
            && (loaded->tree == earlyTree
                || (loaded->tree->size() == earlyTree->size() && loaded->tree->keysHash() == earlyTree->keysHash()))) {
            const auto mode = compare::detectMode(*loaded->npu->dump, *loaded->bench->dump);
            if (mode && earlyMode == *mode) {
                skeleton->tree = earlyTree;
                skeleton->mode = earlyMode;
                skeleton->early = true;
                shown = true; // the statuses still come: only the tree is known already
            }
        }
        published = skeleton;
        if (options.skeletonReady && !shown)
            options.skeletonReady(skeleton);
    };

    // Stage 2: the compare, streaming each real-data row's verdict as it is computed.
    std::mutex mutex;
    std::vector<Status> rowState;     // per row, under mutex
    std::vector<std::uint32_t> rowNode;
    std::vector<std::uint32_t> nodeRowOffsets;
    std::vector<std::uint32_t> nodeRowIndex;
    std::vector<Status> nodeOwn;
    std::set<std::uint32_t> changed;
    auto lastFlush = std::chrono::steady_clock::now();
    int accuracyColumn = -1;
    std::optional<compare::NonFiniteStatistics> nonFinite;

    auto nodeStatusFromRows = [&](std::uint32_t node) {
        return foldRowStatuses(std::span<const std::uint32_t>(nodeRowIndex.data() + nodeRowOffsets[node],
                                                              nodeRowOffsets[node + 1] - nodeRowOffsets[node]),
                               rowState);
    };

    // Sends the nodes whose own status changed since the last batch (caller holds the mutex, or the
    // workers are done).
    auto flushChanged = [&] {
        if (changed.empty())
            return;
        StatusUpdate update;
        for (std::uint32_t n : changed) {
            update.nodes.push_back(n);
            update.own.push_back(nodeOwn[n]);
        }
        changed.clear();
        options.statusUpdate(std::move(update));
    };

    hooks.layoutReady = [&](const compare::CompareTable& layout, const compare::LoadedPair&) {
        if (quiet)
            return; // the cached statuses are final already
        accuracyColumn = layout.column("Accuracy Reached or Not");
        nonFinite.emplace(layout);
        std::vector<bool> filled(layout.rows.size(), true);
        if (layout.mode == compare::CompareMode::RealData && accuracyColumn >= 0) {
            for (std::size_t r = 0; r < layout.rows.size(); ++r)
                filled[r] = !layout.rows[r][static_cast<std::size_t>(accuracyColumn)].isNone();
        }
        // Row statuses once: the streamed updates start from them and the node statuses fold them.
        std::vector<Status> layoutRows = rowStatuses(layout, filled);
        auto status = std::make_shared<NodeStatusTable>(
            computeNodeStatus(layout, *published->tree, filled, &layoutRows));
        std::lock_guard lock(mutex);
        rowState = std::move(layoutRows);
        rowNode = layout.npuEntry;
        nodeRowOffsets = status->rowOffsets;
        nodeRowIndex = status->rowIndex;
        nodeOwn = status->own;
        if (options.layoutReady)
            options.layoutReady(status);
    };
    if (options.statusUpdate) {
        hooks.rowReady = [&](std::size_t row, const std::vector<compare::Cell>& cells) {
            if (quiet)
                return;
            // Highlights come only when every row is known; until then a row's Accuracy decides.
            const compare::Cell& accuracy = cells[static_cast<std::size_t>(accuracyColumn)];
            const bool diverges = (accuracy.isString() && accuracy.asString() == "No")
                || (nonFinite && nonFinite->diverges(cells));
            const Status st = diverges ? Status::Error : Status::Pass;
            std::lock_guard lock(mutex);
            if (row >= rowState.size() || rowState[row] == Status::Unmatched)
                return;
            rowState[row] = st;
            const std::uint32_t node = rowNode[row];
            if (node >= nodeOwn.size())
                return;
            const Status own = nodeStatusFromRows(node);
            if (own != nodeOwn[node]) {
                nodeOwn[node] = own;
                changed.insert(node);
            }
            const auto now = std::chrono::steady_clock::now();
            if (now - lastFlush > std::chrono::milliseconds(30)) {
                lastFlush = now;
                flushChanged();
            }
        };
    }
    auto outcome = compare::comparePair(planned, *mappingFiles, job, hooks, progress);
    if (progress && progress->isCancelled())
        return cancelledError(pair);
    if (!outcome)
        return outcome.error();
    // Changes after the last timed flush would otherwise wait for the final table.
    if (options.statusUpdate && !quiet)
        flushChanged();

    // Stage 3: final verdicts (with highlights), the first failing node, and both stacks.
    const tree::ConstructTree& tree = *published->tree;
    auto analysis = std::make_shared<PairAnalysis>();
    if (options.readStacks)
        readStacks(*published, *analysis);
    analysis->skeleton = published;
    analysis->table = outcome->table;
    analysis->status = std::make_shared<const NodeStatusTable>(computeNodeStatus(*outcome->table, tree));
    analysis->firstFailure = outcome->firstFailure;
    analysis->notes = std::move(outcome->notes);
    analysis->inputDiagnostics = std::move(outcome->inputDiagnostics);
    analysis->reopened = quiet;
    analysis->manualMatches = options.manualMatches;
    analysis->seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    if (progress)
        progress->advance(kTotal);
    return std::shared_ptr<const PairAnalysis>(std::move(analysis));
}

PairSummary summarize(const PairAnalysis& analysis, std::size_t pairIndex)
{
    PairSummary s;
    s.pairIndex = pairIndex;
    s.counts = analysis.status->counts;
    s.firstFailure = analysis.firstFailure;
    s.nodes = static_cast<std::uint32_t>(analysis.skeleton->tree->size());
    const RankPair& pair = analysis.skeleton->pair;
    s.failure.step = pair.step;
    s.failure.rank = pair.npu.rank.value_or(-1);
    s.failure.rankLabel = pair.npu.rankLabel;
    if (!s.firstFailure.key.empty())
        job::locateFailure(s.failure, s.firstFailure, analysis.skeleton->tree.get());
    for (const auto& side : { analysis.skeleton->npu, analysis.skeleton->bench }) {
        const std::string lost = side ? dump::loadReport(*side).salvageText() : std::string();
        if (!lost.empty())
            s.salvaged += (s.salvaged.empty() ? "" : "\n") + lost;
    }
    if (analysis.table)
        s.comm = compare::msprobe26::extractCommRows(*analysis.table);
    return s;
}

std::string entryKeyOfRow(const std::string& rowName)
{
    auto cat = compare::categorize(rowName);
    if (!cat)
        return rowName;
    std::string key = cat->second; // "Functional.gelu.0.forward." or "Module.x.Y." for parameters_grad
    if (cat->first == compare::RowCategory::ParametersGrad)
        return key + "parameters_grad";
    if (!key.empty() && key.back() == '.')
        key.pop_back();
    return key;
}

} // namespace probescope::session
