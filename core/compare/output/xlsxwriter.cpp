// SPDX-License-Identifier: Apache-2.0
#include "core/compare/output/xlsxwriter.h"

#include "core/compare/table/pytext.h"
#include "core/util/csv.h"
#include "core/util/outputfile.h"
#include "core/util/pytext.h"

#include <xlsxwriter.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <functional>
#include <map>
#include <new>
#include <optional>
#include <system_error>
#include <unistd.h>

namespace probescope::compare {

namespace {

constexpr lxw_color_t kRed = 0xFF0000;    // openpyxl "FFFF0000"
constexpr lxw_color_t kYellow = 0xFFFF00; // openpyxl "FFFF00" (stored as 00FFFF00)

Diagnostic xlsxError(const std::filesystem::path& path, std::string message)
{
    return makeError("compare.xlsx", fileLocation(path), std::move(message));
}

/// Byte length of the first `maxChars` UTF-8 characters of `s` (s.size() if it has no more).
std::size_t utf8Prefix(const std::string& s, std::size_t maxChars)
{
    std::size_t chars = 0;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80) {
            if (chars == maxChars)
                return i;
            ++chars;
        }
    }
    return s.size();
}

/// Owns the temporary file until it is renamed into place; removes it on every other way out.
class TempFileGuard
{
public:
    explicit TempFileGuard(std::filesystem::path path)
        : m_path(std::move(path))
    {
    }
    ~TempFileGuard()
    {
        if (!m_released) {
            std::error_code ignored;
            std::filesystem::remove(m_path, ignored);
        }
    }
    TempFileGuard(const TempFileGuard&) = delete;
    TempFileGuard& operator=(const TempFileGuard&) = delete;

    const std::filesystem::path& path() const { return m_path; }
    void release() { m_released = true; }

private:
    std::filesystem::path m_path;
    bool m_released = false;
};

/// Closes (and so writes) the workbook on every way out; close() reports the result once.
class WorkbookGuard
{
public:
    explicit WorkbookGuard(lxw_workbook* workbook)
        : m_workbook(workbook)
    {
    }
    ~WorkbookGuard()
    {
        if (m_workbook)
            workbook_close(m_workbook);
    }
    WorkbookGuard(const WorkbookGuard&) = delete;
    WorkbookGuard& operator=(const WorkbookGuard&) = delete;

    lxw_workbook* get() const { return m_workbook; }
    lxw_error close()
    {
        const lxw_error err = workbook_close(m_workbook);
        m_workbook = nullptr;
        return err;
    }

private:
    lxw_workbook* m_workbook;
};

lxw_format* solidFill(lxw_workbook* workbook, lxw_color_t color)
{
    lxw_format* format = workbook_add_format(workbook);
    if (format) {
        format_set_pattern(format, LXW_PATTERN_SOLID);
        format_set_bg_color(format, color);
    }
    return format;
}

std::string cellName(lxw_row_t row, lxw_col_t col)
{
    std::string letters;
    for (unsigned c = col + 1u; c > 0; c = (c - 1) / 26)
        letters.insert(letters.begin(), static_cast<char>('A' + (c - 1) % 26));
    return letters + std::to_string(row + 1);
}

/// Writes text cells, cut to Excel's limit, and remembers what was cut.
class TextCells
{
public:
    lxw_error write(lxw_worksheet* sheet, lxw_row_t r, lxw_col_t c, std::string text, lxw_format* format)
    {
        const std::size_t keep = utf8Prefix(text, kXlsxMaxCellChars);
        if (keep < text.size()) {
            if (m_truncated++ == 0)
                m_firstTruncated = cellName(r, c);
            text.resize(keep);
        }
        // An empty text writes a blank cell when it has a fill, nothing otherwise (an empty cell).
        return worksheet_write_string(sheet, r, c, text.c_str(), format);
    }
    std::size_t truncated() const { return m_truncated; }
    const std::string& firstTruncated() const { return m_firstTruncated; }

private:
    std::size_t m_truncated = 0;
    std::string m_firstTruncated;
};

using FillWorkbook = std::function<std::optional<Diagnostic>(lxw_workbook*, TextCells&)>;

/// The one way a workbook is written: built under a temporary name beside `path` (constant memory), synced and
/// claimed with renameNoReplace; `fill` adds the sheets and cells.
Result<bool> writeWorkbookFile(const std::filesystem::path& path, Diagnostics* warnings, const FillWorkbook& fill)
{
    std::error_code ec;
    if (std::filesystem::exists(std::filesystem::symlink_status(path, ec)))
        return xlsxError(path, path.string() + " already exists");

    std::filesystem::path folder = path.parent_path();
    if (folder.empty())
        folder = ".";
    const std::string base = path.filename().string();
    if (base.empty())
        return xlsxError(path, "not a file path: " + path.string());

    std::string error;
    // Keep the .xlsx suffix: some zip tools pick the format from it.
    auto reserved = createTempBeside(path, ".xlsx", error);
    if (!reserved)
        return xlsxError(path, error);
    TempFileGuard temp(std::move(*reserved));

    // constant_memory streams each row to disk once the next one starts (strings become inline
    // strings), so a compare of a large model does not hold every cell in memory twice.
    std::string tmpdir = folder.string();
    lxw_workbook_options options {};
    options.constant_memory = LXW_TRUE;
    options.tmpdir = tmpdir.data();
    options.use_zip64 = LXW_FALSE;
    WorkbookGuard workbook(workbook_new_opt(temp.path().c_str(), &options));
    if (!workbook.get())
        return xlsxError(path, "cannot start an xlsx workbook for " + path.string());

    TextCells texts;
    if (auto failure = fill(workbook.get(), texts))
        return std::move(*failure);

    const lxw_error closed = workbook.close();
    if (closed != LXW_NO_ERROR)
        return xlsxError(path, "cannot write " + path.string() + ": " + lxw_strerror(closed));
    if (!syncOutputFile(temp.path()))
        return xlsxError(path, errnoText("cannot write", path, errno));
    if (const auto failure = renameNoReplace(temp.path(), path))
        return xlsxError(path, failure->message);
    temp.release();

    // Persist the rename itself; failing here does not make the written file wrong.
    syncOutputFolder(folder);

    if (texts.truncated() > 0 && warnings) {
        warnings->push_back(makeWarning("compare.xlsx-truncated", fileLocation(path),
                                        std::to_string(texts.truncated()) + " cell text(s) longer than "
                                            + std::to_string(kXlsxMaxCellChars)
                                            + " characters (Excel's limit) were cut, the first at "
                                            + texts.firstTruncated()));
    }
    return true;
}

Result<bool> writeWorkbook(const CompareTable& table, const std::filesystem::path& path, Diagnostics* warnings)
{
    std::size_t columns = table.header.size();
    for (const auto& row : table.rows)
        columns = std::max(columns, row.size());
    if (table.rows.size() + 1 > LXW_ROW_MAX)
        return xlsxError(path, "the table has " + std::to_string(table.rows.size())
                                   + " rows; an xlsx sheet holds at most " + std::to_string(LXW_ROW_MAX - 1)
                                   + " under its header");
    if (columns > LXW_COL_MAX)
        return xlsxError(path, "the table has " + std::to_string(columns) + " columns; an xlsx sheet holds at most "
                                   + std::to_string(LXW_COL_MAX));

    return writeWorkbookFile(path, warnings, [&](lxw_workbook* book, TextCells& texts) -> std::optional<Diagnostic> {
        lxw_worksheet* sheet = workbook_add_worksheet(book, "Sheet");
        lxw_format* red = solidFill(book, kRed);
        lxw_format* yellow = solidFill(book, kYellow);
        if (!sheet || !red || !yellow)
            return xlsxError(path, "cannot set up the xlsx workbook for " + path.string());
        for (std::size_t c = 0; c < table.header.size(); ++c) {
            const lxw_error err = texts.write(sheet, 0, static_cast<lxw_col_t>(c), table.header[c], nullptr);
            if (err != LXW_NO_ERROR)
                return xlsxError(path, "cannot write cell " + cellName(0, static_cast<lxw_col_t>(c)) + ": "
                                           + lxw_strerror(err));
        }
        for (std::size_t r = 0; r < table.rows.size(); ++r) {
            const auto xr = static_cast<lxw_row_t>(r + 1);
            const RowColor color = r < table.colors.size() ? table.colors[r] : RowColor::None;
            lxw_format* format = color == RowColor::Red ? red : color == RowColor::Yellow ? yellow : nullptr;
            const auto& row = table.rows[r];
            for (std::size_t c = 0; c < row.size(); ++c) {
                const auto xc = static_cast<lxw_col_t>(c);
                XlsxCell cell = xlsxCell(row[c]);
                const lxw_error err = cell.numeric ? worksheet_write_number(sheet, xr, xc, cell.number, format)
                                                   : texts.write(sheet, xr, xc, std::move(cell.text), format);
                if (err != LXW_NO_ERROR)
                    return xlsxError(path, "cannot write cell " + cellName(xr, xc) + ": " + lxw_strerror(err));
            }
            // openpyxl fills every column of a highlighted row, so short rows get filled blanks too.
            for (std::size_t c = row.size(); format && c < columns; ++c)
                worksheet_write_blank(sheet, xr, static_cast<lxw_col_t>(c), format);
        }
        return std::nullopt;
    });
}

Result<bool> writeSheets(const std::vector<XlsxSheet>& sheets, const std::filesystem::path& path,
                         Diagnostics* warnings)
{
    for (const auto& sheet : sheets) {
        if (sheet.rows.size() + 1 > LXW_ROW_MAX)
            return xlsxError(path, "sheet '" + sheet.name + "' has " + std::to_string(sheet.rows.size())
                                       + " rows; an xlsx sheet holds at most " + std::to_string(LXW_ROW_MAX - 1));
        std::size_t columns = sheet.header.size();
        for (const auto& row : sheet.rows)
            columns = std::max(columns, row.size());
        if (columns > LXW_COL_MAX)
            return xlsxError(path, "sheet '" + sheet.name + "' has " + std::to_string(columns) + " columns");
    }
    return writeWorkbookFile(path, warnings, [&](lxw_workbook* book, TextCells& texts) -> std::optional<Diagnostic> {
        // pandas' to_excel header: bold, thin borders, centred.
        lxw_format* header = workbook_add_format(book);
        if (!header)
            return xlsxError(path, "cannot set up the xlsx workbook for " + path.string());
        format_set_bold(header);
        format_set_border(header, LXW_BORDER_THIN);
        format_set_align(header, LXW_ALIGN_CENTER);
        format_set_align(header, LXW_ALIGN_VERTICAL_TOP);
        for (const auto& data : sheets) {
            lxw_worksheet* sheet = workbook_add_worksheet(book, data.name.c_str());
            if (!sheet)
                return xlsxError(path, "cannot add a sheet named '" + data.name + "' to " + path.string());
            for (std::size_t c = 0; c < data.header.size(); ++c) {
                const lxw_error err = texts.write(sheet, 0, static_cast<lxw_col_t>(c), data.header[c], header);
                if (err != LXW_NO_ERROR)
                    return xlsxError(path, "cannot write cell " + cellName(0, static_cast<lxw_col_t>(c)) + ": "
                                               + lxw_strerror(err));
            }
            for (std::size_t r = 0; r < data.rows.size(); ++r) {
                const auto xr = static_cast<lxw_row_t>(r + 1);
                for (std::size_t c = 0; c < data.rows[r].size(); ++c) {
                    const auto xc = static_cast<lxw_col_t>(c);
                    const XlsxSheetCell& cell = data.rows[r][c];
                    lxw_error err = LXW_NO_ERROR;
                    switch (cell.kind) {
                    case XlsxSheetCell::Kind::Empty:
                        break;
                    case XlsxSheetCell::Kind::Number:
                        if (std::isfinite(cell.number))
                            err = worksheet_write_number(sheet, xr, xc, cell.number, nullptr);
                        break;
                    case XlsxSheetCell::Kind::Bool:
                        err = worksheet_write_boolean(sheet, xr, xc, cell.boolean ? 1 : 0, nullptr);
                        break;
                    case XlsxSheetCell::Kind::Text:
                        if (!cell.text.empty())
                            err = texts.write(sheet, xr, xc, cell.text, nullptr);
                        break;
                    }
                    if (err != LXW_NO_ERROR)
                        return xlsxError(path, "cannot write cell " + cellName(xr, xc) + " of sheet '" + data.name
                                                   + "': " + lxw_strerror(err));
                }
            }
        }
        return std::nullopt;
    });
}

} // namespace

XlsxCell xlsxCell(const Cell& cell)
{
    XlsxCell out;
    if (cell.isNumber()) {
        const double v = cell.asDouble();
        if (std::isfinite(v)) {
            out.numeric = true;
            out.number = v;
            return out;
        }
    }
    // excelText() is exactly the string msprobe stores for every non-numeric value (TAB rules included).
    out.text = excelText(cell);
    return out;
}

Result<bool> writeXlsx(const CompareTable& table, const std::filesystem::path& path, Diagnostics* warnings)
{
    try {
        return writeWorkbook(table, path, warnings);
    } catch (const std::bad_alloc&) {
        return xlsxError(path, "out of memory while writing " + path.string());
    }
}

std::string xlsxSheetCellText(const XlsxSheetCell& cell)
{
    switch (cell.kind) {
    case XlsxSheetCell::Kind::Empty:
        return {};
    case XlsxSheetCell::Kind::Bool:
        return cell.boolean ? "True" : "False";
    case XlsxSheetCell::Kind::Text:
        return cell.text;
    case XlsxSheetCell::Kind::Number:
        break;
    }
    if (!std::isfinite(cell.number))
        return {};
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "%.16g", cell.number);
    const std::string_view text(buffer);
    if (text.find_first_of(".eE") != std::string_view::npos)
        return pyFloatRepr(std::strtod(buffer, nullptr));
    // int(text): "-0" reads back as 0.
    if (text == "-0")
        return "0";
    return std::string(text);
}

std::string xlsxSheetCsv(const XlsxSheet& sheet)
{
    std::string out;
    appendCsvLine(out, sheet.header);
    out += '\n';
    std::vector<std::string> fields;
    // pandas' str conversion of a column gives equal values (False == 0 == 0.0, True == 1) the text of the first
    // of them in the column: a 0 under a False reads "False". The fixtures' CSVs show it, so it is kept.
    std::vector<std::map<double, std::string>> seen(sheet.header.size());
    for (const auto& row : sheet.rows) {
        fields.clear();
        for (std::size_t c = 0; c < row.size(); ++c) {
            const auto& cell = row[c];
            std::string text = xlsxSheetCellText(cell);
            const bool numeric = cell.kind == XlsxSheetCell::Kind::Bool
                                 || (cell.kind == XlsxSheetCell::Kind::Number && std::isfinite(cell.number));
            if (numeric) {
                if (c >= seen.size())
                    seen.resize(c + 1);
                const double key = cell.kind == XlsxSheetCell::Kind::Bool ? (cell.boolean ? 1.0 : 0.0) : cell.number;
                const auto [it, inserted] = seen[c].emplace(key == 0.0 ? 0.0 : key, text);
                if (!inserted)
                    text = it->second;
            }
            fields.push_back(std::move(text));
        }
        // pandas pads a short row with empty cells up to the header's width.
        while (fields.size() < sheet.header.size())
            fields.emplace_back();
        appendCsvLine(out, fields);
        out += '\n';
    }
    return out;
}

Result<std::vector<std::filesystem::path>> writeXlsxSheetsWithCsv(const std::vector<XlsxSheet>& sheets,
                                                                  const std::filesystem::path& path,
                                                                  Diagnostics* warnings)
{
    std::string base = path.filename().string();
    if (base.size() > 5 && base.compare(base.size() - 5, 5, ".xlsx") == 0)
        base.resize(base.size() - 5);
    // Claim every CSV name before the workbook, so a taken name stops the run before anything is written.
    for (const auto& sheet : sheets) {
        const auto csv = path.parent_path() / (base + "." + sheet.name + ".csv");
        std::error_code ec;
        if (std::filesystem::exists(std::filesystem::symlink_status(csv, ec)))
            return xlsxError(csv, csv.string() + " already exists (nothing is replaced)");
    }
    auto written = writeXlsxSheets(sheets, path, warnings);
    if (!written)
        return written.error();
    std::vector<std::filesystem::path> files { path };
    for (const auto& sheet : sheets) {
        const auto csv = path.parent_path() / (base + "." + sheet.name + ".csv");
        if (auto failure = writeFileAtomically(csv, xlsxSheetCsv(sheet)))
            return xlsxError(csv, failure->nameTaken ? csv.string() + " already exists (nothing is replaced)"
                                                     : failure->message);
        files.push_back(csv);
    }
    return files;
}

Result<bool> writeXlsxSheets(const std::vector<XlsxSheet>& sheets, const std::filesystem::path& path,
                             Diagnostics* warnings)
{
    try {
        return writeSheets(sheets, path, warnings);
    } catch (const std::bad_alloc&) {
        return xlsxError(path, "out of memory while writing " + path.string());
    }
}

} // namespace probescope::compare
