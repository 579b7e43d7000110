// SPDX-License-Identifier: Apache-2.0
// Reading back an xlsx in tests (no openpyxl on CI): the archive through the product's zip reader, and just enough
// XML for the parts libxlsxwriter and openpyxl write. The product's core/util/xlsxreader reads values only; these
// tests also check each cell's stored type and fill. Shared by tst_xlsx (ProbeScope's files) and tst_ptdbg (ptdbg's).
#pragma once

#include "core/compare/table/pytext.h"
#include "tempdir.h"
#include "core/util/ziparchive.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace probescope::testing::xlsx {

using probescope::compare::integralDoubleText;
using probescope::compare::pyFloatRepr;

// ---- the archive: the product's zip reader (core/util/ziparchive.h), as core/util/xlsxreader.cpp reads it ----

/// Entry name → content; empty map when the archive cannot be read.
inline std::map<std::string, std::string> unzip(const std::filesystem::path& path)
{
    std::map<std::string, std::string> entries;
    const auto zip = ZipReader::open(path);
    if (!zip)
        return entries;
    for (const ZipEntryInfo& entry : (*zip)->entries()) {
        auto content = (*zip)->read(entry);
        if (!content)
            return {};
        entries[entry.name] = std::move(*content);
    }
    return entries;
}

// ---- just enough XML for the parts libxlsxwriter writes ----

inline std::string unescapeXml(std::string_view s)
{
    std::string out;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] != '&') {
            out += s[i];
            continue;
        }
        const std::size_t end = s.find(';', i);
        const std::string_view entity = s.substr(i + 1, end - i - 1);
        if (entity == "lt")
            out += '<';
        else if (entity == "gt")
            out += '>';
        else if (entity == "amp")
            out += '&';
        else if (entity == "quot")
            out += '"';
        else if (entity == "apos")
            out += '\'';
        else if (!entity.empty() && entity[0] == '#') {
            const bool hex = entity.size() > 1 && entity[1] == 'x';
            const unsigned long code = std::stoul(std::string(entity.substr(hex ? 2 : 1)), nullptr, hex ? 16 : 10);
            // Only ASCII is expected in these tests; anything else would need UTF-8 encoding here.
            out += static_cast<char>(code);
        }
        i = end;
    }
    return out;
}

/// Value of attribute `name` in the start tag `tag` ("<c r=\"A1\" s=\"1\">").
inline std::optional<std::string> attribute(std::string_view tag, std::string_view name)
{
    const std::string key = " " + std::string(name) + "=\"";
    const std::size_t at = tag.find(key);
    if (at == std::string_view::npos)
        return std::nullopt;
    const std::size_t from = at + key.size();
    return unescapeXml(tag.substr(from, tag.find('"', from) - from));
}

/// Every element `<name ...>...</name>` or `<name .../>` of `xml`, as (start tag, inner text).
inline std::vector<std::pair<std::string, std::string>> elements(std::string_view xml, std::string_view name)
{
    std::vector<std::pair<std::string, std::string>> out;
    const std::string open = "<" + std::string(name);
    const std::string close = "</" + std::string(name) + ">";
    for (std::size_t at = xml.find(open); at != std::string_view::npos; at = xml.find(open, at + 1)) {
        const char next = xml[at + open.size()];
        if (next != ' ' && next != '>' && next != '/')
            continue; // <cellXfs> while looking for <c>
        const std::size_t tagEnd = xml.find('>', at);
        const std::string tag(xml.substr(at, tagEnd - at + 1));
        if (xml[tagEnd - 1] == '/') {
            out.emplace_back(tag, "");
            continue;
        }
        const std::size_t end = xml.find(close, tagEnd);
        out.emplace_back(tag, std::string(xml.substr(tagEnd + 1, end - tagEnd - 1)));
    }
    return out;
}

/// The text of the first <t> inside `xml` (a shared string or an inline string).
inline std::string tText(std::string_view xml)
{
    const auto ts = elements(xml, "t");
    return ts.empty() ? std::string() : unescapeXml(ts.front().second);
}

struct XlsxCellRead
{
    std::string type;  ///< the t attribute ("" for a number)
    std::string value; ///< the <v> text of a number, the text of a string
    bool hasValue = false;
    int style = 0;
};

struct Fill
{
    std::string pattern;
    std::string rgb;
};

struct Workbook
{
    std::map<std::string, std::string> parts;
    std::map<std::pair<unsigned, unsigned>, XlsxCellRead> cells; ///< (row, column), 0-based
    std::vector<Fill> fillOfStyle;                               ///< indexed by the s attribute
    unsigned rowCount = 0;

    const XlsxCellRead* cell(unsigned row, unsigned col) const
    {
        const auto it = cells.find({ row, col });
        return it == cells.end() ? nullptr : &it->second;
    }
    Fill fill(unsigned row, unsigned col) const
    {
        const auto* c = cell(row, col);
        return c && c->style >= 0 && static_cast<std::size_t>(c->style) < fillOfStyle.size() ? fillOfStyle[c->style]
                                                                                               : Fill {};
    }
};

inline std::pair<unsigned, unsigned> parseRef(const std::string& ref)
{
    unsigned col = 0;
    std::size_t i = 0;
    for (; i < ref.size() && ref[i] >= 'A' && ref[i] <= 'Z'; ++i)
        col = col * 26 + static_cast<unsigned>(ref[i] - 'A' + 1);
    return { static_cast<unsigned>(std::stoul(ref.substr(i))) - 1, col - 1 };
}

inline std::optional<Workbook> readXlsx(const std::filesystem::path& path)
{
    Workbook book;
    book.parts = unzip(path);
    if (!book.parts.count("xl/worksheets/sheet1.xml") || !book.parts.count("xl/styles.xml"))
        return std::nullopt;

    std::vector<std::string> shared;
    if (const auto it = book.parts.find("xl/sharedStrings.xml"); it != book.parts.end()) {
        for (const auto& [tag, inner] : elements(it->second, "si"))
            shared.push_back(tText(inner));
    }

    const std::string& sheet = book.parts["xl/worksheets/sheet1.xml"];
    for (const auto& [tag, inner] : elements(sheet, "row"))
        book.rowCount = std::max(book.rowCount, static_cast<unsigned>(std::stoul(*attribute(tag, "r"))));
    for (const auto& [tag, inner] : elements(sheet, "c")) {
        XlsxCellRead c;
        c.type = attribute(tag, "t").value_or("");
        c.style = std::stoi(attribute(tag, "s").value_or("0"));
        if (c.type == "inlineStr") {
            c.value = tText(inner);
            c.hasValue = true;
        } else if (const auto vs = elements(inner, "v"); !vs.empty()) {
            c.value = unescapeXml(vs.front().second);
            c.hasValue = true;
            if (c.type == "s")
                c.value = shared.at(std::stoul(c.value));
        }
        book.cells[parseRef(*attribute(tag, "r"))] = c;
    }

    const std::string& styles = book.parts["xl/styles.xml"];
    std::vector<Fill> fills;
    const auto fillsSection = elements(styles, "fills");
    if (fillsSection.size() != 1)
        return std::nullopt;
    for (const auto& [tag, inner] : elements(fillsSection.front().second, "fill")) {
        Fill f;
        if (const auto p = elements(inner, "patternFill"); !p.empty())
            f.pattern = attribute(p.front().first, "patternType").value_or("");
        if (const auto fg = elements(inner, "fgColor"); !fg.empty())
            f.rgb = attribute(fg.front().first, "rgb").value_or("");
        fills.push_back(f);
    }
    const auto xfs = elements(styles, "cellXfs");
    if (xfs.size() != 1)
        return std::nullopt;
    for (const auto& [tag, inner] : elements(xfs.front().second, "xf"))
        book.fillOfStyle.push_back(fills.at(std::stoul(attribute(tag, "fillId").value_or("0"))));
    return book;
}

/// The text pandas gives a cell read back from the xlsx (A.11): numbers with '.'/'e'/'E' are
/// floats, others ints, and whole values print as ints; strings verbatim; no cell → "".
inline std::string pandasText(const XlsxCellRead* c)
{
    if (!c || !c->hasValue)
        return "";
    if (!c->type.empty() && c->type != "n")
        return c->value;
    if (c->value.find_first_of(".eE") == std::string::npos)
        return std::to_string(std::stoll(c->value));
    const double v = std::strtod(c->value.c_str(), nullptr);
    return std::trunc(v) == v ? integralDoubleText(v) : pyFloatRepr(v);
}

inline bool isRed(const Fill& f)
{
    return f.pattern == "solid" && f.rgb == "FFFF0000";
}

inline bool isYellow(const Fill& f)
{
    // openpyxl stores 00FFFF00, libxlsxwriter FFFFFF00: Excel ignores the alpha byte of fills.
    return f.pattern == "solid" && f.rgb.size() == 8 && f.rgb.substr(2) == "FFFF00";
}

inline bool noFill(const Fill& f)
{
    return f.pattern.empty() || f.pattern == "none";
}

/// "red", "yellow", "none" or the raw fill (a missing cell counts as unfilled).
inline std::string fillKind(const Fill& f)
{
    if (isRed(f))
        return "red";
    if (isYellow(f))
        return "yellow";
    return noFill(f) ? "none" : f.pattern + "/" + f.rgb;
}

} // namespace probescope::testing::xlsx
