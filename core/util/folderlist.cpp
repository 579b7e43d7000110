// SPDX-License-Identifier: Apache-2.0
#include "core/util/folderlist.h"

#include <algorithm>
#include <system_error>

namespace probescope {

Result<std::vector<FolderEntry>> listFolder(const std::filesystem::path& path, std::size_t maxEntries)
{
    std::vector<FolderEntry> out;
    std::error_code ec;
    std::filesystem::directory_iterator it(path, ec);
    for (const std::filesystem::directory_iterator end; !ec && it != end; it.increment(ec)) {
        if (out.size() >= maxEntries)
            return makeError("io.list", SourceLocation { path.string(), std::nullopt, 0, 0 },
                             "more than " + std::to_string(maxEntries) + " entries in this folder");
        FolderEntry e;
        e.name = it->path().filename().string();
        std::error_code kindError;
        e.isFolder = it->is_directory(kindError);
        e.isFile = !e.isFolder && it->is_regular_file(kindError);
        out.push_back(std::move(e));
    }
    if (ec)
        return makeError("io.list", SourceLocation { path.string(), std::nullopt, 0, 0 },
                         "cannot list this folder: " + ec.message());
    std::sort(out.begin(), out.end(), [](const FolderEntry& a, const FolderEntry& b) { return a.name < b.name; });
    return out;
}

} // namespace probescope
