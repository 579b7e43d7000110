// SPDX-License-Identifier: Apache-2.0
#include "core/graph/graphmodel.h"

#include "core/graph/orderedjson.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <unordered_map>
#include <unordered_set>

namespace probescope::graph {

std::string_view versionName(MsprobeVersion version)
{
    switch (version) {
    case MsprobeVersion::V12Vis: return "msprobe 1.2 .vis";
    case MsprobeVersion::V8: return "msprobe 8.x .vis.db";
    case MsprobeVersion::V26: return "msprobe 26.x .vis.db";
    }
    return "?";
}

std::string_view sideName(Side side)
{
    return side == Side::Npu ? "NPU" : "Bench";
}

bool ColourBand::contains(double p) const
{
    if (!lo || !hi)
        return false;
    return (*lo <= p && p < *hi) || (*hi == 1.0 && p == 1.0) || (*lo == 0.0 && p == 0.0);
}

std::optional<std::uint32_t> Graph::find(std::string_view name) const
{
    for (std::uint32_t i = 0; i < nodes.size(); ++i)
        if (nodes[i].name == name)
            return i;
    return std::nullopt;
}

bool GraphFile::isCompare() const
{
    if (config.graphType == "compare")
        return true;
    return std::any_of(graphs.begin(), graphs.end(), [](const Graph& g) { return g.side == Side::Bench; });
}

void GraphFile::takeWarnings(std::vector<std::string>& other, std::size_t otherMore)
{
    for (std::string& w : other)
        warn([&] { return std::move(w); });
    moreWarnings += otherMore;
    std::vector<std::string>().swap(other);
}

void GraphFile::closeWarnings()
{
    if (moreWarnings > 0)
        warnings.push_back("... and " + std::to_string(moreWarnings) + " more");
    moreWarnings = 0;
}

std::optional<std::size_t> jsonTooDeepAt(std::string_view text, std::size_t limit)
{
    std::size_t depth = 0;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (c == '"') {
            // Skip the string (an escaped quote does not end it); an unterminated one is the parser's error.
            for (++i; i < text.size() && text[i] != '"'; ++i)
                if (text[i] == '\\')
                    ++i;
        } else if (c == '[' || c == '{') {
            if (++depth > limit)
                return i;
        } else if ((c == ']' || c == '}') && depth > 0) {
            --depth;
        }
    }
    return std::nullopt;
}

std::optional<std::int32_t> GraphFile::worstBand() const
{
    for (std::size_t i = colours.size(); i-- > 0;)
        if (colours[i].lo && colours[i].hi)
            return static_cast<std::int32_t>(i);
    return std::nullopt;
}

std::optional<std::int32_t> GraphFile::bandOf(double precision) const
{
    for (std::size_t i = 0; i < colours.size(); ++i)
        if (colours[i].contains(precision))
            return static_cast<std::int32_t>(i);
    return std::nullopt;
}

const Graph* GraphFile::benchOf(const Graph& npu) const
{
    for (const Graph& g : graphs)
        if (g.side == Side::Bench && g.step == npu.step && g.rank == npu.rank)
            return &g;
    return nullptr;
}

void assignStatuses(GraphFile& file)
{
    const bool compare = file.isCompare();
    for (Graph& g : file.graphs) {
        // A precision_index that falls in no colour band leaves its node "no value": said once per graph, so that
        // bands that cannot be read never pass for a graph without verdicts.
        std::size_t outside = 0;
        const Node* firstOutside = nullptr;
        for (Node& n : g.nodes) {
            n.band = -1;
            if (compare && n.matchedLink.empty()) {
                n.status = Status::Unmatched;
            } else if (g.side == Side::Bench) {
                n.status = compare ? Status::Bench : Status::NoValue;
            } else if (n.precision) {
                if (const auto band = file.bandOf(*n.precision)) {
                    n.status = Status::Banded;
                    n.band = *band;
                } else {
                    n.status = Status::NoValue;
                    if (compare && outside++ == 0)
                        firstOutside = &n;
                }
            } else {
                n.status = Status::NoValue;
            }
        }
        if (outside > 0)
            file.warn([&] {
                char value[32];
                std::snprintf(value, sizeof value, "%.17g", *firstOutside->precision);
                return g.id + ": " + std::to_string(outside) + " node(s) have a precision_index in no colour band of "
                    + file.path + " (first " + firstOutside->name + ", " + value + "); they are shown without a verdict";
            });
    }
}

namespace {

/// Node names to indices without a heap node per entry: open addressing over the graph's own names (a million names
/// hashed into one array; std::unordered_map's million allocations were a third of the linking time).
class NameIndex
{
public:
    explicit NameIndex(const std::vector<Node>& nodes)
        : m_nodes(nodes)
    {
        std::size_t size = 16;
        while (size < nodes.size() * 2)
            size *= 2;
        m_slots.assign(size, kEmpty);
        m_mask = size - 1;
    }
    /// Adds node i; returns the index of an earlier node of the same name instead, if there is one.
    std::optional<std::uint32_t> insert(std::uint32_t i)
    {
        for (std::size_t at = hash(m_nodes[i].name) & m_mask;; at = (at + 1) & m_mask) {
            if (m_slots[at] == kEmpty) {
                m_slots[at] = i;
                return std::nullopt;
            }
            if (m_nodes[m_slots[at]].name == m_nodes[i].name)
                return m_slots[at];
        }
    }
    std::optional<std::uint32_t> find(std::string_view name) const
    {
        for (std::size_t at = hash(name) & m_mask;; at = (at + 1) & m_mask) {
            if (m_slots[at] == kEmpty)
                return std::nullopt;
            if (m_nodes[m_slots[at]].name == name)
                return m_slots[at];
        }
    }

private:
    static std::size_t hash(std::string_view s) { return std::hash<std::string_view> {}(s); }
    static constexpr std::uint32_t kEmpty = 0xFFFFFFFFu;
    const std::vector<Node>& m_nodes;
    std::vector<std::uint32_t> m_slots;
    std::size_t m_mask = 0;
};

} // namespace

void linkNodes(GraphFile& file, Graph& graph)
{
    NameIndex index(graph.nodes);
    for (std::uint32_t i = 0; i < graph.nodes.size(); ++i)
        if (index.insert(i))
            file.warn([&] { return graph.id + ": node " + graph.nodes[i].name + " appears twice"; });
    graph.roots.clear();
    // Siblings are neighbours in node_order: the parent found for the previous node is tried first.
    std::string_view lastUp;
    std::int32_t lastParent = -1;
    for (std::uint32_t i = 0; i < graph.nodes.size(); ++i) {
        Node& n = graph.nodes[i];
        n.parent = -1;
        n.children.clear();
        if (!n.upNode.empty()) {
            std::optional<std::uint32_t> found;
            if (lastParent >= 0 && n.upNode == lastUp)
                found = static_cast<std::uint32_t>(lastParent);
            else
                found = index.find(n.upNode);
            if (!found || *found == i) {
                file.warn([&] {
                    return graph.id + ": node " + n.name + " names a parent " + n.upNode + " the graph does not hold";
                });
            } else {
                n.parent = static_cast<std::int32_t>(*found);
                lastUp = graph.nodes[*found].name;
                lastParent = n.parent;
            }
        }
        if (n.parent < 0)
            graph.roots.push_back(i);
    }
    // Children come from sub_nodes (msprobe's order); a child is kept only under the parent it names itself,
    // so a damaged file can never make a node appear twice or form a cycle through sub_nodes. In node_order
    // (post-order) the children naming a parent already come in its sub_nodes order: when they spell sub_nodes
    // exactly, no lookup by name is needed (a million of them is most of the linking time).
    std::vector<std::vector<std::uint32_t>> byParent(graph.nodes.size());
    for (std::uint32_t i = 0; i < graph.nodes.size(); ++i)
        if (graph.nodes[i].parent >= 0)
            byParent[static_cast<std::size_t>(graph.nodes[i].parent)].push_back(i);
    for (std::uint32_t i = 0; i < graph.nodes.size(); ++i) {
        Node& n = graph.nodes[i];
        auto& found = byParent[i];
        bool same = found.size() == n.subNodes.size();
        for (std::size_t k = 0; same && k < found.size(); ++k)
            same = graph.nodes[found[k]].name == n.subNodes[k];
        if (same) {
            n.children = std::move(found);
            continue;
        }
        for (const std::string& sub : n.subNodes) {
            const auto it = index.find(sub);
            if (!it || graph.nodes[*it].parent != static_cast<std::int32_t>(i)) {
                file.warn([&] {
                    return graph.id + ": node " + n.name + " lists a child " + sub
                        + " that is missing or names another parent";
                });
                continue;
            }
            n.children.push_back(*it);
        }
    }
    // A cycle through up_node (a -> b -> a) leaves nodes unreachable from any root: report it, and make the
    // first node of each such cycle a root so that every node is shown once.
    std::vector<std::uint8_t> reached(graph.nodes.size(), 0);
    std::vector<std::uint32_t> stack(graph.roots.begin(), graph.roots.end());
    while (!stack.empty()) {
        const std::uint32_t i = stack.back();
        stack.pop_back();
        if (reached[i])
            continue;
        reached[i] = 1;
        for (std::uint32_t c : graph.nodes[i].children)
            stack.push_back(c);
    }
    std::vector<std::uint8_t> cut(graph.nodes.size(), 0);
    bool anyCut = false;
    for (std::uint32_t i = 0; i < graph.nodes.size(); ++i) {
        if (reached[i])
            continue;
        // Parents reachable by up_node that never reach a root: a cycle (or children dropped above).
        file.warn([&] { return graph.id + ": node " + graph.nodes[i].name + " is not reachable from a root"; });
        // Cut it from the parent of its cycle, so that it is shown once, as a root (taken out of the parent's
        // children below, in one pass: an erase per cut node was quadratic in a parent's children).
        if (graph.nodes[i].parent >= 0) {
            cut[i] = 1;
            anyCut = true;
        }
        graph.nodes[i].parent = -1;
        graph.roots.push_back(i);
        stack.push_back(i);
        while (!stack.empty()) {
            const std::uint32_t j = stack.back();
            stack.pop_back();
            if (reached[j])
                continue;
            reached[j] = 1;
            for (std::uint32_t c : graph.nodes[j].children)
                stack.push_back(c);
        }
    }
    if (anyCut)
        for (Node& n : graph.nodes)
            n.children.erase(std::remove_if(n.children.begin(), n.children.end(), [&](std::uint32_t c) { return cut[c] != 0; }),
                             n.children.end());
    // The distinct micro steps: usually a few values over many nodes (runs of one value are skipped), but a file may
    // give every node its own: collected, then sorted once (n log n; a sorted insert per value was quadratic).
    std::vector<std::int64_t> micro;
    for (std::size_t i = 0; i < graph.nodes.size(); ++i)
        if (i == 0 || graph.nodes[i].microStep != graph.nodes[i - 1].microStep)
            micro.push_back(graph.nodes[i].microStep);
    std::sort(micro.begin(), micro.end());
    micro.erase(std::unique(micro.begin(), micro.end()), micro.end());
    micro.shrink_to_fit();
    graph.microSteps = std::move(micro);
}

GraphSummary summarize(const GraphFile& file, const Graph& graph)
{
    GraphSummary s;
    s.nodes = graph.nodes.size();
    s.perBand.assign(file.colours.size(), 0);
    const auto worst = file.worstBand();
    for (std::uint32_t i = 0; i < graph.nodes.size(); ++i) {
        const Node& n = graph.nodes[i];
        s.modules += n.type == static_cast<std::uint8_t>(NodeType::Module);
        s.apis += n.type == static_cast<std::uint8_t>(NodeType::Api);
        s.collections += n.type == static_cast<std::uint8_t>(NodeType::ApiCollection);
        switch (n.status) {
        case Status::NoValue: ++s.noValue; break;
        case Status::Unmatched: ++s.unmatched; break;
        case Status::Bench: ++s.bench; break;
        case Status::Banded:
            ++s.perBand[static_cast<std::size_t>(n.band)];
            if (worst && n.band == *worst && !s.firstFailing)
                s.firstFailing = i; // nodes are in node_order: the first one found ran first
            break;
        }
    }
    return s;
}

namespace {

ColourBand band(std::string colour, std::optional<double> lo, std::optional<double> hi, std::string description,
                std::string level = {})
{
    return ColourBand { std::move(colour), lo, hi, std::move(description), std::move(level) };
}

} // namespace

std::vector<ColourBand> defaultColours(MsprobeVersion version, std::string_view task)
{
    // The texts are msprobe's node_colors (8.3.3 visualization/graph/node_colors.py, 26.0.0 the same file);
    // descriptions are shortened to English here, a file's own node_colors always take precedence.
    std::vector<ColourBand> out;
    if (version == MsprobeVersion::V26) {
        out.push_back(band("#FFFCF3", 0, 0.3, "pass", "pass"));
        out.push_back(band("#FFDC7F", 0.3, 0.6, "warning", "warning"));
        out.push_back(band("#FF704D", 0.6, 1, "error", "error"));
        out.push_back(band("#C7C7C7", std::nullopt, std::nullopt, "unmatched node", "unmatched node"));
        return out;
    }
    if (task == "md5") {
        out.push_back(band("#FFFCF3", 1, 1, "all inputs and outputs equal"));
        out.push_back(band("#FF704D", 0, 0, "an input or output differs"));
    } else if (task == "summary") {
        out.push_back(band("#FFFCF3", 0, 0.2, "relative error of the outputs"));
        out.push_back(band("#FFEDBE", 0.2, 0.4, "relative error of the outputs"));
        out.push_back(band("#FFDC7F", 0.4, 0.6, "relative error of the outputs"));
        out.push_back(band("#FFC62E", 0.6, 0.8, "relative error of the outputs"));
        out.push_back(band("#FF704D", 0.8, 1, "relative error of the outputs"));
    } else {
        out.push_back(band("#FFFCF3", 0, 0.05, "drop of the one-thousandth ratio"));
        out.push_back(band("#FFEDBE", 0.05, 0.1, "drop of the one-thousandth ratio"));
        out.push_back(band("#FFDC7F", 0.1, 0.15, "drop of the one-thousandth ratio"));
        out.push_back(band("#FFC62E", 0.15, 0.2, "drop of the one-thousandth ratio"));
        out.push_back(band("#FF704D", 0.2, 1, "drop of the one-thousandth ratio"));
    }
    out.push_back(band("#C7C7C7", std::nullopt, std::nullopt, "unmatched node"));
    return out;
}

std::optional<std::vector<ColourBand>> parseNodeColours(std::string_view json)
{
    const auto parsed = detail::parseOrderedJson(json).first;
    if (!parsed)
        return std::nullopt;
    const nlohmann::ordered_json& j = *parsed;
    std::vector<ColourBand> out;
    if (j.is_null())
        return out;
    if (!j.is_object())
        return std::nullopt;
    for (const auto& [colour, spec] : j.items()) {
        ColourBand b;
        b.colour = colour;
        if (!spec.is_object())
            return std::nullopt;
        if (const auto v = spec.find("value"); v != spec.end() && v->is_array() && v->size() == 2
            && (*v)[0].is_number() && (*v)[1].is_number()) {
            b.lo = (*v)[0].get<double>();
            b.hi = (*v)[1].get<double>();
        }
        if (const auto d = spec.find("description"); d != spec.end() && d->is_string())
            b.description = d->get<std::string>();
        if (const auto l = spec.find("accuracy_level"); l != spec.end() && l->is_string())
            b.level = l->get<std::string>();
        out.push_back(std::move(b));
    }
    return out;
}

std::optional<std::vector<Param>> parseParams(std::string_view json)
{
    if (json.empty())
        return std::vector<Param> {};
    const auto parsed = detail::parseOrderedJson(json).first;
    if (!parsed || !parsed->is_object())
        return std::nullopt;
    const nlohmann::ordered_json& j = *parsed;
    std::vector<Param> out;
    for (const auto& [name, values] : j.items()) {
        Param p;
        p.name = name;
        if (values.is_object()) {
            for (const auto& [key, value] : values.items())
                p.values.emplace_back(key, value.is_string() ? value.get<std::string>() : value.dump());
        } else {
            p.values.emplace_back("value", values.is_string() ? values.get<std::string>() : values.dump());
        }
        out.push_back(std::move(p));
    }
    return out;
}

} // namespace probescope::graph
