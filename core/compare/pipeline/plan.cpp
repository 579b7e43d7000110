// SPDX-License-Identifier: Apache-2.0
#include "core/compare/pipeline/plan.h"

#include "core/compare/input/jsoninput.h"
#include "core/compare/pipeline/profiles.h"
#include "core/compare/seam/profilerules.h"
#include <algorithm>
#include <map>
#include <set>

namespace probescope::compare {

namespace fs = std::filesystem;

namespace {

bool samePath(const fs::path& a, const fs::path& b)
{
    std::error_code ec;
    const bool same = fs::equivalent(a, b, ec);
    return !ec && same;
}

/// The folder name a rank has in file names: as on disk ("rank0", "rank", "proc3"), from its label, else "rank" and its
/// number; "rank" for a bare folder.
std::string rankFolder(std::string_view label, std::optional<std::int64_t> rank)
{
    if (!label.empty())
        return std::string(label);
    return rank ? "rank" + std::to_string(*rank) : std::string("rank");
}

std::string rankFolder(const dump::RankLocation& r)
{
    return rankFolder(r.rankLabel, r.rank);
}

/// The folder of the step a rank belongs to, when it has one.
std::optional<fs::path> stepFolder(const dump::RankLocation& r)
{
    if (r.stepLabel.empty())
        return std::nullopt;
    return r.rankLabel.empty() ? r.dir.path() : r.dir.parent_path();
}

/// rankFolder of a table's rank, without making its location.
std::string rankFolder(const dump::RankTable& t, std::size_t i)
{
    return rankFolder(t.rankLabel(i), t.rank(i));
}

/// A layout found from a folder that holds its dump file itself (a rank folder, or a bare folder).
bool isRankLevel(const dump::CompactLayout& layout)
{
    return layout.ranks.size() == 1 && samePath(layout.ranks.at(0).dir, layout.input);
}

/// A layout found from a folder above its step folders (a dump root).
bool isRootLevel(const dump::CompactLayout& layout)
{
    for (std::size_t i = 0; i < layout.ranks.size(); ++i) {
        const auto step = stepFolder(layout.ranks.at(i));
        if (step && !samePath(*step, layout.input))
            return true;
    }
    return false;
}

/// msprobe's stack rule for a pair (PlannedPair::stackMode and stackFile): a stack_path given with a single pair
/// (A.1), when the profile uses one, lets -s decide; else stack.json beside the NPU dump file turns it on.
enum class StackOf { None, Given, Beside };

StackOf stackOf(const std::string& suffix, const dump::RankLocation& npu, const CompareInput& input,
                const ProfileRules& rules, const PlanOptions& options)
{
    if (suffix.empty() && input.stackPath && rules.usesStackPath())
        return StackOf::Given;
    if (!options.stackBeside)
        return StackOf::None;
    std::error_code ec;
    return fs::is_regular_file(npu.dumpFile.parent_path() / "stack.json", ec) ? StackOf::Beside : StackOf::None;
}

/// A step's ranks, as places in the side's table.
using StepRanks = std::map<std::int64_t, std::vector<std::uint32_t>>;

StepRanks byStep(const dump::RankTable& table)
{
    StepRanks steps;
    for (std::size_t i = 0; i < table.size(); ++i)
        steps[table.step(i).value_or(-1)].push_back(static_cast<std::uint32_t>(i));
    // msprobe pairs rank folders in the sorted order of their names, as strings (rank10 < rank2).
    for (auto& [step, ranks] : steps)
        std::stable_sort(ranks.begin(), ranks.end(),
                         [&](std::uint32_t a, std::uint32_t b) { return rankFolder(table, a) < rankFolder(table, b); });
    return steps;
}

/// Whether two steps' ranks, each sorted by folder name, have the same set of names (each side's names compared in
/// turn, repeats skipped: no set of 10,000 names is made).
bool sameNames(const dump::RankTable& nt, const std::vector<std::uint32_t>& n, const dump::RankTable& bt,
               const std::vector<std::uint32_t>& b)
{
    std::size_t i = 0;
    std::size_t j = 0;
    while (i < n.size() || j < b.size()) {
        if (i == n.size() || j == b.size())
            return false;
        const std::string name = rankFolder(nt, n[i]);
        if (name != rankFolder(bt, b[j]))
            return false;
        while (i < n.size() && rankFolder(nt, n[i]) == name)
            ++i;
        while (j < b.size() && rankFolder(bt, b[j]) == name)
            ++j;
    }
    return true;
}

} // namespace

std::vector<std::int64_t> JobPlan::steps() const
{
    std::set<std::int64_t> s;
    for (const PlannedPair& p : pairs)
        s.insert(p.step);
    return { s.begin(), s.end() };
}

Result<CompareInput> readCompareJson(const fs::path& path)
{
    auto json = readJsonObjectFile(path);
    if (!json)
        return json.error();
    const nlohmann::json& j = *json;
    CompareInput input;
    for (const char* key : { "npu_path", "bench_path" }) {
        if (!j.contains(key) || !j[key].is_string())
            return makeError("compare.input", fileLocation(path), std::string("\"") + key + "\" (a path) is required");
    }
    input.npuPath = j["npu_path"].get<std::string>();
    input.benchPath = j["bench_path"].get<std::string>();
    if (j.contains("stack_path") && j["stack_path"].is_string())
        input.stackPath = fs::path(j["stack_path"].get<std::string>());
    else if (j.contains("stack_path") && !j["stack_path"].is_null()) // was ignored silently (issue 20)
        return makeError("compare.input", fileLocation(path), "\"stack_path\" must be a path (a string) or null");
    return input;
}

std::string CompactPlan::outSubdirOf(const dump::RankLocation& r, std::int64_t step) const
{
    if (!m_root)
        return std::string();
    return r.stepLabel.empty() ? "step" + std::to_string(step) : r.stepLabel;
}

PlannedPair CompactPlan::pair(std::size_t i) const
{
    const Pair& p = m_pairs[i];
    PlannedPair pair;
    pair.npu = m_npu.at(p.npu);
    pair.bench = m_bench.at(p.bench);
    pair.step = p.step;
    if (!m_single) {
        pair.suffix = m_rules->pairSuffix(rankFolder(pair.npu), rankFolder(pair.bench));
        pair.outSubdir = outSubdirOf(pair.npu, p.step);
    }
    if (p.stack == Stack::Given) {
        pair.stackMode = m_stackFlag;
        pair.stackFile = *m_stackPath;
    } else if (p.stack == Stack::Beside) {
        pair.stackMode = true;
        pair.stackFile = pair.npu.dumpFile.parent_path() / "stack.json";
    }
    return pair;
}

UnpairedPlace CompactPlan::unpaired(std::size_t i) const
{
    const Unpaired& u = m_unpaired[i];
    UnpairedPlace place;
    place.npuSide = u.npuSide;
    place.location = (u.npuSide ? m_npu : m_bench).at(u.rank);
    place.step = u.step;
    place.outSubdir = outSubdirOf(place.location, u.step);
    place.diagnostic = m_diagnostics[u.diagnostic];
    return place;
}

std::optional<std::int64_t> CompactPlan::unpairedRank(std::size_t i) const
{
    const Unpaired& u = m_unpaired[i];
    return (u.npuSide ? m_npu : m_bench).rank(u.rank);
}

std::size_t CompactPlan::bytes() const
{
    return m_npu.bytes() + m_bench.bytes() + m_pairs.capacity() * sizeof(Pair)
        + m_unpaired.capacity() * sizeof(Unpaired);
}

JobPlan CompactPlan::expand() const
{
    JobPlan plan;
    plan.diagnostics = m_diagnostics;
    plan.pairs.reserve(m_pairs.size());
    for (std::size_t i = 0; i < m_pairs.size(); ++i)
        plan.pairs.push_back(pair(i));
    plan.unpaired.reserve(m_unpaired.size());
    for (std::size_t i = 0; i < m_unpaired.size(); ++i)
        plan.unpaired.push_back(unpaired(i));
    return plan;
}

Result<JobPlan> planPairs(const CompareInput& input, const PlanOptions& options)
{
    auto plan = planPairsCompact(input, options);
    if (!plan)
        return plan.error();
    return plan->expand();
}

Result<CompactPlan> planPairsCompact(const CompareInput& input, const PlanOptions& options)
{
    auto rules = rulesOf(options.profile);
    if (!rules)
        return rules.error();
    std::error_code ec;
    for (const fs::path& p : { input.npuPath, input.benchPath }) {
        if (!fs::exists(p, ec))
            return makeError("compare.input", fileLocation(p), "no such file or folder");
    }
    const bool npuDir = fs::is_directory(input.npuPath, ec);
    const bool benchDir = fs::is_directory(input.benchPath, ec);
    if (options.strictRanks && npuDir != benchDir)
        return makeError("compare.input", fileLocation(input.npuPath),
                         "npu_path and bench_path must both be files or both folders");
    dump::DiscoverOptions discover;
    discover.progress = options.progress;
    // Each side's ranks as discovery's small records (dump::RankTable), never as a vector of locations: planning
    // a job holds about 40 bytes a rank folder and 24 a pair (issue 37).
    auto npu = dump::discoverCompact(input.npuPath, discover);
    if (!npu)
        return npu.error();
    auto bench = dump::discoverCompact(input.benchPath, discover);
    if (!bench)
        return bench.error();
    CompactPlan plan;
    plan.m_rules = *rules;
    plan.m_stackFlag = options.stackFlag;
    if (input.stackPath)
        plan.m_stackPath = *input.stackPath;
    Diagnostics& diagnostics = plan.m_diagnostics;
    for (const auto* d : { &npu->diagnostics, &bench->diagnostics })
        diagnostics.insert(diagnostics.end(), d->begin(), d->end());
    auto stackOfPair = [&](const std::string& suffix, const dump::RankLocation& n) {
        switch (stackOf(suffix, n, input, **rules, options)) {
        case StackOf::Given:
            return CompactPlan::Stack::Given;
        case StackOf::Beside:
            return CompactPlan::Stack::Beside;
        case StackOf::None:
            break;
        }
        return CompactPlan::Stack::None;
    };

    // Two dump files, or two folders that hold their dump file themselves: one pair, as msprobe's A.1.
    const bool npuSingle = !npuDir || isRankLevel(*npu);
    const bool benchSingle = !benchDir || isRankLevel(*bench);
    if (npuSingle && benchSingle && npu->ranks.size() == 1 && bench->ranks.size() == 1) {
        plan.m_single = true;
        CompactPlan::Pair pair;
        pair.step = npu->ranks.step(0).value_or(-1);
        pair.stack = stackOfPair(std::string(), npu->ranks.at(0));
        plan.m_pairs.push_back(pair);
        plan.m_npu = std::move(npu->ranks);
        plan.m_bench = std::move(bench->ranks);
        return plan;
    }

    // Directory mode: steps by number (one step on each side pairs whatever the numbers, so step3 of one run can
    // be compared with step0 of another), then ranks within a step.
    const dump::RankTable& nt = npu->ranks;
    const dump::RankTable& bt = bench->ranks;
    const auto npuSteps = byStep(nt);
    const auto benchSteps = byStep(bt);
    plan.m_root = isRootLevel(*npu);
    auto unpairedPlace = [&](bool npuSide, std::uint32_t rank, std::int64_t step, std::size_t diagnostic) {
        plan.m_unpaired.push_back(
            CompactPlan::Unpaired { step, rank, static_cast<std::uint32_t>(diagnostic), npuSide });
    };
    // A step on one side only: one warning for the step, and each of its ranks is a place the job lists as not
    // compared (never a silent skip: docs/reliability.md).
    auto oneSided = [&](bool npuSide, std::int64_t step, const std::vector<std::uint32_t>& ranks) {
        const dump::RankTable& t = npuSide ? nt : bt;
        const dump::RankLocation front = t.at(ranks.front());
        const std::string stepText = step >= 0 ? "step " + std::to_string(step) : "the ranks without a step folder";
        diagnostics.push_back(makeWarning(
            "session.step-unpaired", fileLocation(stepFolder(front).value_or(front.dir)),
            std::string(npuSide ? "the bench dump has no " : "the NPU dump has no ") + stepText + ": the "
                + (npuSide ? "NPU" : "bench") + " side's " + stepText + " (" + std::to_string(ranks.size())
                + (ranks.size() == 1 ? " rank" : " ranks") + ") is not compared"));
        for (const std::uint32_t r : ranks)
            unpairedPlace(npuSide, r, step, diagnostics.size() - 1);
    };
    std::vector<std::pair<std::int64_t, std::int64_t>> stepPairs;
    if (npuSteps.size() == 1 && benchSteps.size() == 1) {
        stepPairs.emplace_back(npuSteps.begin()->first, benchSteps.begin()->first);
    } else {
        for (const auto& [step, ranks] : npuSteps) {
            if (benchSteps.count(step))
                stepPairs.emplace_back(step, step);
            else
                oneSided(true, step, ranks);
        }
        for (const auto& [step, ranks] : benchSteps) {
            if (!npuSteps.count(step))
                oneSided(false, step, ranks);
        }
    }
    std::size_t most = 0; // reserved once, no copy on growth (issue 37)
    for (const auto& [ns, bs] : stepPairs)
        most += npuSteps.at(ns).size();
    plan.m_pairs.reserve(most);
    for (const auto& [ns, bs] : stepPairs) {
        const auto& n = npuSteps.at(ns);
        const auto& b = benchSteps.at(bs);
        std::vector<std::pair<std::uint32_t, std::uint32_t>> ranks;
        // Equal name sets pair by name only when the counts agree too: discovery refuses two dumps at one place,
        // but the pairing must not read past the shorter side whatever a layout holds.
        if (n.size() == b.size()) {
            // msprobe's pairing is kept (in the CLI too), but never silent: a rank on one side only is paired with
            // one on the other, and the warning names the first such pair.
            if (!(n.size() == 1 && b.size() == 1) && !sameNames(nt, n, bt, b)) {
                std::string first;
                for (std::size_t i = 0; i < n.size() && first.empty(); ++i) {
                    if (rankFolder(nt, n[i]) != rankFolder(bt, b[i]))
                        first = " (NPU " + rankFolder(nt, n[i]) + " with bench " + rankFolder(bt, b[i]) + ")";
                }
                const dump::RankLocation front = nt.at(n.front());
                diagnostics.push_back(makeWarning(
                    "session.rank-order", fileLocation(stepFolder(front).value_or(front.dir)),
                    "the two sides have different rank folders; ranks are paired in sorted order, as msprobe does"
                        + first));
            }
            for (std::size_t i = 0; i < n.size(); ++i)
                ranks.emplace_back(n[i], b[i]);
        } else if (options.strictRanks) {
            const fs::path where = stepFolder(nt.at(n.front())).value_or(input.npuPath);
            return makeError("compare.input", fileLocation(where),
                             "the NPU folder has " + std::to_string(n.size()) + " ranks and the bench folder "
                                 + std::to_string(b.size()));
        } else {
            // b is sorted by folder name: the first rank of that name is found by halving, not by a scan a rank.
            auto findIn = [](const dump::RankTable& t, const std::vector<std::uint32_t>& sorted,
                             const std::string& name) {
                const auto before = [&](std::uint32_t x, const std::string& v) { return rankFolder(t, x) < v; };
                const auto it = std::lower_bound(sorted.begin(), sorted.end(), name, before);
                return it != sorted.end() && rankFolder(t, *it) == name ? it : sorted.end();
            };
            for (const std::uint32_t r : n) {
                const auto it = findIn(bt, b, rankFolder(nt, r));
                if (it == b.end()) {
                    diagnostics.push_back(makeWarning("session.rank-unpaired", fileLocation(nt.at(r).dir),
                                                      "no bench rank with this number; it is skipped"));
                    unpairedPlace(true, r, ns, diagnostics.size() - 1);
                } else {
                    ranks.emplace_back(r, *it);
                }
            }
            for (const std::uint32_t r : b) {
                if (findIn(nt, n, rankFolder(bt, r)) == n.end()) {
                    diagnostics.push_back(makeWarning("session.rank-unpaired", fileLocation(bt.at(r).dir),
                                                      "no NPU rank with this number; it is skipped"));
                    unpairedPlace(false, r, bs, diagnostics.size() - 1);
                }
            }
        }
        for (const auto& [nr, br] : ranks) {
            CompactPlan::Pair pair;
            pair.step = ns;
            pair.npu = nr;
            pair.bench = br;
            pair.stack = stackOfPair((*rules)->pairSuffix(rankFolder(nt, nr), rankFolder(bt, br)), nt.at(nr));
            plan.m_pairs.push_back(pair);
        }
    }
    if (plan.m_pairs.empty()) {
        std::string message = "no NPU rank pairs with a bench rank";
        for (const Diagnostic& d : diagnostics) {
            if (d.id == "session.step-unpaired")
                message += "; " + d.message; // one line per step on one side only: says what there was
        }
        return makeError("session.no-pairs", fileLocation(input.npuPath), message);
    }
    plan.m_npu = std::move(npu->ranks);
    plan.m_bench = std::move(bench->ranks);
    return plan;
}

} // namespace probescope::compare
