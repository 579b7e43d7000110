// SPDX-License-Identifier: Apache-2.0
#include "ui/models/graphsides.h"

#include "core/dump/rankdump.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <functional>
#include <set>
#include <unordered_map>

namespace probescope::ui {

using session::Status;

std::optional<std::uint32_t> GraphSide::find(std::string_view name) const
{
    const auto it = std::lower_bound(nameIndex.begin(), nameIndex.end(), name,
                                     [](const auto& e, std::string_view n) { return e.first < n; });
    if (it == nameIndex.end() || it->first != name)
        return std::nullopt;
    return it->second;
}

std::vector<std::uint32_t> GraphSide::ancestorsOf(std::uint32_t n) const
{
    std::vector<std::uint32_t> out;
    if (n >= nodes.size())
        return out;
    // A parent chain is acyclic (both sources guarantee it); the bound is a guard, not a rule.
    for (std::int32_t p = nodes[n].parent; p >= 0 && out.size() <= nodes.size(); p = nodes[static_cast<std::uint32_t>(p)].parent)
        out.push_back(static_cast<std::uint32_t>(p));
    std::reverse(out.begin(), out.end());
    return out;
}

void GraphSide::finish()
{
    // Depth top-down (roots first, then children: an explicit stack, trees run 100+ levels deep in Megatron dumps),
    // subtree statuses bottom-up over the same visit in reverse.
    std::vector<std::uint32_t> visit;
    visit.reserve(nodes.size());
    std::vector<std::uint32_t> stack(roots.rbegin(), roots.rend());
    for (const std::uint32_t r : roots)
        nodes[r].depth = 0;
    while (!stack.empty()) {
        const std::uint32_t n = stack.back();
        stack.pop_back();
        visit.push_back(n);
        for (const std::uint32_t c : childrenOf(n)) {
            nodes[c].depth = nodes[n].depth + 1;
            stack.push_back(c);
        }
    }
    for (GraphNode& node : nodes)
        node.subtree = node.own;
    for (auto it = visit.rbegin(); it != visit.rend(); ++it) {
        const GraphNode& node = nodes[*it];
        if (node.parent >= 0) {
            GraphNode& parent = nodes[static_cast<std::uint32_t>(node.parent)];
            parent.subtree = session::worse(parent.subtree, node.subtree);
        }
    }
}

void GraphSide::buildIndex()
{
    nameIndex.clear();
    nameIndex.reserve(nodes.size());
    for (std::uint32_t n = 0; n < nodes.size(); ++n)
        nameIndex.emplace_back(nodes[n].name, n);
    std::sort(nameIndex.begin(), nameIndex.end());
}

namespace {

bool isModuleName(std::string_view name)
{
    return name.starts_with("Module.") || name.starts_with("Cell.") || name.find("parameters_grad") != std::string_view::npos;
}

/// A side from a construct tree: the same indices, children and execution order.
GraphSide sideOfTree(const tree::ConstructTree& tree)
{
    GraphSide side;
    side.nodes.resize(tree.size());
    side.children.reserve(tree.size());
    for (std::uint32_t n = 0; n < tree.size(); ++n) {
        const tree::TreeNode& t = tree.node(tree::NodeId { n });
        GraphNode& g = side.nodes[n];
        g.name = t.key;
        g.parent = t.parent.valid() ? static_cast<std::int32_t>(t.parent.value) : -1;
        g.firstChild = static_cast<std::uint32_t>(side.children.size());
        g.childCount = t.childCount;
        g.order = t.executionIndex;
        for (const tree::NodeId c : tree.children(tree::NodeId { n }))
            side.children.push_back(c.value);
        g.module = t.childCount > 0 || isModuleName(t.key);
    }
    for (const tree::NodeId r : tree.roots())
        side.roots.push_back(r.value);
    return side;
}

std::string placeOf(const dump::RankLocation& where)
{
    std::string place = where.stepLabel;
    if (!where.rankLabel.empty())
        place += (place.empty() ? "" : " · ") + where.rankLabel;
    return place;
}

/// Links partners both ways (the first claim of a bench node wins: a bench node shows one NPU node's verdict).
void link(GraphSide& npu, GraphSide& bench, std::uint32_t a, std::uint32_t b)
{
    if (npu.nodes[a].partner >= 0 || bench.nodes[b].partner >= 0)
        return;
    npu.nodes[a].partner = static_cast<std::int32_t>(b);
    bench.nodes[b].partner = static_cast<std::int32_t>(a);
}

/// Bench verdicts from their partners; an unpaired bench node is unmatched. Then both sides' derived fields.
void finishBoth(GraphSides& sides)
{
    GraphSide& npu = sides.side(GraphSideId::Npu);
    GraphSide& bench = sides.side(GraphSideId::Bench);
    for (GraphNode& b : bench.nodes)
        b.own = b.partner >= 0 ? npu.nodes[static_cast<std::uint32_t>(b.partner)].own : Status::Unmatched;
    npu.finish();
    bench.finish();
    if (npu.nameIndex.size() != npu.size())
        npu.buildIndex();
    if (bench.nameIndex.size() != bench.size())
        bench.buildIndex();
    std::set<std::string_view> manualNpu;
    std::set<std::string_view> manualBench;
    for (const graph::NodeMatch& m : sides.manual) {
        manualNpu.insert(m.npu);
        manualBench.insert(m.bench);
    }
    for (GraphNode& n : npu.nodes)
        n.manual = manualNpu.count(n.name) > 0;
    for (GraphNode& n : bench.nodes)
        n.manual = manualBench.count(n.name) > 0;
}

} // namespace

std::shared_ptr<const tree::ConstructTree> benchTreeOf(const session::PairAnalysis& analysis)
{
    if (!analysis.skeleton || !analysis.skeleton->bench || !analysis.skeleton->bench->dump)
        return nullptr;
    const auto& loaded = analysis.skeleton->bench;
    if (loaded->construct.present)
        return tree::ConstructTree::build(loaded);
    // The compare reads the bench construct.json only for -lm: the graph view reads it here. A broken file gives a
    // flat side, as the tree of a dump without construct.json is flat (its problem is the bench dump's to report).
    auto rank = std::make_shared<dump::RankDump>(*loaded);
    const std::filesystem::path constructPath = loaded->location.dir / "construct.json";
    std::error_code ec;
    if (std::filesystem::is_regular_file(constructPath, ec)) {
        if (auto construct = dump::readConstructJson(constructPath))
            rank->construct = std::move(*construct);
    }
    return tree::ConstructTree::build(std::move(rank));
}

std::shared_ptr<const GraphSides> graphSidesFromAnalysis(const session::PairAnalysis& analysis,
                                                         std::shared_ptr<const tree::ConstructTree> benchTree)
{
    auto sides = std::make_shared<GraphSides>();
    if (!analysis.skeleton || !analysis.skeleton->tree)
        return sides;
    const auto npuTree = analysis.skeleton->tree;
    GraphSide& npu = sides->side(GraphSideId::Npu);
    npu = sideOfTree(*npuTree);
    npu.owner = npuTree;
    npu.where = placeOf(analysis.skeleton->pair.npu);
    if (analysis.status && analysis.status->own.size() == npu.size()) {
        for (std::uint32_t n = 0; n < npu.size(); ++n)
            npu.nodes[n].own = analysis.status->own[n];
    }
    if (analysis.manualMatches)
        for (const graph::MatchEntry& e : analysis.manualMatches->entries)
            sides->manual.push_back({ e.key, e.value });
    GraphSide& bench = sides->side(GraphSideId::Bench);
    if (benchTree) {
        bench = sideOfTree(*benchTree);
        bench.owner = benchTree;
    }
    bench.where = placeOf(analysis.skeleton->pair.bench);
    // Bench names are indexed before partners are linked (the rows name their bench entry).
    bench.buildIndex();
    if (const auto& table = analysis.table; table && benchTree) {
        int benchName = table->column("Bench Name");
        if (benchName < 0)
            benchName = 1;
        const auto column = static_cast<std::size_t>(benchName);
        std::string_view lastKey;
        std::optional<std::uint32_t> lastNode;
        for (std::size_t r = 0; r < table->rows.size(); ++r) {
            if (r >= table->matched.size() || !table->matched[r] || r >= table->npuEntry.size())
                continue;
            const std::uint32_t a = table->npuEntry[r];
            if (a >= npu.size() || npu.nodes[a].partner >= 0 || column >= table->rows[r].size())
                continue;
            const compare::Cell cell = table->rows[r][column];
            if (!cell.isString())
                continue;
            const std::string key = session::entryKeyOfRow(cell.asString());
            // Rows of one entry follow each other: one lookup per entry.
            if (key != lastKey) {
                lastNode = bench.find(key);
                lastKey = lastNode ? bench.nodes[*lastNode].name : std::string_view();
            }
            if (lastNode)
                link(npu, bench, a, *lastNode);
        }
        // Nodes without rows (an L1 dump's modules, a module whose rows were all filtered) line up by name.
        for (std::uint32_t a = 0; a < npu.size(); ++a) {
            if (npu.nodes[a].partner >= 0 || npu.nodes[a].own != Status::NoData)
                continue;
            if (const auto b = bench.find(npu.nodes[a].name))
                link(npu, bench, a, *b);
        }
    }
    if (!analysis.firstFailure.key.empty() && analysis.firstFailure.node.valid()
        && analysis.firstFailure.node.value < npu.size())
        sides->firstFailing = analysis.firstFailure.node.value;
    finishBoth(*sides);
    return sides;
}

Status paletteStatusOf(const graph::GraphFile& file, const graph::Node& node)
{
    return statusOfGraphNode(file, node, file.worstBand());
}

Status statusOfGraphNode(const graph::GraphFile& file, const graph::Node& node, std::optional<std::int32_t> worst)
{
    switch (node.status) {
    case graph::Status::NoValue:
        return Status::NoData;
    case graph::Status::Unmatched:
        return Status::Unmatched;
    case graph::Status::Bench:
        return Status::Pass; // replaced by the partner's verdict
    case graph::Status::Banded:
        break;
    }
    if (node.band < 0 || static_cast<std::size_t>(node.band) >= file.colours.size())
        return Status::NoData;
    if (worst && node.band == *worst)
        return Status::Error;
    const graph::ColourBand& band = file.colours[static_cast<std::size_t>(node.band)];
    if (band.level == "pass" || node.band == 0)
        return Status::Pass;
    if (band.level == "error")
        return Status::Error;
    return Status::Warning;
}

namespace {

GraphSide sideOfGraph(const graph::GraphFile& file, const graph::Graph& g, std::optional<std::int32_t> worst)
{
    GraphSide side;
    side.nodes.resize(g.nodes.size());
    side.children.reserve(g.nodes.size());
    for (std::uint32_t n = 0; n < g.nodes.size(); ++n) {
        const graph::Node& src = g.nodes[n];
        GraphNode& dst = side.nodes[n];
        dst.name = src.name;
        dst.parent = src.parent;
        dst.firstChild = static_cast<std::uint32_t>(side.children.size());
        // msprobe's sub_nodes order is the call order; node_order (post-order) is the execution order.
        dst.childCount = static_cast<std::uint32_t>(src.children.size());
        side.children.insert(side.children.end(), src.children.begin(), src.children.end());
        dst.order = n;
        dst.module = src.type != static_cast<std::uint8_t>(graph::NodeType::Api) || !src.children.empty();
        dst.own = statusOfGraphNode(file, src, worst);
        dst.manual = src.modified;
    }
    side.roots.assign(g.roots.begin(), g.roots.end());
    side.where = "step" + std::to_string(g.step) + " · rank" + std::to_string(g.rank);
    return side;
}

} // namespace

std::shared_ptr<const GraphSides> graphSidesFromGraphFile(std::shared_ptr<const graph::GraphFile> file, std::size_t npuGraph)
{
    auto sides = std::make_shared<GraphSides>();
    sides->fromGraphFile = true;
    if (!file || npuGraph >= file->graphs.size())
        return sides;
    const graph::Graph& npuSource = file->graphs[npuGraph];
    const auto worst = file->worstBand();
    GraphSide& npu = sides->side(GraphSideId::Npu);
    npu = sideOfGraph(*file, npuSource, worst);
    npu.owner = file;
    GraphSide& bench = sides->side(GraphSideId::Bench);
    const graph::Graph* benchSource = file->benchOf(npuSource);
    if (benchSource) {
        bench = sideOfGraph(*file, *benchSource, worst);
        bench.owner = file;
    }
    std::vector<bool> modified(npu.size());
    for (std::uint32_t n = 0; n < npu.size(); ++n)
        modified[n] = npu.nodes[n].manual;
    bench.buildIndex();
    if (benchSource) {
        // matched_node_link is the partner's ancestor path ending with the partner itself.
        for (std::uint32_t a = 0; a < npuSource.nodes.size(); ++a) {
            const auto& linkPath = npuSource.nodes[a].matchedLink;
            if (linkPath.empty())
                continue;
            if (const auto b = bench.find(linkPath.back()))
                link(npu, bench, a, *b);
        }
    }
    // The first failing node: the failing node with the smallest node_order (graphmodel's summarize()).
    const graph::GraphSummary summary = graph::summarize(*file, npuSource);
    sides->firstFailing = summary.firstFailing;
    for (std::uint32_t n = 0; n < npu.size(); ++n) {
        if (modified[n] && npu.nodes[n].partner >= 0)
            sides->manual.push_back({ std::string(npu.nodes[n].name),
                                      std::string(bench.nodes[static_cast<std::uint32_t>(npu.nodes[n].partner)].name) });
    }
    finishBoth(*sides);
    return sides;
}

namespace {

/// The position of the "forward" / "backward" segment of a dotted name, npos when it has none.
std::pair<std::size_t, std::size_t> directionSegment(std::string_view name)
{
    for (const std::string_view d : { std::string_view("forward"), std::string_view("backward") }) {
        for (std::size_t at = name.find(d); at != std::string_view::npos; at = name.find(d, at + 1)) {
            const bool starts = at == 0 || name[at - 1] == '.';
            const bool ends = at + d.size() == name.size() || name[at + d.size()] == '.';
            if (starts && ends)
                return { at, d.size() };
        }
    }
    return { std::string_view::npos, 0 };
}

std::string_view directionOf(std::string_view name)
{
    const auto [at, size] = directionSegment(name);
    return at == std::string_view::npos ? std::string_view() : name.substr(at, size);
}

} // namespace

std::string boxLabel(std::string_view name, std::string_view parentName, bool module)
{
    const auto withoutPrefix = [](std::string_view s) {
        if (s.starts_with("Module."))
            s.remove_prefix(7);
        return s;
    };
    std::string_view own = module ? withoutPrefix(name) : name;
    if (module) {
        const std::string_view parent = withoutPrefix(parentName);
        // The whole dotted segments both names begin with.
        std::size_t common = 0;
        for (std::size_t i = 0; i < own.size() && i < parent.size() && own[i] == parent[i]; ++i)
            if (own[i] == '.')
                common = i + 1;
        const std::string_view rest = own.substr(common);
        // At least a name before class.direction.index: a recompute of the parent's own module keeps its path.
        if (std::count(rest.begin(), rest.end(), '.') >= 3)
            own = rest;
    }
    // Inside a parent of the same direction the direction says nothing: "fc1.Linear.0", "Functional.linear.12".
    std::string label(own);
    const std::string_view direction = directionOf(own);
    if (!direction.empty() && !parentName.empty() && directionOf(parentName) == direction) {
        const auto [at, size] = directionSegment(own);
        const std::size_t from = at > 0 ? at - 1 : at; // with the dot before it (or after it, at the start)
        label.erase(from, size + 1);
    }
    return label;
}

std::string callStem(std::string_view name)
{
    // Split on '.', drop a number segment next to "forward"/"backward" (the call index of an API before it, of a
    // module after it).
    std::vector<std::string_view> parts;
    for (std::size_t start = 0;;) {
        const std::size_t dot = name.find('.', start);
        parts.push_back(name.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start));
        if (dot == std::string_view::npos)
            break;
        start = dot + 1;
    }
    const auto isNumber = [](std::string_view s) {
        return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
    };
    const auto isDirection = [](std::string_view s) { return s == "forward" || s == "backward"; };
    std::string out;
    for (std::size_t i = 0; i < parts.size(); ++i) {
        const bool nextIsDirection = i + 1 < parts.size() && isDirection(parts[i + 1]);
        const bool prevIsDirection = i > 0 && isDirection(parts[i - 1]);
        if (isNumber(parts[i]) && (nextIsDirection || prevIsDirection))
            continue;
        if (!out.empty())
            out += '.';
        out += parts[i];
    }
    return out;
}

namespace {

/// Descendant pairs of a matched (npu, bench) pair: children in execution order, each NPU child with the first
/// later bench child of the same call stem, then that pair's own children before the next sibling (depth first).
/// An explicit stack (hierarchies run thousands of levels deep) and each bench child's stem computed once, looked up
/// by stem (a scan of the bench children per NPU child was quadratic in a wide node).
void pairChildren(const GraphSides& sides, std::uint32_t a, std::uint32_t b, std::vector<graph::NodeMatch>& out)
{
    const GraphSide& npu = sides.npu();
    const GraphSide& bench = sides.bench();
    struct Frame
    {
        std::span<const std::uint32_t> npuChildren;
        std::span<const std::uint32_t> benchChildren;
        std::unordered_map<std::string, std::vector<std::size_t>> positions; ///< stem -> bench child positions, ascending
        std::size_t child = 0; ///< the next NPU child
        std::size_t next = 0;  ///< bench children before this are taken
    };
    const auto frameOf = [&](std::uint32_t na, std::uint32_t nb) {
        Frame f;
        f.npuChildren = npu.childrenOf(na);
        f.benchChildren = bench.childrenOf(nb);
        for (std::size_t k = 0; k < f.benchChildren.size(); ++k)
            f.positions[callStem(bench.nodes[f.benchChildren[k]].name)].push_back(k);
        return f;
    };
    std::vector<Frame> stack;
    stack.push_back(frameOf(a, b));
    while (!stack.empty()) {
        Frame& f = stack.back();
        if (f.child >= f.npuChildren.size()) {
            stack.pop_back();
            continue;
        }
        const std::uint32_t ca = f.npuChildren[f.child++];
        const auto it = f.positions.find(callStem(npu.nodes[ca].name));
        if (it == f.positions.end())
            continue;
        const auto at = std::lower_bound(it->second.begin(), it->second.end(), f.next);
        if (at == it->second.end())
            continue;
        const std::uint32_t cb = f.benchChildren[*at];
        f.next = *at + 1;
        out.push_back({ std::string(npu.nodes[ca].name), std::string(bench.nodes[cb].name) });
        stack.push_back(frameOf(ca, cb)); // may move f: not used after this
    }
}

} // namespace

std::vector<graph::NodeMatch> addManualMatch(const GraphSides& sides, const std::vector<graph::NodeMatch>& current,
                                             std::uint32_t npu, std::uint32_t bench, bool withChildren)
{
    if (npu >= sides.npu().size() || bench >= sides.bench().size())
        return current;
    std::vector<graph::NodeMatch> added { { std::string(sides.npu().nodes[npu].name),
                                            std::string(sides.bench().nodes[bench].name) } };
    if (withChildren)
        pairChildren(sides, npu, bench, added);
    // The opposite direction of each new pair where both nodes exist and are not paired by this match already.
    const auto inNpu = [&](std::string_view n) { return sides.npu().find(n).has_value(); };
    const auto inBench = [&](std::string_view n) { return sides.bench().find(n).has_value(); };
    added = graph::withOpposites(added, inNpu, inBench);
    std::set<std::string> takenNpu;
    std::set<std::string> takenBench;
    for (const graph::NodeMatch& m : added) {
        takenNpu.insert(m.npu);
        takenBench.insert(m.bench);
    }
    // The earlier matches of the nodes matched now give way: each node is matched once.
    std::vector<graph::NodeMatch> out;
    for (const graph::NodeMatch& m : current) {
        if (!takenNpu.count(m.npu) && !takenBench.count(m.bench))
            out.push_back(m);
    }
    out.insert(out.end(), added.begin(), added.end());
    return out;
}

std::vector<graph::NodeMatch> removeManualMatch(const GraphSides& sides, const std::vector<graph::NodeMatch>& current,
                                                std::uint32_t npu, bool withChildren)
{
    if (npu >= sides.npu().size())
        return current;
    std::set<std::string> names;
    std::vector<std::uint32_t> stack { npu };
    while (!stack.empty()) {
        const std::uint32_t n = stack.back();
        stack.pop_back();
        const std::string name(sides.npu().nodes[n].name);
        names.insert(name);
        names.insert(graph::oppositeName(name));
        if (withChildren)
            for (const std::uint32_t c : sides.npu().childrenOf(n))
                stack.push_back(c);
    }
    std::vector<graph::NodeMatch> out;
    for (const graph::NodeMatch& m : current) {
        if (!names.count(m.npu))
            out.push_back(m);
    }
    return out;
}

} // namespace probescope::ui
