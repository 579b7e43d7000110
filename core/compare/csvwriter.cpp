// SPDX-License-Identifier: Apache-2.0
#include "core/compare/csvwriter.h"

#include "core/util/csv.h"
#include "core/util/fileio.h"
#include "core/util/parallel.h"

#include <algorithm>
#include <limits>


namespace probescope::compare {

namespace {

void appendLine(std::string& out, const std::vector<std::string>& fields)
{
    appendCsvLine(out, fields);
}

} // namespace

CsvStream::CsvStream(TextSink sink, std::size_t flushBytes) : m_sink(std::move(sink)), m_flushBytes(flushBytes)
{
    m_buffer.reserve(std::min(flushBytes, std::size_t { 4 } << 20) + 4096);
}

std::string& CsvStream::rawField()
{
    if (m_fields++)
        m_buffer += ',';
    return m_buffer;
}

void CsvStream::field(std::string_view text)
{
    appendCsvField(rawField(), text);
}

void CsvStream::record(const std::vector<std::string>& fields)
{
    for (const std::string& f : fields)
        field(f);
    endRecord();
}

void CsvStream::endRecord()
{
    // A record of a single empty field is written "" (toCsv's rule), so it does not read back as a blank line.
    if (m_fields == 1 && m_buffer.size() == m_recordStart)
        m_buffer += "\"\"";
    m_buffer += '\n';
    m_fields = 0;
    if (m_buffer.size() >= m_flushBytes) {
        m_ok = m_ok && m_sink(m_buffer);
        m_buffer.clear();
    }
    m_recordStart = m_buffer.size();
}

bool CsvStream::finish()
{
    if (!m_buffer.empty())
        m_ok = m_ok && m_sink(m_buffer);
    m_buffer.clear();
    m_recordStart = 0;
    return m_ok;
}

bool streamCsvRows(const std::vector<std::string>& header, std::size_t rows, const TextSink& sink,
                   const std::function<void(CsvStream& csv, std::size_t row)>& formatRow)
{
    // Formatting numbers as Python prints them is the cost (~150 MB/s a core); the blocks keep every core busy.
    constexpr std::size_t kBlockRows = 8192;
    const unsigned threads = resolveThreadCount(0);
    CsvStream head(sink);
    head.record(header);
    if (!head.finish())
        return false;
    std::vector<std::string> texts(threads);
    for (std::size_t first = 0; first < rows; first += kBlockRows * threads) {
        const std::size_t blocks = std::min<std::size_t>(threads, (rows - first + kBlockRows - 1) / kBlockRows);
        parallelFor(blocks, threads, [&](std::size_t b) {
            std::string& text = texts[b];
            text.clear();
            CsvStream csv(
                [&text](std::string_view chunk) {
                    text += chunk;
                    return true;
                },
                std::numeric_limits<std::size_t>::max());
            const std::size_t begin = first + b * kBlockRows;
            const std::size_t end = std::min(rows, begin + kBlockRows);
            for (std::size_t r = begin; r < end; ++r)
                formatRow(csv, r);
            csv.finish();
        });
        for (std::size_t b = 0; b < blocks; ++b) {
            if (!sink(texts[b]))
                return false;
        }
    }
    return true;
}

std::string collectText(const std::function<bool(const TextSink&)>& write)
{
    std::string out;
    write([&out](std::string_view chunk) {
        out += chunk;
        return true;
    });
    return out;
}

std::string csvLine(const std::vector<std::string>& fields)
{
    std::string out;
    appendLine(out, fields);
    return out;
}

std::string toCsv(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows)
{
    std::string out;
    std::size_t estimate = 0;
    for (const auto& field : header)
        estimate += field.size() + 1;
    out.reserve(estimate * (rows.size() + 1));
    appendLine(out, header);
    out += '\n';
    for (const auto& row : rows) {
        appendLine(out, row);
        out += '\n';
    }
    return out;
}

std::vector<std::vector<std::string>> parseCsv(std::string_view text)
{
    std::vector<std::vector<std::string>> records;
    for (CsvRecord& record : splitCsvRecords(text, true))
        records.push_back(std::move(record.fields));
    return records;
}

} // namespace probescope::compare
