// SPDX-License-Identifier: Apache-2.0
#include "core/setupcheck/pyjson.h"

#include "core/compare/table/pytext.h"
#include "core/util/fileio.h"
#include "core/util/pytext.h"

#include <cmath>
#include <limits>

namespace probescope::setupcheck {

namespace {

// nlohmann's parser knows no NaN/Infinity; Python writes them. Outside strings they become these strings (which no
// JSON text can hold, since a raw control character is not allowed in a JSON string) and are read back as numbers.
constexpr std::string_view kNan = "\x01NaN";
constexpr std::string_view kInf = "\x01Infinity";
constexpr std::string_view kNegInf = "\x01-Infinity";

std::string markNonFinite(std::string_view text)
{
    std::string out;
    out.reserve(text.size());
    bool inString = false;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (inString) {
            out += c;
            if (c == '\\' && i + 1 < text.size())
                out += text[++i];
            else if (c == '"')
                inString = false;
            continue;
        }
        if (c == '"') {
            inString = true;
            out += c;
        } else if (text.compare(i, 3, "NaN") == 0) {
            out += "\"\\u0001NaN\"";
            i += 2;
        } else if (text.compare(i, 8, "Infinity") == 0) {
            out += "\"\\u0001Infinity\"";
            i += 7;
        } else if (text.compare(i, 9, "-Infinity") == 0) {
            out += "\"\\u0001-Infinity\"";
            i += 8;
        } else {
            out += c;
        }
    }
    return out;
}

void appendIndent(std::string& out, int level)
{
    out.append(static_cast<std::size_t>(level) * 4, ' ');
}

void dumpValue(std::string& out, const PyJson& value, int level)
{
    switch (value.type()) {
    case PyJson::value_t::object: {
        if (value.empty()) {
            out += "{}";
            return;
        }
        out += "{\n";
        bool first = true;
        for (const auto& [key, item] : value.items()) {
            if (!first)
                out += ",\n";
            first = false;
            appendIndent(out, level + 1);
            appendPyJsonString(out, key);
            out += ": ";
            dumpValue(out, item, level + 1);
        }
        out += '\n';
        appendIndent(out, level);
        out += '}';
        return;
    }
    case PyJson::value_t::array: {
        if (value.empty()) {
            out += "[]";
            return;
        }
        out += "[\n";
        bool first = true;
        for (const auto& item : value) {
            if (!first)
                out += ",\n";
            first = false;
            appendIndent(out, level + 1);
            dumpValue(out, item, level + 1);
        }
        out += '\n';
        appendIndent(out, level);
        out += ']';
        return;
    }
    case PyJson::value_t::string: {
        const auto& s = value.get_ref<const std::string&>();
        if (s == kNan)
            out += "NaN";
        else if (s == kInf)
            out += "Infinity";
        else if (s == kNegInf)
            out += "-Infinity";
        else
            appendPyJsonString(out, s);
        return;
    }
    case PyJson::value_t::boolean:
        out += value.get<bool>() ? "true" : "false";
        return;
    case PyJson::value_t::number_integer:
        out += std::to_string(value.get<std::int64_t>());
        return;
    case PyJson::value_t::number_unsigned:
        out += std::to_string(value.get<std::uint64_t>());
        return;
    case PyJson::value_t::number_float: {
        appendPyJsonFloat(out, value.get<double>());
        return;
    }
    default:
        out += "null";
        return;
    }
}

void appendPyStrRepr(std::string& out, std::string_view s)
{
    out += compare::pyStrRepr(s);
}

void appendPyRepr(std::string& out, const PyJson& value, bool top)
{
    if (value.is_string()) {
        const auto& s = value.get_ref<const std::string&>();
        if (s == kNan || s == kInf || s == kNegInf || top) {
            out += pyStr(value);
            return;
        }
        appendPyStrRepr(out, s);
        return;
    }
    if (value.is_array()) {
        out += '[';
        bool first = true;
        for (const auto& item : value) {
            if (!first)
                out += ", ";
            first = false;
            appendPyRepr(out, item, false);
        }
        out += ']';
        return;
    }
    if (value.is_object()) {
        out += '{';
        bool first = true;
        for (const auto& [key, item] : value.items()) {
            if (!first)
                out += ", ";
            first = false;
            appendPyStrRepr(out, key);
            out += ": ";
            appendPyRepr(out, item, false);
        }
        out += '}';
        return;
    }
    out += pyStr(value);
}

} // namespace

Result<PyJson> parsePyJson(std::string_view text, const std::string& file)
{
    const std::string marked = markNonFinite(text);
    try {
        return PyJson::parse(marked);
    } catch (const PyJson::parse_error& e) {
        return makeError("config-check.json", SourceLocation { file, e.byte, 0, 0 },
                         file + ": not valid JSON: " + e.what());
    } catch (const std::exception& e) {
        return makeError("config-check.json", SourceLocation { file, std::nullopt, 0, 0 },
                         file + ": not valid JSON: " + e.what());
    }
}

Result<PyJson> loadPyJson(const std::filesystem::path& path)
{
    auto text = readTextFile(path);
    if (!text)
        return text.error();
    return parsePyJson(*text, path.string());
}

std::string pyJsonDumps(const PyJson& value)
{
    std::string out;
    dumpValue(out, value, 0);
    return out;
}

std::optional<double> pyNumber(const PyJson& value)
{
    if (value.is_boolean())
        return value.get<bool>() ? 1.0 : 0.0;
    if (value.is_number_integer() && !value.is_number_unsigned())
        return static_cast<double>(value.get<std::int64_t>());
    if (value.is_number_unsigned())
        return static_cast<double>(value.get<std::uint64_t>());
    if (value.is_number_float())
        return value.get<double>();
    if (value.is_string()) {
        const auto& s = value.get_ref<const std::string&>();
        if (s == kNan)
            return std::numeric_limits<double>::quiet_NaN();
        if (s == kInf)
            return std::numeric_limits<double>::infinity();
        if (s == kNegInf)
            return -std::numeric_limits<double>::infinity();
    }
    return std::nullopt;
}

bool isPyNumber(const PyJson& value)
{
    return pyNumber(value).has_value();
}

bool pyEqual(const PyJson& a, const PyJson& b)
{
    const auto na = pyNumber(a);
    const auto nb = pyNumber(b);
    if (na || nb) {
        if (!na || !nb)
            return false;
        // Two Python ints compare exactly; a double cannot tell 2**63 from 2**63 + 1, which JSON packs never hold.
        if (a.is_number_integer() && b.is_number_integer() && a.is_number_unsigned() == b.is_number_unsigned())
            return a == b;
        return *na == *nb;
    }
    if (a.type() != b.type())
        return false;
    if (a.is_array()) {
        if (a.size() != b.size())
            return false;
        for (std::size_t i = 0; i < a.size(); ++i) {
            if (!pyEqual(a[i], b[i]))
                return false;
        }
        return true;
    }
    if (a.is_object()) {
        if (a.size() != b.size())
            return false;
        for (const auto& [key, item] : a.items()) {
            const auto other = b.find(key);
            if (other == b.end() || !pyEqual(item, *other))
                return false;
        }
        return true;
    }
    return a == b;
}

std::string pyStr(const PyJson& value)
{
    switch (value.type()) {
    case PyJson::value_t::null:
        return "None";
    case PyJson::value_t::boolean:
        return value.get<bool>() ? "True" : "False";
    case PyJson::value_t::number_integer:
        return std::to_string(value.get<std::int64_t>());
    case PyJson::value_t::number_unsigned:
        return std::to_string(value.get<std::uint64_t>());
    case PyJson::value_t::number_float:
        return pyFloatRepr(value.get<double>());
    case PyJson::value_t::string: {
        if (const auto n = pyNumber(value))
            return pyFloatRepr(*n);
        return value.get<std::string>();
    }
    default: {
        std::string out;
        appendPyRepr(out, value, false);
        return out;
    }
    }
}

compare::XlsxSheetCell pyCell(const PyJson& value)
{
    if (value.is_null())
        return {};
    if (value.is_boolean())
        return compare::XlsxSheetCell::ofBool(value.get<bool>());
    if (const auto n = pyNumber(value))
        return compare::XlsxSheetCell::ofNumber(*n);
    if (value.is_string())
        return compare::XlsxSheetCell::ofText(value.get<std::string>());
    return compare::XlsxSheetCell::ofText(pyStr(value));
}

} // namespace probescope::setupcheck
