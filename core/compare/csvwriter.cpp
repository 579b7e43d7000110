// SPDX-License-Identifier: Apache-2.0
#include "compare/csvwriter.h"
#include "util/fileio.h"


namespace probescope::compare {

namespace {

bool needsQuotes(std::string_view field)
{
    return field.find_first_of(",\"\n\r") != std::string_view::npos;
}

void appendField(std::string& out, std::string_view field)
{
    if (!needsQuotes(field)) {
        out += field;
        return;
    }
    out += '"';
    for (char c : field) {
        if (c == '"')
            out += '"';
        out += c;
    }
    out += '"';
}

void appendLine(std::string& out, const std::vector<std::string>& fields)
{
    if (fields.size() == 1 && fields.front().empty()) {
        out += "\"\"";
        return;
    }
    for (std::size_t i = 0; i < fields.size(); ++i) {
        if (i)
            out += ',';
        appendField(out, fields[i]);
    }
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
    std::vector<std::string> record;
    std::string field;
    bool fieldStarted = false; // the current record has at least one field (possibly empty)
    bool atFieldStart = true; // a quote is special only as a field's first character
    std::size_t i = 0;
    const std::size_t n = text.size();

    const auto endRecord = [&] {
        if (fieldStarted)
            record.push_back(std::move(field));
        records.push_back(std::move(record));
        record.clear();
        field.clear();
        fieldStarted = false;
        atFieldStart = true;
    };

    while (i < n) {
        const char c = text[i];
        if (c == '"' && atFieldStart) {
            // Quoted field: runs to the closing quote; text after it up to the separator is kept as is.
            fieldStarted = true;
            atFieldStart = false;
            ++i;
            while (i < n) {
                if (text[i] == '"') {
                    if (i + 1 < n && text[i + 1] == '"') {
                        field += '"';
                        i += 2;
                        continue;
                    }
                    ++i;
                    break;
                }
                field += text[i++];
            }
            continue;
        }
        if (c == ',') {
            record.push_back(std::move(field));
            field.clear();
            fieldStarted = true;
            atFieldStart = true;
            ++i;
            continue;
        }
        if (c == '\n' || c == '\r') {
            i += (c == '\r' && i + 1 < n && text[i + 1] == '\n') ? 2 : 1;
            endRecord();
            continue;
        }
        field += c;
        fieldStarted = true;
        atFieldStart = false;
        ++i;
    }
    if (fieldStarted || !record.empty())
        endRecord();
    return records;
}

} // namespace probescope::compare
