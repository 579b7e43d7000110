// SPDX-License-Identifier: Apache-2.0
// api_precision_compare (run-ut-spec §8) and the CSV reader/writer it shares with the runner.
#include "core/runut/csvio.h"
#include "core/runut/precisioncompare.h"
#include "testconfig.h"

#include "tempdir.h"

#include <gtest/gtest.h>

#include <fstream>
#include <optional>
#include <sstream>

using namespace probescope;
using namespace probescope::runut;

namespace {

using probescope::testing::readAll;

} // namespace

TEST(RunutCsv, LineQuotesLikePythonCsv)
{
    EXPECT_EQ(csvLine({ "a", " ", "" }), "a, ,\r\n");
    EXPECT_EQ(csvLine({ "x,y", "say \"hi\"", "two\nlines", "cr\r" }),
              "\"x,y\",\"say \"\"hi\"\"\",\"two\nlines\",\"cr\r\"\r\n");
    EXPECT_EQ(csvLine({ "" }), "\"\"\r\n");
    EXPECT_EQ(csvLine({}), "\r\n");
}

TEST(RunutCsv, ParsesBomQuotesLineEndsAndLineNumbers)
{
    const std::string text = std::string(kUtf8Bom) + "h1,h2\r\n"
                                                     "a,\"b,\"\"c\"\"\"\r\n"
                                                     "\r\n"
                                                     "\"multi\nline\",x\n"
                                                     "last, \r";
    auto t = parseCsvText(text, "f.csv");
    ASSERT_TRUE(t) << t.error().format();
    EXPECT_EQ(t->header, (std::vector<std::string> { "h1", "h2" }));
    ASSERT_EQ(t->rows.size(), 3u);
    EXPECT_EQ(t->rows[0].cells, (std::vector<std::string> { "a", "b,\"c\"" }));
    EXPECT_EQ(t->rows[0].line, 2u);
    EXPECT_EQ(t->rows[1].cells, (std::vector<std::string> { "multi\nline", "x" }));
    EXPECT_EQ(t->rows[1].line, 4u);
    EXPECT_EQ(t->rows[2].cells, (std::vector<std::string> { "last", " " }));
    EXPECT_EQ(t->rows[2].line, 6u);
    EXPECT_EQ(t->column("h2"), 1u);
    EXPECT_FALSE(t->column("H2"));
}

TEST(RunutCsv, RoundTripsWhatItWrites)
{
    const std::vector<std::vector<std::string>> rows {
        { "API Name", "Message" }, { "a.b.0", "x, \"y\"\nz" }, { "", " " }, { "" }
    };
    std::string text(kUtf8Bom);
    for (const auto& r : rows)
        text += csvLine(r);
    auto t = parseCsvText(text, "mem");
    ASSERT_TRUE(t) << t.error().format();
    EXPECT_EQ(t->header, rows[0]);
    ASSERT_EQ(t->rows.size(), 3u);
    for (std::size_t i = 0; i < 3; ++i)
        EXPECT_EQ(t->rows[i].cells, rows[i + 1]);
}

TEST(RunutCsv, MalformedInputNamesFileAndLine)
{
    auto unterminated = parseCsvText("a,b\r\nx,\"open\r\nmore\r\n", "bad.csv");
    ASSERT_FALSE(unterminated);
    EXPECT_EQ(unterminated.error().id, "csv.malformed");
    EXPECT_EQ(unterminated.error().location.file, "bad.csv");
    EXPECT_EQ(unterminated.error().location.line, 2u);
    EXPECT_EQ(unterminated.error().location.column, 3u);

    auto afterQuote = parseCsvText("a,b\n1,2\n\"x\"y,z\n", "bad.csv");
    ASSERT_FALSE(afterQuote);
    EXPECT_EQ(afterQuote.error().location.line, 3u);
    EXPECT_EQ(afterQuote.error().location.column, 4u);

    auto nul = parseCsvText(std::string("a\nb\0c\n", 6), "nul.csv");
    ASSERT_FALSE(nul);
    EXPECT_EQ(nul.error().location.line, 2u);

    auto empty = parseCsvText(kUtf8Bom, "e.csv");
    ASSERT_FALSE(empty);
    EXPECT_EQ(empty.error().id, "csv.empty");
}

TEST(RunutCsv, CreateWritesBomAndRefusesToOverwrite)
{
    probescope::testing::TempDir dir;
    const auto p = dir.path() / "out.csv";
    ASSERT_FALSE(createCsv(p, { "API name", "Message" }));
    ASSERT_FALSE(appendCsv(p, csvLine({ "x", "y" })));
    EXPECT_EQ(readAll(p), std::string(kUtf8Bom) + "API name,Message\r\nx,y\r\n");
    auto again = createCsv(p, { "other" });
    ASSERT_TRUE(again);
    EXPECT_EQ(again->id, "csv.exists");
    EXPECT_EQ(readAll(p), std::string(kUtf8Bom) + "API name,Message\r\nx,y\r\n");
    auto missing = appendCsv(dir.path() / "none" / "x.csv", "a\r\n");
    ASSERT_TRUE(missing);
    EXPECT_EQ(missing->id, "io.write");
    auto read = readCsv(p);
    ASSERT_TRUE(read);
    EXPECT_EQ(read->rows.at(0).cells, (std::vector<std::string> { "x", "y" }));
    EXPECT_FALSE(readCsv(dir.path() / "absent.csv"));
}

// ---- api_precision_compare (§8) on the hand-made details CSVs of tests/data/runut/precisioncompare ----
// The NPU file has one row per case; the expected verdicts are derived in the comments (minimum
// denominators: fp32 2^-14, fp16 2^-11).

namespace {

std::filesystem::path pcData(const std::string& name)
{
    return probescope::testing::testDataDir() / "runut" / "precisioncompare" / name;
}

struct PcRun
{
    PrecisionCompareOutput out;
    CsvTable result, details;
};

std::optional<PcRun> runPc(const std::filesystem::path& outDir, Profile profile,
                           const std::string& gpu = "gpu_details.csv", ProgressSink* progress = nullptr)
{
    PrecisionCompareOptions o;
    o.npuCsv = pcData("npu_details.csv");
    o.gpuCsv = pcData(gpu);
    o.outDir = outDir;
    o.profile = profile;
    o.timestamp = "20260101120000";
    auto r = apiPrecisionCompare(o, progress);
    EXPECT_TRUE(r) << (r ? "" : r.error().format());
    if (!r)
        return std::nullopt;
    auto result = readCsv(r->resultCsv);
    auto details = readCsv(r->detailsCsv);
    EXPECT_TRUE(result && details);
    if (!result || !details)
        return std::nullopt;
    return PcRun { *r, *result, *details };
}

using Cells = std::vector<std::string>;

/// The details row of `name`, by header name.
std::string detail(const PcRun& run, const std::string& name, const std::string& column)
{
    const auto col = run.details.column(column);
    EXPECT_TRUE(col) << column;
    for (const auto& row : run.details.rows) {
        if (!row.cells.empty() && row.cells[0] == name && col)
            return row.cells.at(*col);
    }
    ADD_FAILURE() << "no details row " << name;
    return {};
}

std::vector<Cells> resultRows(const PcRun& run)
{
    std::vector<Cells> rows;
    for (const auto& r : run.result.rows)
        rows.push_back(r.cells);
    return rows;
}

const std::string kTopk = "在npu上，topk的入参sorted=False时不生效，会返回有序tensor，而cpu上会返回无序tensor。 "
                          "如果topk精度不达标，请检查是否是该原因导致的。";

} // namespace

TEST(PrecisionCompare, ClassicProfileEndToEnd)
{
    probescope::testing::TempDir dir;
    const auto run = runPc(dir.path() / "out", Profile::Msprobe12);
    ASSERT_TRUE(run);
    EXPECT_EQ(run->out.resultCsv.filename(), "api_precision_compare_result_20260101120000.csv");
    EXPECT_EQ(run->out.detailsCsv.filename(), "api_precision_compare_details_20260101120000.csv");
    EXPECT_EQ(run->result.header, precisionCompareResultHeader());
    EXPECT_EQ(run->details.header, precisionCompareDetailsHeader());
    EXPECT_EQ(run->details.header.size(), 28u);

    const std::vector<Cells> expected {
        { "Functional.gelu.0", "error", "pass", "" },
        { "Tensor.mul.0", "error", " ", "" },
        // The int64 row raises in msprobe (blank binary error rate): a result row of its own, written at
        // once, and not part of its API's statuses.
        { "Torch.relu.1.forward.output.1", "SKIP", "SKIP", "ERROR: Input data is an empty string" },
        { "Torch.relu.1", "pass", " ", "" },
        { "Torch.matmul.0", "error", "pass", "" },
        { "Functional.conv2d.0", "pass", " ", "" },
        { "Functional.conv2d.1", "error", " ", "" },
        { "Torch.topk.0", "error", " ", kTopk },
        { "Functional.linear.0", "SKIP", "SKIP", "This data type does not support benchmark compare." },
        // An invalid name is written at once, before the API still being grouped (as msprobe does).
        { "bad_name", "SKIP", "SKIP", "The API name bad_name is invalid." },
        { "Functional.skipped.0", "SKIP", " ", "API skipped, here." },
        { "Functional.empty.0", "SKIP", " ", "There is not bench calculation result." },
        { "Aten.add.Tensor.0", "error", " ", "" },
        { "Functional.embedding.0", "pass", " ", "" },
    };
    EXPECT_EQ(resultRows(*run), expected);
    EXPECT_EQ(run->out.apis, expected.size());
    EXPECT_EQ(run->out.apis, 14u);
    EXPECT_EQ(run->out.rows, 16u); // 17 NPU rows, one missing on the GPU side
    EXPECT_EQ(run->details.rows.size(), 16u);
    ASSERT_EQ(run->out.diagnostics.size(), 1u);
    EXPECT_EQ(run->out.diagnostics[0].id, "precision.missing-gpu-row");
    EXPECT_EQ(run->out.diagnostics[0].severity, Severity::Warning);
    EXPECT_EQ(run->out.diagnostics[0].location.line, 14u);

    // gelu forward, benchmark: small 0/2^-14 = 0, rmse 0.003/0.001 = 3 > 2, max rel 0.02/0.001 = 20 > 10,
    // mean rel 1, eb 0.1/0.2 = 0.5 (never part of the verdict).
    const std::string gelu = "Functional.gelu.0.forward.output.0";
    EXPECT_EQ(detail(*run, gelu, "小值域错误比值"), "0.00000000000000");
    EXPECT_EQ(detail(*run, gelu, "小值域判定结果"), "pass");
    EXPECT_EQ(detail(*run, gelu, "均方根误差比值"), "3.00000000000000");
    EXPECT_EQ(detail(*run, gelu, "均方根误差判定结果"), "error");
    EXPECT_EQ(detail(*run, gelu, "相对误差最大值比值"), "20.00000000000000");
    EXPECT_EQ(detail(*run, gelu, "相对误差平均值判定结果"), "pass");
    EXPECT_EQ(detail(*run, gelu, "误差均衡性比值"), "0.50000000000000");
    EXPECT_EQ(detail(*run, gelu, "比对结果"), "error");
    EXPECT_EQ(detail(*run, gelu, "比对算法"), "标杆比对法");
    EXPECT_EQ(detail(*run, gelu, "Message"), "ERROR: 均方根误差比值超过阈值\nERROR: 相对误差最大值比值超过阈值\n");
    EXPECT_EQ(detail(*run, gelu, "inf/nan错误率"), " ");

    // mul fp16 is on the absolute-threshold list: 绝对误差错误率 0.5 fails.
    const std::string mul = "Tensor.mul.0.forward.output.0";
    EXPECT_EQ(detail(*run, mul, "比对算法"), "绝对阈值法");
    EXPECT_EQ(detail(*run, mul, "inf/nan判定结果"), "pass");
    EXPECT_EQ(detail(*run, mul, "相对误差错误率"), "0.00000000000000");
    EXPECT_EQ(detail(*run, mul, "绝对误差错误率"), "0.50000000000000");
    EXPECT_EQ(detail(*run, mul, "绝对误差判定结果"), "error");
    EXPECT_EQ(detail(*run, mul, "小值域错误比值"), " ");
    EXPECT_EQ(detail(*run, mul, "Message"), "ERROR: 绝对误差错误率超过阈值");

    // relu: binary; the cell is copied as text (the column holds SPACE cells, so pandas keeps strings).
    EXPECT_EQ(detail(*run, "Torch.relu.1.forward.output.0", "二进制一致错误率"), "0.00000000000000");
    EXPECT_EQ(detail(*run, "Torch.relu.1.forward.output.0", "二进制一致错误率判定结果"), "pass");
    EXPECT_EQ(detail(*run, "Torch.relu.1.forward.output.0", "Message"), "");
    EXPECT_EQ(detail(*run, "Torch.relu.1.forward.output.1", "比对结果"), "SKIP");
    EXPECT_EQ(detail(*run, "Torch.relu.1.forward.output.1", "Message"), "ERROR: Input data is an empty string");
    EXPECT_EQ(detail(*run, "Torch.topk.0.forward.output.0", "二进制一致错误率"), "0.5");
    EXPECT_EQ(detail(*run, "Torch.topk.0.forward.output.0", "Message"), "ERROR: 二进制一致错误率超过阈值\n");

    // matmul fp32 ULP: mean 100 >= 64, proportion 0.1 >= 0.05, ratio 0.1/0.05 = 2 >= 1 -> error;
    // backward fp16: ratio 0.01/0.02 = 0.5 < 1 -> pass.
    const std::string mm = "Torch.matmul.0.forward.output.0";
    EXPECT_EQ(detail(*run, mm, "比对算法"), "ULP误差比对法");
    EXPECT_EQ(detail(*run, mm, "ULP误差平均值"), "100.00000000000000");
    EXPECT_EQ(detail(*run, mm, "ULP误差大于阈值占比比值"), "2.00000000000000");
    EXPECT_EQ(detail(*run, mm, "ULP误差判定结果"), "error");
    EXPECT_EQ(detail(*run, mm, "Message"), "ERROR: ULP误差不满足标准\n");
    EXPECT_EQ(detail(*run, "Torch.matmul.0.backward.output.0", "ULP误差大于阈值占比比值"), "0.50000000000000");

    // conv2d: 双千 >= 0.999 passes (the code, not the docs' ">").
    EXPECT_EQ(detail(*run, "Functional.conv2d.0.forward.output.0", "双千指标判定结果"), "pass");
    EXPECT_EQ(detail(*run, "Functional.conv2d.1.forward.output.0", "双千指标"), "0.9989");
    EXPECT_EQ(detail(*run, "Functional.conv2d.1.forward.output.0", "Message"), "ERROR: 双千指标不达标\n");
    EXPECT_EQ(detail(*run, "Functional.conv2d.1.forward.output.0", "比对算法"), "双千指标法");

    // SKIP rows carry the NPU message; everything else is SPACE.
    EXPECT_EQ(detail(*run, "Functional.linear.0.forward.output.0", "Message"), "fp64 row");
    EXPECT_EQ(detail(*run, "Functional.linear.0.forward.output.0", "比对算法"), " ");
    EXPECT_EQ(detail(*run, "bad_name", "比对结果"), "SKIP");

    // add.Tensor (7-part name): rmse inf on both sides -> NaN ratio, pass; max rel NaN vs 0.1 -> error.
    const std::string add = "Aten.add.Tensor.0.forward.output.0";
    EXPECT_EQ(detail(*run, add, "均方根误差比值"), "nan");
    EXPECT_EQ(detail(*run, add, "均方根误差判定结果"), "pass");
    EXPECT_EQ(detail(*run, add, "相对误差最大值判定结果"), "error");
    EXPECT_EQ(detail(*run, add, "Message"),
              "均方根误差同为同号inf或nan\n相对误差最大值inf或nan不一致\nERROR: 相对误差最大值比值超过阈值\n");

    // embedding: rmse ratio 0.0018/0.001 = 1.8 <= 2.
    EXPECT_EQ(detail(*run, "Functional.embedding.0.forward.output.0", "均方根误差比值"), "1.80000000000000");
}

TEST(PrecisionCompare, CurrentProfileBenchmarksFloatsAndUsesProtectionLevels)
{
    probescope::testing::TempDir dir;
    const auto run = runPc(dir.path(), Profile::Msprobe26);
    ASSERT_TRUE(run);
    const std::vector<Cells> expected {
        { "Functional.gelu.0", "error", "pass", "" },
        { "Tensor.mul.0", "error", " ", "" },       // 相对误差错误率 filled: fp8 input -> absolute threshold
        { "Torch.relu.1.forward.output.1", "SKIP", "SKIP", "ERROR: Input data is an empty string" }, // int64: binary
        { "Torch.relu.1", "pass", " ", "" },        // fp32 now benchmark (blank cells = 0)
        { "Torch.matmul.0", "pass", "pass", "" },   // benchmark, not ULP
        { "Functional.conv2d.0", "pass", " ", "" },
        { "Functional.conv2d.1", "pass", " ", "" },
        { "Torch.topk.0", "pass", " ", "" },
        { "Functional.linear.0", "SKIP", "SKIP", "This data type does not support benchmark compare." },
        { "bad_name", "SKIP", "SKIP", "The API name bad_name is invalid." },
        { "Functional.skipped.0", "SKIP", " ", "API skipped, here." },
        { "Functional.empty.0", "SKIP", " ", "There is not bench calculation result." },
        { "Aten.add.Tensor.0", "error", " ", "" },
        { "Functional.embedding.0", "error", " ", "" }, // L1: rmse ratio 1.8 > 1.5
    };
    EXPECT_EQ(resultRows(*run), expected);
    EXPECT_EQ(detail(*run, "Tensor.mul.0.forward.output.0", "比对算法"), "绝对阈值法");
    EXPECT_EQ(detail(*run, "Torch.matmul.0.forward.output.0", "比对算法"), "标杆比对法");
    EXPECT_EQ(detail(*run, "Torch.relu.1.forward.output.1", "比对结果"), "SKIP"); // int64: still binary
}

TEST(PrecisionCompare, ThresholdTables)
{
    EXPECT_EQ(protectionLevel("embedding"), 1);
    EXPECT_EQ(protectionLevel("scatter_add_"), 1);
    EXPECT_EQ(protectionLevel("mm"), 2);
    EXPECT_EQ(protectionLevel("GELU"), 2);
    EXPECT_EQ(protectionLevel("gelu"), 0);
    const auto l2 = benchmarkThresholds("matmul", Profile::Msprobe26);
    EXPECT_EQ(l2.rmse, 1.2);
    EXPECT_EQ(l2.maxRel, 2.0);
    EXPECT_EQ(l2.meanRel, 1.2);
    const auto classic = benchmarkThresholds("matmul", Profile::Msprobe12);
    EXPECT_EQ(classic.rmse, 2);
    EXPECT_EQ(classic.maxRel, 10);
    EXPECT_EQ(classic.smallValue, 2);
}

TEST(PrecisionCompare, DuplicateGpuRowStopsTheAnalysis)
{
    probescope::testing::TempDir dir;
    const auto run = runPc(dir.path(), Profile::Msprobe12, "gpu_duplicate.csv");
    ASSERT_TRUE(run);
    // gelu (2 rows) and mul are judged; relu.1 out0 is on GPU lines 5 and 6 -> stop. mul, still being
    // grouped, gets no result row.
    EXPECT_EQ(resultRows(*run), (std::vector<Cells> { { "Functional.gelu.0", "error", "pass", "" } }));
    EXPECT_EQ(run->details.rows.size(), 3u);
    ASSERT_EQ(run->out.diagnostics.size(), 1u);
    EXPECT_EQ(run->out.diagnostics[0].id, "precision.duplicate-gpu-row");
    EXPECT_EQ(run->out.diagnostics[0].severity, Severity::Error);
    EXPECT_EQ(run->out.diagnostics[0].location.line, 6u);
    EXPECT_NE(run->out.diagnostics[0].location.file.find("gpu_duplicate.csv"), std::string::npos);
}

TEST(PrecisionCompare, FilesHaveBomCrLfAndAreNeverOverwritten)
{
    probescope::testing::TempDir dir;
    const auto run = runPc(dir.path(), Profile::Msprobe12);
    ASSERT_TRUE(run);
    const std::string text = readAll(run->out.resultCsv);
    EXPECT_EQ(text.substr(0, 3), std::string(kUtf8Bom));
    EXPECT_NE(text.find("API Name,Forward Test Success,Backward Test Success,Message\r\n"), std::string::npos);
    EXPECT_NE(text.find("Functional.skipped.0,SKIP, ,\"API skipped, here.\"\r\n"), std::string::npos);

    PrecisionCompareOptions o;
    o.npuCsv = pcData("npu_details.csv");
    o.gpuCsv = pcData("gpu_details.csv");
    o.outDir = dir.path();
    o.timestamp = "20260101120000";
    const auto again = apiPrecisionCompare(o);
    ASSERT_FALSE(again);
    EXPECT_EQ(again.error().id, "csv.exists");
    EXPECT_EQ(readAll(run->out.resultCsv), text);

    // Only the details file in the way: no result file is created either.
    const auto other = dir.path() / "other";
    std::filesystem::create_directories(other);
    o.outDir = other;
    o.timestamp = "20260101120001";
    const auto details = other / "api_precision_compare_details_20260101120001.csv";
    std::ofstream(details) << "mine";
    const auto clash = apiPrecisionCompare(o);
    ASSERT_FALSE(clash);
    EXPECT_EQ(clash.error().id, "csv.exists");
    EXPECT_FALSE(std::filesystem::exists(other / "api_precision_compare_result_20260101120001.csv"));
    EXPECT_EQ(readAll(details), "mine");
}

TEST(PrecisionCompare, BadInputsNameFileAndPlace)
{
    probescope::testing::TempDir dir;
    PrecisionCompareOptions o;
    o.gpuCsv = pcData("gpu_details.csv");
    o.outDir = dir.path();
    o.timestamp = "20260101120000";

    o.npuCsv = pcData("npu_missing_column.csv");
    auto r = apiPrecisionCompare(o);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().id, "precision.missing-column");
    EXPECT_NE(r.error().message.find("npu_missing_column.csv"), std::string::npos);
    EXPECT_NE(r.error().message.find("ULP误差平均值"), std::string::npos);

    o.npuCsv = pcData("npu_unterminated.csv");
    r = apiPrecisionCompare(o);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().id, "csv.malformed");
    EXPECT_EQ(r.error().location.line, 2u);

    o.npuCsv = pcData("npu_wide_row.csv");
    r = apiPrecisionCompare(o);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().id, "csv.row-width");
    EXPECT_EQ(r.error().location.line, 4u);
    EXPECT_NE(r.error().format().find("npu_wide_row.csv:4"), std::string::npos);

    o.npuCsv = pcData("absent.csv");
    EXPECT_FALSE(apiPrecisionCompare(o));
    // Nothing was written by the failed runs.
    EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
}

namespace {
class CancelAfter : public ProgressSink
{
public:
    explicit CancelAfter(std::uint64_t n)
        : m_n(n)
    {
    }
    void setRange(std::uint64_t total) override { m_total = total; }
    void advance(std::uint64_t done) override { m_done = done; }
    bool isCancelled() const override { return m_done >= m_n; }
    std::uint64_t m_total = 0, m_done = 0, m_n;
};
} // namespace

TEST(PrecisionCompare, ProgressAndCancel)
{
    probescope::testing::TempDir dir;
    CancelAfter sink(2);
    const auto run = runPc(dir.path(), Profile::Msprobe12, "gpu_details.csv", &sink);
    ASSERT_TRUE(run);
    EXPECT_EQ(sink.m_total, 17u);
    EXPECT_EQ(run->details.rows.size(), 2u);
    // The API being grouped is flushed on cancel.
    EXPECT_EQ(resultRows(*run), (std::vector<Cells> { { "Functional.gelu.0", "error", "pass", "" } }));
    ASSERT_FALSE(run->out.diagnostics.empty());
    EXPECT_EQ(run->out.diagnostics.back().id, "precision.cancelled");
}

// ---- Golden: msprobe 1.2.2's own api_precision_compare output on the fixture's run_ut details ----
// ../shared/fixtures/modelA_tensor_mix/expected/run_ut holds run_ut's details CSVs of msprobe 1.2.2 and
// api_precision_compare's files computed from them (see the fixtures README); ours must be byte-identical.

class PrecisionCompareGolden : public ::testing::TestWithParam<std::pair<const char*, const char*>>
{
};

TEST_P(PrecisionCompareGolden, ByteIdenticalToMsprobe122)
{
    const auto runUt = probescope::testing::fixturesDir() / "modelA_tensor_mix" / "expected" / "run_ut";
    const auto [gpuFixture, expectedDir] = GetParam();
    PrecisionCompareOptions o;
    o.npuCsv = runUt / "accuracy_checking_details.csv";
    o.gpuCsv = probescope::testing::fixturesDir() / gpuFixture / "expected" / "run_ut" / "accuracy_checking_details.csv";
    ASSERT_TRUE(std::filesystem::exists(o.npuCsv)) << "fixtures not found under " << probescope::testing::fixturesDir();
    probescope::testing::TempDir dir;
    o.outDir = dir.path();
    o.timestamp = "20250226000000";
    const auto r = apiPrecisionCompare(o);
    ASSERT_TRUE(r) << r.error().format();
    EXPECT_TRUE(r->diagnostics.empty());
    EXPECT_EQ(r->apis, 37u);
    EXPECT_EQ(r->rows, 107u);
    const auto expected = runUt / expectedDir;
    EXPECT_EQ(readAll(r->resultCsv), readAll(expected / "api_precision_compare_result.csv"));
    EXPECT_EQ(readAll(r->detailsCsv), readAll(expected / "api_precision_compare_details.csv"));
}

INSTANTIATE_TEST_SUITE_P(Fixtures, PrecisionCompareGolden,
                         ::testing::Values(std::make_pair("modelA_tensor_mix", "api_precision_compare_self"),
                                           std::make_pair("modelA_statistics_mix",
                                                          "api_precision_compare_vs_statistics")));

// An API name a spreadsheet would run as a formula is written with a leading apostrophe (issue 20), as the
// compare's CSV does; the verdicts are unchanged.
TEST(PrecisionCompare, FormulaNamesAreGuarded)
{
    probescope::testing::TempDir dir;
    std::string npu = probescope::testing::readAll(pcData("npu_details.csv"));
    const std::string name = "Functional.gelu.0.forward.output.0";
    const auto at = npu.find(name);
    ASSERT_NE(at, std::string::npos);
    npu.replace(at, name.size(), "=SUM(A1)+cmd.0.forward.output.0");
    std::ofstream(dir.path() / "npu.csv", std::ios::binary) << npu;
    PrecisionCompareOptions o;
    o.npuCsv = dir.path() / "npu.csv";
    o.gpuCsv = pcData("gpu_details.csv");
    o.outDir = dir.path() / "out";
    o.timestamp = "20260101120000";
    auto r = apiPrecisionCompare(o);
    ASSERT_TRUE(r) << r.error().format();
    const std::string result = probescope::testing::readAll(r->resultCsv);
    const std::string details = probescope::testing::readAll(r->detailsCsv);
    EXPECT_NE(result.find("'=SUM(A1)+cmd"), std::string::npos) << result;
    EXPECT_EQ(result.find("\n=SUM"), std::string::npos);
    EXPECT_EQ(details.find("\n=SUM"), std::string::npos);
}
