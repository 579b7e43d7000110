// SPDX-License-Identifier: Apache-2.0
// msprobe 1.2.2 behind the profile seam (compare-spec Appendix A): the default profile.
#include "core/compare/msprobe12/compare.h"
#include "core/compare/output/tablecsv.h"
#include "core/compare/table/flatten.h"
#include "core/compare/msprobe12/highlight.h"
#include "core/compare/match/mapping.h"
#include "core/compare/seam/profilerules.h"

namespace probescope::compare::msprobe12 {

namespace {

class Rules final : public ProfileRules
{
public:
    Profile profile() const override { return Profile::Msprobe12; }

    Result<std::shared_ptr<const CompareTable>> compare(const dump::DumpFile& npu, const dump::DumpFile& bench,
                                                        const CompareOptions& options,
                                                        ProgressSink* progress) const override
    {
        // -dm (or the mapping -lm generated) replaces matching altogether in msprobe 1.2 (A.13).
        if (options.mappings && options.mappings->data)
            return compareWithDataMapping(npu, bench, *options.mappings->data, options, progress);
        return compareDumps(npu, bench, options, progress);
    }

    bool writeCsv(const CompareTable& table, const TextSink& sink) const override
    {
        return writeTableCsv(table, sink);
    }

    std::optional<std::string> advisor(const CompareTable& table) const override { return advisorText(table); }

    std::string pairSuffix(std::string_view npuRank, std::string_view benchRank) const override
    {
        return "_" + std::string(npuRank) + "-" + std::string(benchRank);
    }

    bool usesStackPath() const override { return true; }

    std::vector<std::string> rowNames(const dump::Entry& entry) const override
    {
        std::vector<std::string> names;
        if (auto op = flattenEntry(entry, 0, CompareMode::Summary)) {
            for (const FlatRow* row : op->rowsByCategory())
                names.push_back(row->nameText());
        }
        return names;
    }

    bool isMindSpore(const dump::DumpFile& dump) const override { return isMindSporeDump(dump, false); }
};

} // namespace

const ProfileRules& rules()
{
    static const Rules instance;
    return instance;
}

} // namespace probescope::compare::msprobe12
