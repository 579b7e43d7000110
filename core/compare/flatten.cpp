// SPDX-License-Identifier: Apache-2.0
#include "core/compare/flatten.h"

#include "core/compare/pytext.h"
#include "core/dump/leaf.h"

#include <cstdio>

namespace probescope::compare {

using dump::JsonType;
using dump::JsonValue;

std::string crc32Hex(std::string_view data)
{
    static const auto table = [] {
        std::array<std::uint32_t, 256> t {};
        for (std::uint32_t i = 0; i < 256; ++i) {
            std::uint32_t c = i;
            for (int k = 0; k < 8; ++k)
                c = (c & 1) ? 0xedb88320u ^ (c >> 1) : c >> 1;
            t[i] = c;
        }
        return t;
    }();
    std::uint32_t crc = 0xffffffffu;
    for (unsigned char byte : data)
        crc = table[(crc ^ byte) & 0xff] ^ (crc >> 8);
    char buf[9];
    std::snprintf(buf, sizeof buf, "%08x", crc ^ 0xffffffffu);
    return buf;
}

Cell cellFromJson(std::optional<JsonValue> v)
{
    if (!v)
        return Cell::none();
    switch (v->type()) {
    case JsonType::Null:
        return Cell::none();
    case JsonType::Bool:
        return Cell::boolean(v->asBool());
    case JsonType::Int:
        return Cell::integer(v->asInt());
    case JsonType::Double:
        return Cell::number(v->asDouble());
    case JsonType::String:
        return Cell::text(std::string(v->asString()));
    case JsonType::Array:
    case JsonType::Object:
        return Cell::pyText(pyStr(*v));
    }
    return Cell::none();
}

std::string stackText(const std::vector<std::string>& frames)
{
    std::string out = "[";
    for (std::size_t i = 0; i < frames.size(); ++i) {
        if (i)
            out += ", ";
        out += pyStrRepr(frames[i]);
    }
    out += ']';
    return out;
}

std::vector<const FlatRow*> Op::rowsByCategory() const
{
    std::vector<const FlatRow*> out;
    out.reserve(rows.size());
    for (int c = 0; c < 4; ++c) {
        for (const FlatRow& r : rows) {
            if (static_cast<int>(r.category) == c)
                out.push_back(&r);
        }
    }
    return out;
}

namespace {

bool hasSegment(std::string_view name, std::string_view segment)
{
    std::size_t start = 0;
    while (start <= name.size()) {
        const std::size_t dot = name.find('.', start);
        const std::string_view part = name.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
        if (part == segment)
            return true;
        if (dot == std::string_view::npos)
            break;
        start = dot + 1;
    }
    return false;
}

std::size_t findDirection(std::string_view name, std::size_t from, std::size_t* length)
{
    std::size_t f = name.find(".forward.", from);
    std::size_t b = name.find(".backward.", from);
    if (f == std::string_view::npos && b == std::string_view::npos && name.find(".forward.") == std::string_view::npos
        && name.find(".backward.") == std::string_view::npos) {
        // ptdbg_ascend <= 5 rows: "Functional_conv2d_0_forward_input.0" (its .npy names) or the legacy reader's
        // "Functional_conv2d_0_forward.input.0". Only names without any msprobe marker are read this way.
        for (const char after : { '_', '.' }) {
            const std::size_t uf = name.find(std::string("_forward") + after, from);
            const std::size_t ub = name.find(std::string("_backward") + after, from);
            if (uf != std::string_view::npos || ub != std::string_view::npos) {
                f = uf;
                b = ub;
                break;
            }
        }
    }
    if (f == std::string_view::npos && b == std::string_view::npos)
        return std::string_view::npos;
    if (b == std::string_view::npos || (f != std::string_view::npos && f < b)) {
        *length = 9;
        return f;
    }
    *length = 10;
    return b;
}

} // namespace

std::optional<std::pair<RowCategory, std::string>> categorize(std::string_view rowName)
{
    if (hasSegment(rowName, "parameters_grad"))
        return std::pair { RowCategory::ParametersGrad, std::string(rowName.substr(0, rowName.find("parameters_grad"))) };
    std::size_t len = 0;
    const std::size_t at = findDirection(rowName, 0, &len);
    if (at == std::string_view::npos)
        return std::nullopt;
    std::size_t nextLen = 0;
    const std::size_t next = findDirection(rowName, at + 1, &nextLen);
    std::string_view rest = rowName.substr(at + len, next == std::string_view::npos ? std::string_view::npos : next - (at + len));
    // [<digits>.]<cat>.<something>
    std::size_t digits = 0;
    while (digits < rest.size() && rest[digits] >= '0' && rest[digits] <= '9')
        ++digits;
    std::size_t catStart = 0;
    if (digits > 0 && digits < rest.size() && rest[digits] == '.')
        catStart = digits + 1;
    const std::string_view cat = rest.substr(catStart);
    const std::size_t catEnd = cat.find('.');
    // ptdbg_ascend 6.0 names a lone tensor without an index ("….forward.output"), and so does its .npy file.
    const bool bare = catEnd == std::string_view::npos && (cat == "input" || cat == "output");
    if (!bare && (catEnd == std::string_view::npos || catEnd + 1 >= cat.size()))
        return std::nullopt;
    const std::string_view word = bare ? cat : cat.substr(0, catEnd);
    RowCategory category;
    if (word == "input" || word == "kwargs")
        category = RowCategory::Input;
    else if (word == "output")
        category = RowCategory::Output;
    else if (word == "parameters")
        category = RowCategory::Parameters;
    else
        return std::nullopt;
    std::string key(rowName.substr(0, at + len));
    key += rest.substr(0, catStart);
    return std::pair { category, std::move(key) };
}

namespace {

class Flattener
{
public:
    Flattener(Op& op, CompareMode mode, const FlattenKeys& keys)
        : m_op(op)
        , m_mode(mode)
        , m_keys(keys)
    {
    }

    std::optional<std::string> parse(JsonValue v, const std::string& name, int depth)
    {
        // msprobe 1.2.2 accepts ten nested levels below a field and aborts beyond.
        if (depth > 10)
            return "\"" + name + "\" is nested more than 10 levels deep; msprobe 1.2 refuses such dumps";
        if (v.isNull()) {
            FlatRow row;
            row.name = name;
            row.dataName = "-1";
            return addRow(std::move(row));
        }
        if (v.isArray()) {
            const bool grad = hasSegment(name, "parameters_grad");
            for (std::uint32_t i = 0; i < v.size(); ++i) {
                if (auto e = parse(v.at(i), grad ? name : name + "." + std::to_string(i), depth + 1))
                    return e;
            }
            return std::nullopt;
        }
        if (!v.isObject())
            return std::nullopt; // bare scalars outside a leaf give no row
        const auto type = v.findId(m_keys.type);
        if (type && type->isString())
            return leaf(v, name);
        for (std::uint32_t i = 0; i < v.size(); ++i) {
            if (auto e = parse(v.at(i), name + "." + std::string(v.keyAt(i)), depth + 1))
                return e;
        }
        return std::nullopt;
    }

private:
    Op& m_op;
    CompareMode m_mode;
    const FlattenKeys& m_keys;

    std::optional<std::string> leaf(JsonValue v, const std::string& name)
    {
        FlatRow row;
        const auto dataName = v.findId(m_keys.dataName);
        if (dataName && dataName->isString() && !dataName->asString().empty())
            row.dataName = std::string(dataName->asString());
        else
            row.dataName = "-1";
        if (row.dataName != "-1") {
            const std::size_t dot = row.dataName.rfind('.');
            row.name = dot == std::string::npos ? row.dataName : row.dataName.substr(0, dot);
        } else {
            row.name = name;
        }
        const std::optional<std::uint32_t>* statKeys[] = { &m_keys.max, &m_keys.min, &m_keys.mean, &m_keys.norm };
        for (int i = 0; i < 4; ++i)
            row.stats[i] = cellFromJson(v.findId(*statKeys[i]));
        row.md5 = cellFromJson(v.findId(m_keys.md5));
        const auto dtype = v.findId(m_keys.dtype);
        const auto value = v.findId(m_keys.value);
        const std::string_view type = v.findId(m_keys.type)->asString();
        if (dtype && dtype->isString() && !dtype->asString().empty()) {
            row.dtype = Cell::text(std::string(dtype->asString()));
            row.shape = cellFromJson(v.findId(m_keys.shape));
        } else if (type == "torch.Size") {
            row.dtype = Cell::text("torch.Size");
            row.shape = Cell::text(value ? pyStr(*value) : "None");
        } else if (type == "slice") {
            row.dtype = Cell::text("slice");
            row.shape = Cell::text(numpyShapeText(value));
        } else if (type == "ellipsis") {
            row.dtype = Cell::text("ellipsis");
            row.shape = Cell::pyText("[]");
            for (auto& s : row.stats)
                s = cellFromJson(value);
        } else if (type == "torch.ProcessGroup") {
            row.dtype = Cell::text("torch.ProcessGroup");
            row.shape = Cell::pyText("[]");
            const auto ranks = v.findId(m_keys.groupRanks);
            for (auto& s : row.stats)
                s = Cell::text(ranks ? pyStr(*ranks) : "None");
        } else {
            row.dtype = Cell::text(std::string("<class '") + pyTypeName(value) + "'>");
            row.shape = Cell::pyText("[]");
            for (auto& s : row.stats)
                s = cellFromJson(value);
        }
        if (row.md5.isNone() || (row.md5.isString() && row.md5.asString().empty()))
            row.md5 = Cell::text(crc32Hex(value ? pyStr(*value) : std::string()));
        return addRow(std::move(row));
    }

    std::optional<std::string> addRow(FlatRow row)
    {
        auto cat = categorize(row.name);
        if (!cat)
            return "invalid row name \"" + row.name
                + "\": msprobe 1.2 needs forward/backward followed by input, kwargs, output or parameters";
        row.category = cat->first;
        row.batchKey = std::move(cat->second);
        const auto c = static_cast<std::size_t>(row.category);
        const std::string dtypeText = excelText(row.dtype);
        const std::string shapeText = excelText(row.shape);
        std::string structText = dtypeText + '\x1f' + shapeText;
        if (m_mode == CompareMode::Md5)
            structText += '\x1f' + excelText(row.md5);
        m_op.structs[c].push_back(std::move(structText));
        m_op.dtypeShape[c].emplace_back(dtypeText, shapeText);
        m_op.rows.push_back(std::move(row));
        return std::nullopt;
    }
};

} // namespace

FlattenKeys FlattenKeys::of(const dump::JsonDocument& document)
{
    FlattenKeys k;
    k.type = document.keyId("type");
    k.dataName = document.keyId("data_name");
    k.max = document.keyId("Max");
    k.min = document.keyId("Min");
    k.mean = document.keyId("Mean");
    k.norm = document.keyId("Norm");
    k.md5 = document.keyId("md5");
    k.dtype = document.keyId("dtype");
    k.value = document.keyId("value");
    k.shape = document.keyId("shape");
    k.groupRanks = document.keyId("group_ranks");
    return k;
}

Result<Op> flattenEntry(const dump::Entry& entry, std::uint32_t entryIndex, CompareMode mode, const FlattenKeys* keys)
{
    Op op;
    op.key = std::string(entry.key);
    op.entryIndex = entryIndex;
    std::optional<FlattenKeys> own;
    if (!keys)
        keys = &own.emplace(entry.value.document() ? FlattenKeys::of(*entry.value.document()) : FlattenKeys {});
    Flattener flattener(op, mode, *keys);
    const SourceLocation where { {}, entry.offset, entry.line, 0 };
    if (hasSegment(entry.key, "parameters_grad")) {
        if (auto e = flattener.parse(entry.value, op.key, 0))
            return makeError("compare.entry", where, *e);
        return op;
    }
    static constexpr std::pair<const char*, const char*> fields[] = {
        { "input_args", ".input" }, { "input_kwargs", ".input" }, { "input", ".input" },
        { "output", ".output" },    { "parameters", ".parameters" },
    };
    for (const auto& [field, suffix] : fields) {
        if (const auto v = entry.value.find(field)) {
            if (auto e = flattener.parse(*v, op.key + suffix, 0))
                return makeError("compare.entry", where, *e);
        }
    }
    return op;
}

} // namespace probescope::compare
