// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace probescope::compare {

/**
 * @brief CSV text as pandas `DataFrame.to_csv(index=False)` writes it (Python csv module, QUOTE_MINIMAL).
 *
 * Fields are joined with ',', every line ends with '\n'. A field is quoted only when it holds ',', '"',
 * '\n' or '\r' ('"' doubled inside); spaces and TABs are left bare. A row made of a single empty field
 * is written as `""` so it does not read back as a blank line.
 *
 * Python 3.11's writer (lineterminator '\n') leaves a bare '\r' unquoted, which makes a file no reader
 * can split correctly; we quote it so that every cell reads back unchanged.
 */
std::string toCsv(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows);

/// Receives a file's text piece by piece, in order; returning false stops the writer (a failed write).
using TextSink = std::function<bool(std::string_view)>;

/**
 * @brief toCsv() for tables of millions of rows: records are formatted into one reusable buffer that goes to a
 * sink every few MB, so no text of the whole file is ever held.
 */
class CsvStream
{
public:
    explicit CsvStream(TextSink sink, std::size_t flushBytes = std::size_t { 4 } << 20);
    /// Appends a field, quoted as toCsv() quotes it.
    void field(std::string_view text);
    /// Starts a field whose text the caller appends to the returned buffer; it must need no quotes (numbers).
    std::string& rawField()
    {
        if (m_fields++)
            m_buffer += ',';
        return m_buffer;
    }
    void record(const std::vector<std::string>& fields);
    void endRecord();
    /// Hands the rest to the sink; false if the sink failed (now or before).
    bool finish();
    /// Exchanges the text formatted so far (whole records) with `other`: a writer that never flushes hands its
    /// text over without a copy, and takes back an emptied buffer to reuse.
    void swapBuffer(std::string& other);

private:
    TextSink m_sink;
    std::size_t m_flushBytes;
    std::string m_buffer;
    std::size_t m_recordStart = 0;
    std::size_t m_fields = 0;
    bool m_ok = true;
};

/**
 * @brief Streams a header and `rows` records, formatted by `formatRow` (which appends one record's fields and
 * ends it) in blocks of rows on every hardware thread; the sink gets the blocks in row order, so the text does not
 * depend on the thread count. `formatRow` is called from several threads at once.
 */
bool streamCsvRows(const std::vector<std::string>& header, std::size_t rows, const TextSink& sink,
                   const std::function<void(CsvStream& csv, std::size_t row)>& formatRow);

/**
 * @brief streamCsvRows() with `formatRows(csv, begin, end)` formatting the records of rows [begin, end) (no call
 * per row). Blocks are formatted on every hardware thread while the calling thread hands finished blocks to the
 * sink in row order, so formatting and writing overlap; at most two blocks a thread are held.
 */
bool streamCsvBlocks(const std::vector<std::string>& header, std::size_t rows, const TextSink& sink,
                     const std::function<void(CsvStream& csv, std::size_t begin, std::size_t end)>& formatRows);

/// The text a CSV writer streams, collected (for tests and small tables).
std::string collectText(const std::function<bool(const TextSink&)>& write);

/// One CSV line (without the terminator) with the quoting rules of toCsv().
std::string csvLine(const std::vector<std::string>& fields);

/**
 * @brief Parses CSV text (RFC 4180 style, as Python's csv reader does with the default dialect).
 *
 * Quoted fields may hold ',', '""' and line breaks. Records end at "\n", "\r\n" or "\r" outside quotes;
 * a final line break does not start a record; a blank line is a record with no fields. Never fails:
 * an unterminated quote runs to the end of the text.
 */
std::vector<std::vector<std::string>> parseCsv(std::string_view text);

} // namespace probescope::compare
