// SPDX-License-Identifier: Apache-2.0
#pragma once
// Command-line helpers shared by the benchmark and generator programs.

#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace probescope::bench {

/// The whole of `text` as a number of type T; false on trailing characters, overflow or no digits.
template<typename T>
bool parseNumber(std::string_view text, T& out)
{
    const auto r = std::from_chars(text.data(), text.data() + text.size(), out);
    return r.ec == std::errc() && r.ptr == text.data() + text.size();
}

/// The value after option argv[i] (advancing i), or exit 2 with "<program>: <option> needs a value".
inline std::string_view optionValue(const char* program, int argc, char** argv, int& i)
{
    if (i + 1 >= argc) {
        std::fprintf(stderr, "%s: %s needs a value\n", program, argv[i]);
        std::exit(2);
    }
    return argv[++i];
}

} // namespace probescope::bench
