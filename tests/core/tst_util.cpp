// SPDX-License-Identifier: Apache-2.0
// core/util: the helpers every layer shares (profile names, Python number text, text positions, parallelFor,
// file reading, diagnostics) and dump's one folder walker used for run files.
#include "core/dump/dumplayout.h"
#include "core/util/diagnostic.h"
#include "core/util/fileio.h"
#include "core/util/parallel.h"
#include "core/util/profile.h"
#include "core/util/pytext.h"
#include "core/util/textposition.h"

#include "tempdir.h"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <thread>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <limits>
#include <vector>

using namespace probescope;
namespace fs = std::filesystem;

TEST(Profile, CanonicalNamesRoundTrip)
{
    for (Profile p : { Profile::Msprobe12, Profile::Msprobe26, Profile::Ptdbg }) {
        const auto parsed = parseProfile(profileName(p));
        ASSERT_TRUE(parsed.has_value()) << profileName(p);
        EXPECT_EQ(*parsed, p);
    }
    EXPECT_EQ(profileName(Profile::Msprobe12), "msprobe-1.2");
    EXPECT_EQ(profileName(Profile::Msprobe26), "msprobe-26");
    EXPECT_EQ(profileName(Profile::Ptdbg), "ptdbg");
}

TEST(Profile, OldSpellingsStayAliases)
{
    EXPECT_EQ(parseProfile("msprobe12"), Profile::Msprobe12);
    EXPECT_EQ(parseProfile("msprobe26"), Profile::Msprobe26);
    EXPECT_EQ(parseProfile("1.2"), Profile::Msprobe12);
    EXPECT_EQ(parseProfile("26"), Profile::Msprobe26);
    EXPECT_EQ(parseProfile("ptdbg_ascend"), Profile::Ptdbg);
    EXPECT_FALSE(parseProfile("msprobe-9").has_value());
    EXPECT_FALSE(parseProfile("").has_value());
    EXPECT_FALSE(parseProfile("MSPROBE-26").has_value()) << "spellings are exact, as msprobe's are";
}

TEST(PyText, FloatReprMatchesPython)
{
    // Values and texts from CPython 3: repr(x).
    const std::vector<std::pair<double, const char*>> cases = {
        { 0.1, "0.1" },         { 1e-05, "1e-05" },        { 0.0001, "0.0001" },   { 2.0, "2.0" },
        { -0.0, "-0.0" },       { 1e16, "1e+16" },         { 1e15, "1000000000000000.0" },
        { 123.456, "123.456" }, { 1.5e-7, "1.5e-07" },     { 3.141592653589793, "3.141592653589793" },
        { 1e300, "1e+300" },    { -2.5e-310, "-2.5e-310" }, { 0.30000000000000004, "0.30000000000000004" },
    };
    for (const auto& [value, text] : cases)
        EXPECT_EQ(pyFloatRepr(value), text) << value;
    EXPECT_EQ(pyFloatRepr(std::numeric_limits<double>::infinity()), "inf");
    EXPECT_EQ(pyFloatRepr(-std::numeric_limits<double>::infinity()), "-inf");
    EXPECT_EQ(pyFloatRepr(std::nan("")), "nan");
    std::string out = "x=";
    appendPyFloatRepr(out, 0.5);
    EXPECT_EQ(out, "x=0.5");
}

TEST(TextPosition, LinesAndColumnsFromOffsets)
{
    const std::string text = "ab\ncd\n\nef";
    const auto a = locate(text, 0, "f.json");
    EXPECT_EQ(a.line, 1u);
    EXPECT_EQ(a.column, 1u);
    const auto d = locate(text, 4, "f.json");
    EXPECT_EQ(d.line, 2u);
    EXPECT_EQ(d.column, 2u);
    const auto f = locate(text, 8, "f.json");
    EXPECT_EQ(f.line, 4u);
    EXPECT_EQ(f.column, 2u);
    EXPECT_EQ(f.file, "f.json");
}

TEST(Diagnostics, FormatNamesFileLineColumnAndId)
{
    Diagnostic d = makeError("dump.truncated", SourceLocation { "a/dump.json", 10, 3, 7 }, "cut short");
    EXPECT_EQ(d.format(), "a/dump.json:3:7: error [dump.truncated]: cut short");
    EXPECT_TRUE(hasErrors({ d }));
    EXPECT_FALSE(hasErrors({ makeWarning("x.y", {}, "only a warning") }));
}

TEST(Parallel, EveryIndexOnceWhateverTheThreadCount)
{
    for (unsigned threads : { 1u, 2u, 5u }) {
        std::vector<std::atomic<int>> hits(1000);
        ASSERT_TRUE(parallelFor(hits.size(), threads, [&](std::size_t i) { hits[i]++; }));
        for (std::size_t i = 0; i < hits.size(); ++i)
            ASSERT_EQ(hits[i].load(), 1) << "index " << i << " with " << threads << " threads";
    }
    EXPECT_GE(resolveThreadCount(0), 1u);
    EXPECT_EQ(resolveThreadCount(3), 3u);
}

TEST(FileIo, ReadTextFileAndItsErrorsNameTheFile)
{
    probescope::testing::TempDir dir;
    const fs::path file = dir.path() / "small.txt";
    std::ofstream(file) << "hello\n";
    auto text = readTextFile(file);
    ASSERT_TRUE(text.ok()) << text.error().format();
    EXPECT_EQ(*text, "hello\n");
    auto missing = readTextFile(dir.path() / "absent.txt");
    ASSERT_FALSE(missing.ok());
    EXPECT_NE(missing.error().format().find("absent.txt"), std::string::npos);
    EXPECT_EQ(localTimestamp().size(), 14u);
}

TEST(FileIo, LocalTimestampFormatsAGivenTimeInLocalTime)
{
    // The zone is the process's: pin it for the test and put the caller's back.
    const char* before = std::getenv("TZ");
    const std::string saved = before ? before : "";
    setenv("TZ", "UTC0", 1);
    tzset();
    EXPECT_EQ(localTimestamp(std::time_t { 0 }), "19700101000000");
    EXPECT_EQ(localTimestamp(std::time_t { 1767323045 }), "20260102030405");
    EXPECT_EQ(localTimestamp(std::time_t { 1709251199 }), "20240229235959");
    setenv("TZ", "CST-8", 1); // UTC+8, msprobe's usual zone
    tzset();
    EXPECT_EQ(localTimestamp(std::time_t { 1767323045 }), "20260102110405");
    const std::time_t now = std::time(nullptr);
    const std::string stamp = localTimestamp();
    EXPECT_TRUE(stamp == localTimestamp(now) || stamp == localTimestamp(now + 1)) << stamp;
    if (before)
        setenv("TZ", saved.c_str(), 1);
    else
        unsetenv("TZ");
    tzset();
}

TEST(Layout, RunFilesAreFoundAtEveryLevelInOrder)
{
    probescope::testing::TempDir dir;
    const fs::path root = dir.path();
    for (const char* sub : { "", "rank", "step0", "step0/rank1", "step0/rank0", "step10/rank", "step2/rank3" })
        fs::create_directories(root / sub);
    for (const char* sub : { "", "rank", "step0", "step0/rank1", "step0/rank0", "step10/rank", "step2/rank3" })
        std::ofstream(root / sub / "run.csv") << "x\n";
    fs::create_directories(root / "other");
    std::ofstream(root / "other" / "run.csv") << "not in the layout\n";
    const auto found = dump::findInLayout(root, "run.csv");
    std::vector<fs::path> expected;
    for (const char* sub : { "", "rank", "step0", "step0/rank0", "step0/rank1", "step2/rank3", "step10/rank" })
        expected.push_back((root / sub / "run.csv").lexically_normal());
    std::vector<fs::path> normal;
    for (const fs::path& f : found)
        normal.push_back(f.lexically_normal());
    EXPECT_EQ(normal, expected);
    // A file in the layout is itself; another file stands for its folder.
    EXPECT_EQ(dump::findInLayout(root / "step0" / "run.csv", "run.csv"), (std::vector<fs::path> { root / "step0" / "run.csv" }));
    EXPECT_EQ(dump::findInLayout(root / "nothing", "run.csv").size(), 0u);
}

TEST(PyText, JsonStringAsPythonDumpsIt)
{
    // json.dumps("...") in CPython 3 (ensure_ascii=True).
    auto spelled = [](std::string_view s) {
        std::string out;
        appendPyJsonString(out, s);
        return out;
    };
    EXPECT_EQ(spelled("a\"b\\c"), "\"a\\\"b\\\\c\"");
    EXPECT_EQ(spelled("l1\nl2\t\r\b\f"), "\"l1\\nl2\\t\\r\\b\\f\"");
    EXPECT_EQ(spelled(std::string("\x01\x7f", 2)), "\"\\u0001\\u007f\"");
    EXPECT_EQ(spelled("caf\xc3\xa9"), "\"caf\\u00e9\"");                   // one code point, not two bytes
    EXPECT_EQ(spelled("\xe6\xa8\xa1\xe5\x9e\x8b"), "\"\\u6a21\\u578b\""); // 模型
    EXPECT_EQ(spelled("\xf0\x9f\x98\x80"), "\"\\ud83d\\ude00\"");         // a surrogate pair above U+FFFF
    EXPECT_EQ(spelled("\xff"), "\"\\ufffd\"");                             // not UTF-8: the replacement character
    // Plain runs are copied whole: escapes at the start, between runs and at the end.
    EXPECT_EQ(spelled(std::string("\"ab\\cd\x7f" "ef\n\xc3\xa9gh\x01", 15)),
              "\"\\\"ab\\\\cd\\u007fef\\n\\u00e9gh\\u0001\"");
    EXPECT_EQ(spelled(""), "\"\"");
    EXPECT_EQ(spelled("Functional.linear.0.forward.input.0"), "\"Functional.linear.0.forward.input.0\"");
}

// Readers of large files give the pages they went past back (dump.json, stack.json): what they read again must be
// the file's bytes.
TEST(MappedFile, ReleasedPagesReadBackFromTheFile)
{
    probescope::testing::TempDir dir;
    const auto path = dir.path() / "big.bin";
    std::string bytes(std::size_t { 3 } << 20, '\0');
    for (std::size_t i = 0; i < bytes.size(); ++i)
        bytes[i] = static_cast<char>('a' + (i * 7919) % 26);
    {
        std::ofstream out(path, std::ios::binary);
        out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    }
    auto file = MappedFile::open(path);
    ASSERT_TRUE(file.ok());
    ASSERT_EQ((*file)->text(), bytes);
    (*file)->release(bytes.size() / 2 + 123);
    EXPECT_EQ((*file)->text(), bytes);
    (*file)->release(bytes.size() * 2); // past the end: the whole file
    EXPECT_EQ((*file)->text(), bytes);
}

namespace {

/// A file of `size` bytes, each a function of its offset (never 0, so a zero read back is not the file's).
std::string patternFile(const fs::path& path, std::size_t size)
{
    std::string bytes(size, '\0');
    for (std::size_t i = 0; i < size; ++i)
        bytes[i] = static_cast<char>(1 + (i * 7919) % 251);
    std::ofstream out(path, std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    return bytes;
}

/// Every byte of `text`, summed: reads each page (a fault on a page past the file's end happens here).
std::uint64_t touchAll(std::string_view text)
{
    std::uint64_t sum = 0;
    for (const char c : text)
        sum += static_cast<unsigned char>(c);
    return sum;
}

} // namespace

// A range of an open file (a tensor's elements inside a .pt) maps to exactly the file's bytes; the mapping takes the
// descriptor over.
TEST(MappedFile, RangeMapGivesTheFilesBytes)
{
    probescope::testing::TempDir dir;
    const auto path = dir.path() / "range.bin";
    const std::string bytes = patternFile(path, 3 * 4096 + 1234);
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    ASSERT_GE(fd, 0);
    auto mapped = MappedFile::mapRange(fd, path, 4097, 2 * 4096 + 1000);
    ASSERT_TRUE(mapped.ok()) << mapped.error().format();
    EXPECT_EQ((*mapped)->text(), std::string_view(bytes).substr(4097, 2 * 4096 + 1000));
    EXPECT_FALSE((*mapped)->damaged());
    EXPECT_EQ((*mapped)->path(), path);
    // An empty range is refused (the caller reads with pread) and the descriptor stays the caller's.
    const int other = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    ASSERT_GE(other, 0);
    EXPECT_FALSE(MappedFile::mapRange(other, path, 10, 0).ok());
    EXPECT_EQ(::close(other), 0);
}

// The SIGBUS guard: a file cut short by another process while it is mapped is read as zeros past its new end and
// the mapping says it is damaged; the process goes on. Both ways: a cut on a page boundary far before the range's
// end (the pages after it fault), and a cut inside the last page (no fault: only the size check sees it).
TEST(MappedFile, FileCutShortUnderTheMapIsDamagedNotACrash)
{
    probescope::testing::TempDir dir;
    for (const std::size_t cutTo : { std::size_t { 4096 }, std::size_t { 5000 }, std::size_t { 64 * 1024 - 10 } }) {
        const auto path = dir.path() / ("cut" + std::to_string(cutTo) + ".bin");
        const std::string bytes = patternFile(path, 64 * 1024);
        const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
        ASSERT_GE(fd, 0);
        auto mapped = MappedFile::mapRange(fd, path, 100, bytes.size() - 100);
        ASSERT_TRUE(mapped.ok());
        ASSERT_EQ(::truncate(path.c_str(), static_cast<off_t>(cutTo)), 0);
        const std::string_view text = (*mapped)->text();
        const std::uint64_t sum = touchAll(text); // must not end the process
        EXPECT_TRUE((*mapped)->damaged()) << cutTo;
        // What lies before the cut is still the file's; the whole pages past it read as zeros.
        EXPECT_EQ(text.substr(0, cutTo - 100), std::string_view(bytes).substr(100, cutTo - 100));
        const std::size_t firstZeroPage = (cutTo + 4095) / 4096 * 4096;
        if (firstZeroPage < bytes.size()) {
            EXPECT_EQ(text.substr(firstZeroPage - 100), std::string(bytes.size() - firstZeroPage, '\0'));
        }
        EXPECT_LT(sum, touchAll(std::string_view(bytes).substr(100)));
    }
}

// A whole-file mapping (dump.json, a .npy read whole) is guarded too: zeros and damaged(), not a SIGBUS.
TEST(MappedFile, WholeFileMapCutShortIsDamagedNotACrash)
{
    probescope::testing::TempDir dir;
    const auto path = dir.path() / "whole.bin";
    const std::string bytes = patternFile(path, 10 * 4096);
    auto file = MappedFile::open(path);
    ASSERT_TRUE(file.ok());
    EXPECT_FALSE((*file)->damaged());
    ASSERT_EQ(::truncate(path.c_str(), 0), 0);
    EXPECT_EQ(touchAll((*file)->text()), 0u);
    EXPECT_TRUE((*file)->damaged());
}

// Several threads reading their own mappings, each cut short at once: every one is flagged, none is lost.
TEST(MappedFile, GuardHandlesFaultsOnManyThreads)
{
    probescope::testing::TempDir dir;
    constexpr int kThreads = 4;
    std::vector<std::shared_ptr<const MappedFile>> maps;
    for (int t = 0; t < kThreads; ++t) {
        const auto path = dir.path() / ("t" + std::to_string(t) + ".bin");
        patternFile(path, 256 * 1024);
        const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
        ASSERT_GE(fd, 0);
        auto mapped = MappedFile::mapRange(fd, path, 0, 256 * 1024);
        ASSERT_TRUE(mapped.ok());
        maps.push_back(*mapped);
        ASSERT_EQ(::truncate(path.c_str(), 8192), 0);
    }
    std::vector<std::thread> threads;
    std::atomic<std::uint64_t> total { 0 };
    for (int t = 0; t < kThreads; ++t)
        threads.emplace_back([&, t] { total += touchAll(maps[static_cast<std::size_t>(t)]->text()); });
    for (auto& thread : threads)
        thread.join();
    for (const auto& map : maps)
        EXPECT_TRUE(map->damaged());
    EXPECT_GT(total.load(), 0u);
}

// A SIGBUS outside every guarded mapping keeps its default action: the guard hides nothing but its own mappings.
TEST(MappedFileDeathTest, SigbusOutsideTheGuardedMappingsStillEndsTheProcess)
{
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    probescope::testing::TempDir dir;
    const auto path = dir.path() / "raw.bin";
    patternFile(path, 4 * 4096);
    // The guard is installed (a guarded mapping exists), then a raw mapping of another file is cut short.
    auto guarded = MappedFile::open(path);
    ASSERT_TRUE(guarded.ok());
    const auto rawPath = dir.path() / "unguarded.bin";
    patternFile(rawPath, 4 * 4096);
    EXPECT_EXIT(
        {
            const int fd = ::open(rawPath.c_str(), O_RDONLY | O_CLOEXEC);
            void* p = ::mmap(nullptr, 4 * 4096, PROT_READ, MAP_PRIVATE, fd, 0);
            if (fd < 0 || p == MAP_FAILED || ::truncate(rawPath.c_str(), 0) != 0)
                std::_Exit(3);
            const volatile char* bytes = static_cast<const char*>(p);
            std::_Exit(bytes[2 * 4096] == 0 ? 4 : 5); // faults: SIGBUS with its default action
        },
        // Killed by SIGBUS; under a sanitizer its own SIGBUS handler (installed before ours, and called by it)
        // reports and exits instead, or aborts (ASAN_OPTIONS=abort_on_error=1, as the dev-asan test preset sets).
        // Never one of the child's own exits (3, or 4/5: the fault was swallowed).
        [](int status) {
            return (WIFSIGNALED(status) && (WTERMSIG(status) == SIGBUS || WTERMSIG(status) == SIGABRT))
                || (WIFEXITED(status) && WEXITSTATUS(status) != 0 && WEXITSTATUS(status) != 3
                    && WEXITSTATUS(status) != 4 && WEXITSTATUS(status) != 5);
        },
        "");
}


namespace {

/// How many of the pages holding bytes [from, to) of `fd` are in the page cache (mincore over a mapping, which
/// reads nothing).
std::size_t cachedPages(int fd, std::size_t from, std::size_t to)
{
    const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    const std::size_t start = from / page * page;
    const std::size_t length = to - start;
    void* p = ::mmap(nullptr, length, PROT_READ, MAP_SHARED, fd, static_cast<off_t>(start));
    if (p == MAP_FAILED)
        return 0;
    std::vector<unsigned char> resident((length + page - 1) / page);
    std::size_t count = 0;
    if (::mincore(p, length, resident.data()) == 0) {
        for (const unsigned char r : resident)
            count += r & 1u;
    }
    ::munmap(p, length);
    return count;
}

std::size_t pagesOf(std::size_t from, std::size_t to)
{
    const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    return (to + page - 1) / page - from / page;
}

/// A pattern file of `size` bytes written, flushed and dropped from the page cache; its descriptor, or -1 when the
/// file system keeps it cached anyway (tmpfs), for the test to skip.
int coldFile(const fs::path& path, std::size_t size, std::string* bytes = nullptr)
{
    const std::string written = patternFile(path, size);
    if (bytes)
        *bytes = written;
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ::fdatasync(fd);
    ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    if (cachedPages(fd, 0, size) > pagesOf(0, size) / 10) {
        ::close(fd);
        return -1;
    }
    return fd;
}

bool closed(int fd)
{
    return ::fcntl(fd, F_GETFD) == -1 && errno == EBADF;
}

constexpr std::size_t kMiB = std::size_t { 1 } << 20;

} // namespace

// A stream about to read a cold file gets its first 4 MiB and its last window (a .pt's zip directory) read now; the
// bytes read afterwards are the file's; a warm file is left alone.
TEST(ReadAhead, ColdFileHasItsFirstAndLastWindowReadNow)
{
    probescope::testing::TempDir dir;
    std::string bytes;
    const int fd = coldFile(dir.path() / "cold.bin", 9 * kMiB + 123, &bytes);
    if (fd < 0)
        GTEST_SKIP() << "this file system keeps written files in the page cache";
    readAheadUnlessCached(fd, 0, bytes.size());
    EXPECT_EQ(cachedPages(fd, 0, 4 * kMiB), pagesOf(0, 4 * kMiB));
    EXPECT_EQ(cachedPages(fd, 8 * kMiB, bytes.size()), pagesOf(8 * kMiB, bytes.size()));
    std::string back(bytes.size(), '\0');
    ASSERT_EQ(::pread(fd, back.data(), back.size(), 0), static_cast<ssize_t>(back.size()));
    EXPECT_EQ(back, bytes);
    readAheadUnlessCached(fd, 0, bytes.size()); // warm: nothing to do, nothing changes
    EXPECT_EQ(cachedPages(fd, 0, bytes.size()), pagesOf(0, bytes.size()));
    ::close(fd);
}

// The next row's files: the whole file is read by the background thread, which closes the descriptor it was given.
TEST(ReadAhead, BackgroundReadsTheWholeFileAndClosesIt)
{
    probescope::testing::TempDir dir;
    const std::size_t size = 6 * kMiB + 77;
    const int fd = coldFile(dir.path() / "next.bin", size);
    if (fd < 0)
        GTEST_SKIP() << "this file system keeps written files in the page cache";
    const int handed = ::dup(fd);
    ASSERT_GE(handed, 0);
    readAheadInBackground(handed, 0, size);
    waitForBackgroundReadAhead();
    EXPECT_EQ(cachedPages(fd, 0, size), pagesOf(0, size));
    EXPECT_TRUE(closed(handed));
    ::close(fd);
}

// Read-ahead is a hint: a file cut short after it was opened, a pipe, and more requests than the queue holds end
// with every descriptor closed and no signal (nothing is touched through a mapping), never a hang.
TEST(ReadAhead, CutFilesPipesAndAFullQueueAreHarmless)
{
    probescope::testing::TempDir dir;
    const auto path = dir.path() / "cut.bin";
    patternFile(path, 6 * kMiB);
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    ASSERT_GE(fd, 0);
    ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    fs::resize_file(path, kMiB + 5);
    readAheadUnlessCached(fd, 0, 6 * kMiB);
    std::vector<int> handed;
    for (int i = 0; i < 40; ++i) {
        handed.push_back(::dup(fd));
        ASSERT_GE(handed.back(), 0);
        readAheadInBackground(handed.back(), 0, 6 * kMiB);
    }
    int pipeEnds[2];
    ASSERT_EQ(::pipe(pipeEnds), 0);
    readAheadUnlessCached(pipeEnds[0], 0, 4 * kMiB);
    readAheadInBackground(pipeEnds[0], 0, 4 * kMiB);
    waitForBackgroundReadAhead();
    for (const int h : handed)
        EXPECT_TRUE(closed(h));
    EXPECT_TRUE(closed(pipeEnds[0]));
    ::close(pipeEnds[1]);
    char first = 0;
    EXPECT_EQ(::pread(fd, &first, 1, 0), 1);
    EXPECT_EQ(first, static_cast<char>(1));
    ::close(fd);
}
