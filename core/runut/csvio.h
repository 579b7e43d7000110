// SPDX-License-Identifier: Apache-2.0
#pragma once
// The CSV files of run_ut and api_precision_compare as msprobe writes them: Python's csv module with
// the default dialect (QUOTE_MINIMAL, "\r\n" line ends) into files opened with encoding="utf-8-sig"
// (a BOM at the start). Reading accepts files with or without BOM and any of "\r\n", "\n", "\r".

#include "core/util/diagnostic.h"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace probescope::runut {

/// The UTF-8 byte order mark that "utf-8-sig" writes once at the start of a file.
inline constexpr std::string_view kUtf8Bom = "\xEF\xBB\xBF";

/// msprobe's SPACE cell: a single blank, written where a metric has no value.
inline constexpr std::string_view kSpace = " ";

/**
 * @brief One CSV record as Python's csv.writer writes it, "\r\n" included.
 *
 * A cell is quoted when it holds ',', '"', '\r' or '\n' ('"' doubled inside). A record made of one
 * empty cell is written as `""` so that it does not read back as a blank line. Blanks (msprobe's SPACE
 * cells) are left bare, as Python does.
 */
std::string csvLine(const std::vector<std::string>& cells);

struct CsvRow
{
    std::vector<std::string> cells;
    std::uint32_t line = 0; ///< 1-based physical line where the record starts (the header is line 1)
};

struct CsvTable
{
    std::filesystem::path path;
    std::vector<std::string> header;
    std::vector<CsvRow> rows; ///< blank lines are skipped, as pandas and csv.DictReader do

    /// Index of the header cell equal to `name`, or nullopt.
    std::optional<std::size_t> column(std::string_view name) const;
};

/**
 * @brief Parses CSV text. The first record is the header; a leading BOM is dropped.
 *
 * Strict where Python's reader is lenient, because a damaged file should be reported, not guessed:
 * an unterminated quote, a character after a closing quote other than ',' or a line end, and a NUL
 * byte are errors (id `csv.malformed`) naming `fileForMessages` and the line. Empty text (or a BOM
 * alone) is `csv.empty`.
 */
Result<CsvTable> parseCsvText(std::string_view text, const std::string& fileForMessages);

/// Reads and parses a whole CSV file (errors of readTextFile, then those of parseCsvText).
Result<CsvTable> readCsv(const std::filesystem::path& path);

/**
 * @brief Creates `path` holding the BOM and `header`, refusing to replace an existing file.
 *
 * Error ids: `csv.exists` (the path exists: msprobe's outputs carry a timestamp, so an existing file
 * means two runs in the same second or a wrong folder, and silently replacing results is worse),
 * `io.write`. Returns nullopt on success.
 */
std::optional<Diagnostic> createCsv(const std::filesystem::path& path, const std::vector<std::string>& header);

/**
 * @brief Appends already formatted records (see csvLine) to an existing file and flushes them.
 *
 * Appending record by record is what makes run_ut's resume possible after a crash. Error id `io.write`.
 */
std::optional<Diagnostic> appendCsv(const std::filesystem::path& path, std::string_view lines);

} // namespace probescope::runut
