// SPDX-License-Identifier: Apache-2.0
// msprobe 26.0.0 behind the profile seam (compare-spec, the msprobe 26 columns and checkers).
#include "core/compare/match/mapping.h"
#include "core/compare/msprobe26/msprobe26.h"
#include "core/compare/seam/profilerules.h"

namespace probescope::compare::msprobe26 {

namespace {

class Rules final : public ProfileRules
{
public:
    Profile profile() const override { return Profile::Msprobe26; }

    Result<std::shared_ptr<const CompareTable>> compare(const dump::DumpFile& npu, const dump::DumpFile& bench,
                                                        const CompareOptions& options,
                                                        ProgressSink* progress) const override
    {
        return msprobe26::compareDumps(npu, bench, options, progress); // applies every mapping itself
    }

    bool writeCsv(const CompareTable& table, const TextSink& sink) const override
    {
        return msprobe26::writeTableCsv(table, sink);
    }

    std::optional<std::string> advisor(const CompareTable&) const override
    {
        return std::nullopt; // the advisor exists in msprobe 1.x and 8.x only
    }

    std::string pairSuffix(std::string_view npuRank, std::string_view) const override
    {
        return "_" + std::string(npuRank);
    }

    bool usesStackPath() const override { return false; }

    std::vector<std::string> rowNames(const dump::Entry& entry) const override { return msprobe26::rowNames(entry); }

    bool isMindSpore(const dump::DumpFile& dump) const override { return isMindSporeDump(dump, true); }
};

} // namespace

const ProfileRules& rules()
{
    static const Rules instance;
    return instance;
}

} // namespace probescope::compare::msprobe26
