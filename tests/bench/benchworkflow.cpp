// SPDX-License-Identifier: Apache-2.0
// Issue 34's speed figures: overflow_check over a 1,024-rank statistics dump and data2db --format monitor of
// 1,000 steps x 8 ranks x 200 targets, each against msprobe 26 on the same input (when its sources are given), with
// the machine's load printed beside. The inputs are synthetic and made here:
//
//   probescope-benchworkflow gen-overflow DIR [--ranks 1024] [--blocks 8] [--ops 20]
//       DIR/step0/rank<R>/{dump,construct,stack}.json: per rank `blocks` x (`ops` compute ops, then an all_reduce:
//       over its tensor-parallel group of 8 on even blocks, over its data-parallel group of ranks/8 on odd ones),
//       msprobe 26's statistics format. One NaN origin: rank 5, block 2, op 5 (clean inputs, NaN output); it spreads
//       as the all_reduces carry it (every output NaN when one input of its group is).
//   probescope-benchworkflow gen-monitor DIR [--steps 1000] [--ranks 8] [--targets 200] [--per-file 10]
//       msprobe's v1 monitor layout: DIR/Nov28_10-00-00-rank<R>-bench<R>/actv_<a>-<b>.csv, ops
//       min,max,norm,zeros,nans,mean (+shape,dtype), one micro step.
//   probescope-benchworkflow run --cli PROBESCOPE_CLI --overflow DIR --monitor DIR --work WORK [--msprobe PYTHONPATH]
//       Times each tool once in a fresh process (wall, CPU, peak RSS), prints the machine and its load before and
//       after, and checks that the two tools wrote the same result (anomaly file text; trend_data row count).
#include "benchargs.h"
#include "childrun.h"
#include "machineinfo.h"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace fs = std::filesystem;
using namespace probescope::bench;

namespace {

/// `--name value` pairs after the command word.
struct Args
{
    std::vector<std::pair<std::string, std::string>> values;
    Args(int argc, char** argv, int first)
    {
        for (int i = first; i < argc; ++i) {
            if (std::string_view(argv[i]).starts_with("--")) {
                std::string name = argv[i];
                std::string value(optionValue("probescope-benchworkflow", argc, argv, i));
                values.emplace_back(std::move(name), std::move(value));
            }
        }
    }
    std::string get(const std::string& name) const
    {
        for (const auto& [k, v] : values) {
            if (k == name)
                return v;
        }
        return {};
    }
    int integer(const std::string& name, int fallback) const
    {
        int n = fallback;
        const std::string v = get(name);
        if (!v.empty() && !parseNumber(v, n)) {
            std::fprintf(stderr, "probescope-benchworkflow: %s needs a number\n", name.c_str());
            std::exit(2);
        }
        return n;
    }
};

std::string stat(double max, double min, bool nan)
{
    char buf[320];
    if (nan)
        std::snprintf(buf, sizeof buf,
                      R"({"type": "torch.Tensor", "dtype": "torch.float32", "shape": [4, 64], "Max": NaN, "Min": NaN, "Mean": NaN, "Norm": NaN, "requires_grad": false})");
    else
        std::snprintf(buf, sizeof buf,
                      R"({"type": "torch.Tensor", "dtype": "torch.float32", "shape": [4, 64], "Max": %.17g, "Min": %.17g, "Mean": %.17g, "Norm": %.17g, "requires_grad": false})",
                      max, min, (max + min) / 2, std::fabs(max) * 8);
    return buf;
}

std::string group(const std::vector<int>& ranks, const std::string& id)
{
    std::string s = R"({"type": "torch.ProcessGroup", "group_ranks": [)";
    for (std::size_t i = 0; i < ranks.size(); ++i)
        s += (i ? ", " : "") + std::to_string(ranks[i]);
    return s + R"(], "group_id": ")" + id + "\"}";
}

void write(const fs::path& p, const std::string& text)
{
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << text;
}

int genOverflow(const fs::path& dir, int ranks, int blocks, int ops)
{
    // The run is simulated block by block over all ranks, so that every all_reduce output is NaN exactly when one of
    // its group's inputs is. The origin sits in rank 0's tensor-parallel group and crosses an even (TP) block, so the
    // search round that rank 0's queue starts meets it (msprobe's inverted round test drops other ranks' nodes).
    const int tp = std::min(8, ranks);
    const int origin = std::min(5, ranks - 1);
    const int originBlock = std::min(2, blocks - 1);
    std::vector<std::string> data(static_cast<std::size_t>(ranks));
    std::vector<std::string> construct(static_cast<std::size_t>(ranks));
    std::vector<std::string> stackNames(static_cast<std::size_t>(ranks));
    std::vector<char> nan(static_cast<std::size_t>(ranks), 0);
    auto entry = [&](int r, const std::string& name, const std::string& body) {
        const auto i = static_cast<std::size_t>(r);
        data[i] += (data[i].empty() ? "" : ",\n") + ("  \"" + name + "\": " + body);
        construct[i] += (construct[i].empty() ? "" : ",\n") + ("  \"" + name + "\": \"Module.layers.0.Block.forward.0\"");
        stackNames[i] += (stackNames[i].empty() ? "" : ", ") + ("\"" + name + "\"");
    };
    int counter = 0;
    for (int b = 0; b < blocks; ++b) {
        for (int o = 0; o < ops; ++o, ++counter) {
            for (int r = 0; r < ranks; ++r) {
                const double v = 0.5 + 0.001 * ((r * 31 + b * 7 + o) % 97);
                const std::string in = stat(v, -v, nan[static_cast<std::size_t>(r)]);
                if (r == origin && b == originBlock && o == 5)
                    nan[static_cast<std::size_t>(r)] = 1; // clean inputs, NaN output
                const std::string name = std::string(o % 2 ? "Torch.add." : "Functional.linear.") + std::to_string(counter) + ".forward";
                entry(r, name, R"({"input_args": [)" + in + R"(], "input_kwargs": {}, "output": [)"
                                   + stat(v * 1.5, -v, nan[static_cast<std::size_t>(r)]) + "]}");
            }
        }
        // all_reduce.b: TP groups on even blocks, DP groups on odd ones; the output is NaN when any input is.
        std::vector<char> after(nan);
        std::vector<std::vector<int>> groups(static_cast<std::size_t>(ranks));
        for (int r = 0; r < ranks; ++r) {
            auto& members = groups[static_cast<std::size_t>(r)];
            if (b % 2 == 0) {
                for (int m = r / tp * tp; m < std::min(ranks, r / tp * tp + tp); ++m)
                    members.push_back(m);
            } else {
                for (int m = r % tp; m < ranks; m += tp)
                    members.push_back(m);
            }
            for (const int m : members)
                after[static_cast<std::size_t>(r)] |= nan[static_cast<std::size_t>(m)];
        }
        for (int r = 0; r < ranks; ++r) {
            const auto i = static_cast<std::size_t>(r);
            const std::string g = group(groups[i], (b % 2 ? "dp" : "tp") + std::to_string(b % 2 ? r % tp : r / tp));
            entry(r, "Distributed.all_reduce." + std::to_string(b) + ".forward",
                  R"({"input_args": [)" + stat(1.0, -1.0, nan[i]) + R"(], "input_kwargs": {"group": )" + g + R"(}, "output": [)"
                      + stat(2.0, -2.0, after[i]) + ", " + g + "]}");
        }
        nan = after;
    }
    for (int r = 0; r < ranks; ++r) {
        const auto i = static_cast<std::size_t>(r);
        const fs::path rankDir = dir / "step0" / ("rank" + std::to_string(r));
        write(rankDir / "dump.json", "{\n \"task\": \"statistics\",\n \"level\": \"mix\",\n \"framework\": \"pytorch\",\n"
                                     " \"dump_data_dir\": null,\n \"data\": {\n" + data[i] + "\n }\n}");
        write(rankDir / "construct.json", "{\n" + construct[i] + ",\n  \"Module.layers.0.Block.forward.0\": null\n}");
        write(rankDir / "stack.json", "{\"0\": [[" + stackNames[i] + "], [\"File /data/user/train/bench.py, line 10, in forward, \\n h = f(x)\"]]}");
    }
    std::printf("wrote %d ranks x %d ops to %s (origin rank %d, block %d, op 5)\n", ranks, blocks * (ops + 1), dir.c_str(),
                origin, originBlock);
    return 0;
}

int genMonitor(const fs::path& dir, int steps, int ranks, int targets, int perFile)
{
    for (int r = 0; r < ranks; ++r) {
        const fs::path rankDir = dir / ("Nov28_10-00-00-rank" + std::to_string(r) + "-bench" + std::to_string(r));
        for (int start = 0; start < steps; start += perFile) {
            const int end = std::min(steps, start + perFile) - 1;
            std::string text = "vpp_stage,name,step,micro_step,min,max,norm,zeros,nans,mean,shape,dtype\n";
            for (int s = start; s <= end; ++s) {
                for (int t = 0; t < targets; ++t) {
                    char row[256];
                    const double v = 0.1 + 0.0001 * ((s * 13 + t * 7 + r) % 1000);
                    std::snprintf(row, sizeof row, "0,layers.%d.mlp.linear_fc%d.%s,%d,0,%.6f,%.6f,%.6f,0.0,0,%.6f,\"[2, 4, 8]\",torch.float32\n",
                                  t / 4, t % 2 + 1, t % 4 < 2 ? "input" : "output", s, -v, v, v * 8, v / 10);
                    text += row;
                }
            }
            write(rankDir / ("actv_" + std::to_string(start) + "-" + std::to_string(end) + ".csv"), text);
        }
    }
    std::printf("wrote %d steps x %d ranks x %d targets to %s\n", steps, ranks, targets, dir.c_str());
    return 0;
}

std::string slurp(const fs::path& p)
{
    std::ifstream in(p, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

fs::path onlyFile(const fs::path& dir, const std::string& prefix)
{
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        if (it->path().filename().string().starts_with(prefix))
            return it->path();
    }
    return {};
}

void report(const char* what, const ChildRun& run)
{
    std::printf("  %-34s wall %7.2f s  cpu %7.2f s  peak RSS %7.0f MiB  %s\n", what, run.wall, run.cpu, run.rssMiB,
                run.ok() ? "" : ("FAILED, exit " + std::to_string(run.exitCode())).c_str());
}

std::size_t trendRows(const fs::path& db)
{
    // Counted with the sqlite3 shell when present (the bench links no SQLite); 0 = not counted.
    const fs::path out = db.parent_path() / "rows.txt";
    const ChildRun r = runChild({ "/usr/bin/sqlite3", db.string(), "SELECT count(*) FROM trend_data" }, out);
    return r.ok() ? std::stoul("0" + slurp(out)) : 0;
}

int run(const Args& args)
{
    const std::string cli = args.get("--cli");
    const fs::path overflow = args.get("--overflow");
    const fs::path monitor = args.get("--monitor");
    const fs::path work = args.get("--work");
    const std::string msprobe = args.get("--msprobe");
    fs::remove_all(work);
    fs::create_directories(work);
    std::printf("issue 34 workflow benchmark (each tool once, a fresh process)\n");
    printMachine(measureMachine());
    // msprobe takes rank folders in os.listdir order, and overflow_check's result depends on it (docs/overflow-check.md):
    // it runs with os.listdir sorted by rank (length, then name), the order ProbeScope uses, so the two files can be
    // compared. Sorting a listing costs nothing next to the run.
    const auto python = [&](std::vector<std::string> rest) {
        std::vector<std::string> argv { "/usr/bin/env", "PYTHONHASHSEED=0", "PYTHONPATH=" + msprobe, "/usr/bin/python3", "-c",
                                        "import os, sys, runpy\n"
                                        "orig = os.listdir\n"
                                        "os.listdir = lambda p='.': sorted(orig(p), key=lambda n: (len(n), n))\n"
                                        "sys.argv = ['msprobe'] + sys.argv[1:]\n"
                                        "runpy.run_module('msprobe.msprobe', run_name='__main__')\n" };
        argv.insert(argv.end(), rest.begin(), rest.end());
        return argv;
    };
    if (!overflow.empty()) {
        std::printf("overflow_check: %s\n", overflow.c_str());
        const ChildRun ours = runChild({ cli, "overflow_check", "-i", (overflow / "step0").string(), "-o", (work / "oc-probescope").string() });
        report("probescope-cli overflow_check", ours);
        if (!msprobe.empty()) {
            const ChildRun theirs = runChild(python({ "overflow_check", "-i", (overflow / "step0").string(), "-o",
                                                      (work / "oc-msprobe").string() }));
            report("msprobe 26 overflow_check", theirs);
            const fs::path a = onlyFile(work / "oc-probescope", "anomaly_analyze_");
            const fs::path b = onlyFile(work / "oc-msprobe", "anomaly_analyze_");
            std::printf("  same anomaly file: %s; speed-up %.1fx\n", !a.empty() && slurp(a) == slurp(b) ? "yes" : "NO",
                        theirs.wall / ours.wall);
        }
        std::printf("  load average after: %s\n", measureMachine().load.c_str());
    }
    if (!monitor.empty()) {
        std::printf("data2db --format monitor: %s\n", monitor.c_str());
        const ChildRun ours = runChild({ cli, "data2db", "--data", monitor.string(), "--db", (work / "db-probescope").string(),
                                         "--format", "monitor", "--micro_step", "false" });
        report("probescope-cli data2db", ours);
        const std::size_t ourRows = trendRows(work / "db-probescope" / "monitor_data.trend.db");
        if (!msprobe.empty()) {
            const ChildRun theirs = runChild(python({ "data2db", "--data", monitor.string(), "--db",
                                                      (work / "db-msprobe").string(), "--format", "monitor", "--micro_step", "false" }));
            report("msprobe 26 data2db", theirs);
            const std::size_t theirRows = trendRows(work / "db-msprobe" / "monitor_data.trend.db");
            std::printf("  trend_data rows: %zu and %zu; ProbeScope's time is %.3f of msprobe's\n", ourRows, theirRows,
                        ours.wall / theirs.wall);
        } else {
            std::printf("  trend_data rows: %zu\n", ourRows);
        }
        std::printf("  load average after: %s\n", measureMachine().load.c_str());
    }
    return 0;
}

} // namespace

int main(int argc, char** argv)
{
    if (argc < 3) {
        std::fprintf(stderr, "usage: probescope-benchworkflow gen-overflow DIR | gen-monitor DIR | run --cli CLI ...\n");
        return 2;
    }
    const std::string command = argv[1];
    const Args args(argc, argv, command == "run" ? 2 : 3);
    if (command == "gen-overflow")
        return genOverflow(argv[2], args.integer("--ranks", 1024), args.integer("--blocks", 8), args.integer("--ops", 20));
    if (command == "gen-monitor")
        return genMonitor(argv[2], args.integer("--steps", 1000), args.integer("--ranks", 8), args.integer("--targets", 200),
                          args.integer("--per-file", 10));
    if (command == "run")
        return run(args);
    std::fprintf(stderr, "unknown command %s\n", command.c_str());
    return 2;
}
