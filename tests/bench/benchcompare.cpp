// SPDX-License-Identifier: Apache-2.0
//
// probescope-benchcompare: measures the real-data (tensor-mode) compare of one NPU/bench dump pair.
//
//   probescope-benchcompare NPU_DUMP_JSON BENCH_DUMP_JSON [--threads N] [--repeat K] [--profile-load]
//                           [--expect-rows N] [--expect-min-rows N] [--write-csv DIR]
//
// Each repetition reads both dump.json files and runs probescope::compare::compareDumps, as the
// application does; the best repetition is reported, split into reading and comparing. --profile-load
// then reads every .pt file of both dump_tensor_data folders once more, first as raw bytes and then
// through tensor::loadPt, on the same number of threads, to tell whether file loading dominates.
//
// One thread count per process: peak RSS (VmHWM) is a per-process high-water mark. Speed is only ever
// checked here, never by timed unit tests; --expect-rows lets a ctest smoke test prove that the
// generator and the engine agree (every tensor file found and read) without timing anything.

#include "benchargs.h"
#include "procstatus.h"

#include "core/compare/msprobe12/compare.h"
#include "core/compare/pipeline/comparerun.h"
#include "core/compare/table/comparetable.h"
#include "core/dump/dumpfile.h"
#include "core/tensor/tensor.h"
#include "core/util/outputfile.h"
#include "core/util/parallel.h"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include <fcntl.h>
#include <time.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace probescope::bench {
namespace {

constexpr double kGoalSeconds = 0.5; // issue goal: under 0.5 s
constexpr double kGoalMiB = 200.0;   // issue goal: at most 200 MiB
constexpr double kMiB = 1024.0 * 1024.0;

struct Options
{
    fs::path npu;
    fs::path bench;
    unsigned threads = 1;
    int repeat = 3;
    bool profileLoad = false;
    std::optional<std::uint64_t> expectRows;
    std::optional<std::uint64_t> expectMinRows;
    std::optional<fs::path> writeCsv; ///< --write-csv DIR: time the CSV writer on the first table
};

void timeCsvWriter(const compare::CompareTable& table, const fs::path& dir);

/// CPU time of the process (user + system, all threads): steadier than wall time on a shared machine.
double cpuSeconds()
{
    timespec ts {};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

using Clock = std::chrono::steady_clock;

double since(Clock::time_point start)
{
    return std::chrono::duration<double>(Clock::now() - start).count();
}

struct Run
{
    double read = 0;    ///< both dump.json files, wall
    double compare = 0; ///< compareDumps, wall
    double cpu = 0;     ///< read + compare, CPU
    double total() const { return read + compare; }
};

/// What the table says, to check that the engine found and read every file the generator wrote.
struct TableSummary
{
    std::uint64_t rows = 0;
    std::uint64_t tensorRows = 0; ///< rows with a Data_name other than "-1"
    std::uint64_t notReached = 0; ///< Accuracy Reached or Not == "No"
    std::uint64_t notFound = 0;   ///< Err_message says a file was not found
    std::uint64_t unmatched = 0;
    std::size_t diagnostics = 0;
};

std::optional<std::string_view> textCell(const compare::CompareTable& table, std::size_t row, int column)
{
    if (column < 0)
        return std::nullopt;
    const compare::CellView cell = table.rows.view(row, std::size_t(column));
    return cell.isString() ? std::optional(cell.text) : std::nullopt;
}

TableSummary summarize(const compare::CompareTable& table)
{
    TableSummary s;
    s.rows = table.rows.size();
    s.diagnostics = table.diagnostics.size();
    const int dataName = table.column("Data_name");
    const int accuracy = table.column("Accuracy Reached or Not");
    const int message = table.column("Err_message");
    for (std::size_t r = 0; r < table.rows.size(); ++r) {
        if (const auto t = textCell(table, r, dataName); t && *t != "-1")
            ++s.tensorRows;
        if (const auto t = textCell(table, r, accuracy); t && *t == "No")
            ++s.notReached;
        if (const auto t = textCell(table, r, message); t && t->find("not found") != std::string_view::npos)
            ++s.notFound;
        if (!table.matched[r])
            ++s.unmatched;
    }
    return s;
}

struct LoadProfile
{
    std::uint64_t files = 0;
    std::uint64_t bytes = 0;
    std::uint64_t failures = 0;
    double list = 0;    ///< listing both folders
    double rawRead = 0; ///< open + read + close of every file, wall
    double loadPt = 0;  ///< tensor::loadPt of every file, wall
    double loadPtCpu = 0;
};

std::vector<fs::path> listPt(const fs::path& dir)
{
    std::vector<fs::path> files;
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
        if (it->path().extension() == ".pt")
            files.push_back(it->path());
    std::sort(files.begin(), files.end());
    return files;
}

/// Reads a whole file with plain syscalls: the floor any .pt reader pays per file.
std::uint64_t readRaw(const fs::path& path, std::vector<char>& buffer)
{
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    std::uint64_t total = 0;
    for (;;) {
        const ssize_t n = ::read(fd, buffer.data(), buffer.size());
        if (n <= 0)
            break;
        total += std::uint64_t(n);
    }
    ::close(fd);
    return total;
}

LoadProfile profileLoad(const Options& opt, const fs::path& npuTensorDir, const fs::path& benchTensorDir)
{
    LoadProfile p;
    auto start = Clock::now();
    std::vector<fs::path> files = listPt(npuTensorDir);
    for (auto& f : listPt(benchTensorDir))
        files.push_back(std::move(f));
    p.list = since(start);
    p.files = files.size();

    std::atomic<std::uint64_t> bytes { 0 };
    start = Clock::now();
    parallelFor(files.size(), opt.threads, [&](std::size_t i) {
        thread_local std::vector<char> buffer(1 << 16);
        bytes += readRaw(files[i], buffer);
    });
    p.rawRead = since(start);
    p.bytes = bytes;

    std::atomic<std::uint64_t> failures { 0 };
    const double cpuStart = cpuSeconds();
    start = Clock::now();
    parallelFor(files.size(), opt.threads, [&](std::size_t i) {
        if (!tensor::loadPt(files[i]))
            ++failures;
    });
    p.loadPt = since(start);
    p.loadPtCpu = cpuSeconds() - cpuStart;
    p.failures = failures;
    return p;
}

const char* verdict(bool ok)
{
    return ok ? "met" : "NOT met";
}

int runBench(const Options& opt)
{
    // Before any work: what the process costs just for existing (mostly LibTorch's mapped code pages).
    const double startRssMiB = double(procStatusBytes("VmRSS")) / kMiB;
    const double startFileMiB = double(procStatusBytes("RssFile")) / kMiB;
    std::printf("pair: %s\n      %s\n", opt.npu.c_str(), opt.bench.c_str());
    std::printf("threads: %u, repeat: %d\n", opt.threads, opt.repeat);

    std::optional<Run> best;
    std::optional<TableSummary> summary;
    for (int rep = 0; rep < opt.repeat; ++rep) {
        Run run;
        const double cpuStart = cpuSeconds();
        auto start = Clock::now();
        auto npu = dump::readDumpJson(opt.npu);
        if (!npu) {
            std::fprintf(stderr, "probescope-benchcompare: %s: %s\n", opt.npu.c_str(), npu.error().message.c_str());
            return 1;
        }
        auto bench = dump::readDumpJson(opt.bench);
        if (!bench) {
            std::fprintf(stderr, "probescope-benchcompare: %s: %s\n", opt.bench.c_str(), bench.error().message.c_str());
            return 1;
        }
        run.read = since(start);

        compare::CompareOptions options;
        options.threads = opt.threads;
        start = Clock::now();
        auto table = compare::compareDumps(**npu, **bench, options);
        run.compare = since(start);
        run.cpu = cpuSeconds() - cpuStart;
        if (!table) {
            std::fprintf(stderr, "probescope-benchcompare: compare failed: %s\n", table.error().message.c_str());
            return 1;
        }
        if (!summary) {
            summary = summarize(**table);
            std::printf("entries: %zu NPU, %zu bench\n", (*npu)->entries.size(), (*bench)->entries.size());
            if (opt.writeCsv)
                timeCsvWriter(**table, *opt.writeCsv);
            // The compact row store's heap (docs/compare-performance.md, "Compact result table").
            const std::size_t bytes = (*table)->rows.memoryBytes();
            std::printf("table cells: %.1f MiB, %.0f bytes a row\n", double(bytes) / kMiB,
                        (*table)->rows.empty() ? 0.0 : double(bytes) / double((*table)->rows.size()));
        }
        std::printf("  run %d: %.3f s (read %.3f s + compare %.3f s), CPU %.3f s\n", rep + 1, run.total(), run.read,
                    run.compare, run.cpu);
        if (!best || run.total() < best->total())
            best = run;
    }
    // Read after every repetition has freed its table: the high-water mark covers the worst one.
    const double peakMiB = double(procStatusBytes("VmHWM")) / kMiB;
    const double endFileMiB = double(procStatusBytes("RssFile")) / kMiB;

    const TableSummary& s = *summary;
    std::printf("rows: %llu (tensor rows: %llu, unmatched: %llu, accuracy not reached: %llu, file not found: %llu, "
                "diagnostics: %zu)\n",
                static_cast<unsigned long long>(s.rows), static_cast<unsigned long long>(s.tensorRows),
                static_cast<unsigned long long>(s.unmatched), static_cast<unsigned long long>(s.notReached),
                static_cast<unsigned long long>(s.notFound), s.diagnostics);
    std::printf("best wall time: %.3f s (read dump.json x2: %.3f s = %.0f%%, compare: %.3f s = %.0f%%)\n",
                best->total(), best->read, 100.0 * best->read / best->total(), best->compare,
                100.0 * best->compare / best->total());
    std::printf("CPU time of that run: %.3f s\n", best->cpu);
    std::printf("peak RSS (VmHWM): %.1f MiB (at start: %.1f MiB, %.1f MiB of it file-backed; file-backed at end: "
                "%.1f MiB)\n",
                peakMiB, startRssMiB, startFileMiB, endFileMiB);
    // No ratio against msprobe here: a ratio is printed only against a reference run measured in the same
    // invocation (issue 26), never against a figure quoted from elsewhere.
    std::printf("goal wall < %.1f s: %s\n", kGoalSeconds, verdict(best->total() < kGoalSeconds));
    std::printf("goal peak <= %.0f MiB: %s\n", kGoalMiB, verdict(peakMiB <= kGoalMiB));

    if (opt.profileLoad) {
        const LoadProfile p = profileLoad(opt, opt.npu.parent_path() / "dump_tensor_data",
                                          opt.bench.parent_path() / "dump_tensor_data");
        const double perFile = p.files ? 1e6 / double(p.files) : 0;
        std::printf("load profile: %llu .pt files, %.1f MB, listed in %.3f s\n", static_cast<unsigned long long>(p.files),
                    double(p.bytes) / 1e6, p.list);
        std::printf("  raw read (open/read/close): %.3f s, %.1f us per file\n", p.rawRead, p.rawRead * perFile);
        std::printf("  tensor::loadPt:             %.3f s, %.1f us per file (CPU %.3f s)%s\n", p.loadPt,
                    p.loadPt * perFile, p.loadPtCpu,
                    p.failures ? (" -- " + std::to_string(p.failures) + " files failed").c_str() : "");
        std::printf("  loadPt share of the compare: %.0f%%; of the whole run: %.0f%% (raw reads alone: %.0f%%)\n",
                    100.0 * p.loadPt / best->compare, 100.0 * p.loadPt / best->total(),
                    100.0 * p.rawRead / best->total());
        std::printf("  loadPt beyond the raw read: %.1f us per file\n", (p.loadPt - p.rawRead) * perFile);
    }

    int rc = 0;
    if (opt.expectRows && s.rows != *opt.expectRows) {
        std::fprintf(stderr, "probescope-benchcompare: expected %llu rows, got %llu\n",
                     static_cast<unsigned long long>(*opt.expectRows), static_cast<unsigned long long>(s.rows));
        rc = 3;
    }
    if (opt.expectMinRows && s.rows < *opt.expectMinRows) {
        std::fprintf(stderr, "probescope-benchcompare: expected at least %llu rows, got %llu\n",
                     static_cast<unsigned long long>(*opt.expectMinRows), static_cast<unsigned long long>(s.rows));
        rc = 3;
    }
    // With an expectation the pair is a generated one: every file must be found, every entry matched,
    // and the injected error must show.
    if (rc == 0 && (opt.expectRows || opt.expectMinRows) && (s.notFound || s.unmatched || s.notReached == 0)) {
        std::fprintf(stderr, "probescope-benchcompare: the generated pair did not compare as expected "
                             "(not found: %llu, unmatched: %llu, accuracy not reached: %llu, expected > 0)\n",
                     static_cast<unsigned long long>(s.notFound), static_cast<unsigned long long>(s.unmatched),
                     static_cast<unsigned long long>(s.notReached));
        rc = 4;
    }
    return rc;
}

void printUsage(std::FILE* to)
{
    std::fputs("usage: probescope-benchcompare NPU_DUMP_JSON BENCH_DUMP_JSON [--threads N] [--repeat K]\n"
               "                               [--profile-load] [--expect-rows N] [--expect-min-rows N]\n"
               "                               [--write-csv DIR]\n"
               "Times reading both dump.json files and compareDumps (best of K, default 3), prints peak RSS\n"
               "and whether the goals (< 0.5 s, <= 200 MiB) are met.\n"
               "  --threads N        compare threads (default 1; 0 = one per hardware thread)\n"
               "  --profile-load     also time reading every .pt file (raw and with tensor::loadPt)\n"
               "  --expect-rows N    exit 3 unless the table has N rows, 4 unless every file was found,\n"
               "                     every entry matched and some row misses the accuracy (injected error)\n"
               "  --expect-min-rows N  the same with at least N rows\n"
               "  --write-csv DIR    time the CSV writer on the table (formatting only, then into DIR, best of 3)\n"
               "                     beside write(2) of as many zeros into DIR (the page-cache limit)\n",
               to);
}

std::string loadAverage()
{
    std::ifstream in("/proc/loadavg");
    std::string one, five, fifteen;
    in >> one >> five >> fifteen;
    return one + " " + five + " " + fifteen;
}

struct Timing
{
    double wall = 0;
    double cpu = 0; ///< all threads of the process
    double synced = 0; ///< wall including fsync + rename (file runs)
};

/// Best (by wall time) of `repeat` runs of `run(timing, start)`, which may set the timing's wall (before an fsync)
/// and synced (after it) itself.
template<typename Run>
Timing bestOf(int repeat, Run run)
{
    std::optional<Timing> best;
    for (int i = 0; i < repeat; ++i) {
        Timing t;
        const auto start = Clock::now();
        const double cpu = cpuSeconds();
        run(t, start);
        const double elapsed = since(start);
        t.wall = t.wall > 0 ? t.wall : elapsed;
        t.synced = t.synced > 0 ? t.synced : elapsed;
        t.cpu = cpuSeconds() - cpu;
        if (!best || t.wall < best->wall)
            best = t;
    }
    return *best;
}

/// The CSV writer alone (issue 17: "streams at disk speed, >= 200 MB/s"), best of 3 each:
///  - formatting into a sink that drops the text (blocks formatted on every core);
///  - into a file as the CLI writes it (PendingFile: write(2) on the calling thread while the workers format,
///    then fsync + rename);
///  - the limit: as many bytes of zeros written with write(2) in 4 MB pieces (dd bs=4M) into the same directory,
///    without and with fsync.
/// MB/s of wall time is the goal's figure; MB/s of CPU time (all threads) is the steady one on a shared machine.
void timeCsvWriter(const compare::CompareTable& table, const fs::path& dir)
{
    constexpr int kRepeat = 3;
    std::uint64_t bytes = 0;
    const Timing format = bestOf(kRepeat, [&](Timing&, Clock::time_point) {
        bytes = 0;
        compare::writeTableCsv(table, [&bytes](std::string_view chunk) {
            bytes += chunk.size();
            return true;
        });
    });
    const fs::path path = dir / "benchcompare_table.csv";
    bool ok = true;
    const Timing file = bestOf(kRepeat, [&](Timing& t, Clock::time_point start) {
        std::string error;
        auto out = PendingFile::create(path, error);
        ok = out && compare::writeTableCsv(table, [&out](std::string_view chunk) { return out->write(chunk); });
        t.wall = since(start);
        ok = ok && !out->claim(path, ReplaceMode::Allowed);
        t.synced = since(start);
    });
    const fs::path zeros = dir / "benchcompare_zeros.bin";
    const std::string block(std::size_t { 4 } << 20, '\0');
    const auto writeZeros = [&](Timing& t, Clock::time_point start, bool sync) {
        const int fd = ::open(zeros.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        for (std::uint64_t left = bytes; fd >= 0 && left > 0;) {
            const std::size_t n = std::min<std::uint64_t>(left, block.size());
            const ssize_t w = ::write(fd, block.data(), n);
            if (w <= 0)
                break;
            left -= std::uint64_t(w);
        }
        t.wall = since(start);
        if (fd >= 0 && sync)
            ::fsync(fd);
        if (fd >= 0)
            ::close(fd);
        t.synced = since(start);
        ::unlink(zeros.c_str());
    };
    const Timing limit = bestOf(kRepeat, [&](Timing& t, Clock::time_point start) { writeZeros(t, start, false); });
    const Timing limitSync = bestOf(kRepeat, [&](Timing& t, Clock::time_point start) { writeZeros(t, start, true); });

    const double mb = double(bytes) / 1e6;
    std::printf("csv writer: %.1f MB (%zu rows), %u formatting threads, load average %s, best of %d\n", mb,
                table.rows.size(), resolveThreadCount(0), loadAverage().c_str(), kRepeat);
    std::printf("  formatting only: %.3f s = %.0f MB/s wall; CPU %.3f s = %.0f MB/s a core\n", format.wall,
                mb / format.wall, format.cpu, mb / format.cpu);
    std::printf("  into %s: %.3f s = %.0f MB/s wall (%.3f s = %.0f MB/s with fsync); CPU %.3f s%s\n", path.c_str(),
                file.wall, mb / file.wall, file.synced, mb / file.synced, file.cpu, ok ? "" : " (FAILED)");
    std::printf("  limit, write(2) of as many zeros in 4 MB pieces: %.3f s = %.0f MB/s (%.3f s = %.0f MB/s with "
                "fsync)\n",
                limit.wall, mb / limit.wall, limitSync.synced, mb / limitSync.synced);
    std::printf("  goal >= 200 MB/s wall into the file (issue 17): %s\n", verdict(ok && mb / file.wall >= 200.0));
}

} // namespace
} // namespace probescope::bench

int main(int argc, char** argv)
{
    using namespace probescope::bench;
    Options opt;
    std::vector<std::string_view> positional;
    for (int i = 1; i < argc; ++i) {
        const std::string_view a = argv[i];
        const auto value = [&] { return optionValue("probescope-benchcompare", argc, argv, i); };
        bool ok = true;
        if (a == "--threads")
            ok = parseNumber(value(), opt.threads) && opt.threads <= 1024;
        else if (a == "--repeat")
            ok = parseNumber(value(), opt.repeat) && opt.repeat >= 1;
        else if (a == "--profile-load")
            opt.profileLoad = true;
        else if (a == "--expect-rows")
            ok = parseNumber(value(), opt.expectRows.emplace());
        else if (a == "--expect-min-rows")
            ok = parseNumber(value(), opt.expectMinRows.emplace());
        else if (a == "--write-csv")
            opt.writeCsv = fs::path(value());
        else if (a == "-h" || a == "--help") {
            printUsage(stdout);
            return 0;
        } else if (!a.empty() && a[0] == '-') {
            std::fprintf(stderr, "probescope-benchcompare: unknown argument '%s'\n", argv[i]);
            printUsage(stderr);
            return 2;
        } else {
            positional.push_back(a);
        }
        if (!ok) {
            std::fprintf(stderr, "probescope-benchcompare: bad value for %s\n", argv[i - 1]);
            return 2;
        }
    }
    if (positional.size() != 2) {
        printUsage(stderr);
        return 2;
    }
    opt.npu = std::string(positional[0]);
    opt.bench = std::string(positional[1]);
    opt.threads = probescope::resolveThreadCount(opt.threads);
    return runBench(opt);
}
