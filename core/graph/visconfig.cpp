// SPDX-License-Identifier: Apache-2.0
#include "core/graph/visconfig.h"

#include "core/util/fileio.h"
#include "core/util/outputfile.h"
#include "core/util/textposition.h"

#include <nlohmann/json.hpp>

#include <unordered_map>

namespace probescope::graph {

Result<VisConfig> readVisConfig(const std::filesystem::path& path)
{
    const SourceLocation where { path.string(), std::nullopt, 0, 0 };
    auto text = readTextFile(path);
    if (!text)
        return text.error();
    nlohmann::ordered_json j;
    try {
        j = nlohmann::ordered_json::parse(*text);
    } catch (const nlohmann::json::parse_error& e) {
        const std::uint64_t offset = e.byte > 1 ? e.byte - 1 : 0;
        std::string message = e.what();
        if (const auto colon = message.rfind(": "); colon != std::string::npos)
            message = message.substr(colon + 2);
        return makeError("graph.match-file", locate(*text, offset, path.string()), "not valid JSON: " + message);
    }
    if (!j.is_object())
        return makeError("graph.match-file", where, "a .vis.config holds a JSON object of node names (NPU name: bench name)");
    VisConfig config;
    config.path = path.string();
    for (const auto& [key, value] : j.items()) {
        if (!value.is_string())
            return makeError("graph.match-file", where,
                             "the value of \"" + key + "\" is " + value.type_name() + ", not a node name");
        config.entries.push_back({ key, value.get<std::string>() });
    }
    return config;
}

ResolvedMatches resolveMatches(const VisConfig& config, const std::function<bool(std::string_view)>& isNpu,
                               const std::function<bool(std::string_view)>& isBench)
{
    ResolvedMatches out;
    std::unordered_map<std::string, std::string> npuTaken;   // npu -> bench
    std::unordered_map<std::string, std::string> benchTaken; // bench -> npu
    std::vector<bool> used(config.entries.size(), false);
    std::vector<std::string> conflict(config.entries.size());
    // A reading of entry i: takes the pair, or finds it taken already (the same match from the other side:
    // the entry is used), or finds one of its nodes paired with another node (remembered as the reason).
    auto take = [&](std::size_t i, const std::string& npu, const std::string& bench) {
        const auto n = npuTaken.find(npu);
        const auto b = benchTaken.find(bench);
        if (n != npuTaken.end() && n->second == bench) {
            used[i] = true;
            return;
        }
        if (n != npuTaken.end() || b != benchTaken.end()) {
            conflict[i] = n != npuTaken.end() ? "NPU " + npu + " is already matched with " + n->second
                                              : "bench " + bench + " is already matched with " + b->second;
            return;
        }
        npuTaken.emplace(npu, bench);
        benchTaken.emplace(bench, npu);
        out.matches.push_back({ npu, bench });
        used[i] = true;
    };
    for (std::size_t i = 0; i < config.entries.size(); ++i)
        if (isNpu(config.entries[i].key) && isBench(config.entries[i].value))
            take(i, config.entries[i].key, config.entries[i].value);
    // An entry gives one match at most: the Bench-row reading is for entries the NPU reading did not use. (Else the
    // one entry "relu.1": "relu.0" between two dumps that both have relu.0 and relu.1 would also pair NPU relu.0 with
    // bench relu.1, a match nobody made.)
    for (std::size_t i = 0; i < config.entries.size(); ++i)
        if (!used[i] && isBench(config.entries[i].key) && isNpu(config.entries[i].value))
            take(i, config.entries[i].value, config.entries[i].key);
    for (std::size_t i = 0; i < config.entries.size(); ++i) {
        if (used[i])
            continue;
        const MatchEntry& e = config.entries[i];
        // A stale name (the model changed since the file was saved) says which side lacks it.
        std::string reason = conflict[i];
        if (reason.empty() && !isNpu(e.key) && !isBench(e.key))
            reason = "neither side has a node " + e.key;
        else if (reason.empty() && !isNpu(e.value) && !isBench(e.value))
            reason = "neither side has a node " + e.value;
        else if (reason.empty())
            reason = "no NPU node and bench node of these names";
        out.notes.push_back("\"" + e.key + "\": \"" + e.value + "\" dropped: " + reason);
    }
    return out;
}

std::string visConfigText(const std::vector<NodeMatch>& matches)
{
    // json.dump(data, f, ensure_ascii=False, indent=4): "{\n    \"k\": \"v\",\n ...\n}", "{}" when empty.
    if (matches.empty())
        return "{}";
    std::string out = "{\n";
    for (std::size_t i = 0; i < matches.size(); ++i) {
        out += "    " + nlohmann::json(matches[i].npu).dump() + ": " + nlohmann::json(matches[i].bench).dump();
        out += i + 1 < matches.size() ? ",\n" : "\n";
    }
    out += "}";
    return out;
}

std::string oppositeName(std::string_view name)
{
    auto replaceAll = [](std::string s, std::string_view from, std::string_view to) {
        for (std::size_t at = 0; (at = s.find(from, at)) != std::string::npos; at += to.size())
            s.replace(at, from.size(), to);
        return s;
    };
    const std::string text(name);
    if (text.find("forward") != std::string::npos)
        return replaceAll(text, "forward", "backward");
    return replaceAll(text, "backward", "forward");
}

std::vector<NodeMatch> withOpposites(const std::vector<NodeMatch>& matches,
                                     const std::function<bool(std::string_view)>& isNpu,
                                     const std::function<bool(std::string_view)>& isBench)
{
    std::vector<NodeMatch> out = matches;
    std::unordered_map<std::string, std::string> npuTaken;
    std::unordered_map<std::string, std::string> benchTaken;
    for (const NodeMatch& m : matches) {
        npuTaken.emplace(m.npu, m.bench);
        benchTaken.emplace(m.bench, m.npu);
    }
    for (const NodeMatch& m : matches) {
        NodeMatch o { oppositeName(m.npu), oppositeName(m.bench) };
        if (o.npu == m.npu || !isNpu(o.npu) || !isBench(o.bench) || npuTaken.count(o.npu) || benchTaken.count(o.bench))
            continue;
        npuTaken.emplace(o.npu, o.bench);
        benchTaken.emplace(o.bench, o.npu);
        out.push_back(std::move(o));
    }
    return out;
}

Result<std::filesystem::path> writeVisConfig(const std::filesystem::path& folder, std::string_view tag, std::int64_t step,
                                             std::int64_t rank, const std::vector<NodeMatch>& matches)
{
    std::string error;
    const std::string stem = std::string(tag) + "_" + std::to_string(step) + "_" + std::to_string(rank);
    auto written = writeToFreeName(folder, stem, ".vis.config", visConfigText(matches), error);
    if (!written)
        return makeError("graph.output", SourceLocation { (folder / (stem + ".vis.config")).string(), std::nullopt, 0, 0 },
                         error);
    return *written;
}

} // namespace probescope::graph
