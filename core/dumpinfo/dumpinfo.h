// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/dump/rankdump.h"
#include "core/util/diagnostic.h"

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace probescope::dumpinfo {

struct InfoOptions
{
    /// Load every tensor file and check its dtype, shape and statistics against the dump file.
    bool verifyTensors = false;
    /// Relative tolerance for the statistics check (dump files hold values computed in the tensor's dtype).
    double statsTolerance = 1e-4;
};

struct RankInfo
{
    dump::RankLocation location;
    dump::DumpHeader header;
    dump::DumpFormat format = dump::DumpFormat::DumpJson;
    bool loaded = false;
    std::uint64_t entries = 0;
    std::array<std::uint64_t, 6> byKind {}; ///< indexed by dump::EntryKind
    std::uint64_t forward = 0;
    std::uint64_t backward = 0;
    std::uint64_t tensorLeaves = 0;
    std::uint64_t otherLeaves = 0;   ///< non-tensor arguments (int, float, slice, None, ...)
    std::uint64_t tensorsWithFile = 0; ///< tensor leaves naming a data file
    std::uint64_t filesPresent = 0;
    std::uint64_t filesMissing = 0;
    std::uint64_t filesVerified = 0;   ///< with verifyTensors: loaded and checked
    std::uint64_t constructLinks = 0;
    std::uint64_t stackEntries = 0;
    bool truncated = false;
    Diagnostics diagnostics;
};

/// Summarises one rank. Problems are diagnostics; nothing here throws or stops early.
RankInfo inspectRank(const dump::RankDump& rank, const InfoOptions& options = {}, ProgressSink* progress = nullptr);

/// Loads and summarises one rank (one that fails to load is reported in its diagnostics, not fatal).
RankInfo inspectLocation(const dump::RankLocation& location, const InfoOptions& options = {});

/// Loads and summarises every rank of a layout (a rank that fails to load is reported, not fatal).
std::vector<RankInfo> inspectLayout(const dump::DumpLayout& layout, const InfoOptions& options = {},
                                    ProgressSink* progress = nullptr);

/// The text `probescope-cli info` prints: formatInfoHead, then formatRankInfo of each rank.
std::string formatInfo(const dump::DumpLayout& layout, const std::vector<RankInfo>& ranks);
/// The head of that text for every rank of discovery's table (input, steps, ranks, the layout's diagnostics), and one
/// rank's part: printed as each rank is inspected, nothing grows with the ranks (issue 37; the table is what
/// `probescope-cli info` holds of 10,000 ranks).
std::string formatInfoHead(const dump::CompactLayout& layout);
std::string formatRankInfo(const RankInfo& rank);

} // namespace probescope::dumpinfo
