// SPDX-License-Identifier: Apache-2.0
// The ptdbg profile (docs/ptdbg-compare.md): every variant of ../shared/fixtures/legacy_ptdbg/*/expected/
// reproduced from the call recorded in its cmd.txt (cells, fills, advisor), plus ptdbg's rules on
// hand-made inputs where the fixtures leave them open.
#include "core/compare/pipeline/comparerun.h"
#include "core/compare/pipeline/ptdbgjob.h"
#include "core/dump/dumpfile.h"
#include "core/compare/output/csvwriter.h"
#include "core/compare/ptdbg/ptdbgcompare.h"
#include "core/compare/ptdbg/ptdbgmetrics.h"
#include "core/compare/ptdbg/highlight.h"
#include "core/compare/table/pytext.h"
#include "core/session/session.h"
#include "core/tensor/npystream.h"
#include "core/util/workgroup.h"
#include "maketensor.h"
#include "tempdir.h"
#include "fixtureguard.h"
#include "testconfig.h"
#include "xlsxread.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <unistd.h>
#include <map>
#include <regex>
#include <set>

using namespace probescope;
using namespace probescope::compare;
namespace fs = std::filesystem;
namespace ptdbg = probescope::compare::ptdbg;
using probescope::testing::fixturesDir;
using probescope::testing::readAll;
using probescope::testing::TempDir;

namespace {

fs::path legacyDir()
{
    return fixturesDir() / "legacy_ptdbg";
}

/// One ptdbg call recorded in a cmd.txt, with its paths made absolute (cwd = the pair folder).
struct RecordedCall
{
    bool distributed = false;
    ptdbg::PtdbgInput input;
    fs::path npuStep;
    fs::path benchStep;
    ptdbg::PtdbgOptions options;
};

std::optional<RecordedCall> readCmd(const fs::path& variant, const fs::path& pairDir)
{
    const std::string cmd = readAll(variant / "cmd.txt");
    RecordedCall call;
    auto quoted = [&](const std::string& key) -> std::string {
        const std::regex re("'" + key + "'\\s*:\\s*'([^']*)'");
        std::smatch m;
        return std::regex_search(cmd, m, re) ? m[1].str() : std::string();
    };
    auto flag = [&](const std::string& key) {
        const std::regex re(key + "\\s*=\\s*True");
        return std::regex_search(cmd, re);
    };
    call.options.stackMode = flag("stack_mode");
    call.options.fuzzy = flag("fuzzy_match");
    if (const auto at = cmd.find("compare_distributed("); at != std::string::npos) {
        call.distributed = true;
        const std::regex str("['\"]([^'\"]*)['\"]");
        std::vector<std::string> args;
        const std::string rest = cmd.substr(at);
        for (auto it = std::sregex_iterator(rest.begin(), rest.end(), str); it != std::sregex_iterator(); ++it)
            args.push_back((*it)[1].str());
        if (args.size() < 2)
            return std::nullopt;
        call.npuStep = pairDir / args[0];
        call.benchStep = pairDir / args[1];
        return call;
    }
    const std::string npu = quoted("npu_pkl_path");
    const std::string bench = quoted("bench_pkl_path");
    if (npu.empty() || bench.empty())
        return std::nullopt;
    call.input.npuPkl = pairDir / npu;
    call.input.benchPkl = pairDir / bench;
    if (const std::string d = quoted("npu_dump_data_dir"); !d.empty())
        call.input.npuDataDir = pairDir / d;
    if (const std::string d = quoted("bench_dump_data_dir"); !d.empty())
        call.input.benchDataDir = pairDir / d;
    return call;
}

std::optional<double> number(const std::string& s)
{
    if (s.empty())
        return std::nullopt;
    char* end = nullptr;
    const double v = std::strtod(s.c_str(), &end);
    if (end != s.c_str() + s.size() || !std::isfinite(v))
        return std::nullopt;
    return v;
}

/// Cells equal as text, or as numbers within 1e-9 relative (the xlsx keeps 16 significant digits).
void expectSameCsv(const std::string& actual, const std::string& expected, const std::string& what)
{
    const auto a = parseCsv(actual);
    const auto e = parseCsv(expected);
    ASSERT_EQ(a.size(), e.size()) << what << ": row count (header included)";
    for (std::size_t r = 0; r < e.size(); ++r) {
        ASSERT_EQ(a[r].size(), e[r].size()) << what << ": cells of CSV line " << r + 1;
        for (std::size_t c = 0; c < e[r].size(); ++c) {
            const auto x = number(a[r][c]);
            const auto y = number(e[r][c]);
            if (x && y) {
                EXPECT_LE(std::abs(*x - *y), 1e-9 * std::max(std::abs(*y), 1e-300))
                    << what << ": line " << r + 1 << " column " << e[0][c] << ": " << a[r][c] << " vs " << e[r][c];
            } else {
                EXPECT_EQ(a[r][c], e[r][c]) << what << ": line " << r + 1 << " column " << e[0][c];
            }
        }
    }
}

/// Row colours of ptdbg's workbook (its first column is filled like the rest of the row).
std::vector<RowColor> fixtureFills(const fs::path& xlsx, std::size_t rows)
{
    std::vector<RowColor> colors(rows, RowColor::None);
    const auto book = probescope::testing::xlsx::readXlsx(xlsx);
    if (!book)
        return {};
    for (std::size_t r = 0; r < rows; ++r) {
        const auto fill = book->fill(static_cast<unsigned>(r + 1), 0);
        colors[r] = probescope::testing::xlsx::isRed(fill)  ? RowColor::Red
            : probescope::testing::xlsx::isYellow(fill)    ? RowColor::Yellow
                                                           : RowColor::None;
    }
    return colors;
}

std::string colorName(RowColor c)
{
    return c == RowColor::Red ? "red" : c == RowColor::Yellow ? "yellow" : "none";
}

/// The variants of the real fixtures and of tests/data/ptdbg (ptdbg's compare on hand-made dumps).
std::vector<fs::path> variants()
{
    std::vector<fs::path> out;
    std::error_code ec;
    for (const fs::path& root : { legacyDir(), probescope::testing::testDataDir() / "ptdbg" }) {
        for (const auto& pair : fs::directory_iterator(root, ec)) {
            if (!pair.is_directory())
                continue;
            for (const auto& v : fs::directory_iterator(pair.path() / "expected", ec))
                out.push_back(v.path());
        }
    }
    std::sort(out.begin(), out.end());
    return out;
}

void writeFile(const fs::path& p, const std::string& text)
{
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << text;
}

/// A little-endian float32 .npy of a 1-d array.
void writeNpy(const fs::path& p, const std::vector<float>& values)
{
    std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + std::to_string(values.size()) + ",), }";
    while ((10 + header.size() + 1) % 64 != 0)
        header += ' ';
    header += '\n';
    std::string data = "\x93NUMPY";
    data += '\x01';
    data += '\x00';
    data += static_cast<char>(header.size() & 0xff);
    data += static_cast<char>(header.size() >> 8);
    data += header;
    data.append(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float));
    writeFile(p, data);
}

tensor::Tensor floats(std::vector<float> v, std::vector<std::int64_t> shape = {})
{
    tensor::Tensor t;
    t.dtype = tensor::DType::Float32;
    t.shape = shape.empty() && v.size() != 1 ? std::vector<std::int64_t> { static_cast<std::int64_t>(v.size()) } : shape;
    t.data.resize(v.size() * sizeof(float));
    if (!v.empty()) // memcpy from an empty vector's null data is undefined (UBSan)
        std::memcpy(t.data.data(), v.data(), t.data.size());
    return t;
}

} // namespace

// ---- the real ptdbg 6.0 outputs ----

TEST(PtdbgFixtures, EveryVariantCellForCell)
{
    const auto all = variants();
    if (all.empty())
        PROBESCOPE_FIXTURE_MISSING(legacyDir());
    for (const fs::path& variant : all) {
        SCOPED_TRACE(variant.string());
        const fs::path pairDir = variant.parent_path().parent_path();
        const auto call = readCmd(variant, pairDir);
        ASSERT_TRUE(call) << "cmd.txt not understood";
        std::vector<ptdbg::RankPair> pairs;
        if (call->distributed) {
            auto planned = ptdbg::distributedPairs(call->npuStep, call->benchStep);
            ASSERT_TRUE(planned) << planned.error().format();
            pairs = *planned;
        } else {
            pairs.push_back({ "", call->input });
        }
        std::set<std::string> advisors;
        std::map<std::string, std::shared_ptr<const CompareTable>> tables; // by suffix
        for (const auto& pair : pairs) {
            auto table = ptdbg::comparePkl(pair.input, call->options);
            ASSERT_TRUE(table) << table.error().format();
            advisors.insert(ptdbg::advisorText(**table));
            tables[pair.suffix] = *table;
        }
        // Every compare_result*.csv of the variant (ptdbg's names, the timestamp stripped or not) is checked.
        std::size_t checked = 0;
        for (const auto& e : fs::directory_iterator(variant)) {
            std::string name = e.path().filename().string();
            if (name.rfind("compare_result", 0) != 0 || e.path().extension() != ".csv")
                continue;
            std::string suffix = name.substr(14, name.size() - 14 - 4);
            if (std::regex_search(suffix, std::regex("_[0-9]{14}$")))
                suffix.resize(suffix.size() - 15);
            auto it = tables.find(suffix);
            if (it == tables.end() && suffix.empty() && tables.size() == 1)
                it = tables.begin();
            ASSERT_NE(it, tables.end()) << name << " names no compared pair";
            const CompareTable& table = *it->second;
            ++checked;
            expectSameCsv(tableCsv(table), readAll(e.path()), e.path().string());
            fs::path xlsx = e.path();
            xlsx.replace_extension(".xlsx");
            const auto fills = fixtureFills(xlsx, table.rows.size());
            ASSERT_EQ(fills.size(), table.rows.size()) << "cannot read " << xlsx;
            for (std::size_t r = 0; r < fills.size(); ++r)
                EXPECT_EQ(colorName(table.colors[r]), colorName(fills[r])) << xlsx << " row " << r;
        }
        EXPECT_GT(checked, 0u) << "no compare_result*.csv in the variant";
        // compare_distributed can overwrite one rank's advisor file with another's: any pair's text will do.
        if (fs::exists(variant / "advisor.txt")) {
            EXPECT_TRUE(advisors.count(readAll(variant / "advisor.txt"))) << *advisors.begin();
        }
    }
}

TEST(PtdbgFixtures, Md5WithoutDataFoldersComparesInsteadOfCrashing)
{
    const fs::path pair = legacyDir() / "md5_mode";
    PROBESCOPE_REQUIRE_FIXTURE(pair / "expected_errors/pkl_only/cmd.txt");
    const auto call = readCmd(pair / "expected_errors/pkl_only", pair);
    ASSERT_TRUE(call);
    EXPECT_TRUE(call->input.npuDataDir.empty());
    auto table = ptdbg::comparePkl(call->input, call->options);
    ASSERT_TRUE(table) << table.error().format();
    EXPECT_EQ((*table)->mode, CompareMode::Md5);
    ASSERT_FALSE((*table)->diagnostics.empty());
    EXPECT_EQ((*table)->diagnostics.front().id, "ptdbg.md5-pkl-only");
    // The same table ptdbg writes for this pair when given the data folders.
    expectSameCsv(tableCsv(**table), readAll(pair / "expected/plain/compare_result.csv"), "md5 pkl-only");
}

TEST(PtdbgFixtures, JobWritesCsvAdvisorAndXlsxWithoutReplacingFiles)
{
    const fs::path pair = legacyDir() / "all_mode";
    PROBESCOPE_REQUIRE_FIXTURE(pair / "expected/plain/cmd.txt");
    const auto call = readCmd(pair / "expected/plain", pair);
    ASSERT_TRUE(call);
    TempDir out;
    ptdbg::PtdbgJobOptions options;
    options.xlsx = true;
    options.timestamp = "20240101000000";
    auto first = ptdbg::runPtdbgJob({ { "", call->input } }, out.path(), options);
    ASSERT_TRUE(first) << first.error().format();
    auto second = ptdbg::runPtdbgJob({ { "", call->input } }, out.path(), options);
    ASSERT_TRUE(second);
    const auto& r1 = first->front();
    const auto& r2 = second->front();
    EXPECT_EQ(r1.csvFile.filename(), "compare_result_20240101000000.csv");
    EXPECT_EQ(r2.csvFile.filename(), "compare_result_20240101000000_1.csv");
    EXPECT_EQ(r2.advisorFile.filename(), "advisor_20240101000000_1.txt");
    EXPECT_EQ(readAll(r1.advisorFile), readAll(pair / "expected/plain/advisor.txt"));
    expectSameCsv(readAll(r1.csvFile), readAll(pair / "expected/plain/compare_result.csv"), "job csv");
    // Our workbook carries the same fills as ptdbg's.
    const auto ours = fixtureFills(r1.xlsxFile, r1.table->rows.size());
    const auto theirs = fixtureFills(pair / "expected/plain/compare_result.xlsx", r1.table->rows.size());
    ASSERT_FALSE(ours.empty());
    EXPECT_EQ(ours, theirs);
    // Placed on the call order, the culprit is the noisy gelu.
    EXPECT_TRUE(r1.firstFailure.found);
    EXPECT_EQ(r1.firstFailure.key, "Functional.gelu.0.forward");
}

TEST(PtdbgFixtures, ParsePrintsOneApiAsPtdbg)
{
    const fs::path pkl = legacyDir() / "all_mode/npu/ptdbg_dump_v6.0/step0/rank0/dump.pkl";
    PROBESCOPE_REQUIRE_FIXTURE(pkl);
    auto text = ptdbg::parsePkl(pkl, "Functional.gelu.0.forward");
    ASSERT_TRUE(text) << text.error().format();
    EXPECT_EQ(*text,
              "\nStatistic Info:\n"
              "  [Functional.gelu.0.forward.input.0][dtype: torch.float32][shape: [2, 8]][max: 0.20135369896888733]"
              "[min: -0.4260558485984802][mean: -0.09273742139339447]\n"
              "  [Functional.gelu.0.forward.output][dtype: torch.float32][shape: [2, 8]][max: 1.238542079925537]"
              "[min: -1.3367526531219482][mean: 0.004778686910867691]\n");
    auto none = ptdbg::parsePkl(pkl, "Functional.nothing");
    ASSERT_TRUE(none);
    EXPECT_EQ(*none, "");
}

// ---- ptdbg's rules on hand-made inputs ----

TEST(PtdbgRules, FuzzyNamesDropTheCallIndexOnly)
{
    EXPECT_TRUE(ptdbg::fuzzyNameMatch("Functional.linear.1.forward.input.0", "Functional.linear.2.forward.input.0"));
    EXPECT_FALSE(ptdbg::fuzzyNameMatch("Functional.linear.1.forward.input.0", "Functional.linear.2.forward.input.1"));
    EXPECT_FALSE(ptdbg::fuzzyNameMatch("Functional.linear.1.forward.input.0", "Functional.relu.1.forward.input.0"));
    EXPECT_TRUE(ptdbg::fuzzyNameMatch("Torch.log.0.backward.output.0", "Torch.log.3.backward.output.0"));
    // Underscore names (ptdbg <= 5) have no dots to drop: only identical names match.
    EXPECT_FALSE(ptdbg::fuzzyNameMatch("Functional_linear_1_forward_input.0", "Functional_linear_2_forward_input.0"));
    EXPECT_FALSE(ptdbg::fuzzyNameMatch("Functional.linear.1.forward.input.0", "Functional.linear.1.backward.input.0"));
}

TEST(PtdbgRules, CheckAccuracyAsPtdbg)
{
    EXPECT_EQ(ptdbg::checkAccuracy(Cell::number(0.5), Cell::number(2)), "No");
    EXPECT_EQ(ptdbg::checkAccuracy(Cell::number(0.95), Cell::number(0.01)), "No");
    EXPECT_EQ(ptdbg::checkAccuracy(Cell::number(0.95), Cell::number(0.0005)), "Yes");
    EXPECT_EQ(ptdbg::checkAccuracy(Cell::number(1.0), Cell::number(1.5)), "No");
    EXPECT_EQ(ptdbg::checkAccuracy(Cell::text("unsupported"), Cell::number(0)), "Nan");
    EXPECT_EQ(ptdbg::checkAccuracy(Cell::text("Nan"), Cell::number(0)), "Nan");
    EXPECT_EQ(ptdbg::checkAccuracy(Cell::text("N/A"), Cell::text("N/A")), "No");
    EXPECT_EQ(ptdbg::checkAccuracy(Cell::text("shape unmatched"), Cell::text("shape unmatched")), "Unmatched");
}

TEST(PtdbgMetrics, ZerosGetTheBenchTypesEpsilonInFloat32)
{
    // b == 0 gets float32's eps on both sides: the relative error of 1e-3 vs 0 is computed in float32.
    const auto m = ptdbg::compareArrays(floats({ 1.0f, 1e-3f, 2.0f }), floats({ 1.0f, 0.0f, 2.0f }), false);
    const double eps = 1.1920928955078125e-07;
    const float n = 1e-3f + static_cast<float>(eps);
    const float rel = (n - static_cast<float>(eps)) / static_cast<float>(eps);
    EXPECT_EQ(m.maxRelativeErr, Cell::number(fmt12(rel)));
    EXPECT_EQ(m.maxAbsErr, Cell::number(fmt12(static_cast<double>(n) - eps)));
    EXPECT_EQ(m.oneThousandthErrRatio, Cell::number(fmt12(2.0 / 3.0)));
    EXPECT_EQ(m.message, "");
}

TEST(PtdbgMetrics, SpecialCases)
{
    const double inf = std::numeric_limits<double>::infinity();
    auto m = ptdbg::compareArrays(floats({ 1, static_cast<float>(inf) }), floats({ 1, 2 }), false);
    EXPECT_EQ(m.cosine, Cell::text("N/A"));
    EXPECT_EQ(m.message, "The position of inf or nan in NPU and bench Tensor do not match.");
    m = ptdbg::compareArrays(floats({ 3 }, {}), floats({ 2 }, {}), false);
    EXPECT_EQ(m.cosine, Cell::text("unsupported"));
    EXPECT_EQ(m.maxAbsErr, Cell::number(1.0));
    EXPECT_EQ(m.message, "This is type of scalar data, can not compare.");
    m = ptdbg::compareArrays(floats({ 3 }, { 1 }), floats({ 2 }, { 1 }), true);
    EXPECT_EQ(m.cosine, Cell::text("unsupported")); // one element: "This tensor is scalar." is overwritten
    EXPECT_EQ(m.message, " Fuzzy matching data, the comparison accuracy may be affected.");
    m = ptdbg::compareArrays(floats({ 1, 2 }), floats({ 1, 2, 3 }), false);
    EXPECT_EQ(m.cosine, Cell::text("shape unmatched"));
    m = ptdbg::compareArrays(floats({}, { 0 }), floats({}, { 0 }), false);
    EXPECT_EQ(m.maxAbsErr, Cell::integer(0));
    EXPECT_EQ(m.message, "This is empty data, can not compare.");
}

namespace {

std::string row(const std::string& name, const std::string& shape, double max)
{
    const std::string s = pyFloatRepr(max);
    return "[\"" + name + "\", 0, [], \"torch.float32\", " + shape + ", [" + s + ", " + s + ", " + s + ", " + s + "]]\n";
}

} // namespace

TEST(PtdbgMatching, AnIndexShiftIsRecoveredOnlyByFuzzyMatching)
{
    TempDir dir;
    // The NPU run called linear once more before the compared part, so every later index is one higher.
    writeFile(dir.path() / "npu.pkl", row("Functional.linear.1.forward.input.0", "[2]", 1) +
                                          row("Functional.linear.1.forward.output", "[2]", 2) +
                                          row("Functional.relu.0.forward.input.0", "[2]", 2) +
                                          row("Functional.relu.0.forward.output", "[2]", 2));
    writeFile(dir.path() / "bench.pkl", row("Functional.linear.0.forward.input.0", "[2]", 1) +
                                            row("Functional.linear.0.forward.output", "[2]", 2) +
                                            row("Functional.relu.0.forward.input.0", "[2]", 2) +
                                            row("Functional.relu.0.forward.output", "[2]", 2));
    ptdbg::PtdbgInput input { dir.path() / "npu.pkl", dir.path() / "bench.pkl", {}, {} };
    auto exact = ptdbg::comparePkl(input, {});
    ASSERT_TRUE(exact);
    ASSERT_EQ((*exact)->rows.size(), 4u);
    EXPECT_EQ(excelText((*exact)->rows[0][1]), "Nan"); // linear.1 has no bench
    EXPECT_FALSE((*exact)->matched[0]);
    EXPECT_EQ(excelText((*exact)->rows[0][19]), "No bench data matched.");
    ptdbg::PtdbgOptions fuzzy;
    fuzzy.fuzzy = true;
    auto recovered = ptdbg::comparePkl(input, fuzzy);
    ASSERT_TRUE(recovered);
    ASSERT_EQ((*recovered)->rows.size(), 4u);
    EXPECT_EQ(excelText((*recovered)->rows[0][1]), "Functional.linear.0.forward.input.0");
    EXPECT_TRUE((*recovered)->matched[0]);
    EXPECT_EQ(excelText((*recovered)->rows[0][6]), "0"); // Max diff
}

TEST(PtdbgMatching, StackModeEndsApisAtTheirStackRow)
{
    TempDir dir;
    const std::string stack = "[\"Functional.relu.0.forward.stack_info\", [[\"/x/a.py\", \"3\", \"f\", \"y = relu(x)\"]]]\n";
    const std::string body = row("Functional.relu.0.forward.input.0", "[2]", 1) +
        row("Functional.relu.0.forward.output", "[2]", 1) + stack;
    writeFile(dir.path() / "npu.pkl", body);
    writeFile(dir.path() / "bench.pkl", body);
    ptdbg::PtdbgInput input { dir.path() / "npu.pkl", dir.path() / "bench.pkl", {}, {} };
    ptdbg::PtdbgOptions options;
    options.stackMode = true;
    auto table = ptdbg::comparePkl(input, options);
    ASSERT_TRUE(table) << table.error().format();
    ASSERT_EQ((*table)->header.back(), "NPU_Stack_Info");
    ASSERT_EQ((*table)->rows.size(), 2u);
    EXPECT_EQ(excelText((*table)->rows[0].back()), "[['/x/a.py', '3', 'f', 'y = relu(x)']]");
    EXPECT_EQ(excelText((*table)->rows[1].back()), "None");
    // ptdbg's check_pkl_file: an api_stack dump needs -s, a plain one refuses it, and the two sides must agree.
    auto plain = ptdbg::comparePkl(input, {});
    ASSERT_FALSE(plain);
    EXPECT_EQ(plain.error().id, "compare.option");
    EXPECT_NE(plain.error().message.find("please turn on the stack_mode"), std::string::npos);
    writeFile(dir.path() / "bench.pkl", row("Functional.relu.0.forward.input.0", "[2]", 1)
                                            + row("Functional.relu.0.forward.output", "[2]", 1));
    auto mixed = ptdbg::comparePkl(input, options);
    ASSERT_FALSE(mixed);
    EXPECT_NE(mixed.error().message.find("dump mode of the two files is not same"), std::string::npos);
    writeFile(dir.path() / "npu.pkl", row("Functional.relu.0.forward.input.0", "[2]", 1)
                                          + row("Functional.relu.0.forward.output", "[2]", 1));
    auto refused = ptdbg::comparePkl(input, options);
    ASSERT_FALSE(refused);
    EXPECT_NE(refused.error().message.find("please turn off the stack_mode"), std::string::npos);
}

TEST(PtdbgMatching, RealDataReadsTheNpyOfEachRow)
{
    TempDir dir;
    writeFile(dir.path() / "npu/dump.pkl", row("Torch.add.0.forward.input.0", "[3]", 1) + row("Torch.add.0.forward.output", "[3]", 9));
    writeFile(dir.path() / "bench/dump.pkl", row("Torch.add.0.forward.input.0", "[3]", 1) + row("Torch.add.0.forward.output", "[3]", 1));
    writeNpy(dir.path() / "npu/dump/Torch.add.0.forward.input.0.npy", { 1, 2, 3 });
    writeNpy(dir.path() / "bench/dump/Torch.add.0.forward.input.0.npy", { 1, 2, 3 });
    writeNpy(dir.path() / "npu/dump/Torch.add.0.forward.output.npy", { -1, -2, -3 });
    writeNpy(dir.path() / "bench/dump/Torch.add.0.forward.output.npy", { 1, 2, 3 });
    ptdbg::PtdbgInput input { dir.path() / "npu/dump.pkl", dir.path() / "bench/dump.pkl", dir.path() / "npu/dump",
                              dir.path() / "bench/dump" };
    auto table = ptdbg::comparePkl(input, {});
    ASSERT_TRUE(table) << table.error().format();
    ASSERT_EQ((*table)->rows.size(), 2u);
    EXPECT_EQ(excelText((*table)->rows[0][19]), "Yes");
    EXPECT_EQ(excelText((*table)->rows[1][6]), "-1");
    EXPECT_EQ(excelText((*table)->rows[1][7]), "6");
    EXPECT_EQ(excelText((*table)->rows[1][19]), "No");
    // The input rows match (One Thousandth Err Ratio 1) and the output row does not (0): ptdbg colours it red.
    EXPECT_EQ((*table)->colors[1], RowColor::Red);
    EXPECT_EQ(ptdbg::advisorText(**table),
              "Line: 1\nSuspect Nodes: Torch.add.0.forward.output\nExpert Advice: This is a forward API computation "
              "error. Check the computation implementation.\n");
    // A missing .npy is reported on its row, not as a crash.
    fs::remove(dir.path() / "bench/dump/Torch.add.0.forward.output.npy");
    table = ptdbg::comparePkl(input, {});
    ASSERT_TRUE(table);
    EXPECT_NE(excelText((*table)->rows[1][20]).find("not found"), std::string::npos);
    EXPECT_EQ(excelText((*table)->rows[1][19]), "Nan");
}

TEST(PtdbgInputs, BadRowsNameFileAndLine)
{
    TempDir dir;
    writeFile(dir.path() / "npu.pkl", row("Torch.add.0.forward.input.0", "[3]", 1) + "[\"Torch.add.0.forward.output\", 0, [], \"torch.float32\"]\n");
    writeFile(dir.path() / "bench.pkl", row("Torch.add.0.forward.input.0", "[3]", 1) + "{not json\n");
    ptdbg::PtdbgInput input { dir.path() / "npu.pkl", dir.path() / "bench.pkl", {}, {} };
    auto table = ptdbg::comparePkl(input, {});
    ASSERT_FALSE(table);
    EXPECT_EQ(table.error().id, "ptdbg.row");
    EXPECT_EQ(table.error().location.line, 2u);
    EXPECT_NE(table.error().location.file.find("bench.pkl"), std::string::npos);
    writeFile(dir.path() / "bench.pkl", row("Torch.add.0.forward.input.0", "[3]", 1) + row("Torch.add.0.forward.output", "[3]", 1));
    table = ptdbg::comparePkl(input, {});
    ASSERT_FALSE(table);
    EXPECT_EQ(table.error().id, "ptdbg.row");
    EXPECT_EQ(table.error().location.line, 2u);
    EXPECT_NE(table.error().message.find("4 elements"), std::string::npos) << table.error().message;
}

// Issue 33: one grammar of a .pkl's lines. The ptdbg profile's compare and `parse` refuse exactly the lines the load
// step (dump::readLegacyPkl) refuses, at the same line: they read with the same dump::forEachPklLine.
TEST(PtdbgInputs, TheCompareAndParseReadLinesWithTheLoadStepsGrammar)
{
    std::string deep = "[\"Torch.add.0.forward.output.0\", 0, [], \"torch.float32\", [3], ";
    for (int i = 0; i < 70; ++i)
        deep += "[";
    for (int i = 0; i < 70; ++i)
        deep += "]";
    deep += "]\n";
    const std::string good = row("Torch.add.0.forward.input.0", "[3]", 1) + row("Torch.add.0.forward.output.0", "[3]", 1);
    struct Case
    {
        const char* what;
        std::string line;
    };
    const std::vector<Case> cases {
        { "an empty name", "[\"\", 0, [], \"torch.float32\", [3], [1, 1, 1, 1]]\n" },
        { "a row nested deeper than 64 levels", deep },
        { "a number", "42\n" },
        { "an object", "{\"a\": 1}\n" },
    };
    for (const Case& c : cases) {
        SCOPED_TRACE(c.what);
        TempDir dir;
        writeFile(dir.path() / "npu.pkl", good);
        writeFile(dir.path() / "bench.pkl", good + c.line + row("Torch.add.1.forward.input.0", "[3]", 1));
        auto loaded = dump::readLegacyPkl(dir.path() / "bench.pkl");
        ASSERT_TRUE(loaded) << loaded.error().format();
        bool refusedLine3 = false;
        for (const Diagnostic& d : (*loaded)->diagnostics)
            refusedLine3 = refusedLine3 || (d.severity == Severity::Error && d.location.line == 3u);
        EXPECT_TRUE(refusedLine3) << "the load step refuses line 3";
        ptdbg::PtdbgInput input { dir.path() / "npu.pkl", dir.path() / "bench.pkl", {}, {} };
        auto table = ptdbg::comparePkl(input, {});
        ASSERT_FALSE(table) << "the ptdbg compare took a line the load step refuses";
        EXPECT_EQ(table.error().id, "ptdbg.row");
        EXPECT_EQ(table.error().location.line, 3u) << table.error().format();
        auto parsed = ptdbg::parsePkl(dir.path() / "bench.pkl", "Torch.add.1");
        ASSERT_FALSE(parsed) << "ptdbg's parse took a line the load step refuses";
        EXPECT_EQ(parsed.error().location.line, 3u) << parsed.error().format();
    }
}

TEST(PtdbgInputs, CompareJsonAndRankPairs)
{
    TempDir dir;
    writeFile(dir.path() / "c.json", R"({"npu_pkl_path": "a.pkl", "bench_pkl_path": "b.pkl", "npu_dump_data_dir": "a"})");
    ASSERT_TRUE(ptdbg::isPtdbgCompareJson(dir.path() / "c.json"));
    auto input = ptdbg::readPtdbgCompareJson(dir.path() / "c.json");
    ASSERT_TRUE(input);
    EXPECT_EQ(input->npuPkl, "a.pkl");
    EXPECT_EQ(input->npuDataDir, "a");
    EXPECT_TRUE(input->benchDataDir.empty());
    writeFile(dir.path() / "m.json", R"({"npu_path": "a", "bench_path": "b"})");
    EXPECT_FALSE(ptdbg::isPtdbgCompareJson(dir.path() / "m.json"));
    EXPECT_FALSE(ptdbg::readPtdbgCompareJson(dir.path() / "m.json"));

    for (const char* side : { "npu", "bench" }) {
        for (const char* rank : { "rank2", "rank10" }) {
            writeFile(dir.path() / side / rank / "dump.pkl", row("Torch.add.0.forward.input.0", "[3]", 1));
            fs::create_directories(dir.path() / side / rank / "dump");
        }
    }
    auto pairs = ptdbg::distributedPairs(dir.path() / "npu", dir.path() / "bench");
    ASSERT_TRUE(pairs) << pairs.error().format();
    ASSERT_EQ(pairs->size(), 2u);
    EXPECT_EQ((*pairs)[0].suffix, "_rank10-rank10"); // sorted as text, as Python sorts the names
    EXPECT_EQ((*pairs)[1].input.npuDataDir, dir.path() / "npu/rank2/dump");
    // The step folder is read by the one discovery of dumps (issue 33): a file beside the rank folders is ignored
    // there as in every profile, a folder that is no rank folder is refused, naming it, as ptdbg refuses it.
    writeFile(dir.path() / "npu/notes.txt", "x");
    EXPECT_TRUE(ptdbg::distributedPairs(dir.path() / "npu", dir.path() / "bench"));
    fs::create_directories(dir.path() / "npu/notes");
    auto refused = ptdbg::distributedPairs(dir.path() / "npu", dir.path() / "bench");
    ASSERT_FALSE(refused);
    EXPECT_NE(refused.error().message.find("notes"), std::string::npos) << refused.error().message;
    fs::remove(dir.path() / "npu/notes");
    fs::create_directories(dir.path() / "bench/rank3");
    refused = ptdbg::distributedPairs(dir.path() / "npu", dir.path() / "bench");
    ASSERT_FALSE(refused) << "a rank folder without a .pkl is refused";
    EXPECT_NE(refused.error().message.find("rank3"), std::string::npos) << refused.error().message;
}

// ---- legacy dumps in the msprobe profiles and the GUI's core path ----

TEST(PtdbgLegacy, SessionComparesA60DumpWithMsprobeRulesAndFindsTheGelu)
{
    const fs::path pair = legacyDir() / "all_mode";
    PROBESCOPE_REQUIRE_FIXTURE(pair / "npu");
    auto plan = session::planSession(pair / "npu", pair / "bench");
    ASSERT_TRUE(plan) << plan.error().format();
    ASSERT_EQ(plan->pairs.size(), 1u);
    auto analysis = session::analysePair(plan->pairs[0], {});
    ASSERT_TRUE(analysis) << analysis.error().format();
    EXPECT_EQ((*analysis)->table->mode, CompareMode::RealData);
    EXPECT_TRUE((*analysis)->firstFailure.found) << (*analysis)->firstFailure.summary;
    EXPECT_EQ((*analysis)->firstFailure.key, "Functional.gelu.0.forward");
    // The tree comes from call order: the gelu ran sixth.
    EXPECT_EQ((*analysis)->firstFailure.executionIndex, 5u);

    // ptdbg's input_param opens the same pair (paths relative to the current folder, as ptdbg reads them).
    TempDir dir;
    const fs::path rank = "ptdbg_dump_v6.0/step0/rank0/dump.pkl";
    writeFile(dir.path() / "compare.json", "{\"npu_pkl_path\": \"" + (pair / "npu" / rank).string()
                                               + "\", \"bench_pkl_path\": \"" + (pair / "bench" / rank).string() + "\"}");
    auto fromJson = session::planSession(dir.path() / "compare.json", {});
    ASSERT_TRUE(fromJson) << fromJson.error().format();
    ASSERT_EQ(fromJson->pairs.size(), 1u);
    EXPECT_EQ(fromJson->pairs[0].npu.dumpFile, pair / "npu" / rank);
}

TEST(PtdbgLegacy, UnderscoreNamedDumpsCompareWithMsprobeRules)
{
    const fs::path dir = probescope::testing::testDataDir() / "legacy/tensor/ptdbg_dump_v4.0";
    TempDir out;
    CompareInput input { dir, dir, std::nullopt };
    JobOptions options;
    options.timestamp = "20240101000000";
    auto results = runCompareJob(input, out.path(), options);
    ASSERT_TRUE(results) << results.error().format();
    ASSERT_EQ(results->size(), 1u);
    const auto& table = *results->front().table;
    ASSERT_FALSE(table.rows.empty());
    EXPECT_EQ(results->front().suffix, "_rank0-rank0");
    // Every tensor of a dump compared with itself is found and equal.
    const int accuracy = table.column("Accuracy Reached or Not");
    ASSERT_GE(accuracy, 0);
    std::size_t yes = 0;
    for (const auto& row : table.rows)
        yes += excelText(row[static_cast<std::size_t>(accuracy)]) == "Yes";
    EXPECT_EQ(yes, 11u);
    EXPECT_EQ(excelText(table.rows[0][0]), "Functional_conv2d_0_forward_input.0");
    EXPECT_FALSE(results->front().firstFailure.found);
}

TEST(PtdbgFixtures, ThreadCountNeverChangesTheTable)
{
    const fs::path pair = legacyDir() / "all_mode";
    PROBESCOPE_REQUIRE_FIXTURE(pair / "expected/plain/cmd.txt");
    auto call = readCmd(pair / "expected/plain", pair);
    ASSERT_TRUE(call);
    call->options.threads = 1;
    auto one = ptdbg::comparePkl(call->input, call->options);
    call->options.threads = 5;
    auto five = ptdbg::comparePkl(call->input, call->options);
    ASSERT_TRUE(one && five);
    EXPECT_EQ((*one)->rows, (*five)->rows);
    EXPECT_EQ((*one)->colors, (*five)->colors);
}

// The ptdbg profile behind the profile seam: the one pipeline (runCompareJob: plan with the folder walker, load,
// compare through ptdbg's rules, write) gives the files ptdbg's compare_distributed gives.
TEST(PtdbgSeam, ThePipelineWritesWhatPtdbgsJobWrites)
{
    for (const char* mode : { "all_mode", "summary_mode", "md5_mode" }) {
        SCOPED_TRACE(mode);
        const fs::path npu = fixturesDir() / "legacy_ptdbg" / mode / "npu" / "ptdbg_dump_v6.0" / "step0";
        const fs::path bench = fixturesDir() / "legacy_ptdbg" / mode / "bench" / "ptdbg_dump_v6.0" / "step0";
        probescope::testing::TempDir out;
        JobOptions options;
        options.profile = Profile::Ptdbg;
        options.timestamp = "20261126000000";
        auto viaSeam = runCompareJob(CompareInput { npu, bench, std::nullopt }, out.path() / "seam", options);
        ASSERT_TRUE(viaSeam.ok()) << viaSeam.error().format();
        auto pairs = ptdbg::distributedPairs(npu, bench);
        ASSERT_TRUE(pairs.ok()) << pairs.error().format();
        ptdbg::PtdbgJobOptions jobOptions;
        jobOptions.timestamp = options.timestamp;
        auto viaJob = ptdbg::runPtdbgJob(*pairs, out.path() / "job", jobOptions);
        ASSERT_TRUE(viaJob.ok()) << viaJob.error().format();
        ASSERT_EQ(viaSeam->size(), viaJob->size());
        for (std::size_t i = 0; i < viaSeam->size(); ++i) {
            const auto& a = (*viaSeam)[i];
            const auto& b = (*viaJob)[i];
            ASSERT_FALSE(a.csvFile.empty());
            EXPECT_EQ(a.csvFile.filename(), b.csvFile.filename());
            EXPECT_EQ(probescope::testing::readAll(a.csvFile), probescope::testing::readAll(b.csvFile));
            EXPECT_EQ(a.advisorFile.filename(), b.advisorFile.filename());
            EXPECT_EQ(probescope::testing::readAll(a.advisorFile), probescope::testing::readAll(b.advisorFile));
            EXPECT_EQ(a.firstFailure.key, b.firstFailure.key);
        }
    }
}

// ---- issue 25: hostile inputs of the ptdbg profile ----

namespace {

/// npu/dump.pkl + npu/dump/ and bench/dump.pkl + bench/dump/ under `root`: one add API, as ptdbg lays them out.
ptdbg::PtdbgInput hostilePair(const fs::path& root, const std::string& npuInput = "Torch.add.0.forward.input.0")
{
    writeFile(root / "npu/dump.pkl", row(npuInput, "[3]", 3) + row("Torch.add.0.forward.output", "[3]", 3));
    writeFile(root / "bench/dump.pkl", row(npuInput, "[3]", 3) + row("Torch.add.0.forward.output", "[3]", 3));
    for (const char* side : { "npu", "bench" }) {
        writeNpy(root / side / "dump/Torch.add.0.forward.input.0.npy", { 1, 2, 3 });
        writeNpy(root / side / "dump/Torch.add.0.forward.output.npy", { 1, 2, 3 });
    }
    return ptdbg::PtdbgInput { root / "npu/dump.pkl", root / "bench/dump.pkl", root / "npu/dump", root / "bench/dump" };
}

bool hasDiagnostic(const Diagnostics& list, std::string_view id)
{
    return std::any_of(list.begin(), list.end(), [&](const Diagnostic& d) { return d.id == id && d.severity == Severity::Error; });
}

} // namespace

// A row named ../../outside/… read a file outside the dump (issue 25): it is refused, never read, and the run fails.
TEST(PtdbgHostile, AnEscapingRowNameReadsNothingOutsideAndIsAnError)
{
    TempDir dir;
    const std::string escaping = "../../../outside/Torch.add.0.forward.input.0"; // from run/npu/dump to outside/
    const auto input = hostilePair(dir.path() / "run", escaping);
    // The planted file holds values no dump has: a table computed from it would show MaxAbsErr 0 (it is read on
    // both sides) or these numbers.
    writeNpy(dir.path() / "outside/Torch.add.0.forward.input.0.npy", { 1234, 5678, 9 });
    ASSERT_TRUE(fs::exists(input.npuDataDir / (escaping + ".npy")));
    auto table = ptdbg::comparePkl(input, {});
    ASSERT_TRUE(table) << table.error().format();
    ASSERT_EQ((*table)->rows.size(), 2u);
    EXPECT_EQ(excelText((*table)->rows[0][0]), escaping);
    EXPECT_EQ(excelText((*table)->rows[0][7]), "Nan"); // MaxAbsErr: nothing was compared
    const std::string message = excelText((*table)->rows[0][20]);
    EXPECT_NE(message.find("unreadable"), std::string::npos) << message;
    EXPECT_NE(message.find("[tensor.path-escape]"), std::string::npos) << message;
    EXPECT_EQ(message.find("not found"), std::string::npos) << message;
    EXPECT_TRUE(hasDiagnostic((*table)->diagnostics, "tensor.path-escape"));

    // The job (and so the CLI) reports it as an input error: exit 1.
    const fs::path outDir = dir.path() / "out";
    auto results = ptdbg::runPtdbgJob({ { "", input } }, outDir, {});
    ASSERT_TRUE(results) << results.error().format();
    EXPECT_TRUE(hasDiagnostic(results->front().inputDiagnostics, "tensor.path-escape"));
}

// A data folder that is a link to the bench's own folder compared the bench with itself: "no failing node".
TEST(PtdbgHostile, ADataFolderLinkedToTheBenchsIsRefused)
{
    TempDir dir;
    auto input = hostilePair(dir.path());
    writeNpy(dir.path() / "npu/dump/Torch.add.0.forward.output.npy", { -1, -2, -3 }); // the NPU's real output differs
    fs::rename(dir.path() / "npu/dump", dir.path() / "npu/real");
    fs::create_directory_symlink(dir.path() / "bench/dump", dir.path() / "npu/dump");
    auto table = ptdbg::comparePkl(input, {});
    ASSERT_FALSE(table);
    EXPECT_EQ(table.error().id, "tensor.path-escape");
    EXPECT_NE(table.error().location.file.find("npu/dump"), std::string::npos) << table.error().format();
    // The job refuses that pair (the other rank pairs would still run) and writes nothing for it.
    auto job = ptdbg::runPtdbgJob({ { "", input } }, dir.path() / "job", {});
    ASSERT_TRUE(job) << job.error().format();
    EXPECT_TRUE(job->front().refused);
    EXPECT_TRUE(job->front().csvFile.empty());
    EXPECT_TRUE(hasDiagnostic(job->front().inputDiagnostics, "tensor.path-escape"));
    // A link that stays inside the dump folder is followed.
    fs::remove(dir.path() / "npu/dump");
    fs::create_directory_symlink("real", dir.path() / "npu/dump");
    table = ptdbg::comparePkl(input, {});
    ASSERT_TRUE(table) << table.error().format();
    EXPECT_EQ(excelText((*table)->rows[1][19]), "No");
    // The pipeline's ptdbg profile refuses the linked folder the same way (its load step).
    fs::remove(dir.path() / "npu/dump");
    fs::create_directory_symlink(dir.path() / "bench/dump", dir.path() / "npu/dump");
    const fs::path outDir = dir.path() / "out";
    JobOptions options;
    options.profile = Profile::Ptdbg;
    options.timestamp = "20260101000000";
    auto viaSeam = runCompareJob(CompareInput { input.npuPkl, input.benchPkl, std::nullopt }, outDir, options);
    ASSERT_TRUE(viaSeam) << viaSeam.error().format();
    ASSERT_EQ(viaSeam->size(), 1u);
    EXPECT_TRUE(viaSeam->front().refused);
    EXPECT_TRUE(hasDiagnostic(viaSeam->front().inputDiagnostics, "tensor.path-escape"));
}

// A corrupt .npy of a .pkl dump was "not found." and "no failing node" with exit 0.
TEST(PtdbgHostile, ACorruptNpyIsUnreadableNeverNotFound)
{
    TempDir dir;
    const auto input = hostilePair(dir.path());
    writeFile(dir.path() / "npu/dump/Torch.add.0.forward.input.0.npy", "\x93NUMPY\x01\x00garbage that is no header");
    auto table = ptdbg::comparePkl(input, {});
    ASSERT_TRUE(table) << table.error().format();
    const std::string message = excelText((*table)->rows[0][20]);
    EXPECT_NE(message.find("unreadable"), std::string::npos) << message;
    EXPECT_NE(message.find("Torch.add.0.forward.input.0.npy"), std::string::npos) << message;
    EXPECT_EQ(message.find("not found"), std::string::npos) << message;
    EXPECT_TRUE(hasDiagnostic((*table)->diagnostics, "compare.tensor-unreadable"));
    const fs::path outDir = dir.path() / "out";
    auto results = ptdbg::runPtdbgJob({ { "", input } }, outDir, {});
    ASSERT_TRUE(results) << results.error().format();
    EXPECT_TRUE(hasDiagnostic(results->front().inputDiagnostics, "compare.tensor-unreadable"));

    // The msprobe 1.2 profile on the same .pkl dump (rows compared by msprobe's rules) says the same.
    JobOptions options;
    options.timestamp = "20260101000000";
    auto msprobe = runCompareJob(CompareInput { input.npuPkl, input.benchPkl, std::nullopt }, outDir / "m", options);
    ASSERT_TRUE(msprobe) << msprobe.error().format();
    ASSERT_EQ(msprobe->size(), 1u);
    EXPECT_TRUE(hasDiagnostic(msprobe->front().inputDiagnostics, "compare.tensor-unreadable"));
    const auto& t = *msprobe->front().table;
    bool unreadableRow = false;
    for (std::size_t r = 0; r < t.rows.size(); ++r)
        unreadableRow = unreadableRow || excelText(t.rows[r][static_cast<std::size_t>(t.column("Err_message"))]).find("unreadable") != std::string::npos;
    EXPECT_TRUE(unreadableRow);
    // A missing file keeps the tools' own "not found.".
    fs::remove(dir.path() / "npu/dump/Torch.add.0.forward.input.0.npy");
    table = ptdbg::comparePkl(input, {});
    ASSERT_TRUE(table);
    EXPECT_NE(excelText((*table)->rows[0][20]).find("not found."), std::string::npos);
    EXPECT_FALSE(hasDiagnostic((*table)->diagnostics, "compare.tensor-unreadable"));
}

// A 35 KB row name overflowed the stack in std::regex (check_stack_mode): now a linear scan.
TEST(PtdbgHostile, A35KilobyteRowNameIsComparedWithoutCrashing)
{
    TempDir dir;
    const std::string api = "Torch." + std::string(35000, 'a') + ".0.forward";
    writeFile(dir.path() / "npu.pkl", row(api + ".input.0", "[3]", 1) + row(api + ".output", "[3]", 1));
    writeFile(dir.path() / "bench.pkl", row(api + ".input.0", "[3]", 1) + row(api + ".output", "[3]", 2));
    ptdbg::PtdbgInput input { dir.path() / "npu.pkl", dir.path() / "bench.pkl", {}, {} };
    auto table = ptdbg::comparePkl(input, {});
    ASSERT_TRUE(table) << table.error().format();
    EXPECT_EQ((*table)->rows.size(), 2u);
    // With a stack row after it, the same long API is recognised as stack mode (ptdbg's pattern, without regex).
    writeFile(dir.path() / "npu.pkl", row(api + ".input.0", "[3]", 1) + row(api + ".output", "[3]", 1) + "[\"" + api
                                           + ".stack_info\", [\"File a.py, line 1, in f\"]]\n");
    writeFile(dir.path() / "bench.pkl", readAll(dir.path() / "npu.pkl"));
    ptdbg::PtdbgOptions stack;
    stack.stackMode = true;
    table = ptdbg::comparePkl(input, stack);
    ASSERT_TRUE(table) << table.error().format();
    table = ptdbg::comparePkl(input, {});
    ASSERT_FALSE(table);
    EXPECT_EQ(table.error().id, "compare.option"); // "please turn on the stack_mode"
}

// A damaged .pkl goes through the load step the msprobe dumps go through: refused with file:line:col, or compared in
// part with --salvage (and the run still fails).
TEST(PtdbgHostile, ADamagedPklIsRefusedUnlessSalvaged)
{
    TempDir dir;
    auto input = hostilePair(dir.path());
    const std::string good = readAll(input.benchPkl);
    const fs::path outDir = dir.path() / "out";
    ptdbg::PtdbgJobOptions options;
    options.timestamp = "20260101000000";
    const auto cases = std::vector<std::pair<std::string, std::string>> {
        { good.substr(0, good.size() - 20), "pkl.truncated" },                         // cut inside the last row
        { good + "[\"Torch.add.1.forward.input.0\", 0, [], \"torch.f\xff\", [3], [1, 1, 1, 1]]\n", "pkl.utf8" },
        { good + "[\"Torch.add.1.forward.input.0\", 0, [], \"torch.float32\", \"x\", [1, 1, 1, 1]]\n", "pkl.row" },
    };
    for (const auto& [text, id] : cases) {
        SCOPED_TRACE(id);
        writeFile(input.benchPkl, text);
        auto refused = ptdbg::runPtdbgJob({ { "", input } }, outDir / "refused", options);
        ASSERT_TRUE(refused) << refused.error().format();
        ASSERT_EQ(refused->size(), 1u);
        EXPECT_TRUE(refused->front().refused);
        EXPECT_TRUE(refused->front().csvFile.empty());
        const auto found = std::find_if(refused->front().inputDiagnostics.begin(), refused->front().inputDiagnostics.end(),
                                        [&](const Diagnostic& d) { return d.id == id; });
        ASSERT_NE(found, refused->front().inputDiagnostics.end());
        EXPECT_NE(found->location.file.find("bench/dump.pkl"), std::string::npos);
        EXPECT_GT(found->location.line, 0u);
        EXPECT_GT(found->location.column, 0u);

        ptdbg::PtdbgJobOptions salvage = options;
        salvage.salvage = true;
        auto partial = ptdbg::runPtdbgJob({ { "", input } }, outDir / "salvaged", salvage);
        ASSERT_TRUE(partial) << partial.error().format();
        EXPECT_FALSE(partial->front().refused);
        EXPECT_FALSE(partial->front().salvaged.empty());
        EXPECT_TRUE(hasErrors(partial->front().inputDiagnostics)); // the CLI still exits 1
        EXPECT_FALSE(partial->front().csvFile.empty());
    }
}

// ---- issue 26: the ptdbg profile on the shared kernels, .npy files streamed, one thread pool ----

namespace {

using tensor::DType;

/// The element-by-element compare_by_op the kernels replaced (kept here as the reference): float64 copies,
/// the in-place eps, long double sums, numpy's max.
namespace reference {

constexpr double kFloatEpsilon = 2.220446049250313e-16;

bool isFloat(DType t)
{
    return t == DType::Float16 || t == DType::Float32 || t == DType::Float64 || t == DType::BFloat16;
}

DType promote(DType a, DType b)
{
    if (a == DType::Float64 || b == DType::Float64 || !isFloat(a) || !isFloat(b))
        return DType::Float64;
    if (a == DType::Float32 || b == DType::Float32 || a == DType::BFloat16 || b == DType::BFloat16)
        return DType::Float32;
    return DType::Float16;
}

double roundTo(DType t, double x)
{
    if (t == DType::Float16)
        return tensor::halfToFloat(tensor::floatToHalf(static_cast<float>(x)));
    if (t == DType::Float32 || t == DType::BFloat16)
        return static_cast<float>(x);
    return x;
}

double subIn(DType t, double a, double b)
{
    return t == DType::Float64 ? a - b : roundTo(t, static_cast<float>(a) - static_cast<float>(b));
}

double divIn(DType t, double a, double b)
{
    return t == DType::Float64 ? a / b : roundTo(t, static_cast<float>(a) / static_cast<float>(b));
}

double addIn(DType t, double a, double b)
{
    return t == DType::Float64 ? a + b : roundTo(t, static_cast<float>(a) + static_cast<float>(b));
}

double epsOf(DType t)
{
    return t == DType::Float16 ? 0.0009765625 : t == DType::Float64 ? kFloatEpsilon : 1.1920928955078125e-07;
}

/// compareArrays as it was, for 1-d arrays of two elements or more.
ptdbg::PtdbgMetrics compare(const tensor::Tensor& npuTensor, const tensor::Tensor& benchTensor)
{
    ptdbg::PtdbgMetrics m;
    const std::size_t count = static_cast<std::size_t>(npuTensor.numel());
    std::vector<double> n(count), b(count), rel(count);
    for (std::size_t i = 0; i < count; ++i) {
        n[i] = npuTensor.valueAt(static_cast<std::int64_t>(i));
        b[i] = benchTensor.valueAt(static_cast<std::int64_t>(i));
    }
    const DType nType = npuTensor.dtype;
    const DType bType = benchTensor.dtype;
    DType relType = DType::Float64;
    if (isFloat(bType)) {
        const double eps = epsOf(bType);
        for (std::size_t i = 0; i < count; ++i) {
            if (b[i] == 0) {
                b[i] = addIn(bType, b[i], eps);
                n[i] = isFloat(nType) ? addIn(nType, n[i], roundTo(bType, eps)) : n[i] + eps;
            }
        }
        relType = promote(nType, bType);
        for (std::size_t i = 0; i < count; ++i)
            rel[i] = std::abs(divIn(relType, subIn(relType, n[i], b[i]), b[i]));
    } else {
        for (std::size_t i = 0; i < count; ++i) {
            double nv = n[i];
            double bv = b[i];
            if (bv == 0) {
                bv += kFloatEpsilon;
                nv += kFloatEpsilon;
            }
            rel[i] = std::abs((nv - bv) / bv);
        }
    }
    bool anySpecial = false;
    bool same = true;
    for (std::size_t i = 0; i < count; ++i) {
        anySpecial = anySpecial || !std::isfinite(n[i]) || !std::isfinite(b[i]);
        same = same && std::isinf(n[i]) == std::isinf(b[i]) && std::isnan(n[i]) == std::isnan(b[i]);
    }
    if (anySpecial) {
        if (!same) {
            m.cosine = m.maxAbsErr = m.maxRelativeErr = m.oneThousandthErrRatio = m.fiveThousandthsErrRatio =
                Cell::text("N/A");
            m.message = "The position of inf or nan in NPU and bench Tensor do not match.";
            return m;
        }
        for (std::size_t i = 0; i < count; ++i) {
            if (!std::isfinite(n[i]))
                n[i] = 0;
            if (!std::isfinite(b[i]))
                b[i] = 0;
        }
    }
    long double dot = 0, nn = 0, bb = 0;
    for (std::size_t i = 0; i < count; ++i) {
        dot += static_cast<long double>(n[i]) * b[i];
        nn += static_cast<long double>(n[i]) * n[i];
        bb += static_cast<long double>(b[i]) * b[i];
    }
    const double aNorm = std::sqrt(static_cast<double>(nn));
    const double bNorm = std::sqrt(static_cast<double>(bb));
    if (aNorm <= kFloatEpsilon && bNorm <= kFloatEpsilon)
        m.cosine = Cell::number(1.0);
    else if (aNorm <= kFloatEpsilon || bNorm <= kFloatEpsilon)
        m.cosine = Cell::text("Nan");
    else {
        const double v = fmt12(static_cast<double>(dot) / (aNorm * bNorm));
        m.cosine = std::isnan(v) ? Cell::text("Nan") : Cell::number(v > 0.99999 ? 1.0 : v);
    }
    double maxAbs = 0;
    for (std::size_t i = 0; i < count; ++i)
        maxAbs = std::max(maxAbs, std::abs(n[i] - b[i]));
    m.maxAbsErr = Cell::number(fmt12(maxAbs));
    double maxRel = -std::numeric_limits<double>::infinity();
    for (const double r : rel)
        maxRel = std::isnan(maxRel) || std::isnan(r) ? std::numeric_limits<double>::quiet_NaN() : std::max(maxRel, r);
    if (std::isnan(maxRel)) {
        m.maxRelativeErr = Cell::text("Nan");
        m.message = "Cannot compare by MaxRelativeError, the data contains nan in dump data.";
    } else {
        m.maxRelativeErr = Cell::number(fmt12(maxRel));
    }
    const double t1 = relType == DType::Float16 ? 0.0010004043579101562 : roundTo(relType, 0.001);
    const double t5 = relType == DType::Float16 ? 0.005001068115234375 : roundTo(relType, 0.005);
    std::size_t below1 = 0, below5 = 0;
    for (const double r : rel) {
        below1 += r < t1;
        below5 += r < t5;
    }
    m.oneThousandthErrRatio = Cell::number(fmt12(static_cast<double>(below1) / static_cast<double>(count)));
    m.fiveThousandthsErrRatio = Cell::number(fmt12(static_cast<double>(below5) / static_cast<double>(count)));
    return m;
}

} // namespace reference

void expectSameMetrics(const ptdbg::PtdbgMetrics& a, const ptdbg::PtdbgMetrics& b)
{
    EXPECT_EQ(a.cosine, b.cosine);
    EXPECT_EQ(a.maxAbsErr, b.maxAbsErr);
    EXPECT_EQ(a.maxRelativeErr, b.maxRelativeErr);
    EXPECT_EQ(a.oneThousandthErrRatio, b.oneThousandthErrRatio);
    EXPECT_EQ(a.fiveThousandthsErrRatio, b.fiveThousandthsErrRatio);
    EXPECT_EQ(a.message, b.message);
}

/// A float32 .npy of `values` (1-d), written as numpy writes it.
void writeNpy32(const fs::path& p, const std::vector<float>& values)
{
    writeNpy(p, values);
}

/// npu/dump.pkl + npu/dump/*.npy and the same for bench: one API whose input and output hold `count` float32 each.
ptdbg::PtdbgInput largePair(const fs::path& root, std::size_t count)
{
    const std::string shape = "[" + std::to_string(count) + "]";
    const std::string pkl = row("Torch.mul.0.forward.input.0", shape, 1) + row("Torch.mul.0.forward.output", shape, 1);
    writeFile(root / "npu/dump.pkl", pkl);
    writeFile(root / "bench/dump.pkl", pkl);
    std::vector<float> n(count), b(count);
    std::uint64_t state = 12345;
    auto next = [&] {
        state = state * 6364136223846793005ULL + 1442695040888963407ULL;
        return static_cast<double>(state >> 11) / 9007199254740992.0;
    };
    for (std::size_t i = 0; i < count; ++i) {
        b[i] = static_cast<float>(next() * 4 - 2);
        n[i] = static_cast<float>(b[i] * (1 + (next() - 0.5) * 1e-3));
        if (i % 997 == 0)
            b[i] = 0; // ptdbg's eps at bench zeros, in many blocks
    }
    writeNpy32(root / "npu/dump/Torch.mul.0.forward.input.0.npy", n);
    writeNpy32(root / "bench/dump/Torch.mul.0.forward.input.0.npy", b);
    n[count / 2] = b[count / 2] = std::numeric_limits<float>::infinity(); // inf at the same place: MaxRel Nan
    writeNpy32(root / "npu/dump/Torch.mul.0.forward.output.npy", n);
    writeNpy32(root / "bench/dump/Torch.mul.0.forward.output.npy", b);
    return ptdbg::PtdbgInput { root / "npu/dump.pkl", root / "bench/dump.pkl", root / "npu/dump", root / "bench/dump" };
}

class CancelAfter final : public ProgressSink
{
public:
    explicit CancelAfter(std::uint64_t rows)
        : m_rows(rows)
    {
    }
    void setRange(std::uint64_t) override { }
    void advance(std::uint64_t done) override { m_done = done; }
    bool isCancelled() const override { return m_done.load() >= m_rows; }

private:
    std::uint64_t m_rows;
    std::atomic<std::uint64_t> m_done { 0 };
};

} // namespace

// The kernels give the cells the element-by-element rules gave, for every dtype pair ptdbg meets, across chunk
// (65536) and block (4096) boundaries, with bench zeros, inf/NaN in place, and for any thread count.
TEST(PtdbgKernels, SameCellsAsTheElementwiseRulesOnEveryDtypePair)
{
    const std::size_t count = 70001;
    std::uint64_t state = 7;
    auto next = [&] {
        state = state * 6364136223846793005ULL + 1442695040888963407ULL;
        return static_cast<double>(state >> 11) / 9007199254740992.0;
    };
    std::vector<double> base(count), noisy(count);
    for (std::size_t i = 0; i < count; ++i) {
        base[i] = std::round((next() * 8 - 4) * 64) / 64; // representable in float16 and the integers when scaled
        noisy[i] = base[i] * (1 + (next() - 0.5) * 2e-3);
        if (i % 101 == 0)
            base[i] = 0;
        if (i % 211 == 0)
            noisy[i] = 0;
    }
    const std::pair<DType, DType> pairs[] = {
        { DType::Float32, DType::Float32 }, { DType::Float16, DType::Float32 }, { DType::Float32, DType::Float16 },
        { DType::Float16, DType::Float16 }, { DType::Float64, DType::Float32 }, { DType::Float32, DType::Float64 },
        { DType::Int32, DType::Float32 },   { DType::Float32, DType::Int64 },   { DType::Int64, DType::Int32 },
    };
    ThreadSplitter two(2);
    for (const auto& [nt, bt] : pairs) {
        for (const int variant : { 0, 1, 2 }) {
            SCOPED_TRACE(std::string(tensor::torchName(nt)) + " vs " + tensor::torchName(bt) + " variant "
                         + std::to_string(variant));
            std::vector<double> n = noisy;
            std::vector<double> b = base;
            const bool floats = reference::isFloat(nt) && reference::isFloat(bt);
            if (variant == 1 && floats) {
                n[5000] = b[5000] = std::numeric_limits<double>::quiet_NaN();
                n[66000] = b[66000] = -std::numeric_limits<double>::infinity();
            } else if (variant == 2) {
                n.assign(count, 0.0); // an all-zero NPU side
            }
            const tensor::Tensor npu = probescope::testing::makeTensor(nt, n);
            const tensor::Tensor bench = probescope::testing::makeTensor(bt, b);
            const ptdbg::PtdbgMetrics expected = reference::compare(npu, bench);
            expectSameMetrics(ptdbg::compareArrays(npu, bench, false), expected);
            // The baseline build of the kernels (no AVX2/F16C) gives the same cells.
            compare::kernels::forceGenericKernels(true);
            expectSameMetrics(ptdbg::compareArrays(npu, bench, false), expected);
            compare::kernels::forceGenericKernels(false);
            const auto split = ptdbg::compareSides(pairSideOf(npu), pairSideOf(bench), false, two);
            ASSERT_TRUE(split);
            expectSameMetrics(*split, expected);
        }
    }
}

// .npy files above 1 MiB are read a chunk at a time from the file: the same cells as the arrays loaded whole, and
// the same table (and the job's CSV byte for byte) with -j1 and -j2.
TEST(PtdbgStream, LargeNpyPairsAreStreamedAndTheThreadCountChangesNothing)
{
    TempDir dir;
    const ptdbg::PtdbgInput input = largePair(dir.path(), 300000); // 1.2 MB a file
    ptdbg::PtdbgOptions options;
    options.threads = 1;
    auto one = ptdbg::comparePkl(input, options);
    options.threads = 2;
    auto two = ptdbg::comparePkl(input, options);
    ASSERT_TRUE(one && two) << (one ? two.error().format() : one.error().format());
    ASSERT_EQ((*one)->rows.size(), 2u);
    EXPECT_EQ((*one)->rows, (*two)->rows);
    for (std::size_t r = 0; r < 2; ++r) {
        const std::string name = r == 0 ? "Torch.mul.0.forward.input.0.npy" : "Torch.mul.0.forward.output.npy";
        auto n = tensor::loadNpy(input.npuDataDir / name);
        auto b = tensor::loadNpy(input.benchDataDir / name);
        ASSERT_TRUE(n && b);
        const ptdbg::PtdbgMetrics expected = reference::compare(*n, *b);
        const auto& cells = (*one)->rows[r];
        EXPECT_EQ(cells[6], expected.cosine) << name;
        EXPECT_EQ(cells[7], expected.maxAbsErr) << name;
        EXPECT_EQ(cells[8], expected.maxRelativeErr) << name;
        EXPECT_EQ(cells[9], expected.oneThousandthErrRatio) << name;
        EXPECT_EQ(cells[10], expected.fiveThousandthsErrRatio) << name;
        EXPECT_EQ(excelText(cells[20]), expected.message) << name;
    }
    EXPECT_EQ(excelText((*one)->rows[1][8]), "Nan"); // the inf in place

    std::vector<ptdbg::RankPair> pairs { { "", input } };
    ptdbg::PtdbgJobOptions job;
    job.timestamp = "20261127000000";
    job.compare.threads = 1;
    auto j1 = ptdbg::runPtdbgJob(pairs, dir.path() / "j1", job);
    job.compare.threads = 2;
    auto j2 = ptdbg::runPtdbgJob(pairs, dir.path() / "j2", job);
    ASSERT_TRUE(j1 && j2);
    ASSERT_EQ(j1->size(), 1u);
    ASSERT_EQ(j2->size(), 1u);
    EXPECT_EQ(readAll((*j1)[0].csvFile), readAll((*j2)[0].csvFile));
    EXPECT_FALSE(readAll((*j1)[0].csvFile).empty());
}

TEST(PtdbgStream, CancellingStopsTheCompare)
{
    TempDir dir;
    const ptdbg::PtdbgInput input = largePair(dir.path(), 1000);
    for (const unsigned threads : { 1u, 2u }) {
        ptdbg::PtdbgOptions options;
        options.threads = threads;
        CancelAfter cancel(1); // cancelled once the first row is done
        auto table = ptdbg::comparePkl(input, options, &cancel);
        ASSERT_FALSE(table);
        EXPECT_EQ(table.error().id, "compare.cancelled");
        CancelAfter never(100);
        EXPECT_TRUE(ptdbg::comparePkl(input, options, &never));
    }
}

// openNpyStream checks a file as loadNpy does (the same errors), and gives the same elements wherever they are.
TEST(PtdbgStream, NpyStreamAgreesWithLoadNpy)
{
    TempDir dir;
    auto npy = [&](const std::string& name, const std::string& descr, const std::string& shape, bool fortran,
                   const std::string& data) {
        std::string header = "{'descr': '" + descr + "', 'fortran_order': " + (fortran ? "True" : "False")
            + ", 'shape': " + shape + ", }";
        while ((10 + header.size() + 1) % 64 != 0)
            header += ' ';
        header += '\n';
        std::string bytes = "\x93NUMPY";
        bytes += '\x01';
        bytes += '\x00';
        bytes += static_cast<char>(header.size() & 0xff);
        bytes += static_cast<char>(header.size() >> 8);
        writeFile(dir.path() / name, bytes + header + data);
        return dir.path() / name;
    };
    const std::string six("\x01\x00\x02\x00\x03\x00\x04\x00\x05\x00\x06\x00", 12);
    const std::vector<fs::path> files {
        npy("plain.npy", "<i2", "(2, 3)", false, six),
        npy("fortran.npy", "<i2", "(2, 3)", true, six),
        npy("big.npy", ">i2", "(6,)", false, six),
        npy("short.npy", "<i2", "(7,)", false, six),
        npy("long.npy", "<i2", "(5,)", false, six),
        npy("empty.npy", "<f4", "(0, 3)", false, ""),
        dir.path() / "missing.npy",
    };
    // Limit 0 takes the large-file path: read with pread, or mapped (issue 37's mapped reads) when `mapped`.
    for (const fs::path& file : files) {
        for (const auto& [limit, mapped] : { std::pair { std::uint64_t { 0 }, false }, std::pair { std::uint64_t { 0 }, true },
                                             std::pair { std::uint64_t { 1 } << 20, false } }) {
            SCOPED_TRACE(file.filename().string() + " limit " + std::to_string(limit) + (mapped ? " mapped" : ""));
            tensor::ReadBuffer buffer;
            tensor::setMappedReads(mapped);
            auto stream = tensor::openNpyStream(file, buffer, limit);
            tensor::setMappedReads(false);
            auto loaded = tensor::loadNpy(file);
            ASSERT_EQ(stream.ok(), loaded.ok());
            if (!loaded) {
                EXPECT_EQ(stream.error().format(), loaded.error().format());
                continue;
            }
            EXPECT_EQ(stream->dtype(), loaded->dtype);
            EXPECT_EQ(stream->shape(), loaded->shape);
            EXPECT_EQ(stream->numel(), loaded->numel());
            // A plain layout with elements is mapped when asked (a rearranged one is in memory, an empty one is not).
            if (mapped && file.filename() == "plain.npy") {
                EXPECT_NE(stream->mapping(), nullptr);
            }
            std::vector<std::byte> bytes(loaded->data.size());
            if (stream->memory()) {
                if (!bytes.empty())
                    std::memcpy(bytes.data(), stream->memory(), bytes.size());
            } else {
                ASSERT_EQ(::pread(stream->fd(), bytes.data(), bytes.size(), static_cast<off_t>(stream->dataOffset())),
                          static_cast<ssize_t>(bytes.size()));
            }
            EXPECT_EQ(bytes, loaded->data);
        }
    }
}
