// SPDX-License-Identifier: Apache-2.0
#include "core/dump/dumplayout.h"

#include "core/util/fileio.h"
#include "core/util/utf8text.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <set>
#include <system_error>
#include <tuple>

namespace probescope::dump {

namespace fs = std::filesystem;

namespace {

/// The elements of a path's relative part, as std::filesystem::path iterates them on POSIX: one or more '/'
/// separate two elements, and a trailing '/' ends the path with one empty element ("a/" is "a", "").
class PathElements
{
public:
    explicit PathElements(std::string_view text)
        : m_rooted(!text.empty() && text.front() == '/')
    {
        const std::size_t first = text.find_first_not_of('/');
        m_rest = first == std::string_view::npos ? std::string_view() : text.substr(first);
    }

    bool rooted() const { return m_rooted; }

    bool next(std::string_view& element)
    {
        if (m_trailing) {
            m_trailing = false;
            element = {};
            return true;
        }
        if (m_rest.empty())
            return false;
        const std::size_t slash = m_rest.find('/');
        element = m_rest.substr(0, slash);
        if (slash == std::string_view::npos) {
            m_rest = {};
            return true;
        }
        const std::size_t after = m_rest.find_first_not_of('/', slash);
        m_trailing = after == std::string_view::npos;
        m_rest = m_trailing ? std::string_view() : m_rest.substr(after);
        return true;
    }

private:
    bool m_rooted;
    bool m_trailing = false;
    std::string_view m_rest;
};

std::optional<std::int64_t> numberAfter(std::string_view name, std::string_view prefix)
{
    if (name.substr(0, prefix.size()) != prefix || name.size() == prefix.size())
        return std::nullopt;
    const std::string_view digits = name.substr(prefix.size());
    std::int64_t v = 0;
    const auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
    if (ec != std::errc() || ptr != digits.data() + digits.size() || v < 0)
        return std::nullopt;
    return v;
}

bool isStepName(const std::string& name)
{
    return numberAfter(name, "step").has_value();
}

bool isRankName(const std::string& name)
{
    return name == "rank" || numberAfter(name, "rank") || numberAfter(name, "proc");
}

bool isDir(const fs::path& p)
{
    std::error_code ec;
    return fs::is_directory(p, ec);
}

bool isFile(const fs::path& p)
{
    std::error_code ec;
    return fs::is_regular_file(p, ec);
}

std::vector<fs::path> sortedChildren(const fs::path& dir)
{
    std::vector<fs::path> out;
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
        out.push_back(it->path());
    std::sort(out.begin(), out.end());
    return out;
}

void applyLabels(RankLocation& loc)
{
    const std::string rankName = loc.dir.filename().string();
    if (isRankName(rankName)) {
        loc.rankLabel = rankName;
        loc.rank = numberAfter(rankName, "rank");
        const std::string stepName = loc.dir.parent_path().filename().string();
        if (isStepName(stepName)) {
            loc.stepLabel = stepName;
            loc.step = numberAfter(stepName, "step");
        }
    } else if (isStepName(rankName)) {
        // msprobe 1.0 wrote step{N}/dump.json without a rank level when not distributed.
        loc.stepLabel = rankName;
        loc.step = numberAfter(rankName, "step");
    }
}

/// One entry of a folder, listed once: the type comes from the directory entry (d_type), so a folder of 10,000
/// empty rank folders costs one getdents per folder, not a stat per name.
struct Child
{
    std::string name; ///< its path is the folder's / name, made when needed (10,000 rank folders: no 10,000 paths)
    bool dir = false;
    bool file = false;
};

/// The entries of `dir` sorted by name; `error` set (and nothing listed) when the folder cannot be read.
std::vector<Child> listFolder(const fs::path& dir, std::error_code& error)
{
    std::vector<Child> out;
    error.clear();
    fs::directory_iterator it(dir, error);
    for (fs::directory_iterator end; !error && it != end; it.increment(error)) {
        std::error_code typeError; // a dangling symlink is neither: skipped like any other non-folder
        Child c;
        c.name = it->path().filename().string();
        c.dir = it->is_directory(typeError);
        c.file = !c.dir && it->is_regular_file(typeError);
        out.push_back(std::move(c));
    }
    if (error)
        out.clear();
    std::sort(out.begin(), out.end(), [](const Child& a, const Child& b) { return a.name < b.name; });
    return out;
}

/// What one discovery walk found besides the ranks: the folders it left out, by reason.
struct Walk
{
    fs::path input;
    RankTable& ranks;
    std::vector<fs::path> noDump;        ///< rank/step folders (or folders searched) without any dump file
    std::vector<fs::path> otherNames;    ///< folders beside step/rank folders with another name
    std::vector<std::pair<fs::path, std::string>> unreadable; ///< folders that could not be listed, and why
    std::vector<fs::path> seenBefore;    ///< folders reached a second time (through a symlink)
    /// Every folder listed, by (device, inode): a symlink loop, or thousands of links to one big folder, would
    /// otherwise make the walk cost the number of paths (10,000^4) instead of the number of folders.
    std::set<std::pair<dev_t, ino_t>> listed;
    const ProgressSink* progress = nullptr;
    bool cancelled = false; ///< the walk stopped on the caller's cancel: what it found is incomplete
    std::size_t skipped() const { return noDump.size() + otherNames.size() + unreadable.size() + seenBefore.size(); }
};

RankLocation locationOf(const fs::path& dir, const fs::path& file, DumpFormat format)
{
    RankLocation loc;
    loc.dir = dir;
    loc.dumpFile = file;
    loc.format = format;
    applyLabels(loc);
    return loc;
}

// The dump files held directly by a folder: dump.json / debug.json, or legacy .pkl files.
bool takeDumpFiles(const fs::path& dir, const std::vector<Child>& children, RankTable& ranks)
{
    for (const char* name : { "dump.json", "debug.json" }) {
        const auto it = std::find_if(children.begin(), children.end(), [&](const Child& c) { return c.name == name; });
        if (it != children.end() && it->file) {
            // A folder holds one of the two.
            ranks.push(locationOf(
                dir, dir / it->name, std::string_view(name) == "dump.json" ? DumpFormat::DumpJson : DumpFormat::DebugJson));
            return true;
        }
    }
    bool found = false;
    for (const Child& c : children) {
        if (c.file && fs::path(c.name).extension() == ".pkl") {
            ranks.push(locationOf(dir, dir / c.name, DumpFormat::LegacyPkl));
            found = true;
        }
    }
    return found;
}

/// Collects the ranks below `dir`; false when it found none (the caller records `dir` as skipped, unless the walk
/// below it already recorded why).
bool collect(const fs::path& dir, int depth, Walk& walk)
{
    // Once per folder: a step folder of 10,000 rank folders stops within one of them after a cancel.
    if (walk.cancelled || (walk.progress && walk.progress->isCancelled())) {
        walk.cancelled = true;
        return false;
    }
    struct stat st {};
    if (::stat(dir.c_str(), &st) == 0 && !walk.listed.emplace(st.st_dev, st.st_ino).second) {
        walk.seenBefore.push_back(dir);
        return false;
    }
    std::error_code error;
    const std::vector<Child> children = listFolder(dir, error);
    if (error) {
        walk.unreadable.emplace_back(dir, error.message());
        return false;
    }
    if (takeDumpFiles(dir, children, walk.ranks))
        return true;
    if (depth <= 0)
        return false;
    auto descend = [&](const Child& child) {
        const std::size_t before = walk.skipped();
        const fs::path path = dir / child.name;
        const bool found = collect(path, depth - 1, walk);
        if (!found && walk.skipped() == before)
            walk.noDump.push_back(path);
        return found;
    };
    bool structured = false;
    bool found = false;
    for (const Child& child : children) {
        if (child.dir && (isStepName(child.name) || isRankName(child.name))) {
            structured = true;
            found = descend(child) || found;
        }
    }
    if (structured) {
        for (const Child& child : children) {
            if (child.dir && !isStepName(child.name) && !isRankName(child.name))
                walk.otherNames.push_back(dir / child.name);
        }
        return found;
    }
    // Folders that sit above the step level: ptdbg_dump_{version}/, MindSpore graph/ and pynative/.
    for (const Child& child : children) {
        if (child.dir && child.name.rfind("dump_tensor_data", 0) != 0)
            found = descend(child) || found;
    }
    return found;
}

// At most this many names per summary line: a folder of 10,000 empty ranks gives one readable line.
constexpr std::size_t kNamesListed = 10;
// And at most this many bytes of each name (four levels of 255-byte names, escaped, would be 4 KB).
constexpr std::size_t kNameBytes = 240;

/// "a, b, c, … and 9990 more": names relative to the discovery input, odd bytes escaped.
std::string nameList(const fs::path& input, const std::vector<fs::path>& paths,
                     const std::vector<std::string>& reasons = {})
{
    std::string out;
    for (std::size_t i = 0; i < paths.size() && i < kNamesListed; ++i) {
        if (i > 0)
            out += ", ";
        fs::path rel = paths[i].lexically_relative(input);
        std::string name = backslashReplace((rel.empty() || *rel.begin() == ".." ? paths[i] : rel).string());
        if (name.size() > kNameBytes) {
            // Cut on a character boundary: the text stays valid UTF-8.
            std::size_t cut = kNameBytes;
            while (cut > 0 && (static_cast<unsigned char>(name[cut]) & 0xC0) == 0x80)
                --cut;
            name = name.substr(0, cut) + "…";
        }
        out += name;
        if (i < reasons.size())
            out += " (" + reasons[i] + ")";
    }
    if (paths.size() > kNamesListed)
        out += ", … and " + std::to_string(paths.size() - kNamesListed) + " more";
    return out;
}

std::string folders(std::size_t n)
{
    return std::to_string(n) + (n == 1 ? " folder" : " folders");
}

/// One warning per reason, naming at most kNamesListed folders.
void summariseSkipped(const Walk& walk, Diagnostics& out)
{
    auto where = [&](const std::vector<fs::path>& paths) {
        return fileLocation(paths.size() == 1 ? paths.front() : walk.input);
    };
    if (!walk.noDump.empty())
        out.push_back(makeWarning("layout.no-dump-file", where(walk.noDump),
                                  "skipped " + folders(walk.noDump.size())
                                      + " without a dump (dump.json, debug.json or .pkl): "
                                      + nameList(walk.input, walk.noDump)));
    if (!walk.otherNames.empty())
        out.push_back(makeWarning("layout.not-step-or-rank", where(walk.otherNames),
                                  "skipped " + folders(walk.otherNames.size())
                                      + " beside the step/rank folders, not named step{N}, rank{N}, rank or proc{N}: "
                                      + nameList(walk.input, walk.otherNames)));
    if (!walk.seenBefore.empty())
        out.push_back(makeWarning("layout.seen-before", where(walk.seenBefore),
                                  "skipped " + folders(walk.seenBefore.size())
                                      + " already searched through another path (a symlink): "
                                      + nameList(walk.input, walk.seenBefore)));
    if (!walk.unreadable.empty()) {
        std::vector<fs::path> paths;
        std::vector<std::string> reasons;
        for (const auto& [p, why] : walk.unreadable) {
            paths.push_back(p);
            reasons.push_back(why);
        }
        out.push_back(makeWarning("layout.unreadable", where(paths),
                                  "skipped " + folders(paths.size())
                                      + " that cannot be read: " + nameList(walk.input, paths, reasons)));
    }
}

/// The (step, rank) place of a rank as a key: two dumps with the same key cannot be told apart by any consumer.
std::pair<std::int64_t, std::string> placeOf(const RankTable& ranks, std::size_t i)
{
    const auto rank = ranks.rank(i);
    return { ranks.step(i).value_or(-1), rank ? "#" + std::to_string(*rank) : std::string(ranks.rankLabel(i)) };
}

std::string placeText(const RankLocation& r)
{
    std::string step = r.step ? "step " + std::to_string(*r.step) : std::string("no step folder");
    std::string rank = r.rank                 ? "rank " + std::to_string(*r.rank)
        : r.rankLabel.empty()                 ? std::string("no rank folder")
                                              : "rank folder \"" + backslashReplace(r.rankLabel) + "\"";
    return step + ", " + rank;
}

// Sub-folders of `dir` that are steps (or ranks), sorted by their number; the bare "rank" first.
std::vector<fs::path> numberedFolders(const fs::path& dir, bool steps)
{
    std::vector<std::pair<std::int64_t, fs::path>> found;
    for (const fs::path& child : sortedChildren(dir)) {
        const std::string name = child.filename().string();
        if (!isDir(child))
            continue;
        if (steps && isStepName(name))
            found.emplace_back(*numberAfter(name, "step"), child);
        else if (!steps && (name == "rank" || numberAfter(name, "rank")))
            found.emplace_back(numberAfter(name, "rank").value_or(-1), child);
    }
    std::stable_sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<fs::path> out;
    for (auto& [n, p] : found)
        out.push_back(std::move(p));
    return out;
}

} // namespace

std::vector<fs::path> findInLayout(const fs::path& input, const std::string& fileName)
{
    std::vector<fs::path> out;
    if (isFile(input)) {
        if (input.filename() == fileName)
            return { input };
        return findInLayout(input.parent_path().empty() ? fs::path(".") : input.parent_path(), fileName);
    }
    if (!isDir(input))
        return out;
    auto take = [&](const fs::path& dir) {
        if (isFile(dir / fileName))
            out.push_back(dir / fileName);
    };
    take(input);
    for (const fs::path& rank : numberedFolders(input, false))
        take(rank);
    for (const fs::path& step : numberedFolders(input, true)) {
        take(step);
        for (const fs::path& rank : numberedFolders(step, false))
            take(rank);
    }
    return out;
}

std::vector<std::int64_t> DumpLayout::steps() const
{
    std::set<std::int64_t> s;
    for (const auto& r : ranks)
        s.insert(r.step.value_or(-1));
    return { s.begin(), s.end() };
}

const RankLocation* DumpLayout::find(std::optional<std::int64_t> step, std::optional<std::int64_t> rank) const
{
    for (const auto& r : ranks) {
        if ((!step || r.step.value_or(-1) == *step) && (!rank || r.rank.value_or(-1) == *rank))
            return &r;
    }
    return nullptr;
}

Result<CompactLayout> discoverCompact(const fs::path& input, const DiscoverOptions& options)
{
    CompactLayout layout;
    layout.input = input;
    std::error_code ec;
    if (!fs::exists(input, ec))
        return makeError("layout.missing", fileLocation(input),
                         "no such file or folder");
    if (!isFile(input) && !isDir(input)) {
        // A FIFO, socket or device in place of a dump file: its own error (io.read), never a wait or "no dump".
        auto opened = openRegularFile(input);
        if (!opened)
            return opened.error();
        ::close(*opened);
    }
    if (isFile(input)) {
        const std::string name = input.filename().string();
        RankLocation loc;
        loc.dir = input.parent_path().empty() ? fs::path(".") : input.parent_path();
        loc.dumpFile = input;
        if (name == "dump.json" || name == "debug.json") {
            loc.format = name == "dump.json" ? DumpFormat::DumpJson : DumpFormat::DebugJson;
        } else if (input.extension() == ".pkl") {
            loc.format = DumpFormat::LegacyPkl;
        } else if (input.extension() == ".json") {
            // A renamed dump file (e.g. npu_dump.json) is still read as a dump.json.
            loc.format = DumpFormat::DumpJson;
        } else {
            return makeError("layout.unknown-file", fileLocation(input),
                             "not a dump file: expected dump.json, debug.json, a .pkl or a dump folder");
        }
        applyLabels(loc);
        layout.ranks.push(loc);
        return layout;
    }
    // Three levels cover root/step/rank; two more allow ptdbg_dump_{version}/ or graph|pynative/ above them.
    Walk walk { input, layout.ranks, {}, {}, {}, {}, {}, options.progress };
    collect(input, 4, walk);
    if (walk.cancelled)
        return makeError("layout.cancelled", fileLocation(input),
                         "cancelled while searching the folder for dumps");
    for (const auto* list : { &walk.noDump, &walk.otherNames, &walk.seenBefore })
        layout.skippedFolders.insert(layout.skippedFolders.end(), list->begin(), list->end());
    for (const auto& [p, why] : walk.unreadable)
        layout.skippedFolders.push_back(p);
    std::sort(layout.skippedFolders.begin(), layout.skippedFolders.end());
    const bool inputUnreadable = walk.unreadable.size() == 1 && walk.unreadable.front().first == input;
    if (layout.ranks.empty() && (!options.allowEmpty || inputUnreadable)) {
        // The input itself could not be listed: say so, rather than "no dump" for a folder that may hold one.
        if (inputUnreadable)
            return makeError("layout.unreadable", fileLocation(input),
                             "cannot read the folder: " + walk.unreadable.front().second);
        std::string message = "no dump found under " + backslashReplace(input.string())
            + ": expected step*/rank*/dump.json, rank*/dump.json, dump.json, debug.json or a ptdbg .pkl";
        Diagnostics skipped;
        summariseSkipped(walk, skipped);
        for (const Diagnostic& d : skipped)
            message += "; " + d.message;
        return makeError("layout.empty", fileLocation(input), message);
    }
    summariseSkipped(walk, layout.diagnostics);
    layout.ranks.sortByPlace();
    // Sorted by (step, rank number, rank folder name): two dumps at one place are neighbours. Which of them a
    // compare, tree or info should read cannot be guessed (the demo folder holding both npu/ and bench/ is the
    // common case), so discovery refuses and names both.
    for (std::size_t i = 1; i < layout.ranks.size(); ++i) {
        if (placeOf(layout.ranks, i - 1) != placeOf(layout.ranks, i))
            continue;
        const RankLocation a = layout.ranks.at(i - 1);
        const RankLocation b = layout.ranks.at(i);
        return makeError("dump.duplicate-place", fileLocation(a.dumpFile),
                         "two dumps at the same place (" + placeText(a) + "): " + backslashReplace(a.dumpFile.string())
                             + " and " + backslashReplace(b.dumpFile.string())
                             + "; give the folder of one dump (its root, a step or a rank folder)");
    }
    layout.ranks.shrink();
    return layout;
}

Result<DumpLayout> discoverDump(const fs::path& input, const DiscoverOptions& options)
{
    auto compact = discoverCompact(input, options);
    if (!compact)
        return compact.error();
    DumpLayout layout;
    layout.input = std::move(compact->input);
    layout.diagnostics = std::move(compact->diagnostics);
    layout.skippedFolders = std::move(compact->skippedFolders);
    layout.ranks.reserve(compact->ranks.size());
    for (std::size_t i = 0; i < compact->ranks.size(); ++i)
        layout.ranks.push_back(compact->ranks.at(i));
    return layout;
}

std::uint32_t RankTable::intern(std::string_view text)
{
    const auto [it, added] = m_pieceIds.try_emplace(std::string(text), static_cast<std::uint32_t>(m_pieces.size()));
    if (added)
        m_pieces.emplace_back(text);
    return it->second;
}

void RankTable::push(const RankLocation& location)
{
    static_assert(sizeof(Entry) == 32, "a rank folder's record stays small: a job holds one per rank folder");
    const std::string& dir = location.dir.native();
    const std::string& file = location.dumpFile.native();
    // The folder's own name: what follows its last '/' ("" after a trailing one, as its filename() is).
    std::size_t cut = dir.rfind('/');
    cut = cut == std::string::npos ? 0 : cut + 1;
    if (dir.size() - cut > UINT16_MAX)
        cut = dir.size(); // a name no file system allows: kept whole in the prefix
    Entry e;
    e.step = location.step.value_or(0);
    e.rank = location.rank.value_or(0);
    e.dirPrefix = intern(std::string_view(dir).substr(0, cut));
    e.nameOffset = static_cast<std::uint32_t>(m_names.size());
    e.nameSize = static_cast<std::uint16_t>(dir.size() - cut);
    m_names.append(dir, cut, std::string::npos);
    const bool below = file.size() >= dir.size() && file.compare(0, dir.size(), dir) == 0;
    e.fileTail = intern(below ? std::string_view(file).substr(dir.size()) : std::string_view(file));
    e.format = static_cast<std::uint8_t>(location.format);
    e.flags = static_cast<std::uint8_t>((location.step ? kHasStep : 0) | (location.rank ? kHasRank : 0)
                                        | (location.rankLabel.empty() ? 0 : kRankLabel) | (below ? 0 : kWholeFile));
    m_entries.push_back(e);
}

std::string RankTable::dirText(std::size_t i) const
{
    const Entry& e = m_entries[i];
    std::string text = m_pieces[e.dirPrefix];
    text += name(e);
    return text;
}

RankLocation RankTable::at(std::size_t i) const
{
    const Entry& e = m_entries[i];
    RankLocation loc;
    std::string dir = dirText(i);
    loc.dumpFile = (e.flags & kWholeFile) ? m_pieces[e.fileTail] : dir + m_pieces[e.fileTail];
    loc.dir = std::move(dir);
    loc.format = static_cast<DumpFormat>(e.format);
    applyLabels(loc); // the labels discovery gave it: the same rule on the same text
    return loc;
}

std::optional<std::int64_t> RankTable::step(std::size_t i) const
{
    const Entry& e = m_entries[i];
    return (e.flags & kHasStep) ? std::optional(e.step) : std::nullopt;
}

std::optional<std::int64_t> RankTable::rank(std::size_t i) const
{
    const Entry& e = m_entries[i];
    return (e.flags & kHasRank) ? std::optional(e.rank) : std::nullopt;
}

std::string_view RankTable::rankLabel(std::size_t i) const
{
    const Entry& e = m_entries[i];
    return (e.flags & kRankLabel) ? name(e) : std::string_view();
}

void RankTable::sortByPlace()
{
    auto key = [&](const Entry& e) {
        return std::tuple((e.flags & kHasStep) ? e.step : -1, (e.flags & kHasRank) ? e.rank : -1,
                          (e.flags & kRankLabel) ? name(e) : std::string_view());
    };
    std::stable_sort(m_entries.begin(), m_entries.end(),
                     [&](const Entry& a, const Entry& b) { return key(a) < key(b); });
}

void RankTable::shrink()
{
    m_entries.shrink_to_fit();
    m_names.shrink_to_fit();
}

std::size_t RankTable::bytes() const
{
    std::size_t n = m_entries.capacity() * sizeof(Entry) + m_names.capacity();
    for (const std::string& piece : m_pieces)
        n += sizeof(std::string) + piece.capacity() + 2 * sizeof(std::string) + 2 * sizeof(void*); // and its key
    return n;
}

int CompactPath::compareText(std::string_view a, std::string_view b) noexcept
{
    if (a == b)
        return 0;
    // No root name on POSIX; a root directory sorts after none, then the elements in order, a prefix first.
    PathElements x(a);
    PathElements y(b);
    if (x.rooted() != y.rooted())
        return x.rooted() ? 1 : -1;
    std::string_view ex;
    std::string_view ey;
    for (;;) {
        const bool hasX = x.next(ex);
        const bool hasY = y.next(ey);
        if (!hasX || !hasY)
            return hasX ? 1 : (hasY ? -1 : 0);
        if (const int c = ex.compare(ey))
            return c;
    }
}

} // namespace probescope::dump
