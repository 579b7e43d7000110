// SPDX-License-Identifier: Apache-2.0
// msprobe 26 `compare -da`: every golden of ../shared/fixtures/msprobe26_da reproduced (rank tables and
// diff_analyze as JSON objects, numbers within 1e-9), phase B alone on msprobe's own rank tables, and the
// rules around them (stale tables, file names, rank order, errors).
#include "core/compare/msprobe26/msprobe26.h"
#include "core/compare/msprobe26/diffanalyze.h"
#include "core/compare/msprobe26/pyjsonwriter.h"
#include "core/compare/pipeline/comparerun.h"
#include "core/dump/jsondocument.h"
#include "tempdir.h"
#include "fixtureguard.h"
#include "testconfig.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <functional>
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

using probescope::testing::readAll;

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
    auto a = parseJson(readAll(actual), actual.string());
    auto e = parseJson(readAll(expected), expected.string());
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
    const std::string cmd = readAll(golden / "cmd.txt");
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
    GoldenRun run { cwd / tp, cwd / gp, std::atoi(readAll(golden / "exit_code.txt").c_str()) };
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
        t.document = parseJson(readAll(e.path()), e.path().string());
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
        auto theirs = parseJson(readAll(expected), expected.string());
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
        auto theirs = parseJson(readAll(e.path() / "expected_diff_analyze.json"), "expected");
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
    PROBESCOPE_REQUIRE_FIXTURE(golden);
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
    PROBESCOPE_REQUIRE_FIXTURE(pair);
    PROBESCOPE_REQUIRE_FIXTURE(stale);
    TempDir tmp;
    const fs::path out = tmp.path() / "OUT";
    fs::create_directories(out);
    fs::copy_file(stale, out / "compare_result_rank7_19990101000000.json");
    auto result = runDiffAnalyze(pair / "npu/step0", pair / "bench/step0", out);
    ASSERT_TRUE(result.ok()) << result.error().format();
    ASSERT_TRUE(result->analyzeFile);
    auto doc = parseJson(readAll(*result->analyzeFile), "diff_analyze");
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
    // Phase B walks each table when it reads it and keeps only the communication nodes and diverging ops (issue 37);
    // an error met later still names the row by its byte offset in the file as written.
    ASSERT_TRUE(src.error().location.offset);
    const std::string written = readAll(src.error().location.file);
    ASSERT_LT(*src.error().location.offset, written.size());
    const std::string row = written.substr(*src.error().location.offset, 400);
    EXPECT_TRUE(row.starts_with("{")) << row;
    EXPECT_NE(row.find("Distributed.recv.0.forward.input.src"), std::string::npos) << row;

    const fs::path pair = fixturesDir() / "modelA_statistics_mix";
    auto noRanks = runDiffAnalyze(pair / "npu", pair / "bench", tmp.path() / "c");
    ASSERT_FALSE(noRanks.ok());
    EXPECT_EQ(noRanks.error().id, "compare.da-no-ranks");
    EXPECT_FALSE(fs::exists(tmp.path() / "c")) << "msprobe 26 creates no output folder here";
    auto count = runDiffAnalyze(data / "src_none/npu/step0", pair / "bench/step0", tmp.path() / "d");
    ASSERT_FALSE(count.ok());
    EXPECT_EQ(count.error().id, "compare.da-rank-count");
}

namespace {

/// A rank table of one compute op and one recv whose src is no integer (msprobe 26 stops with ValueError when it
/// pairs the recv).
std::string tableWithBadRecv(bool computeDiverges)
{
    const std::string computeSame = computeDiverges ? "false" : "true";
    return R"({"Functional.linear.0.forward": {"is_same": )" + computeSame + R"(, "op_items": [
        {"NPU Name": "Functional.linear.0.forward.output.0", "state": "output", "NPU max": 1.0,
         "NPU_Stack_Info": "N/A"}]},
      "Distributed.recv.0.forward": {"is_same": true, "op_items": [
        {"NPU Name": "Distributed.recv.0.forward.input.src", "state": "input", "NPU max": "abc",
         "NPU_Stack_Info": "N/A"}]}})";
}

} // namespace

// Each table is walked once when it is read (both searches share the walk, CommSearch::addRank); an error of the
// second pass is kept for the moment msprobe meets it: never when the first pass answers, and then in rank order.
TEST(DiffAnalyze, AnErrorOfTheCommunicationPassIsOnlyMetWhenThatPassRuns)
{
    const auto tablesOf = [](bool rank0Diverges) {
        std::map<int, RankTableFile> tables;
        for (int rank : { 0, 1 }) {
            const std::string name = "compare_result_rank" + std::to_string(rank) + "_20260101000000.json";
            tables[rank] = RankTableFile { rank, name, parseJson(tableWithBadRecv(rank == 0 && rank0Diverges), name) };
        }
        return tables;
    };
    std::vector<std::string> log;
    auto answered = analyzeRankTables(tablesOf(true), &log);
    ASSERT_TRUE(answered.ok()) << answered.error().message;
    ASSERT_TRUE(answered->has_value());
    EXPECT_NE((*answered)->find("\"rank_0\""), std::string::npos) << **answered;
    EXPECT_NE((*answered)->find("Functional.linear.0.forward"), std::string::npos) << **answered;
    EXPECT_EQ(std::count(log.begin(), log.end(), "Start searching diff node during communication."), 0);

    auto stopped = analyzeRankTables(tablesOf(false));
    ASSERT_FALSE(stopped.ok());
    EXPECT_EQ(stopped.error().id, "compare.da-rank-value");
    EXPECT_EQ(stopped.error().location.file, "compare_result_rank0_20260101000000.json") << "rank 0 searches first";
    EXPECT_NE(stopped.error().message.find("'abc'"), std::string::npos) << stopped.error().message;
}

// The search's groups are the nodes joined by pairs of nodes that pruning keeps (msprobe's delete() pops a pruned
// node from its neighbours): a pruned node between two kept ones does not join them. The graph keeps no edge lists
// but a union-find over those pairs (issue 37, docs/scale-out.md "fifth round"); this is what must not change.
TEST(DiffAnalyze, APrunedNodeDoesNotJoinTheGroupsAroundIt)
{
    // Each rank's communication op with the group it names (an input row "....group" holding the rank list).
    const auto op = [](const std::string& name, const std::string& group, bool same) {
        return "\"" + name + R"(": {"is_same": )" + (same ? "true" : "false") + R"(, "op_items": [{"NPU Name": ")" + name
            + R"(.input.group", "state": "input", "NPU max": ")" + group + R"(", "NPU_Stack_Info": "N/A"}]})";
    };
    const std::string text[3] = {
        // rank 0 pairs with rank 1 only; it diverges.
        "{" + op("Distributed.all_reduce.0.forward", "[0, 1]", false) + "}",
        // rank 1 pairs with both; it does not diverge and holds no compute op: pruned.
        "{" + op("Distributed.all_reduce.0.forward", "[0, 1, 2]", true) + "}",
        // rank 2: an all_gather of its own first (diverging, paired with nobody), then the all_reduce paired with
        // rank 1, which diverges too.
        "{" + op("Distributed.all_gather.0.forward", "[2]", false) + ","
            + op("Distributed.all_reduce.0.forward", "[1, 2]", false) + "}",
    };
    std::map<int, RankTableFile> tables;
    for (int rank = 0; rank < 3; ++rank) {
        const std::string name = "compare_result_rank" + std::to_string(rank) + "_20260101000000.json";
        tables[rank] = RankTableFile { rank, name, parseJson(text[rank], name) };
        ASSERT_TRUE(tables[rank].document) << text[rank];
    }
    auto result = analyzeRankTables(tables);
    ASSERT_TRUE(result.ok()) << result.error().format();
    ASSERT_TRUE(*result);
    auto doc = parseJson(**result, "diff_analyze");
    ASSERT_TRUE(doc);
    // The first round: rank 0's all_reduce alone (rank 1's is pruned) and rank 2's all_gather. Rank 2's all_reduce,
    // on the same layer, would be reported too if rank 1 joined it to rank 0's group.
    ASSERT_TRUE(doc->root().find("rank_0") && doc->root().find("rank_2")) << **result;
    EXPECT_FALSE(doc->root().find("rank_1")) << **result;
    ASSERT_EQ(doc->root().find("rank_0")->size(), 1u) << **result;
    EXPECT_EQ(doc->root().find("rank_0")->at(0).find("op_name")->asString(), "Distributed.all_reduce.0.forward");
    ASSERT_EQ(doc->root().find("rank_2")->size(), 1u) << **result;
    EXPECT_EQ(doc->root().find("rank_2")->at(0).find("op_name")->asString(), "Distributed.all_gather.0.forward");
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

// ---------------------------------------------------------------------------------------------------
// Issue 25: -da goes through the load step, writes through the one output writer, reads rank tables strictly.

namespace {

/// A copy of modelA_statistics_mix's step0 pair (one rank folder "rank" per side) to damage.
struct DaPair
{
    TempDir tmp;
    fs::path npu = tmp.path() / "npu/step0";
    fs::path bench = tmp.path() / "bench/step0";
    fs::path out = tmp.path() / "OUT";

    bool make()
    {
        const fs::path pair = fixturesDir() / "modelA_statistics_mix";
        if (!fs::exists(pair))
            return false;
        fs::create_directories(npu.parent_path());
        fs::create_directories(bench.parent_path());
        fs::copy(pair / "npu/step0", npu, fs::copy_options::recursive);
        fs::copy(pair / "bench/step0", bench, fs::copy_options::recursive);
        return true;
    }
    fs::path benchDump() const { return bench / "rank/dump.json"; }
    /// Both sides' one rank as rank0, and a copy of it as rank1.
    void twoRanks() const
    {
        for (const fs::path* side : { &npu, &bench }) {
            fs::rename(*side / "rank", *side / "rank0");
            fs::copy(*side / "rank0", *side / "rank1", fs::copy_options::recursive);
        }
    }
};

void put(const fs::path& p, const std::string& text)
{
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary | std::ios::trunc) << text;
}

std::string replaceFirst(std::string text, const std::string& from, const std::string& to)
{
    const auto at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    if (at != std::string::npos)
        text.replace(at, from.size(), to);
    return text;
}

bool hasError(const Diagnostics& list, const std::string& id, const fs::path& file)
{
    return std::any_of(list.begin(), list.end(), [&](const Diagnostic& d) {
        return d.severity == Severity::Error && d.id == id && d.location.file.find(file.string()) != std::string::npos;
    });
}

std::string formatAll(const Diagnostics& list)
{
    std::string s;
    for (const auto& d : list)
        s += d.format() + "\n";
    return s;
}

std::size_t filesIn(const fs::path& dir)
{
    std::error_code ec;
    if (!fs::exists(dir, ec))
        return 0;
    return static_cast<std::size_t>(std::distance(fs::directory_iterator(dir), fs::directory_iterator()));
}

} // namespace

// Each damage of one rank's dump.json exited 0 before and named a wrong (or no) rank in diff_analyze.
TEST(DiffAnalyzeLoadStep, DamagedRankDumpIsRefusedAndNothingIsWritten)
{
    struct Case
    {
        const char* name;
        std::function<std::string(const std::string&)> damage;
        const char* id;
    };
    const std::vector<Case> cases = {
        { "cut in half", [](const std::string& t) { return t.substr(0, t.size() / 2); }, "dump.truncated" },
        { "Max is text", [](const std::string& t) { return replaceFirst(t, "\"Max\": 3.029174327850342", "\"Max\": \"abc\""); },
          "dump.leaf-type" },
        { "entry is a string",
          [](const std::string& t) { return replaceFirst(t, "\"data\": {", "\"data\": {\n  \"Functional.relu.9.forward\": \"x\","); },
          "dump.entry-type" },
        { "invalid UTF-8", [](const std::string& t) { return replaceFirst(t, "\"dtype\": \"torch.float32\"", "\"dtype\": \"torch.\xff\xfe\""); },
          "json.utf8" },
        { "no entries", [](const std::string&) { return std::string(R"({"task": "statistics", "level": "mix", "data": {}})"); },
          "compare.empty-dump" },
        { "syntax", [](const std::string& t) { return replaceFirst(t, "\"level\": \"mix\",", "\"level\" \"mix\","); },
          "json.syntax" },
        { "empty file", [](const std::string&) { return std::string(); }, "" },
    };
    for (const Case& c : cases) {
        SCOPED_TRACE(c.name);
        DaPair pair;
        if (!pair.make())
            PROBESCOPE_FIXTURE_MISSING("the -da pair of modelA_statistics_mix");
        put(pair.benchDump(), c.damage(readAll(pair.benchDump())));
        auto result = runDiffAnalyze(pair.npu, pair.bench, pair.out);
        ASSERT_TRUE(result.ok()) << result.error().format();
        EXPECT_TRUE(result->refused);
        EXPECT_TRUE(hasErrors(result->inputDiagnostics));
        if (*c.id)
            EXPECT_TRUE(hasError(result->inputDiagnostics, c.id, pair.benchDump())) << formatAll(result->inputDiagnostics);
        else
            EXPECT_TRUE(std::any_of(result->inputDiagnostics.begin(), result->inputDiagnostics.end(), [&](const Diagnostic& d) {
                return d.location.file.find(pair.benchDump().string()) != std::string::npos;
            })) << formatAll(result->inputDiagnostics);
        EXPECT_TRUE(result->rankTables.empty());
        EXPECT_FALSE(result->analyzeFile);
        EXPECT_EQ(filesIn(pair.out), 0u) << "a refused -da writes nothing";
    }
}

// Issue 37: a clean rank's table waits in a staging folder inside OUT (not in memory) until every rank has loaded.
// When another rank refuses the run, OUT ends as it was: absent when it was, else holding only what it held.
TEST(DiffAnalyzeLoadStep, ARefusedRunLeavesNoStagedTableBehind)
{
    for (const bool outExisted : { false, true }) {
        SCOPED_TRACE(outExisted ? "OUT existed" : "OUT is new");
        DaPair pair;
        if (!pair.make())
            PROBESCOPE_FIXTURE_MISSING("the -da pair of modelA_statistics_mix");
        pair.twoRanks();
        const fs::path damaged = pair.bench / "rank1/dump.json";
        put(damaged, readAll(damaged).substr(0, 100));
        if (outExisted)
            put(pair.out / "notes.txt", "mine");
        auto result = runDiffAnalyze(pair.npu, pair.bench, pair.out);
        ASSERT_TRUE(result.ok()) << result.error().format();
        EXPECT_TRUE(result->refused);
        EXPECT_TRUE(hasError(result->inputDiagnostics, "dump.truncated", damaged)) << formatAll(result->inputDiagnostics);
        EXPECT_TRUE(result->rankTables.empty());
        EXPECT_EQ(fs::exists(pair.out), outExisted);
        EXPECT_EQ(filesIn(pair.out), outExisted ? 1u : 0u) << "only what OUT held before";

        // The same two ranks whole: both tables are claimed from the staging folder, which goes.
        fs::copy(pair.bench / "rank0/dump.json", damaged, fs::copy_options::overwrite_existing);
        auto whole = runDiffAnalyze(pair.npu, pair.bench, pair.out);
        ASSERT_TRUE(whole.ok()) << whole.error().format();
        EXPECT_FALSE(whole->refused) << formatAll(whole->inputDiagnostics);
        ASSERT_EQ(whole->rankTables.size(), 2u);
        for (const fs::path table : whole->rankTables)
            EXPECT_EQ(table.parent_path(), pair.out);
        EXPECT_EQ(filesIn(pair.out), (outExisted ? 1u : 0u) + 2u + (whole->analyzeFile ? 1u : 0u));
    }
}

TEST(DiffAnalyzeLoadStep, SalvageAnalysesWhatCanBeReadAndSaysWhatWasLost)
{
    DaPair pair;
    if (!pair.make())
        PROBESCOPE_FIXTURE_MISSING("the -da pair of modelA_statistics_mix");
    const std::string text = readAll(pair.benchDump());
    put(pair.benchDump(), text.substr(0, text.size() * 3 / 4));
    DiffAnalyzeOptions options;
    options.salvage = true;
    auto result = runDiffAnalyze(pair.npu, pair.bench, pair.out, options);
    ASSERT_TRUE(result.ok()) << result.error().format();
    EXPECT_FALSE(result->refused);
    EXPECT_TRUE(hasError(result->inputDiagnostics, "dump.truncated", pair.benchDump())) << "the exit status stays 1";
    ASSERT_FALSE(result->salvaged.empty());
    EXPECT_NE(result->salvaged.front().find(pair.benchDump().string()), std::string::npos) << result->salvaged.front();
    EXPECT_NE(result->salvaged.front().find("cut after"), std::string::npos) << result->salvaged.front();
    EXPECT_EQ(result->rankTables.size(), 1u);
}

// Empty rank folders by the thousand: a clear error in seconds, a few named, the rest counted. (2,000 per side here:
// removing 20,000 folders takes the loaded test machine's disk a minute; cli.da.empty_ranks runs 10,000 per side.)
TEST(DiffAnalyzeLoadStep, ThousandsOfEmptyRankFoldersEndInSecondsWithAClearError)
{
    TempDir tmp;
    for (const char* side : { "npu", "bench" }) {
        fs::create_directories(tmp.path() / side / "step0");
        for (int r = 0; r < 2000; ++r)
            fs::create_directory(tmp.path() / side / "step0" / ("rank" + std::to_string(r)));
    }
    const auto start = std::chrono::steady_clock::now();
    auto result = runDiffAnalyze(tmp.path() / "npu/step0", tmp.path() / "bench/step0", tmp.path() / "OUT");
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    ASSERT_TRUE(result.ok()) << result.error().format();
    EXPECT_LT(seconds, 20.0);
    EXPECT_TRUE(result->refused);
    EXPECT_TRUE(hasError(result->inputDiagnostics, "compare.da-no-dump", tmp.path() / "npu/step0/rank0"));
    EXPECT_LE(result->inputDiagnostics.size(), 30u) << "a readable report, not 20,000 lines";
    EXPECT_NE(formatAll(result->inputDiagnostics).find("4000 in all"), std::string::npos) << formatAll(result->inputDiagnostics);
    EXPECT_FALSE(fs::exists(tmp.path() / "OUT"));
}

// A rank folder without dump.json on each side at different places: pairing by the folders found would pair
// npu rank1 with bench rank2. The folders are named instead; with --salvage only the complete pair is compared.
TEST(DiffAnalyzeLoadStep, ARankFolderWithoutDumpIsNamedNotSkipped)
{
    DaPair pair;
    if (!pair.make())
        PROBESCOPE_FIXTURE_MISSING("the -da pair of modelA_statistics_mix");
    pair.twoRanks();
    for (const fs::path* side : { &pair.npu, &pair.bench })
        fs::create_directories(*side / "rank2");
    fs::remove(pair.npu / "rank1/dump.json");
    fs::copy(pair.npu / "rank0", pair.npu / "rank2", fs::copy_options::recursive | fs::copy_options::overwrite_existing);
    fs::remove(pair.bench / "rank2/dump.json");
    auto result = runDiffAnalyze(pair.npu, pair.bench, pair.out);
    ASSERT_TRUE(result.ok()) << result.error().format();
    EXPECT_TRUE(result->refused);
    EXPECT_TRUE(hasError(result->inputDiagnostics, "compare.da-no-dump", pair.npu / "rank1"));
    EXPECT_TRUE(hasError(result->inputDiagnostics, "compare.da-no-dump", pair.bench / "rank2"));
    EXPECT_EQ(filesIn(pair.out), 0u);

    DiffAnalyzeOptions options;
    options.salvage = true;
    options.timestamp = "20260101000000";
    auto salvaged = runDiffAnalyze(pair.npu, pair.bench, pair.out, options);
    ASSERT_TRUE(salvaged.ok()) << salvaged.error().format();
    ASSERT_EQ(salvaged->rankTables.size(), 1u) << "only rank0 has both dumps";
    EXPECT_EQ(salvaged->rankTables[0].filename(), "compare_result_rank0_20260101000000.json");
}

// A compare_result_rank*.json in OUT that is not a rank table is an error naming the file and position; nothing of
// this run is written then.
TEST(DiffAnalyzeLoadStep, DamagedRankTableInOutIsAnErrorNamingFileAndPosition)
{
    const fs::path stale = fixturesDir() / "msprobe26_da/modelA_md5_mix/stripped/compare_result_rank.json";
    const std::string table = readAll(stale);
    if (table.empty())
        PROBESCOPE_FIXTURE_MISSING(stale);
    struct Case
    {
        const char* name;
        std::string text;
        const char* id;
    };
    const std::vector<Case> cases = {
        { "cut", table.substr(0, table.size() / 2), "json.truncated" },
        { "no is_same", replaceFirst(table, "\"is_same\": true", "\"is_sane\": true"), "compare.da-table" },
        { "row is text", replaceFirst(table, "\"op_items\": [", "\"op_items\": [\"x\","), "compare.da-table" },
        { "a list", "[1, 2]", "compare.da-table" },
        { "invalid UTF-8", replaceFirst(table, "\"NPU Name\": \"", "\"NPU Name\": \"\xc3\x28"), "json.utf8" },
    };
    for (const Case& c : cases) {
        SCOPED_TRACE(c.name);
        DaPair pair;
        if (!pair.make())
            PROBESCOPE_FIXTURE_MISSING("the -da pair of modelA_statistics_mix");
        const fs::path bad = pair.out / "compare_result_rank7_19990101000000.json";
        put(bad, c.text);
        auto result = runDiffAnalyze(pair.npu, pair.bench, pair.out);
        ASSERT_FALSE(result.ok());
        EXPECT_EQ(result.error().id, c.id) << result.error().format();
        EXPECT_EQ(result.error().location.file, bad.string());
        EXPECT_GT(result.error().location.line, 0u) << result.error().format();
        EXPECT_EQ(filesIn(pair.out), 1u) << "no rank table of this run was written";
    }
}

// The rank table's name is claimed, never followed: a (dangling) symlink there is left alone and its target is
// not created; the table gets the next free name.
TEST(DiffAnalyzeOutputs, ATakenNameIsNeverFollowedOrReplaced)
{
    DaPair pair;
    if (!pair.make())
        PROBESCOPE_FIXTURE_MISSING("the -da pair of modelA_statistics_mix");
    fs::create_directories(pair.out);
    const fs::path target = pair.tmp.path() / "outside.json";
    fs::create_symlink(target, pair.out / "compare_result_rank_20260101000000.json");
    DiffAnalyzeOptions options;
    options.timestamp = "20260101000000";
    auto result = runDiffAnalyze(pair.npu, pair.bench, pair.out, options);
    ASSERT_TRUE(result.ok()) << result.error().format();
    ASSERT_EQ(result->rankTables.size(), 1u);
    EXPECT_EQ(result->rankTables[0].filename(), "compare_result_rank_20260101000000_1.json");
    EXPECT_FALSE(fs::exists(target)) << "the symlink was followed";
    EXPECT_TRUE(fs::is_symlink(pair.out / "compare_result_rank_20260101000000.json"));
    ASSERT_TRUE(result->analyzeFile);
    for (const auto& e : fs::directory_iterator(pair.out))
        EXPECT_EQ(e.path().filename().string().find(".tmp"), std::string::npos) << "a temporary file was left: " << e.path();
}

// The rank tables' and analyses' strings are json.dump's (ensure_ascii): DEL is escaped as Python escapes it.
TEST(DiffAnalyzeOutputs, StringsAreWrittenAsJsonDumpWritesThem)
{
    PyJsonWriter w(2);
    w.string(std::string("a\x7f\"b\\\xe6\xa8\xa1\t", 9));
    EXPECT_EQ(w.text(), "\"a\\u007f\\\"b\\\\\\u6a21\\t\"");
}

// Issue 37: the rank pairs are loaded, compared and staged on several threads, a batch at a time; what a run writes
// and says is taken in rank order. 70 ranks cross the batches of 1, 2, 3 and 5 threads; 24 damaged bench dumps (more
// than the 20 a run lists) and one without entries make the lists, the limits and the salvage order depend on the
// order in which the ranks are taken. Every thread count must give the same files and the same text.
TEST(DiffAnalyzeThreads, EveryThreadCountWritesAndSaysTheSame)
{
    DaPair pair;
    if (!pair.make())
        PROBESCOPE_FIXTURE_MISSING("the -da pair of modelA_statistics_mix");
    pair.twoRanks();
    constexpr int kRanks = 70;
    for (const fs::path* side : { &pair.npu, &pair.bench }) {
        for (int r = 2; r < kRanks; ++r)
            fs::copy(*side / "rank0", *side / ("rank" + std::to_string(r)), fs::copy_options::recursive);
    }
    const std::string benchText = readAll(pair.benchDump().parent_path().parent_path() / "rank0/dump.json");
    int damaged = 0;
    for (int r = 1; r < kRanks; r += 3, ++damaged)
        put(pair.bench / ("rank" + std::to_string(r)) / "dump.json", benchText.substr(0, benchText.size() * 2 / 3));
    put(pair.bench / "rank9/dump.json", R"({"task": "statistics", "level": "mix", "data": {}})");
    ASSERT_GT(damaged, 20);

    struct Said
    {
        std::string input, diagnostics, salvaged, log, tables, analysis;
        bool refused = false;
    };
    const auto run = [&](unsigned threads, bool salvage) {
        const fs::path out = pair.tmp.path() / ("OUT-" + std::to_string(threads) + (salvage ? "s" : ""));
        DiffAnalyzeOptions options;
        options.timestamp = "20260101000000";
        options.salvage = salvage;
        options.threads = threads;
        auto result = runDiffAnalyze(pair.npu, pair.bench, out, options);
        Said said;
        if (!result.ok()) {
            ADD_FAILURE() << result.error().format();
            return said;
        }
        // The folder and the analysis file's nanoseconds are the run's own.
        const auto outless = [&](std::string text) {
            for (std::size_t at; (at = text.find(out.string())) != std::string::npos;)
                text.replace(at, out.string().size(), "OUT");
            return std::regex_replace(text, std::regex("diff_analyze_[0-9]+"), "diff_analyze_NS");
        };
        said.refused = result->refused;
        said.input = formatAll(result->inputDiagnostics);
        said.diagnostics = formatAll(result->diagnostics);
        for (const auto& line : result->salvaged)
            said.salvaged += line + "\n";
        for (const auto& line : result->log)
            said.log += outless(line) + "\n";
        for (const fs::path table : result->rankTables)
            said.tables += table.filename().string() + "\n" + readAll(table) + "\n";
        if (result->analyzeFile)
            said.analysis = readAll(*result->analyzeFile);
        return said;
    };
    for (const bool salvage : { true, false }) {
        SCOPED_TRACE(salvage ? "salvaged" : "refused");
        const Said one = run(1, salvage);
        EXPECT_EQ(one.refused, !salvage);
        EXPECT_NE(one.input.find("damaged rank dumps (" + std::to_string(damaged) + " in all)"), std::string::npos)
            << one.input;
        if (salvage) {
            EXPECT_NE(one.tables.find("compare_result_rank69_20260101000000.json"), std::string::npos);
            EXPECT_NE(one.tables.find("compare_result_rank1_20260101000000.json"), std::string::npos)
                << "a salvaged rank is compared on what was read";
            EXPECT_EQ(one.tables.find("compare_result_rank9_20260101000000.json"), std::string::npos)
                << "a dump without entries has no table";
            EXPECT_FALSE(one.analysis.empty());
        } else {
            EXPECT_TRUE(one.tables.empty());
        }
        for (const unsigned threads : { 2u, 3u, 5u }) {
            SCOPED_TRACE(std::to_string(threads) + " threads");
            const Said many = run(threads, salvage);
            EXPECT_EQ(many.refused, one.refused);
            EXPECT_EQ(many.input, one.input);
            EXPECT_EQ(many.diagnostics, one.diagnostics);
            EXPECT_EQ(many.salvaged, one.salvaged);
            EXPECT_EQ(many.log, one.log);
            EXPECT_EQ(many.tables, one.tables);
            EXPECT_EQ(many.analysis, one.analysis);
        }
    }
}

// ---------------------------------------------------------------------------------------------------
// Bare NaN / Infinity / -Infinity tokens are the statistics "nan" / "inf" / "-inf" (issue 25).

namespace {

/// The dump with some statistics made non-finite, written as json.dump's tokens or as text.
std::string nonFiniteDump(const std::string& text, bool tokens, int shift)
{
    static const std::regex stat(R"re("(Max|Min|Mean|Norm)": (-?[0-9][0-9.eE+-]*))re");
    std::string out;
    std::size_t last = 0;
    int k = 0;
    for (auto it = std::sregex_iterator(text.begin(), text.end(), stat); it != std::sregex_iterator(); ++it, ++k) {
        const auto& m = *it;
        const char* value = nullptr;
        if ((k + shift) % 7 == 0)
            value = tokens ? "NaN" : "\"nan\"";
        else if ((k + shift) % 11 == 3)
            value = tokens ? "-Infinity" : "\"-inf\"";
        else if ((k + 2 * shift) % 13 == 5)
            value = tokens ? "Infinity" : "\"inf\"";
        if (!value)
            continue;
        out.append(text, last, static_cast<std::size_t>(m.position(2)) - last);
        out += value;
        last = static_cast<std::size_t>(m.position(2) + m.length(2));
    }
    out.append(text, last);
    return out;
}

} // namespace

TEST(NonFiniteStatistics, TokensAndTextGiveIdenticalComparesAndDiffAnalyze)
{
    const fs::path pair = fixturesDir() / "modelA_statistics_mix";
    PROBESCOPE_REQUIRE_FIXTURE(pair);
    TempDir tmp;
    const std::string npu = readAll(pair / "npu/step0/rank/dump.json");
    const std::string bench = readAll(pair / "bench/step0/rank/dump.json");
    for (const bool tokens : { true, false }) {
        const fs::path side = tmp.path() / (tokens ? "tokens" : "text");
        put(side / "npu/step0/rank/dump.json", nonFiniteDump(npu, tokens, 0));
        put(side / "bench/step0/rank/dump.json", nonFiniteDump(bench, tokens, 3));
        fs::copy_file(pair / "npu/step0/rank/stack.json", side / "npu/step0/rank/stack.json");
    }
    ASSERT_NE(readAll(tmp.path() / "tokens/npu/step0/rank/dump.json").find("-Infinity"), std::string::npos);
    ASSERT_NE(readAll(tmp.path() / "text/bench/step0/rank/dump.json").find("\"nan\""), std::string::npos);

    for (const Profile profile : { Profile::Msprobe12, Profile::Msprobe26 }) {
        SCOPED_TRACE(profile == Profile::Msprobe12 ? "msprobe-1.2" : "msprobe-26");
        std::string csv[2];
        for (int t = 0; t < 2; ++t) {
            const fs::path side = tmp.path() / (t == 0 ? "tokens" : "text");
            JobOptions options;
            options.profile = profile;
            options.advisor = false;
            options.timestamp = "20260101000000";
            auto results = runCompareJob({ side / "npu/step0/rank/dump.json", side / "bench/step0/rank/dump.json", {} },
                                         side / ("out" + std::to_string(static_cast<int>(profile))), options);
            ASSERT_TRUE(results.ok()) << results.error().format();
            ASSERT_EQ(results->size(), 1u);
            ASSERT_FALSE((*results)[0].refused) << formatAll((*results)[0].inputDiagnostics);
            csv[t] = readAll((*results)[0].csvFile);
        }
        EXPECT_FALSE(csv[0].empty());
        EXPECT_NE(csv[0].find("inf"), std::string::npos) << "the non-finite statistics reach the table";
        EXPECT_EQ(csv[0], csv[1]) << "a statistic written as NaN/Infinity is judged like \"nan\"/\"inf\"";
    }

    std::string tables[2];
    std::string analyses[2];
    for (int t = 0; t < 2; ++t) {
        const fs::path side = tmp.path() / (t == 0 ? "tokens" : "text");
        DiffAnalyzeOptions options;
        options.timestamp = "20260101000000";
        auto result = runDiffAnalyze(side / "npu/step0", side / "bench/step0", side / "da", options);
        ASSERT_TRUE(result.ok()) << result.error().format();
        ASSERT_FALSE(result->refused) << formatAll(result->inputDiagnostics);
        ASSERT_EQ(result->rankTables.size(), 1u);
        tables[t] = readAll(result->rankTables[0]);
        ASSERT_TRUE(result->analyzeFile);
        analyses[t] = readAll(*result->analyzeFile);
    }
    EXPECT_NE(tables[0].find("Infinity"), std::string::npos);
    EXPECT_EQ(tables[0], tables[1]);
    EXPECT_EQ(analyses[0], analyses[1]);
}

TEST(NonFiniteStatistics, TheDocumentReadsTextStatisticsAsTheFloat)
{
    auto parsed = dump::JsonDocument::parse(
        R"({"Max": "nan", "Min": "-inf", "Mean": "Infinity", "Norm": "1.5", "value": "nan", "x": ["inf"], "Max2": "inf"})", "t");
    ASSERT_TRUE(parsed.document);
    const auto root = parsed.document->root();
    EXPECT_TRUE(std::isnan(root.find("Max")->asDouble()));
    EXPECT_EQ(root.find("Min")->asDouble(), -HUGE_VAL);
    EXPECT_EQ(root.find("Mean")->asDouble(), HUGE_VAL);
    EXPECT_TRUE(root.find("Norm")->isString()) << "only the non-finite spellings: \"1.5\" stays as msprobe wrote it";
    EXPECT_TRUE(root.find("value")->isString()) << "a str argument \"nan\" is text";
    EXPECT_TRUE(root.find("x")->at(0).isString());
    EXPECT_TRUE(root.find("Max2")->isString());
}
