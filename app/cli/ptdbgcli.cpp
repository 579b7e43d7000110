// SPDX-License-Identifier: Apache-2.0
// Wiring of the ptdbg_ascend commands; the work is in core/compare/ptdbg.
#include "ptdbgcli.h"
#include "exitstatus.h"

#include "options.h"
#include "report.h"

#include "core/compare/pipeline/comparerun.h"
#include "core/compare/pipeline/ptdbgjob.h"
#include "core/compare/ptdbg/ptdbgcompare.h"
#include "core/dump/dumplayout.h"
#include "core/util/profile.h"

#include <algorithm>
#include <iostream>
#include <optional>
#include <string_view>
#include <vector>

namespace probescope::cli {

namespace fs = std::filesystem;
namespace ptdbg = compare::ptdbg;

namespace {

/// Whether `dir` is a step folder: the one discovery of dumps (dump::discoverDump) finds its dumps in folders below
/// it. A folder it cannot read or refuses is not one; sideOf() then says why.
bool holdsRankFolders(const fs::path& dir)
{
    std::error_code ec;
    if (!fs::is_directory(dir, ec))
        return false;
    const auto layout = dump::discoverDump(dir);
    if (!layout)
        return false;
    const fs::path base = dir.has_filename() ? dir : dir.parent_path();
    return std::any_of(layout->ranks.begin(), layout->ranks.end(),
                       [&](const dump::RankLocation& loc) { return loc.dir != base && !loc.rankLabel.empty(); });
}

/// A .pkl, or a rank folder holding one (found by dump::discoverDump): the pkl with its data folder (named like
/// it) when there is one.
Result<ptdbg::PtdbgInput> sideOf(const fs::path& path, bool npu, ptdbg::PtdbgInput input)
{
    std::error_code ec;
    fs::path pkl = path;
    if (fs::is_directory(path, ec)) {
        const SourceLocation where = fileLocation(path);
        auto layout = dump::discoverDump(path);
        if (!layout)
            return layout.error().id == "layout.empty"
                ? makeError("compare.input", where,
                            "no .pkl in this folder (expected a ptdbg rank folder, step folder or .pkl)")
                : layout.error();
        if (layout->ranks.size() > 1)
            return makeError("compare.input", where, "more than one .pkl in this folder; name the file");
        if (layout->ranks.front().format != dump::DumpFormat::LegacyPkl)
            return makeError("compare.input", where,
                             "no .pkl in this folder (expected a ptdbg rank folder, step folder or .pkl)");
        pkl = layout->ranks.front().dumpFile;
    }
    const fs::path data = pkl.parent_path() / pkl.stem();
    (npu ? input.npuPkl : input.benchPkl) = pkl;
    if (fs::is_directory(data, ec))
        (npu ? input.npuDataDir : input.benchDataDir) = data;
    return input;
}

} // namespace

int runPtdbgCompare(const PtdbgCompareArgs& args)
{
    std::vector<ptdbg::RankPair> pairs;
    if (!args.input.empty()) {
        auto input = ptdbg::readPtdbgCompareJson(args.input);
        if (!input) {
            std::cerr << input.error().format() << "\n";
            return kExitInputError;
        }
        pairs.push_back({ "", *input });
    } else if (holdsRankFolders(args.npu) || holdsRankFolders(args.bench)) {
        auto planned = ptdbg::distributedPairs(args.npu, args.bench);
        if (!planned) {
            std::cerr << planned.error().format() << "\n";
            return kExitInputError;
        }
        pairs = std::move(*planned);
    } else {
        auto input = sideOf(args.npu, true, {});
        if (input)
            input = sideOf(args.bench, false, *input);
        if (!input) {
            std::cerr << input.error().format() << "\n";
            return kExitInputError;
        }
        // Both data folders or neither: ptdbg compares statistics when one is missing.
        if (input->npuDataDir.empty() != input->benchDataDir.empty()) {
            std::cout << "note: only one side has a .npy folder, so this is ptdbg's statistics compare\n";
            input->npuDataDir.clear();
            input->benchDataDir.clear();
        }
        pairs.push_back({ "", *input });
    }
    ptdbg::PtdbgJobOptions options;
    options.compare.stackMode = args.stack;
    options.compare.fuzzy = args.fuzzy;
    options.compare.threads = args.threads;
    options.advisor = !args.compareOnly;
    options.xlsx = args.xlsx;
    options.salvage = args.salvage;
    auto results = ptdbg::runPtdbgJob(pairs, args.out, options);
    if (!results) {
        std::cerr << results.error().format() << "\n";
        // -s against the dumps' mode is refused before comparing, as ptdbg does: a usage error.
        return results.error().id == "compare.option" ? kExitUsage : kExitInputError;
    }
    bool inputErrors = false;
    for (const auto& r : *results) {
        const auto& table = *r.table;
        std::cout << r.npuDump.string() << "  vs  " << r.benchDump.string();
        if (!r.refused)
            std::cout << "  (ptdbg 6.0 "
                      << (table.mode == compare::CompareMode::RealData ? "real-data"
                              : table.mode == compare::CompareMode::Md5 ? "md5"
                                                                         : "statistics")
                      << " compare)";
        std::cout << "\n";
        for (const Diagnostic& d : r.diagnostics)
            std::cout << "  " << d.format() << "\n";
        for (const Diagnostic& d : table.diagnostics) {
            if (d.severity != Severity::Error) // errors are in inputDiagnostics, printed on stderr
                std::cout << "  " << d.format() << "\n";
        }
        // The load step's findings and unreadable .npy files (issue 25): on stderr, and the run exits 1.
        inputErrors = inputErrors || r.refused || hasErrors(r.inputDiagnostics);
        if (printLoadFindings(r, "the input has errors (listed on stderr); --salvage compares what a damaged .pkl holds"))
            continue;
        if (table.rows.empty()) {
            std::cout << "  no API could be matched; nothing written\n";
            continue;
        }
        std::cout << "  " << rowSummary(table) << "\n";
        for (const fs::path* f : { &r.csvFile, &r.xlsxFile, &r.advisorFile }) {
            if (!f->empty())
                std::cout << "  written: " << f->string() << "\n";
        }
        const long first = ptdbg::firstFailingRow(table);
        if (first < 0)
            std::cout << "  ptdbg's advisor row: none\n";
        else
            std::cout << "  ptdbg's advisor row: " << first << " " << table.rows[first][0].asString()
                      << " (table order)\n";
        std::cout << "  " << (r.salvaged.empty() ? "" : "(partial input) ") << r.firstFailure.summary << "\n";
    }
    printFirstDivergingPair(*results);
    return inputErrors ? kExitInputError : kExitOk;
}

bool isPtdbgCompare(bool ptdbgProfile, const std::string& input)
{
    return ptdbgProfile || (!input.empty() && ptdbg::isPtdbgCompareJson(input));
}

int runPtdbgCompare(int argc, char** argv)
{
    using Takes = Option::Takes;
    using Value = std::optional<std::string_view>;
    using Error = std::optional<std::string>;
    PtdbgCompareArgs args;
    auto flag = [](bool& target) {
        return [&target](std::string_view, Value) -> Error {
            target = true;
            return std::nullopt;
        };
    };
    auto text = [](std::string& target) {
        return [&target](std::string_view, Value v) -> Error {
            target = std::string(*v);
            return std::nullopt;
        };
    };
    // An option of another command or profile: a usage error that says why, never dropped without a word.
    auto refused = [](std::string why) {
        return [why](std::string_view name, Value) -> Error {
            return std::string(name) + " does not apply to the ptdbg profile: " + why;
        };
    };
    const std::string wholeJob = "the whole-job compare (job summary, --step/--rank lists, --resume, --pair-threads) "
                                 "runs on msprobe dumps; give ptdbg a step folder of rank*/ (every rank pair), a rank "
                                 "folder or a .pkl with --npu/--bench";
    const std::vector<Option> table = {
        { { "-i", "--input" }, Takes::Value, "a path", text(args.input) },
        { { "-o", "--output" }, Takes::Value, "a path", text(args.out) },
        { { "--npu" }, Takes::Value, "a path", text(args.npu) },
        { { "--bench" }, Takes::Value, "a path", text(args.bench) },
        { { "-s", "--stack_mode" }, Takes::Nothing, {}, flag(args.stack) },
        { { "-f", "--fuzzy_match" }, Takes::Nothing, {}, flag(args.fuzzy) },
        { { "-c", "--compare_only" }, Takes::Nothing, {}, flag(args.compareOnly) },
        { { "--xlsx" }, Takes::Nothing, {}, flag(args.xlsx) },
        { { "--salvage" }, Takes::Nothing, {}, flag(args.salvage) },
        { { "-j", "--jobs" }, Takes::Value, "a number of threads (1-1024)",
          [&args](std::string_view, Value v) -> Error {
              const auto n = intIn(*v, 1, 1024);
              if (!n)
                  return std::string("-j needs a number of threads (1-1024)");
              args.threads = static_cast<unsigned>(*n);
              return std::nullopt;
          } },
        { { "--profile" }, Takes::Value, profileChoices(),
          [](std::string_view, Value v) -> Error {
              if (!parseProfile(*v))
                  return "unknown profile " + std::string(*v) + " (choose " + std::string(profileChoices()) + ")";
              return std::nullopt; // a ptdbg compare.json selects this profile whatever --profile says, as before
          } },
        { { "--step", "--rank", "--resume", "--pair-threads" }, Takes::Nothing, {}, refused(wholeJob) },
        { { "-da", "--diff-analyze", "--diff_analyze" }, Takes::Nothing, {},
          refused("-da is msprobe 26's analysis of msprobe dumps (--profile msprobe-26)") },
        { { "-dm", "--data_mapping", "-cm", "--cell_mapping", "-am", "--api_mapping", "-lm", "--layer_mapping" },
          Takes::Nothing, {}, refused("ptdbg had no mapping options (-dm, -cm, -am, -lm)") },
        { { "--match-file" }, Takes::Value, "a .vis.config file",
          refused("--match-file pairs msprobe graph nodes (tb_graph_ascend's .vis.config); ptdbg's .pkl dumps have no "
                  "such nodes (use --profile msprobe-1.2 or msprobe-26 on msprobe dumps)") },
        { { "--verify", "--exec-order", "--no-marks" }, Takes::Nothing, {},
          refused("it is an option of info or tree, not of compare") },
    };
    ParseRules rules;
    std::vector<std::string_view> positional;
    auto usage = [](const std::string& message) {
        std::cerr << "probescope-cli: " << message << "\n(run probescope-cli --help for usage)\n";
        return kExitUsage;
    };
    if (auto error = parseOptions(argc, argv, 1, table, rules, positional))
        return usage(*error);
    if (positional.size() != 1 || positional[0] != "compare")
        return usage("compare takes its paths through -i, or --npu and --bench");
    if (args.input.empty() == (args.npu.empty() && args.bench.empty()))
        return usage("compare needs either -i compare.json or --npu PATH --bench PATH");
    if (args.input.empty() && (args.npu.empty() || args.bench.empty()))
        return usage("compare needs both --npu and --bench");
    if (args.out.empty())
        return usage("compare needs -o OUT (the output folder)");
    return runPtdbgCompare(args);
}

int runParse(int argc, char** argv)
{
    std::vector<std::string> positional;
    for (int i = 2; i < argc; ++i)
        positional.emplace_back(argv[i]);
    if (positional.size() != 2) {
        std::cerr << "probescope-cli: parse needs a .pkl and an API name prefix (ptdbg's parse(pkl_path, "
                     "module_name_prefix)), e.g. parse dump.pkl Functional.conv2d.0\n(run probescope-cli --help "
                     "for usage)\n";
        return kExitUsage;
    }
    auto text = ptdbg::parsePkl(positional[0], positional[1]);
    if (!text) {
        std::cerr << text.error().format() << "\n";
        return kExitInputError;
    }
    std::cout << *text;
    return kExitOk;
}

} // namespace probescope::cli
