// SPDX-License-Identifier: Apache-2.0
// msprobe 26 monitor outputs: data2db --format monitor reproduced table by table against the goldens of
// ../shared/fixtures/msprobe26_workflow/monitor (joined by name: ids follow os.listdir and set order, see the
// fixtures' README), anomaly_processor's top k byte for byte (ties in msprobe's own selection order), and the trend
// reader on msprobe's own monitor dbs (whatever statistic columns they have).
#include "core/graph/trend.h"
#include "core/monitor/anomalyanalyse.h"
#include "core/monitor/monitordb.h"
#include "tempdir.h"
#include "testconfig.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sqlite3.h>

#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

using namespace probescope;
using probescope::testing::fixturesDir;
using probescope::testing::TempDir;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

using probescope::testing::readAll;

fs::path monitorCase(const std::string& name)
{
    return fixturesDir() / "msprobe26_workflow" / "monitor" / name;
}

/// A db's tables as the fixtures' <db>.tables.json has them: {table: {sql, columns, rows}}, NaN as null.
json tablesOf(const fs::path& db)
{
    sqlite3* h = nullptr;
    EXPECT_EQ(sqlite3_open_v2(db.c_str(), &h, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
    json out = json::object();
    std::vector<std::pair<std::string, std::string>> tables;
    sqlite3_stmt* st = nullptr;
    sqlite3_prepare_v2(h, "SELECT name, sql FROM sqlite_master WHERE type = 'table'", -1, &st, nullptr);
    while (sqlite3_step(st) == SQLITE_ROW)
        tables.emplace_back(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)),
                            reinterpret_cast<const char*>(sqlite3_column_text(st, 1)));
    sqlite3_finalize(st);
    for (const auto& [name, sql] : tables) {
        json t;
        t["sql"] = sql;
        t["columns"] = json::array();
        t["rows"] = json::array();
        sqlite3_prepare_v2(h, ("SELECT * FROM \"" + name + "\"").c_str(), -1, &st, nullptr);
        for (int c = 0; c < sqlite3_column_count(st); ++c)
            t["columns"].push_back(sqlite3_column_name(st, c));
        while (sqlite3_step(st) == SQLITE_ROW) {
            json row = json::array();
            for (int c = 0; c < sqlite3_column_count(st); ++c) {
                switch (sqlite3_column_type(st, c)) {
                case SQLITE_INTEGER: row.push_back(sqlite3_column_int64(st, c)); break;
                case SQLITE_FLOAT: row.push_back(sqlite3_column_double(st, c)); break;
                case SQLITE_TEXT: row.push_back(reinterpret_cast<const char*>(sqlite3_column_text(st, c))); break;
                default: row.push_back(nullptr);
                }
            }
            t["rows"].push_back(row);
        }
        sqlite3_finalize(st);
        out[name] = t;
    }
    sqlite3_close(h);
    return out;
}

std::size_t col(const json& table, const std::string& name)
{
    const auto& cols = table.at("columns");
    for (std::size_t i = 0; i < cols.size(); ++i) {
        if (cols[i] == name)
            return i;
    }
    ADD_FAILURE() << "no column " << name;
    return 0;
}

std::set<std::string> splitSet(const json& v)
{
    std::set<std::string> out;
    if (!v.is_string())
        return out;
    std::stringstream ss(v.get<std::string>());
    for (std::string part; std::getline(ss, part, ',');)
        out.insert(part);
    return out;
}

/// The comparison the fixtures' README prescribes: tables joined by name, sets where msprobe's order is a set's.
void expectSameTrendDb(const json& got, const json& want)
{
    std::set<std::string> gotTables, wantTables;
    for (const auto& [k, v] : got.items())
        gotTables.insert(k);
    for (const auto& [k, v] : want.items())
        wantTables.insert(k);
    ASSERT_EQ(gotTables, wantTables);
    // Every CREATE statement as msprobe's (global_stats' metric columns follow os.listdir: compared as a set).
    for (const std::string& t : wantTables) {
        if (t != "global_stats") {
            EXPECT_EQ(got[t]["sql"], want[t]["sql"]) << t;
        }
    }
    EXPECT_EQ(got["trend_data"]["columns"], want["trend_data"]["columns"]);
    EXPECT_EQ(got["monitoring_metrics"]["rows"], want["monitoring_metrics"]["rows"]);
    // sqlite_sequence: the autoincrement counters (INSERT OR IGNORE attempts), as a set.
    std::set<std::pair<std::string, std::int64_t>> gotSeq, wantSeq;
    for (const auto& r : got["sqlite_sequence"]["rows"])
        gotSeq.emplace(r[0].get<std::string>(), r[1].get<std::int64_t>());
    for (const auto& r : want["sqlite_sequence"]["rows"])
        wantSeq.emplace(r[0].get<std::string>(), r[1].get<std::int64_t>());
    EXPECT_EQ(gotSeq, wantSeq);
    // global_stats: the same columns, the first three equal, each metric's statistics as a set.
    {
        const json& g = got["global_stats"];
        const json& w = want["global_stats"];
        ASSERT_EQ(g["rows"].size(), 1u);
        ASSERT_EQ(w["rows"].size(), 1u);
        std::set<std::string> gc(g["columns"].begin(), g["columns"].end()), wc(w["columns"].begin(), w["columns"].end());
        EXPECT_EQ(gc, wc);
        for (const auto& c : w["columns"]) {
            const std::string name = c.get<std::string>();
            const json& gv = g["rows"][0][col(g, name)];
            const json& wv = w["rows"][0][col(w, name)];
            if (wv.is_string()) {
                EXPECT_EQ(splitSet(gv), splitSet(wv)) << name;
            } else {
                EXPECT_EQ(gv, wv) << name;
            }
        }
    }
    using Target = std::tuple<std::string, std::int64_t, std::int64_t>;
    auto targetsById = [](const json& db) {
        std::map<std::int64_t, Target> out;
        for (const auto& r : db["monitoring_targets"]["rows"])
            out[r[0].get<std::int64_t>()] = Target { r[1].get<std::string>(), r[2].get<std::int64_t>(), r[3].get<std::int64_t>() };
        return out;
    };
    auto metricsById = [](const json& db) {
        std::map<std::int64_t, std::string> out;
        for (const auto& r : db["monitoring_metrics"]["rows"])
            out[r[0].get<std::int64_t>()] = r[1].get<std::string>();
        return out;
    };
    const auto gT = targetsById(got), wT = targetsById(want);
    const auto gM = metricsById(got), wM = metricsById(want);
    std::set<Target> gts, wts;
    for (const auto& [id, t] : gT)
        gts.insert(t);
    for (const auto& [id, t] : wT)
        wts.insert(t);
    EXPECT_EQ(gts, wts);
    // trend_data joined by name: (rank, step, target, metric) -> every statistic, within 1e-12 relative.
    using Key = std::tuple<std::int64_t, std::int64_t, Target, std::string>;
    auto trend = [](const json& db, const auto& targets, const auto& metrics) {
        std::map<Key, json> out;
        const json& t = db["trend_data"];
        for (const auto& r : t["rows"]) {
            json stats = json::object();
            for (std::size_t c = 4; c < t["columns"].size(); ++c)
                stats[t["columns"][c].get<std::string>()] = r[c];
            out[Key { r[0].get<std::int64_t>(), r[1].get<std::int64_t>(), targets.at(r[2].get<std::int64_t>()),
                      metrics.at(r[3].get<std::int64_t>()) }] = stats;
        }
        return out;
    };
    const auto gd = trend(got, gT, gM), wd = trend(want, wT, wM);
    ASSERT_EQ(gd.size(), wd.size());
    std::size_t mismatches = 0;
    for (const auto& [key, wstats] : wd) {
        const auto it = gd.find(key);
        if (it == gd.end()) {
            if (++mismatches < 5)
                ADD_FAILURE() << "missing trend row rank " << std::get<0>(key) << " step " << std::get<1>(key) << " "
                              << std::get<0>(std::get<2>(key)) << " " << std::get<3>(key);
            continue;
        }
        for (const auto& [stat, wv] : wstats.items()) {
            const json& gv = it->second[stat];
            const bool same = wv.is_null() ? gv.is_null()
                                           : gv.is_number() && std::fabs(gv.get<double>() - wv.get<double>())
                                                   <= 1e-12 * std::max(1.0, std::fabs(wv.get<double>()));
            if (!same && ++mismatches < 5)
                ADD_FAILURE() << stat << " of " << std::get<0>(std::get<2>(key)) << " step " << std::get<1>(key) << ": "
                              << gv << " vs " << wv;
        }
    }
    EXPECT_EQ(mismatches, 0u);
    // tags as (tag, category, metric) and the mapping as (tag, category, metric, target).
    auto tags = [](const json& db, const auto& targets, const auto& metrics) {
        std::map<std::int64_t, std::tuple<std::string, std::string, std::string>> byId;
        for (const auto& r : db["monitoring_tags"]["rows"])
            byId[r[0].get<std::int64_t>()] = { r[1].get<std::string>(), r[2].get<std::string>(), metrics.at(r[3].get<std::int64_t>()) };
        std::set<std::tuple<std::string, std::string, std::string>> set;
        for (const auto& [id, t] : byId)
            set.insert(t);
        std::set<std::tuple<std::string, std::string, std::string, Target>> mapping;
        const json& m = db["tag_target_mapping"];
        const std::size_t tagCol = col(m, "tag_id"), targetCol = col(m, "target_id");
        for (const auto& r : m["rows"]) {
            const auto& [tag, category, metric] = byId.at(r[tagCol].get<std::int64_t>());
            mapping.emplace(tag, category, metric, targets.at(r[targetCol].get<std::int64_t>()));
        }
        return std::pair { set, mapping };
    };
    const auto [gTags, gMap] = tags(got, gT, gM);
    const auto [wTags, wMap] = tags(want, wT, wM);
    EXPECT_EQ(gTags, wTags);
    EXPECT_EQ(gMap, wMap);
}

struct DbCase
{
    const char* fixture;
    const char* db;
    bool microStep;
};

class MonitorDbGolden : public ::testing::TestWithParam<DbCase>
{
};

TEST_P(MonitorDbGolden, ReproducesMsprobe)
{
    const DbCase c = GetParam();
    const fs::path dir = monitorCase(c.fixture);
    if (!fs::exists(dir))
        GTEST_SKIP() << "fixtures not available: " << dir;
    TempDir tmp;
    monitor::Data2DbOptions options;
    options.microStep = c.microStep;
    auto result = monitor::monitorToDb(dir / "inputs" / "monitor_output", tmp.path() / c.db, options);
    ASSERT_TRUE(result.ok()) << result.error().format();
    EXPECT_EQ(result->db, tmp.path() / c.db / "monitor_data.trend.db");
    EXPECT_EQ(result->ranks, 2u);
    const json want = json::parse(readAll(dir / "expected" / c.db / "monitor_data.trend.db.tables.json"));
    expectSameTrendDb(tablesOf(result->db), want);
    // The trend reader takes the db's own statistic columns.
    auto trend = graph::readTrendDb(result->db);
    ASSERT_TRUE(trend.ok()) << trend.error().format();
    std::vector<std::string> columns;
    for (std::size_t i = 4; i < want["trend_data"]["columns"].size(); ++i)
        columns.push_back(want["trend_data"]["columns"][i].get<std::string>());
    EXPECT_EQ((*trend)->statistics, columns);
    EXPECT_EQ((*trend)->values.size(), want["trend_data"]["rows"].size());
    // Never replacing: a second run into the same folder is refused and leaves the db as it was.
    const std::string before = readAll(result->db);
    auto again = monitor::monitorToDb(dir / "inputs" / "monitor_output", tmp.path() / c.db, options);
    ASSERT_FALSE(again.ok());
    EXPECT_EQ(again.error().id, "monitor.db-exists");
    EXPECT_EQ(readAll(result->db), before);
}

INSTANTIATE_TEST_SUITE_P(Msprobe26, MonitorDbGolden,
                         ::testing::Values(DbCase { "v1_all_ops_vpp2_2r", "db_micro_step_false", false },
                                           DbCase { "v1_all_ops_vpp2_2r", "db_micro_step_true", true },
                                           DbCase { "v1_norm_only_2r", "db_micro_step_false", false }));

// msprobe's own monitor dbs open in the trend reader, with whatever statistic columns they have (before: "no such
// column: max" on the norm-only db, and nans/zeros dropped).
TEST(MonitorTrend, ReadsMsprobeMonitorDbs)
{
    const fs::path normOnly = monitorCase("v1_norm_only_2r") / "expected" / "db_micro_step_false" / "monitor_data.trend.db";
    const fs::path allOps = monitorCase("v1_all_ops_vpp2_2r") / "expected" / "db_micro_step_false" / "monitor_data.trend.db";
    if (!fs::exists(normOnly))
        GTEST_SKIP();
    auto a = graph::readTrendDb(normOnly);
    ASSERT_TRUE(a.ok()) << a.error().format();
    EXPECT_EQ((*a)->statistics, (std::vector<std::string> { "norm" }));
    EXPECT_EQ((*a)->values.size(), 360u);
    EXPECT_EQ((*a)->ranks, (std::vector<std::int64_t> { 0, 1 }));
    EXPECT_FALSE((*a)->stat((*a)->values.front(), "max"));
    EXPECT_TRUE((*a)->stat((*a)->values.front(), "norm"));
    auto b = graph::readTrendDb(allOps);
    ASSERT_TRUE(b.ok()) << b.error().format();
    EXPECT_EQ((*b)->statistics, (std::vector<std::string> { "norm", "min", "max", "zeros", "nans", "mean" }));
    // rank 1's NaN from step 2: nans > 0 where norm is NULL.
    bool nanSeen = false;
    for (const auto& v : (*b)->values) {
        const auto nans = (*b)->stat(v, "nans");
        if (nans && *nans > 0 && !(*b)->stat(v, "norm"))
            nanSeen = true;
    }
    EXPECT_TRUE(nanSeen);
}

TEST(MonitorDb, FolderNamesAndTags)
{
    EXPECT_EQ(monitor::monitorFolderRank("Nov28_10-00-00-rank0-a1b2c3d4"), "0");
    EXPECT_EQ(monitor::monitorFolderRank("Nov28_10-00-00-rank12-x"), "12");
    EXPECT_FALSE(monitor::monitorFolderRank("rank_0"));
    EXPECT_FALSE(monitor::monitorFolderRank("anomaly_detected"));
    EXPECT_FALSE(monitor::monitorFolderRank("x-rank123456-y"));
    const auto tags = monitor::tagsOfTarget("layers.22.self_attention.linear_qkv.layer_norm_weight");
    const std::set<std::pair<std::string, std::string>> got(tags.begin(), tags.end());
    const std::set<std::pair<std::string, std::string>> want { { "layers", "module" }, { "layers.22", "layer" },
                                                               { "self_attention", "module" }, { "linear_qkv", "module" },
                                                               { "layer_norm_weight", "module" } };
    EXPECT_EQ(got, want);
}

TEST(MonitorDb, V2LayoutMappingAndErrors)
{
    TempDir tmp;
    tmp.write("mon/rank_0/actv_step0-1.csv", "vpp_stage,step,name,micro_step,norm,max\n0,0,module.layers.0.fc,0,1.5,inf\n"
                                             "0,1,module.layers.0.fc,0,2.5,nan\nx,1,bad,0,1,1\n");
    tmp.write("mon/rank_1/actv_step0-1.csv", "vpp_stage,step,name,micro_step,norm,max\n0,0,module.layers.0.fc,0,3.5,1e12\n");
    tmp.write("mon/rank_1/notes.txt", "not a metric file");
    monitor::Data2DbOptions options;
    options.microStep = false;
    options.mapping = { { "module.", "" } };
    auto result = monitor::monitorToDb(tmp.path() / "mon", tmp.path() / "db", options);
    ASSERT_TRUE(result.ok()) << result.error().format();
    EXPECT_EQ(result->ranks, 2u);
    EXPECT_EQ(result->rows, 3u);
    ASSERT_EQ(result->warnings.size(), 1u); // the row with vpp_stage "x", skipped as msprobe skips it
    EXPECT_NE(result->warnings[0].format().find("actv_step0-1.csv"), std::string::npos);
    const json t = tablesOf(result->db);
    ASSERT_EQ(t["monitoring_targets"]["rows"].size(), 1u);
    EXPECT_EQ(t["monitoring_targets"]["rows"][0][1], "layers.0.fc");
    // inf -> 1e9 + 1, nan -> NULL, 1e12 -> 1e9 (process_tensor_value).
    std::map<std::pair<std::int64_t, std::int64_t>, json> rows;
    for (const auto& r : t["trend_data"]["rows"])
        rows[{ r[0].get<std::int64_t>(), r[1].get<std::int64_t>() }] = r;
    using RankStep = std::pair<std::int64_t, std::int64_t>;
    EXPECT_EQ(rows[RankStep(0, 0)][5], 1e9 + 1);
    EXPECT_TRUE(rows[RankStep(0, 1)][5].is_null());
    EXPECT_EQ(rows[RankStep(1, 0)][5], 1e9);
    // No monitor folder: an error, nothing written.
    fs::create_directories(tmp.path() / "empty");
    auto none = monitor::monitorToDb(tmp.path() / "empty", tmp.path() / "db2", options);
    ASSERT_FALSE(none.ok());
    EXPECT_EQ(none.error().id, "monitor.no-data");
    EXPECT_FALSE(fs::exists(tmp.path() / "db2" / "monitor_data.trend.db"));
}

// ---- anomaly_processor

/// anomaly_processor over msprobe's recorded load order (cmd.txt): its file, byte for byte.
void expectAnomalyGolden(const fs::path& dataDir, const fs::path& expected, const std::vector<std::string>& order,
                         std::size_t k, std::optional<std::vector<long long>> steps = std::nullopt)
{
    monitor::AnomalyAnalyseOptions options;
    options.topK = k;
    options.steps = steps;
    options.loadOrder = order;
    auto result = monitor::analyseAnomalies(dataDir, options);
    ASSERT_TRUE(result.ok()) << result.error().format();
    EXPECT_EQ(result->json, readAll(expected));
}

TEST(AnomalyAnalyse, HandmadeGoldens)
{
    const fs::path dir = monitorCase("anomaly_processor_handmade");
    if (!fs::exists(dir))
        GTEST_SKIP();
    // cmd.txt: "listdir order in the golden run: ['rank1', 'rank2', 'rank0', 'rank3']".
    ASSERT_NE(readAll(dir / "cmd.txt").find("['rank1', 'rank2', 'rank0', 'rank3']"), std::string::npos);
    const std::vector<std::string> order { "rank1", "rank2", "rank0", "rank3" };
    expectAnomalyGolden(dir / "inputs" / "anomaly_detected", dir / "expected" / "topk5" / "anomaly_analyse.json", order, 5);
    expectAnomalyGolden(dir / "inputs" / "anomaly_detected", dir / "expected" / "step_1_2_topk20" / "anomaly_analyse.json",
                        order, 20, std::vector<long long> { 1, 2 });
}

TEST(AnomalyAnalyse, MonitorRunGolden)
{
    const fs::path dir = monitorCase("v1_all_ops_vpp2_2r");
    if (!fs::exists(dir))
        GTEST_SKIP();
    ASSERT_NE(readAll(dir / "cmd.txt").find("\"anomaly_detected\": [\"rank1\", \"rank0\"]"), std::string::npos);
    expectAnomalyGolden(dir / "inputs" / "monitor_output" / "anomaly_detected",
                        dir / "expected" / "anomaly_topk8" / "anomaly_analyse.json", { "rank1", "rank0" }, 8);
}

// ProbeScope lists rank folders sorted; tests/data/anomaly_sorted_listdir holds msprobe's own files for that order
// (os.listdir wrapped to sort), which differ from the fixtures' where ties between ranks fall into the top k.
TEST(AnomalyAnalyse, SortedListingAsMsprobeOrdersIt)
{
    const fs::path handmade = monitorCase("anomaly_processor_handmade") / "inputs" / "anomaly_detected";
    const fs::path run = monitorCase("v1_all_ops_vpp2_2r") / "inputs" / "monitor_output" / "anomaly_detected";
    if (!fs::exists(handmade))
        GTEST_SKIP();
    const fs::path want = probescope::testing::testDataDir() / "anomaly_sorted_listdir";
    const std::vector<std::string> sorted {}; // default: name order
    expectAnomalyGolden(handmade, want / "topk5.json", sorted, 5);
    expectAnomalyGolden(handmade, want / "s12.json", sorted, 20, std::vector<long long> { 1, 2 });
    for (const int k : { 1, 2, 3, 4, 6, 7 })
        expectAnomalyGolden(handmade, want / ("h" + std::to_string(k) + ".json"), sorted, static_cast<std::size_t>(k));
    expectAnomalyGolden(run, want / "v1k8.json", sorted, 8);
    expectAnomalyGolden(run, want / "v1k3.json", sorted, 3);
    // Without a given order the CLI's run is the sorted one: not the fixture's file, whose ties follow rank1 first.
    EXPECT_NE(readAll(want / "v1k8.json"), readAll(monitorCase("v1_all_ops_vpp2_2r") / "expected" / "anomaly_topk8" / "anomaly_analyse.json"));
}

TEST(AnomalyAnalyse, StepListAndErrors)
{
    std::string error;
    EXPECT_EQ(monitor::parseStepList("[1, 2]", error), (std::vector<long long> { 1, 2 }));
    EXPECT_EQ(monitor::parseStepList("[]", error), (std::vector<long long> {}));
    EXPECT_FALSE(monitor::parseStepList("1, 2", error));
    EXPECT_FALSE(monitor::parseStepList("[1,, 2]", error));
    TempDir tmp;
    tmp.write("ad/rank0/anomaly.json", "{\"a\": {\"rank\": 0, \"step\": ");
    auto cut = monitor::analyseAnomalies(tmp.path() / "ad", {});
    ASSERT_FALSE(cut.ok());
    EXPECT_NE(cut.error().format().find("anomaly.json"), std::string::npos);
}

} // namespace
