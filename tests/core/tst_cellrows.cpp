// SPDX-License-Identifier: Apache-2.0
#include "core/compare/table/cellrows.h"
#include "core/compare/pipeline/comparerun.h"
#include "core/compare/output/csvwriter.h"
#include "core/compare/table/pytext.h"

#include <gtest/gtest.h>

#include <bit>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

using namespace probescope::compare;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNan = std::numeric_limits<double>::quiet_NaN();

// Cell's == says NaN != NaN; a round trip must keep the very bits.
bool sameCell(const Cell& a, const Cell& b)
{
    if (a.isFloat() && b.isFloat())
        return std::bit_cast<std::uint64_t>(std::get<double>(a.value))
            == std::bit_cast<std::uint64_t>(std::get<double>(b.value));
    return a == b;
}

std::vector<Cell> everyKind()
{
    return {
        Cell::none(),
        Cell::boolean(true),
        Cell::boolean(false),
        Cell::integer(0),
        Cell::integer(std::numeric_limits<std::int64_t>::max()),
        Cell::integer(std::numeric_limits<std::int64_t>::min()),
        Cell::number(0.0),
        Cell::number(-0.0),
        Cell::number(kNan),
        Cell::number(-kNan),
        Cell::number(kInf),
        Cell::number(-kInf),
        Cell::number(std::numeric_limits<double>::denorm_min()),
        Cell::number(std::numeric_limits<double>::max()),
        Cell::number(1.0 / 3.0),
        Cell::text(""),
        Cell::text("N/A"),
        Cell::text("N/A"),
        Cell::text("Functional.conv2d.0.forward.input.0.with.a.long.unique.name"),
        Cell::text("Functional.conv2d.0.forward.input.0.with.a.long.unique.name"),
        Cell::text(std::string("nul\0inside", 10)),
        Cell::text(std::string(100000, 'x')), // longer than a text block holds
        Cell::pyText(""),
        Cell::pyText("['a', 'b']"),
        Cell::pyText("N/A"), // the same text as a String cell, another kind
    };
}

} // namespace

TEST(CellRows, EveryKindRoundTrips)
{
    const std::vector<Cell> cells = everyKind();
    CellRows rows;
    rows.push_back(cells);
    rows.push_back({});
    rows.push_back({ Cell::text("x") });
    ASSERT_EQ(rows.size(), 3u);
    ASSERT_EQ(rows.rowSize(0), cells.size());
    EXPECT_EQ(rows.rowSize(1), 0u);
    EXPECT_TRUE(rows[1].empty());
    for (std::size_t c = 0; c < cells.size(); ++c) {
        EXPECT_TRUE(sameCell(rows.cell(0, c), cells[c])) << "cell " << c;
        EXPECT_TRUE(sameCell(rows.view(0, c).toCell(), cells[c])) << "view " << c;
        EXPECT_TRUE(sameCell(viewOf(cells[c]).toCell(), cells[c])) << "viewOf " << c;
    }
    EXPECT_EQ(rows[2][0], Cell::text("x"));
    // Copies and moves keep every cell.
    const CellRows copy = rows;
    EXPECT_EQ(copy.size(), rows.size());
    for (std::size_t c = 0; c < cells.size(); ++c)
        EXPECT_TRUE(sameCell(copy.cell(0, c), cells[c])) << "copy " << c;
    CellRows moved = std::move(CellRows(copy));
    EXPECT_TRUE(sameCell(moved.cell(0, 8), Cell::number(kNan)));
    EXPECT_EQ(moved.rowCells(0).size(), cells.size());
}

TEST(CellRows, SetOverwritesAndRowsReadAsVectors)
{
    CellRows rows;
    rows.push_back({ Cell::text("a"), Cell::number(1.5), Cell::none() });
    rows[0][2] = Cell::text("set later");
    rows.set(0, 1, Cell::integer(-7));
    rows.setShared(0, 0, Cell::pyText("[1, 2]"));
    const std::vector<Cell> expected { Cell::pyText("[1, 2]"), Cell::integer(-7), Cell::text("set later") };
    EXPECT_TRUE(rows[0] == expected);
    EXPECT_EQ(rows.rowShared(0), expected);
    std::vector<Cell> seen;
    for (const auto row : std::as_const(rows))
        for (const Cell& cell : row)
            seen.push_back(cell);
    EXPECT_EQ(seen, expected);
    rows.beginRow();
    rows.appendText("b");
    rows.appendNumber(2.0);
    rows.appendInt(3);
    rows.appendBool(true);
    rows.appendNone();
    rows.appendPyText("[]");
    EXPECT_EQ(rows.rowCells(1), (std::vector<Cell> { Cell::text("b"), Cell::number(2.0), Cell::integer(3),
                                                     Cell::boolean(true), Cell::none(), Cell::pyText("[]") }));
    rows.pop_back();
    EXPECT_EQ(rows.size(), 1u);
}

TEST(CellRows, RepeatedTextsAreStoredOnce)
{
    // The bench name beside the same NPU name, and the short texts of every row, cost no more than a number.
    CellRows named;
    CellRows numbered;
    const std::size_t n = 100000;
    for (std::size_t r = 0; r < n; ++r) {
        const std::string name = "Torch.matmul." + std::to_string(r) + ".forward.input.0.long.enough.name";
        named.push_back({ Cell::text(name), Cell::text(name), Cell::text("torch.float32"), Cell::text("[4, 4]"),
                          Cell::text("N/A"), Cell::number(static_cast<double>(r)) });
        numbered.push_back({ Cell::text(name), Cell::number(1.0), Cell::number(2.0), Cell::number(3.0),
                             Cell::number(4.0), Cell::number(static_cast<double>(r)) });
    }
    EXPECT_LT(named.memoryBytes(), numbered.memoryBytes() + 4096);
    EXPECT_EQ(named.view(n - 1, 1).text, "Torch.matmul.99999.forward.input.0.long.enough.name");
    EXPECT_EQ(named.view(12345, 2).text, "torch.float32");
}

TEST(CellRows, WritersOnThreadsFillLaidOutRowsAsAppendingWould)
{
    // The compare lays a table out and fills its rows on every core; the rows must read as if appended in order.
    const std::vector<Cell> kinds = everyKind();
    const std::size_t rows = 40000;
    const std::string stack = "['File a.py, line 1, in f, \\n x = g()', " + std::string(300, 's') + "']";
    auto cellsOf = [&](std::size_t r) {
        std::vector<Cell> cells = kinds;
        cells.push_back(Cell::text("row." + std::to_string(r)));
        cells.push_back(Cell::text(std::to_string(r % 7) + ".5%"));
        cells.push_back(Cell::pyText(r % 3 == 0 ? stack : "[]"));
        return cells;
    };
    CellRows appended;
    for (std::size_t r = 0; r < rows; ++r)
        appended.push_back(cellsOf(r));

    CellRows filled;
    const std::size_t width = kinds.size() + 3;
    filled.layOut(rows, width);
    auto fill = [&](std::size_t from, std::size_t to) {
        CellRows::Writer writer(filled);
        for (std::size_t r = from; r < to; ++r) {
            const std::vector<Cell> cells = cellsOf(r);
            writer.beginRow(r);
            for (std::size_t c = 0; c < kinds.size(); ++c)
                writer.append(cells[c]);
            writer.appendText(cells[kinds.size()].asString());
            writer.appendUniqueText(cells[kinds.size() + 1].asString());
            writer.appendSharedPyText(std::get<Cell::PyText>(cells[kinds.size() + 2].value).text);
        }
    };
    std::thread second(fill, rows / 3, rows);
    fill(0, rows / 3);
    second.join();

    ASSERT_EQ(filled.size(), appended.size());
    for (std::size_t r = 0; r < rows; ++r) {
        ASSERT_EQ(filled.rowSize(r), width);
        for (std::size_t c = 0; c < width; ++c)
            ASSERT_TRUE(sameCell(filled.cell(r, c), appended.cell(r, c))) << "row " << r << ", column " << c;
    }
    // The shared stack text is stored once per writer, not once per row.
    EXPECT_LT(filled.memoryBytes(), appended.memoryBytes() + (std::size_t { 1 } << 20));
    // Rows appended after a fill go on after it.
    filled.push_back({ Cell::text("after"), Cell::number(1.5) });
    EXPECT_EQ(filled.view(rows, 0).text, "after");
    EXPECT_EQ(filled.view(rows - 1, kinds.size()).text, "row." + std::to_string(rows - 1));
}

// The CSV writer prints numbers with std::to_chars(..., general, 16) where it used printf("%.16g").
TEST(CellRows, ToCharsIsPrintfG16)
{
    std::mt19937_64 rng(17);
    char printed[64];
    for (int i = 0; i < 200000; ++i) {
        double v = std::bit_cast<double>(rng());
        if (!std::isfinite(v))
            continue;
        if (i % 2)
            v = static_cast<double>(static_cast<std::int64_t>(rng() >> (rng() % 64))) / 1024.0;
        std::snprintf(printed, sizeof printed, "%.16g", v);
        char chars[64];
        const auto end = std::to_chars(chars, chars + sizeof chars, v, std::chars_format::general, 16).ptr;
        ASSERT_EQ(std::string(chars, end), std::string(printed)) << v;
    }
}

TEST(CellRows, CsvOfATableStreamsInPieces)
{
    CompareTable table;
    table.header = { "name", "value", "note" };
    for (int r = 0; r < 2000; ++r)
        table.rows.push_back({ Cell::text("=cmd" + std::to_string(r)), Cell::number(r / 8.0),
                               Cell::text(r % 2 ? "a,b" : "-inf") });
    const std::string whole = tableCsv(table);
    EXPECT_EQ(whole.substr(0, 51), "name,value,note\n'=cmd0,0,'-inf\t\n'=cmd1,0.125,\"a,b\"\n");
    EXPECT_NE(whole.find("\n'=cmd1999,249.875,\"a,b\"\n"), std::string::npos);
    // Small buffers: the same text, in many pieces.
    std::string pieces;
    std::size_t count = 0;
    CsvStream csv(
        [&](std::string_view chunk) {
            pieces += chunk;
            ++count;
            return true;
        },
        256);
    std::string expected;
    for (int r = 0; r < 100; ++r) {
        csv.field("x" + std::to_string(r));
        csv.rawField() += "1.5";
        csv.endRecord();
        expected += "x" + std::to_string(r) + ",1.5\n";
    }
    csv.field("");
    csv.endRecord();
    EXPECT_TRUE(csv.finish());
    EXPECT_EQ(pieces, expected + "\"\"\n");
    EXPECT_GT(count, 3u);
    EXPECT_EQ(excelText(Cell::text("-inf")), "-inf\t");
}
