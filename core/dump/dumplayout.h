// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/dump/dumpfile.h"
#include "core/util/diagnostic.h"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace probescope::dump {

/// One rank of one step: the folder holding dump.json (or debug.json, or a legacy .pkl).
struct RankLocation
{
    std::filesystem::path dir;
    std::filesystem::path dumpFile; ///< dump.json, debug.json or the .pkl
    DumpFormat format = DumpFormat::DumpJson;
    std::optional<std::int64_t> step; ///< from "step{N}"; none for a bare folder
    std::optional<std::int64_t> rank; ///< from "rank{N}"; none for "rank" (not distributed) or a bare folder
    std::string stepLabel;            ///< the folder name as found ("step0"), "" when none
    std::string rankLabel;            ///< "rank0", "rank", "proc1234", "" when none
};

/**
 * @brief The ranks found under a folder.
 *
 * Accepts a dump root (step{N}/rank{N}), a step folder (rank{N}), a rank folder, a bare folder holding
 * dump.json or debug.json, a dump.json or debug.json file, a ptdbg_ascend dump (rank{N} with NAME.pkl and NAME)
 * or a .pkl file. Ranks are sorted by step then rank number.
 *
 * discoverDump is the one walker of these layouts. Two dumps at one (step, rank) place (the folder holding both
 * npu/ and bench/, rank0 beside rank00, two .pkl in a rank folder) are the error `dump.duplicate-place` naming
 * both files. Folders left out are summarised in one bounded warning per reason (`layout.no-dump-file`,
 * `layout.not-step-or-rank`, `layout.unreadable`, `layout.seen-before`); nothing found is `layout.empty` ("no
 * dump found under X"). Each folder (by device and inode) is listed once, with no stat per name, so 10,000 empty
 * rank folders take a fraction of a second and symlink loops end.
 */
struct DumpLayout
{
    std::filesystem::path input;
    std::vector<RankLocation> ranks;
    Diagnostics diagnostics; ///< warnings: the folders skipped, one summary per reason
    /// Every folder the walk left out, whatever the reason (the paths the summaries above name a few of), sorted.
    /// A consumer that pairs folders by position (msprobe 26's -da) sees a rank folder without a dump here.
    std::vector<std::filesystem::path> skippedFolders;

    std::vector<std::int64_t> steps() const; ///< distinct step numbers (-1 for none)
    const RankLocation* find(std::optional<std::int64_t> step, std::optional<std::int64_t> rank) const;
};

/// How discoverDump treats a folder holding no dump at all.
struct DiscoverOptions
{
    /// false: the error `layout.empty`. true: the layout with no ranks (its summaries and skippedFolders say what
    /// was seen), for a consumer that reports each empty rank folder itself.
    bool allowEmpty = false;
    /// Looked at before each folder is listed (the walk's cost is per folder): once it says cancelled, the walk
    /// stops and discoverDump returns the error `layout.cancelled`. No progress is reported (the number of folders
    /// is not known until the walk ends). Null: never cancelled.
    const ProgressSink* progress = nullptr;
};

Result<DumpLayout> discoverDump(const std::filesystem::path& input, const DiscoverOptions& options = {});

/**
 * @brief A file that a run writes once per folder of its step/rank layout (free_benchmark.csv, say), found at
 * every level of that layout: in `input` itself, its rank folders, its step folders and their rank folders —
 * in that order, folders by number. A file given as `input` is itself when it has that name, else its folder
 * is searched. The layout rules are discoverDump's (the one place that knows step{N} and rank{N}).
 */
std::vector<std::filesystem::path> findInLayout(const std::filesystem::path& input, const std::string& fileName);

} // namespace probescope::dump
