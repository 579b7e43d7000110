// SPDX-License-Identifier: Apache-2.0
#pragma once
// Listing one folder, as part of the gate: the one place outside the dump walker (core/dump discoverDump) where
// ProbeScope reads a folder's names — an extracted config_check pack, site-packages for the pip list, merge_result's
// input folder. Bounded in entries; symlinks are reported as such, never followed.

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
    Kind kind = Kind::Other;
};

/// The entries of `folder` in the order the file system lists them (os.listdir's order), without "." and "..".
/// More than `maxEntries` is the error io.too-many naming the folder; a missing or unreadable folder is io.read.
Result<std::vector<FolderEntry>> listFolder(const std::filesystem::path& folder, std::uint64_t maxEntries = 1000000);

} // namespace probescope
