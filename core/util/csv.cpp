// SPDX-License-Identifier: Apache-2.0
#include "core/util/csv.h"

#include <algorithm>
#include <array>
#include <cstdlib>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace probescope {

namespace {

constexpr std::array<std::uint8_t, 256> kScanTable = [] {
    std::array<std::uint8_t, 256> t {};
    t[static_cast<unsigned char>(',')] = kCsvNeedsQuotes;
    t[static_cast<unsigned char>('"')] = kCsvNeedsQuotes;
    t[static_cast<unsigned char>('\n')] = kCsvNeedsQuotes;
    t[static_cast<unsigned char>('\r')] = kCsvNeedsQuotes;
    t[static_cast<unsigned char>(';')] = kCsvSemicolon;
    return t;
}();

} // namespace

unsigned csvScan(std::string_view text)
{
    unsigned flags = 0;
    const char* p = text.data();
    std::size_t n = text.size();
#if defined(__SSE2__)
    const __m128i comma = _mm_set1_epi8(',');
    const __m128i quote = _mm_set1_epi8('"');
    const __m128i lf = _mm_set1_epi8('\n');
    const __m128i cr = _mm_set1_epi8('\r');
    const __m128i semicolon = _mm_set1_epi8(';');
    for (; n >= 16; p += 16, n -= 16) {
        const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
        const __m128i special = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, comma), _mm_cmpeq_epi8(v, quote)),
                                             _mm_or_si128(_mm_cmpeq_epi8(v, lf), _mm_cmpeq_epi8(v, cr)));
        if (_mm_movemask_epi8(special))
            flags |= kCsvNeedsQuotes;
        if (_mm_movemask_epi8(_mm_cmpeq_epi8(v, semicolon)))
            flags |= kCsvSemicolon;
    }
#endif
    for (; n > 0; ++p, --n)
        flags |= kScanTable[static_cast<unsigned char>(*p)];
    return flags;
}

void appendCsvQuoted(std::string& out, std::string_view prefix, std::string_view field)
{
    out += '"';
    out += prefix;
    // Runs between quotes are copied whole; each '"' is doubled.
    for (std::size_t q = field.find('"'); q != std::string_view::npos; q = field.find('"')) {
        out.append(field.data(), q + 1);
        out += '"';
        field.remove_prefix(q + 1);
    }
    out += field;
    out += '"';
}

void appendCsvField(std::string& out, std::string_view field)
{
    if (csvScan(field) & kCsvNeedsQuotes)
        appendCsvQuoted(out, {}, field);
    else
        out += field;
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
    // strtod needs the terminator: short texts ("-1", the Data_name of every statistics row) are copied on the stack.
    std::array<char, 64> shortCopy {};
    std::string longCopy;
    const char* begin = shortCopy.data();
    if (text.size() < shortCopy.size()) {
        std::copy(text.begin(), text.end(), shortCopy.begin());
    } else {
        longCopy.assign(text);
        begin = longCopy.c_str();
    }
    char* end = nullptr;
    std::strtod(begin, &end);
    if (!text.empty() && end == begin + text.size())
        return {}; // a number such as -1 or -0.5
    return "'";
}

std::string guardFormula(std::string text)
{
    const std::string_view guard = formulaGuard(text);
    return guard.empty() ? text : std::string(guard) + text;
}

} // namespace probescope
