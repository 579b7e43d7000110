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
#include <mutex>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace probescope {

namespace {
Diagnostic ioError(const std::filesystem::path& path, const std::string& what)
{
    return makeError("io.read", fileLocation(path), what);
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

namespace {

/// openRegularFile, with the size its fstat found (MappedFile::open needs no second fstat).
Result<int> openRegularSized(const std::filesystem::path& path, std::uint64_t maxBytes, std::uint64_t& size)
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
        return makeError("io.read", fileLocation(path),
                         std::string("not a regular file: it is ") + fileKind(st.st_mode) + "; refusing to read it");
    }
    if (maxBytes > 0 && static_cast<std::uint64_t>(st.st_size) > maxBytes) {
        ::close(fd);
        return makeError("io.too-large", fileLocation(path),
                         "the file has " + std::to_string(st.st_size) + " bytes, more than the limit of "
                             + std::to_string(maxBytes)
                             + " bytes (set PROBESCOPE_MAX_JSON_BYTES to a larger byte count to read it)");
    }
    // The status flags are known (only O_NONBLOCK of those F_SETFL sets was asked): no F_GETFL first.
    ::fcntl(fd, F_SETFL, 0);
    size = static_cast<std::uint64_t>(st.st_size);
    return fd;
}

} // namespace

Result<int> openRegularFile(const std::filesystem::path& path, std::uint64_t maxBytes)
{
    std::uint64_t size = 0;
    return openRegularSized(path, maxBytes, size);
}

// ---------------------------------------------------------------------------------------------
// The SIGBUS guard (fileio.h, MappedFile). A mapping is registered in a fixed table the signal handler reads
// without locks (only lock-free atomics); a fault inside a registered mapping gets anonymous zero pages over the
// rest of it (MAP_FIXED: the access then completes, reading zeros) and its damaged flag set. The faulting code
// goes on and finishes its pass; the reader checks damaged() afterwards. Nothing jumps across C++ frames.

namespace {

struct GuardSlot
{
    std::atomic<bool> taken { false };
    std::atomic<std::uintptr_t> begin { 0 }; ///< 0: no mapping (being registered or unregistered)
    std::atomic<std::uintptr_t> end { 0 };
    std::atomic<std::atomic<bool>*> damaged { nullptr };
};

// Live guarded mappings at once: two per compare thread for the tensors, a few dump files; beyond this a tensor
// is read with pread (mapRange fails) and a whole-file mapping is left unguarded, as before the guard.
constexpr std::size_t kGuardSlots = 4096;
GuardSlot g_guardSlots[kGuardSlots];
std::atomic<std::size_t> g_guardNext { 0 };
struct sigaction g_previousBusAction {};
std::once_flag g_guardInstalled;
bool g_guardActive = false;
std::atomic<void (*)(const std::filesystem::path&)> g_mapHook { nullptr };

std::uintptr_t pageSize()
{
    static const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
    return page;
}

void onSigbus(int signal, siginfo_t* info, void* context)
{
    const int savedErrno = errno;
    const auto address = reinterpret_cast<std::uintptr_t>(info->si_addr);
    static const std::uintptr_t page = pageSize(); // initialised before the handler was installed
    for (GuardSlot& slot : g_guardSlots) {
        const std::uintptr_t begin = slot.begin.load(std::memory_order_acquire);
        if (begin == 0 || address < begin || address >= slot.end.load(std::memory_order_relaxed))
            continue;
        // Zeros from the faulting page to the mapping's end: every later page past the file's end would fault too.
        const std::uintptr_t from = address & ~(page - 1);
        const std::uintptr_t to = slot.end.load(std::memory_order_relaxed);
        void* zeros = ::mmap(reinterpret_cast<void*>(from), to - from, PROT_READ,
                             MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
        if (zeros != MAP_FAILED) {
            if (std::atomic<bool>* flag = slot.damaged.load(std::memory_order_acquire))
                flag->store(true, std::memory_order_release);
            errno = savedErrno;
            return;
        }
        break;
    }
    // Not a guarded mapping (or no zeros could be placed): what would have happened without the guard.
    if ((g_previousBusAction.sa_flags & SA_SIGINFO) != 0 && g_previousBusAction.sa_sigaction) {
        g_previousBusAction.sa_sigaction(signal, info, context);
    } else if (g_previousBusAction.sa_handler != SIG_DFL && g_previousBusAction.sa_handler != SIG_IGN) {
        g_previousBusAction.sa_handler(signal);
    } else {
        // The default action: returning re-runs the access, which faults again and now ends the process.
        struct sigaction fallback {};
        fallback.sa_handler = SIG_DFL;
        ::sigemptyset(&fallback.sa_mask);
        ::sigaction(SIGBUS, &fallback, nullptr);
    }
    errno = savedErrno;
}

void installGuard()
{
    (void)pageSize();
    struct sigaction action {};
    action.sa_sigaction = onSigbus;
    action.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
    ::sigemptyset(&action.sa_mask);
    g_guardActive = ::sigaction(SIGBUS, &action, &g_previousBusAction) == 0;
}

/// A free slot for [begin, end), or -1 when the table is full (or the handler could not be installed).
int claimGuardSlot(std::uintptr_t begin, std::uintptr_t end, std::atomic<bool>* damaged)
{
    std::call_once(g_guardInstalled, installGuard);
    if (!g_guardActive)
        return -1;
    const std::size_t start = g_guardNext.fetch_add(1, std::memory_order_relaxed);
    for (std::size_t i = 0; i < kGuardSlots; ++i) {
        const std::size_t index = (start + i) % kGuardSlots;
        GuardSlot& slot = g_guardSlots[index];
        bool expected = false;
        if (!slot.taken.compare_exchange_strong(expected, true, std::memory_order_acq_rel))
            continue;
        slot.end.store(end, std::memory_order_relaxed);
        slot.damaged.store(damaged, std::memory_order_relaxed);
        slot.begin.store(begin, std::memory_order_release);
        return static_cast<int>(index);
    }
    return -1;
}

void releaseGuardSlot(int index)
{
    GuardSlot& slot = g_guardSlots[index];
    slot.begin.store(0, std::memory_order_release);
    slot.damaged.store(nullptr, std::memory_order_relaxed);
    slot.taken.store(false, std::memory_order_release);
}

} // namespace

bool MappedFile::guard(const void* base, std::size_t length)
{
    const auto begin = reinterpret_cast<std::uintptr_t>(base);
    const std::uintptr_t end = begin + ((length + pageSize() - 1) & ~(pageSize() - 1));
    m_guardSlot = claimGuardSlot(begin, end, &m_damaged);
    return m_guardSlot >= 0;
}

bool MappedFile::damaged() const
{
    if (m_damaged.load(std::memory_order_acquire))
        return true;
    if (m_fd < 0)
        return false;
    struct stat st {};
    return ::fstat(m_fd, &st) != 0 || static_cast<std::uint64_t>(st.st_size) < m_fileEnd;
}

void MappedFile::setMapHookForTests(void (*hook)(const std::filesystem::path&))
{
    g_mapHook.store(hook);
}

Result<std::shared_ptr<const MappedFile>> MappedFile::mapRange(int fd, const std::filesystem::path& path,
                                                               std::uint64_t offset, std::uint64_t length)
{
    const std::uint64_t page = pageSize();
    const std::uint64_t start = offset & ~(page - 1);
    if (length == 0 || offset + length < offset)
        return ioError(path, "cannot map an empty or impossible range of the file");
    const auto mapLength = static_cast<std::size_t>(offset + length - start);
    void* p = ::mmap(nullptr, mapLength, PROT_READ, MAP_PRIVATE, fd, static_cast<off_t>(start));
    if (p == MAP_FAILED)
        return ioError(path, std::string("cannot map file: ") + std::strerror(errno));
    std::shared_ptr<MappedFile> file(new MappedFile());
    file->m_path = path;
    file->m_base = static_cast<const char*>(p);
    file->m_length = mapLength;
    file->m_mapped = true;
    file->m_data = file->m_base + (offset - start);
    file->m_size = static_cast<std::size_t>(length);
    if (!file->guard(p, mapLength)) {
        file->m_fd = -1; // the destructor unmaps; the caller keeps fd
        return ioError(path, "too many files are mapped at once");
    }
    file->m_fd = fd;
    file->m_fileEnd = offset + length;
    // Read front to back once: aggressive read-ahead on a cold file, pages behind the reader dropped first.
    // (MAP_POPULATE, MADV_WILLNEED and MADV_POPULATE_READ were measured: none cost less; docs/compare-performance.md.)
    ::madvise(p, mapLength, MADV_SEQUENTIAL);
    if (auto* hook = g_mapHook.load())
        hook(path);
    return std::shared_ptr<const MappedFile>(std::move(file));
}

Result<std::shared_ptr<const MappedFile>> MappedFile::open(const std::filesystem::path& path, std::uint64_t maxBytes)
{
    std::uint64_t size = 0;
    auto opened = openRegularSized(path, maxBytes, size);
    if (!opened)
        return opened.error();
    const int fd = *opened;
    std::shared_ptr<MappedFile> file(new MappedFile());
    file->m_path = path;
    file->m_size = static_cast<std::size_t>(size);
    if (file->m_size > 0) {
        void* p = ::mmap(nullptr, file->m_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (p == MAP_FAILED) {
            ::close(fd);
            return ioError(path, std::string("cannot map file: ") + std::strerror(errno));
        }
        // A hint for the kernel's read-ahead, which a file smaller than its first window (128 KiB) never needs.
        constexpr std::size_t kSequentialHintBytes = 128 * 1024;
        if (file->m_size >= kSequentialHintBytes)
            ::madvise(p, file->m_size, MADV_SEQUENTIAL);
        file->m_data = static_cast<const char*>(p);
        file->m_base = file->m_data;
        file->m_length = file->m_size;
        file->m_mapped = true;
        file->guard(p, file->m_size); // a full table leaves it unguarded, as before the guard
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
    if (m_guardSlot >= 0)
        releaseGuardSlot(m_guardSlot);
    if (m_mapped)
        ::munmap(const_cast<char*>(m_base), m_length);
    if (m_fd >= 0)
        ::close(m_fd);
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
