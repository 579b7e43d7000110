// SPDX-License-Identifier: Apache-2.0
#include "core/graph/visconfig.h"

#include "core/util/fileio.h"
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
    auto take = [&](const std::string& npu, const std::string& bench) {
        const auto n = npuTaken.find(npu);
        const auto b = benchTaken.find(bench);
        if (n != npuTaken.end() && n->second == bench)
            return true; // the same match seen from the other side
        if (n != npuTaken.end() || b != benchTaken.end()) {
            out.notes.push_back("\"" + npu + "\": \"" + bench + "\" dropped: "
                                + (n != npuTaken.end() ? "NPU " + npu + " is already matched with " + n->second
                                                       : "bench " + bench + " is already matched with " + b->second));
            return true;
        }
        npuTaken.emplace(npu, bench);
        benchTaken.emplace(bench, npu);
        out.matches.push_back({ npu, bench });
        return true;
    };
    for (std::size_t i = 0; i < config.entries.size(); ++i) {
        const MatchEntry& e = config.entries[i];
        if (isNpu(e.key) && isBench(e.value))
            used[i] = take(e.key, e.value);
    }
    for (std::size_t i = 0; i < config.entries.size(); ++i) {
        const MatchEntry& e = config.entries[i];
        if (isBench(e.key) && isNpu(e.value))
            used[i] = take(e.value, e.key) || used[i];
    }
    for (std::size_t i = 0; i < config.entries.size(); ++i)
        if (!used[i])
            out.notes.push_back("\"" + config.entries[i].key + "\": \"" + config.entries[i].value
                                + "\" dropped: no NPU node and bench node of these names");
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

} // namespace probescope::graph
