// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
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

} // namespace probescope::fuzz
