// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/compare/table/cell.h"
#include "core/compare/table/pytext.h"
#include "core/dump/jsondocument.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace probescope::compare::msprobe26 {

/**
 * @brief Python json.dump text: ensure_ascii, ", "/": " with indentation, repr floats, NaN/Infinity tokens.
 *
 * The one writer of the JSON files msprobe 26's analyses write with json.dump(indent=N): `-da`'s rank tables and
 * diff_analyze, overflow_check's anomaly_analyze.
 */

class PyJsonWriter
{
public:
    explicit PyJsonWriter(int indent)
        : m_indent(indent)
    {
    }
    std::string& text() { return m_out; }

    void newline(int depth)
    {
        m_out += '\n';
        m_out.append(static_cast<std::size_t>(depth * m_indent), ' ');
    }

    /// json.dump's string with ensure_ascii: the one writer of it (util/pytext.h).
    void string(std::string_view s) { appendPyJsonString(m_out, s); }

    void number(double d)
    {
        if (std::isnan(d))
            m_out += "NaN";
        else if (std::isinf(d))
            m_out += d > 0 ? "Infinity" : "-Infinity";
        else
            m_out += pyFloatRepr(d);
    }

    void integer(std::int64_t i) { m_out += std::to_string(i); }
    void boolean(bool b) { m_out += b ? "true" : "false"; }
    void null() { m_out += "null"; }

    void cell(const Cell& c)
    {
        if (c.isNone())
            null();
        else if (c.isBool())
            boolean(std::get<bool>(c.value));
        else if (c.isInt())
            integer(std::get<std::int64_t>(c.value));
        else if (c.isFloat())
            number(std::get<double>(c.value));
        else
            string(pyStr(c));
    }

    void stringList(const std::vector<std::string>& items, int depth)
    {
        if (items.empty()) {
            m_out += "[]";
            return;
        }
        m_out += '[';
        for (std::size_t i = 0; i < items.size(); ++i) {
            if (i)
                m_out += ',';
            newline(depth + 1);
            string(items[i]);
        }
        newline(depth);
        m_out += ']';
    }

    /// A value read from a rank table, copied unchanged (also key order and duplicates collapsed as
    /// Python's dict does: last value, first position).
    void value(std::optional<dump::JsonValue> v, int depth)
    {
        if (!v) {
            null();
            return;
        }
        switch (v->type()) {
        case dump::JsonType::Null: null(); break;
        case dump::JsonType::Bool: boolean(v->asBool()); break;
        case dump::JsonType::Int: integer(v->asInt()); break;
        case dump::JsonType::Double: number(v->asDouble()); break;
        case dump::JsonType::String: string(v->asString()); break;
        case dump::JsonType::Array:
            if (v->size() == 0) {
                m_out += "[]";
                break;
            }
            m_out += '[';
            for (std::uint32_t i = 0; i < v->size(); ++i) {
                if (i)
                    m_out += ',';
                newline(depth + 1);
                value(v->at(i), depth + 1);
            }
            newline(depth);
            m_out += ']';
            break;
        case dump::JsonType::Object: {
            std::vector<std::pair<std::string_view, dump::JsonValue>> members;
            for (std::uint32_t i = 0; i < v->size(); ++i) {
                auto it = std::find_if(members.begin(), members.end(), [&](const auto& m) { return m.first == v->keyAt(i); });
                if (it != members.end())
                    it->second = v->at(i);
                else
                    members.emplace_back(v->keyAt(i), v->at(i));
            }
            if (members.empty()) {
                m_out += "{}";
                break;
            }
            m_out += '{';
            for (std::size_t i = 0; i < members.size(); ++i) {
                if (i)
                    m_out += ',';
                newline(depth + 1);
                string(members[i].first);
                m_out += ": ";
                value(members[i].second, depth + 1);
            }
            newline(depth);
            m_out += '}';
            break;
        }
        }
    }

private:
    std::string m_out;
    int m_indent;
};


/// The opening both searches write for a node of their result: `{"op_name": ..., "data_info": {` (the caller writes
/// the data, closes it and adds its own fields).
inline void openResultNode(PyJsonWriter& w, std::string_view opName, int depth)
{
    std::string& out = w.text();
    out += '{';
    w.newline(depth + 1);
    out += "\"op_name\": ";
    w.string(opName);
    out += ',';
    w.newline(depth + 1);
    out += "\"data_info\": {";
}

/// The result file of msprobe's cross-rank searches (diff_analyze, anomaly_analyze): {"rank_<R>": [node, ...]},
/// json.dump(indent=2), ranks ascending; `node(w, index, depth)` writes one node.
inline std::string rankNodesJson(const std::map<int, std::vector<std::size_t>>& byRank,
                                 const std::function<void(PyJsonWriter&, std::size_t, int)>& node)
{
    PyJsonWriter w(2);
    std::string& out = w.text();
    out += '{';
    bool firstRank = true;
    for (const auto& [rank, list] : byRank) {
        if (!firstRank)
            out += ',';
        firstRank = false;
        w.newline(1);
        w.string("rank_" + std::to_string(rank));
        out += ": [";
        for (std::size_t i = 0; i < list.size(); ++i) {
            if (i)
                out += ',';
            w.newline(2);
            node(w, list[i], 2);
        }
        w.newline(1);
        out += ']';
    }
    if (!byRank.empty())
        w.newline(0);
    out += '}';
    return std::move(out);
}

} // namespace probescope::compare::msprobe26
