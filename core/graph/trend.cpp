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

std::optional<std::size_t> TrendTable::statisticIndex(std::string_view name) const
{
    for (std::size_t i = 0; i < statistics.size(); ++i) {
        if (statistics[i] == name)
            return i;
    }
    return std::nullopt;
}

std::optional<double> TrendTable::stat(std::size_t value, std::size_t statistic) const
{
    if (statistic >= statistics.size() || value >= values.size())
        return std::nullopt;
    return stats[value * statistics.size() + statistic];
}

std::optional<double> TrendTable::stat(const TrendValue& v, std::string_view name) const
{
    const auto s = statisticIndex(name);
    if (!s || values.empty() || &v < values.data() || &v >= values.data() + values.size())
        return std::nullopt;
    return stat(static_cast<std::size_t>(&v - values.data()), *s);
}

namespace {

/// An SQL identifier quoted for a SELECT (a column name taken from the db itself).
std::string quoted(const std::string& name)
{
    std::string out = "\"";
    for (const char c : name) {
        out += c;
        if (c == '"')
            out += '"';
    }
    return out + "\"";
}

} // namespace

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
    // The statistic columns are whatever data2db wrote: every column of trend_data but the key (msprobe 26's monitor
    // dbs have the monitor's ops, e.g. only norm, or min, max, norm, zeros, nans, mean).
    {
        auto st = db.prepare("PRAGMA table_info(trend_data)");
        if (!st)
            return st.error();
        while ((*st)->next()) {
            std::string column = (*st)->text(1);
            if (column != "rank" && column != "step" && column != "target_id" && column != "metric_id")
                table->statistics.push_back(std::move(column));
        }
        if ((*st)->error())
            return *(*st)->error();
        for (const char* key : { "rank", "step", "target_id", "metric_id" }) {
            if (!db.hasColumn("trend_data", key))
                return db.error(std::string("not a msprobe .trend.db: its trend_data has no column ") + key);
        }
    }
    {
        std::string sql = "SELECT rank, step, target_id, metric_id";
        for (const std::string& column : table->statistics)
            sql += ", " + quoted(column);
        sql += " FROM trend_data ORDER BY step, rank, target_id, metric_id";
        auto st = db.prepare(sql);
        if (!st)
            return st.error();
        detail::Statement& s = **st;
        const int statCount = static_cast<int>(table->statistics.size());
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
            for (int c = 0; c < statCount; ++c)
                table->stats.push_back(s.number(4 + c));
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
