// SPDX-License-Identifier: Apache-2.0
#include "core/graph/trend.h"

#include "core/graph/sqlitedb.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

namespace probescope::graph {

std::string trendModuleOf(const std::string& target)
{
    for (const char* word : { ".input.", ".output.", ".parameters.", ".parameters_grad" }) {
        const auto at = target.rfind(word);
        if (at != std::string::npos)
            return target.substr(0, at);
    }
    return target;
}

Result<std::shared_ptr<const TrendTable>> readTrendDb(const std::filesystem::path& path)
{
    auto opened = detail::ReadOnlyDb::open(path, "graph.trend");
    if (!opened)
        return opened.error();
    const detail::ReadOnlyDb& db = **opened;
    for (const char* table : { "monitoring_metrics", "monitoring_targets", "trend_data" })
        if (!db.hasTable(table))
            return db.error(std::string("not a msprobe .trend.db: it has no table ") + table);
    auto table = std::make_shared<TrendTable>();
    table->path = path.string();
    if (auto wal = detail::walWarning(path))
        table->warnings.push_back(std::move(*wal));

    std::unordered_map<std::int64_t, std::uint32_t> metricIndex;
    {
        auto st = db.prepare("SELECT metric_id, metric_name FROM monitoring_metrics ORDER BY metric_id");
        if (!st)
            return st.error();
        while ((*st)->next()) {
            metricIndex.emplace((*st)->integer(0), static_cast<std::uint32_t>(table->metrics.size()));
            table->metrics.push_back((*st)->text(1));
        }
        if ((*st)->error())
            return *(*st)->error();
    }
    std::unordered_map<std::int64_t, std::uint32_t> targetIndex;
    {
        auto st = db.prepare("SELECT target_id, target_name, vpp_stage, micro_step FROM monitoring_targets"
                             " ORDER BY target_id");
        if (!st)
            return st.error();
        std::unordered_set<std::string> modules;
        while ((*st)->next()) {
            TrendTarget t;
            t.name = (*st)->text(1);
            t.vppStage = (*st)->integer(2);
            t.microStep = (*st)->integer(3);
            targetIndex.emplace((*st)->integer(0), static_cast<std::uint32_t>(table->targets.size()));
            std::string module = trendModuleOf(t.name);
            if (modules.insert(module).second)
                table->modules.push_back(std::move(module));
            table->targets.push_back(std::move(t));
        }
        if ((*st)->error())
            return *(*st)->error();
    }
    {
        auto st = db.prepare("SELECT rank, step, target_id, metric_id, norm, max, min, mean FROM trend_data"
                             " ORDER BY step, rank, target_id, metric_id");
        if (!st)
            return st.error();
        detail::Statement& s = **st;
        while (s.next()) {
            TrendValue v;
            v.rank = s.integer(0);
            v.step = s.integer(1);
            const auto target = targetIndex.find(s.integer(2));
            const auto metric = metricIndex.find(s.integer(3));
            if (target == targetIndex.end() || metric == metricIndex.end())
                return db.error("trend_data row (rank " + std::to_string(v.rank) + ", step " + std::to_string(v.step)
                                + ", target " + std::to_string(s.integer(2)) + ", metric "
                                + std::to_string(s.integer(3)) + ") names a target or metric the file does not hold");
            v.target = target->second;
            v.metric = metric->second;
            v.norm = s.number(4);
            v.max = s.number(5);
            v.min = s.number(6);
            v.mean = s.number(7);
            table->values.push_back(v);
        }
        if (s.error())
            return *s.error();
    }
    for (const TrendValue& v : table->values) {
        table->steps.push_back(v.step);
        table->ranks.push_back(v.rank);
    }
    for (auto* list : { &table->steps, &table->ranks }) {
        std::sort(list->begin(), list->end());
        list->erase(std::unique(list->begin(), list->end()), list->end());
    }
    return std::shared_ptr<const TrendTable>(std::move(table));
}

} // namespace probescope::graph
