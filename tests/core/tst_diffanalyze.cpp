// SPDX-License-Identifier: Apache-2.0
// msprobe 26 `compare -da`: every golden of ../shared/fixtures/msprobe26_da reproduced (rank tables and
// diff_analyze as JSON objects, numbers within 1e-9), phase B alone on msprobe's own rank tables, and the
// rules around them (stale tables, file names, rank order, errors).
#include "core/compare/msprobe26/msprobe26.h"
#include "core/compare/msprobe26/diffanalyze.h"
#include "core/dump/jsondocument.h"
#include "tempdir.h"
#include "testconfig.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

using namespace probescope;
using namespace probescope::compare;
using namespace probescope::compare::msprobe26;
using probescope::testing::fixturesDir;
using probescope::testing::TempDir;
namespace fs = std::filesystem;

namespace {

std::string slurp(const fs::path& p)
{
    std::ifstream in(p, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

std::shared_ptr<const dump::JsonDocument> parseJson(const std::string& text, const std::string& name)
{
    auto parsed = dump::JsonDocument::parse(text, name);
    EXPECT_TRUE(parsed.document) << name << ": " << (parsed.diagnostics.empty() ? "" : parsed.diagnostics[0].format());
    return parsed.document;
}

/// JSON equality as Python objects compare (dict key order ignored, duplicates: last wins), with floats
/// within 1e-9 relative and NaN equal to NaN. int and float are kept apart (users see 4 vs 4.0).
bool jsonEqual(dump::JsonValue a, dump::JsonValue b, const std::string& path, std::string* why)
{
    auto fail = [&](const std::string& what) {
        if (why->empty())
            *why = path + ": " + what;
        return false;
    };
    if (a.type() != b.type())
        return fail("types differ");
    switch (a.type()) {
    case dump::JsonType::Null: return true;
    case dump::JsonType::Bool: return a.asBool() == b.asBool() || fail("bool differs");
    case dump::JsonType::Int: return a.asInt() == b.asInt() || fail(std::to_string(a.asInt()) + " vs " + std::to_string(b.asInt()));
    case dump::JsonType::Double: {
        const double x = a.asDouble();
        const double y = b.asDouble();
        if ((std::isnan(x) && std::isnan(y)) || x == y || std::fabs(x - y) <= 1e-9 * std::max(std::fabs(x), std::fabs(y)))
            return true;
        std::ostringstream s;
        s.precision(17);
        s << x << " vs " << y;
        return fail(s.str());
    }
    case dump::JsonType::String:
        return a.asString() == b.asString() || fail("\"" + std::string(a.asString()) + "\" vs \"" + std::string(b.asString()) + "\"");
    case dump::JsonType::Array:
        if (a.size() != b.size())
            return fail("lengths " + std::to_string(a.size()) + " vs " + std::to_string(b.size()));
        for (std::uint32_t i = 0; i < a.size(); ++i) {
            if (!jsonEqual(a.at(i), b.at(i), path + "[" + std::to_string(i) + "]", why))
                return false;
        }
        return true;
    case dump::JsonType::Object: {
        std::set<std::string> keysA;
        std::set<std::string> keysB;
        for (std::uint32_t i = 0; i < a.size(); ++i)
            keysA.emplace(a.keyAt(i));
        for (std::uint32_t i = 0; i < b.size(); ++i)
            keysB.emplace(b.keyAt(i));
        if (keysA != keysB)
            return fail("different keys");
        for (const auto& k : keysA) {
            if (!jsonEqual(*a.find(k), *b.find(k), path + "/" + k, why))
                return false;
        }
        return true;
    }
    }
    return false;
}

void expectJsonFilesEqual(const fs::path& actual, const fs::path& expected)
{
    auto a = parseJson(slurp(actual), actual.string());
    auto e = parseJson(slurp(expected), expected.string());
    ASSERT_TRUE(a && e);
    std::string why;
    EXPECT_TRUE(jsonEqual(a->root(), e->root(), expected.filename().string(), &why))
        << actual << " differs from " << expected << " at " << why;
}

struct GoldenRun
{
    fs::path npu;
    fs::path bench;
    int exitCode = 0;
};

/// The -da run a golden recorded (cmd.txt, exit_code.txt); nullopt for other commands, file mode, and
/// inputs that are not published (the cwd is a fixture pair, or the golden's own inputs/).
std::optional<GoldenRun> goldenRun(const fs::path& golden)
{
    const std::string cmd = slurp(golden / "cmd.txt");
    if (cmd.find(" compare ") == std::string::npos || cmd.find(" -da") == std::string::npos)
        return std::nullopt;
    std::smatch m;
    if (!std::regex_search(cmd, m, std::regex(R"(-tp (\S+) -gp (\S+))")))
        return std::nullopt;
    const std::string tp = m[1];
    const std::string gp = m[2];
    if (tp.ends_with(".json") || gp.ends_with(".json"))
        return std::nullopt; // file mode: -da has no effect (the CSV tests cover that run)
    fs::path cwd;
    if (fs::exists(golden / "inputs")) {
        cwd = golden / "inputs";
    } else {
        std::smatch c;
        if (!std::regex_search(cmd, c, std::regex(R"(# cwd: <fixture copy>/(\S+))")))
            return std::nullopt;
        cwd = fixturesDir() / std::string(c[1]);
    }
    if (!fs::exists(cwd / tp) || !fs::exists(cwd / gp))
        return std::nullopt;
    GoldenRun run { cwd / tp, cwd / gp, std::atoi(slurp(golden / "exit_code.txt").c_str()) };
    return run;
}

std::vector<fs::path> goldens()
{
    std::vector<fs::path> out;
    const fs::path root = fixturesDir() / "msprobe26_da";
    if (!fs::exists(root))
        return out;
    for (const auto& e : fs::directory_iterator(root)) {
        if (e.is_directory() && fs::exists(e.path() / "cmd.txt"))
            out.push_back(e.path());
    }
    std::sort(out.begin(), out.end());
    return out;
}

/// The rank tables of a folder keyed by rank, as phase B reads them.
std::map<int, RankTableFile> readTables(const fs::path& dir)
{
    std::map<int, RankTableFile> tables;
    for (const auto& e : fs::directory_iterator(dir)) {
        const auto rank = rankOfTableFileName(e.path().filename().string());
        if (!rank)
            continue;
        RankTableFile t;
        t.rank = *rank;
        t.path = e.path();
        t.document = parseJson(slurp(e.path()), e.path().string());
        tables[*rank] = t;
    }
    return tables;
}

} // namespace

TEST(DiffAnalyzeGolden, EveryPublishedGoldenIsReproduced)
{
    int checked = 0;
    for (const fs::path& golden : goldens()) {
        const auto run = goldenRun(golden);
        if (!run)
            continue;
        SCOPED_TRACE(golden.filename().string());
        TempDir tmp;
        const fs::path out = tmp.path() / "OUT";
        auto result = runDiffAnalyze(run->npu, run->bench, out);
        ++checked;
        if (run->exitCode != 0) {
            EXPECT_FALSE(result.ok()) << "msprobe 26 exits " << run->exitCode << " here";
            continue;
        }
        ASSERT_TRUE(result.ok()) << result.error().format();
        bool expectAnalyze = false;
        for (const auto& e : fs::directory_iterator(golden / "stripped")) {
            const std::string name = e.path().filename().string();
            if (name == "diff_analyze.json") {
                expectAnalyze = true;
                ASSERT_TRUE(result->analyzeFile) << "msprobe 26 names a diverging node";
                EXPECT_TRUE(std::regex_match(result->analyzeFile->filename().string(), std::regex(R"(diff_analyze_\d{19}\.json)")));
                expectJsonFilesEqual(*result->analyzeFile, e.path());
            } else if (name.starts_with("compare_result_rank")) {
                const std::string rank = name.substr(std::string("compare_result_").size(), name.size() - 20);
                fs::path mine;
                for (const auto& p : result->rankTables) {
                    if (std::regex_match(p.filename().string(), std::regex("compare_result_" + rank + R"(_\d{14}\.json)")))
                        mine = p;
                }
                ASSERT_FALSE(mine.empty()) << "no rank table for " << rank;
                expectJsonFilesEqual(mine, e.path());
            }
        }
        if (!expectAnalyze) {
            EXPECT_FALSE(result->analyzeFile) << "msprobe 26 writes no diff_analyze file when nothing diverges";
        }
    }
    EXPECT_GE(checked, 8) << "the published -da goldens were not found under " << fixturesDir();
}

// Phase B alone on the rank tables msprobe 26 itself wrote.
TEST(DiffAnalyzeGolden, PhaseBOnMsprobesOwnRankTables)
{
    int checked = 0;
    for (const fs::path& golden : goldens()) {
        if (!fs::exists(golden / "as_written"))
            continue;
        auto tables = readTables(golden / "as_written");
        if (tables.empty())
            continue;
        SCOPED_TRACE(golden.filename().string());
        ++checked;
        auto result = analyzeRankTables(tables);
        ASSERT_TRUE(result.ok()) << result.error().format();
        const fs::path expected = golden / "stripped" / "diff_analyze.json";
        if (!fs::exists(expected)) {
            EXPECT_FALSE(*result) << "nothing diverges here";
            continue;
        }
        ASSERT_TRUE(*result);
        auto mine = parseJson(**result, "analysis");
        auto theirs = parseJson(slurp(expected), expected.string());
        ASSERT_TRUE(mine && theirs);
        std::string why;
        EXPECT_TRUE(jsonEqual(mine->root(), theirs->root(), "diff_analyze", &why)) << why;
    }
    EXPECT_GE(checked, 7);
}

// Random rank tables that msprobe 26.0.0's own find_first code analysed (tests/data/msprobe26_da/README.md).
TEST(DiffAnalyzeGolden, PhaseBAgreesWithMsprobesFindFirstOnRandomTables)
{
    const fs::path root = probescope::testing::testDataDir() / "msprobe26_da/phaseb";
    int checked = 0;
    for (const auto& e : fs::directory_iterator(root)) {
        if (!e.is_directory())
            continue;
        SCOPED_TRACE(e.path().filename().string());
        ++checked;
        auto result = analyzeRankTables(readTables(e.path()));
        ASSERT_TRUE(result.ok()) << result.error().format();
        ASSERT_TRUE(*result);
        auto mine = parseJson(**result, "analysis");
        auto theirs = parseJson(slurp(e.path() / "expected_diff_analyze.json"), "expected");
        ASSERT_TRUE(mine && theirs);
        std::string why;
        EXPECT_TRUE(jsonEqual(mine->root(), theirs->root(), "diff_analyze", &why)) << why;
    }
    EXPECT_EQ(checked, 5);
}

TEST(DiffAnalyze, RanksComeInAscendingOrder)
{
    // msprobe's order of the rank_* keys depends on the hash seed in the communication pass.
    const fs::path golden = fixturesDir() / "msprobe26_da/SYNTH_p2p_group_2r/as_written";
    if (!fs::exists(golden))
        GTEST_SKIP() << "fixture missing";
    auto result = analyzeRankTables(readTables(golden));
    ASSERT_TRUE(result.ok() && *result);
    const std::string& text = **result;
    ASSERT_NE(text.find("\"rank_0\""), std::string::npos);
    EXPECT_LT(text.find("\"rank_0\""), text.find("\"rank_1\""));
    EXPECT_EQ(text.rfind("{\n  \"rank_0\": [\n    {\n      \"op_name\": \"Functional.linear.1.forward\"", 0), 0u)
        << "json.dump(indent=2) layout";
}

TEST(DiffAnalyze, TableFileNamesAsMsprobeReadsThem)
{
    EXPECT_EQ(rankOfTableFileName("compare_result_rank_20261125055713.json"), 0);
    EXPECT_EQ(rankOfTableFileName("compare_result_rank1_20261125055709.json"), 1);
    EXPECT_EQ(rankOfTableFileName("compare_result_rank7_19990101000000.json"), 7);
    EXPECT_EQ(rankOfTableFileName("compare_result_rank12_2026_1.json"), 12);
    EXPECT_EQ(rankOfTableFileName("compare_result_20261125060018.json"), std::nullopt); // not "rank…"
    EXPECT_EQ(rankOfTableFileName("compare_result_rank1.json"), std::nullopt);           // "1.json" is no int
    EXPECT_EQ(rankOfTableFileName("compare_result_rank1_2026.csv"), std::nullopt);
    EXPECT_EQ(rankOfTableFileName("diff_analyze_1795586233563731292.json"), std::nullopt);
}

TEST(DiffAnalyze, StaleRankTablesInOutAreAnalysedToo)
{
    const fs::path pair = fixturesDir() / "modelA_statistics_mix";
    const fs::path stale = fixturesDir() / "msprobe26_da/modelA_md5_mix/stripped/compare_result_rank.json";
    if (!fs::exists(pair) || !fs::exists(stale))
        GTEST_SKIP() << "fixtures missing";
    TempDir tmp;
    const fs::path out = tmp.path() / "OUT";
    fs::create_directories(out);
    fs::copy_file(stale, out / "compare_result_rank7_19990101000000.json");
    auto result = runDiffAnalyze(pair / "npu/step0", pair / "bench/step0", out);
    ASSERT_TRUE(result.ok()) << result.error().format();
    ASSERT_TRUE(result->analyzeFile);
    auto doc = parseJson(slurp(*result->analyzeFile), "diff_analyze");
    ASSERT_TRUE(doc);
    // Pass 1 reports each rank's first divergence: rank 0 of this run, rank 7 from the stale md5 table.
    ASSERT_TRUE(doc->root().find("rank_0") && doc->root().find("rank_7"));
    EXPECT_EQ(doc->root().find("rank_0")->at(0).find("op_name")->asString(), "Functional.linear.4.forward");
    EXPECT_EQ(doc->root().find("rank_7")->at(0).find("op_name")->asString(), "Functional.gelu.0.forward");
    EXPECT_TRUE(std::any_of(result->diagnostics.begin(), result->diagnostics.end(),
                            [](const Diagnostic& d) { return d.id == "compare.da-stale-table"; }));
    EXPECT_TRUE(fs::exists(out / "compare_result_rank7_19990101000000.json")) << "nothing the user had is removed";
}

TEST(DiffAnalyze, ErrorsWhereMsprobeCrashes)
{
    TempDir tmp;
    const fs::path data = probescope::testing::testDataDir() / "msprobe26_da";
    auto peer = runDiffAnalyze(data / "group_names_undumped_rank/npu/step0", data / "group_names_undumped_rank/bench/step0",
                               tmp.path() / "a");
    ASSERT_FALSE(peer.ok());
    EXPECT_EQ(peer.error().id, "compare.da-peer-rank");
    auto src = runDiffAnalyze(data / "src_none/npu/step0", data / "src_none/bench/step0", tmp.path() / "b");
    ASSERT_FALSE(src.ok());
    EXPECT_EQ(src.error().id, "compare.da-rank-value");
    EXPECT_NE(src.error().location.file.find("compare_result_rank1_"), std::string::npos);

    const fs::path pair = fixturesDir() / "modelA_statistics_mix";
    auto noRanks = runDiffAnalyze(pair / "npu", pair / "bench", tmp.path() / "c");
    ASSERT_FALSE(noRanks.ok());
    EXPECT_EQ(noRanks.error().id, "compare.da-no-ranks");
    EXPECT_FALSE(fs::exists(tmp.path() / "c")) << "msprobe 26 creates no output folder here";
    auto count = runDiffAnalyze(data / "src_none/npu/step0", pair / "bench/step0", tmp.path() / "d");
    ASSERT_FALSE(count.ok());
    EXPECT_EQ(count.error().id, "compare.da-rank-count");
}

TEST(DiffAnalyze, PandasFloatParserKeepsSeventeenDigits)
{
    // Leading zeros count: 0.003224366344511509 is read as 0.0032243663445115.
    EXPECT_EQ(msprobe26::pandasToFloat("0.003224366344511509"), std::strtod("0.0032243663445115", nullptr));
    EXPECT_NE(msprobe26::pandasToFloat("0.003224366344511509"), std::strtod("0.003224366344511509", nullptr));
    EXPECT_EQ(msprobe26::pandasToFloat("2.118187427520752"), 2.118187427520752);
    EXPECT_EQ(msprobe26::pandasToFloat("1e-05"), 1e-05);
    EXPECT_EQ(msprobe26::pandasToFloat("-4"), -4.0);
    EXPECT_TRUE(std::isnan(msprobe26::pandasToFloat("abc")));
}
