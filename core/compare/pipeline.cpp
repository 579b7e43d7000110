// SPDX-License-Identifier: Apache-2.0
#include "compare/pipeline.h"

#include "compare/comparejob.h"
#include "compare/csvwriter.h"
#include "compare/profile.h"
#include "compare/xlsxwriter.h"

#include <thread>

namespace probescope::compare {

namespace fs = std::filesystem;

namespace {

SourceLocation at(const fs::path& p)
{
    return SourceLocation { p.string(), std::nullopt, 0, 0 };
}

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

/// The mappings in force for one pair, after the framework checks msprobe makes (compare-spec §10.3).
Result<NameMappings> pairMappings(const MappingFiles& files, const ProfileRules& rules, const dump::RankDump& npu,
                                  const dump::RankDump& bench, Diagnostics& notes, bool& generated)
{
    const bool profile26 = rules.profile() == Profile::Msprobe26;
    const bool mindspore = rules.isMindSpore(*npu.dump);
    const SourceLocation where = at(npu.dump->path);
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
        notes.push_back(makeWarning("compare.layer-mapping-empty", at(bench.dump->path),
                                    "-lm finds no construct.json/stack.json beside the bench dump.json: every NPU "
                                    "row maps to N/A, as msprobe does"));
    if (files.data)
        notes.push_back(makeWarning("compare.mapping-ignored", at(files.data->path),
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
    Result<std::shared_ptr<const dump::RankDump>> benchRank = makeError("compare.internal", {}, "not loaded");
    std::thread benchLoader([&] { benchRank = dump::loadRank(pair.bench, benchOptions); });
    auto npuRank = dump::loadRank(pair.npu, npuOptions);
    benchLoader.join();
    if (!npuRank)
        return npuRank.error();
    if (!benchRank)
        return benchRank.error();
    dump::StackMap stack;
    if (pair.stackMode && pair.stackFile) {
        auto s = dump::readStackJson(*pair.stackFile);
        if (!s)
            return s.error();
        stack = std::move(*s);
    }
    PairOutcome outcome;
    outcome.notes = files.warnings;
    bool generated = false;
    auto mappings = pairMappings(files, **rules, **npuRank, **benchRank, outcome.notes, generated);
    if (!mappings)
        return mappings.error();
    if (progress && progress->isCancelled())
        return makeError("compare.cancelled", at(pair.npu.dumpFile), "the compare was cancelled");

    // The tree is built while the profile flattens both dumps; only the layout needs both.
    auto loaded = std::make_shared<LoadedPair>();
    loaded->pair = pair;
    loaded->npu = *npuRank;
    loaded->bench = *benchRank;
    std::thread treeBuilder([&] {
        loaded->tree = tree::ConstructTree::build(*npuRank);
        for (const Diagnostics* d : { &(*npuRank)->diagnostics, &(*benchRank)->diagnostics, &loaded->tree->diagnostics() })
            loaded->diagnostics.insert(loaded->diagnostics.end(), d->begin(), d->end());
        if (hooks.loaded)
            hooks.loaded(loaded);
    });
    Joiner treeJoiner { treeBuilder };
    if (progress)
        progress->advance(kTotal / 10);

    // Stage 2: the compare.
    CompareOptions compareOptions;
    compareOptions.fuzzy = options.fuzzy;
    compareOptions.stackMode = pair.stackMode;
    compareOptions.stack = &stack;
    compareOptions.threads = options.threads;
    compareOptions.mappings = &*mappings;
    compareOptions.rowReady = hooks.rowReady;
    if (hooks.layoutReady) {
        compareOptions.layoutReady = [&](const CompareTable& layout) {
            treeJoiner.join();
            hooks.layoutReady(layout, *loaded);
        };
    }
    StageSink compareSink(progress, kTotal / 10, kTotal * 99 / 100);
    auto table = (*rules)->compare(*loaded->npu->dump, *loaded->bench->dump, compareOptions, progress ? &compareSink : nullptr);
    treeJoiner.join();
    if (progress && progress->isCancelled())
        return makeError("compare.cancelled", at(pair.npu.dumpFile), "the compare was cancelled");
    if (!table)
        return table.error();

    // Stage 3: the first failing node, in execution order.
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
        return makeError("compare.output", at(outDir), "cannot create the output folder: " + ec.message());
    const std::optional<std::string> advisor = options.advisor ? (*rules)->advisor(table) : std::nullopt;
    // msprobe replaces a file of the same name; ProbeScope never overwrites what is there and picks
    // compare_result..._{ts}_1.csv instead (two runs in one second).
    std::string tag = "_" + stamp;
    for (int n = 1; fs::exists(outDir / ("compare_result" + suffix + tag + ".csv"), ec)
         || (options.xlsx && fs::exists(outDir / ("compare_result" + suffix + tag + ".xlsx"), ec))
         || (advisor && fs::exists(outDir / ("advisor" + suffix + tag + ".txt"), ec))
         || (generated && fs::exists(outDir / ("data_mapping" + suffix + tag + ".yaml"), ec));
         ++n)
        tag = "_" + stamp + "_" + std::to_string(n);
    PairFiles written;
    written.csvFile = outDir / ("compare_result" + suffix + tag + ".csv");
    std::string error;
    if (!writeFileAtomically(written.csvFile, (*rules)->csv(table), &error))
        return makeError("compare.output", at(written.csvFile), error);
    if (options.xlsx) {
        written.xlsxFile = outDir / ("compare_result" + suffix + tag + ".xlsx");
        auto xlsx = writeXlsx(table, written.xlsxFile, notes);
        if (!xlsx)
            return xlsx.error();
    }
    // msprobe saves the mapping -lm generated next to the result; it explains every pairing.
    if (generated) {
        written.mappingFile = outDir / ("data_mapping" + suffix + tag + ".yaml");
        if (!writeFileAtomically(written.mappingFile, dataMappingYaml(*generated), &error))
            return makeError("compare.output", at(written.mappingFile), error);
    }
    if (advisor) {
        written.advisorFile = outDir / ("advisor" + suffix + tag + ".txt");
        if (!writeFileAtomically(written.advisorFile, *advisor, &error))
            return makeError("compare.output", at(written.advisorFile), error);
    }
    return written;
}

} // namespace probescope::compare
