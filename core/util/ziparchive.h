// SPDX-License-Identifier: Apache-2.0
#pragma once
// Zip archives through Debian's libzip, as part of the gate: every zip ProbeScope reads (config_check packs, xlsx
// workbooks) is opened, checked and bounded here, and every zip it writes is claimed through core/util/outputfile.h.
// A zip is hostile input: entry names that leave the folder (`../`, absolute), symlink entries, encrypted entries,
// too many entries and zip bombs (sizes or ratios beyond ZipLimits) are refused with an error naming the zip and
// the entry, before anything is written.

#include "core/util/diagnostic.h"
#include "core/util/outputfile.h"

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace probescope {

/// Bounds on what a zip may make ProbeScope read or write. The defaults follow msprobe's own (10 GiB in all, 1 GiB
/// per file) and add an entry count and a compression ratio, which msprobe lacks.
struct ZipLimits
{
    std::uint64_t maxEntries = 100000;
    std::uint64_t maxEntryBytes = std::uint64_t { 1 } << 30;  ///< uncompressed size of one entry
    std::uint64_t maxTotalBytes = std::uint64_t { 10 } << 30; ///< uncompressed size of all entries together
    /// Entries larger than ratioFloorBytes may expand at most maxRatio times their compressed size (text and JSON
    /// compress 3-20 times; a bomb of zeros 1000 times).
    std::uint64_t maxRatio = 200;
    std::uint64_t ratioFloorBytes = std::uint64_t { 1 } << 20;
};

/// One entry as the central directory lists it (after the checks).
struct ZipEntryInfo
{
    std::string name;             ///< as stored, '/'-separated; a folder entry ends with '/'
    std::uint64_t size = 0;       ///< uncompressed
    std::uint64_t packedSize = 0; ///< compressed
    std::uint64_t index = 0;      ///< libzip's index
    bool isFolder = false;
};

/// A zip opened for reading. Every entry has passed the checks of ZipLimits and of its name.
class ZipReader
{
public:
    /// Opens a regular file (fileio's openRegularFile) and checks every entry; errors have the id `zip.*`
    /// (`zip.open`, `zip.entry-path`, `zip.symlink`, `zip.encrypted`, `zip.too-many`, `zip.bomb`) and name the
    /// zip and the entry.
    static Result<std::shared_ptr<ZipReader>> open(const std::filesystem::path& path, const ZipLimits& limits = {});
    ~ZipReader();
    ZipReader(const ZipReader&) = delete;
    ZipReader& operator=(const ZipReader&) = delete;

    /// The entries in archive order; of entries with the same name only the last is kept (what an extraction
    /// that overwrites, like Python's extractall, leaves).
    const std::vector<ZipEntryInfo>& entries() const { return m_entries; }
    const ZipEntryInfo* find(std::string_view name) const;
    /// The whole content of an entry, never more than its listed size (a stream that inflates further is the error
    /// zip.bomb).
    Result<std::string> read(const ZipEntryInfo& entry) const;
    /// The content of an entry in pieces of up to 1 MiB, each handed to `sink` (which may stop it with an error).
    std::optional<Diagnostic> stream(const ZipEntryInfo& entry,
                                     const std::function<std::optional<Diagnostic>(std::string_view)>& sink) const;
    const std::filesystem::path& path() const { return m_path; }

private:
    ZipReader() = default;
    struct Handle;
    std::unique_ptr<Handle> m_handle;
    std::filesystem::path m_path;
    std::vector<ZipEntryInfo> m_entries;
    ZipLimits m_limits;
};

/**
 * @brief Extracts every entry of `zip` into `folder` (created when missing; its parent must exist), as msprobe's
 * extract_zip does, but through the gate: each file is claimed with writeFileAtomically (an existing name, a
 * symlink included, is the error zip.extract and nothing is replaced), sub-folders are created one level at a time
 * and must be real folders (a symlink in the way is refused). Returns the files written, relative to `folder`.
 */
Result<std::vector<std::string>> extractZip(const ZipReader& zip, const std::filesystem::path& folder);

/**
 * @brief Writes a new zip at `path` holding `entries` (name, content), deflated, dated 1980-01-01 as Python's
 * zipfile.writestr dates them. Built beside `path` and claimed with renameNoReplace: an existing `path` is the
 * error zip.write and is never replaced. ReplaceMode::Allowed is only for a zip the caller itself wrote and now
 * rewrites with more entries (ConfigChecker's dynamic pack, core/collect/configcheckpack.h).
 */
Result<bool> writeZip(const std::filesystem::path& path,
                      const std::vector<std::pair<std::string, std::string>>& entries,
                      ReplaceMode mode = ReplaceMode::Never);

/**
 * @brief Adds `entries` to the zip at `path` (created when missing), as msprobe's create_file_in_zip appends one
 * entry under flock: under an exclusive flock of the zip's folder, the zip's entries are read (checked as ZipReader
 * checks any zip) and the zip is rewritten with them and then `entries`. An entry name the zip already holds is the
 * error zip.write and nothing changes: a pack left by another run is never mixed with this one silently.
 */
Result<bool> appendToZip(const std::filesystem::path& path,
                         const std::vector<std::pair<std::string, std::string>>& entries, const ZipLimits& limits = {});

} // namespace probescope
