// SPDX-License-Identifier: Apache-2.0
// msprobe 26.0.0 profile: the real 26.0.0 CSV golden, the compare-spec §13.1 worked example, and the
// checker (§8.1) and statistics rule matrix (§6.1) tables.
#include "core/compare/output/csvwriter.h"
#include "core/compare/msprobe26/msprobe26.h"
#include "core/compare/table/pytext.h"
#include "core/dump/jsondocument.h"
#include "core/dump/rankdump.h"
#include "fixtureguard.h"
#include "testconfig.h"
#include "tempdir.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

using namespace probescope;
using namespace probescope::compare;
using probescope::testing::fixturesDir;

namespace {

using probescope::testing::readAll;

bool parseDouble(const std::string& s, double* out)
{
    if (s.empty())
        return false;
    char* end = nullptr;
    *out = std::strtod(s.c_str(), &end);
    return end == s.c_str() + s.size();
}

bool sameCell(const std::string& a, const std::string& b)
{
    if (a == b)
        return true;
    double x = 0;
    double y = 0;
    if (!parseDouble(a, &x) || !parseDouble(b, &y))
        return false;
    // Whole numbers must keep their text form (1 vs 1.0 is what users see).
    if ((a.find_first_of(".eE") == std::string::npos) != (b.find_first_of(".eE") == std::string::npos))
        return false;
    return std::fabs(x - y) <= 1e-9 * std::max(std::fabs(x), std::fabs(y));
}

std::shared_ptr<const CompareTable> runOnText(const std::string& npuJson, const std::string& benchJson)
{
    auto npu = dump::parseDumpJson(npuJson, "/nonexistent/npu/dump.json");
    auto bench = dump::parseDumpJson(benchJson, "/nonexistent/bench/dump.json");
    EXPECT_TRUE(npu.ok());
    EXPECT_TRUE(bench.ok());
    auto table = msprobe26::compareDumps(**npu, **bench, CompareOptions {});
    EXPECT_TRUE(table.ok()) << (table.ok() ? "" : table.error().format());
    return table.ok() ? *table : nullptr;
}

} // namespace

TEST(Msprobe26Golden, TensorMixMatchesCellForCell)
{
    const auto base = fixturesDir() / "modelA_tensor_mix";
    const auto npuPath = base / "npu/step0/rank/dump.json";
    auto npu = dump::readDumpJson(npuPath);
    auto bench = dump::readDumpJson(base / "bench/step0/rank/dump.json");
    ASSERT_TRUE(npu.ok());
    ASSERT_TRUE(bench.ok());
    auto stack = dump::readStackJson(npuPath.parent_path() / "stack.json"); // auto stack mode, as msprobe 26
    ASSERT_TRUE(stack.ok());
    CompareOptions options;
    options.stackMode = true;
    options.stack = &*stack;
    auto table = msprobe26::compareDumps(**npu, **bench, options);
    ASSERT_TRUE(table.ok()) << table.error().format();

    const auto expected = parseCsv(readAll(base / "expected/msprobe-26.0.0/step0/compare_result.csv"));
    const auto actual = parseCsv(msprobe26::tableCsv(**table));
    ASSERT_EQ(actual.size(), expected.size());
    ASSERT_EQ(actual[0], expected[0]);
    int mismatches = 0;
    for (std::size_t r = 1; r < expected.size(); ++r) {
        ASSERT_EQ(actual[r].size(), expected[r].size()) << "row " << r;
        for (std::size_t c = 0; c < expected[r].size(); ++c) {
            if (!sameCell(actual[r][c], expected[r][c]) && ++mismatches <= 20)
                ADD_FAILURE() << "row " << r << " (" << expected[r][0] << ") column " << expected[0][c] << ": got \""
                              << actual[r][c] << "\", expected \"" << expected[r][c] << "\"";
        }
    }
    EXPECT_EQ(mismatches, 0);
    for (const RowColor color : (*table)->colors)
        EXPECT_EQ(color, RowColor::None);
}

namespace {

/// The msprobe 26 table of one modelA pair, with stack.json as msprobe 26 finds it.
std::shared_ptr<const CompareTable> modelATable26(const std::string& fixture)
{
    const auto base = fixturesDir() / fixture;
    const auto npuPath = base / "npu/step0/rank/dump.json";
    auto npu = dump::readDumpJson(npuPath);
    auto bench = dump::readDumpJson(base / "bench/step0/rank/dump.json");
    EXPECT_TRUE(npu.ok() && bench.ok());
    static std::map<std::string, dump::StackMap> stacks;
    auto stack = dump::readStackJson(npuPath.parent_path() / "stack.json");
    EXPECT_TRUE(stack.ok());
    stacks[fixture] = *stack;
    CompareOptions options;
    options.stackMode = true;
    options.stack = &stacks[fixture];
    auto table = msprobe26::compareDumps(**npu, **bench, options);
    EXPECT_TRUE(table.ok()) << (table.ok() ? "" : table.error().format());
    return table.ok() ? *table : nullptr;
}

/// Number of cells whose text differs from msprobe 26.0.0's own CSV (the first 20 are reported).
int stringMismatches(const CompareTable& table, const std::filesystem::path& expectedCsv)
{
    const auto expected = parseCsv(readAll(expectedCsv));
    const auto actual = parseCsv(msprobe26::tableCsv(table));
    EXPECT_EQ(actual.size(), expected.size());
    if (actual.size() != expected.size() || expected.empty())
        return -1;
    EXPECT_EQ(actual[0], expected[0]);
    int mismatches = 0;
    for (std::size_t r = 1; r < expected.size(); ++r) {
        EXPECT_EQ(actual[r].size(), expected[r].size()) << "row " << r;
        for (std::size_t c = 0; c < std::min(expected[r].size(), actual[r].size()); ++c) {
            if (actual[r][c] != expected[r][c] && ++mismatches <= 20)
                ADD_FAILURE() << "row " << r << " (" << expected[r][0] << ") column " << expected[0][c] << ": got \""
                              << actual[r][c] << "\", expected \"" << expected[r][c] << "\"";
        }
    }
    return mismatches;
}

} // namespace

// Every cell as text, as a user diffing the two CSVs sees them (EucDist and the statistics cells to the
// last digit: msprobe 26's BLAS summation and pandas' float parser are reproduced).
TEST(Msprobe26Golden, ModelACsvsAreStringExact)
{
    int checked = 0;
    for (const char* fixture : { "modelA_tensor_mix", "modelA_statistics_mix", "modelA_md5_mix" }) {
        const auto csv = fixturesDir() / fixture / "expected/msprobe-26.0.0/step0/compare_result.csv";
        if (!std::filesystem::exists(csv))
            continue; // only the tensor pair's msprobe 26 CSV is published with the fixtures
        SCOPED_TRACE(fixture);
        auto table = modelATable26(fixture);
        ASSERT_TRUE(table);
        EXPECT_EQ(stringMismatches(*table, csv), 0);
        ++checked;
    }
    EXPECT_GE(checked, 1);
}

// The statistics pair's msprobe 26 CSV is published as the output of the file-mode -da golden (-da has no
// effect on two dump.json files): byte for byte.
TEST(Msprobe26Golden, StatisticsCsvIsByteIdentical)
{
    const auto csv = fixturesDir() / "msprobe26_da/ERRCASE_file_mode_da/stripped/compare_result.csv";
    PROBESCOPE_REQUIRE_FIXTURE(csv);
    auto table = modelATable26("modelA_statistics_mix");
    ASSERT_TRUE(table);
    EXPECT_EQ(stringMismatches(*table, csv), 0);
    EXPECT_EQ(msprobe26::tableCsv(*table), readAll(csv));
}

// The md5 pair: msprobe 26's -da table has the same rows as its CSV; the name, dtype, shape, requires_grad
// and MD5 cells must agree as text (the null leaves' MD5 is N/A, not None).
TEST(Msprobe26Golden, Md5CsvCellsAgreeWithMsprobe26sTable)
{
    const auto golden = fixturesDir() / "msprobe26_da/modelA_md5_mix/stripped/compare_result_rank.json";
    PROBESCOPE_REQUIRE_FIXTURE(golden);
    auto table = modelATable26("modelA_md5_mix");
    ASSERT_TRUE(table);
    const auto rows = parseCsv(msprobe26::tableCsv(*table));
    auto parsed = dump::JsonDocument::parse(readAll(golden), golden.string());
    ASSERT_TRUE(parsed.document);
    std::vector<dump::JsonValue> items;
    const auto root = parsed.document->root();
    for (std::uint32_t i = 0; i < root.size(); ++i) {
        const auto list = *root.at(i).find("op_items");
        for (std::uint32_t k = 0; k < list.size(); ++k)
            items.push_back(list.at(k));
    }
    ASSERT_EQ(rows.size(), items.size() + 1);
    int mismatches = 0;
    for (std::size_t r = 0; r < items.size(); ++r) {
        for (std::size_t c = 0; c < 10; ++c) {
            const auto cell = items[r].find(rows[0][c]);
            ASSERT_TRUE(cell) << rows[0][c];
            if (rows[r + 1][c] != cell->asString() && ++mismatches <= 20)
                ADD_FAILURE() << rows[r + 1][0] << " " << rows[0][c] << ": \"" << rows[r + 1][c] << "\" vs \""
                              << cell->asString() << "\"";
        }
    }
    EXPECT_EQ(mismatches, 0);
}

TEST(Msprobe26Example, StatisticsWorkedExampleExactCsv)
{
    const std::string npu = R"({"task":"statistics","level":"L1","framework":"pytorch","dump_data_dir":null,"data":{
"Functional.linear.0.forward":{"input_args":[{"type":"torch.Tensor","dtype":"torch.float32","shape":[2,2],"Max":2,"Min":0,"Mean":1,"Norm":1,"requires_grad":false}],"input_kwargs":{},
"output":[{"type":"torch.Tensor","dtype":"torch.float32","shape":[2,2],"Max":3.0,"Min":0.5,"Mean":1.5,"Norm":4.0,"requires_grad":true}]}}})";
    const std::string bench = R"({"task":"statistics","level":"L1","framework":"pytorch","dump_data_dir":null,"data":{
"Functional.linear.0.forward":{"input_args":[{"type":"torch.Tensor","dtype":"torch.float32","shape":[2,2],"Max":2,"Min":0,"Mean":1,"Norm":1,"requires_grad":false}],"input_kwargs":{},
"output":[{"type":"torch.Tensor","dtype":"torch.float32","shape":[2,2],"Max":2.0,"Min":0.5,"Mean":1.5,"Norm":2.0,"requires_grad":true}]}}})";
    auto table = runOnText(npu, bench);
    ASSERT_TRUE(table);
    const std::string expected =
        "NPU Name,Bench Name,NPU Dtype,Bench Dtype,NPU Tensor Shape,Bench Tensor Shape,NPU Requires_grad,Bench "
        "Requires_grad,Max diff,Min diff,Mean diff,L2norm diff,MaxRelativeErr,MinRelativeErr,MeanRelativeErr,"
        "NormRelativeErr,NPU max,NPU min,NPU mean,NPU l2norm,Bench max,Bench min,Bench mean,Bench l2norm,Requires_grad "
        "Consistent,Result,Err_message\n"
        "Functional.linear.0.forward.input.0,Functional.linear.0.forward.input.0,torch.float32,torch.float32,\"[2, "
        "2]\",\"[2, 2]\",False,False,0,0,0,0,0,0,0,0,2,0,1,1,2,0,1,1,True,pass,[]\n"
        "Functional.linear.0.forward.output.0,Functional.linear.0.forward.output.0,torch.float32,torch.float32,\"[2, "
        "2]\",\"[2, 2]\",True,True,1.0,0,0,2.0,50.0%,0,0,100.0%,3.0,0.5,1.5,4.0,2.0,0.5,1.5,2.0,True,error,\"[\"\"error: "
        "The NormRelativeErr of output is greater than 0.5.\"\", \"\"warning: The norm relative error of output is 10 "
        "times that of input.\"\"]\"\n";
    EXPECT_EQ(msprobe26::tableCsv(*table), expected);
}

TEST(Msprobe26Example, BackwardCallsAreRenumberedAndBenchOnlyRowsDropped)
{
    const std::string leaf = R"({"type":"torch.Tensor","dtype":"torch.float32","shape":[2],"Max":1.0,"Min":0.0,"Mean":0.5,"Norm":1.0,"requires_grad":false})";
    const std::string npu = R"({"task":"statistics","level":"L1","data":{"Functional.relu.0.forward":{"input_args":[)" + leaf
        + R"(]},"Functional.relu.1.forward":{"input_args":[)" + leaf + R"(]},"Functional.relu.1.backward":{"input":[)" + leaf + R"(]}}})";
    const std::string bench = R"({"task":"statistics","level":"L1","data":{"Functional.relu.0.forward":{"input_args":[)" + leaf
        + R"(]},"Functional.relu.0.backward":{"input":[)" + leaf + R"(]},"Tensor.add.0.forward":{"input_args":[)" + leaf + R"(]}}})";
    auto table = runOnText(npu, bench);
    ASSERT_TRUE(table);
    ASSERT_EQ(table->rows.size(), 3u); // one per NPU row; the bench-only Tensor.add row is not shown
    EXPECT_EQ(pyStr(table->rows[1][1]), "N/A"); // forward relu.1 has no counterpart
    EXPECT_EQ(pyStr(table->rows[2][0]), "Functional.relu.1.backward.input.0");
    EXPECT_EQ(pyStr(table->rows[2][1]), "Functional.relu.0.backward.input.0"); // first backward on both sides
}

TEST(Msprobe26Stats, RuleMatrix)
{
    auto t = [](const char* s) { return Cell::text(s); };
    using P = std::pair<std::string, std::string>;
    EXPECT_EQ(msprobe26::statsDiff(Cell::integer(2), Cell::integer(2)), P("0", "0"));
    EXPECT_EQ(msprobe26::statsDiff(t("Nan"), t("Nan")), P("0", "0"));
    EXPECT_EQ(msprobe26::statsDiff(Cell::integer(2), Cell::number(2.0)), P("0.0", "0.0%")); // "2" != "2.0" as text
    EXPECT_EQ(msprobe26::statsDiff(Cell::number(3.0), Cell::number(2.0)), P("1.0", "50.0%"));
    EXPECT_EQ(msprobe26::statsDiff(Cell::integer(3), Cell::integer(2), true, true), P("1", "50.0%"));
    EXPECT_EQ(msprobe26::statsDiff(Cell::number(1.0), Cell::number(0.0)), P("1.0", "inf"));
    EXPECT_EQ(msprobe26::statsDiff(t("Nan"), Cell::number(1.0)), P("Nan", "Nan"));
    EXPECT_EQ(msprobe26::statsDiff(Cell::number(1.0), t("Nan")), P("Nan", "Nan"));
    EXPECT_EQ(msprobe26::statsDiff(Cell::number(INFINITY), Cell::number(1.0)), P("inf", "inf"));
    EXPECT_EQ(msprobe26::statsDiff(Cell::number(-INFINITY), Cell::number(1.0)), P("-inf", "-inf"));
    EXPECT_EQ(msprobe26::statsDiff(Cell::number(1.0), Cell::number(INFINITY)), P("-inf", "-inf"));
    EXPECT_EQ(msprobe26::statsDiff(Cell::number(1.0), Cell::number(-INFINITY)), P("inf", "inf"));
    EXPECT_EQ(msprobe26::statsDiff(Cell::number(1.0), t("N/A")), P("N/A", "N/A"));
    EXPECT_EQ(msprobe26::statsDiff(t("npu:0"), t("cuda:0")), P("N/A", "N/A"));
    EXPECT_EQ(msprobe26::statsDiff(t("npu:0"), Cell::number(1.0)), P("Diff", "Diff"));
    EXPECT_EQ(msprobe26::statsDiff(t("abc"), t("abd")), P("Diff", "Diff"));
    EXPECT_EQ(msprobe26::statsDiff(Cell::boolean(true), Cell::boolean(false)), P("Diff", "Diff"));
    EXPECT_EQ(msprobe26::statsDiff(t("None"), Cell::number(1.0)), P("Diff", "Diff"));
}

namespace {

CompareTable tensorTable(const std::vector<std::tuple<std::string, Cell, Cell>>& rows)
{
    CompareTable t;
    t.mode = CompareMode::RealData;
    t.header = msprobe26::headerFor(CompareMode::RealData, false);
    for (const auto& [name, cos, one] : rows) {
        std::vector<Cell> row(t.header.size(), Cell::text("1.0"));
        row[0] = row[1] = Cell::text(name);
        row[2] = row[3] = Cell::text("torch.float32");
        row[4] = row[5] = Cell::text("[2]");
        row[6] = row[7] = Cell::text("True");
        row[8] = cos;
        row[12] = one;
        for (int i = 14; i < 22; ++i)
            row[static_cast<std::size_t>(i)] = Cell::number(1.0);
        t.rows.push_back(row);
        t.npuEntry.push_back(0);
        t.matched.push_back(true);
        t.colors.push_back(RowColor::None);
    }
    return t;
}

std::string result(const CompareTable& t, std::size_t r)
{
    return pyStr(t.rows[r][static_cast<std::size_t>(t.column("Result"))]) + " "
        + pyStr(t.rows[r][static_cast<std::size_t>(t.column("Err_message"))]);
}

} // namespace

TEST(Msprobe26Checkers, OneThousandthAndCosineMarkFirstOutputRow)
{
    auto t = tensorTable({ { "Functional.gelu.0.forward.input.0", Cell::number(1.0), Cell::number(1.0) },
                           { "Functional.gelu.0.forward.output.0", Cell::number(0.88), Cell::number(0.05) },
                           { "Functional.gelu.0.forward.output.1", Cell::number(0.5), Cell::number(0.01) } });
    msprobe26::applyCheckers(t);
    EXPECT_EQ(result(t, 0), "pass []");
    EXPECT_EQ(result(t, 1), "error [\"error: The input/parameters of One Thousandth Err Ratio > 0.9 while the output "
                            "< 0.6.\", \"warning: The input/parameters of Cosine > 0.9, and input/parameters - output > "
                            "0.1\"]");
    EXPECT_EQ(result(t, 2), "pass []");
}

TEST(Msprobe26Checkers, OneThousandthUsesPointOneNotPointSix)
{
    auto t = tensorTable({ { "Functional.gelu.0.forward.input.0", Cell::number(1.0), Cell::number(1.0) },
                           { "Functional.gelu.0.forward.output.0", Cell::number(1.0), Cell::number(0.5) } });
    msprobe26::applyCheckers(t);
    EXPECT_EQ(result(t, 1), "pass []");
}

TEST(Msprobe26Checkers, IgnoredApisAndStringsAreSkipped)
{
    auto t = tensorTable({ { "Tensor.to.0.forward.input.0", Cell::number(1.0), Cell::number(1.0) },
                           { "Tensor.to.0.forward.output.0", Cell::number(0.1), Cell::number(0.0) } });
    t.rows[1][16] = Cell::text("Nan"); // NPU mean is not looked at; NPU max is
    t.rows[1][14] = Cell::text("inf");
    msprobe26::applyCheckers(t);
    EXPECT_EQ(result(t, 1), "pass []"); // ALL_IGNORE: no checker at all

    auto u = tensorTable({ { "Functional.relu.0.forward.input.0", Cell::text("unsupported"), Cell::text("unsupported") },
                           { "Functional.relu.0.forward.output.0", Cell::number(0.5), Cell::number(0.0) } });
    u.rows[1][14] = Cell::text("Nan");
    msprobe26::applyCheckers(u);
    // inputs only hold strings → defaults (1.0): both cross-row rules fire; NPU max "Nan" fires InfNan.
    EXPECT_EQ(result(u, 1), "error [\"error: There is nan/inf/-inf in the maximum or minimum value of NPU.\", "
                            "\"error: The input/parameters of One Thousandth Err Ratio > 0.9 while the output < 0.6.\", "
                            "\"warning: The input/parameters of Cosine > 0.9, and input/parameters - output > 0.1\"]");
}

TEST(Msprobe26Checkers, PerRowRules)
{
    auto t = tensorTable({ { "Functional.add.0.forward.input.0", Cell::number(1.0), Cell::number(1.0) },
                           { "Functional.add.0.forward.input.1", Cell::text("unsupported"), Cell::text("unsupported") },
                           { "Functional.add.0.forward.input.2", Cell::number(1.0), Cell::number(1.0) },
                           { "Functional.add.0.forward.output.0", Cell::number(1.0), Cell::number(1.0) } });
    t.rows[0][3] = Cell::text("torch.float16");                        // dtype
    t.rows[0][7] = Cell::text("False");                                // requires_grad
    t.rows[1][2] = t.rows[1][3] = Cell::text("<class 'str'>");         // scalar parameter
    t.rows[1][4] = t.rows[1][5] = Cell::text("[]");
    t.rows[1][14] = Cell::text("npu:0");
    t.rows[1][18] = Cell::text("cuda:0");
    t.rows[2][5] = Cell::text("[1, 2]");                               // shape
    t.rows[3][1] = Cell::text("N/A");                                  // unmatched: per-row rules skip it
    t.rows[3][7] = Cell::text("N/A");
    msprobe26::applyCheckers(t);
    EXPECT_EQ(result(t, 0), "error [\"error: The Required_Grad of NPU and Bench are inconsistent\", \"error: The dtype "
                            "of NPU and Bench are inconsistent.\"]");
    EXPECT_EQ(result(t, 1), "error [\"error: The scalar parameters of NPU and Bench are inconsistent.\"]");
    EXPECT_EQ(result(t, 2), "error [\"error: The shape of NPU and Bench are inconsistent.\"]");
    EXPECT_EQ(result(t, 3), "pass []");
}

TEST(Msprobe26Checkers, StatisticsRelativeRulesAndMd5)
{
    CompareTable s;
    s.mode = CompareMode::Summary;
    s.header = msprobe26::headerFor(CompareMode::Summary, false);
    const int norm = s.column("NormRelativeErr");
    for (const char* name : { "Torch.mm.0.forward.input.0", "Torch.mm.0.forward.output.0" }) {
        std::vector<Cell> row(s.header.size(), Cell::text("0"));
        row[0] = row[1] = Cell::text(name);
        row[6] = row[7] = Cell::text("True");
        for (int i = 16; i < 24; ++i)
            row[static_cast<std::size_t>(i)] = Cell::number(1.0);
        s.rows.push_back(row);
        s.npuEntry.push_back(7);
        s.matched.push_back(true);
        s.colors.push_back(RowColor::None);
    }
    s.rows[0][static_cast<std::size_t>(norm)] = Cell::text("5.0%");
    s.rows[1][static_cast<std::size_t>(norm)] = Cell::text("60.0%");
    msprobe26::applyCheckers(s);
    // input 0.05 < 0.1 and output 0.6 > 0.5 → error; 0.6 / 0.05 > 10 → warning
    EXPECT_EQ(result(s, 1), "error [\"error: The NormRelativeErr of output is greater than 0.5.\", \"warning: The norm "
                            "relative error of output is 10 times that of input.\"]");
    EXPECT_EQ(result(s, 0), "pass []");

    CompareTable m;
    m.mode = CompareMode::Md5;
    m.header = msprobe26::headerFor(CompareMode::Md5, false);
    for (const auto& [a, b] : { std::pair { "1a2b3c4d", "1a2b3c4d" }, std::pair { "1a2b3c4d", "00000000" },
                                std::pair { "1a2b3c4d", "N/A" } }) {
        std::vector<Cell> row(m.header.size(), Cell::text("x"));
        row[0] = Cell::text("Torch.mm.0.forward.input.0");
        row[8] = Cell::text(a);
        row[9] = Cell::text(b);
        m.rows.push_back(row);
        m.npuEntry.push_back(static_cast<std::uint32_t>(m.rows.size()));
        m.matched.push_back(true);
        m.colors.push_back(RowColor::None);
    }
    msprobe26::applyCheckers(m);
    EXPECT_EQ(result(m, 0), "pass []");
    EXPECT_EQ(result(m, 1), "error [\"error: The CRC-32 value of NPU differs from that of the bench.\"]");
    EXPECT_EQ(result(m, 2), "warning [\"warning: The parameter of NPU does not match the bench.\"]");
}

TEST(Msprobe26Csv, CellText)
{
    EXPECT_EQ(msprobe26::cellText(Cell::number(INFINITY)), " inf");
    EXPECT_EQ(msprobe26::cellText(Cell::number(-INFINITY)), " -inf");
    EXPECT_EQ(msprobe26::cellText(Cell::number(NAN)), "");
    EXPECT_EQ(msprobe26::cellText(Cell::number(1e-05)), "1e-05");
    EXPECT_EQ(msprobe26::cellText(Cell::integer(4)), "4");
    EXPECT_EQ(msprobe26::cellText(Cell::boolean(true)), "True");
    EXPECT_EQ(msprobe26::jsonStringList({}), "[]");
    EXPECT_EQ(msprobe26::jsonStringList({ "a\"b", "c" }), "[\"a\\\"b\", \"c\"]");
}

TEST(Msprobe26Smoke, StatisticsAndMd5FixturesRun)
{
    for (const auto& [fixture, mode, lastColumn] :
         { std::tuple { "modelA_statistics_mix", CompareMode::Summary, "NPU_Stack_Info" },
           std::tuple { "modelA_md5_mix", CompareMode::Md5, "NPU_Stack_Info" } }) {
        const auto base = fixturesDir() / fixture;
        auto npu = dump::readDumpJson(base / "npu/step0/rank/dump.json");
        auto bench = dump::readDumpJson(base / "bench/step0/rank/dump.json");
        ASSERT_TRUE(npu.ok() && bench.ok());
        auto stack = dump::readStackJson(base / "npu/step0/rank/stack.json");
        ASSERT_TRUE(stack.ok());
        CompareOptions options;
        options.stackMode = true;
        options.stack = &*stack;
        auto table = msprobe26::compareDumps(**npu, **bench, options);
        ASSERT_TRUE(table.ok()) << fixture;
        EXPECT_EQ((*table)->mode, mode);
        EXPECT_EQ((*table)->header.back(), lastColumn);
        EXPECT_GT((*table)->rows.size(), 300u) << fixture;
        const int result = (*table)->column("Result");
        for (const auto& row : (*table)->rows) {
            const std::string r = pyStr(row[static_cast<std::size_t>(result)]);
            EXPECT_TRUE(r == "pass" || r == "warning" || r == "error") << r;
        }
    }
}
