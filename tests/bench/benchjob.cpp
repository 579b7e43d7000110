// SPDX-License-Identifier: Apache-2.0
//
// probescope-benchjob NPU_ROOT BENCH_ROOT [--threads 1,2,4] [--repeat K] [--out DIR]
// Times the whole-job compare (job::runWholeJob: every (step, rank) pair, their outputs, the summary and the
// origin) with each number of pair threads, and prints pairs/s and MB/s of dump.json read (both sides) beside
// the limit: how fast the same files are merely read from the page cache by one thread. Best of K runs; the
// files are read once before timing, so every run is warm-cache. MB = 10^6 bytes.

#include "benchargs.h"
#include "procstatus.h"

#include "core/job/jobcompare.h"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using namespace probescope;

namespace {

std::vector<fs::path> dumpFiles(const fs::path& root)
{
    std::vector<fs::path> out;
    for (const auto& e : fs::recursive_directory_iterator(root)) {
        if (e.is_regular_file() && e.path().filename() == "dump.json")
            out.push_back(e.path());
    }
    return out;
}

/// Reads every file once; returns the seconds it took (the read-only floor of a compare).
double readAll(const std::vector<fs::path>& files, std::uint64_t& bytes)
{
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<char> buf(1 << 20);
    bytes = 0;
    for (const fs::path& f : files) {
        std::ifstream in(f, std::ios::binary);
        while (in.read(buf.data(), std::streamsize(buf.size())) || in.gcount() > 0)
            bytes += std::uint64_t(in.gcount());
    }
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

} // namespace

int main(int argc, char** argv)
{
    if (argc < 3) {
        std::fputs("usage: probescope-benchjob NPU_ROOT BENCH_ROOT [--threads 1,2,4] [--repeat K] [--out DIR]\n", stderr);
        return 2;
    }
    const fs::path npu = argv[1];
    const fs::path bench = argv[2];
    std::vector<unsigned> threads { 1, 2, 4 };
    int repeat = 3;
    fs::path out = fs::temp_directory_path() / "probescope-benchjob";
    for (int i = 3; i < argc; ++i) {
        const std::string_view a = argv[i];
        if (a == "--threads") {
            threads.clear();
            std::string list(bench::optionValue("probescope-benchjob", argc, argv, i));
            for (std::size_t p = 0; p <= list.size();) {
                const std::size_t q = std::min(list.find(',', p), list.size());
                unsigned v = 0;
                if (!bench::parseNumber(std::string_view(list).substr(p, q - p), v) || v == 0)
                    return 2;
                threads.push_back(v);
                p = q + 1;
            }
        } else if (a == "--repeat") {
            if (!bench::parseNumber(bench::optionValue("probescope-benchjob", argc, argv, i), repeat) || repeat < 1)
                return 2;
        } else if (a == "--out") {
            out = std::string(bench::optionValue("probescope-benchjob", argc, argv, i));
        } else {
            std::fprintf(stderr, "probescope-benchjob: unknown argument '%s'\n", argv[i]);
            return 2;
        }
    }
    std::vector<fs::path> files = dumpFiles(npu);
    for (const fs::path& f : dumpFiles(bench))
        files.push_back(f);
    std::uint64_t bytes = 0;
    readAll(files, bytes); // warm the page cache
    double readBest = 1e300;
    for (int r = 0; r < repeat; ++r)
        readBest = std::min(readBest, readAll(files, bytes));
    const double mb = double(bytes) / 1e6;
    std::printf("job: %s vs %s: %zu dump.json files, %.1f MB\n", npu.c_str(), bench.c_str(), files.size(), mb);
    std::printf("limit: reading them from the page cache, 1 thread: %.3f s = %.0f MB/s\n", readBest, mb / readBest);
    compare::CompareInput input { npu, bench, std::nullopt };
    compare::JobOptions options;
    options.advisor = false;
    options.threads = 1; // statistics pairs have no tensor work; pairs are the parallel unit here
    options.timestamp = "20000101000000";
    for (unsigned t : threads) {
        double best = 1e300;
        std::size_t pairs = 0;
        for (int r = 0; r < repeat; ++r) {
            std::error_code ec;
            fs::remove_all(out, ec);
            job::LocalThreadScheduler scheduler(t);
            job::WholeJobOptions jobOptions;
            jobOptions.scheduler = &scheduler;
            const auto t0 = std::chrono::steady_clock::now();
            auto result = job::runWholeJob(input, out, options, jobOptions);
            const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            if (!result) {
                std::fprintf(stderr, "%s\n", result.error().format().c_str());
                return 1;
            }
            pairs = result->pairs.size();
            best = std::min(best, s);
        }
        std::printf("pair threads %u: %zu pairs in %.3f s = %.1f pairs/s, %.0f MB/s (%.0f%% of the read limit), "
                    "peak RSS %.0f MB\n",
                    t, pairs, best, double(pairs) / best, mb / best, 100.0 * readBest / best,
                    double(bench::procStatusBytes("VmHWM")) / 1e6);
    }
    std::error_code ec;
    fs::remove_all(out, ec);
    return 0;
}
