// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/util/diagnostic.h"

#include <cstddef>
#include <cstdint>
#include <ctime>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace probescope {

/// A read-only view of a whole file, memory-mapped when possible (large dump.json files are not copied).
class MappedFile
{
public:
    /// Opens only a regular file (a FIFO, device or folder is the error io.read, never a hang);
    /// a file larger than `maxBytes` (0 = no limit) is the error io.too-large.
    static Result<std::shared_ptr<const MappedFile>> open(const std::filesystem::path& path,
                                                          std::uint64_t maxBytes = 0);

    ~MappedFile();
    MappedFile(const MappedFile&) = delete;
    MappedFile& operator=(const MappedFile&) = delete;

    std::string_view text() const { return { m_data, m_size }; }
    /// Gives back the memory of the whole pages of text()[0, upTo) when the file is mapped: they stop counting towards
    /// the process's memory, and read again they come back from the file (a reader that went past them lets a
    /// dump.json of 785 MB cost its parsed form, not that plus its text).
    void release(std::size_t upTo) const;
    const std::filesystem::path& path() const { return m_path; }

private:
    MappedFile() = default;
    std::filesystem::path m_path;
    const char* m_data = nullptr;
    std::size_t m_size = 0;
    bool m_mapped = false;
};

/// Reads a whole (small) file; errors name the file. Only regular files are opened (see MappedFile::open),
/// and the size cap is maxJsonFileBytes().
Result<std::string> readTextFile(const std::filesystem::path& path);

/**
 * @brief The largest JSON input (dump.json, construct.json, stack.json, compare.json, ...) ProbeScope opens.
 *
 * Default 16 GiB, far above the 1M-entry dumps (about 1 GB); the environment variable
 * PROBESCOPE_MAX_JSON_BYTES (a byte count) or setMaxJsonFileBytes() changes it. A larger file is the
 * error io.too-large naming the file and both sizes, not an attempt to map it.
 */
std::uint64_t maxJsonFileBytes();
void setMaxJsonFileBytes(std::uint64_t bytes);

/**
 * @brief Opens `path` for reading only if it is a regular file: O_NONBLOCK first (so a FIFO in its place
 * cannot block the open), then fstat. Returns the descriptor (blocking mode restored) or the error
 * io.read / io.too-large (`maxBytes` 0 = no limit).
 */
Result<int> openRegularFile(const std::filesystem::path& path, std::uint64_t maxBytes = 0);

/// Writes all of `text` to `fd`, retrying short writes and EINTR; false with `err` = errno on failure.
bool writeAllToFd(int fd, std::string_view text, int& err);

/// Local time as YYYYmmddHHMMSS, msprobe's timestamp in output file names.
std::string localTimestamp();
/// `when` in local time as YYYYmmddHHMMSS (the one formatter of that stamp; run_ut's next-second names use it).
std::string localTimestamp(std::time_t when);

} // namespace probescope
