// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace probescope {

/// FNV-1a of `data`, continuing from `h` (the offset basis by default): the cache files' cheap hash.
inline std::uint64_t fnv1a(std::string_view data, std::uint64_t h = 1469598103934665603ull)
{
    for (const char c : data)
        h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
    return h;
}

/**
 * @brief Appends plain values and arrays of them to a byte string: ProbeScope's own cache files, read back by
 * ByteReader on the same machine (native byte order and layout; a file from elsewhere fails its checks).
 */
class ByteWriter
{
public:
    explicit ByteWriter(std::string& out)
        : m_out(out)
    {
    }

    template<typename T>
    void value(const T& v)
    {
        static_assert(std::is_trivially_copyable_v<T>);
        m_out.append(reinterpret_cast<const char*>(&v), sizeof v);
    }
    /// A length (uint64) and then the elements.
    template<typename T>
    void array(std::span<const T> items)
    {
        static_assert(std::is_trivially_copyable_v<T>);
        value<std::uint64_t>(items.size());
        m_out.append(reinterpret_cast<const char*>(items.data()), items.size_bytes());
    }
    template<typename T>
    void array(const std::vector<T>& items)
    {
        array(std::span<const T>(items.data(), items.size()));
    }
    void text(std::string_view s) { array(std::span<const char>(s.data(), s.size())); }

private:
    std::string& m_out;
};

/// Reads what ByteWriter wrote; every read checks the bytes left, and after a short read ok() stays false.
class ByteReader
{
public:
    explicit ByteReader(std::string_view in)
        : m_in(in)
    {
    }

    bool ok() const { return m_ok; }
    bool atEnd() const { return m_at == m_in.size(); }

    template<typename T>
    bool value(T& v)
    {
        static_assert(std::is_trivially_copyable_v<T>);
        if (!take(sizeof v))
            return false;
        std::memcpy(&v, m_in.data() + m_at - sizeof v, sizeof v);
        return true;
    }
    template<typename T>
    bool array(std::vector<T>& items)
    {
        static_assert(std::is_trivially_copyable_v<T>);
        std::uint64_t n = 0;
        if (!value(n) || n > (m_in.size() - m_at) / (sizeof(T) ? sizeof(T) : 1) || !take(n * sizeof(T)))
            return fail();
        items.resize(n);
        if (n)
            std::memcpy(items.data(), m_in.data() + m_at - n * sizeof(T), n * sizeof(T));
        return true;
    }
    bool text(std::string& s)
    {
        std::uint64_t n = 0;
        if (!value(n) || n > m_in.size() - m_at || !take(n))
            return fail();
        s.assign(m_in.data() + m_at - n, n);
        return true;
    }

private:
    bool take(std::uint64_t n)
    {
        if (!m_ok || n > m_in.size() - m_at)
            return fail();
        m_at += n;
        return true;
    }
    bool fail()
    {
        m_ok = false;
        return false;
    }

    std::string_view m_in;
    std::size_t m_at = 0;
    bool m_ok = true;
};

} // namespace probescope
