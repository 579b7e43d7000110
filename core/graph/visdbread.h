// SPDX-License-Identifier: Apache-2.0
#pragma once
// The stages of reading a `.vis.db` (internal to core/graph; readVisDb in graphreader.cpp runs them in order):
// the schema check and the small tables (visdbschema.cpp), the graph list and the scan of tb_nodes
// (visdbscan.cpp), then the link stage: stack ids to frames, node_order, parents and children (visdblink.cpp).

#include "core/graph/graphmodel.h"
#include "core/graph/graphreader.h"
#include "core/graph/sqlitedb.h"
#include "core/util/diagnostic.h"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace probescope::graph::detail {

/// The columns of tb_nodes every msprobe .vis.db has, in the order the scan selects them.
inline constexpr const char* kNodeColumns[] = {
    "id", "graph_id", "node_order", "node_name", "node_type", "up_node", "sub_nodes", "precision_index",
    "overflow_level", "micro_step_id", "matched_node_link", "stack_id", "parallel_merge_info", "matched_distributed",
    "modified", "input_data", "output_data", "data_source", "dump_data_dir", "step", "rank",
};

/// A JSON list of strings ('' = empty, as msprobe writes sub_nodes of a leaf); nullopt when it is something else.
std::optional<std::vector<std::string>> stringList(std::string_view text);

// ---- schema (visdbschema.cpp) ----

/// The tables and tb_nodes columns every msprobe .vis.db has; the error names the first one missing.
std::optional<Diagnostic> checkDbSchema(const ReadOnlyDb& db);
/// tb_config's one row into file.config (a missing row is a warning).
std::optional<Diagnostic> readDbConfig(const ReadOnlyDb& db, GraphFile& file);
/// tb_stack: stack id -> frames.
using DbStacks = std::unordered_map<std::string, std::vector<std::string>>;
Result<DbStacks> readDbStacks(const ReadOnlyDb& db, GraphFile& file);

// ---- scan (visdbscan.cpp) ----

/// The graphs of tb_nodes, made in file.graphs (empty, NPU before Bench within a (step, rank)), with what the scan
/// needs to put each row in its graph.
struct DbGraphIndex
{
    std::unordered_map<std::string, std::size_t> graphOf; ///< graph id -> index in file.graphs
    std::vector<std::size_t> graphRows;                   ///< rows of each graph
};
Result<DbGraphIndex> listDbGraphs(const ReadOnlyDb& db, const std::filesystem::path& path, const ReadOptions& options,
                                  GraphFile& file);
/// Reads every row of tb_nodes into its graph's nodes in table order; returns each graph's node_order as read.
using DbNodeOrders = std::vector<std::vector<std::int64_t>>;
Result<DbNodeOrders> scanDbNodes(const ReadOnlyDb& db, const std::filesystem::path& path, const DbGraphIndex& index,
                                 bool v26, const ReadOptions& options, GraphFile& file);

// ---- link (visdblink.cpp) ----

/// tb_stack ids to each graph's own list of distinct stacks.
void resolveDbStacks(GraphFile& file, const DbStacks& stacks);
/// Each graph's nodes sorted by node_order (stable), with a warning for a gap or repeat.
void orderDbNodes(GraphFile& file, DbNodeOrders& orders);
/// linkNodes for every graph at once; their warnings gathered in graph order.
void linkDbGraphs(GraphFile& file);

} // namespace probescope::graph::detail
