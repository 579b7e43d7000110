// SPDX-License-Identifier: Apache-2.0
#pragma once
// Reading msprobe's graph files into the graph model (docs/graph.md).

#include "core/graph/graphmodel.h"
#include "core/util/diagnostic.h"

#include <filesystem>
#include <memory>

namespace probescope::graph {

struct ReadOptions
{
    /// Read input_data / output_data of every node. Off: they are left empty (GraphFile::dataDeferred) and
    /// readNodeData() fetches one node's on demand; a 1M-node db then opens without reading its GBs of JSON.
    bool nodeData = true;
    /// Rows read so far against the table's row count, checked for cancel every few thousand rows (the GUI's
    /// background open). Cancelled: the error graph.cancelled, no partial model. Null: no progress.
    ProgressSink* progress = nullptr;
    /// Connections scanning tb_nodes at once, each a rowid range (the result is the same as one scan). 0: one per
    /// core, at most four, for a table of 200,000 rows or more, else one.
    unsigned scanConnections = 0;
};

/// A `.vis.db` of msprobe 8.x or 26.x: every graph (step, rank, NPU/Bench) it holds, tb_config and tb_stack.
/// Opened read-only (mode=ro&immutable=1): nothing is ever written beside it. Errors (id graph.db) name the file:
/// not SQLite, damaged, a missing table or column, a tb_nodes row that cannot be read.
Result<std::shared_ptr<const GraphFile>> readVisDb(const std::filesystem::path& path, const ReadOptions& options = {});

/// input_data and output_data of one node of a db read with ReadOptions::nodeData off (by its id, the primary key).
struct NodeData
{
    std::string inputData;
    std::string outputData;
};
Result<NodeData> readNodeData(const GraphFile& file, const Graph& graph, std::uint32_t node);

/// A `.vis` of msprobe 1.2.x (JSON: {"NPU": {...}, "Bench": {...}, "Colors", "task", ...} for a compare, or one
/// graph {"root", "node", ...} for a build). Nodes are put in msprobe's node_order (post-order from the root).
/// Errors (id graph.vis) name the file and, for JSON syntax, the position.
Result<std::shared_ptr<const GraphFile>> readVis(const std::filesystem::path& path);

/// Either of the two, told apart by the SQLite header.
Result<std::shared_ptr<const GraphFile>> readGraphFile(const std::filesystem::path& path, const ReadOptions& options = {});

/// True for names ending in .vis.db, .vis or .trend.db (what `info` opens as a graph file).
bool isGraphFileName(const std::filesystem::path& path);

} // namespace probescope::graph
