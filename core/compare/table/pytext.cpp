// SPDX-License-Identifier: Apache-2.0
#include "core/compare/table/pytext.h"

#include <array>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace probescope::compare {

namespace {

// Large enough for "%.12f" of DBL_MAX (309 integer digits) and any "%.16g".
constexpr std::size_t kPrintfBuffer = 512;

void appendHex(std::string& out, std::uint32_t value, int digits)
{
    static constexpr char kHex[] = "0123456789abcdef";
    for (int shift = (digits - 1) * 4; shift >= 0; shift -= 4)
        out += kHex[(value >> shift) & 0xfu];
}

// Python's str.isprintable() for non-ASCII code points. Python consults the full Unicode database;
// this covers the categories that show up in practice (C1 controls, separators, format characters,
// private use, noncharacters). Unassigned code points (Cn) beyond those are treated as printable.
bool isPrintableNonAscii(std::uint32_t cp)
{
    struct Range
    {
        std::uint32_t first;
        std::uint32_t last;
    };
    // clang-format off
    static constexpr Range kNotPrintable[] = {
        { 0x80, 0xa0 },       // C1 controls, NO-BREAK SPACE (Zs)
        { 0xad, 0xad },       // SOFT HYPHEN (Cf)
        { 0x600, 0x605 },     { 0x61c, 0x61c },     { 0x6dd, 0x6dd },   { 0x70f, 0x70f },
        { 0x890, 0x891 },     { 0x8e2, 0x8e2 },     { 0x1680, 0x1680 }, { 0x180e, 0x180e },
        { 0x2000, 0x200f },   // spaces (Zs) and zero-width/direction marks (Cf)
        { 0x2028, 0x202f },   // line/paragraph separators, embeddings, NARROW NO-BREAK SPACE
        { 0x205f, 0x206f },   { 0x3000, 0x3000 },
        { 0xd800, 0xf8ff },   // surrogates, private use
        { 0xfdd0, 0xfdef },   { 0xfeff, 0xfeff },   { 0xfff9, 0xfffb }, { 0x110bd, 0x110bd },
        { 0x110cd, 0x110cd }, { 0x13430, 0x13438 }, { 0x1bca0, 0x1bca3 }, { 0x1d173, 0x1d17a },
        { 0xe0000, 0xe0fff }, // tags and unassigned (Cf/Cn); variation selectors E0100.. are printable
        { 0xf0000, 0x10ffff }, // supplementary private use planes
    };
    // clang-format on
    if ((cp & 0xfffeu) == 0xfffeu) // U+xFFFE / U+xFFFF noncharacters
        return false;
    if (cp >= 0xe0100 && cp <= 0xe01ef)
        return true;
    for (const Range& r : kNotPrintable) {
        if (cp >= r.first && cp <= r.last)
            return false;
    }
    return true;
}

// Decodes one UTF-8 sequence at s[i]; returns its length, 0 when the bytes are not valid UTF-8.
std::size_t decodeUtf8(std::string_view s, std::size_t i, std::uint32_t& cp)
{
    const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
    const unsigned char b0 = byte(i);
    std::size_t len = 0;
    std::uint32_t minimum = 0;
    if (b0 >= 0xc2 && b0 <= 0xdf) {
        len = 2;
        cp = b0 & 0x1fu;
        minimum = 0x80;
    } else if (b0 >= 0xe0 && b0 <= 0xef) {
        len = 3;
        cp = b0 & 0x0fu;
        minimum = 0x800;
    } else if (b0 >= 0xf0 && b0 <= 0xf4) {
        len = 4;
        cp = b0 & 0x07u;
        minimum = 0x10000;
    } else {
        return 0;
    }
    if (i + len > s.size())
        return 0;
    for (std::size_t k = 1; k < len; ++k) {
        const unsigned char b = byte(i + k);
        if ((b & 0xc0u) != 0x80u)
            return 0;
        cp = (cp << 6) | (b & 0x3fu);
    }
    if (cp < minimum || cp > 0x10ffff)
        return 0;
    return len;
}

void appendStrRepr(std::string& out, std::string_view s)
{
    const bool hasSingle = s.find('\'') != std::string_view::npos;
    const bool hasDouble = s.find('"') != std::string_view::npos;
    const char quote = hasSingle && !hasDouble ? '"' : '\'';
    out += quote;
    for (std::size_t i = 0; i < s.size();) {
        const unsigned char c = static_cast<unsigned char>(s[i]);
        if (c < 0x80) {
            if (c == static_cast<unsigned char>(quote) || c == '\\') {
                out += '\\';
                out += static_cast<char>(c);
            } else if (c == '\n') {
                out += "\\n";
            } else if (c == '\r') {
                out += "\\r";
            } else if (c == '\t') {
                out += "\\t";
            } else if (c < 0x20 || c == 0x7f) {
                out += "\\x";
                appendHex(out, c, 2);
            } else {
                out += static_cast<char>(c);
            }
            ++i;
            continue;
        }
        std::uint32_t cp = 0;
        const std::size_t len = decodeUtf8(s, i, cp);
        if (len == 0) {
            // Not reachable from json.load text (always valid); show the byte rather than drop it.
            out += "\\x";
            appendHex(out, c, 2);
            ++i;
            continue;
        }
        if (isPrintableNonAscii(cp)) {
            out.append(s.substr(i, len));
        } else if (cp < 0x100) {
            out += "\\x";
            appendHex(out, cp, 2);
        } else if (cp < 0x10000) {
            out += "\\u";
            appendHex(out, cp, 4);
        } else {
            out += "\\U";
            appendHex(out, cp, 8);
        }
        i += len;
    }
    out += quote;
}

void appendPyRepr(std::string& out, dump::JsonValue v);

void appendObjectRepr(std::string& out, dump::JsonValue v)
{
    // A Python dict keeps the position of a key's first occurrence and the value of its last one.
    const std::uint32_t n = v.size();
    std::unordered_map<std::string_view, std::uint32_t> last;
    last.reserve(n);
    for (std::uint32_t i = 0; i < n; ++i)
        last[v.keyAt(i)] = i;
    out += '{';
    bool first = true;
    for (std::uint32_t i = 0; i < n; ++i) {
        const std::string_view key = v.keyAt(i);
        auto it = last.find(key);
        if (it == last.end())
            continue; // already written at its first position
        const std::uint32_t valueIndex = it->second;
        last.erase(it);
        if (!first)
            out += ", ";
        first = false;
        appendStrRepr(out, key);
        out += ": ";
        appendPyRepr(out, v.at(valueIndex));
    }
    out += '}';
}

void appendPyRepr(std::string& out, dump::JsonValue v)
{
    if (!v.valid()) {
        out += "None";
        return;
    }
    switch (v.type()) {
    case dump::JsonType::Null:
        out += "None";
        break;
    case dump::JsonType::Bool:
        out += v.asBool() ? "True" : "False";
        break;
    case dump::JsonType::Int:
        out += std::to_string(v.asInt());
        break;
    case dump::JsonType::Double:
        out += pyFloatRepr(v.asDouble());
        break;
    case dump::JsonType::String:
        appendStrRepr(out, v.asString());
        break;
    case dump::JsonType::Array: {
        out += '[';
        const std::uint32_t n = v.size();
        for (std::uint32_t i = 0; i < n; ++i) {
            if (i)
                out += ", ";
            appendPyRepr(out, v.at(i));
        }
        out += ']';
        break;
    }
    case dump::JsonType::Object:
        appendObjectRepr(out, v);
        break;
    }
}

double reparseFixed(double x, const char* format)
{
    if (!std::isfinite(x))
        return x;
    std::array<char, kPrintfBuffer> buf {};
    std::snprintf(buf.data(), buf.size(), format, x);
    return std::strtod(buf.data(), nullptr);
}

// Python str(int(v)) of a numeric xlsx cell read back by openpyxl + pandas (A.11): '%.16g' % v, read back as a
// float, printed as an int when whole and with repr() otherwise. This is the reference path: std::to_chars with
// precision 16 is printf's "%.16g" exactly, and neither it nor from_chars allocates.
void appendParsedExcelNumber(std::string& out, double parsed)
{
    // openpyxl turns text without '.', 'e', 'E' into an int, the rest into a float; pandas then prints
    // any whole-valued number as an int. Both paths give the same text for whole values.
    if (std::trunc(parsed) != parsed) {
        appendPyFloatRepr(out, parsed);
    } else if (std::fabs(parsed) < 0x1p63) {
        std::array<char, 24> digits {};
        const auto end = std::to_chars(digits.data(), digits.data() + digits.size(), static_cast<std::int64_t>(parsed));
        out.append(digits.data(), end.ptr);
    } else {
        out += integralDoubleText(parsed);
    }
}

void appendExcelNumberSlow(std::string& out, double value)
{
    std::array<char, 32> buf {};
    const auto printed = std::to_chars(buf.data(), buf.data() + buf.size(), value, std::chars_format::general, 16);
    double parsed = 0;
    if (std::from_chars(buf.data(), printed.ptr, parsed).ec != std::errc {}) {
        *printed.ptr = '\0';
        parsed = std::strtod(buf.data(), nullptr); // overflow (near DBL_MAX: inf) and underflow as Python reads them
    }
    appendParsedExcelNumber(out, parsed);
}

/**
 * The same text from one shortest to_chars (the CSV writer's hot path, ~3x faster than the reference path).
 *
 * Let D be v's shortest round-trip digits (k of them) and R16 v rounded to 16 significant digits ('%.16g').
 * - k <= 16: D is a decimal of at most 16 digits inside v's rounding interval, and R16 is the nearest such
 *   decimal to v, so |R16 - v| <= |D - v|. Where the interval is symmetric (v's mantissa field is not 0) R16 is
 *   inside it too, so '%.16g' reads back as v itself: the text is repr(v) from D, or v as an integer.
 * - k == 17: D is v rounded to 17 digits (to_chars picks the nearest of the shortest). Rounding D to 16 digits
 *   gives R16 unless D's last digit is 5 (a double rounding could differ); then R16 is read back as the
 *   reference path does.
 * Everything else (powers of two, |v| >= 1e16, a last digit 5) takes the reference path.
 */
void appendExcelNumber(std::string& out, double value)
{
    if (std::isnan(value)) {
        out += "nan\t";
        return;
    }
    if (std::isinf(value)) {
        out += value > 0 ? "inf\t" : "-inf\t";
        return;
    }
    if (std::fabs(value) < 1e16) {
        const auto whole = static_cast<std::int64_t>(value);
        if (static_cast<double>(whole) == value) { // an integer below 1e16 prints exactly (also -0.0 -> "0")
            std::array<char, 24> digits {};
            const auto end = std::to_chars(digits.data(), digits.data() + digits.size(), whole);
            out.append(digits.data(), end.ptr);
            return;
        }
        const bool symmetric = (std::bit_cast<std::uint64_t>(value) & ((std::uint64_t { 1 } << 52) - 1)) != 0;
        ShortestDigits d;
        if (symmetric && shortestDigits(value, d)) {
            if (d.count <= 16) {
                appendPyReprDigits(out, d); // not whole (checked above), so repr(v)
                return;
            }
            if (d.digits[16] != '5') {
                // R16 from D: drop the 17th digit, rounding half up (it is not 5, so no tie).
                std::array<char, 32> r16 {};
                char* p = r16.data();
                if (d.negative)
                    *p++ = '-';
                *p++ = '0'; // room for a carry out of the first digit
                for (std::size_t k = 0; k < 16; ++k)
                    *p++ = d.digits[k];
                if (d.digits[16] > '5') {
                    char* q = p - 1;
                    while (*q == '9')
                        *q-- = '0';
                    ++*q;
                }
                *p++ = 'e';
                const auto e = std::to_chars(p, r16.data() + r16.size(), d.exponent - 15);
                double parsed = 0;
                if (std::from_chars(r16.data(), e.ptr, parsed).ec == std::errc {}) {
                    appendParsedExcelNumber(out, parsed);
                    return;
                }
            }
        }
    }
    appendExcelNumberSlow(out, value);
}
} // namespace

bool isPyNonFiniteText(std::string_view s)
{
    return s == "inf" || s == "-inf" || s == "nan";
}

std::string integralDoubleText(double v)
{
    if (!std::isfinite(v))
        return pyFloatRepr(v);
    v = std::trunc(v);
    const bool negative = v < 0;
    int exp2 = 0;
    // v = m * 2^(exp2 - 53) with m a 53-bit integer.
    const double fraction = std::frexp(std::fabs(v), &exp2);
    if (fraction == 0.0)
        return "0";
    std::uint64_t mantissa = static_cast<std::uint64_t>(std::ldexp(fraction, 53));
    int shift = exp2 - 53;
    std::string out = negative ? "-" : "";
    if (shift <= 0) {
        out += std::to_string(mantissa >> -shift);
        return out;
    }
    // Multiply by 2^shift in base 1e9 limbs (least significant first); doubles stay below 2^1024.
    std::vector<std::uint32_t> limbs;
    while (mantissa) {
        limbs.push_back(static_cast<std::uint32_t>(mantissa % 1000000000u));
        mantissa /= 1000000000u;
    }
    while (shift > 0) {
        const int step = shift > 32 ? 32 : shift;
        shift -= step;
        std::uint64_t carry = 0;
        for (std::uint32_t& limb : limbs) {
            const std::uint64_t cur = (static_cast<std::uint64_t>(limb) << step) + carry;
            limb = static_cast<std::uint32_t>(cur % 1000000000u);
            carry = cur / 1000000000u;
        }
        while (carry) {
            limbs.push_back(static_cast<std::uint32_t>(carry % 1000000000u));
            carry /= 1000000000u;
        }
    }
    out += std::to_string(limbs.back());
    for (std::size_t i = limbs.size() - 1; i-- > 0;) {
        std::array<char, 16> part {};
        std::snprintf(part.data(), part.size(), "%09u", static_cast<unsigned>(limbs[i]));
        out += part.data();
    }
    return out;
}

std::string pyStrRepr(std::string_view s)
{
    std::string out;
    out.reserve(s.size() + 2);
    appendStrRepr(out, s);
    return out;
}

std::string pyRepr(dump::JsonValue v)
{
    std::string out;
    appendPyRepr(out, v);
    return out;
}

std::string pyStr(dump::JsonValue v)
{
    if (v.valid() && v.isString())
        return std::string(v.asString());
    return pyRepr(v);
}

std::string pyStr(const Cell& cell)
{
    struct Visitor
    {
        std::string operator()(Cell::None) const { return "None"; }
        std::string operator()(bool b) const { return b ? "True" : "False"; }
        std::string operator()(std::int64_t i) const { return std::to_string(i); }
        std::string operator()(double d) const { return pyFloatRepr(d); }
        std::string operator()(const std::string& s) const { return s; }
        std::string operator()(const Cell::PyText& t) const { return t.text; }
    };
    return std::visit(Visitor {}, cell.value);
}

double fmt12(double x)
{
    return reparseFixed(x, "%.12f");
}

double round6(double x)
{
    return reparseFixed(x, "%.6f");
}

void appendExcelText(std::string& out, const CellView& cell)
{
    switch (cell.kind) {
    case CellKind::None: out += "None"; return;
    case CellKind::Bool: out += cell.boolean ? "True" : "False"; return;
    // Python's '%.16g' % int converts to float first, so int64 cells round to 16 digits too.
    case CellKind::Int: appendExcelNumber(out, static_cast<double>(cell.integer)); return;
    case CellKind::Float: appendExcelNumber(out, cell.number); return;
    case CellKind::String:
    case CellKind::PyText:
        out += cell.text;
        if (isPyNonFiniteText(cell.text))
            out += '\t';
        return;
    }
}

std::string excelText(const Cell& cell)
{
    std::string out;
    appendExcelText(out, viewOf(cell));
    return out;
}

const char* pyTypeName(std::optional<dump::JsonValue> v)
{
    if (!v)
        return "NoneType";
    switch (v->type()) {
    case dump::JsonType::Null: return "NoneType";
    case dump::JsonType::Bool: return "bool";
    case dump::JsonType::Int: return "int";
    case dump::JsonType::Double: return "float";
    case dump::JsonType::String: return "str";
    case dump::JsonType::Array: return "list";
    case dump::JsonType::Object: return "dict";
    }
    return "NoneType";
}

std::string numpyShapeText(std::optional<dump::JsonValue> v)
{
    if (!v || !v->isArray())
        return "()";
    return "(" + std::to_string(v->size()) + ",)";
}

bool pyTruthy(dump::JsonValue v)
{
    switch (v.type()) {
    case dump::JsonType::Null:
        return false;
    case dump::JsonType::Bool:
        return v.asBool();
    case dump::JsonType::Int:
        return v.asInt() != 0;
    case dump::JsonType::Double:
        return v.asDouble() != 0;
    case dump::JsonType::String:
        return !v.asString().empty();
    case dump::JsonType::Array:
    case dump::JsonType::Object:
        return v.size() != 0;
    }
    return false;
}

} // namespace probescope::compare
