// SPDX-License-Identifier: Apache-2.0
#include "core/setupcheck/setupinputs.h"

#include "core/setupcheck/configcompare.h"
#include "core/setupcheck/pytextutil.h"
#include "core/util/folderlist.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <set>
#include <unistd.h>

namespace probescope::setupcheck {

namespace {

bool endsWith(std::string_view s, std::string_view tail)
{
    return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

bool startsWith(std::string_view s, std::string_view head)
{
    return s.rfind(head, 0) == 0;
}

/// Does the zip hold an entry a config_check pack writes? (Its central directory only: nothing is inflated.)
bool looksLikePack(const std::filesystem::path& zip)
{
    auto reader = ZipReader::open(zip);
    if (!reader)
        return false;
    for (const auto& entry : (*reader)->entries()) {
        const std::string& n = entry.name;
        if (n == "env" || n == "pip" || startsWith(n, "hyperparameters/") || startsWith(n, "dataset/")
            || startsWith(n, "weights/") || startsWith(n, "random/"))
            return true;
    }
    return false;
}

/// The packs (zips with pack entries) directly in `folder`, by name.
std::vector<std::filesystem::path> packsIn(const std::vector<FolderEntry>& entries, const std::filesystem::path& folder)
{
    std::vector<std::filesystem::path> packs;
    for (const auto& e : entries) {
        if (e.kind == FolderEntry::Kind::File && endsWith(e.name, ".zip") && looksLikePack(folder / e.name))
            packs.push_back(folder / e.name);
    }
    return packs;
}

bool isCheckpointListing(const std::vector<FolderEntry>& entries)
{
    return std::any_of(entries.begin(), entries.end(), [](const FolderEntry& e) {
        return (e.isFile && e.name == "latest_checkpointed_iteration.txt")
            || (e.isFolder && (startsWith(e.name, "iter_") || startsWith(e.name, "mp_rank_")));
    });
}

std::string joinNames(const std::vector<std::filesystem::path>& paths)
{
    std::string out;
    for (const auto& p : paths)
        out += (out.empty() ? "" : ", ") + p.filename().string();
    return out;
}

/// Removes what extraction wrote under `folder` (files, then their folders deepest first), and `folder` itself.
void removeExtracted(const std::filesystem::path& folder, const std::vector<std::string>& files)
{
    std::set<std::string, std::greater<>> folders; // reverse order: a sub-folder before its parent
    for (const auto& f : files) {
        ::unlink((folder / f).c_str());
        for (auto slash = f.rfind('/'); slash != std::string::npos && slash > 0; slash = f.rfind('/', slash - 1))
            folders.insert(f.substr(0, slash));
    }
    for (const auto& d : folders)
        ::rmdir((folder / d).c_str());
    ::rmdir(folder.c_str());
}

Diagnostic inputError(const std::filesystem::path& path, std::string message)
{
    return makeError("setup.input", fileLocation(path), std::move(message));
}

} // namespace

bool isCheckpointFolder(const std::filesystem::path& path)
{
    if (!isFolder(path))
        return false;
    auto entries = listFolder(path, 100000, FolderOrder::ByName);
    return entries && isCheckpointListing(*entries);
}

SetupInput classifySetupInput(const std::filesystem::path& path)
{
    SetupInput out;
    if (isRegularFile(path)) {
        if (endsWith(path.filename().string(), ".zip")) {
            out.kind = SetupInput::Kind::Pack;
            out.path = path;
        } else {
            out.why = path.string() + ": not a config_check pack (.zip) nor a checkpoint folder";
        }
        return out;
    }
    if (!isFolder(path)) {
        out.why = path.string() + ": no such file or folder";
        return out;
    }
    auto entries = listFolder(path, 100000, FolderOrder::ByName);
    if (!entries) {
        out.why = entries.error().message;
        return out;
    }
    if (isCheckpointListing(*entries)) {
        out.kind = SetupInput::Kind::Checkpoint;
        out.path = path;
        return out;
    }
    // A run's folder: the pack beside the dumps, in the folder itself or in its parent.
    std::vector<std::filesystem::path> packs = packsIn(*entries, path);
    const auto parent = std::filesystem::absolute(path).lexically_normal().parent_path();
    if (packs.empty() && !parent.empty() && parent != path) {
        if (auto up = listFolder(parent, 100000, FolderOrder::ByName))
            packs = packsIn(*up, parent);
    }
    if (packs.size() == 1) {
        out.kind = SetupInput::Kind::Pack;
        out.path = packs.front();
    } else if (packs.empty()) {
        out.why = path.string() + ": holds no checkpoint (iter_*, mp_rank_*) and no config_check pack (.zip) beside it";
    } else {
        out.why = path.string() + ": several config_check packs (" + joinNames(packs) + "); open the two zips themselves";
    }
    return out;
}

Result<std::pair<SetupInput, SetupInput>> classifySetupPair(const std::filesystem::path& first,
                                                            const std::filesystem::path& second)
{
    SetupInput a = classifySetupInput(first);
    if (a.kind == SetupInput::Kind::None)
        return inputError(first, a.why);
    SetupInput b = classifySetupInput(second);
    if (b.kind == SetupInput::Kind::None)
        return inputError(second, b.why);
    if (a.kind != b.kind)
        return inputError(second, second.string() + ": is a "
                                      + (b.kind == SetupInput::Kind::Pack ? "config_check pack" : "checkpoint")
                                      + " but " + first.string() + " is a "
                                      + (a.kind == SetupInput::Kind::Pack ? "config_check pack" : "checkpoint")
                                      + "; compare two of a kind");
    return std::pair { std::move(a), std::move(b) };
}

Result<std::vector<compare::XlsxSheet>> comparePackZips(const std::filesystem::path& benchZip,
                                                        const std::filesystem::path& cmpZip,
                                                        const std::filesystem::path& scratchParent,
                                                        const ZipLimits& limits, ProgressSink* progress)
{
    if (progress)
        progress->setRange(4);
    auto zips = openPackZips(benchZip, cmpZip, limits);
    if (!zips)
        return zips.error();
    if (progress)
        progress->advance(1);
    std::filesystem::path parent = scratchParent;
    if (parent.empty()) {
        const char* tmp = std::getenv("TMPDIR");
        parent = tmp && *tmp ? tmp : "/tmp";
    }
    std::string pattern = (parent / "probescope-setup-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr)
        return makeError("setup.scratch", fileLocation(parent),
                         "cannot create a private folder in " + parent.string() + ": " + std::strerror(errno));
    const std::filesystem::path scratch = pattern;
    const auto benchDir = scratch / "bench";
    const auto cmpDir = scratch / "cmp";
    std::vector<std::string> benchFiles;
    std::vector<std::string> cmpFiles;
    auto cleanUp = [&] {
        removeExtracted(benchDir, benchFiles);
        removeExtracted(cmpDir, cmpFiles);
        ::rmdir(scratch.c_str());
    };
    auto cancelled = [&] { return progress && progress->isCancelled(); };
    Result<std::vector<compare::XlsxSheet>> result = makeError("setup.cancelled", {}, "the setup check was cancelled");
    if (auto files = extractZip(*zips->bench, benchDir); !files) {
        result = files.error();
    } else {
        benchFiles = std::move(*files);
        if (progress)
            progress->advance(2);
        if (!cancelled()) {
            if (auto more = extractZip(*zips->cmp, cmpDir); !more) {
                result = more.error();
            } else {
                cmpFiles = std::move(*more);
                if (progress)
                    progress->advance(3);
                if (!cancelled())
                    result = comparePackFolders(benchDir, cmpDir);
            }
        }
    }
    cleanUp();
    if (progress && result)
        progress->advance(4);
    return result;
}

} // namespace probescope::setupcheck
