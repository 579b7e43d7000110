// SPDX-License-Identifier: Apache-2.0
// msprobe's GraphBuilder (26.0.0 python/msprobe/visualization/builder/graph_builder.py, msprobe_adapter.py;
// 8.3.3 the same files) and core/compare/utils.py read_op/op_item_parse/gen_op_item, re-done in C++: the
// Python value types are kept as far as they change a stored text (int vs float, bool, None, str).
#include "core/graph/msgraph.h"

#include "core/compare/table/flatten.h"
#include "core/compare/table/pytext.h"
#include "core/dump/jsondocument.h"
#include "core/util/pytext.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <unordered_set>

namespace probescope::graph {

namespace {

using dump::JsonType;
using dump::JsonValue;

bool startsWith(std::string_view s, std::string_view p)
{
    return s.size() >= p.size() && s.substr(0, p.size()) == p;
}
bool endsWith(std::string_view s, std::string_view p)
{
    return s.size() >= p.size() && s.substr(s.size() - p.size()) == p;
}

/// NodeOp.get_node_op: re.match of '^(Module.|Cell.|optimizer|clip_grad|DefaultModel)' (module) then of the API
/// prefixes; '.' in those patterns is any character, so "Module" needs one more character after it.
std::uint8_t nodeOp(std::string_view name)
{
    auto prefixAny = [&](std::string_view word) { return name.size() > word.size() && startsWith(name, word); };
    for (std::string_view w : { "Module", "Cell" })
        if (prefixAny(w))
            return kModule;
    for (std::string_view w : { "optimizer", "clip_grad", "DefaultModel" })
        if (startsWith(name, w))
            return kModule;
    for (std::string_view w : { "Tensor", "Torch", "Functional", "NPU", "VF", "Distributed", "Aten", "Mint",
                                "Primitive", "Jit", "MintFunctional", "MindSpeed" })
        if (prefixAny(w))
            return kApi;
    return kModule;
}

std::vector<std::string_view> split(std::string_view s, char sep)
{
    std::vector<std::string_view> out;
    std::size_t start = 0;
    for (;;) {
        const auto at = s.find(sep, start);
        out.push_back(s.substr(start, at == std::string_view::npos ? std::string_view::npos : at - start));
        if (at == std::string_view::npos)
            return out;
        start = at + 1;
    }
}

std::string join(const std::vector<std::string_view>& parts, std::size_t count)
{
    std::string out;
    for (std::size_t i = 0; i < count && i < parts.size(); ++i) {
        if (i)
            out += '.';
        out += parts[i];
    }
    return out;
}

/// (\.backward\.)(\d+)$ / (\.forward\.)(\d+)$: the position of ".backward." before trailing digits, or npos.
std::size_t directionSuffix(std::string_view s, std::string_view word)
{
    std::size_t end = s.size();
    while (end > 0 && s[end - 1] >= '0' && s[end - 1] <= '9')
        --end;
    if (end == s.size())
        return std::string_view::npos;
    if (end < word.size() || s.substr(end - word.size(), word.size()) != word)
        return std::string_view::npos;
    return end - word.size();
}
/// pattern.sub(replacement + r"\2", s) for the (\.word\.)(\d+)$ patterns.
std::string swapDirection(std::string_view s, std::string_view from, std::string_view to)
{
    const auto at = directionSuffix(s, from);
    if (at == std::string_view::npos)
        return std::string(s);
    return std::string(s.substr(0, at)) + std::string(to) + std::string(s.substr(at + from.size()));
}
std::string replaceAll(std::string s, std::string_view from, std::string_view to)
{
    for (std::size_t at = 0; (at = s.find(from, at)) != std::string::npos; at += to.size())
        s.replace(at, from.size(), to);
    return s;
}

// ---- Python values ----

struct PyVal
{
    enum Kind : std::uint8_t { None, Bool, Int, Float, Str, Json } kind = None;
    bool b = false;
    std::int64_t i = 0;
    double d = 0;
    std::string s;
    JsonValue j;

    static PyVal str(std::string text)
    {
        PyVal v;
        v.kind = Str;
        v.s = std::move(text);
        return v;
    }
    bool truthy() const
    {
        switch (kind) {
        case None: return false;
        case Bool: return b;
        case Int: return i != 0;
        case Float: return d != 0;
        case Str: return !s.empty();
        case Json: return j.size() > 0;
        }
        return false;
    }
};

PyVal fromJson(const std::optional<JsonValue>& v)
{
    PyVal p;
    if (!v || !v->valid())
        return p;
    switch (v->type()) {
    case JsonType::Null: break;
    case JsonType::Bool: p.kind = PyVal::Bool; p.b = v->asBool(); break;
    case JsonType::Int: p.kind = PyVal::Int; p.i = v->asInt(); break;
    case JsonType::Double: p.kind = PyVal::Float; p.d = v->asDouble(); break;
    case JsonType::String: p.kind = PyVal::Str; p.s = std::string(v->asString()); break;
    case JsonType::Array:
    case JsonType::Object: p.kind = PyVal::Json; p.j = *v; break;
    }
    return p;
}

/// str(value)
std::string pyStr(const PyVal& v)
{
    switch (v.kind) {
    case PyVal::None: return "None";
    case PyVal::Bool: return v.b ? "True" : "False";
    case PyVal::Int: return std::to_string(v.i);
    case PyVal::Float: return pyFloatRepr(v.d);
    case PyVal::Str: return v.s;
    case PyVal::Json: return compare::pyRepr(v.j); // Python's repr of a list or dict (compare/pytext)
    }
    return {};
}

/// type(value) as msprobe's graph prints it ("<class 'float'>"): compare/pytext's type name.
std::string pyTypeName(const std::optional<JsonValue>& v)
{
    return std::string("<class '") + compare::pyTypeName(v && v->valid() ? v : std::nullopt) + "'>";
}

/// A parsed item: msprobe's dict, in insertion order (assigning an existing key keeps its place).
struct Item
{
    std::vector<std::pair<std::string, PyVal>> values;

    PyVal* find(std::string_view key)
    {
        for (auto& [k, v] : values)
            if (k == key)
                return &v;
        return nullptr;
    }
    void set(std::string_view key, PyVal v)
    {
        if (PyVal* p = find(key))
            *p = std::move(v);
        else
            values.emplace_back(std::string(key), std::move(v));
    }
    void erase(std::string_view key)
    {
        values.erase(std::remove_if(values.begin(), values.end(), [&](const auto& kv) { return kv.first == key; }),
                     values.end());
    }
    std::string text(std::string_view key)
    {
        const PyVal* p = find(key);
        return p && p->kind == PyVal::Str ? p->s : std::string();
    }
};

constexpr std::array<const char*, 4> kStats { "Max", "Min", "Mean", "Norm" };

std::optional<JsonValue> member(const JsonValue& obj, std::string_view key)
{
    if (!obj.valid() || !obj.isObject())
        return std::nullopt;
    return obj.find(key);
}

Item genOpItem(const JsonValue& data, const std::string& opName, const std::string& state)
{
    Item item;
    for (std::uint32_t k = 0; k < data.size(); ++k) {
        const JsonValue v = data.at(k);
        if (v.isBool())
            item.set(data.keyAt(k), PyVal::str(v.asBool() ? "True" : "False"));
        else
            item.set(data.keyAt(k), fromJson(v));
    }
    PyVal dataName = fromJson(member(data, "data_name"));
    if (!dataName.truthy())
        dataName = PyVal::str("-1");
    item.set("data_name", dataName);
    const std::string dn = pyStr(dataName);
    std::string full = opName;
    if (dn != "-1") {
        const auto dot = dn.rfind('.');
        full = dot == std::string::npos ? dn : dn.substr(0, dot);
    }
    item.set("full_op_name", PyVal::str(full));
    item.set("state", PyVal::str(state));
    if (!item.find("requires_grad"))
        item.set("requires_grad", PyVal {});
    for (const char* s : kStats)
        if (!item.find(s))
            item.set(s, PyVal {});
    const PyVal* dtype = item.find("dtype");
    if (!dtype || !dtype->truthy()) {
        const std::string type = item.text("type");
        const auto value = member(data, "value");
        const std::string last = std::string(split(opName, '.').back());
        if (type == "torch.Size") {
            item.set("dtype", fromJson(member(data, "type")));
            item.set("shape", PyVal::str(pyStr(fromJson(value))));
        } else if (type == "slice") {
            item.set("dtype", fromJson(member(data, "type")));
            // str(np.shape(np.array(value))): a flat list of n -> "(n,)"
            const std::size_t n = value && value->isArray() ? value->size() : 0;
            item.set("shape", PyVal::str(value && value->isArray() ? "(" + std::to_string(n) + ",)" : "()"));
        } else if (type == "ellipsis") {
            item.set("dtype", fromJson(member(data, "type")));
            item.set("shape", PyVal::str("[]"));
            for (const char* s : kStats)
                item.set(s, fromJson(value));
        } else if (last == "src" || last == "dst" || last == "group_src" || last == "group_dst") {
            item.set("dtype", fromJson(member(data, "type")));
            item.set("shape", PyVal::str("[]"));
            for (const char* s : kStats)
                item.set(s, PyVal::str(pyStr(fromJson(value))));
            item.set("md5", PyVal::str(pyStr(fromJson(value))));
        } else if (type == "torch.ProcessGroup") {
            const std::string ranks = pyStr(fromJson(member(data, "group_ranks")));
            item.set("dtype", fromJson(member(data, "type")));
            item.set("shape", PyVal::str("[]"));
            for (const char* s : kStats)
                item.set(s, PyVal::str(ranks));
            item.set("md5", PyVal::str(ranks));
        } else {
            item.set("dtype", PyVal::str(pyTypeName(value)));
            item.set("shape", PyVal::str("[]"));
            for (const char* s : kStats)
                item.set(s, fromJson(value));
        }
    }
    const PyVal* md5 = item.find("md5");
    if (!md5 || !md5->truthy()) {
        const auto value = member(data, "value");
        const std::string text = value ? pyStr(fromJson(value)) : std::string();
        item.set("md5", PyVal::str(compare::crc32Hex(text))); // msprobe's zlib.crc32 of str(value), as the compare
    }
    return item;
}

Item defaultItem(const std::string& opName, const std::string& state)
{
    Item item;
    item.set("full_op_name", PyVal::str(opName));
    for (const char* k : { "type", "Max", "Min", "Mean", "Norm", "dtype", "shape", "md5", "value" })
        item.set(k, PyVal {});
    item.set("data_name", PyVal::str("-1"));
    item.set("state", PyVal::str(state));
    item.set("requires_grad", PyVal {});
    return item;
}

void opItemParse(const std::optional<JsonValue>& data, const std::string& opName, std::string state, int depth,
                 std::vector<Item>& out)
{
    if (state == "input_args" || state == "input_kwargs")
        state = "input";
    if (depth > 50)
        return;
    if (!data || !data->valid() || data->isNull()) {
        out.push_back(defaultItem(opName, state));
        return;
    }
    if (!fromJson(data).truthy())
        return;
    if (data->isArray()) {
        const bool grad = [&] {
            for (auto part : split(opName, '.'))
                if (part == "parameters_grad")
                    return true;
            return false;
        }();
        for (std::uint32_t k = 0; k < data->size(); ++k)
            opItemParse(data->at(k), grad ? opName : opName + "." + std::to_string(k), state, depth + 1, out);
        return;
    }
    if (data->isObject()) {
        const auto cls = member(*data, "class_type");
        if (cls && cls->isString() && cls->asString() == "torch.distributed.P2POp") {
            const auto tensor = member(*data, "tensor");
            Item item = tensor && tensor->isObject() ? genOpItem(*tensor, opName, state) : defaultItem(opName, state);
            for (const char* k : { "class_type", "op", "peer", "tag", "group_id" })
                item.set(k, fromJson(member(*data, k)));
            out.push_back(std::move(item));
            return;
        }
        const auto type = member(*data, "type");
        if (type && type->isString()) {
            out.push_back(genOpItem(*data, opName, state));
            return;
        }
        for (std::uint32_t k = 0; k < data->size(); ++k)
            opItemParse(data->at(k), opName + "." + std::string(data->keyAt(k)), state, depth + 1, out);
    }
}

std::vector<Item> readOp(const std::optional<JsonValue>& entry, const std::string& opName)
{
    std::vector<Item> out;
    const auto parts = split(opName, '.');
    if (parts.back() == "debug") {
        opItemParse(entry, opName, "debug", 0, out);
    } else if (parts.back() == "parameters_grad" || (parts.size() >= 2 && parts[parts.size() - 2] == "parameters_grad")) {
        if (entry)
            opItemParse(entry, opName, "parameters_grad", 0, out);
    } else if (entry && entry->isObject()) {
        static const std::array<std::pair<const char*, const char*>, 5> kIo { {
            { "input_args", ".input" },
            { "input_kwargs", ".input" },
            { "input", ".input" },
            { "output", ".output" },
            { "parameters", ".parameters" },
        } };
        for (const auto& [name, tail] : kIo)
            if (const auto v = entry->find(name))
                opItemParse(*v, opName + tail, name, 0, out);
    }
    return out;
}

MsParam formatItem(Item item, WriteFormat format, bool md5Mode, const std::string& key, bool isOutput)
{
    MsParam p;
    p.key = key;
    p.isOutput = isOutput;
    p.fullOpName = item.text("full_op_name");
    p.state = item.text("state");
    item.erase("state");
    item.erase("full_op_name");
    if (!md5Mode)
        item.erase("md5");
    if (item.text("type") == "torch.ProcessGroup") {
        std::vector<std::pair<std::string, PyVal>> kept;
        for (auto& kv : item.values)
            if (kv.first == "type" || kv.first == "group_ranks" || kv.first == "group_id" || kv.first == "data_name")
                kept.push_back(std::move(kv));
        item.values = std::move(kept);
    }
    for (std::size_t s = 0; s < kStats.size(); ++s)
        if (const PyVal* v = item.find(kStats[s]); v && (v->kind == PyVal::Int || v->kind == PyVal::Float))
            p.stats[s] = MsParam::Num { v->kind == PyVal::Int, v->i, v->kind == PyVal::Int ? static_cast<double>(v->i) : v->d };
    if (const PyVal* v = item.find("type"); v && v->kind != PyVal::None)
        p.rawType = pyStr(*v);
    if (const PyVal* v = item.find("shape"); v && v->kind != PyVal::None)
        p.rawShape = pyStr(*v);
    if (const PyVal* v = item.find("Max"))
        p.maxIsNone = v->kind == PyVal::None;
    if (const PyVal* v = item.find("shape"))
        p.shapeTruthy = v->truthy();
    for (const char* k : { "Max", "Min" })
        if (const PyVal* v = item.find(k); v && v->kind == PyVal::Float && !std::isfinite(v->d))
            p.maxMinInvalid = true;
    bool allNull = false;
    for (auto& [k, v] : item.values) {
        std::string text;
        if (v.kind == PyVal::Str) {
            text = replaceAll(replaceAll(v.s, "'", ""), "None", "null");
            text = formatDecimalString(text);
        } else if (v.kind == PyVal::None) {
            text = "null";
        } else if (v.kind == PyVal::Float && format == WriteFormat::V83) {
            text = formatFloat83(v.d);
        } else {
            text = pyStr(v);
        }
        if (k == "Max" && text == "null")
            allNull = true;
        p.values.emplace_back(k, std::move(text));
    }
    if (allNull)
        p.values = { { "value", "null" } };
    return p;
}

} // namespace

bool allDigits(std::string_view s)
{
    return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::string formatDecimalString(const std::string& s)
{
    // msprobe's pattern ^\d{1,20}\.\d{1,20}%?$, by hand (no regex on dump text): linear, at most 42 bytes looked at.
    const bool percent = !s.empty() && s.back() == '%';
    const std::string_view number = std::string_view(s).substr(0, s.size() - (percent ? 1 : 0));
    const auto dot = number.find('.');
    if (dot == std::string_view::npos || dot > 20 || number.size() - dot - 1 > 20 || !allDigits(number.substr(0, dot))
        || !allDigits(number.substr(dot + 1)))
        return s;
    if (number.size() - dot - 1 <= 6)
        return s;
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.6f", std::strtod(std::string(number).c_str(), nullptr));
    return std::string(buf) + (percent ? "%" : "");
}

std::string formatFloat83(double v)
{
    const std::string repr = pyFloatRepr(v);
    if (!std::isfinite(v))
        return repr;
    char buf[64];
    // repr of a finite float is in scientific notation exactly when it holds an 'e'.
    if (repr.find('e') != std::string::npos) {
        std::snprintf(buf, sizeof buf, "%.6e", v);
        return buf;
    }
    std::snprintf(buf, sizeof buf, "%.6f", v);
    return pyFloatRepr(std::strtod(buf, nullptr));
}

std::optional<std::size_t> parametersGradSuffix(std::string_view key)
{
    // msprobe's \.parameters_grad(?:\.\d+)?$
    constexpr std::string_view kGrad = ".parameters_grad";
    std::string_view head = key;
    if (const auto dot = key.rfind('.'); dot != std::string_view::npos && allDigits(key.substr(dot + 1)))
        head = key.substr(0, dot);
    if (head.size() >= kGrad.size() && head.substr(head.size() - kGrad.size()) == kGrad)
        return head.size() - kGrad.size();
    if (key.size() >= kGrad.size() && key.substr(key.size() - kGrad.size()) == kGrad)
        return key.size() - kGrad.size();
    return std::nullopt;
}

std::string countRemovedId(std::string_view id)
{
    // re.sub(r'\.\d+\.', '.', id): left to right, a match's closing dot is not reused.
    std::string s;
    s.reserve(id.size());
    for (std::size_t i = 0; i < id.size();) {
        if (id[i] == '.') {
            std::size_t j = i + 1;
            while (j < id.size() && id[j] >= '0' && id[j] <= '9')
                ++j;
            if (j > i + 1 && j < id.size() && id[j] == '.') {
                s += '.';
                i = j + 1;
                continue;
            }
        }
        s += id[i++];
    }
    // then re.sub(r"_rank\d+", "", ...)
    constexpr std::string_view kRank = "_rank";
    std::string out;
    out.reserve(s.size());
    for (std::size_t i = 0; i < s.size();) {
        if (s.compare(i, kRank.size(), kRank) == 0) {
            std::size_t j = i + kRank.size();
            while (j < s.size() && s[j] >= '0' && s[j] <= '9')
                ++j;
            if (j > i + kRank.size()) {
                i = j;
                continue;
            }
        }
        out += s[i++];
    }
    return out;
}

std::vector<std::string> MsGraph::ancestors(std::uint32_t node) const
{
    std::vector<std::string> out;
    std::unordered_set<std::uint32_t> seen;
    for (std::int32_t cur = nodes[node].up; cur >= 0; cur = nodes[static_cast<std::size_t>(cur)].up) {
        if (!seen.insert(static_cast<std::uint32_t>(cur)).second)
            return {}; // msprobe: a cycle gives no ancestors
        out.push_back(nodes[static_cast<std::size_t>(cur)].id);
    }
    std::reverse(out.begin(), out.end());
    return out;
}

std::string MsGraph::pathJson(std::uint32_t node, bool parentOnly) const
{
    std::vector<std::string> path;
    if (!parentOnly)
        path = ancestors(node);
    else if (const std::int32_t up = nodes[node].up; up >= 0)
        path.push_back(nodes[static_cast<std::size_t>(up)].id);
    path.push_back(nodes[node].id);
    return pyJsonList(path);
}

std::vector<std::uint32_t> MsGraph::depths() const
{
    std::vector<std::uint32_t> depth(nodes.size(), 0);
    std::vector<std::uint8_t> seen(nodes.size(), 0);
    std::vector<std::uint32_t> queue { root };
    seen[root] = 1;
    for (std::size_t q = 0; q < queue.size(); ++q)
        for (const std::uint32_t s : nodes[queue[q]].subs)
            if (!seen[s]) {
                seen[s] = 1;
                depth[s] = depth[queue[q]] + 1;
                queue.push_back(s);
            }
    return depth;
}

std::vector<std::uint32_t> MsGraph::sortedNodes() const
{
    std::vector<std::uint32_t> order;
    std::vector<std::uint8_t> visited(nodes.size(), 0);
    std::vector<std::pair<std::uint32_t, bool>> stack { { root, false } };
    while (!stack.empty()) {
        const auto [node, processed] = stack.back();
        stack.pop_back();
        if (visited[node])
            continue;
        if (processed) {
            visited[node] = 1;
            order.push_back(node);
        } else {
            stack.emplace_back(node, true);
            const auto& subs = nodes[node].subs;
            for (auto it = subs.rbegin(); it != subs.rend(); ++it)
                if (!visited[*it])
                    stack.emplace_back(*it, false);
        }
    }
    return order;
}

std::int64_t MsGraph::pageByMicroStep(MsGraph* other)
{
    auto propagate = [](MsGraph& g) {
        // propagate_micro_step_id from the root, depth first: a node without one takes its parent's.
        std::vector<std::uint32_t> stack { g.root };
        std::vector<std::uint8_t> seen(g.nodes.size(), 0);
        while (!stack.empty()) {
            const std::uint32_t n = stack.back();
            stack.pop_back();
            if (seen[n])
                continue;
            seen[n] = 1;
            MsNode& node = g.nodes[n];
            if (node.up >= 0 && !node.microStep)
                node.microStep = g.nodes[static_cast<std::size_t>(node.up)].microStep;
            for (auto it = node.subs.rbegin(); it != node.subs.rend(); ++it)
                stack.push_back(*it);
        }
    };
    if (megatronMicroSteps)
        return *megatronMicroSteps + 1;
    std::int64_t micro = 0;
    bool backward = false;
    for (const std::uint32_t n : nodes[root].subs) {
        MsNode& node = nodes[n];
        if (node.op == kModule) {
            if (node.id.find(".forward.") != std::string::npos) {
                if (backward) {
                    ++micro;
                    backward = false;
                }
            } else {
                backward = true;
            }
        }
        node.microStep = micro;
        if (other && node.partner >= 0 && static_cast<std::size_t>(node.partner) < other->nodes.size())
            other->nodes[static_cast<std::size_t>(node.partner)].microStep = micro;
    }
    propagate(*this);
    if (other) {
        for (const std::uint32_t n : other->nodes[other->root].subs) {
            MsNode& node = other->nodes[n];
            if (node.microStep)
                continue;
            const std::string last = std::string(split(node.id, '.').back());
            std::int64_t v = 0;
            const bool digits = !last.empty() && std::all_of(last.begin(), last.end(), [](char c) { return c >= '0' && c <= '9'; });
            if (digits && last.size() < 18)
                v = std::stoll(last);
            node.microStep = v;
        }
        propagate(*other);
    }
    return micro + 1;
}

namespace {

/// A node of `id` (the existing one when the id is taken), under `up` when that is another node (-1: none).
std::uint32_t addMsNode(MsGraph& g, std::uint8_t op, std::string id, std::int32_t up)
{
    if (const auto it = g.index.find(id); it != g.index.end())
        return it->second;
    const auto n = static_cast<std::uint32_t>(g.nodes.size());
    MsNode node;
    node.id = id;
    node.op = op;
    g.nodes.push_back(std::move(node));
    g.index.emplace(std::move(id), n);
    if (up >= 0 && static_cast<std::uint32_t>(up) != n) {
        g.nodes[n].up = up;
        g.nodes[static_cast<std::size_t>(up)].subs.push_back(n);
    }
    return n;
}

/// The node's input and output parameters from its dump entry, each key in its first place (a Python dict).
void setMsNodeData(MsGraph& g, std::uint32_t n, const dump::DumpFile& dump, WriteFormat format, bool md5Mode)
{
    const dump::Entry* e = dump.find(g.nodes[n].id);
    std::optional<JsonValue> value;
    if (e)
        value = e->value;
    std::vector<MsParam> inputs;
    std::vector<MsParam> outputs;
    std::unordered_map<std::string, std::size_t> inAt;
    std::unordered_map<std::string, std::size_t> outAt;
    for (Item& item : readOp(value, g.nodes[n].id)) {
        const std::string full = item.text("full_op_name");
        if (full.empty())
            continue;
        const bool isOutput = full.find("output") != std::string::npos && full.find("input") == std::string::npos;
        std::string key = full;
        if (!isOutput) {
            const PyVal* dn = item.find("data_name");
            if (dn && dn->kind == PyVal::Str && dn->s != "-1") {
                const auto dot = dn->s.rfind('.');
                key = dot == std::string::npos ? dn->s : dn->s.substr(0, dot);
            }
        }
        MsParam p = formatItem(std::move(item), format, md5Mode, key, isOutput);
        auto& list = isOutput ? outputs : inputs;
        auto& at = isOutput ? outAt : inAt;
        if (const auto it = at.find(key); it != at.end()) {
            list[it->second] = std::move(p); // a dict assignment keeps the first place
        } else {
            at.emplace(key, list.size());
            list.push_back(std::move(p));
        }
    }
    g.nodes[n].inputs = std::move(inputs);
    g.nodes[n].outputs = std::move(outputs);
}

/// _collect_apis_between_modules: runs of two or more APIs directly under the root become one collection node.
void collectApisBetweenModules(MsGraph& g)
{
    std::vector<std::uint32_t> output;
    const std::vector<std::uint32_t> list = g.nodes[g.root].subs;
    std::int64_t collection = -1;
    for (std::size_t i = 0; i < list.size();) {
        if (g.nodes[list[i]].op != kApi) {
            output.push_back(list[i++]);
            continue;
        }
        std::vector<std::uint32_t> run;
        while (i < list.size() && g.nodes[list[i]].op == kApi)
            run.push_back(list[i++]);
        if (run.size() < 2) {
            output.insert(output.end(), run.begin(), run.end());
            continue;
        }
        const std::string id = "Apis_Between_Modules." + std::to_string(++collection);
        const std::uint32_t c = addMsNode(g, kCollection, id, -1);
        g.nodes[c].subs = run;
        for (const std::uint32_t n : run)
            g.nodes[n].up = static_cast<std::int32_t>(c);
        g.nodes[c].up = static_cast<std::int32_t>(g.root);
        if (g.nodes[run.front()].microStep)
            g.nodes[c].microStep = g.nodes[run.front()].microStep;
        output.push_back(c);
    }
    g.nodes[g.root].subs = std::move(output);
}

/// _add_parameters_grad: under the module's backward with the highest call number (0 by default).
void addParametersGrad(MsGraph& g, const dump::DumpFile& dump, WriteFormat format, bool md5Mode)
{
    std::vector<std::string> prefixes;
    std::unordered_map<std::string, std::vector<std::string>> suffixes;
    for (const dump::Entry& e : dump.entries) {
        const std::string key(e.key);
        if (g.index.count(key))
            continue;
        const auto at = parametersGradSuffix(key);
        if (!at)
            continue;
        const std::string prefix = key.substr(0, *at);
        if (!suffixes.count(prefix))
            prefixes.push_back(prefix);
        suffixes[prefix].push_back(key.substr(*at));
    }
    std::unordered_map<std::string, std::int64_t> maxNum;
    for (const std::string& p : prefixes)
        maxNum[p] = 0;
    for (const MsNode& node : g.nodes) {
        const auto parts = split(node.id, '.');
        if (parts.size() > 2 && parts[parts.size() - 2] == "backward") {
            const std::string_view last = parts.back();
            if (last.empty() || last.size() > 17 || !std::all_of(last.begin(), last.end(), [](char c) { return c >= '0' && c <= '9'; }))
                continue;
            const std::int64_t num = std::stoll(std::string(last));
            const std::string prefix = join(parts, parts.size() - 2);
            if (const auto it = maxNum.find(prefix); it != maxNum.end() && num > it->second)
                it->second = num;
        }
    }
    for (const std::string& prefix : prefixes) {
        const auto it = g.index.find(prefix + ".backward." + std::to_string(maxNum[prefix]));
        if (it == g.index.end())
            continue;
        const std::uint32_t module = it->second;
        for (const std::string& suffix : suffixes[prefix]) {
            const std::uint32_t n = addMsNode(g, kModule, prefix + suffix, static_cast<std::int32_t>(module));
            setMsNodeData(g, n, dump, format, md5Mode);
        }
    }
}

} // namespace

Result<MsGraph> buildMsGraph(const dump::RankDump& rank, const BuildOptions& options)
{
    const WriteFormat format = options.format;
    const bool md5Mode = options.md5Mode;
    const SourceLocation where = fileLocation(rank.location.dir);
    const dump::ConstructMap& construct = rank.construct;
    const bool noConstruct = !construct.present || construct.links.empty();
    if (noConstruct && !options.flatWithoutConstruct)
        return makeError("graph.no-construct", where,
                         "construct.json is empty or missing (a level L1 dump): msprobe cannot build a graph from it");
    MsGraph g;
    g.megatronMicroSteps = construct.megatronMicroSteps;
    g.flat = noConstruct;
    const dump::DumpFile& dump = *rank.dump;
    g.dumpTask = dump.header.task;

    // construct_dict: the first place of each key, its last parent (a Python dict read from JSON). Without one
    // (an L1 dump) every dump entry is a top-level node in dump order: the APIs then sit in Apis_Between_Modules.
    std::vector<std::string> keys;
    std::unordered_map<std::string, std::string> parentOf;
    if (noConstruct) {
        for (const dump::Entry& e : dump.entries) {
            const std::string key(e.key);
            if (parentOf.emplace(key, std::string()).second)
                keys.push_back(key);
        }
    }
    for (const auto link : construct.links) {
        const std::string child(link.child);
        if (!parentOf.count(child))
            keys.push_back(child);
        parentOf[child] = std::string(link.parent);
    }
    auto inConstruct = [&](const std::string& k) { return parentOf.count(k) != 0; };

    auto addNode = [&](std::uint8_t op, std::string id, std::int32_t up) { return addMsNode(g, op, std::move(id), up); };
    auto addUpnode = [&](std::uint32_t n, std::int32_t up) {
        if (up < 0 || static_cast<std::uint32_t>(up) == n || g.nodes[n].up >= 0)
            return;
        g.nodes[n].up = up;
        g.nodes[static_cast<std::size_t>(up)].subs.push_back(n);
    };
    auto setData = [&](std::uint32_t n) { setMsNodeData(g, n, dump, format, md5Mode); };
    auto createOrGet = [&](const std::string& name, std::int32_t up) -> std::uint32_t {
        std::uint32_t n = 0;
        if (const auto it = g.index.find(name); it != g.index.end()) {
            n = it->second;
        } else {
            n = addNode(nodeOp(name), name, up);
            setData(n);
            std::vector<std::string> stack;
            if (const auto* frames = rank.stack.present ? rank.stack.frames(name) : nullptr)
                stack = *frames;
            const bool backwardN = directionSuffix(name, ".backward.") != std::string_view::npos;
            if (stack.empty() && (backwardN || endsWith(name, ".backward"))) {
                // backward_pattern.sub(".forward.0", name): every call of a module shares call 0's stack
                const std::string forward = backwardN ? name.substr(0, directionSuffix(name, ".backward.")) + ".forward.0"
                                                      : replaceAll(name, "backward", "forward");
                if (const auto fwd = g.index.find(forward); fwd != g.index.end())
                    stack = g.nodes[fwd->second].stack;
                else
                    stack = { "This backward node cannot find the forward node and cannot retrieve stack information." };
            }
            g.nodes[n].stack = std::move(stack);
        }
        addUpnode(n, up);
        return n;
    };

    g.root = addNode(kModule, "DefaultModel", -1);
    for (const std::string& sub : keys) {
        std::string up = parentOf[sub];
        if (!up.empty()) {
            // _handle_backward_inplace
            if (directionSuffix(sub, ".backward.") != std::string_view::npos) {
                const auto subSplit = split(sub, '.');
                const auto upSplit = split(up, '.');
                if (subSplit.size() >= 5 && upSplit.size() >= 4
                    && join(subSplit, subSplit.size() - 4) != join(upSplit, upSplit.size() - 3)) {
                    const std::string forwardSub = swapDirection(sub, ".backward.", ".forward.");
                    if (inConstruct(forwardSub)) {
                        const std::string forwardUp = parentOf[forwardSub];
                        if (forwardUp.empty()) {
                            up.clear();
                        } else {
                            const std::string candidate = swapDirection(forwardUp, ".forward.", ".backward.");
                            if (inConstruct(candidate))
                                up = candidate;
                        }
                    }
                }
            }
        } else {
            // _handle_backward_upnode_missing
            bool done = false;
            if (directionSuffix(sub, ".backward.") != std::string_view::npos) {
                const auto it = parentOf.find(swapDirection(sub, ".backward.", ".forward."));
                if (it != parentOf.end() && !it->second.empty()) {
                    const std::string candidate = swapDirection(it->second, ".forward.", ".backward.");
                    if (inConstruct(candidate)) {
                        up = candidate;
                        done = true;
                    }
                }
            }
            if (!done && endsWith(sub, ".backward")) {
                const auto it = parentOf.find(replaceAll(sub, "backward", "forward"));
                if (it != parentOf.end() && !it->second.empty()) {
                    const std::string candidate = replaceAll(it->second, "forward", "backward");
                    if (inConstruct(candidate))
                        up = candidate;
                }
            }
        }
        std::int32_t upIndex = static_cast<std::int32_t>(g.root);
        if (!up.empty())
            upIndex = static_cast<std::int32_t>(createOrGet(up, -1));
        createOrGet(sub, upIndex);
    }

    collectApisBetweenModules(g);
    addParametersGrad(g, dump, format, md5Mode);
    return g;
}

std::string pyJsonList(const std::vector<std::string>& items)
{
    std::string out = "[";
    for (std::size_t i = 0; i < items.size(); ++i) {
        if (i)
            out += ", ";
        appendPyJsonString(out, items[i]);
    }
    return out + "]";
}

std::string pyJsonParams(const std::vector<MsParam>& params)
{
    std::string out = "{";
    for (std::size_t i = 0; i < params.size(); ++i) {
        if (i)
            out += ", ";
        appendPyJsonString(out, params[i].key);
        out += ": {";
        for (std::size_t k = 0; k < params[i].values.size(); ++k) {
            if (k)
                out += ", ";
            appendPyJsonString(out, params[i].values[k].first);
            out += ": ";
            appendPyJsonString(out, params[i].values[k].second);
        }
        out += '}';
    }
    return out + "}";
}

} // namespace probescope::graph
