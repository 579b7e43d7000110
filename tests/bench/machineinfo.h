// SPDX-License-Identifier: Apache-2.0
#pragma once
// Shared by the bench programs: what the machine gives, printed beside the figures so that a figure measured on
// one machine can be compared with one measured on another (issue 26): the CPU model, the cores, the load, the cost
// of a fresh page of memory and the memory bandwidth.
//
// Why the page cost: on the virtual machines ProbeScope is measured on, a page the process touches for the first
// time costs from ~1.5 µs to ~12 µs of system time depending on the host (the same million-entry compare spent 3 s
// in the kernel on one machine and 11.8 s on another). A run that touches 3 GB of fresh memory pays 0.75 M of them,
// so the figure explains most of the difference in system time between machines.

#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

namespace probescope::bench {

/// This thread's CPU time in ms: on the shared 2-core machine wall time also holds other processes' turns, so the
/// GUI benchmarks check their 100 ms goals on it.
inline double threadCpuMs()
{
    timespec ts {};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

struct MachineInfo
{
    std::string cpuModel;       ///< /proc/cpuinfo's "model name" ("unknown" if absent)
    unsigned cores = 0;         ///< hardware threads the process may use
    std::string load;           ///< /proc/loadavg's three averages at the time of measuring
    std::string thp;            ///< /sys/kernel/mm/transparent_hugepage/enabled, e.g. "always [madvise] never"
    double pageMicros = 0;      ///< wall µs per fresh 4 KiB page touched once (first write to an anonymous mapping)
    double pageSystemMicros = 0; ///< system-time µs per such page (getrusage)
    double hugePageMicros = 0;  ///< the same per 4 KiB of a mapping advised MADV_HUGEPAGE (0: not measured)
    double copyGBps = 0;        ///< memcpy of a large buffer already resident: GB copied per second (best of 3)
};

namespace machine_detail {

inline double secondsOf(const timeval& t)
{
    return double(t.tv_sec) + double(t.tv_usec) / 1e6;
}

inline std::string firstLine(const char* path)
{
    std::ifstream in(path);
    std::string line;
    std::getline(in, line);
    return line;
}

/// Wall and system µs per 4 KiB of `bytes` of fresh anonymous memory written once, page by page.
inline std::pair<double, double> touchFresh(std::size_t bytes, bool huge)
{
    constexpr std::size_t kHuge = std::size_t { 2 } << 20;
    void* map = ::mmap(nullptr, bytes + kHuge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (map == MAP_FAILED)
        return { 0, 0 };
    // Aligned to 2 MiB so that huge pages can back the whole range when asked for.
    char* at = reinterpret_cast<char*>((reinterpret_cast<std::uintptr_t>(map) + kHuge - 1) & ~(kHuge - 1));
    if (huge && ::madvise(at, bytes, MADV_HUGEPAGE) != 0) {
        ::munmap(map, bytes + kHuge);
        return { 0, 0 };
    }
    rusage before {};
    ::getrusage(RUSAGE_THREAD, &before);
    const auto start = std::chrono::steady_clock::now();
    for (std::size_t i = 0; i < bytes; i += 4096)
        static_cast<volatile char*>(at)[i] = 1;
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    rusage after {};
    ::getrusage(RUSAGE_THREAD, &after);
    ::munmap(map, bytes + kHuge);
    const double pages = double(bytes / 4096);
    return { wall / pages * 1e6, (secondsOf(after.ru_stime) - secondsOf(before.ru_stime)) / pages * 1e6 };
}

/// GB/s of memcpy between two resident buffers of `bytes` (best of 3).
inline double copySpeed(std::size_t bytes)
{
    std::vector<char> from(bytes, 1), to(bytes, 2); // both written once: resident before the copies are timed
    double best = 1e30;
    for (int pass = 0; pass < 3; ++pass) {
        from[std::size_t(pass) * 4096] = static_cast<char>(pass); // a changed source: the copy cannot be skipped
        const auto start = std::chrono::steady_clock::now();
        std::memcpy(to.data(), from.data(), bytes);
        best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
        if (to[std::size_t(pass) * 4096] != static_cast<char>(pass))
            return 0;
    }
    return double(bytes) / 1e9 / best;
}

} // namespace machine_detail

/// Measures the machine (about 0.3 s: 256 MB touched twice, 2 x 128 MB copied three times).
inline MachineInfo measureMachine()
{
    MachineInfo m;
    {
        std::ifstream in("/proc/cpuinfo");
        std::string line;
        while (std::getline(in, line)) {
            if (line.rfind("model name", 0) == 0) {
                const std::size_t colon = line.find(':');
                if (colon != std::string::npos)
                    m.cpuModel = line.substr(std::min(line.size(), colon + 2));
                break;
            }
        }
    }
    if (m.cpuModel.empty())
        m.cpuModel = "unknown";
    m.cores = std::thread::hardware_concurrency();
    const std::string loadavg = machine_detail::firstLine("/proc/loadavg");
    std::size_t cut = 0;
    for (int field = 0; field < 3 && cut != std::string::npos; ++field)
        cut = loadavg.find(' ', cut + (field ? 1 : 0));
    m.load = loadavg.substr(0, cut);
    m.thp = machine_detail::firstLine("/sys/kernel/mm/transparent_hugepage/enabled");
    constexpr std::size_t kTouch = std::size_t { 256 } << 20;
    std::tie(m.pageMicros, m.pageSystemMicros) = machine_detail::touchFresh(kTouch, false);
    m.hugePageMicros = machine_detail::touchFresh(kTouch, true).first;
    m.copyGBps = machine_detail::copySpeed(std::size_t { 128 } << 20);
    return m;
}

/// The lines a benchmark prints (each begins with `indent`).
inline void printMachine(const MachineInfo& m, const char* indent = "  ")
{
    std::printf("%smachine: %s, %u hardware threads, load average %s\n", indent, m.cpuModel.c_str(), m.cores,
                m.load.c_str());
    std::printf("%smachine: fresh page %.2f us per 4 KiB (%.2f us of it system time; 3 GB of fresh memory = %.1f s), "
                "%.2f us per 4 KiB under MADV_HUGEPAGE (THP: %s); memcpy %.1f GB/s\n",
                indent, m.pageMicros, m.pageSystemMicros, m.pageMicros * (3e9 / 4096) / 1e6, m.hugePageMicros,
                m.thp.empty() ? "unknown" : m.thp.c_str(), m.copyGBps);
}

} // namespace probescope::bench
