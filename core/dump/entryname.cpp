// SPDX-License-Identifier: Apache-2.0
#include "core/dump/entryname.h"

#include <charconv>
#include <optional>
#include <vector>

namespace probescope::dump {

namespace {

std::vector<std::string_view> splitDots(std::string_view key)
{
    std::vector<std::string_view> parts;
    std::size_t start = 0;
    while (true) {
        const std::size_t dot = key.find('.', start);
        if (dot == std::string_view::npos) {
            parts.push_back(key.substr(start));
            return parts;
        }
        parts.push_back(key.substr(start, dot - start));
        start = dot + 1;
    }
}

std::optional<std::int64_t> toIndex(std::string_view s)
{
    if (s.empty() || s.size() > 18)
        return std::nullopt;
    std::int64_t v = 0;
    const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || ptr != s.data() + s.size() || v < 0)
        return std::nullopt;
    return v;
}

// A view spanning parts[first..last] of the original key (the parts are views into it).
std::string_view span(const std::vector<std::string_view>& parts, std::size_t first, std::size_t last)
{
    if (first > last || last >= parts.size())
        return {};
    const char* begin = parts[first].data();
    const char* end = parts[last].data() + parts[last].size();
    return std::string_view(begin, static_cast<std::size_t>(end - begin));
}

bool isModulePrefix(std::string_view p)
{
    return p == "Module" || p == "Cell";
}

Direction directionOf(std::string_view s)
{
    if (s == "forward")
        return Direction::Forward;
    if (s == "backward")
        return Direction::Backward;
    return Direction::None;
}

void splitModule(EntryName& name)
{
    const std::size_t dot = name.opName.rfind('.');
    if (dot == std::string_view::npos) {
        name.moduleClass = name.opName;
        return;
    }
    name.modulePath = name.opName.substr(0, dot);
    name.moduleClass = name.opName.substr(dot + 1);
}

// ptdbg_ascend: Functional_conv2d_0_forward, Tensor___add___1_backward.
EntryName parseLegacy(std::string_view key)
{
    EntryName name;
    Direction dir = Direction::None;
    std::string_view rest;
    if (key.size() > 8 && key.substr(key.size() - 8) == "_forward") {
        dir = Direction::Forward;
        rest = key.substr(0, key.size() - 8);
    } else if (key.size() > 9 && key.substr(key.size() - 9) == "_backward") {
        dir = Direction::Backward;
        rest = key.substr(0, key.size() - 9);
    } else {
        return name;
    }
    const std::size_t lastUnderscore = rest.rfind('_');
    const std::size_t firstUnderscore = rest.find('_');
    if (lastUnderscore == std::string_view::npos || firstUnderscore == lastUnderscore)
        return name;
    const auto index = toIndex(rest.substr(lastUnderscore + 1));
    if (!index)
        return name;
    name.kind = EntryKind::Legacy;
    name.direction = dir;
    name.prefix = rest.substr(0, firstUnderscore);
    name.opName = rest.substr(firstUnderscore + 1, lastUnderscore - firstUnderscore - 1);
    name.callIndex = *index;
    return name;
}

EntryName parseDotted(std::string_view key);

} // namespace

EntryName parseEntryName(std::string_view key)
{
    if (key.find('.') == std::string_view::npos)
        return parseLegacy(key);
    EntryName dotted = parseDotted(key);
    // ptdbg's Aten names hold dots inside the op ("Aten__native_batch_norm_legit_functional.default_0_forward").
    if (dotted.kind == EntryKind::Unknown)
        return parseLegacy(key);
    return dotted;
}

namespace {
EntryName parseDotted(std::string_view key)
{
    EntryName name;
    const auto parts = splitDots(key);
    const std::size_t n = parts.size();

    // debug.json: {variable}[_grad].{count}.debug — the variable name may itself hold dots.
    if (n >= 3 && parts[n - 1] == "debug") {
        if (const auto count = toIndex(parts[n - 2])) {
            name.kind = EntryKind::Debug;
            name.callIndex = *count;
            name.opName = span(parts, 0, n - 3);
            if (name.opName.size() > 5 && name.opName.substr(name.opName.size() - 5) == "_grad") {
                name.gradFlag = true;
                name.direction = Direction::Backward;
                name.opName.remove_suffix(5);
            } else {
                name.direction = Direction::Forward;
            }
            return name;
        }
    }

    // parameters_grad as the last (old form) or second-to-last segment (Module.x.Cls.parameters_grad.N).
    for (std::size_t at : { n - 1, n >= 2 ? n - 2 : n - 1 }) {
        if (n >= 3 && parts[at] == "parameters_grad" && at >= 2) {
            if (at == n - 2 && !toIndex(parts[n - 1]))
                continue;
            name.kind = EntryKind::ParametersGrad;
            name.direction = Direction::Backward;
            name.prefix = parts[0];
            name.opName = span(parts, 1, at - 1);
            name.callIndex = at == n - 2 ? *toIndex(parts[n - 1]) : -1;
            splitModule(name);
            return name;
        }
    }

    if (n >= 4) {
        // Module.{path}.{Class}.{forward|backward}.{n}
        const Direction moduleDir = directionOf(parts[n - 2]);
        const auto moduleIndex = toIndex(parts[n - 1]);
        if (moduleDir != Direction::None && moduleIndex && isModulePrefix(parts[0])) {
            name.kind = EntryKind::Module;
            name.direction = moduleDir;
            name.prefix = parts[0];
            name.opName = span(parts, 1, n - 3);
            name.callIndex = *moduleIndex;
            splitModule(name);
            return name;
        }
    }
    if (n >= 4) {
        // {Prefix}.{api}.{n}.{forward|backward}
        const Direction apiDir = directionOf(parts[n - 1]);
        const auto apiIndex = toIndex(parts[n - 2]);
        if (apiDir != Direction::None && apiIndex) {
            name.kind = EntryKind::Api;
            name.direction = apiDir;
            name.prefix = parts[0];
            name.opName = span(parts, 1, n - 3);
            name.callIndex = *apiIndex;
            return name;
        }
    }
    return name;
}
} // namespace

std::string EntryName::stem() const
{
    if (kind == EntryKind::Debug)
        return std::string(opName);
    if (prefix.empty())
        return std::string(opName);
    return std::string(prefix) + (kind == EntryKind::Legacy ? "_" : ".") + std::string(opName);
}

std::string counterpartKey(const EntryName& name, Direction direction)
{
    const char* dir = direction == Direction::Forward ? "forward" : "backward";
    const std::string index = std::to_string(name.callIndex < 0 ? 0 : name.callIndex);
    switch (name.kind) {
    case EntryKind::Api:
        return name.stem() + "." + index + "." + dir;
    case EntryKind::Module:
    case EntryKind::ParametersGrad:
        return name.stem() + "." + dir + "." + index;
    case EntryKind::Legacy:
        return name.stem() + "_" + index + "_" + dir;
    case EntryKind::Debug:
    case EntryKind::Unknown:
        break;
    }
    return {};
}

const char* toString(EntryKind kind)
{
    switch (kind) {
    case EntryKind::Api: return "api";
    case EntryKind::Module: return "module";
    case EntryKind::ParametersGrad: return "parameters_grad";
    case EntryKind::Debug: return "debug";
    case EntryKind::Legacy: return "legacy-api";
    case EntryKind::Unknown: return "unknown";
    }
    return "unknown";
}

const char* toString(Direction direction)
{
    switch (direction) {
    case Direction::None: return "none";
    case Direction::Forward: return "forward";
    case Direction::Backward: return "backward";
    }
    return "none";
}

} // namespace probescope::dump
