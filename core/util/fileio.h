// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/util/diagnostic.h"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <ctime>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace probescope {

/**
 * @brief A read-only view of a whole file, or of a range of one, memory-mapped when possible (large dump.json
 * files and large tensors are not copied).
 *
 * Every mapping is guarded against the file shrinking under it (another process truncating it): the first touch of
 * a page past the file's new end raises SIGBUS, which a process-wide handler turns into pages of zeros over the rest
 * of the mapping, and damaged() then says so; a reader checks damaged() after its pass and reports the file as cut
 * short (no longjmp: the read simply sees zeros). A SIGBUS anywhere else keeps its old action (a crash, or the
 * handler installed before). See docs/reliability.md, "Mapped files and SIGBUS".
 */
class MappedFile
{
public:
    /// Opens only a regular file (a FIFO, device or folder is the error io.read, never a hang);
    /// a file larger than `maxBytes` (0 = no limit) is the error io.too-large.
    static Result<std::shared_ptr<const MappedFile>> open(const std::filesystem::path& path,
                                                          std::uint64_t maxBytes = 0);

    /**
     * @brief Maps bytes [offset, offset + length) of `fd`, a regular file open for reading (`path` names it in
     * errors): text() is then that range, read where it lies in the page cache. On success the mapping takes `fd`
     * over (it is closed with the mapping; damaged() asks it the file's size); on an error the caller keeps it and
     * can read with pread instead: io.read when the range cannot be mapped or too many guarded mappings are live.
     */
    static Result<std::shared_ptr<const MappedFile>> mapRange(int fd, const std::filesystem::path& path,
                                                              std::uint64_t offset, std::uint64_t length);

    /**
     * @brief True when the mapped bytes may not be the file's: a page past the file's end was touched (it read as
     * zeros) or, for a mapRange() mapping, the file is now shorter than the range's end (the bytes after the end
     * of the last page read as zeros without a fault). Check after reading; false for an intact file.
     */
    bool damaged() const;

    /// Tests: `hook` runs after every mapRange() mapping is made, before any byte of it is read (a test
    /// truncates the file there); nullptr removes it.
    static void setMapHookForTests(void (*hook)(const std::filesystem::path& path));

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
    bool guard(const void* base, std::size_t length);
    std::filesystem::path m_path;
    const char* m_data = nullptr;
    std::size_t m_size = 0;
    bool m_mapped = false;
    const char* m_base = nullptr; ///< the mapping's page-aligned start (m_data may lie inside its first page)
    std::size_t m_length = 0;     ///< and its length
    int m_fd = -1;                ///< mapRange: the file, for damaged()'s size check
    std::uint64_t m_fileEnd = 0;  ///< mapRange: the size the file must still have
    int m_guardSlot = -1;         ///< the SIGBUS guard's slot, or -1 (not guarded)
    std::atomic<bool> m_damaged { false }; ///< set by the SIGBUS guard
};

/**
 * @brief Reads bytes [offset, offset + length) of the open file `fd` into the page cache ahead of the caller, who
 * reads them next, front to back: nothing for a range below 1 MiB or whose first page is cached already (cachestat,
 * which reads nothing). Else the range's first 4 MiB and its last 4 MiB window (a .pt's zip directory) are read
 * now, in large folios (through a MADV_HUGEPAGE mapping, never touched: a file cut short is no SIGBUS), and the
 * kernel's read-ahead carries the large folios on as the caller reads. Where the kernel cannot (before Linux 5.14),
 * POSIX_FADV_WILLNEED. Why not WILLNEED always: it caches the range in 4 KiB folios, which made every later warm
 * compare of the GB pair 1.45x slower (core/util/readahead.cpp).
 */
void readAheadUnlessCached(int fd, std::uint64_t offset, std::uint64_t length);

/**
 * @brief The same for a file the caller reads later (the next row's tensors): `fd` is handed over (closed when
 * done) and the whole range is read ahead by one background thread, in large folios, while the caller computes.
 * At most 16 requests wait; more are dropped (a hint, not a promise). The thread stops at exit.
 */
void readAheadInBackground(int fd, std::uint64_t offset, std::uint64_t length);

/// Tests: returns when every background read-ahead queued so far has finished.
void waitForBackgroundReadAhead();

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
