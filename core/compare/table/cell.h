// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <string>
#include <variant>

namespace probescope::compare {

/**
 * @brief One cell of a compare table, typed as msprobe's Python value was.
 *
 * msprobe builds its table from Python values (None, bool, int, float, str, lists) and their text
 * decides what users see (1 vs 1.0, None, nan + TAB). `PyText` holds a value already rendered with
 * Python's str() (lists such as a stack or a slice value).
 */
struct Cell
{
    struct None
    {
        friend bool operator==(None, None) = default;
    };
    struct PyText
    {
        std::string text;
        friend bool operator==(const PyText&, const PyText&) = default;
    };
    std::variant<None, bool, std::int64_t, double, std::string, PyText> value;

    Cell() = default;
    static Cell none() { return Cell {}; }
    static Cell boolean(bool b) { return make(b); }
    static Cell integer(std::int64_t i) { return make(i); }
    static Cell number(double d) { return make(d); }
    static Cell text(std::string s) { return make(std::move(s)); }
    static Cell pyText(std::string s) { return make(PyText { std::move(s) }); }

    bool isNone() const { return std::holds_alternative<None>(value); }
    bool isBool() const { return std::holds_alternative<bool>(value); }
    bool isInt() const { return std::holds_alternative<std::int64_t>(value); }
    bool isFloat() const { return std::holds_alternative<double>(value); }
    bool isString() const { return std::holds_alternative<std::string>(value); }
    /// Python int or float, bools excluded.
    bool isNumber() const { return isInt() || isFloat(); }
    /// Python int or float, bools included (msprobe's highlight "numeric" test).
    bool isNumeric() const { return isNumber() || isBool(); }
    double asDouble() const;
    const std::string& asString() const { return std::get<std::string>(value); }

    friend bool operator==(const Cell&, const Cell&) = default;

private:
    template<typename T>
    static Cell make(T v)
    {
        Cell c;
        c.value = std::move(v);
        return c;
    }
};

} // namespace probescope::compare
