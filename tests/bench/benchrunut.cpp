// SPDX-License-Identifier: Apache-2.0
//
// probescope-benchrunut: APIs replayed per second by run_ut (core/runut + the LibTorch replay), on the
// tensor fixture and on a larger generated L1 statistics dump, with 1 and 2 workers.
//
//   probescope-benchrunut [--fixture DUMP_JSON] [--apis N] [--workers 1,2] [--repeat K] [--seed S]
//                         [--work DIR] [--generate-only]
//
// The generated dump holds N forward calls (with their backward entries) of the common training APIs
// in small shapes, as a model of a few thousand API calls dumps them at level L1 with task statistics,
// so every input is rebuilt from Max/Min/dtype/shape (the slower, random-input path). Each run writes
// its CSV files into a fresh folder under --work; the best of --repeat runs is reported. Speed is only
// measured here, never by timed unit tests.

#include "benchargs.h"

#include "core/runut/runner.h"
#include "core/runuttorch/torchreplayer.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include <sys/resource.h>

namespace fs = std::filesystem;

namespace probescope::bench {
namespace {

struct Options
{
    fs::path fixture = PROBESCOPE_BENCH_FIXTURE;
    int apis = 2000;
    std::vector<int> workers { 1, 2 };
    int repeat = 1;
    std::uint64_t seed = 1234;
    fs::path work = "benchrunut-work";
    bool generateOnly = false;
};

std::string tensor(const std::vector<int>& shape, double max, double min, bool grad = true,
                   const char* dtype = "torch.float32")
{
    std::string s = "{\"type\": \"torch.Tensor\", \"dtype\": \"";
    s += dtype;
    s += "\", \"shape\": [";
    for (std::size_t i = 0; i < shape.size(); ++i) {
        if (i)
            s += ", ";
        s += std::to_string(shape[i]);
    }
    char stats[160];
    std::snprintf(stats, sizeof stats, "], \"Max\": %.6f, \"Min\": %.6f, \"Mean\": %.6f, \"Norm\": %.6f, ", max, min,
                  (max + min) / 2, (max - min) * 4);
    s += stats;
    s += grad ? "\"requires_grad\": true}" : "\"requires_grad\": false}";
    return s;
}

std::string intArg(long v)
{
    return "{\"type\": \"int\", \"value\": " + std::to_string(v) + "}";
}

struct Call
{
    std::string name; ///< Functional.linear
    std::string args, kwargs, output, gradOut, gradIn;
};

/// One "layer" of small training APIs; call i of the dump takes pattern i % size.
std::vector<Call> patterns()
{
    const int b = 8, t = 16, h = 64, f = 128;
    std::vector<Call> p;
    auto add = [&](std::string name, std::string args, std::string kwargs, std::string out, std::string gradIn) {
        p.push_back({ std::move(name), std::move(args), std::move(kwargs), out, out, std::move(gradIn) });
    };
    const std::string x = tensor({ b, t, h }, 3.0, -3.0);
    add("Functional.layer_norm", x + ", {\"type\": \"torch.Size\", \"value\": [64]}, " + tensor({ h }, 1.1, 0.9) + ", "
            + tensor({ h }, 0.1, -0.1) + ", {\"type\": \"float\", \"value\": 1e-05}",
        "{}", tensor({ b, t, h }, 3.0, -3.0), x + ", null, " + tensor({ h }, 1, -1) + ", " + tensor({ h }, 1, -1));
    add("Functional.linear", x + ", " + tensor({ f, h }, 0.1, -0.1) + ", " + tensor({ f }, 0.1, -0.1), "{}",
        tensor({ b, t, f }, 2.0, -2.0), x + ", " + tensor({ f, h }, 1, -1) + ", " + tensor({ f }, 1, -1));
    add("Functional.gelu", tensor({ b, t, f }, 2.0, -2.0), "{}", tensor({ b, t, f }, 2.0, -0.17),
        tensor({ b, t, f }, 1, -1));
    add("Functional.linear", tensor({ b, t, f }, 2.0, -0.17) + ", " + tensor({ h, f }, 0.1, -0.1) + ", "
            + tensor({ h }, 0.1, -0.1),
        "{}", tensor({ b, t, h }, 2.0, -2.0),
        tensor({ b, t, f }, 1, -1) + ", " + tensor({ h, f }, 1, -1) + ", " + tensor({ h }, 1, -1));
    add("Tensor.__add__", x + ", " + tensor({ b, t, h }, 2.0, -2.0), "{}", tensor({ b, t, h }, 5.0, -5.0),
        x + ", " + x);
    add("Tensor.transpose", x + ", " + intArg(-2) + ", " + intArg(-1), "{}", tensor({ b, h, t }, 3.0, -3.0), x);
    add("Torch.matmul", x + ", " + tensor({ b, h, t }, 3.0, -3.0), "{}", tensor({ b, t, t }, 20.0, -20.0),
        x + ", " + tensor({ b, h, t }, 1, -1));
    add("Functional.softmax", tensor({ b, t, t }, 20.0, -20.0), "{\"dim\": " + intArg(-1) + "}",
        tensor({ b, t, t }, 1.0, 0.0), tensor({ b, t, t }, 1, -1));
    add("Tensor.__mul__", x + ", {\"type\": \"float\", \"value\": 0.125}", "{}", tensor({ b, t, h }, 0.4, -0.4), x);
    add("Functional.relu", x, "{}", tensor({ b, t, h }, 3.0, 0.0), x);
    add("Tensor.sum", x + ", " + intArg(-1), "{}", tensor({ b, t }, 30.0, -30.0), x);
    return p;
}

/// An L1 statistics dump.json of `apis` forward calls, each followed later by its backward entry.
fs::path generate(const fs::path& dir, int apis)
{
    fs::create_directories(dir);
    const fs::path path = dir / "dump.json";
    std::ofstream out(path, std::ios::binary);
    out << "{\n \"task\": \"statistics\",\n \"level\": \"L1\",\n \"framework\": \"pytorch\",\n \"dump_data_dir\": null,\n"
           " \"data\": {\n";
    const auto p = patterns();
    std::vector<int> counter(p.size() * 4, 0);
    std::vector<std::string> names;
    bool first = true;
    auto entry = [&](const std::string& key, const std::string& body) {
        out << (first ? "" : ",\n") << "  \"" << key << "\": " << body;
        first = false;
    };
    // Calls per name are numbered as msprobe numbers them: per API, in call order.
    std::vector<std::pair<std::string, int>> seen;
    for (int i = 0; i < apis; ++i) {
        const Call& c = p[static_cast<std::size_t>(i) % p.size()];
        auto it = std::find_if(seen.begin(), seen.end(), [&](const auto& s) { return s.first == c.name; });
        if (it == seen.end()) {
            seen.emplace_back(c.name, 0);
            it = seen.end() - 1;
        }
        const std::string full = c.name + "." + std::to_string(it->second++);
        names.push_back(full);
        entry(full + ".forward", "{\"input_args\": [" + c.args + "], \"input_kwargs\": " + c.kwargs + ", \"output\": ["
                                     + c.output + "]}");
    }
    for (int i = apis - 1; i >= 0; --i) {
        const Call& c = p[static_cast<std::size_t>(i) % p.size()];
        entry(names[static_cast<std::size_t>(i)] + ".backward",
              "{\"input\": [" + c.gradOut + "], \"output\": [" + c.gradIn + "]}");
    }
    out << "\n }\n}\n";
    return path;
}

struct Figures
{
    double seconds = 1e300;
    double cpuSeconds = 0; ///< process CPU time of that run: the machine may be shared, wall time inflated
    runut::RunUtSummary summary;
};

double processCpuSeconds()
{
    rusage u {};
    getrusage(RUSAGE_SELF, &u);
    return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec)
        + static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

bool runOnce(const fs::path& dump, int workers, const Options& o, const fs::path& outDir, Figures& best)
{
    runut::RunUtOptions options;
    options.apiInfo = dump;
    options.outDir = outDir;
    options.workers = workers;
    options.replay.seed = o.seed;
    const runut::ReplayOptions replay = options.replay;
    const double cpuBefore = processCpuSeconds();
    auto summary = runut::runUt(options, [replay] { return runuttorch::makeTorchReplayer(replay); });
    if (!summary) {
        std::fprintf(stderr, "benchrunut: %s\n", summary.error().format().c_str());
        return false;
    }
    if (summary->seconds < best.seconds) {
        best.seconds = summary->seconds;
        best.cpuSeconds = processCpuSeconds() - cpuBefore;
        best.summary = *summary;
    }
    return true;
}

int run(const Options& o)
{
    fs::create_directories(o.work);
    const fs::path generated = generate(o.work / "generated", o.apis);
    std::printf("generated %s (%d forward calls with backward, task statistics)\n", generated.string().c_str(), o.apis);
    if (o.generateOnly)
        return 0;
    std::vector<std::pair<std::string, fs::path>> dumps;
    if (!o.fixture.empty() && fs::exists(o.fixture))
        dumps.emplace_back("tensor fixture", o.fixture);
    else
        std::printf("tensor fixture %s not found; skipped\n", o.fixture.string().c_str());
    dumps.emplace_back("generated", generated);
    std::printf("%-16s %8s %6s %10s %10s %10s   %s\n", "dump", "workers", "APIs", "seconds", "APIs/s", "CPU s",
                "pass/warn/error/SKIP");
    int runIndex = 0;
    for (const auto& [label, dump] : dumps) {
        for (int w : o.workers) {
            Figures best;
            for (int r = 0; r < o.repeat; ++r) {
                const fs::path out = o.work / ("out-" + std::to_string(runIndex++));
                fs::remove_all(out);
                if (!runOnce(dump, w, o, out, best))
                    return 1;
            }
            const auto& s = best.summary;
            std::printf("%-16s %8d %6zu %10.3f %10.1f %10.3f   %zu/%zu/%zu/%zu", label.c_str(), w, s.apis, best.seconds,
                        static_cast<double>(s.apis) / best.seconds, best.cpuSeconds, s.passed, s.warnings, s.errors,
                        s.skipped);
            if (s.dumpedResultCsv)
                std::printf("   dumped outputs: %zu error(s), first %s", s.dumpedErrors,
                            s.firstDumpedFailing.empty() ? "-" : s.firstDumpedFailing.c_str());
            std::printf("\n");
        }
    }
    return 0;
}

void usage()
{
    std::fputs("usage: probescope-benchrunut [--fixture DUMP_JSON] [--apis N] [--workers 1,2] [--repeat K] [--seed S]\n"
               "                             [--work DIR] [--generate-only]\n",
               stderr);
}

} // namespace
} // namespace probescope::bench

int main(int argc, char** argv)
{
    using namespace probescope::bench;
    Options o;
    for (int i = 1; i < argc; ++i) {
        const std::string_view a = argv[i];
        if (a == "--fixture") {
            o.fixture = optionValue(argv[0], argc, argv, i);
        } else if (a == "--apis") {
            if (!parseNumber(optionValue(argv[0], argc, argv, i), o.apis) || o.apis < 1)
                return usage(), 2;
        } else if (a == "--workers") {
            o.workers.clear();
            std::string_view list = optionValue(argv[0], argc, argv, i);
            while (!list.empty()) {
                const std::size_t comma = std::min(list.find(','), list.size());
                int w = 0;
                if (!parseNumber(list.substr(0, comma), w) || w < 1 || w > 64)
                    return usage(), 2;
                o.workers.push_back(w);
                list.remove_prefix(std::min(comma + 1, list.size()));
            }
        } else if (a == "--repeat") {
            if (!parseNumber(optionValue(argv[0], argc, argv, i), o.repeat) || o.repeat < 1)
                return usage(), 2;
        } else if (a == "--seed") {
            if (!parseNumber(optionValue(argv[0], argc, argv, i), o.seed))
                return usage(), 2;
        } else if (a == "--work") {
            o.work = optionValue(argv[0], argc, argv, i);
        } else if (a == "--generate-only") {
            o.generateOnly = true;
        } else {
            usage();
            return 2;
        }
    }
    return run(o);
}
