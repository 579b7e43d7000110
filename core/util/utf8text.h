// SPDX-License-Identifier: Apache-2.0
#pragma once
// Paths on Linux are bytes, not text: a folder name may hold bytes that are not UTF-8. Whatever ProbeScope writes
// as text about such a path (a JSON summary, a marker, a list of skipped folders) goes through backslashReplace,
// so the text is valid UTF-8 and the odd bytes stay visible and distinct.

#include <cstddef>
#include <string>
#include <string_view>

namespace probescope {

/// Length of the valid UTF-8 sequence (RFC 3629: no overlongs, no surrogates, at most U+10FFFF) starting at
/// s[i], or 0 when the byte there does not start one.
inline std::size_t utf8SequenceLength(std::string_view s, std::size_t i)
{
    const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
    const unsigned char c = byte(i);
    if (c < 0x80)
        return 1;
    std::size_t n = 0;
    unsigned char lo = 0x80;
    unsigned char hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) {
        n = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
        n = 3;
        lo = c == 0xE0 ? 0xA0 : 0x80; // no overlongs
        hi = c == 0xED ? 0x9F : 0xBF; // no UTF-16 surrogates
    } else if (c >= 0xF0 && c <= 0xF4) {
        n = 4;
        lo = c == 0xF0 ? 0x90 : 0x80;
        hi = c == 0xF4 ? 0x8F : 0xBF; // at most U+10FFFF
    } else {
        return 0;
    }
    if (i + n > s.size())
        return 0;
    if (byte(i + 1) < lo || byte(i + 1) > hi)
        return 0;
    for (std::size_t k = 2; k < n; ++k) {
        if (byte(i + k) < 0x80 || byte(i + k) > 0xBF)
            return 0;
    }
    return n;
}

inline bool isValidUtf8(std::string_view s)
{
    for (std::size_t i = 0; i < s.size();) {
        const std::size_t n = utf8SequenceLength(s, i);
        if (n == 0)
            return false;
        i += n;
    }
    return true;
}

/**
 * @brief `s` with every byte that is not part of valid UTF-8 written as the four characters `\xNN` (lower-case
 * hex), as Python's `bytes.decode("utf-8", "backslashreplace")` does. Valid UTF-8 is returned unchanged.
 *
 * Chosen over U+FFFD (which merges different names into one) and over Python's surrogateescape (lone surrogates
 * that strict JSON readers such as nlohmann::json refuse): the result is plain UTF-8 every reader accepts.
 */
inline std::string backslashReplace(std::string_view s)
{
    std::string out;
    out.reserve(s.size());
    static constexpr char kHex[] = "0123456789abcdef";
    for (std::size_t i = 0; i < s.size();) {
        const std::size_t n = utf8SequenceLength(s, i);
        if (n > 0) {
            out.append(s.substr(i, n));
            i += n;
            continue;
        }
        const auto c = static_cast<unsigned char>(s[i]);
        out += "\\x";
        out += kHex[c >> 4];
        out += kHex[c & 0xF];
        ++i;
    }
    return out;
}

} // namespace probescope
