// SPDX-License-Identifier: Apache-2.0
// msprobe's graph service (26.0.0 visualization/graph_service.py, compare/graph_comparator.py, db_utils.py) on
// ProbeScope's dump reading (core/dump) and compare (core/compare msprobe26).
#include "core/compare/msprobe12/compare.h"
#include "core/graph/graphwriter.h"

#include "core/compare/table/comparetable.h"
#include "core/compare/pipeline/pipeline.h"
#include "core/compare/metrics/realdata.h"
#include "core/compare/msprobe26/msprobe26.h"
#include "core/dump/dumplayout.h"
#include "core/graph/msprobetexts.h"
#include "core/graph/sqlitewriter.h"
#include "core/util/fileio.h"
#include "core/util/outputfile.h"
#include "core/util/pytext.h"
#include "core/util/textposition.h"

#include <nlohmann/json.hpp>
#include <sqlite3.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <map>
#include <set>
#include <system_error>
#include <unordered_map>

namespace probescope::graph {

namespace {

namespace fs = std::filesystem;
using compare::CellKind;
using compare::CellView;
using compare::CompareMode;

constexpr std::uint8_t kApi = 1;
constexpr std::uint8_t kCollection = 9;

/// One (step, rank) of the run: the NPU rank folder and, in a compare, the bench one.
struct Job
{
    std::int64_t step = 0;
    std::int64_t rank = 0;
    dump::RankLocation npu;
    std::optional<dump::RankLocation> bench;
};

bool sameDir(const fs::path& a, const fs::path& b)
{
    std::error_code ec;
    return fs::equivalent(a, b, ec);
}

/// msprobe's three input kinds: a folder with the dump files ("files": step 0, rank 0), a folder of rank folders
/// ("ranks": step 0), a folder of step folders ("steps").
struct Plan
{
    std::vector<Job> jobs;
    std::vector<std::int64_t> stepList { 0 };
    std::vector<std::int64_t> rankList { 0 };
    std::vector<std::string> notes;
    std::size_t notCompared = 0; ///< places of one side only
};

Result<Plan> planJobs(const fs::path& npu, const std::optional<fs::path>& bench)
{
    auto layoutN = dump::discoverDump(npu);
    if (!layoutN)
        return layoutN.error();
    std::optional<dump::DumpLayout> layoutB;
    if (bench) {
        auto b = dump::discoverDump(*bench);
        if (!b)
            return b.error();
        layoutB = std::move(*b);
    }
    const SourceLocation where { npu.string(), std::nullopt, 0, 0 };
    if (layoutN->ranks.empty())
        return makeError("graph.input", where, "no dump (dump.json, construct.json, stack.json) found");
    auto isFiles = [](const dump::DumpLayout& l, const fs::path& input) {
        return l.ranks.size() == 1 && sameDir(l.ranks.front().dir, input);
    };
    auto isSteps = [](const dump::DumpLayout& l) {
        return std::any_of(l.ranks.begin(), l.ranks.end(), [](const dump::RankLocation& r) { return !r.stepLabel.empty(); });
    };
    const bool filesN = isFiles(*layoutN, npu);
    const bool stepsN = !filesN && isSteps(*layoutN);
    if (layoutB) {
        if (layoutB->ranks.empty())
            return makeError("graph.input", SourceLocation { bench->string(), std::nullopt, 0, 0 }, "no dump found");
        const bool filesB = isFiles(*layoutB, *bench);
        const bool stepsB = !filesB && isSteps(*layoutB);
        if (filesN != filesB || stepsN != stepsB)
            return makeError("graph.input", where,
                             "the folder structures of the NPU and bench paths differ (msprobe: \"The directory "
                             "structures of npu_path and bench_path are inconsistent\")");
    }
    Plan plan;
    auto stepOf = [&](const dump::RankLocation& r) { return stepsN ? r.step.value_or(0) : 0; };
    auto rankOf = [&](const dump::RankLocation& r) { return filesN ? 0 : r.rank.value_or(0); };
    // The bench place of each (step, rank) label pair, looked up once per NPU place (linear in the places).
    std::map<std::pair<std::string, std::string>, const dump::RankLocation*> benchPlaces;
    if (layoutB)
        for (const dump::RankLocation& b : layoutB->ranks)
            benchPlaces[{ b.stepLabel, b.rankLabel }] = &b;
    for (const dump::RankLocation& r : layoutN->ranks) {
        Job job;
        job.step = stepOf(r);
        job.rank = rankOf(r);
        job.npu = r;
        if (layoutB) {
            const dump::RankLocation* match = nullptr;
            if (filesN) {
                match = &layoutB->ranks.back();
            } else if (const auto it = benchPlaces.find({ r.stepLabel, r.rankLabel }); it != benchPlaces.end()) {
                match = it->second;
            }
            if (!match) {
                plan.notes.push_back("NPU " + r.dir.string() + " has no bench counterpart; msprobe compares only the "
                                     "steps and ranks both sides have, so it is left out");
                ++plan.notCompared;
                continue;
            }
            job.bench = *match;
        }
        plan.jobs.push_back(std::move(job));
    }
    // And the other way: a bench place without an NPU counterpart is left out as well, never silently.
    if (layoutB && !filesN) {
        std::set<std::pair<std::string, std::string>> npuPlaces;
        for (const dump::RankLocation& r : layoutN->ranks)
            npuPlaces.emplace(r.stepLabel, r.rankLabel);
        for (const dump::RankLocation& b : layoutB->ranks)
            if (!npuPlaces.count({ b.stepLabel, b.rankLabel })) {
                plan.notes.push_back("bench " + b.dir.string() + " has no NPU counterpart; msprobe compares only the "
                                     "steps and ranks both sides have, so it is left out");
                ++plan.notCompared;
            }
    }
    if (plan.jobs.empty())
        return makeError("graph.input", where, "the NPU and bench paths have no step and rank in common");
    std::set<std::int64_t> steps;
    for (const Job& j : plan.jobs)
        steps.insert(j.step);
    if (stepsN)
        plan.stepList.assign(steps.begin(), steps.end());
    // rank_list: the ranks of the first step (tb_config keeps the first graph's row: INSERT OR IGNORE).
    plan.rankList.clear();
    for (const Job& j : plan.jobs)
        if (j.step == plan.jobs.front().step)
            plan.rankList.push_back(j.rank);
    std::sort(plan.rankList.begin(), plan.rankList.end());
    return plan;
}

// ---- matching (GraphComparator._compare_nodes / _compare_nodes_fuzzy) ----

void link(MsGraph& n, std::uint32_t a, MsGraph& b, std::uint32_t c)
{
    n.nodes[a].partner = static_cast<std::int32_t>(c);
    b.nodes[c].partner = static_cast<std::int32_t>(a);
}

/**
 * @brief For each node of `g` an id of its ancestors() list, shared between graphs through `intern`: equal ids,
 * equal lists. -1 is the empty list (the root's, or a chain that runs into a cycle, as msprobe's get_ancestors).
 *
 * Linear in the nodes and their names: a node's list is its parent's list plus the parent's name, interned once.
 * (Comparing the lists themselves costs nodes x depth: 20,000 nested modules passed 5.8 GB.)
 */
std::vector<std::int64_t> ancestorChains(const MsGraph& g, std::unordered_map<std::string, std::int64_t>& intern)
{
    constexpr std::int64_t kUnknown = -2;
    const std::size_t count = g.nodes.size();
    std::vector<std::int64_t> chain(count, kUnknown);
    std::vector<std::uint8_t> tainted(count, 0); // the walk up from this node meets a cycle
    std::vector<std::uint8_t> onPath(count, 0);
    std::vector<std::uint32_t> path;
    auto chainBelow = [&](std::uint32_t parent) {
        std::string key = std::to_string(chain[parent]);
        key += '/';
        key += g.nodes[parent].id;
        return intern.emplace(std::move(key), static_cast<std::int64_t>(intern.size())).first->second;
    };
    for (std::uint32_t start = 0; start < count; ++start) {
        if (chain[start] != kUnknown)
            continue;
        path.clear();
        std::uint32_t cur = start;
        enum class End { Top, Known, Cycle } end = End::Top;
        for (;;) {
            if (onPath[cur]) {
                end = End::Cycle;
                break;
            }
            onPath[cur] = 1;
            path.push_back(cur);
            const std::int32_t up = g.nodes[cur].up;
            if (up < 0 || static_cast<std::size_t>(up) >= count) {
                end = End::Top;
                break;
            }
            cur = static_cast<std::uint32_t>(up);
            if (chain[cur] != kUnknown) {
                end = End::Known;
                break;
            }
        }
        const bool cycle = end == End::Cycle || (end == End::Known && tainted[cur]);
        for (auto it = path.rbegin(); it != path.rend(); ++it) {
            const std::uint32_t x = *it;
            onPath[x] = 0;
            if (cycle) {
                tainted[x] = 1;
                chain[x] = -1;
            } else if (it == path.rbegin() && end == End::Top) {
                chain[x] = -1;
            } else {
                chain[x] = chainBelow(static_cast<std::uint32_t>(g.nodes[x].up));
            }
        }
    }
    return chain;
}

/// 8.x's BaseNode.__eq__ (compare_data): as many inputs and outputs, pairwise the same type and shape.
bool sameStructure83(const MsNode& a, const MsNode& b)
{
    for (auto [x, y] : { std::pair { &a.inputs, &b.inputs }, std::pair { &a.outputs, &b.outputs } }) {
        if (x->size() != y->size())
            return false;
        for (std::size_t i = 0; i < x->size(); ++i)
            if ((*x)[i].rawType != (*y)[i].rawType || (*x)[i].rawShape != (*y)[i].rawShape)
                return false;
    }
    return true;
}

/// 8.x's fuzzy_eq (compare_data_fuzzy): the shapes of the inputs and outputs both sides have, pairwise.
bool sameShapes83(const MsNode& a, const MsNode& b)
{
    for (auto [x, y] : { std::pair { &a.inputs, &b.inputs }, std::pair { &a.outputs, &b.outputs } })
        for (std::size_t i = 0; i < x->size() && i < y->size(); ++i)
            if ((*x)[i].rawShape != (*y)[i].rawShape)
                return false;
    return true;
}

std::vector<std::pair<std::uint32_t, std::uint32_t>> matchExact(MsGraph& n, MsGraph& b, WriteFormat format)
{
    std::unordered_map<std::string, std::int64_t> intern;
    const auto chainsN = ancestorChains(n, intern);
    const auto chainsB = ancestorChains(b, intern);
    std::vector<std::pair<std::uint32_t, std::uint32_t>> pairs;
    std::vector<std::uint32_t> queue { n.root };
    for (std::size_t q = 0; q < queue.size(); ++q) {
        const std::uint32_t i = queue[q];
        if (const auto it = b.index.find(n.nodes[i].id);
            it != b.index.end() && (format != WriteFormat::V83 || sameStructure83(n.nodes[i], b.nodes[it->second]))
            && chainsN[i] == chainsB[it->second]) {
            link(n, i, b, it->second);
            pairs.emplace_back(i, it->second);
        }
        queue.insert(queue.end(), n.nodes[i].subs.begin(), n.nodes[i].subs.end());
    }
    return pairs;
}

std::map<std::string, std::uint32_t> recount(const MsGraph& g, std::uint32_t node)
{
    std::map<std::string, std::uint32_t> out;
    std::unordered_map<std::string, int> count;
    for (const std::uint32_t s : g.nodes[node].subs) {
        if (g.nodes[s].op != kApi)
            continue;
        const std::string removed = countRemovedId(g.nodes[s].id);
        out[removed + std::to_string(++count[removed])] = s;
    }
    return out;
}

std::vector<std::pair<std::uint32_t, std::uint32_t>> matchFuzzy(MsGraph& n, MsGraph& b, WriteFormat format)
{
    std::vector<std::pair<std::uint32_t, std::uint32_t>> pairs;
    auto process = [&](std::uint32_t i, std::uint32_t j) {
        if (format == WriteFormat::V83 && !sameShapes83(n.nodes[i], b.nodes[j]))
            return false;
        link(n, i, b, j);
        pairs.emplace_back(i, j);
        return true;
    };
    std::vector<std::uint32_t> queue { n.root };
    for (std::size_t q = 0; q < queue.size(); ++q) {
        const std::uint32_t i = queue[q];
        if (n.nodes[i].op != kApi) {
            if (const auto it = b.index.find(n.nodes[i].id); it != b.index.end() && process(i, it->second)) {
                const auto countN = recount(n, i);
                const auto countB = recount(b, it->second);
                for (const auto& [key, api] : countN)
                    if (const auto other = countB.find(key); other != countB.end())
                        process(api, other->second);
            }
        }
        queue.insert(queue.end(), n.nodes[i].subs.begin(), n.nodes[i].subs.end());
    }
    // recount() is a sorted map; msprobe walks the NPU module's APIs in order: keep pairs in that order.
    return pairs;
}

/// Pairs named in a .vis.config (docs/graph.md): linked like a fuzzy match and compared.
std::vector<std::pair<std::uint32_t, std::uint32_t>> matchByFile(MsGraph& n, MsGraph& b, const VisConfig& config,
                                                                 std::vector<std::string>& notes)
{
    const ResolvedMatches resolved = resolveMatches(
        config, [&](std::string_view s) { return n.index.count(std::string(s)) != 0; },
        [&](std::string_view s) { return b.index.count(std::string(s)) != 0; });
    for (const std::string& note : resolved.notes)
        notes.push_back(config.path + ": " + note);
    std::vector<std::pair<std::uint32_t, std::uint32_t>> pairs;
    for (const NodeMatch& m : resolved.matches) {
        const std::uint32_t i = n.index.at(m.npu);
        const std::uint32_t j = b.index.at(m.bench);
        // A node matched already (by name) is re-paired: the file is the user's word. Its former partner loses its
        // link (a match is one to one, so only the partner can point back).
        if (const std::int32_t old = n.nodes[i].partner; old >= 0 && b.nodes[static_cast<std::size_t>(old)].partner == static_cast<std::int32_t>(i))
            b.nodes[static_cast<std::size_t>(old)].partner = -1;
        if (const std::int32_t old = b.nodes[j].partner; old >= 0 && n.nodes[static_cast<std::size_t>(old)].partner == static_cast<std::int32_t>(j))
            n.nodes[static_cast<std::size_t>(old)].partner = -1;
        link(n, i, b, j);
        n.nodes[i].modified = true;
        b.nodes[j].modified = true;
        pairs.emplace_back(i, j);
    }
    return pairs;
}

// ---- verdicts from the compare table ----

/// str() of a compare cell as msprobe's graph stores it (floats as repr, nan as "nan", None as "None").
std::string cellStr(const CellView& v)
{
    switch (v.kind) {
    case CellKind::None: return "None";
    case CellKind::Bool: return v.boolean ? "True" : "False";
    case CellKind::Int: return std::to_string(v.integer);
    case CellKind::Float: return pyFloatRepr(v.number);
    case CellKind::String:
    case CellKind::PyText: return std::string(v.text);
    }
    return {};
}

std::vector<std::string> indexColumns(CompareMode mode, WriteFormat format)
{
    if (format == WriteFormat::V83) {
        switch (mode) {
        case CompareMode::RealData:
            return { "Cosine", "EucDist", "MaxAbsErr", "MaxRelativeErr", "One Thousandth Err Ratio",
                     "Five Thousandths Err Ratio", "Requires_grad Consistent" };
        case CompareMode::Summary:
            return { "Max diff", "Min diff", "Mean diff", "L2norm diff", "MaxRelativeErr", "MinRelativeErr",
                     "MeanRelativeErr", "NormRelativeErr", "Requires_grad Consistent" };
        case CompareMode::Md5: return { "Result", "Requires_grad Consistent" };
        }
    }
    switch (mode) {
    case CompareMode::RealData:
        return { "Cosine", "EucDist", "MaxAbsErr", "MaxRelativeErr", "One Thousandth Err Ratio",
                 "Five Thousandths Err Ratio", "Requires_grad Consistent", "Result", "Err_message" };
    case CompareMode::Summary:
        return { "Max diff", "Min diff", "Mean diff", "L2norm diff", "MaxRelativeErr", "MinRelativeErr",
                 "MeanRelativeErr", "NormRelativeErr", "Requires_grad Consistent", "Result", "Err_message" };
    case CompareMode::Md5: return { "Result", "Requires_grad Consistent", "Result", "Err_message" };
    }
    return {};
}

/// _format_data on one merged compare value (msprobe formats the whole dict again when it writes the row).
std::string formatValue(const CellView& v, WriteFormat format)
{
    if (v.kind == CellKind::String || v.kind == CellKind::PyText) {
        std::string s(v.text);
        for (std::size_t at = 0; (at = s.find('\'', at)) != std::string::npos;)
            s.erase(at, 1);
        for (std::size_t at = 0; (at = s.find("None", at)) != std::string::npos; at += 4)
            s.replace(at, 4, "null");
        return formatDecimalString(s);
    }
    if (v.kind == CellKind::None)
        return "null";
    if (v.kind == CellKind::Float && format == WriteFormat::V83)
        return formatFloat83(v.number);
    return cellStr(v);
}

struct Verdicts
{
    std::shared_ptr<const compare::CompareTable> table;
    std::unordered_map<std::string, std::size_t> rowOf; ///< NPU Name -> row
    std::vector<int> columns;
    std::vector<std::string> names;
    int result = -1;
    int npuMd5 = -1;
    int benchMd5 = -1;
    int oneThousandth = -1;
    /// 8.3 real data: msprobe 8.x computes the relative error as msprobe 1.2 does (in the tensors' own float type,
    /// np.finfo(float).eps added where the bench is 0; msprobe 26 adds the eps of the compute type), so
    /// MaxRelativeErr and the thousandth ratios come from the 1.2 profile's table. A gradient with exact zeros on
    /// the bench side and tiny values on the NPU side differs there (one element of a parameter gradient).
    std::shared_ptr<const compare::CompareTable> table12;
    std::unordered_map<std::string, std::size_t> rowOf12;
    std::vector<int> columns12; ///< per name: its column in table12, or -1 (taken from `table`)
    int oneThousandth12 = -1;
};

bool ignoredApi(const std::string& id)
{
    const auto first = id.find('.');
    if (first == std::string::npos)
        return false;
    const auto second = id.find('.', first + 1);
    const std::string part = id.substr(first + 1, second == std::string::npos ? std::string::npos : second - first - 1);
    static const std::set<std::string> kIgnored { "empty", "empty_like", "empty_with_format", "new_empty_strided",
                                                  "new_empty", "empty_strided" };
    return kIgnored.count(part) != 0;
}

/// ModeAdapter.parse_result for one matched NPU node: the compare columns merged into its params, and the
/// precision_index of the worst row (26: pass 0, warning 0.5, error 1).
/// get_rela_diff_summary_mode: the graph compares the statistics as Python numbers (n - b, and
/// str(abs(diff / b * 100)) + '%'), not as the table's cells; 8 values in SUMMARY_COMPARE_INDEX order.
std::optional<std::array<std::string, 8>> summaryDiffs(const MsParam& npu, const MsParam& bench, WriteFormat format)
{
    std::array<std::string, 8> out;
    auto floatText = [&](double d) {
        CellView c;
        c.kind = CellKind::Float;
        c.number = d;
        return formatValue(c, format);
    };
    for (std::size_t s = 0; s < 4; ++s) {
        const auto& n = npu.stats[s];
        const auto& b = bench.stats[s];
        if (!n || !b) {
            out[s] = "N/A";
            out[s + 4] = "N/A";
            continue;
        }
        std::string diffText;
        std::string relative;
        const double diff = n->isInt && b->isInt ? static_cast<double>(n->i - b->i) : n->d - b->d;
        if (std::isnan(diff)) {
            diffText = "Nan";
            relative = "Nan";
        } else {
            diffText = n->isInt && b->isInt ? std::to_string(n->i - b->i) : floatText(diff);
            if (b->d != 0) {
                std::string r = pyFloatRepr(std::fabs((diff / b->d) * 100)) + "%";
                // _format_data rounds a decimal string of more than 6 decimals ("0.043168169%" -> "0.043168%").
                CellView c;
                c.kind = CellKind::String;
                c.text = r;
                relative = formatValue(c, format);
            } else {
                relative = "N/A";
            }
        }
        for (std::string* t : { &diffText, &relative })
            if (*t == "inf" || *t == "-inf" || *t == "nan")
                *t += '\t';
        out[s] = diffText;
        out[s + 4] = relative;
    }
    return out;
}

/// float(x) of a compare cell as Python would take it (numbers, numeric texts); nullopt otherwise.
std::optional<double> pyFloat(const CellView& c)
{
    if (c.kind == CellKind::Float)
        return c.number;
    if (c.kind == CellKind::Int)
        return static_cast<double>(c.integer);
    if (c.kind == CellKind::Bool)
        return c.boolean ? 1.0 : 0.0;
    if (c.kind == CellKind::String || c.kind == CellKind::PyText) {
        std::string t(c.text);
        t.erase(0, t.find_first_not_of(" \t\n"));
        t.erase(t.find_last_not_of(" \t\n") + 1);
        if (t.empty())
            return std::nullopt;
        char* end = nullptr;
        const double d = std::strtod(t.c_str(), &end);
        if (end != t.c_str() + t.size())
            return std::nullopt;
        return d;
    }
    return std::nullopt;
}

/// str2float: "39.78%" -> 0.3978; 0 when it does not parse.
double str2float(const std::string& text)
{
    std::string t = text;
    while (!t.empty() && t.back() == '%')
        t.pop_back();
    while (!t.empty() && t.front() == '%')
        t.erase(0, 1);
    CellView c;
    c.kind = CellKind::String;
    c.text = t;
    const auto d = pyFloat(c);
    return d ? *d / 100 : 0.0;
}

/// msprobe 8.3's ModeAdapter.parse_result: the compare columns merged into the params and its precision_index
/// (tensor: drop of the smallest One Thousandth Err Ratio from inputs to outputs; statistics: largest output
/// relative error; md5: 1 when every input and output passes).
/// 8.3's md5 rows: get_accuracy walks the structs as inputs, outputs, parameters but the names as inputs,
/// parameters, outputs (input_data holds the parameters after the inputs), so a module with parameters gets the
/// verdict of another slot under each name after its inputs. Reproduced: name k gets (md5 of NPU slot k ==
/// md5 of bench slot k), slots paired by position within their kind.
std::unordered_map<std::string, std::string> md5Results83(const MsNode& npu, const MsNode& bench)
{
    auto md5Of = [](const MsParam& p) {
        for (const auto& [k, val] : p.values)
            if (k == "md5")
                return val;
        return std::string("None");
    };
    auto slots = [&](const MsNode& n, std::vector<const MsParam*>& names, std::vector<std::pair<int, std::size_t>>& kinds,
                     std::vector<std::string>& md5s) {
        std::vector<const MsParam*> in, params, out;
        for (const MsParam& p : n.inputs)
            (p.state == "parameters" ? params : in).push_back(&p);
        for (const MsParam& p : n.outputs)
            out.push_back(&p);
        names = in;
        names.insert(names.end(), params.begin(), params.end());
        names.insert(names.end(), out.begin(), out.end());
        std::size_t k = 0;
        for (const auto* list : { &in, &out, &params }) {
            const int kind = list == &in ? 0 : list == &out ? 1 : 2;
            for (std::size_t i = 0; i < list->size(); ++i, ++k) {
                kinds.emplace_back(kind, i);
                md5s.push_back(md5Of(*(*list)[i]));
            }
        }
    };
    std::vector<const MsParam*> namesN, namesB;
    std::vector<std::pair<int, std::size_t>> kindsN, kindsB;
    std::vector<std::string> md5N, md5B;
    slots(npu, namesN, kindsN, md5N);
    slots(bench, namesB, kindsB, md5B);
    std::unordered_map<std::string, std::string> out;
    for (std::size_t k = 0; k < namesN.size() && k < kindsN.size(); ++k) {
        std::string result = "Different";
        for (std::size_t j = 0; j < kindsB.size(); ++j)
            if (kindsB[j] == kindsN[k]) {
                result = md5N[k] == md5B[j] ? "pass" : "Different";
                break;
            }
        out.emplace(namesN[k]->key, result);
    }
    return out;
}

void judgeNode83(MsNode& node, const MsNode& bench, const Verdicts& v, CompareMode mode)
{
    const auto md5Results = mode == CompareMode::Md5 ? md5Results83(node, bench) : std::unordered_map<std::string, std::string>();
    bool anyRow = false;
    struct Side
    {
        std::vector<double> numbers;
        bool na = false;
        double maxRelative = 0;
        bool invalid = false;
        int md5 = 1;
    } sides[2];
    for (int s = 0; s < 2; ++s) {
        auto& params = s == 0 ? node.inputs : node.outputs;
        Side& side = sides[s];
        for (MsParam& p : params) {
            if (p.maxIsNone)
                continue;
            const auto it = v.rowOf.find(p.key);
            if (it != v.rowOf.end()) {
                anyRow = true;
                const std::size_t r = it->second;
                std::array<std::string, 8> diffs;
                std::array<double, 4> relatives { 0, 0, 0, 0 };
                bool ownDiffs = false;
                if (mode == CompareMode::Summary) {
                    const std::string benchName(v.table->rows.view(r, 1).text);
                    for (auto* benchParams : { &bench.inputs, &bench.outputs })
                        for (const MsParam& b : *benchParams)
                            if (b.key == benchName && !ownDiffs) {
                                if (const auto d = summaryDiffs(p, b, WriteFormat::V83)) {
                                    diffs = *d;
                                    ownDiffs = true;
                                    for (std::size_t k = 0; k < 4; ++k) {
                                        const auto& n = p.stats[k];
                                        const auto& bb = b.stats[k];
                                        if (n && bb && bb->d != 0) {
                                            const double diff = n->isInt && bb->isInt ? static_cast<double>(n->i - bb->i) : n->d - bb->d;
                                            relatives[k] = std::fabs((diff / bb->d) * 100) / 100;
                                        }
                                    }
                                }
                            }
                }
                for (std::size_t c = 0; c < v.names.size(); ++c) {
                    std::string value;
                    if (mode == CompareMode::Summary && ownDiffs && c < 8) {
                        value = diffs[c];
                    } else if (mode == CompareMode::Md5 && v.names[c] == "Result") {
                        value = md5Results.count(p.key) ? md5Results.at(p.key) : "Different";
                    } else if (mode == CompareMode::RealData && v.table12 && c < v.columns12.size() && v.columns12[c] >= 0
                               && v.rowOf12.count(p.key)) {
                        value = formatValue(v.table12->rows.view(v.rowOf12.at(p.key), static_cast<std::size_t>(v.columns12[c])),
                                            WriteFormat::V83);
                    } else if (v.columns[c] >= 0) {
                        value = formatValue(v.table->rows.view(r, static_cast<std::size_t>(v.columns[c])), WriteFormat::V83);
                    } else {
                        continue;
                    }
                    if (p.values.size() == 1 && p.values.front().first == "value")
                        continue;
                    auto found = std::find_if(p.values.begin(), p.values.end(), [&](const auto& kv) { return kv.first == v.names[c]; });
                    if (found != p.values.end())
                        found->second = value;
                    else
                        p.values.emplace_back(v.names[c], value);
                    if (mode == CompareMode::Md5 && v.names[c] == "Result" && value != "pass")
                        side.md5 = 0;
                }
                if (mode == CompareMode::Summary && s == 1) {
                    for (std::size_t k = 0; k < 4; ++k) {
                        double rel = relatives[k];
                        if (!ownDiffs) {
                            const int col = v.columns[4 + k];
                            rel = col >= 0 ? str2float(cellStr(v.table->rows.view(r, static_cast<std::size_t>(col)))) : 0;
                        }
                        if (!std::isnan(rel))
                            side.maxRelative = std::max(side.maxRelative, rel);
                    }
                }
                if (mode == CompareMode::RealData && p.shapeTruthy && v.table12 && v.oneThousandth12 >= 0
                    && v.rowOf12.count(p.key)) {
                    const CellView cell = v.table12->rows.view(v.rowOf12.at(p.key), static_cast<std::size_t>(v.oneThousandth12));
                    if (const auto t = pyFloat(cell))
                        side.numbers.push_back(*t);
                } else if (mode == CompareMode::RealData && p.shapeTruthy && v.oneThousandth >= 0) {
                    if (const auto t = pyFloat(v.table->rows.view(r, static_cast<std::size_t>(v.oneThousandth))))
                        side.numbers.push_back(*t);
                }
            }
            if (p.maxMinInvalid) {
                side.na = true;
                side.invalid = true;
            }
        }
    }
    if (!anyRow)
        return;
    double precision = 0;
    if (mode == CompareMode::Md5) {
        precision = std::min(sides[0].md5, sides[1].md5);
    } else if (mode == CompareMode::Summary) {
        precision = sides[1].invalid ? 1.0 : std::min(1.0, sides[1].maxRelative);
    } else {
        auto minOf = [](const Side& side) -> std::optional<double> {
            if (side.numbers.empty() && !side.na)
                return std::nullopt;
            double m = 1.0;
            for (const double d : side.numbers)
                m = std::min(m, d);
            return m;
        };
        const auto in = minOf(sides[0]);
        const auto out = minOf(sides[1]);
        double change = 0;
        if (sides[1].na)
            change = 1;
        else if (sides[0].na)
            change = 0;
        else if (in && out)
            change = *in - *out;
        precision = std::clamp(change, 0.0, 1.0);
    }
    if (ignoredApi(node.id))
        precision = mode == CompareMode::Md5 ? 1.0 : 0.0;
    node.precision = precision;
    node.precisionIsInteger = precision == std::floor(precision);
}

void judgeNode(MsNode& node, const MsNode& bench, const Verdicts& v, CompareMode mode, WriteFormat format)
{
    if (format == WriteFormat::V83) {
        judgeNode83(node, bench, v, mode);
        return;
    }
    bool anyRow = false;
    int worst = 0; // 0 pass, 1 warning, 2 error
    for (auto* params : { &node.inputs, &node.outputs }) {
        for (MsParam& p : *params) {
            const auto it = v.rowOf.find(p.key);
            if (it == v.rowOf.end())
                continue;
            anyRow = true;
            const std::size_t r = it->second;
            for (std::size_t c = 0; c < v.columns.size(); ++c) {
                if (v.columns[c] < 0)
                    continue;
                const std::string value = formatValue(v.table->rows.view(r, static_cast<std::size_t>(v.columns[c])), format);
                auto found = std::find_if(p.values.begin(), p.values.end(), [&](const auto& kv) { return kv.first == v.names[c]; });
                if (found != p.values.end() && !(p.values.size() == 1 && p.values.front().first == "value"))
                    found->second = value;
                else if (!(p.values.size() == 1 && p.values.front().first == "value"))
                    p.values.emplace_back(v.names[c], value);
            }
            if (mode == CompareMode::Summary && !(p.values.size() == 1 && p.values.front().first == "value")) {
                const std::string benchName(v.table->rows.view(r, 1).text);
                for (auto* benchParams : { &bench.inputs, &bench.outputs })
                    for (const MsParam& b : *benchParams)
                        if (b.key == benchName)
                            if (const auto diffs = summaryDiffs(p, b, format))
                                for (std::size_t k = 0; k < 8; ++k)
                                    for (auto& kv : p.values)
                                        if (kv.first == v.names[k])
                                            kv.second = (*diffs)[k];
            }
            if (v.result >= 0) {
                const CellView res = v.table->rows.view(r, static_cast<std::size_t>(v.result));
                if (res.text == "error")
                    worst = std::max(worst, 2);
                else if (res.text == "warning")
                    worst = std::max(worst, 1);
            }
        }
    }
    if (!anyRow)
        return;
    if (ignoredApi(node.id)) {
        node.precision = mode == CompareMode::Md5 ? 1.0 : 0.0;
        node.precisionIsInteger = true;
        return;
    }
    node.precision = worst == 2 ? 1.0 : worst == 1 ? 0.5 : 0.0;
    node.precisionIsInteger = worst != 1;
}

/// _handle_api_collection_index: an Apis_Between_Modules takes the worst of its APIs (max from int 0).
void judgeCollections(MsGraph& g, bool md5Min)
{
    if (md5Min) {
        // 8.3 md5: a collection passes (1) only when all its APIs do.
        for (const std::uint32_t s : g.nodes[g.root].subs) {
            MsNode& c = g.nodes[s];
            if (c.op != kCollection)
                continue;
            double p = 1;
            for (const std::uint32_t api : c.subs)
                p = std::min(p, g.nodes[api].precision.value_or(1));
            c.precision = p;
            c.precisionIsInteger = true;
        }
        return;
    }
    for (const std::uint32_t s : g.nodes[g.root].subs) {
        MsNode& c = g.nodes[s];
        if (c.op != kCollection)
            continue;
        double p = 0;
        bool integer = true;
        for (const std::uint32_t api : c.subs) {
            const MsNode& a = g.nodes[api];
            const double v = a.precision.value_or(0);
            if (v > p) {
                p = v;
                integer = !a.precision || a.precisionIsInteger;
            }
        }
        c.precision = p;
        c.precisionIsInteger = integer;
    }
}

// ---- the db ----

using Db = detail::WritableDb;
using detail::Insert;

std::string createNodes(WriteFormat format)
{
    std::string sql = "CREATE TABLE IF NOT EXISTS tb_nodes (\n"
                      "    id TEXT PRIMARY KEY,\n    graph_id TEXT NOT NULL,\n    node_order INTEGER NOT NULL,\n"
                      "    node_name TEXT NOT NULL,\n    node_type TEXT NOT NULL,\n    up_node TEXT,\n    sub_nodes TEXT,\n"
                      "    precision_index INTEGER,\n    overflow_level TEXT,\n    micro_step_id INTEGER NOT NULL,\n"
                      "    matched_node_link TEXT,\n    stack_id TEXT,\n    parallel_merge_info TEXT,\n"
                      "    matched_distributed TEXT,\n    modified INTEGER NOT NULL,\n    input_data TEXT,\n"
                      "    output_data TEXT,\n    data_source TEXT,\n    dump_data_dir TEXT,\n    step INTEGER NOT NULL,\n"
                      "    rank INTEGER NOT NULL";
    if (format == WriteFormat::V26)
        sql += ",\n    is_distributed INTEGER";
    return sql + "\n);";
}

constexpr const char* kCreateStack = "CREATE TABLE IF NOT EXISTS tb_stack (\n    id TEXT PRIMARY KEY,\n    stack_info TEXT\n);";
constexpr const char* kCreateConfig
    = "CREATE TABLE IF NOT EXISTS tb_config (\n    id TEXT PRIMARY KEY,\n    graph_type TEXT NOT NULL,\n    task TEXT,\n"
      "    tool_tip TEXT,\n    micro_steps INTEGER,\n    overflow_check INTEGER,\n    node_colors TEXT NOT NULL,\n"
      "    rank_list TEXT NOT NULL,\n    step_list TEXT NOT NULL\n);";

/// `other`: the graph this one was compared with (its nodes are the partners), or null. `fullLinks`: msprobe's
/// matched_node_link (the partner's ancestors and name), else [parent, name] (see linkBudgetExceeded).
std::optional<std::string> insertGraph(Db& db, const MsGraph& g, const MsGraph* other, bool fullLinks, WriteFormat format)
{
    const std::string graphId = std::string(sideName(g.side)) + "_" + std::to_string(g.step) + "_" + std::to_string(g.rank);
    std::string sql = "INSERT INTO tb_nodes (id, graph_id, node_order, node_name, node_type, up_node, sub_nodes, "
                      "precision_index, overflow_level, micro_step_id, matched_node_link, stack_id, parallel_merge_info, "
                      "matched_distributed, modified, input_data, output_data, data_source, dump_data_dir, step, rank";
    sql += format == WriteFormat::V26 ? ", is_distributed) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, "
                                        "?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22)"
                                      : ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, "
                                        "?16, ?17, ?18, ?19, ?20, ?21)";
    Insert node(db.handle(), sql);
    Insert stackRow(db.handle(), "INSERT INTO tb_stack (id, stack_info) VALUES (?1, ?2)");
    if (!node.valid() || !stackRow.valid())
        return std::string("cannot prepare the inserts: ") + sqlite3_errmsg(db.handle());
    std::unordered_map<std::string, std::string> stackIds;
    std::vector<std::pair<std::string, std::string>> stacks; // (id, text) in first-seen order
    const std::vector<std::uint32_t> order = g.sortedNodes();
    for (std::size_t i = 0; i < order.size(); ++i) {
        const MsNode& n = g.nodes[order[i]];
        const std::string stackText = pyJsonList(n.stack);
        auto it = stackIds.find(stackText);
        if (it == stackIds.end()) {
            it = stackIds.emplace(stackText, graphId + "_" + std::to_string(stackIds.size())).first;
            stacks.emplace_back(it->second, stackText);
        }
        std::vector<std::string> subs;
        for (const std::uint32_t s : n.subs)
            subs.push_back(g.nodes[s].id);
        node.text(1, graphId + "_" + n.id);
        node.text(2, graphId);
        node.integer(3, static_cast<std::int64_t>(i));
        node.text(4, n.id);
        node.text(5, std::to_string(n.op));
        node.text(6, n.up >= 0 ? g.nodes[static_cast<std::size_t>(n.up)].id : std::string());
        node.text(7, subs.empty() ? std::string() : pyJsonList(subs));
        if (!n.precision)
            node.null(8);
        else if (n.precisionIsInteger)
            node.integer(8, static_cast<std::int64_t>(*n.precision));
        else
            node.real(8, *n.precision);
        node.null(9);
        node.integer(10, n.microStep.value_or(0));
        node.text(11, other && n.partner >= 0 && static_cast<std::size_t>(n.partner) < other->nodes.size()
                          ? other->pathJson(static_cast<std::uint32_t>(n.partner), !fullLinks)
                          : std::string("[]"));
        node.text(12, it->second);
        node.text(13, std::string());
        node.text(14, "{}");
        node.integer(15, n.modified ? 1 : 0);
        node.text(16, pyJsonParams(n.inputs));
        node.text(17, pyJsonParams(n.outputs));
        node.text(18, std::string(sideName(g.side)));
        if (g.dataPath)
            node.text(19, *g.dataPath);
        else
            node.null(19);
        node.integer(20, g.step);
        node.integer(21, g.rank);
        if (format == WriteFormat::V26)
            node.integer(22, n.id.rfind("Distributed", 0) == 0 ? 1 : 0);
        if (!node.run())
            return "cannot insert node " + n.id + ": " + sqlite3_errmsg(db.handle());
    }
    for (const auto& [id, text] : stacks) {
        stackRow.text(1, id);
        stackRow.text(2, text);
        if (!stackRow.run())
            return "cannot insert stack " + id + ": " + sqlite3_errmsg(db.handle());
    }
    return std::nullopt;
}

std::string pyIntList(const std::vector<std::int64_t>& list)
{
    std::string out = "[";
    for (std::size_t i = 0; i < list.size(); ++i)
        out += (i ? ", " : "") + std::to_string(list[i]);
    return out + "]";
}

struct ConfigRow
{
    bool compare = false;
    std::string task;
    std::optional<std::string> toolTip;
    std::int64_t microSteps = 1;
    bool overflowCheck = false;
    std::string nodeColors = "null";
    std::vector<std::int64_t> rankList;
    std::vector<std::int64_t> stepList;
};

std::optional<std::string> insertConfig(Db& db, const ConfigRow& c)
{
    Insert row(db.handle(), "INSERT OR IGNORE INTO tb_config (id, graph_type, task, tool_tip, micro_steps, "
                            "overflow_check, node_colors, rank_list, step_list) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)");
    if (!row.valid())
        return std::string("cannot prepare tb_config: ") + sqlite3_errmsg(db.handle());
    row.text(1, "1");
    row.text(2, c.compare ? "compare" : "build");
    row.text(3, c.task);
    if (c.toolTip)
        row.text(4, *c.toolTip);
    else
        row.null(4);
    row.integer(5, c.microSteps);
    row.integer(6, c.overflowCheck ? 1 : 0);
    row.text(7, c.nodeColors);
    row.text(8, pyIntList(c.rankList));
    row.text(9, pyIntList(c.stepList));
    if (!row.run())
        return std::string("cannot insert tb_config: ") + sqlite3_errmsg(db.handle());
    return std::nullopt;
}

std::string modeTask(CompareMode mode)
{
    switch (mode) {
    case CompareMode::RealData: return "all";
    case CompareMode::Summary: return "summary";
    case CompareMode::Md5: return "md5";
    }
    return "";
}

std::string toolTipOf(CompareMode mode)
{
    switch (mode) {
    case CompareMode::RealData: return texts::kToolTipAll;
    case CompareMode::Summary: return texts::kToolTipSummary;
    case CompareMode::Md5: return texts::kToolTipMd5;
    }
    return {};
}

std::string nodeColorsOf(CompareMode mode, WriteFormat format)
{
    const bool v26 = format == WriteFormat::V26;
    switch (mode) {
    case CompareMode::RealData: return v26 ? texts::kNodeColorsV26All : texts::kNodeColorsV83All;
    case CompareMode::Summary: return v26 ? texts::kNodeColorsV26Summary : texts::kNodeColorsV83Summary;
    case CompareMode::Md5: return v26 ? texts::kNodeColorsV26Md5 : texts::kNodeColorsV83Md5;
    }
    return "null";
}

/// graph.data_path: 8.x the dump's dump_data_dir verbatim; 26.x the folder beside construct.json when the recorded
/// one lies elsewhere. NULL when the dump has none (statistics, md5).
std::optional<std::string> dataPathOf(const dump::RankDump& rank, WriteFormat format)
{
    const dump::DumpHeader& h = rank.dump->header;
    if (!h.dumpDataDir)
        return std::nullopt;
    if (format == WriteFormat::V83 || h.dumpDataDir->empty())
        return h.dumpDataDir;
    const std::string base = rank.location.dir.string();
    if (fs::path(*h.dumpDataDir).parent_path().string() == base)
        return h.dumpDataDir;
    return (rank.location.dir / "dump_tensor_data").string();
}

/// Names per matched node beyond which matched_node_link is written short. Real models nest a few dozen levels;
/// msprobe's full chains make the db grow as nodes x depth (3,000 nested modules: a 970 MB db, 20,000: about 24 GB).
constexpr std::uint64_t kMaxLinkNamesPerNode = 64;
constexpr std::uint64_t kLinkNamesAlwaysFull = 1'000'000;

/// Whether the full matched_node_link lists of a compared pair would hold more than kMaxLinkNamesPerNode names per node
/// (and more than kLinkNamesAlwaysFull in all): then every link of the pair is written as [parent, name], the form
/// tb_graph_ascend 26 writes for a manual match (its readers take the last name), and the run says so. Linear.
bool linkBudgetExceeded(const MsGraph& n, const MsGraph& b)
{
    const auto depthN = n.depths();
    const auto depthB = b.depths();
    std::uint64_t names = 0;
    for (const MsNode& x : n.nodes)
        if (x.partner >= 0)
            names += depthB[static_cast<std::size_t>(x.partner)] + 1;
    for (const MsNode& y : b.nodes)
        if (y.partner >= 0)
            names += depthN[static_cast<std::size_t>(y.partner)] + 1;
    const std::uint64_t nodes = n.nodes.size() + b.nodes.size();
    return names > std::max(kLinkNamesAlwaysFull, kMaxLinkNamesPerNode * nodes);
}

/// What the compare pipeline gives one (step, rank) of the graph.
struct ComparedPair
{
    std::shared_ptr<const compare::CompareTable> table;
    std::shared_ptr<const compare::CompareTable> table12; ///< 8.3 real data: msprobe 1.2's table (MaxRelativeErr)
};

/**
 * @brief The compare of one pair through the one pipeline (compare::comparePair: the load step, the tensor
 * resolver and their refusals), never a compare of the graph's own.
 *
 * The nodes the graph linked under other names (a fuzzy match of a shifted call, a match file) are given to it as
 * manual matches, so each row compares what msprobe's graph compares: a node with the node it is linked to. A pair
 * the compare refuses (a cut .pt, a data_name leaving the dump, a tensor folder linked elsewhere) refuses the graph:
 * its first error is the error, every finding goes to options.findings.
 */
Result<ComparedPair> comparePairOf(const Job& job, const MsGraph& n, const MsGraph& b,
                                   const std::map<std::uint32_t, std::uint32_t>& pairs, const GraphWriteOptions& options)
{
    compare::PlannedPair planned;
    planned.npu = job.npu;
    planned.bench = *job.bench;
    compare::MappingFiles files;
    VisConfig linked;
    linked.path = "the graph's node matching";
    for (const auto& [i, j] : pairs)
        if (n.nodes[i].id != b.nodes[j].id)
            linked.entries.push_back({ n.nodes[i].id, b.nodes[j].id });
    if (!linked.entries.empty())
        files.matches = linked;
    compare::JobOptions jobOptions;
    jobOptions.profile = Profile::Msprobe26;
    jobOptions.threads = options.threads;
    auto outcome = compare::comparePair(planned, files, jobOptions);
    if (!outcome)
        return outcome.error();
    if (options.findings)
        options.findings->insert(options.findings->end(), outcome->inputDiagnostics.begin(),
                                 outcome->inputDiagnostics.end());
    for (const Diagnostic& d : outcome->inputDiagnostics)
        if (d.severity == Severity::Error)
            return d;
    if (outcome->refused || !outcome->table)
        return makeError("graph.input", SourceLocation { job.npu.dumpFile.string(), std::nullopt, 0, 0 },
                         "the compare refuses this pair");
    ComparedPair out;
    out.table = outcome->table;
    if (options.format == WriteFormat::V83 && out.table->mode == CompareMode::RealData) {
        const dump::DumpFile& npuDump = *outcome->loaded->npu->dump;
        const dump::DumpFile& benchDump = *outcome->loaded->bench->dump;
        compare::NameMappings mappings;
        compare::ManualMatches manual;
        manual.path = linked.path;
        for (const MatchEntry& e : linked.entries)
            if (npuDump.find(e.key) && benchDump.find(e.value))
                manual.pairs.emplace_back(e.key, e.value);
        if (!manual.pairs.empty())
            mappings.manual = std::move(manual);
        compare::CompareOptions co;
        co.threads = options.threads;
        co.mappings = &mappings;
        co.npuTensors = compare::tensorResolverOf(npuDump);
        co.benchTensors = compare::tensorResolverOf(benchDump);
        auto table12 = compare::compareDumps(npuDump, benchDump, co);
        if (!table12)
            return table12.error();
        out.table12 = *table12;
    }
    return out;
}

} // namespace

Result<GraphInput> readGraphInputJson(const fs::path& path)
{
    const SourceLocation where { path.string(), std::nullopt, 0, 0 };
    auto text = readTextFile(path);
    if (!text)
        return text.error();
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(*text);
    } catch (const nlohmann::json::parse_error& e) {
        std::string message = e.what();
        if (const auto colon = message.rfind(": "); colon != std::string::npos)
            message = message.substr(colon + 2);
        return makeError("graph.input", locate(*text, e.byte > 1 ? e.byte - 1 : 0, path.string()), "not valid JSON: " + message);
    } catch (const nlohmann::json::exception& e) { // a number out of range (1e99999), ...
        return makeError("graph.input", where, std::string("not valid JSON: ") + e.what());
    }
    if (!j.is_object())
        return makeError("graph.input", where, "not a JSON object (msprobe's graph input: {\"npu_path\": ..., \"bench_path\": ...})");
    const auto npu = j.find("npu_path");
    if (npu == j.end() || !npu->is_string())
        return makeError("graph.input", where, "\"npu_path\" (a path) is required");
    GraphInput input;
    input.npu = npu->get<std::string>();
    if (const auto bench = j.find("bench_path"); bench != j.end() && !bench->is_null()) {
        if (!bench->is_string())
            return makeError("graph.input", where, "\"bench_path\" must be a path");
        input.bench = fs::path(bench->get<std::string>());
    }
    return input;
}

Result<GraphWriteResult> writeGraphDb(const fs::path& npu, const std::optional<fs::path>& bench, const fs::path& outDir,
                                      const GraphWriteOptions& options)
{
    auto plan = planJobs(npu, bench);
    if (!plan)
        return plan.error();
    GraphWriteResult result;
    result.notes = plan->notes;
    result.notCompared = plan->notCompared;

    struct Built
    {
        MsGraph npu;
        std::optional<MsGraph> bench;
        std::int64_t microSteps = 1;
        std::optional<CompareMode> mode;
        bool fullLinks = true;
    };
    std::vector<Built> built;
    for (const Job& job : plan->jobs) {
        auto rankN = dump::loadRank(job.npu);
        if (!rankN)
            return rankN.error();
        for (const Diagnostic& d : (*rankN)->diagnostics)
            if (d.severity == Severity::Error)
                return d;
        std::shared_ptr<const dump::RankDump> rankB;
        std::optional<CompareMode> mode;
        if (job.bench) {
            auto loaded = dump::loadRank(*job.bench);
            if (!loaded)
                return loaded.error();
            for (const Diagnostic& d : (*loaded)->diagnostics)
                if (d.severity == Severity::Error)
                    return d;
            rankB = *loaded;
            auto detected = compare::msprobe26::detectMode(*(*rankN)->dump, *rankB->dump);
            if (!detected)
                return detected.error();
            mode = *detected;
        }
        BuildOptions bo;
        bo.format = options.format;
        bo.md5Mode = mode == CompareMode::Md5;
        bo.flatWithoutConstruct = true;
        auto gn = buildMsGraph(**rankN, bo);
        if (!gn)
            return gn.error();
        Built b;
        b.npu = std::move(*gn);
        b.npu.side = Side::Npu;
        b.npu.step = job.step;
        b.npu.rank = job.rank;
        b.npu.dataPath = dataPathOf(**rankN, options.format);
        if (b.npu.flat)
            result.notes.push_back(job.npu.dir.string() + ": construct.json is empty (a level L1 dump); msprobe writes "
                                   "no graph for it. Written instead: every dump entry directly under DefaultModel in "
                                   "dump order, consecutive APIs grouped in Apis_Between_Modules.N");
        if (rankB) {
            auto gb = buildMsGraph(*rankB, bo);
            if (!gb)
                return gb.error();
            b.bench = std::move(*gb);
            b.bench->side = Side::Bench;
            b.bench->step = job.step;
            b.bench->rank = job.rank;
            b.bench->dataPath = dataPathOf(*rankB, options.format);
            if (b.bench->flat)
                result.notes.push_back(job.bench->dir.string() + ": construct.json is empty (a level L1 dump); built "
                                       "flat as on the NPU side");
            // The graphs hold what they need of the dumps: the compare pipeline reads the dumps itself.
            rankN->reset();
            rankB.reset();
            auto pairs = options.fuzzy ? matchFuzzy(b.npu, *b.bench, options.format)
                                       : matchExact(b.npu, *b.bench, options.format);
            if (options.matches) {
                auto more = matchByFile(b.npu, *b.bench, *options.matches, result.notes);
                pairs.insert(pairs.end(), more.begin(), more.end());
            }
            // Each NPU node is judged once, with the bench node it is linked to in the end (a match file may have
            // re-paired a node matched by name).
            std::map<std::uint32_t, std::uint32_t> finalPairs;
            for (const auto& [i, j] : pairs)
                if (b.npu.nodes[i].partner == static_cast<std::int32_t>(j))
                    finalPairs[i] = j;
            auto compared = comparePairOf(job, b.npu, *b.bench, finalPairs, options);
            if (!compared)
                return compared.error();
            const std::shared_ptr<const compare::CompareTable> table = compared->table;
            Verdicts v;
            v.table = table;
            for (std::size_t r = 0; r < table->rows.size(); ++r) {
                const CellView name = table->rows.view(r, 0);
                v.rowOf.emplace(std::string(name.text), r);
            }
            v.names = indexColumns(*mode, options.format);
            for (const std::string& c : v.names)
                v.columns.push_back(table->column(c));
            v.result = table->column("Result");
            v.npuMd5 = table->column("NPU MD5");
            v.benchMd5 = table->column("BENCH MD5");
            v.oneThousandth = table->column("One Thousandth Err Ratio");
            if (options.format == WriteFormat::V83 && *mode == CompareMode::RealData) {
                v.table12 = compared->table12;
                for (std::size_t r = 0; r < v.table12->rows.size(); ++r)
                    v.rowOf12.emplace(std::string(v.table12->rows.view(r, 0).text), r);
                for (const std::string& c : v.names)
                    v.columns12.push_back(c == "MaxRelativeErr" || c == "One Thousandth Err Ratio"
                                                  || c == "Five Thousandths Err Ratio"
                                              ? v.table12->column(c)
                                              : -1);
                v.oneThousandth12 = v.table12->column("One Thousandth Err Ratio");
            }
            for (const auto& [i, j] : finalPairs)
                judgeNode(b.npu.nodes[i], b.bench->nodes[j], v, *mode, options.format);
            judgeCollections(b.npu, options.format == WriteFormat::V83 && *mode == CompareMode::Md5);
            b.mode = mode;
            b.microSteps = b.npu.pageByMicroStep(&*b.bench);
            if (linkBudgetExceeded(b.npu, *b.bench)) {
                b.fullLinks = false;
                result.notes.push_back(job.npu.dir.string() + ": the model nests so deep that msprobe's matched_node_link "
                                       "lists (every ancestor of the partner) would hold more than "
                                       + std::to_string(kMaxLinkNamesPerNode) + " names per node; written as [parent, "
                                       "node] instead, the form tb_graph_ascend 26 writes for a manual match");
            }
        } else {
            b.microSteps = b.npu.pageByMicroStep(nullptr);
        }
        built.push_back(std::move(b));
    }

    // The db: a fresh temporary file in OUT (util/outputfile's createTempBeside), claimed under build_/compare_{ts}.vis.db
    // (then _1, _2 ...) by util/outputfile's claimFreeName: never replacing a file, a symlink at the name is taken.
    // Every message names the db's final name, never the temporary one.
    const bool compareRun = bench.has_value();
    const std::string stamp = options.timestamp.empty() ? localTimestamp() : options.timestamp;
    const std::string stem = std::string(compareRun ? "compare_" : "build_") + stamp;
    // OUT is made only now: a refused run leaves nothing behind, not even the folder.
    std::error_code ec;
    fs::create_directories(outDir, ec);
    if (!fs::is_directory(outDir))
        return makeError("graph.output", SourceLocation { outDir.string(), std::nullopt, 0, 0 }, "cannot create the output folder");
    auto written = detail::writeNewDb(
        outDir, stem, ".vis.db", detail::DbName::FreeName,
        [&](Db& db) -> std::optional<std::string> {
            for (const std::string& sql : { createNodes(options.format), std::string(kCreateStack), std::string(kCreateConfig) })
                if (auto e = db.exec(sql))
                    return e;
            if (auto e = db.exec("BEGIN"))
                return e;
            ConfigRow config;
            config.compare = compareRun;
            config.rankList = plan->rankList;
            config.stepList = plan->stepList;
            config.overflowCheck = options.overflowCheck;
            config.microSteps = built.empty() ? 1 : built.front().microSteps;
            if (!built.empty() && built.front().mode) {
                config.task = modeTask(*built.front().mode);
                config.toolTip = toolTipOf(*built.front().mode);
                config.nodeColors = nodeColorsOf(*built.front().mode, options.format);
            }
            for (const Built& b : built) {
                if (auto e = insertGraph(db, b.npu, b.bench ? &*b.bench : nullptr, b.fullLinks, options.format))
                    return e;
                ++result.graphs;
                if (b.bench) {
                    if (auto e = insertGraph(db, *b.bench, &b.npu, b.fullLinks, options.format))
                        return e;
                    ++result.graphs;
                }
            }
            if (auto e = insertConfig(db, config))
                return e;
            // msprobe's post_process_db indexes.
            std::vector<std::pair<std::string, std::string>> indexes {
                { "index1", "step, rank, data_source, up_node, node_order" },
                { "index2", "step, rank, data_source, node_name" },
                { "index3", "step, rank, data_source, node_order" },
                { "index4", "step, rank, node_order" },
                { "index5", "step, rank, micro_step_id, node_order" },
                { "index6", "step, rank, modified, matched_node_link" },
            };
            if (options.format == WriteFormat::V26)
                indexes.emplace_back("index7", "is_distributed");
            for (const auto& [name, columns] : indexes)
                if (auto e = db.exec("CREATE INDEX IF NOT EXISTS " + name + " ON tb_nodes (" + columns + ");"))
                    return e;
            if (auto e = db.exec("COMMIT"))
                return e;
            // msprobe's files are in WAL mode (header bytes 18/19 = 2); switching here and closing leaves no -wal file.
            if (auto e = db.exec("PRAGMA journal_mode=WAL"))
                return e;
            return std::nullopt;
        },
        "graph.output");
    if (!written)
        return written.error();
    result.written = *written;
    return result;
}

} // namespace probescope::graph
