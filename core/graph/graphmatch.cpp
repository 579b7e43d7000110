// SPDX-License-Identifier: Apache-2.0
// Writing a graph db, the matching: the nodes of the NPU and bench graphs linked as partners, by name and ancestors
// (GraphComparator._compare_nodes), by call counts (-fm, _compare_nodes_fuzzy) or by a .vis.config.
#include "core/graph/graphwriterparts.h"

#include <algorithm>
#include <map>
#include <unordered_map>

namespace probescope::graph::detail {

namespace {

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

} // namespace

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

} // namespace probescope::graph::detail
