// SPDX-License-Identifier: Apache-2.0
#include "core/util/folderlist.h"

#include "core/util/outputfile.h"

#include <cerrno>
#include <dirent.h>

namespace probescope {

Result<std::vector<FolderEntry>> listFolder(const std::filesystem::path& folder, std::uint64_t maxEntries)
{
    const SourceLocation where { folder.string(), std::nullopt, 0, 0 };
    DIR* dir = ::opendir(folder.c_str());
    if (!dir)
        return makeError("io.read", where, errnoText("cannot list folder", folder, errno));
    std::vector<FolderEntry> out;
    errno = 0;
    while (const dirent* entry = ::readdir(dir)) {
        const std::string name = entry->d_name;
        if (name == "." || name == "..")
            continue;
        if (out.size() >= maxEntries) {
            ::closedir(dir);
            return makeError("io.too-many", where, folder.string() + " holds more than " + std::to_string(maxEntries)
                                                       + " entries");
        }
        FolderEntry item { name, FolderEntry::Kind::Other };
        unsigned char type = entry->d_type;
        if (type == DT_UNKNOWN) {
            std::error_code ec;
            const auto st = std::filesystem::symlink_status(folder / name, ec);
            type = st.type() == std::filesystem::file_type::directory  ? DT_DIR
                   : st.type() == std::filesystem::file_type::regular  ? DT_REG
                   : st.type() == std::filesystem::file_type::symlink ? DT_LNK
                                                                        : DT_UNKNOWN;
        }
        item.kind = type == DT_REG ? FolderEntry::Kind::File
                    : type == DT_DIR ? FolderEntry::Kind::Folder
                    : type == DT_LNK ? FolderEntry::Kind::Symlink
                                     : FolderEntry::Kind::Other;
        out.push_back(std::move(item));
        errno = 0;
    }
    const int err = errno;
    ::closedir(dir);
    if (err != 0)
        return makeError("io.read", where, errnoText("cannot list folder", folder, err));
    return out;
}

} // namespace probescope
