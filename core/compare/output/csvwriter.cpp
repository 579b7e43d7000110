// SPDX-License-Identifier: Apache-2.0
#include "core/compare/output/csvwriter.h"

#include "core/util/csv.h"
#include "core/util/fileio.h"
#include "core/util/parallel.h"

#include <algorithm>
#include <condition_variable>
#include <limits>
#include <mutex>


namespace probescope::compare {

namespace {

void appendLine(std::string& out, const std::vector<std::string>& fields)
{
    appendCsvLine(out, fields);
}

} // namespace

CsvStream::CsvStream(TextSink sink, std::size_t flushBytes) : m_sink(std::move(sink)), m_flushBytes(flushBytes)
{
    if (flushBytes <= (std::size_t { 4 } << 20))
        m_buffer.reserve(flushBytes + 4096);
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

void CsvStream::swapBuffer(std::string& other)
{
    m_buffer.swap(other);
    m_recordStart = m_buffer.size();
    m_fields = 0;
}

bool streamCsvRows(const std::vector<std::string>& header, std::size_t rows, const TextSink& sink,
                   const std::function<void(CsvStream& csv, std::size_t row)>& formatRow)
{
    return streamCsvBlocks(header, rows, sink, [&formatRow](CsvStream& csv, std::size_t begin, std::size_t end) {
        for (std::size_t r = begin; r < end; ++r)
            formatRow(csv, r);
    });
}

bool streamCsvBlocks(const std::vector<std::string>& header, std::size_t rows, const TextSink& sink,
                     const std::function<void(CsvStream& csv, std::size_t begin, std::size_t end)>& formatRows)
{
    // ~400 bytes a row of a statistics table: blocks of ~1.6 MB, small enough to stay in cache while written.
    constexpr std::size_t kBlockRows = 4096;
    CsvStream head(sink);
    head.record(header);
    if (!head.finish())
        return false;
    const std::size_t blocks = (rows + kBlockRows - 1) / kBlockRows;
    const unsigned threads = static_cast<unsigned>(std::min<std::size_t>(resolveThreadCount(0), blocks));
    if (threads <= 1) {
        CsvStream csv(sink);
        formatRows(csv, 0, rows);
        return csv.finish();
    }

    // Block b is formatted into slot b % slots.size() once block b - slots.size() has been written; the calling
    // thread writes the blocks in order as they become ready.
    struct Slot
    {
        std::string text;
        bool ready = false;
    };
    std::vector<Slot> slots(2 * std::size_t { threads });
    std::mutex mutex;
    std::condition_variable changed;
    std::size_t next = 0;    // the next block to format
    std::size_t written = 0; // blocks handed to the sink
    bool stop = false;

    auto worker = [&] {
        CsvStream csv([](std::string_view) { return true; }, std::numeric_limits<std::size_t>::max());
        std::unique_lock lock(mutex);
        while (!stop && next < blocks) {
            const std::size_t b = next++;
            Slot& slot = slots[b % slots.size()];
            changed.wait(lock, [&] { return stop || b < written + slots.size(); });
            if (stop)
                return;
            csv.swapBuffer(slot.text); // the slot's emptied buffer, reused
            lock.unlock();
            const std::size_t begin = b * kBlockRows;
            formatRows(csv, begin, std::min(rows, begin + kBlockRows));
            lock.lock();
            csv.swapBuffer(slot.text);
            slot.ready = true;
            changed.notify_all();
        }
    };

    bool ok = true;
    auto writer = [&] {
        for (std::size_t b = 0; b < blocks && ok; ++b) {
            Slot& slot = slots[b % slots.size()];
            {
                std::unique_lock lock(mutex);
                changed.wait(lock, [&] { return slot.ready; });
            }
            ok = sink(slot.text); // the workers never touch a ready slot
            std::lock_guard lock(mutex);
            slot.text.clear();
            slot.ready = false;
            ++written;
            stop = !ok;
            changed.notify_all();
        }
    };
    // The threads come from util/parallel (the one pool): job 0 is the writer, the others format. parallelFor hands
    // out indices in order and every thread takes its first index before it runs anything, so with as many jobs as
    // threads the writer always runs beside the formatters (none waits for a writer that has not started).
    const unsigned roles = threads + 1;
    parallelFor(roles, roles, [&](std::size_t role) {
        if (role == 0)
            writer();
        else
            worker();
    });
    return ok;
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
