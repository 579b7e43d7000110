// SPDX-License-Identifier: Apache-2.0
#pragma once
// What the graph view draws (issue 27 item 3): the NPU and the bench hierarchy side by side, each node with its
// verdict and the node it is matched with on the other side. No Qt: plain values built by two adapters, one from a
// compared dump pair (the session's analysis, the tree view's data) and one from a graph file (.vis.db / .vis).

#include "core/graph/graphmodel.h"
#include "core/visconfig/visconfig.h"
#include "core/session/nodestatus.h"
#include "core/session/session.h"
#include "core/tree/constructtree.h"

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace probescope::ui {

enum class GraphSideId : std::uint8_t { Npu = 0, Bench = 1 };
inline GraphSideId otherSide(GraphSideId s) { return s == GraphSideId::Npu ? GraphSideId::Bench : GraphSideId::Npu; }

/// One node of a side. Indices are those of the source: the tree's NodeId for a dump pair (so the tree view and the
/// graph view name a node the same way), the graph's node index for a graph file.
struct GraphNode
{
    std::string_view name;          ///< views into the side's owner (the tree's keys, the graph's names)
    std::int32_t parent = -1;
    std::uint32_t firstChild = 0;   ///< into GraphSide::children
    std::uint32_t childCount = 0;
    std::uint32_t depth = 0;
    std::uint32_t order = 0;        ///< execution order (a node where it finished, docs/tree.md)
    bool module = false;            ///< drawn as an expandable box even without children
    bool manual = false;            ///< matched by hand (a manual match names it)
    session::Status own = session::Status::NoData;
    session::Status subtree = session::Status::NoData; ///< worst over the node and its descendants
    std::int32_t partner = -1;      ///< the matched node on the other side, -1 none
};

struct GraphSide
{
    std::vector<GraphNode> nodes;
    std::vector<std::uint32_t> children; ///< children of each node back to back, in execution order
    std::vector<std::uint32_t> roots;
    std::string where;                   ///< "step0 · rank0": shown above the side after its name (NPU / Bench)
    std::shared_ptr<const void> owner;   ///< keeps the names alive

    std::size_t size() const { return nodes.size(); }
    const GraphNode& node(std::uint32_t n) const { return nodes[n]; }
    std::span<const std::uint32_t> childrenOf(std::uint32_t n) const
    {
        return { children.data() + nodes[n].firstChild, nodes[n].childCount };
    }
    std::optional<std::uint32_t> find(std::string_view name) const;
    /// The node's ancestors, root first (not the node itself).
    std::vector<std::uint32_t> ancestorsOf(std::uint32_t n) const;

    // Built by the adapters.
    void finish();     ///< depth and subtree statuses from parents, children and own statuses
    void buildIndex(); ///< the name index find() reads
    std::vector<std::pair<std::string_view, std::uint32_t>> nameIndex; ///< sorted by name
};

/**
 * @brief Both sides of one compared pair, as the graph view shows them.
 *
 * Immutable once built. Partners are symmetric: npu.node(a).partner == b exactly when bench.node(b).partner == a.
 */
struct GraphSides
{
    std::array<GraphSide, 2> sides;
    std::optional<std::uint32_t> firstFailing; ///< NPU node, the first failing node in execution order
    std::vector<graph::NodeMatch> manual;      ///< the manual matches in force
    bool fromGraphFile = false;

    const GraphSide& side(GraphSideId s) const { return sides[static_cast<std::size_t>(s)]; }
    GraphSide& side(GraphSideId s) { return sides[static_cast<std::size_t>(s)]; }
    const GraphSide& npu() const { return side(GraphSideId::Npu); }
    const GraphSide& bench() const { return side(GraphSideId::Bench); }
    std::int32_t partnerOf(GraphSideId s, std::uint32_t node) const
    {
        const GraphSide& g = side(s);
        return node < g.size() ? g.nodes[node].partner : -1;
    }
};

/// The bench side's construct tree of an analysed pair: the bench dump with its construct.json (the compare reads
/// none for the bench side), in the order the NPU tree is built. Null when the analysis holds no bench dump.
std::shared_ptr<const tree::ConstructTree> benchTreeOf(const session::PairAnalysis& analysis);

/**
 * @brief The adapter from a compared dump pair: the NPU side is the analysis's tree with its verdicts (the tree
 * view's), the bench side `benchTree` (benchTreeOf). A node's partner is the bench entry its compared rows were
 * paired with (the compare's own matching, the manual matches included); a node without rows (a module of an L1
 * dump) is paired by its name when the bench side has a free node of that name. A bench node shows its partner's
 * verdict, an unpaired one is unmatched (grey).
 */
std::shared_ptr<const GraphSides> graphSidesFromAnalysis(const session::PairAnalysis& analysis,
                                                         std::shared_ptr<const tree::ConstructTree> benchTree);

/**
 * @brief The adapter from a graph file: the NPU graph `npuGraph` of `file` and its bench graph of the same (step,
 * rank) (an empty bench side for a build file). Partners follow matched_node_link; verdicts map msprobe's bands to
 * the status palette: the file's worst band is error, its first band pass, any other band warning; an unmatched
 * node is unmatched, a node without a value has no data; a bench node shows its partner's verdict.
 */
std::shared_ptr<const GraphSides> graphSidesFromGraphFile(std::shared_ptr<const graph::GraphFile> file,
                                                          std::size_t npuGraph);

/// The status palette's verdict of a graph file's node (tb_graph_ascend's band mapped as the graph view maps it: the
/// file's worst band error, its first band or a "pass" level pass, any other band warning; no band no data). A bench
/// node is Pass (its partner's verdict is what counts).
session::Status paletteStatusOf(const graph::GraphFile& file, const graph::Node& node);
/// The same with the file's worst band given (a caller looping over a million nodes asks for it once).
session::Status statusOfGraphNode(const graph::GraphFile& file, const graph::Node& node, std::optional<std::int32_t> worst);

/// What matching `npu` with `bench` adds to `current`: the pair, then (withChildren) their descendants paired in
/// execution order by name without the call index (`Functional.relu.3.forward` pairs `Functional.relu.7.forward`),
/// then the opposite direction of each new pair (forward <-> backward, graph::withOpposites). Pairs that re-pair a
/// node of `current` replace its earlier match: a node is matched once.
std::vector<graph::NodeMatch> addManualMatch(const GraphSides& sides, const std::vector<graph::NodeMatch>& current,
                                             std::uint32_t npu, std::uint32_t bench, bool withChildren);

/// `current` without the manual matches of NPU node `npu` (and of its opposite direction); unchanged when the node
/// has none.
std::vector<graph::NodeMatch> removeManualMatch(const GraphSides& sides, const std::vector<graph::NodeMatch>& current,
                                                std::uint32_t npu, bool withChildren);

/// What a graph box shows of a node (issue 36 item 2): what tells it from its siblings. A module loses "Module." and
/// the leading path segments it shares with its parent ("Module.block.ffn.fc1.Linear.forward.0" under
/// "Module.block.ffn.FeedForward.forward.0" is "fc1.Linear.0"), keeping at least its name and class; inside a parent
/// of the same direction the "forward" / "backward" segment goes too ("Functional.linear.12.forward" is
/// "Functional.linear.12"). The box elides it on the left, so the op or class and the call index stay.
std::string boxLabel(std::string_view name, std::string_view parentName, bool module);

/// A name without its call index, for pairing children: "Functional.relu.3.forward" -> "Functional.relu.forward",
/// "Module.layer.Linear.forward.0" -> "Module.layer.Linear.forward".
std::string callStem(std::string_view name);

} // namespace probescope::ui
