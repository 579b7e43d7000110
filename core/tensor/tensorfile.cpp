// SPDX-License-Identifier: Apache-2.0
#include "core/tensor/tensor.h"
#include "core/tensor/elementstream.h"
#include "core/tensor/pathutil.h"
#include "core/util/fileio.h"

#include <algorithm>
#include <cerrno>
#include <deque>
#include <fcntl.h>
#include <mutex>
#include <optional>
#include <string>
#include <sys/stat.h>
#include <system_error>
#include <unordered_map>
#include <unistd.h>
#include <utility>

namespace probescope::tensor {

namespace fs = std::filesystem;

namespace {

Diagnostic fileError(const fs::path& path, std::string id, std::string message)
{
    return makeError(std::move(id), fileLocation(path), std::move(message));
}

std::string quoted(std::string_view text)
{
    // A hostile 50 MB data_name must not make a 50 MB error line: the start and the length say enough.
    constexpr std::size_t kMaxQuoted = 256;
    if (text.size() > kMaxQuoted)
        return '"' + std::string(text.substr(0, kMaxQuoted)) + "\"... (" + std::to_string(text.size()) + " bytes)";
    return '"' + std::string(text) + '"';
}

/**
 * Follows every symbolic link in `relative`, starting from the already canonical `base`, without
 * needing the links' targets to exist: std::filesystem::weakly_canonical stops at the first missing
 * element, so a dangling link pointing outside would look harmless to it. nullopt means a loop.
 */
std::optional<fs::path> resolveLinks(const fs::path& base, const fs::path& relative)
{
    fs::path current = base;
    std::deque<fs::path> pending(relative.begin(), relative.end());
    int hops = 0;
    while (!pending.empty()) {
        const fs::path part = pending.front();
        pending.pop_front();
        if (part.empty() || part == ".")
            continue;
        if (part == "..") { // only reachable through a link target; `current` holds no links
            current = current.parent_path();
            continue;
        }
        const fs::path next = current / part;
        std::error_code ec;
        if (!fs::is_symlink(fs::symlink_status(next, ec))) {
            current = next;
            continue;
        }
        if (++hops > 40) // the limit Linux applies (MAXSYMLINKS)
            return std::nullopt;
        const fs::path target = fs::read_symlink(next, ec);
        if (ec)
            return std::nullopt;
        if (target.is_absolute())
            current = target.root_path();
        const fs::path rest = target.is_absolute() ? target.relative_path() : target;
        pending.insert(pending.begin(), rest.begin(), rest.end());
    }
    return current;
}

std::string shapeText(const std::vector<std::int64_t>& shape)
{
    std::string text = "[";
    for (std::size_t i = 0; i < shape.size(); ++i) {
        if (i > 0)
            text += ", ";
        text += std::to_string(shape[i]);
    }
    return text + ']';
}

} // namespace

TensorFolder::TensorFolder(fs::path dir)
    : m_dir(std::move(dir))
{
    std::error_code ec;
    fs::path real = fs::canonical(m_dir, ec);
    struct stat st {};
    if (!ec && ::stat(real.c_str(), &st) != 0)
        ec = std::error_code(errno, std::generic_category());
    if (ec) {
        m_problem = ec.message();
        return;
    }
    m_realDir = std::move(real);
    m_device = static_cast<std::uint64_t>(st.st_dev);
    m_inode = static_cast<std::uint64_t>(st.st_ino);
    // The folder checked above, held open: open() resolves plain names relative to it. If the folder in its
    // place is not the one stat() saw (replaced in between), open() takes the path-based way.
    const int dirFd = ::open(m_realDir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
    struct stat held {};
    if (dirFd >= 0 && ::fstat(dirFd, &held) == 0 && held.st_dev == st.st_dev && held.st_ino == st.st_ino)
        m_dirFd = dirFd;
    else if (dirFd >= 0)
        ::close(dirFd);
}

TensorFolder::~TensorFolder()
{
    if (m_dirFd >= 0)
        ::close(m_dirFd);
}

OpenedDataFile::OpenedDataFile(OpenedDataFile&& other) noexcept
    : m_file(std::move(other.m_file))
    , m_pathText(std::move(other.m_pathText))
    , m_fd(std::exchange(other.m_fd, -1))
    , m_readWhole(std::exchange(other.m_readWhole, nullptr))
{
    other.m_pathText.clear();
}

OpenedDataFile& OpenedDataFile::operator=(OpenedDataFile&& other) noexcept
{
    if (this != &other) {
        if (m_fd >= 0)
            ::close(m_fd);
        m_file = std::move(other.m_file);
        m_pathText = std::move(other.m_pathText);
        other.m_pathText.clear();
        m_fd = std::exchange(other.m_fd, -1);
        m_readWhole = std::exchange(other.m_readWhole, nullptr);
    }
    return *this;
}

const DataFile& OpenedDataFile::file() const
{
    if (!m_pathText.empty()) {
        m_file.path = std::move(m_pathText);
        m_pathText.clear();
    }
    return m_file;
}

OpenedDataFile::~OpenedDataFile()
{
    if (m_fd >= 0)
        ::close(m_fd);
}

int OpenedDataFile::release()
{
    return std::exchange(m_fd, -1);
}

Result<OpenedDataFile> TensorFolder::open(std::string_view dataName) const
{
    return openReading(dataName, nullptr, 0);
}

Result<OpenedDataFile> TensorFolder::open(std::string_view dataName, ReadBuffer& buffer, std::uint64_t wholeFileLimit) const
{
    return openReading(dataName, &buffer, wholeFileLimit);
}

Result<OpenedDataFile> TensorFolder::openReading(std::string_view dataName, ReadBuffer* buffer,
                                                 std::uint64_t wholeFileLimit) const
{
    const bool plain = m_dirFd >= 0 && !dataName.empty() && dataName.find('/') == std::string_view::npos
        && dataName.find('\0') == std::string_view::npos && dataName != "." && dataName != "..";
    if (plain) {
        // O_NOFOLLOW: a link fails with ELOOP and takes the walk below (a link that stays inside is followed
        // there); O_NONBLOCK: a FIFO in the file's place cannot block the open (fstat then refuses it).
        // The real path, "<real folder>/<name>", as text: the name is NUL-terminated at its end in it, so the
        // open needs no copy of its own, and no std::filesystem::path is parsed unless a message needs one.
        const std::string& folder = m_realDir.native();
        std::string path;
        path.reserve(folder.size() + 1 + dataName.size());
        path.append(folder);
        if (path.empty() || path.back() != '/')
            path.push_back('/');
        const std::size_t nameStart = path.size();
        path.append(dataName);
        const int fd = ::openat(m_dirFd, path.c_str() + nameStart, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
        if (fd >= 0) {
            // After a large file, this thread's next is likely large too: no probe then. On a cold cache the probe's
            // read would start the kernel's read-ahead at the file's start in 4 KiB folios, and the stream's
            // read-ahead in large folios (readAheadUnlessCached) could no longer have that window.
            thread_local bool lastWasLarge = false;
            if (buffer && wholeFileLimit >= kProbeBytes && !lastWasLarge) {
                // A short pread is the whole file (see the header: what it proves about the file's type).
                std::byte* bytes = buffer->reserve(kProbeBytes);
                ssize_t n = 0;
                do
                    n = ::pread(fd, bytes, kProbeBytes, 0);
                while (n < 0 && errno == EINTR);
                if (n > 0 && static_cast<std::size_t>(n) < kProbeBytes) {
                    OpenedDataFile opened(std::move(path), static_cast<std::uint64_t>(n), fd);
                    opened.setReadWhole(bytes);
                    return opened;
                }
            }
            struct stat st {};
            if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) { // O_NONBLOCK means nothing for a regular file
                lastWasLarge
                    = static_cast<std::uint64_t>(st.st_size) > std::max<std::uint64_t>(wholeFileLimit, kProbeBytes);
                return OpenedDataFile(std::move(path), static_cast<std::uint64_t>(st.st_size), fd);
            }
            ::close(fd);
        } else if (errno == ENOENT) {
            return fileError(m_dir / fs::path(dataName), "tensor.missing",
                             "the tensor file named by data_name does not exist");
        }
        // Not a regular file, a link, or an error other than "no such file": the path-based way below says
        // exactly what resolve() and openRegularFile say.
    }
    auto resolved = resolve(dataName);
    if (!resolved)
        return resolved.error();
    auto opened = openRegularFile(resolved->path);
    if (!opened)
        return opened.error();
    return OpenedDataFile(std::move(resolved).value(), *opened);
}

Result<DataFile> TensorFolder::resolve(std::string_view dataName) const
{
    if (dataName.empty())
        return fileError(m_dir, "tensor.path-invalid", "the data_name is empty");
    if (dataName.find('\0') != std::string_view::npos)
        return fileError(m_dir, "tensor.path-invalid", "the data_name contains a NUL byte");

    const fs::path name(dataName);
    if (name.is_absolute() || name.has_root_path()) {
        return fileError(m_dir, "tensor.path-escape",
                         "data_name " + quoted(dataName) + " is an absolute path; it must name a file inside "
                             + m_dir.string());
    }
    for (const fs::path& part : name) {
        if (part == "..") {
            return fileError(m_dir, "tensor.path-escape",
                             "data_name " + quoted(dataName) + " contains \"..\"; it must name a file inside "
                                 + m_dir.string());
        }
    }
    if (m_realDir.empty()) {
        return fileError(m_dir, "tensor.missing",
                         "the tensor folder " + m_dir.string() + " cannot be opened: " + m_problem);
    }

    const fs::path candidate = m_dir / name;
    const auto missing = [&candidate] {
        return fileError(candidate, "tensor.missing", "the tensor file named by data_name does not exist");
    };
    const auto notRegular = [&candidate] {
        return fileError(candidate, "tensor.missing", "the path named by data_name is not a regular file");
    };

    // A plain file name directly in the folder (the usual case) needs no walk: if it is not a link,
    // the real folder plus the name is already the real path.
    if (dataName.find('/') == std::string_view::npos && dataName != ".") {
        fs::path direct = m_realDir / name;
        struct stat st {};
        if (::lstat(direct.c_str(), &st) != 0)
            return missing();
        if (S_ISREG(st.st_mode))
            return DataFile { std::move(direct), static_cast<std::uint64_t>(st.st_size) };
        if (!S_ISLNK(st.st_mode))
            return notRegular();
    }

    const std::optional<fs::path> realFile = resolveLinks(m_realDir, name);
    if (!realFile)
        return fileError(candidate, "tensor.path-invalid",
                         "data_name " + quoted(dataName) + " goes through a symbolic link loop or an unreadable link");
    if (!isInside(*realFile, m_realDir)) {
        return fileError(candidate, "tensor.path-escape",
                         "data_name " + quoted(dataName) + " resolves to " + realFile->string()
                             + ", outside the tensor folder " + m_realDir.string() + " (through a symbolic link)");
    }
    struct stat st {};
    if (::stat(realFile->c_str(), &st) != 0)
        return missing();
    if (!S_ISREG(st.st_mode))
        return notRegular();
    // The checked path is the one handed back, so the file opened is the file that was checked.
    return DataFile { *realFile, static_cast<std::uint64_t>(st.st_size) };
}

std::shared_ptr<const TensorFolder> TensorFolder::cached(const fs::path& dir)
{
    static std::mutex mutex;
    static std::unordered_map<std::string, std::shared_ptr<const TensorFolder>> folders;
    constexpr std::size_t kMaxFolders = 256;

    struct stat st {};
    const bool exists = ::stat(dir.c_str(), &st) == 0;
    {
        const std::lock_guard<std::mutex> lock(mutex);
        const auto it = folders.find(dir.native());
        if (exists && it != folders.end() && it->second->m_device == static_cast<std::uint64_t>(st.st_dev)
            && it->second->m_inode == static_cast<std::uint64_t>(st.st_ino))
            return it->second;
    }
    // Built outside the lock: canonical() walks the path, and other threads need not wait for it.
    auto folder = std::make_shared<const TensorFolder>(dir);
    if (!folder->m_realDir.empty()) {
        const std::lock_guard<std::mutex> lock(mutex);
        if (folders.size() >= kMaxFolders)
            folders.clear();
        folders[dir.native()] = folder;
    }
    return folder;
}

Result<fs::path> resolveDataFile(const fs::path& tensorDir, std::string_view dataName)
{
    auto file = TensorFolder::cached(tensorDir)->resolve(dataName);
    if (!file)
        return file.error();
    return std::move(file->path);
}

Result<Tensor> loadTensorFile(const fs::path& tensorDir, std::string_view dataName)
{
    auto resolved = resolveDataFile(tensorDir, dataName);
    if (!resolved)
        return resolved.error();
    const std::string ext = lowerExtension(*resolved);
    if (ext == ".pt" || ext == ".pth")
        return loadPt(*resolved);
    if (ext == ".npy")
        return loadNpy(*resolved);
    return fileError(*resolved, "tensor.format-unknown",
                     "cannot tell the tensor format of " + quoted(dataName) + " (expected a .pt or .npy file)");
}

Diagnostics checkAgainstMetadata(const Tensor& t, std::string_view dtypeText, const std::vector<std::int64_t>& shape,
                                 const std::string& fileForMessages)
{
    Diagnostics out;
    const SourceLocation where { fileForMessages, std::nullopt, 0, 0 };
    const std::optional<DType> declared = parseDType(dtypeText);
    if (!declared) {
        out.push_back(makeError("tensor.dtype-unknown", where,
                                "dump.json gives dtype " + quoted(dtypeText) + ", which ProbeScope does not know; the file holds "
                                    + torchName(t.dtype)));
    } else if (*declared == DType::BFloat16 && t.dtype == DType::Float32) {
        // numpy has no bfloat16, so MindSpore's msprobe widens bfloat16 tensors to float32 before saving .npy.
        out.push_back(makeWarning("tensor.dtype-widened", where,
                                  "dump.json says " + std::string(dtypeText)
                                      + " but the file holds torch.float32 (bfloat16 widened for saving)"));
    } else if (*declared != t.dtype) {
        out.push_back(makeError("tensor.dtype-mismatch", where,
                                "dump.json says dtype " + std::string(dtypeText) + " but the file holds "
                                    + torchName(t.dtype)));
    }
    if (shape != t.shape) {
        out.push_back(makeError("tensor.shape-mismatch", where,
                                "dump.json says shape " + shapeText(shape) + " but the file holds "
                                    + shapeText(t.shape)));
    }
    return out;
}

} // namespace probescope::tensor
