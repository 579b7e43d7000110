// SPDX-License-Identifier: Apache-2.0
#include "compare/comparejob.h"

#include "compare/csvwriter.h"
#include "compare/highlight.h"
#include "compare/mapping.h"
#include "compare/msprobe26.h"
#include "compare/xlsxwriter.h"
#include "compare/pytext.h"
#include "compare/realdata.h"
#include "dump/loadreport.h"
#include "dump/rankdump.h"
#include "util/fileio.h"
#include "util/outputfile.h"
#include "util/textposition.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <fstream>

namespace probescope::compare {

namespace fs = std::filesystem;

namespace {

SourceLocation at(const fs::path& p)
{
    return SourceLocation { p.string(), std::nullopt, 0, 0 };
}

/// A tensor file that exists but cannot be read leaves an "unreadable" message in its row (realdata.cpp);
/// the run must not end as if it were clean, so each becomes an error (the first few named).
void noteUnreadableTensors(const CompareTable& table, Diagnostics& out)
{
    int column = table.column("Err_message");
    if (column < 0)
        column = table.column("Message");
    if (column < 0)
        return;
    std::size_t count = 0;
    for (const auto& row : table.rows) {
        if (static_cast<std::size_t>(column) >= row.size() || !row[column].isString())
            continue;
        const std::string& message = row[column].asString();
        const auto mark = message.find(kUnreadableMark);
        if (mark == std::string::npos)
            continue;
        if (++count <= 10)
            out.push_back(makeError("compare.tensor-unreadable", SourceLocation {},
                                    "row " + (row[0].isString() ? row[0].asString() : std::string("?"))
                                        + ": its tensor file is unreadable: "
                                        + message.substr(mark + kUnreadableMark.size() + 1)));
    }
    if (count > 10)
        out.push_back(makeError("compare.tensor-unreadable", SourceLocation {},
                                std::to_string(count - 10) + " more rows with unreadable tensor files"));
}

} // namespace

Result<CompareInput> readCompareJson(const fs::path& path)
{
    auto text = readTextFile(path);
    if (!text)
        return makeError("compare.input", at(path), "cannot open the compare.json file");
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(*text);
    } catch (const nlohmann::json::parse_error& e) {
        // nlohmann counts bytes from 1 and reports the byte after the offending one.
        const std::uint64_t offset = e.byte > 1 ? e.byte - 1 : 0;
        std::string what = e.what();
        if (const auto colon = what.rfind(": "); colon != std::string::npos)
            what = what.substr(colon + 2);
        return makeError("compare.input", locate(*text, offset, path.string()), "not valid JSON: " + what);
    }
    if (!j.is_object())
        return makeError("compare.input", at(path), "compare.json must hold an object");
    CompareInput input;
    for (const char* key : { "npu_path", "bench_path" }) {
        if (!j.contains(key) || !j[key].is_string())
            return makeError("compare.input", at(path), std::string("\"") + key + "\" (a path) is required");
    }
    input.npuPath = j["npu_path"].get<std::string>();
    input.benchPath = j["bench_path"].get<std::string>();
    if (j.contains("stack_path") && j["stack_path"].is_string())
        input.stackPath = fs::path(j["stack_path"].get<std::string>());
    else if (j.contains("stack_path") && !j["stack_path"].is_null()) // was ignored silently (issue 20)
        return makeError("compare.input", at(path), "\"stack_path\" must be a path (a string) or null");
    return input;
}

Result<std::vector<PlannedPair>> planPairs(const CompareInput& input, const JobOptions& options)
{
    std::error_code ec;
    const bool npuDir = fs::is_directory(input.npuPath, ec);
    const bool benchDir = fs::is_directory(input.benchPath, ec);
    for (const fs::path& p : { input.npuPath, input.benchPath }) {
        if (!fs::exists(p, ec))
            return makeError("compare.input", at(p), "no such file or folder");
    }
    if (npuDir != benchDir)
        return makeError("compare.input", at(input.npuPath), "npu_path and bench_path must both be files or both folders");
    std::vector<PlannedPair> pairs;
    if (!npuDir) {
        // A single pair (A.1): stack_path given -> -s decides; absent -> stack.json beside the NPU dump.json.
        for (const fs::path& p : { input.npuPath, input.benchPath }) {
            if (p.filename() != "dump.json")
                return makeError("compare.input", at(p), "a compared file must be named dump.json");
        }
        PlannedPair pair { "", input.npuPath, input.benchPath, false, std::nullopt };
        if (input.stackPath && options.profile == Profile::Msprobe12) {
            pair.stackMode = options.stackFlag;
            pair.stackFile = *input.stackPath;
        } else {
            const fs::path beside = input.npuPath.parent_path() / "stack.json";
            pair.stackMode = fs::is_regular_file(beside, ec);
            if (pair.stackMode)
                pair.stackFile = beside;
        }
        pairs.push_back(std::move(pair));
        return pairs;
    }
    // Directory mode (A.12): step folders holding only rank, rank0, rank1, ... paired in string order.
    // msprobe's ^rank(?:0|[1-9][0-9]*)?$
    auto isRankName = [](const std::string& name) {
        if (name.rfind("rank", 0) != 0)
            return false;
        const std::string digits = name.substr(4);
        if (digits.empty() || digits == "0")
            return true;
        return digits[0] != '0' && digits.find_first_not_of("0123456789") == std::string::npos;
    };
    auto ranksOf = [&](const fs::path& dir, std::vector<std::string>& names) -> std::optional<Diagnostic> {
        for (const auto& e : fs::directory_iterator(dir, ec)) {
            const std::string name = e.path().filename().string();
            if (!isRankName(name) || !e.is_directory())
                return makeError("compare.input", at(e.path()),
                                 "a compared step folder may hold only rank folders (rank, rank0, rank1, ...)");
            if (!fs::is_regular_file(e.path() / "dump.json"))
                return makeError("compare.input", at(e.path()), "rank folder without dump.json");
            names.push_back(name);
        }
        std::sort(names.begin(), names.end()); // as strings, like msprobe: rank10 < rank2
        return std::nullopt;
    };
    std::vector<std::string> npuRanks;
    std::vector<std::string> benchRanks;
    if (auto e = ranksOf(input.npuPath, npuRanks))
        return *e;
    if (auto e = ranksOf(input.benchPath, benchRanks))
        return *e;
    if (npuRanks.size() != benchRanks.size())
        return makeError("compare.input", at(input.npuPath),
                         "the NPU folder has " + std::to_string(npuRanks.size()) + " ranks and the bench folder "
                             + std::to_string(benchRanks.size()));
    for (std::size_t i = 0; i < npuRanks.size(); ++i) {
        PlannedPair pair;
        // msprobe 1.2 names a pair "_rank0-rank0"; msprobe 26 uses the NPU rank folder alone.
        pair.suffix = options.profile == Profile::Msprobe26 ? "_" + npuRanks[i] : "_" + npuRanks[i] + "-" + benchRanks[i];
        pair.npuDump = input.npuPath / npuRanks[i] / "dump.json";
        pair.benchDump = input.benchPath / benchRanks[i] / "dump.json";
        const fs::path stack = input.npuPath / npuRanks[i] / "stack.json";
        pair.stackMode = fs::is_regular_file(stack, ec);
        if (pair.stackMode)
            pair.stackFile = stack;
        pairs.push_back(std::move(pair));
    }
    return pairs;
}

std::string guardFormula(std::string text)
{
    static constexpr std::string_view triggers[] = { "=", "+", "-", "@", "%", "\xef\xbc\x8b", "\xef\xbc\x8d",
                                                     "\xef\xbc\x9d", "\xef\xbc\x85", "\xef\xbc\xa0" };
    auto startsWithTrigger = [&](std::string_view s) {
        for (std::string_view t : triggers) {
            if (s.substr(0, t.size()) == t)
                return true;
        }
        return false;
    };
    bool risky = startsWithTrigger(text);
    for (std::size_t semi = text.find(';'); !risky && semi != std::string::npos; semi = text.find(';', semi + 1))
        risky = startsWithTrigger(std::string_view(text).substr(semi + 1));
    if (!risky)
        return text;
    char* end = nullptr;
    std::strtod(text.c_str(), &end);
    if (!text.empty() && end == text.c_str() + text.size())
        return text; // a number such as -1 or -0.5
    return "'" + text;
}

std::string tableCsv(const CompareTable& table)
{
    std::vector<std::vector<std::string>> rows;
    rows.reserve(table.rows.size());
    for (const auto& r : table.rows) {
        std::vector<std::string> cells;
        cells.reserve(r.size());
        for (const Cell& c : r)
            cells.push_back(c.isString() ? guardFormula(excelText(c)) : excelText(c));
        rows.push_back(std::move(cells));
    }
    return toCsv(table.header, rows);
}

namespace {

/// The mapping files of a job, read once for all pairs.
struct MappingFiles
{
    std::optional<DataMapping> data;
    std::optional<CellMapping> cell;
    std::optional<ApiMapping> api;
    std::optional<LayerMapping> layer;
    Diagnostics warnings; ///< api_mapping items that are ignored
};

/// An optional mapping option: absent -> nothing; given without a file -> an empty mapping; else the file.
template<typename T, typename Read>
std::optional<Diagnostic> readOption(const std::optional<fs::path>& option, std::optional<T>& into, Read read)
{
    if (!option)
        return std::nullopt;
    into = T {};
    if (option->empty())
        return std::nullopt;
    auto file = read(*option);
    if (!file)
        return file.error();
    into = std::move(*file);
    return std::nullopt;
}

Result<MappingFiles> readMappingFiles(const JobOptions& options)
{
    MappingFiles files;
    std::optional<Diagnostic> error = readOption(options.dataMapping, files.data, readDataMapping);
    if (!error)
        error = readOption(options.cellMapping, files.cell, readCellMapping);
    if (!error)
        error = readOption(options.apiMapping, files.api,
                           [&](const fs::path& p) { return readApiMapping(p, &files.warnings); });
    if (!error)
        error = readOption(options.layerMapping, files.layer, readLayerMapping);
    if (error)
        return *error;
    return files;
}

/// The mappings in force for one pair, after the framework checks msprobe makes (compare-spec §10.3).
Result<NameMappings> pairMappings(const MappingFiles& files, const JobOptions& options, const dump::RankDump& npu,
                                  const dump::RankDump& bench, Diagnostics& notes, bool& generated)
{
    const bool profile26 = options.profile == Profile::Msprobe26;
    const bool mindspore = isMindSporeDump(*npu.dump, profile26);
    const SourceLocation where { npu.dump->path.string(), std::nullopt, 0, 0 };
    if (!mindspore && !profile26 && (files.cell || files.api))
        return makeError("compare.option", where, "Argument -cm or -am is not supported in PyTorch framework");
    if (!mindspore && profile26 && files.api)
        return makeError("compare.option", where, "Argument -am is not supported in PyTorch framework");
    NameMappings mappings;
    mappings.cell = files.cell;
    mappings.api = files.api;
    mappings.data = files.data;
    if (!files.layer)
        return mappings;
    if (!mindspore) {
        notes.push_back(makeWarning("compare.mapping-ignored", where,
                                    "-lm applies to MindSpore dumps and is ignored for this PyTorch dump, as msprobe does"));
        return mappings;
    }
    auto entries = layerEntryMapping(npu, bench, *files.layer);
    if (!entries)
        return entries.error();
    if (entries->empty()) {
        notes.push_back(makeWarning("compare.layer-mapping-empty", where,
                                    "-lm needs construct.json and stack.json beside the NPU dump.json; without them "
                                    "the rows are compared by name, as msprobe does"));
        return mappings;
    }
    if (!bench.construct.present || bench.construct.links.empty() || !bench.stack.present || bench.stack.framesOf.empty())
        notes.push_back(makeWarning("compare.layer-mapping-empty",
                                    SourceLocation { bench.dump->path.string(), std::nullopt, 0, 0 },
                                    "-lm finds no construct.json/stack.json beside the bench dump.json: every NPU "
                                    "row maps to N/A, as msprobe does"));
    if (files.data)
        notes.push_back(makeWarning("compare.mapping-ignored", SourceLocation { files.data->path.string(), std::nullopt, 0, 0 },
                                    "-lm generates the data mapping; the -dm file is not used (as msprobe does)"));
    // Row names as the profile's own flattener makes them.
    const RowNamesOf rowsOf = [&](bool benchSide, std::string_view key) {
        std::vector<std::string> names;
        const dump::DumpFile& file = benchSide ? *bench.dump : *npu.dump;
        const dump::Entry* entry = file.find(key);
        if (!entry)
            return names;
        if (profile26)
            return rowNames26(*entry);
        if (auto op = flattenEntry(*entry, 0, CompareMode::Summary)) {
            for (const FlatRow* row : op->rowsByCategory())
                names.push_back(row->name);
        }
        return names;
    };
    mappings.data = expandEntryMapping(*entries, rowsOf, files.layer->path);
    generated = true;
    return mappings;
}

} // namespace

Result<std::vector<PairResult>> runCompareJob(const CompareInput& input, const fs::path& outDir,
                                              const JobOptions& options, ProgressSink* progress)
{
    auto pairs = planPairs(input, options);
    if (!pairs)
        return pairs.error();
    auto files = readMappingFiles(options);
    if (!files)
        return files.error();
    std::error_code ec;
    fs::create_directories(outDir, ec);
    if (ec)
        return makeError("compare.output", at(outDir), "cannot create the output folder: " + ec.message());
    const std::string stamp = options.timestamp.empty() ? localTimestamp() : options.timestamp;
    std::vector<PairResult> results;
    // A dump.json with the construct.json and stack.json beside it (layer_mapping reads both sides').
    auto loadSide = [](const fs::path& dumpFile) {
        dump::RankLocation location;
        location.dir = dumpFile.parent_path();
        location.dumpFile = dumpFile;
        return dump::loadRank(location);
    };
    // The load step decides whether a pair is compared at all (issue 20): a dump with errors is refused
    // unless salvage is asked for, and then every loss is said. A refused pair does not stop the others.
    const auto refuse = [&](const PlannedPair& pair, Diagnostics problems) {
        PairResult refused { pair.suffix, pair.npuDump, pair.benchDump, std::make_shared<const CompareTable>(),
                             {}, {}, {}, {}, {}, {}, {}, false, {} };
        refused.inputDiagnostics = std::move(problems);
        refused.refused = true;
        refused.firstFailure.summary = "not compared: the input has errors (see above)";
        results.push_back(std::move(refused));
    };
    for (const PlannedPair& pair : *pairs) {
        auto npuRank = loadSide(pair.npuDump);
        auto benchRank = loadSide(pair.benchDump);
        if (!npuRank || !benchRank) {
            if (pairs->size() == 1)
                return !npuRank ? npuRank.error() : benchRank.error();
            Diagnostics problems;
            for (const auto* side : { &npuRank, &benchRank }) {
                if (!*side)
                    problems.push_back(side->error());
            }
            refuse(pair, std::move(problems));
            continue;
        }
        const auto& npu = (*npuRank)->dump;
        const auto& bench = (*benchRank)->dump;
        Diagnostics inputDiagnostics;
        std::vector<std::string> salvaged;
        for (const auto* side : { &npuRank, &benchRank }) {
            const dump::LoadReport report = dump::loadReport(***side);
            inputDiagnostics.insert(inputDiagnostics.end(), report.diagnostics.begin(), report.diagnostics.end());
            if (!report.clean())
                salvaged.push_back(report.salvageText());
            if (report.entriesRead == 0) {
                // Nothing to compare against is not "no failing node".
                inputDiagnostics.push_back(makeError("compare.empty-dump", at(report.file),
                                                     std::string(side == &npuRank ? "the NPU" : "the bench")
                                                         + " dump has no entries: there is nothing to compare"));
                salvaged.push_back(report.file.string() + ": no entries, every row lacks its counterpart");
            }
        }
        if (hasErrors(inputDiagnostics) && !options.salvage) {
            refuse(pair, std::move(inputDiagnostics));
            continue;
        }
        dump::StackMap stack;
        if (pair.stackMode && pair.stackFile) {
            auto s = dump::readStackJson(*pair.stackFile);
            if (!s)
                return s.error();
            stack = std::move(*s);
        }
        Diagnostics notes = files->warnings;
        bool generated = false;
        auto mappings = pairMappings(*files, options, **npuRank, **benchRank, notes, generated);
        if (!mappings)
            return mappings.error();
        CompareOptions compareOptions;
        compareOptions.fuzzy = options.fuzzy;
        compareOptions.stackMode = pair.stackMode;
        compareOptions.stack = &stack;
        compareOptions.threads = options.threads;
        compareOptions.mappings = &*mappings;
        auto table = options.profile == Profile::Msprobe26
            ? compareDumps26(*npu, *bench, compareOptions, progress)
            : (mappings->data ? compareWithDataMapping(*npu, *bench, *mappings->data, compareOptions, progress)
                              : compareDumps(*npu, *bench, compareOptions, progress));
        if (!table)
            return table.error();
        PairResult result { pair.suffix, pair.npuDump, pair.benchDump, *table, {}, {}, {}, {}, {}, std::move(notes),
                            {}, false, {} };
        result.firstFailure = findFirstFailure(**table, *tree::ConstructTree::build(*npuRank));
        result.inputDiagnostics = std::move(inputDiagnostics);
        result.salvaged = std::move(salvaged);
        noteUnreadableTensors(**table, result.inputDiagnostics);
        if ((*table)->rows.empty()) {
            results.push_back(std::move(result)); // msprobe writes nothing when no op matched
            continue;
        }
        // msprobe replaces a file of the same name; ProbeScope never does. The CSV's name is claimed
        // atomically (no exists-then-rename race): a taken name, a concurrent run's included, moves on to
        // compare_result..._{ts}_1.csv, and the pair's other files take the tag the CSV got.
        const std::string csv = options.profile == Profile::Msprobe26 ? tableCsv26(**table) : tableCsv(**table);
        const auto taken = [&](const fs::path& p) { return fs::exists(fs::symlink_status(p, ec)); };
        std::string tag;
        for (int n = 0;; ++n) {
            if (n > 10000)
                return makeError("compare.output", at(outDir),
                                 "no free name for compare_result" + pair.suffix + "_" + stamp + ".csv");
            tag = "_" + stamp + (n > 0 ? "_" + std::to_string(n) : std::string());
            if ((options.xlsx && taken(outDir / ("compare_result" + pair.suffix + tag + ".xlsx")))
                || (options.advisor && options.profile == Profile::Msprobe12
                    && taken(outDir / ("advisor" + pair.suffix + tag + ".txt")))
                || (generated && taken(outDir / ("data_mapping" + pair.suffix + tag + ".yaml"))))
                continue;
            result.csvFile = outDir / ("compare_result" + pair.suffix + tag + ".csv");
            const auto failure = writeFileAtomically(result.csvFile, csv, ReplaceMode::Never);
            if (!failure)
                break;
            if (!failure->nameTaken)
                return makeError("compare.output", at(result.csvFile), failure->message);
        }
        if (options.xlsx) {
            result.xlsxFile = outDir / ("compare_result" + pair.suffix + tag + ".xlsx");
            auto written = writeXlsx(**table, result.xlsxFile);
            if (!written)
                return written.error();
        }
        // msprobe saves the mapping -lm generated next to the result; it explains every pairing.
        if (generated) {
            result.mappingFile = outDir / ("data_mapping" + pair.suffix + tag + ".yaml");
            if (const auto failure = writeFileAtomically(result.mappingFile, dataMappingYaml(*mappings->data)))
                return makeError("compare.output", at(result.mappingFile), failure->message);
        }
        // The advisor file exists in msprobe 1.x and 8.x only.
        if (options.advisor && options.profile == Profile::Msprobe12) {
            result.advisorFile = outDir / ("advisor" + pair.suffix + tag + ".txt");
            if (const auto failure = writeFileAtomically(result.advisorFile, advisorText(**table)))
                return makeError("compare.output", at(result.advisorFile), failure->message);
        }
        results.push_back(std::move(result));
    }
    return results;
}

long firstDivergingPair(const std::vector<PairResult>& results)
{
    std::vector<const FirstFailure*> failures;
    for (const PairResult& r : results)
        failures.push_back(&r.firstFailure);
    return earliestFailure(failures);
}

} // namespace probescope::compare
