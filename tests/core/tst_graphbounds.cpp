// SPDX-License-Identifier: Apache-2.0
// The graph readers against hostile files (docs/reliability.md, "Graph files: reader bounds"): each file is made
// here with SQLite (or as JSON text) and must be read with a bounded result — an error naming the file, or the
// nodes it holds with capped warnings — never a crash, an overflow or work beyond the rows present. No test is
// timed; the structure that makes the work linear is asserted instead (docs/reliability.md gives the times).
#include "core/graph/graphreader.h"
#include "core/graph/trend.h"
#include "tempdir.h"
#include "visdbschema.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>

using namespace probescope;
using namespace probescope::graph;
namespace fs = std::filesystem;

namespace {

constexpr const char* kSchema = probescope::testing::kVisDbSchema;

/// A connection the test writes with (its own SQL, not core/graph's).
class Writer
{
public:
    explicit Writer(const fs::path& path)
    {
        EXPECT_EQ(sqlite3_open(path.c_str(), &m_db), SQLITE_OK) << path;
    }
    ~Writer() { sqlite3_close(m_db); }
    Writer(const Writer&) = delete;
    Writer& operator=(const Writer&) = delete;
    void exec(const std::string& sql)
    {
        char* error = nullptr;
        EXPECT_EQ(sqlite3_exec(m_db, sql.c_str(), nullptr, nullptr, &error), SQLITE_OK) << (error ? error : "") << " in " << sql.substr(0, 200);
        sqlite3_free(error);
    }
    /// Inserts a node of NPU_0_0 with rowid `rowid` (0: SQLite's choice).
    void node(std::int64_t rowid, std::int64_t order, const std::string& name, const std::string& up,
              const std::string& subs, std::int64_t micro = 0, const std::string& precision = "NULL",
              const std::string& link = "[]")
    {
        if (!m_insert) {
            const char* sql = "INSERT INTO tb_nodes (rowid, id, graph_id, node_order, node_name, node_type, up_node, sub_nodes,"
                              " precision_index, overflow_level, micro_step_id, matched_node_link, stack_id,"
                              " parallel_merge_info, matched_distributed, modified, input_data, output_data, data_source,"
                              " dump_data_dir, step, rank) VALUES (?1, ?2, 'NPU_0_0', ?3, ?4, '0', ?5, ?6, ?7, NULL, ?8, ?9,"
                              " '', '[]', '{}', 0, '{}', '{}', 'NPU', '', 0, 0)";
            EXPECT_EQ(sqlite3_prepare_v2(m_db, sql, -1, &m_insert, nullptr), SQLITE_OK) << sqlite3_errmsg(m_db);
        }
        sqlite3_reset(m_insert);
        if (rowid == 0)
            sqlite3_bind_null(m_insert, 1);
        else
            sqlite3_bind_int64(m_insert, 1, rowid);
        const std::string id = "NPU_0_0_" + name;
        sqlite3_bind_text(m_insert, 2, id.c_str(), -1, SQLITE_TRANSIENT);
        sqlite3_bind_int64(m_insert, 3, order);
        sqlite3_bind_text(m_insert, 4, name.c_str(), -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(m_insert, 5, up.c_str(), -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(m_insert, 6, subs.c_str(), -1, SQLITE_TRANSIENT);
        if (precision == "NULL")
            sqlite3_bind_null(m_insert, 7);
        else
            sqlite3_bind_double(m_insert, 7, std::stod(precision));
        sqlite3_bind_int64(m_insert, 8, micro);
        sqlite3_bind_text(m_insert, 9, link.c_str(), -1, SQLITE_TRANSIENT);
        EXPECT_EQ(sqlite3_step(m_insert), SQLITE_DONE) << sqlite3_errmsg(m_db);
    }
    void finish()
    {
        sqlite3_finalize(m_insert);
        m_insert = nullptr;
    }

private:
    sqlite3* m_db = nullptr;
    sqlite3_stmt* m_insert = nullptr;
};

/// A build db (or a compare db with `colours`) holding what `fill` inserts.
template <typename Fill>
fs::path makeDb(const fs::path& path, Fill&& fill, const std::string& graphType = "build",
                const std::string& colours = "null")
{
    Writer w(path);
    w.exec(kSchema);
    w.exec("INSERT INTO tb_config VALUES ('1', '" + graphType + "', '" + (graphType == "build" ? "" : "summary")
           + "', NULL, 1, 0, '" + colours + "', '[0]', '[0]')");
    w.exec("BEGIN");
    fill(w);
    w.finish();
    w.exec("COMMIT");
    return path;
}

bool hasWarning(const GraphFile& f, std::string_view words)
{
    return std::any_of(f.warnings.begin(), f.warnings.end(),
                       [&](const std::string& w) { return w.find(words) != std::string::npos; });
}

} // namespace

TEST(GraphBounds, RowidsAtTheEndsOfTheRangeAreSplitByTheRowsPresent)
{
    // Three rows at rowid -2^63, 1 and 2^63 - 1: max - min overflows, and a split by rowid value would give ranges
    // of nothing. The scan is split by the rows themselves (asked for four connections), every node read once.
    probescope::testing::TempDir dir;
    const fs::path path = makeDb(dir.path() / "ends.vis.db", [](Writer& w) {
        w.node(std::numeric_limits<std::int64_t>::min(), 0, "A", "R", "");
        w.node(1, 1, "B", "R", "");
        w.node(std::numeric_limits<std::int64_t>::max(), 2, "R", "", "[\"A\", \"B\"]");
    });
    for (const unsigned connections : { 0u, 1u, 2u, 4u, 64u }) {
        ReadOptions options;
        options.scanConnections = connections;
        auto read = readVisDb(path, options);
        ASSERT_TRUE(read) << read.error().format();
        const Graph& g = (*read)->graphs.at(0);
        ASSERT_EQ(g.nodes.size(), 3u) << connections;
        EXPECT_EQ(g.nodes[2].name, "R");
        EXPECT_EQ(g.nodes[2].children.size(), 2u);
        EXPECT_TRUE((*read)->warnings.empty()) << (*read)->warnings.front();
    }
}

TEST(GraphBounds, MissingChildrenWarningsAreCappedAfterLinking)
{
    // One node listing 200,000 children that do not exist: linking warns for each; the file keeps
    // kMaxGraphWarnings of them and one line for the rest, whatever stage found them.
    probescope::testing::TempDir dir;
    const fs::path path = makeDb(dir.path() / "children.vis.db", [](Writer& w) {
        std::string subs = "[";
        for (int i = 0; i < 200000; ++i)
            subs += (i ? ", \"missing." : "\"missing.") + std::to_string(i) + "\"";
        subs += "]";
        // 300 nodes naming Root as parent that its sub_nodes leave out: unreachable, a warning each after linking.
        for (int i = 0; i < 300; ++i)
            w.node(0, i, "leaf." + std::to_string(i), "Root", "");
        w.node(0, 300, "Root", "", subs);
    });
    auto read = readVisDb(path);
    ASSERT_TRUE(read) << read.error().format();
    const GraphFile& f = **read;
    ASSERT_EQ(f.warnings.size(), kMaxGraphWarnings + 1);
    EXPECT_EQ(f.moreWarnings, 0u);
    EXPECT_EQ(f.warnings.back(), "... and 200100 more");
    EXPECT_TRUE(hasWarning(f, "lists a child missing.0 that is missing"));
    // Every node is still shown: the leaves as roots of their own.
    EXPECT_EQ(f.graphs.at(0).roots.size(), 301u);
}

TEST(GraphBounds, DistinctMicroStepsAreEachKeptOnce)
{
    // 100,000 nodes, each its own micro step, in descending order: the distinct values come out ascending, once each
    // (collected and sorted once; a sorted insert per value was quadratic: 58 s at a million).
    probescope::testing::TempDir dir;
    constexpr int kNodes = 100000;
    const fs::path path = makeDb(dir.path() / "micro.vis.db", [](Writer& w) {
        std::string subs = "[";
        for (int i = 0; i < kNodes - 1; ++i)
            subs += (i ? ", \"n" : "\"n") + std::to_string(i) + "\"";
        subs += "]";
        for (int i = 0; i < kNodes - 1; ++i)
            w.node(0, i, "n" + std::to_string(i), "Root", "", kNodes - i);
        w.node(0, kNodes - 1, "Root", "", subs, 5);
    });
    auto read = readVisDb(path);
    ASSERT_TRUE(read) << read.error().format();
    const Graph& g = (*read)->graphs.at(0);
    ASSERT_EQ(g.microSteps.size(), static_cast<std::size_t>(kNodes - 1)); // 5 appears twice
    EXPECT_TRUE(std::is_sorted(g.microSteps.begin(), g.microSteps.end()));
    EXPECT_EQ(g.microSteps.front(), 2);
    EXPECT_EQ(g.microSteps.back(), kNodes);
    EXPECT_EQ(g.nodes.back().children.size(), static_cast<std::size_t>(kNodes - 1));
    EXPECT_TRUE((*read)->warnings.empty());
}

TEST(GraphBounds, DeepDbChainIsLinkedWithoutRecursion)
{
    // A chain 100,000 deep: every node under the one before; linking and the reachability walk are iterative.
    probescope::testing::TempDir dir;
    constexpr int kDepth = 100000;
    const fs::path path = makeDb(dir.path() / "deep.vis.db", [](Writer& w) {
        // node_order is post-order: the deepest first.
        for (int d = kDepth - 1; d >= 0; --d)
            w.node(0, kDepth - 1 - d, "n" + std::to_string(d), d ? "n" + std::to_string(d - 1) : "",
                   d + 1 < kDepth ? "[\"n" + std::to_string(d + 1) + "\"]" : "");
    });
    auto read = readVisDb(path);
    ASSERT_TRUE(read) << read.error().format();
    const Graph& g = (*read)->graphs.at(0);
    ASSERT_EQ(g.roots.size(), 1u);
    std::size_t depth = 0;
    for (std::int64_t at = g.roots[0]; !g.nodes[static_cast<std::size_t>(at)].children.empty(); ++depth)
        at = g.nodes[static_cast<std::size_t>(at)].children.front();
    EXPECT_EQ(depth, static_cast<std::size_t>(kDepth - 1));
}

TEST(GraphBounds, CycleWithManyChildrenIsCutOnce)
{
    // P and Q name each other as parent (a cycle), and 50,000 children name P, before it in node_order: each child
    // is unreachable and cut to a root in one pass (an erase per child from P's list was quadratic).
    probescope::testing::TempDir dir;
    constexpr int kChildren = 50000;
    const fs::path path = makeDb(dir.path() / "cycle.vis.db", [](Writer& w) {
        std::string subs = "[";
        for (int i = 0; i < kChildren; ++i)
            subs += (i ? ", \"c" : "\"c") + std::to_string(i) + "\"";
        subs += ", \"Q\"]";
        for (int i = 0; i < kChildren; ++i)
            w.node(0, i, "c" + std::to_string(i), "P", "");
        w.node(0, kChildren, "P", "Q", subs);
        w.node(0, kChildren + 1, "Q", "P", "[\"P\"]");
    });
    auto read = readVisDb(path);
    ASSERT_TRUE(read) << read.error().format();
    const Graph& g = (*read)->graphs.at(0);
    // Every node shown exactly once from the roots.
    std::vector<std::uint8_t> seen(g.nodes.size(), 0);
    std::vector<std::uint32_t> stack(g.roots.begin(), g.roots.end());
    std::size_t shown = 0;
    while (!stack.empty()) {
        const std::uint32_t i = stack.back();
        stack.pop_back();
        ASSERT_FALSE(seen[i]) << "node shown twice: " << g.nodes[i].name;
        seen[i] = 1;
        ++shown;
        for (const std::uint32_t c : g.nodes[i].children)
            stack.push_back(c);
    }
    EXPECT_EQ(shown, g.nodes.size());
    EXPECT_EQ((*read)->warnings.back().rfind("... and ", 0), 0u);
}

TEST(GraphBounds, EmptyCompareDbIsNoGraphNamingTheFile)
{
    probescope::testing::TempDir dir;
    const fs::path path = makeDb(dir.path() / "empty.vis.db", [](Writer&) {}, "compare");
    auto read = readVisDb(path);
    ASSERT_FALSE(read);
    EXPECT_EQ(read.error().id, "graph.db");
    EXPECT_EQ(read.error().location.file, path.string());
    EXPECT_NE(read.error().message.find("no graph in " + path.string()), std::string::npos) << read.error().message;
    // A .vis with no node is the same.
    const fs::path vis = dir.write("compare_step0_rank0.vis", R"({"NPU": {"root": "x", "node": {}}, "Bench": {"root": "y", "node": {}}})");
    auto readVisFile = readVis(vis);
    ASSERT_FALSE(readVisFile);
    EXPECT_NE(readVisFile.error().message.find("no graph in"), std::string::npos);
}

TEST(GraphBounds, UnreadableColourBandsAreWarningsNamingTheFile)
{
    probescope::testing::TempDir dir;
    const auto fill = [](Writer& w) {
        w.node(0, 0, "a", "R", "", 0, "0.1", "[\"a\"]");
        w.node(0, 1, "b", "R", "", 0, "0.9", "[\"b\"]");
        w.node(0, 2, "R", "", "[\"a\", \"b\"]", 0, "0.5", "[\"R\"]");
    };
    // Bands whose values cannot be read: msprobe's defaults are used, and said.
    const fs::path bad = makeDb(dir.path() / "bands.vis.db", fill, "compare",
                                R"({"#FFFCF3": {"value": "low"}, "#FF704D": {"value": [0.5]}})");
    auto read = readVisDb(bad);
    ASSERT_TRUE(read) << read.error().format();
    const GraphFile& f = **read;
    EXPECT_TRUE(hasWarning(f, "node_colors of " + bad.string() + ": band #FFFCF3 has no readable value"));
    EXPECT_TRUE(hasWarning(f, "has no readable colour band; msprobe's default bands are used"));
    const GraphSummary s = summarize(f, f.graphs.at(0));
    EXPECT_EQ(s.noValue, 0u);
    ASSERT_TRUE(s.firstFailing);
    EXPECT_EQ(f.graphs[0].nodes[*s.firstFailing].name, "b");
    // Readable bands that leave values outside every band: one warning per graph naming the file and the first node.
    const fs::path narrow = makeDb(dir.path() / "narrow.vis.db", fill, "compare",
                                   R"({"#FFFCF3": {"value": [0, 0.2]}, "#FF704D": {"value": [0.8, 1]}})");
    auto read2 = readVisDb(narrow);
    ASSERT_TRUE(read2) << read2.error().format();
    EXPECT_TRUE(hasWarning(**read2, "NPU_0_0: 1 node(s) have a precision_index in no colour band of " + narrow.string()
                                       + " (first R, 0.5)"));
}

TEST(GraphBounds, CommittedChangesInTheWalAreAWarning)
{
    // msprobe's dbs are in WAL mode: a writer still open (TensorBoard's plugin) or killed leaves committed changes in
    // <db>-wal. The reader opens the main file alone (immutable: nothing is written beside an input) and says so.
    probescope::testing::TempDir dir;
    const fs::path path = makeDb(dir.path() / "wal.vis.db", [](Writer& w) { w.node(0, 0, "Root", "", ""); });
    {
        auto before = readVisDb(path);
        ASSERT_TRUE(before) << before.error().format();
        EXPECT_TRUE((*before)->warnings.empty());
    }
    Writer open(path);
    open.exec("PRAGMA journal_mode = WAL");
    open.exec("PRAGMA wal_autocheckpoint = 0");
    open.exec("UPDATE tb_nodes SET node_name = 'Changed' WHERE node_name = 'Root'");
    fs::path wal = path;
    wal += "-wal";
    ASSERT_TRUE(fs::exists(wal));
    ASSERT_GT(fs::file_size(wal), 32u);
    auto read = readVisDb(path);
    ASSERT_TRUE(read) << read.error().format();
    EXPECT_EQ((*read)->graphs.at(0).nodes.at(0).name, "Root"); // the main file's content
    EXPECT_TRUE(hasWarning(**read, wal.string() + " holds committed changes")) << ::testing::PrintToString((*read)->warnings);
    // An empty -wal (or one of an earlier generation) is no warning.
    const fs::path quiet = makeDb(dir.path() / "quiet.vis.db", [](Writer& w) { w.node(0, 0, "Root", "", ""); });
    fs::path quietWal = quiet;
    quietWal += "-wal";
    dir.write(quietWal.filename(), "");
    auto read2 = readVisDb(quiet);
    ASSERT_TRUE(read2);
    EXPECT_TRUE((*read2)->warnings.empty());
}

TEST(GraphBounds, DeepVisChainIsReadIteratively)
{
    // A .vis chain 40,000 deep (11.5 s before: every lookup a linear search of the node object).
    probescope::testing::TempDir dir;
    constexpr int kDepth = 40000;
    std::string text = R"({"root": "n0", "node": {)";
    for (int d = 0; d < kDepth; ++d) {
        text += (d ? ", \"n" : "\"n") + std::to_string(d) + "\": {\"node_type\": 0, \"upnode\": \""
            + (d ? "n" + std::to_string(d - 1) : std::string("None")) + "\", \"subnodes\": ["
            + (d + 1 < kDepth ? "\"n" + std::to_string(d + 1) + "\"" : std::string()) + "]}";
    }
    text += "}}";
    const fs::path path = dir.write("build_step0_rank0.vis", text);
    auto read = readVis(path);
    ASSERT_TRUE(read) << read.error().format();
    const Graph& g = (*read)->graphs.at(0);
    ASSERT_EQ(g.nodes.size(), static_cast<std::size_t>(kDepth));
    EXPECT_EQ(g.nodes.front().name, "n" + std::to_string(kDepth - 1)); // post-order: the deepest first
    EXPECT_EQ(g.nodes.back().name, "n0");
    EXPECT_TRUE((*read)->warnings.empty()) << (*read)->warnings.front();
}

TEST(GraphBounds, DeeplyNestedOrOverflowingJsonIsAnErrorNamingTheFile)
{
    probescope::testing::TempDir dir;
    // Nesting beyond kMaxGraphJsonDepth: refused before parsing, with the position.
    const fs::path deep = dir.write("build_step0_rank0.vis",
                                    R"({"root": "a", "node": {"a": {"input_data": )" + std::string(100000, '[')
                                        + std::string(100000, ']') + "}}}");
    auto r1 = readVis(deep);
    ASSERT_FALSE(r1);
    EXPECT_EQ(r1.error().location.file, deep.string());
    EXPECT_NE(r1.error().message.find("nested deeper"), std::string::npos);
    // A number beyond double's range: an error, not an uncaught exception.
    const fs::path huge = dir.write("build_step1_rank0.vis", R"({"root": "a", "node": {"a": {"node_type": 1e99999}}})");
    auto r2 = readVis(huge);
    ASSERT_FALSE(r2);
    EXPECT_EQ(r2.error().location.file, huge.string());
    // Deep text inside a db cell: parseParams gives nullopt (shown as text), never a recursion per level.
    EXPECT_FALSE(parseParams("{\"a\": " + std::string(100000, '[') + std::string(100000, ']') + "}").has_value());
    EXPECT_FALSE(jsonDepthWithin(std::string(300, '{'), kMaxGraphJsonDepth));
    EXPECT_TRUE(jsonDepthWithin("\"[[[[[[\" " + std::string(10, '['), kMaxGraphJsonDepth));
}

TEST(GraphBounds, TrendDbWalIsAWarning)
{
    probescope::testing::TempDir dir;
    const fs::path path = dir.path() / "x.trend.db";
    {
        Writer w(path);
        w.exec("CREATE TABLE monitoring_metrics (metric_id INTEGER PRIMARY KEY, metric_name TEXT);"
               "CREATE TABLE monitoring_targets (target_id INTEGER PRIMARY KEY, target_name TEXT, vpp_stage INTEGER, micro_step INTEGER);"
               "CREATE TABLE trend_data (rank INTEGER, step INTEGER, target_id INTEGER, metric_id INTEGER, norm REAL, max REAL, min REAL, mean REAL);"
               "INSERT INTO monitoring_metrics VALUES (1, 'forward');"
               "INSERT INTO monitoring_targets VALUES (1, 'Module.a.input.0', 0, 0);"
               "INSERT INTO trend_data VALUES (0, 0, 1, 1, 1, 2, 0, 1);");
    }
    Writer open(path);
    open.exec("PRAGMA journal_mode = WAL");
    open.exec("PRAGMA wal_autocheckpoint = 0");
    open.exec("INSERT INTO trend_data VALUES (0, 1, 1, 1, 1, 2, 0, 1)");
    auto read = readTrendDb(path);
    ASSERT_TRUE(read) << read.error().format();
    EXPECT_EQ((*read)->values.size(), 1u);
    ASSERT_EQ((*read)->warnings.size(), 1u);
    EXPECT_NE((*read)->warnings.front().find("holds committed changes"), std::string::npos);
}
