// SPDX-License-Identifier: Apache-2.0
// probescope-cli: the headless front end. Argument parsing and wiring only; the work is in core.
#include "runutplugin.h" // run-ut's LibTorch replay, loaded on demand
#include "exitstatus.h"
#include "core/compare/pipeline/comparerun.h"
#include "core/compare/msprobe12/highlight.h"
#include "core/compare/msprobe26/diffanalyze.h"
#include "core/dump/dumplayout.h"
#include "core/dump/rankdump.h"
#include "core/dumpinfo/dumpinfo.h"
#include "core/runut/precisioncompare.h"
#include "core/runut/runner.h"
#include "core/tree/constructtree.h"
#include "core/util/pages.h"
#include "options.h"
#include "report.h"
#include "ckptcli.h"
#include "ptdbgcli.h"
#include "core/compare/ptdbg/ptdbgcompare.h"
#include "jobcli.h"
#include "configcheckcli.h"
#include "graphcli.h"
#include "workflowcli.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <functional>
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
using cli::kExitInputError;
using cli::kExitOk;
using cli::kExitUsage;
using cli::usageError;

const char* const kUsage = R"USAGE(probescope-cli - inspect msprobe precision dumps

usage:
  probescope-cli overflow_check -i STEP_DIR [-o OUT]     (also spelled nan_analyze)
      The first node that produced a NaN/Inf across the ranks of one run, as msprobe 26's overflow_check:
      OUT/anomaly_analyze_<ns>.json (default OUT ./output), or no file when there is none. STEP_DIR may
      be a whole dump root: the first step with an anomaly answers. See docs/overflow-check.md.
  probescope-cli data2db --data DIR --db OUT --format monitor [--micro_step true|false] [--mapping FILE]
      msprobe 26's monitor CSV folders (v1 <time>-rank<R>-<uid>/, v2 rank_<R>/) into
      OUT/monitor_data.trend.db, as msprobe's data2db writes it. See docs/monitor.md.
  probescope-cli anomaly_analyse -d DIR/anomaly_detected [-o OUT] [-k K] [-s "[1, 2]"]
      The earliest K anomalies of the monitor's alerts, as msprobe's anomaly_processor:
      OUT/anomaly_analyse.json (default OUT = DIR, K = 8).
  probescope-cli info DIR [--verify]
      Steps, ranks, task/level/framework, entry counts by kind, tensor files present or
      missing, and every diagnostic. --verify loads each tensor file and checks its dtype,
      shape and Max/Min/Mean/Norm against the dump file.
  probescope-cli tree DIR [--step N] [--rank R] [--exec-order] [--no-marks]
      The module/API hierarchy of one rank of one step as indented text. --exec-order
      prefixes each node with its position in execution order; --no-marks hides the
      "(parent inferred)" notes.
  probescope-cli compare -i compare.json -o OUT [-s] [-f] [-c] [-j N] [--profile P] [--xlsx] [-da]
                        [-dm MAP] [-cm [MAP]] [-am [MAP]] [-lm [MAP]] [--match-file FILE]
  probescope-cli compare --npu PATH --bench PATH -o OUT [options as above]
      msprobe's spellings work too: -tp/--target_path (= --npu), -gp/--golden_path (= --bench),
      -o/--output_path, -i/--input_path, -fm/--fuzzy_match (= -f), --cell_mapping,
      --api_mapping, --data_mapping, --layer_mapping, --diff_analyze, --stack_mode,
      --compare_only; so msprobe 26's "compare -tp NPU -gp BENCH -o OUT" runs as it is.
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
      --match-file FILE.vis.config (tb_graph_ascend's manual matches, NPU node: bench node):
      the entries it pairs are compared as it says (their rows by their name below the node:
      .input.0 with .input.0), in every mode; a node's children keep their own matching
      unless the file names them too; every other entry keeps msprobe's matching. An entry
      naming a node neither dump has, or a node already paired by an earlier entry, is a
      warning naming the file and the entry. One pair only (not a whole job, not with -da;
      with msprobe-1.2 not with -dm/-lm). See docs/graph.md.
      MindSpore NPU dumps (framework "mindspore" in dump.json) against PyTorch or MindSpore:
      -da, --diff-analyze (with --profile msprobe-26 and two step folders, e.g. npu/step0):
      msprobe 26's first-divergence analysis. Writes compare_result_rankN_TIMESTAMP.json per
      rank pair and, when some node diverges, diff_analyze_NANOSECONDS.json naming the first
      diverging node(s) of the job, following communication between ranks; every
      compare_result_rank*.json already in OUT is analysed too, as msprobe does. On two
      dump.json files -da changes nothing (as in msprobe 26). A damaged rank dump or rank
      table stops the run with exit 1 and nothing written; --salvage analyses what can be
      read (exit status still 1). -j N compares N rank pairs at once (default: one per
      CPU; the files and the text never depend on it). Only -i/--npu/--bench, -o, --profile,
      --salvage and -j go with -da: any other option is a usage error. See docs/msprobe26-da.md.
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
      Whole job (two dump roots, or --step/--rank/--resume given): every (step, rank) pair is
      compared into OUT/step{N}/ as above, then OUT/job_summary.csv and job_summary.json (per
      pair rows, failing rows, first failing node, worst metric, pairs that failed to compare,
      the origin of the job by communication order). --step 0,2 and --rank 1,3 select (lists);
      --resume skips pairs whose outputs are complete; --pair-threads N compares N pairs at
      once (the outputs never depend on it). Exit 1 when a pair failed to compare. The last
      line names the job's origin rank and node. Under mpirun -n P (or srun) the pairs are
      spread over the processes; rank 0 writes the summary. See docs/scale-out.md.
  probescope-cli compare --profile ptdbg (-i compare.json | --npu PATH --bench PATH) -o OUT
                        [-s] [-f] [-c] [--xlsx]
      ptdbg_ascend 6.0's compare of .pkl dumps (docs/ptdbg-compare.md). compare.json is ptdbg's
      input_param: npu_pkl_path, bench_pkl_path and, for the compare of the .npy data,
      npu_dump_data_dir and bench_dump_data_dir (without them: statistics, or md5 for md5 dumps);
      such a compare.json selects this profile by itself. --npu/--bench: two step folders of
      rank*/ (compare_distributed: one result per rank pair, _rankN-rankM in the names), two
      rank folders or two .pkl files (the .npy folder beside a pkl is used when both have one).
      -s stack mode (api_stack dumps), -f fuzzy match, -c no advisor file, -j N compares N
      .npy pairs at once, --xlsx also writes ptdbg's workbook with its red/yellow fills.
      Writes compare_result[_rankN-rankM]_TS.csv
      (the cells of ptdbg's xlsx) and advisor[_rankN-rankM]_TS.txt.
  probescope-cli parse PKL API_PREFIX
      ptdbg's parse(): the stack and statistics rows of the APIs whose names start with
      API_PREFIX (e.g. Functional.conv2d.0).
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
  probescope-cli config_check -d [train.sh] [config.yaml] [-o pack.zip]
      msprobe 26's static pack: the environment (env), the Python packages of the python3 on
      PATH (pip, read from its site folders' metadata) and the hyperparameters of launch scripts
      (.sh) and configurations (.yaml) in one zip, msprobe's layout (default
      ./config_check_pack.zip; an existing zip is never replaced). See docs/config-check.md.
  probescope-cli config_check -c bench.zip cmp.zip [-o OUT]
      Compares two packs (ProbeScope's or msprobe's) as msprobe 26 does: both extracted into
      OUT/bench and OUT/cmp, OUT/result.xlsx (summary, env, pip, dataset, weights,
      hyperparameters, random) and a CSV per sheet, result.<sheet>.csv (default OUT
      ./config_check_result). A zip with a '../' or absolute entry, a symlink entry or a zip
      bomb is refused (exit 1) before anything is extracted.
  probescope-cli merge_result -i DIR -o OUT -config merge.yaml
      msprobe 26's merge of the per-rank compare workbooks compare_result_rank{N}_{ts}.xlsx in
      DIR: multi_ranks_compare_merge_{ts}.xlsx in OUT, one sheet per compare index (the yaml's
      compare_index, or all of the dump mode), a row per entry of the yaml's api list, a column
      per rank; and a CSV per sheet.
  probescope-cli --help | --version

DIR is a dump root (step*/rank*/), a step folder, a rank folder, a dump.json or debug.json,
or a ptdbg_ascend .pkl dump.

Each command takes only its own options: one it does not take (info --xlsx, compare --exec-order,
-da --xlsx) is a usage error that says why, never ignored.
tree indents at most 32 levels; a deeper node is printed there with "(depth N) " before its name.

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
    Profile profile = Profile::Msprobe12;
    bool xlsx = false;
    std::string dataMapping;
    std::optional<std::string> cellMapping; ///< "" = the flag without a file
    std::optional<std::string> apiMapping;
    std::optional<std::string> layerMapping;
    bool diffAnalyze = false; ///< -da (msprobe 26's first-divergence analysis)
    cli::JobCliArgs job;      ///< --step/--rank lists, --resume, --pair-threads (jobcli.h)
    bool salvage = false; ///< --salvage: compare what a damaged dump holds (issue 20)
    std::string matchFile; ///< --match-file: a tb_graph_ascend .vis.config (issue 27)
    std::vector<cli::GivenOption> given; ///< every option typed, checked against the command's OptionScope
};

// ---- Which options each command, compare profile and branch takes (issue 25). All of them are parsed by one
// table (msprobe lets options stand before the command word); each command then refuses what it does not take,
// with the reason, instead of ignoring it. A branch that learns an option moves it from `reasons` to `accepts`.

const cli::OptionScope kInfoScope { "info", { "--verify" }, {
    { "-o", "info prints to the terminal and writes no files" },
    { "--xlsx", "info writes no files" },
    { "--step", "info lists every step and rank of DIR (name a step or rank folder to narrow it)" },
    { "--rank", "info lists every step and rank of DIR (name a step or rank folder to narrow it)" },
    { "--salvage", "info reads what it can and lists every diagnostic" },
} };

const cli::OptionScope kTreeScope { "tree", { "--step", "--rank", "--exec-order", "--no-marks" }, {
    { "-o", "tree prints to the terminal and writes no files" },
    { "--xlsx", "tree writes no files" },
} };

/// compare with --profile msprobe-1.2 (the default) or msprobe-26; `-da` without msprobe-26 keeps its own message.
const cli::OptionScope kCompareScope { "compare",
    { "-i", "-o", "--npu", "--bench", "-s", "-f", "-c", "-j", "--profile", "--xlsx", "--salvage", "-dm", "-cm", "-am",
      "-lm", "-da", "--step", "--rank", "--resume", "--pair-threads", "--match-file" },
    {} };


constexpr std::string_view kDaFixed = "-da compares every rank pair with msprobe 26's fixed settings (msprobe accepts "
                                      "it there and ignores it; ignoring it silently would give a result not asked for)";
constexpr std::string_view kDaSteps = "-da takes two step folders (for example npu/step0): the step is the folder, and it "
                                      "pairs every rank folder in them";
constexpr std::string_view kDaNoJob = "-da is not a whole-job compare: it always compares every rank pair and writes new "
                                      "rank tables";
constexpr std::string_view kDaInfoTree = "it is an option of info and tree";

/// -da on two step folders (docs/msprobe26-da.md); on two dump.json files -da changes nothing and kCompareScope applies.
const cli::OptionScope kDiffAnalyzeScope { "-da (msprobe 26's first-divergence analysis)",
    { "-i", "-o", "--npu", "--bench", "--profile", "-da", "--salvage", "-j" }, {
    { "--step", kDaSteps }, { "--rank", kDaSteps }, { "--resume", kDaNoJob }, { "--pair-threads", kDaNoJob },
    { "-s", "-da adds the stack column whenever stack.json lies beside the NPU dump (msprobe 26 refuses -s with -da)" },
    { "-c", "-da writes no advisor file" },
    { "-f", kDaFixed }, { "--xlsx", kDaFixed }, { "-dm", kDaFixed }, { "-cm", kDaFixed }, { "-am", kDaFixed },
    { "-lm", kDaFixed },
    { "--verify", kDaInfoTree }, { "--exec-order", kDaInfoTree }, { "--no-marks", kDaInfoTree },
    { "--match-file", "-da finds the first diverging node by msprobe 26's own matching of every rank; manual "
                      "matches apply to a compare of one pair (drop -da)" },
} };

/// The scopes "X applies to A, not B" names as A.
const std::vector<const cli::OptionScope*>& commandScopes()
{
    static const std::vector<const cli::OptionScope*> all { &kInfoScope, &kTreeScope, &kCompareScope };
    return all;
}

std::optional<std::string> refuseForeign(const Args& args, const cli::OptionScope& scope)
{
    return cli::refuseForeignOptions(args.given, scope, commandScopes());
}

bool given(const Args& args, std::string_view canonical)
{
    return std::any_of(args.given.begin(), args.given.end(),
                       [&](const cli::GivenOption& g) { return g.canonical == canonical; });
}

std::optional<std::string> parseArgs(int argc, char** argv, Args& args)
{
    using cli::Option;
    using Takes = Option::Takes;
    using Value = std::optional<std::string_view>;
    using Error = std::optional<std::string>;
    auto flag = [](bool& target) { return [&target](std::string_view, Value) -> Error { target = true; return std::nullopt; }; };
    auto text = [](std::string& target) {
        return [&target](std::string_view, Value v) -> Error {
            target = std::string(*v);
            return std::nullopt;
        };
    };
    auto mapping = [](std::optional<std::string>& target) {
        return [&target](std::string_view, Value v) -> Error {
            target = std::string(v.value_or(""));
            return std::nullopt;
        };
    };
    auto threads = [](unsigned& target, const char* message) {
        return [&target, message](std::string_view, Value v) -> Error {
            const auto n = cli::intIn(*v, 1, 1024);
            if (!n)
                return std::string(message);
            target = static_cast<unsigned>(*n);
            return std::nullopt;
        };
    };
    // compare takes lists (--step 0,2); the other commands one number, checked below.
    auto stepOrRank = [](std::string& list, std::optional<std::int64_t>& one) {
        return [&list, &one](std::string_view, Value v) -> Error {
            list = std::string(*v);
            one = cli::intIn(*v, std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max());
            return std::nullopt;
        };
    };
    const std::vector<Option> options = {
        { { "--step" }, Takes::Value, "a step number", stepOrRank(args.job.steps, args.step) },
        { { "--rank" }, Takes::Value, "a rank number", stepOrRank(args.job.ranks, args.rank) },
        { { "--resume" }, Takes::Nothing, {}, flag(args.job.resume) },
        { { "--pair-threads" }, Takes::Value, "a number of threads (1-1024)",
          threads(args.job.pairThreads, "--pair-threads needs a number of threads (1-1024)") },
        { { "--verify" }, Takes::Nothing, {}, flag(args.verify) },
        { { "--exec-order" }, Takes::Nothing, {}, flag(args.execOrder) },
        { { "--no-marks" }, Takes::Nothing, {}, flag(args.noMarks) },
        // msprobe's spellings beside ProbeScope's own (issue 36 item 13): 1.x's -i/--input_path, 26's
        // -tp/--target_path (the NPU side), -gp/--golden_path (the bench side), -o/--output_path, -fm/--fuzzy_match.
        { { "-i", "--input", "--input_path" }, Takes::Value, "a path", text(args.input) },
        { { "-o", "--output", "--output_path" }, Takes::Value, "a path", text(args.out) },
        { { "--npu", "-tp", "--target_path" }, Takes::Value, "a path", text(args.npu) },
        { { "--bench", "-gp", "--golden_path" }, Takes::Value, "a path", text(args.bench) },
        { { "-s", "--stack_mode" }, Takes::Nothing, {}, flag(args.stack) },
        { { "-f", "--fuzzy_match", "-fm" }, Takes::Nothing, {}, flag(args.fuzzy) },
        { { "-c", "--compare_only" }, Takes::Nothing, {}, flag(args.compareOnly) },
        { { "-dm", "--data_mapping" }, Takes::Value, "a mapping.yaml", text(args.dataMapping) },
        { { "-cm", "--cell_mapping" }, Takes::OptionalValue, {}, mapping(args.cellMapping) },
        { { "-am", "--api_mapping" }, Takes::OptionalValue, {}, mapping(args.apiMapping) },
        { { "-lm", "--layer_mapping" }, Takes::OptionalValue, {}, mapping(args.layerMapping) },
        { { "--xlsx" }, Takes::Nothing, {}, flag(args.xlsx) },
        { { "--salvage" }, Takes::Nothing, {}, flag(args.salvage) },
        { { "--match-file" }, Takes::Value, "a .vis.config file", text(args.matchFile) },
        { { "-da", "--diff-analyze", "--diff_analyze" }, Takes::Nothing, {}, flag(args.diffAnalyze) },
        { { "--profile" }, Takes::Value, profileChoices(),
          [&](std::string_view, Value v) -> Error {
              const auto profile = parseProfile(*v);
              if (!profile)
                  return "unknown profile " + std::string(*v) + " (choose " + std::string(profileChoices()) + ")";
              args.profile = *profile;
              return std::nullopt;
          } },
        { { "-j", "--jobs" }, Takes::Value, "a number of threads (1-1024)",
          threads(args.threads, "-j needs a number of threads (1-1024)") },
    };
    cli::ParseRules rules;
    // msprobe's nargs='?': -cm/-am/-lm take the next word as their file unless it is the command itself.
    rules.reserved = [](std::string_view word, const std::vector<std::string_view>& positional) {
        return word == "compare" && std::find(positional.begin(), positional.end(), "compare") == positional.end();
    };
    std::vector<std::string_view> positional;
    if (auto error = cli::parseOptions(argc, argv, 1, options, rules, positional, &args.given))
        return error;
    if (!positional.empty() && positional[0] == "compare") {
        args.command = "compare";
        if (positional.size() != 1)
            return std::string("compare takes its paths through -i, or --npu and --bench");
        if (args.input.empty() == (args.npu.empty() && args.bench.empty()))
            return std::string("compare needs either -i compare.json or --npu PATH --bench PATH (msprobe 26: -tp PATH "
                               "-gp PATH)");
        if (args.input.empty() && (args.npu.empty() || args.bench.empty()))
            return std::string("compare needs both --npu and --bench (msprobe 26: -tp and -gp)");
        if (args.out.empty())
            return std::string("compare needs -o OUT (the output folder)");
        return std::nullopt;
    }
    if (positional.size() != 2)
        return std::string(positional.empty() ? "missing command" : "expected a command and one DIR");
    args.command = positional[0];
    args.dir = positional[1];
    if (args.command == "info") {
        if (auto error = refuseForeign(args, kInfoScope))
            return error;
    } else if (args.command == "tree") {
        if (auto error = refuseForeign(args, kTreeScope))
            return error;
    }
    if (!args.job.steps.empty() && !args.step)
        return std::string("--step needs a step number");
    if (!args.job.ranks.empty() && !args.rank)
        return std::string("--rank needs a rank number");
    return std::nullopt;
}

int runInfo(const Args& args)
{
    // Discovery's table (32 bytes a rank folder), each rank's location made as it is inspected (issue 37).
    auto layout = dump::discoverCompact(args.dir);
    if (!layout) {
        std::cerr << layout.error().format() << "\n";
        return kExitInputError;
    }
    dumpinfo::InfoOptions options;
    options.verifyTensors = args.verify;
    // Each rank printed as it is inspected (the same text as formatInfo): 10,000 ranks hold no summary or text.
    std::cout << dumpinfo::formatInfoHead(*layout);
    bool errors = hasErrors(layout->diagnostics);
    for (std::size_t i = 0; i < layout->ranks.size(); ++i) {
        const dumpinfo::RankInfo info = dumpinfo::inspectLocation(layout->ranks.at(i), options);
        std::cout << dumpinfo::formatRankInfo(info);
        errors = errors || hasErrors(info.diagnostics);
    }
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

/// -da on two step folders (docs/msprobe26-da.md); nullopt when -da does not apply (two dump.json files:
/// msprobe 26 then runs its ordinary compare).
std::optional<int> runDiffAnalyze(const Args& args, const compare::CompareInput& input)
{
    std::error_code ec;
    if (!std::filesystem::is_directory(input.npuPath, ec) && !std::filesystem::is_directory(input.benchPath, ec))
        return std::nullopt;
    if (input.stackPath)
        return usageError("compare.json's stack_path does not apply to -da (msprobe 26's first-divergence analysis): "
                          "-da reads the stack.json beside each NPU rank's dump.json");
    compare::msprobe26::DiffAnalyzeOptions options;
    options.salvage = args.salvage;
    options.threads = args.threads; // -j: rank pairs compared at once
    auto result = compare::msprobe26::runDiffAnalyze(input.npuPath, input.benchPath, args.out, options);
    if (!result) {
        std::cerr << result.error().format() << "\n";
        return kExitInputError;
    }
    // The load step's findings, as compare prints them: a damaged rank dump refuses the run, or is salvaged with
    // its losses said; either way the exit status is 1.
    for (const auto& d : result->inputDiagnostics)
        std::cerr << d.format() << "\n";
    for (const auto& d : result->diagnostics)
        std::cerr << d.format() << "\n";
    if (result->refused) {
        std::cout << "not analysed: rank dumps have errors (listed on stderr); nothing was written. --salvage "
                     "analyses what can be read\n";
        return kExitInputError;
    }
    for (const std::string& loss : result->salvaged)
        std::cout << "SALVAGED, the result is partial: " << loss << "\n";
    const bool partial = hasErrors(result->inputDiagnostics);
    for (const auto& line : result->log)
        std::cout << "[INFO] " << (partial && line.starts_with("The analyze result") ? "(partial input) " : "") << line
                  << "\n";
    return partial ? kExitInputError : kExitOk;
}

int runCompare(const Args& args)
{
    // Usage before input: an option compare does not take is said before any file is read. With -da, which options
    // apply depends on whether the inputs are folders (-da's own table) or files (compare's), known once read.
    if (!args.diffAnalyze) {
        if (auto error = refuseForeign(args, kCompareScope))
            return usageError(*error);
    }
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
    if (args.diffAnalyze) {
        if (args.profile != Profile::Msprobe26)
            return usageError("-da is msprobe 26's analysis: add --profile msprobe-26");
        // Where -da applies (step folders, as runDiffAnalyze decides), it takes its own options.
        std::error_code ec;
        if (std::filesystem::is_directory(input.npuPath, ec) || std::filesystem::is_directory(input.benchPath, ec)) {
            if (auto error = refuseForeign(args, kDiffAnalyzeScope))
                return usageError(*error);
        }
        if (const auto status = runDiffAnalyze(args, input))
            return *status;
        if (auto error = refuseForeign(args, kCompareScope))
            return usageError(*error);
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
    options.profile = args.profile;
    options.salvage = args.salvage;
    if (!args.matchFile.empty())
        options.matchFile = args.matchFile;
    if (cli::isWholeJob(input, options, args.job)) {
        if (options.matchFile)
            return usageError("--match-file names the nodes of one (step, rank), as tb_graph_ascend saves it "
                              "({tag}_{step}_{rank}.vis.config): compare that one pair (two dump.json files or "
                              "rank folders) with it, not a whole job");
        return cli::runJobCompare(input, args.out, options, args.job);
    }
    if (given(args, "--pair-threads"))
        return usageError("--pair-threads applies to a whole-job compare (two dump roots, or --step/--rank/--resume), "
                          "not to a compare of one pair");
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
        inputErrors = inputErrors || r.refused || hasErrors(r.inputDiagnostics);
        if (cli::printLoadFindings(r, "the dumps have errors (listed on stderr); --salvage compares what can be read"))
            continue;
        if (table.rows.empty()) {
            std::cout << "  no entry could be matched; nothing written (as msprobe does)\n";
            continue;
        }
        std::cout << "  " << cli::rowSummary(table) << "\n";
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
    cli::printFirstDivergingPair(*results);
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

/// run_ut exists in msprobe 1.2 and 26 (ptdbg had none).
std::optional<Profile> parseRunUtProfile(std::string_view p)
{
    const auto profile = parseProfile(p);
    if (!profile || *profile == Profile::Ptdbg)
        return std::nullopt;
    return profile;
}

/// run-ut's and api-precision-compare's `--profile` (msprobe12 or msprobe26).
cli::Option runUtProfileOption(Profile& target)
{
    return { { "--profile" }, cli::Option::Takes::Value, "msprobe12 or msprobe26",
             [&target](std::string_view, std::optional<std::string_view> v) -> std::optional<std::string> {
                 const auto p = parseRunUtProfile(*v);
                 if (!p)
                     return std::string("--profile needs msprobe12 or msprobe26");
                 target = *p;
                 return std::nullopt;
             } };
}

int runRunUt(int argc, char** argv)
{
    runut::RunUtOptions options;
    options.outDir = ".";
    using cli::Option;
    using Takes = Option::Takes;
    using Value = std::optional<std::string_view>;
    using Error = std::optional<std::string>;
    auto path = [](auto& target) {
        return [&target](std::string_view, Value v) -> Error {
            target = std::string(*v);
            return std::nullopt;
        };
    };
    // A bounded number: `set` takes it; `message` is the error for a missing or bad value.
    auto number = [](std::int64_t lo, std::int64_t hi, std::string message, std::function<void(std::int64_t)> set) {
        return [lo, hi, message, set](std::string_view name, Value v) -> Error {
            const auto n = cli::intIn(*v, lo, hi);
            if (!n)
                return message.front() == ' ' ? std::string(name) + message : message;
            set(*n);
            return std::nullopt;
        };
    };
    const std::vector<Option> table = {
        { { "-api_info", "--api_info_file" }, Takes::Value, "the dump.json", path(options.apiInfo) },
        { { "-o", "--out_path" }, Takes::Value, "a folder", path(options.outDir) },
        { { "-csv_path", "--result_csv_path" }, Takes::Value, "an accuracy_checking_result_*.csv", path(options.resumeCsv) },
        { { "-f", "--filter_api" }, Takes::Nothing, {},
          [&](std::string_view, Value) -> Error {
              options.filterApi = true;
              return std::nullopt;
          } },
        { { "-config", "--config_path" }, Takes::Value, "a config.json", path(options.config) },
        { { "-j", "--jobs", "-n", "--num_splits" }, Takes::Value, "a number of workers (1-64)",
          number(1, 64, " needs a number of workers (1-64)", [&](std::int64_t n) { options.workers = static_cast<int>(n); }) },
        { { "-d", "--device" }, Takes::Value, "cpu, cuda, cuda:N or a device id",
          [&](std::string_view, Value v) -> Error {
              const std::string device(*v);
              if (const auto id = parseInt(device); id && *id >= 0)
                  options.replay.device = "cuda:" + device;
              else if (device == "cpu" || device == "cuda"
                       || (device.rfind("cuda:", 0) == 0 && parseInt(device.substr(5)).value_or(-1) >= 0))
                  options.replay.device = device;
              else
                  return "unknown device " + device + " (cpu, cuda, cuda:N or a device id)";
              return std::nullopt;
          } },
        runUtProfileOption(options.profile),
        { { "--seed" }, Takes::Value, "a number >= 0",
          number(0, std::numeric_limits<std::int64_t>::max(), "--seed needs a number >= 0",
                 [&](std::int64_t n) { options.replay.seed = static_cast<std::uint64_t>(n); }) },
        { { "--precision" }, Takes::Value, "a number of decimals (0-20)",
          number(0, 20, "--precision needs a number of decimals (0-20)",
                 [&](std::int64_t n) { options.precision = static_cast<int>(n); }) },
        { { "--intra-op-threads" }, Takes::Value, "a number of threads (1-256)",
          number(1, 256, "--intra-op-threads needs a number of threads (1-256)",
                 [&](std::int64_t n) { options.replay.intraOpThreads = static_cast<int>(n); }) },
        { { "--white-list", "--black-list" }, Takes::Value, "API names separated by commas",
          [&](std::string_view name, Value v) -> Error {
              auto names = splitCommas(*v);
              auto& list = name == "--white-list" ? options.whiteList : options.blackList;
              list.insert(list.end(), names.begin(), names.end());
              return std::nullopt;
          } },
        { { "--no-dumped-outputs" }, Takes::Nothing, {},
          [&](std::string_view, Value) -> Error {
              options.judgeDumpedOutputs = false;
              return std::nullopt;
          } },
        { { "-save_error_data", "--save_error_data" }, Takes::Nothing, {},
          [](std::string_view, Value) -> Error { return std::string("-save_error_data is not supported (see docs/run-ut.md)"); } },
    };
    cli::ParseRules rules;
    rules.unknownLabel = "run-ut option";
    rules.positionalWords = false;
    std::vector<std::string_view> positional;
    if (auto error = cli::parseOptions(argc, argv, 2, table, rules, positional))
        return usageError(*error);
    if (options.apiInfo.empty())
        return usageError("run-ut needs -api_info DUMP_JSON");

#ifdef PROBESCOPE_HAVE_RUNUTTORCH
    // LibTorch is loaded here, on demand, so that no other command pays for it.
    std::string pluginError;
    const cli::RunUtPlugin* plugin = cli::loadRunUtPlugin(pluginError);
    if (!plugin) {
        std::cerr << "probescope-cli: " << pluginError << "\n";
        return kExitInputError;
    }
    const runut::ReplayOptions replayOptions = options.replay;
    if (replayOptions.device != "cpu" && !plugin->cudaAvailable()) {
        std::cerr << "probescope-cli: device " << replayOptions.device << " is not available (this LibTorch has no CUDA "
                  << "device); use -d cpu\n";
        return kExitInputError;
    }
    const runut::ReplayerFactory factory = [replayOptions, plugin] {
        return std::unique_ptr<runut::Replayer>(plugin->makeReplayer(&replayOptions));
    };
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
    using cli::Option;
    using Takes = Option::Takes;
    using Value = std::optional<std::string_view>;
    using Error = std::optional<std::string>;
    auto path = [](std::filesystem::path& target) {
        return [&target](std::string_view, Value v) -> Error {
            target = std::string(*v);
            return std::nullopt;
        };
    };
    const std::vector<Option> table = {
        { { "-npu", "--npu_csv_path" }, Takes::Value, "a path", path(options.npuCsv) },
        { { "-gpu", "--gpu_csv_path" }, Takes::Value, "a path", path(options.gpuCsv) },
        { { "-o", "--out_path" }, Takes::Value, "a path", path(options.outDir) },
        runUtProfileOption(options.profile),
        { { "--precision" }, Takes::Value, "a number of decimals (0-20)",
          [&](std::string_view, Value v) -> Error {
              const auto n = cli::intIn(*v, 0, 20);
              if (!n)
                  return std::string("--precision needs a number of decimals (0-20)");
              options.precision = static_cast<int>(*n);
              return std::nullopt;
          } },
    };
    cli::ParseRules rules;
    rules.unknownLabel = "api-precision-compare option";
    rules.positionalWords = false;
    std::vector<std::string_view> positional;
    if (auto error = cli::parseOptions(argc, argv, 2, table, rules, positional))
        return usageError(*error);
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
    if (auto graphStatus = cli::runGraphCommand(argc, argv)) // graph, info FILE.vis.db (docs/graph.md)
        return *graphStatus;
    if (auto ckptStatus = cli::runCheckpointCommand(argc, argv)) // config_check -c CKPT_A CKPT_B (checkpoint-compare.md)
        return *ckptStatus;
    if (auto setupStatus = cli::runConfigCheckCommand(argc, argv)) // config_check, merge_result (docs/config-check.md)
        return *setupStatus;
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
    if (auto workflowStatus = cli::runWorkflowCommand(argc, argv)) // overflow_check, data2db, anomaly_analyse
        return *workflowStatus;
    if (argc > 1 && std::string_view(argv[1]) == "run-ut")
        return runRunUt(argc, argv);
    if (argc > 1 && std::string_view(argv[1]) == "api-precision-compare")
        return runApiPrecisionCompare(argc, argv);
    if (argc > 1 && std::string_view(argv[1]) == "parse")
        return cli::runParse(argc, argv);
    Args args;
    if (auto error = parseArgs(argc, argv, args))
        return usageError(*error);
    if (args.command == "info")
        return runInfo(args);
    if (args.command == "tree")
        return runTree(args);
    // ptdbg_ascend's compare (--profile ptdbg, or a compare.json holding ptdbg's input_param) has its own option
    // table: an option it does not implement is a usage error (ptdbgcli.cpp).
    if (args.command == "compare" && cli::isPtdbgCompare(args.profile == Profile::Ptdbg, args.input))
        return cli::runPtdbgCompare(argc, argv);
    if (args.command == "compare")
        return runCompare(args);
    return usageError("unknown command \"" + args.command + "\"");
}
