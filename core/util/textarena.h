// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <string_view>
#include <vector>

namespace probescope {

/**
 * @brief Texts appended once and viewed until the arena goes: views stay valid when the arena is moved.
 *
 * For the millions of short texts a compare makes (row names, shape texts): a `std::string` each costs 32 bytes
 * plus a heap block and a free; here a text costs its bytes, in blocks of 64 KB.
 */
class TextArena
{
public:
    std::string_view store(std::string_view text)
    {
        if (text.empty())
            return {};
        if (text.size() > m_left) {
            if (text.size() > kBlock / 4) { // a long text gets its own block; the current one stays open
                m_blocks.push_back(std::make_unique_for_overwrite<char[]>(text.size()));
                std::memcpy(m_blocks.back().get(), text.data(), text.size());
                m_bytes += text.size();
                return { m_blocks.back().get(), text.size() };
            }
            m_blocks.push_back(std::make_unique_for_overwrite<char[]>(kBlock));
            m_next = m_blocks.back().get();
            m_left = kBlock;
            m_bytes += kBlock;
        }
        char* at = m_next;
        std::memcpy(at, text.data(), text.size());
        m_next += text.size();
        m_left -= text.size();
        return { at, text.size() };
    }

    /**
     * @brief A copy of `text` behind its length (a 4-byte count, then the bytes): the one pointer a caller keeps
     * gives back both (countedView). Empty texts are stored too.
     */
    const char* storeCounted(std::string_view text)
    {
        const auto count = static_cast<std::uint32_t>(text.size());
        const std::size_t size = sizeof count + text.size();
        char* at = reserve(size);
        std::memcpy(at, &count, sizeof count);
        if (!text.empty())
            std::memcpy(at + sizeof count, text.data(), text.size());
        return at;
    }
    /// The text of a storeCounted() copy.
    static std::string_view countedView(const char* counted)
    {
        std::uint32_t count = 0;
        std::memcpy(&count, counted, sizeof count);
        return { counted + sizeof count, count };
    }

    /// Bytes of the blocks held.
    std::size_t memoryBytes() const { return m_bytes; }

private:
    /// `size` bytes of room, in the open block or (a long text) a block of its own.
    char* reserve(std::size_t size)
    {
        if (size > m_left) {
            if (size > kBlock / 4) {
                m_blocks.push_back(std::make_unique_for_overwrite<char[]>(size));
                m_bytes += size;
                return m_blocks.back().get();
            }
            m_blocks.push_back(std::make_unique_for_overwrite<char[]>(kBlock));
            m_next = m_blocks.back().get();
            m_left = kBlock;
            m_bytes += kBlock;
        }
        char* at = m_next;
        m_next += size;
        m_left -= size;
        return at;
    }

    static constexpr std::size_t kBlock = std::size_t { 64 } << 10;
    std::vector<std::unique_ptr<char[]>> m_blocks;
    char* m_next = nullptr;
    std::size_t m_left = 0;
    std::size_t m_bytes = 0;
};

} // namespace probescope
