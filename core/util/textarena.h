// SPDX-License-Identifier: Apache-2.0
#pragma once

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
                m_blocks.push_back(std::make_unique<char[]>(text.size()));
                std::memcpy(m_blocks.back().get(), text.data(), text.size());
                m_bytes += text.size();
                return { m_blocks.back().get(), text.size() };
            }
            m_blocks.push_back(std::make_unique<char[]>(kBlock));
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

    /// Bytes of the blocks held.
    std::size_t memoryBytes() const { return m_bytes; }

private:
    static constexpr std::size_t kBlock = std::size_t { 64 } << 10;
    std::vector<std::unique_ptr<char[]>> m_blocks;
    char* m_next = nullptr;
    std::size_t m_left = 0;
    std::size_t m_bytes = 0;
};

} // namespace probescope
