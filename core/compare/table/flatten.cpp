// SPDX-License-Identifier: Apache-2.0
#include "core/compare/table/flatten.h"

#include "core/compare/table/pytext.h"
#include "core/dump/leaf.h"

#include <charconv>
#include <cstdio>
#include <cstring>

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

CellView FlatCell::view() const
{
    CellView v;
    v.kind = kind;
    switch (kind) {
    case CellKind::None: break;
    case CellKind::Bool: v.boolean = boolean; break;
    case CellKind::Int: v.integer = integer; break;
    case CellKind::Float: v.number = number; break;
    case CellKind::String:
    case CellKind::PyText: v.text = std::string_view(chars, size); break;
    }
    return v;
}

FlatCell FlatRow::cell(int slot) const
{
    FlatCell c;
    const CellKind kind = m_kind[slot];
    if (kind == CellKind::String || kind == CellKind::PyText) {
        const char* counted = nullptr;
        std::memcpy(&counted, &m_value[slot], sizeof counted);
        const std::string_view text = TextArena::countedView(counted);
        c = kind == CellKind::String ? FlatCell::text(text) : FlatCell::pyText(text);
    } else {
        c.kind = kind;
        c.integer = static_cast<std::int64_t>(m_value[slot]); // the union's 8 bytes, whichever member they are
    }
    return c;
}

void FlatRow::set(int slot, const FlatCell& value, TextArena& texts)
{
    if (value.isText()) {
        setCounted(slot, value.kind, texts.storeCounted(value.textView()));
        return;
    }
    m_kind[slot] = value.kind;
    m_value[slot] = static_cast<std::uint64_t>(value.integer);
}

void FlatRow::setCounted(int slot, CellKind kind, const char* counted)
{
    m_kind[slot] = kind;
    m_value[slot] = 0;
    std::memcpy(&m_value[slot], &counted, sizeof counted);
}

bool FlatRow::sameName(const FlatRow& other) const
{
    if (nameSize() != other.nameSize())
        return false;
    // The parts may be split differently: compare the two concatenations piece by piece.
    const std::string_view a[2] = { nameHead(), nameTail() };
    const std::string_view b[2] = { other.nameHead(), other.nameTail() };
    std::size_t ia = 0, ib = 0, oa = 0, ob = 0;
    while (ia < 2 && ib < 2) {
        if (oa == a[ia].size()) {
            ++ia;
            oa = 0;
            continue;
        }
        if (ob == b[ib].size()) {
            ++ib;
            ob = 0;
            continue;
        }
        const std::size_t n = std::min(a[ia].size() - oa, b[ib].size() - ob);
        if (a[ia].compare(oa, n, b[ib], ob, n) != 0)
            return false;
        oa += n;
        ob += n;
    }
    return true;
}

bool sameText(const FlatCell& a, const FlatCell& b)
{
    // Texts print as themselves (a non-finite spelling gains the same TAB on both sides); other kinds are rare in a
    // struct (a null leaf's None), so they take the printed form.
    if (a.isText() && b.isText())
        return a.textView() == b.textView();
    std::string x;
    std::string y;
    appendExcelText(x, a.view());
    appendExcelText(y, b.view());
    return x == y;
}

void Op::rowsByCategory(std::vector<const FlatRow*>& out) const
{
    out.clear();
    for (int c = 0; c < 4; ++c) {
        for (const FlatRow& r : rows) {
            if (static_cast<int>(r.category) == c)
                out.push_back(&r);
        }
    }
}

std::vector<const FlatRow*> Op::rowsByCategory() const
{
    std::vector<const FlatRow*> out;
    out.reserve(rows.size());
    rowsByCategory(out);
    return out;
}

std::size_t FlatSide::memoryBytes() const
{
    return ops.capacity() * sizeof(Op) + rows.capacity() * sizeof(FlatRow) + texts.memoryBytes();
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

std::optional<std::pair<RowCategory, std::size_t>> categoryOf(std::string_view rowName)
{
    if (hasSegment(rowName, "parameters_grad"))
        return std::pair { RowCategory::ParametersGrad, rowName.find("parameters_grad") };
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
    // The batch key is the name up to the direction and the call index after it: a prefix of the name.
    return std::pair { category, at + len + catStart };
}

std::optional<std::pair<RowCategory, std::string>> categorize(std::string_view rowName)
{
    const auto cat = categoryOf(rowName);
    if (!cat)
        return std::nullopt;
    return std::pair { cat->first, std::string(rowName.substr(0, cat->second)) };
}

namespace {

/// msprobe's dtype text of a non-tensor leaf: "<class 'int'>" for the Python type of its value.
std::string_view classText(std::optional<JsonValue> value)
{
    const std::string_view type = pyTypeName(value);
    if (type == "bool") return "<class 'bool'>";
    if (type == "int") return "<class 'int'>";
    if (type == "float") return "<class 'float'>";
    if (type == "str") return "<class 'str'>";
    if (type == "list") return "<class 'list'>";
    if (type == "dict") return "<class 'dict'>";
    return "<class 'NoneType'>";
}

/// Rows are appended to `rows`, texts made on the way go to `texts`; names view the document where they can.
class Flattener
{
public:
    Flattener(std::vector<FlatRow>& rows, TextArena& texts, CompareMode mode)
        : m_rows(rows)
        , m_texts(texts)
        , m_mode(mode)
    {
    }

    /// The key ids of the document the next entries live in.
    void setKeys(const FlattenKeys& keys) { m_keys = keys; }
    /// The entry the next rows belong to: their paths start with its key.
    void setEntryKey(std::string_view key) { m_entryKey = key; }
    std::size_t rowCount() const { return m_rows.size(); }

    /// `path` is the row name so far; it is extended and restored on the way down (no string per level).
    std::optional<std::string> parse(JsonValue v, std::string& path, int depth)
    {
        // msprobe 1.2.2 accepts ten nested levels below a field and aborts beyond.
        if (depth > 10)
            return "\"" + path + "\" is nested more than 10 levels deep; msprobe 1.2 refuses such dumps";
        if (v.isNull()) {
            FlatRow row;
            setPathName(row, path);
            row.setDataName("-1");
            return addRow(row, path);
        }
        if (v.isArray()) {
            const bool grad = hasSegment(path, "parameters_grad");
            const std::size_t base = path.size();
            for (std::uint32_t i = 0; i < v.size(); ++i) {
                if (!grad) {
                    char digits[16];
                    const auto end = std::to_chars(digits, digits + sizeof digits, i).ptr;
                    path += '.';
                    path.append(digits, end);
                }
                auto e = parse(v.at(i), path, depth + 1);
                path.resize(base);
                if (e)
                    return e;
            }
            return std::nullopt;
        }
        if (!v.isObject())
            return std::nullopt; // bare scalars outside a leaf give no row
        const auto type = v.findId(m_keys.type);
        if (type && type->isString())
            return leaf(v, path);
        const std::size_t base = path.size();
        for (std::uint32_t i = 0; i < v.size(); ++i) {
            path += '.';
            path += v.keyAt(i);
            auto e = parse(v.at(i), path, depth + 1);
            path.resize(base);
            if (e)
                return e;
        }
        return std::nullopt;
    }

private:
    std::vector<FlatRow>& m_rows;
    TextArena& m_texts;
    CompareMode m_mode;
    FlattenKeys m_keys;
    std::string_view m_entryKey;
    // Dtype and shape texts repeat from row to row: the last few counted copies are reused.
    struct Recent
    {
        std::string_view text;
        const char* counted = nullptr;
    };
    struct RecentTexts
    {
        std::array<Recent, 16> texts {};
        std::size_t next = 0;
    };
    RecentTexts m_values; // dtype and shape texts
    RecentTexts m_tails;  // name tails (".input.0")

    /// A counted copy of `text` (see FlatRow), shared with a recent row that has the same text.
    const char* counted(std::string_view text, RecentTexts& recent)
    {
        for (const Recent& r : recent.texts) {
            if (r.counted && r.text == text)
                return r.counted;
        }
        const char* c = m_texts.storeCounted(text);
        recent.texts[recent.next] = { TextArena::countedView(c), c };
        recent.next = (recent.next + 1) % recent.texts.size();
        return c;
    }
    const char* counted(std::string_view text) { return counted(text, m_values); }

    /// The row's name is `path`: the entry key (viewed) and the rest (shared), or a copy when it is not split so.
    void setPathName(FlatRow& row, std::string_view path)
    {
        if (!m_entryKey.empty() && path.size() > m_entryKey.size() && path.starts_with(m_entryKey)
            && path[m_entryKey.size()] == '.')
            row.setName(m_entryKey, counted(path.substr(m_entryKey.size()), m_tails));
        else
            row.setName(m_texts.store(path));
    }

    void setText(FlatRow& row, int slot, std::string_view text) { row.setCounted(slot, CellKind::String, counted(text)); }
    void setPyText(FlatRow& row, int slot, std::string_view text) { row.setCounted(slot, CellKind::PyText, counted(text)); }

    /// cellFromJson() into a slot: numbers by value, strings and printed lists and dicts as counted texts.
    void setValue(FlatRow& row, int slot, std::optional<JsonValue> v)
    {
        row.set(slot, FlatCell::none(), m_texts);
        if (!v)
            return;
        switch (v->type()) {
        case JsonType::Null: return;
        case JsonType::Bool: row.set(slot, FlatCell::ofBool(v->asBool()), m_texts); return;
        case JsonType::Int: row.set(slot, FlatCell::ofInteger(v->asInt()), m_texts); return;
        case JsonType::Double: row.set(slot, FlatCell::ofNumber(v->asDouble()), m_texts); return;
        case JsonType::String: setText(row, slot, v->asString()); return;
        case JsonType::Array:
        case JsonType::Object: setPyText(row, slot, pyStr(*v)); return;
        }
    }

    void setStats(FlatRow& row, std::optional<JsonValue> v)
    {
        for (int i = 0; i < 4; ++i)
            setValue(row, FlatRow::Max + i, v);
    }

    std::optional<std::string> leaf(JsonValue v, const std::string& path)
    {
        FlatRow row;
        const auto dataName = v.findId(m_keys.dataName);
        const std::string_view dn = dataName && dataName->isString() && !dataName->asString().empty()
            ? dataName->asString()
            : std::string_view("-1");
        row.setDataName(dn);
        if (dn != "-1") {
            const std::size_t dot = dn.rfind('.');
            row.setName(dot == std::string_view::npos ? dn : dn.substr(0, dot));
        } else {
            setPathName(row, path);
        }
        const std::optional<std::uint32_t>* statKeys[] = { &m_keys.max, &m_keys.min, &m_keys.mean, &m_keys.norm };
        for (int i = 0; i < 4; ++i)
            setValue(row, FlatRow::Max + i, v.findId(*statKeys[i]));
        const auto dtype = v.findId(m_keys.dtype);
        const auto value = v.findId(m_keys.value);
        const std::string_view type = v.findId(m_keys.type)->asString();
        if (dtype && dtype->isString() && !dtype->asString().empty()) {
            setText(row, FlatRow::Dtype, dtype->asString());
            setValue(row, FlatRow::Shape, v.findId(m_keys.shape));
        } else if (type == "torch.Size") {
            setText(row, FlatRow::Dtype, "torch.Size");
            setText(row, FlatRow::Shape, value ? pyStr(*value) : std::string("None"));
        } else if (type == "slice") {
            setText(row, FlatRow::Dtype, "slice");
            setText(row, FlatRow::Shape, numpyShapeText(value));
        } else if (type == "ellipsis") {
            setText(row, FlatRow::Dtype, "ellipsis");
            setPyText(row, FlatRow::Shape, "[]");
            setStats(row, value);
        } else if (type == "torch.ProcessGroup") {
            setText(row, FlatRow::Dtype, "torch.ProcessGroup");
            setPyText(row, FlatRow::Shape, "[]");
            const auto ranks = v.findId(m_keys.groupRanks);
            const std::string text = ranks ? pyStr(*ranks) : std::string("None");
            for (int i = 0; i < 4; ++i)
                setText(row, FlatRow::Max + i, text);
        } else {
            setText(row, FlatRow::Dtype, classText(value));
            setPyText(row, FlatRow::Shape, "[]");
            setStats(row, value);
        }
        // Only md5 mode shows or compares the md5; the CRC of a leaf without one is made only there.
        if (m_mode == CompareMode::Md5) {
            setValue(row, FlatRow::Md5, v.findId(m_keys.md5));
            const FlatCell md5 = row.md5();
            if (md5.isNone() || (md5.isString() && md5.size == 0))
                row.setCounted(FlatRow::Md5, CellKind::String,
                               m_texts.storeCounted(crc32Hex(value ? pyStr(*value) : std::string())));
        }
        return addRow(row, path);
    }

    /// `path` is the row's path name (its name unless a data_name names it).
    std::optional<std::string> addRow(FlatRow& row, std::string_view path)
    {
        const std::string_view name = row.nameTail().empty() ? row.nameHead() : path;
        const auto cat = categoryOf(name);
        if (!cat)
            return "invalid row name \"" + std::string(name)
                + "\": msprobe 1.2 needs forward/backward followed by input, kwargs, output or parameters";
        row.category = cat->first;
        m_rows.push_back(row);
        return std::nullopt;
    }
};

/// Flattens one entry's fields through `flattener`; returns the number of rows it added.
Result<std::size_t> flattenInto(const dump::Entry& entry, Flattener& flattener, std::string& path)
{
    const std::size_t before = flattener.rowCount();
    flattener.setEntryKey(entry.key);
    const SourceLocation where { {}, entry.offset, entry.line, 0 };
    path.assign(entry.key);
    if (hasSegment(entry.key, "parameters_grad")) {
        if (auto e = flattener.parse(entry.value, path, 0))
            return makeError("compare.entry", where, *e);
        return flattener.rowCount() - before;
    }
    static constexpr std::pair<const char*, const char*> fields[] = {
        { "input_args", ".input" }, { "input_kwargs", ".input" }, { "input", ".input" },
        { "output", ".output" },    { "parameters", ".parameters" },
    };
    for (const auto& [field, suffix] : fields) {
        if (const auto v = entry.value.find(field)) {
            path.assign(entry.key);
            path += suffix;
            if (auto e = flattener.parse(*v, path, 0))
                return makeError("compare.entry", where, *e);
        }
    }
    return flattener.rowCount() - before;
}

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

Result<FlatEntry> flattenEntry(const dump::Entry& entry, std::uint32_t entryIndex, CompareMode mode,
                               const FlattenKeys* keys)
{
    FlatEntry flat;
    flat.op.key = entry.key;
    flat.op.entryIndex = entryIndex;
    std::optional<FlattenKeys> own;
    if (!keys)
        keys = &own.emplace(entry.value.document() ? FlattenKeys::of(*entry.value.document()) : FlattenKeys {});
    std::string path;
    Flattener flattener(flat.rows, flat.texts, mode);
    flattener.setKeys(*keys);
    auto added = flattenInto(entry, flattener, path);
    if (!added)
        return added.error();
    flat.op.rows = flat.rows;
    return flat;
}

Result<FlatSide> flattenDump(const dump::DumpFile& dump, CompareMode mode)
{
    FlatSide side;
    side.mode = mode;
    side.ops.resize(dump.entries.size());
    // About three leaves an entry in the dumps of LLM training runs; growing past it only copies 88-byte rows.
    side.rows.reserve(dump.entries.size() * 3);
    std::vector<std::uint32_t> firstRow(dump.entries.size() + 1, 0);
    std::optional<FlattenKeys> keys;
    std::string path;
    Flattener flattener(side.rows, side.texts, mode);
    for (std::uint32_t i = 0; i < dump.entries.size(); ++i) {
        const dump::Entry& entry = dump.entries[i];
        // Entries share the document, except the ones a salvaging reader synthesised.
        const dump::JsonDocument* document = entry.value.document();
        if (!keys || (i > 0 && document != dump.entries[i - 1].value.document())) {
            keys = document ? FlattenKeys::of(*document) : FlattenKeys {};
            flattener.setKeys(*keys);
        }
        firstRow[i] = static_cast<std::uint32_t>(side.rows.size());
        auto added = flattenInto(entry, flattener, path);
        if (!added) {
            Diagnostic d = added.error();
            d.location.file = dump.path.string();
            return d;
        }
        Op& op = side.ops[i];
        op.key = entry.key;
        op.entryIndex = i;
    }
    firstRow.back() = static_cast<std::uint32_t>(side.rows.size());
    // The rows are in place now: the ops can view them.
    const std::span<const FlatRow> all(side.rows);
    for (std::size_t i = 0; i < side.ops.size(); ++i)
        side.ops[i].rows = all.subspan(firstRow[i], firstRow[i + 1] - firstRow[i]);
    return side;
}

} // namespace probescope::compare
