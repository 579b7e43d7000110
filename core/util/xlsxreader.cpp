// SPDX-License-Identifier: Apache-2.0
#include "core/util/xlsxreader.h"

#include <map>
#include <optional>
#include <string_view>

namespace probescope {

const XlsxValue* XlsxRow::at(std::uint32_t column) const
{
    for (const auto& [col, value] : cells) {
        if (col == column)
            return &value;
    }
    return nullptr;
}

namespace {

Diagnostic readError(const std::filesystem::path& path, std::string_view part, std::string message)
{
    return makeError("xlsx.read", fileLocation(path),
                     path.string() + ": " + std::string(part) + ": " + message);
}

void appendUtf8(std::string& out, std::uint32_t code)
{
    if (code < 0x80) {
        out += static_cast<char>(code);
    } else if (code < 0x800) {
        out += static_cast<char>(0xC0 | (code >> 6));
        out += static_cast<char>(0x80 | (code & 0x3F));
    } else if (code < 0x10000) {
        out += static_cast<char>(0xE0 | (code >> 12));
        out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (code & 0x3F));
    } else {
        out += static_cast<char>(0xF0 | (code >> 18));
        out += static_cast<char>(0x80 | ((code >> 12) & 0x3F));
        out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (code & 0x3F));
    }
}

/// XML character data with its five entities and numeric references resolved (an unknown entity stays as is).
void appendUnescaped(std::string& out, std::string_view s)
{
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] != '&') {
            out += s[i];
            continue;
        }
        const std::size_t end = s.find(';', i);
        if (end == std::string_view::npos || end - i > 12) {
            out += s[i];
            continue;
        }
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
        else if (entity.size() > 1 && entity[0] == '#') {
            const bool hex = entity[1] == 'x' || entity[1] == 'X';
            std::uint32_t code = 0;
            bool ok = entity.size() > (hex ? 2u : 1u);
            for (std::size_t k = hex ? 2 : 1; ok && k < entity.size(); ++k) {
                const char c = entity[k];
                int digit = -1;
                if (c >= '0' && c <= '9')
                    digit = c - '0';
                else if (hex && c >= 'a' && c <= 'f')
                    digit = c - 'a' + 10;
                else if (hex && c >= 'A' && c <= 'F')
                    digit = c - 'A' + 10;
                ok = digit >= 0 && code <= 0x10FFFF;
                code = code * (hex ? 16u : 10u) + static_cast<std::uint32_t>(digit < 0 ? 0 : digit);
            }
            if (!ok || code > 0x10FFFF) {
                out.append(s.substr(i, end - i + 1));
            } else {
                appendUtf8(out, code);
            }
        } else {
            out.append(s.substr(i, end - i + 1));
        }
        i = end;
    }
}

/// One tag found by the scanner.
struct Tag
{
    std::string_view name;  ///< local name (a namespace prefix dropped)
    std::string_view attrs; ///< the text after the name
    bool closing = false;   ///< </name>
    bool selfClosing = false;
    std::size_t end = 0;    ///< position after '>'
};

/// The next tag at or after `from` (comments, processing instructions and declarations skipped); nullopt at the end
/// or on an unterminated tag.
std::optional<Tag> nextTag(std::string_view xml, std::size_t from, std::size_t& tagStart)
{
    std::size_t at = xml.find('<', from);
    while (at != std::string_view::npos) {
        if (xml.compare(at, 4, "<!--") == 0) {
            const std::size_t end = xml.find("-->", at + 4);
            if (end == std::string_view::npos)
                return std::nullopt;
            at = xml.find('<', end + 3);
            continue;
        }
        if (xml.compare(at, 2, "<?") == 0 || xml.compare(at, 2, "<!") == 0) {
            const std::size_t end = xml.find('>', at);
            if (end == std::string_view::npos)
                return std::nullopt;
            at = xml.find('<', end + 1);
            continue;
        }
        const std::size_t end = xml.find('>', at);
        if (end == std::string_view::npos)
            return std::nullopt;
        Tag tag;
        tagStart = at;
        std::size_t p = at + 1;
        if (p < end && xml[p] == '/') {
            tag.closing = true;
            ++p;
        }
        std::size_t nameEnd = p;
        while (nameEnd < end && xml[nameEnd] != ' ' && xml[nameEnd] != '/' && xml[nameEnd] != '\t'
               && xml[nameEnd] != '\n' && xml[nameEnd] != '\r')
            ++nameEnd;
        tag.name = xml.substr(p, nameEnd - p);
        if (const std::size_t colon = tag.name.find(':'); colon != std::string_view::npos)
            tag.name.remove_prefix(colon + 1);
        tag.selfClosing = xml[end - 1] == '/';
        tag.attrs = xml.substr(nameEnd, end - nameEnd - (tag.selfClosing ? 1 : 0));
        tag.end = end + 1;
        return tag;
    }
    return std::nullopt;
}

/// Attribute `name` of a tag's attribute text (exact local or prefixed name, e.g. "r:id"), unescaped.
std::optional<std::string> attribute(std::string_view attrs, std::string_view name)
{
    std::size_t at = 0;
    while (at < attrs.size()) {
        while (at < attrs.size() && (attrs[at] == ' ' || attrs[at] == '\t' || attrs[at] == '\n' || attrs[at] == '\r'))
            ++at;
        const std::size_t eq = attrs.find('=', at);
        if (eq == std::string_view::npos || eq + 1 >= attrs.size())
            return std::nullopt;
        std::string_view key = attrs.substr(at, eq - at);
        while (!key.empty() && key.back() == ' ')
            key.remove_suffix(1);
        std::size_t q = eq + 1;
        while (q < attrs.size() && attrs[q] == ' ')
            ++q;
        if (q >= attrs.size() || (attrs[q] != '"' && attrs[q] != '\''))
            return std::nullopt;
        const std::size_t close = attrs.find(attrs[q], q + 1);
        if (close == std::string_view::npos)
            return std::nullopt;
        if (key == name) {
            std::string out;
            appendUnescaped(out, attrs.substr(q + 1, close - q - 1));
            return out;
        }
        at = close + 1;
    }
    return std::nullopt;
}

/// "AB12" -> (row 11, column 27); nullopt when it is not a cell reference within Excel's bounds.
std::optional<std::pair<std::uint32_t, std::uint32_t>> parseRef(std::string_view ref)
{
    std::uint32_t col = 0;
    std::size_t i = 0;
    for (; i < ref.size() && ref[i] >= 'A' && ref[i] <= 'Z' && i < 3; ++i)
        col = col * 26 + static_cast<std::uint32_t>(ref[i] - 'A' + 1);
    if (col == 0 || col > 16384 || i == ref.size())
        return std::nullopt;
    std::uint32_t row = 0;
    for (; i < ref.size(); ++i) {
        if (ref[i] < '0' || ref[i] > '9' || row > 1048576)
            return std::nullopt;
        row = row * 10 + static_cast<std::uint32_t>(ref[i] - '0');
    }
    if (row == 0 || row > 1048576)
        return std::nullopt;
    return std::make_pair(row - 1, col - 1);
}

/// The text of every <t> up to the tag `endName` closing the element that starts at `from`, skipping phonetic runs
/// (<rPh>), as openpyxl reads a shared or inline string. Returns the position after the closing tag.
std::size_t collectText(std::string_view xml, std::size_t from, std::string_view endName, std::string& out)
{
    std::size_t at = from;
    bool inPhonetic = false;
    std::size_t tagStart = 0;
    for (;;) {
        const auto tag = nextTag(xml, at, tagStart);
        if (!tag)
            break;
        at = tag->end;
        if (tag->closing && tag->name == endName)
            return at;
        if (tag->name == "rPh")
            inPhonetic = !tag->closing && !tag->selfClosing;
        else if (tag->name == "t" && !tag->closing && !tag->selfClosing) {
            const std::size_t close = xml.find('<', at);
            if (close == std::string_view::npos)
                return xml.size();
            if (!inPhonetic)
                appendUnescaped(out, xml.substr(at, close - at));
            at = close;
        }
    }
    return xml.size();
}

std::string resolveTarget(std::string_view target)
{
    if (!target.empty() && target.front() == '/')
        return std::string(target.substr(1));
    std::string out = "xl/";
    out.append(target);
    return out;
}

} // namespace

Result<std::vector<XlsxSheetData>> readXlsxSheets(const std::filesystem::path& path, const XlsxReadLimits& limits)
{
    auto zip = ZipReader::open(path, limits.zip);
    if (!zip)
        return zip.error();
    auto part = [&](std::string_view name) -> Result<std::string> {
        const ZipEntryInfo* entry = (*zip)->find(name);
        if (!entry)
            return readError(path, name, "missing (not an xlsx workbook?)");
        return (*zip)->read(*entry);
    };

    auto workbook = part("xl/workbook.xml");
    if (!workbook)
        return workbook.error();
    auto rels = part("xl/_rels/workbook.xml.rels");
    if (!rels)
        return rels.error();

    std::map<std::string, std::string> targetOf;
    std::size_t tagStart = 0;
    for (std::size_t at = 0;;) {
        const auto tag = nextTag(*rels, at, tagStart);
        if (!tag)
            break;
        at = tag->end;
        if (tag->name == "Relationship" && !tag->closing) {
            auto id = attribute(tag->attrs, "Id");
            auto target = attribute(tag->attrs, "Target");
            if (id && target)
                targetOf[*id] = resolveTarget(*target);
        }
    }

    std::vector<std::string> shared;
    if ((*zip)->find("xl/sharedStrings.xml")) {
        auto strings = part("xl/sharedStrings.xml");
        if (!strings)
            return strings.error();
        const std::string_view xml = *strings;
        for (std::size_t at = 0;;) {
            const auto tag = nextTag(xml, at, tagStart);
            if (!tag)
                break;
            at = tag->end;
            if (tag->name == "si" && !tag->closing) {
                std::string text;
                if (!tag->selfClosing)
                    at = collectText(xml, at, "si", text);
                shared.push_back(std::move(text));
            }
        }
    }

    std::vector<XlsxSheetData> sheets;
    std::uint64_t cells = 0;
    for (std::size_t at = 0;;) {
        const auto tag = nextTag(*workbook, at, tagStart);
        if (!tag)
            break;
        at = tag->end;
        if (tag->name != "sheet" || tag->closing)
            continue;
        XlsxSheetData sheet;
        sheet.name = attribute(tag->attrs, "name").value_or("");
        auto id = attribute(tag->attrs, "r:id");
        const auto target = id ? targetOf.find(*id) : targetOf.end();
        if (target == targetOf.end())
            return readError(path, "xl/workbook.xml", "sheet '" + sheet.name + "' has no part");
        auto body = part(target->second);
        if (!body)
            return body.error();
        const std::string_view xml = *body;
        std::uint32_t nextRow = 0;
        std::uint32_t nextCol = 0;
        XlsxRow* row = nullptr;
        for (std::size_t p = 0;;) {
            const auto t = nextTag(xml, p, tagStart);
            if (!t)
                break;
            p = t->end;
            if (t->name == "row" && !t->closing) {
                std::uint32_t r = nextRow;
                if (auto rs = attribute(t->attrs, "r")) {
                    std::uint32_t v = 0;
                    bool ok = !rs->empty();
                    for (const char c : *rs) {
                        ok = ok && c >= '0' && c <= '9' && v <= 1048576;
                        v = v * 10 + static_cast<std::uint32_t>(c - '0');
                    }
                    if (!ok || v == 0 || v > 1048576)
                        return readError(path, target->second, "bad row number '" + *rs + "'");
                    r = v - 1;
                }
                nextRow = r + 1;
                nextCol = 0;
                sheet.rows.push_back(XlsxRow { r, {} });
                row = &sheet.rows.back();
                continue;
            }
            if (t->name != "c" || t->closing)
                continue;
            if (!row)
                return readError(path, target->second, "a cell outside a row");
            std::uint32_t col = nextCol;
            if (auto ref = attribute(t->attrs, "r")) {
                auto rc = parseRef(*ref);
                if (!rc)
                    return readError(path, target->second, "bad cell reference '" + *ref + "'");
                col = rc->second;
            }
            nextCol = col + 1;
            if (++cells > limits.maxCells)
                return readError(path, target->second, "more than " + std::to_string(limits.maxCells) + " cells");
            const std::string type = attribute(t->attrs, "t").value_or("n");
            XlsxValue value;
            if (!t->selfClosing) {
                std::string v;
                bool hasV = false;
                std::string inlineText;
                bool hasInline = false;
                for (;;) {
                    const auto inner = nextTag(xml, p, tagStart);
                    if (!inner)
                        break;
                    p = inner->end;
                    if (inner->closing && inner->name == "c")
                        break;
                    if (inner->name == "v" && !inner->closing && !inner->selfClosing) {
                        const std::size_t close = xml.find('<', p);
                        if (close == std::string_view::npos)
                            return readError(path, target->second, "an unterminated value");
                        appendUnescaped(v, xml.substr(p, close - p));
                        hasV = true;
                        p = close;
                    } else if (inner->name == "is" && !inner->closing && !inner->selfClosing) {
                        p = collectText(xml, p, "is", inlineText);
                        hasInline = true;
                    }
                }
                if (type == "inlineStr") {
                    if (hasInline)
                        value = XlsxValue { XlsxValue::Kind::Text, std::move(inlineText) };
                } else if (hasV) {
                    if (type == "s") {
                        std::uint64_t index = 0;
                        bool ok = !v.empty() && v.size() < 12;
                        for (const char c : v) {
                            ok = ok && c >= '0' && c <= '9';
                            index = index * 10 + static_cast<std::uint64_t>(c - '0');
                        }
                        if (!ok || index >= shared.size())
                            return readError(path, target->second, "shared string index '" + v + "' out of range");
                        value = XlsxValue { XlsxValue::Kind::Text, shared[static_cast<std::size_t>(index)] };
                    } else if (type == "str") {
                        value = XlsxValue { XlsxValue::Kind::Text, std::move(v) };
                    } else if (type == "b") {
                        value = XlsxValue { XlsxValue::Kind::Bool, v == "1" || v == "true" ? "1" : "0" };
                    } else if (type == "e") {
                        value = XlsxValue { XlsxValue::Kind::Error, std::move(v) };
                    } else {
                        value = XlsxValue { XlsxValue::Kind::Number, std::move(v) };
                    }
                }
            }
            row->cells.emplace_back(col, std::move(value));
        }
        sheets.push_back(std::move(sheet));
    }
    return sheets;
}

} // namespace probescope
