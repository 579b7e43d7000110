// SPDX-License-Identifier: Apache-2.0
// msprobe 26 `overflow_check` (overflow_check/analyzer.py, graph.py, utils.py) over dumps read by the load step,
// on the communication graph `compare -da` uses (core/compare/msprobe26/commgraph.h).
#include "core/overflow/overflowcheck.h"

#include "core/compare/msprobe26/commgraph.h"
#include "core/compare/match/mappingutil.h"
#include "core/compare/table/pytext.h"
#include "core/compare/msprobe26/pyjsonwriter.h"
#include "core/dump/dumplayout.h"
#include "core/dump/loadreport.h"
#include "core/util/outputfile.h"
#include "core/util/parallel.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <deque>
#include <functional>
#include <limits>
#include <set>
#include <unordered_map>
#include <unordered_set>

namespace probescope::overflow {

namespace {

namespace fs = std::filesystem;
using compare::msprobe26::CommConnection;
using compare::msprobe26::CommGraph;
using compare::msprobe26::CommGraphRules;
using compare::msprobe26::CommNode;
using compare::msprobe26::CommNodeRef;
using compare::msprobe26::CommNodeType;
using compare::msprobe26::equalsRank;
using compare::msprobe26::PyJsonWriter;
using compare::msprobe26::rankNodesJson;
using dump::JsonType;
using dump::JsonValue;

/// is_communication_op: a "Distributed." name holding a communication keyword.
bool isCommunicationOp(std::string_view name)
{
    return name.starts_with("Distributed.") && compare::msprobe26::hasCommunicationKeyword(name);
}

bool isIgnoredOp(std::string_view name)
{
    return name.find("Torch.empty") != std::string_view::npos || name.find("Torch.fill") != std::string_view::npos;
}

/// str(value).lower() in OVERFLOW_LIST ("nan", "inf", "-inf", each also with a tab).
bool isOverflowValue(std::optional<JsonValue> v)
{
    if (!v)
        return false;
    if (v->type() == JsonType::Double)
        return !std::isfinite(v->asDouble());
    if (!v->isString())
        return false;
    std::string s(v->asString());
    if (s.size() > 5)
        return false;
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return s == "nan" || s == "inf" || s == "-inf" || s == "nan\t" || s == "inf\t" || s == "-inf\t";
}

/// check_item_anomaly: a top-level dict item of a list (or of a dict's values) with Max or Min NaN/Inf.
bool itemAnomaly(std::optional<JsonValue> param)
{
    if (!param || !(param->isArray() || param->isObject()))
        return false;
    for (std::uint32_t i = 0; i < param->size(); ++i) {
        const JsonValue item = param->at(i);
        if (item.isObject() && (isOverflowValue(item.find("Max")) || isOverflowValue(item.find("Min"))))
            return true;
    }
    return false;
}

std::optional<JsonValue> member(JsonValue op, std::string_view key)
{
    return op.isObject() ? op.find(key) : std::nullopt;
}

/// Where an op's dumped data holds NaN/Inf: all the search asks of it.
struct OpFlags
{
    bool input = false;     ///< input, input_args or input_kwargs
    bool output = false;    ///< output
    bool commInput = false; ///< CommunicationNode.input_has_nan_inf: input_args or input_kwargs (not "input")
};

OpFlags flagsOf(JsonValue data)
{
    OpFlags f;
    f.commInput = itemAnomaly(member(data, "input_args")) || itemAnomaly(member(data, "input_kwargs"));
    f.input = f.commInput || itemAnomaly(member(data, "input"));
    f.output = itemAnomaly(member(data, "output"));
    return f;
}

/// DataNode: one op of one rank's dump, without its data (issue 37: the search keeps no rank's dump; the result
/// reads the found op's data again).
struct OpNode
{
    std::string name;
    int rank = 0;
    OpFlags flags;
    int layer = 0;
    int subLayer = 0;

    bool inputAnomaly() const { return flags.input; }
    bool outputAnomaly() const { return flags.output; }
    /// is_anomaly: not ignored, clean inputs, NaN/Inf output.
    bool anomaly() const { return !isIgnoredOp(name) && !inputAnomaly() && outputAnomaly(); }
    bool commInputAnomaly() const { return flags.commInput; }
};

/// The value of an op in a rank's dump as opsOf gives it (a repeated key: its last value).
std::optional<JsonValue> opData(const dump::RankDump& rank, std::string_view name)
{
    std::optional<JsonValue> out;
    for (const dump::Entry& e : rank.dump->entries) {
        if (e.key == name)
            out = e.value;
    }
    return out;
}

/// The ops of a rank's dump in file order, a repeated key collapsed as Python's dict does (last value, first place).
std::vector<std::pair<std::string_view, JsonValue>> opsOf(const dump::RankDump& rank)
{
    std::vector<std::pair<std::string_view, JsonValue>> out;
    out.reserve(rank.dump->entries.size());
    std::unordered_map<std::string_view, std::size_t> index;
    for (const dump::Entry& e : rank.dump->entries) {
        const auto [it, fresh] = index.emplace(e.key, out.size());
        if (fresh)
            out.emplace_back(e.key, e.value);
        else
            out[it->second].second = e.value;
    }
    return out;
}

bool truthy(std::optional<JsonValue> v)
{
    return v && compare::pyTruthy(*v);
}

/// Adds a dumped value to a Python set of ranks: ints (and values equal to one) are ranks, anything else
/// only makes the set non-empty.
void addRankValue(CommConnection& c, std::optional<JsonValue> v)
{
    if (v && v->isInt()) {
        c.ranks.insert(v->asInt());
    } else if (v && v->isBool()) {
        c.ranks.insert(v->asBool() ? 1 : 0);
    } else if (v && v->type() == JsonType::Double && std::isfinite(v->asDouble()) && std::trunc(v->asDouble()) == v->asDouble()
               && std::fabs(v->asDouble()) < 9e18) {
        c.ranks.insert(static_cast<long long>(v->asDouble()));
    } else {
        c.otherValues = true;
    }
}

CommNodeType opposite(CommNodeType t)
{
    return t == CommNodeType::Src ? CommNodeType::Dst : t == CommNodeType::Dst ? CommNodeType::Src : CommNodeType::Link;
}

/// DIRECTED_API's own direction of an API.
std::optional<CommNodeType> directedType(const std::string& api)
{
    static const std::unordered_map<std::string, CommNodeType> directed = {
        { "send", CommNodeType::Dst },      { "recv", CommNodeType::Src },    { "isend", CommNodeType::Dst },
        { "irecv", CommNodeType::Src },     { "broadcast", CommNodeType::Src }, { "scatter", CommNodeType::Src },
        { "gather", CommNodeType::Dst },    { "send_object_list", CommNodeType::Dst },
        { "recv_object_list", CommNodeType::Src },
    };
    const auto it = directed.find(api);
    return it == directed.end() ? std::nullopt : std::optional<CommNodeType>(it->second);
}

/// _resolve_type: src/src_group kwarg, then dst/dst_group, then a directed API's int positional argument. The
/// values are compared with the int rank, so the root is typed right (unlike -da's table text).
CommNodeType resolveType(JsonValue data, int rank, const std::string& api)
{
    const auto kwargs = member(data, "input_kwargs");
    const auto kwarg = [&](std::string_view key) { return kwargs && kwargs->isObject() ? kwargs->find(key) : std::nullopt; };
    for (const char* key : { "src", "src_group" }) {
        if (const auto v = kwarg(key); truthy(v))
            return equalsRank(v->isObject() ? v->find("value") : std::nullopt, rank) ? CommNodeType::Src : CommNodeType::Dst;
    }
    for (const char* key : { "dst", "dst_group" }) {
        if (const auto v = kwarg(key); truthy(v))
            return equalsRank(v->isObject() ? v->find("value") : std::nullopt, rank) ? CommNodeType::Dst : CommNodeType::Src;
    }
    if (const auto own = directedType(api)) {
        const auto args = member(data, "input_args");
        if (args && args->isArray()) {
            for (std::uint32_t i = 0; i < args->size(); ++i) {
                const JsonValue item = args->at(i);
                // msprobe calls item.get() on every item: a None item (recv's tensor) crashes it; we pass over it.
                if (!item.isObject())
                    continue;
                const auto type = item.find("type");
                if (type && type->isString() && type->asString() == "int")
                    return equalsRank(item.find("value"), rank) ? *own : opposite(*own);
            }
        }
    }
    return CommNodeType::Link;
}

/// find_connected_nodes.
CommConnection connectionOf(JsonValue data, const std::string& api, CommNodeType nodeType)
{
    CommConnection c;
    const auto kwargs = member(data, "input_kwargs");
    const auto kwarg = [&](std::string_view key) { return kwargs && kwargs->isObject() ? kwargs->find(key) : std::nullopt; };
    for (const auto& keys : { std::pair { "dst", "dst_group" }, std::pair { "src", "src_group" } }) {
        for (const char* key : { keys.first, keys.second }) {
            if (const auto v = kwarg(key)) {
                if (truthy(v))
                    addRankValue(c, v->isObject() ? v->find("value") : std::nullopt);
                break;
            }
        }
    }
    if (c.empty()) {
        const auto args = member(data, "input_args");
        if (args && args->isArray()) {
            for (std::uint32_t i = 0; i < args->size(); ++i) {
                const JsonValue item = args->at(i);
                const auto type = item.isObject() ? item.find("type") : std::nullopt;
                if (type && type->isString() && type->asString() == "int")
                    addRankValue(c, item.find("value"));
            }
        }
    }
    if (const auto group = kwarg("group"); truthy(group) && group->isObject()) {
        if (const auto ranks = group->find("group_ranks"); ranks && ranks->isArray()) {
            for (std::uint32_t i = 0; i < ranks->size(); ++i)
                addRankValue(c, ranks->at(i));
        }
    }
    c.api = "Distributed." + compare::msprobe26::peerApi(api);
    c.type = opposite(nodeType);
    return c;
}

/// A rank's dump again, for the result: the search keeps no dump (issue 37), the found ops' data is read anew.
using RankSource = std::function<Result<std::shared_ptr<const dump::RankDump>>(int rank)>;

class Analyzer : public compare::msprobe26::CommSearch
{
public:
    Analyzer(RankSource source, std::vector<std::string>* log)
        : CommSearch("anomaly", log, false)
        , m_source(std::move(source))
        , m_graph(rules())
    {
    }

    /**
     * @brief Walks one rank's dump (CommSearch::addRank). Of it the search keeps the names and NaN/Inf flags of
     * the ops it may report, its communication nodes (peers and direction computed now) and its first op with a
     * NaN/Inf output (the chain); the dump can go after the call, so a step of 10,000 ranks is read in chunks.
     */
    void addDump(int rank, const dump::RankDump& dump)
    {
        m_current = &dump;
        const auto ops = opsOf(dump);
        addRank(rank, ops);
        m_firstOutputAnomaly.erase(rank);
        for (const auto& [name, data] : ops) {
            if (!isIgnoredOp(name) && itemAnomaly(member(data, "output"))) {
                m_firstOutputAnomaly.emplace(rank, std::string(name));
                break;
            }
        }
        m_current = nullptr;
    }

    /// run(), and the error of reading a found op's dump again (it changed or went while the search ran).
    Result<std::optional<std::string>> analyse()
    {
        auto result = run();
        if (m_resultError)
            return *m_resultError;
        return result;
    }

    /// Each rank's first op (in dump order, not ignored) whose output holds a NaN/Inf: what anomalyChain finds.
    const std::map<int, std::string>& firstOutputAnomaly() const { return m_firstOutputAnomaly; }

    /// The nodes found by run(), as (rank, op name).
    std::vector<std::pair<int, std::string>> foundNodes() const
    {
        std::vector<std::pair<int, std::string>> out;
        for (const std::size_t f : m_found)
            out.emplace_back(m_data[f].rank, m_data[f].name);
        return out;
    }

private:
    CommGraphRules rules()
    {
        CommGraphRules r;
        r.prefixMatch = false;
        r.layerOverflowFix = false;
        r.onlyGroupedNodesStartGroups = true;
        r.unconnected = [this](const CommNodeRef& node) {
            say("Cannot find connected communication node for \"" + node.id() + "\".");
        };
        return r;
    }

    bool isCommunicationOp(std::string_view name) const override { return overflow::isCommunicationOp(name); }
    bool isIgnoredOp(std::string_view name) const override { return overflow::isIgnoredOp(name); }
    CommGraph& graph() override { return m_graph; }

    Result<std::optional<std::size_t>> computeNode(int rank, std::string_view name, JsonValue data, int subLayer,
                                                   bool) override
    {
        OpNode op { std::string(name), rank, flagsOf(data), 0, subLayer };
        if (!op.anomaly())
            return std::optional<std::size_t> {};
        m_data.push_back(std::move(op));
        return std::optional<std::size_t>(m_data.size() - 1);
    }

    Result<CommNode> commNode(int rank, std::string_view name, JsonValue data, int subLayer) override
    {
        const auto parts = compare::splitDots(name);
        if (parts.size() < 4) {
            const dump::Entry* entry = m_current->dump->find(name);
            return makeError("overflow.op-name",
                             SourceLocation { m_current->dump->path.string(), entry ? std::optional(entry->offset) : std::nullopt,
                                              entry ? entry->line : 0u, 0 },
                             "invalid op_name: " + std::string(name)
                                 + " (msprobe 26 stops with RuntimeError: a communication op needs 4 dot-separated parts)");
        }
        const OpFlags flags = flagsOf(data);
        CommNode node;
        node.name = std::string(name);
        node.api = parts[1];
        node.callCount = parts[2];
        node.keep = flags.commInput || flags.output; // has_nan_inf
        if (node.keep) {
            m_data.push_back(OpNode { node.name, rank, flags, 0, subLayer });
            node.dataIndex = m_data.size() - 1;
        } else {
            // Neither anomalous nor with NaN/Inf inputs, so never reported: all such nodes share one clean data node
            // (one a communication op of every rank was most of the search's memory at 10,000 ranks, issue 37).
            node.dataIndex = cleanCommunication();
        }
        node.type = resolveType(data, rank, node.api);
        node.connection = connectionOf(data, node.api, node.type); // while its dump is at hand
        return node;
    }

    /// The data node of every communication op without NaN/Inf (only its flags, all clear, are read).
    std::size_t cleanCommunication()
    {
        if (!m_clean) {
            m_data.push_back(OpNode {});
            m_clean = m_data.size() - 1;
        }
        return *m_clean;
    }

    /// _search_first_anomaly: analyze_anomaly_in_group takes the compute ops of src/link members whose inputs hold
    /// NaN/Inf, then the members that are anomalous themselves; the first round with any keeps one node, the first
    /// of the minimal (layer, sub_layer).
    void searchGraph() override
    {
        m_graph.search(
            [&](const std::vector<CommNodeRef>& group) {
                for (const CommNodeRef& m : group) {
                    if ((m.type() == CommNodeType::Src || m.type() == CommNodeType::Link) && m_data[m.dataIndex()].commInputAnomaly()) {
                        for (const std::size_t op : m.computeOps()) {
                            m_data[op].layer = m.layer();
                            m_found.push_back(op);
                        }
                    }
                }
                for (const CommNodeRef& m : group) {
                    if (m_data[m.dataIndex()].anomaly()) {
                        m_data[m.dataIndex()].layer = m.layer();
                        m_found.push_back(m.dataIndex());
                    }
                }
            },
            [&] { return !m_found.empty(); });
        if (m_found.empty())
            return;
        std::size_t best = m_found.front();
        for (const std::size_t f : m_found) {
            if (std::pair { m_data[f].layer, m_data[f].subLayer } < std::pair { m_data[best].layer, m_data[best].subLayer })
                best = f;
        }
        m_found = { best };
    }

    /// find_complete_construct: the parent chain, root first. msprobe's `seen` starts as the set of the op name's
    /// characters, so only a repeated parent ends a cycle; a list value is read as its first item.
    std::vector<std::string> constructChain(const dump::RankDump& rank, const std::string& op) const
    {
        std::vector<std::string> chain { op };
        if (!rank.construct.present)
            return chain;
        std::set<char> chars(op.begin(), op.end());
        std::unordered_set<std::string> seen;
        std::string current = op;
        for (std::size_t guard = 0; guard < 1'000'000; ++guard) {
            const std::string* parent = rank.construct.parent(current);
            if (!parent || parent->empty())
                break;
            if ((parent->size() == 1 && chars.count((*parent)[0])) || seen.count(*parent))
                break;
            chain.insert(chain.begin(), *parent);
            seen.insert(*parent);
            current = *parent;
        }
        return chain;
    }

    std::string resultJson() override
    {
        std::map<int, std::vector<std::size_t>> byRank; // ascending rank keys (msprobe: os.listdir order)
        for (const std::size_t f : m_found)
            byRank[m_data[f].rank].push_back(f);
        // The found ops' ranks read again (usually one): their data, construct and stack.
        std::map<int, std::shared_ptr<const dump::RankDump>> dumps;
        std::unordered_map<std::size_t, JsonValue> data;
        for (const auto& [rank, found] : byRank) {
            auto dump = m_source(rank);
            if (!dump) {
                m_resultError = dump.error();
                return {};
            }
            for (const std::size_t f : found) {
                const auto value = opData(**dump, m_data[f].name);
                if (!value) {
                    m_resultError = makeError("overflow.changed", fileLocation((*dump)->dump->path),
                                              "the op " + m_data[f].name + " is no longer in this dump (it changed while being read)");
                    return {};
                }
                data.emplace(f, *value);
            }
            dumps.emplace(rank, *dump);
        }
        return rankNodesJson(byRank, [&](PyJsonWriter& w, std::size_t f, int depth) {
            nodeInfo(w, m_data[f], data.at(f), *dumps.at(m_data[f].rank), depth);
        });
    }

    void nodeInfo(PyJsonWriter& w, const OpNode& node, JsonValue nodeData, const dump::RankDump& rank, int depth) const
    {
        std::string& out = w.text();
        const auto field = [&](const char* key, const char* empty, bool last) {
            w.newline(depth + 2);
            w.string(key);
            out += ": ";
            if (const auto v = member(nodeData, key))
                w.value(v, depth + 2);
            else
                out += empty;
            if (!last)
                out += ',';
        };
        compare::msprobe26::openResultNode(w, node.name, depth);
        if (node.name.find("forward") != std::string::npos) {
            field("input_args", "[]", false);
            field("input_kwargs", "{}", false);
        } else {
            field("input", "[]", false);
        }
        field("output", "{}", true);
        w.newline(depth + 1);
        out += "},";
        w.newline(depth + 1);
        out += "\"construct_info\": ";
        w.stringList(constructChain(rank, node.name), depth + 1);
        out += ',';
        w.newline(depth + 1);
        out += "\"stack_info\": ";
        // 26 stack.json: the stack of the entry naming the op. msprobe gives {} for the 1.2 form {op: [lines]}
        // (it substring-tests the first line); we give the op's lines there too (docs/overflow-check.md).
        const std::vector<std::string>* frames = rank.stack.present ? rank.stack.frames(node.name) : nullptr;
        if (frames)
            w.stringList(*frames, depth + 1);
        else
            out += "{}";
        w.newline(depth);
        out += '}';
    }

    RankSource m_source;
    const dump::RankDump* m_current = nullptr; ///< the rank addDump walks
    std::map<int, std::string> m_firstOutputAnomaly;
    std::optional<Diagnostic> m_resultError;
    std::deque<OpNode> m_data; // stable: the graph refers to nodes by index
    std::optional<std::size_t> m_clean; ///< cleanCommunication()
    CommGraph m_graph;
};

/// The rank number msprobe gives a rank folder: rank<N> -> N, rank -> 0, a lone proc<pid> -> 0.
int rankNumber(const dump::RankTable& table, std::size_t i)
{
    if (const auto rank = table.rank(i))
        return static_cast<int>(*rank);
    return 0;
}

} // namespace

Result<std::optional<std::string>> analyzeStep(const StepRanks& ranks, std::vector<std::string>* log)
{
    Analyzer analyzer([&](int rank) -> Result<std::shared_ptr<const dump::RankDump>> { return ranks.at(rank); }, log);
    for (const auto& [rank, dump] : ranks)
        analyzer.addDump(rank, *dump);
    return analyzer.analyse();
}

namespace {

struct StepScan
{
    std::vector<std::string> steps; ///< the step folders searched, in order
    Diagnostics inputDiagnostics;
    bool refused = false;
};

/// Ranks loaded at once (in parallel) and let go once walked: what a step of 10,000 ranks holds of its dumps.
constexpr std::size_t kRanksPerChunk = 64;

/**
 * Every step of `input` in ascending order (a folder without a step number first). Each step's ranks are loaded by
 * the load step in chunks, each rank walked by the step's Analyzer and let go (issue 37: memory flat in the number of
 * ranks); then, unless a damaged dump refuses the run (`refused`: it stops the scan, nothing analysed),
 * `visit(step, analyzer)` answers true to stop there.
 */
Result<bool> scanSteps(const fs::path& input, StepScan& scan, std::vector<std::string>* log,
                       const std::function<Result<bool>(std::int64_t, Analyzer&)>& visit)
{
    // The ranks as discovery's table (32 bytes a rank folder), each RankLocation made when it is loaded: a step of
    // 10,000 ranks holds no location a rank (issue 37: memory flat in the number of ranks).
    auto layout = dump::discoverCompact(input);
    if (!layout)
        return layout.error();
    for (const Diagnostic& d : layout->diagnostics) {
        if (d.severity == Severity::Error)
            scan.inputDiagnostics.push_back(d);
    }
    const dump::RankTable& table = layout->ranks;
    // Steps in ascending order (a folder without a step number first); in each, ranks by number.
    std::map<std::int64_t, std::vector<std::uint32_t>> steps;
    for (std::size_t i = 0; i < table.size(); ++i)
        steps[table.step(i).value_or(-1)].push_back(static_cast<std::uint32_t>(i));
    if (steps.empty())
        return makeError("overflow.no-dump", fileLocation(input),
                         "no dump.json below this folder: overflow_check needs a step folder (its rank folders), a rank "
                         "folder or a dump root");

    for (auto& [stepNumber, locations] : steps) {
        const dump::RankLocation front = table.at(locations.front());
        scan.steps.push_back(front.stepLabel.empty() ? input.string() : front.stepLabel);
        // (rank number, record) by rank, stable: of two records with one rank number the later one is refused,
        // naming the first, as a map filled in discovery order would find them.
        std::vector<std::pair<int, std::uint32_t>> order;
        order.reserve(locations.size());
        for (const std::uint32_t i : locations)
            order.emplace_back(rankNumber(table, i), i);
        std::vector<std::uint32_t>().swap(locations);
        std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
        const std::pair<int, std::uint32_t>* twice = nullptr; // the first record (in discovery order) seen twice
        for (std::size_t k = 1; k < order.size(); ++k) {
            if (order[k].first == order[k - 1].first && (!twice || order[k].second < twice->second))
                twice = &order[k];
        }
        if (twice) {
            const auto first = std::lower_bound(order.begin(), order.end(), twice->first,
                                                [](const auto& e, int rank) { return e.first < rank; });
            return makeError("overflow.duplicate-rank", fileLocation(table.at(twice->second).dir),
                             "this folder and " + table.dirText(first->second) + " are both rank "
                                 + std::to_string(twice->first) + " of one step: which one is meant?");
        }
        const auto locationOf = [&](int rank) {
            const auto it = std::lower_bound(order.begin(), order.end(), rank,
                                             [](const auto& e, int r) { return e.first < r; });
            return table.at(it->second);
        };
        // The load step, every rank of the step (in parallel, a chunk at a time), before any analysis.
        Analyzer analyzer([&](int rank) { return dump::loadRank(locationOf(rank)); }, log);
        for (std::size_t first = 0; first < order.size(); first += kRanksPerChunk) {
            const std::size_t n = std::min(kRanksPerChunk, order.size() - first);
            std::vector<Result<std::shared_ptr<const dump::RankDump>>> loaded(n, makeError("", {}, ""));
            parallelFor(n, resolveThreadCount(0),
                        [&](std::size_t i) { loaded[i] = dump::loadRank(table.at(order[first + i].second)); });
            for (std::size_t i = 0; i < n; ++i) {
                auto& one = loaded[i];
                if (!one) {
                    scan.inputDiagnostics.push_back(one.error());
                    continue;
                }
                const dump::LoadReport report = dump::loadReport(**one);
                if (!report.clean())
                    scan.inputDiagnostics.insert(scan.inputDiagnostics.end(), report.diagnostics.begin(), report.diagnostics.end());
                // Once the run is refused nothing is analysed: the rest is loaded for its findings alone.
                if (!hasErrors(scan.inputDiagnostics))
                    analyzer.addDump(order[first + i].first, **one);
            }
        }
        if (hasErrors(scan.inputDiagnostics)) {
            scan.refused = true;
            return true;
        }
        auto stop = visit(stepNumber, analyzer);
        if (!stop)
            return stop.error();
        if (*stop)
            return true;
    }
    return false;
}

} // namespace

Result<OverflowCheckResult> runOverflowCheck(const fs::path& input, const fs::path& outDir)
{
    OverflowCheckResult result;
    StepScan scan;
    std::vector<std::string> log;
    auto scanned = scanSteps(input, scan, &log, [&](std::int64_t stepNumber, Analyzer& analyzer) -> Result<bool> {
        auto analysed = analyzer.analyse();
        if (!analysed)
            return analysed.error();
        result.log.insert(result.log.end(), log.begin(), log.end());
        log.clear();
        if (!*analysed)
            return false;
        result.step = stepNumber >= 0 ? std::optional<std::int64_t>(stepNumber) : std::nullopt;
        std::error_code ec;
        fs::create_directories(outDir, ec);
        if (ec)
            return makeError("overflow.write", fileLocation(outDir),
                             "cannot create the output folder: " + ec.message());
        auto written = compare::msprobe26::writeAnalysisFile(outDir, "anomaly_analyze_", **analysed, "overflow.write");
        if (!written)
            return written.error();
        result.analyzeFile = *written;
        result.log.push_back("The analyze result is saved in: " + result.analyzeFile->string());
        return true;
    });
    result.steps = std::move(scan.steps);
    result.inputDiagnostics = std::move(scan.inputDiagnostics);
    result.refused = scan.refused;
    if (!scanned)
        return scanned.error();
    return result;
}

NanInfFlags nanInfOf(const dump::Entry& entry)
{
    const OpFlags flags = flagsOf(entry.value);
    return NanInfFlags { flags.input, flags.output };
}

std::vector<AnomalyNode> anomalyChain(const StepRanks& ranks, int originRank, const std::string& originOp)
{
    std::vector<AnomalyNode> chain { AnomalyNode { originRank, originOp, true } };
    for (const auto& [rank, dump] : ranks) {
        if (rank == originRank)
            continue;
        for (const auto& [name, data] : opsOf(*dump)) {
            if (!isIgnoredOp(name) && itemAnomaly(member(data, "output"))) {
                chain.push_back(AnomalyNode { rank, std::string(name), false });
                break;
            }
        }
    }
    return chain;
}

Result<FirstAnomalyResult> findFirstAnomaly(const fs::path& input)
{
    FirstAnomalyResult result;
    StepScan scan;
    auto scanned = scanSteps(input, scan, nullptr, [&](std::int64_t stepNumber, Analyzer& analyzer) -> Result<bool> {
        auto analysed = analyzer.analyse();
        if (!analysed)
            return analysed.error();
        const auto found = analyzer.foundNodes();
        if (!*analysed || found.empty())
            return false;
        FirstAnomaly anomaly;
        anomaly.step = stepNumber >= 0 ? std::optional<std::int64_t>(stepNumber) : std::nullopt;
        // anomalyChain's answer from what the walk kept of each rank (no dump is held).
        const auto& [originRank, originOp] = found.front();
        anomaly.chain = { AnomalyNode { originRank, originOp, true } };
        for (const auto& [rank, op] : analyzer.firstOutputAnomaly()) {
            if (rank != originRank)
                anomaly.chain.push_back(AnomalyNode { rank, op, false });
        }
        result.anomaly = std::move(anomaly);
        return true;
    });
    result.inputDiagnostics = std::move(scan.inputDiagnostics);
    result.refused = scan.refused;
    if (!scanned)
        return scanned.error();
    return result;
}

} // namespace probescope::overflow
