// SPDX-License-Identifier: Apache-2.0
// Byte scanning shared by the JSON parser and the stack.json index (internal to core/dump).
#pragma once

#include <array>
#include <cstddef>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace probescope::dump::jsonscan {

/// JSON whitespace, as a table: one load per byte instead of four compares.
inline constexpr std::array<bool, 256> kSpace = [] {
    std::array<bool, 256> t {};
    t[' '] = t['\n'] = t['\r'] = t['\t'] = true;
    return t;
}();

/// Index of the first non-whitespace byte in p[i..n), or n.
inline std::size_t skipSpace(const char* p, std::size_t i, std::size_t n)
{
    while (i < n && kSpace[static_cast<unsigned char>(p[i])])
        ++i;
    return i;
}

/**
 * Index of the first '"', '\\' or control byte (< 0x20) in p[i..n), or n. Sets `high` when a byte >= 0x80
 * precedes it. Sixteen bytes at a time: stack frames and entry names are long runs of plain text.
 */
inline std::size_t scanStringRun(const char* p, std::size_t i, std::size_t n, bool& high)
{
#if defined(__SSE2__)
    const __m128i quote = _mm_set1_epi8('"');
    const __m128i backslash = _mm_set1_epi8('\\');
    const __m128i controlMax = _mm_set1_epi8(0x1f);
    for (; i + 16 <= n; i += 16) {
        const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i));
        const __m128i special = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash)),
                                             _mm_cmpeq_epi8(_mm_max_epu8(v, controlMax), controlMax));
        const auto specialMask = static_cast<unsigned>(_mm_movemask_epi8(special));
        const auto highMask = static_cast<unsigned>(_mm_movemask_epi8(v));
        if (specialMask != 0) {
            const int at = __builtin_ctz(specialMask);
            high |= (highMask & ((1u << at) - 1)) != 0;
            return i + static_cast<std::size_t>(at);
        }
        high |= highMask != 0;
    }
#endif
    for (; i < n; ++i) {
        const auto c = static_cast<unsigned char>(p[i]);
        if (c == '"' || c == '\\' || c < 0x20)
            return i;
        high |= c >= 0x80;
    }
    return n;
}

} // namespace probescope::dump::jsonscan
