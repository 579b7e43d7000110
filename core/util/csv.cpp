// SPDX-License-Identifier: Apache-2.0
#include "core/util/csv.h"

namespace probescope {

void appendCsvField(std::string& out, std::string_view field)
{
    if (field.find_first_of(",\"\n\r") == std::string_view::npos) {
        out += field;
        return;
    }
    out += '"';
    for (const char c : field) {
        if (c == '"')
            out += '"';
        out += c;
    }
    out += '"';
}

void appendCsvLine(std::string& out, const std::vector<std::string>& fields)
{
    if (fields.size() == 1 && fields.front().empty()) {
        out += "\"\"";
        return;
    }
    for (std::size_t i = 0; i < fields.size(); ++i) {
        if (i)
            out += ',';
        appendCsvField(out, fields[i]);
    }
}

std::vector<CsvRecord> splitCsvRecords(std::string_view text, bool blankLines)
{
    std::vector<CsvRecord> records;
    std::uint32_t line = 1;
    std::size_t i = 0;
    const std::size_t n = text.size();
    while (i < n) {
        if (text[i] == '\n' || text[i] == '\r') {
            i += (text[i] == '\r' && i + 1 < n && text[i + 1] == '\n') ? 2 : 1;
            if (blankLines)
                records.push_back(CsvRecord { {}, line, true, false });
            ++line;
            continue;
        }
        CsvRecord rec;
        rec.line = line;
        std::string field;
        bool atFieldStart = true;
        while (i < n) {
            const char c = text[i];
            if (c == '"' && atFieldStart) {
                // Quoted: runs to the closing quote; text after it up to the separator is kept as is.
                atFieldStart = false;
                ++i;
                bool closed = false;
                while (i < n) {
                    if (text[i] == '"') {
                        if (i + 1 < n && text[i + 1] == '"') {
                            field += '"';
                            i += 2;
                            continue;
                        }
                        ++i;
                        closed = true;
                        break;
                    }
                    if (text[i] == '\n')
                        ++line;
                    field += text[i++];
                }
                rec.unclosedQuote = !closed;
                continue;
            }
            if (c == ',') {
                rec.fields.push_back(std::move(field));
                field.clear();
                atFieldStart = true;
                ++i;
                continue;
            }
            if (c == '\n' || c == '\r') {
                i += (c == '\r' && i + 1 < n && text[i + 1] == '\n') ? 2 : 1;
                ++line;
                rec.terminated = true;
                break;
            }
            field += c;
            atFieldStart = false;
            ++i;
        }
        rec.fields.push_back(std::move(field));
        records.push_back(std::move(rec));
    }
    return records;
}

std::string_view formulaGuard(std::string_view text)
{
    static constexpr std::string_view triggers[] = { "=", "+", "-", "@", "%", "\xef\xbc\x8b", "\xef\xbc\x8d",
                                                     "\xef\xbc\x9d", "\xef\xbc\x85", "\xef\xbc\xa0" };
    auto startsWithTrigger = [&](std::string_view s) {
        for (std::string_view t : triggers) {
            if (s.substr(0, t.size()) == t)
                return true;
        }
        return false;
    };
    bool risky = startsWithTrigger(text);
    for (std::size_t semi = text.find(';'); !risky && semi != std::string::npos; semi = text.find(';', semi + 1))
        risky = startsWithTrigger(text.substr(semi + 1));
    if (!risky)
        return {};
    const std::string copy(text); // strtod needs the terminator; risky texts are rare
    char* end = nullptr;
    std::strtod(copy.c_str(), &end);
    if (!copy.empty() && end == copy.c_str() + copy.size())
        return {}; // a number such as -1 or -0.5
    return "'";
}

std::string guardFormula(std::string text)
{
    const std::string_view guard = formulaGuard(text);
    return guard.empty() ? text : std::string(guard) + text;
}

} // namespace probescope
