// SPDX-License-Identifier: Apache-2.0
#include "core/dump/dumplayout.h"

#include "core/util/fileio.h"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <set>
#include <system_error>
#include <tuple>

namespace probescope::dump {

namespace fs = std::filesystem;

namespace {

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

// The dump files held directly by a folder: dump.json / debug.json, or legacy .pkl files.
std::vector<RankLocation> dumpFilesIn(const fs::path& dir)
{
    std::vector<RankLocation> out;
    for (const char* name : { "dump.json", "debug.json" }) {
        if (isFile(dir / name)) {
            RankLocation loc;
            loc.dir = dir;
            loc.dumpFile = dir / name;
            loc.format = std::string_view(name) == "dump.json" ? DumpFormat::DumpJson : DumpFormat::DebugJson;
            applyLabels(loc);
            out.push_back(std::move(loc));
            return out; // a folder holds one of the two
        }
    }
    for (const fs::path& child : sortedChildren(dir)) {
        if (child.extension() == ".pkl" && isFile(child)) {
            RankLocation loc;
            loc.dir = dir;
            loc.dumpFile = child;
            loc.format = DumpFormat::LegacyPkl;
            applyLabels(loc);
            out.push_back(std::move(loc));
        }
    }
    return out;
}

void collect(const fs::path& dir, int depth, DumpLayout& layout)
{
    auto direct = dumpFilesIn(dir);
    if (!direct.empty()) {
        for (auto& loc : direct)
            layout.ranks.push_back(std::move(loc));
        return;
    }
    if (depth <= 0)
        return;
    bool structured = false;
    for (const fs::path& child : sortedChildren(dir)) {
        if (!isDir(child))
            continue;
        const std::string name = child.filename().string();
        if (isStepName(name) || isRankName(name)) {
            structured = true;
            const std::size_t before = layout.ranks.size();
            collect(child, depth - 1, layout);
            if (layout.ranks.size() == before && isRankName(name))
                layout.diagnostics.push_back(
                    makeWarning("layout.no-dump-file", SourceLocation { child.string(), std::nullopt, 0, 0 },
                                "rank folder without dump.json, debug.json or .pkl; skipped"));
        }
    }
    if (structured)
        return;
    // Folders that sit above the step level: ptdbg_dump_{version}/, MindSpore graph/ and pynative/.
    for (const fs::path& child : sortedChildren(dir)) {
        if (isDir(child) && child.filename().string().rfind("dump_tensor_data", 0) != 0)
            collect(child, depth - 1, layout);
    }
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

Result<DumpLayout> discoverDump(const fs::path& input)
{
    DumpLayout layout;
    layout.input = input;
    std::error_code ec;
    if (!fs::exists(input, ec))
        return makeError("layout.missing", SourceLocation { input.string(), std::nullopt, 0, 0 },
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
            return makeError("layout.unknown-file", SourceLocation { input.string(), std::nullopt, 0, 0 },
                             "not a dump file: expected dump.json, debug.json, a .pkl or a dump folder");
        }
        applyLabels(loc);
        layout.ranks.push_back(std::move(loc));
        return layout;
    }
    // Three levels cover root/step/rank; two more allow ptdbg_dump_{version}/ or graph|pynative/ above them.
    collect(input, 4, layout);
    if (layout.ranks.empty())
        return makeError("layout.empty", SourceLocation { input.string(), std::nullopt, 0, 0 },
                         "no dump found: expected step*/rank*/dump.json, rank*/dump.json, dump.json, debug.json or "
                         "a ptdbg .pkl below this folder");
    std::stable_sort(layout.ranks.begin(), layout.ranks.end(), [](const RankLocation& a, const RankLocation& b) {
        return std::tuple(a.step.value_or(-1), a.rank.value_or(-1), a.rankLabel)
            < std::tuple(b.step.value_or(-1), b.rank.value_or(-1), b.rankLabel);
    });
    return layout;
}

} // namespace probescope::dump
