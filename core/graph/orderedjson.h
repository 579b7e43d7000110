// SPDX-License-Identifier: Apache-2.0
#pragma once
// JSON text of graph files as nlohmann::ordered_json, in linear time (internal to core/graph).
//
// nlohmann's own parser builds an ordered_json object through ordered_map::operator[], which searches the keys
// already there one by one: an object of n keys costs n²/2 string compares (a `.vis` of 40,000 nodes took 4.7 s,
// all of it in that search). The builder here appends each key to the object's vector without the search: the
// keys keep their order; a key repeated within one object keeps its first value for find() (msprobe never
// writes one). The text's nesting is checked first (jsonTooDeepAt): nlohmann's dump() recurses per level.

#include "core/graph/graphmodel.h"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace probescope::graph::detail {

using OrderedJson = nlohmann::ordered_json;

/// Why a text is no JSON: the byte offset where the parser stopped and its message.
struct JsonFailure
{
    std::size_t offset = 0;
    std::string message;
};

class OrderedJsonBuilder : public nlohmann::json_sax<OrderedJson>
{
public:
    OrderedJson root;
    std::optional<JsonFailure> failure;

    bool null() override { return put(nullptr); }
    bool boolean(bool v) override { return put(v); }
    bool number_integer(number_integer_t v) override { return put(v); }
    bool number_unsigned(number_unsigned_t v) override { return put(v); }
    bool number_float(number_float_t v, const string_t&) override { return put(v); }
    bool string(string_t& v) override { return put(std::move(v)); }
    bool binary(binary_t& v) override { return put(OrderedJson::binary(std::move(v))); }
    bool start_object(std::size_t) override { return open(OrderedJson::object()); }
    bool start_array(std::size_t) override { return open(OrderedJson::array()); }
    bool end_object() override { return close(); }
    bool end_array() override { return close(); }
    bool key(string_t& k) override
    {
        // The object's own vector: no search of the keys before (ordered_map's operator[] does one).
        auto& items = static_cast<Items&>(m_stack.back()->get_ref<OrderedJson::object_t&>());
        items.emplace_back(std::move(k), nullptr);
        m_slot = &items.back().second;
        return true;
    }
    bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& ex) override
    {
        std::string message = ex.what();
        if (const auto colon = message.rfind(": "); colon != std::string::npos)
            message = message.substr(colon + 2);
        failure = JsonFailure { position > 0 ? position - 1 : 0, std::move(message) };
        return false;
    }

private:
    using Items = std::vector<std::pair<const std::string, OrderedJson>>;

    template <typename Value>
    OrderedJson* place(Value&& value)
    {
        if (m_stack.empty()) {
            root = OrderedJson(std::forward<Value>(value));
            return &root;
        }
        OrderedJson* top = m_stack.back();
        if (top->is_array()) {
            auto& array = top->get_ref<OrderedJson::array_t&>();
            array.emplace_back(std::forward<Value>(value));
            return &array.back();
        }
        *m_slot = OrderedJson(std::forward<Value>(value));
        return m_slot;
    }
    template <typename Value>
    bool put(Value&& value)
    {
        place(std::forward<Value>(value));
        return true;
    }
    bool open(OrderedJson value)
    {
        m_stack.push_back(place(std::move(value)));
        return true;
    }
    bool close()
    {
        m_stack.pop_back();
        return true;
    }

    std::vector<OrderedJson*> m_stack; ///< the open arrays and objects, outermost first
    OrderedJson* m_slot = nullptr;     ///< the value of the key just read
};

/// Parses `text` (nesting at most kMaxGraphJsonDepth); the failure says where it stopped.
inline std::pair<std::optional<OrderedJson>, JsonFailure> parseOrderedJson(std::string_view text)
{
    if (const auto deep = jsonTooDeepAt(text, kMaxGraphJsonDepth))
        return { std::nullopt,
                 JsonFailure { *deep, "nested deeper than " + std::to_string(kMaxGraphJsonDepth) + " levels" } };
    OrderedJsonBuilder builder;
    const bool ok = OrderedJson::sax_parse(text.begin(), text.end(), &builder, nlohmann::json::input_format_t::json, true);
    if (!ok || builder.failure)
        return { std::nullopt, builder.failure.value_or(JsonFailure { 0, "not valid JSON" }) };
    return { std::move(builder.root), {} };
}

} // namespace probescope::graph::detail
