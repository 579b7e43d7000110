// SPDX-License-Identifier: Apache-2.0
#include "core/dumpinfo/dumpinfo.h"

#include "core/dump/leaf.h"
#include "core/tensor/resolver.h"
#include "core/tensor/tensor.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <string_view>

namespace probescope::dumpinfo {

namespace {

constexpr std::uint64_t kMaxReportedPerKind = 20;

// Keeps a flood of identical problems (every file of a deleted folder missing) readable.
class CappedDiagnostics
{
public:
    explicit CappedDiagnostics(Diagnostics& out)
        : m_out(out)
    {
    }
    void add(Diagnostic d)
    {
        auto& count = m_counts[d.id];
        if (++count <= kMaxReportedPerKind)
            m_out.push_back(std::move(d));
    }
    void finish(const std::string& file)
    {
        for (const auto& [id, count] : m_counts) {
            if (count > kMaxReportedPerKind)
                m_out.push_back(Diagnostic { Severity::Error, id, SourceLocation { file, std::nullopt, 0, 0 },
                                             std::to_string(count - kMaxReportedPerKind) + " more like this" });
        }
    }

private:
    Diagnostics& m_out;
    std::map<std::string, std::uint64_t> m_counts;
};

bool closeEnough(double expected, double actual, double tolerance)
{
    if (std::isnan(expected) || std::isnan(actual))
        return std::isnan(expected) == std::isnan(actual);
    if (std::isinf(expected) || std::isinf(actual))
        return expected == actual;
    return std::fabs(expected - actual) <= tolerance * std::max(1.0, std::max(std::fabs(expected), std::fabs(actual)));
}

void verifyTensor(const dump::TensorLeaf& leaf, const tensor::Tensor& t, const std::string& file,
                  const InfoOptions& options, CappedDiagnostics& diags)
{
    for (auto& d : tensor::checkAgainstMetadata(t, leaf.dtype, leaf.shape, file))
        diags.add(std::move(d));
    if (t.numel() == 0)
        return;
    const tensor::TensorStats stats = tensor::computeStats(t);
    const std::pair<const dump::StatValue*, double> checks[] = {
        { &leaf.max, stats.max }, { &leaf.min, stats.min }, { &leaf.mean, stats.mean }, { &leaf.norm, stats.norm }
    };
    static const char* names[] = { "Max", "Min", "Mean", "Norm" };
    for (int i = 0; i < 4; ++i) {
        const dump::StatValue& recorded = *checks[i].first;
        if (!recorded.hasNumber())
            continue;
        // msprobe writes a 0-d tensor's item() as all four statistics, so its "Norm" keeps the sign: -2 for -2.
        const bool scalarNorm = i == 3 && t.numel() == 1 && leaf.shape.empty()
            && closeEnough(recorded.number, stats.max, options.statsTolerance);
        if (!scalarNorm && !closeEnough(recorded.number, checks[i].second, options.statsTolerance)) {
            char buf[160];
            std::snprintf(buf, sizeof buf, "%s is %.9g in the dump file but %.9g in the tensor file", names[i],
                          recorded.number, checks[i].second);
            diags.add(makeError("tensor.stats-mismatch", SourceLocation { file, std::nullopt, 0, 0 }, buf));
        }
    }
}

} // namespace

RankInfo inspectRank(const dump::RankDump& rank, const InfoOptions& options, ProgressSink* progress)
{
    RankInfo info;
    info.location = rank.location;
    info.loaded = true;
    const dump::DumpFile& dump = *rank.dump;
    info.header = dump.header;
    info.format = dump.format;
    info.truncated = dump.truncated;
    info.entries = dump.entries.size();
    info.constructLinks = rank.construct.links.size();
    info.stackEntries = rank.stack.framesOf.size();
    info.diagnostics = rank.diagnostics;
    CappedDiagnostics diags(info.diagnostics);
    if (progress)
        progress->setRange(dump.entries.size());

    // The tensor files are reached only through the resolver (issue 33): the tensor folder bound to the dump folder,
    // so a `dump_tensor_data` linked to another dump's folder is refused here as the compare refuses it. Said once,
    // at the first leaf that names a file (a statistics dump never reads its tensor folder).
    const auto tensors = tensor::makeTensorResolver(dump.path.parent_path(), dump.tensorDir);
    bool folderReported = false;
    std::uint64_t done = 0;
    for (const dump::Entry& entry : dump.entries) {
        if (progress && progress->isCancelled())
            break;
        ++info.byKind[static_cast<std::size_t>(entry.name.kind)];
        if (entry.name.direction == dump::Direction::Forward)
            ++info.forward;
        else if (entry.name.direction == dump::Direction::Backward)
            ++info.backward;
        dump::forEachLeaf(entry.value, [&](const dump::LeafPath&, dump::JsonValue value, dump::LeafKind kind) {
            if (kind != dump::LeafKind::Tensor) {
                ++info.otherLeaves;
                return true;
            }
            ++info.tensorLeaves;
            const auto leaf = dump::readTensorLeaf(value);
            if (!leaf || leaf->dataName.empty())
                return true; // wrong types were reported by the reader
            ++info.tensorsWithFile;
            if (tensors->folderProblem()) {
                if (!folderReported)
                    diags.add(*tensors->folderProblem());
                folderReported = true;
                return true;
            }
            auto path = tensors->resolve(leaf->dataName);
            if (!path) {
                if (path.error().id == "tensor.missing")
                    ++info.filesMissing;
                Diagnostic d = path.error();
                d.message = "entry \"" + std::string(entry.key) + "\": " + d.message;
                diags.add(std::move(d));
                return true;
            }
            ++info.filesPresent;
            if (options.verifyTensors) {
                auto t = tensors->load(leaf->dataName);
                if (!t) {
                    diags.add(t.error());
                    return true;
                }
                ++info.filesVerified;
                verifyTensor(*leaf, *t, path->path.string(), options, diags);
            }
            return true;
        });
        if (progress)
            progress->advance(++done);
    }
    diags.finish(dump.path.string());
    return info;
}

RankInfo inspectLocation(const dump::RankLocation& location, const InfoOptions& options)
{
    auto rank = dump::loadRank(location);
    if (!rank) {
        RankInfo info;
        info.location = location;
        info.diagnostics.push_back(rank.error());
        return info;
    }
    return inspectRank(**rank, options, nullptr);
}

std::vector<RankInfo> inspectLayout(const dump::DumpLayout& layout, const InfoOptions& options, ProgressSink* progress)
{
    std::vector<RankInfo> out;
    out.reserve(layout.ranks.size());
    for (const dump::RankLocation& location : layout.ranks) {
        if (progress && progress->isCancelled())
            break;
        out.push_back(inspectLocation(location, options));
        if (progress && out.back().loaded)
            progress->advance(out.size());
    }
    return out;
}

namespace {

const char* formatName(dump::DumpFormat f)
{
    switch (f) {
    case dump::DumpFormat::DumpJson:
        return "dump.json";
    case dump::DumpFormat::DebugJson:
        return "debug.json";
    case dump::DumpFormat::LegacyPkl:
        return "ptdbg .pkl";
    }
    return "?";
}

std::string orDash(const std::string& s)
{
    return s.empty() ? std::string("-") : s;
}

std::string rankTitle(const dump::RankLocation& loc)
{
    std::string title;
    if (!loc.stepLabel.empty())
        title += loc.stepLabel;
    if (!loc.rankLabel.empty())
        title += (title.empty() ? "" : "/") + loc.rankLabel;
    if (loc.format == dump::DumpFormat::LegacyPkl)
        title += (title.empty() ? "" : "/") + loc.dumpFile.filename().string();
    return title.empty() ? loc.dir.filename().string() : title;
}

} // namespace

namespace {

/// The head of the text: the input, its steps and ranks (`places` gives each rank's step and rank label), the
/// layout's diagnostics. The distinct labels are counted from views into the caller's ranks, sorted: 16 bytes a rank
/// while the head is made, not a set of strings (issue 37).
template <class Layout, class Places>
std::string formatHead(const Layout& layout, const Places& places)
{
    std::string out;
    std::set<std::int64_t> steps;
    std::vector<std::string_view> rankLabels;
    places([&](std::optional<std::int64_t> step, std::string_view rankLabel) {
        steps.insert(step.value_or(-1));
        rankLabels.push_back(rankLabel);
    });
    const std::size_t count = rankLabels.size();
    std::sort(rankLabels.begin(), rankLabels.end());
    rankLabels.erase(std::unique(rankLabels.begin(), rankLabels.end()), rankLabels.end());
    out += "dump: " + layout.input.string() + "\n";
    std::string stepList;
    for (std::int64_t s : steps)
        stepList += (stepList.empty() ? "" : ", ") + (s < 0 ? std::string("-") : std::to_string(s));
    out += "steps: " + std::to_string(steps.size()) + " (" + stepList + ")   ranks: " + std::to_string(rankLabels.size())
        + "   rank dumps: " + std::to_string(count) + "\n";
    for (const Diagnostic& d : layout.diagnostics)
        out += "  " + d.format() + "\n";
    return out;
}

} // namespace

std::string formatInfoHead(const dump::CompactLayout& layout)
{
    return formatHead(layout, [&](const auto& take) {
        for (std::size_t i = 0; i < layout.ranks.size(); ++i)
            take(layout.ranks.step(i), layout.ranks.rankLabel(i));
    });
}

std::string formatInfo(const dump::DumpLayout& layout, const std::vector<RankInfo>& ranks)
{
    std::string out = formatHead(layout, [&](const auto& take) {
        for (const RankInfo& r : ranks)
            take(r.location.step, r.location.rankLabel);
    });
    for (const RankInfo& r : ranks)
        out += formatRankInfo(r);
    return out;
}

std::string formatRankInfo(const RankInfo& r)
{
    std::string out;
    out += "\n" + rankTitle(r.location) + "  [" + formatName(r.location.format) + "]\n";
    out += "  file: " + r.location.dumpFile.string() + "\n";
    if (r.loaded) {
        out += "  task: " + orDash(r.header.task) + "   level: " + orDash(r.header.level)
            + "   framework: " + orDash(r.header.framework) + "\n";
        const auto k = [&](dump::EntryKind kind) { return std::to_string(r.byKind[static_cast<std::size_t>(kind)]); };
        out += "  entries: " + std::to_string(r.entries) + " (api " + k(dump::EntryKind::Api) + ", module "
            + k(dump::EntryKind::Module) + ", parameters_grad " + k(dump::EntryKind::ParametersGrad) + ", debug "
            + k(dump::EntryKind::Debug) + ", legacy api " + k(dump::EntryKind::Legacy) + ", unrecognised "
            + k(dump::EntryKind::Unknown) + ")\n";
        out += "  direction: forward " + std::to_string(r.forward) + ", backward " + std::to_string(r.backward)
            + "\n";
        out += "  leaves: " + std::to_string(r.tensorLeaves) + " tensors, " + std::to_string(r.otherLeaves)
            + " other arguments\n";
        out += "  tensor files: " + std::to_string(r.tensorsWithFile) + " referenced, "
            + std::to_string(r.filesPresent) + " present, " + std::to_string(r.filesMissing) + " missing";
        if (r.filesVerified > 0)
            out += ", " + std::to_string(r.filesVerified) + " loaded and checked";
        out += "\n";
        out += "  construct.json: " + (r.constructLinks ? std::to_string(r.constructLinks) + " links" : std::string("-"))
            + "   stack.json: " + (r.stackEntries ? std::to_string(r.stackEntries) + " entries" : std::string("-"))
            + "\n";
        if (r.truncated)
            out += "  TRUNCATED: salvaged what was complete (see diagnostics)\n";
    }
    if (r.diagnostics.empty()) {
        out += "  diagnostics: none\n";
    } else {
        out += "  diagnostics: " + std::to_string(r.diagnostics.size()) + "\n";
        for (const Diagnostic& d : r.diagnostics)
            out += "    " + d.format() + "\n";
    }
    return out;
}

} // namespace probescope::dumpinfo
