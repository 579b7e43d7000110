// SPDX-License-Identifier: Apache-2.0
#include "session/session.h"

#include "compare/msprobe26.h"
#include "compare/ptdbg/ptdbgcompare.h"

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

SourceLocation at(const fs::path& p) { return SourceLocation { p.string(), std::nullopt, 0, 0 }; }

// Maps a sub-range of the work onto a parent sink: the stages of an analysis share one bar.
class StageSink final : public ProgressSink
{
public:
    StageSink(ProgressSink* parent, std::uint64_t from, std::uint64_t to)
        : m_parent(parent)
        , m_from(from)
        , m_to(to)
    {
    }
    void setRange(std::uint64_t total) override { m_total = std::max<std::uint64_t>(total, 1); }
    void advance(std::uint64_t done) override
    {
        if (m_parent)
            m_parent->advance(m_from + (m_to - m_from) * std::min(done, m_total) / m_total);
    }
    bool isCancelled() const override { return m_parent && m_parent->isCancelled(); }

private:
    ProgressSink* m_parent;
    std::uint64_t m_from;
    std::uint64_t m_to;
    std::uint64_t m_total = 1;
};

Diagnostic cancelledError(const RankPair& pair)
{
    return makeError("session.cancelled", at(pair.npu.dumpFile), "the analysis was cancelled");
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

Result<SessionPlan> planSession(const fs::path& npuInput, const fs::path& benchInput)
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
            return makeError("session.input", at(npuInput),
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
    auto npu = dump::discoverDump(npuPath);
    if (!npu)
        return npu.error();
    auto bench = dump::discoverDump(benchPath);
    if (!bench)
        return bench.error();
    for (const auto* d : { &npu->diagnostics, &bench->diagnostics })
        plan.diagnostics.insert(plan.diagnostics.end(), d->begin(), d->end());

    // Steps: by number; when each side holds a single step (or none) they pair whatever their numbers,
    // so a user can compare step3 of one run with step0 of another by opening the step folders.
    auto byStep = [](const dump::DumpLayout& layout) {
        std::map<std::int64_t, std::vector<const dump::RankLocation*>> steps;
        for (const dump::RankLocation& r : layout.ranks)
            steps[r.step.value_or(-1)].push_back(&r);
        return steps;
    };
    auto npuSteps = byStep(*npu);
    auto benchSteps = byStep(*bench);
    std::vector<std::pair<std::int64_t, std::int64_t>> stepPairs;
    if (npuSteps.size() == 1 && benchSteps.size() == 1) {
        stepPairs.emplace_back(npuSteps.begin()->first, benchSteps.begin()->first);
    } else {
        for (const auto& [step, ranks] : npuSteps) {
            if (benchSteps.count(step))
                stepPairs.emplace_back(step, step);
            else
                plan.diagnostics.push_back(makeWarning("session.step-unpaired", at(ranks.front()->dir),
                                                       "the bench dump has no step " + std::to_string(step)
                                                           + "; it is skipped"));
        }
        for (const auto& [step, ranks] : benchSteps) {
            if (!npuSteps.count(step))
                plan.diagnostics.push_back(makeWarning("session.step-unpaired", at(ranks.front()->dir),
                                                       "the NPU dump has no step " + std::to_string(step)
                                                           + "; it is skipped"));
        }
    }
    for (const auto& [ns, bs] : stepPairs) {
        const auto& n = npuSteps[ns];
        const auto& b = benchSteps[bs];
        auto rankKey = [](const dump::RankLocation* r) { return r->rank.value_or(-1); };
        std::set<std::int64_t> nRanks;
        std::set<std::int64_t> bRanks;
        for (auto* r : n)
            nRanks.insert(rankKey(r));
        for (auto* r : b)
            bRanks.insert(rankKey(r));
        const std::int64_t step = ns;
        if (nRanks == bRanks || (n.size() == 1 && b.size() == 1) || n.size() == b.size()) {
            if (nRanks != bRanks && !(n.size() == 1 && b.size() == 1))
                plan.diagnostics.push_back(makeWarning(
                    "session.rank-order", at(n.front()->dir),
                    "the two sides have different rank numbers; ranks are paired in sorted order, as msprobe does"));
            for (std::size_t i = 0; i < n.size(); ++i)
                plan.pairs.push_back(RankPair { *n[i], *b[i], step });
        } else {
            for (auto* r : n) {
                auto it = std::find_if(b.begin(), b.end(), [&](auto* x) { return rankKey(x) == rankKey(r); });
                if (it == b.end())
                    plan.diagnostics.push_back(makeWarning("session.rank-unpaired", at(r->dir),
                                                           "no bench rank with this number; it is skipped"));
                else
                    plan.pairs.push_back(RankPair { *r, **it, step });
            }
        }
    }
    if (plan.pairs.empty())
        return makeError("session.no-pairs", at(npuPath), "no NPU rank pairs with a bench rank");
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
    if (progress) {
        progress->setRange(kTotal);
        progress->advance(0);
    }
    // Stage 1: both dumps, side by side.
    // stack.json is read after the compare (readStacks): nothing before the coloured tree needs it.
    dump::ReadOptions readOptions;
    readOptions.stackJson = false;
    Result<std::shared_ptr<const dump::RankDump>> benchRank = makeError("session.internal", {}, "not loaded");
    std::thread benchLoader([&] {
        dump::ReadOptions benchOptions = readOptions;
        benchOptions.constructJson = false; // the tree is the NPU side's
        benchRank = dump::loadRank(pair.bench, benchOptions);
    });
    auto npuRank = dump::loadRank(pair.npu, readOptions);
    benchLoader.join();
    if (!npuRank)
        return npuRank.error();
    if (!benchRank)
        return benchRank.error();
    if (progress && progress->isCancelled())
        return cancelledError(pair);

    auto skeleton = std::make_shared<PairSkeleton>();
    skeleton->pair = pair;
    skeleton->npu = *npuRank;
    skeleton->bench = *benchRank;
    // The tree is built while the compare flattens both dumps; only the layout needs both. The thread is
    // joined before the layout reads the tree, and on every way out.
    std::thread treeBuilder([&] {
        skeleton->tree = tree::ConstructTree::build(*npuRank);
        for (const Diagnostics* d : { &(*npuRank)->diagnostics, &(*benchRank)->diagnostics, &skeleton->tree->diagnostics() })
            skeleton->diagnostics.insert(skeleton->diagnostics.end(), d->begin(), d->end());
        if (options.skeletonReady)
            options.skeletonReady(skeleton);
    });
    struct Joiner
    {
        std::thread& thread;
        void join()
        {
            if (thread.joinable())
                thread.join();
        }
        ~Joiner() { join(); }
    } treeJoiner { treeBuilder };
    const std::shared_ptr<const PairSkeleton> published = skeleton;
    if (progress)
        progress->advance(kTotal / 10);

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

    auto nodeStatusFromRows = [&](std::uint32_t node) {
        Status worst = Status::NoData;
        bool anyMatched = false;
        bool anyPending = false;
        for (std::uint32_t i = nodeRowOffsets[node]; i < nodeRowOffsets[node + 1]; ++i) {
            const Status st = rowState[nodeRowIndex[i]];
            anyMatched = anyMatched || st != Status::Unmatched;
            anyPending = anyPending || st == Status::Pending;
            if (st != Status::Unmatched && st != Status::Pending)
                worst = worse(worst, st);
        }
        if (!anyMatched)
            return Status::Unmatched;
        // An error is known for sure; anything milder may still turn into one.
        return worst == Status::Error || !anyPending ? worst : Status::Pending;
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

    compare::CompareOptions compareOptions;
    compareOptions.fuzzy = options.fuzzy;
    compareOptions.threads = options.threads;
    compareOptions.layoutReady = [&](const compare::CompareTable& layout) {
        accuracyColumn = layout.column("Accuracy Reached or Not");
        std::vector<bool> filled(layout.rows.size(), true);
        if (layout.mode == compare::CompareMode::RealData && accuracyColumn >= 0) {
            for (std::size_t r = 0; r < layout.rows.size(); ++r)
                filled[r] = !layout.rows[r][static_cast<std::size_t>(accuracyColumn)].isNone();
        }
        // Row statuses once: the streamed updates start from them and the node statuses fold them.
        std::vector<Status> layoutRows = rowStatuses(layout, filled);
        treeJoiner.join();
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
        compareOptions.rowReady = [&](std::size_t row, const std::vector<compare::Cell>& cells) {
            // Highlights come only when every row is known; until then a row's Accuracy decides.
            const compare::Cell& accuracy = cells[static_cast<std::size_t>(accuracyColumn)];
            const Status st = accuracy.isString() && accuracy.asString() == "No" ? Status::Error : Status::Pass;
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
    StageSink compareSink(progress, kTotal / 10, kTotal * 99 / 100);
    auto table = options.profile == compare::Profile::Msprobe26
        ? compare::compareDumps26(*published->npu->dump, *published->bench->dump, compareOptions, &compareSink)
        : compare::compareDumps(*published->npu->dump, *published->bench->dump, compareOptions, &compareSink);
    if (progress && progress->isCancelled())
        return cancelledError(pair);
    if (!table)
        return table.error();
    // Changes after the last timed flush would otherwise wait for the final table.
    if (options.statusUpdate)
        flushChanged();

    // Stage 3: final verdicts (with highlights), the first failing node, and both stacks.
    treeJoiner.join();
    const tree::ConstructTree& tree = *published->tree;
    auto analysis = std::make_shared<PairAnalysis>();
    if (options.readStacks)
        readStacks(*published, *analysis);
    analysis->skeleton = published;
    analysis->table = *table;
    analysis->status = std::make_shared<const NodeStatusTable>(computeNodeStatus(**table, tree));
    analysis->firstFailure = compare::findFirstFailure(**table, tree);
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
    return s;
}

long firstDivergingRank(const std::vector<PairSummary>& summaries)
{
    std::vector<const compare::FirstFailure*> failures;
    for (const PairSummary& s : summaries)
        failures.push_back(&s.firstFailure);
    return compare::earliestFailure(failures);
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
