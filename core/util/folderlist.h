// SPDX-License-Identifier: Apache-2.0
#pragma once
// Listing one folder, as part of the gate: the one place outside the dump walker (core/dump discoverDump) where
// ProbeScope reads a folder's names — an extracted config_check pack, site-packages for the pip list, merge_result's
// input folder, a monitor output folder and its rank folders. Bounded in entries; a symlink is reported as such
// (`kind`), and only followed to say what it points at (`isFolder`/`isFile`, as os.path.isdir/isfile say).

#include "core/util/diagnostic.h"

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace probescope {

struct FolderEntry
{
    enum class Kind : std::uint8_t { File, Folder, Symlink, Other };
    std::string name;
    Kind kind = Kind::Other; ///< the entry itself, never following a symlink
    bool isFolder = false;   ///< a folder, or a symlink to one (as os.path.isdir says)
    bool isFile = false;     ///< a regular file, or a symlink to one (as os.path.isfile says)
};

/// In which order listFolder gives the entries.
enum class FolderOrder : std::uint8_t {
    AsListed, ///< the file system's order (os.listdir's), where a tool's output follows it
    ByName    ///< sorted by name (bytes), so that what is read does not depend on the file system
};

/// The entries of `folder` without "." and "..". More than `maxEntries` is the error io.too-many naming the folder;
/// a missing or unreadable folder is io.read.
Result<std::vector<FolderEntry>> listFolder(const std::filesystem::path& folder, std::uint64_t maxEntries = 1000000,
                                            FolderOrder order = FolderOrder::AsListed);

} // namespace probescope
