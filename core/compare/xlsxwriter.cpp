// SPDX-License-Identifier: Apache-2.0
#include "core/compare/xlsxwriter.h"

#include "core/compare/pytext.h"
#include "core/util/outputfile.h"

#include <xlsxwriter.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
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
    return makeError("compare.xlsx", SourceLocation { path.string(), std::nullopt, 0, 0 }, std::move(message));
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
    lxw_worksheet* sheet = workbook_add_worksheet(workbook.get(), "Sheet");
    lxw_format* red = solidFill(workbook.get(), kRed);
    lxw_format* yellow = solidFill(workbook.get(), kYellow);
    if (!sheet || !red || !yellow)
        return xlsxError(path, "cannot set up the xlsx workbook for " + path.string());

    std::size_t truncated = 0;
    std::string firstTruncated;
    auto writeText = [&](lxw_row_t r, lxw_col_t c, std::string text, lxw_format* format) {
        const std::size_t keep = utf8Prefix(text, kXlsxMaxCellChars);
        if (keep < text.size()) {
            if (truncated++ == 0)
                firstTruncated = cellName(r, c);
            text.resize(keep);
        }
        // An empty text writes a blank cell when it has a fill, nothing otherwise (an empty cell).
        return worksheet_write_string(sheet, r, c, text.c_str(), format);
    };

    for (std::size_t c = 0; c < table.header.size(); ++c) {
        const lxw_error err = writeText(0, static_cast<lxw_col_t>(c), table.header[c], nullptr);
        if (err != LXW_NO_ERROR)
            return xlsxError(path, "cannot write cell " + cellName(0, static_cast<lxw_col_t>(c)) + ": " + lxw_strerror(err));
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
                                               : writeText(xr, xc, std::move(cell.text), format);
            if (err != LXW_NO_ERROR)
                return xlsxError(path, "cannot write cell " + cellName(xr, xc) + ": " + lxw_strerror(err));
        }
        // openpyxl fills every column of a highlighted row, so short rows get filled blanks too.
        for (std::size_t c = row.size(); format && c < columns; ++c)
            worksheet_write_blank(sheet, xr, static_cast<lxw_col_t>(c), format);
    }

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

    if (truncated > 0 && warnings) {
        warnings->push_back(makeWarning("compare.xlsx-truncated", SourceLocation { path.string(), std::nullopt, 0, 0 },
                                        std::to_string(truncated) + " cell text(s) longer than "
                                            + std::to_string(kXlsxMaxCellChars)
                                            + " characters (Excel's limit) were cut, the first at " + firstTruncated));
    }
    return true;
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

} // namespace probescope::compare
