// SPDX-License-Identifier: Apache-2.0
#include "core/compare/csvwriter.h"

#include "core/util/csv.h"
#include "core/util/fileio.h"


namespace probescope::compare {

namespace {

void appendLine(std::string& out, const std::vector<std::string>& fields)
{
    appendCsvLine(out, fields);
}

} // namespace

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
