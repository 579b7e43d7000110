// SPDX-License-Identifier: Apache-2.0
//
// probescope-benchcli: `probescope-cli compare --npu PAIR/npu/step0 --bench PAIR/bench/step0 -o OUT` as a
// user runs it, on the pair probescope-benchgui measures (benchpair.h: statistics dumps of N entries per side
// with one injected bug), at 20k, 200k and 1M entries. Prints wall time, CPU time, the child's peak RSS and the
// CSV written, beside the physical limits measured here: page-cache read speed of the files the command reads
// and page-cache write speed of a file the size of the CSV. Checks that the command names the injected node.

#include "benchargs.h"
#include "benchpair.h"
#include "childrun.h"
#include "machineinfo.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

struct Options
{
    std::vector<std::uint64_t> sizes { 20000, 200000, 1000000 };
    fs::path work = "benchgui-data";
    std::string gendump = PROBESCOPE_GENDUMP;
    std::string cli = PROBESCOPE_CLI;
    int repeat = 3;
    bool smoke = false; ///< check results only; no goals
};

double secondsSince(Clock::time_point start)
{
    return std::chrono::duration<double>(Clock::now() - start).count();
}

/// Best of two page-cache reads of `files` (the first run also warms the cache): seconds.
double readSeconds(const std::vector<fs::path>& files)
{
    std::vector<char> buffer(std::size_t(4) << 20);
    double best = 1e30;
    for (int pass = 0; pass < 2; ++pass) {
        const auto start = Clock::now();
        for (const fs::path& f : files) {
            std::FILE* in = std::fopen(f.c_str(), "rb");
            if (!in)
                continue;
            while (std::fread(buffer.data(), 1, buffer.size(), in) == buffer.size()) {
            }
            std::fclose(in);
        }
        best = std::min(best, secondsSince(start));
    }
    return best;
}

/// Seconds to write `bytes` to a new file in `dir` through the page cache (no fsync, as the CLI writes).
double writeSeconds(const fs::path& dir, std::uint64_t bytes)
{
    const std::vector<char> buffer(std::size_t(4) << 20, 'x');
    const fs::path file = dir / "write-limit.tmp";
    const auto start = Clock::now();
    std::FILE* out = std::fopen(file.c_str(), "wb");
    if (!out)
        return 0;
    for (std::uint64_t done = 0; done < bytes; done += buffer.size())
        std::fwrite(buffer.data(), 1, std::min<std::uint64_t>(buffer.size(), bytes - done), out);
    std::fclose(out);
    const double s = secondsSince(start);
    fs::remove(file);
    return s;
}

std::uint64_t fileBytes(const fs::path& p)
{
    std::error_code ec;
    const auto n = fs::file_size(p, ec);
    return ec ? 0 : n;
}

int runSize(const Options& o, std::uint64_t nodes)
{
    const fs::path dir = o.work / ("pair-" + std::to_string(nodes));
    const auto made = Clock::now();
    const auto bug = probescope::bench::makeBugPair(o.gendump, nodes, dir);
    if (!bug) {
        std::fprintf(stderr, "bench-cli: could not make the %llu-entry pair\n", static_cast<unsigned long long>(nodes));
        return 1;
    }
    std::printf("\n== %llu entries per side (pair ready in %.1f s; injected bug: %s)\n",
                static_cast<unsigned long long>(nodes), secondsSince(made), bug->c_str());

    const fs::path npu = dir / "npu" / "step0";
    const fs::path bench = dir / "bench" / "step0";
    // What the command reads: both dump.json files and the NPU construct.json (the tree of the first failure).
    const std::vector<fs::path> inputs { npu / "rank0" / "dump.json", bench / "rank0" / "dump.json",
                                         npu / "rank0" / "construct.json" };
    std::uint64_t inputBytes = 0;
    for (const fs::path& f : inputs)
        inputBytes += fileBytes(f);
    const double readLimit = readSeconds(inputs);
    // What this machine gives, measured just before the runs (docs/compare-performance.md compares machines by it).
    probescope::bench::printMachine(probescope::bench::measureMachine());

    const fs::path out = o.work / ("cli-out-" + std::to_string(nodes));
    const fs::path log = o.work / ("cli-out-" + std::to_string(nodes) + ".txt");
    int rc = 0;
    probescope::bench::ChildRun best;
    std::uint64_t csvBytes = 0;
    for (int r = 0; r < o.repeat; ++r) {
        std::error_code ec;
        fs::remove_all(out, ec);
        fs::create_directories(out);
        const auto run = probescope::bench::runChild(
            { o.cli, "compare", "--npu", npu.string(), "--bench", bench.string(), "-o", out.string() }, log);
        std::printf("  run %d: wall %.2f s, CPU %.2f s, peak RSS %.0f MB, exit %d\n", r + 1, run.wall, run.cpu,
                    run.rssMiB * 1.048576, run.exitCode());
        std::printf("  run %d: user %.2f s, system %.2f s, %.0f minor page faults (%.2f GB of fresh pages)\n", r + 1,
                    run.user, run.system, run.minorFaults, run.minorFaults * 4096 / 1e9);
        if (!run.ok()) {
            std::fprintf(stderr, "bench-cli: probescope-cli failed (status %d), see %s\n", run.status, log.c_str());
            return 1;
        }
        if (r == 0 || run.wall < best.wall)
            best = run;
        csvBytes = 0;
        for (const auto& e : fs::directory_iterator(out)) {
            const std::string name = e.path().filename().string();
            if (name.rfind("compare_result_", 0) == 0 && e.path().extension() == ".csv")
                csvBytes += fileBytes(e.path());
        }
    }
    std::ifstream logIn(log);
    const std::string printed((std::istreambuf_iterator<char>(logIn)), std::istreambuf_iterator<char>());
    if (printed.find("first failing node: " + *bug + " ") == std::string::npos) {
        std::fprintf(stderr, "bench-cli: the command did not name the injected node %s as the first failure\n",
                     bug->c_str());
        rc = 3;
    }
    if (csvBytes == 0) {
        std::fprintf(stderr, "bench-cli: no compare_result_*.csv written\n");
        rc = 3;
    }
    const double writeLimit = writeSeconds(out, csvBytes);
    const double peakMB = best.rssMiB * 1.048576;
    std::printf("  compare %.2f s (best of %d), CPU %.2f s, peak RSS %.0f MB (%.2f x the inputs)\n", best.wall,
                o.repeat, best.cpu, peakMB, peakMB * 1e6 / double(std::max<std::uint64_t>(inputBytes, 1)));
    std::printf("  best run: user %.2f s, system %.2f s, %.0f minor page faults\n", best.user, best.system,
                best.minorFaults);
    std::printf("  inputs %.0f MB: %.0f MB/s through the whole command; page-cache read limit %.2f s (%.1f GB/s)\n",
                double(inputBytes) / 1e6, double(inputBytes) / 1e6 / best.wall, readLimit,
                double(inputBytes) / 1e9 / readLimit);
    std::printf("  CSV %.0f MB written; page-cache write limit %.2f s (%.1f GB/s)\n", double(csvBytes) / 1e6,
                writeLimit, writeLimit > 0 ? double(csvBytes) / 1e9 / writeLimit : 0.0);
    if (!o.smoke && nodes >= 1000000) {
        std::printf("  goal: <= 10 s: %s; <= 3 GB peak: %s\n", best.wall <= 10.0 ? "met" : "MISSED",
                    peakMB <= 3000.0 ? "met" : "MISSED");
    }
    return rc;
}

std::vector<std::uint64_t> parseSizes(std::string_view text)
{
    std::vector<std::uint64_t> out;
    while (!text.empty()) {
        const std::size_t comma = text.find(',');
        std::uint64_t n = 0;
        if (probescope::bench::parseNumber(text.substr(0, comma), n) && n > 0)
            out.push_back(n);
        if (comma == std::string_view::npos)
            break;
        text.remove_prefix(comma + 1);
    }
    return out;
}

} // namespace

int main(int argc, char** argv)
{
    Options o;
    for (int i = 1; i < argc; ++i) {
        const std::string_view a = argv[i];
        if (a == "--nodes")
            o.sizes = parseSizes(probescope::bench::optionValue(argv[0], argc, argv, i));
        else if (a == "--work")
            o.work = std::string(probescope::bench::optionValue(argv[0], argc, argv, i));
        else if (a == "--gendump")
            o.gendump = probescope::bench::optionValue(argv[0], argc, argv, i);
        else if (a == "--cli")
            o.cli = probescope::bench::optionValue(argv[0], argc, argv, i);
        else if (a == "--repeat" && probescope::bench::parseNumber(probescope::bench::optionValue(argv[0], argc, argv, i), o.repeat))
            o.repeat = std::max(1, o.repeat);
        else if (a == "--smoke")
            o.smoke = true;
        else {
            std::fprintf(stderr, "usage: probescope-benchcli [--nodes N[,N...]] [--work DIR] [--repeat K] [--cli PATH] "
                                 "[--gendump PATH] [--smoke]\n");
            return 2;
        }
    }
    fs::create_directories(o.work);
    int rc = 0;
    for (const std::uint64_t n : o.sizes)
        rc = std::max(rc, runSize(o, n));
    return rc;
}
