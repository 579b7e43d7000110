// SPDX-License-Identifier: Apache-2.0
#pragma once
// Reading an xlsx workbook's cell values (what pandas.read_excel with openpyxl sees), as part of the gate: the
// archive through ZipReader (bounded, hostile-safe), the parts by a small forward XML scan (no regex, linear in the
// part's size, no recursion). Only what a table needs: sheet names in order, and per cell its type and text.

#include "core/util/diagnostic.h"
#include "core/util/ziparchive.h"

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace probescope {

/// One cell as stored: openpyxl's reading of it is `Number` -> int or float from `text` (a '.', 'e' or 'E' makes it a
/// float), `Bool` -> text "1"/"0", `Text` -> the string, `Error` -> the error text (#N/A, ...).
struct XlsxValue
{
    enum class Kind : std::uint8_t { Empty, Number, Text, Bool, Error };
    Kind kind = Kind::Empty;
    std::string text;
};

struct XlsxRow
{
    std::uint32_t row = 0;                                         ///< 0-based sheet row
    std::vector<std::pair<std::uint32_t, XlsxValue>> cells; ///< (0-based column, value), in file order
    const XlsxValue* at(std::uint32_t column) const;
};

struct XlsxSheetData
{
    std::string name;
    std::vector<XlsxRow> rows; ///< the rows that have cells, in file order
};

struct XlsxReadLimits
{
    ZipLimits zip;
    std::uint64_t maxCells = 50'000'000;
};

/// Every sheet of the workbook at `path`, in workbook order. Errors (id `xlsx.read`, or the zip's) name the file
/// and the part.
Result<std::vector<XlsxSheetData>> readXlsxSheets(const std::filesystem::path& path, const XlsxReadLimits& limits = {});

} // namespace probescope
