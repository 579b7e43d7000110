// SPDX-License-Identifier: Apache-2.0
#include "core/tensor/resolver.h"
#include "core/tensor/pathutil.h"
#include "core/util/fileio.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <mutex>
#include <string>
#include <unordered_map>

namespace probescope::tensor {

namespace fs = std::filesystem;

TensorResolver::TensorResolver(const fs::path& dumpDir, fs::path tensorDir)
    : m_dumpDir(dumpDir)
    , m_tensorDir(std::move(tensorDir))
{
}

void TensorResolver::check() const
{
    std::call_once(m_checked, [this] {
        // The folder is checked once, here: every name is then resolved inside its real path (TensorFolder).
        m_folder = TensorFolder::cached(m_tensorDir);
        std::error_code ec;
        const fs::path realTensors = fs::canonical(m_tensorDir, ec);
        if (ec)
            return; // no folder: each resolve() says tensor.missing
        const fs::path realDump = fs::canonical(m_dumpDir.empty() ? fs::path(".") : m_dumpDir, ec);
        if (ec || !isInside(realTensors, realDump)) {
            m_folderProblem = makeError(
                "tensor.path-escape", fileLocation(m_tensorDir),
                "the tensor folder resolves to " + realTensors.string() + ", outside the dump folder "
                    + (ec ? m_dumpDir.string() : realDump.string())
                    + " (a symbolic link to another folder): its files are not read, so that a dump is never "
                      "compared with another dump's tensors");
        }
    });
}

const std::optional<Diagnostic>& TensorResolver::folderProblem() const
{
    check();
    return m_folderProblem;
}

bool TensorResolver::folderExists() const
{
    std::error_code ec;
    return !folderProblem() && fs::is_directory(m_tensorDir, ec);
}

Result<DataFile> TensorResolver::resolve(std::string_view dataName) const
{
    if (folderProblem())
        return *m_folderProblem;
    return m_folder->resolve(dataName);
}

Result<Tensor> TensorResolver::load(std::string_view dataName) const
{
    auto file = resolve(dataName);
    if (!file)
        return file.error();
    const std::string ext = lowerExtension(file->path);
    if (ext == ".pt" || ext == ".pth")
        return loadPt(file->path);
    if (ext == ".npy")
        return loadNpy(file->path);
    return makeError("tensor.format-unknown", fileLocation(file->path),
                     "cannot tell the tensor format of this file (expected a .pt or .npy file)");
}

Result<OpenedDataFile> TensorResolver::open(std::string_view dataName) const
{
    if (folderProblem())
        return *m_folderProblem;
    return m_folder->open(dataName);
}

Result<OpenedDataFile> TensorResolver::open(std::string_view dataName, ReadBuffer& buffer,
                                            std::uint64_t wholeFileLimit) const
{
    if (folderProblem())
        return *m_folderProblem;
    return m_folder->open(dataName, buffer, wholeFileLimit);
}

Result<PtStream> TensorResolver::openPt(std::string_view dataName, ReadBuffer& buffer) const
{
    auto file = open(dataName, buffer, kPtWholeFileLimit);
    if (!file)
        return file.error();
    return openPtStream(std::move(file).value(), buffer);
}

Result<PtStream> TensorResolver::openPt(OpenedDataFile opened, ReadBuffer& buffer) const
{
    return openPtStream(std::move(opened), buffer);
}

Result<PtStream> TensorResolver::openPt(const DataFile& resolved, ReadBuffer& buffer) const
{
    return openPtStream(resolved.path, buffer);
}

void TensorResolver::prefetch(std::string_view dataName) const
{
    const auto file = resolve(dataName);
    if (!file)
        return;
    const int fd = ::open(file->path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return;
    readAheadInBackground(fd, 0, file->size); // takes fd over
}

std::shared_ptr<const TensorResolver> makeTensorResolver(const fs::path& dumpDir, const fs::path& tensorDir)
{
    // A job compares many pairs of the same dumps (and the GUI reopens them): the two canonical() calls of a
    // resolver are made once per folder pair while neither folder changes (device and inode, as TensorFolder).
    struct Slot
    {
        std::shared_ptr<const TensorResolver> resolver;
        dev_t dumpDev = 0, tensorDev = 0;
        ino_t dumpIno = 0, tensorIno = 0;
    };
    static std::mutex mutex;
    static std::unordered_map<std::string, Slot> resolvers;
    constexpr std::size_t kMaxResolvers = 256;

    struct stat dumpSt {};
    struct stat tensorSt {};
    // The tensor folder first: a statistics dump has none, and its resolver (not kept) then costs this one stat.
    const bool stable = ::stat(tensorDir.c_str(), &tensorSt) == 0
        && ::stat(dumpDir.empty() ? "." : dumpDir.c_str(), &dumpSt) == 0;
    const std::string key = dumpDir.native() + '\0' + tensorDir.native();
    if (stable) {
        const std::lock_guard<std::mutex> lock(mutex);
        const auto it = resolvers.find(key);
        if (it != resolvers.end() && it->second.dumpDev == dumpSt.st_dev && it->second.dumpIno == dumpSt.st_ino
            && it->second.tensorDev == tensorSt.st_dev && it->second.tensorIno == tensorSt.st_ino)
            return it->second.resolver;
    }
    auto resolver = std::make_shared<const TensorResolver>(dumpDir, tensorDir);
    if (stable) {
        const std::lock_guard<std::mutex> lock(mutex);
        if (resolvers.size() >= kMaxResolvers)
            resolvers.clear();
        resolvers[key] = Slot { resolver, dumpSt.st_dev, tensorSt.st_dev, dumpSt.st_ino, tensorSt.st_ino };
    }
    return resolver;
}

} // namespace probescope::tensor
