// SPDX-License-Identifier: Apache-2.0
// Reading a .vis.db, stage 1: the schema check and the two small tables (tb_config, tb_stack).
#include "core/graph/visdbread.h"

#include "core/graph/orderedjson.h"

#include <nlohmann/json.hpp>

namespace probescope::graph::detail {

namespace {

using Json = nlohmann::ordered_json;

std::vector<std::int64_t> intList(std::string_view text)
{
    std::vector<std::int64_t> out;
    const auto j = parseOrderedJson(text).first;
    if (j && j->is_array())
        for (const Json& e : *j)
            if (e.is_number_integer())
                out.push_back(e.get<std::int64_t>());
    return out;
}

} // namespace

std::optional<Diagnostic> checkDbSchema(const ReadOnlyDb& db)
{
    for (const char* table : { "tb_nodes", "tb_stack", "tb_config" })
        if (!db.hasTable(table))
            return db.error(std::string("not a msprobe .vis.db: it has no table ") + table);
    for (const char* column : kNodeColumns)
        if (!db.hasColumn("tb_nodes", column))
            return db.error(std::string("not a msprobe .vis.db: tb_nodes has no column ") + column);
    return std::nullopt;
}

std::optional<Diagnostic> readDbConfig(const ReadOnlyDb& db, GraphFile& file)
{
    // One row (msprobe inserts id '1' with INSERT OR IGNORE).
    auto st = db.prepare("SELECT graph_type, task, tool_tip, micro_steps, overflow_check, node_colors, rank_list,"
                         " step_list FROM tb_config ORDER BY id LIMIT 1");
    if (!st)
        return st.error();
    Statement& s = **st;
    if (s.next()) {
        GraphConfig& c = file.config;
        c.graphType = s.text(0);
        c.task = s.text(1);
        c.toolTip = s.text(2);
        c.microSteps = s.isNull(3) ? 1 : s.integer(3);
        c.overflowCheck = !s.isNull(4) && s.integer(4) != 0;
        c.nodeColorsText = s.text(5);
        c.rankList = intList(s.text(6));
        c.stepList = intList(s.text(7));
    } else if (s.error()) {
        return *s.error();
    } else {
        file.warn([] { return std::string("tb_config has no row"); });
    }
    return std::nullopt;
}

Result<DbStacks> readDbStacks(const ReadOnlyDb& db, GraphFile& file)
{
    DbStacks stacks;
    auto st = db.prepare("SELECT id, stack_info FROM tb_stack");
    if (!st)
        return st.error();
    Statement& s = **st;
    while (s.next()) {
        auto frames = stringList(s.text(1));
        if (!frames) {
            file.warn([&] { return "tb_stack row " + s.text(0) + ": stack_info is not a JSON list of strings"; });
            frames.emplace();
        }
        stacks.emplace(s.text(0), std::move(*frames));
    }
    if (s.error())
        return *s.error();
    return stacks;
}

} // namespace probescope::graph::detail
