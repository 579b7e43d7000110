// SPDX-License-Identifier: Apache-2.0
// ptdbg_ascend 6.0 behind the profile seam (docs/ptdbg-compare.md). ptdbg compares the .pkl rows themselves, so the
// rules read the pkl a DumpFile was loaded from, with the .npy folder beside it (named like the pkl) when both
// sides have one: ptdbg's real-data compare; otherwise its statistics (or md5) compare.
#include "core/compare/output/tablecsv.h"
#include "core/compare/ptdbg/ptdbgcompare.h"
#include "core/compare/seam/profilerules.h"

#include <limits>
#include <unordered_map>

namespace probescope::compare::ptdbg {

namespace {

std::filesystem::path dataFolderOf(const std::filesystem::path& pkl)
{
    std::error_code ec;
    const std::filesystem::path data = pkl.parent_path() / pkl.stem();
    return std::filesystem::is_directory(data, ec) ? data : std::filesystem::path();
}

class Rules final : public ProfileRules
{
public:
    Profile profile() const override { return Profile::Ptdbg; }

    Result<std::shared_ptr<const CompareTable>> compare(const dump::DumpFile& npu, const dump::DumpFile& bench,
                                                        const CompareOptions& options,
                                                        ProgressSink* progress) const override
    {
        if (npu.format != dump::DumpFormat::LegacyPkl || bench.format != dump::DumpFormat::LegacyPkl)
            return makeError("compare.option", fileLocation(npu.path),
                             "the ptdbg profile compares ptdbg_ascend .pkl dumps; use msprobe-1.2 or msprobe-26 for "
                             "msprobe dumps");
        PtdbgInput input { npu.path, bench.path, dataFolderOf(npu.path), dataFolderOf(bench.path) };
        if (input.npuDataDir.empty() || input.benchDataDir.empty()) {
            input.npuDataDir.clear(); // ptdbg compares statistics when a side has no data folder
            input.benchDataDir.clear();
        }
        PtdbgOptions ptdbgOptions;
        ptdbgOptions.stackMode = options.stackMode;
        ptdbgOptions.fuzzy = options.fuzzy;
        ptdbgOptions.threads = options.threads;
        // The pipeline lets a dump with errors through only when --salvage asks for it (its load step refuses it
        // otherwise): then the rows the load step refused are left out here too, and said.
        ptdbgOptions.salvage = hasErrors(npu.diagnostics) || hasErrors(bench.diagnostics);
        ptdbgOptions.npuTensors = options.npuTensors; // the pipeline's resolvers: rows read nothing else
        ptdbgOptions.benchTensors = options.benchTensors;
        auto table = comparePkl(input, ptdbgOptions, progress);
        if (!table)
            return table.error();
        auto placed = std::make_shared<CompareTable>(**table);
        placeRows(*placed, npu);
        return std::shared_ptr<const CompareTable>(std::move(placed));
    }

    bool writeCsv(const CompareTable& table, const TextSink& sink) const override // the xlsx's cells
    {
        return writeTableCsv(table, sink);
    }

    std::optional<std::string> advisor(const CompareTable& table) const override { return advisorText(table); }

    std::string pairSuffix(std::string_view npuRank, std::string_view benchRank) const override
    {
        return "_" + std::string(npuRank) + "-" + std::string(benchRank);
    }

    bool usesStackPath() const override { return false; } // ptdbg's stack rows are in the pkl itself

    std::vector<std::string> rowNames(const dump::Entry&) const override { return {}; } // no mapping options

    bool isMindSpore(const dump::DumpFile&) const override { return false; }
};

} // namespace

void placeRows(CompareTable& table, const dump::DumpFile& npu)
{
    std::unordered_map<std::string_view, std::uint32_t> keys;
    for (std::uint32_t i = 0; i < npu.entries.size(); ++i)
        keys.emplace(npu.entries[i].key, i);
    for (std::size_t r = 0; r < table.rows.size(); ++r) {
        const std::string name = table.rows[r][0].asString();
        std::uint32_t entry = std::numeric_limits<std::uint32_t>::max();
        for (std::size_t i = name.size(); i-- > 0;) {
            if (name[i] != '.' && name[i] != '_')
                continue;
            if (const auto it = keys.find(std::string_view(name).substr(0, i)); it != keys.end()) {
                entry = it->second;
                break;
            }
        }
        table.npuEntry[r] = entry;
    }
}

const ProfileRules& rules()
{
    static const Rules instance;
    return instance;
}

} // namespace probescope::compare::ptdbg
