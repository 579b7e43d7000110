// SPDX-License-Identifier: Apache-2.0
#include "core/job/journal.h"
#include "core/job/jobsummary.h"

#include "core/util/folderlist.h"
#include "core/util/outputfile.h"
#include "core/util/utf8text.h"

#include <algorithm>
#include <utility>

#include <unistd.h>

namespace probescope::job::detail {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// An entry of another format or another ProbeScope is never trusted: the pair is compared again. A journal line
// holds what a marker held (plus "pair"), so the format's version is still the marker's.
constexpr int kMarkerVersion = 2;
#ifndef PROBESCOPE_VERSION
#define PROBESCOPE_VERSION "unknown"
#endif

// The start of every line a journal holds; a line that starts otherwise is not an entry (a damaged or edited line).
constexpr std::string_view kLineStart = R"({"pair":")";

// A journal holds at most a batch of 1,024 entries of a few KB: a file named like one that is far larger is not read
// (and an entry's offset and length fit their fields).
constexpr std::size_t kMaxJournalBytes = std::size_t(1) << 31;

// Numbers tried past one taken at claim time (another process of the job, or a run into the same OUT, claimed it
// between this writer's listing and its claim): a claim that fails as taken costs one rename(2).
constexpr std::uint64_t kMaxClaimTries = 100000;

/// "{outSubdir}/{pairName}": a pair's place in OUT, the same for every run of the job.
std::string pairKey(const compare::PlannedPair& pair)
{
    return pair.outSubdir.empty() ? pairName(pair) : pair.outSubdir + "/" + pairName(pair);
}

/// The key as a journal line holds it: the JSON string, quotes included (bytes not UTF-8 escaped as text() does).
std::string keyText(const compare::PlannedPair& pair)
{
    return dumpJson(text(pairKey(pair)));
}

/// The JSON string at the start of a journal line ("…" after kLineStart's `{"pair":`), or nothing.
std::optional<std::string_view> lineKey(std::string_view line)
{
    if (line.substr(0, kLineStart.size()) != kLineStart)
        return std::nullopt;
    const std::size_t open = kLineStart.size() - 1;
    for (std::size_t i = open + 1; i < line.size(); ++i) {
        if (line[i] == '\\')
            ++i; // the escaped character cannot end the string
        else if (line[i] == '"')
            return line.substr(open, i - open + 1);
    }
    return std::nullopt;
}

/// The checks every entry passes, from a journal line or an old marker: the summary of a complete pair, or nothing.
std::optional<PairSummary> vouched(const json& j, const fs::path& outDir, const PairSummary& planned,
                                   const json& inputs)
{
    if (j.is_discarded() || !j.is_object() || !j.contains("file_sizes"))
        return std::nullopt;
    try {
        if (j.value("marker_version", 0) != kMarkerVersion
            || j.value("probescope_version", std::string()) != PROBESCOPE_VERSION || j.value("inputs", json()) != inputs)
            return std::nullopt; // another version, or a dump (or option) changed since
        PairSummary s = fromJson(j);
        const auto sizes = j.at("file_sizes").get<std::vector<std::uint64_t>>();
        if (!s.compared || s.npuDump != backslashReplace(planned.npuDump)
            || s.benchDump != backslashReplace(planned.benchDump) || sizes.size() != s.files.size())
            return std::nullopt;
        for (std::size_t i = 0; i < s.files.size(); ++i) {
            std::error_code ec;
            if (fs::file_size(outDir / s.files[i], ec) != sizes[i] || ec)
                return std::nullopt;
        }
        s.resumed = true;
        return s;
    } catch (const json::exception&) {
        return std::nullopt; // a damaged entry: compare the pair again
    }
}

} // namespace

std::string pairName(const compare::PlannedPair& pair)
{
    return (pair.npu.rankLabel.empty() ? "rank" : pair.npu.rankLabel) + "-"
        + (pair.bench.rankLabel.empty() ? "rank" : pair.bench.rankLabel);
}

fs::path journalFolder(const fs::path& outDir)
{
    return outDir / ".probescope" / "journal";
}

std::optional<std::uint64_t> journalNumber(std::string_view fileName)
{
    constexpr std::string_view prefix = "journal_";
    constexpr std::string_view suffix = ".jsonl";
    if (fileName.size() <= prefix.size() + suffix.size() || fileName.substr(0, prefix.size()) != prefix
        || fileName.substr(fileName.size() - suffix.size()) != suffix)
        return std::nullopt;
    const std::string_view digits = fileName.substr(prefix.size(), fileName.size() - prefix.size() - suffix.size());
    if (digits.size() > 18 || digits.front() == '0')
        return std::nullopt; // one spelling per number; 18 digits cannot overflow
    std::uint64_t n = 0;
    for (const char c : digits) {
        if (c < '0' || c > '9')
            return std::nullopt;
        n = n * 10 + static_cast<std::uint64_t>(c - '0');
    }
    return n;
}

std::string entryLine(const compare::PlannedPair& pair, const PairSummary& s, const fs::path& outDir,
                      const json& inputs)
{
    json j = toJson(s);
    json sizes = json::array();
    for (const std::string& f : s.files) {
        std::error_code ec;
        sizes.push_back(fs::file_size(outDir / f, ec));
    }
    j["file_sizes"] = sizes;
    j["marker_version"] = kMarkerVersion;
    j["probescope_version"] = PROBESCOPE_VERSION;
    j["inputs"] = inputs;
    // nlohmann orders an object's keys: "pair" is put first by hand (the rest of the object follows its '{').
    return std::string(kLineStart.substr(0, kLineStart.size() - 1)) + keyText(pair) + "," + dumpJson(j).substr(1);
}

ResumeRecord ResumeRecord::read(const fs::path& outDir)
{
    ResumeRecord record;
    const fs::path folder = journalFolder(outDir);
    std::error_code ec;
    // A symlink at either folder is not ProbeScope's: nothing behind it is read.
    if (!fs::is_directory(fs::symlink_status(folder.parent_path(), ec))
        || !fs::is_directory(fs::symlink_status(folder, ec)))
        return record;
    auto entries = listFolder(folder);
    if (!entries)
        return record;
    std::vector<std::pair<std::uint64_t, std::string>> journals;
    for (const FolderEntry& e : *entries) {
        if (e.kind != FolderEntry::Kind::File)
            continue; // a symlink at a journal's name is never read
        if (const auto n = journalNumber(e.name))
            journals.emplace_back(*n, e.name);
    }
    std::sort(journals.begin(), journals.end());
    for (const auto& [number, name] : journals) {
        const fs::path path = folder / name;
        const auto file = MappedFile::open(path);
        if (!file || (*file)->text().size() > kMaxJournalBytes)
            continue; // unreadable, or not a journal of this tool: its pairs are compared again
        const auto journal = static_cast<std::uint32_t>(record.m_journals.size());
        std::unordered_map<std::string, Entry> found;
        const std::string_view text = (*file)->text();
        for (std::size_t at = 0; at < text.size();) {
            const std::size_t end = std::min(text.find('\n', at), text.size());
            const std::string_view line = text.substr(at, end - at);
            if (const auto key = lineKey(line))
                found.insert_or_assign(std::string(*key),
                                       Entry { journal, static_cast<std::uint32_t>(line.size()), at });
            at = end + 1;
        }
        if ((*file)->damaged())
            continue; // it shrank while it was read: what was read is not its text
        for (auto& [key, entry] : found)
            record.m_latest.insert_or_assign(key, entry);
        record.m_journals.push_back(path);
    }
    return record;
}

std::optional<PairSummary> ResumeRecord::completed(const compare::PlannedPair& pair, const fs::path& outDir,
                                                   const PairSummary& planned, const json& inputs) const
{
    if (const auto it = m_latest.find(keyText(pair)); it != m_latest.end()) {
        const Entry& entry = it->second;
        auto fd = openRegularFile(m_journals[entry.journal]);
        if (!fd)
            return std::nullopt;
        std::string line(entry.length, '\0');
        const ssize_t got = ::pread(*fd, line.data(), line.size(), static_cast<off_t>(entry.offset));
        ::close(*fd);
        if (got != static_cast<ssize_t>(line.size()))
            return std::nullopt; // the journal shrank since it was indexed
        return vouched(json::parse(line, nullptr, false), outDir, planned, inputs);
    }
    // No journal names the pair: its marker file, as versions before the journal wrote one.
    const fs::path marker = pairMarkerPath(outDir, pair);
    std::error_code ec;
    // A symlink at a marker's name is not ProbeScope's marker: never read through it.
    if (!fs::is_regular_file(fs::symlink_status(marker, ec)))
        return std::nullopt;
    const auto content = readTextFile(marker);
    if (!content)
        return std::nullopt;
    return vouched(json::parse(*content, nullptr, false), outDir, planned, inputs);
}

Result<fs::path> JournalWriter::write(std::map<std::size_t, std::string>& entries)
{
    std::size_t size = 0;
    for (const auto& entry : entries)
        size += entry.second.size() + 1;
    std::string lines;
    lines.reserve(size);
    for (auto& entry : entries) {
        lines.append(entry.second).push_back('\n');
        std::string().swap(entry.second);
    }
    const std::lock_guard lock(m_mutex);
    const fs::path folder = journalFolder(m_outDir);
    // Each level is made and checked before the next, so that nothing is created through a symlink planted there.
    for (const fs::path& dir : { folder.parent_path(), folder }) {
        std::error_code ec;
        fs::create_directory(dir, ec);
        const auto status = fs::symlink_status(dir, ec);
        if (ec || !fs::is_directory(status))
            return makeError("job.output", fileLocation(dir),
                             fs::is_symlink(status) ? "the journal folder is a symlink; the --resume journal is not "
                                                      "written through it"
                                                    : "cannot create the journal folder");
    }
    if (m_next == 0) {
        // After the highest number in the folder (whatever holds it: a symlink, a foreign file), not in a gap: a
        // later journal always sorts after an earlier one.
        std::uint64_t highest = 0;
        if (auto names = listFolder(folder)) {
            for (const FolderEntry& e : *names)
                highest = std::max(highest, journalNumber(e.name).value_or(0));
        }
        m_next = highest + 1;
    }
    const fs::path first = folder / ("journal_" + std::to_string(m_next) + ".jsonl");
    std::string error;
    auto file = PendingFile::create(first, error);
    if (!file)
        return makeError("job.output", fileLocation(first), error);
    file->write(lines);
    if (auto failure = file->finish())
        return writeError(first, *failure);
    for (std::uint64_t tries = 0; tries < kMaxClaimTries; ++tries) {
        const fs::path path = folder / ("journal_" + std::to_string(m_next++) + ".jsonl");
        const auto failure = file->claim(path);
        if (!failure)
            return path;
        if (!failure->nameTaken)
            return writeError(path, *failure);
    }
    return makeError("job.output", fileLocation(folder),
                     "no free journal name after " + std::to_string(kMaxClaimTries) + " tries");
}

} // namespace probescope::job::detail
