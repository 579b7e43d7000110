// SPDX-License-Identifier: Apache-2.0
#pragma once
// Listing a folder that is not a dump (a monitor output folder, its rank folders): dumps are walked by
// dump::discoverDump only.

#include "core/util/diagnostic.h"

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

namespace probescope {

/// One entry of a folder listing.
struct FolderEntry
{
    std::string name;
    bool isFolder = false; ///< a folder, or a symlink to one (as os.path.isdir says)
    bool isFile = false;   ///< a regular file, or a symlink to one
};

/**
 * @brief The entries of a folder, sorted by name, so that what is read does not depend on the file system's order.
 * The error io.list names the folder. Bounded: a folder of more than `maxEntries` entries is an error rather than an
 * unbounded read.
 */
Result<std::vector<FolderEntry>> listFolder(const std::filesystem::path& path, std::size_t maxEntries = 10'000'000);

} // namespace probescope
