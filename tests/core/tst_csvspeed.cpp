// SPDX-License-Identifier: Apache-2.0
// The CSV writer's fast paths against independent references: numbers against snprintf("%.16g") + strtod +
// a repr built from snprintf("%.*e") (and against Python for a table of edge values), fields against a
// byte-by-byte quoting, whole tables against the per-cell path (excelText, guardFormula, csvLine).

#include "core/compare/pipeline/comparerun.h"
#include "core/compare/table/comparetable.h"
#include "core/compare/output/csvwriter.h"
#include "core/compare/table/pytext.h"
#include "core/util/csv.h"
#include "core/util/pytext.h"

#include <gtest/gtest.h>

#include <bit>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <random>
#include <string>
#include <vector>

using namespace probescope;
using namespace probescope::compare;

namespace {

/// Python's repr(x) for a finite x: the fewest digits that read back as x (the nearest such decimal, or, where
/// x is a power of two and its rounding interval is lopsided, the one beside it), laid out as repr does.
std::string referenceRepr(double x)
{
    char buf[64];
    for (int precision = 0; precision < 17; ++precision) {
        std::snprintf(buf, sizeof buf, "%.*e", precision, x);
        if (std::strtod(buf, nullptr) == x)
            break;
        // The neighbours of the nearest decimal with as many digits: m +- 1 units of its last place.
        const std::string nearest(buf);
        const std::size_t e = nearest.find('e');
        std::string mantissa;
        for (std::size_t i = 0; i < e; ++i) {
            if (nearest[i] != '.' && nearest[i] != '-')
                mantissa += nearest[i];
        }
        const long long m = std::atoll(mantissa.c_str());
        const int exp10 = std::atoi(nearest.c_str() + e + 1) - precision;
        bool found = false;
        for (const long long candidate : { m + 1, m - 1 }) {
            char text[64];
            std::snprintf(text, sizeof text, "%s%llde%d", x < 0 ? "-" : "", candidate, exp10);
            if (candidate > 0 && std::strtod(text, nullptr) == x) {
                // The candidate in %e form.
                std::string digits = std::to_string(candidate);
                std::string sci = (x < 0 ? "-" : "") + digits.substr(0, 1) + (digits.size() > 1 ? "." + digits.substr(1) : "");
                std::snprintf(buf, sizeof buf, "%se%d", sci.c_str(), exp10 + static_cast<int>(digits.size()) - 1);
                found = true;
                break;
            }
        }
        if (found)
            break;
    }
    std::string text(buf);
    std::string sign;
    if (text[0] == '-') {
        sign = "-";
        text.erase(0, 1);
    }
    const std::size_t e = text.find('e');
    std::string digits;
    for (std::size_t i = 0; i < e; ++i) {
        if (text[i] != '.')
            digits += text[i];
    }
    while (digits.size() > 1 && digits.back() == '0')
        digits.pop_back();
    const int exponent = std::atoi(text.c_str() + e + 1);
    std::string out = sign;
    if (exponent < -4 || exponent >= 16) {
        out += digits.substr(0, 1);
        if (digits.size() > 1)
            out += "." + digits.substr(1);
        char exp[16];
        std::snprintf(exp, sizeof exp, "e%c%02d", exponent < 0 ? '-' : '+', std::abs(exponent));
        return out + exp;
    }
    if (exponent < 0)
        return out + "0." + std::string(static_cast<std::size_t>(-exponent - 1), '0') + digits;
    const auto intDigits = static_cast<std::size_t>(exponent) + 1;
    if (digits.size() <= intDigits)
        return out + digits + std::string(intDigits - digits.size(), '0') + ".0";
    return out + digits.substr(0, intDigits) + "." + digits.substr(intDigits);
}

/// What msprobe's CSV holds for a number: '%.16g' % v read back as a float, an int when whole, else repr().
std::string referenceExcelNumber(double v)
{
    if (std::isnan(v))
        return "nan\t";
    if (std::isinf(v))
        return v > 0 ? "inf\t" : "-inf\t";
    char printed[64];
    std::snprintf(printed, sizeof printed, "%.16g", v);
    const double parsed = std::strtod(printed, nullptr);
    if (std::isinf(parsed))
        return parsed > 0 ? "inf" : "-inf";
    if (std::trunc(parsed) != parsed)
        return referenceRepr(parsed);
    char whole[512];
    std::snprintf(whole, sizeof whole, "%.0f", parsed); // glibc prints a whole double exactly
    return std::string(whole) == "-0" ? "0" : whole;
}

std::string excelNumber(double v)
{
    return excelText(Cell::number(v));
}

std::vector<double> edgeValues()
{
    std::vector<double> values = { 0.0,
                                    -0.0,
                                    1e16,
                                    -1e16,
                                    1e-5,
                                    1e-4,
                                    9.999999999999999e-05,
                                    0.1,
                                    0.5,
                                    0.25,
                                    1.0 / 3.0,
                                    0.30000000000000004,
                                    0.9999999999999999,
                                    0.99999999999999994,
                                    9.9999999999999995e15,
                                    123456789.12345679,
                                    std::numeric_limits<double>::denorm_min(),
                                    3 * std::numeric_limits<double>::denorm_min(),
                                    DBL_MIN,
                                    std::nextafter(DBL_MIN, 0.0),
                                    DBL_MAX,
                                    -DBL_MAX,
                                    DBL_EPSILON,
                                    0x1p53,
                                    0x1p53 + 2,
                                    -0x1p53,
                                    0x1p63,
                                    0x1p64,
                                    0x1p70,
                                    1e22,
                                    1e100,
                                    1.234e300,
                                    std::numeric_limits<double>::infinity(),
                                    -std::numeric_limits<double>::infinity(),
                                    std::numeric_limits<double>::quiet_NaN() };
    const std::size_t base = values.size();
    for (std::size_t i = 0; i < base; ++i) {
        if (!std::isfinite(values[i]))
            continue;
        values.push_back(std::nextafter(values[i], std::numeric_limits<double>::infinity()));
        values.push_back(std::nextafter(values[i], -std::numeric_limits<double>::infinity()));
    }
    for (int e = -1074; e <= 1023; ++e) {
        values.push_back(std::ldexp(1.0, e));
        values.push_back(std::nextafter(std::ldexp(1.0, e), 0.0));
        values.push_back(-std::ldexp(1.0, e));
    }
    for (int e = -323; e <= 308; ++e) {
        const double p = std::pow(10.0, e);
        values.push_back(p);
        values.push_back(std::nextafter(p, 0.0));
        values.push_back(std::nextafter(p, 2 * p));
    }
    return values;
}

} // namespace

TEST(CsvSpeed, ExcelNumberMatchesPython)
{
    // Printed by Python 3: x = float('%.16g' % v); str(int(x)) if x == int(x) else repr(x).
    const struct
    {
        double v;
        const char* text;
    } cases[] = {
        { 0.1, "0.1" },
        { 1e-05, "1e-05" },
        { -1e-05, "-1e-05" },
        { 1e+16, "10000000000000000" },
        { -1e+16, "-10000000000000000" },
        { 9007199254740993.0, "9007199254740992" },
        { 9007199254740994.0, "9007199254740994" },
        { 1.5e+16, "15000000000000000" },
        { 5e-324, "5e-324" },
        { 2.2250738585072014e-308, "2.225073858507201e-308" },
        { 1.7976931348623157e+308, "inf" },
        { 0.30000000000000004, "0.3" },
        { 123456789.12345679, "123456789.1234568" },
        { 0.3333333333333333, "0.3333333333333333" },
        { -0.0, "0" },
        { 0.5, "0.5" },
        { 0.0001, "0.0001" },
        { 9.999999999999999e-05, "9.999999999999999e-05" },
        { 1e+22, "10000000000000000000000" },
        { 1000000000000000.2, "1000000000000000" },
        { 1.5e-323, "1.5e-323" },
        { 1.0000000000000003e-05, "1e-05" },
        { 1.2345678901234566e-07, "1.234567890123457e-07" },
        { 0.9999999999999999, "0.9999999999999999" },
        { 1.1805916207174113e+21, "1180591620717411041280" },
        { 123.456, "123.456" },
        { -0.0025, "-0.0025" },
    };
    for (const auto& c : cases) {
        EXPECT_EQ(excelNumber(c.v), c.text) << c.v;
        EXPECT_EQ(referenceExcelNumber(c.v), c.text) << c.v; // the reference used below agrees with Python
    }
    EXPECT_EQ(excelNumber(std::numeric_limits<double>::quiet_NaN()), "nan\t");
    EXPECT_EQ(excelNumber(-std::numeric_limits<double>::infinity()), "-inf\t");
    EXPECT_EQ(excelText(Cell::integer(std::int64_t { 1 } << 60)), "1152921504606846976");
    EXPECT_EQ(excelText(Cell::integer((std::int64_t { 1 } << 60) + 1)), "1152921504606846976"); // via float
}

TEST(CsvSpeed, ExcelNumberMatchesPrintfOnEdgeValues)
{
    for (const double v : edgeValues())
        ASSERT_EQ(excelNumber(v), referenceExcelNumber(v)) << std::bit_cast<std::uint64_t>(v);
}

TEST(CsvSpeed, ExcelNumberMatchesPrintfOnRandomValues)
{
    std::mt19937_64 rng(2026);
    std::uniform_real_distribution<double> unit(-1.0, 1.0);
    std::uniform_int_distribution<int> scale(-30, 30);
    for (int i = 0; i < 300000; ++i) {
        double v = 0;
        switch (i % 8) {
        case 0: v = std::bit_cast<double>(rng()); break; // every exponent, subnormals, nan/inf
        case 1: v = static_cast<double>(static_cast<std::int64_t>(rng() >> (rng() % 64))) / 1024.0; break;
        case 2: v = static_cast<double>(static_cast<float>(unit(rng) * std::pow(10.0, scale(rng)))); break;
        case 3: v = unit(rng) * std::pow(10.0, scale(rng)); break;
        case 4: v = std::round(unit(rng) * 1e12) / 1e12; break; // fmt12-like
        case 5: v = static_cast<double>(static_cast<std::int64_t>(rng() >> (rng() % 64))); break; // integers
        case 6: v = std::nextafter(std::round(unit(rng) * 1e6), unit(rng) * 1e7); break; // next to integers
        default: v = unit(rng) * 1e16 + unit(rng); break; // around the 16-digit limit
        }
        ASSERT_EQ(excelNumber(v), referenceExcelNumber(v)) << std::bit_cast<std::uint64_t>(v);
    }
}

TEST(CsvSpeed, PyFloatReprMatchesReference)
{
    std::mt19937_64 rng(7);
    std::vector<double> values = edgeValues();
    for (int i = 0; i < 100000; ++i)
        values.push_back(std::bit_cast<double>(rng()));
    for (const double v : values) {
        if (!std::isfinite(v))
            continue;
        ASSERT_EQ(pyFloatRepr(v), referenceRepr(v)) << std::bit_cast<std::uint64_t>(v);
    }
    EXPECT_EQ(pyFloatRepr(-0.0), "-0.0");
    EXPECT_EQ(pyFloatRepr(1e16), "1e+16");
    EXPECT_EQ(pyFloatRepr(1e-5), "1e-05");
    EXPECT_EQ(pyFloatRepr(5e-324), "5e-324");
    EXPECT_EQ(pyFloatRepr(1e300), "1e+300");
    EXPECT_EQ(pyFloatRepr(123.0), "123.0");
    EXPECT_EQ(pyFloatRepr(0x1p-1017), "7.120236347223045e-307"); // Python's; not the nearest 16-digit decimal
}

namespace {

std::string referenceField(std::string_view field)
{
    bool quote = false;
    for (const char c : field)
        quote = quote || c == ',' || c == '"' || c == '\n' || c == '\r';
    if (!quote)
        return std::string(field);
    std::string out = "\"";
    for (const char c : field) {
        if (c == '"')
            out += '"';
        out += c;
    }
    return out + "\"";
}

} // namespace

TEST(CsvSpeed, FieldQuotingMatchesByteByByte)
{
    std::mt19937_64 rng(3);
    const std::string alphabet = "ab,\"\n\r;= -+@%\t\xef\xbc\x8b.0123456789xyzXYZ";
    for (int i = 0; i < 100000; ++i) {
        std::string field;
        const std::size_t n = rng() % 70; // beyond the 16- and 32-byte blocks
        for (std::size_t k = 0; k < n; ++k)
            field += (rng() % 4) ? static_cast<char>('a' + rng() % 26) : alphabet[rng() % alphabet.size()];
        std::string out = "x";
        appendCsvField(out, field);
        ASSERT_EQ(out, "x" + referenceField(field)) << field;
    }
}

TEST(CsvSpeed, TableCsvMatchesThePerCellPath)
{
    // Enough rows for many blocks on every thread; every kind of cell, texts that need quotes and guards.
    const std::vector<std::string> texts = { "Torch.matmul.1.forward.input.0",
                                             "[4, 4]",
                                             "torch.float32",
                                             "N/A",
                                             "-inf",
                                             "inf",
                                             "nan",
                                             "=1+2",
                                             "+cmd",
                                             "-1",
                                             "-0.5",
                                             "@x",
                                             "%y",
                                             "a;=b",
                                             "a;b",
                                             "say \"hi\"",
                                             "line\nbreak",
                                             "cr\rhere",
                                             "\xef\xbc\x8b\xef\xbc\x91",
                                             "",
                                             "tab\there",
                                             "a very long text that goes past several sixteen byte blocks, with a comma" };
    std::mt19937_64 rng(11);
    CompareTable table;
    table.header = { "name", "a", "b", "c", "d", "e" };
    const std::size_t rows = 40000;
    for (std::size_t r = 0; r < rows; ++r) {
        table.rows.beginRow();
        const std::size_t n = r % 97 == 0 ? 1 : 6; // some short rows
        for (std::size_t c = 0; c < n; ++c) {
            switch (rng() % 7) {
            case 0: table.rows.appendText(texts[rng() % texts.size()]); break;
            case 1: table.rows.appendNumber(std::bit_cast<double>(rng())); break;
            case 2: table.rows.appendNumber(static_cast<double>(rng() % 100000) / 64.0); break;
            case 3: table.rows.appendInt(static_cast<std::int64_t>(rng())); break;
            case 4: table.rows.appendBool(rng() % 2); break;
            case 5: table.rows.appendPyText(texts[rng() % texts.size()]); break;
            default: table.rows.appendNone(); break;
            }
        }
    }
    std::string expected = csvLine(table.header) + "\n";
    for (std::size_t r = 0; r < rows; ++r) {
        std::vector<std::string> fields;
        for (const Cell& cell : table.rows.rowCells(r)) {
            std::string text = excelText(cell);
            if (cell.isString())
                text = guardFormula(text);
            fields.push_back(text);
        }
        expected += csvLine(fields) + "\n";
    }
    const std::string whole = tableCsv(table);
    ASSERT_EQ(whole.size(), expected.size());
    ASSERT_TRUE(whole == expected);

    // A sink that fails stops the writer and is not called again.
    int calls = 0;
    EXPECT_FALSE(writeTableCsv(table, [&calls](std::string_view) { return ++calls < 3; }));
    EXPECT_EQ(calls, 3);
}
