// SPDX-License-Identifier: Apache-2.0
#include "core/compare/match/mappingutil.h"

#include <algorithm>

namespace probescope::compare {

SourceLocation yamlLocation(const std::filesystem::path& path, const YAML::Mark& mark)
{
    // yaml-cpp uses -1 for "no position" (e.g. for a node it made up).
    const auto oneBased = [](int v) { return v < 0 ? 0u : static_cast<std::uint32_t>(v) + 1; };
    return SourceLocation { path.string(), std::nullopt, oneBased(mark.line), oneBased(mark.column) };
}

Result<YAML::Node> loadYamlFile(const std::filesystem::path& path, std::string_view what)
{
    // yaml-cpp reports problems by exception; they stop here.
    try {
        return YAML::LoadFile(path.string());
    } catch (const YAML::BadFile&) {
        return makeError("compare.mapping", fileLocation(path),
                         "cannot open the " + std::string(what) + " file");
    } catch (const YAML::Exception& e) {
        return makeError("compare.mapping", yamlLocation(path, e.mark), "not valid YAML: " + e.msg);
    }
}

Diagnostic yamlError(const std::filesystem::path& path, const YAML::Node& at, std::string message)
{
    return makeError("compare.mapping", yamlLocation(path, at.Mark()), std::move(message));
}

std::string scalarText(const YAML::Node& node)
{
    return node.IsScalar() ? node.Scalar() : std::string();
}

std::vector<std::string> splitDots(std::string_view name)
{
    std::vector<std::string> out;
    std::size_t start = 0;
    while (true) {
        const std::size_t dot = name.find('.', start);
        if (dot == std::string_view::npos) {
            out.emplace_back(name.substr(start));
            return out;
        }
        out.emplace_back(name.substr(start, dot - start));
        start = dot + 1;
    }
}

std::string joinDots(const std::vector<std::string>& parts, std::size_t begin, std::size_t end)
{
    std::string out;
    end = std::min(end, parts.size());
    for (std::size_t i = begin; i < end; ++i) {
        if (i > begin)
            out += '.';
        out += parts[i];
    }
    return out;
}

std::string replaceAll(std::string s, std::string_view from, std::string_view to)
{
    if (from.empty())
        return s;
    std::size_t pos = 0;
    while ((pos = s.find(from, pos)) != std::string::npos) {
        s.replace(pos, from.size(), to);
        pos += to.size();
    }
    return s;
}

std::string replaceFirst(std::string s, std::string_view from, std::string_view to)
{
    if (const std::size_t pos = s.find(from); !from.empty() && pos != std::string::npos)
        s.replace(pos, from.size(), to);
    return s;
}

} // namespace probescope::compare
