// SPDX-License-Identifier: Apache-2.0
//
// probescope-benchjobscale [--ranks 1000,10000] [--work DIR] [--mpi 1,2,3] [--smoke]
//
// Issue 37: a whole training job of thousands of ranks on one machine, run as a user runs it. For each rank count R
// it generates (once, kept under DIR) `probescope-gendump job --ranks R --steps 2 --layers 4 --width 2
// --group-size 8`: statistics dumps of a small model (per rank 14 to 15 dump.json entries, about 13 KB), the bug on
// rank R/8 in step 0; then runs, each in a fresh process:
//   job       probescope-cli compare --npu npu --bench bench -o OUT -c   (every step and rank: 2R pairs)
//   -da       probescope-cli compare --npu npu/step0 --bench bench/step0 -o OUT --profile msprobe-26 -da
//   overflow  probescope-cli overflow_check -i npu/step0 -o OUT
//   info      probescope-cli info npu
// and prints wall and CPU time, the child's peak RSS, the load average beside each figure, the time per 1,000 ranks
// against the goal (2 s), and checks that the job names the injected origin. With --mpi P1,P2,... it runs the job
// under `mpirun -n P` too (P - 1 workers) and prints the speed-up over one process. Each run writes into a folder of
// its own, and they are all removed after the last run of a rank count: on ext4 without a journal (this machine's) a
// file created within minutes of thousands being deleted nearby scans past every recently freed inode
// (`recently_deleted`), so removing one run's outputs just before the next made the next pay for the bench's own
// deletions (-da at 10,000 ranks: 8.0 s instead of 5.0 s). The generated jobs stay in DIR (10,000 ranks: ~0.6 GB).

#include "benchargs.h"
#include "childrun.h"
#include "machineinfo.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <system_error>
#include <vector>

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace probescope::bench;

namespace {

std::vector<long> numberList(std::string_view text)
{
    std::vector<long> out;
    for (std::size_t p = 0; p <= text.size();) {
        const std::size_t q = std::min(text.find(',', p), text.size());
        long v = 0;
        if (!parseNumber(text.substr(p, q - p), v) || v <= 0)
            return {};
        out.push_back(v);
        p = q + 1;
    }
    return out;
}

std::string load()
{
    const std::string line = machine_detail::firstLine("/proc/loadavg");
    return line.substr(0, line.find(' ')); // the 1-minute figure, read right before the run
}

std::string readText(const fs::path& path)
{
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

/// The file system's own share of a job: what creating the job's output files costs here with nothing else done,
/// each created under a temporary name, written (the job's mean size) and renamed, as util/outputfile does, without
/// fsync (the job makes its batches durable with one syncfs each). On this machine's ext4 a create + rename costs
/// about as much as comparing a small rank, so it is printed beside the job as its floor.
struct FileFloor
{
    std::size_t files = 0;
    std::uint64_t bytes = 0;
    double wall = 0;
    double cpu = 0;
};

double processCpuSeconds()
{
    rusage u {};
    ::getrusage(RUSAGE_SELF, &u);
    return double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + double(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

FileFloor fileCreateFloor(const fs::path& jobOut, const fs::path& scratch)
{
    FileFloor f;
    std::error_code ec;
    for (const auto& e : fs::recursive_directory_iterator(jobOut, ec)) {
        if (e.is_regular_file(ec)) {
            ++f.files;
            f.bytes += e.file_size(ec);
        }
    }
    fs::remove_all(scratch, ec);
    fs::create_directories(scratch, ec);
    const std::string text(f.files ? static_cast<std::size_t>(f.bytes / f.files) : 0, 'x');
    const auto start = std::chrono::steady_clock::now();
    const double cpuStart = processCpuSeconds();
    for (std::size_t i = 0; i < f.files; ++i) {
        const std::string name = (scratch / ("out" + std::to_string(i) + ".csv")).string();
        const std::string temp = (scratch / (".out" + std::to_string(i) + ".csv.tmp")).string();
        const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        if (fd < 0)
            break;
        const bool written = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
        ::close(fd);
        if (!written || ::rename(temp.c_str(), name.c_str()) != 0)
            break;
    }
    f.cpu = processCpuSeconds() - cpuStart;
    f.wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return f; // `scratch` is removed with the runs' outputs, after the last run (see the top)
}

fs::path findMpirun()
{
    const char* path = std::getenv("PATH");
    std::string_view dirs = path ? path : "/usr/bin";
    while (!dirs.empty()) {
        const auto colon = dirs.find(':');
        const fs::path candidate = fs::path(std::string(dirs.substr(0, colon))) / "mpirun";
        std::error_code ec;
        if (fs::exists(candidate, ec))
            return candidate;
        dirs = colon == std::string_view::npos ? std::string_view() : dirs.substr(colon + 1);
    }
    return {};
}

struct Row
{
    std::string what;
    ChildRun run;
    std::string loadBefore;
};

void printRow(const Row& r, long ranks, bool smoke)
{
    const double per1000 = r.run.wall * 1000.0 / double(ranks);
    const double cpuPer1000 = r.run.cpu * 1000.0 / double(ranks);
    std::printf("  %-22s %8.2f s wall %7.2f s CPU %7.0f MiB peak RSS | per 1,000 ranks %5.2f s wall, %5.2f s CPU%s | "
                "load %s\n",
                r.what.c_str(), r.run.wall, r.run.cpu, r.run.rssMiB, per1000, cpuPer1000,
                smoke ? "" : (per1000 <= 2.0 ? " (goal 2 s: met)" : cpuPer1000 <= 2.0 ? " (goal 2 s: CPU met, wall not)"
                                                                                        : " (goal 2 s: NOT met)"),
                r.loadBefore.c_str());
}

} // namespace

int main(int argc, char** argv)
{
    std::vector<long> rankCounts { 1000, 10000 };
    std::vector<long> mpi;
    fs::path work = fs::temp_directory_path() / "probescope-jobscale";
    bool smoke = false;
    for (int i = 1; i < argc; ++i) {
        const std::string_view a = argv[i];
        if (a == "--ranks")
            rankCounts = numberList(optionValue("probescope-benchjobscale", argc, argv, i));
        else if (a == "--mpi")
            mpi = numberList(optionValue("probescope-benchjobscale", argc, argv, i));
        else if (a == "--work")
            work = std::string(optionValue("probescope-benchjobscale", argc, argv, i));
        else if (a == "--smoke")
            smoke = true;
        else {
            std::fprintf(stderr, "usage: probescope-benchjobscale [--ranks 1000,10000] [--work DIR] [--mpi 1,2,3] "
                                 "[--smoke]\n");
            return 2;
        }
    }
    if (rankCounts.empty()) {
        std::fprintf(stderr, "probescope-benchjobscale: --ranks needs positive even numbers (1000,10000)\n");
        return 2;
    }
    std::setvbuf(stdout, nullptr, _IOLBF, 0); // each figure as it is measured, also into a file
    const std::string cli = PROBESCOPE_CLI;
    const std::string gendump = PROBESCOPE_GENDUMP;
    std::printf("whole job at scale (issue 37): %s\n", cli.c_str());
    if (!smoke)
        printMachine(measureMachine());
    int failures = 0;
    for (const long ranks : rankCounts) {
        long bugRank = ranks / 8;
        const fs::path job = work / ("r" + std::to_string(ranks));
        std::error_code ec;
        if (!fs::exists(job / "injected.json", ec)) {
            fs::remove_all(job, ec);
            fs::create_directories(work, ec);
            const std::string loadBefore = load();
            const ChildRun gen = runChild({ gendump, "job", "--ranks", std::to_string(ranks), "--steps", "2",
                                            "--layers", "4", "--width", "2", "--group-size", "8", "--bug-rank",
                                            std::to_string(bugRank), "--bug-step", "0", "--out", job.string() });
            if (!gen.ok()) {
                std::fprintf(stderr, "probescope-benchjobscale: the generator failed (exit %d)\n", gen.exitCode());
                return 1;
            }
            std::printf("generated %s in %.1f s (load %s)\n", job.c_str(), gen.wall, loadBefore.c_str());
        }
        {
            // The job may have been made by hand with another --bug-rank: the origin to expect is what it names.
            const std::string injected = readText(job / "injected.json");
            const auto at = injected.find("\"rank\": ");
            if (at != std::string::npos)
                bugRank = std::strtol(injected.c_str() + at + 8, nullptr, 10);
        }
        std::uint64_t bytes = 0, files = 0;
        for (const auto& e : fs::recursive_directory_iterator(job, ec)) {
            if (e.is_regular_file(ec) && e.path().filename() == "dump.json") {
                bytes += e.file_size(ec);
                ++files;
            }
        }
        std::printf("\n%ld ranks x 2 steps: %llu dump.json files (both sides), %.1f MB; a rank: 14-15 entries, %.1f KB\n",
                    ranks, static_cast<unsigned long long>(files), double(bytes) / 1e6,
                    files ? double(bytes) / double(files) / 1e3 : 0.0);
        const std::string npu = (job / "npu").string(), bench = (job / "bench").string();
        // Each run's own output folder (of this process: two benches at once must not share one), all removed after
        // the last run of this rank count (see the top).
        std::vector<fs::path> outs;
        fs::path out;
        const auto nextOut = [&] {
            out = work / ("out-" + std::to_string(::getpid()) + "-" + std::to_string(outs.size()));
            fs::remove_all(out, ec); // a folder of an earlier process with this pid
            outs.push_back(out);
        };
        const fs::path stdoutFile = work / ("stdout-" + std::to_string(::getpid()) + ".txt");
        auto run = [&](const std::string& what, std::vector<std::string> command) {
            Row r { what, {}, load() };
            r.run = runChild(command, stdoutFile);
            printRow(r, ranks, smoke);
            return r;
        };
        nextOut();
        const Row whole = run("job (2 steps)", { cli, "compare", "--npu", npu, "--bench", bench, "-o", out.string(), "-c" });
        const std::string wholeOut = readText(stdoutFile);
        if (!smoke && whole.run.ok()) {
            outs.push_back(work / ("floor-" + std::to_string(::getpid())));
            const FileFloor floor = fileCreateFloor(out, outs.back());
            std::printf("    floor: creating the job's %zu output files (%.1f MB; create, write, rename, no fsync) on this "
                        "file system alone takes %.2f s wall, %.2f s CPU (%.2f s per 1,000 ranks)\n",
                        floor.files, double(floor.bytes) / 1e6, floor.wall, floor.cpu, floor.wall * 1000.0 / double(ranks));
        }
        const std::string want = "job origin: step 0 rank" + std::to_string(bugRank) + " Functional.gelu.1.forward";
        if (!whole.run.ok() || wholeOut.find(want) == std::string::npos) {
            std::printf("  FAILED: the job did not end with \"%s\" (exit %d)\n", want.c_str(), whole.run.exitCode());
            ++failures;
        }
        nextOut();
        const Row da = run("-da (step 0)", { cli, "compare", "--npu", npu + "/step0", "--bench", bench + "/step0", "-o",
                                             out.string(), "--profile", "msprobe-26", "-da" });
        if (!da.run.ok() || readText(stdoutFile).find("diff_analyze_") == std::string::npos) {
            std::printf("  FAILED: -da wrote no diff_analyze file (exit %d)\n", da.run.exitCode());
            ++failures;
        }
        nextOut();
        const Row overflow = run("overflow_check (step 0)", { cli, "overflow_check", "-i", npu + "/step0", "-o", out.string() });
        if (!overflow.run.ok()) {
            std::printf("  FAILED: overflow_check exit %d\n", overflow.run.exitCode());
            ++failures;
        }
        const Row info = run("info (2 steps)", { cli, "info", npu });
        if (!info.run.ok()) {
            std::printf("  FAILED: info exit %d\n", info.run.exitCode());
            ++failures;
        }
        if (!mpi.empty()) {
            const fs::path mpirun = findMpirun();
            if (mpirun.empty()) {
                std::printf("  MPI: no mpirun on PATH (Debian: openmpi-bin); skipped\n");
            } else {
                // Open MPI refuses root without these; CI and this machine run as root.
                ::setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
                ::setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
                double one = 0;
                for (const long p : mpi) {
                    nextOut();
                    std::vector<std::string> command;
                    if (p > 1)
                        command = { mpirun.string(), "--oversubscribe", "-n", std::to_string(p), cli };
                    else
                        command = { cli };
                    for (const std::string& a : { std::string("compare"), std::string("--npu"), npu,
                                                  std::string("--bench"), bench, std::string("-o"), out.string(),
                                                  std::string("-c") })
                        command.push_back(a);
                    const Row r = run(p > 1 ? "job, mpirun -n " + std::to_string(p) + " (" + std::to_string(p - 1)
                                                  + (p == 2 ? " worker)" : " workers)")
                                            : "job, 1 process",
                                      command);
                    if (p == 1)
                        one = r.run.wall;
                    if (!r.run.ok() || readText(stdoutFile).find(want) == std::string::npos) {
                        std::printf("  FAILED: the MPI job did not name the origin (exit %d)\n", r.run.exitCode());
                        ++failures;
                    } else if (one > 0) {
                        std::printf("  %-22s speed-up over 1 process: %.2fx\n", "", one / r.run.wall);
                    }
                }
            }
        }
        for (const fs::path& o : outs)
            fs::remove_all(o, ec);
        fs::remove(stdoutFile, ec);
    }
    return failures ? 1 : 0;
}
