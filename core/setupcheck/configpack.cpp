// SPDX-License-Identifier: Apache-2.0
#include "core/setupcheck/configpack.h"

#include "core/setupcheck/hyperparams.h"
#include "core/setupcheck/pytextutil.h"
#include "core/util/fileio.h"
#include "core/util/folderlist.h"
#include "core/util/ziparchive.h"

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <sys/stat.h>
#include <unistd.h>

namespace probescope::setupcheck {

namespace {

std::string trim(std::string_view s)
{
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r'))
        s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
        s.remove_suffix(1);
    return std::string(s);
}

/// The first Name and Version headers of a core-metadata file (RFC 822 headers up to the first blank line).
void readMetadata(const std::filesystem::path& file, std::string& out)
{
    auto text = readTextFile(file);
    if (!text || text->empty())
        return; // an empty Message is falsy: msprobe skips the distribution
    std::optional<std::string> name;
    std::optional<std::string> version;
    bool anyHeader = false;
    std::size_t start = 0;
    const std::string_view all = *text;
    while (start < all.size()) {
        std::size_t end = all.find('\n', start);
        if (end == std::string_view::npos)
            end = all.size();
        std::string_view line = all.substr(start, end - start);
        if (!line.empty() && line.back() == '\r')
            line.remove_suffix(1);
        if (line.empty())
            break;
        const std::size_t colon = line.find(':');
        if (colon != std::string_view::npos && line.front() != ' ' && line.front() != '\t') {
            anyHeader = true;
            std::string key(line.substr(0, colon));
            std::transform(key.begin(), key.end(), key.begin(), [](unsigned char c) { return std::tolower(c); });
            if (key == "name" && !name)
                name = trim(line.substr(colon + 1));
            else if (key == "version" && !version)
                version = trim(line.substr(colon + 1));
        }
        start = end + 1;
    }
    if (!anyHeader)
        return;
    out += name.value_or("None");
    out += '=';
    out += version.value_or("None");
    out += '\n';
}

bool endsWithNoCase(std::string_view s, std::string_view suffix)
{
    if (s.size() < suffix.size())
        return false;
    for (std::size_t i = 0; i < suffix.size(); ++i) {
        const char c = s[s.size() - suffix.size() + i];
        if (std::tolower(static_cast<unsigned char>(c)) != suffix[i])
            return false;
    }
    return true;
}

} // namespace

PipListing listPythonPackages(const std::string& pathVariable, const std::string& home)
{
    PipListing listing;
    for (const auto& dir : pySplit(pathVariable, ':')) {
        const std::filesystem::path folder(dir.empty() ? "." : dir);
        std::filesystem::path candidate = folder / "python3";
        if (!isRegularFile(candidate) || ::access(candidate.c_str(), X_OK) != 0)
            continue;
        // A pyenv shim is a script that picks a version: PYENV_VERSION, else PYENV_ROOT/version; "system" means the
        // next python3 on PATH.
        if (folder.filename() == "shims" && isFolder(folder.parent_path() / "versions")) {
            std::string version;
            if (const char* env = std::getenv("PYENV_VERSION"))
                version = env;
            else if (auto file = readTextFile(folder.parent_path() / "version"))
                version = trim(pySplit(*file, '\n').front());
            if (version.empty() || version == "system" || version.find('/') != std::string::npos)
                continue;
            candidate = folder.parent_path() / "versions" / version / "bin" / "python3";
            if (!isRegularFile(candidate))
                continue;
        }
        listing.python = candidate;
        break;
    }
    if (listing.python.empty())
        return listing;

    std::vector<std::filesystem::path> sites;
    // PYTHONPATH comes first in sys.path.
    if (const char* pythonPath = std::getenv("PYTHONPATH")) {
        for (const auto& dir : pySplit(pythonPath, ':')) {
            if (!dir.empty())
                sites.emplace_back(dir);
        }
    }
    char resolved[PATH_MAX];
    const std::filesystem::path real = ::realpath(listing.python.c_str(), resolved) ? std::filesystem::path(resolved)
                                                                                    : listing.python;
    std::string version; // "3.11"
    const std::string realName = real.filename().string();
    if (realName.rfind("python3.", 0) == 0)
        version = realName.substr(6);

    // A venv: pyvenv.cfg beside the executable or one folder up (site.py's rule), looked up on the path as invoked.
    const std::filesystem::path binDir = listing.python.parent_path();
    std::filesystem::path venv;
    bool includeSystem = true;
    for (const auto& dir : { binDir, binDir.parent_path() }) {
        if (isRegularFile(dir / "pyvenv.cfg")) {
            venv = dir;
            break;
        }
    }
    if (!venv.empty()) {
        includeSystem = false;
        if (auto cfg = readTextFile(venv / "pyvenv.cfg")) {
            for (const auto& line : pySplit(*cfg, '\n')) {
                const std::size_t eq = line.find('=');
                if (eq == std::string::npos)
                    continue;
                const std::string key = trim(std::string_view(line).substr(0, eq));
                const std::string value = trim(std::string_view(line).substr(eq + 1));
                if (key == "include-system-site-packages")
                    includeSystem = value == "true" || value == "True";
                if (key == "version" && version.empty()) {
                    const auto parts = pySplit(value, '.');
                    if (parts.size() >= 2)
                        version = parts[0] + "." + parts[1];
                }
            }
        }
        if (!version.empty())
            sites.push_back(venv / "lib" / ("python" + version) / "site-packages");
    }
    if (!version.empty() && (venv.empty() || includeSystem)) {
        const std::filesystem::path prefix = real.parent_path().parent_path();
        if (venv.empty() && !home.empty())
            sites.push_back(std::filesystem::path(home) / ".local/lib" / ("python" + version) / "site-packages");
        // Debian's layout first (/usr/local/lib/python3.X/dist-packages, /usr/lib/python3/dist-packages), then the
        // upstream one (PREFIX/lib/python3.X/site-packages).
        if (prefix == "/usr")
            sites.push_back(std::filesystem::path("/usr/local/lib") / ("python" + version) / "dist-packages");
        sites.push_back(prefix / "lib/python3/dist-packages");
        sites.push_back(prefix / "lib" / ("python" + version) / "dist-packages");
        sites.push_back(prefix / "lib" / ("python" + version) / "site-packages");
    }

    for (const auto& site : sites) {
        if (!isFolder(site))
            continue;
        auto entries = listFolder(site, 200000);
        if (!entries)
            continue;
        listing.paths.push_back(site);
        std::sort(entries->begin(), entries->end(), [](const auto& a, const auto& b) { return a.name < b.name; });
        for (const auto& entry : *entries) {
            if (endsWithNoCase(entry.name, ".dist-info")) {
                readMetadata(site / entry.name / "METADATA", listing.text);
            } else if (endsWithNoCase(entry.name, ".egg-info")) {
                if (isFolder(site / entry.name))
                    readMetadata(site / entry.name / "PKG-INFO", listing.text);
                else
                    readMetadata(site / entry.name, listing.text);
            }
        }
    }
    return listing;
}

std::string environmentJson(const std::vector<std::string>& environ)
{
    PyJson env = PyJson::object();
    for (const auto& entry : environ) {
        const std::size_t eq = entry.find('=');
        if (eq == std::string::npos || eq == 0)
            continue;
        env[entry.substr(0, eq)] = entry.substr(eq + 1);
    }
    return pyJsonDumps(env);
}

Result<PyJson> collectHyperparameters(const std::vector<std::filesystem::path>& scripts, std::vector<std::string>& notes)
{
    PyJson hyperparameters = PyJson::object();
    // msprobe's YamlParser keeps its dict in a class attribute: every YAML file of a pack adds to the same dict, and
    // each parse returns all of it.
    PyJson yamlAccumulated = PyJson::object();
    for (const auto& script : scripts) {
        if (!isRegularFile(script)) {
            notes.push_back("Warning: Script path " + script.string() + " is not a file.");
            continue;
        }
        const std::string ext = script.extension().string();
        if (ext != ".sh" && ext != ".yaml")
            return makeError("config-check.script", fileLocation(script),
                             script.string() + ": Invalid parser type: '" + ext
                                 + "' (msprobe reads launch scripts .sh and configurations .yaml)");
        auto text = readTextFile(script);
        if (!text)
            return text.error();
        if (ext == ".sh") {
            updateHyperparameters(hyperparameters, parseShellHyperparameters(*text));
        } else {
            if (auto bad = parseYamlHyperparameters(*text, script.string(), yamlAccumulated)) {
                notes.push_back("<class 'YamlParser'> parsing error, skip file path: " + script.string()
                                + ", error: " + bad->message);
                continue;
            }
            updateHyperparameters(hyperparameters, yamlAccumulated);
        }
    }
    return hyperparameters;
}

Result<PackOutcome> writeStaticPack(const PackInputs& inputs, const std::filesystem::path& zipPath)
{
    PackOutcome outcome;
    std::vector<std::pair<std::string, std::string>> entries;
    entries.emplace_back("env", environmentJson(inputs.environ));
    outcome.notes.emplace_back("add env args to zip");
    entries.emplace_back("pip", inputs.pip);
    outcome.notes.emplace_back("add pip info to zip");
    if (!inputs.scripts.empty()) {
        auto hyper = collectHyperparameters(inputs.scripts, outcome.notes);
        if (!hyper)
            return hyper.error();
        if (!hyper->empty()) {
            entries.emplace_back("hyperparameters/hyperparameters_static.json", pyJsonDumps(*hyper));
            outcome.notes.emplace_back("add static hyperparameters args to zip");
        } else {
            std::string list = "[";
            for (std::size_t i = 0; i < inputs.scripts.size(); ++i)
                list += (i ? ", '" : "'") + inputs.scripts[i].string() + "'";
            outcome.notes.push_back("Warning: Failed to extract hyperparameters from script " + list + "]");
        }
    }
    auto written = writeZip(zipPath, entries);
    if (!written)
        return written.error();
    for (const auto& [name, content] : entries)
        outcome.entries.push_back(name);
    return outcome;
}

} // namespace probescope::setupcheck
