// SPDX-License-Identifier: Apache-2.0
#include "dumpfolder.h"

#include "core/util/outputfile.h"

#include <cerrno>
#include <system_error>

#include <sys/stat.h>

namespace fs = std::filesystem;

namespace probescope::collect {

namespace {

Diagnostic folderError(const fs::path& path, const std::string& message)
{
    return makeError("collect.dump-path", fileLocation(path), message);
}

/// mkdir `path`; an existing entry is accepted only when `mayExist` and it is a real directory.
std::optional<Diagnostic> makeFolder(const fs::path& path, bool mayExist)
{
    if (::mkdir(path.c_str(), 0777) == 0)
        return std::nullopt;
    const int err = errno;
    if (err != EEXIST)
        return folderError(path, errnoText("cannot create the folder", path, err));
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0)
        return folderError(path, errnoText("cannot inspect", path, errno));
    if (S_ISLNK(st.st_mode))
        return folderError(path, "is a symlink; the collector writes only into real folders below dump_path "
                                 "(a link would send the dump elsewhere): remove it or choose another dump_path");
    if (!S_ISDIR(st.st_mode))
        return folderError(path, "exists and is not a folder: remove it or choose another dump_path");
    if (!mayExist)
        return folderError(path, "already exists: this rank was dumped here before (a rerun into a used "
                                 "dump_path?); nothing of it is replaced: choose an empty dump_path or remove the "
                                 "folder");
    return std::nullopt;
}

} // namespace

bool isRealDirectory(const fs::path& path)
{
    struct stat st {};
    return ::lstat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

std::optional<Diagnostic> claimRankFolder(const fs::path& dumpPath, const std::string& stepFolder,
                                          const std::string& rankFolder, bool tensorFolder)
{
    std::error_code ec;
    fs::create_directories(dumpPath, ec);
    if (ec)
        return folderError(dumpPath, "cannot create the folder: " + ec.message());
    fs::path dir = dumpPath;
    if (!stepFolder.empty()) {
        dir /= stepFolder;
        if (auto problem = makeFolder(dir, true)) // other ranks share the step folder
            return problem;
    }
    dir /= rankFolder;
    if (auto problem = makeFolder(dir, false))
        return problem;
    if (tensorFolder)
        return makeFolder(dir / "dump_tensor_data", false);
    return std::nullopt;
}

} // namespace probescope::collect
