// SPDX-License-Identifier: Apache-2.0
#pragma once

// What --resume trusts (core/job's own header, not for other folders): the one place that writes and reads the record
// of a complete pair, the *entry*: the pair's summary, the state of its inputs, the size of each output and the
// format's version. Since issue 37 the entries of one batch of pairs (one durability barrier) go into ONE journal
// file, OUT/.probescope/journal/journal_{N}.jsonl, one line a pair, instead of one marker file a pair; the marker
// files of earlier versions (OUT/step{N}/.probescope/pair_….json) are still read. docs/reliability.md, "--resume
// journals", says what is trusted and why.
#include "core/job/jobcompare.h"
#include "core/util/fileio.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace probescope::job::detail {

/// A pair's rank folders as its outputs and its marker name it: "{npu rank folder}-{bench rank folder}".
std::string pairName(const compare::PlannedPair& pair);

/// A pair's entry as one line (no newline): {"pair": KEY, then its summary, "file_sizes", "marker_version",
/// "probescope_version", "inputs"}. KEY is "{outSubdir}/{pairName}" ("{pairName}" below a dump root). "pair" comes
/// first so that reading a journal finds each line's pair without parsing the line.
std::string entryLine(const compare::PlannedPair& pair, const PairSummary& s, const std::filesystem::path& outDir,
                      const nlohmann::json& inputs);

/**
 * @brief The entries of earlier runs in OUT, read once by a --resume run: every journal (by its number, the lines of
 * each in order: a later entry for a pair replaces an earlier one), and a pair's marker file of an earlier version
 * when no journal line names the pair (journals are newer than every marker).
 */
class ResumeRecord
{
public:
    /// Lists OUT/.probescope/journal (regular files named journal_{N}.jsonl; a symlink or a folder is never read)
    /// and indexes the pair of each line. A folder that is missing or cannot be read has no entries.
    static ResumeRecord read(const std::filesystem::path& outDir);

    /// The pair's summary when its latest entry vouches for it: it parses, is of this format and this ProbeScope,
    /// names the same dump files, records the `inputs` seen now, and every output it lists exists with its size.
    /// Otherwise nothing: the pair is compared again. Safe from any thread.
    std::optional<PairSummary> completed(const compare::PlannedPair& pair, const std::filesystem::path& outDir,
                                         const PairSummary& planned, const nlohmann::json& inputs) const;

private:
    /// Where a pair's latest line lies. The line is read again when the pair's turn comes (one open and one pread,
    /// as a marker file cost), so that neither the journals' text nor a mapping or a descriptor per journal is held
    /// while the job runs: a resumed job's memory is this index, about 150 bytes a pair.
    struct Entry
    {
        std::uint32_t journal = 0; ///< index into m_journals
        std::uint32_t length = 0;
        std::uint64_t offset = 0;
    };
    std::vector<std::filesystem::path> m_journals;
    std::unordered_map<std::string, Entry> m_latest; ///< the pair's KEY (as JSON text) -> its latest line
};

/**
 * @brief Writes the entries of one settled batch as one new journal: a temporary file beside it, claimed under the
 * next number not taken (util/outputfile: never replacing; a symlink or a foreign file at a name is taken, and
 * skipped). Numbers grow from the highest in the folder, so a later journal sorts after every earlier one. The folder
 * OUT/.probescope/journal is created; a symlink at it or at OUT/.probescope is refused. One writer per process.
 */
class JournalWriter
{
public:
    explicit JournalWriter(std::filesystem::path outDir) : m_outDir(std::move(outDir)) {}
    /// `entries`: the batch's entryLine()s by place in the plan, written in that order, one a line; each text is
    /// emptied as it is copied (the batch's text is held once). The journal's name, or the error (job.output).
    Result<std::filesystem::path> write(std::map<std::size_t, std::string>& entries);

private:
    std::filesystem::path m_outDir;
    std::mutex m_mutex;
    std::uint64_t m_next = 0; ///< 0: the folder is not listed yet
};

/// OUT/.probescope/journal.
std::filesystem::path journalFolder(const std::filesystem::path& outDir);

/// N for a journal's file name journal_{N}.jsonl (N ≥ 1, decimal, no sign), else nothing.
std::optional<std::uint64_t> journalNumber(std::string_view fileName);

} // namespace probescope::job::detail
