// SPDX-License-Identifier: Apache-2.0
// probescope-bench-collect: what the collector costs. Step time of the example model (conv + attention
// + MLP) without a debugger and with statistics / tensor dumps at L1 and mix, and the write throughput
// of tensor mode on large tensors. Run by the bench-collect target; timing is never a unit test.
#include "model.h"

#include "../../core/collect/ptwriter.h"
#include "../bench/procstatus.h"

#include <probescope/collect/precisiondebugger.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

namespace fs = std::filesystem;
namespace collect = probescope::collect;
namespace example = probescope::example;

namespace {

using Clock = std::chrono::steady_clock;

double seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

std::uintmax_t folderBytes(const fs::path& dir)
{
    std::uintmax_t total = 0;
    std::error_code ec;
    for (const auto& e : fs::recursive_directory_iterator(dir, ec)) {
        if (e.is_regular_file(ec))
            total += e.file_size(ec);
    }
    return total;
}

struct Mode
{
    const char* name;
    std::optional<collect::Task> task; ///< none: no debugger
    collect::Level level = collect::Level::L1;
};

/// Median step time per mode. The modes take turns, a few steps each, so that a change in the machine's
/// load (other builds) spreads over all of them instead of falsifying one.
void stepTable(const char* title, const example::ModelSize& size, int rounds, int steps, const fs::path& scratch)
{
    const Mode modes[] = {
        { "none", std::nullopt },
        { "statistics-L1", collect::Task::Statistics, collect::Level::L1 },
        { "statistics-mix", collect::Task::Statistics, collect::Level::Mix },
        { "tensor-L1", collect::Task::Tensor, collect::Level::L1 },
        { "tensor-mix", collect::Task::Tensor, collect::Level::Mix },
    };
    constexpr std::size_t kModes = std::size(modes);
    std::vector<double> times[kModes];
    double bytes[kModes] = {};

    collect::seedAll(2024, false);
    example::ExampleNet model(size);
    torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(0.001));
    const example::Batch batch = example::makeBatch(0, size);
    for (int round = 0; round < rounds; ++round) {
        for (std::size_t m = 0; m < kModes; ++m) {
            const fs::path dumpPath = scratch / modes[m].name;
            std::unique_ptr<collect::PrecisionDebugger> debugger;
            if (modes[m].task) {
                collect::Options o;
                o.dumpPath = dumpPath.string();
                o.task = *modes[m].task;
                o.level = modes[m].level;
                o.model = model.ptr();
                debugger = std::make_unique<collect::PrecisionDebugger>(o);
            }
            for (int i = 0; i <= steps; ++i) { // the first step of a turn warms up
                const auto t0 = Clock::now();
                if (debugger)
                    debugger->start();
                const auto logits = collect::call(model)(batch.images);
                const auto loss = torch::nn::functional::cross_entropy(logits, batch.labels);
                loss.backward();
                if (debugger)
                    debugger->stop();
                optimizer.step();
                optimizer.zero_grad();
                if (debugger)
                    debugger->step();
                if (i > 0)
                    times[m].push_back(seconds(Clock::now() - t0));
            }
            debugger.reset();
            if (modes[m].task)
                bytes[m] = static_cast<double>(folderBytes(dumpPath)) / (steps + 1);
            fs::remove_all(dumpPath);
        }
    }
    std::printf("\n%s: batch %lld, image %lldx%lld, width %lld, hidden %lld; median of %d steps per mode\n", title,
                static_cast<long long>(size.batch), static_cast<long long>(size.image), static_cast<long long>(size.image),
                static_cast<long long>(size.width), static_cast<long long>(size.hidden), rounds * steps);
    std::printf("  %-16s %12s %8s %14s\n", "mode", "step (ms)", "x none", "dump MB/step");
    double base = 0;
    for (std::size_t m = 0; m < kModes; ++m) {
        std::sort(times[m].begin(), times[m].end());
        const double median = times[m][times[m].size() / 2];
        if (m == 0)
            base = median;
        std::printf("  %-16s %12.2f %8.2f %14.2f\n", modes[m].name, median * 1e3, median / base, bytes[m] / 1e6);
    }
    std::fflush(stdout);
}

/// Tensor mode on large tensors: an elementwise op whose input and output are saved, timed against
/// the same op without a debugger; also the .pt writer alone.
void throughput(std::int64_t megabytes, int repeat, const fs::path& scratch)
{
    const std::int64_t numel = megabytes * 1024 * 1024 / 4;
    const at::Tensor x = at::randn({ numel });
    at::Tensor sink = x.relu(); // fault the output pages in once

    std::vector<double> plain;
    for (int i = 0; i < repeat; ++i) {
        const auto t0 = Clock::now();
        sink = x.relu();
        plain.push_back(seconds(Clock::now() - t0));
    }
    std::vector<double> dumped;
    double bytes = 0;
    {
        collect::Options o;
        o.dumpPath = (scratch / "throughput").string();
        o.task = collect::Task::Tensor;
        o.level = collect::Level::L1;
        collect::PrecisionDebugger debugger(o);
        for (int i = 0; i < repeat; ++i) {
            debugger.start();
            const auto t0 = Clock::now();
            sink = x.relu();
            dumped.push_back(seconds(Clock::now() - t0));
            debugger.stop();
            bytes = static_cast<double>(folderBytes(debugger.rankDir() / "dump_tensor_data"));
            fs::remove_all(debugger.rankDir());
            debugger.step();
        }
    }
    fs::remove_all(scratch / "throughput");
    std::sort(plain.begin(), plain.end());
    std::sort(dumped.begin(), dumped.end());
    const double extra = dumped[dumped.size() / 2] - plain[plain.size() / 2];
    std::printf("\ntensor mode, one relu on %lld MiB float32 (input and output saved, %.0f MB per call), median of %d:\n",
                static_cast<long long>(megabytes), bytes / 1e6, repeat);
    std::printf("  op alone %.1f ms, op dumped %.1f ms: %.2f GB/s of .pt data (statistics, CRC-32 and write)\n",
                plain[plain.size() / 2] * 1e3, dumped[dumped.size() / 2] * 1e3, bytes / extra / 1e9);

    // The writer alone (CRC-32 + one writev to the page cache).
    std::vector<double> writes;
    const fs::path file = scratch / "alone.pt";
    for (int i = 0; i < repeat; ++i) {
        collect::PtTensorBytes t { "FloatStorage", { numel }, x.data_ptr(), x.nbytes(), 4 };
        const auto t0 = Clock::now();
        if (auto problem = collect::writePt(file, t))
            std::fprintf(stderr, "%s\n", problem->format().c_str());
        writes.push_back(seconds(Clock::now() - t0));
        fs::remove(file);
    }
    std::sort(writes.begin(), writes.end());
    std::printf("  .pt writer alone: %.2f GB/s\n", static_cast<double>(x.nbytes()) / writes[writes.size() / 2] / 1e9);
}

/// dd-like: `megabytes` MiB in 8 MiB write()s to a new file in `dir`, then fdatasync. Returns bytes per
/// second {into the page cache, through to the device}.
std::pair<double, double> diskSpeed(const fs::path& dir, std::int64_t megabytes)
{
    const fs::path file = dir / "dd.bin";
    std::vector<char> block(std::size_t(8) << 20, '\x5a');
    const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return { 0, 0 };
    const auto t0 = Clock::now();
    std::uint64_t written = 0;
    for (std::int64_t i = 0; i < megabytes / 8; ++i) {
        const ssize_t n = ::write(fd, block.data(), block.size());
        if (n <= 0)
            break;
        written += static_cast<std::uint64_t>(n);
    }
    const double cached = seconds(Clock::now() - t0);
    ::fdatasync(fd);
    const double synced = seconds(Clock::now() - t0);
    ::close(fd);
    fs::remove(file);
    return { static_cast<double>(written) / cached, static_cast<double>(written) / synced };
}

/// CPU time (user + system) of the calling thread so far.
double threadCpuSeconds()
{
    rusage usage {};
    ::getrusage(RUSAGE_THREAD, &usage);
    const auto s = [](const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) * 1e-6; };
    return s(usage.ru_utime) + s(usage.ru_stime);
}

/// The peak RSS counter (VmHWM) restarts from the current RSS (Linux >= 4.0); false where not allowed.
bool resetPeakRss()
{
    const int fd = ::open("/proc/self/clear_refs", O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    const bool ok = ::write(fd, "5", 1) == 1;
    ::close(fd);
    return ok;
}

/// Tensor mode with and without the background writer on a model whose step computes for a while,
/// beside the disk's own speed: the step costs about max(compute, disk) with it, compute + disk without;
/// on a slow disk (the PROBESCOPE_TEST_DISK_MBPS seam, simulated) the peak RSS grows by at most the
/// queue's bound (plus one entry), not by what the step dumps.
void overlapTable(const example::ModelSize& size, int steps, double slowMbps, const fs::path& scratch,
                  std::int64_t ddMegabytes)
{
    const auto [cached, device] = diskSpeed(scratch, ddMegabytes);
    std::printf("\nwriting while the model computes (tensor L1): batch %lld, image %lldx%lld, width %lld, hidden %lld; "
                "median of %d steps per mode\n",
                static_cast<long long>(size.batch), static_cast<long long>(size.image), static_cast<long long>(size.image),
                static_cast<long long>(size.width), static_cast<long long>(size.hidden), steps);
    std::printf("  the disk (%s), dd-like %lld MiB in 8 MiB writes: %.0f MB/s into the page cache, %.0f MB/s with "
                "fdatasync\n",
                scratch.c_str(), static_cast<long long>(ddMegabytes), cached / 1e6, device / 1e6);
    struct OverlapMode
    {
        const char* name;
        bool dump;
        std::uint64_t bound;
        double mbps; ///< simulated disk speed; 0 = the real one
    };
    const OverlapMode modes[] = {
        { "none", false, 0, 0 },
        { "in training thread", true, 0, 0 },
        { "background, 1 GiB", true, std::uint64_t(1) << 30, 0 },
        { "in training thread", true, 0, slowMbps },
        { "background, 64 MiB", true, std::uint64_t(64) << 20, slowMbps },
        { "background, 256 MiB", true, std::uint64_t(256) << 20, slowMbps },
    };
    const bool rssKnown = resetPeakRss();
    std::printf("  %-22s %9s %10s %9s %8s %8s %8s %8s %8s %8s\n", "mode", "disk MB/s", "step (ms)", "train CPU",
                "MB/step", "disk ms", "c+d ms", "max(c,d)", "RSS +MB", "queue MB");

    collect::seedAll(2024, false);
    example::ExampleNet model(size);
    torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(0.001));
    const example::Batch batch = example::makeBatch(0, size);
    double compute = 0;
    for (const OverlapMode& mode : modes) {
        collect::setTestDiskSpeed(static_cast<std::uint64_t>(mode.mbps * 1e6));
        const fs::path dumpPath = scratch / "overlap";
        const std::uint64_t rssBefore = probescope::bench::procStatusBytes("VmRSS");
        resetPeakRss();
        std::vector<double> times;
        std::vector<double> cpu;
        collect::WriterStats stats;
        {
            std::unique_ptr<collect::PrecisionDebugger> debugger;
            if (mode.dump) {
                collect::Options o;
                o.dumpPath = dumpPath.string();
                o.task = collect::Task::Tensor;
                o.level = collect::Level::L1;
                o.asyncQueueBytes = mode.bound;
                debugger = std::make_unique<collect::PrecisionDebugger>(o);
            }
            for (int i = 0; i <= steps; ++i) { // the first step warms up
                const auto t0 = Clock::now();
                const double cpu0 = threadCpuSeconds();
                if (debugger)
                    debugger->start();
                const auto logits = collect::call(model)(batch.images);
                torch::nn::functional::cross_entropy(logits, batch.labels).backward();
                if (debugger)
                    debugger->stop();
                optimizer.step();
                optimizer.zero_grad();
                if (debugger)
                    debugger->step();
                if (i > 0) {
                    times.push_back(seconds(Clock::now() - t0));
                    cpu.push_back(threadCpuSeconds() - cpu0);
                }
            }
            if (debugger)
                stats = debugger->writerStats();
        }
        const double peak = rssKnown
            ? static_cast<double>(probescope::bench::procStatusBytes("VmHWM")) - static_cast<double>(rssBefore)
            : 0;
        const double bytes = mode.dump ? static_cast<double>(folderBytes(dumpPath)) / (steps + 1) : 0;
        fs::remove_all(dumpPath);
        std::sort(times.begin(), times.end());
        std::sort(cpu.begin(), cpu.end());
        const double median = times[times.size() / 2];
        if (!mode.dump)
            compute = median;
        const double speed = mode.mbps > 0 ? mode.mbps * 1e6 : cached;
        const double disk = bytes / speed;
        std::printf("  %-22s %9.0f %10.0f %9.0f %8.0f %8.0f %8.0f %8.0f %8.0f %8.0f\n", mode.name, speed / 1e6,
                    median * 1e3, cpu[cpu.size() / 2] * 1e3, bytes / 1e6, disk * 1e3, (compute + disk) * 1e3, std::max(compute, disk) * 1e3,
                    rssKnown ? peak / 1e6 : -1.0, static_cast<double>(stats.peakQueuedBytes) / 1e6);
        std::fflush(stdout);
    }
    collect::setTestDiskSpeed(0);
    std::printf("  disk ms = MB/step / disk MB/s (the page-cache speed for the real disk; %.0f MB/s simulated by the\n"
                "  PROBESCOPE_TEST_DISK_MBPS seam below); c = the step without a debugger; train CPU: CPU ms of the\n"
                "  training thread per step (median); RSS +MB: VmHWM over the RSS before the mode; queue MB: the\n"
                "  background writer's peak of queued snapshots.\n",
                slowMbps);
    std::printf("  machine: load average %s", [] {
        static char line[128] = "?\n";
        if (FILE* f = std::fopen("/proc/loadavg", "r")) {
            if (!std::fgets(line, sizeof line, f))
                std::snprintf(line, sizeof line, "?\n");
            std::fclose(f);
        }
        return line;
    }());
}

} // namespace

int main(int argc, char** argv)
{
    bool quick = false;
    bool overlapOnly = false;
    double slowMbps = 300;
    fs::path scratch = fs::temp_directory_path() / ("probescope-bench-collect-" + std::to_string(::getpid()));
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--quick") == 0)
            quick = true;
        else if (std::strcmp(argv[i], "--scratch") == 0 && i + 1 < argc)
            scratch = argv[++i];
        else if (std::strcmp(argv[i], "--overlap") == 0)
            overlapOnly = true;
        else if (std::strcmp(argv[i], "--slow-disk-mbps") == 0 && i + 1 < argc && std::atof(argv[i + 1]) > 0)
            slowMbps = std::atof(argv[++i]);
        else {
            std::fprintf(stderr, "usage: probescope-bench-collect [--quick] [--scratch DIR] [--overlap] "
                                 "[--slow-disk-mbps N]\n");
            return 2;
        }
    }
    at::set_num_threads(1);
    fs::create_directories(scratch);
    std::printf("probescope-bench-collect (LibTorch %s, 1 intra-op thread)%s\n", TORCH_VERSION, quick ? " --quick" : "");
    try {
        example::ModelSize larger;
        larger.batch = 32;
        larger.image = 32;
        larger.width = 64;
        larger.hidden = 256;
        if (overlapOnly || quick) {
            // --quick: tiny sizes, no timing checked; --overlap: this table alone
            overlapTable(quick ? example::ModelSize {} : larger, quick ? 1 : 4, slowMbps, scratch, quick ? 16 : 512);
            if (overlapOnly) {
                fs::remove_all(scratch);
                return 0;
            }
        }
        stepTable("the example model as probescope-example-train runs it", example::ModelSize {}, quick ? 1 : 8,
                  quick ? 2 : 10, scratch);
        if (!quick) {
            stepTable("the example model, larger", larger, 4, 3, scratch);
            overlapTable(larger, 4, slowMbps, scratch, 512);
        }
        throughput(quick ? 4 : 256, quick ? 1 : 5, scratch);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "probescope-bench-collect: %s\n", e.what());
        fs::remove_all(scratch);
        return 1;
    }
    fs::remove_all(scratch);
    return 0;
}
