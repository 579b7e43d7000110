// SPDX-License-Identifier: Apache-2.0
// msprobe 26.0.0 `compare -da`: the rank tables (phase A) and the first-divergence search over them
// (phase B, find_first/analyzer.py). Rules and their quirks: msprobe26-diff-analyze-spec.md; what we
// decided where msprobe crashes or depends on the hash seed: docs/msprobe26-da.md.
#include "core/compare/msprobe26/diffanalyze.h"

#include "core/compare/msprobe26/commgraph.h"
#include "core/compare/msprobe26/pyjsonwriter.h"

#include "core/compare/table/pytext.h"
#include "core/dump/dumpfile.h"
#include "core/dump/dumplayout.h"
#include "core/dump/loadreport.h"
#include "core/dump/rankdump.h"
#include "core/util/fileio.h"
#include "core/util/outputfile.h"
#include "core/util/parallel.h"
#include "core/util/textposition.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <limits>
#include <set>
#include <stdexcept>
#include <tuple>
#include <system_error>
#include <unordered_map>

#include <unistd.h>

namespace probescope::compare::msprobe26 {

namespace {

using dump::JsonType;
using dump::JsonValue;
namespace fs = std::filesystem;

constexpr const char* kNA = "N/A";

std::vector<std::string> splitDots(std::string_view s)
{
    std::vector<std::string> parts;
    std::size_t start = 0;
    for (;;) {
        const std::size_t dot = s.find('.', start);
        parts.emplace_back(s.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start));
        if (dot == std::string_view::npos)
            return parts;
        start = dot + 1;
    }
}

bool contains(std::string_view s, std::string_view part) { return s.find(part) != std::string_view::npos; }

/// ignore_op_list.yaml of 26.0.0: output indices that never count, per API name (op.split('.')[-3]).
const std::vector<int>* ignoredOutputs(const std::string& api)
{
    static const std::unordered_map<std::string, std::vector<int>> list = { { "npu_fusion_attention", { 4, 5 } } };
    const auto it = list.find(api);
    return it == list.end() ? nullptr : &it->second;
}

/// single_metric_diff_check with diff_analyze_threshold.yaml (every threshold [0.5]): a "x%" text whose
/// x/100 exceeds 0.5. "0", "inf", "Nan", "N/A" and "Diff" never count.
bool metricDiverges(const Cell& cell)
{
    if (!cell.isString())
        return false;
    const std::string& text = cell.asString();
    if (text.empty() || text.back() != '%')
        return false;
    const std::string number = text.substr(0, text.size() - 1);
    char* end = nullptr;
    const double v = std::strtod(number.c_str(), &end);
    if (end == number.c_str())
        return false;
    return v / 100 > 0.5;
}

// ---------------------------------------------------------------------------------------------
// Phase B model (graph.py): DataNode and CommunicationNode

bool truthy(std::optional<JsonValue> v)
{
    return v && pyTruthy(*v);
}

/// Python int(text) for a str: surrounding spaces, a sign, digits with single underscores between.
std::optional<long long> pyIntOfText(std::string_view s)
{
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())))
        s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())))
        s.remove_suffix(1);
    bool negative = false;
    if (!s.empty() && (s.front() == '+' || s.front() == '-')) {
        negative = s.front() == '-';
        s.remove_prefix(1);
    }
    if (s.empty() || s.front() == '_' || s.back() == '_')
        return std::nullopt;
    long long v = 0;
    char prev = 0;
    for (const char c : s) {
        if (c == '_') {
            if (prev == '_')
                return std::nullopt;
        } else if (c >= '0' && c <= '9') {
            if (v > (std::numeric_limits<long long>::max() - 9) / 10)
                return std::nullopt;
            v = v * 10 + (c - '0');
        } else {
            return std::nullopt;
        }
        prev = c;
    }
    return negative ? -v : v;
}

/// Python int(value) of a table cell; nullopt where Python raises.
std::optional<long long> pyInt(std::optional<JsonValue> v)
{
    if (!v)
        return std::nullopt;
    switch (v->type()) {
    case JsonType::Int: return v->asInt();
    case JsonType::Bool: return v->asBool() ? 1 : 0;
    case JsonType::Double: {
        const double d = v->asDouble();
        if (!std::isfinite(d) || std::fabs(d) > 9e18)
            return std::nullopt;
        return static_cast<long long>(std::trunc(d));
    }
    case JsonType::String: return pyIntOfText(v->asString());
    default: return std::nullopt;
    }
}

std::string describe(std::optional<JsonValue> v)
{
    if (!v)
        return "None";
    if (v->isString())
        return "'" + std::string(v->asString()) + "'";
    return pyStr(*v);
}

struct DataNode
{
    std::string opName;
    int rank = 0;
    bool isDiff = false;
    /// inputs / outputs: NPU Name -> the op_items row (a dict: the last row of a name wins, first place kept)
    std::vector<std::pair<std::string, JsonValue>> inputs;
    std::vector<std::pair<std::string, JsonValue>> outputs;
    std::optional<JsonValue> stack; ///< nullopt = Python None
    int layer = 0;
    int subLayer = 0;
};

void putOrdered(std::vector<std::pair<std::string, JsonValue>>& list, std::string name, JsonValue row)
{
    for (auto& [n, r] : list) {
        if (n == name) {
            r = row;
            return;
        }
    }
    list.emplace_back(std::move(name), row);
}

Result<DataNode> makeDataNode(const std::string& opName, int rank, JsonValue opData, int subLayer,
                              const fs::path& file)
{
    DataNode node;
    node.opName = opName;
    node.rank = rank;
    node.subLayer = subLayer;
    if (!opData.isObject())
        return makeError("compare.da-table", SourceLocation { file.string(), opData.offset(), 0, 0 },
                         "op \"" + opName + "\" of the rank table is not an object");
    const auto isSame = opData.find("is_same");
    node.isDiff = isSame ? !truthy(isSame) : false;
    const auto items = opData.find("op_items");
    if (!items || !items->isArray())
        return makeError("compare.da-table", SourceLocation { file.string(), opData.offset(), 0, 0 },
                         "op \"" + opName + "\" of the rank table has no op_items list");
    for (std::uint32_t i = 0; i < items->size(); ++i) {
        const JsonValue row = items->at(i);
        if (!row.isObject())
            continue;
        const auto name = row.find("NPU Name");
        const std::string key = name && name->isString() ? std::string(name->asString()) : describe(name);
        const auto stack = row.find("NPU_Stack_Info");
        const bool isNA = stack && stack->isString() && stack->asString() == kNA;
        if (!isNA && !truthy(node.stack))
            node.stack = stack && !stack->isNull() ? stack : std::nullopt;
        const auto state = row.find("state");
        if (state && state->isString() && state->asString() == "input")
            putOrdered(node.inputs, key, row);
        else if (state && state->isString() && state->asString() == "output")
            putOrdered(node.outputs, key, row);
    }
    return node;
}

/// The value find_connected_nodes and _resolve_type look at: NPU MD5 in md5 tables, else NPU max.
std::optional<JsonValue> rankValue(JsonValue row)
{
    if (const auto md5 = row.find("NPU MD5"))
        return md5;
    if (row.find("NPU max"))
        return row.find("NPU max");
    return std::nullopt;
}

bool isCommunicationOp(std::string_view name)
{
    const bool prefix = name.starts_with("Distributed") || name.starts_with("MintDistributed")
        || name.starts_with("communication.comm_func");
    return prefix && hasCommunicationKeyword(name);
}

bool isIgnoredOp(std::string_view name)
{
    return contains(name, "Torch.empty") || contains(name, "Torch.fill") || contains(name, "Tensor.__setitem__");
}

/// Each rank's table file, for the errors: its folder kept once (the tables of a run share OUT), the names one after
/// the other and a sorted vector of (rank, folder, name) places: about the name's bytes and 16 a rank (a std::map of
/// whole paths was about 80 more and the folder's text, 10,000 of them, issue 37).
class PathsByRank
{
public:
    /// The rank's file; a rank set again names its last file (as insert_or_assign would).
    void set(int rank, const fs::path& path)
    {
        const std::string& text = path.native();
        std::string folder = path.parent_path().native();
        if (text.compare(0, folder.size(), folder) != 0)
            folder.clear(); // not a prefix of the text: the whole text is the name
        const std::string name = text.substr(folder.size());
        if (m_folders.empty() || m_folders.back() != folder)
            m_folders.push_back(folder);
        const Place place { rank, static_cast<std::uint32_t>(m_folders.size() - 1),
                            static_cast<std::uint32_t>(m_names.size()), static_cast<std::uint32_t>(name.size()) };
        m_names += name;
        const auto it = std::lower_bound(m_places.begin(), m_places.end(), rank,
                                         [](const Place& p, int r) { return p.rank < r; });
        if (it != m_places.end() && it->rank == rank)
            *it = place;
        else
            m_places.insert(it, place);
    }

    /// Room for `ranks` more files of about `bytes` of names in all (a run's tables: no buffer grown by doubling).
    void reserve(std::size_t ranks, std::size_t bytes)
    {
        m_places.reserve(m_places.size() + ranks);
        m_names.reserve(m_names.size() + bytes);
    }

    /// The rank's file as it was set (a rank never set is a programming error, as std::map::at throws).
    std::string at(int rank) const
    {
        const auto it = std::lower_bound(m_places.begin(), m_places.end(), rank,
                                         [](const Place& p, int r) { return p.rank < r; });
        if (it == m_places.end() || it->rank != rank)
            throw std::out_of_range("PathsByRank::at");
        return m_folders[it->folder] + m_names.substr(it->offset, it->size);
    }

private:
    struct Place
    {
        int rank;
        std::uint32_t folder;
        std::uint32_t offset;
        std::uint32_t size;
    };
    std::vector<std::string> m_folders; ///< a new one only when the folder changes (one for a run's tables)
    std::string m_names;                ///< each file's text after its folder's
    std::vector<Place> m_places;
};

class Analyzer : public CommSearch
{
public:
    explicit Analyzer(std::vector<std::string>* log)
        : CommSearch("diff", log, true)
        , m_graph(rules())
    {
    }

    /**
     * @brief Walks one rank table (CommSearch::addRank). The search keeps of it only its communication nodes (names,
     * peers and direction, computed now) and the data nodes it may report (the ops that diverge); the document is
     * kept only when such a node refers to it, so a caller can drop every other table after this call.
     */
    /// Room for the paths of `tables` more tables of about `bytes` of file names in all.
    void reserveTables(std::size_t tables, std::size_t bytes) { m_paths.reserve(tables, bytes); }

    void addTable(int rank, const RankTableFile& table)
    {
        m_paths.set(rank, table.path);
        const std::size_t before = m_data.size();
        addRank(rank, ops(table));
        for (std::size_t i = before; i < m_data.size(); ++i) {
            if (m_data[i].isDiff) {
                m_documents.push_back(table.document);
                break;
            }
        }
    }

private:
    /// The ops of a rank table in file order, duplicates collapsed as Python's dict does.
    static std::vector<Op> ops(const RankTableFile& t)
    {
        std::vector<Op> out;
        const JsonValue r = t.document->root();
        if (!r.isObject())
            return out;
        out.reserve(r.size());
        std::unordered_map<std::string_view, std::size_t> index; // large tables: no quadratic search
        for (std::uint32_t i = 0; i < r.size(); ++i) {
            const auto [it, fresh] = index.emplace(r.keyAt(i), out.size());
            if (fresh)
                out.emplace_back(r.keyAt(i), r.at(i));
            else
                out[it->second].second = r.at(i);
        }
        return out;
    }

    bool isCommunicationOp(std::string_view name) const override { return msprobe26::isCommunicationOp(name); }
    bool isIgnoredOp(std::string_view name) const override { return msprobe26::isIgnoredOp(name); }
    CommGraph& graph() override { return m_graph; }

    Result<std::optional<std::size_t>> computeNode(int rank, std::string_view name, JsonValue data, int subLayer,
                                                   bool beforeCommunication) override
    {
        if (!beforeCommunication) {
            // Only divergent compute ops are kept; the others need no rows read.
            const auto isSame = data.isObject() ? data.find("is_same") : std::nullopt;
            if (data.isObject() && !(isSame && !truthy(isSame)))
                return std::optional<std::size_t> {};
        }
        auto node = makeDataNode(std::string(name), rank, data, subLayer, fs::path(m_paths.at(rank)));
        if (!node)
            return node.error();
        if (!node->isDiff)
            return std::optional<std::size_t> {};
        m_data.push_back(std::move(*node));
        return std::optional<std::size_t>(m_data.size() - 1);
    }

    Result<CommNode> commNode(int rank, std::string_view opName, JsonValue data, int subLayer) override
    {
        const std::string name(opName);
        const fs::path file(m_paths.at(rank));
        auto dataNode = makeDataNode(name, rank, data, subLayer, file);
        if (!dataNode)
            return dataNode.error();
        const auto parts = splitDots(name);
        if (parts.size() < 4)
            return makeError("compare.da-op-name", SourceLocation { file.string(), data.offset(), 0, 0 },
                             "invalid op_name: " + name
                                 + " (msprobe 26 stops with RuntimeError: a communication op needs 4 "
                                   "dot-separated parts)");
        m_data.push_back(std::move(*dataNode));
        CommNode node;
        node.name = name;
        node.dataIndex = m_data.size() - 1;
        node.keep = m_data.back().isDiff;
        node.api = parts[1];
        node.callCount = parts[2];
        node.type = resolveType(m_data.back(), rank);
        // The peers now, while the table is at hand (the graph keeps the answer, an error too, for the moment msprobe
        // meets it).
        node.connection = computeConnection(m_data.back(), rank, name, node.api, node.type);
        if (!node.keep) {
            // It is never reported: all such nodes share one data node that does not diverge.
            m_data.pop_back();
            node.dataIndex = notDiverging();
        }
        return node;
    }

    /// _resolve_type: the first input whose name contains "src" (then "dst") decides; the value is compared
    /// with the int rank, which a table string never equals (spec §4.3b).
    static CommNodeType resolveType(const DataNode& data, int rank)
    {
        for (const auto& [prefix, own] : { std::pair { "src", CommNodeType::Src }, std::pair { "dst", CommNodeType::Dst } }) {
            for (const auto& [name, row] : data.inputs) {
                if (contains(name, prefix) || contains(name, std::string(prefix) + "_GROUP")) {
                    const bool mine = equalsRank(rankValue(row), rank);
                    if (mine)
                        return own;
                    return own == CommNodeType::Src ? CommNodeType::Dst : CommNodeType::Src;
                }
            }
        }
        return CommNodeType::Link;
    }

    Result<CommConnection> computeConnection(const DataNode& data, int rank, const std::string& opName,
                                             const std::string& api, CommNodeType type) const
    {
        CommConnection c;
        const fs::path file(m_paths.at(rank));
        for (const auto& [name, row] : data.inputs) {
            const bool rankArg = contains(name, "dst") || contains(name, "group_dst") || contains(name, "src")
                || contains(name, "group_src");
            const auto value = rankValue(row);
            if (rankArg) {
                std::optional<long long> r = value ? pyInt(value) : std::optional<long long>(0);
                if (!r)
                    return makeError("compare.da-rank-value", SourceLocation { file.string(), row.offset(), 0, 0 },
                                     "\"" + name + "\" of " + opName
                                         + " names no rank: " + describe(value)
                                         + " is not an integer (msprobe 26 stops with ValueError here)");
                if (*r != 0) // rank 0 is dropped, as msprobe does (`if rank_val:`)
                    c.ranks.insert(*r);
            } else if (name.size() >= 6 && name.ends_with(".group")) {
                if (!truthy(value))
                    continue;
                if (!value->isString())
                    return makeError("compare.da-rank-value", SourceLocation { file.string(), row.offset(), 0, 0 },
                                     "\"" + name + "\" holds " + describe(value)
                                         + " where a rank list is expected (msprobe 26 stops with AttributeError)");
                std::string text(value->asString());
                if (text.front() != '[' || text.back() != ']')
                    continue;
                const auto b = text.find_first_not_of("[]");
                const auto e = text.find_last_not_of("[]");
                const std::string inner = b == std::string::npos ? std::string() : text.substr(b, e - b + 1);
                std::size_t start = 0;
                for (;;) {
                    const std::size_t comma = inner.find(',', start);
                    const std::string part = inner.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
                    const auto r = pyIntOfText(part);
                    if (!r)
                        return makeError("compare.da-rank-value", SourceLocation { file.string(), row.offset(), 0, 0 },
                                         "\"" + name + "\" holds the rank list " + text + ", whose item \"" + part
                                             + "\" is not an integer (msprobe 26 stops with ValueError)");
                    c.ranks.insert(*r);
                    if (comma == std::string::npos)
                        break;
                    start = comma + 1;
                }
            } else {
                const auto peer = row.find("NPU P2POp peer");
                if (peer && peer->isString() && peer->asString() == "None")
                    continue;
                const auto r = peer && (peer->isInt() || peer->type() == JsonType::Double || peer->isBool()) ? pyInt(peer)
                                                                                                               : std::nullopt;
                if (!r || (peer->type() == JsonType::Double && static_cast<double>(*r) != peer->asDouble()))
                    return makeError("compare.da-rank-value", SourceLocation { file.string(), row.offset(), 0, 0 },
                                     "the P2POp peer " + describe(peer) + " of \"" + name
                                         + "\" is not a rank (msprobe 26 stops with KeyError)");
                c.ranks.insert(*r);
            }
        }
        c.api = "Distributed." + peerApi(api);
        c.type = type == CommNodeType::Src ? CommNodeType::Dst : type == CommNodeType::Dst ? CommNodeType::Src : CommNodeType::Link;
        return c;
    }

    /// The -da rules of the shared communication graph (commgraph.h).
    CommGraphRules rules()
    {
        CommGraphRules r;
        r.prefixMatch = true;
        r.layerOverflowFix = true;
        r.missingPeer = [this](const CommNodeRef& cur, long long target) -> std::optional<Diagnostic> {
            return makeError("compare.da-peer-rank", SourceLocation { m_paths.at(cur.rank()), std::nullopt, 0, 0 },
                             std::string(cur.name()) + " of rank " + std::to_string(cur.rank())
                                 + " communicates with rank " + std::to_string(target)
                                 + ", which has no rank table (was it dumped?); msprobe 26 stops with KeyError here");
        };
        return r;
    }

    /// _search_first_diff (spec §4.3f) over the shared graph: analyze_diff_in_group takes the compute ops of every
    /// member first, then the divergent members; the first round with any keeps every node of the minimal
    /// (layer, sub_layer).
    void searchGraph() override
    {
        m_graph.search(
            [&](const std::vector<CommNodeRef>& group) {
                for (const CommNodeRef& m : group) {
                    for (const std::size_t op : m.computeOps()) {
                        m_data[op].layer = m.layer();
                        m_found.push_back(op);
                    }
                }
                for (const CommNodeRef& m : group) {
                    if (m_data[m.dataIndex()].isDiff) {
                        m_data[m.dataIndex()].layer = m.layer();
                        m_found.push_back(m.dataIndex());
                    }
                }
            },
            [&] { return !m_found.empty(); });
        if (m_found.empty())
            return;
        std::pair<int, int> best { std::numeric_limits<int>::max(), std::numeric_limits<int>::max() };
        for (const std::size_t f : m_found)
            best = std::min(best, std::pair { m_data[f].layer, m_data[f].subLayer });
        std::vector<std::size_t> kept;
        for (const std::size_t f : m_found) {
            if (std::pair { m_data[f].layer, m_data[f].subLayer } == best)
                kept.push_back(f);
        }
        m_found = std::move(kept);
    }

    std::string resultJson() override
    {
        std::map<int, std::vector<std::size_t>> byRank; // ascending rank keys (msprobe: hash-seed order)
        for (const std::size_t f : m_found)
            byRank[m_data[f].rank].push_back(f);
        return rankNodesJson(byRank, [&](PyJsonWriter& w, std::size_t f, int depth) { nodeInfo(w, m_data[f], depth); });
    }

    static void metrics(PyJsonWriter& w, JsonValue row, int depth)
    {
        std::vector<std::pair<const char*, std::optional<JsonValue>>> m;
        if (row.find("NPU max")) {
            for (const char* k : { "NPU max", "NPU min", "NPU mean", "NPU l2norm" })
                m.emplace_back(k, row.find(k));
        } else if (row.find("NPU MD5")) {
            m.emplace_back("NPU MD5", row.find("NPU MD5"));
        }
        if (row.find("NPU P2POp peer"))
            m.emplace_back("NPU P2POp peer", row.find("NPU P2POp peer"));
        std::string& out = w.text();
        if (m.empty()) {
            out += "{}";
            return;
        }
        out += '{';
        for (std::size_t i = 0; i < m.size(); ++i) {
            if (i)
                out += ',';
            w.newline(depth + 1);
            w.string(m[i].first);
            out += ": ";
            w.value(m[i].second, depth + 1);
        }
        w.newline(depth);
        out += '}';
    }

    static void rows(PyJsonWriter& w, const std::vector<std::pair<std::string, JsonValue>>& list, int depth)
    {
        std::string& out = w.text();
        if (list.empty()) {
            out += "{}";
            return;
        }
        out += '{';
        for (std::size_t i = 0; i < list.size(); ++i) {
            if (i)
                out += ',';
            w.newline(depth + 1);
            w.string(list[i].first);
            out += ": ";
            metrics(w, list[i].second, depth + 1);
        }
        w.newline(depth);
        out += '}';
    }

    static void nodeInfo(PyJsonWriter& w, const DataNode& node, int depth)
    {
        std::string& out = w.text();
        openResultNode(w, node.opName, depth);
        w.newline(depth + 2);
        out += "\"input\": ";
        rows(w, node.inputs, depth + 2);
        out += ',';
        w.newline(depth + 2);
        out += "\"output\": ";
        rows(w, node.outputs, depth + 2);
        w.newline(depth + 1);
        out += "},";
        w.newline(depth + 1);
        out += "\"stack_info\": ";
        w.value(node.stack, depth + 1);
        w.newline(depth);
        out += '}';
    }

    /// The data node of every communication op that does not diverge (only isDiff is read of it).
    std::size_t notDiverging()
    {
        if (!m_notDiverging) {
            m_data.emplace_back();
            m_notDiverging = m_data.size() - 1;
        }
        return *m_notDiverging;
    }

    PathsByRank m_paths; ///< each rank's table, for the errors
    std::optional<std::size_t> m_notDiverging;
    std::vector<DataNode> m_data;
    /// The tables a kept data node refers to (those with a diverging op); the others are not held.
    std::vector<std::shared_ptr<const dump::JsonDocument>> m_documents;
    CommGraph m_graph;
};

// ---------------------------------------------------------------------------------------------
// Phase A helpers

/// msprobe 26's rank folder pattern, ^rank(?:0|[1-9][0-9]*)?$, without a regular expression: the number it
/// gives (-1 for a bare "rank"), or none.
std::optional<long long> msprobeRankNumber(std::string_view name)
{
    if (name.substr(0, 4) != "rank")
        return std::nullopt;
    const std::string_view digits = name.substr(4);
    if (digits.empty())
        return -1;
    if (digits.size() > 18 || (digits.size() > 1 && digits.front() == '0'))
        return std::nullopt;
    long long n = 0;
    for (const char c : digits) {
        if (c < '0' || c > '9')
            return std::nullopt;
        n = n * 10 + (c - '0');
    }
    return n;
}

// Of 10,000 damaged or empty rank folders a few are named, then how many more: a report that can be read.
constexpr std::size_t kMaxReportedRanks = 20;

/**
 * @brief A step folder's rank folders as msprobe 26 pairs them (its pattern, sorted by number with a bare "rank"
 * first), each with the dump.json the one discovery of the step folder (dump::discoverCompact, issue 33) found in it.
 *
 * The folders are the ones holding a dump and the ones discovery left out (a rank folder without dump.json must keep
 * its place in the pairing; it has no location: msprobe 26 would pair the rank folder and then crash or compare
 * nothing, the rank folder n of npu with bench rank2; such a folder is an input error for the caller). A folder is
 * its number and its name (about 24 bytes, the step folder kept once) and its dump a record of discovery's table,
 * made into a RankLocation when it is loaded: no path or location is held a rank (issue 37: memory flat in the number
 * of ranks; 10,000 rank folders a side).
 */
class RankFolders
{
public:
    RankFolders(const fs::path& step, const dump::CompactLayout& layout)
        : m_base(step.has_filename() ? step : step.parent_path()) // "npu/step0/" as "npu/step0"
    {
        const dump::RankTable& table = layout.ranks;
        m_folders.reserve(table.size() + layout.skippedFolders.size());
        for (std::size_t i = 0; i < table.size(); ++i)
            take(table.dirText(i));
        for (const fs::path& skipped : layout.skippedFolders)
            take(skipped);
        // Sorted by number, then folder (the folders share the step folder: by name); a folder found twice (its
        // number is its name's) is kept once.
        const auto key = [&](const Folder& f) { return std::pair(f.number, name(f)); };
        std::sort(m_folders.begin(), m_folders.end(), [&](const Folder& x, const Folder& y) { return key(x) < key(y); });
        m_folders.erase(std::unique(m_folders.begin(), m_folders.end(),
                                    [&](const Folder& x, const Folder& y) { return key(x) == key(y); }),
                        m_folders.end());
        m_folders.shrink_to_fit();
        // Each folder's first dump.json in discovery order: a location whose folder is the rank folder itself (not
        // below it), found by its first element below the step folder and the folder's number (halving the sorted
        // folders: a scan of every rank per rank was quadratic, a third of -da's time at 10,000 ranks).
        for (std::size_t i = 0; i < table.size(); ++i) {
            const dump::RankLocation loc = table.at(i);
            if (loc.format != dump::DumpFormat::DumpJson || loc.dumpFile.filename() != "dump.json")
                continue;
            const auto element = firstElement(loc.dir);
            const auto number = element ? msprobeRankNumber(*element) : std::nullopt;
            if (!number)
                continue;
            const auto wanted = std::pair(*number, std::string_view(*element));
            const auto it = std::lower_bound(m_folders.begin(), m_folders.end(), wanted,
                                             [&](const Folder& f, const auto& w) { return key(f) < w; });
            if (it != m_folders.end() && key(*it) == wanted && it->location == kNoDump
                && loc.dir == m_base / *element)
                it->location = static_cast<std::uint32_t>(i);
        }
    }

    std::size_t size() const { return m_folders.size(); }
    bool empty() const { return m_folders.empty(); }
    /// The rank folder's own name ("rank3").
    std::string name(std::size_t i) const { return std::string(name(m_folders[i])); }
    /// The rank folder: the step folder / its name.
    fs::path dir(std::size_t i) const { return m_base / name(i); }
    /// The record (in discovery's table) of the dump.json in the folder; none: the folder holds no dump.json.
    std::optional<std::size_t> location(std::size_t i) const
    {
        return m_folders[i].location == kNoDump ? std::nullopt : std::optional<std::size_t>(m_folders[i].location);
    }

private:
    static constexpr std::uint32_t kNoDump = std::numeric_limits<std::uint32_t>::max();
    struct Folder
    {
        long long number = 0;
        std::uint32_t nameOffset = 0;
        std::uint32_t nameSize = 0;
        std::uint32_t location = kNoDump;
    };

    std::string_view name(const Folder& f) const { return std::string_view(m_names).substr(f.nameOffset, f.nameSize); }

    /// The folder directly below the step folder on the way to `found`, as its name; none when `found` is not below it.
    std::optional<std::string> firstElement(const fs::path& found) const
    {
        const fs::path rel = found.lexically_relative(m_base);
        if (rel.empty() || *rel.begin() == ".." || *rel.begin() == ".")
            return std::nullopt;
        return rel.begin()->string();
    }

    void take(const fs::path& found)
    {
        const auto element = firstElement(found);
        const auto number = element ? msprobeRankNumber(*element) : std::nullopt;
        if (!number)
            return;
        m_folders.push_back(Folder { *number, static_cast<std::uint32_t>(m_names.size()),
                                     static_cast<std::uint32_t>(element->size()), kNoDump });
        m_names += *element;
    }

    fs::path m_base;
    std::string m_names; ///< the folders' names, one after the other
    std::vector<Folder> m_folders;
};

/// Errors of the discovery itself (a duplicate (step, rank), a folder that cannot be read), into `problems`.
void takeLayoutErrors(const dump::CompactLayout& layout, Diagnostics& problems)
{
    for (const Diagnostic& d : layout.diagnostics) {
        if (d.severity == Severity::Error)
            problems.push_back(d);
    }
}

/// A rank table as phase B may use it: strict JSON (a cut file or invalid UTF-8 is an error), an object of ops,
/// each an object with is_same (true/false) and an op_items list of row objects. Anything else is named with its
/// file:line:col and never analysed (msprobe would crash on it or read it wrongly).
Result<std::shared_ptr<const dump::JsonDocument>> parseRankTable(const fs::path& path, std::string_view text)
{
    auto parsed = dump::JsonDocument::parse(text, path.string());
    for (const Diagnostic& d : parsed.diagnostics) {
        if (d.severity == Severity::Error)
            return d;
    }
    if (!parsed.document)
        return makeError("compare.da-table", fileLocation(path), "not a JSON rank table");
    const auto where = [&](JsonValue v) { return locate(text, v.offset(), path.string()); };
    const JsonValue root = parsed.document->root();
    if (!root.isObject())
        return makeError("compare.da-table", where(root),
                         "a rank table is a JSON object of ops (as -da writes compare_result_rank*.json); this is not one");
    for (std::uint32_t i = 0; i < root.size(); ++i) {
        const JsonValue op = root.at(i);
        const std::string name(root.keyAt(i));
        if (!op.isObject())
            return makeError("compare.da-table", where(op), "op \"" + name + "\" of the rank table is not an object");
        const auto same = op.find("is_same");
        if (!same || !same->isBool())
            return makeError("compare.da-table", where(same ? *same : op),
                             "op \"" + name + "\" of the rank table has no \"is_same\": true or false");
        const auto items = op.find("op_items");
        if (!items || !items->isArray())
            return makeError("compare.da-table", where(items ? *items : op),
                             "op \"" + name + "\" of the rank table has no op_items list");
        for (std::uint32_t r = 0; r < items->size(); ++r) {
            if (!items->at(r).isObject())
                return makeError("compare.da-table", where(items->at(r)),
                                 "row " + std::to_string(r) + " of op \"" + name + "\" in the rank table is not an object");
        }
    }
    return parsed.document;
}

/// OUT/.probescope-da-{timestamp}-{pid}: the rank tables of a run until every rank has passed the load step. Made
/// on the first table (with OUT, when OUT is new); removed at the end with whatever is left in it, and OUT too when
/// this run made it and nothing was claimed into it.
///
/// The staging holds each table's stem once, in one buffer, with 12 bytes of record (issue 37: a StagedTable and a set
/// of stems still staged were about 250 bytes a rank, 10,000 of them); a table that could not be staged waits in memory.
class RankTableStaging
{
public:
    RankTableStaging(fs::path outDir, const std::string& timestamp)
        : m_outDir(std::move(outDir))
        , m_name(".probescope-da-" + timestamp + "-" + std::to_string(::getpid()))
    {
    }
    RankTableStaging(const RankTableStaging&) = delete;
    RankTableStaging& operator=(const RankTableStaging&) = delete;
    ~RankTableStaging()
    {
        std::error_code ec;
        for (std::size_t i = 0; i < m_tables.size(); ++i) {
            if (m_tables[i].left)
                fs::remove(file(stem(i)), ec);
        }
        if (!m_dir.empty())
            fs::remove(m_dir, ec);
        if (m_madeOut && !m_claimed)
            fs::remove(m_outDir, ec); // only when empty
    }

    void reserve(std::size_t tables) { m_tables.reserve(tables); }

    /// Makes the staging folder (inside OUT, which is made if missing); false where it cannot be made: the tables
    /// then wait in memory. Called once before write().
    bool prepare() { return open(); }

    /// Writes the table `stem` into the staging folder: true when it lies there now. Any thread, after prepare().
    bool write(const std::string& stem, std::string_view text) const
    {
        return !m_dir.empty() && !writeFileAtomically(file(stem), text);
    }

    /// Stages the table `stem` in the order of the tables: `written` by write(), or kept in memory (`text`).
    void record(const std::string& stem, bool written, std::string text)
    {
        Table t { static_cast<std::uint32_t>(m_stems.size()), static_cast<std::uint32_t>(stem.size()), false, false };
        m_stems += stem;
        if (written)
            t.staged = t.left = true;
        else
            m_texts.emplace(m_tables.size(), std::move(text));
        m_tables.push_back(t);
    }

    std::size_t size() const { return m_tables.size(); }
    std::string stem(std::size_t i) const { return m_stems.substr(m_tables[i].offset, m_tables[i].size); }
    /// The stems' bytes in all.
    std::size_t stemBytes() const { return m_stems.size(); }

    /// Once every table is claimed nothing is left to remove: the stems and records are let go before the search.
    void releaseClaimed()
    {
        if (std::none_of(m_tables.begin(), m_tables.end(), [](const Table& t) { return t.left; })) {
            std::string().swap(m_stems);
            std::vector<Table>().swap(m_tables);
        }
    }

    /// Moves table i to its free name in OUT (`stem.json`, `stem_1.json`, ...); `text` gets its text, or the
    /// error when it cannot be claimed. A table waiting in memory is let go.
    std::optional<fs::path> claim(std::size_t i, std::string& text)
    {
        std::optional<fs::path> path;
        const std::string name = stem(i);
        if (!m_tables[i].staged) {
            const auto it = m_texts.find(i);
            text = std::move(it->second);
            m_texts.erase(it);
            std::string error;
            path = writeToFreeName(m_outDir, name, ".json", text, error);
            if (!path)
                text = error;
        } else {
            auto read = readTextFile(file(name));
            if (!read) {
                text = read.error().message;
                return std::nullopt;
            }
            text = std::move(*read);
            std::string error;
            path = claimFreeName(file(name), m_outDir, name, ".json", error);
            if (!path)
                text = error;
            else
                m_tables[i].left = false;
        }
        m_claimed = m_claimed || path.has_value();
        return path;
    }

private:
    struct Table
    {
        std::uint32_t offset; ///< the stem in m_stems
        std::uint32_t size;
        bool staged; ///< as file(stem), else in m_texts
        bool left;   ///< still in the staging folder
    };

    fs::path file(const std::string& stem) const { return m_dir / (stem + ".json"); }

    bool open()
    {
        if (m_tried)
            return !m_dir.empty();
        m_tried = true;
        std::error_code ec;
        m_madeOut = !fs::exists(m_outDir, ec);
        fs::create_directories(m_outDir, ec);
        if (!ec && fs::create_directory(m_outDir / m_name, ec) && !ec) {
            m_dir = m_outDir / m_name;
            m_sync.emplace(m_dir); // no fsync per table: the barrier before the analysis file covers them
        } else if (m_madeOut) {
            fs::remove(m_outDir, ec);
        }
        return !m_dir.empty();
    }

    fs::path m_outDir;
    std::string m_name;
    fs::path m_dir;
    std::string m_stems;
    std::vector<Table> m_tables;
    std::map<std::size_t, std::string> m_texts; ///< the tables waiting in memory (the staging folder could not be made)
    std::optional<DeferredSync> m_sync;
    bool m_tried = false;
    bool m_madeOut = false;
    bool m_claimed = false;
};

/// The rank number a table written under this stem gets when phase B reads its file name back.
std::optional<int> rankOfStem(const std::string& stem)
{
    return rankOfTableFileName(stem + ".json");
}

} // namespace

std::string rankTableJson(const msprobe26::DaTable& da)
{
    const CompareTable& table = *da.table;
    std::vector<std::string> columns = table.header;
    const int stackColumn = table.column("NPU_Stack_Info");
    const std::size_t base = columns.size();
    for (const char* c : { "state", "api_origin_name", "NPU P2POp op", "Bench P2POp op", "NPU P2POp peer", "Bench P2POp peer" })
        columns.emplace_back(c);
    const int result = table.column("Result");

    // gen_api_batches: consecutive rows of one api_origin_name; a name without .forward./.backward. that is
    // part of the open batch's name joins it.
    struct Batch
    {
        std::string name;
        std::size_t first;
        std::size_t end;
    };
    std::vector<Batch> batches;
    for (std::size_t r = 0; r < da.rows.size(); ++r) {
        const std::string& api = da.rows[r].apiOrigin;
        const bool directional = contains(api, ".forward.") || contains(api, ".backward.");
        if (!batches.empty() && (batches.back().name == api || (!directional && contains(batches.back().name, api)))) {
            batches.back().end = r + 1;
            continue;
        }
        batches.push_back(Batch { api, r, r + 1 });
    }

    PyJsonWriter w(4);
    std::string& out = w.text();
    // A batch name seen twice: the second overwrites the value in the first one's place (a dict).
    std::vector<std::pair<std::string, std::string>> ops;
    std::unordered_map<std::string, std::size_t> opIndex;
    for (const Batch& b : batches) {
        const auto parts = splitDots(b.name);
        if (parts.size() < 4)
            continue;
        const std::vector<int>* ignored = ignoredOutputs(parts[parts.size() - 3]);
        bool same = true;
        int outputIndex = -1;
        for (std::size_t r = b.first; r < b.end; ++r) {
            if (da.rows[r].state != "output")
                continue;
            ++outputIndex;
            if (ignored && std::find(ignored->begin(), ignored->end(), outputIndex) != ignored->end())
                continue;
            const auto& row = table.rows[r];
            if (table.mode == CompareMode::Md5) {
                if (pyStr(row[static_cast<std::size_t>(result)]) == "Different")
                    same = false;
            } else {
                for (const char* metric : { "MaxRelativeErr", "MinRelativeErr", "MeanRelativeErr", "NormRelativeErr" }) {
                    if (metricDiverges(row[static_cast<std::size_t>(table.column(metric))])) {
                        same = false;
                        break;
                    }
                }
            }
        }
        PyJsonWriter v(4);
        std::string& t = v.text();
        t += '{';
        v.newline(2);
        t += "\"is_same\": ";
        v.boolean(same);
        t += ',';
        v.newline(2);
        t += "\"op_items\": [";
        for (std::size_t r = b.first; r < b.end; ++r) {
            if (r != b.first)
                t += ',';
            v.newline(3);
            t += '{';
            const msprobe26::DaRow& extra = da.rows[r];
            for (std::size_t c = 0; c < columns.size(); ++c) {
                if (c)
                    t += ',';
                v.newline(4);
                v.string(columns[c]);
                t += ": ";
                if (static_cast<int>(c) == stackColumn) {
                    if (extra.stack)
                        v.stringList(*extra.stack, 4);
                    else
                        v.string(kNA);
                } else if (c < base) {
                    v.cell(table.rows[r][c]);
                } else {
                    switch (c - base) {
                    case 0: v.string(extra.state); break;
                    case 1: v.string(extra.apiOrigin); break;
                    case 2: v.cell(extra.npuP2pOp); break;
                    case 3: v.cell(extra.benchP2pOp); break;
                    case 4: v.cell(extra.npuP2pPeer); break;
                    default: v.cell(extra.benchP2pPeer); break;
                    }
                }
            }
            v.newline(3);
            t += '}';
        }
        v.newline(2);
        t += "]";
        v.newline(1);
        t += '}';
        const auto [it, fresh] = opIndex.emplace(b.name, ops.size());
        if (fresh)
            ops.emplace_back(b.name, std::move(t));
        else
            ops[it->second].second = std::move(t);
    }
    if (ops.empty())
        return "{}";
    out += '{';
    for (std::size_t i = 0; i < ops.size(); ++i) {
        if (i)
            out += ',';
        w.newline(1);
        w.string(ops[i].first);
        out += ": ";
        out += ops[i].second;
    }
    w.newline(0);
    out += '}';
    return out;
}

std::optional<int> rankOfTableFileName(const std::string& name)
{
    if (!name.starts_with("compare_result_rank") || !name.ends_with(".json"))
        return std::nullopt;
    std::vector<std::string> parts;
    std::size_t start = 0;
    for (;;) {
        const std::size_t u = name.find('_', start);
        parts.push_back(name.substr(start, u == std::string::npos ? std::string::npos : u - start));
        if (u == std::string::npos)
            break;
        start = u + 1;
    }
    if (parts.size() <= 2 || !parts[2].starts_with("rank"))
        return std::nullopt;
    // str.strip('rank') removes those letters from both ends.
    std::string_view rest = parts[2];
    while (!rest.empty() && std::string_view("rank").find(rest.front()) != std::string_view::npos)
        rest.remove_prefix(1);
    while (!rest.empty() && std::string_view("rank").find(rest.back()) != std::string_view::npos)
        rest.remove_suffix(1);
    if (rest.empty())
        return 0;
    const auto v = pyIntOfText(rest);
    if (!v || *v < std::numeric_limits<int>::min() || *v > std::numeric_limits<int>::max())
        return std::nullopt;
    return static_cast<int>(*v);
}

Result<std::optional<std::string>> analyzeRankTables(const std::map<int, RankTableFile>& tables,
                                                     std::vector<std::string>* log)
{
    Analyzer analyzer(log);
    for (const auto& [rank, table] : tables)
        analyzer.addTable(rank, table);
    return analyzer.run();
}

namespace {

/**
 * @brief Phase A up to the staging folder: the two step folders' rank folders paired as msprobe pairs them, every rank
 * dump through the load step, each pair's rank table staged (`staging`); `runRanks` gets the rank numbers of this
 * run's tables. False: a damaged dump refused the run (result.refused); nothing is staged then. The discovery of
 * both step folders lives only as long as this stage.
 */
Result<bool> stageRankTables(const fs::path& npuStep, const fs::path& benchStep, const DiffAnalyzeOptions& options,
                             const std::string& timestamp, RankTableStaging& staging,
                             RankSet& runRanks, DiffAnalyzeResult& result)
{
    for (const fs::path& p : { npuStep, benchStep }) {
        std::error_code ec;
        if (!fs::is_directory(p, ec))
            return makeError("compare.da-input", fileLocation(p),
                             "-da needs two step folders (holding rank folders); this is not a folder");
    }
    // The one discovery first: a folder it refuses (two dumps at one (step, rank) place, as a folder holding both
    // npu/ and bench/ has) is that error, naming both dumps, not a rank count that hides why (issue 25).
    // An empty layout is no error here: each rank folder without a dump is reported below, in msprobe's pairing.
    // Both sides' discovery as tables (32 bytes a rank folder): a location is made when its rank is loaded.
    auto npuLayout = dump::discoverCompact(npuStep, dump::DiscoverOptions { true });
    if (!npuLayout)
        return npuLayout.error();
    auto benchLayout = dump::discoverCompact(benchStep, dump::DiscoverOptions { true });
    if (!benchLayout)
        return benchLayout.error();
    const RankFolders npuRanks(npuStep, *npuLayout);
    const RankFolders benchRanks(benchStep, *benchLayout);
    if (npuRanks.size() != benchRanks.size())
        return makeError("compare.da-rank-count", fileLocation(npuStep),
                         "The number of ranks in the two runs are different: " + std::to_string(npuRanks.size())
                             + " rank folders here, " + std::to_string(benchRanks.size()) + " in " + benchStep.string());
    if (npuRanks.empty())
        return makeError("compare.da-no-ranks", fileLocation(npuStep),
                         "no rank folder (rank, rank0, rank1, ...) in this folder or in " + benchStep.string()
                             + "; -da needs the step folders (for example npu/step0), not the dump root");

    // The load step (docs/reliability.md §1), as the compare pipeline runs it: every rank dump is found by the one
    // discovery, loaded by dump::loadRank and judged by dump::loadReport before anything is written. A damaged
    // dump refuses the whole run (a rank table missing or partial would move the first divergence to another
    // rank), unless salvage is asked for; then its losses are said and the exit status stays 1.
    Diagnostics& input = result.inputDiagnostics;
    takeLayoutErrors(*npuLayout, input);
    takeLayoutErrors(*benchLayout, input);
    std::size_t noDump = 0;
    for (const RankFolders* folders : { &npuRanks, &benchRanks }) {
        for (std::size_t i = 0; i < folders->size(); ++i) {
            if (folders->location(i))
                continue;
            if (++noDump <= kMaxReportedRanks)
                input.push_back(makeError("compare.da-no-dump", fileLocation(folders->dir(i)),
                                          "rank folder without dump.json: -da has nothing to compare for this rank "
                                          "(msprobe 26 leaves it out without a word)"));
        }
    }
    if (noDump > kMaxReportedRanks)
        input.push_back(makeError("compare.da-no-dump", fileLocation(npuStep),
                                  "and " + std::to_string(noDump - kMaxReportedRanks) + " more rank folders without "
                                      "dump.json here or in " + benchStep.string() + " (" + std::to_string(noDump)
                                      + " in all)"));
    if (noDump > 0)
        result.salvaged.push_back(std::to_string(noDump) + " rank folder(s) without dump.json: those ranks are left out");

    // The rank tables of this run are claimed under their names only once every rank has passed the load step.
    // A rank pair is loaded, compared and its table staged on any of the threads, a batch of ranks at a time (issue
    // 37: -da was one thread, the ranks are independent); what the run says of each rank is taken after its batch,
    // in rank order, so the text, the lists and the limits of what is listed are those of one thread.
    struct Side
    {
        std::optional<Diagnostic> unreadable; ///< loadRank's error: nothing of the dump can be salvaged
        std::optional<dump::LoadReport> report;
        fs::path file;
    };
    struct RankPass
    {
        bool paired = false; ///< both rank folders hold a dump.json
        Side sides[2];
        std::optional<Diagnostic> compareFailed;
        bool tabled = false;  ///< a rank table was made
        bool written = false; ///< ... and lies in the staging folder
        std::string text;     ///< ... or waits here
    };
    const unsigned threads = resolveThreadCount(options.threads);
    auto passRank = [&](std::size_t i, RankPass& pass) {
        const auto npuRecord = npuRanks.location(i);
        const auto benchRecord = benchRanks.location(i);
        if (!npuRecord || !benchRecord)
            return;
        pass.paired = true;
        bool clean = true;
        std::shared_ptr<const dump::RankDump> sides[2];
        const dump::RankLocation locations[2] = { npuLayout->ranks.at(*npuRecord), benchLayout->ranks.at(*benchRecord) };
        for (int s = 0; s < 2; ++s) {
            // msprobe's -da reads dump.json and the NPU stack.json (a broken one is a load error: a table without
            // its stack column would look complete); construct.json is not its input.
            dump::ReadOptions readOptions;
            readOptions.constructJson = false;
            readOptions.stackJson = s == 0;
            pass.sides[s].file = locations[s].dumpFile;
            auto loaded = dump::loadRank(locations[s], readOptions);
            if (!loaded) {
                // Not JSON at all, no "data" object, unreadable.
                clean = false;
                pass.sides[s].unreadable = loaded.error();
                continue;
            }
            const dump::LoadReport& report = pass.sides[s].report.emplace(dump::loadReport(**loaded));
            if (!report.clean() || report.entriesRead == 0)
                clean = false;
            sides[s] = *loaded;
        }
        if (!clean && !options.salvage)
            return; // keep loading: every damaged rank is named, not only the first
        if (!sides[0] || !sides[1] || sides[0]->dump->entries.empty() || sides[1]->dump->entries.empty())
            return;
        CompareOptions compareOptions;
        compareOptions.threads = 1; // the ranks are the parallel work
        compareOptions.sideThreads = threads == 1;
        if (sides[0]->stack.present) {
            compareOptions.stackMode = true;
            compareOptions.stack = &sides[0]->stack;
        }
        auto table = msprobe26::compareDumpsForDiffAnalyze(*sides[0]->dump, *sides[1]->dump, compareOptions);
        if (!table) {
            pass.compareFailed = table.error();
            return;
        }
        pass.tabled = true;
        pass.text = rankTableJson(*table);
        pass.written = staging.write("compare_result_" + npuRanks.name(i) + "_" + timestamp, pass.text);
        if (pass.written)
            std::string().swap(pass.text);
    };

    std::size_t damaged = 0;
    std::size_t reportedClean = 0;
    auto takeRank = [&](std::size_t i, RankPass& pass) {
        if (!pass.paired)
            return;
        const std::string rankName = npuRanks.name(i);
        for (Side& side : pass.sides) {
            if (side.unreadable) {
                if (++damaged <= kMaxReportedRanks)
                    input.push_back(std::move(*side.unreadable));
                result.salvaged.push_back(side.file.string() + ": not readable, rank " + rankName + " is left out");
                continue;
            }
            const dump::LoadReport& report = *side.report;
            // Warnings too (an unknown key), as compare prints them; the dumps of 10,000 ranks are not all listed.
            const bool listed = report.clean() ? reportedClean++ < kMaxReportedRanks : ++damaged <= kMaxReportedRanks;
            if (listed)
                input.insert(input.end(), report.diagnostics.begin(), report.diagnostics.end());
            if (!report.clean())
                result.salvaged.push_back(report.salvageText());
            if (report.entriesRead == 0) {
                // Nothing to compare against is not "no diff node".
                input.push_back(makeError("compare.empty-dump", fileLocation(report.file),
                                          std::string(&side == &pass.sides[0] ? "the NPU" : "the bench")
                                              + " dump has no entries: there is nothing to compare"));
                result.salvaged.push_back(report.file.string() + ": no entries, rank " + rankName + " is left out");
            }
        }
        if (pass.compareFailed) {
            // msprobe's compare_entry swallows a rank's CompareException: that rank has no table.
            Diagnostic d = std::move(*pass.compareFailed);
            d.severity = Severity::Warning;
            d.message += " (rank " + rankName + " is left out of -da, as msprobe 26 does)";
            result.diagnostics.push_back(std::move(d));
        }
        if (pass.tabled)
            staging.record("compare_result_" + rankName + "_" + timestamp, pass.written, std::move(pass.text));
    };

    // Until the run is known to go on, each table waits in a staging folder inside OUT, written as soon as it is
    // made, so that -da holds no rank's text (76 KB a rank of a small model: 760 MB at 10,000 ranks, issue 37); the
    // folder is removed whatever happens (a refused run leaves OUT as it was). Where it cannot be made, the texts
    // wait in memory as before.
    staging.reserve(npuRanks.size()); // one table a rank at most: no copy of the whole list as it grows
    staging.prepare();
    // A batch is a few dozen ranks a thread: the threads wait for the batch's last rank once a batch (a rank of a
    // small model takes about a millisecond), and a batch holds no dump, only what is said of its ranks.
    const std::size_t batch = 32 * static_cast<std::size_t>(threads);
    std::vector<RankPass> passes;
    for (std::size_t first = 0; first < npuRanks.size(); first += batch) {
        const std::size_t count = std::min(batch, npuRanks.size() - first);
        passes.assign(count, RankPass {});
        parallelFor(count, threads, [&](std::size_t k) { passRank(first + k, passes[k]); });
        for (std::size_t k = 0; k < count; ++k)
            takeRank(first + k, passes[k]);
    }
    if (damaged > kMaxReportedRanks)
        input.push_back(makeError("compare.da-damaged", fileLocation(npuStep),
                                  "and " + std::to_string(damaged - kMaxReportedRanks) + " more damaged rank dumps ("
                                      + std::to_string(damaged) + " in all)"));
    if (hasErrors(input) && !options.salvage) {
        result.refused = true;
        result.salvaged.clear();
        return false;
    }
    // A rank of this run that has no table now (left out: damaged and salvaged, or its compare failed) is not
    // answered by an old table of the same rank: that would name an origin from another run. (msprobe 26 would
    // take the old file.)
    for (std::size_t i = 0; i < npuRanks.size(); ++i) {
        if (const auto r = rankOfStem("compare_result_" + npuRanks.name(i) + "_" + timestamp))
            runRanks.insert(*r);
    }
    return true;
}

/// Phase B's stale tables: every rank table in OUT that this run did not write (spec §4.0), read, checked and walked
/// before anything is written; a damaged one is the error. A rank of this run without a table now is not answered
/// by an old one.
Result<bool> walkStaleTables(const fs::path& outDir, const RankSet& writtenRanks, const RankSet& runRanks,
                             Analyzer& analyzer, DiffAnalyzeResult& result)
{
    std::error_code ec;
    if (fs::is_directory(outDir, ec)) {
        std::map<int, fs::path> stale;
        for (fs::directory_iterator it(outDir, ec), end; !ec && it != end; it.increment(ec)) {
            const auto rank = rankOfTableFileName(it->path().filename().string());
            if (!rank || writtenRanks.count(*rank))
                continue;
            if (runRanks.count(*rank)) {
                result.diagnostics.push_back(makeWarning("compare.da-stale-table", fileLocation(it->path()),
                                                         "not analysed: rank " + std::to_string(*rank)
                                                             + " of this run has no rank table now, and an old one "
                                                               "would answer for it"));
                continue;
            }
            stale[*rank] = it->path();
        }
        if (ec)
            return makeError("compare.da-table", fileLocation(outDir),
                             "cannot list the output folder: " + ec.message());
        for (const auto& [rank, path] : stale) {
            auto text = readTextFile(path);
            if (!text)
                return text.error();
            auto document = parseRankTable(path, *text);
            if (!document)
                return document.error();
            result.diagnostics.push_back(makeWarning("compare.da-stale-table", fileLocation(path),
                                                     "this rank table was not written by this run but lies in the "
                                                     "output folder, so it is analysed as rank "
                                                         + std::to_string(rank) + " (msprobe 26 does the same)"));
            analyzer.addTable(rank, RankTableFile { rank, path, *document });
        }
    }
    return true;
}

} // namespace

Result<DiffAnalyzeResult> runDiffAnalyze(const fs::path& npuStep, const fs::path& benchStep, const fs::path& outDir,
                                         const DiffAnalyzeOptions& options)
{
    DiffAnalyzeResult result;
    result.log.push_back("Start finding first diff node......");
    result.log.push_back("Start comparing data ......");
    const std::string timestamp = options.timestamp.empty() ? localTimestamp() : options.timestamp;
    RankTableStaging staging(outDir, timestamp);
    RankSet runRanks; // a sorted vector (commgraph.h): 8 bytes a rank, a std::set<int> was 40 (issue 37)
    auto staged = stageRankTables(npuStep, benchStep, options, timestamp, staging, runRanks, result);
    if (!staged)
        return staged.error();
    if (!*staged)
        return result;

    // Phase B reads every rank table in OUT, stale ones too (spec §4.0); a rank written by this run uses this run's
    // table. The stale ones are read and checked before anything is written: a damaged one stops the run here.
    RankSet writtenRanks;
    for (std::size_t i = 0; i < staging.size(); ++i) {
        if (const auto r = rankOfStem(staging.stem(i)))
            writtenRanks.insert(*r);
    }
    // Each table is walked as soon as it is read and let go (the search keeps what it needs of it, issue 37).
    Analyzer analyzer(&result.log);
    if (auto stale = walkStaleTables(outDir, writtenRanks, runRanks, analyzer, result); !stale)
        return stale.error();
    writtenRanks = RankSet {}; // only the stale tables' walk asks them
    runRanks = RankSet {};
    std::error_code ec;
    fs::create_directories(outDir, ec);
    if (ec)
        return makeError("compare.write", fileLocation(outDir), "cannot create the output folder: " + ec.message());

    // Phase A's files, through the one output writer: claimed atomically, never replacing a file, complete or
    // absent (a full disk leaves no cut table under its final name). A taken name gets _1, _2, ...
    // One durability barrier for all of them before the analysis file that is read as their result, instead of
    // an fsync per table (issue 37: 10 ms a rank, most of -da's time at 1,000 ranks).
    std::optional<DeferredSync> durable(std::in_place, outDir);
    // The room needed (no vector grown by doubling: 10,000 tables, issue 37; the log's slack is for the search's
    // pass headers and "Pre Process completed.").
    result.rankTables.reserve(staging.size());
    result.log.reserve(result.log.size() + staging.size() + 16);
    analyzer.reserveTables(staging.size(), staging.stemBytes() + staging.size() * std::string_view("/.json").size());
    for (std::size_t i = 0; i < staging.size(); ++i) {
        std::string text;
        const auto path = staging.claim(i, text);
        if (!path)
            return makeError("compare.write", fileLocation(outDir / (staging.stem(i) + ".json")),
                             "cannot write the rank table: " + text);
        result.rankTables.push_back(*path);
        result.log.push_back("Saving json file to disk: " + fs::absolute(*path).string());
        if (const auto r = rankOfTableFileName(path->filename().string())) {
            auto document = parseRankTable(*path, text);
            if (!document)
                return document.error();
            analyzer.addTable(*r, RankTableFile { *r, *path, *document });
        }
    }
    staging.releaseClaimed();
    if (auto failure = durable->barrier())
        return makeError("compare.write", fileLocation(outDir), "cannot write the rank tables: " + *failure);
    durable.reset();

    result.log.push_back("Pre Process completed.");
    auto analysed = analyzer.run();
    if (!analysed)
        return analysed.error();
    if (*analysed) {
        auto written = writeAnalysisFile(outDir, "diff_analyze_", **analysed, "compare.write");
        if (!written)
            return written.error();
        result.analyzeFile = *written;
        result.log.push_back("The analyze result is saved in: " + written->string());
    }
    return result;
}

} // namespace probescope::compare::msprobe26
