// SPDX-License-Identifier: Apache-2.0
#pragma once
// The parts of writing a graph db (internal to core/graph; graphwriter.cpp plans the pairs, builds and links the
// graphs and writes the db): matching the nodes of two graphs (graphmatch.cpp), their verdicts from the compare
// table (graphverdicts.cpp) and the db's tables (graphdbtables.cpp).

#include "core/compare/table/comparetable.h"
#include "core/graph/graphwriter.h"
#include "core/graph/msgraph.h"
#include "core/graph/sqlitewriter.h"
#include "core/visconfig/visconfig.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace probescope::graph::detail {

// ---- matching (graphmatch.cpp): GraphComparator._compare_nodes / _compare_nodes_fuzzy ----

/// Nodes of the same name and ancestors (8.3: and structure), linked as partners; the (NPU, bench) pairs.
std::vector<std::pair<std::uint32_t, std::uint32_t>> matchExact(MsGraph& n, MsGraph& b, WriteFormat format);
/// -fm: nodes matched by their call counts among the siblings, linked as partners.
std::vector<std::pair<std::uint32_t, std::uint32_t>> matchFuzzy(MsGraph& n, MsGraph& b, WriteFormat format);
/// Pairs named in a .vis.config (docs/graph.md): linked like a fuzzy match and compared.
std::vector<std::pair<std::uint32_t, std::uint32_t>> matchByFile(MsGraph& n, MsGraph& b, const VisConfig& config,
                                                                 std::vector<std::string>& notes);

// ---- verdicts (graphverdicts.cpp): the compare table's columns and results on the matched nodes ----

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

/// The compare columns msprobe merges into a node's params (its mode's index columns).
std::vector<std::string> indexColumns(compare::CompareMode mode, WriteFormat format);
/// ModeAdapter.parse_result for one matched NPU node: the compare columns merged into its params and its
/// precision_index.
void judgeNode(MsNode& node, const MsNode& bench, const Verdicts& v, compare::CompareMode mode, WriteFormat format);
/// _handle_api_collection_index: an Apis_Between_Modules takes the worst of its APIs.
void judgeCollections(MsGraph& g, bool md5Min);

// ---- the db's tables (graphdbtables.cpp) ----

/// tb_nodes' CREATE TABLE (26.x: with is_distributed).
std::string createNodes(WriteFormat format);
inline constexpr const char* kCreateStack = "CREATE TABLE IF NOT EXISTS tb_stack (\n    id TEXT PRIMARY KEY,\n    stack_info TEXT\n);";
constexpr const char* kCreateConfig
    = "CREATE TABLE IF NOT EXISTS tb_config (\n    id TEXT PRIMARY KEY,\n    graph_type TEXT NOT NULL,\n    task TEXT,\n"
      "    tool_tip TEXT,\n    micro_steps INTEGER,\n    overflow_check INTEGER,\n    node_colors TEXT NOT NULL,\n"
      "    rank_list TEXT NOT NULL,\n    step_list TEXT NOT NULL\n);";

/// One graph's rows of tb_nodes and tb_stack. `other`: the graph this one was compared with (its nodes are the
/// partners), or null. `fullLinks`: msprobe's matched_node_link (the partner's ancestors and name), else [parent, name].
std::optional<std::string> insertGraph(WritableDb& db, const MsGraph& g, const MsGraph* other, bool fullLinks,
                                       WriteFormat format);

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

std::optional<std::string> insertConfig(WritableDb& db, const ConfigRow& c);
/// tb_config's task, tool_tip and node_colors of a compare mode.
std::string modeTask(compare::CompareMode mode);
std::string toolTipOf(compare::CompareMode mode);
std::string nodeColorsOf(compare::CompareMode mode, WriteFormat format);

} // namespace probescope::graph::detail
