// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/dump/dumpfile.h"
#include "core/util/diagnostic.h"

#include <compare>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace probescope::dump {

/**
 * @brief A path kept as its text alone: what a RankLocation holds of its folder and file.
 *
 * A std::filesystem::path keeps, beside its text, a list of its components (about 50 bytes each, heap-allocated):
 * a dump.json eight folders deep cost about 500 bytes, and a rank's folder and file about 1.2 KB, held for every
 * rank folder of a job by discovery and again by each plan (issue 37: memory flat in the number of ranks). This
 * keeps the text (one string) and gives a std::filesystem::path where one is asked for: it converts implicitly and
 * answers the path operations callers use (string, filename, parent_path, operator/ ...), so code written for a
 * path reads the same.
 */
class CompactPath
{
public:
    CompactPath() = default;
    CompactPath(const std::filesystem::path& p) // NOLINT(google-explicit-constructor): a path in, a path out
        : m_text(p.native())
    {
    }
    CompactPath(std::filesystem::path&& p) // NOLINT(google-explicit-constructor)
        : m_text(std::move(p).native())
    {
    }
    CompactPath(const std::string& text) // NOLINT(google-explicit-constructor)
        : m_text(text)
    {
    }
    CompactPath(const char* text) // NOLINT(google-explicit-constructor)
        : m_text(text)
    {
    }

    std::filesystem::path path() const { return std::filesystem::path(m_text); }
    operator std::filesystem::path() const { return path(); } // NOLINT(google-explicit-constructor)

    const std::string& native() const { return m_text; }
    const std::string& string() const { return m_text; }
    std::string generic_string() const { return path().generic_string(); }
    const char* c_str() const { return m_text.c_str(); }
    bool empty() const { return m_text.empty(); }
    std::filesystem::path filename() const { return path().filename(); }
    std::filesystem::path parent_path() const { return path().parent_path(); }
    std::filesystem::path extension() const { return path().extension(); }
    std::filesystem::path stem() const { return path().stem(); }
    std::filesystem::path lexically_normal() const { return path().lexically_normal(); }
    std::filesystem::path lexically_relative(const std::filesystem::path& base) const
    {
        return path().lexically_relative(base);
    }

    friend std::filesystem::path operator/(const CompactPath& a, const std::filesystem::path& b) { return a.path() / b; }
    // Compared as std::filesystem::path compares (element by element: "a//b" == "a/b", "a/b" < "a-b"), on the text
    // alone: sorting and matching rank folders builds no path.
    friend bool operator==(const CompactPath& a, const CompactPath& b) { return compareText(a.m_text, b.m_text) == 0; }
    friend bool operator==(const CompactPath& a, const std::filesystem::path& b)
    {
        return compareText(a.m_text, b.native()) == 0;
    }
    friend std::strong_ordering operator<=>(const CompactPath& a, const CompactPath& b)
    {
        return compareText(a.m_text, b.m_text) <=> 0;
    }
    friend std::strong_ordering operator<=>(const CompactPath& a, const std::filesystem::path& b)
    {
        return compareText(a.m_text, b.native()) <=> 0;
    }

private:
    /// std::filesystem::path(a).compare(path(b)) on POSIX, without building either path.
    static int compareText(std::string_view a, std::string_view b) noexcept;

    std::string m_text;
};

/// One rank of one step: the folder holding dump.json (or debug.json, or a legacy .pkl).
struct RankLocation
{
    CompactPath dir;
    CompactPath dumpFile; ///< dump.json, debug.json or the .pkl
    DumpFormat format = DumpFormat::DumpJson;
    std::optional<std::int64_t> step; ///< from "step{N}"; none for a bare folder
    std::optional<std::int64_t> rank; ///< from "rank{N}"; none for "rank" (not distributed) or a bare folder
    std::string stepLabel;            ///< the folder name as found ("step0"), "" when none
    std::string rankLabel;            ///< "rank0", "rank", "proc1234", "" when none
};

/**
 * @brief The ranks a discovery found, kept as a table of small records: what a whole job holds of its layout.
 *
 * A RankLocation is about 300 bytes with its two paths' text; a job of 10,000 ranks x 2 steps has 40,000 rank
 * folders, held by both sides' discovery while the job is planned (issue 37: memory flat in the number of ranks).
 * A record here is 32 bytes: the folder's text is an interned prefix (the step folder, shared by its ranks) plus
 * the folder's own name (in one character buffer), the dump file's text an interned tail after the folder's
 * ("/dump.json"). at(i) gives the RankLocation discovery made, byte for byte (its labels parsed again by the same
 * rule), so callers that need one make it when they need it.
 */
class RankTable
{
public:
    std::size_t size() const { return m_entries.size(); }
    bool empty() const { return m_entries.empty(); }
    RankLocation at(std::size_t i) const;
    std::optional<std::int64_t> step(std::size_t i) const;
    std::optional<std::int64_t> rank(std::size_t i) const;
    /// The rank folder's name as RankLocation::rankLabel has it ("rank3", "proc7", "rank"), "" when none.
    std::string_view rankLabel(std::size_t i) const;
    /// The folder's text (RankLocation::dir), made from its prefix and name.
    std::string dirText(std::size_t i) const;

    void push(const RankLocation& location);
    /// Orders the records as discoverDump orders its ranks: by (step, rank number, rank folder name), stable.
    void sortByPlace();
    /// Drops the spare room of the growing buffers (the table is kept for the length of a job).
    void shrink();
    /// The heap the table holds, about (a test bounds it per rank).
    std::size_t bytes() const;

private:
    struct Entry
    {
        std::int64_t step = 0;
        std::int64_t rank = 0;
        std::uint32_t dirPrefix = 0; ///< id of the folder text's prefix (up to and with its last '/')
        std::uint32_t nameOffset = 0; ///< the folder's own name in m_names
        std::uint32_t fileTail = 0;  ///< id of the dump file's text after the folder's (or its whole text)
        std::uint16_t nameSize = 0;
        std::uint8_t format = 0;
        std::uint8_t flags = 0; ///< kHasStep, kHasRank, kRankLabel, kWholeFile
    };
    static constexpr std::uint8_t kHasStep = 1;
    static constexpr std::uint8_t kHasRank = 2;
    static constexpr std::uint8_t kRankLabel = 4; ///< the folder's name is its rank label
    static constexpr std::uint8_t kWholeFile = 8; ///< fileTail is the dump file's whole text (it is not below dir)

    std::uint32_t intern(std::string_view text);
    std::string_view name(const Entry& e) const { return std::string_view(m_names).substr(e.nameOffset, e.nameSize); }

    std::vector<Entry> m_entries;
    std::string m_names;
    std::vector<std::string> m_pieces; ///< interned prefixes and tails, by id (a few: the step folders, "/dump.json")
    std::unordered_map<std::string, std::uint32_t> m_pieceIds;
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

/// discoverDump's result with its ranks in a RankTable (the same ranks, order, diagnostics and skipped folders).
struct CompactLayout
{
    std::filesystem::path input;
    RankTable ranks;
    Diagnostics diagnostics;
    std::vector<std::filesystem::path> skippedFolders;
};

/// discoverDump, keeping the ranks compactly (a whole job's planning: issue 37). discoverDump is this, then at(i)
/// of every rank.
Result<CompactLayout> discoverCompact(const std::filesystem::path& input, const DiscoverOptions& options = {});

/**
 * @brief A file that a run writes once per folder of its step/rank layout (free_benchmark.csv, say), found at
 * every level of that layout: in `input` itself, its rank folders, its step folders and their rank folders —
 * in that order, folders by number. A file given as `input` is itself when it has that name, else its folder
 * is searched. The layout rules are discoverDump's (the one place that knows step{N} and rank{N}).
 */
std::vector<std::filesystem::path> findInLayout(const std::filesystem::path& input, const std::string& fileName);

} // namespace probescope::dump
