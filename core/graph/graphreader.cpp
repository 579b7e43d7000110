// SPDX-License-Identifier: Apache-2.0
#include "core/graph/graphreader.h"

#include "core/graph/orderedjson.h"
#include "core/graph/sqlitedb.h"
#include "core/graph/visdbread.h"
#include "core/util/fileio.h"
#include "core/util/textposition.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <map>
#include <unordered_map>
#include <unordered_set>

namespace probescope::graph {

namespace {

using detail::ReadOnlyDb;
using Json = nlohmann::ordered_json;

void finishColours(GraphFile& file)
{
    const char* what = file.version == MsprobeVersion::V12Vis ? "Colors" : "node_colors";
    if (auto parsed = parseNodeColours(file.config.nodeColorsText)) {
        file.colours = std::move(*parsed);
    } else {
        file.warn([&] {
            return std::string(what) + " of " + file.path + " is not a JSON object of colour bands; msprobe's default bands are used";
        });
        file.colours.clear();
    }
    // A band whose value is no [lo, hi] pair of numbers colours nothing: said per band (the unmatched grey of
    // every version has no value; any other band without one is unreadable). A compare file with no readable band
    // at all would show every node without a verdict: msprobe's default bands are used instead, with the warning.
    std::size_t ranged = 0;
    for (const ColourBand& b : file.colours) {
        if (b.lo && b.hi) {
            ++ranged;
            continue;
        }
        const bool unmatchedBand = b.level == "unmatched node" || b.colour == "#C7C7C7";
        if (!unmatchedBand)
            file.warn([&] {
                return std::string(what) + " of " + file.path + ": band " + b.colour
                    + " has no readable value [lo, hi]; it colours no node";
            });
    }
    if (ranged == 0 && !file.colours.empty() && file.isCompare()) {
        file.warn([&] {
            return std::string(what) + " of " + file.path + " has no readable colour band; msprobe's default bands are used";
        });
        file.colours.clear();
    }
    if (file.colours.empty() && file.isCompare())
        file.colours = defaultColours(file.version, file.config.task);
}

/// A .vis.db: the stages of visdbread.h in order (schema, scan, link), then the colour bands and the verdicts.
Result<std::shared_ptr<const GraphFile>> readDb(const std::filesystem::path& path, const ReadOptions& options)
{
    auto opened = ReadOnlyDb::open(path, "graph.db", options.progress);
    if (!opened)
        return opened.error();
    const ReadOnlyDb& db = **opened;
    if (auto bad = detail::checkDbSchema(db))
        return *bad;
    auto file = std::make_shared<GraphFile>();
    file->path = path.string();
    if (auto wal = detail::walWarning(path))
        file->warn([&] { return std::move(*wal); });
    const bool v26 = db.hasColumn("tb_nodes", "is_distributed");
    file->version = v26 ? MsprobeVersion::V26 : MsprobeVersion::V8;
    if (auto bad = detail::readDbConfig(db, *file))
        return *bad;
    auto stacks = detail::readDbStacks(db, *file);
    if (!stacks)
        return stacks.error();
    auto index = detail::listDbGraphs(db, path, options, *file);
    if (!index)
        return index.error();
    auto orders = detail::scanDbNodes(db, path, *index, v26, options, *file);
    if (!orders)
        return orders.error();
    detail::resolveDbStacks(*file, *stacks);
    detail::orderDbNodes(*file, *orders);
    file->dataDeferred = !options.nodeData;
    detail::linkDbGraphs(*file);
    finishColours(*file);
    assignStatuses(*file);
    // The cap is applied to every warning, linking's included: one summary line for the rest.
    file->closeWarnings();
    return std::shared_ptr<const GraphFile>(std::move(file));
}

// ---- .vis (msprobe 1.2.x JSON) ----

std::int64_t numberAfter(std::string_view name, std::string_view word)
{
    const auto at = name.find(word);
    if (at == std::string_view::npos)
        return 0;
    std::int64_t v = 0;
    const char* begin = name.data() + at + word.size();
    std::from_chars(begin, name.data() + name.size(), v);
    return v;
}

std::string jsonText(const Json& j)
{
    // msprobe stores input_data/output_data with Python's json.dumps defaults; here the text only has to be the
    // same JSON object (docs/graph.md), so nlohmann's compact form is kept.
    return j.is_null() ? std::string("{}") : j.dump();
}

std::optional<std::string> readVisGraph(const Json& g, Side side, std::int64_t step, std::int64_t rank, GraphFile& file)
{
    if (!g.is_object())
        return std::string(sideName(side)) + " is not a JSON object";
    const auto nodesIt = g.find("node");
    const auto rootIt = g.find("root");
    if (nodesIt == g.end() || !nodesIt->is_object())
        return std::string(sideName(side)) + ": \"node\" (an object of nodes) is missing";
    if (rootIt == g.end() || !rootIt->is_string())
        return std::string(sideName(side)) + ": \"root\" (a node name) is missing";
    const Json& nodes = *nodesIt;
    Graph graph;
    graph.side = side;
    graph.step = step;
    graph.rank = rank;
    graph.id = std::string(sideName(side)) + "_" + std::to_string(step) + "_" + std::to_string(rank);
    std::string dataDir;
    if (const auto d = g.find("dump_data_dir"); d != g.end() && d->is_string())
        dataDir = d->get<std::string>();

    // msprobe's node_order: iterative DFS post-order from the root over subnodes (Graph.get_sorted_nodes). Nodes are
    // looked up through one hash index of the object's keys: ordered_json finds a key by a linear search, which made
    // every step of the walk cost the node count.
    std::unordered_map<std::string_view, const Json*> byName;
    byName.reserve(nodes.size());
    for (const auto& [name, value] : nodes.items())
        byName.emplace(name, &value);
    const auto nodeJson = [&](std::string_view name) -> const Json* {
        const auto it = byName.find(name);
        return it == byName.end() ? nullptr : it->second;
    };
    const auto subnodesJson = [&](std::string_view name) -> const Json* {
        const Json* j = nodeJson(name);
        if (!j || !j->is_object())
            return nullptr;
        const auto s = j->find("subnodes");
        return s != j->end() && s->is_array() ? &*s : nullptr;
    };
    std::vector<std::string_view> order;
    order.reserve(nodes.size());
    std::unordered_set<std::string_view> seen;
    seen.reserve(nodes.size());
    struct Frame
    {
        std::string_view name;
        const Json* subs = nullptr;
        std::size_t next = 0;
    };
    std::vector<Frame> stack;
    const std::string root = rootIt->get<std::string>();
    if (const auto r = byName.find(root); r != byName.end()) {
        stack.push_back({ r->first, subnodesJson(root), 0 });
        seen.insert(r->first);
    }
    while (!stack.empty()) {
        Frame& f = stack.back();
        if (f.subs && f.next < f.subs->size()) {
            const Json& child = (*f.subs)[f.next++];
            if (!child.is_string())
                continue;
            const auto c = byName.find(child.get_ref<const std::string&>());
            if (c != byName.end() && seen.insert(c->first).second)
                stack.push_back({ c->first, subnodesJson(c->first), 0 });
            continue;
        }
        order.push_back(f.name);
        stack.pop_back();
    }
    // Not a structured binding: clang 14 (the fuzz preset) cannot capture one in the warning's lambda.
    for (const auto& item : nodes.items()) {
        const std::string& name = item.key();
        if (!seen.count(name)) {
            file.warn([&] { return graph.id + ": node " + name + " is not reachable from the root " + root; });
            order.push_back(byName.find(name)->first);
        }
    }

    std::map<std::vector<std::string>, std::int32_t> stackIndex;
    for (const std::string_view name : order) {
        const Json& j = *nodeJson(name);
        Node n;
        n.name = name;
        if (!j.is_object()) {
            file.warn([&] { return graph.id + ": node " + n.name + " is not a JSON object"; });
            graph.nodes.push_back(std::move(n));
            continue;
        }
        if (const auto t = j.find("node_type"); t != j.end() && t->is_number_unsigned() && t->get<unsigned>() < 256)
            n.type = static_cast<std::uint8_t>(t->get<unsigned>());
        else
            n.type = 255;
        if (const auto u = j.find("upnode"); u != j.end() && u->is_string() && u->get<std::string>() != "None")
            n.upNode = u->get<std::string>();
        if (const Json* subs = subnodesJson(name))
            for (const Json& e : *subs)
                if (e.is_string())
                    n.subNodes.push_back(e.get<std::string>());
        if (const auto l = j.find("matched_node_link"); l != j.end() && l->is_array())
            for (const Json& e : *l)
                if (e.is_string())
                    n.matchedLink.push_back(e.get<std::string>());
        if (const auto d = j.find("data"); d != j.end() && d->is_object())
            if (const auto p = d->find("precision_index"); p != d->end() && p->is_number()) {
                n.precision = p->get<double>();
                n.precisionIsInteger = p->is_number_integer();
            }
        if (const auto m = j.find("micro_step_id"); m != j.end() && m->is_number_integer())
            n.microStep = m->get<std::int64_t>();
        if (const auto o = j.find("overflow_level"); o != j.end() && o->is_string())
            n.overflowLevel = o->get<std::string>();
        if (const auto s = j.find("stack_info"); s != j.end() && s->is_array()) {
            std::vector<std::string> frames;
            for (const Json& e : *s)
                if (e.is_string())
                    frames.push_back(e.get<std::string>());
            const auto [it, added] = stackIndex.emplace(frames, static_cast<std::int32_t>(graph.stacks.size()));
            if (added)
                graph.stacks.push_back(std::move(frames));
            n.stack = it->second;
        }
        n.inputData = jsonText(j.value("input_data", Json::object()));
        n.outputData = jsonText(j.value("output_data", Json::object()));
        n.dumpDataDir = dataDir;
        graph.nodes.push_back(std::move(n));
    }
    linkNodes(file, graph);
    file.graphs.push_back(std::move(graph));
    return std::nullopt;
}

Result<std::shared_ptr<const GraphFile>> readVisJson(const std::filesystem::path& path)
{
    const SourceLocation where = fileLocation(path);
    auto text = readTextFile(path);
    if (!text)
        return text.error();
    // Linear in the text (orderedjson.h), nesting bounded; a number beyond a double (1e99999) is a parse failure
    // with its position like any other, never an exception.
    auto [parsed, failure] = detail::parseOrderedJson(*text);
    if (!parsed)
        return makeError("graph.vis", locate(*text, failure.offset, path.string()), "not valid JSON: " + failure.message);
    Json j = std::move(*parsed);
    if (!j.is_object())
        return makeError("graph.vis", where, "a .vis file holds a JSON object");
    auto file = std::make_shared<GraphFile>();
    file->path = path.string();
    file->version = MsprobeVersion::V12Vis;
    // A .vis holds one (step, rank); msprobe names it {build|compare}_step{N}_rank{M}_{ts}.vis.
    const std::string name = path.filename().string();
    const std::int64_t step = numberAfter(name, "step");
    const std::int64_t rank = numberAfter(name, "rank");
    GraphConfig& c = file->config;
    c.stepList = { step };
    c.rankList = { rank };
    if (const auto m = j.find("MicroSteps"); m != j.end() && m->is_number_integer())
        c.microSteps = m->get<std::int64_t>();
    if (const auto o = j.find("OverflowCheck"); o != j.end() && o->is_boolean())
        c.overflowCheck = o->get<bool>();
    const bool compare = j.contains("NPU");
    c.graphType = compare ? "compare" : "build";
    if (compare) {
        if (const auto t = j.find("task"); t != j.end() && t->is_string())
            c.task = t->get<std::string>();
        if (const auto t = j.find("ToolTip"); t != j.end())
            c.toolTip = t->is_string() ? t->get<std::string>() : t->dump();
        c.nodeColorsText = j.contains("Colors") ? j["Colors"].dump() : "null";
        if (auto error = readVisGraph(j["NPU"], Side::Npu, step, rank, *file))
            return makeError("graph.vis", where, *error);
        if (j.contains("Bench"))
            if (auto error = readVisGraph(j["Bench"], Side::Bench, step, rank, *file))
                return makeError("graph.vis", where, *error);
    } else {
        c.nodeColorsText = "null";
        if (auto error = readVisGraph(j, Side::Npu, step, rank, *file))
            return makeError("graph.vis", where, *error);
    }
    if (std::all_of(file->graphs.begin(), file->graphs.end(), [](const Graph& g) { return g.nodes.empty(); }))
        return makeError("graph.vis", where, "no graph in " + path.string() + ": it holds no node");
    finishColours(*file);
    assignStatuses(*file);
    file->closeWarnings();
    return std::shared_ptr<const GraphFile>(std::move(file));
}

bool endsWith(std::string_view s, std::string_view tail)
{
    return s.size() >= tail.size() && s.substr(s.size() - tail.size()) == tail;
}

} // namespace

Result<std::shared_ptr<const GraphFile>> readVisDb(const std::filesystem::path& path, const ReadOptions& options)
{
    return readDb(path, options);
}

Result<NodeData> readNodeData(const GraphFile& file, const Graph& graph, std::uint32_t node)
{
    auto opened = ReadOnlyDb::open(file.path, "graph.db");
    if (!opened)
        return opened.error();
    auto st = (*opened)->prepare("SELECT input_data, output_data FROM tb_nodes WHERE id = ?1");
    if (!st)
        return st.error();
    (*st)->bind(1, graph.id + "_" + graph.nodes.at(node).name);
    if (!(*st)->next())
        return (*st)->error() ? *(*st)->error()
                              : (*opened)->error("no tb_nodes row for node " + graph.nodes[node].name + " of " + graph.id);
    return NodeData { (*st)->text(0), (*st)->text(1) };
}

Result<std::shared_ptr<const GraphFile>> readVis(const std::filesystem::path& path)
{
    return readVisJson(path);
}

Result<std::shared_ptr<const GraphFile>> readGraphFile(const std::filesystem::path& path, const ReadOptions& options)
{
    // A .vis.db is SQLite whatever it holds (its error says so); other names are told apart by the header.
    if (endsWith(path.filename().string(), ".vis.db") || detail::looksLikeSqlite(path))
        return readDb(path, options);
    return readVisJson(path);
}

bool isGraphFileName(const std::filesystem::path& path)
{
    const std::string name = path.filename().string();
    return endsWith(name, ".vis.db") || endsWith(name, ".vis") || endsWith(name, ".trend.db");
}

} // namespace probescope::graph
