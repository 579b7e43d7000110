// SPDX-License-Identifier: Apache-2.0
#include "core/session/paircache.h"

#include "core/util/bytes.h"
#include "core/util/outputfile.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <vector>

namespace probescope::session {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view kMagic = "ProbeScope pair cache 1\n";

/// One line per input: its path, size and modification time in ns ("-" when absent), then the options.
std::string stamp(const RankPair& pair, const AnalysisOptions& options)
{
    std::vector<fs::path> inputs { pair.npu.dumpFile, pair.bench.dumpFile, pair.npu.dumpFile.parent_path() / "construct.json" };
    if (options.stackMode)
        inputs.push_back(pair.npu.dumpFile.parent_path() / "stack.json");
    for (const auto* m : { &options.dataMapping, &options.cellMapping, &options.apiMapping, &options.layerMapping }) {
        if (*m && !(*m)->empty())
            inputs.push_back(**m);
    }
    std::string out;
    for (const fs::path& p : inputs) {
        std::error_code ec;
        const fs::path absolute = fs::absolute(p, ec);
        struct stat st {};
        out += (ec ? p : absolute).string();
        if (::stat(p.c_str(), &st) == 0)
            out += ' ' + std::to_string(st.st_size) + ' ' + std::to_string(st.st_mtim.tv_sec) + '.'
                + std::to_string(st.st_mtim.tv_nsec);
        else
            out += " -";
        out += '\n';
    }
    auto flag = [](const std::optional<fs::path>& m) { return m ? (m->empty() ? std::string("on") : m->string()) : std::string("off"); };
    out += "profile " + std::string(profileName(options.profile)) + " fuzzy " + (options.fuzzy ? "1" : "0")
        + " stack " + (options.stackMode ? "1" : "0") + " dm " + flag(options.dataMapping) + " cm "
        + flag(options.cellMapping) + " am " + flag(options.apiMapping) + " lm " + flag(options.layerMapping) + '\n';
    return out;
}

/// pair-<16 lowercase hex digits>.pspair, the only names the cache writes and prunes.
bool isCacheFileName(std::string_view name)
{
    constexpr std::string_view prefix = "pair-";
    constexpr std::string_view suffix = ".pspair";
    if (name.size() != prefix.size() + 16 + suffix.size() || name.substr(0, prefix.size()) != prefix
        || name.substr(name.size() - suffix.size()) != suffix)
        return false;
    for (const char c : name.substr(prefix.size(), 16)) {
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
            return false;
    }
    return true;
}

void writeStatus(ByteWriter& w, const NodeStatusTable& s)
{
    w.array(s.own);
    w.array(s.subtree);
    w.array(s.failingBelow);
    w.array(s.metrics);
    w.array(s.rowOffsets);
    w.array(s.rowIndex);
    w.value(s.counts);
}

bool readStatus(ByteReader& r, NodeStatusTable& s)
{
    return r.array(s.own) && r.array(s.subtree) && r.array(s.failingBelow) && r.array(s.metrics)
        && r.array(s.rowOffsets) && r.array(s.rowIndex) && r.value(s.counts);
}

} // namespace

std::optional<std::string> cacheDirProblem(const fs::path& dir)
{
    struct stat st {};
    if (::lstat(dir.c_str(), &st) != 0)
        return dir.string() + ": " + std::strerror(errno);
    if (S_ISLNK(st.st_mode))
        return dir.string() + " is a symbolic link; the cache folder must be a real folder of this user";
    if (!S_ISDIR(st.st_mode))
        return dir.string() + " is not a folder";
    if (st.st_uid != ::geteuid())
        return dir.string() + " belongs to another user (uid " + std::to_string(st.st_uid) + ")";
    if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0)
        return dir.string() + " is writable by other users (mode " + [&] {
            char mode[8];
            std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
            return std::string(mode);
        }() + ")";
    return std::nullopt;
}

fs::path defaultCacheDir(std::string* problem)
{
    std::vector<fs::path> candidates;
    if (const char* own = std::getenv("PROBESCOPE_CACHE_DIR"); own && *own)
        candidates.emplace_back(own);
    if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
        candidates.push_back(fs::path(xdg) / "probescope");
    if (const char* home = std::getenv("HOME"); home && *home)
        candidates.push_back(fs::path(home) / ".cache" / "probescope");
    // No shared fallback (/tmp): there another user could plant a link to follow or files to prune.
    std::string why;
    for (const fs::path& dir : candidates) {
        struct stat st {};
        if (::lstat(dir.c_str(), &st) != 0 && errno == ENOENT)
            return dir; // created 0700 by the first write
        const auto unusable = cacheDirProblem(dir);
        if (!unusable)
            return dir;
        why += (why.empty() ? "" : "; ") + *unusable;
    }
    if (problem)
        *problem = "the reopen cache is off: " + (candidates.empty()
            ? std::string("none of PROBESCOPE_CACHE_DIR, XDG_CACHE_HOME and HOME is set")
            : why);
    return {};
}

fs::path pairCacheFile(const fs::path& dir, const RankPair& pair, const AnalysisOptions& options)
{
    std::error_code ec;
    // The name stands for the inputs' paths and the options; their sizes and times are checked inside.
    std::string who = fs::absolute(pair.npu.dumpFile, ec).string() + '\n' + fs::absolute(pair.bench.dumpFile, ec).string();
    const std::string s = stamp(pair, options);
    who += s.substr(s.rfind("profile "));
    char name[40];
    std::snprintf(name, sizeof name, "pair-%016llx.pspair", static_cast<unsigned long long>(fnv1a(who)));
    return dir / name;
}

std::optional<CachedPair> readPairCache(const fs::path& file, const RankPair& pair, const AnalysisOptions& options)
{
    if (cacheDirProblem(file.parent_path().empty() ? fs::path(".") : file.parent_path()))
        return std::nullopt;
    // A link at the name is never followed (O_NOFOLLOW), and only a regular file of this user is read.
    const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0)
        return std::nullopt;
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != ::geteuid()) {
        ::close(fd);
        return std::nullopt;
    }
    // One read of the whole file (an istreambuf_iterator copy runs at a fifth of the page cache's speed).
    std::string bytes(static_cast<std::size_t>(st.st_size), '\0');
    std::size_t got = 0;
    while (got < bytes.size()) {
        const ssize_t n = ::read(fd, bytes.data() + got, bytes.size() - got);
        if (n <= 0) {
            if (n < 0 && errno == EINTR)
                continue;
            break;
        }
        got += static_cast<std::size_t>(n);
    }
    ::close(fd);
    if (got != bytes.size())
        return std::nullopt;
    if (bytes.compare(0, kMagic.size(), kMagic) != 0)
        return std::nullopt;
    ByteReader r(std::string_view(bytes).substr(kMagic.size()));
    std::string recorded, treeBytes;
    if (!r.text(recorded) || recorded != stamp(pair, options) || !r.text(treeBytes))
        return std::nullopt;
    CachedPair cached;
    cached.tree = tree::ConstructTree::deserialize(treeBytes);
    auto status = std::make_shared<NodeStatusTable>();
    std::uint8_t mode = 0, found = 0, differ = 0;
    std::uint32_t node = 0;
    std::int64_t failingRow = -1;
    if (!cached.tree || !readStatus(r, *status) || !r.value(mode) || !r.value(cached.keysHash) || !r.value(found)
        || !r.value(node) || !r.text(cached.firstFailure.key) || !r.value(cached.firstFailure.executionIndex)
        || !r.value(failingRow) || !r.value(differ) || !r.text(cached.firstFailure.summary) || !r.atEnd())
        return std::nullopt;
    const std::size_t n = cached.tree->size();
    if (status->own.size() != n || status->subtree.size() != n || status->failingBelow.size() != n
        || status->metrics.size() != n || status->rowOffsets.size() != n + 1
        || (n && status->rowOffsets.back() != status->rowIndex.size())
        || mode > static_cast<std::uint8_t>(compare::CompareMode::Md5) || cached.tree->keysHash() != cached.keysHash)
        return std::nullopt;
    const auto validStatus = [](Status s) { return s <= Status::Error; };
    for (std::size_t i = 0; i < n; ++i) {
        if (status->rowOffsets[i] > status->rowOffsets[i + 1] || !validStatus(status->own[i])
            || !validStatus(status->subtree[i]))
            return std::nullopt;
    }
    cached.status = std::move(status);
    cached.mode = static_cast<compare::CompareMode>(mode);
    cached.firstFailure.found = found != 0;
    cached.firstFailure.node = tree::NodeId { node };
    cached.firstFailure.firstFailingRow = static_cast<long>(failingRow);
    cached.firstFailure.inputsAlreadyDiffer = differ != 0;
    return cached;
}

std::optional<std::string> writePairCache(const fs::path& file, const RankPair& pair, const AnalysisOptions& options,
                                          const PairAnalysis& analysis, std::size_t keepFiles)
{
    if (!analysis.skeleton || !analysis.skeleton->tree || !analysis.status || !analysis.table)
        return std::string("nothing to cache");
    const tree::ConstructTree& tree = *analysis.skeleton->tree;
    // At a million nodes the file is ~150 MB: it is made in one buffer of about its size (the tree serialized in
    // place, its length patched after), not grown by doubling and copied, which took ~500 MB at the end of a compare.
    const std::size_t n = tree.size();
    std::string bytes;
    bytes.reserve(std::size_t { 4096 } + n * 160 + analysis.status->rowIndex.size() * sizeof(std::uint32_t));
    bytes = kMagic;
    ByteWriter w(bytes);
    w.text(stamp(pair, options));
    const std::size_t treeLengthAt = bytes.size();
    w.value(std::uint64_t { 0 });
    tree.serialize(bytes);
    const std::uint64_t treeLength = bytes.size() - treeLengthAt - sizeof(std::uint64_t);
    std::memcpy(bytes.data() + treeLengthAt, &treeLength, sizeof treeLength);
    writeStatus(w, *analysis.status);
    w.value(static_cast<std::uint8_t>(analysis.table->mode));
    w.value(tree.keysHash());
    const compare::FirstFailure& f = analysis.firstFailure;
    w.value(static_cast<std::uint8_t>(f.found));
    w.value(f.node.value);
    w.text(f.key);
    w.value(f.executionIndex);
    w.value(static_cast<std::int64_t>(f.firstFailingRow));
    w.value(static_cast<std::uint8_t>(f.inputsAlreadyDiffer));
    w.text(f.summary);

    // The folder: its parents as the user has them, itself created private (0700) and checked to be so, whoever
    // made it (a folder planted by another user, or a link in its place, is refused, never followed).
    const fs::path dir = file.parent_path().empty() ? fs::path(".") : file.parent_path();
    std::error_code ec;
    if (dir.has_parent_path())
        fs::create_directories(dir.parent_path(), ec);
    if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
        return errnoText("cannot create the cache folder", dir, errno);
    if (const auto unsafe = cacheDirProblem(dir))
        return "the cache is not written: " + *unsafe;
    if (!isCacheFileName(file.filename().string()))
        return file.string() + ": not a cache file name (pair-<16 hex digits>.pspair)";
    if (auto failure = writeFileAtomically(file, bytes, ReplaceMode::Allowed))
        return failure->message;
    // Keep the folder small: the oldest caches go first. Only the cache's own regular files are candidates; a link
    // or anything else in the folder is left alone, and lstat never follows a link.
    std::vector<std::pair<std::int64_t, fs::path>> caches;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        const std::string name = it->path().filename().string();
        struct stat st {};
        if (!isCacheFileName(name) || ::lstat(it->path().c_str(), &st) != 0 || !S_ISREG(st.st_mode))
            continue;
        caches.emplace_back(static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec, it->path());
    }
    if (caches.size() > keepFiles) {
        std::sort(caches.begin(), caches.end());
        for (std::size_t i = 0; i + keepFiles < caches.size(); ++i)
            ::unlink(caches[i].second.c_str()); // removes a name, never what a link points to
    }
    return std::nullopt;
}

} // namespace probescope::session
