// SPDX-License-Identifier: Apache-2.0
// A compact string -> id table (internal to core/dump).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

namespace probescope::dump {

/**
 * @brief Ids of distinct strings kept by the owner: open addressing, 4 bytes a slot, at most half full.
 *
 * A node-based map of a million keys costs ~100 bytes each beyond the text; this costs ~8. The owner keeps
 * the strings; `textOf(id)` gives one back for comparisons and for rehashing.
 */
class StringIdTable
{
public:
    template <class TextOf>
    std::optional<std::uint32_t> find(std::string_view s, const TextOf& textOf) const
    {
        if (m_slots.empty())
            return std::nullopt;
        const std::size_t mask = m_slots.size() - 1;
        for (std::size_t i = hash(s) & mask;; i = (i + 1) & mask) {
            if (m_slots[i] == 0)
                return std::nullopt;
            if (textOf(m_slots[i] - 1) == s)
                return m_slots[i] - 1;
        }
    }

    /// The id stored for `s`, or `newId` stored for it; `added` says which. setLast() may then replace it.
    template <class TextOf>
    std::uint32_t insert(std::string_view s, std::uint32_t newId, const TextOf& textOf, bool& added)
    {
        if ((m_count + 1) * 2 > m_slots.size())
            grow(textOf);
        const std::size_t mask = m_slots.size() - 1;
        std::size_t i = hash(s) & mask;
        for (; m_slots[i] != 0; i = (i + 1) & mask) {
            if (textOf(m_slots[i] - 1) == s) {
                added = false;
                m_last = i;
                return m_slots[i] - 1;
            }
        }
        added = true;
        ++m_count;
        m_slots[i] = newId + 1;
        m_last = i;
        return newId;
    }
    /// Stores `id` for the string insert() last found or added.
    void setLast(std::uint32_t id) { m_slots[m_last] = id + 1; }

    std::size_t memoryBytes() const { return m_slots.capacity() * sizeof(std::uint32_t); }

private:
    std::vector<std::uint32_t> m_slots; // id + 1, 0 = empty
    std::size_t m_count = 0;
    std::size_t m_last = 0;

    static std::size_t hash(std::string_view s) { return std::hash<std::string_view> {}(s); }

    template <class TextOf>
    void grow(const TextOf& textOf)
    {
        std::vector<std::uint32_t> table(m_slots.empty() ? 64 : m_slots.size() * 2, 0); // not "slots": a Qt macro
        const std::size_t mask = table.size() - 1;
        for (const std::uint32_t entry : m_slots) {
            if (entry == 0)
                continue;
            std::size_t i = hash(textOf(entry - 1)) & mask;
            while (table[i] != 0)
                i = (i + 1) & mask;
            table[i] = entry;
        }
        m_slots = std::move(table);
    }
};

} // namespace probescope::dump
