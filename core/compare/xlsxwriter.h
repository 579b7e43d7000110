// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/compare/cell.h"
#include "core/compare/comparetable.h"
#include "core/util/diagnostic.h"

#include <cstddef>
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

} // namespace probescope::compare
