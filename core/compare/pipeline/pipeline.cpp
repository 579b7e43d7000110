// SPDX-License-Identifier: Apache-2.0
#include "core/compare/pipeline/pipeline.h"

#include "core/compare/pipeline/comparerun.h"
#include "core/compare/output/csvwriter.h"
#include "core/compare/pipeline/profiles.h"
#include "core/compare/metrics/realdata.h"
#include "core/compare/output/xlsxwriter.h"
#include "core/dump/keyscan.h"
#include "core/dump/loadreport.h"
#include "core/util/outputfile.h"

#include <algorithm>
#include <future>
#include <thread>

namespace probescope::compare {

namespace fs = std::filesystem;

namespace {

// Maps a sub-range of the work onto a parent sink: the stages of a pair share one bar.
class StageSink final : public ProgressSink
{
public:
    StageSink(ProgressSink* parent, std::uint64_t from, std::uint64_t to)
        : m_parent(parent)
        , m_from(from)
        , m_to(to)
    {
    }
    void setRange(std::uint64_t total) override { m_total = std::max<std::uint64_t>(total, 1); }
    void advance(std::uint64_t done) override
    {
        if (m_parent)
            m_parent->advance(m_from + (m_to - m_from) * std::min(done, m_total) / m_total);
    }
    bool isCancelled() const override { return m_parent && m_parent->isCancelled(); }

private:
    ProgressSink* m_parent;
    std::uint64_t m_from;
    std::uint64_t m_to;
    std::uint64_t m_total = 1;
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

/// The .vis.config's entries as matches between this pair's entries (graph::resolveMatches: its collision rule, one
/// to one, the first claim of a node wins); every entry left out is a warning naming the file and the entry.
ManualMatches manualMatches(const graph::VisConfig& config, const dump::RankDump& npu, const dump::RankDump& bench,
                            Diagnostics& notes)
{
    const auto inNpu = [&](std::string_view name) { return npu.dump->find(name) != nullptr; };
    const auto inBench = [&](std::string_view name) { return bench.dump->find(name) != nullptr; };
    const graph::ResolvedMatches resolved = graph::resolveMatches(config, inNpu, inBench);
    ManualMatches out;
    out.path = config.path;
    for (const graph::NodeMatch& m : resolved.matches)
        out.pairs.emplace_back(m.npu, m.bench);
    for (const std::string& note : resolved.notes)
        notes.push_back(makeWarning("compare.match-skipped", fileLocation(config.path),
                                    note + " (the NPU dump " + npu.dump->path.string() + ", the bench dump "
                                        + bench.dump->path.string() + ")"));
    return out;
}

/// The mappings in force for one pair, after the framework checks msprobe makes (compare-spec §10.3).
Result<NameMappings> pairMappings(const MappingFiles& files, const ProfileRules& rules, const dump::RankDump& npu,
                                  const dump::RankDump& bench, Diagnostics& notes, bool& generated)
{
    const bool profile26 = rules.profile() == Profile::Msprobe26;
    const bool mindspore = rules.isMindSpore(*npu.dump);
    const SourceLocation where = fileLocation(npu.dump->path);
    if (!mindspore && !profile26 && (files.cell || files.api))
        return makeError("compare.option", where, "Argument -cm or -am is not supported in PyTorch framework");
    if (!mindspore && profile26 && files.api)
        return makeError("compare.option", where, "Argument -am is not supported in PyTorch framework");
    NameMappings mappings;
    mappings.cell = files.cell;
    mappings.api = files.api;
    mappings.data = files.data;
    if (files.matches) {
        if (!profile26 && (files.data || (files.layer && mindspore)))
            return makeError("compare.option", fileLocation(files.matches->path),
                             "--match-file pairs nodes within msprobe 1.2's matching, which -dm and -lm replace "
                             "altogether (their rows are the mapping's, in its order): give one or the other");
        mappings.manual = manualMatches(*files.matches, npu, bench, notes);
    }
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
        notes.push_back(makeWarning("compare.layer-mapping-empty", fileLocation(bench.dump->path),
                                    "-lm finds no construct.json/stack.json beside the bench dump.json: every NPU "
                                    "row maps to N/A, as msprobe does"));
    if (files.data)
        notes.push_back(makeWarning("compare.mapping-ignored", fileLocation(files.data->path),
                                    "-lm generates the data mapping; the -dm file is not used (as msprobe does)"));
    // Row names as the profile's own flattener makes them.
    const RowNamesOf rowsOf = [&](bool benchSide, std::string_view key) {
        const dump::DumpFile& file = benchSide ? *bench.dump : *npu.dump;
        const dump::Entry* entry = file.find(key);
        return entry ? rules.rowNames(*entry) : std::vector<std::string> {};
    };
    mappings.data = expandEntryMapping(*entries, rowsOf, files.layer->path);
    generated = true;
    return mappings;
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
        const std::string message = row[column].asString();
        const auto mark = message.find(kUnreadableMark);
        if (mark == std::string::npos)
            continue;
        // A data name or tensor folder leaving the dump keeps its own id: nothing was read there.
        const bool escape = message.find("[tensor.path-escape]", mark) != std::string::npos;
        if (++count <= 10)
            out.push_back(makeError(escape ? "tensor.path-escape" : "compare.tensor-unreadable", SourceLocation {},
                                    "row " + (row[0].isString() ? row[0].asString() : std::string("?"))
                                        + ": its tensor file is unreadable: "
                                        + message.substr(mark + kUnreadableMark.size() + 1)));
    }
    if (count > 10)
        out.push_back(makeError("compare.tensor-unreadable", SourceLocation {},
                                std::to_string(count - 10) + " more rows with unreadable tensor files"));
}

/// Joins a thread on every way out of a scope, or earlier on request.
struct Joiner
{
    std::thread& thread;
    void join()
    {
        if (thread.joinable())
            thread.join();
    }
    ~Joiner() { join(); }
};

/// Below this size of both dump files a pair is loaded, flattened and its tree built on the calling thread: reading
/// a 14 KB dump.json takes less than starting and joining a thread (clone, stack, futex; a wait for a core on a
/// busy machine), and a whole job compares thousands of such pairs one after another (docs/scale-out.md).
constexpr std::uintmax_t kSideThreadBytes = 1 << 20;

bool smallPair(const PlannedPair& pair)
{
    std::error_code ec;
    for (const dump::RankLocation* side : { &pair.npu, &pair.bench }) {
        const std::uintmax_t bytes = fs::file_size(side->dumpFile.path(), ec);
        if (ec || bytes >= kSideThreadBytes)
            return false; // what cannot be sized is left to the load, as before
    }
    return true;
}

} // namespace

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
    if (!error && options.matchFile) {
        auto config = graph::readVisConfig(*options.matchFile);
        if (config)
            files.matches = std::move(*config);
        else
            error = config.error();
    } else if (!error && options.manualMatches) {
        files.matches = *options.manualMatches;
    }
    if (error)
        return *error;
    return files;
}

Result<PairOutcome> comparePair(const PlannedPair& pair, const MappingFiles& files, const JobOptions& options,
                                const PairHooks& hooks, ProgressSink* progress)
{
    auto rules = rulesOf(options.profile);
    if (!rules)
        return rules.error();
    constexpr std::uint64_t kTotal = 1000;
    if (progress) {
        progress->setRange(kTotal);
        progress->advance(0);
    }
    // Stage 1: both sides at once. construct.json and stack.json only where something needs them before the
    // compare: the tree needs the NPU construct.json; -lm needs both sides' of both; stack mode reads its file.
    const bool layer = files.layer.has_value();
    dump::ReadOptions npuOptions;
    npuOptions.stackJson = layer;
    dump::ReadOptions benchOptions = npuOptions;
    benchOptions.constructJson = layer;
    // A viewer's first sight of the pair: the NPU tree from the keys alone. It is made first, on both cores (the
    // bench thread reads the NPU construct.json while this one scans the NPU keys), and the dumps are read after it:
    // at a million entries the tree shows in under two seconds instead of after both 785 MB files. The NPU rank then
    // takes that construct.json instead of reading it again.
    const bool early = hooks.earlyTree && pair.npu.format == dump::DumpFormat::DumpJson;
    std::optional<Result<dump::ConstructMap>> earlyConstruct;
    std::shared_ptr<const tree::ConstructTree> earlyBuilt;
    std::promise<void> constructRead;
    if (early)
        npuOptions.constructJson = false;
    // The side threads (the bench loader, the tree builder, the profile's bench flattener) help one big pair; a
    // viewer's hooks keep them. A small pair, or one of many compared at once, runs on this thread alone.
    const bool sideThreads = early || hooks.loaded || hooks.layoutReady
        || (!options.pairsInParallel && !smallPair(pair));
    Result<std::shared_ptr<const dump::RankDump>> benchRank = makeError("compare.internal", {}, "not loaded");
    const auto loadBench = [&] {
        if (early) {
            std::error_code ec;
            const fs::path constructPath = pair.npu.dir / "construct.json";
            if (fs::exists(constructPath, ec))
                earlyConstruct = dump::readConstructJson(constructPath);
            constructRead.set_value();
        }
        benchRank = dump::loadRank(pair.bench, benchOptions);
    };
    std::thread benchLoader;
    if (sideThreads)
        benchLoader = std::thread(loadBench);
    Joiner benchJoiner { benchLoader };
    if (early) {
        auto keys = dump::scanDumpKeys(pair.npu.dumpFile);
        constructRead.get_future().wait();
        if (keys) { // else the full read says what is wrong with the file
            std::optional<CompareMode> mode;
            if (keys->task == "tensor")
                mode = CompareMode::RealData;
            else if (keys->task == "statistics")
                mode = keys->md5Key ? CompareMode::Md5 : CompareMode::Summary;
            const dump::ConstructMap none;
            earlyBuilt = tree::ConstructTree::buildFromKeys(
                *keys, earlyConstruct && *earlyConstruct ? **earlyConstruct : none, pair.npu.dumpFile);
            hooks.earlyTree(earlyBuilt, mode);
        }
    }
    auto npuRank = dump::loadRank(pair.npu, npuOptions);
    if (!sideThreads && npuRank) // a failed NPU load is the pair's error whatever the bench holds
        loadBench();
    benchJoiner.join();
    if (!npuRank)
        return npuRank.error();
    if (!benchRank)
        return benchRank.error();
    if (earlyConstruct) {
        // The construct.json the early tree read belongs to the NPU rank, as loadRank would have read it.
        auto rank = std::make_shared<dump::RankDump>(**npuRank);
        if (*earlyConstruct)
            rank->construct = std::move(**earlyConstruct);
        else
            rank->diagnostics.push_back(earlyConstruct->error());
        npuRank = std::shared_ptr<const dump::RankDump>(std::move(rank));
    }
    dump::StackMap stack;
    if (pair.stackMode && pair.stackFile) {
        auto s = dump::readStackJson(*pair.stackFile);
        if (!s)
            return s.error();
        stack = std::move(*s);
    }
    PairOutcome outcome;
    outcome.notes = files.warnings;
    // The load step (issue 20): what a damaged dump lost is said, and such a pair is compared only on request.
    for (const auto* side : { &npuRank, &benchRank }) {
        const dump::LoadReport report = dump::loadReport(***side);
        outcome.inputDiagnostics.insert(outcome.inputDiagnostics.end(), report.diagnostics.begin(),
                                        report.diagnostics.end());
        if (!report.clean())
            outcome.salvaged.push_back(report.salvageText());
        if (report.entriesRead == 0) {
            // Nothing to compare against is not "no failing node".
            outcome.inputDiagnostics.push_back(makeError("compare.empty-dump", fileLocation(report.file),
                                                         std::string(side == &npuRank ? "the NPU" : "the bench")
                                                             + " dump has no entries: there is nothing to compare"));
            outcome.salvaged.push_back(report.file.string() + ": no entries, every row lacks its counterpart");
        }
    }
    // Each side's tensor files, bound to its own dump folder. A tensor dump whose tensor folder is a link leaving
    // the dump (to the other side's folder, say) is an error of the input, as a damaged dump.json is (issue 25).
    auto npuTensors = tensorResolverOf(*(*npuRank)->dump);
    auto benchTensors = tensorResolverOf(*(*benchRank)->dump);
    for (const auto& [rank, tensors] : { std::pair { &npuRank, &npuTensors }, std::pair { &benchRank, &benchTensors } }) {
        if ((**rank)->dump->header.task == "tensor" && (*tensors)->folderProblem())
            outcome.inputDiagnostics.push_back(*(*tensors)->folderProblem());
    }
    if (hasErrors(outcome.inputDiagnostics) && !options.salvage) {
        auto loaded = std::make_shared<LoadedPair>();
        loaded->pair = pair;
        loaded->npu = *npuRank;
        loaded->bench = *benchRank;
        outcome.loaded = std::move(loaded);
        outcome.table = std::make_shared<const CompareTable>();
        outcome.refused = true;
        return outcome;
    }
    bool generated = false;
    auto mappings = pairMappings(files, **rules, **npuRank, **benchRank, outcome.notes, generated);
    if (!mappings)
        return mappings.error();
    if (progress && progress->isCancelled())
        return makeError("compare.cancelled", fileLocation(pair.npu.dumpFile), "the compare was cancelled");

    // The tree is built while the profile flattens both dumps when a caller wants it early (the GUI shows it while
    // the compare runs); else only once the rows are laid out and the flattened dumps are freed (at a million entries
    // the tree and the flattened dumps together would raise the peak of the compare by the tree's size).
    auto loaded = std::make_shared<LoadedPair>();
    loaded->pair = pair;
    loaded->npu = *npuRank;
    loaded->bench = *benchRank;
    const auto buildTree = [&] {
        // The early tree is the dump's tree when the full read found the same keys in the same order (the tree is
        // made of the keys and construct.json, which the early tree was built from): it is not built twice. A tree
        // with findings is built again from the dump, whose entries say where each key is in the file.
        // Node i of a tree is entry i of its dump, so the early tree's nodes hold the scanned keys in file order.
        const auto& entries = (*npuRank)->dump->entries;
        bool sameKeys = earlyBuilt && earlyBuilt->diagnostics().empty() && earlyBuilt->size() == entries.size();
        for (std::uint32_t i = 0; sameKeys && i < entries.size(); ++i)
            sameKeys = earlyBuilt->node(tree::NodeId { i }).key == entries[i].key;
        loaded->tree = sameKeys ? earlyBuilt : tree::ConstructTree::build(*npuRank);
        for (const Diagnostics* d : { &(*npuRank)->diagnostics, &(*benchRank)->diagnostics, &loaded->tree->diagnostics() })
            loaded->diagnostics.insert(loaded->diagnostics.end(), d->begin(), d->end());
        if (hooks.loaded)
            hooks.loaded(loaded);
    };
    std::thread treeBuilder;
    Joiner treeJoiner { treeBuilder };
    bool treeStarted = false;
    const auto startTree = [&] {
        if (treeStarted)
            return;
        if (sideThreads)
            treeBuilder = std::thread(buildTree);
        else
            buildTree();
        treeStarted = true;
    };
    if (hooks.loaded || hooks.layoutReady)
        startTree();
    if (progress)
        progress->advance(kTotal / 10);

    // Stage 2: the compare.
    CompareOptions compareOptions;
    compareOptions.fuzzy = options.fuzzy;
    compareOptions.stackMode = pair.stackMode;
    compareOptions.stack = &stack;
    compareOptions.threads = options.threads;
    compareOptions.sideThreads = sideThreads;
    compareOptions.mappings = &*mappings;
    compareOptions.rowReady = hooks.rowReady;
    // The profile reads tensors only through these (tensor/resolver.h): each bound to its own dump's folder.
    compareOptions.npuTensors = std::move(npuTensors);
    compareOptions.benchTensors = std::move(benchTensors);
    compareOptions.layoutReady = [&](const CompareTable& layout) {
        if (!hooks.layoutReady) {
            startTree();
            return;
        }
        treeJoiner.join();
        hooks.layoutReady(layout, *loaded);
    };
    StageSink compareSink(progress, kTotal / 10, kTotal * 99 / 100);
    auto table = (*rules)->compare(*loaded->npu->dump, *loaded->bench->dump, compareOptions, progress ? &compareSink : nullptr);
    startTree(); // a profile that does not lay out first
    treeJoiner.join();
    if (progress && progress->isCancelled())
        return makeError("compare.cancelled", fileLocation(pair.npu.dumpFile), "the compare was cancelled");
    if (!table)
        return table.error();

    // Stage 3: the first failing node, in execution order.
    noteUnreadableTensors(**table, outcome.inputDiagnostics);
    outcome.table = *table;
    outcome.firstFailure = findFirstFailure(**table, *loaded->tree);
    outcome.loaded = std::move(loaded);
    if (generated)
        outcome.generatedMapping = std::move(mappings->data);
    return outcome;
}

Result<PairFiles> writePairOutputs(const PairOutcome& outcome, const fs::path& outDir, const std::string& stamp,
                                   const JobOptions& options)
{
    return writeTableOutputs(*outcome.table, outcome.loaded->pair.suffix, outcome.generatedMapping, outDir, stamp,
                             options);
}

Result<PairFiles> writeTableOutputs(const CompareTable& table, const std::string& suffix,
                                    const std::optional<DataMapping>& generated, const fs::path& outDir,
                                    const std::string& stamp, const JobOptions& options, Diagnostics* notes)
{
    auto rules = rulesOf(options.profile);
    if (!rules)
        return rules.error();
    std::error_code ec;
    fs::create_directories(outDir, ec);
    if (ec)
        return makeError("compare.output", fileLocation(outDir), "cannot create the output folder: " + ec.message());
    const std::optional<std::string> advisor = options.advisor ? (*rules)->advisor(table) : std::nullopt;
    // msprobe replaces a file of the same name; ProbeScope never does. The CSV's name is claimed atomically (no
    // exists-then-rename race): a taken name, a concurrent run's included, moves on to compare_result..._{ts}_1.csv,
    // and the pair's other files take the tag the CSV got. The CSV (over 1 GB at a million entries) is streamed once
    // into a temporary file, which then claims the first free name.
    const fs::path firstCsv = outDir / ("compare_result" + suffix + "_" + stamp + ".csv");
    std::string error;
    auto csv = PendingFile::create(firstCsv, error);
    if (!csv)
        return makeError("compare.output", fileLocation(firstCsv), error);
    (*rules)->writeCsv(table, [&csv](std::string_view chunk) { return csv->write(chunk); });
    if (const auto failure = csv->finish())
        return makeError("compare.output", fileLocation(firstCsv), failure->message);
    const auto taken = [&](const fs::path& p) { return fs::exists(fs::symlink_status(p, ec)); };
    PairFiles written;
    std::string tag;
    for (int n = 0;; ++n) {
        if (n > 10000)
            return makeError("compare.output", fileLocation(outDir),
                             "no free name for compare_result" + suffix + "_" + stamp + ".csv");
        tag = "_" + stamp + (n > 0 ? "_" + std::to_string(n) : std::string());
        if ((options.xlsx && taken(outDir / ("compare_result" + suffix + tag + ".xlsx")))
            || (advisor && taken(outDir / ("advisor" + suffix + tag + ".txt")))
            || (generated && taken(outDir / ("data_mapping" + suffix + tag + ".yaml"))))
            continue;
        written.csvFile = outDir / ("compare_result" + suffix + tag + ".csv");
        const auto failure = csv->claim(written.csvFile);
        if (!failure)
            break;
        if (!failure->nameTaken)
            return makeError("compare.output", fileLocation(written.csvFile), failure->message);
    }
    if (options.xlsx) {
        written.xlsxFile = outDir / ("compare_result" + suffix + tag + ".xlsx");
        auto xlsx = writeXlsx(table, written.xlsxFile, notes);
        if (!xlsx)
            return xlsx.error();
    }
    // msprobe saves the mapping -lm generated next to the result; it explains every pairing.
    if (generated) {
        written.mappingFile = outDir / ("data_mapping" + suffix + tag + ".yaml");
        if (const auto failure = writeFileAtomically(written.mappingFile, dataMappingYaml(*generated)))
            return makeError("compare.output", fileLocation(written.mappingFile), failure->message);
    }
    if (advisor) {
        written.advisorFile = outDir / ("advisor" + suffix + tag + ".txt");
        if (const auto failure = writeFileAtomically(written.advisorFile, *advisor))
            return makeError("compare.output", fileLocation(written.advisorFile), failure->message);
    }
    return written;
}

} // namespace probescope::compare
