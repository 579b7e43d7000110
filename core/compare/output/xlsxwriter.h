// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/compare/table/cell.h"
#include "core/compare/table/comparetable.h"
#include "core/util/diagnostic.h"

#include <cstddef>
#include <cstdint>
#include <vector>
#include <filesystem>
#include <string>

namespace probescope::compare {

/// What one compare cell becomes in msprobe's xlsx (compare-spec A.11).
struct XlsxCell
{
    bool numeric = false; ///< a number cell holding `number`; otherwise a string cell holding `text`
    double number = 0.0;
    std::string text;     ///< an empty text is an empty cell
};

/**
 * @brief The xlsx value of a cell, as msprobe 1.2.2 hands it to openpyxl.
 *
 * Python ints and finite floats (not bools) are numbers; ±inf/NaN floats become the strings
 * `inf`/`-inf`/`nan` + TAB; everything else is the string Python's str() gives (None, True/False,
 * PyText as is), the strings `inf`, `-inf`, `nan` getting a TAB as well.
 */
XlsxCell xlsxCell(const Cell& cell);

/// Excel refuses longer cell texts (in characters); longer ones are cut to this length.
inline constexpr std::size_t kXlsxMaxCellChars = 32767;

/**
 * @brief Writes `table` as msprobe 1.2.2's `compare_result_{ts}.xlsx`.
 *
 * One worksheet named `Sheet`, row 1 = the header, then one row per table row with the cells of
 * xlsxCell(); every cell of a red/yellow row gets a solid FFFF0000/FFFF00 fill (A.9 step 6).
 *
 * The file is built under a temporary name in the same folder and renamed into place only when it
 * is complete; an existing `path` is never replaced (that is an error). Errors carry the id
 * `compare.xlsx` and name the file. Non-fatal findings (cell texts cut to kXlsxMaxCellChars) are
 * appended to `*warnings` when given.
 */
Result<bool> writeXlsx(const CompareTable& table, const std::filesystem::path& path, Diagnostics* warnings = nullptr);

/// One cell of a sheet written by writeXlsxSheets: what a pandas DataFrame cell becomes in openpyxl.
struct XlsxSheetCell
{
    enum class Kind : std::uint8_t { Empty, Number, Text, Bool };
    Kind kind = Kind::Empty;
    double number = 0.0; ///< Number (a NaN or infinite number is an empty cell, as pandas writes NaN)
    std::string text;    ///< Text (an empty text is an empty cell)
    bool boolean = false;

    static XlsxSheetCell ofNumber(double v) { return { Kind::Number, v, {}, false }; }
    static XlsxSheetCell ofText(std::string t) { return { Kind::Text, 0.0, std::move(t), false }; }
    static XlsxSheetCell ofBool(bool b) { return { Kind::Bool, 0.0, {}, b }; }
};

/// A sheet as pandas' DataFrame.to_excel(index=False) writes it: a header row (bold, bordered, centred), then rows.
struct XlsxSheet
{
    std::string name;
    std::vector<std::string> header;
    std::vector<std::vector<XlsxSheetCell>> rows;
};

/**
 * @brief Writes `sheets` in order as one workbook at `path`, built and claimed as writeXlsx does (an existing
 * `path` is never replaced; errors carry the id `compare.xlsx`). msprobe 26's config_check and merge_result
 * workbooks are written through this.
 */
Result<bool> writeXlsxSheets(const std::vector<XlsxSheet>& sheets, const std::filesystem::path& path,
                             Diagnostics* warnings = nullptr);

/// The text pandas reads back from the cell openpyxl wrote (read_excel(dtype=str, keep_default_na=False)): a number
/// is written "%.16g" and read as an int (no '.', 'e', 'E') or a float (its repr); a bool is True/False; empty "".
std::string xlsxSheetCellText(const XlsxSheetCell& cell);

/// One sheet as the fixtures' sheet CSVs spell it: pandas' to_csv(index=False) of that reading (header line, then
/// one line per row, '\n' line ends, Python's csv quoting).
std::string xlsxSheetCsv(const XlsxSheet& sheet);

/**
 * @brief writeXlsxSheets, then one CSV per sheet beside the workbook, `<xlsx base>.<sheet>.csv` (each claimed
 * without replacing). Returns the files written, the workbook first.
 */
Result<std::vector<std::filesystem::path>> writeXlsxSheetsWithCsv(const std::vector<XlsxSheet>& sheets,
                                                                  const std::filesystem::path& path,
                                                                  Diagnostics* warnings = nullptr);

} // namespace probescope::compare
