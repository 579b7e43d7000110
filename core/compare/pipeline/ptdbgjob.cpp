// SPDX-License-Identifier: Apache-2.0
// The ptdbg profile's compare job: compare each pkl pair, write its files, and place the table on the
// NPU dump's call order (read by core/dump's legacy reader) to name the first failing node. It writes through the
// pipeline's writeTableOutputs, so it lives above the profiles, with the pipeline.
#include "core/compare/pipeline/ptdbgjob.h"

#include "core/compare/pipeline/pipeline.h"
#include "core/dump/loadreport.h"
#include "core/dump/rankdump.h"
#include "core/tree/constructtree.h"
#include "core/util/fileio.h"

#include <unordered_map>

namespace probescope::compare::ptdbg {

namespace fs = std::filesystem;

Result<std::vector<PairResult>> runPtdbgJob(const std::vector<RankPair>& pairs, const fs::path& outDir,
                                            const PtdbgJobOptions& options, ProgressSink* progress)
{
    const auto work = [&](std::size_t index, const std::string& stamp) -> Result<PairResult> {
        const RankPair& pair = pairs[index];
        PairResult result;
        result.suffix = pair.suffix;
        result.npuDump = pair.input.npuPkl;
        result.benchDump = pair.input.benchPkl;

        // The load step, the one the msprobe dumps go through (dump::loadReport): a damaged .pkl is refused with
        // file:line:col, or compared in part with --salvage and its losses said.
        std::shared_ptr<const dump::RankDump> npuRank;
        for (const fs::path* pkl : { &pair.input.npuPkl, &pair.input.benchPkl }) {
            std::error_code exists;
            if (!fs::is_regular_file(*pkl, exists))
                break; // comparePkl says which file is missing (ptdbg.input)
            dump::RankLocation location;
            location.dir = pkl->parent_path();
            location.dumpFile = *pkl;
            location.format = dump::DumpFormat::LegacyPkl;
            auto rank = dump::loadRank(location);
            if (!rank) {
                result.inputDiagnostics.push_back(rank.error());
                continue;
            }
            const dump::LoadReport report = dump::loadReport(**rank);
            result.inputDiagnostics.insert(result.inputDiagnostics.end(), report.diagnostics.begin(),
                                           report.diagnostics.end());
            if (!report.clean())
                result.salvaged.push_back(report.salvageText());
            if (pkl == &pair.input.npuPkl)
                npuRank = *rank;
        }
        const bool damaged = hasErrors(result.inputDiagnostics);
        if (damaged && (!options.salvage || !npuRank)) {
            result.refused = true;
            result.table = std::make_shared<const CompareTable>();
            return result;
        }
        PtdbgOptions compareOptions = options.compare;
        compareOptions.salvage = compareOptions.salvage || (damaged && options.salvage);
        auto compared = comparePkl(pair.input, compareOptions, progress);
        if (!compared && (compared.error().id == "compare.option" || compared.error().id == "compare.cancelled"))
            return compared.error(); // the options, not this pair's input: nothing else can run either
        if (!compared) {
            // This pair's input (a missing .pkl, a row ptdbg rejects, a data folder leaving its dump): the pair is
            // refused with its error, and the other rank pairs still run, as in the msprobe profiles.
            result.inputDiagnostics.push_back(compared.error());
            result.refused = true;
            result.table = std::make_shared<const CompareTable>();
            return result;
        }
        auto table = std::make_shared<CompareTable>(**compared);
        // Unreadable .npy files and names leaving their folder are errors of the input (exit 1).
        for (const Diagnostic& d : table->diagnostics) {
            if (d.severity == Severity::Error)
                result.inputDiagnostics.push_back(d);
        }

        if (npuRank) {
            placeRows(*table, *npuRank->dump);
            result.firstFailure = findFirstFailure(*table, *tree::ConstructTree::build(npuRank));
        } else {
            result.firstFailure.summary = "first failing node: unknown (the NPU dump could not be read as a tree)";
        }
        result.table = table;
        if (table->rows.empty()) {
            return result;
        }
        JobOptions writing;
        writing.profile = Profile::Ptdbg;
        writing.advisor = options.advisor;
        writing.xlsx = options.xlsx;
        auto written = writeTableOutputs(*table, pair.suffix, std::nullopt, outDir, stamp, writing, &result.diagnostics);
        if (!written)
            return written.error();
        result.csvFile = written->csvFile;
        result.xlsxFile = written->xlsxFile;
        result.advisorFile = written->advisorFile;
        return result;
    };
    return runPairs(pairs.size(), outDir, options.timestamp, work);
}

} // namespace probescope::compare::ptdbg
