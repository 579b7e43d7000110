// SPDX-License-Identifier: Apache-2.0
//
// probescope-benchcomparelarge: times `probescope-cli compare -i PAIR/compare.json` on a pair made by
// probescope-gencomparelarge, as a user runs it (a fresh process, so start-up, dump.json reading, the
// compare and the CSV all count), with 1 and 2 threads, warm and cold page cache. Prints wall time, GB/s
// of .pt data read (both sides), CPU time and peak RSS (the child's ru_maxrss), beside the machine's
// physical limits measured here: page-cache read speed (read() of every .pt into one reused buffer) and
// memory read bandwidth (a summing loop over 512 MiB).
//
// Every profile side by side (issue 26): msprobe-1.2 (the default, whose lines keep their old spelling),
// msprobe-26 on the same pair, and ptdbg on PAIR/ptdbg (the same tensors as .pkl/.npy, made by
// probescope-gencomparelarge --ptdbg), the runs of the profiles interleaved so that a change of load hits them
// alike. Cold runs evict the inputs with posix_fadvise(POSIX_FADV_DONTNEED) on every input file (after
// fdatasync: only clean pages can go), which needs no root; the share of input pages still resident
// afterwards (mincore) is printed. A ratio is printed only against msprobe-1.2's run of the same cache and
// thread count in this invocation, never against a figure measured elsewhere.
//
// Against msprobe itself (issue 37): `--msprobe PYTHONPATH` also runs msprobe 1.2.2's own compare on the same
// pair (`/usr/bin/python3 -m msprobe.msprobe -f pytorch compare -i compare.json -o OUT` with that PYTHONPATH,
// warm cache, interleaved with ProbeScope's warm runs) and prints msprobe's wall over every profile's wall beside
// the physical floor and the machine's figures (fresh page, memcpy). The pair may be one of
// probescope-gencomparepair's too (no compare.json: the bench writes one in its own temporary folder).
//
// The warm runs' page cache (`--warm-from`): how fast the kernel copies a cached file out depends on the folios its
// pages were cached in, which is set by whoever read the file first. `ours` (the default): every input evicted, then
// one untimed run of each profile, as a user's second compare of a pair meets it; `plain`: evicted, then read once
// with read() (another program's first read); `willneed`: evicted, then POSIX_FADV_WILLNEED on each file and read once
// (what ProbeScope's cold runs left before it read ahead in large folios); `as-is`: the cache as found. The
// page-cache floor is measured after.

#include "benchargs.h"
#include "childrun.h"
#include "machineinfo.h"

#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <tuple>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

std::vector<fs::path> ptFiles(const fs::path& pair)
{
    std::vector<fs::path> files;
    for (const char* side : { "npu", "bench" })
        for (const auto& e : fs::directory_iterator(pair / side / "step0/rank/dump_tensor_data"))
            files.push_back(e.path());
    return files;
}

/// The ptdbg pair's inputs: both .pkl and every .npy.
std::vector<fs::path> npyFiles(const fs::path& ptdbgPair)
{
    std::vector<fs::path> files;
    for (const char* side : { "npu", "bench" })
        for (const auto& e : fs::directory_iterator(ptdbgPair / side / "dump"))
            files.push_back(e.path());
    return files;
}

/// Evicts the files from the page cache without root: their dirty pages are written first (only clean pages can
/// be dropped), then POSIX_FADV_DONTNEED. False when a file could not be opened.
bool evict(const std::vector<fs::path>& files)
{
    bool ok = true;
    for (const auto& f : files) {
        const int fd = ::open(f.c_str(), O_RDONLY);
        if (fd < 0) {
            ok = false;
            continue;
        }
        ::fdatasync(fd);
        ok = ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) == 0 && ok;
        ::close(fd);
    }
    return ok;
}

/// The share of the files' pages that are in the page cache (mincore on a mapping), 0..1.
double resident(const std::vector<fs::path>& files)
{
    const long page = ::sysconf(_SC_PAGESIZE);
    std::uint64_t pages = 0;
    std::uint64_t in = 0;
    std::vector<unsigned char> vec;
    for (const auto& f : files) {
        const int fd = ::open(f.c_str(), O_RDONLY);
        if (fd < 0)
            continue;
        const auto size = static_cast<std::size_t>(fs::file_size(f));
        if (size > 0) {
            void* p = ::mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
            if (p != MAP_FAILED) {
                const std::size_t n = (size + static_cast<std::size_t>(page) - 1) / static_cast<std::size_t>(page);
                vec.resize(n);
                if (::mincore(p, size, vec.data()) == 0) {
                    pages += n;
                    for (const unsigned char v : vec)
                        in += v & 1u;
                }
                ::munmap(p, size);
            }
        }
        ::close(fd);
    }
    return pages ? static_cast<double>(in) / static_cast<double>(pages) : 0.0;
}

std::uint64_t totalBytes(const std::vector<fs::path>& files)
{
    std::uint64_t n = 0;
    for (const auto& f : files)
        n += fs::file_size(f);
    return n;
}

/// Reads every file once with read() into reused 1 MiB buffers, file k on thread k % threads; GB/s of the whole.
double readGBs(const std::vector<fs::path>& files, unsigned threads, std::uint64_t& bytes)
{
    constexpr std::size_t kBuffer = 1 << 20;
    std::vector<std::uint64_t> counts(threads, 0);
    auto readShare = [&](unsigned t) {
        auto buffer = std::make_unique<char[]>(kBuffer);
        for (std::size_t k = t; k < files.size(); k += threads) {
            const int fd = ::open(files[k].c_str(), O_RDONLY);
            if (fd < 0)
                continue;
            ssize_t n;
            while ((n = ::read(fd, buffer.get(), kBuffer)) > 0)
                counts[t] += static_cast<std::uint64_t>(n);
            ::close(fd);
        }
    };
    const auto start = Clock::now();
    std::vector<std::thread> pool;
    for (unsigned t = 1; t < threads; ++t)
        pool.emplace_back(readShare, t);
    readShare(0);
    for (auto& th : pool)
        th.join();
    bytes = 0;
    for (const std::uint64_t c : counts)
        bytes += c;
    return static_cast<double>(bytes) / 1e9 / std::chrono::duration<double>(Clock::now() - start).count();
}

/// POSIX_FADV_WILLNEED on each whole file (the kernel reads it into the page cache in 4 KiB folios), then one read
/// of every file so that the pages are surely in before the warm runs.
void adviseWillNeed(const std::vector<fs::path>& files)
{
    for (const fs::path& f : files) {
        const int fd = ::open(f.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            continue;
        ::posix_fadvise(fd, 0, 0, POSIX_FADV_WILLNEED);
        ::close(fd);
    }
    std::uint64_t ignored = 0;
    readGBs(files, 1, ignored);
}

double pageCacheGBs(const std::vector<fs::path>& files, std::uint64_t& bytes)
{
    return readGBs(files, 1, bytes);
}

double memoryGBs()
{
    const std::size_t n = (512u << 20) / sizeof(double);
    std::vector<double> a(n, 1.0);
    double best = 0;
    volatile double sink = 0;
    for (int r = 0; r < 3; ++r) {
        const auto start = Clock::now();
        double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
        for (std::size_t i = 0; i < n; i += 4) {
            s0 += a[i];
            s1 += a[i + 1];
            s2 += a[i + 2];
            s3 += a[i + 3];
        }
        sink = s0 + s1 + s2 + s3;
        best = std::max(best, 512.0 * (1 << 20) / 1e9 / std::chrono::duration<double>(Clock::now() - start).count());
    }
    (void)sink;
    return best;
}

using Run = probescope::bench::ChildRun;

/// The pair's compare.json; a pair without one (probescope-gencomparepair's) gets one in `scratch`.
fs::path compareJsonOf(const fs::path& pair, const fs::path& scratch)
{
    if (fs::exists(pair / "compare.json"))
        return pair / "compare.json";
    fs::create_directories(scratch);
    const fs::path json = scratch / "compare.json";
    std::ofstream out(json);
    out << "{\"npu_path\": \"" << fs::absolute(pair / "npu/step0/rank/dump.json").string() << "\", \"bench_path\": \""
        << fs::absolute(pair / "bench/step0/rank/dump.json").string() << "\", \"is_print_compare_log\": true}\n";
    return json;
}

Run runCli(const std::string& cli, const fs::path& compareJson, unsigned threads, const fs::path& out)
{
    fs::remove_all(out);
    fs::create_directories(out);
    return probescope::bench::runChild({ cli, "compare", "-i", compareJson.string(), "-o", out.string(),
                                         "-j", std::to_string(threads) });
}

/// `compare --profile PROFILE -i COMPARE_JSON` (the pair's, or its ptdbg/ folder's for ptdbg).
Run runProfile(const std::string& cli, const std::string& profile, const fs::path& compareJson, unsigned threads,
               const fs::path& out)
{
    fs::remove_all(out);
    fs::create_directories(out);
    return probescope::bench::runChild({ cli, "compare", "--profile", profile, "-i", compareJson.string(),
                                         "-o", out.string(), "-j", std::to_string(threads) });
}

/// msprobe 1.2.2's own compare, as its users run it (stdout and stderr discarded).
Run runMsprobe(const std::string& python, const std::string& pythonPath, const fs::path& compareJson,
               const fs::path& out)
{
    fs::remove_all(out);
    fs::create_directories(out);
    return probescope::bench::runChild({ python, "-m", "msprobe.msprobe", "-f", "pytorch", "compare", "-i",
                                         compareJson.string(), "-o", out.string() },
                                       {}, { "PYTHONPATH=" + pythonPath }, true);
}

/// One profile's runs of one cache state and thread count: the best wall of the repeats and its CPU.
struct Measured
{
    Run best;
    double rss = 0;
    int runs = 0;
    int failed = 0;
};

} // namespace

int main(int argc, char** argv)
{
    std::string cli;
    fs::path pair;
    int repeat = 3;
    bool cold = true;
    std::string profileList = "msprobe-1.2,msprobe-26,ptdbg";
    std::string msprobePath;
    std::string python = "/usr/bin/python3";
    int msprobeRepeat = 2;
    std::string warmFrom = "ours";
    for (int i = 1; i < argc; ++i) {
        const std::string_view a = argv[i];
        if (a == "--cli")
            cli = probescope::bench::optionValue(argv[0], argc, argv, i);
        else if (a == "--pair")
            pair = std::string(probescope::bench::optionValue(argv[0], argc, argv, i));
        else if (a == "--repeat")
            probescope::bench::parseNumber(probescope::bench::optionValue(argv[0], argc, argv, i), repeat);
        else if (a == "--no-cold")
            cold = false;
        else if (a == "--profiles")
            profileList = probescope::bench::optionValue(argv[0], argc, argv, i);
        else if (a == "--msprobe")
            msprobePath = probescope::bench::optionValue(argv[0], argc, argv, i);
        else if (a == "--python")
            python = probescope::bench::optionValue(argv[0], argc, argv, i);
        else if (a == "--msprobe-repeat")
            probescope::bench::parseNumber(probescope::bench::optionValue(argv[0], argc, argv, i), msprobeRepeat);
        else if (a == "--warm-from")
            warmFrom = probescope::bench::optionValue(argv[0], argc, argv, i);
        else {
            std::fprintf(stderr, "usage: %s --cli PROBESCOPE_CLI --pair DIR [--repeat K] [--no-cold] [--profiles msprobe-1.2,msprobe-26,ptdbg]\n"
                                 "       [--msprobe PYTHONPATH [--python /usr/bin/python3] [--msprobe-repeat K]] [--warm-from ours|plain|willneed|as-is]\n", argv[0]);
            return 2;
        }
    }
    if (warmFrom != "ours" && warmFrom != "plain" && warmFrom != "willneed" && warmFrom != "as-is") {
        std::fprintf(stderr, "%s: --warm-from takes ours, plain, willneed or as-is\n", argv[0]);
        return 2;
    }
    if (cli.empty() || pair.empty()) {
        std::fprintf(stderr, "%s: --cli and --pair are needed\n", argv[0]);
        return 2;
    }
    const auto files = ptFiles(pair);
    const std::uint64_t bytes = totalBytes(files);
    const double memSpeed = memoryGBs();
    std::printf("pair %s: %zu .pt files, %.3f GB of .pt (both sides)\n", pair.string().c_str(), files.size(),
                static_cast<double>(bytes) / 1e9);
    // Wall times mean little on a shared machine: the load average says how shared it was.
    std::ifstream load("/proc/loadavg");
    std::string loadavg;
    std::getline(load, loadavg);
    std::printf("load average at start: %s\n", loadavg.c_str());
    const fs::path out = fs::temp_directory_path() / ("benchcomparelarge-out-" + std::to_string(::getpid()));
    const fs::path scratch = fs::temp_directory_path() / ("benchcomparelarge-json-" + std::to_string(::getpid()));
    const fs::path compareJson = compareJsonOf(pair, scratch);
    int failures = 0;

    // The profiles side by side: msprobe-1.2 (the default) and msprobe-26 on the pair, ptdbg on PAIR/ptdbg.
    struct ProfileRun
    {
        std::string name;
        fs::path input;
        std::vector<fs::path> files; ///< its inputs (evicted for cold runs)
        std::uint64_t dataBytes = 0; ///< the tensor files' bytes (GB/s counts these)
    };
    std::vector<fs::path> msprobeInputs = files;
    for (const char* side : { "npu", "bench" })
        msprobeInputs.push_back(pair / side / "step0/rank/dump.json");
    std::vector<ProfileRun> profiles;
    std::stringstream wanted(profileList);
    for (std::string name; std::getline(wanted, name, ',');) {
        if (name == "msprobe-1.2" || name == "msprobe-26") {
            profiles.push_back({ name, pair, msprobeInputs, bytes });
        } else if (name == "ptdbg") {
            const fs::path ptdbgPair = pair / "ptdbg";
            if (!fs::exists(ptdbgPair / "compare.json")) {
                std::printf("no ptdbg pair at %s (made by probescope-gencomparelarge --ptdbg): ptdbg not timed\n",
                            ptdbgPair.string().c_str());
                continue;
            }
            std::vector<fs::path> inputs = npyFiles(ptdbgPair);
            const std::uint64_t npyBytes = totalBytes(inputs);
            std::printf("ptdbg pair %s: %zu .npy files, %.3f GB of .npy (both sides)\n", ptdbgPair.string().c_str(),
                        inputs.size(), static_cast<double>(npyBytes) / 1e9);
            for (const char* side : { "npu", "bench" })
                inputs.push_back(ptdbgPair / side / "dump.pkl");
            profiles.push_back({ name, ptdbgPair, inputs, npyBytes });
        } else {
            std::fprintf(stderr, "%s: unknown profile '%s' in --profiles (msprobe-1.2, msprobe-26, ptdbg)\n", argv[0],
                         name.c_str());
            return 2;
        }
    }
    // The cold runs' floor (issue 37: "within 1.5x of the disk's read speed cold"): the same files read once from
    // the disk, evicted first, with the thread counts the runs use.
    std::map<unsigned, double> diskSeconds;
    if (cold) {
        std::printf("cold runs: every input file evicted with posix_fadvise(POSIX_FADV_DONTNEED) before each run (no "
                    "root needed)\n");
        for (const unsigned threads : { 1u, 2u }) {
            evict(files);
            std::uint64_t diskBytes = 0;
            const double speed = readGBs(files, threads, diskBytes);
            diskSeconds[threads] = static_cast<double>(diskBytes) / 1e9 / speed;
            std::printf("limits (cold): disk read() %.2f GB/s with %u thread%s: the .pt data once from the disk takes "
                        "%.3f s\n",
                        speed, threads, threads > 1 ? "s" : "", diskSeconds[threads]);
        }
    }

    // The page cache the warm runs meet. How fast a warm file is read depends on how its pages were cached: read
    // ahead in large folios (up to 2 MiB: ProbeScope's own cold read, or the files just written in large writes),
    // in 4 KiB ones first and larger as the kernel's read-ahead ramps up (a plain read()), or all in 4 KiB ones (the
    // old POSIX_FADV_WILLNEED): this bench's page-cache read() of the GB pair 15.58, 8.23 and 8.57 GB/s on the
    // project's VM (docs/compare-performance.md, "Large folios"). Warm figures are measured on a stated state.
    if (warmFrom != "as-is") {
        for (const ProfileRun& p : profiles)
            evict(p.files);
        for (const ProfileRun& p : profiles) {
            if (warmFrom == "plain") {
                std::uint64_t ignored = 0;
                readGBs(p.files, 1, ignored);
                continue;
            }
            if (warmFrom == "willneed") {
                adviseWillNeed(p.files);
                continue;
            }
            const fs::path json = p.name == "ptdbg" ? p.input / "compare.json" : compareJson;
            const Run run = p.name == "msprobe-1.2" ? runCli(cli, json, 2, out) : runProfile(cli, p.name, json, 2, out);
            if (!run.ok())
                std::printf("probescope-cli failed (status %d) in the warm-up run of %s\n", run.status, p.name.c_str());
        }
    }
    std::printf("warm runs: the inputs %s\n",
                warmFrom == "ours"    ? "as ProbeScope's first compare of the pair left them in the page cache (each "
                                        "profile's inputs evicted, then one untimed cold run with 2 threads)"
                    : warmFrom == "plain" ? "as a plain read() left them in the page cache (evicted, then read once)"
                    : warmFrom == "willneed"
                    ? "as POSIX_FADV_WILLNEED left them in the page cache (evicted, then advised and read once: the "
                      "read-ahead of ProbeScope before this round)"
                    : "as the page cache held them at the start (not touched)");
    std::uint64_t cachedBytes = 0;
    pageCacheGBs(files, cachedBytes); // reads what is not cached yet (as-is); cached pages keep their folios
    const double cacheSpeed = pageCacheGBs(files, cachedBytes);
    std::printf("limits: page-cache read() %.2f GB/s (1 thread), memory read %.2f GB/s (1 thread)\n", cacheSpeed, memSpeed);
    std::printf("physical floor: reading the .pt data once at the page-cache speed above takes %.3f s, at the memory "
                "read speed %.3f s\n",
                static_cast<double>(bytes) / 1e9 / cacheSpeed, static_cast<double>(bytes) / 1e9 / memSpeed);
    for (const ProfileRun& p : profiles) {
        if (p.name != "ptdbg")
            continue;
        std::uint64_t npyRead = 0;
        pageCacheGBs(p.files, npyRead);
        const double npySpeed = pageCacheGBs(p.files, npyRead);
        std::printf("ptdbg inputs: page-cache read() %.2f GB/s (1 thread)\n", npySpeed);
    }

    std::map<std::tuple<bool, unsigned, std::string>, Measured> results;
    for (const bool coldCache : { false, true }) {
        if (coldCache && !cold)
            continue;
        for (const unsigned threads : { 1u, 2u }) {
            // Interleaved: repeat r of every profile before repeat r + 1 of any.
            for (int r = 0; r < repeat; ++r) {
                for (const ProfileRun& p : profiles) {
                    Measured& m = results[{ coldCache, threads, p.name }];
                    if (coldCache) {
                        evict(p.files);
                        if (r == 0)
                            std::printf("%s inputs resident after eviction: %.1f%%\n", p.name.c_str(), 100 * resident(p.files));
                    }
                    const fs::path json = p.name == "ptdbg" ? p.input / "compare.json" : compareJson;
                    const Run run = p.name == "msprobe-1.2" ? runCli(cli, json, threads, out)
                                                             : runProfile(cli, p.name, json, threads, out);
                    if (!run.ok()) {
                        std::printf("probescope-cli failed (status %d)%s%s\n", run.status,
                                    p.name == "msprobe-1.2" ? "" : ": profile ", p.name == "msprobe-1.2" ? "" : p.name.c_str());
                        ++failures;
                        ++m.failed;
                    }
                    m.rss = std::max(m.rss, run.rssMiB);
                    if (m.runs++ == 0 || run.wall < m.best.wall)
                        m.best = run;
                }
                // msprobe itself between ProbeScope's warm repeats (once per repeat, on the 1-thread pass).
                if (!msprobePath.empty() && !coldCache && threads == 1 && r < msprobeRepeat) {
                    const Run run = runMsprobe(python, msprobePath, compareJson, out);
                    Measured& m = results[{ false, 0u, "msprobe 1.2.2" }];
                    if (!run.ok()) {
                        std::printf("msprobe 1.2.2 failed (status %d): check --msprobe PYTHONPATH and --python\n",
                                    run.exitCode());
                        ++failures;
                        ++m.failed;
                    }
                    m.rss = std::max(m.rss, run.rssMiB);
                    if (m.runs++ == 0 || run.wall < m.best.wall)
                        m.best = run;
                }
            }
            for (const ProfileRun& p : profiles) {
                const Measured& m = results[{ coldCache, threads, p.name }];
                const double gb = static_cast<double>(p.dataBytes) / 1e9;
                if (p.name == "msprobe-1.2") {
                    // The default profile's line, spelled as before issue 26.
                    std::printf("%s cache, %u thread%s: best of %d wall %.3f s, %.2f GB/s of .pt, CPU %.3f s (%.2f GB per CPU second), "
                                "peak RSS %.1f MiB\n",
                                coldCache ? "cold" : "warm", threads, threads > 1 ? "s" : " ", repeat, m.best.wall,
                                gb / m.best.wall, m.best.cpu, gb / m.best.cpu, m.rss);
                } else {
                    std::printf("profile %s, %s cache, %u thread%s: best of %d wall %.3f s, %.2f GB/s of .%s, CPU %.3f s "
                                "(%.2f GB per CPU second), peak RSS %.1f MiB\n",
                                p.name.c_str(), coldCache ? "cold" : "warm", threads, threads > 1 ? "s" : " ", repeat,
                                m.best.wall, gb / m.best.wall, p.name == "ptdbg" ? "npy" : "pt", m.best.cpu,
                                gb / m.best.cpu, m.rss);
                }
            }
        }
    }

    // The table: every profile beside msprobe-1.2's run of the same cache and threads, all from this invocation.
    std::printf("\nside by side (best wall of %d; ratio = wall / msprobe-1.2's wall in this invocation, same cache and threads):\n",
                repeat);
    std::printf("%-12s %-5s %-7s %9s %9s %8s %12s %7s\n", "profile", "cache", "threads", "wall s", "CPU s", "GB/s",
                "peak RSS MiB", "ratio");
    for (const auto& [key, m] : results) {
        const auto& [coldCache, threads, name] = key;
        const auto p = std::find_if(profiles.begin(), profiles.end(), [&](const ProfileRun& x) { return x.name == name; });
        if (p == profiles.end())
            continue; // msprobe itself: below
        const double gb = static_cast<double>(p->dataBytes) / 1e9;
        const auto ref = results.find({ coldCache, threads, "msprobe-1.2" });
        char ratio[32] = "-";
        if (ref != results.end() && ref->second.failed == 0 && m.failed == 0)
            std::snprintf(ratio, sizeof ratio, "%.2fx", m.best.wall / ref->second.best.wall);
        char floorRatio[48] = "";
        if (coldCache && diskSeconds.count(threads) && diskSeconds[threads] > 0 && name != "ptdbg")
            std::snprintf(floorRatio, sizeof floorRatio, "  %.2fx the disk floor", m.best.wall / diskSeconds[threads]);
        std::printf("%-12s %-5s %-7u %9.3f %9.3f %8.2f %12.1f %7s%s%s\n", name.c_str(), coldCache ? "cold" : "warm", threads,
                    m.best.wall, m.best.cpu, gb / m.best.wall, m.rss, ratio, floorRatio, m.failed ? "  (failed)" : "");
    }
    const auto ms = results.find({ false, 0u, "msprobe 1.2.2" });
    if (ms != results.end() && ms->second.failed == 0) {
        // The side-by-side check of issue 37: msprobe's own wall over ours, with the floor and the machine beside it.
        const Run& m = ms->second.best;
        std::printf("\nagainst msprobe 1.2.2 (python3 -m msprobe.msprobe -f pytorch compare, warm cache, best of %d): "
                    "wall %.3f s, CPU %.3f s (%.3f user + %.3f sys), peak RSS %.1f MiB\n",
                    ms->second.runs, m.wall, m.cpu, m.user, m.system, ms->second.rss);
        std::printf("%-12s %-7s %9s %9s %9s %10s %12s\n", "profile", "threads", "wall s", "CPU s", "sys s", "faults",
                    "msprobe/ours");
        for (const auto& [key, r] : results) {
            const auto& [coldCache, threads, name] = key;
            if (coldCache || threads == 0 || r.failed)
                continue;
            std::printf("%-12s %-7u %9.3f %9.3f %9.3f %10.0f %11.1fx\n", name.c_str(), threads, r.best.wall, r.best.cpu,
                        r.best.system, r.best.minorFaults, m.wall / r.best.wall);
        }
        std::printf("physical floor: the .pt data (%.3f GB) once at page-cache speed %.3f s, at memory speed %.3f s "
                    "(%zu files)\n",
                    static_cast<double>(bytes) / 1e9, static_cast<double>(bytes) / 1e9 / cacheSpeed,
                    static_cast<double>(bytes) / 1e9 / memSpeed, files.size());
        probescope::bench::printMachine(probescope::bench::measureMachine(), "");
    }
    fs::remove_all(out);
    fs::remove_all(scratch);
    return failures ? 1 : 0;
}
