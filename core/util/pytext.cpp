// SPDX-License-Identifier: Apache-2.0
#include "core/util/pytext.h"

#include <array>
#include <charconv>
#include <cstdint>
#include <cmath>
#include <cstring>
#include <string_view>

namespace probescope {

bool splitScientific(std::string_view text, ShortestDigits& d)
{
    // "-d.ddddde-xx" as std::to_chars(v, chars_format::scientific) writes it: the exponent has 2 or 3 digits.
    const std::size_t n = text.size();
    std::size_t e = n;
    if (n >= 5 && text[n - 4] == 'e')
        e = n - 4;
    else if (n >= 6 && text[n - 5] == 'e')
        e = n - 5;
    if (e == n || (text[e + 1] != '-' && text[e + 1] != '+'))
        return false;
    // The 2 or 3 exponent digits without a loop: the CSV writer splits millions of numbers, and the loop's
    // position in the binary moved its cost by 3x between two builds of the same source (issue 37, the 1M CLI).
    const unsigned d0 = static_cast<unsigned char>(text[e + 2]) - '0';
    const unsigned d1 = static_cast<unsigned char>(text[e + 3]) - '0';
    const bool three = n - e == 5;
    const unsigned d2 = three ? static_cast<unsigned char>(text[e + 4]) - '0' : 0;
    if (d0 > 9 || d1 > 9 || d2 > 9)
        return false;
    const int exponent = static_cast<int>(three ? d0 * 100 + d1 * 10 + d2 : d0 * 10 + d1);
    d.exponent = text[e + 1] == '-' ? -exponent : exponent;
    d.negative = text[0] == '-';
    std::size_t i = d.negative ? 1 : 0;
    if (i >= e)
        return false;
    d.digits[0] = text[i++];
    std::size_t count = 1;
    if (i < e) {
        if (text[i] != '.' || e - i - 1 > d.digits.size() - 1)
            return false;
        const std::size_t rest = e - i - 1;
        std::memcpy(d.digits.data() + 1, text.data() + i + 1, rest);
        count += rest;
    }
    d.count = count;
    return true;
}

bool shortestDigits(double v, ShortestDigits& d)
{
    std::array<char, 40> sci; // to_chars writes every byte that is read
    const auto res = std::to_chars(sci.data(), sci.data() + sci.size(), v, std::chars_format::scientific);
    return res.ec == std::errc {} && splitScientific(std::string_view(sci.data(), static_cast<std::size_t>(res.ptr - sci.data())), d);
}

void appendPyReprDigits(std::string& out, const ShortestDigits& d)
{
    // Python's repr ('r' format): scientific outside [1e-4, 1e16), else positional with at least one decimal.
    // Built in a local buffer and appended once (the CSV writer calls this for millions of cells).
    std::array<char, 48> buf {};
    char* p = buf.data();
    if (d.negative)
        *p++ = '-';
    const std::size_t n = d.count;
    const int exponent = d.exponent;
    if (exponent < -4 || exponent >= 16) {
        *p++ = d.digits[0];
        if (n > 1) {
            *p++ = '.';
            for (std::size_t k = 1; k < n; ++k)
                *p++ = d.digits[k];
        }
        *p++ = 'e';
        *p++ = exponent < 0 ? '-' : '+';
        const int magnitude = exponent < 0 ? -exponent : exponent;
        if (magnitude >= 100) {
            *p++ = static_cast<char>('0' + magnitude / 100);
            *p++ = static_cast<char>('0' + magnitude / 10 % 10);
        } else {
            *p++ = static_cast<char>('0' + magnitude / 10);
        }
        *p++ = static_cast<char>('0' + magnitude % 10);
    } else if (exponent < 0) {
        *p++ = '0';
        *p++ = '.';
        for (int k = exponent + 1; k < 0; ++k)
            *p++ = '0';
        for (std::size_t k = 0; k < n; ++k)
            *p++ = d.digits[k];
    } else {
        const auto intDigits = static_cast<std::size_t>(exponent) + 1;
        for (std::size_t k = 0; k < intDigits; ++k)
            *p++ = k < n ? d.digits[k] : '0';
        *p++ = '.';
        if (n <= intDigits) {
            *p++ = '0';
        } else {
            for (std::size_t k = intDigits; k < n; ++k)
                *p++ = d.digits[k];
        }
    }
    out.append(buf.data(), p);
}

void appendPyFloatRepr(std::string& out, double v)
{
    if (std::isnan(v)) {
        out += "nan";
        return;
    }
    if (std::isinf(v)) {
        out += v > 0 ? "inf" : "-inf";
        return;
    }
    // std::to_chars gives the same shortest round-trip digits as Python's repr (both are exact shortest
    // representations); what differs is where Python switches to an exponent and how it pads.
    ShortestDigits d;
    shortestDigits(v, d); // cannot fail for a finite double
    appendPyReprDigits(out, d);
}

std::string pyFloatRepr(double v)
{
    std::string out;
    appendPyFloatRepr(out, v);
    return out;
}

void appendPyJsonFloat(std::string& out, double v)
{
    if (std::isnan(v))
        out += "NaN";
    else if (std::isinf(v))
        out += v > 0 ? "Infinity" : "-Infinity";
    else
        appendPyFloatRepr(out, v);
}

namespace {

void appendUnicodeEscape(std::string& out, std::uint32_t unit)
{
    static constexpr char kHex[] = "0123456789abcdef";
    out += "\\u";
    for (int shift = 12; shift >= 0; shift -= 4)
        out += kHex[(unit >> shift) & 0xf];
}

/// Decodes one UTF-8 sequence at s[i]; returns the code point and advances i (U+FFFD for bad bytes).
std::uint32_t decodeUtf8(std::string_view s, std::size_t& i)
{
    const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
    const unsigned char lead = byte(i);
    int extra = 0;
    std::uint32_t cp = 0;
    std::uint32_t minimum = 0;
    if (lead >= 0xc0 && lead < 0xe0) {
        extra = 1;
        cp = lead & 0x1fu;
        minimum = 0x80;
    } else if (lead >= 0xe0 && lead < 0xf0) {
        extra = 2;
        cp = lead & 0x0fu;
        minimum = 0x800;
    } else if (lead >= 0xf0 && lead < 0xf5) {
        extra = 3;
        cp = lead & 0x07u;
        minimum = 0x10000;
    } else {
        ++i;
        return 0xfffd;
    }
    if (i + static_cast<std::size_t>(extra) >= s.size()) {
        ++i;
        return 0xfffd;
    }
    for (int k = 1; k <= extra; ++k) {
        const unsigned char c = byte(i + static_cast<std::size_t>(k));
        if ((c & 0xc0u) != 0x80u) {
            ++i;
            return 0xfffd;
        }
        cp = (cp << 6) | (c & 0x3fu);
    }
    i += static_cast<std::size_t>(extra) + 1;
    if (cp < minimum || cp > 0x10ffff || (cp >= 0xd800 && cp < 0xe000))
        return 0xfffd;
    return cp;
}

} // namespace

void appendPyJsonString(std::string& out, std::string_view s)
{
    out += '"';
    // What json.dump writes as it is (' '..'~' but the quote and the backslash) goes out a run at a time: names and
    // texts are mostly that, and a character at a time was a third of -da's rank-table writing (issue 37).
    const auto plain = [](unsigned char c) { return c >= 0x20 && c < 0x7f && c != '"' && c != '\\'; };
    std::size_t i = 0;
    while (i < s.size()) {
        std::size_t run = i;
        while (run < s.size() && plain(static_cast<unsigned char>(s[run])))
            ++run;
        if (run > i) {
            out.append(s.data() + i, run - i);
            i = run;
            continue;
        }
        const auto c = static_cast<unsigned char>(s[i]);
        if (c >= 0x80) {
            const std::uint32_t cp = decodeUtf8(s, i);
            if (cp >= 0x10000) {
                const std::uint32_t v = cp - 0x10000;
                appendUnicodeEscape(out, 0xd800 + (v >> 10));
                appendUnicodeEscape(out, 0xdc00 + (v & 0x3ff));
            } else {
                appendUnicodeEscape(out, cp);
            }
            continue;
        }
        ++i;
        switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        case '\t': out += "\\t"; break;
        case '\b': out += "\\b"; break;
        case '\f': out += "\\f"; break;
        default:
            // json.dump escapes everything outside ' '..'~', DEL (0x7f) included.
            if (c < 0x20 || c == 0x7f)
                appendUnicodeEscape(out, c);
            else
                out += static_cast<char>(c);
        }
    }
    out += '"';
}


} // namespace probescope
