// SPDX-License-Identifier: Apache-2.0
#include "core/util/folderlist.h"

#include "core/util/outputfile.h"

#include <algorithm>
#include <cerrno>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>

namespace probescope {

namespace {

FolderEntry::Kind kindOf(unsigned char type)
{
    return type == DT_REG ? FolderEntry::Kind::File
           : type == DT_DIR ? FolderEntry::Kind::Folder
           : type == DT_LNK ? FolderEntry::Kind::Symlink
                            : FolderEntry::Kind::Other;
}

} // namespace

Result<std::vector<FolderEntry>> listFolder(const std::filesystem::path& folder, std::uint64_t maxEntries,
                                            FolderOrder order)
{
    const SourceLocation where = fileLocation(folder);
    DIR* dir = ::opendir(folder.c_str());
    if (!dir)
        return makeError("io.read", where, errnoText("cannot list folder", folder, errno));
    const int dirFd = ::dirfd(dir);
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
        FolderEntry item { name, kindOf(entry->d_type) };
        struct stat st {};
        if (entry->d_type == DT_UNKNOWN && ::fstatat(dirFd, entry->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0)
            item.kind = S_ISREG(st.st_mode)   ? FolderEntry::Kind::File
                        : S_ISDIR(st.st_mode) ? FolderEntry::Kind::Folder
                        : S_ISLNK(st.st_mode) ? FolderEntry::Kind::Symlink
                                              : FolderEntry::Kind::Other;
        item.isFolder = item.kind == FolderEntry::Kind::Folder;
        item.isFile = item.kind == FolderEntry::Kind::File;
        // Only a symlink needs a second look at what it points at (one stat per link, none per plain entry).
        if (item.kind == FolderEntry::Kind::Symlink && ::fstatat(dirFd, entry->d_name, &st, 0) == 0) {
            item.isFolder = S_ISDIR(st.st_mode);
            item.isFile = S_ISREG(st.st_mode);
        }
        out.push_back(std::move(item));
        errno = 0;
    }
    const int err = errno;
    ::closedir(dir);
    if (err != 0)
        return makeError("io.read", where, errnoText("cannot list folder", folder, err));
    if (order == FolderOrder::ByName)
        std::sort(out.begin(), out.end(), [](const FolderEntry& a, const FolderEntry& b) { return a.name < b.name; });
    return out;
}

} // namespace probescope
