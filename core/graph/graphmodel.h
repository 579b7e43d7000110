// SPDX-License-Identifier: Apache-2.0
#pragma once
// The graph model of msprobe's graph visualization (docs/graph.md): what a `.vis.db` (msprobe 8.x / 26.x) or a
// `.vis` (msprobe 1.2.x JSON) holds, as plain immutable values. No Qt, no SQLite in this header.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace probescope::graph {

/// Which msprobe wrote the file; precision_index and the colour bands mean different things per version.
enum class MsprobeVersion : std::uint8_t {
    V12Vis, ///< msprobe 1.2.x `.vis` JSON (8.x semantics of precision_index)
    V8,     ///< msprobe 8.x `.vis.db` (no is_distributed column)
    V26,    ///< msprobe 26.x `.vis.db` (is_distributed column; pass/warning/error as 0/0.5/1)
};
std::string_view versionName(MsprobeVersion version);

enum class Side : std::uint8_t { Npu, Bench };
std::string_view sideName(Side side); ///< "NPU" / "Bench", msprobe's data_source spelling

/// msprobe's NodeOp: 0 module, 1 function_api, 9 api_collection (Apis_Between_Modules.N); anything else kept as is.
enum class NodeType : std::uint8_t { Module = 0, Api = 1, ApiCollection = 9 };

/// One colour band of msprobe's node_colors: a node with precision_index p takes the first band with
/// lo <= p < hi, or hi == 1 && p == 1, or lo == 0 && p == 0 (tb_graph_ascend's rule). A band without
/// a range is the "unmatched" grey.
struct ColourBand
{
    std::string colour;      ///< "#RRGGBB"
    std::optional<double> lo; ///< absent for the unmatched band
    std::optional<double> hi;
    std::string description;
    std::string level; ///< 26.x accuracy_level ("pass", "warning", "error", "unmatched node"); empty in 8.x / 1.2
    bool contains(double p) const;
};

/// What the viewer colours a node with.
enum class Status : std::uint8_t {
    NoValue,   ///< no precision_index (build graphs, nodes without compared data): the plugin's base colour
    Unmatched, ///< a compare graph's node with an empty matched_node_link: grey
    Bench,     ///< a matched node of the bench graph: the fixed bench colour
    Banded,    ///< a matched NPU node with a precision_index in band `band`
};

struct Node
{
    std::string name;
    std::uint8_t type = 0; ///< NodeType value as stored (node_type is TEXT in the db)
    std::string upNode;    ///< parent name; empty for a root
    std::int32_t parent = -1;                 ///< index of the parent in Graph::nodes, -1 for a root
    std::vector<std::string> subNodes;        ///< children names in msprobe's order
    std::vector<std::uint32_t> children;      ///< the same children as indices (names that exist)
    std::vector<std::string> matchedLink;     ///< matched_node_link; empty = unmatched
    std::optional<double> precision;          ///< precision_index as stored (NULL = none)
    bool precisionIsInteger = false;          ///< stored as INTEGER (0/1) rather than REAL
    std::string overflowLevel;
    std::int64_t microStep = 0;
    std::int32_t stack = -1;                  ///< index into Graph::stacks, -1 none
    std::string stackId;                      ///< tb_stack id as stored (db only)
    bool modified = false;                    ///< set by tb_graph_ascend's manual matching
    std::string inputData;                    ///< JSON object text {param: {key: value}} as stored
    std::string outputData;
    std::string parallelMergeInfo;
    std::string matchedDistributed;
    std::string dumpDataDir;                  ///< empty when read with ReadOptions::nodeData off (Graph::dumpDataDir)
    bool isDistributed = false;
    Status status = Status::NoValue;
    std::int32_t band = -1;                   ///< index into GraphFile::colours when status == Banded
};

/// One side of one (step, rank): nodes in msprobe's node_order (iterative DFS post-order: children before
/// their parent, the root last), which is the execution order as ProbeScope defines it (a node where it finished).
struct Graph
{
    Side side = Side::Npu;
    std::int64_t step = 0;
    std::int64_t rank = 0;
    std::string id; ///< graph_id ("NPU_0_0")
    std::vector<Node> nodes;
    std::vector<std::uint32_t> roots;
    std::vector<std::vector<std::string>> stacks; ///< stack frames, referenced by Node::stack
    std::vector<std::int64_t> microSteps;         ///< the distinct micro_step_id values, ascending
    std::string dumpDataDir;                      ///< the first node's dump_data_dir (the same for all)

    std::optional<std::uint32_t> find(std::string_view name) const;
};

/// The file-level settings (tb_config, or the .vis top-level keys).
struct GraphConfig
{
    std::string graphType;  ///< "compare" or "build"
    std::string task;       ///< "all", "summary", "md5", "structure", "" (build)
    std::string toolTip;    ///< JSON text or empty
    std::int64_t microSteps = 1;
    bool overflowCheck = false;
    std::string nodeColorsText; ///< node_colors JSON as stored ("null" in build dbs)
    std::vector<std::int64_t> rankList;
    std::vector<std::int64_t> stepList;
};

/// The most warnings a GraphFile keeps (docs/reliability.md, "Graph files: reader bounds"): further ones are only
/// counted (GraphFile::moreWarnings) and never built, so a hostile file's warnings cost neither memory nor the time
/// of making their texts.
inline constexpr std::size_t kMaxGraphWarnings = 200;

/// A whole graph file: every graph it holds, NPU before Bench for each (step, rank).
struct GraphFile
{
    std::string path;
    MsprobeVersion version = MsprobeVersion::V26;
    GraphConfig config;
    std::vector<ColourBand> colours; ///< from node_colors / Colors; empty in build files
    std::vector<Graph> graphs;
    std::vector<std::string> warnings; ///< inconsistencies found (dangling up_node, duplicate order, ...)
    std::size_t moreWarnings = 0;      ///< warnings past kMaxGraphWarnings, counted only ("... and N more")
    bool dataDeferred = false;         ///< input/output data not read (graphreader.h ReadOptions::nodeData)

    bool isCompare() const;
    /// Adds the warning `make()` returns while there is room for it, else only counts it: the text is made only
    /// when it is kept.
    template <typename Make>
    void warn(Make&& make)
    {
        if (warnings.size() < kMaxGraphWarnings)
            warnings.push_back(make());
        else
            ++moreWarnings;
    }
    /// Takes `other`'s warnings (and its count of dropped ones) under the same cap.
    void takeWarnings(std::vector<std::string>& other, std::size_t otherMore = 0);
    /// Ends the list with "... and N more" once every warning is in (called by the readers last).
    void closeWarnings();
    /// The index of the most severe band (the last ranged band in msprobe's order: "#FF704D" in every version).
    std::optional<std::int32_t> worstBand() const;
    /// The band a precision_index falls in (tb_graph_ascend's rule), or nullopt.
    std::optional<std::int32_t> bandOf(double precision) const;
    /// The bench graph of the same (step, rank) as `npu`, if any.
    const Graph* benchOf(const Graph& npu) const;
};

/// Per-graph figures for `info` and the viewer.
struct GraphSummary
{
    std::size_t nodes = 0;
    std::size_t modules = 0;
    std::size_t apis = 0;
    std::size_t collections = 0;
    std::size_t noValue = 0;
    std::size_t unmatched = 0;
    std::size_t bench = 0;
    std::vector<std::size_t> perBand; ///< counts per GraphFile::colours index
    /// The first node in execution order (node_order) whose band is the worst one: msprobe's red.
    std::optional<std::uint32_t> firstFailing;
};
GraphSummary summarize(const GraphFile& file, const Graph& graph);

/// Fills Node::status / band from precision_index and matched_node_link (called by every reader).
void assignStatuses(GraphFile& file);

/// Builds Node::parent / children / Graph::roots from up_node and sub_nodes; inconsistencies go to warnings.
void linkNodes(GraphFile& file, Graph& graph);

/// The built-in colour bands msprobe writes for a compare of `task` (used when a file has none, e.g. a .vis
/// without "Colors"): 8.x / 1.2 per task, 26.x the same three bands for every task.
std::vector<ColourBand> defaultColours(MsprobeVersion version, std::string_view task);

/// The offset of the first '[' or '{' in `text` that nests deeper than `limit` arrays/objects, nullopt when none
/// does (strings skipped; linear). The graph readers refuse deeper text before nlohmann parses it: its dump() and
/// comparisons recurse per level.
std::optional<std::size_t> jsonTooDeepAt(std::string_view text, std::size_t limit);
inline bool jsonDepthWithin(std::string_view text, std::size_t limit)
{
    return !jsonTooDeepAt(text, limit);
}
/// The nesting graph files are read up to: msprobe's deepest value (input_data) nests four levels.
inline constexpr std::size_t kMaxGraphJsonDepth = 256;

/// Parses a node_colors JSON object ({"#RRGGBB": {"value": [lo, hi], "description": ..., "accuracy_level": ...}})
/// keeping its order; nullopt when the text is not such an object ("null" gives an empty list).
std::optional<std::vector<ColourBand>> parseNodeColours(std::string_view json);

/// One parameter of a node's input_data / output_data: its name and its key/value pairs in stored order.
struct Param
{
    std::string name;
    std::vector<std::pair<std::string, std::string>> values;
};
/// The parameters of an input_data / output_data JSON text; nullopt when it is not a JSON object.
std::optional<std::vector<Param>> parseParams(std::string_view json);

} // namespace probescope::graph
