// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "util/diagnostic.h"

#include <cstddef>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

namespace probescope {

/// A read-only view of a whole file, memory-mapped when possible (large dump.json files are not copied).
class MappedFile
{
public:
    static Result<std::shared_ptr<const MappedFile>> open(const std::filesystem::path& path);

    ~MappedFile();
    MappedFile(const MappedFile&) = delete;
    MappedFile& operator=(const MappedFile&) = delete;

    std::string_view text() const { return { m_data, m_size }; }
    const std::filesystem::path& path() const { return m_path; }

private:
    MappedFile() = default;
    std::filesystem::path m_path;
    const char* m_data = nullptr;
    std::size_t m_size = 0;
    bool m_mapped = false;
};

/// Reads a whole (small) file; errors name the file.
Result<std::string> readTextFile(const std::filesystem::path& path);

/// Writes all of `text` to `fd`, retrying short writes and EINTR; false with `err` = errno on failure.
bool writeAllToFd(int fd, std::string_view text, int& err);

/// Local time as YYYYmmddHHMMSS, msprobe's timestamp in output file names.
std::string localTimestamp();

} // namespace probescope
