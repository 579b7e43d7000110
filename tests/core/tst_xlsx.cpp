// SPDX-License-Identifier: Apache-2.0
// The xlsx output (compare-spec A.9 step 6, A.11): the files are unzipped and their XML read back here,
// because no xlsx reader (openpyxl) is available on CI.
#include "core/compare/msprobe12/compare.h"
#include "core/compare/table/comparetable.h"
#include "core/compare/table/pytext.h"
#include "core/compare/output/xlsxwriter.h"
#include "core/dump/dumpfile.h"
#include "tempdir.h"
#include "testconfig.h"
#include "xlsxread.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

using namespace probescope;
using namespace probescope::compare;
using probescope::testing::fixturesDir;
using probescope::testing::readAll;
using probescope::testing::TempDir;
using namespace probescope::testing::xlsx;

namespace {

CompareTable handMadeTable()
{
    CompareTable t;
    t.header = { "NPU Name", "Int", "Float", "Inf", "NegInf", "NaN", "None", "Bool", "StrInf", "Empty", "List",
                 "Small", "Huge", "Err_message" };
    const double inf = std::numeric_limits<double>::infinity();
    const double nan = std::numeric_limits<double>::quiet_NaN();
    auto row = [&](const std::string& name, std::int64_t i, bool b, const std::string& message) {
        return std::vector<Cell> { Cell::text(name),
                                   Cell::integer(i),
                                   Cell::number(0.5),
                                   Cell::number(inf),
                                   Cell::number(-inf),
                                   Cell::number(nan),
                                   Cell::none(),
                                   Cell::boolean(b),
                                   Cell::text("inf"),
                                   Cell::text(""),
                                   Cell::pyText("[1, None, 'x\\n<&>']"),
                                   Cell::number(1e-05),
                                   Cell::number(4.503599535136776e+26),
                                   Cell::text(message) };
    };
    t.rows.push_back(row("Torch.add.0.forward.input.0", 42, true, ""));
    t.rows.push_back(row("Torch.add.0.forward.output.0", -3, false, "maximum or minimum is nan, -inf, or inf"));
    t.rows.push_back(row("Torch.mul.1.forward.output.0", 0, true, "line one\nline two"));
    t.rows.push_back(row("Torch.mul.1.forward.input.1", 7, false, " leading space"));
    t.colors = { RowColor::None, RowColor::Red, RowColor::Yellow, RowColor::None };
    return t;
}

std::vector<std::filesystem::path> folderEntries(const std::filesystem::path& folder)
{
    std::vector<std::filesystem::path> out;
    for (const auto& e : std::filesystem::directory_iterator(folder))
        out.push_back(e.path().filename());
    return out;
}

} // namespace

TEST(XlsxCells, ConvertAsMsprobe)
{
    const double inf = std::numeric_limits<double>::infinity();
    EXPECT_TRUE(xlsxCell(Cell::integer(42)).numeric);
    EXPECT_EQ(xlsxCell(Cell::integer(42)).number, 42.0);
    EXPECT_TRUE(xlsxCell(Cell::number(0.25)).numeric);
    EXPECT_FALSE(xlsxCell(Cell::number(inf)).numeric);
    EXPECT_EQ(xlsxCell(Cell::number(inf)).text, "inf\t");
    EXPECT_EQ(xlsxCell(Cell::number(-inf)).text, "-inf\t");
    EXPECT_EQ(xlsxCell(Cell::number(std::nan(""))).text, "nan\t");
    EXPECT_FALSE(xlsxCell(Cell::boolean(true)).numeric);
    EXPECT_EQ(xlsxCell(Cell::boolean(true)).text, "True");
    EXPECT_EQ(xlsxCell(Cell::boolean(false)).text, "False");
    EXPECT_EQ(xlsxCell(Cell::none()).text, "None");
    EXPECT_EQ(xlsxCell(Cell::text("-inf")).text, "-inf\t");
    EXPECT_EQ(xlsxCell(Cell::text("Nan")).text, "Nan");
    EXPECT_EQ(xlsxCell(Cell::text("")).text, "");
    EXPECT_FALSE(xlsxCell(Cell::text("")).numeric);
    EXPECT_EQ(xlsxCell(Cell::pyText("['a', 1]")).text, "['a', 1]");
}

TEST(XlsxWriter, CellsReadBack)
{
    TempDir dir;
    const auto table = handMadeTable();
    const auto path = dir.path() / "compare_result_1.xlsx";
    const auto written = writeXlsx(table, path);
    ASSERT_TRUE(written.ok()) << written.error().format();
    // Only the finished file is left: the temporary one was renamed.
    EXPECT_EQ(folderEntries(dir.path()), std::vector<std::filesystem::path> { "compare_result_1.xlsx" });

    const auto book = readXlsx(path);
    ASSERT_TRUE(book);
    const std::string& workbookXml = book->parts.at("xl/workbook.xml");
    EXPECT_EQ(elements(workbookXml, "sheet").size(), 1u);
    EXPECT_NE(workbookXml.find("<sheet name=\"Sheet\""), std::string::npos);
    EXPECT_EQ(book->rowCount, 5u);

    for (unsigned c = 0; c < table.header.size(); ++c) {
        const auto* cell = book->cell(0, c);
        ASSERT_TRUE(cell) << c;
        EXPECT_NE(cell->type, "") << c; // a string
        EXPECT_EQ(cell->value, table.header[c]);
        EXPECT_TRUE(noFill(book->fill(0, c))) << c;
    }

    // Row 2 of the sheet = table row 0.
    auto at = [&](unsigned col) { return book->cell(1, col); };
    ASSERT_TRUE(at(1) && at(2) && at(11) && at(12));
    EXPECT_EQ(at(1)->type, "");
    EXPECT_EQ(at(1)->value, "42");
    EXPECT_EQ(at(2)->type, "");
    EXPECT_EQ(at(2)->value, "0.5");
    EXPECT_EQ(at(11)->type, "");
    EXPECT_EQ(pandasText(at(11)), "1e-05");
    EXPECT_EQ(pandasText(at(12)), "450359953513677631864700928");
    const std::vector<std::pair<unsigned, std::string>> strings = {
        { 0, "Torch.add.0.forward.input.0" },
        { 3, "inf\t" },
        { 4, "-inf\t" },
        { 5, "nan\t" },
        { 6, "None" },
        { 7, "True" },
        { 8, "inf\t" },
        { 10, "[1, None, 'x\\n<&>']" },
    };
    for (const auto& [col, text] : strings) {
        ASSERT_TRUE(at(col)) << col;
        EXPECT_TRUE(at(col)->type == "inlineStr" || at(col)->type == "s") << col;
        EXPECT_EQ(at(col)->value, text) << col;
    }
    // Empty strings are empty cells, not strings.
    EXPECT_EQ(pandasText(at(9)), "");
    EXPECT_EQ(pandasText(at(13)), "");
    EXPECT_EQ(pandasText(book->cell(2, 7)), "False");
    EXPECT_EQ(pandasText(book->cell(2, 1)), "-3");
    EXPECT_EQ(pandasText(book->cell(3, 13)), "line one\nline two");
    EXPECT_EQ(pandasText(book->cell(4, 13)), " leading space");

    // Every cell of every row reads back as excelText() of the table cell.
    for (unsigned r = 0; r < table.rows.size(); ++r) {
        for (unsigned c = 0; c < table.rows[r].size(); ++c)
            EXPECT_EQ(pandasText(book->cell(r + 1, c)), excelText(table.rows[r][c])) << r << "," << c;
    }
}

TEST(XlsxWriter, HighlightedRowsAreFilledInEveryColumn)
{
    TempDir dir;
    const auto table = handMadeTable();
    const auto path = dir.path() / "out.xlsx";
    ASSERT_TRUE(writeXlsx(table, path).ok());
    const auto book = readXlsx(path);
    ASSERT_TRUE(book);
    for (unsigned c = 0; c < table.header.size(); ++c) {
        EXPECT_TRUE(noFill(book->fill(1, c))) << c;
        // The empty cells of a highlighted row exist too, to carry the fill.
        EXPECT_TRUE(isRed(book->fill(2, c))) << c;
        EXPECT_TRUE(isYellow(book->fill(3, c))) << c;
        EXPECT_TRUE(noFill(book->fill(4, c))) << c;
    }
}

TEST(XlsxWriter, NeverReplacesAnExistingFile)
{
    TempDir dir;
    const auto path = dir.write("taken.xlsx", "keep me");
    const auto written = writeXlsx(handMadeTable(), path);
    ASSERT_FALSE(written.ok());
    EXPECT_EQ(written.error().id, "compare.xlsx");
    EXPECT_EQ(written.error().location.file, path.string());
    EXPECT_NE(written.error().message.find("already exists"), std::string::npos) << written.error().message;
    EXPECT_EQ(readAll(path), "keep me");
    EXPECT_EQ(folderEntries(dir.path()), std::vector<std::filesystem::path> { "taken.xlsx" });
}

TEST(XlsxWriter, MissingFolderIsAnError)
{
    TempDir dir;
    const auto path = dir.path() / "no" / "such" / "out.xlsx";
    const auto written = writeXlsx(handMadeTable(), path);
    ASSERT_FALSE(written.ok());
    EXPECT_EQ(written.error().id, "compare.xlsx");
    EXPECT_NE(written.error().format().find(path.string()), std::string::npos) << written.error().format();
    EXPECT_FALSE(std::filesystem::exists(path));
}

TEST(XlsxWriter, OverlongTextsAreCutWithAWarning)
{
    TempDir dir;
    CompareTable table;
    table.header = { "NPU_Stack_Info" };
    // Multi-byte characters: Excel's limit counts characters, not bytes.
    std::string longText;
    for (std::size_t i = 0; i < kXlsxMaxCellChars + 10; ++i)
        longText += "\xC3\xA9"; // é
    table.rows.push_back({ Cell::pyText(longText) });
    table.colors = { RowColor::None };
    const auto path = dir.path() / "long.xlsx";
    Diagnostics warnings;
    const auto written = writeXlsx(table, path, &warnings);
    ASSERT_TRUE(written.ok()) << written.error().format();
    ASSERT_EQ(warnings.size(), 1u);
    EXPECT_EQ(warnings[0].severity, Severity::Warning);
    EXPECT_NE(warnings[0].message.find("A2"), std::string::npos) << warnings[0].message;
    const auto book = readXlsx(path);
    ASSERT_TRUE(book);
    ASSERT_TRUE(book->cell(1, 0));
    EXPECT_EQ(book->cell(1, 0)->value, longText.substr(0, 2 * kXlsxMaxCellChars));
}

TEST(XlsxWriter, RealCompareReadsBackAsExcelText)
{
    const auto base = fixturesDir() / "modelA_tensor_mix";
    auto npu = dump::readDumpJson(base / "npu/step0/rank/dump.json");
    auto bench = dump::readDumpJson(base / "bench/step0/rank/dump.json");
    ASSERT_TRUE(npu.ok() && bench.ok());
    auto compared = compareDumps(**npu, **bench, CompareOptions {});
    ASSERT_TRUE(compared.ok()) << compared.error().format();
    const CompareTable& table = **compared;

    TempDir dir;
    const auto path = dir.path() / "compare_result_20250101000000.xlsx";
    const auto written = writeXlsx(table, path);
    ASSERT_TRUE(written.ok()) << written.error().format();
    const auto book = readXlsx(path);
    ASSERT_TRUE(book);
    ASSERT_EQ(book->rowCount, table.rows.size() + 1);

    for (unsigned c = 0; c < table.header.size(); ++c)
        EXPECT_EQ(pandasText(book->cell(0, c)), table.header[c]);
    // Every row is cheap enough to check, which covers the sample the golden CSVs rely on.
    for (unsigned r = 0; r < table.rows.size(); ++r) {
        for (unsigned c = 0; c < table.rows[r].size(); ++c)
            ASSERT_EQ(pandasText(book->cell(r + 1, c)), excelText(table.rows[r][c])) << "row " << r << " col " << c;
    }

    unsigned red = 0;
    unsigned yellow = 0;
    for (unsigned r = 0; r < table.rows.size(); ++r) {
        const Fill first = book->fill(r + 1, 0);
        for (unsigned c = 1; c < table.header.size(); ++c)
            EXPECT_EQ(fillKind(book->fill(r + 1, c)), fillKind(first)) << "row " << r << " col " << c;
        const RowColor expected = table.colors.at(r);
        EXPECT_EQ(isRed(first), expected == RowColor::Red) << "row " << r;
        EXPECT_EQ(isYellow(first), expected == RowColor::Yellow) << "row " << r;
        red += isRed(first);
        yellow += isYellow(first);
    }
    EXPECT_EQ(red, 12u);
    EXPECT_EQ(yellow, 24u);
}
