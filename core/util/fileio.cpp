// SPDX-License-Identifier: Apache-2.0
#include "core/util/fileio.h"
#include "core/util/pages.h"

#include <atomic>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <algorithm>
#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace probescope {

namespace {
Diagnostic ioError(const std::filesystem::path& path, const std::string& what)
{
    return makeError("io.read", SourceLocation { path.string(), std::nullopt, 0, 0 }, what);
}
} // namespace

namespace {
std::atomic<std::uint64_t> g_maxJsonBytes { 0 }; // 0 = not yet decided

std::uint64_t defaultMaxJsonBytes()
{
    constexpr std::uint64_t kDefault = 16ull << 30;
    if (const char* env = std::getenv("PROBESCOPE_MAX_JSON_BYTES")) {
        std::uint64_t v = 0;
        const std::string_view text(env);
        const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
        if (ec == std::errc() && ptr == text.data() + text.size() && v > 0)
            return v;
    }
    return kDefault;
}

const char* fileKind(mode_t mode)
{
    if (S_ISFIFO(mode))
        return "a FIFO (named pipe)";
    if (S_ISDIR(mode))
        return "a folder";
    if (S_ISCHR(mode) || S_ISBLK(mode))
        return "a device";
    if (S_ISSOCK(mode))
        return "a socket";
    return "not a regular file";
}
} // namespace

std::uint64_t maxJsonFileBytes()
{
    std::uint64_t v = g_maxJsonBytes.load();
    if (v == 0) {
        v = defaultMaxJsonBytes();
        g_maxJsonBytes.store(v);
    }
    return v;
}

void setMaxJsonFileBytes(std::uint64_t bytes)
{
    g_maxJsonBytes.store(bytes == 0 ? defaultMaxJsonBytes() : bytes);
}

Result<int> openRegularFile(const std::filesystem::path& path, std::uint64_t maxBytes)
{
    // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer forever.
    const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return ioError(path, std::string("cannot open file: ") + std::strerror(errno));
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
        const int err = errno;
        ::close(fd);
        return ioError(path, std::string("cannot stat file: ") + std::strerror(err));
    }
    if (!S_ISREG(st.st_mode)) {
        ::close(fd);
        return makeError("io.read", SourceLocation { path.string(), std::nullopt, 0, 0 },
                         std::string("not a regular file: it is ") + fileKind(st.st_mode) + "; refusing to read it");
    }
    if (maxBytes > 0 && static_cast<std::uint64_t>(st.st_size) > maxBytes) {
        ::close(fd);
        return makeError("io.too-large", SourceLocation { path.string(), std::nullopt, 0, 0 },
                         "the file has " + std::to_string(st.st_size) + " bytes, more than the limit of "
                             + std::to_string(maxBytes)
                             + " bytes (set PROBESCOPE_MAX_JSON_BYTES to a larger byte count to read it)");
    }
    const int flags = ::fcntl(fd, F_GETFL);
    if (flags >= 0)
        ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
    return fd;
}

Result<std::shared_ptr<const MappedFile>> MappedFile::open(const std::filesystem::path& path, std::uint64_t maxBytes)
{
    auto opened = openRegularFile(path, maxBytes);
    if (!opened)
        return opened.error();
    const int fd = *opened;
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
        ::close(fd);
        return ioError(path, std::string("cannot stat file: ") + std::strerror(errno));
    }
    std::shared_ptr<MappedFile> file(new MappedFile());
    file->m_path = path;
    file->m_size = static_cast<std::size_t>(st.st_size);
    if (file->m_size > 0) {
        void* p = ::mmap(nullptr, file->m_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (p == MAP_FAILED) {
            ::close(fd);
            return ioError(path, std::string("cannot map file: ") + std::strerror(errno));
        }
        ::madvise(p, file->m_size, MADV_SEQUENTIAL);
        file->m_data = static_cast<const char*>(p);
        file->m_mapped = true;
    }
    ::close(fd);
    return std::shared_ptr<const MappedFile>(std::move(file));
}

void MappedFile::release(std::size_t upTo) const
{
    if (m_mapped)
        releasePages(m_data, m_data + std::min(upTo, m_size));
}

MappedFile::~MappedFile()
{
    if (m_mapped)
        ::munmap(const_cast<char*>(m_data), m_size);
}

Result<std::string> readTextFile(const std::filesystem::path& path)
{
    auto opened = openRegularFile(path, maxJsonFileBytes());
    if (!opened)
        return opened.error();
    const int fd = *opened;
    std::string text;
    char buffer[1 << 16];
    for (;;) {
        const ssize_t n = ::read(fd, buffer, sizeof buffer);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            const int err = errno;
            ::close(fd);
            return ioError(path, std::string("read failed: ") + std::strerror(err));
        }
        if (n == 0)
            break;
        text.append(buffer, static_cast<std::size_t>(n));
    }
    ::close(fd);
    return text;
}

bool writeAllToFd(int fd, std::string_view text, int& err)
{
    while (!text.empty()) {
        const ssize_t n = ::write(fd, text.data(), text.size());
        if (n < 0) {
            if (errno == EINTR)
                continue;
            err = errno;
            return false;
        }
        text.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
}

std::string localTimestamp()
{
    return localTimestamp(std::time(nullptr));
}

std::string localTimestamp(std::time_t when)
{
    std::tm local {};
    localtime_r(&when, &local);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y%m%d%H%M%S", &local);
    return buf;
}

} // namespace probescope
