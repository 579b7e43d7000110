// SPDX-License-Identifier: Apache-2.0
// core/graph against the real files msprobe 8.3.3 and 26.0.0 wrote (../shared/fixtures/msprobe_graph): every db is
// read and its counts checked against SQL run on the file itself; the dbs ProbeScope writes from the same dumps are
// compared with msprobe's table by table (docs/graph.md).
#include "core/graph/graphreader.h"
#include "core/graph/graphwriter.h"
#include "core/graph/trend.h"
#include "core/visconfig/visconfig.h"
#include "core/util/outputfile.h"
#include "tempdir.h"
#include "testconfig.h"
#include "visdbschema.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sqlite3.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <set>

using namespace probescope;
using namespace probescope::graph;
namespace fs = std::filesystem;

namespace {

fs::path graphFixtures()
{
    return probescope::testing::fixturesDir() / "msprobe_graph";
}

std::set<std::string> dirListing(const fs::path& dir)
{
    std::set<std::string> out;
    for (const auto& e : fs::directory_iterator(dir))
        out.insert(e.path().filename().string());
    return out;
}

/// A read-only connection for the oracle queries (the test's own SQL, not core/graph's reader).
class Sql
{
public:
    explicit Sql(const fs::path& path)
    {
        const std::string uri = "file:" + fs::absolute(path).string() + "?immutable=1";
        EXPECT_EQ(sqlite3_open_v2(uri.c_str(), &m_db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, nullptr), SQLITE_OK) << path;
    }
    ~Sql() { sqlite3_close(m_db); }
    Sql(const Sql&) = delete;
    Sql& operator=(const Sql&) = delete;

    /// Every row as column name -> (type, text).
    struct Value
    {
        int type = SQLITE_NULL;
        std::string text;
        double number = 0;
    };
    using Row = std::map<std::string, Value>;
    std::vector<Row> rows(const std::string& sql) const
    {
        std::vector<Row> out;
        sqlite3_stmt* st = nullptr;
        if (sqlite3_prepare_v2(m_db, sql.c_str(), -1, &st, nullptr) != SQLITE_OK) {
            ADD_FAILURE() << sqlite3_errmsg(m_db) << " in " << sql;
            return out;
        }
        while (sqlite3_step(st) == SQLITE_ROW) {
            Row row;
            for (int c = 0; c < sqlite3_column_count(st); ++c) {
                Value v;
                v.type = sqlite3_column_type(st, c);
                if (const auto* t = sqlite3_column_text(st, c))
                    v.text = reinterpret_cast<const char*>(t);
                v.number = sqlite3_column_double(st, c);
                row[sqlite3_column_name(st, c)] = v;
            }
            out.push_back(std::move(row));
        }
        sqlite3_finalize(st);
        return out;
    }

private:
    sqlite3* m_db = nullptr;
};

std::vector<fs::path> fixtureDbs()
{
    std::vector<fs::path> out;
    for (const auto& e : fs::recursive_directory_iterator(graphFixtures()))
        if (e.is_regular_file() && e.path().filename().string().ends_with(".vis.db"))
            out.push_back(e.path());
    std::sort(out.begin(), out.end());
    return out;
}

const Graph* graphById(const GraphFile& f, const std::string& id)
{
    for (const Graph& g : f.graphs)
        if (g.id == id)
            return &g;
    return nullptr;
}

} // namespace

// ---- reading ----

TEST(GraphRead, EveryFixtureDbMatchesItsOwnTables)
{
    const auto dbs = fixtureDbs();
    ASSERT_GE(dbs.size(), 40u) << "the msprobe_graph fixtures are missing";
    for (const fs::path& path : dbs) {
        SCOPED_TRACE(path.string());
        const auto before = dirListing(path.parent_path());
        auto read = readVisDb(path);
        ASSERT_TRUE(read) << read.error().format();
        const GraphFile& file = **read;
        EXPECT_TRUE(file.warnings.empty()) << file.warnings.front();
        // msprobe's version: 26 has the is_distributed column.
        Sql sql(path);
        const bool v26 = !sql.rows("SELECT 1 FROM pragma_table_info('tb_nodes') WHERE name = 'is_distributed'").empty();
        EXPECT_EQ(file.version, v26 ? MsprobeVersion::V26 : MsprobeVersion::V8);
        const auto counts = sql.rows("SELECT graph_id, count(*) AS n, max(node_order) AS last FROM tb_nodes GROUP BY graph_id");
        ASSERT_EQ(file.graphs.size(), counts.size());
        for (const auto& row : counts) {
            const Graph* g = graphById(file, row.at("graph_id").text);
            ASSERT_NE(g, nullptr) << row.at("graph_id").text;
            EXPECT_EQ(std::to_string(g->nodes.size()), row.at("n").text);
            // post-order: the root DefaultModel ran last, and every node is reachable from it
            ASSERT_EQ(g->roots.size(), 1u);
            EXPECT_EQ(g->roots.front(), g->nodes.size() - 1);
            EXPECT_EQ(g->nodes.back().name, "DefaultModel");
            for (std::size_t i = 0; i + 1 < g->nodes.size(); ++i)
                ASSERT_GE(g->nodes[i].parent, 0) << g->nodes[i].name;
        }
        // precision_index as stored (the oracle counts NPU rows with a value).
        const auto withValue = sql.rows("SELECT count(*) AS n FROM tb_nodes WHERE precision_index IS NOT NULL");
        std::size_t valued = 0;
        for (const Graph& g : file.graphs)
            for (const Node& n : g.nodes)
                valued += n.precision.has_value();
        EXPECT_EQ(std::to_string(valued), withValue.front().at("n").text);
        // Read-only: nothing (no -wal, no -shm) appeared beside the file.
        EXPECT_EQ(dirListing(path.parent_path()), before);
    }
}

TEST(GraphRead, VerdictsAndFirstFailingNodePerVersion)
{
    struct Case
    {
        const char* db;
        const char* graph;
        const char* firstFailing; // "" = none
        std::uint32_t order;
        double precision;
    };
    // The oracle: the lowest node_order among matched NPU rows whose precision_index falls in the last band of the
    // file's node_colors (computed from the tables with SQL and Python when the fixtures were added).
    const Case cases[] = {
        { "v26/modelA_tensor_mix/compare_step0_rank.vis.db", "NPU_0_0", "Functional.gelu.0.forward", 38, 1 },
        { "v26/modelA_tensor_mix/compare_step1_rank.vis.db", "NPU_0_0", "", 0, 0 },
        { "v26/modelA_md5_mix/compare_step1_rank.vis.db", "NPU_0_0", "Functional.conv2d.0.forward", 0, 1 },
        { "v26/modelA_statistics_mix/compare_step0_rank.vis.db", "NPU_0_0", "", 0, 0 },
        { "v833/modelA_tensor_mix/compare_step0_rank.vis.db", "NPU_0_0", "Functional.gelu.0.forward", 38, 0.99462890625 },
        { "v833/modelA_tensor_mix/compare_steps.vis.db", "NPU_1_0", "Functional.conv2d.1.forward", 7, 0.203125 },
        { "v833/modelA_statistics_mix/compare_step0_rank.vis.db", "NPU_0_0", "Functional.linear.7.backward", 59, 1 },
        { "v833/modelA_statistics_mix/compare_step1_rank.vis.db", "NPU_0_0", "Functional.layer_norm.1.forward", 34, 1 },
        { "v833/modelA_md5_mix/compare_step0_rank.vis.db", "NPU_0_0", "Functional.gelu.0.forward", 38, 0 },
    };
    for (const Case& c : cases) {
        SCOPED_TRACE(c.db);
        auto read = readVisDb(graphFixtures() / c.db);
        ASSERT_TRUE(read) << read.error().format();
        const Graph* g = graphById(**read, c.graph);
        ASSERT_NE(g, nullptr);
        const GraphSummary s = summarize(**read, *g);
        if (!*c.firstFailing) {
            EXPECT_FALSE(s.firstFailing.has_value()) << g->nodes[*s.firstFailing].name;
            continue;
        }
        ASSERT_TRUE(s.firstFailing.has_value());
        EXPECT_EQ(g->nodes[*s.firstFailing].name, c.firstFailing);
        EXPECT_EQ(*s.firstFailing, c.order);
        EXPECT_DOUBLE_EQ(*g->nodes[*s.firstFailing].precision, c.precision);
    }
    // Band counts of one file per version, against the README's histograms (section 7).
    auto v26 = readVisDb(graphFixtures() / "v26/modelA_tensor_mix/compare_step0_rank.vis.db");
    ASSERT_TRUE(v26);
    const GraphSummary s26 = summarize(**v26, (*v26)->graphs.front());
    ASSERT_EQ((*v26)->colours.size(), 4u);
    EXPECT_EQ((*v26)->colours[2].level, "error");
    EXPECT_EQ(s26.perBand[1], 3u); // 3 x 0.5 (warning)
    EXPECT_EQ(s26.perBand[2], 3u); // 3 x 1 (error): gelu forward, FeedForward, TransformerBlock forward
    EXPECT_EQ(s26.unmatched, 11u);
    EXPECT_EQ(s26.modules + s26.apis + s26.collections, 127u);
    EXPECT_EQ(s26.collections, 5u);
    const Graph& bench = (*v26)->graphs[1];
    EXPECT_EQ(summarize(**v26, bench).unmatched, 7u);
    // md5 8.3: 1 = all pass (first band), 0 = differs (last band): inverted with respect to 26.
    auto md5 = readVisDb(graphFixtures() / "v833/modelA_md5_mix/compare_step0_rank.vis.db");
    ASSERT_TRUE(md5);
    const GraphSummary s8 = summarize(**md5, (*md5)->graphs.front());
    EXPECT_EQ(s8.perBand[0] + s8.perBand[1] + s8.unmatched + s8.noValue, 127u);
    EXPECT_EQ((*md5)->bandOf(1).value_or(-1), 0);
    EXPECT_EQ((*md5)->bandOf(0).value_or(-1), 1);
}

TEST(GraphRead, NodeDetailsAndStacks)
{
    auto read = readVisDb(graphFixtures() / "v26/modelA_tensor_mix/compare_step0_rank.vis.db");
    ASSERT_TRUE(read);
    const Graph& g = (*read)->graphs.front();
    const auto gelu = g.find("Functional.gelu.0.forward");
    ASSERT_TRUE(gelu);
    const Node& n = g.nodes[*gelu];
    EXPECT_EQ(n.upNode, "Module.block.ffn.FeedForward.forward.0");
    EXPECT_EQ(g.nodes[static_cast<std::size_t>(n.parent)].name, n.upNode);
    EXPECT_EQ(n.matchedLink.back(), "Functional.gelu.0.forward");
    ASSERT_GE(n.stack, 0);
    const auto& frames = g.stacks[static_cast<std::size_t>(n.stack)];
    EXPECT_TRUE(std::any_of(frames.begin(), frames.end(), [](const std::string& f) { return f.find("F.gelu(") != std::string::npos; }));
    const auto outputs = parseParams(n.outputData);
    ASSERT_TRUE(outputs);
    ASSERT_EQ(outputs->size(), 1u);
    EXPECT_EQ(outputs->front().name, "Functional.gelu.0.forward.output.0");
    std::map<std::string, std::string> values(outputs->front().values.begin(), outputs->front().values.end());
    EXPECT_EQ(values["Result"], "error");
    EXPECT_EQ(values["shape"], "[4, 16, 32]");
    // The parent lists its children in msprobe's order.
    const Node& ffn = g.nodes[static_cast<std::size_t>(n.parent)];
    ASSERT_EQ(ffn.children.size(), ffn.subNodes.size());
    EXPECT_EQ(ffn.subNodes, (std::vector<std::string> { "Module.block.ffn.fc1.Linear.forward.0", "Functional.gelu.0.forward",
                                                         "Module.block.ffn.fc2.Linear.forward.0" }));
}

TEST(GraphRead, VisJsonOfMsprobe12)
{
    const fs::path dir = probescope::testing::fixturesDir() / "modelA_tensor_mix/expected/graph";
    auto compare = readVis(dir / "graph_compare_step0_rank.vis");
    ASSERT_TRUE(compare) << compare.error().format();
    ASSERT_EQ((*compare)->graphs.size(), 2u);
    EXPECT_EQ((*compare)->version, MsprobeVersion::V12Vis);
    const Graph& npu = (*compare)->graphs[0];
    EXPECT_EQ(npu.nodes.size(), 114u);
    EXPECT_EQ((*compare)->graphs[1].nodes.size(), 110u);
    EXPECT_EQ(npu.nodes.back().name, "DefaultModel");
    const GraphSummary s = summarize(**compare, npu);
    ASSERT_TRUE(s.firstFailing);
    EXPECT_EQ(npu.nodes[*s.firstFailing].name, "Functional.gelu.0.forward");
    EXPECT_DOUBLE_EQ(*npu.nodes[*s.firstFailing].precision, 0.99462890625);
    EXPECT_TRUE((*compare)->warnings.empty());
    auto build = readGraphFile(dir / "graph_build_step1_rank.vis");
    ASSERT_TRUE(build) << build.error().format();
    ASSERT_EQ((*build)->graphs.size(), 1u);
    EXPECT_EQ((*build)->graphs[0].step, 1);
    EXPECT_FALSE((*build)->isCompare());
    EXPECT_TRUE((*build)->colours.empty());
}

TEST(GraphRead, TrendDb)
{
    const fs::path dir = graphFixtures() / "v26/modelA_tensor_mix";
    auto micro = readTrendDb(dir / "dump_data_npu_layout_rank0.trend.db");
    ASSERT_TRUE(micro) << micro.error().format();
    EXPECT_EQ((*micro)->targets.size(), 130u);
    EXPECT_EQ((*micro)->values.size(), 488u);
    EXPECT_EQ((*micro)->metrics, (std::vector<std::string> { "forward", "backward", "recompute", "parameters_grad" }));
    EXPECT_EQ((*micro)->steps.size(), 10u); // 5 micro steps per step, 2 steps
    EXPECT_EQ((*micro)->ranks, (std::vector<std::int64_t> { 0 }));
    auto flat = readTrendDb(dir / "dump_data_npu_layout_rank0_nomicro.trend.db");
    ASSERT_TRUE(flat);
    EXPECT_EQ((*flat)->steps, (std::vector<std::int64_t> { 0, 1 }));
    // The first trend row: conv2d's input in step 0, forward (values as stored).
    const TrendValue& v = (*micro)->values.front();
    EXPECT_EQ((*micro)->targets[v.target].name, "Functional.conv2d.input.0");
    EXPECT_DOUBLE_EQ(*(*micro)->stat(v, "norm"), 27.407075881958008);
    EXPECT_EQ((*micro)->statistics, (std::vector<std::string> { "norm", "max", "min", "mean" }));
    EXPECT_FALSE((*micro)->stat(v, "zeros"));
    // A .vis.db is not a trend db.
    auto wrong = readTrendDb(dir / "build_steps.vis.db");
    ASSERT_FALSE(wrong);
    EXPECT_NE(wrong.error().message.find("no table monitoring_metrics"), std::string::npos);
}

TEST(GraphRead, DamagedOrForeignFilesAreErrorsNamingTheFile)
{
    probescope::testing::TempDir dir;
    const fs::path source = graphFixtures() / "v26/modelA_tensor_mix/compare_step0_rank.vis.db";
    std::ifstream in(source, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    ASSERT_GT(bytes.size(), 100000u);
    // Cut short: SQLite sees a database whose pages are missing.
    const fs::path cut = dir.write("cut.vis.db", std::string_view(bytes).substr(0, 40000));
    auto r1 = readVisDb(cut);
    ASSERT_FALSE(r1);
    EXPECT_EQ(r1.error().location.file, cut.string());
    EXPECT_EQ(r1.error().id, "graph.db");
    // Pages overwritten in the middle.
    std::string scrambled = bytes;
    for (std::size_t i = 8192; i < 60000; ++i)
        scrambled[i] = static_cast<char>(i * 7);
    const fs::path bad = dir.write("bad.vis.db", scrambled);
    auto r2 = readVisDb(bad);
    ASSERT_FALSE(r2);
    EXPECT_EQ(r2.error().location.file, bad.string());
    // Not SQLite at all.
    const fs::path text = dir.write("text.vis.db", "{\"not\": \"sqlite\"}");
    auto r3 = readVisDb(text);
    ASSERT_FALSE(r3);
    EXPECT_NE(r3.error().message.find("not an SQLite database"), std::string::npos);
    // A FIFO in the file's place is refused, never opened (no hang).
    const fs::path fifo = dir.path() / "fifo.vis.db";
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    auto r4 = readVisDb(fifo);
    ASSERT_FALSE(r4);
    EXPECT_EQ(r4.error().id, "io.read");
    // An SQLite file of another kind: the missing table is named.
    const fs::path other = dir.path() / "other.vis.db";
    {
        sqlite3* db = nullptr;
        ASSERT_EQ(sqlite3_open(other.c_str(), &db), SQLITE_OK);
        sqlite3_exec(db, "CREATE TABLE tb_config (id TEXT); CREATE TABLE tb_stack (id TEXT)", nullptr, nullptr, nullptr);
        sqlite3_close(db);
    }
    auto r5 = readVisDb(other);
    ASSERT_FALSE(r5);
    EXPECT_NE(r5.error().message.find("no table tb_nodes"), std::string::npos);
    EXPECT_EQ(r5.error().location.file, other.string());
    // Broken rows: a dangling parent, a cycle, sub_nodes that is no list: warnings, every node shown once.
    const fs::path rows = dir.path() / "rows.vis.db";
    {
        sqlite3* db = nullptr;
        ASSERT_EQ(sqlite3_open(rows.c_str(), &db), SQLITE_OK);
        const std::string sql = std::string(probescope::testing::kVisDbSchema) + R"SQL(
INSERT INTO tb_config VALUES ('1', 'build', '', NULL, 1, 0, 'null', '[0]', '[0]');
INSERT INTO tb_nodes VALUES ('a', 'NPU_0_0', 0, 'A', '1', 'B', '{x', NULL, NULL, 0, '[]', 'nope', '', '{}', 0, '{}', '{}', 'NPU', NULL, 0, 0);
INSERT INTO tb_nodes VALUES ('b', 'NPU_0_0', 1, 'B', '0', 'A', '["A"]', NULL, NULL, 0, '[]', '', '', '{}', 0, 'x', '{}', 'NPU', NULL, 0, 0);
INSERT INTO tb_nodes VALUES ('c', 'NPU_0_0', 2, 'C', 'z', 'Missing', '', NULL, NULL, 0, '[]', '', '', '{}', 0, '{}', '{}', 'NPU', NULL, 0, 0);
)SQL";
        ASSERT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
        sqlite3_close(db);
    }
    auto r6 = readVisDb(rows);
    ASSERT_TRUE(r6) << r6.error().format();
    EXPECT_GE((*r6)->warnings.size(), 4u);
    const Graph& g = (*r6)->graphs.front();
    EXPECT_EQ(g.nodes.size(), 3u);
    std::size_t reachable = 0;
    std::vector<std::uint32_t> stack(g.roots.begin(), g.roots.end());
    std::set<std::uint32_t> seen;
    while (!stack.empty()) {
        const auto i = stack.back();
        stack.pop_back();
        ASSERT_TRUE(seen.insert(i).second) << "node shown twice";
        ++reachable;
        for (auto c : g.nodes[i].children)
            stack.push_back(c);
    }
    EXPECT_EQ(reachable, 3u);
    EXPECT_FALSE(parseParams(g.nodes[1].inputData).has_value()); // "x" is no JSON object: nullopt, no throw
}

// ---- manual matches ----

TEST(GraphMatchFile, HandExampleBothDirectionsGiveOneMatchEach)
{
    auto config = readVisConfig(graphFixtures() / "vis_config/hand_example/compare_step0_rank_0_0.vis.config");
    ASSERT_TRUE(config) << config.error().format();
    ASSERT_EQ(config->entries.size(), 4u);
    auto isNpu = [](std::string_view s) { return s.starts_with("Module.layers."); };
    auto isBench = [](std::string_view s) { return s.starts_with("Module.layer."); };
    const ResolvedMatches r = resolveMatches(*config, isNpu, isBench);
    EXPECT_TRUE(r.notes.empty());
    ASSERT_EQ(r.matches.size(), 2u);
    EXPECT_EQ(r.matches[0], (NodeMatch { "Module.layers.0.mlp.MLP.backward.0", "Module.layer.0.mlp.MLP.backward.0" }));
    EXPECT_EQ(r.matches[1], (NodeMatch { "Module.layers.0.mlp.MLP.forward.0", "Module.layer.0.mlp.MLP.forward.0" }));
}

TEST(GraphMatchFile, PluginCollisionIsRecovered)
{
    // tb_graph_ascend saved npu reshape.1 -> bench reshape.0 and npu reshape.2 -> bench reshape.1, plus the
    // Bench rows (bench -> npu) in the same object; "Tensor.reshape.1.forward" collided and the Bench row won.
    probescope::testing::TempDir dir;
    const fs::path file = dir.write("c_0_0.vis.config", R"({
    "Tensor.reshape.2.forward": "Tensor.reshape.1.forward",
    "Tensor.reshape.1.forward": "Tensor.reshape.2.forward",
    "Tensor.reshape.0.forward": "Tensor.reshape.1.forward"
})");
    auto config = readVisConfig(file);
    ASSERT_TRUE(config);
    const std::set<std::string> npu { "Tensor.reshape.0.forward", "Tensor.reshape.1.forward", "Tensor.reshape.2.forward" };
    const std::set<std::string> bench { "Tensor.reshape.0.forward", "Tensor.reshape.1.forward" };
    const ResolvedMatches r = resolveMatches(
        *config, [&](std::string_view s) { return npu.count(std::string(s)) != 0; },
        [&](std::string_view s) { return bench.count(std::string(s)) != 0; });
    EXPECT_TRUE(r.notes.empty()) << r.notes.front();
    ASSERT_EQ(r.matches.size(), 2u);
    EXPECT_EQ(r.matches[0], (NodeMatch { "Tensor.reshape.2.forward", "Tensor.reshape.1.forward" }));
    EXPECT_EQ(r.matches[1], (NodeMatch { "Tensor.reshape.1.forward", "Tensor.reshape.0.forward" }));
    // What ProbeScope writes has NPU keys only: no collision possible.
    EXPECT_EQ(visConfigText(r.matches), "{\n    \"Tensor.reshape.2.forward\": \"Tensor.reshape.1.forward\",\n"
                                        "    \"Tensor.reshape.1.forward\": \"Tensor.reshape.0.forward\"\n}");
    EXPECT_EQ(visConfigText({}), "{}");
    // One entry gives one match, also where both sides have both names (the Bench-row reading is not added to it).
    const fs::path one = dir.write("one.vis.config", R"({"Tensor.reshape.1.forward": "Tensor.reshape.0.forward"})");
    auto oneConfig = readVisConfig(one);
    ASSERT_TRUE(oneConfig);
    const ResolvedMatches single = resolveMatches(
        *oneConfig, [&](std::string_view s) { return npu.count(std::string(s)) != 0; },
        [&](std::string_view s) { return npu.count(std::string(s)) != 0; });
    ASSERT_EQ(single.matches.size(), 1u);
    EXPECT_EQ(single.matches[0], (NodeMatch { "Tensor.reshape.1.forward", "Tensor.reshape.0.forward" }));
    // Unknown names and non-string values.
    const fs::path odd = dir.write("odd.vis.config", R"({"A": "B"})");
    auto oddConfig = readVisConfig(odd);
    ASSERT_TRUE(oddConfig);
    EXPECT_EQ(resolveMatches(*oddConfig, [](std::string_view) { return false; }, [](std::string_view) { return false; }).notes.size(), 1u);
    auto bad = readVisConfig(dir.write("bad.vis.config", R"({"A": 1})"));
    ASSERT_FALSE(bad);
    EXPECT_EQ(bad.error().id, "graph.match-file");
    auto syntax = readVisConfig(dir.write("syntax.vis.config", "{\n  \"A\": \"B\",\n}"));
    ASSERT_FALSE(syntax);
    EXPECT_EQ(syntax.error().location.line, 3u);
}

// ---- writing ----

namespace {

/// Compares a written db with msprobe's: tb_nodes row for row (dump_data_dir may differ by where the inputs lie),
/// input_data/output_data as JSON objects, precision_index within 1e-9; tb_config and tb_stack equal.
void expectSameTables(const fs::path& mine, const fs::path& theirs)
{
    Sql a(mine);
    Sql b(theirs);
    const auto rowsA = a.rows("SELECT * FROM tb_nodes ORDER BY id");
    const auto rowsB = b.rows("SELECT * FROM tb_nodes ORDER BY id");
    ASSERT_EQ(rowsA.size(), rowsB.size());
    int reported = 0;
    for (std::size_t i = 0; i < rowsA.size() && reported < 5; ++i) {
        const auto& x = rowsA[i];
        const auto& y = rowsB[i];
        ASSERT_EQ(x.at("id").text, y.at("id").text);
        ASSERT_EQ(x.size(), y.size());
        for (const auto& [column, v] : y) {
            if (column == "dump_data_dir")
                continue;
            const auto& u = x.at(column);
            bool same = u.type == v.type && u.text == v.text;
            if (column == "precision_index" && u.type != SQLITE_NULL && v.type != SQLITE_NULL)
                same = std::fabs(u.number - v.number) <= 1e-9;
            if (column == "input_data" || column == "output_data")
                same = nlohmann::json::parse(u.text) == nlohmann::json::parse(v.text);
            if (!same) {
                ADD_FAILURE() << y.at("id").text << " " << column << ": " << u.text.substr(0, 300) << "  vs msprobe  "
                              << v.text.substr(0, 300);
                ++reported;
            }
        }
    }
    const auto configA = a.rows("SELECT * FROM tb_config");
    const auto configB = b.rows("SELECT * FROM tb_config");
    ASSERT_EQ(configA.size(), 1u);
    ASSERT_EQ(configB.size(), 1u);
    for (const auto& [column, v] : configB.front()) {
        EXPECT_EQ(configA.front().at(column).type, v.type) << column;
        EXPECT_EQ(configA.front().at(column).text, v.text) << column;
    }
    const auto stackA = a.rows("SELECT id, stack_info FROM tb_stack ORDER BY id");
    const auto stackB = b.rows("SELECT id, stack_info FROM tb_stack ORDER BY id");
    ASSERT_EQ(stackA.size(), stackB.size());
    for (std::size_t i = 0; i < stackA.size(); ++i) {
        EXPECT_EQ(stackA[i].at("id").text, stackB[i].at("id").text);
        EXPECT_EQ(stackA[i].at("stack_info").text, stackB[i].at("stack_info").text) << stackB[i].at("id").text;
    }
    // The same schema (columns and indexes), and WAL mode like msprobe's files.
    EXPECT_EQ(a.rows("SELECT name FROM pragma_table_info('tb_nodes')").size(),
              b.rows("SELECT name FROM pragma_table_info('tb_nodes')").size());
    EXPECT_EQ(a.rows("SELECT name FROM sqlite_master WHERE type = 'index'").size(),
              b.rows("SELECT name FROM sqlite_master WHERE type = 'index'").size());
    // File header bytes 18/19 (write/read format version): 2 = WAL.
    std::ifstream header(mine, std::ios::binary);
    char bytes[20] = {};
    header.read(bytes, sizeof bytes);
    EXPECT_EQ(bytes[18], 2);
    EXPECT_EQ(bytes[19], 2);
}

struct WriteCase
{
    const char* pair;
    const char* name;  ///< msprobe's db name in the fixture folder
    const char* npu;   ///< relative to the pair
    const char* bench; ///< "" for a build
    bool fuzzy = false;
    bool overflow = false;
};

const WriteCase kWriteCases[] = {
    { "modelA_tensor_mix", "build_step0_rank", "npu/step0/rank", "" },
    { "modelA_tensor_mix", "build_steps", "npu", "" },
    { "modelA_tensor_mix", "compare_step0_rank", "npu/step0/rank", "bench/step0/rank" },
    { "modelA_tensor_mix", "compare_step1_rank", "npu/step1/rank", "bench/step1/rank" },
    { "modelA_tensor_mix", "compare_steps", "npu", "bench" },
    { "modelA_statistics_mix", "build_step1_rank", "npu/step1/rank", "" },
    { "modelA_statistics_mix", "compare_step0_rank", "npu/step0/rank", "bench/step0/rank" },
    { "modelA_statistics_mix", "compare_steps", "npu", "bench" },
    { "modelA_statistics_mix", "compare_step0_rank_fuzzy", "npu/step0/rank", "bench/step0/rank", true },
    { "modelA_statistics_mix", "compare_step0_rank_overflow", "npu/step0/rank", "bench/step0/rank", false, true },
    { "modelA_statistics_mix", "build_step0_rank_overflow", "npu/step0/rank", "", false, true },
    { "modelA_md5_mix", "build_steps", "npu", "" },
    { "modelA_md5_mix", "compare_step0_rank", "npu/step0/rank", "bench/step0/rank" },
    { "modelA_md5_mix", "compare_steps", "npu", "bench" },
};

void writeAndCompare(WriteFormat format, const char* versionDir)
{
    probescope::testing::TempDir dir;
    int n = 0;
    for (const WriteCase& c : kWriteCases) {
        const fs::path reference = graphFixtures() / versionDir / c.pair / (std::string(c.name) + ".vis.db");
        if (!fs::exists(reference))
            continue;
        SCOPED_TRACE(reference.string());
        const fs::path pair = probescope::testing::fixturesDir() / c.pair;
        GraphWriteOptions options;
        options.format = format;
        options.fuzzy = c.fuzzy;
        options.overflowCheck = c.overflow;
        options.timestamp = "20260101000000";
        const fs::path out = dir.path() / std::to_string(n++);
        std::optional<fs::path> bench;
        if (*c.bench)
            bench = pair / c.bench;
        auto written = writeGraphDb(pair / c.npu, bench, out, options);
        ASSERT_TRUE(written) << written.error().format();
        EXPECT_EQ(written->written, out / (std::string(*c.bench ? "compare_" : "build_") + "20260101000000.vis.db"));
        EXPECT_EQ(dirListing(out), (std::set<std::string> { written->written.filename().string() })) << "temp files left";
        expectSameTables(written->written, reference);
        // The written db reads back as the same graphs and first failing node as msprobe's.
        auto mine = readVisDb(written->written);
        auto theirs = readVisDb(reference);
        ASSERT_TRUE(mine && theirs);
        ASSERT_EQ((*mine)->graphs.size(), (*theirs)->graphs.size());
        for (std::size_t g = 0; g < (*mine)->graphs.size(); ++g) {
            const auto a = summarize(**mine, (*mine)->graphs[g]);
            const auto b = summarize(**theirs, (*theirs)->graphs[g]);
            EXPECT_EQ(a.firstFailing, b.firstFailing);
            EXPECT_EQ(a.perBand, b.perBand);
        }
    }
    EXPECT_GE(n, 10);
}

} // namespace

TEST(GraphWrite, Msprobe26DbsEqualMsprobesOwn)
{
    writeAndCompare(WriteFormat::V26, "v26");
}

TEST(GraphWrite, Msprobe83DbsEqualMsprobesOwn)
{
    writeAndCompare(WriteFormat::V83, "v833");
}

TEST(GraphWrite, NeverReplacesAFile)
{
    probescope::testing::TempDir dir;
    const fs::path npu = probescope::testing::fixturesDir() / "modelA_statistics_mix/npu/step0/rank";
    GraphWriteOptions options;
    options.timestamp = "20260101000000";
    const fs::path taken = dir.write("out/build_20260101000000.vis.db", "not mine");
    auto first = writeGraphDb(npu, std::nullopt, dir.path() / "out", options);
    ASSERT_TRUE(first) << first.error().format();
    EXPECT_EQ(first->written.filename(), "build_20260101000000_1.vis.db");
    std::ifstream in(taken);
    EXPECT_EQ(std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>()), "not mine");
    auto second = writeGraphDb(npu, std::nullopt, dir.path() / "out", options);
    ASSERT_TRUE(second);
    EXPECT_EQ(second->written.filename(), "build_20260101000000_2.vis.db");
    EXPECT_EQ(dirListing(dir.path() / "out").size(), 3u);
}

TEST(GraphWrite, L1DumpGetsAFlatGraphAndANote)
{
    // msprobe refuses a dump without construct.json content ("failed to build graph") and writes no db.
    probescope::testing::TempDir dir;
    const fs::path source = probescope::testing::fixturesDir() / "modelA_statistics_mix/npu/step0/rank";
    const fs::path rank = dir.path() / "l1/rank";
    fs::create_directories(rank);
    fs::copy_file(source / "dump.json", rank / "dump.json");
    fs::copy_file(source / "stack.json", rank / "stack.json");
    dir.write("l1/rank/construct.json", "{}");
    GraphWriteOptions options;
    options.timestamp = "20260101000000";
    auto written = writeGraphDb(rank, std::nullopt, dir.path() / "out", options);
    ASSERT_TRUE(written) << written.error().format();
    ASSERT_EQ(written->notes.size(), 1u);
    EXPECT_NE(written->notes.front().find("L1"), std::string::npos);
    auto read = readVisDb(written->written);
    ASSERT_TRUE(read);
    const Graph& g = (*read)->graphs.front();
    // Every dump entry is a node, DefaultModel last; APIs between modules are grouped.
    Sql sql(written->written);
    EXPECT_EQ(g.nodes.back().name, "DefaultModel");
    EXPECT_TRUE((*read)->warnings.empty());
    EXPECT_GT(g.find("Functional.gelu.0.forward").has_value(), 0);
    EXPECT_EQ(g.nodes[static_cast<std::size_t>(g.nodes[*g.find("Functional.gelu.0.forward")].parent)].type,
              static_cast<std::uint8_t>(NodeType::ApiCollection));
}

TEST(GraphWrite, MatchFilePairsTheNodesItNames)
{
    // The plugin's own .vis.config on the summary compare: Tensor.mean.0 and cross_entropy.0 (forward and backward)
    // that msprobe left unmatched because the NPU-only Tensor.reshape.0 shifts their Apis_Between_Modules parents.
    probescope::testing::TempDir dir;
    const fs::path pair = probescope::testing::fixturesDir() / "modelA_statistics_mix";
    const fs::path pluginDir = graphFixtures() / "vis_config/plugin26_modelA_statistics";
    auto config = readVisConfig(pluginDir / "compare_step0_rank_0_0.vis.config");
    ASSERT_TRUE(config);
    GraphWriteOptions options;
    options.timestamp = "20260101000000";
    options.matches = &*config;
    auto written = writeGraphDb(pair / "npu/step0/rank", pair / "bench/step0/rank", dir.path(), options);
    ASSERT_TRUE(written) << written.error().format();
    Sql mine(written->written);
    Sql plugin(pluginDir / "compare_step0_rank.after_manual_match.vis.db");
    for (const char* name : { "Tensor.mean.0.forward", "Functional.cross_entropy.0.forward", "Tensor.mean.0.backward",
                              "Functional.cross_entropy.0.backward" }) {
        SCOPED_TRACE(name);
        const std::string q = std::string("SELECT matched_node_link, precision_index, modified FROM tb_nodes WHERE data_source = 'NPU' AND node_name = '") + name + "'";
        const auto a = mine.rows(q);
        const auto b = plugin.rows(q);
        ASSERT_EQ(a.size(), 1u);
        ASSERT_EQ(b.size(), 1u);
        // The link ends at the bench node the plugin paired (ProbeScope writes all the bench ancestors before it, as
        // msprobe's fuzzy match does; the 26 plugin writes the bench parent only; readers use the last name).
        const auto linkA = nlohmann::json::parse(a.front().at("matched_node_link").text);
        const auto linkB = nlohmann::json::parse(b.front().at("matched_node_link").text);
        ASSERT_FALSE(linkA.empty());
        EXPECT_EQ(linkA.back(), linkB.back());
        EXPECT_EQ(linkA[linkA.size() - 2], linkB[linkB.size() - 2]);
        EXPECT_NE(a.front().at("precision_index").type, SQLITE_NULL);
        EXPECT_EQ(a.front().at("precision_index").text, b.front().at("precision_index").text);
        EXPECT_EQ(a.front().at("modified").text, "1"); // a manual match, as the plugin marks it
    }
    // Without the file these rows are unmatched, as in msprobe's db.
    options.matches = nullptr;
    auto plain = writeGraphDb(pair / "npu/step0/rank", pair / "bench/step0/rank", dir.path() / "plain", options);
    ASSERT_TRUE(plain);
    Sql p(plain->written);
    EXPECT_EQ(p.rows("SELECT matched_node_link FROM tb_nodes WHERE data_source = 'NPU' AND node_name = 'Tensor.mean.0.forward'")
                  .front().at("matched_node_link").text,
              "[]");
}

TEST(GraphRead, NodeDataOnDemand)
{
    const fs::path path = graphFixtures() / "v26/modelA_statistics_mix/compare_step0_rank.vis.db";
    ReadOptions lazy;
    lazy.nodeData = false;
    auto light = readVisDb(path, lazy);
    auto full = readVisDb(path);
    ASSERT_TRUE(light && full);
    EXPECT_TRUE((*light)->dataDeferred);
    ASSERT_EQ((*light)->graphs.size(), (*full)->graphs.size());
    for (std::size_t g = 0; g < (*full)->graphs.size(); ++g) {
        const Graph& a = (*light)->graphs[g];
        const Graph& b = (*full)->graphs[g];
        ASSERT_EQ(a.nodes.size(), b.nodes.size());
        EXPECT_EQ(a.dumpDataDir, b.nodes.front().dumpDataDir);
        for (std::uint32_t i = 0; i < a.nodes.size(); i += 17) {
            EXPECT_EQ(a.nodes[i].name, b.nodes[i].name);
            EXPECT_EQ(a.nodes[i].children, b.nodes[i].children);
            EXPECT_EQ(a.nodes[i].isDistributed, b.nodes[i].isDistributed);
            EXPECT_TRUE(a.nodes[i].inputData.empty());
            auto data = readNodeData(**light, a, i);
            ASSERT_TRUE(data) << data.error().format();
            EXPECT_EQ(data->inputData, b.nodes[i].inputData);
            EXPECT_EQ(data->outputData, b.nodes[i].outputData);
        }
    }
}

TEST(GraphWrite, StepFolderOfRanksGivesOneGraphPerRank)
{
    // A step folder of rank0/rank1 (msprobe's "ranks" input): one NPU and one bench graph per rank, rank_list [0, 1].
    probescope::testing::TempDir dir;
    const fs::path pair = probescope::testing::fixturesDir() / "modelA_md5_mix";
    for (const char* side : { "npu", "bench" })
        for (const char* rank : { "rank0", "rank1" }) {
            fs::create_directories(dir.path() / side / "step0" / rank);
            fs::copy(pair / side / "step0/rank", dir.path() / side / "step0" / rank, fs::copy_options::recursive);
        }
    GraphWriteOptions options;
    options.timestamp = "20260101000000";
    auto written = writeGraphDb(dir.path() / "npu/step0", dir.path() / "bench/step0", dir.path() / "out", options);
    ASSERT_TRUE(written) << written.error().format();
    EXPECT_EQ(written->graphs, 4u);
    auto read = readVisDb(written->written);
    ASSERT_TRUE(read);
    EXPECT_EQ((*read)->config.rankList, (std::vector<std::int64_t> { 0, 1 }));
    EXPECT_EQ((*read)->config.stepList, (std::vector<std::int64_t> { 0 }));
    ASSERT_NE(graphById(**read, "NPU_0_1"), nullptr);
    ASSERT_NE(graphById(**read, "Bench_0_1"), nullptr);
    // Each rank's graph is the single-rank graph msprobe writes for that folder (same rows but for the rank).
    Sql mine(written->written);
    Sql theirs(graphFixtures() / "v26/modelA_md5_mix/compare_step0_rank.vis.db");
    const auto a = mine.rows("SELECT node_name, node_order, precision_index, matched_node_link FROM tb_nodes WHERE graph_id = 'NPU_0_1' ORDER BY node_order");
    const auto b = theirs.rows("SELECT node_name, node_order, precision_index, matched_node_link FROM tb_nodes WHERE graph_id = 'NPU_0_0' ORDER BY node_order");
    ASSERT_EQ(a.size(), b.size());
    for (std::size_t i = 0; i < a.size(); ++i)
        for (const char* c : { "node_name", "node_order", "precision_index", "matched_node_link" })
            EXPECT_EQ(a[i].at(c).text, b[i].at(c).text) << c << " " << i;
}

TEST(GraphMatchFile, OppositesAndWritingRoundTrip)
{
    EXPECT_EQ(oppositeName("Module.layers.0.mlp.MLP.forward.0"), "Module.layers.0.mlp.MLP.backward.0");
    EXPECT_EQ(oppositeName("Tensor.mean.0.backward"), "Tensor.mean.0.forward");
    const std::set<std::string> npu { "Tensor.mean.0.forward", "Tensor.mean.0.backward", "Functional.relu.1.forward" };
    const std::set<std::string> bench { "Tensor.mean.0.forward", "Tensor.mean.0.backward", "Functional.relu.0.forward" };
    auto isNpu = [&](std::string_view s) { return npu.count(std::string(s)) != 0; };
    auto isBench = [&](std::string_view s) { return bench.count(std::string(s)) != 0; };
    const auto all = withOpposites({ { "Tensor.mean.0.forward", "Tensor.mean.0.forward" },
                                     { "Functional.relu.1.forward", "Functional.relu.0.forward" } },
                                   isNpu, isBench);
    ASSERT_EQ(all.size(), 3u); // relu's backward does not exist on either side
    EXPECT_EQ(all[2], (NodeMatch { "Tensor.mean.0.backward", "Tensor.mean.0.backward" }));
    probescope::testing::TempDir dir;
    auto first = writeVisConfig(dir.path(), "compare_step0_rank", 0, 0, all);
    ASSERT_TRUE(first) << first.error().format();
    EXPECT_EQ(first->filename(), "compare_step0_rank_0_0.vis.config");
    auto second = writeVisConfig(dir.path(), "compare_step0_rank", 0, 0, all);
    ASSERT_TRUE(second);
    EXPECT_EQ(second->filename(), "compare_step0_rank_0_0_1.vis.config"); // never replaced
    auto back = readVisConfig(*first);
    ASSERT_TRUE(back);
    const auto resolved = resolveMatches(*back, isNpu, isBench);
    EXPECT_TRUE(resolved.notes.empty());
    EXPECT_EQ(resolved.matches, all);
}

// ---- issue 33: graph takes the compare pipeline's results and refusals; bounded cost; the one output writer ----

namespace {

/// The real tensor pair's step 0 copied to `dir`/npu and `dir`/bench, for damaging one side.
void copyTensorPair(const fs::path& dir)
{
    const fs::path pair = probescope::testing::fixturesDir() / "modelA_tensor_mix";
    for (const char* side : { "npu", "bench" }) {
        fs::create_directories(dir / side);
        fs::copy(pair / side / "step0/rank", dir / side, fs::copy_options::recursive);
    }
}

using probescope::testing::readAll;

/// Every name under `dir` (none when it does not exist): what a run left behind.
std::vector<std::string> everythingUnder(const fs::path& dir)
{
    std::vector<std::string> out;
    std::error_code ec;
    if (!fs::exists(dir, ec))
        return out;
    for (const auto& e : fs::recursive_directory_iterator(dir))
        out.push_back(e.path().lexically_relative(dir).string());
    return out;
}

} // namespace

TEST(GraphWrite, RefusesWhatCompareRefusesAndWritesNothing)
{
    // A cut .pt, a data_name leaving the dump folder and an NPU tensor folder linked to the bench's: compare refuses
    // each pair (issue 20, 25); graph used to write a db with exit 0 (the node's output silently dropped, or 113 nodes
    // "error" from the bench's own tensors).
    struct Case
    {
        const char* name;
        void (*damage)(const fs::path& dir);
        const char* expected; ///< in the error's text: the file or the id that names the cause
    };
    const Case cases[] = {
        { "cut .pt",
          [](const fs::path& d) {
              const fs::path pt = d / "npu/dump_tensor_data/Functional.gelu.0.forward.output.0.pt";
              fs::resize_file(pt, fs::file_size(pt) / 2);
          },
          "Functional.gelu.0.forward.output.0.pt" },
        { "escaping data_name",
          [](const fs::path& d) {
              // The first data_name of both sides (so the rows still pair) reaches a file planted beside the dumps.
              for (const char* side : { "npu", "bench" }) {
                  std::string text = readAll(d / side / "dump.json");
                  const auto at = text.find("\"data_name\": \"");
                  ASSERT_NE(at, std::string::npos);
                  const auto end = text.find('"', at + 14);
                  text.replace(at + 14, end - (at + 14), "../../outside.pt");
                  std::ofstream(d / side / "dump.json", std::ios::binary | std::ios::trunc) << text;
              }
              fs::copy_file(d / "bench/dump_tensor_data/Functional.conv2d.0.forward.input.0.pt", d / "outside.pt");
          },
          "tensor.path-escape" },
        { "symlinked tensor folder",
          [](const fs::path& d) {
              fs::remove_all(d / "npu/dump_tensor_data");
              fs::create_directory_symlink(d / "bench/dump_tensor_data", d / "npu/dump_tensor_data");
          },
          "dump_tensor_data" },
    };
    for (const Case& c : cases) {
        SCOPED_TRACE(c.name);
        probescope::testing::TempDir dir;
        copyTensorPair(dir.path());
        c.damage(dir.path());
        Diagnostics findings;
        GraphWriteOptions options;
        options.timestamp = "20260101000000";
        options.findings = &findings;
        const fs::path out = dir.path() / "out";
        auto written = writeGraphDb(dir.path() / "npu", dir.path() / "bench", out, options);
        ASSERT_FALSE(written) << c.name << ": written " << written->written;
        EXPECT_EQ(written.error().severity, Severity::Error);
        EXPECT_NE(written.error().format().find(c.expected), std::string::npos) << written.error().format();
        EXPECT_TRUE(hasErrors(findings));
        EXPECT_TRUE(everythingUnder(out).empty()) << everythingUnder(out).front();
        // In both formats: 8.3 takes the same pipeline.
        options.format = WriteFormat::V83;
        EXPECT_FALSE(writeGraphDb(dir.path() / "npu", dir.path() / "bench", out, options));
        EXPECT_TRUE(everythingUnder(out).empty());
    }
}

namespace {

std::string deepModule(int i)
{
    return "Module.m" + std::to_string(i) + ".Lin.forward.0";
}

/// `depth` nested modules with a relu in the deepest (statistics), the same on both sides, under `dir`/npu, /bench.
void writeDeepPair(const probescope::testing::TempDir& dir, int depth)
{
    std::string construct = "{\n";
    std::string data;
    const std::string stats = R"({"input_args": [{"type": "torch.Tensor", "dtype": "torch.float32", "shape": [2], "Max": 1.0, "Min": 0.0, "Mean": 0.5, "Norm": 1.0, "requires_grad": false}], "input_kwargs": {}, "output": [{"type": "torch.Tensor", "dtype": "torch.float32", "shape": [2], "Max": 1.0, "Min": 0.0, "Mean": 0.5, "Norm": 1.0, "requires_grad": false}]})";
    for (int i = 0; i < depth; ++i) {
        construct += "\"" + deepModule(i) + "\": " + (i ? "\"" + deepModule(i - 1) + "\"" : std::string("null")) + ",\n";
        data += (i ? ",\n" : "") + ("\"" + deepModule(i) + "\": " + stats);
    }
    construct += "\"Functional.relu.0.forward\": \"" + deepModule(depth - 1) + "\"\n}";
    data += ",\n\"Functional.relu.0.forward\": " + stats;
    const std::string dump = R"({"task": "statistics", "level": "mix", "framework": "pytorch", "dump_data_dir": null, "data": {)" + data + "}}";
    for (const char* side : { "npu", "bench" }) {
        dir.write(fs::path(side) / "construct.json", construct);
        dir.write(fs::path(side) / "dump.json", dump);
        dir.write(fs::path(side) / "stack.json", "{}");
    }
}

/// writeDeepPair's pair of `depth` nested modules compared into `dir`/out.
Result<GraphWriteResult> writeDeepGraph(const probescope::testing::TempDir& dir, int depth)
{
    writeDeepPair(dir, depth);
    GraphWriteOptions options;
    options.timestamp = "20260101000000";
    return writeGraphDb(dir.path() / "npu", dir.path() / "bench", dir.path() / "out", options);
}

} // namespace

TEST(GraphWrite, DeepNestingLinksEveryNodeToItsPartnersChain)
{
    // 900 nested modules on both sides: every node is matched by name, and its matched_node_link is msprobe's list of
    // the partner's ancestors and name. The nodes store one partner index, not that list (issue 33: 20,000 nested
    // modules passed 5.8 GB); the list is made for each row as it is written.
    constexpr int kDepth = 900;
    probescope::testing::TempDir dir;
    auto written = writeDeepGraph(dir, kDepth);
    ASSERT_TRUE(written) << written.error().format();
    EXPECT_TRUE(written->notes.empty()) << written->notes.front();
    Sql sql(written->written);
    const auto rows = sql.rows("SELECT data_source, matched_node_link FROM tb_nodes WHERE node_name = 'Functional.relu.0.forward'");
    ASSERT_EQ(rows.size(), 2u);
    for (const auto& row : rows) {
        const auto link = nlohmann::json::parse(row.at("matched_node_link").text);
        ASSERT_EQ(link.size(), static_cast<std::size_t>(kDepth) + 2); // DefaultModel, the modules, the node itself
        EXPECT_EQ(link.front(), "DefaultModel");
        EXPECT_EQ(link[1], deepModule(0));
        EXPECT_EQ(link[kDepth], deepModule(kDepth - 1));
        EXPECT_EQ(link.back(), "Functional.relu.0.forward");
    }
    // Every node of both graphs is matched; the links add up to the sum of the depths.
    EXPECT_EQ(sql.rows("SELECT 1 FROM tb_nodes WHERE matched_node_link = '[]'").size(), 0u);
    const auto total = sql.rows("SELECT SUM(json_array_length(matched_node_link)) AS n FROM tb_nodes WHERE data_source = 'NPU'");
    const double expected = (kDepth + 2.0) * (kDepth + 1.0) / 2.0 + (kDepth + 2.0); // 1..kDepth+1, and relu
    EXPECT_EQ(total.front().at("n").number, expected);
}

TEST(GraphWrite, NestingPastTheLinkBudgetWritesParentLinksAndSaysSo)
{
    // 6,000 nested modules: msprobe's lists would hold 18 million names (a db of several GB, growing as nodes x depth).
    // Past 64 names per node the links are [parent, node] (tb_graph_ascend 26's form; readers take the last name),
    // so the db stays linear in the model, and a note says it.
    constexpr int kDepth = 6000;
    probescope::testing::TempDir dir;
    auto written = writeDeepGraph(dir, kDepth);
    ASSERT_TRUE(written) << written.error().format();
    ASSERT_EQ(written->notes.size(), 1u);
    EXPECT_NE(written->notes.front().find("matched_node_link"), std::string::npos);
    Sql sql(written->written);
    const auto rows = sql.rows("SELECT matched_node_link FROM tb_nodes WHERE node_name = 'Functional.relu.0.forward'");
    ASSERT_EQ(rows.size(), 2u);
    for (const auto& row : rows)
        EXPECT_EQ(nlohmann::json::parse(row.at("matched_node_link").text),
                  nlohmann::json::array({ deepModule(kDepth - 1), "Functional.relu.0.forward" }));
    const auto total = sql.rows("SELECT SUM(json_array_length(matched_node_link)) AS n FROM tb_nodes");
    EXPECT_EQ(total.front().at("n").number, 2.0 * (2 * (kDepth + 1) + 1)); // 2 names a node, 1 for DefaultModel
    EXPECT_LT(fs::file_size(written->written), 20u * 1024 * 1024);
}

TEST(GraphWrite, TakenNamesAndSymlinksAreNeverReplaced)
{
    // A symlink planted at the db's name (pointing at a file elsewhere) is a taken name: never followed or replaced.
    probescope::testing::TempDir dir;
    const fs::path npu = probescope::testing::fixturesDir() / "modelA_statistics_mix/npu/step0/rank";
    const fs::path victim = dir.write("elsewhere/victim.txt", "keep me");
    fs::create_directories(dir.path() / "out");
    fs::create_symlink(victim, dir.path() / "out/build_20260101000000.vis.db");
    fs::create_symlink(dir.path() / "nowhere", dir.path() / "out/build_20260101000000_1.vis.db"); // dangling
    GraphWriteOptions options;
    options.timestamp = "20260101000000";
    auto written = writeGraphDb(npu, std::nullopt, dir.path() / "out", options);
    ASSERT_TRUE(written) << written.error().format();
    EXPECT_EQ(written->written.filename(), "build_20260101000000_2.vis.db");
    EXPECT_EQ(readAll(victim), "keep me");
    EXPECT_TRUE(fs::is_symlink(dir.path() / "out/build_20260101000000.vis.db"));
    EXPECT_TRUE(fs::is_symlink(dir.path() / "out/build_20260101000000_1.vis.db"));
    EXPECT_FALSE(fs::exists(dir.path() / "nowhere"));
    EXPECT_EQ(everythingUnder(dir.path() / "out").size(), 3u); // no temporary file left
}

TEST(GraphWrite, FullDiskNamesTheFinalFileAndLeavesNothing)
{
    probescope::testing::TempDir dir;
    const fs::path npu = probescope::testing::fixturesDir() / "modelA_statistics_mix/npu/step0/rank";
    GraphWriteOptions options;
    options.timestamp = "20260101000000";
    setTestFullDisk("write:all");
    auto written = writeGraphDb(npu, std::nullopt, dir.path() / "out", options);
    setTestFullDisk("");
    ASSERT_FALSE(written);
    const std::string text = written.error().format();
    EXPECT_NE(text.find((dir.path() / "out/build_20260101000000.vis.db").string() + ": " + std::strerror(ENOSPC)),
              std::string::npos) << text;
    EXPECT_EQ(text.find(".tmp"), std::string::npos) << text;
    EXPECT_TRUE(everythingUnder(dir.path() / "out").empty()) << everythingUnder(dir.path() / "out").front();
}

TEST(GraphMatchFile, NumbersOutOfRangeAndRepeatedKeys)
{
    probescope::testing::TempDir dir;
    // nlohmann's number overflow used to escape as an exception and abort graph and compare.
    auto huge = readVisConfig(dir.write("huge.vis.config", "{\n  \"a\": \"b\",\n  \"c\": 1e99999\n}"));
    ASSERT_FALSE(huge);
    EXPECT_EQ(huge.error().id, "graph.match-file");
    EXPECT_EQ(huge.error().location.line, 3u);
    EXPECT_NE(huge.error().format().find("huge.vis.config:3:"), std::string::npos) << huge.error().format();
    for (const char* text : { "[\"a\"]", "{\"a\": {\"b\": \"c\"}}", "{\"a\": [1]}", "{\"a\": null}", "\"a\"", "" }) {
        SCOPED_TRACE(text);
        auto bad = readVisConfig(dir.write("bad.vis.config", text));
        ASSERT_FALSE(bad);
        EXPECT_EQ(bad.error().id, "graph.match-file");
        EXPECT_NE(bad.error().format().find("bad.vis.config"), std::string::npos);
    }
    // A repeated key: Python's json.load keeps the first place and the last value.
    auto repeated = readVisConfig(dir.write("rep.vis.config", R"({"a": "1", "b": "2", "a": "3"})"));
    ASSERT_TRUE(repeated);
    ASSERT_EQ(repeated->entries.size(), 2u);
    EXPECT_EQ(repeated->entries[0].key, "a");
    EXPECT_EQ(repeated->entries[0].value, "3");
    EXPECT_EQ(repeated->entries[1].key, "b");
    // 60,000 entries read in file order (one hash lookup each; ordered_json searched every key linearly).
    std::string many = "{";
    for (int i = 0; i < 60000; ++i)
        many += (i ? ",\n\"" : "\"") + ("stale.node." + std::to_string(i)) + "\": \"x" + std::to_string(i) + "\"";
    many += "}";
    auto big = readVisConfig(dir.write("many.vis.config", many));
    ASSERT_TRUE(big);
    ASSERT_EQ(big->entries.size(), 60000u);
    EXPECT_EQ(big->entries[59999].key, "stale.node.59999");
    const ResolvedMatches none = resolveMatches(*big, [](std::string_view) { return false; }, [](std::string_view) { return false; });
    EXPECT_TRUE(none.matches.empty());
    EXPECT_EQ(none.notes.size(), 60000u);
}

TEST(GraphWrite, ParsingWithoutRegexKeepsMsprobesRules)
{
    // The patterns msprobe applies with re, parsed by hand (no std::regex on dump text).
    EXPECT_EQ(countRemovedId("Functional.gelu.12.forward"), "Functional.gelu.forward");
    EXPECT_EQ(countRemovedId("a.1.2.b"), "a.2.b"); // re.sub does not reuse the closing dot
    EXPECT_EQ(countRemovedId("Distributed.all_reduce_rank3.0.forward"), "Distributed.all_reduce.forward");
    EXPECT_EQ(countRemovedId("x._rank.0."), "x._rank.");
    EXPECT_EQ(countRemovedId("..."), "...");
    EXPECT_EQ(parametersGradSuffix("Module.fc.Linear.parameters_grad"), std::optional<std::size_t>(16));
    EXPECT_EQ(parametersGradSuffix("Module.fc.Linear.parameters_grad.3"), std::optional<std::size_t>(16));
    EXPECT_EQ(parametersGradSuffix("Module.fc.Linear.parameters_grad.x"), std::nullopt);
    EXPECT_EQ(parametersGradSuffix("parameters_grad"), std::nullopt);
    EXPECT_EQ(formatDecimalString("0.12345678"), "0.123457");
    EXPECT_EQ(formatDecimalString("12.5%"), "12.5%");
    EXPECT_EQ(formatDecimalString("1.23456789%"), "1.234568%");
    EXPECT_EQ(formatDecimalString(".1234567"), ".1234567");
    EXPECT_EQ(formatDecimalString("1.123456789012345678901"), "1.123456789012345678901"); // 21 decimals: no match
    EXPECT_EQ(formatDecimalString("-0.12345678"), "-0.12345678");
    EXPECT_EQ(formatFloat83(1e-7), "1.000000e-07");
    EXPECT_EQ(formatFloat83(0.1234567), "0.123457");
}

namespace {

/// Compares a written db with a golden cut from msprobe's own (tests/data/graph_shift/make_golden.py): every row's
/// id, precision_index and matched_node_link, and input_data/output_data where the golden has them. Returns how
/// many rows had data.
int expectGoldenRows(const fs::path& db, const fs::path& goldenFile)
{
    const auto golden = nlohmann::json::parse(readAll(goldenFile));
    Sql mine(db);
    const auto rows = mine.rows("SELECT id, precision_index, matched_node_link, input_data, output_data FROM tb_nodes ORDER BY id");
    EXPECT_EQ(rows.size(), golden.at("rows").size());
    int withData = 0;
    for (std::size_t i = 0; i < rows.size() && i < golden.at("rows").size(); ++i) {
        const auto& want = golden.at("rows")[i];
        const auto& got = rows[i];
        EXPECT_EQ(got.at("id").text, want.at("id").get<std::string>());
        SCOPED_TRACE(got.at("id").text);
        if (want.at("precision_index").is_null())
            EXPECT_EQ(got.at("precision_index").type, SQLITE_NULL);
        else
            EXPECT_NEAR(got.at("precision_index").number, want.at("precision_index").get<double>(), 1e-9);
        EXPECT_EQ(nlohmann::json::parse(got.at("matched_node_link").text), want.at("matched_node_link"));
        if (want.contains("input_data")) {
            ++withData;
            EXPECT_EQ(nlohmann::json::parse(got.at("input_data").text), want.at("input_data"));
            EXPECT_EQ(nlohmann::json::parse(got.at("output_data").text), want.at("output_data"));
        }
    }
    return withData;
}

} // namespace

TEST(GraphWrite, FuzzyShiftedCallComparesTheLinkedNodes)
{
    // The bench ran one more gelu before the NPU's (its Functional.gelu.0 renamed Functional.gelu.1, tensors too).
    // msprobe 26's -fm pairs NPU gelu.0 with bench gelu.1 and compares those two nodes; the table by name had no bench
    // row for NPU gelu.0. Golden: msprobe 26's own db of this pair (tests/data/graph_shift/README.md).
    probescope::testing::TempDir dir;
    const fs::path source = probescope::testing::fixturesDir() / "modelA_tensor_mix";
    fs::create_directories(dir.path() / "npu");
    fs::copy(source / "npu/step0/rank", dir.path() / "npu", fs::copy_options::recursive);
    const auto shifted = [](std::string s) {
        const std::string from = "Functional.gelu.0.";
        for (std::size_t at = 0; (at = s.find(from, at)) != std::string::npos; at += from.size())
            s.replace(at, from.size(), "Functional.gelu.1.");
        return s;
    };
    fs::create_directories(dir.path() / "bench/dump_tensor_data");
    for (const char* json : { "dump.json", "construct.json", "stack.json" })
        dir.write(fs::path("bench") / json, shifted(readAll(source / "bench/step0/rank" / json)));
    for (const auto& e : fs::directory_iterator(source / "bench/step0/rank/dump_tensor_data"))
        fs::copy_file(e.path(), dir.path() / "bench/dump_tensor_data" / shifted(e.path().filename().string()));

    GraphWriteOptions options;
    options.fuzzy = true;
    options.timestamp = "20260101000000";
    auto written = writeGraphDb(dir.path() / "npu", dir.path() / "bench", dir.path() / "out", options);
    ASSERT_TRUE(written) << written.error().format();
    // NPU gelu.0 and bench gelu.1, forward and backward, with their data.
    EXPECT_EQ(expectGoldenRows(written->written, probescope::testing::testDataDir() / "graph_shift/golden.json"), 4);
}

TEST(GraphWrite, Format83ThousandthRatiosOfAGradientWithBenchZeros)
{
    // Two elements of a float32 bias gradient are 0 on the bench side and 1e-11, -3e-12 on the NPU side. msprobe 8.x's
    // relative error (float32, + np.finfo(float).eps where the bench is 0) puts them far off; msprobe 26's (+ float32's
    // eps) within a thousandth. Golden: msprobe 8.3.3's own db of this pair (tests/data/graph_grad83/README.md).
    probescope::testing::TempDir dir;
    const fs::path source = probescope::testing::fixturesDir() / "modelA_tensor_mix";
    const fs::path data = probescope::testing::testDataDir() / "graph_grad83";
    const std::string grad = "Module.block.attn.proj.Linear.parameters_grad.bias.pt";
    for (const char* side : { "npu", "bench" }) {
        fs::create_directories(dir.path() / side);
        fs::copy(source / side / "step0/rank", dir.path() / side, fs::copy_options::recursive);
        fs::remove(dir.path() / side / "dump_tensor_data" / grad);
        fs::copy_file(data / (std::string(side) + "." + grad), dir.path() / side / "dump_tensor_data" / grad);
    }
    GraphWriteOptions options;
    options.format = WriteFormat::V83;
    options.timestamp = "20260101000000";
    auto written = writeGraphDb(dir.path() / "npu", dir.path() / "bench", dir.path() / "out", options);
    ASSERT_TRUE(written) << written.error().format();
    EXPECT_EQ(expectGoldenRows(written->written, data / "golden.json"), 2); // the gradient node on both sides
}
