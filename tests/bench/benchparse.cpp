// SPDX-License-Identifier: Apache-2.0
//
// probescope-bench: measures how fast a dump.json is parsed and how much memory that takes.
//
//   probescope-bench parse FILE [--parser probescope|probescope-json|nlohmann] [--repeat K]
//                               [--expect-entries N]
//
// One parser per process: peak RSS (VmHWM) is a per-process high-water mark, so measuring two parsers
// in one process would charge the first one's peak to the second.
//
//   probescope       probescope::dump::readDumpJson (what the application uses)
//   probescope-json  probescope::dump::JsonDocument::parse alone, on the mapped file (the JSON layer
//                    without entry indexing and leaf validation, to tell where time goes)
//   nlohmann         nlohmann::json::parse into a DOM, on the same mapped file
//   stack            probescope::dump::readStackJson on a stack.json: the index of keys and frame ranges
//   construct        probescope::dump::readConstructJson on a construct.json
//   tree             probescope::tree::ConstructTree::build for FILE = a dump.json with its construct.json
//   keys             probescope::dump::scanDumpKeys on a dump.json (the viewer's early tree reads only the keys)
//   keys-tree        probescope::tree::ConstructTree::buildFromKeys (the scan and construct.json not timed)
//                    beside it (reading both is not timed)
//
// Speed is only ever checked here, never by timed unit tests; --expect-entries lets a ctest smoke
// test check that the generator and the reader agree without timing anything.

#include "procstatus.h"

#include "core/dump/dumpfile.h"
#include "core/dump/jsondocument.h"
#include "core/dump/rankdump.h"
#include "core/dump/keyscan.h"
#include "core/tree/constructtree.h"
#include "core/util/fileio.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <vector>

#include <time.h>

namespace fs = std::filesystem;

namespace probescope::bench {
namespace {

constexpr double kGoalMBps = 100.0;      // issue goal: at least 100 MB/s on the 2-core machine
constexpr double kGoalMemoryRatio = 3.0; // issue goal: peak memory at most 3x the file size
constexpr double kMB = 1e6;              // MB = 10^6 bytes throughout, for throughput and memory alike

enum class Parser { ProbeScope, ProbeScopeJson, Nlohmann, Stack, Construct, Tree, Keys, KeysTree };

struct Options
{
    fs::path file;
    Parser parser = Parser::ProbeScope;
    int repeat = 1;
    std::optional<std::uint64_t> expectEntries;
};

struct RunResult
{
    bool ok = false;
    std::string error;
    std::uint64_t entries = 0;
    std::size_t errors = 0;   // error diagnostics
    std::size_t warnings = 0; // other diagnostics
    std::optional<std::string> firstDiagnostic;
    // Read while the parse result is still alive, to split the peak into file pages and heap.
    std::uint64_t rssAnon = 0;
    std::uint64_t rssFile = 0;
    std::uint64_t documentBytes = 0; // JsonDocument::memoryBytes() (ProbeScope parsers only)
    std::uint64_t documentNodes = 0;
    std::uint64_t indexBytes = 0; // stack: StackIndex::memoryBytes(); construct: ConstructLinks::memoryBytes()
};

/// CPU time of the process (user + system): less disturbed than wall time when other jobs share the cores.
double cpuSeconds()
{
    timespec ts {};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

using Clock = std::chrono::steady_clock;

/// Parses once; `seconds` (wall) and `cpu` cover opening/mapping the file and parsing, not freeing the result.
RunResult runOnce(const Options& opt, double& seconds, double& cpu)
{
    RunResult r;
    const double cpuStart = cpuSeconds();
    const auto start = Clock::now();
    const auto stop = [&] {
        seconds = std::chrono::duration<double>(Clock::now() - start).count();
        cpu = cpuSeconds() - cpuStart;
    };
    // The tree parsers time only the build, not reading what it is built from.
    const auto timedBuild = [&](auto build) {
        const double buildCpu = cpuSeconds();
        const auto buildStart = Clock::now();
        auto built = build();
        seconds = std::chrono::duration<double>(Clock::now() - buildStart).count();
        cpu = cpuSeconds() - buildCpu;
        return built;
    };
    const auto sampleMemory = [&r] {
        r.rssAnon = procStatusBytes("RssAnon");
        r.rssFile = procStatusBytes("RssFile");
    };
    switch (opt.parser) {
    case Parser::ProbeScope: {
        auto result = dump::readDumpJson(opt.file);
        stop();
        if (!result) {
            r.error = result.error().format();
            return r;
        }
        const auto& file = *result.value();
        sampleMemory();
        r.entries = file.entries.size();
        if (file.document) {
            r.documentBytes = file.document->memoryBytes();
            r.documentNodes = file.document->nodeCount();
        }
        for (const auto& d : file.diagnostics) {
            if (d.severity == Severity::Error)
                ++r.errors;
            else
                ++r.warnings;
            if (!r.firstDiagnostic)
                r.firstDiagnostic = d.format();
        }
        r.ok = true;
        break;
    }
    case Parser::ProbeScopeJson: {
        auto mapped = MappedFile::open(opt.file);
        if (!mapped) {
            stop();
            r.error = mapped.error().format();
            return r;
        }
        auto outcome = dump::JsonDocument::parse(mapped.value()->text(), opt.file.string());
        stop();
        if (!outcome.document) {
            r.error = outcome.diagnostics.empty() ? "parse failed" : outcome.diagnostics.front().format();
            return r;
        }
        sampleMemory();
        r.documentBytes = outcome.document->memoryBytes();
        r.documentNodes = outcome.document->nodeCount();
        const auto data = outcome.document->root().find("data");
        r.entries = data && data->isObject() ? data->size() : 0;
        r.ok = true;
        break;
    }
    case Parser::Stack: {
        auto stack = dump::readStackJson(opt.file);
        stop();
        if (!stack) {
            r.error = stack.error().format();
            return r;
        }
        sampleMemory();
        r.entries = stack->framesOf.size();
        r.indexBytes = stack->framesOf.memoryBytes();
        r.ok = true;
        break;
    }
    case Parser::Construct: {
        auto construct = dump::readConstructJson(opt.file);
        stop();
        if (!construct) {
            r.error = construct.error().format();
            return r;
        }
        sampleMemory();
        r.entries = construct->links.size();
        r.indexBytes = construct->links.memoryBytes();
        r.ok = true;
        break;
    }
    case Parser::Tree: {
        auto rank = std::make_shared<dump::RankDump>();
        auto dumpFile = dump::readDumpJson(opt.file);
        auto construct = dump::readConstructJson(opt.file.parent_path() / "construct.json");
        if (!dumpFile || !construct) {
            stop();
            r.error = !dumpFile ? dumpFile.error().format() : construct.error().format();
            return r;
        }
        rank->dump = *dumpFile;
        rank->construct = std::move(*construct);
        const auto tree = timedBuild([&] { return tree::ConstructTree::build(rank); });
        sampleMemory();
        r.entries = tree->size();
        r.ok = true;
        return r;
    }
    case Parser::Keys: {
        auto keys = dump::scanDumpKeys(opt.file);
        stop();
        if (!keys) {
            r.error = keys.error().format();
            return r;
        }
        sampleMemory();
        r.entries = keys->keys.size();
        r.indexBytes = keys->text->capacity() + keys->keys.capacity() * sizeof(std::string_view);
        r.ok = true;
        break;
    }
    case Parser::KeysTree: {
        auto keys = dump::scanDumpKeys(opt.file);
        auto construct = dump::readConstructJson(opt.file.parent_path() / "construct.json");
        if (!keys || !construct) {
            stop();
            r.error = !keys ? keys.error().format() : construct.error().format();
            return r;
        }
        const auto tree = timedBuild([&] { return tree::ConstructTree::buildFromKeys(*keys, *construct, opt.file); });
        sampleMemory();
        r.entries = tree->size();
        r.ok = true;
        return r;
    }
    case Parser::Nlohmann: {
        auto mapped = MappedFile::open(opt.file);
        if (!mapped) {
            stop();
            r.error = mapped.error().format();
            return r;
        }
        const auto text = mapped.value()->text();
        nlohmann::json doc;
        try {
            doc = nlohmann::json::parse(text.begin(), text.end());
        } catch (const std::exception& e) {
            stop();
            r.error = e.what();
            return r;
        }
        stop();
        sampleMemory();
        const auto data = doc.find("data");
        r.entries = data != doc.end() && data->is_object() ? data->size() : 0;
        r.ok = true;
        break;
    }
    }
    return r;
}

const char* parserName(Parser p)
{
    switch (p) {
    case Parser::ProbeScope: return "probescope (dump::readDumpJson)";
    case Parser::ProbeScopeJson: return "probescope-json (dump::JsonDocument::parse)";
    case Parser::Nlohmann: return "nlohmann (nlohmann::json::parse, DOM)";
    case Parser::Stack: return "stack (dump::readStackJson: the index)";
    case Parser::Construct: return "construct (dump::readConstructJson)";
    case Parser::Tree: return "tree (tree::ConstructTree::build, reading not timed)";
    case Parser::Keys: return "keys (dump::scanDumpKeys)";
    case Parser::KeysTree: return "keys-tree (tree::ConstructTree::buildFromKeys, scan and construct.json not timed)";
    }
    return "?";
}

int parseCommand(const Options& opt)
{
    std::error_code ec;
    const auto size = fs::file_size(opt.file, ec);
    if (ec) {
        std::fprintf(stderr, "probescope-bench: cannot read %s: %s\n", opt.file.c_str(), ec.message().c_str());
        return 1;
    }
    const double sizeMB = double(size) / kMB;
    const std::uint64_t baseline = procStatusBytes("VmRSS");

    std::printf("== %s\n", parserName(opt.parser));
    std::printf("  file           : %s\n", opt.file.c_str());
    std::printf("  file size      : %.1f MB (%llu bytes)\n", sizeMB, static_cast<unsigned long long>(size));
    // The parsers are single-threaded: on a busy machine wall time grows, CPU time much less.
    if (std::ifstream loadavg("/proc/loadavg"); loadavg) {
        double load = 0;
        loadavg >> load;
        const unsigned cpus = std::thread::hardware_concurrency();
        std::printf("  machine        : load average %.2f on %u CPUs%s\n", load, cpus,
                    load > double(cpus) - 0.5 ? " (busy: wall times are inflated, see cpu time)" : "");
    }
    if (opt.parser == Parser::Nlohmann)
        std::printf("  note           : nlohmann::json rejects the NaN/Infinity tokens msprobe writes, so it is "
                    "measured on a file generated with --no-nan\n");
    std::fflush(stdout);

    std::vector<double> times;
    std::vector<double> cpuTimes;
    RunResult last;
    for (int i = 0; i < opt.repeat; ++i) {
        double seconds = 0;
        double cpu = 0;
        last = runOnce(opt, seconds, cpu);
        if (!last.ok) {
            std::printf("  FAILED         : %s\n", last.error.c_str());
            if (opt.parser == Parser::Nlohmann)
                std::printf("  hint           : if the file holds NaN/Infinity, generate it with probescope-gendump --no-nan\n");
            return 1;
        }
        times.push_back(seconds);
        cpuTimes.push_back(cpu);
    }
    const double best = *std::min_element(times.begin(), times.end());
    const double bestCpu = *std::min_element(cpuTimes.begin(), cpuTimes.end());
    const std::uint64_t peak = procStatusBytes("VmHWM");
    const double mbps = best > 0 ? sizeMB / best : 0;
    const double ratio = size > 0 ? double(peak) / double(size) : 0;

    std::printf("  entries        : %llu\n", static_cast<unsigned long long>(last.entries));
    if (opt.parser == Parser::ProbeScope) {
        std::printf("  diagnostics    : %zu error(s), %zu other\n", last.errors, last.warnings);
        if (last.firstDiagnostic)
            std::printf("  first          : %s\n", last.firstDiagnostic->c_str());
    }
    std::printf("  wall time      : %.3f s (best of %d:", best, opt.repeat);
    for (const double t : times)
        std::printf(" %.3f", t);
    std::printf(")\n");
    std::printf("  cpu time       : %.3f s (best; user+system, %.1f MB/s)\n", bestCpu,
                bestCpu > 0 ? sizeMB / bestCpu : 0.0);
    std::printf("  throughput     : %.1f MB/s (wall)   goal >= %.0f MB/s: %s\n", mbps, kGoalMBps,
                mbps >= kGoalMBps ? "met" : "NOT met");
    std::printf("  peak RSS       : %.1f MB (VmHWM, process baseline %.1f MB) = %.2f x file size   goal <= %.0fx: %s\n",
                double(peak) / kMB, double(baseline) / kMB, ratio, kGoalMemoryRatio,
                ratio <= kGoalMemoryRatio ? "met" : "NOT met");
    std::printf("  after parse    : RssAnon %.1f MB (heap) + RssFile %.1f MB (mapped file pages)\n",
                double(last.rssAnon) / kMB, double(last.rssFile) / kMB);
    if (last.documentNodes > 0)
        std::printf("  document       : %llu values, %.1f MB (JsonDocument::memoryBytes, %.1f bytes/value)\n",
                    static_cast<unsigned long long>(last.documentNodes), double(last.documentBytes) / kMB,
                    double(last.documentBytes) / double(last.documentNodes));
    if (last.indexBytes > 0)
        std::printf("  index          : %llu keys, %.1f MB (memoryBytes, %.1f bytes/key, %.3f x file size)\n",
                    static_cast<unsigned long long>(last.entries), double(last.indexBytes) / kMB,
                    double(last.indexBytes) / double(std::max<std::uint64_t>(last.entries, 1)),
                    double(last.indexBytes) / double(size));
    std::fflush(stdout);

    int rc = 0;
    if (opt.expectEntries && *opt.expectEntries != last.entries) {
        std::fprintf(stderr, "probescope-bench: expected %llu entries, found %llu\n",
                     static_cast<unsigned long long>(*opt.expectEntries), static_cast<unsigned long long>(last.entries));
        rc = 3;
    }
    if (last.errors > 0) {
        // A generated dump must read cleanly; an error means generator and reader disagree.
        std::fprintf(stderr, "probescope-bench: the reader reported %zu error(s)\n", last.errors);
        rc = rc ? rc : 4;
    }
    return rc;
}

void printUsage(std::FILE* to)
{
    std::fputs("usage: probescope-bench parse FILE [--parser probescope|probescope-json|nlohmann|stack|construct|tree|keys|keys-tree]\n"
               "                              [--repeat K]\n"
               "                              [--expect-entries N]\n"
               "Prints file size, best wall time of K runs, MB/s, entries, and peak RSS (VmHWM) against the\n"
               "goals (>= 100 MB/s, <= 3x file size). Run one parser per process.\n"
               "  --expect-entries N  exit 3 if the number of entries differs (smoke tests)\n"
               "nlohmann::json rejects NaN/Infinity: give it a file made with probescope-gendump --no-nan.\n",
               to);
}

} // namespace
} // namespace probescope::bench

int main(int argc, char** argv)
{
    using namespace probescope::bench;
    if (argc < 2 || std::string_view(argv[1]) == "-h" || std::string_view(argv[1]) == "--help") {
        printUsage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (std::string_view(argv[1]) != "parse" || argc < 3) {
        printUsage(stderr);
        return 2;
    }
    Options opt;
    opt.file = argv[2];
    for (int i = 3; i < argc; ++i) {
        const std::string_view a = argv[i];
        if (i + 1 >= argc) {
            std::fprintf(stderr, "probescope-bench: %s needs a value\n", argv[i]);
            return 2;
        }
        const std::string_view v = argv[++i];
        bool ok = true;
        if (a == "--parser") {
            if (v == "probescope")
                opt.parser = Parser::ProbeScope;
            else if (v == "probescope-json")
                opt.parser = Parser::ProbeScopeJson;
            else if (v == "nlohmann")
                opt.parser = Parser::Nlohmann;
            else if (v == "stack")
                opt.parser = Parser::Stack;
            else if (v == "construct")
                opt.parser = Parser::Construct;
            else if (v == "tree")
                opt.parser = Parser::Tree;
            else if (v == "keys")
                opt.parser = Parser::Keys;
            else if (v == "keys-tree")
                opt.parser = Parser::KeysTree;
            else
                ok = false;
        } else if (a == "--repeat") {
            const auto r = std::from_chars(v.data(), v.data() + v.size(), opt.repeat);
            ok = r.ec == std::errc() && r.ptr == v.data() + v.size() && opt.repeat >= 1;
        } else if (a == "--expect-entries") {
            std::uint64_t n = 0;
            const auto r = std::from_chars(v.data(), v.data() + v.size(), n);
            ok = r.ec == std::errc() && r.ptr == v.data() + v.size();
            opt.expectEntries = n;
        } else {
            std::fprintf(stderr, "probescope-bench: unknown argument '%s'\n", argv[i - 1]);
            printUsage(stderr);
            return 2;
        }
        if (!ok) {
            std::fprintf(stderr, "probescope-bench: bad value '%s' for %s\n", argv[i], argv[i - 1]);
            return 2;
        }
    }
    return parseCommand(opt);
}
