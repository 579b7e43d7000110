// SPDX-License-Identifier: Apache-2.0
// Wiring of the ptdbg_ascend commands; the work is in core/compare/ptdbg.
#include "ptdbgcli.h"

#include "report.h"

#include "core/compare/comparejob.h"
#include "core/compare/ptdbg/ptdbgcompare.h"

#include <iostream>
#include <vector>

namespace probescope::cli {

namespace fs = std::filesystem;
namespace ptdbg = compare::ptdbg;

namespace {

constexpr int kExitOk = 0;
constexpr int kExitInputError = 1;
constexpr int kExitUsage = 2;

bool holdsRankFolders(const fs::path& dir)
{
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir, ec)) {
        const std::string name = e.path().filename().string();
        if (e.is_directory(ec) && name.rfind("rank", 0) == 0)
            return true;
    }
    return false;
}

/// A .pkl, or a rank folder holding one: the pkl with its data folder (named like it) when there is one.
Result<ptdbg::PtdbgInput> sideOf(const fs::path& path, bool npu, ptdbg::PtdbgInput input)
{
    std::error_code ec;
    fs::path pkl = path;
    if (fs::is_directory(path, ec)) {
        pkl.clear();
        for (const auto& e : fs::directory_iterator(path, ec)) {
            if (e.path().extension() == ".pkl") {
                if (!pkl.empty())
                    return makeError("compare.input", SourceLocation { path.string(), std::nullopt, 0, 0 },
                                     "more than one .pkl in this folder; name the file");
                pkl = e.path();
            }
        }
        if (pkl.empty())
            return makeError("compare.input", SourceLocation { path.string(), std::nullopt, 0, 0 },
                             "no .pkl in this folder (expected a ptdbg rank folder, step folder or .pkl)");
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
    auto results = ptdbg::runPtdbgJob(pairs, args.out, options);
    if (!results) {
        std::cerr << results.error().format() << "\n";
        // -s against the dumps' mode is refused before comparing, as ptdbg does: a usage error.
        return results.error().id == "compare.option" ? kExitUsage : kExitInputError;
    }
    for (const auto& r : *results) {
        const auto& table = *r.table;
        std::cout << r.npuDump.string() << "  vs  " << r.benchDump.string() << "  (ptdbg 6.0 "
                  << (table.mode == compare::CompareMode::RealData ? "real-data"
                          : table.mode == compare::CompareMode::Md5 ? "md5"
                                                                     : "statistics")
                  << " compare)\n";
        for (const Diagnostic& d : r.diagnostics)
            std::cout << "  " << d.format() << "\n";
        for (const Diagnostic& d : table.diagnostics)
            std::cout << "  " << d.format() << "\n";
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
        std::cout << "  " << r.firstFailure.summary << "\n";
    }
    if (results->size() > 1) {
        const long pair = compare::firstDivergingPair(*results);
        if (pair >= 0)
            std::cout << "first diverging rank pair: " << (*results)[pair].suffix.substr(1) << " ("
                      << (*results)[pair].firstFailure.key << ")\n";
    }
    return kExitOk;
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
