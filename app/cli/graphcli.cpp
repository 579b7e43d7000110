// SPDX-License-Identifier: Apache-2.0
#include "graphcli.h"
#include "exitstatus.h"

#include "core/graph/graphreader.h"
#include "core/graph/graphwriter.h"
#include "core/visconfig/visconfig.h"
#include "options.h"
#include "core/graph/trend.h"
#include "core/util/pytext.h"

#include <iostream>
#include <set>
#include <sstream>
#include <string>
#include <string_view>

namespace probescope::cli {

namespace {

bool endsWith(std::string_view s, std::string_view tail)
{
    return s.size() >= tail.size() && s.substr(s.size() - tail.size()) == tail;
}

/// The figures msprobe stores as Python prints them (pyFloatRepr), a whole number without its ".0": 0.5, 1,
/// 0.99462890625.
std::string number(double v)
{
    std::string text = pyFloatRepr(v);
    if (text.ends_with(".0"))
        text.resize(text.size() - 2);
    return text;
}

std::string intList(const std::vector<std::int64_t>& list)
{
    std::string out = "[";
    for (std::size_t i = 0; i < list.size(); ++i)
        out += (i ? ", " : "") + std::to_string(list[i]);
    return out + "]";
}

std::string bandLabel(const graph::ColourBand& b)
{
    std::string out = b.colour;
    if (!b.level.empty())
        out += " " + b.level;
    else if (!b.lo)
        out += " unmatched";
    if (b.lo && b.hi)
        out += " [" + number(*b.lo) + ", " + number(*b.hi) + "]";
    return out;
}

std::string typeCounts(const graph::GraphSummary& s)
{
    return std::to_string(s.nodes) + " nodes (" + std::to_string(s.modules) + " modules, " + std::to_string(s.apis)
        + " APIs, " + std::to_string(s.collections) + " API collections)";
}

void printWarnings(const std::vector<std::string>& warnings)
{
    if (warnings.empty()) {
        std::cout << "  warnings: none\n";
        return;
    }
    std::cout << "  warnings: " << warnings.size() << "\n";
    for (const std::string& w : warnings)
        std::cout << "    " << w << "\n";
}

int infoGraphFile(const std::filesystem::path& path)
{
    graph::ReadOptions options;
    options.nodeData = false; // info shows no parameters: a 1M-node db opens without its GBs of JSON
    auto read = graph::readGraphFile(path, options);
    if (!read) {
        std::cerr << read.error().format() << "\n";
        return kExitInputError;
    }
    const graph::GraphFile& file = **read;
    const graph::GraphConfig& c = file.config;
    // Once: isCompare() looks at every graph, and a file may hold a hundred thousand.
    const bool compare = file.isCompare();
    std::cout << path.string() << ": " << graph::versionName(file.version) << ", " << (compare ? "compare" : "build")
              << (c.task.empty() ? std::string() : ", task " + c.task) << ", micro steps " << c.microSteps
              << ", steps " << intList(c.stepList) << ", ranks " << intList(c.rankList)
              << (c.overflowCheck ? ", overflow check" : "") << "\n";
    if (!file.colours.empty()) {
        std::cout << "  colours:";
        for (std::size_t i = 0; i < file.colours.size(); ++i)
            std::cout << (i ? "; " : " ") << bandLabel(file.colours[i]);
        std::cout << "\n";
    }
    std::cout << "  graphs: " << file.graphs.size() << "\n";
    for (const graph::Graph& g : file.graphs) {
        const graph::GraphSummary s = graph::summarize(file, g);
        std::cout << "  " << g.id << " (step " << g.step << ", rank " << g.rank << ", " << graph::sideName(g.side)
                  << "): " << typeCounts(s);
        if (g.microSteps.size() > 1)
            std::cout << ", micro steps " << intList(g.microSteps);
        std::cout << "\n";
        if (!compare)
            continue;
        if (g.side == graph::Side::Bench) {
            std::cout << "    matched " << s.bench << ", unmatched " << s.unmatched << "\n";
            continue;
        }
        std::cout << "    verdicts:";
        for (std::size_t i = 0; i < file.colours.size(); ++i)
            if (file.colours[i].lo)
                std::cout << " " << bandLabel(file.colours[i]) << " " << s.perBand[i] << ";";
        std::cout << " unmatched " << s.unmatched << "; no value " << s.noValue << "\n";
        if (s.firstFailing) {
            const graph::Node& n = g.nodes[*s.firstFailing];
            std::cout << "    first failing node: " << n.name << " (node_order " << *s.firstFailing
                      << ", precision_index " << number(*n.precision) << ", "
                      << bandLabel(file.colours[static_cast<std::size_t>(n.band)]) << ")\n";
        } else {
            std::cout << "    first failing node: none\n";
        }
    }
    printWarnings(file.warnings);
    return kExitOk;
}

int infoTrendFile(const std::filesystem::path& path)
{
    auto read = graph::readTrendDb(path);
    if (!read) {
        std::cerr << read.error().format() << "\n";
        return kExitInputError;
    }
    const graph::TrendTable& t = **read;
    std::cout << path.string() << ": msprobe 26 .trend.db (data2db)\n";
    std::cout << "  steps " << intList(t.steps) << ", ranks " << intList(t.ranks) << "\n";
    std::cout << "  targets: " << t.targets.size() << " in " << t.modules.size() << " modules/APIs; metrics:";
    for (const std::string& m : t.metrics)
        std::cout << " " << m;
    std::cout << "\n  statistics:";
    for (const std::string& c : t.statistics)
        std::cout << " " << c;
    std::cout << "\n  values: " << t.values.size() << "\n";
    printWarnings(t.warnings);
    return kExitOk;
}

int runInfo(int argc, char** argv)
{
    if (argc != 3)
        return usageError("info FILE.vis.db|FILE.vis|FILE.trend.db takes no options");
    const std::filesystem::path path = argv[2];
    if (endsWith(path.filename().string(), ".trend.db"))
        return infoTrendFile(path);
    return infoGraphFile(path);
}

constexpr const char* kGraphUsage = R"USAGE(probescope-cli graph - msprobe's graph visualization db (docs/graph.md)

usage:
  probescope-cli info FILE.vis.db | FILE.vis | FILE.trend.db
      The graphs a msprobe 8.x/26.x .vis.db (or 1.2.x .vis) holds per step and rank, their node
      counts, msprobe's verdicts by colour as that version defines them, and the first failing node
      in execution order; or the steps, ranks and modules of a msprobe 26 .trend.db.
  probescope-cli graph -tp NPU [-gp BENCH] -o OUT [-fm] [-oc] [--format 8.3|26] [--match-file FILE]
  probescope-cli graph -i graph.json -o OUT [options as above]
      msprobe graph_visualize (26) / graph (8.x): builds the model graph of every step and rank of NPU
      (a rank folder, a step folder or a root of steps) and, with BENCH, matches and compares it;
      writes OUT/build_TIMESTAMP.vis.db or OUT/compare_TIMESTAMP.vis.db (never replacing a file:
      a taken name gets _1). graph.json is msprobe 8.x's input: npu_path and optional bench_path.
      -fm, --fuzzy_match      modules by name, their APIs by name and call order in the module
      -oc, --overflow_check   sets tb_config.overflow_check (levels are not computed)
      --format 8.3|26         whose db to write (default 26)
      --match-file FILE       a tb_graph_ascend .vis.config: the NPU/bench nodes it names are paired
                              and compared (docs/graph.md, "Manual matches")
      An L1 dump (empty construct.json) gets a flat graph (msprobe writes none) and a note.
      The pairs are compared by compare's own pipeline: a pair compare refuses (a cut .pt, a
      data_name leaving the dump, ...) is refused with the same diagnostics and nothing written.
      Each option takes one value.

exit status: 0 success, 1 the input has errors (or a step or rank one side lacks, left out
with a note), 2 usage error
)USAGE";

int runGraph(int argc, char** argv)
{
    for (int i = 2; i < argc; ++i) {
        const std::string_view a = argv[i];
        if (a == "--help" || a == "-h") {
            std::cout << kGraphUsage;
            return kExitOk;
        }
    }
    std::string npu;
    std::string bench;
    std::string out;
    std::string input;
    std::string matchFile;
    graph::GraphWriteOptions options;
    // Each option takes one value: a second one is a usage error, never silently the one that wins (-tp A -tp B).
    std::set<std::string_view> given;
    auto once = [&given](std::string_view canonical, std::string_view typed) -> std::optional<std::string> {
        if (!given.insert(canonical).second)
            return std::string(typed) + " is given twice; graph takes one";
        return std::nullopt;
    };
    auto setPath = [&once](std::string& target, std::string_view canonical) {
        return [&target, &once, canonical](std::string_view typed, std::optional<std::string_view> v) -> std::optional<std::string> {
            if (auto twice = once(canonical, typed))
                return twice;
            target = std::string(*v);
            return std::nullopt;
        };
    };
    const std::vector<Option> table {
        { { "-tp", "--target_path" }, Option::Takes::Value, "the NPU dump path", setPath(npu, "-tp") },
        { { "-gp", "--golden_path" }, Option::Takes::Value, "the bench dump path", setPath(bench, "-gp") },
        { { "-o", "--output_path" }, Option::Takes::Value, "an output folder", setPath(out, "-o") },
        { { "-i", "--input_path" }, Option::Takes::Value, "a JSON file with npu_path (and bench_path)", setPath(input, "-i") },
        { { "--match-file" }, Option::Takes::Value, "a .vis.config file", setPath(matchFile, "--match-file") },
        { { "-fm", "--fuzzy_match" }, Option::Takes::Nothing, "",
          [&](std::string_view, std::optional<std::string_view>) -> std::optional<std::string> {
              options.fuzzy = true;
              return std::nullopt;
          } },
        { { "-oc", "--overflow_check" }, Option::Takes::Nothing, "",
          [&](std::string_view, std::optional<std::string_view>) -> std::optional<std::string> {
              options.overflowCheck = true;
              return std::nullopt;
          } },
        { { "--format" }, Option::Takes::Value, "8.3 or 26",
          [&](std::string_view typed, std::optional<std::string_view> v) -> std::optional<std::string> {
              if (auto twice = once("--format", typed))
                  return twice;
              if (*v == "26" || *v == "26.0" || *v == "26.0.0")
                  options.format = graph::WriteFormat::V26;
              else if (*v == "8.3" || *v == "8.3.3" || *v == "8")
                  options.format = graph::WriteFormat::V83;
              else
                  return "--format takes 8.3 or 26, not " + std::string(*v);
              return std::nullopt;
          } },
    };
    ParseRules rules;
    rules.unknownLabel = "graph option";
    rules.positionalWords = false;
    std::vector<std::string_view> positional;
    if (auto error = parseOptions(argc, argv, 2, table, rules, positional))
        return usageError(*error);
    if (!input.empty() && !npu.empty())
        return usageError("graph takes -i FILE or -tp NPU, not both");
    if (input.empty() && npu.empty())
        return usageError("graph needs -tp NPU (or -i FILE with npu_path)");
    if (out.empty())
        return usageError("graph needs -o OUT");
    std::optional<std::filesystem::path> benchPath;
    std::filesystem::path npuPath = npu;
    if (!input.empty()) {
        auto read = graph::readGraphInputJson(input);
        if (!read) {
            std::cerr << read.error().format() << "\n";
            return kExitInputError;
        }
        npuPath = read->npu;
        benchPath = read->bench;
    } else if (!bench.empty()) {
        benchPath = std::filesystem::path(bench);
    }
    std::optional<graph::VisConfig> matches;
    if (!matchFile.empty()) {
        if (!benchPath)
            return usageError("--match-file pairs NPU and bench nodes: it needs -gp BENCH");
        auto read = graph::readVisConfig(matchFile);
        if (!read) {
            std::cerr << read.error().format() << "\n";
            return kExitInputError;
        }
        matches = std::move(*read);
        options.matches = &*matches;
    }
    Diagnostics findings;
    options.findings = &findings;
    auto written = graph::writeGraphDb(npuPath, benchPath, out, options);
    // The compare pipeline's findings on the dumps, as compare lists them (the error itself last).
    const std::string errorText = written ? std::string() : written.error().format();
    for (const Diagnostic& d : findings)
        if (d.format() != errorText)
            std::cerr << d.format() << "\n";
    if (!written) {
        std::cerr << errorText << "\n";
        if (hasErrors(findings))
            std::cerr << "graph: not written: the dumps have errors (the compare refuses them too)\n";
        return kExitInputError;
    }
    std::cout << "graph: " << npuPath.string();
    if (benchPath)
        std::cout << "  vs  " << benchPath->string();
    std::cout << "\n";
    for (const std::string& note : written->notes)
        std::cout << "  note: " << note << "\n";
    std::cout << "  graphs: " << written->graphs << "\n  written: " << written->written.string() << "\n";
    if (written->notCompared > 0) {
        // As the compare job: the db holds what both sides have, but not the whole input (docs/reliability.md).
        std::cout << "  " << written->notCompared << " (step, rank) place(s) not compared (on one side only)\n";
        std::cerr << "graph: " << written->notCompared
                  << " (step, rank) place(s) on one side only were left out (see the notes); exit status 1\n";
        return kExitInputError;
    }
    return kExitOk;
}

} // namespace

std::optional<int> runGraphCommand(int argc, char** argv)
{
    if (argc < 2)
        return std::nullopt;
    const std::string_view command = argv[1];
    if (command == "info" && argc >= 3 && graph::isGraphFileName(argv[2]))
        return runInfo(argc, argv);
    if (command == "graph" || command == "graph_visualize")
        return runGraph(argc, argv);
    return std::nullopt;
}

} // namespace probescope::cli
