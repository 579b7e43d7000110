// SPDX-License-Identifier: Apache-2.0
#include "core/util/outputfile.h"

#include "core/util/fileio.h"

#include <atomic>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <mutex>
#include <sys/stat.h>
#include <unistd.h>
#include <utility>

namespace probescope {

namespace fs = std::filesystem;

namespace {

// Beyond this many taken names something is wrong (a loop of runs, a hostile folder): stop with an error.
constexpr int kMaxFreeNameAttempts = 10000;

// ---- The full-disk test seam (PROBESCOPE_TEST_ENOSPC). `g_faultStep` is -1 when off: a real run pays one
// relaxed atomic load per write.
std::atomic<int> g_faultStep { -1 };      ///< OutputStep to fail, or -1
std::atomic<long long> g_faultAt { 0 };   ///< the N-th such step fails; 0 = every one
std::atomic<long long> g_faultCount { 0 };

// Open DeferredSync barriers; per-file fsyncs are skipped while above 0.
std::atomic<int> g_deferredSyncs { 0 };

void applyFaultSpec(std::string_view spec)
{
    g_faultCount = 0;
    g_faultStep = -1;
    if (spec.empty())
        return;
    OutputStep step = OutputStep::Write;
    if (const auto colon = spec.find(':'); colon != std::string_view::npos) {
        const std::string_view name = spec.substr(0, colon);
        if (name == "fsync")
            step = OutputStep::Fsync;
        else if (name == "close")
            step = OutputStep::Close;
        else if (name != "write")
            return;
        spec.remove_prefix(colon + 1);
    }
    long long n = 0;
    if (spec != "all") {
        const auto [ptr, ec] = std::from_chars(spec.data(), spec.data() + spec.size(), n);
        if (ec != std::errc() || ptr != spec.data() + spec.size() || n < 0)
            return;
    }
    g_faultAt = n;
    g_faultStep = static_cast<int>(step);
}

void readFaultEnvironment()
{
    static std::once_flag once;
    std::call_once(once, [] {
        if (const char* spec = std::getenv("PROBESCOPE_TEST_ENOSPC"))
            applyFaultSpec(spec);
    });
}

void syncFolder(const fs::path& folder)
{
    if (g_deferredSyncs.load(std::memory_order_relaxed) > 0)
        return; // the open DeferredSync's barrier persists the rename
    // Persists the rename itself; failing here does not make the written file wrong.
    const int dirFd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dirFd >= 0) {
        ::fsync(dirFd);
        ::close(dirFd);
    }
}

fs::path folderOf(const fs::path& path)
{
    fs::path folder = path.parent_path();
    return folder.empty() ? fs::path(".") : folder;
}

/// Opens a fresh temporary file beside `path`; -1 with `error` set on failure.
int openTempBeside(const fs::path& path, std::string_view suffix, fs::path& temp, std::string& error)
{
    const std::string base = path.filename().string();
    if (base.empty()) {
        error = "not a file path: " + path.string();
        return -1;
    }
    // O_EXCL with a fresh name (not mkstemp) so the final file gets the permissions of a normal create.
    static std::atomic<unsigned> counter { 0 };
    for (int attempt = 0; attempt < 100; ++attempt) {
        const auto ticks = static_cast<unsigned long long>(std::chrono::steady_clock::now().time_since_epoch().count());
        temp = folderOf(path)
            / ("." + base + ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(counter.fetch_add(1)) + "-"
                + std::to_string(ticks % 1000000007ull) + std::string(suffix));
        // O_EXCL never follows a symlink at the name; O_NOFOLLOW says so once more.
        const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
        if (fd >= 0)
            return fd;
        if (errno != EEXIST) {
            error = errnoText("cannot create", temp, errno);
            return -1;
        }
    }
    error = "cannot create a temporary file next to " + path.string();
    return -1;
}

} // namespace

bool injectFullDisk(OutputStep step)
{
    readFaultEnvironment();
    if (g_faultStep.load(std::memory_order_relaxed) != static_cast<int>(step))
        return false;
    const long long n = ++g_faultCount;
    const long long at = g_faultAt.load();
    return at == 0 || n == at;
}

void setTestFullDisk(std::string_view spec)
{
    readFaultEnvironment(); // so that a later first use does not override the test's setting
    applyFaultSpec(spec);
}

bool writeOutputFd(int fd, std::string_view text, int& err)
{
    if (injectFullDisk(OutputStep::Write)) {
        // A full disk takes what fits, then refuses: leave half behind, as it would.
        int ignored = 0;
        writeAllToFd(fd, text.substr(0, text.size() / 2), ignored);
        err = ENOSPC;
        return false;
    }
    return writeAllToFd(fd, text, err);
}

std::optional<std::string> appendToOutput(const fs::path& path, std::string_view text)
{
    const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        const int err = errno;
        return errnoText(err == ELOOP ? "refusing to follow the symlink" : "cannot open for appending", path, err);
    }
    struct stat before {};
    if (::fstat(fd, &before) != 0 || !S_ISREG(before.st_mode)) {
        ::close(fd);
        return path.string() + " is not a regular file; refusing to append to it";
    }
    int err = 0;
    bool ok = writeOutputFd(fd, text, err);
    if (ok && injectFullDisk(OutputStep::Close)) {
        ok = false;
        err = ENOSPC;
    }
    if (!ok) {
        // Never leave half a row: the file goes back to what it held.
        if (::ftruncate(fd, before.st_size) != 0) {
            const int cutErr = errno;
            ::close(fd);
            return errnoText("cannot write", path, err) + "; cutting the partial row off failed too ("
                + std::strerror(cutErr) + ")";
        }
        ::close(fd);
        return errnoText("cannot write", path, err);
    }
    if (::close(fd) != 0)
        return errnoText("cannot close", path, errno);
    return std::nullopt;
}

std::string errnoText(std::string_view what, const fs::path& path, int err)
{
    std::string out(what);
    out += ' ';
    out += path.string();
    out += ": ";
    out += std::strerror(err);
    return out;
}

std::optional<WriteFailure> renameNoReplace(const fs::path& from, const fs::path& to)
{
    if (::renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), RENAME_NOREPLACE) == 0)
        return std::nullopt;
    int err = errno;
    // File systems without RENAME_NOREPLACE: a hard link is just as exclusive.
    if (err == EINVAL || err == ENOSYS || err == ENOTSUP) {
        if (::link(from.c_str(), to.c_str()) == 0) {
            ::unlink(from.c_str());
            return std::nullopt;
        }
        err = errno;
    }
    if (err == EEXIST)
        return WriteFailure { to.string() + " already exists; it is not replaced", true };
    return WriteFailure { errnoText("cannot rename " + from.string() + " to", to, err), false };
}

bool syncOutputFile(const fs::path& path)
{
    if (syncDeferred())
        return true; // the open DeferredSync's barrier flushes it
    const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return false;
    if (injectFullDisk(OutputStep::Fsync)) {
        ::close(fd);
        errno = ENOSPC;
        return false;
    }
    const bool ok = ::fsync(fd) == 0;
    const int err = errno;
    ::close(fd);
    errno = err;
    return ok;
}

void syncOutputFolder(const fs::path& folder)
{
    syncFolder(folder);
}

bool syncDeferred()
{
    return g_deferredSyncs.load(std::memory_order_relaxed) > 0;
}

DeferredSync::DeferredSync(const fs::path& folder)
    : m_fd(::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC))
    , m_folder(folder)
    , m_openError(m_fd < 0 ? errno : 0)
{
    ++g_deferredSyncs;
}

DeferredSync::~DeferredSync()
{
    --g_deferredSyncs;
    if (m_fd >= 0)
        ::close(m_fd);
}

std::optional<std::string> DeferredSync::barrier()
{
    if (m_fd < 0)
        return errnoText("cannot make the outputs durable in", m_folder, m_openError);
    if (injectFullDisk(OutputStep::Fsync))
        return errnoText("cannot make the outputs durable in", m_folder, ENOSPC);
    if (::syncfs(m_fd) != 0)
        return errnoText("cannot make the outputs durable in", m_folder, errno);
    return std::nullopt;
}

std::optional<fs::path> createTempBeside(const fs::path& path, std::string_view suffix, std::string& error)
{
    fs::path temp;
    const int fd = openTempBeside(path, suffix, temp, error);
    if (fd < 0)
        return std::nullopt;
    ::close(fd);
    return temp;
}

std::optional<PendingFile> PendingFile::create(const fs::path& path, std::string& error)
{
    fs::path temp;
    const int fd = openTempBeside(path, "", temp, error);
    if (fd < 0)
        return std::nullopt;
    return PendingFile(fd, std::move(temp), path);
}

PendingFile::PendingFile(PendingFile&& other) noexcept
    : m_fd(std::exchange(other.m_fd, -1)), m_temp(std::move(other.m_temp)), m_target(std::move(other.m_target))
    , m_error(std::move(other.m_error))
{
    other.m_temp.clear();
}

PendingFile::~PendingFile()
{
    if (m_fd >= 0)
        ::close(m_fd);
    if (!m_temp.empty())
        ::unlink(m_temp.c_str());
}

bool PendingFile::write(std::string_view text)
{
    if (!m_error.empty() || m_fd < 0)
        return false;
    int err = 0;
    if (writeOutputFd(m_fd, text, err))
        return true;
    m_error = errnoText("cannot write", m_target, err);
    return false;
}

std::optional<WriteFailure> PendingFile::finish()
{
    if (m_fd >= 0) {
        if (syncDeferred()) {
            // Flushed by the DeferredSync's barrier, once for the whole job.
        } else if (m_error.empty() && injectFullDisk(OutputStep::Fsync))
            m_error = errnoText("cannot write", m_target, ENOSPC);
        else if (m_error.empty() && ::fsync(m_fd) != 0)
            m_error = errnoText("cannot write", m_target, errno);
        const bool closed = ::close(m_fd) == 0;
        const int closeErr = errno;
        if (m_error.empty() && !closed)
            m_error = errnoText("cannot write", m_target, closeErr);
        else if (m_error.empty() && injectFullDisk(OutputStep::Close))
            m_error = errnoText("cannot write", m_target, ENOSPC);
        m_fd = -1;
    }
    if (!m_error.empty())
        return WriteFailure { m_error, false };
    return std::nullopt;
}

std::optional<WriteFailure> PendingFile::claim(const fs::path& path, ReplaceMode mode)
{
    if (m_fd >= 0)
        m_target = path; // finish()'s messages name the file being placed
    std::optional<WriteFailure> failure = finish();
    if (!failure && m_temp.empty())
        failure = WriteFailure { "cannot write " + path.string() + ": the file was already placed", false };
    if (!failure) {
        if (mode == ReplaceMode::Never)
            failure = renameNoReplace(m_temp, path);
        else if (::rename(m_temp.c_str(), path.c_str()) != 0)
            failure = WriteFailure { errnoText("cannot rename " + m_temp.string() + " to", path, errno), false };
    }
    if (failure) {
        // Complete or absent: only a taken name keeps the finished file, for a claim under another name.
        if (!failure->nameTaken && !m_temp.empty()) {
            ::unlink(m_temp.c_str());
            m_temp.clear();
        }
        return failure;
    }
    m_temp.clear();
    syncFolder(folderOf(path));
    return std::nullopt;
}

std::optional<WriteFailure> writeFileAtomically(const fs::path& path, std::string_view text, ReplaceMode mode)
{
    std::string message;
    auto file = PendingFile::create(path, message);
    if (!file)
        return WriteFailure { std::move(message), false };
    file->write(text);
    return file->claim(path, mode); // the temporary file is removed when it was not claimed
}

namespace {

/// The free-name series of writeToFreeName and claimFreeName: `claim(path)` tries one name (nullopt: done).
template<typename Claim>
std::optional<fs::path> firstFreeName(const fs::path& folder, std::string_view stem, std::string_view extension,
                                      std::string& error, Claim claim)
{
    for (int n = 0; n < kMaxFreeNameAttempts; ++n) {
        std::string name(stem);
        if (n > 0)
            name += "_" + std::to_string(n);
        name += extension;
        const fs::path path = folder / name;
        const std::optional<WriteFailure> failure = claim(path);
        if (!failure)
            return path;
        if (!failure->nameTaken) {
            error = failure->message;
            return std::nullopt;
        }
    }
    error = "no free name for " + (folder / (std::string(stem) + std::string(extension))).string() + " after "
        + std::to_string(kMaxFreeNameAttempts) + " tries";
    return std::nullopt;
}

} // namespace

std::optional<fs::path> writeToFreeName(const fs::path& folder, std::string_view stem, std::string_view extension,
                                        std::string_view text, std::string& error)
{
    return firstFreeName(folder, stem, extension, error,
                         [&](const fs::path& path) { return writeFileAtomically(path, text, ReplaceMode::Never); });
}

std::optional<fs::path> claimFreeName(const fs::path& temp, const fs::path& folder, std::string_view stem,
                                      std::string_view extension, std::string& error)
{
    return firstFreeName(folder, stem, extension, error, [&](const fs::path& path) {
        if (auto failure = renameNoReplace(temp, path)) {
            // Name the output, not the temporary file.
            if (!failure->nameTaken) {
                const auto reason = failure->message.rfind(": ");
                failure->message = "cannot write " + path.string()
                    + (reason == std::string::npos ? std::string() : failure->message.substr(reason));
            }
            return std::optional<WriteFailure>(std::move(failure));
        }
        return std::optional<WriteFailure>();
    });
}

} // namespace probescope
