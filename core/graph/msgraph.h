// SPDX-License-Identifier: Apache-2.0
#pragma once
// msprobe's graph of one rank, built from its dump the way msprobe's GraphBuilder builds it (docs/graph.md,
// "Writing"): the nodes of construct.json in its order, the root DefaultModel, Apis_Between_Modules.N around
// consecutive top-level APIs, parameters_grad nodes under their module's last backward, stacks, and each node's
// input/output parameters formatted as msprobe stores them in input_data / output_data.

#include "core/dump/rankdump.h"
#include "core/graph/graphmodel.h"
#include "core/util/diagnostic.h"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace probescope::graph {

/// Which msprobe's db a write reproduces.
enum class WriteFormat : std::uint8_t { V83, V26 };

/// One parameter of a node (a key of input_data / output_data) with its values as msprobe's strings.
struct MsParam
{
    std::string key;
    std::vector<std::pair<std::string, std::string>> values;
    /// The same values before formatting, as msprobe's compare sees them (for the verdicts).
    std::string fullOpName;
    bool isOutput = false;
    /// Max, Min, Mean, Norm as Python numbers (absent: None, str, bool), for the statistics compare.
    struct Num
    {
        bool isInt = false;
        std::int64_t i = 0;
        double d = 0;
    };
    std::array<std::optional<Num>, 4> stats;
    bool maxIsNone = true;       ///< Max is None (a null leaf): 8.x skips it for the precision
    bool shapeTruthy = false;    ///< Python truth of the shape (an empty list is false, "[]" text is true)
    bool maxMinInvalid = false;  ///< Max or Min is a float nan/inf
    std::string state;           ///< input / output / parameters / parameters_grad / debug
    /// str() of the raw 'type' and 'shape' (nullopt: None or absent), what 8.x's node matching compares.
    std::optional<std::string> rawType;
    std::optional<std::string> rawShape;
};

/// msprobe's NodeOp values (MsNode::op) the builder and the writer tell apart.
inline constexpr std::uint8_t kModule = 0;
inline constexpr std::uint8_t kApi = 1;
inline constexpr std::uint8_t kCollection = 9;

struct MsNode
{
    std::string id;
    std::uint8_t op = 0;     ///< NodeType value (kModule, kApi, kCollection)
    std::int32_t up = -1;    ///< parent index
    std::vector<std::uint32_t> subs;
    /// The node of the other graph this one is matched with (-1: none). msprobe's matched_node_link is that node's
    /// ancestors and name (MsGraph::pathJson): made when the row is written, never stored per node (a 20,000-deep
    /// model would hold 200 million names).
    std::int32_t partner = -1;
    bool modified = false; ///< paired by a match file: tb_graph_ascend's "modified" (a manual match)
    std::optional<double> precision;
    bool precisionIsInteger = false;
    std::optional<std::int64_t> microStep;
    std::vector<std::string> stack;
    std::vector<MsParam> inputs;
    std::vector<MsParam> outputs;
};

struct MsGraph
{
    Side side = Side::Npu;
    std::int64_t step = 0;
    std::int64_t rank = 0;
    std::optional<std::string> dataPath; ///< dump_data_dir column (NULL when the dump has none)
    std::vector<MsNode> nodes;
    std::unordered_map<std::string, std::uint32_t> index;
    std::uint32_t root = 0;
    std::optional<std::int64_t> megatronMicroSteps;
    std::string dumpTask; ///< dump.json task ("tensor", "statistics")
    bool flat = false;    ///< built without construct.json (BuildOptions::flatWithoutConstruct)

    const MsNode* find(const std::string& id) const
    {
        const auto it = index.find(id);
        return it == index.end() ? nullptr : &nodes[it->second];
    }
    std::vector<std::string> ancestors(std::uint32_t node) const;
    /// json.dumps of ancestors(node) + [id]: what a node matched with `node` stores as matched_node_link. `parentOnly`:
    /// [parent, id] (or [id] at the top), tb_graph_ascend 26's form of a manual match's link.
    std::string pathJson(std::uint32_t node, bool parentOnly = false) const;
    /// Each node's depth (the root 0) along the sub-node lists; a node not reached from the root counts 0.
    std::vector<std::uint32_t> depths() const;
    /// msprobe's get_sorted_nodes: iterative DFS post-order from the root (node_order).
    std::vector<std::uint32_t> sortedNodes() const;
    /// msprobe's paging_by_micro_step (with the other graph of a compare, or null); returns the micro step count.
    std::int64_t pageByMicroStep(MsGraph* other);
};

struct BuildOptions
{
    WriteFormat format = WriteFormat::V26;
    bool md5Mode = false; ///< keep the md5 values (a compare of md5 dumps)
    /// An empty or missing construct.json (an L1 dump): msprobe refuses it ("failed to build graph"). Off: the
    /// error graph.no-construct. On: every dump entry becomes a top-level node in dump order (MsGraph::flat).
    bool flatWithoutConstruct = false;
};

/// Builds the graph of one rank as msprobe's GraphBuilder.build does.
Result<MsGraph> buildMsGraph(const dump::RankDump& rank, const BuildOptions& options);

/// _format_decimal_string: a whole-string decimal (msprobe's ^\d{1,20}\.\d{1,20}%?$) with more than 6 decimals
/// becomes "%.6f" (percent kept). Parsed by hand, no regex.
std::string formatDecimalString(const std::string& s);
/// 8.3.3's float formatting: "{:.6e}" when repr is in scientific notation, else round(value, 6).
std::string formatFloat83(double v);
/// Where msprobe's \.parameters_grad(?:\.\d+)?$ starts in `key`, if it ends so.
std::optional<std::size_t> parametersGradSuffix(std::string_view key);
/// The fuzzy match's id without call counts: re.sub(r'\.\d+\.', '.', id), then _rank\d+ removed.
std::string countRemovedId(std::string_view id);

/// Python's json.dumps of a list of strings ('["a", "b"]', ensure_ascii), the spelling of sub_nodes,
/// matched_node_link and stack_info.
std::string pyJsonList(const std::vector<std::string>& items);
/// json.dumps of a node's params ({"k": {"a": "b", ...}, ...}).
std::string pyJsonParams(const std::vector<MsParam>& params);

} // namespace probescope::graph
