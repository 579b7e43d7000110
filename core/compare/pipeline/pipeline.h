// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/compare/table/comparetable.h"
#include "core/compare/verdict/firstfailure.h"
#include "core/compare/match/mapping.h"
#include "core/compare/pipeline/plan.h"
#include "core/dump/rankdump.h"
#include "core/visconfig/visconfig.h"
#include "core/tree/constructtree.h"
#include "core/util/diagnostic.h"
#include "core/util/profile.h"

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace probescope::compare {

/// Every option of a compare, the same for the CLI, the GUI and the GUI's export.
struct JobOptions
{
    Profile profile = Profile::Msprobe12;
    bool stackFlag = false; ///< -s (only decides when stack_path is given, as in msprobe 1.2)
    bool fuzzy = false;     ///< -f
    bool advisor = true;    ///< write advisor_*.txt (msprobe's -c turns it off)
    std::string timestamp;  ///< YYYYmmddHHMMSS used in file names; now when empty
    unsigned threads = 0;   ///< -j: tensor pairs compared at once (0 = one per hardware thread)
    bool xlsx = false;      ///< --xlsx: also write compare_result*.xlsx with msprobe's fills
    std::optional<std::filesystem::path> dataMapping; ///< -dm mapping.yaml (msprobe 1.2 data-mapping mode)
    /// -cm / -am / -lm (compare-spec §3.6): set = the option is given; an empty path = given without a file.
    /// MindSpore NPU dumps; -cm also PyTorch in the msprobe-26 profile. See docs/compare.md.
    std::optional<std::filesystem::path> cellMapping;
    std::optional<std::filesystem::path> apiMapping;
    std::optional<std::filesystem::path> layerMapping;
    /// --salvage: compare what a truncated or invalid dump holds (PairResult::salvaged says what was lost)
    /// instead of refusing the pair.
    bool salvage = false;
    /// --match-file: a tb_graph_ascend `.vis.config` (NPU node -> bench node). The entries of the nodes it names are
    /// paired as it says and compared, in every mode; the others keep the profile's matching (docs/graph.md).
    std::optional<std::filesystem::path> matchFile;
    /// The same matches held in memory (the GUI's manual matching: nothing to read, nothing written); used when
    /// matchFile is not set, exactly as that file's entries would be.
    std::optional<graph::VisConfig> manualMatches;
    /// The caller compares several pairs at once (a whole job's --pair-threads above 1): each pair then loads,
    /// flattens and builds its tree on its own thread, without the side threads that help a single big pair. A
    /// pair whose dump files are small does so anyway (comparePair). Never changes results.
    bool pairsInParallel = false;
};

/// The mapping files of a job, read once for all its pairs.
struct MappingFiles
{
    std::optional<DataMapping> data;
    std::optional<CellMapping> cell;
    std::optional<ApiMapping> api;
    std::optional<LayerMapping> layer;
    std::optional<graph::VisConfig> matches; ///< --match-file, resolved per pair against its dumps
    Diagnostics warnings; ///< api_mapping items that are ignored
};

Result<MappingFiles> readMappingFiles(const JobOptions& options);

/// Both sides of a pair, loaded, and the NPU side's construct tree. Immutable once published.
struct LoadedPair
{
    PlannedPair pair;
    std::shared_ptr<const dump::RankDump> npu;
    std::shared_ptr<const dump::RankDump> bench;
    std::shared_ptr<const tree::ConstructTree> tree; ///< over the NPU dump
    Diagnostics diagnostics;                         ///< of both dumps and the tree
};

/// What a viewer can follow while a pair is compared (all optional; called from worker threads).
struct PairHooks
{
    /// Once, when both dumps are loaded and the tree is built (while the compare already runs).
    std::function<void(std::shared_ptr<const LoadedPair>)> loaded;
    /// At most once, before `loaded`: the NPU tree built from the entry keys and construct.json while the dumps are
    /// still being read (tree::ConstructTree::buildFromKeys), with the mode the NPU header and keys suggest. Setting
    /// it costs a scan of the NPU dump.json beside the full reads. `loaded`'s tree is the judge (compare keysHash()).
    std::function<void(std::shared_ptr<const tree::ConstructTree> tree, std::optional<CompareMode> mode)> earlyTree;
    /// Once, when every row is laid out (see CompareOptions::layoutReady); the tree is ready by then.
    std::function<void(const CompareTable& layout, const LoadedPair& loaded)> layoutReady;
    /// Each real-data row as its metrics are filled in (see CompareOptions::rowReady).
    std::function<void(std::size_t row, const std::vector<Cell>& cells)> rowReady;
};

/// A compared pair: the immutable result every front end shows or writes.
struct PairOutcome
{
    std::shared_ptr<const LoadedPair> loaded;
    std::shared_ptr<const CompareTable> table;
    FirstFailure firstFailure;                   ///< in execution order (docs/tree.md)
    Diagnostics notes;                           ///< about the options for this pair (an ignored -lm, a skipped item)
    std::optional<DataMapping> generatedMapping; ///< the data mapping -lm generated, when it did
    /// The load step's findings on both dumps (dump::loadReport: a cut file, wrong types, invalid UTF-8, unknown
    /// keys), compare.empty-dump and compare.tensor-unreadable. Errors here make a CLI run exit 1.
    Diagnostics inputDiagnostics;
    /// Not compared: a dump has errors and JobOptions::salvage is off (`table` is empty, `loaded` is set).
    bool refused = false;
    /// With salvage: for each damaged dump what was read and what was lost (dump::LoadReport::salvageText).
    std::vector<std::string> salvaged;
};

/**
 * @brief The one compare pipeline for one pair: load both sides (in parallel), check the options against the
 * dumps, build the tree while the profile compares, judge, find the first failing node.
 *
 * The load step decides whether the pair is compared at all: a dump with errors (truncated, wrong types, invalid
 * UTF-8, no entries) gives a `refused` outcome unless `options.salvage`, and then every loss is said in `salvaged`.
 * Progress: load 0-10 %, compare 10-99 % of the sink's range (the caller finishes it). Mapping options the dumps
 * do not allow (-cm/-am on PyTorch in msprobe 1.2, -am on PyTorch in msprobe 26) are the error compare.option
 * with msprobe's own message.
 */
Result<PairOutcome> comparePair(const PlannedPair& pair, const MappingFiles& mappings, const JobOptions& options,
                                const PairHooks& hooks = {}, ProgressSink* progress = nullptr);

/// The files one pair wrote.
struct PairFiles
{
    std::filesystem::path csvFile;
    std::filesystem::path xlsxFile;
    std::filesystem::path advisorFile;
    std::filesystem::path mappingFile; ///< data_mapping*.yaml that -lm generated, when it did
};

/// Writes a compared pair's outputs into `outDir` (created if missing) as the profile names them. Existing files
/// are never overwritten: names carry `stamp`, and a name already taken gets "_1", "_2", ... after it.
Result<PairFiles> writePairOutputs(const PairOutcome& outcome, const std::filesystem::path& outDir,
                                   const std::string& stamp, const JobOptions& options);

/// writePairOutputs for a table of any origin: `suffix` names the pair ("" or "_rank0-rank0"), `generated` is the
/// -lm mapping to save beside it; warnings of the xlsx writer go to `notes`.
Result<PairFiles> writeTableOutputs(const CompareTable& table, const std::string& suffix,
                                    const std::optional<DataMapping>& generated, const std::filesystem::path& outDir,
                                    const std::string& stamp, const JobOptions& options, Diagnostics* notes = nullptr);

} // namespace probescope::compare
