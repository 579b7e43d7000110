// SPDX-License-Identifier: Apache-2.0
// probescope-cli: the headless front end. Argument parsing and wiring only; the work is in core.
#include "compare/comparejob.h"
#include "compare/highlight.h"
#include "dump/dumplayout.h"
#include "dump/rankdump.h"
#include "inspect/dumpinfo.h"
#include "runut/precisioncompare.h"
#include "runut/runner.h"
#include "tree/constructtree.h"
#ifdef PROBESCOPE_HAVE_RUNUTTORCH
#include "runuttorch/torchreplayer.h"
#endif

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <limits>
#include <iostream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace {

using namespace probescope;

constexpr int kExitOk = 0;
constexpr int kExitInputError = 1;
constexpr int kExitUsage = 2;

const char* const kUsage = R"USAGE(probescope-cli - inspect msprobe precision dumps

usage:
  probescope-cli info DIR [--verify]
      Steps, ranks, task/level/framework, entry counts by kind, tensor files present or
      missing, and every diagnostic. --verify loads each tensor file and checks its dtype,
      shape and Max/Min/Mean/Norm against the dump file.
  probescope-cli tree DIR [--step N] [--rank R] [--exec-order] [--no-marks]
      The module/API hierarchy of one rank of one step as indented text. --exec-order
      prefixes each node with its position in execution order; --no-marks hides the
      "(parent inferred)" notes.
  probescope-cli compare -i compare.json -o OUT [-s] [-f] [-c] [-j N] [--profile P] [--xlsx]
                        [-dm MAP] [-cm [MAP]] [-am [MAP]] [-lm [MAP]]
  probescope-cli compare --npu PATH --bench PATH -o OUT [options as above]
      Compares an NPU dump with a bench dump as msprobe 1.2 does and writes
      compare_result[_rankN-rankM]_TIMESTAMP.csv and advisor_*.txt into OUT. compare.json is
      msprobe's input file: npu_path and bench_path (two dump.json files or two step folders),
      optional stack_path; relative paths are taken from the current folder, as msprobe does.
      -s adds NPU_Stack_Info when stack_path is given (without stack_path the stack column is
      added when stack.json lies beside the NPU dump.json); -f matches APIs by name without call
      index (msprobe's fuzzy match); -c skips the advisor file; -j N compares N tensor pairs at
      once (default: one per CPU; the result never depends on it). --profile msprobe-1.2
      (default) or msprobe-26 chooses whose output to reproduce; msprobe 26 adds stack
      information whenever stack.json lies beside the NPU dump and writes no advisor file.
      --xlsx also writes compare_result*.xlsx with msprobe 1.2's red/yellow row fills.
      A dump with errors (cut short, wrong types, invalid UTF-8) is not compared: its
      diagnostics are printed and the exit status is 1. --salvage compares what can be read
      and says what was lost (exit status still 1). Output files never replace a file: a
      taken name gets _1, _2, ... (docs/reliability.md).
      -dm MAP.yaml compares exactly the rows the mapping names (NPU row name: bench row
      name, or N/A), in its order, as msprobe 1.2's data-mapping mode does; with msprobe-26
      the mapped name is the NPU row's compare key (no dtype test).
      MindSpore NPU dumps (framework "mindspore" in dump.json) against PyTorch or MindSpore:
      -cm [MAP] cell_mapping: Cell.* names become Module.*, MAP renames cell paths
      ("fc2.Dense: fc2.Linear"); with msprobe-26 also for PyTorch dumps.
      -am [MAP] api_mapping: Mint.* -> Torch.*, MintFunctional.* -> Functional.*; MAP is a
      list of {ms_api, pt_api, ms_args, pt_args, ms_outputs, pt_outputs, ...} items that
      pair arguments by index (unlisted arguments are never matched).
      -lm [MAP] layer_mapping: pairs NPU and bench calls by their place in the model, from
      construct.json and stack.json of both sides; MAP renames sub-layers per class
      ({Class: {ms_name: pt_name}}); writes the generated data_mapping_*.yaml into OUT.
      msprobe 1.2 refuses -cm/-am for PyTorch dumps and ignores -lm there; msprobe 26
      refuses -am. Precedence: -am > -cm > -dm/-lm (msprobe 1.2: -dm/-lm first, then
      -cm and -am together). MAP may be left out (the flag alone).
  probescope-cli run-ut -api_info DUMP_JSON [-o OUT] [-csv_path CSV] [-f] [-j N] [-config CONFIG]
                       [-d DEVICE] [--profile P] [--seed N] [--precision N] [--white-list A,B]
                       [--black-list A,B] [--no-dumped-outputs] [--intra-op-threads N]
      msprobe's run_ut (API accuracy checker): replays every forward API call of an L1 or mix
      dump.json with LibTorch, on the device in its own dtypes and on the CPU bench in higher
      precision, forward and backward, and writes accuracy_checking_result_TIMESTAMP.csv and
      accuracy_checking_details_TIMESTAMP.csv into OUT (default: the current folder; created if
      missing; an existing file is never replaced). Task statistics: inputs are generated from
      Max/Min/dtype/shape with --seed; task tensor: the dumped inputs are used, and the device
      outputs the dump recorded are also judged against the CPU bench, into
      dumped_output_checking_result/details_TIMESTAMP.csv (the way to find a faulty kernel
      from a dump alone). See docs/run-ut.md.
      -api_info, --api_info_file  the dump.json (required)
      -o, --out_path              output folder
      -csv_path, --result_csv_path  resume an interrupted run: its accuracy_checking_result_
                                  <14 digits>.csv (the details file must lie beside it); APIs
                                  already in it are skipped, new rows are appended
      -f, --filter_api            replay only the first of calls of one API whose inputs differ
                                  at most in Max/Min
      -j N, --jobs N, -n N, --num_splits N  worker threads, each with its own replayer (1-64,
                                  default 1); the files do not depend on it
      -config, --config_path      a config.json; its run_ut (or acc_check) section gives
                                  white_list, black_list and error_data_path
      --white-list A,B  --black-list A,B  API names (conv2d, linalg.inv) added to the config's
                                  lists; the black list wins; to, empty, empty_like, ... are
                                  always black
      -d, --device DEVICE         cpu (default), cuda, cuda:N or a device id N (= cuda:N)
      --profile P                 msprobe12 (default: msprobe 1.2's per-API precision standards)
                                  or msprobe26 (current msprobe: benchmark standard for floats)
      --seed N                    seed of the generated inputs (default 1234)
      --precision N               decimals of the details CSV floats (0-20, default 14)
      --no-dumped-outputs         do not judge the outputs recorded in a tensor dump
      --intra-op-threads N        LibTorch threads per worker (default 1)
      -save_error_data is not supported (the replay's tensors are not kept).
      Ctrl+C stops after the APIs in flight; the files stay valid for -csv_path.
  probescope-cli api-precision-compare -npu NPU_CSV -gpu GPU_CSV [-o OUT] [--profile P] [--precision N]
      msprobe's api_precision_compare: judges the NPU details CSV of run-ut relative to the
      GPU (or any second device's) details CSV and writes api_precision_compare_result_
      TIMESTAMP.csv and api_precision_compare_details_TIMESTAMP.csv into OUT (default: the
      current folder).
      -npu, --npu_csv_path  -gpu, --gpu_csv_path  -o, --out_path  --profile msprobe12|msprobe26
      --precision N (decimals of the details floats, default 14). An NPU row the GPU file
      lacks is dropped with a warning (msprobe drops it silently); a duplicate GPU row stops
      the analysis there, as in msprobe, and exits 1.
  probescope-cli --help | --version

DIR is a dump root (step*/rank*/), a step folder, a rank folder, a dump.json or debug.json,
or a ptdbg_ascend .pkl dump.

exit status: 0 success, 1 the input has errors (reported with file and position), 2 usage error
)USAGE";

std::optional<std::int64_t> parseInt(std::string_view s)
{
    std::int64_t v = 0;
    const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || ptr != s.data() + s.size())
        return std::nullopt;
    return v;
}

int usageError(const std::string& message)
{
    std::cerr << "probescope-cli: " << message << "\n(run probescope-cli --help for usage)\n";
    return kExitUsage;
}

struct Args
{
    std::string command;
    std::string dir;
    std::optional<std::int64_t> step;
    std::optional<std::int64_t> rank;
    bool verify = false;
    bool execOrder = false;
    bool noMarks = false;
    // compare
    std::string input;
    std::string npu;
    std::string bench;
    std::string out;
    bool stack = false;
    bool fuzzy = false;
    bool compareOnly = false;
    unsigned threads = 0;
    std::string profile = "msprobe-1.2";
    bool xlsx = false;
    std::string dataMapping;
    std::optional<std::string> cellMapping; ///< "" = the flag without a file
    std::optional<std::string> apiMapping;
    std::optional<std::string> layerMapping;
    bool salvage = false; ///< --salvage: compare what a damaged dump holds (issue 20)
};

std::optional<std::string> parseArgs(int argc, char** argv, Args& args)
{
    std::vector<std::string_view> positional;
    for (int i = 1; i < argc; ++i) {
        const std::string_view a = argv[i];
        auto value = [&](const char* flag) -> std::optional<std::int64_t> {
            if (i + 1 >= argc)
                return std::nullopt;
            const auto v = parseInt(argv[++i]);
            (void)flag;
            return v;
        };
        if (a == "--step") {
            if (!(args.step = value("--step")))
                return std::string("--step needs a step number");
        } else if (a == "--rank") {
            if (!(args.rank = value("--rank")))
                return std::string("--rank needs a rank number");
        } else if (a == "--verify") {
            args.verify = true;
        } else if (a == "--exec-order") {
            args.execOrder = true;
        } else if (a == "--no-marks") {
            args.noMarks = true;
        } else if (a == "-i" || a == "--input" || a == "-o" || a == "--output" || a == "--npu" || a == "--bench") {
            if (i + 1 >= argc)
                return std::string(a) + " needs a path";
            std::string& target = (a == "-i" || a == "--input") ? args.input
                : (a == "-o" || a == "--output")                ? args.out
                : a == "--npu"                                  ? args.npu
                                                                : args.bench;
            target = argv[++i];
        } else if (a == "-s" || a == "--stack_mode") {
            args.stack = true;
        } else if (a == "-f" || a == "--fuzzy_match") {
            args.fuzzy = true;
        } else if (a == "-c" || a == "--compare_only") {
            args.compareOnly = true;
        } else if (a == "-dm" || a == "--data_mapping") {
            if (i + 1 >= argc)
                return std::string("-dm needs a mapping.yaml");
            args.dataMapping = argv[++i];
        } else if (a == "-cm" || a == "--cell_mapping" || a == "-am" || a == "--api_mapping" || a == "-lm"
                   || a == "--layer_mapping") {
            // msprobe's nargs='?': the next word is the file unless it is an option (or the command itself).
            std::optional<std::string>& target = (a == "-cm" || a == "--cell_mapping") ? args.cellMapping
                : (a == "-am" || a == "--api_mapping")                                   ? args.apiMapping
                                                                                         : args.layerMapping;
            target = std::string();
            const bool commandSeen = std::find(positional.begin(), positional.end(), "compare") != positional.end();
            if (i + 1 < argc && argv[i + 1][0] != '-' && (commandSeen || std::string_view(argv[i + 1]) != "compare"))
                target = argv[++i];
        } else if (a == "--xlsx") {
            args.xlsx = true;
        } else if (a == "--salvage") {
            args.salvage = true;
        } else if (a == "--profile") {
            if (i + 1 >= argc)
                return std::string("--profile needs msprobe-1.2 or msprobe-26");
            args.profile = argv[++i];
            if (args.profile != "msprobe-1.2" && args.profile != "msprobe-26")
                return "unknown profile " + args.profile + " (choose msprobe-1.2 or msprobe-26)";
        } else if (a == "-j" || a == "--jobs") {
            const auto v = i + 1 < argc ? parseInt(argv[++i]) : std::nullopt;
            if (!v || *v < 1 || *v > 1024)
                return std::string("-j needs a number of threads (1-1024)");
            args.threads = static_cast<unsigned>(*v);
        } else if (a.size() > 1 && a[0] == '-') {
            return "unknown option " + std::string(a);
        } else {
            positional.push_back(a);
        }
    }
    if (!positional.empty() && positional[0] == "compare") {
        args.command = "compare";
        if (positional.size() != 1)
            return std::string("compare takes its paths through -i, or --npu and --bench");
        if (args.input.empty() == (args.npu.empty() && args.bench.empty()))
            return std::string("compare needs either -i compare.json or --npu PATH --bench PATH");
        if (args.input.empty() && (args.npu.empty() || args.bench.empty()))
            return std::string("compare needs both --npu and --bench");
        if (args.out.empty())
            return std::string("compare needs -o OUT (the output folder)");
        return std::nullopt;
    }
    if (positional.size() != 2)
        return std::string(positional.empty() ? "missing command" : "expected a command and one DIR");
    args.command = positional[0];
    args.dir = positional[1];
    return std::nullopt;
}

int runInfo(const Args& args)
{
    auto layout = dump::discoverDump(args.dir);
    if (!layout) {
        std::cerr << layout.error().format() << "\n";
        return kExitInputError;
    }
    inspect::InfoOptions options;
    options.verifyTensors = args.verify;
    const auto ranks = inspect::inspectLayout(*layout, options);
    std::cout << inspect::formatInfo(*layout, ranks);
    bool errors = hasErrors(layout->diagnostics);
    for (const auto& r : ranks)
        errors = errors || hasErrors(r.diagnostics);
    return errors ? kExitInputError : kExitOk;
}

int runTree(const Args& args)
{
    auto layout = dump::discoverDump(args.dir);
    if (!layout) {
        std::cerr << layout.error().format() << "\n";
        return kExitInputError;
    }
    const dump::RankLocation* location = layout->find(args.step, args.rank);
    if (!location) {
        std::cerr << "probescope-cli: no rank dump matches";
        if (args.step)
            std::cerr << " --step " << *args.step;
        if (args.rank)
            std::cerr << " --rank " << *args.rank;
        std::cerr << "; available:";
        for (const auto& r : layout->ranks)
            std::cerr << " " << (r.stepLabel.empty() ? "-" : r.stepLabel) << "/" << (r.rankLabel.empty() ? "-" : r.rankLabel);
        std::cerr << "\n";
        return kExitInputError;
    }
    std::size_t matching = 0;
    for (const auto& r : layout->ranks)
        matching += (!args.step || r.step.value_or(-1) == *args.step) && (!args.rank || r.rank.value_or(-1) == *args.rank);
    if (matching > 1)
        std::cerr << "probescope-cli: showing " << location->dumpFile.string() << " (" << matching
                  << " rank dumps match; choose with --step/--rank)\n";
    auto rank = dump::loadRank(*location);
    if (!rank) {
        std::cerr << rank.error().format() << "\n";
        return kExitInputError;
    }
    const auto tree = tree::ConstructTree::build(*rank);
    tree::PrintOptions print;
    print.markInferred = !args.noMarks;
    print.showExecutionIndex = args.execOrder;
    std::cout << tree::printTree(*tree, print);
    bool errors = false;
    for (const auto* list : { &(*rank)->diagnostics, &tree->diagnostics() }) {
        for (const Diagnostic& d : *list) {
            std::cerr << d.format() << "\n";
            errors = errors || d.severity == Severity::Error;
        }
    }
    return errors ? kExitInputError : kExitOk;
}

int runCompare(const Args& args)
{
    compare::CompareInput input;
    if (!args.input.empty()) {
        auto parsed = compare::readCompareJson(args.input);
        if (!parsed) {
            std::cerr << parsed.error().format() << "\n";
            return kExitInputError;
        }
        input = *parsed;
    } else {
        input.npuPath = args.npu;
        input.benchPath = args.bench;
    }
    compare::JobOptions options;
    options.stackFlag = args.stack;
    options.fuzzy = args.fuzzy;
    options.advisor = !args.compareOnly;
    options.threads = args.threads;
    options.xlsx = args.xlsx;
    if (!args.dataMapping.empty())
        options.dataMapping = args.dataMapping;
    if (args.cellMapping)
        options.cellMapping = *args.cellMapping;
    if (args.apiMapping)
        options.apiMapping = *args.apiMapping;
    if (args.layerMapping)
        options.layerMapping = *args.layerMapping;
    options.profile = args.profile == "msprobe-26" ? compare::Profile::Msprobe26 : compare::Profile::Msprobe12;
    options.salvage = args.salvage;
    auto results = compare::runCompareJob(input, args.out, options);
    if (!results) {
        std::cerr << results.error().format() << "\n";
        // An option the dumps do not allow is a usage error, as msprobe reports it before comparing.
        return results.error().id == "compare.option" ? kExitUsage : kExitInputError;
    }
    bool inputErrors = false;
    for (const auto& r : *results) {
        const auto& table = *r.table;
        std::cout << r.npuDump.string() << "  vs  " << r.benchDump.string() << "\n";
        for (const Diagnostic& d : r.diagnostics)
            std::cout << "  " << d.format() << "\n";
        for (const Diagnostic& d : table.diagnostics)
            std::cout << "  " << d.format() << "\n";
        // The load step's findings (issue 20): a damaged dump is refused, or salvaged with its losses said.
        for (const Diagnostic& d : r.inputDiagnostics)
            std::cerr << d.format() << "\n";
        inputErrors = inputErrors || r.refused || hasErrors(r.inputDiagnostics);
        if (r.refused) {
            std::cout << "  not compared: the dumps have errors (listed on stderr); --salvage compares what can be"
                         " read\n";
            continue;
        }
        for (const std::string& loss : r.salvaged)
            std::cout << "  SALVAGED, the result is partial: " << loss << "\n";
        if (table.rows.empty()) {
            std::cout << "  no entry could be matched; nothing written (as msprobe does)\n";
            continue;
        }
        std::size_t red = 0;
        std::size_t yellow = 0;
        std::size_t unmatched = 0;
        for (std::size_t i = 0; i < table.rows.size(); ++i) {
            red += table.colors[i] == compare::RowColor::Red;
            yellow += table.colors[i] == compare::RowColor::Yellow;
            unmatched += !table.matched[i];
        }
        std::cout << "  rows: " << table.rows.size() << " (" << unmatched << " without bench data), highlighted: "
                  << red << " red, " << yellow << " yellow\n";
        std::cout << "  written: " << r.csvFile.string() << "\n";
        if (!r.xlsxFile.empty())
            std::cout << "  written: " << r.xlsxFile.string() << "\n";
        if (!r.advisorFile.empty())
            std::cout << "  written: " << r.advisorFile.string() << "\n";
        if (!r.mappingFile.empty())
            std::cout << "  written: " << r.mappingFile.string() << "\n";
        const long first = compare::firstFailingRow(table);
        if (options.profile == compare::Profile::Msprobe26)
            ; // msprobe 26 has no advisor
        else if (first < 0)
            std::cout << "  msprobe's advisor row: none\n";
        else
            std::cout << "  msprobe's advisor row: " << first << " " << table.rows[first][0].asString()
                      << " (table order)\n";
        std::cout << "  " << (r.salvaged.empty() ? "" : "(partial input) ") << r.firstFailure.summary << "\n";
    }
    if (results->size() > 1) {
        const long pair = compare::firstDivergingPair(*results);
        if (pair >= 0)
            std::cout << "first diverging rank pair: " << (*results)[pair].suffix.substr(1) << " ("
                      << (*results)[pair].firstFailure.key << ")\n";
    }
    return inputErrors ? kExitInputError : kExitOk;
}


// ---- run-ut and api-precision-compare: msprobe's flag names, parsed apart from the other commands
// because several of them (-f, -j, -o's neighbours) mean something else there.

std::atomic<bool> g_interrupted { false };

extern "C" void onInterrupt(int)
{
    g_interrupted = true;
}

/// Progress on stderr when it is a terminal, and Ctrl+C as a cancel request.
class CliProgress : public ProgressSink
{
public:
    CliProgress()
        : m_tty(::isatty(2) != 0)
    {
    }
    void setRange(std::uint64_t total) override { m_total = total; }
    void advance(std::uint64_t done) override
    {
        if (!m_tty)
            return;
        const auto now = std::chrono::steady_clock::now();
        if (done < m_total && now - m_last < std::chrono::milliseconds(200))
            return;
        m_last = now;
        std::fprintf(stderr, "\r  %llu/%llu APIs", static_cast<unsigned long long>(done),
                     static_cast<unsigned long long>(m_total));
        if (done == m_total)
            std::fputc('\n', stderr);
    }
    bool isCancelled() const override { return g_interrupted.load(); }

private:
    bool m_tty;
    std::uint64_t m_total = 0;
    std::chrono::steady_clock::time_point m_last {};
};

std::vector<std::string> splitCommas(std::string_view text)
{
    std::vector<std::string> out;
    std::size_t start = 0;
    while (start <= text.size()) {
        const std::size_t comma = std::min(text.find(',', start), text.size());
        if (comma > start)
            out.emplace_back(text.substr(start, comma - start));
        start = comma + 1;
    }
    return out;
}

std::optional<runut::Profile> parseRunUtProfile(std::string_view p)
{
    if (p == "msprobe12" || p == "msprobe-1.2")
        return runut::Profile::Msprobe12;
    if (p == "msprobe26" || p == "msprobe-26")
        return runut::Profile::Msprobe26;
    return std::nullopt;
}

int runRunUt(int argc, char** argv)
{
    runut::RunUtOptions options;
    options.outDir = ".";
    for (int i = 2; i < argc; ++i) {
        const std::string_view a = argv[i];
        auto next = [&]() -> std::optional<std::string> {
            if (i + 1 >= argc)
                return std::nullopt;
            return std::string(argv[++i]);
        };
        auto number = [&](std::int64_t lo, std::int64_t hi) -> std::optional<std::int64_t> {
            const auto v = i + 1 < argc ? parseInt(argv[++i]) : std::nullopt;
            if (!v || *v < lo || *v > hi)
                return std::nullopt;
            return v;
        };
        if (a == "-api_info" || a == "--api_info_file") {
            const auto v = next();
            if (!v)
                return usageError(std::string(a) + " needs the dump.json");
            options.apiInfo = *v;
        } else if (a == "-o" || a == "--out_path") {
            const auto v = next();
            if (!v)
                return usageError(std::string(a) + " needs a folder");
            options.outDir = *v;
        } else if (a == "-csv_path" || a == "--result_csv_path") {
            const auto v = next();
            if (!v)
                return usageError(std::string(a) + " needs an accuracy_checking_result_*.csv");
            options.resumeCsv = *v;
        } else if (a == "-f" || a == "--filter_api") {
            options.filterApi = true;
        } else if (a == "-config" || a == "--config_path") {
            const auto v = next();
            if (!v)
                return usageError(std::string(a) + " needs a config.json");
            options.config = *v;
        } else if (a == "-j" || a == "--jobs" || a == "-n" || a == "--num_splits") {
            const auto v = number(1, 64);
            if (!v)
                return usageError(std::string(a) + " needs a number of workers (1-64)");
            options.workers = static_cast<int>(*v);
        } else if (a == "-d" || a == "--device") {
            const auto v = next();
            if (!v)
                return usageError(std::string(a) + " needs cpu, cuda, cuda:N or a device id");
            if (const auto id = parseInt(*v); id && *id >= 0)
                options.replay.device = "cuda:" + *v;
            else if (*v == "cpu" || *v == "cuda" || (v->rfind("cuda:", 0) == 0 && parseInt(v->substr(5)).value_or(-1) >= 0))
                options.replay.device = *v;
            else
                return usageError("unknown device " + *v + " (cpu, cuda, cuda:N or a device id)");
        } else if (a == "--profile") {
            const auto v = next();
            const auto p = v ? parseRunUtProfile(*v) : std::nullopt;
            if (!p)
                return usageError("--profile needs msprobe12 or msprobe26");
            options.profile = *p;
        } else if (a == "--seed") {
            const auto v = number(0, std::numeric_limits<std::int64_t>::max());
            if (!v)
                return usageError("--seed needs a number >= 0");
            options.replay.seed = static_cast<std::uint64_t>(*v);
        } else if (a == "--precision") {
            const auto v = number(0, 20);
            if (!v)
                return usageError("--precision needs a number of decimals (0-20)");
            options.precision = static_cast<int>(*v);
        } else if (a == "--intra-op-threads") {
            const auto v = number(1, 256);
            if (!v)
                return usageError("--intra-op-threads needs a number of threads (1-256)");
            options.replay.intraOpThreads = static_cast<int>(*v);
        } else if (a == "--white-list" || a == "--black-list") {
            const auto v = next();
            if (!v)
                return usageError(std::string(a) + " needs API names separated by commas");
            auto names = splitCommas(*v);
            auto& list = a == "--white-list" ? options.whiteList : options.blackList;
            list.insert(list.end(), names.begin(), names.end());
        } else if (a == "--no-dumped-outputs") {
            options.judgeDumpedOutputs = false;
        } else if (a == "-save_error_data" || a == "--save_error_data") {
            return usageError("-save_error_data is not supported (see docs/run-ut.md)");
        } else {
            return usageError("unknown run-ut option " + std::string(a));
        }
    }
    if (options.apiInfo.empty())
        return usageError("run-ut needs -api_info DUMP_JSON");

#ifdef PROBESCOPE_HAVE_RUNUTTORCH
    const runut::ReplayOptions replayOptions = options.replay;
    if (replayOptions.device != "cpu" && !runuttorch::cudaAvailable()) {
        std::cerr << "probescope-cli: device " << replayOptions.device << " is not available (this LibTorch has no CUDA "
                  << "device); use -d cpu\n";
        return kExitInputError;
    }
    const runut::ReplayerFactory factory = [replayOptions] { return runuttorch::makeTorchReplayer(replayOptions); };
#else
    std::cerr << "probescope-cli: this build has no LibTorch replay (ProbeScope::runuttorch); run-ut is unavailable\n";
    return kExitInputError;
    const runut::ReplayerFactory factory;
#endif
    std::signal(SIGINT, onInterrupt);
    CliProgress progress;
    auto summary = runut::runUt(options, factory, &progress);
    std::signal(SIGINT, SIG_DFL);
    if (!summary) {
        std::cerr << summary.error().format() << "\n";
        return summary.error().id == "runut.option" ? kExitUsage : kExitInputError;
    }
    const auto& s = *summary;
    std::cout << "run_ut: " << options.apiInfo.string() << "\n";
    for (const Diagnostic& d : s.diagnostics)
        std::cout << "  " << d.format() << "\n";
    std::cout << "  APIs judged: " << s.apis;
    if (s.resumedSkipped)
        std::cout << " (" << s.resumedSkipped << " already in the resumed file)";
    if (s.filteredOut)
        std::cout << " (" << s.filteredOut << " repeats left out by -f)";
    std::cout << "\n  replay: pass " << s.passed << ", warning " << s.warnings << ", error " << s.errors << ", SKIP "
              << s.skipped << "\n";
    std::cout << "  first failing API: " << (s.firstFailing.empty() ? std::string("none") : s.firstFailing) << "\n";
    std::cout << "  written: " << s.resultCsv.string() << "\n  written: " << s.detailsCsv.string() << "\n";
    if (s.dumpedResultCsv) {
        std::cout << "  dumped outputs vs CPU bench: pass " << s.dumpedPassed << ", warning " << s.dumpedWarnings
                  << ", error " << s.dumpedErrors << ", SKIP " << s.dumpedSkipped << "\n";
        std::cout << "  first failing dumped output: "
                  << (s.firstDumpedFailing.empty() ? std::string("none") : s.firstDumpedFailing) << "\n";
        std::cout << "  written: " << s.dumpedResultCsv->string() << "\n  written: " << s.dumpedDetailsCsv->string()
                  << "\n";
    }
    std::cout << "  time: " << s.seconds << " s";
    if (s.seconds > 0 && s.apis)
        std::cout << " (" << static_cast<double>(s.apis) / s.seconds << " APIs/s, " << options.workers << " worker"
                  << (options.workers > 1 ? "s" : "") << ")";
    std::cout << "\n";
    if (s.cancelled)
        std::cout << "  interrupted: continue with -csv_path " << s.resultCsv.string() << "\n";
    // A salvaged truncated dump was judged as far as it goes; its error still makes the input bad.
    return hasErrors(s.diagnostics) ? kExitInputError : kExitOk;
}

int runApiPrecisionCompare(int argc, char** argv)
{
    runut::PrecisionCompareOptions options;
    options.outDir = ".";
    for (int i = 2; i < argc; ++i) {
        const std::string_view a = argv[i];
        auto next = [&]() -> std::optional<std::string> {
            if (i + 1 >= argc)
                return std::nullopt;
            return std::string(argv[++i]);
        };
        if (a == "-npu" || a == "--npu_csv_path" || a == "-gpu" || a == "--gpu_csv_path" || a == "-o"
            || a == "--out_path") {
            const auto v = next();
            if (!v)
                return usageError(std::string(a) + " needs a path");
            (a == "-npu" || a == "--npu_csv_path"   ? options.npuCsv
                 : a == "-gpu" || a == "--gpu_csv_path" ? options.gpuCsv
                                                        : options.outDir) = *v;
        } else if (a == "--profile") {
            const auto v = next();
            const auto p = v ? parseRunUtProfile(*v) : std::nullopt;
            if (!p)
                return usageError("--profile needs msprobe12 or msprobe26");
            options.profile = *p;
        } else if (a == "--precision") {
            const auto v = i + 1 < argc ? parseInt(argv[++i]) : std::nullopt;
            if (!v || *v < 0 || *v > 20)
                return usageError("--precision needs a number of decimals (0-20)");
            options.precision = static_cast<int>(*v);
        } else {
            return usageError("unknown api-precision-compare option " + std::string(a));
        }
    }
    if (options.npuCsv.empty() || options.gpuCsv.empty())
        return usageError("api-precision-compare needs -npu NPU_CSV and -gpu GPU_CSV");
    auto out = runut::apiPrecisionCompare(options);
    if (!out) {
        std::cerr << out.error().format() << "\n";
        return kExitInputError;
    }
    std::cout << "api_precision_compare: " << options.npuCsv.string() << "  vs  " << options.gpuCsv.string() << "\n";
    for (const Diagnostic& d : out->diagnostics)
        std::cout << "  " << d.format() << "\n";
    std::cout << "  APIs: " << out->apis << ", details rows: " << out->rows << "\n";
    std::cout << "  written: " << out->resultCsv.string() << "\n  written: " << out->detailsCsv.string() << "\n";
    return hasErrors(out->diagnostics) ? kExitInputError : kExitOk;
}
} // namespace

int main(int argc, char** argv)
{
    for (int i = 1; i < argc; ++i) {
        const std::string_view a = argv[i];
        if (a == "--help" || a == "-h" || a == "help") {
            std::cout << kUsage;
            return kExitOk;
        }
        if (a == "--version") {
            std::cout << "probescope-cli " << PROBESCOPE_VERSION << "\n";
            return kExitOk;
        }
    }
    if (argc > 1 && std::string_view(argv[1]) == "run-ut")
        return runRunUt(argc, argv);
    if (argc > 1 && std::string_view(argv[1]) == "api-precision-compare")
        return runApiPrecisionCompare(argc, argv);
    Args args;
    if (auto error = parseArgs(argc, argv, args))
        return usageError(*error);
    if (args.command == "info")
        return runInfo(args);
    if (args.command == "tree")
        return runTree(args);
    if (args.command == "compare")
        return runCompare(args);
    return usageError("unknown command \"" + args.command + "\"");
}
