// SPDX-License-Identifier: Apache-2.0
#include "core/visconfig/visconfig.h"

#include "core/util/fileio.h"
#include "core/util/outputfile.h"
#include "core/util/textposition.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <unordered_map>

namespace probescope::graph {

namespace {

/// The file's entries straight from the SAX events: one pass, one hash lookup per key. (nlohmann::ordered_json
/// finds each key by a linear search: 60,000 keys took 5.7 s.) Python's json.load semantics for a repeated key:
/// the first key's place, the last value. Only a flat object of strings is taken; anything else stops the parse
/// at once, so a deep or huge value costs nothing more.
class EntrySax final : public nlohmann::json_sax<nlohmann::json>
{
public:
    std::vector<MatchEntry> entries;
    std::string problem;                     ///< why the file is not a .vis.config (set: the parse stopped)
    std::optional<std::size_t> errorAt;      ///< byte offset of a JSON syntax error
    std::string syntax;                      ///< its message

    bool null() override { return value("null"); }
    bool boolean(bool) override { return value("boolean"); }
    bool number_integer(number_integer_t) override { return value("number"); }
    bool number_unsigned(number_unsigned_t) override { return value("number"); }
    bool number_float(number_float_t, const string_t&) override { return value("number"); }
    bool binary(binary_t&) override { return value("binary"); }
    bool string(string_t& text) override
    {
        if (m_depth != 1)
            return value("string");
        MatchEntry& e = entries[m_current];
        e.value = std::move(text);
        return true;
    }
    bool start_object(std::size_t) override
    {
        if (m_depth == 0) {
            m_depth = 1;
            return true;
        }
        return value("object");
    }
    bool key(string_t& k) override
    {
        const auto [it, fresh] = m_index.emplace(k, entries.size());
        if (fresh)
            entries.push_back({ std::move(k), std::string() });
        m_current = it->second;
        return true;
    }
    bool end_object() override { return true; }
    bool start_array(std::size_t) override { return value("array"); }
    bool end_array() override { return true; }
    bool parse_error(std::size_t position, const std::string&, const nlohmann::json::exception& e) override
    {
        errorAt = position;
        syntax = e.what();
        if (const auto colon = syntax.rfind(": "); colon != std::string::npos)
            syntax = syntax.substr(colon + 2);
        return false;
    }

private:
    /// A value that is not a node name (or the whole file not an object): the parse stops here.
    bool value(const char* type)
    {
        if (m_depth == 0)
            problem = "a .vis.config holds a JSON object of node names (NPU name: bench name), not a " + std::string(type);
        else
            problem = "the value of \"" + entries[m_current].key + "\" is " + type + ", not a node name";
        return false;
    }
    int m_depth = 0;
    std::size_t m_current = 0;
    std::unordered_map<std::string, std::size_t> m_index;
};

} // namespace

Result<VisConfig> readVisConfig(const std::filesystem::path& path)
{
    const SourceLocation where = fileLocation(path);
    auto text = readTextFile(path);
    if (!text)
        return text.error();
    EntrySax sax;
    // Never throws: every syntax error, a number out of range (1e99999) included, comes to parse_error.
    const bool ok = nlohmann::json::sax_parse(*text, &sax, nlohmann::json::input_format_t::json, true);
    if (sax.errorAt) {
        const std::uint64_t offset = *sax.errorAt > 1 ? *sax.errorAt - 1 : 0;
        return makeError("graph.match-file", locate(*text, offset, path.string()), "not valid JSON: " + sax.syntax);
    }
    if (!sax.problem.empty())
        return makeError("graph.match-file", where, sax.problem);
    if (!ok)
        return makeError("graph.match-file", where, "not valid JSON");
    VisConfig config;
    config.path = path.string();
    config.entries = std::move(sax.entries);
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
        return makeError("graph.output", fileLocation(folder / (stem + ".vis.config")),
                         error);
    return *written;
}

} // namespace probescope::graph
