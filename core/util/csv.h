// SPDX-License-Identifier: Apache-2.0
#pragma once
// CSV as Python's csv module reads and writes it (default dialect, QUOTE_MINIMAL): the one reader and writer
// of every CSV ProbeScope touches (compare results, run_ut results, free_benchmark.csv).

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace probescope {

/// Appends one field, quoted only when it holds ',', '"', '\n' or '\r' ('"' doubled inside). Python 3.11 leaves a
/// bare '\r' unquoted, which no reader splits back correctly; it is quoted here so every cell reads back unchanged.
void appendCsvField(std::string& out, std::string_view field);

/// What csvScan() finds in a text: a byte that makes appendCsvField quote it (',', '"', '\n', '\r'), a ';' (where
/// formulaGuard looks for a formula after the first one).
inline constexpr unsigned kCsvNeedsQuotes = 1;
inline constexpr unsigned kCsvSemicolon = 2;
/// Both looks of the CSV writer at a cell's text in one pass (16 bytes at a time).
unsigned csvScan(std::string_view text);
/// appendCsvField of a text that csvScan() found kCsvNeedsQuotes in, after `prefix` (inside the quotes).
void appendCsvQuoted(std::string& out, std::string_view prefix, std::string_view field);
/// Whether formulaGuard() can return "'" for a text starting with this byte and holding no ';'.
inline bool formulaTriggerLead(char c)
{
    return c == '=' || c == '+' || c == '-' || c == '@' || c == '%' || c == '\xef';
}

/// Appends one record's fields joined by ',' (no line terminator). A record of a single empty field is `""`, so it
/// does not read back as a blank line.
void appendCsvLine(std::string& out, const std::vector<std::string>& fields);

/// A text cell that a spreadsheet would run as a formula (=, +, -, @, % and their full-width forms first, or after
/// ';') gets a leading apostrophe; numbers such as "-1" and "-inf" are left alone. Every CSV writer of results uses it.
std::string guardFormula(std::string text);
/// What guardFormula puts before `text`: "'" or nothing (for writers that append without a copy).
std::string_view formulaGuard(std::string_view text);

/// One record of CSV text, with where it starts (for messages).
struct CsvRecord
{
    std::vector<std::string> fields;
    std::uint32_t line = 0;     ///< 1-based line where the record starts
    bool terminated = false;    ///< ended with a line break (a crashed writer may cut the last one short)
    bool unclosedQuote = false; ///< a quoted field ran to the end of the text
};

/**
 * @brief Splits CSV text into records as Python's csv reader does: quoted fields may hold ',', '""' and line
 * breaks; a quote is special only as a field's first character; records end at "\n", "\r\n" or "\r" outside
 * quotes; a final line break does not start a record. Never fails.
 *
 * `blankLines`: keep a blank line as a record with no fields (csv.reader) instead of skipping it (pandas).
 */
std::vector<CsvRecord> splitCsvRecords(std::string_view text, bool blankLines);

} // namespace probescope
