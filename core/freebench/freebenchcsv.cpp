// SPDX-License-Identifier: Apache-2.0
#include "core/freebench/freebenchcsv.h"

#include "core/dump/dumplayout.h"
#include "core/util/csv.h"
#include "core/util/fileio.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <set>
#include <system_error>
#include <unordered_map>

namespace probescope::freebench {

namespace fs = std::filesystem;

namespace {

constexpr std::size_t kColumns = std::size(kFreeBenchColumns);

using Record = CsvRecord;

// Python's csv reader, default dialect; blank lines are no records, as csv.reader's consumers and pandas skip them.
std::vector<Record> splitRecords(std::string_view text)
{
    return splitCsvRecords(text, false);
}

bool isHeader(const std::vector<std::string>& fields)
{
    if (fields.size() != kColumns)
        return false;
    for (std::size_t c = 0; c < kColumns; ++c) {
        if (fields[c] != kFreeBenchColumns[c])
            return false;
    }
    return true;
}

bool parseInt(std::string_view s, std::int64_t& out)
{
    if (s.empty())
        return false;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    return ec == std::errc() && end == s.data() + s.size();
}

// Python's str(float): repr digits, "inf", "-inf", "nan".
bool parseDouble(std::string_view s, double& out)
{
    if (s.empty())
        return false;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    return ec == std::errc() && end == s.data() + s.size();
}

std::string inQuotes(std::string_view s)
{
    std::string q = "'";
    q += s;
    q += '\'';
    return q;
}

SourceLocation at(const fs::path& file, std::uint32_t line)
{
    SourceLocation loc;
    loc.file = file.string();
    loc.line = line;
    loc.column = 0;
    return loc;
}

// Why `fields` is not a valid row, or "" when `row` was filled.
std::string parseRow(const std::vector<std::string>& fields, FreeBenchRow& row)
{
    if (fields.size() != kColumns)
        return std::to_string(fields.size()) + " fields, expected " + std::to_string(kColumns)
            + " (rank, pert_mode, stage, step, api_name, max_rel, dtype, shape, output_index)";
    if (!parseInt(fields[0], row.rank))
        return std::string("rank ") + inQuotes(fields[0]) + " is not an integer";
    row.pertMode = fields[1];
    row.stage = fields[2];
    if (!parseInt(fields[3], row.step))
        return std::string("step ") + inQuotes(fields[3]) + " is not an integer";
    row.apiName = fields[4];
    if (row.apiName.empty())
        return "api_name is empty";
    const std::string& maxRel = fields[5];
    if (maxRel.empty()) {
        row.maxRelKind = MaxRelKind::Empty;
    } else if (maxRel == "symbol_flipping") {
        row.maxRelKind = MaxRelKind::SymbolFlipping;
    } else if (parseDouble(maxRel, row.maxRel)) {
        row.maxRelKind = MaxRelKind::Number;
    } else {
        return std::string("max_rel ") + inQuotes(maxRel) + " is neither a number, symbol_flipping nor empty";
    }
    row.dtype = fields[6];
    row.shape = fields[7];
    if (!fields[8].empty()) {
        std::int64_t index = 0;
        if (!parseInt(fields[8], index) || index < 0)
            return std::string("output_index ") + inQuotes(fields[8]) + " is not a non-negative integer";
        row.outputIndex = index;
    }
    return {};
}

constexpr const char* kFileName = "free_benchmark.csv";

} // namespace

double freeBenchThreshold(std::string_view dtype, std::string_view pertMode)
{
    if (pertMode == "no_change")
        return 0.0;
    if (dtype == "torch.float16")
        return 0.002;
    if (dtype == "torch.bfloat16")
        return 0.004;
    return 0.0002; // torch.float32 and every other dtype
}

double freeBenchExcess(const FreeBenchRow& row)
{
    switch (row.maxRelKind) {
    case MaxRelKind::SymbolFlipping:
        return std::numeric_limits<double>::infinity();
    case MaxRelKind::Empty:
        return std::numeric_limits<double>::quiet_NaN();
    case MaxRelKind::Number:
        break;
    }
    const double threshold = freeBenchThreshold(row.dtype, row.pertMode);
    if (threshold > 0)
        return row.maxRel / threshold;
    return row.maxRel > 0 ? std::numeric_limits<double>::infinity() : 0.0;
}

void FreeBenchTable::append(FreeBenchTable&& other)
{
    const auto offset = static_cast<std::uint32_t>(files.size());
    files.insert(files.end(), other.files.begin(), other.files.end());
    // No exact reserve here: appending file after file would then reallocate every time (quadratic).
    for (FreeBenchRow& r : other.rows) {
        r.file += offset;
        rows.push_back(std::move(r));
    }
    diagnostics.insert(diagnostics.end(), other.diagnostics.begin(), other.diagnostics.end());
}

Result<FreeBenchTable> parseFreeBenchmarkCsv(std::string_view text, const fs::path& file)
{
    if (text.substr(0, 3) == "\xEF\xBB\xBF")
        text.remove_prefix(3);
    FreeBenchTable table;
    table.files.push_back(file);
    const std::vector<Record> records = splitRecords(text);
    if (records.empty())
        return table; // created, header not flushed yet: no rows
    std::size_t first = 0;
    if (isHeader(records[0].fields)) {
        first = 1;
    } else {
        FreeBenchRow probe;
        if (!parseRow(records[0].fields, probe).empty())
            return makeError("freebench.header", at(file, records[0].line),
                             "not a free_benchmark.csv: the header should be rank,pert_mode,stage,step,api_name,"
                             "max_rel,dtype,shape,output_index");
        table.diagnostics.push_back(makeWarning("freebench.no-header", at(file, records[0].line),
                                                "the file has no header line; its rows are read as msprobe's columns"));
    }
    for (std::size_t r = first; r < records.size(); ++r) {
        const Record& rec = records[r];
        if (isHeader(rec.fields))
            continue; // appended by another run
        FreeBenchRow row;
        const std::string problem = parseRow(rec.fields, row);
        if (problem.empty() && !rec.unclosedQuote) {
            row.line = rec.line;
            table.rows.push_back(std::move(row));
            continue;
        }
        const bool last = r + 1 == records.size();
        if (last && !rec.terminated && (rec.unclosedQuote || rec.fields.size() < kColumns)) {
            table.diagnostics.push_back(makeWarning("freebench.truncated", at(file, rec.line),
                                                    "the last row is cut short (the run may have stopped while "
                                                    "writing it); it is skipped"));
            continue;
        }
        table.diagnostics.push_back(makeError("freebench.row", at(file, rec.line),
                                              rec.unclosedQuote ? std::string("a quoted field is not closed")
                                                                : problem + "; the row is skipped"));
    }
    return table;
}

Result<FreeBenchTable> readFreeBenchmarkCsv(const fs::path& file)
{
    auto text = readTextFile(file);
    if (!text)
        return text.error();
    return parseFreeBenchmarkCsv(*text, file);
}

std::vector<fs::path> findFreeBenchmarkCsvs(const fs::path& input)
{
    return dump::findInLayout(input, kFileName); // the step/rank layout is dump's to know
}

FreeBenchTable loadFreeBenchmark(const std::vector<fs::path>& inputs, ProgressSink* progress)
{
    std::vector<fs::path> files;
    std::set<fs::path> seen;
    for (const fs::path& input : inputs) {
        for (fs::path& f : findFreeBenchmarkCsvs(input)) {
            std::error_code ec;
            fs::path canonical = fs::weakly_canonical(f, ec);
            if (seen.insert(ec ? f : canonical).second)
                files.push_back(std::move(f));
        }
    }
    FreeBenchTable table;
    if (progress)
        progress->setRange(files.size());
    for (std::size_t i = 0; i < files.size(); ++i) {
        if (progress && progress->isCancelled())
            break;
        auto one = readFreeBenchmarkCsv(files[i]);
        if (one)
            table.append(std::move(*one));
        else
            table.diagnostics.push_back(one.error());
        if (progress)
            progress->advance(i + 1);
    }
    return table;
}

std::vector<FlaggedApi> flaggedApis(const FreeBenchTable& table, std::int64_t step, std::int64_t rank)
{
    // Larger is worse; rows without a max_rel (to_cpu, integer outputs) rank below every number.
    auto severity = [&](std::size_t i) {
        const double e = freeBenchExcess(table.rows[i]);
        return std::isnan(e) ? -1.0 : e;
    };
    std::vector<FlaggedApi> out;
    std::unordered_map<std::string, std::size_t> slot;
    for (std::size_t i = 0; i < table.rows.size(); ++i) {
        const FreeBenchRow& row = table.rows[i];
        if ((step >= 0 && row.step != step) || (rank >= 0 && row.rank != rank))
            continue;
        const auto [it, added] = slot.try_emplace(row.apiName, out.size());
        if (added) {
            out.push_back(FlaggedApi { row.apiName, i, 1 });
            continue;
        }
        FlaggedApi& api = out[it->second];
        ++api.rowCount;
        if (severity(i) > severity(api.worstRow))
            api.worstRow = i;
    }
    return out;
}

} // namespace probescope::freebench
