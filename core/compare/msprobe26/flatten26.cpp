// SPDX-License-Identifier: Apache-2.0
// msprobe 26 compare, the input side: a dump flattened into msprobe's ParseData rows (gen_op_item, gen_data_df) and
// the backward calls renumbered.
#include "core/compare/msprobe26/msprobe26.h"
#include "core/compare/msprobe26/rows26.h"

#include "core/compare/table/flatten.h"
#include "core/compare/match/mappingutil.h"
#include "core/compare/table/pytext.h"
#include "core/dump/leaf.h"

#include <algorithm>
#include <unordered_map>

namespace probescope::compare::msprobe26 {

namespace detail {

namespace {

using dump::JsonType;
using dump::JsonValue;

constexpr int kMaxDepth = 400;

bool hasSegment(std::string_view name, std::string_view segment)
{
    for (const auto& part : splitDots(name)) {
        if (part == segment)
            return true;
    }
    return false;
}

bool isDigits(std::string_view s)
{
    return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

Cell strCell(std::optional<JsonValue> v)
{
    return Cell::text(v ? pyStr(*v) : std::string("None"));
}

/// A leaf's stat as gen_op_item leaves it: bools become "True"/"False", a missing stat None.
Cell statOf(JsonValue leaf, const char* key)
{
    const auto v = leaf.find(key);
    if (v && v->isBool())
        return Cell::text(v->asBool() ? "True" : "False");
    return cellFromJson(v);
}

class Flattener26
{
public:
    std::vector<Row26> rows;
    std::optional<std::string> error;

    void parse(JsonValue v, const std::string& name, const std::string& state, int depth)
    {
        if (error)
            return;
        if (depth > kMaxDepth) {
            error = "parse of " + name + " exceeds the recursion limit";
            return;
        }
        if (v.isNull()) {
            rows.push_back(defaultRow(name, state));
            return;
        }
        if ((v.isArray() || v.isObject()) && v.size() == 0)
            return;
        if (v.isArray()) {
            const bool grad = hasSegment(name, "parameters_grad");
            for (std::uint32_t i = 0; i < v.size(); ++i)
                parse(v.at(i), grad ? name : name + "." + std::to_string(i), state, depth + 1);
            return;
        }
        if (!v.isObject())
            return; // bare scalars outside a leaf are not rows
        const auto classType = v.find("class_type");
        if (classType && classType->isString() && classType->asString() == "torch.distributed.P2POp") {
            const auto t = v.find("tensor");
            if (t && t->isObject())
                rows.push_back(leafRow(*t, name, state));
            else
                rows.push_back(defaultRow(name, state));
            rows.back().p2pOp = cellFromJson(v.find("op"));
            rows.back().p2pPeer = cellFromJson(v.find("peer"));
            return;
        }
        const auto type = v.find("type");
        if (type && type->isString()) {
            rows.push_back(leafRow(v, name, state));
            return;
        }
        for (std::uint32_t i = 0; i < v.size(); ++i)
            parse(v.at(i), name + "." + std::string(v.keyAt(i)), state, depth + 1);
    }

private:
    static Row26 defaultRow(const std::string& name, const std::string& state)
    {
        Row26 r;
        r.name = name;
        r.dtype = "None";
        r.shape = "None";
        // The md5 of a null leaf stays Python None, which the fillna("N/A") after matching replaces
        // (dtype and shape are already the text "None" by then).
        r.md5 = kNA;
        r.state = state;
        for (auto& s : r.stats)
            s = Cell::none();
        return r;
    }

    static Row26 leafRow(JsonValue v, const std::string& name, const std::string& state)
    {
        Row26 r;
        r.state = state;
        const auto dataName = v.find("data_name");
        if (dataName && !(dataName->isNull() || (dataName->isString() && dataName->asString().empty())
                          || (dataName->isBool() && !dataName->asBool())))
            r.dataName = dataName->isString() ? std::string(dataName->asString()) : pyStr(*dataName);
        if (r.dataName != "-1") {
            const std::size_t dot = r.dataName.rfind('.');
            r.name = dot == std::string::npos ? r.dataName : r.dataName.substr(0, dot);
        } else {
            r.name = name;
        }
        if (const auto rg = v.find("requires_grad"); rg && !rg->isNull())
            r.requiresGrad = rg->isBool() ? std::string(rg->asBool() ? "True" : "False") : pyStr(*rg);
        static constexpr const char* statKeys[] = { "Max", "Min", "Mean", "Norm" };
        for (int i = 0; i < 4; ++i)
            r.stats[i] = statOf(v, statKeys[i]);
        const auto value = v.find("value");
        const auto dtype = v.find("dtype");
        const std::string type(v.find("type")->asString());
        const bool hasDtype = dtype && !dtype->isNull() && !(dtype->isString() && dtype->asString().empty())
            && !(dtype->isBool() && !dtype->asBool()) && !(dtype->isArray() && dtype->size() == 0);
        std::optional<std::string> md5;
        if (const auto m = v.find("md5"); m && !m->isNull() && !(m->isString() && m->asString().empty()))
            md5 = m->isBool() ? std::string(m->asBool() ? "True" : "False") : pyStr(*m);
        // name.split(".")[-1] without splitting the whole name (npos + 1 = 0: a name without a dot is its own last segment)
        const std::string_view lastSegment = std::string_view(name).substr(name.rfind('.') + 1);
        if (hasDtype) {
            r.dtype = dtype->isBool() ? std::string(dtype->asBool() ? "True" : "False") : pyStr(*dtype);
            const auto shape = v.find("shape");
            r.shape = shape ? pyStr(*shape) : "None";
        } else if (type == "torch.Size") {
            r.dtype = type;
            r.shape = value ? pyStr(*value) : "None";
        } else if (type == "slice") {
            r.dtype = type;
            r.shape = numpyShapeText(value);
        } else if (type == "ellipsis") {
            r.dtype = type;
            r.shape = "[]";
            for (auto& s : r.stats)
                s = cellFromJson(value);
        } else if (lastSegment == "src" || lastSegment == "dst" || lastSegment == "group_src"
                   || lastSegment == "group_dst") {
            r.dtype = type;
            r.shape = "[]";
            for (auto& s : r.stats)
                s = strCell(value);
            md5 = value ? pyStr(*value) : "None";
        } else if (type == "torch.ProcessGroup") {
            r.dtype = type;
            r.shape = "[]";
            const auto ranks = v.find("group_ranks");
            for (auto& s : r.stats)
                s = strCell(ranks);
            md5 = ranks ? pyStr(*ranks) : "None";
        } else {
            r.dtype = std::string("<class '") + pyTypeName(value) + "'>";
            r.shape = "[]";
            for (auto& s : r.stats)
                s = cellFromJson(value);
        }
        if (!md5 || md5->empty())
            md5 = crc32Hex(value ? pyStr(*value) : std::string());
        r.md5 = *md5;
        return r;
    }
};

} // namespace

Result<std::vector<Row26>> flattenEntry26(const dump::Entry& entry)
{
    const std::string key(entry.key);
    const auto parts = splitDots(key);
    Flattener26 f;
    const bool isDebug = parts.back() == "debug";
    const bool isGrad = parts.back() == "parameters_grad" || (parts.size() >= 2 && parts[parts.size() - 2] == "parameters_grad");
    if (isDebug) {
        f.parse(entry.value, key, "debug", 0);
    } else if (isGrad) {
        f.parse(entry.value, key, "parameters_grad", 0);
    } else if (entry.value.isObject()) {
        static constexpr std::pair<const char*, const char*> fields[] = {
            { "input_args", ".input" }, { "input_kwargs", ".input" }, { "input", ".input" },
            { "output", ".output" },    { "parameters", ".parameters" },
        };
        for (const auto& [field, suffix] : fields) {
            if (const auto v = entry.value.find(field)) {
                std::string state = field;
                if (state == "input_args" || state == "input_kwargs")
                    state = "input";
                f.parse(*v, key + suffix, state, 0);
            }
        }
    }
    if (f.error)
        return makeError("compare.entry", SourceLocation { {}, entry.offset, entry.line, 0 }, *f.error);
    // inputs (and debug) → parameters → outputs → parameters_grad, stable
    std::vector<Row26> ordered;
    ordered.reserve(f.rows.size());
    for (const char* cat : { "", "parameters", "output", "parameters_grad" }) {
        for (auto& r : f.rows) {
            const bool other = r.state != "parameters" && r.state != "output" && r.state != "parameters_grad";
            if ((*cat == '\0' && other) || r.state == cat)
                ordered.push_back(std::move(r)); // the four categories part the rows: each is taken once
        }
    }
    return ordered;
}

Result<std::vector<Row26>> flattenDump26(const dump::DumpFile& file, const CompareOptions& options)
{
    std::vector<Row26> out;
    std::unordered_map<std::string, int> forwardCount;
    std::unordered_map<std::string, int> backwardCount;
    const bool debug = file.format == dump::DumpFormat::DebugJson;
    for (std::uint32_t e = 0; e < file.entries.size(); ++e) {
        const dump::Entry& entry = file.entries[e];
        auto rows = flattenEntry26(entry);
        if (!rows)
            return rows.error();
        if (rows->empty())
            continue;
        const std::string key(entry.key);
        std::string opNoNumber;
        std::string callDirection;
        std::string direction;
        if (debug) {
            opNoNumber = callDirection = direction = key;
        } else {
            const auto parts = splitDots(key);
            const std::string& last = parts.back();
            const std::string secondLast = parts.size() >= 2 ? parts[parts.size() - 2] : std::string();
            if (last == "parameters_grad" || secondLast == "parameters_grad") {
                opNoNumber = parts.size() > 1 ? joinDots(parts, 0, parts.size() - 1) : std::string();
                callDirection = direction = "parameters_grad";
            } else {
                for (const char* d : { "forward", "backward" }) {
                    if (last == d || secondLast == d) {
                        opNoNumber = parts.size() > 2 ? joinDots(parts, 0, parts.size() - 2) : std::string();
                        callDirection = secondLast + "." + last;
                        direction = d;
                        break;
                    }
                }
            }
        }
        if (opNoNumber.empty())
            continue; // msprobe 26 silently skips such entries
        const int fwd = forwardCount[opNoNumber];
        const int bwd = backwardCount[opNoNumber];
        if (direction == "forward")
            ++forwardCount[opNoNumber];
        if (direction == "backward")
            ++backwardCount[opNoNumber];
        std::optional<std::string> stack;
        const std::vector<std::string>* stackFrames = nullptr;
        if (options.stackMode && options.stack) {
            stackFrames = options.stack->frames(key);
            if (stackFrames)
                stack = stackText(*stackFrames);
        }
        for (std::size_t i = 0; i < rows->size(); ++i) {
            Row26& r = (*rows)[i];
            r.entry = e;
            r.apiOrigin = key;
            r.direction = direction;
            r.callDirection = callDirection;
            r.opNoNumber = opNoNumber;
            r.forwardOrder = fwd;
            r.backwardOrder = bwd;
            r.suffix = replaceAll(r.name, key, "");
            r.key = r.name;
            if (i == 0) {
                r.stack = stack;
                if (stackFrames)
                    r.stackFrames = *stackFrames;
            }
            out.push_back(std::move(r));
        }
    }
    return out;
}

void renumberBackward(std::vector<Row26>& rows)
{
    for (Row26& r : rows) {
        if (r.direction != "backward")
            continue;
        const std::size_t dot = r.callDirection.rfind('.');
        if (dot == std::string::npos)
            continue;
        std::string head = r.callDirection.substr(0, dot);
        std::string tail = r.callDirection.substr(dot + 1);
        const bool h = isDigits(head);
        const bool t = isDigits(tail);
        if (!h && !t)
            continue;
        if (h)
            head = std::to_string(r.backwardOrder);
        if (t)
            tail = std::to_string(r.backwardOrder);
        r.callDirection = head + "." + tail;
        r.key = r.opNoNumber + "." + r.callDirection + r.suffix;
    }
}

} // namespace detail

std::vector<std::string> rowNames(const dump::Entry& entry)
{
    auto rows = detail::flattenEntry26(entry);
    std::vector<std::string> names;
    if (rows) {
        for (const detail::Row26& r : *rows)
            names.push_back(r.name);
    }
    return names;
}

} // namespace probescope::compare::msprobe26
