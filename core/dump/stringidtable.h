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
 * @brief Ids of distinct strings kept by the owner: open addressing, 8 bytes a slot (id and hash), at most half full.
 *
 * A node-based map of a million keys costs ~100 bytes each beyond the text; this costs ~8. The owner keeps
 * the strings; `textOf(id)` gives one back for comparisons.
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
        const std::uint32_t h = hash(s);
        for (std::size_t i = h & mask;; i = (i + 1) & mask) {
            const std::uint64_t slot = m_slots[i];
            if (slot == 0)
                return std::nullopt;
            if (hashOf(slot) == h && textOf(idOf(slot)) == s)
                return idOf(slot);
        }
    }

    /// The id stored for `s`, or `newId` stored for it; `added` says which. setLast() may then replace it.
    template <class TextOf>
    std::uint32_t insert(std::string_view s, std::uint32_t newId, const TextOf& textOf, bool& added)
    {
        if ((m_count + 1) * 2 > m_slots.size())
            grow(textOf);
        const std::size_t mask = m_slots.size() - 1;
        const std::uint32_t h = hash(s);
        std::size_t i = h & mask;
        for (; m_slots[i] != 0; i = (i + 1) & mask) {
            if (hashOf(m_slots[i]) == h && textOf(idOf(m_slots[i])) == s) {
                added = false;
                m_last = i;
                return idOf(m_slots[i]);
            }
        }
        added = true;
        ++m_count;
        m_slots[i] = slotOf(newId, h);
        m_last = i;
        return newId;
    }
    /// Stores `id` for the string insert() last found or added.
    void setLast(std::uint32_t id) { m_slots[m_last] = slotOf(id, hashOf(m_slots[m_last])); }

    std::size_t memoryBytes() const { return m_slots.capacity() * sizeof(std::uint64_t); }

private:
    // A slot holds id + 1 (0 = empty) and, above it, 32 bits of the string's hash: a probe compares texts only when
    // the hashes agree, and growing never reads a text again (at a million keys, rehashing from the texts was a
    // cache miss per key per doubling, a quarter of the interning time).
    std::vector<std::uint64_t> m_slots;
    std::size_t m_count = 0;
    std::size_t m_last = 0;

    static std::uint32_t hash(std::string_view s)
    {
        return static_cast<std::uint32_t>(std::hash<std::string_view> {}(s));
    }
    static std::uint64_t slotOf(std::uint32_t id, std::uint32_t h)
    {
        return (static_cast<std::uint64_t>(h) << 32) | (static_cast<std::uint64_t>(id) + 1);
    }
    static std::uint32_t idOf(std::uint64_t slot) { return static_cast<std::uint32_t>(slot) - 1; }
    static std::uint32_t hashOf(std::uint64_t slot) { return static_cast<std::uint32_t>(slot >> 32); }

    template <class TextOf>
    void grow(const TextOf&)
    {
        // Tables stay below 2^32 slots, so the 32 hash bits kept give every index bit.
        std::vector<std::uint64_t> table(m_slots.empty() ? 64 : m_slots.size() * 2, 0); // not "slots": a Qt macro
        const std::size_t mask = table.size() - 1;
        for (const std::uint64_t entry : m_slots) {
            if (entry == 0)
                continue;
            std::size_t i = hashOf(entry) & mask;
            while (table[i] != 0)
                i = (i + 1) & mask;
            table[i] = entry;
        }
        m_slots = std::move(table);
    }
};

} // namespace probescope::dump
