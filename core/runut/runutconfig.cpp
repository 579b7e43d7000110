// SPDX-License-Identifier: Apache-2.0
// Read with ProbeScope's own JSON reader, as the collector reads config.json: it keeps byte offsets,
// so every error points at the line and column of the value it is about.
#include "core/runut/runutconfig.h"

#include "core/dump/jsondocument.h"
#include "core/util/fileio.h"
#include "core/util/textposition.h"

#include <system_error>

namespace probescope::runut {

using dump::JsonValue;

namespace {

class SectionReader
{
public:
    SectionReader(std::string_view text, std::string file)
        : m_text(text)
        , m_file(std::move(file))
    {
    }

    Result<RunUtConfig> read()
    {
        auto parsed = dump::JsonDocument::parse(m_text, m_file);
        if (!parsed.document) {
            Diagnostic d = parsed.diagnostics.front();
            d.id = "runut.config";
            d.message = "not valid JSON: " + d.message;
            return d;
        }
        const JsonValue root = parsed.document->root();
        if (!root.isObject())
            return error(root, "the configuration must be a JSON object");
        RunUtConfig config;
        std::optional<JsonValue> section;
        for (const char* name : { "run_ut", "acc_check" }) {
            const auto v = root.find(name);
            if (!v)
                continue;
            if (section) {
                config.warnings.push_back(makeWarning("runut.config", where(*v),
                                                      "both \"run_ut\" and \"acc_check\" are present; \"run_ut\" is used"));
                continue;
            }
            if (!v->isObject())
                return error(*v, "\"" + std::string(name) + "\" must be an object");
            section = *v;
            config.section = name;
        }
        if (!section) {
            config.warnings.push_back(makeWarning("runut.config", where(root),
                                                  "no \"run_ut\" section: white_list, black_list and "
                                                  "error_data_path keep their defaults"));
            return config;
        }
        for (std::uint32_t i = 0; i < section->size(); ++i) {
            const std::string_view key = section->keyAt(i);
            const JsonValue v = section->at(i);
            std::optional<Diagnostic> problem;
            if (key == "white_list") {
                problem = names(v, key, config.whiteList);
            } else if (key == "black_list") {
                problem = names(v, key, config.blackList);
            } else if (key == "error_data_path") {
                if (!v.isString())
                    return error(v, "\"error_data_path\" must be a string (a folder path)");
                const std::filesystem::path p(std::string(v.asString()));
                std::error_code ec;
                if (p.empty() || !std::filesystem::exists(p, ec))
                    return error(v, "\"error_data_path\": " + p.string() + " does not exist");
                config.errorDataPath = p;
            } else if (key == "is_online") {
                if (!v.isBool())
                    return error(v, "\"is_online\" must be true or false");
                if (v.asBool())
                    return error(v, "\"is_online\": true (online pre-check) is not supported; run_ut replays a "
                                    "dump.json offline");
            } else if (key == "nfs_path" || key == "host" || key == "tls_path") {
                if (!v.isString())
                    return error(v, "\"" + std::string(key) + "\" must be a string");
                ignoredOnline(config, v, key);
            } else if (key == "port") {
                if (!v.isInt())
                    return error(v, "\"port\" must be an integer");
                ignoredOnline(config, v, key);
            } else if (key == "rank_list") {
                if (!v.isArray())
                    return error(v, "\"rank_list\" must be a list of integers");
                for (std::uint32_t r = 0; r < v.size(); ++r) {
                    if (!v.at(r).isInt() || v.at(r).asInt() < 0)
                        return error(v.at(r), "\"rank_list\" must hold integers >= 0");
                }
                ignoredOnline(config, v, key);
            } else {
                return error(v, "unknown key \"" + std::string(key) + "\" in the \"" + config.section
                                    + "\" section (known: white_list, black_list, error_data_path)");
            }
            if (problem)
                return *problem;
        }
        return config;
    }

private:
    SourceLocation where(const JsonValue& v) const { return locate(m_text, v.offset(), m_file); }

    Diagnostic error(const JsonValue& v, std::string message) const
    {
        return makeError("runut.config", where(v), std::move(message));
    }

    std::optional<Diagnostic> names(const JsonValue& v, std::string_view key, std::vector<ConfigName>& out) const
    {
        if (!v.isArray())
            return error(v, "\"" + std::string(key) + "\" must be a list of API names, e.g. [\"conv2d\"]");
        for (std::uint32_t i = 0; i < v.size(); ++i) {
            const JsonValue e = v.at(i);
            if (!e.isString())
                return error(e, "\"" + std::string(key) + "\" must hold strings (element " + std::to_string(i)
                                    + " is not one)");
            if (e.asString().empty())
                return error(e, "\"" + std::string(key) + "\" holds an empty API name");
            out.push_back({ std::string(e.asString()), where(e) });
        }
        return std::nullopt;
    }

    void ignoredOnline(RunUtConfig& config, const JsonValue& v, std::string_view key) const
    {
        config.warnings.push_back(makeWarning("runut.config-ignored", where(v),
                                              "\"" + std::string(key) + "\" belongs to online pre-check, "
                                                                        "which run_ut here does not do; ignored"));
    }

    std::string_view m_text;
    std::string m_file;
};

} // namespace

Result<RunUtConfig> parseRunUtConfig(std::string_view text, const std::string& fileName)
{
    return SectionReader(text, fileName).read();
}

Result<RunUtConfig> readRunUtConfig(const std::filesystem::path& path)
{
    auto text = readTextFile(path);
    if (!text) {
        Diagnostic d = text.error();
        d.id = "runut.config";
        return d;
    }
    return parseRunUtConfig(*text, path.string());
}

} // namespace probescope::runut
