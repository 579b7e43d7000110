// SPDX-License-Identifier: Apache-2.0
// Shared by the bench generators: a buffered output file, Python's float repr, a writer that
// produces exactly what Python's json.dump(indent=1) writes (msprobe's dump files), a seeded RNG.
#pragma once

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <algorithm>
#include <array>
#include <bit>
#include <c10/util/Exception.h>
#include <caffe2/serialize/inline_container.h>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <unordered_map>
#include <utility>
#include <vector>

namespace probescope::bench {

namespace fs = std::filesystem;

// ------------------------------------------------------------------------------------------------
// Output

/// A file written through one large buffer: the generator emits ~150 MB in tiny pieces.
class OutFile
{
public:
    explicit OutFile(const fs::path& path)
        : m_path(path)
        , m_file(std::fopen(path.c_str(), "wb"))
        , m_buf(new char[kCapacity])
    {
    }
    ~OutFile() { close(); }
    OutFile(const OutFile&) = delete;
    OutFile& operator=(const OutFile&) = delete;

    bool isOpen() const { return m_file != nullptr; }
    const fs::path& path() const { return m_path; }

    void put(char c)
    {
        if (m_len == kCapacity)
            flush();
        m_buf[m_len++] = c;
    }
    void write(std::string_view s)
    {
        if (m_len + s.size() > kCapacity) {
            flush();
            if (s.size() > kCapacity) {
                writeRaw(s.data(), s.size());
                return;
            }
        }
        std::memcpy(m_buf.get() + m_len, s.data(), s.size());
        m_len += s.size();
    }
    void spaces(std::size_t n)
    {
        static constexpr std::string_view kSpaces = "                                                                ";
        while (n > kSpaces.size()) {
            write(kSpaces);
            n -= kSpaces.size();
        }
        write(kSpaces.substr(0, n));
    }

    std::uint64_t bytes() const { return m_total + m_len; }

    /// Flushes and closes; false if any write failed.
    bool close()
    {
        if (!m_file)
            return !m_failed;
        flush();
        if (std::fclose(m_file) != 0)
            m_failed = true;
        m_file = nullptr;
        return !m_failed;
    }

private:
    static constexpr std::size_t kCapacity = std::size_t(1) << 22;

    void flush()
    {
        writeRaw(m_buf.get(), m_len);
        m_len = 0;
    }
    void writeRaw(const char* data, std::size_t n)
    {
        if (n == 0)
            return;
        if (!m_file || std::fwrite(data, 1, n, m_file) != n)
            m_failed = true;
        m_total += n;
    }

    fs::path m_path;
    std::FILE* m_file = nullptr;
    std::unique_ptr<char[]> m_buf;
    std::size_t m_len = 0;
    std::uint64_t m_total = 0;
    bool m_failed = false;
};

/// Formats a double exactly as Python's float.__repr__ (and therefore json.dump) does.
/// Returns the number of characters written (at most 32).
inline std::size_t formatPythonFloat(double v, char* out)
{
    auto copy = [out](std::string_view s) {
        std::memcpy(out, s.data(), s.size());
        return s.size();
    };
    // json.dump(allow_nan=True) spells the special values this way, not as repr() does.
    if (std::isnan(v))
        return copy("NaN");
    if (std::isinf(v))
        return copy(v > 0 ? "Infinity" : "-Infinity");

    // The shortest round-trip digits are the same in Python (dtoa mode 0) and std::to_chars; only
    // the layout differs, so take the digits and exponent and lay them out the Python way.
    char sci[40];
    const auto res = std::to_chars(sci, sci + sizeof sci, v, std::chars_format::scientific);
    const char* s = sci;
    char* p = out;
    if (*s == '-') {
        *p++ = '-';
        ++s;
    }
    char digits[24];
    int nd = 0;
    digits[nd++] = *s++;
    if (*s == '.') {
        ++s;
        while (*s != 'e')
            digits[nd++] = *s++;
    }
    ++s; // 'e'
    const bool negExp = *s == '-';
    ++s;
    int e = 0;
    while (s < res.ptr)
        e = e * 10 + (*s++ - '0');
    if (negExp)
        e = -e;

    const int decpt = e + 1; // value = 0.d1d2... * 10^decpt
    if (decpt <= -4 || decpt > 16) {
        *p++ = digits[0];
        if (nd > 1) {
            *p++ = '.';
            std::memcpy(p, digits + 1, std::size_t(nd - 1));
            p += nd - 1;
        }
        *p++ = 'e';
        *p++ = e < 0 ? '-' : '+';
        const int ae = e < 0 ? -e : e;
        if (ae < 10)
            *p++ = '0';
        p = std::to_chars(p, p + 4, ae).ptr;
    } else if (decpt <= 0) {
        *p++ = '0';
        *p++ = '.';
        for (int i = 0; i < -decpt; ++i)
            *p++ = '0';
        std::memcpy(p, digits, std::size_t(nd));
        p += nd;
    } else if (decpt < nd) {
        std::memcpy(p, digits, std::size_t(decpt));
        p += decpt;
        *p++ = '.';
        std::memcpy(p, digits + decpt, std::size_t(nd - decpt));
        p += nd - decpt;
    } else {
        std::memcpy(p, digits, std::size_t(nd));
        p += nd;
        for (int i = nd; i < decpt; ++i)
            *p++ = '0';
        *p++ = '.';
        *p++ = '0';
    }
    return std::size_t(p - out);
}

/// Streams JSON laid out like Python's json.dump(obj, f, indent=1): one member per line, ": " after
/// keys, "," at line ends, "{}"/"[]" for empty containers, no trailing newline.
class JsonWriter
{
public:
    explicit JsonWriter(OutFile& out)
        : m_out(out)
    {
    }

    void beginObject()
    {
        beforeValue();
        m_out.put('{');
        m_hasItems.push_back(false);
    }
    void beginArray()
    {
        beforeValue();
        m_out.put('[');
        m_hasItems.push_back(false);
    }
    void endObject() { end('}'); }
    void endArray() { end(']'); }

    void key(std::string_view k)
    {
        separator();
        string(k, false);
        m_out.write(": ");
        m_afterKey = true;
    }
    void null()
    {
        beforeValue();
        m_out.write("null");
    }
    void boolean(bool b)
    {
        beforeValue();
        m_out.write(b ? "true" : "false");
    }
    void integer(std::int64_t i)
    {
        beforeValue();
        char buf[24];
        const auto r = std::to_chars(buf, buf + sizeof buf, i);
        m_out.write(std::string_view(buf, std::size_t(r.ptr - buf)));
    }
    void number(double d)
    {
        beforeValue();
        char buf[40];
        m_out.write(std::string_view(buf, formatPythonFloat(d, buf)));
    }
    void string(std::string_view s) { string(s, true); }

private:
    void beforeValue()
    {
        if (m_afterKey) {
            m_afterKey = false;
            return;
        }
        if (!m_hasItems.empty())
            separator();
    }
    void separator()
    {
        if (m_hasItems.back())
            m_out.put(',');
        m_hasItems.back() = true;
        m_out.put('\n');
        m_out.spaces(m_hasItems.size());
    }
    void end(char close)
    {
        const bool had = m_hasItems.back();
        m_hasItems.pop_back();
        if (had) {
            m_out.put('\n');
            m_out.spaces(m_hasItems.size());
        }
        m_out.put(close);
    }
    /// Escapes as json.dump(ensure_ascii=True) does; our strings are ASCII, so only quotes,
    /// backslashes and control characters need care.
    void string(std::string_view s, bool asValue)
    {
        if (asValue)
            beforeValue();
        m_out.put('"');
        std::size_t start = 0;
        for (std::size_t i = 0; i < s.size(); ++i) {
            const auto c = static_cast<unsigned char>(s[i]);
            if (c >= 0x20 && c != '"' && c != '\\' && c < 0x7f)
                continue;
            m_out.write(s.substr(start, i - start));
            start = i + 1;
            switch (c) {
            case '"': m_out.write("\\\""); break;
            case '\\': m_out.write("\\\\"); break;
            case '\n': m_out.write("\\n"); break;
            case '\r': m_out.write("\\r"); break;
            case '\t': m_out.write("\\t"); break;
            case '\b': m_out.write("\\b"); break;
            case '\f': m_out.write("\\f"); break;
            default: {
                if (c == 0x7f) { // DEL is printable ASCII for Python
                    m_out.put(char(c));
                    break;
                }
                char buf[8];
                std::snprintf(buf, sizeof buf, "\\u%04x", unsigned(c));
                m_out.write(buf);
            }
            }
        }
        m_out.write(s.substr(start));
        m_out.put('"');
    }

    OutFile& m_out;
    std::vector<bool> m_hasItems; // one per open container: has it a member yet?
    bool m_afterKey = false;
};

// ------------------------------------------------------------------------------------------------
// Randomness: our own generator and transforms, so a seed gives the same bytes with any standard library.

inline std::uint64_t splitMix(std::uint64_t& state)
{
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

} // namespace probescope::bench
