// SPDX-License-Identifier: Apache-2.0
// Writing a graph db, the tables: tb_nodes and tb_stack of each graph, tb_config, as msprobe's db_utils writes them.
#include "core/graph/graphwriterparts.h"

#include "core/graph/msprobetexts.h"

#include <sqlite3.h>

#include <unordered_map>

namespace probescope::graph::detail {

namespace {

using compare::CompareMode;

using Db = WritableDb;

std::string pyIntList(const std::vector<std::int64_t>& list)
{
    std::string out = "[";
    for (std::size_t i = 0; i < list.size(); ++i)
        out += (i ? ", " : "") + std::to_string(list[i]);
    return out + "]";
}

} // namespace

std::string createNodes(WriteFormat format)
{
    std::string sql = "CREATE TABLE IF NOT EXISTS tb_nodes (\n"
                      "    id TEXT PRIMARY KEY,\n    graph_id TEXT NOT NULL,\n    node_order INTEGER NOT NULL,\n"
                      "    node_name TEXT NOT NULL,\n    node_type TEXT NOT NULL,\n    up_node TEXT,\n    sub_nodes TEXT,\n"
                      "    precision_index INTEGER,\n    overflow_level TEXT,\n    micro_step_id INTEGER NOT NULL,\n"
                      "    matched_node_link TEXT,\n    stack_id TEXT,\n    parallel_merge_info TEXT,\n"
                      "    matched_distributed TEXT,\n    modified INTEGER NOT NULL,\n    input_data TEXT,\n"
                      "    output_data TEXT,\n    data_source TEXT,\n    dump_data_dir TEXT,\n    step INTEGER NOT NULL,\n"
                      "    rank INTEGER NOT NULL";
    if (format == WriteFormat::V26)
        sql += ",\n    is_distributed INTEGER";
    return sql + "\n);";
}

/// `other`: the graph this one was compared with (its nodes are the partners), or null. `fullLinks`: msprobe's
/// matched_node_link (the partner's ancestors and name), else [parent, name] (see linkBudgetExceeded).
std::optional<std::string> insertGraph(Db& db, const MsGraph& g, const MsGraph* other, bool fullLinks, WriteFormat format)
{
    const std::string graphId = std::string(sideName(g.side)) + "_" + std::to_string(g.step) + "_" + std::to_string(g.rank);
    std::string sql = "INSERT INTO tb_nodes (id, graph_id, node_order, node_name, node_type, up_node, sub_nodes, "
                      "precision_index, overflow_level, micro_step_id, matched_node_link, stack_id, parallel_merge_info, "
                      "matched_distributed, modified, input_data, output_data, data_source, dump_data_dir, step, rank";
    sql += format == WriteFormat::V26 ? ", is_distributed) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, "
                                        "?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22)"
                                      : ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, "
                                        "?16, ?17, ?18, ?19, ?20, ?21)";
    Insert node(db.handle(), sql);
    Insert stackRow(db.handle(), "INSERT INTO tb_stack (id, stack_info) VALUES (?1, ?2)");
    if (!node.valid() || !stackRow.valid())
        return std::string("cannot prepare the inserts: ") + sqlite3_errmsg(db.handle());
    std::unordered_map<std::string, std::string> stackIds;
    std::vector<std::pair<std::string, std::string>> stacks; // (id, text) in first-seen order
    const std::vector<std::uint32_t> order = g.sortedNodes();
    for (std::size_t i = 0; i < order.size(); ++i) {
        const MsNode& n = g.nodes[order[i]];
        const std::string stackText = pyJsonList(n.stack);
        auto it = stackIds.find(stackText);
        if (it == stackIds.end()) {
            it = stackIds.emplace(stackText, graphId + "_" + std::to_string(stackIds.size())).first;
            stacks.emplace_back(it->second, stackText);
        }
        std::vector<std::string> subs;
        for (const std::uint32_t s : n.subs)
            subs.push_back(g.nodes[s].id);
        node.text(1, graphId + "_" + n.id);
        node.text(2, graphId);
        node.integer(3, static_cast<std::int64_t>(i));
        node.text(4, n.id);
        node.text(5, std::to_string(n.op));
        node.text(6, n.up >= 0 ? g.nodes[static_cast<std::size_t>(n.up)].id : std::string());
        node.text(7, subs.empty() ? std::string() : pyJsonList(subs));
        if (!n.precision)
            node.null(8);
        else if (n.precisionIsInteger)
            node.integer(8, static_cast<std::int64_t>(*n.precision));
        else
            node.real(8, *n.precision);
        node.null(9);
        node.integer(10, n.microStep.value_or(0));
        node.text(11, other && n.partner >= 0 && static_cast<std::size_t>(n.partner) < other->nodes.size()
                          ? other->pathJson(static_cast<std::uint32_t>(n.partner), !fullLinks)
                          : std::string("[]"));
        node.text(12, it->second);
        node.text(13, std::string());
        node.text(14, "{}");
        node.integer(15, n.modified ? 1 : 0);
        node.text(16, pyJsonParams(n.inputs));
        node.text(17, pyJsonParams(n.outputs));
        node.text(18, std::string(sideName(g.side)));
        if (g.dataPath)
            node.text(19, *g.dataPath);
        else
            node.null(19);
        node.integer(20, g.step);
        node.integer(21, g.rank);
        if (format == WriteFormat::V26)
            node.integer(22, n.id.rfind("Distributed", 0) == 0 ? 1 : 0);
        if (!node.run())
            return "cannot insert node " + n.id + ": " + sqlite3_errmsg(db.handle());
    }
    for (const auto& [id, text] : stacks) {
        stackRow.text(1, id);
        stackRow.text(2, text);
        if (!stackRow.run())
            return "cannot insert stack " + id + ": " + sqlite3_errmsg(db.handle());
    }
    return std::nullopt;
}

std::optional<std::string> insertConfig(Db& db, const ConfigRow& c)
{
    Insert row(db.handle(), "INSERT OR IGNORE INTO tb_config (id, graph_type, task, tool_tip, micro_steps, "
                            "overflow_check, node_colors, rank_list, step_list) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)");
    if (!row.valid())
        return std::string("cannot prepare tb_config: ") + sqlite3_errmsg(db.handle());
    row.text(1, "1");
    row.text(2, c.compare ? "compare" : "build");
    row.text(3, c.task);
    if (c.toolTip)
        row.text(4, *c.toolTip);
    else
        row.null(4);
    row.integer(5, c.microSteps);
    row.integer(6, c.overflowCheck ? 1 : 0);
    row.text(7, c.nodeColors);
    row.text(8, pyIntList(c.rankList));
    row.text(9, pyIntList(c.stepList));
    if (!row.run())
        return std::string("cannot insert tb_config: ") + sqlite3_errmsg(db.handle());
    return std::nullopt;
}

std::string modeTask(CompareMode mode)
{
    switch (mode) {
    case CompareMode::RealData: return "all";
    case CompareMode::Summary: return "summary";
    case CompareMode::Md5: return "md5";
    }
    return "";
}

std::string toolTipOf(CompareMode mode)
{
    switch (mode) {
    case CompareMode::RealData: return texts::kToolTipAll;
    case CompareMode::Summary: return texts::kToolTipSummary;
    case CompareMode::Md5: return texts::kToolTipMd5;
    }
    return {};
}

std::string nodeColorsOf(CompareMode mode, WriteFormat format)
{
    const bool v26 = format == WriteFormat::V26;
    switch (mode) {
    case CompareMode::RealData: return v26 ? texts::kNodeColorsV26All : texts::kNodeColorsV83All;
    case CompareMode::Summary: return v26 ? texts::kNodeColorsV26Summary : texts::kNodeColorsV83Summary;
    case CompareMode::Md5: return v26 ? texts::kNodeColorsV26Md5 : texts::kNodeColorsV83Md5;
    }
    return "null";
}

} // namespace probescope::graph::detail
