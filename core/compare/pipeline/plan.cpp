// SPDX-License-Identifier: Apache-2.0
#include "core/compare/pipeline/plan.h"

#include "core/compare/input/jsoninput.h"
#include "core/compare/pipeline/profiles.h"
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

/// The folder name a rank has in file names: as on disk ("rank0", "rank", "proc3"); "rank" for a bare folder.
std::string rankFolder(const dump::RankLocation& r)
{
    if (!r.rankLabel.empty())
        return r.rankLabel;
    return r.rank ? "rank" + std::to_string(*r.rank) : std::string("rank");
}

/// The folder of the step a rank belongs to, when it has one.
std::optional<fs::path> stepFolder(const dump::RankLocation& r)
{
    if (r.stepLabel.empty())
        return std::nullopt;
    return r.rankLabel.empty() ? r.dir.path() : r.dir.parent_path();
}

/// A layout found from a folder that holds its dump file itself (a rank folder, or a bare folder).
bool isRankLevel(const dump::DumpLayout& layout)
{
    return layout.ranks.size() == 1 && samePath(layout.ranks.front().dir, layout.input);
}

/// A layout found from a folder above its step folders (a dump root).
bool isRootLevel(const dump::DumpLayout& layout)
{
    return std::any_of(layout.ranks.begin(), layout.ranks.end(), [&](const dump::RankLocation& r) {
        const auto step = stepFolder(r);
        return step && !samePath(*step, layout.input);
    });
}

void setStack(PlannedPair& pair, const CompareInput& input, const ProfileRules& rules, const PlanOptions& options)
{
    // Single pair (A.1): a stack_path -> -s decides (msprobe 1.2); else stack.json beside the NPU dump file.
    if (pair.suffix.empty() && input.stackPath && rules.usesStackPath()) {
        pair.stackMode = options.stackFlag;
        pair.stackFile = *input.stackPath;
        return;
    }
    if (!options.stackBeside)
        return;
    std::error_code ec;
    const fs::path beside = pair.npu.dumpFile.parent_path() / "stack.json";
    pair.stackMode = fs::is_regular_file(beside, ec);
    if (pair.stackMode)
        pair.stackFile = beside;
}

/// A step's ranks, pointing into the layout (not const: each paired rank is moved into its pair, once).
using StepRanks = std::map<std::int64_t, std::vector<dump::RankLocation*>>;

StepRanks byStep(dump::DumpLayout& layout)
{
    StepRanks steps;
    for (dump::RankLocation& r : layout.ranks)
        steps[r.step.value_or(-1)].push_back(&r);
    // msprobe pairs rank folders in the sorted order of their names, as strings (rank10 < rank2).
    for (auto& [step, ranks] : steps)
        std::stable_sort(ranks.begin(), ranks.end(), [](auto* a, auto* b) { return rankFolder(*a) < rankFolder(*b); });
    return steps;
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

Result<JobPlan> planPairs(const CompareInput& input, const PlanOptions& options)
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
    auto npu = dump::discoverDump(input.npuPath, discover);
    if (!npu)
        return npu.error();
    auto bench = dump::discoverDump(input.benchPath, discover);
    if (!bench)
        return bench.error();
    JobPlan plan;
    for (const auto* d : { &npu->diagnostics, &bench->diagnostics })
        plan.diagnostics.insert(plan.diagnostics.end(), d->begin(), d->end());

    // Two dump files, or two folders that hold their dump file themselves: one pair, as msprobe's A.1.
    const bool npuSingle = !npuDir || isRankLevel(*npu);
    const bool benchSingle = !benchDir || isRankLevel(*bench);
    if (npuSingle && benchSingle && npu->ranks.size() == 1 && bench->ranks.size() == 1) {
        PlannedPair pair;
        pair.npu = npu->ranks.front();
        pair.bench = bench->ranks.front();
        pair.step = pair.npu.step.value_or(-1);
        setStack(pair, input, **rules, options);
        plan.pairs.push_back(std::move(pair));
        return plan;
    }

    // Directory mode: steps by number (one step on each side pairs whatever the numbers, so step3 of one run can
    // be compared with step0 of another), then ranks within a step.
    auto npuSteps = byStep(*npu);
    auto benchSteps = byStep(*bench);
    const bool root = isRootLevel(*npu);
    auto outSubdirOf = [&](const dump::RankLocation& r, std::int64_t step) {
        if (!root)
            return std::string();
        return r.stepLabel.empty() ? "step" + std::to_string(step) : r.stepLabel;
    };
    // A step on one side only: one warning for the step, and each of its ranks is a place the job lists as not
    // compared (never a silent skip: docs/reliability.md).
    auto oneSided = [&](bool npuSide, std::int64_t step, const std::vector<dump::RankLocation*>& ranks) {
        const std::string stepText = step >= 0 ? "step " + std::to_string(step) : "the ranks without a step folder";
        Diagnostic d = makeWarning(
            "session.step-unpaired", fileLocation(stepFolder(*ranks.front()).value_or(ranks.front()->dir)),
            std::string(npuSide ? "the bench dump has no " : "the NPU dump has no ") + stepText + ": the "
                + (npuSide ? "NPU" : "bench") + " side's " + stepText + " (" + std::to_string(ranks.size())
                + (ranks.size() == 1 ? " rank" : " ranks") + ") is not compared");
        plan.diagnostics.push_back(d);
        for (const dump::RankLocation* r : ranks)
            plan.unpaired.push_back(UnpairedPlace { npuSide, *r, step, outSubdirOf(*r, step), d });
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
    std::size_t most = 0; // 20,000 pairs: reserved once, no copy on growth (issue 37)
    for (const auto& [ns, bs] : stepPairs)
        most += npuSteps[ns].size();
    plan.pairs.reserve(most);
    for (const auto& [ns, bs] : stepPairs) {
        const auto& n = npuSteps[ns];
        const auto& b = benchSteps[bs];
        std::vector<std::pair<dump::RankLocation*, dump::RankLocation*>> ranks;
        std::set<std::string> nNames;
        std::set<std::string> bNames;
        for (auto* r : n)
            nNames.insert(rankFolder(*r));
        for (auto* r : b)
            bNames.insert(rankFolder(*r));
        // Equal name sets pair by name only when the counts agree too: discovery refuses two dumps at one place,
        // but the pairing must not read past the shorter side whatever a layout holds.
        if (n.size() == b.size()) {
            // msprobe's pairing is kept (in the CLI too), but never silent: a rank on one side only is paired with
            // one on the other, and the warning names the first such pair.
            if (nNames != bNames && !(n.size() == 1 && b.size() == 1)) {
                std::string first;
                for (std::size_t i = 0; i < n.size() && first.empty(); ++i) {
                    if (rankFolder(*n[i]) != rankFolder(*b[i]))
                        first = " (NPU " + rankFolder(*n[i]) + " with bench " + rankFolder(*b[i]) + ")";
                }
                plan.diagnostics.push_back(makeWarning(
                    "session.rank-order", fileLocation(stepFolder(*n.front()).value_or(n.front()->dir)),
                    "the two sides have different rank folders; ranks are paired in sorted order, as msprobe does"
                        + first));
            }
            for (std::size_t i = 0; i < n.size(); ++i)
                ranks.emplace_back(n[i], b[i]);
        } else if (options.strictRanks) {
            const fs::path where = stepFolder(*n.front()).value_or(input.npuPath);
            return makeError("compare.input", fileLocation(where),
                             "the NPU folder has " + std::to_string(n.size()) + " ranks and the bench folder "
                                 + std::to_string(b.size()));
        } else {
            for (auto* r : n) {
                auto it = std::find_if(b.begin(), b.end(), [&](auto* x) { return rankFolder(*x) == rankFolder(*r); });
                if (it == b.end()) {
                    Diagnostic d = makeWarning("session.rank-unpaired", fileLocation(r->dir),
                                               "no bench rank with this number; it is skipped");
                    plan.diagnostics.push_back(d);
                    plan.unpaired.push_back(UnpairedPlace { true, *r, ns, outSubdirOf(*r, ns), d });
                } else {
                    ranks.emplace_back(r, *it);
                }
            }
            for (auto* r : b) {
                if (std::none_of(n.begin(), n.end(), [&](auto* x) { return rankFolder(*x) == rankFolder(*r); })) {
                    Diagnostic d = makeWarning("session.rank-unpaired", fileLocation(r->dir),
                                               "no NPU rank with this number; it is skipped");
                    plan.diagnostics.push_back(d);
                    plan.unpaired.push_back(UnpairedPlace { false, *r, bs, outSubdirOf(*r, bs), d });
                }
            }
        }
        for (const auto& [nr, br] : ranks) {
            PlannedPair pair;
            pair.step = ns;
            pair.suffix = (*rules)->pairSuffix(rankFolder(*nr), rankFolder(*br));
            pair.outSubdir = outSubdirOf(*nr, ns);
            // Each rank is in one pair and the layouts go with this call: moved, not copied.
            pair.npu = std::move(*nr);
            pair.bench = std::move(*br);
            setStack(pair, input, **rules, options);
            plan.pairs.push_back(std::move(pair));
        }
    }
    if (plan.pairs.empty()) {
        std::string message = "no NPU rank pairs with a bench rank";
        for (const Diagnostic& d : plan.diagnostics) {
            if (d.id == "session.step-unpaired")
                message += "; " + d.message; // one line per step on one side only: says what there was
        }
        return makeError("session.no-pairs", fileLocation(input.npuPath), message);
    }
    return plan;
}

} // namespace probescope::compare
