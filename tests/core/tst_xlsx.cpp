// SPDX-License-Identifier: Apache-2.0
// The xlsx output (compare-spec A.9 step 6, A.11): the files are unzipped and their XML read back here,
// because no xlsx reader (openpyxl) is available on CI.
#include "compare/comparetable.h"
#include "compare/pytext.h"
#include "compare/xlsxwriter.h"
#include "dump/dumpfile.h"
#include "tempdir.h"
#include "testconfig.h"

#include <gtest/gtest.h>
#include <zlib.h>

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

namespace {

// ---- a minimal zip reader (stored and deflated entries, as libxlsxwriter writes them) ----

std::uint32_t le(const std::string& s, std::size_t at, int bytes)
{
    std::uint32_t v = 0;
    for (int i = bytes - 1; i >= 0; --i)
        v = (v << 8) | static_cast<unsigned char>(s.at(at + static_cast<std::size_t>(i)));
    return v;
}

std::optional<std::string> inflateRaw(std::string_view in, std::size_t size)
{
    std::string out(size, '\0');
    z_stream z {};
    if (inflateInit2(&z, -MAX_WBITS) != Z_OK)
        return std::nullopt;
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
    z.avail_in = static_cast<uInt>(in.size());
    z.next_out = reinterpret_cast<Bytef*>(out.data());
    z.avail_out = static_cast<uInt>(out.size());
    const int rc = inflate(&z, Z_FINISH);
    const bool ok = rc == Z_STREAM_END && z.total_out == size;
    inflateEnd(&z);
    return ok ? std::optional<std::string>(std::move(out)) : std::nullopt;
}

/// Entry name → content; empty map when the archive cannot be read.
std::map<std::string, std::string> unzip(const std::string& zip)
{
    std::map<std::string, std::string> entries;
    if (zip.size() < 22)
        return entries;
    std::size_t eocd = zip.size() - 22;
    while (eocd > 0 && le(zip, eocd, 4) != 0x06054b50)
        --eocd;
    if (le(zip, eocd, 4) != 0x06054b50)
        return entries;
    const std::uint32_t count = le(zip, eocd + 10, 2);
    std::size_t at = le(zip, eocd + 16, 4);
    for (std::uint32_t i = 0; i < count; ++i) {
        if (le(zip, at, 4) != 0x02014b50)
            return {};
        const std::uint32_t method = le(zip, at + 10, 2);
        const std::uint32_t packed = le(zip, at + 20, 4);
        const std::uint32_t size = le(zip, at + 24, 4);
        const std::uint32_t nameLen = le(zip, at + 28, 2);
        const std::uint32_t extraLen = le(zip, at + 30, 2);
        const std::uint32_t commentLen = le(zip, at + 32, 2);
        const std::uint32_t local = le(zip, at + 42, 4);
        const std::string name = zip.substr(at + 46, nameLen);
        at += 46 + nameLen + extraLen + commentLen;

        if (le(zip, local, 4) != 0x04034b50)
            return {};
        const std::size_t data = local + 30 + le(zip, local + 26, 2) + le(zip, local + 28, 2);
        const std::string_view raw = std::string_view(zip).substr(data, packed);
        if (method == 0) {
            entries[name] = std::string(raw);
        } else if (method == 8) {
            auto inflated = inflateRaw(raw, size);
            if (!inflated)
                return {};
            entries[name] = std::move(*inflated);
        } else {
            return {};
        }
    }
    return entries;
}

// ---- just enough XML for the parts libxlsxwriter writes ----

std::string unescapeXml(std::string_view s)
{
    std::string out;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] != '&') {
            out += s[i];
            continue;
        }
        const std::size_t end = s.find(';', i);
        const std::string_view entity = s.substr(i + 1, end - i - 1);
        if (entity == "lt")
            out += '<';
        else if (entity == "gt")
            out += '>';
        else if (entity == "amp")
            out += '&';
        else if (entity == "quot")
            out += '"';
        else if (entity == "apos")
            out += '\'';
        else if (!entity.empty() && entity[0] == '#') {
            const bool hex = entity.size() > 1 && entity[1] == 'x';
            const unsigned long code = std::stoul(std::string(entity.substr(hex ? 2 : 1)), nullptr, hex ? 16 : 10);
            // Only ASCII is expected in these tests; anything else would need UTF-8 encoding here.
            out += static_cast<char>(code);
        }
        i = end;
    }
    return out;
}

/// Value of attribute `name` in the start tag `tag` ("<c r=\"A1\" s=\"1\">").
std::optional<std::string> attribute(std::string_view tag, std::string_view name)
{
    const std::string key = " " + std::string(name) + "=\"";
    const std::size_t at = tag.find(key);
    if (at == std::string_view::npos)
        return std::nullopt;
    const std::size_t from = at + key.size();
    return unescapeXml(tag.substr(from, tag.find('"', from) - from));
}

/// Every element `<name ...>...</name>` or `<name .../>` of `xml`, as (start tag, inner text).
std::vector<std::pair<std::string, std::string>> elements(std::string_view xml, std::string_view name)
{
    std::vector<std::pair<std::string, std::string>> out;
    const std::string open = "<" + std::string(name);
    const std::string close = "</" + std::string(name) + ">";
    for (std::size_t at = xml.find(open); at != std::string_view::npos; at = xml.find(open, at + 1)) {
        const char next = xml[at + open.size()];
        if (next != ' ' && next != '>' && next != '/')
            continue; // <cellXfs> while looking for <c>
        const std::size_t tagEnd = xml.find('>', at);
        const std::string tag(xml.substr(at, tagEnd - at + 1));
        if (xml[tagEnd - 1] == '/') {
            out.emplace_back(tag, "");
            continue;
        }
        const std::size_t end = xml.find(close, tagEnd);
        out.emplace_back(tag, std::string(xml.substr(tagEnd + 1, end - tagEnd - 1)));
    }
    return out;
}

/// The text of the first <t> inside `xml` (a shared string or an inline string).
std::string tText(std::string_view xml)
{
    const auto ts = elements(xml, "t");
    return ts.empty() ? std::string() : unescapeXml(ts.front().second);
}

struct XlsxCellRead
{
    std::string type;  ///< the t attribute ("" for a number)
    std::string value; ///< the <v> text of a number, the text of a string
    bool hasValue = false;
    int style = 0;
};

struct Fill
{
    std::string pattern;
    std::string rgb;
};

struct Workbook
{
    std::map<std::string, std::string> parts;
    std::map<std::pair<unsigned, unsigned>, XlsxCellRead> cells; ///< (row, column), 0-based
    std::vector<Fill> fillOfStyle;                               ///< indexed by the s attribute
    unsigned rowCount = 0;

    const XlsxCellRead* cell(unsigned row, unsigned col) const
    {
        const auto it = cells.find({ row, col });
        return it == cells.end() ? nullptr : &it->second;
    }
    Fill fill(unsigned row, unsigned col) const
    {
        const auto* c = cell(row, col);
        return c && c->style >= 0 && static_cast<std::size_t>(c->style) < fillOfStyle.size() ? fillOfStyle[c->style]
                                                                                               : Fill {};
    }
};

std::pair<unsigned, unsigned> parseRef(const std::string& ref)
{
    unsigned col = 0;
    std::size_t i = 0;
    for (; i < ref.size() && ref[i] >= 'A' && ref[i] <= 'Z'; ++i)
        col = col * 26 + static_cast<unsigned>(ref[i] - 'A' + 1);
    return { static_cast<unsigned>(std::stoul(ref.substr(i))) - 1, col - 1 };
}

std::optional<Workbook> readXlsx(const std::filesystem::path& path)
{
    Workbook book;
    book.parts = unzip(readAll(path));
    if (!book.parts.count("xl/worksheets/sheet1.xml") || !book.parts.count("xl/styles.xml"))
        return std::nullopt;

    std::vector<std::string> shared;
    if (const auto it = book.parts.find("xl/sharedStrings.xml"); it != book.parts.end()) {
        for (const auto& [tag, inner] : elements(it->second, "si"))
            shared.push_back(tText(inner));
    }

    const std::string& sheet = book.parts["xl/worksheets/sheet1.xml"];
    for (const auto& [tag, inner] : elements(sheet, "row"))
        book.rowCount = std::max(book.rowCount, static_cast<unsigned>(std::stoul(*attribute(tag, "r"))));
    for (const auto& [tag, inner] : elements(sheet, "c")) {
        XlsxCellRead c;
        c.type = attribute(tag, "t").value_or("");
        c.style = std::stoi(attribute(tag, "s").value_or("0"));
        if (c.type == "inlineStr") {
            c.value = tText(inner);
            c.hasValue = true;
        } else if (const auto vs = elements(inner, "v"); !vs.empty()) {
            c.value = unescapeXml(vs.front().second);
            c.hasValue = true;
            if (c.type == "s")
                c.value = shared.at(std::stoul(c.value));
        }
        book.cells[parseRef(*attribute(tag, "r"))] = c;
    }

    const std::string& styles = book.parts["xl/styles.xml"];
    std::vector<Fill> fills;
    const auto fillsSection = elements(styles, "fills");
    if (fillsSection.size() != 1)
        return std::nullopt;
    for (const auto& [tag, inner] : elements(fillsSection.front().second, "fill")) {
        Fill f;
        if (const auto p = elements(inner, "patternFill"); !p.empty())
            f.pattern = attribute(p.front().first, "patternType").value_or("");
        if (const auto fg = elements(inner, "fgColor"); !fg.empty())
            f.rgb = attribute(fg.front().first, "rgb").value_or("");
        fills.push_back(f);
    }
    const auto xfs = elements(styles, "cellXfs");
    if (xfs.size() != 1)
        return std::nullopt;
    for (const auto& [tag, inner] : elements(xfs.front().second, "xf"))
        book.fillOfStyle.push_back(fills.at(std::stoul(attribute(tag, "fillId").value_or("0"))));
    return book;
}

/// The text pandas gives a cell read back from the xlsx (A.11): numbers with '.'/'e'/'E' are
/// floats, others ints, and whole values print as ints; strings verbatim; no cell → "".
std::string pandasText(const XlsxCellRead* c)
{
    if (!c || !c->hasValue)
        return "";
    if (!c->type.empty() && c->type != "n")
        return c->value;
    if (c->value.find_first_of(".eE") == std::string::npos)
        return std::to_string(std::stoll(c->value));
    const double v = std::strtod(c->value.c_str(), nullptr);
    return std::trunc(v) == v ? integralDoubleText(v) : pyFloatRepr(v);
}

bool isRed(const Fill& f)
{
    return f.pattern == "solid" && f.rgb == "FFFF0000";
}

bool isYellow(const Fill& f)
{
    // openpyxl stores 00FFFF00, libxlsxwriter FFFFFF00: Excel ignores the alpha byte of fills.
    return f.pattern == "solid" && f.rgb.size() == 8 && f.rgb.substr(2) == "FFFF00";
}

bool noFill(const Fill& f)
{
    return f.pattern.empty() || f.pattern == "none";
}

/// "red", "yellow", "none" or the raw fill (a missing cell counts as unfilled).
std::string fillKind(const Fill& f)
{
    if (isRed(f))
        return "red";
    if (isYellow(f))
        return "yellow";
    return noFill(f) ? "none" : f.pattern + "/" + f.rgb;
}

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
