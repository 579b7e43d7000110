// SPDX-License-Identifier: Apache-2.0
#pragma once
// The three tables of an msprobe .vis.db (8.x/26.x: tb_nodes, tb_stack, tb_config), for the tests that build one by
// hand to feed the reader rows it must survive (tst_graph, tst_graphbounds).

namespace probescope::testing {

inline constexpr const char* kVisDbSchema = R"SQL(
CREATE TABLE tb_nodes (id TEXT PRIMARY KEY, graph_id TEXT, node_order INTEGER, node_name TEXT, node_type TEXT,
  up_node TEXT, sub_nodes TEXT, precision_index INTEGER, overflow_level TEXT, micro_step_id INTEGER,
  matched_node_link TEXT, stack_id TEXT, parallel_merge_info TEXT, matched_distributed TEXT, modified INTEGER,
  input_data TEXT, output_data TEXT, data_source TEXT, dump_data_dir TEXT, step INTEGER, rank INTEGER);
CREATE TABLE tb_stack (id TEXT PRIMARY KEY, stack_info TEXT);
CREATE TABLE tb_config (id TEXT PRIMARY KEY, graph_type TEXT, task TEXT, tool_tip TEXT, micro_steps INTEGER,
  overflow_check INTEGER, node_colors TEXT, rank_list TEXT, step_list TEXT);
)SQL";

} // namespace probescope::testing
