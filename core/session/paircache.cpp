// SPDX-License-Identifier: Apache-2.0
#include "core/session/paircache.h"

#include "core/util/bytes.h"
#include "core/util/outputfile.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstring>
#include <cstdio>
#include <cstdlib>
#include <fstream>
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

fs::path defaultCacheDir()
{
    if (const char* own = std::getenv("PROBESCOPE_CACHE_DIR"); own && *own)
        return own;
    if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
        return fs::path(xdg) / "probescope";
    if (const char* home = std::getenv("HOME"); home && *home)
        return fs::path(home) / ".cache" / "probescope";
    return fs::temp_directory_path() / "probescope-cache";
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
    std::ifstream in(file, std::ios::binary);
    std::error_code ec;
    const auto size = fs::file_size(file, ec);
    if (!in || ec)
        return std::nullopt;
    // One read of the whole file (an istreambuf_iterator copy runs at a fifth of the page cache's speed).
    std::string bytes(size, '\0');
    if (!in.read(bytes.data(), static_cast<std::streamsize>(size)))
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

    std::error_code ec;
    fs::create_directories(file.parent_path(), ec);
    if (ec)
        return file.parent_path().string() + ": " + ec.message();
    if (auto failure = writeFileAtomically(file, bytes, ReplaceMode::Allowed))
        return failure->message;
    // Keep the folder small: the oldest caches go first.
    std::vector<std::pair<fs::file_time_type, fs::path>> caches;
    for (const auto& e : fs::directory_iterator(file.parent_path(), ec)) {
        if (e.path().extension() == ".pspair")
            caches.emplace_back(e.last_write_time(ec), e.path());
    }
    if (caches.size() > keepFiles) {
        std::sort(caches.begin(), caches.end());
        for (std::size_t i = 0; i + keepFiles < caches.size(); ++i)
            fs::remove(caches[i].second, ec);
    }
    return std::nullopt;
}

} // namespace probescope::session
