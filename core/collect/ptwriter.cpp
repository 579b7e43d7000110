// SPDX-License-Identifier: Apache-2.0
// torch.save's zip layout written without LibTorch: LibTorch's own writer (torch::pickle_save) builds
// the whole archive in a std::vector first, which costs a copy of every tensor and its memory.
#include "ptwriter.h"

#include "core/util/outputfile.h"

#include <zlib.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <initializer_list>
#include <mutex>
#include <thread>
#include <utility>
#include <cerrno>
#include <climits>
#include <limits>
#include <string>
#include <system_error>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace probescope::collect {

std::uint32_t crc32Of(const void* data, std::size_t bytes)
{
    // zlib takes uInt lengths: feed it in pieces below 4 GiB.
    uLong crc = ::crc32(0L, Z_NULL, 0);
    const auto* p = static_cast<const Bytef*>(data);
    while (bytes > 0) {
        const std::size_t n = bytes < (std::size_t(1) << 30) ? bytes : (std::size_t(1) << 30);
        crc = ::crc32(crc, p, static_cast<uInt>(n));
        p += n;
        bytes -= n;
    }
    return static_cast<std::uint32_t>(crc);
}

namespace {

constexpr std::uint64_t kZip32Max = 0xFFFFFFFFu;
constexpr std::uint64_t kAlignment = 64; // torch's PyTorchStreamWriter aligns record data to 64 bytes

void putLe(std::string& out, std::uint64_t v, int bytes)
{
    for (int i = 0; i < bytes; ++i)
        out += static_cast<char>((v >> (8 * i)) & 0xffu);
}

/// A zip structure: its fields (value, width in bytes) in order, little endian.
void putFields(std::string& out, std::initializer_list<std::pair<std::uint64_t, int>> fields)
{
    for (const auto& [value, width] : fields)
        putLe(out, value, width);
}

/// The protocol-2 pickle Python's pickler writes for torch.save(tensor): every string, global and
/// non-empty tuple is memoized with BINPUT n, n counting from 0.
class TensorPickle
{
public:
    std::string build(std::string_view storageType, const std::vector<std::int64_t>& shape)
    {
        std::vector<std::int64_t> stride(shape.size());
        std::int64_t numel = 1;
        for (std::size_t i = shape.size(); i-- > 0;) {
            stride[i] = numel;
            numel *= shape[i];
        }
        m_out = "\x80\x02";
        global("torch._utils", "_rebuild_tensor_v2");
        m_out += "((";
        text("storage");
        global("torch", storageType);
        text("0");
        text("cpu");
        integer(numel);
        m_out += 't';
        memoize();
        m_out += 'Q'; // BINPERSID: the storage is the record data/0
        integer(0);   // storage offset
        tuple(shape);
        tuple(stride);
        m_out += '\x89'; // NEWFALSE: requires_grad
        global("collections", "OrderedDict");
        m_out += ")R"; // OrderedDict(): backward hooks
        memoize();
        m_out += 't';
        memoize();
        m_out += 'R';
        memoize();
        m_out += '.';
        return std::move(m_out);
    }

private:
    void memoize()
    {
        m_out += 'q';
        m_out += static_cast<char>(m_memo++); // a tensor pickle has far fewer than 256 memo entries
    }
    void global(std::string_view module, std::string_view name)
    {
        m_out += 'c';
        m_out += module;
        m_out += '\n';
        m_out += name;
        m_out += '\n';
        memoize();
    }
    void text(std::string_view s)
    {
        m_out += 'X';
        putLe(m_out, s.size(), 4);
        m_out += s;
        memoize();
    }
    void integer(std::int64_t v)
    {
        if (v >= 0 && v <= 0xff) {
            m_out += 'K';
            putLe(m_out, static_cast<std::uint64_t>(v), 1);
        } else if (v >= 0 && v <= 0xffff) {
            m_out += 'M';
            putLe(m_out, static_cast<std::uint64_t>(v), 2);
        } else if (v >= INT32_MIN && v <= INT32_MAX) {
            m_out += 'J';
            putLe(m_out, static_cast<std::uint32_t>(static_cast<std::int32_t>(v)), 4);
        } else {
            // LONG1: the shortest two's complement bytes, little endian (pickle's encode_long).
            std::string bytes;
            std::int64_t rest = v;
            for (;;) {
                bytes += static_cast<char>(rest & 0xff);
                rest >>= 8;
                const bool signBit = (static_cast<unsigned char>(bytes.back()) & 0x80u) != 0;
                if ((rest == 0 && !signBit) || (rest == -1 && signBit))
                    break;
            }
            m_out += '\x8a';
            m_out += static_cast<char>(bytes.size());
            m_out += bytes;
        }
    }
    void tuple(const std::vector<std::int64_t>& values)
    {
        if (values.empty()) {
            m_out += ')'; // EMPTY_TUPLE, which Python does not memoize
            return;
        }
        if (values.size() > 3)
            m_out += '(';
        for (const std::int64_t v : values)
            integer(v);
        static constexpr std::array<char, 4> kTupleOf = { 0, '\x85', '\x86', '\x87' };
        m_out += values.size() > 3 ? 't' : kTupleOf[values.size()];
        memoize();
    }

    std::string m_out;
    int m_memo = 0;
};

struct Record
{
    std::string name;
    std::uint64_t size = 0;
    std::uint32_t crc = 0;
    std::uint64_t headerOffset = 0;
};

/// Appends a local header for `r` at the current end of `out` (which starts at `base` in the file),
/// padded so that the record data that follows starts on a 64-byte boundary.
void localHeader(std::string& out, std::uint64_t base, Record& r)
{
    r.headerOffset = base + out.size();
    const bool zip64 = r.size >= kZip32Max;
    std::string extra;
    if (zip64)
        putFields(extra, { { 0x0001, 2 }, { 16, 2 }, { r.size, 8 }, { r.size, 8 } });
    const std::uint64_t before = r.headerOffset + 30 + r.name.size() + extra.size() + 4;
    const std::uint64_t pad = (kAlignment - before % kAlignment) % kAlignment;
    putLe(extra, 0x4246, 2); // "FB": the padding field torch writes
    putLe(extra, pad, 2);
    extra.append(static_cast<std::size_t>(pad), 'Z');

    const std::uint64_t size32 = zip64 ? kZip32Max : r.size;
    // signature, version needed, flags, method (stored), time+date, CRC, sizes, name and extra lengths
    putFields(out, { { 0x04034b50, 4 }, { zip64 ? 45 : 20, 2 }, { 0, 2 }, { 0, 2 }, { 0, 4 }, { r.crc, 4 },
                     { size32, 4 }, { size32, 4 }, { r.name.size(), 2 }, { extra.size(), 2 } });
    out += r.name;
    out += extra;
}

void centralDirectory(std::string& out, std::uint64_t base, const std::vector<Record>& records)
{
    const std::uint64_t cdOffset = base + out.size();
    for (const Record& r : records) {
        const bool bigSize = r.size >= kZip32Max;
        const bool bigOffset = r.headerOffset >= kZip32Max;
        std::string extra;
        if (bigSize || bigOffset) {
            putFields(extra, { { 0x0001, 2 }, { (bigSize ? 16 : 0) + (bigOffset ? 8 : 0), 2 } });
            if (bigSize)
                putFields(extra, { { r.size, 8 }, { r.size, 8 } });
            if (bigOffset)
                putLe(extra, r.headerOffset, 8);
        }
        const std::uint64_t version = bigSize || bigOffset ? 45 : 20;
        const std::uint64_t size32 = bigSize ? kZip32Max : r.size;
        // signature, made by, needed, flags, method, time+date, CRC, sizes, lengths of name, extra and
        // comment, disk, internal and external attributes, local header offset
        putFields(out, { { 0x02014b50, 4 }, { version, 2 }, { version, 2 }, { 0, 2 }, { 0, 2 }, { 0, 4 },
                         { r.crc, 4 }, { size32, 4 }, { size32, 4 }, { r.name.size(), 2 }, { extra.size(), 2 },
                         { 0, 2 }, { 0, 2 }, { 0, 2 }, { 0, 4 }, { bigOffset ? kZip32Max : r.headerOffset, 4 } });
        out += r.name;
        out += extra;
    }
    const std::uint64_t cdSize = base + out.size() - cdOffset;
    const bool zip64 = cdOffset >= kZip32Max || cdSize >= kZip32Max;
    if (zip64) {
        const std::uint64_t zip64End = base + out.size();
        // zip64 end record (size 44, made by / needed 4.5, disks, entries, directory size and offset),
        // then its locator (disk, offset, disk count)
        putFields(out, { { 0x06064b50, 4 }, { 44, 8 }, { 45, 2 }, { 45, 2 }, { 0, 4 }, { 0, 4 }, { records.size(), 8 },
                         { records.size(), 8 }, { cdSize, 8 }, { cdOffset, 8 } });
        putFields(out, { { 0x07064b50, 4 }, { 0, 4 }, { zip64End, 8 }, { 1, 4 } });
    }
    // end record: disks, entries on this disk and in all, directory size and offset, comment length
    putFields(out, { { 0x06054b50, 4 }, { 0, 2 }, { 0, 2 }, { records.size(), 2 }, { records.size(), 2 },
                     { zip64 ? kZip32Max : cdSize, 4 }, { zip64 ? kZip32Max : cdOffset, 4 }, { 0, 2 } });
}

Diagnostic ioError(const fs::path& path, const std::string& what, int err)
{
    return makeError("collect.io", fileLocation(path),
                     what + ": " + std::generic_category().message(err));
}

// ---- The slow-disk test seam (PROBESCOPE_TEST_DISK_MBPS); 0 = off.
std::atomic<std::uint64_t> g_diskBytesPerSecond { 0 };

std::uint64_t testDiskSpeed()
{
    static std::once_flag once;
    std::call_once(once, [] {
        if (const char* spec = std::getenv("PROBESCOPE_TEST_DISK_MBPS")) {
            char* end = nullptr;
            const double mbps = std::strtod(spec, &end);
            if (end != spec && *end == '\0' && mbps > 0)
                g_diskBytesPerSecond = static_cast<std::uint64_t>(mbps * 1e6);
        }
    });
    return g_diskBytesPerSecond.load(std::memory_order_relaxed);
}

/// writeAllv() as a disk of `rate` bytes per second takes it: pieces of ~10 ms, each followed by a sleep
/// up to the time the disk would have needed so far.
std::optional<Diagnostic> writeThrottled(int fd, const std::array<iovec, 3>& parts, const fs::path& path,
                                         std::uint64_t rate)
{
    const auto t0 = std::chrono::steady_clock::now();
    const std::size_t piece = std::max<std::size_t>(4096, static_cast<std::size_t>(rate / 100));
    std::uint64_t done = 0;
    for (const iovec& part : parts) {
        const char* p = static_cast<const char*>(part.iov_base);
        std::size_t left = part.iov_len;
        while (left > 0) {
            if (injectFullDisk(OutputStep::Write))
                return ioError(path, "cannot write", ENOSPC);
            const ssize_t n = ::write(fd, p, std::min(left, piece));
            if (n < 0) {
                if (errno == EINTR)
                    continue;
                return ioError(path, "cannot write", errno);
            }
            p += n;
            left -= static_cast<std::size_t>(n);
            done += static_cast<std::uint64_t>(n);
            std::this_thread::sleep_until(t0 + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                   std::chrono::duration<double>(static_cast<double>(done) / static_cast<double>(rate))));
        }
    }
    return std::nullopt;
}

std::optional<Diagnostic> writeAllv(int fd, std::array<iovec, 3> parts, const fs::path& path)
{
    if (const std::uint64_t rate = testDiskSpeed())
        return writeThrottled(fd, parts, path, rate);
    std::size_t first = 0;
    while (first < parts.size()) {
        if (parts[first].iov_len == 0) {
            ++first;
            continue;
        }
        if (injectFullDisk(OutputStep::Write)) // the full-disk test seam (docs/reliability.md)
            return ioError(path, "cannot write", ENOSPC);
        const ssize_t n = ::writev(fd, parts.data() + first, static_cast<int>(parts.size() - first));
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return ioError(path, "cannot write", errno);
        }
        auto done = static_cast<std::size_t>(n);
        while (done > 0 && first < parts.size()) {
            const std::size_t step = done < parts[first].iov_len ? done : parts[first].iov_len;
            parts[first].iov_base = static_cast<char*>(parts[first].iov_base) + step;
            parts[first].iov_len -= step;
            done -= step;
            if (parts[first].iov_len == 0)
                ++first;
        }
    }
    return std::nullopt;
}

} // namespace

std::optional<Diagnostic> writePt(const fs::path& path, const PtTensorBytes& t, std::optional<std::uint32_t> crc)
{
    const std::string stem = path.stem().string();
    const std::string pickle = TensorPickle().build(t.storageType, t.shape);
    static constexpr std::string_view kVersion = "3\n";

    std::vector<Record> records(3);
    records[0] = { stem + "/data.pkl", pickle.size(), crc32Of(pickle.data(), pickle.size()), 0 };
    records[1] = { stem + "/data/0", t.bytes, crc ? *crc : crc32Of(t.data, t.bytes), 0 };
    records[2] = { stem + "/version", kVersion.size(), crc32Of(kVersion.data(), kVersion.size()), 0 };

    std::string head;
    localHeader(head, 0, records[0]);
    head += pickle;
    localHeader(head, 0, records[1]);
    const std::uint64_t tailBase = head.size() + t.bytes;
    std::string tail;
    localHeader(tail, tailBase, records[2]);
    tail += kVersion;
    centralDirectory(tail, tailBase, records);

    // The collector owns its rank folder (claimed fresh, dumpfolder.h) and may write a name twice in a run (a
    // parameter's gradient under gradient accumulation, as msprobe's dumper does), but always as a new file:
    // the old file is unlinked, never truncated, so a hard link to it (the Python module links repeated
    // tensors) keeps its content; anything else at the name (a symlink planted there) is refused, never
    // followed or removed. A file it could not finish (a full disk) is removed, not left cut short under its
    // name for a compare to read.
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    int err = errno;
    struct stat st {};
    if (fd < 0 && err == EEXIST && ::lstat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::unlink(path.c_str()) == 0) {
        fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        err = errno;
    }
    if (fd < 0)
        return ioError(path, "cannot create", err);
    std::array<iovec, 3> parts { iovec { head.data(), head.size() },
                                 iovec { const_cast<void*>(t.data), t.bytes },
                                 iovec { tail.data(), tail.size() } };
    auto problem = writeAllv(fd, parts, path);
    if (::close(fd) != 0 && !problem)
        problem = ioError(path, "cannot close", errno);
    if (!problem && injectFullDisk(OutputStep::Close))
        problem = ioError(path, "cannot close", ENOSPC);
    if (problem)
        ::unlink(path.c_str());
    return problem;
}

void setTestDiskSpeed(std::uint64_t bytesPerSecond)
{
    testDiskSpeed(); // so that a later first use does not override the test's setting
    g_diskBytesPerSecond = bytesPerSecond;
}

} // namespace probescope::collect
