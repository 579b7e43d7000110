// SPDX-License-Identifier: Apache-2.0
//
// probescope-benchcomparelarge: times `probescope-cli compare -i PAIR/compare.json` on a pair made by
// probescope-gencomparelarge, as a user runs it (a fresh process, so start-up, dump.json reading, the
// compare and the CSV all count), with 1 and 2 threads, warm and cold page cache. Prints wall time, GB/s
// of .pt data read (both sides), CPU time and peak RSS (the child's ru_maxrss), beside the machine's
// physical limits measured here: page-cache read speed (read() of every .pt into one reused buffer) and
// memory read bandwidth (a summing loop over 512 MiB).

#include "benchargs.h"
#include "childrun.h"

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
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

bool dropCaches()
{
    ::sync();
    std::ofstream drop("/proc/sys/vm/drop_caches");
    drop << "3\n";
    drop.flush();
    return static_cast<bool>(drop);
}

double pageCacheGBs(const std::vector<fs::path>& files, std::uint64_t& bytes)
{
    constexpr std::size_t kBuffer = 1 << 20;
    auto buffer = std::make_unique<char[]>(kBuffer);
    bytes = 0;
    const auto start = Clock::now();
    for (const auto& f : files) {
        const int fd = ::open(f.c_str(), O_RDONLY);
        if (fd < 0)
            continue;
        ssize_t n;
        while ((n = ::read(fd, buffer.get(), kBuffer)) > 0)
            bytes += static_cast<std::uint64_t>(n);
        ::close(fd);
    }
    return static_cast<double>(bytes) / 1e9 / std::chrono::duration<double>(Clock::now() - start).count();
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

Run runCli(const std::string& cli, const fs::path& pair, unsigned threads, const fs::path& out)
{
    fs::remove_all(out);
    fs::create_directories(out);
    return probescope::bench::runChild({ cli, "compare", "-i", (pair / "compare.json").string(), "-o", out.string(),
                                         "-j", std::to_string(threads) });
}

} // namespace

int main(int argc, char** argv)
{
    std::string cli;
    fs::path pair;
    int repeat = 3;
    bool cold = true;
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
        else {
            std::fprintf(stderr, "usage: %s --cli PROBESCOPE_CLI --pair DIR [--repeat K] [--no-cold]\n", argv[0]);
            return 2;
        }
    }
    if (cli.empty() || pair.empty()) {
        std::fprintf(stderr, "%s: --cli and --pair are needed\n", argv[0]);
        return 2;
    }
    const auto files = ptFiles(pair);
    std::uint64_t bytes = 0;
    pageCacheGBs(files, bytes); // warms the cache
    const double cacheSpeed = pageCacheGBs(files, bytes);
    const double memSpeed = memoryGBs();
    std::printf("pair %s: %zu .pt files, %.3f GB of .pt (both sides)\n", pair.string().c_str(), files.size(),
                static_cast<double>(bytes) / 1e9);
    std::printf("limits: page-cache read() %.2f GB/s (1 thread), memory read %.2f GB/s (1 thread)\n", cacheSpeed, memSpeed);
    // Wall times mean little on a shared machine: the load average says how shared it was.
    std::ifstream load("/proc/loadavg");
    std::string loadavg;
    std::getline(load, loadavg);
    std::printf("load average at start: %s\n", loadavg.c_str());
    const fs::path out = fs::temp_directory_path() / ("benchcomparelarge-out-" + std::to_string(::getpid()));
    int failures = 0;
    for (const bool coldCache : { false, true }) {
        if (coldCache && !cold)
            continue;
        for (const unsigned threads : { 1u, 2u }) {
            Run best;
            best.wall = 1e30;
            double rss = 0;
            for (int r = 0; r < repeat; ++r) {
                if (coldCache && !dropCaches()) {
                    std::printf("cannot drop caches (needs root); cold runs skipped\n");
                    break;
                }
                const Run run = runCli(cli, pair, threads, out);
                if (!run.ok()) {
                    std::printf("probescope-cli failed (status %d)\n", run.status);
                    ++failures;
                }
                rss = std::max(rss, run.rssMiB);
                if (run.wall < best.wall)
                    best = run;
            }
            if (best.wall > 1e29)
                continue;
            const double gb = static_cast<double>(bytes) / 1e9;
            std::printf("%s cache, %u thread%s: best of %d wall %.3f s, %.2f GB/s of .pt, CPU %.3f s (%.2f GB per CPU second), "
                        "peak RSS %.1f MiB\n",
                        coldCache ? "cold" : "warm", threads, threads > 1 ? "s" : " ", repeat, best.wall, gb / best.wall,
                        best.cpu, gb / best.cpu, rss);
        }
    }
    fs::remove_all(out);
    return failures ? 1 : 0;
}
