// SPDX-License-Identifier: Apache-2.0
// Shared by the bench programs: memory figures of the running process.
#pragma once

#include <charconv>
#include <cstdint>
#include <fstream>
#include <string>
#include <string_view>

namespace probescope::bench {

/// One field of /proc/self/status in bytes (the kernel reports kB), or 0 if absent.
inline std::uint64_t procStatusBytes(std::string_view field)
{
    std::ifstream in("/proc/self/status");
    std::string line;
    while (std::getline(in, line)) {
        if (line.size() > field.size() && line.compare(0, field.size(), field) == 0 && line[field.size()] == ':') {
            std::size_t i = field.size() + 1;
            while (i < line.size() && (line[i] == ' ' || line[i] == '\t'))
                ++i;
            std::uint64_t kb = 0;
            std::from_chars(line.data() + i, line.data() + line.size(), kb);
            return kb * 1024;
        }
    }
    return 0;
}

} // namespace probescope::bench
