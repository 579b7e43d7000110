// SPDX-License-Identifier: Apache-2.0
#pragma once
// Small helpers the config_check port shares: Python's whitespace, strip() and split(sep) on text, and the two
// stat() questions (a regular file? a folder?) the checkers ask of an extracted pack.

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace probescope::setupcheck {

/// Python's str.isspace() / `\s` on ASCII: \x1c-\x1f count as whitespace too.
inline bool isPySpace(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f' || (c >= '\x1c' && c <= '\x1f');
}

inline std::string_view pyLstrip(std::string_view s)
{
    while (!s.empty() && isPySpace(s.front()))
        s.remove_prefix(1);
    return s;
}

inline std::string_view pyRstrip(std::string_view s)
{
    while (!s.empty() && isPySpace(s.back()))
        s.remove_suffix(1);
    return s;
}

inline std::string_view pyStrip(std::string_view s)
{
    return pyRstrip(pyLstrip(s));
}

/// Python's s.split(sep): every piece, empty ones included.
std::vector<std::string> pySplit(std::string_view s, char sep);

/// stat(): a regular file (symlinks followed)?
bool isRegularFile(const std::filesystem::path& p);
/// stat(): a folder (symlinks followed)?
bool isFolder(const std::filesystem::path& p);

} // namespace probescope::setupcheck
