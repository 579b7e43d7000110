// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>
#include <unistd.h>

namespace probescope::fuzz {

/// A scratch folder for readers that take a path (construct.json, .npy, .pkl, compare.json): the input is
/// written to a file in it on each run. One folder per process, so -jobs/-workers runs do not collide.
inline const std::filesystem::path& scratchDir()
{
    static const std::filesystem::path dir = [] {
        auto d = std::filesystem::temp_directory_path() / ("probescope-fuzz-" + std::to_string(::getpid()));
        std::filesystem::create_directories(d);
        return d;
    }();
    return dir;
}

inline std::filesystem::path writeInput(const std::string& name, const std::uint8_t* data, std::size_t size)
{
    const auto path = scratchDir() / name;
    std::ofstream(path, std::ios::binary | std::ios::trunc).write(reinterpret_cast<const char*>(data),
                                                                   static_cast<std::streamsize>(size));
    return path;
}

/// Writes `text` to `path`, creating its folders (inputs of readers that take a folder).
inline void put(const std::filesystem::path& path, std::string_view text)
{
    std::filesystem::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary | std::ios::trunc).write(text.data(), static_cast<std::streamsize>(text.size()));
}

/// An input of several files: at most `most` parts separated by NUL bytes (the last part takes the rest).
inline std::vector<std::string_view> splitParts(const std::uint8_t* data, std::size_t size, std::size_t most)
{
    const std::string_view input(reinterpret_cast<const char*>(data), size);
    std::vector<std::string_view> parts;
    std::size_t start = 0;
    while (parts.size() < most) {
        const std::size_t nul = input.find('\0', start);
        parts.push_back(input.substr(start, nul == std::string_view::npos ? std::string_view::npos : nul - start));
        if (nul == std::string_view::npos)
            break;
        start = nul + 1;
    }
    return parts;
}

} // namespace probescope::fuzz
