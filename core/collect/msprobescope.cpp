// SPDX-License-Identifier: Apache-2.0
#include "msprobescope.h"

#include <algorithm>
#include <array>

namespace probescope::collect {

namespace {

bool isDigits(std::string_view s)
{
    return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

/// The length of the prefix `name` starts with, followed by a dot ("Torch."), or 0.
template<std::size_t N>
std::size_t prefixLength(std::string_view name, const std::array<std::string_view, N>& prefixes)
{
    for (const std::string_view p : prefixes) {
        if (name.size() > p.size() && name.starts_with(p) && name[p.size()] == '.')
            return p.size() + 1;
    }
    return 0;
}

/// Strips ".forward" or ".backward" from the end; false when neither is there.
bool stripDirection(std::string_view& s)
{
    for (const std::string_view d : { std::string_view(".forward"), std::string_view(".backward") }) {
        if (s.ends_with(d)) {
            s.remove_suffix(d.size());
            return true;
        }
    }
    return false;
}

/// Strips ".<digits>" from the end; false when it is not there.
bool stripIndex(std::string_view& s)
{
    const auto dot = s.rfind('.');
    if (dot == std::string_view::npos || !isDigits(s.substr(dot + 1)))
        return false;
    s = s.substr(0, dot);
    return true;
}

} // namespace

// ^(Tensor|Torch|Functional|NPU|VF|Distributed|Aten)\..*\.\d+\.(forward|backward)$, without a regex.
bool MsprobeScope::isApiName(std::string_view name)
{
    static constexpr std::array<std::string_view, 7> kPrefixes { "Tensor", "Torch", "Functional", "NPU", "VF",
                                                                 "Distributed", "Aten" };
    const std::size_t head = prefixLength(name, kPrefixes);
    std::string_view rest = name;
    // What remains after the suffix must still hold the prefix and its dot (the ".*" between may be empty).
    return head > 0 && stripDirection(rest) && stripIndex(rest) && rest.size() >= head;
}

// ^(Cell|Module)\..*\.(forward|backward)\.\d+$
bool MsprobeScope::isModuleName(std::string_view name)
{
    static constexpr std::array<std::string_view, 2> kPrefixes { "Cell", "Module" };
    const std::size_t head = prefixLength(name, kPrefixes);
    std::string_view rest = name;
    return head > 0 && stripIndex(rest) && stripDirection(rest) && rest.size() >= head;
}

MsprobeScope::MsprobeScope(const std::string& where, Level level, std::vector<std::string> scope,
                           std::vector<std::string> list)
    : m_kind(level == Level::Mix ? Kind::Mix : Kind::Api)
    , m_scope(std::move(scope))
    , m_items(std::move(list))
{
    const auto fail = [&](const std::string& message) {
        throw CollectError("collect.config", where + ": error [collect.config]: " + message);
    };
    if (!m_scope.empty() && m_scope.size() != 2)
        fail("\"scope\" must be empty or name two APIs or modules: the first and the last of the range");
    for (const std::string& name : m_scope) {
        const bool api = isApiName(name);
        const bool module = isModuleName(name);
        const bool ok = level == Level::L1 ? api : level == Level::L0 ? module : level == Level::Mix ? api || module : true;
        if (!ok)
            fail("\"scope\": \"" + name + "\" is no full " + (level == Level::L1 ? "API" : "module") + " name of level "
                 + toString(level));
    }
    if (!m_scope.empty() && level != Level::Mix) {
        const auto isModule = [](const std::string& n) {
            const std::string_view first = std::string_view(n).substr(0, n.find('.'));
            return first == "Module" || first == "Cell";
        };
        const bool all = std::all_of(m_scope.begin(), m_scope.end(), isModule);
        const bool any = std::any_of(m_scope.begin(), m_scope.end(), isModule);
        if (all)
            m_kind = Kind::Module;
        else if (any)
            fail("\"scope\": both names must be APIs or both modules");
    }
}

bool MsprobeScope::listed(std::string_view name) const
{
    return m_items.empty() || std::any_of(m_items.begin(), m_items.end(), [&](const std::string& item) {
               return name.find(item) != std::string_view::npos;
           });
}

bool MsprobeScope::check(std::string_view name)
{
    if (m_kind == Kind::Module)
        return m_scope.empty() ? listed(name) : m_inScope && listed(name);
    if (!m_scope.empty() && name == m_scope[0])
        m_inScope = true;
    bool result = false;
    if (m_scope.empty() || m_inScope)
        result = (m_kind == Kind::Mix && m_inList) || listed(name);
    if (!m_scope.empty() && name == m_scope[1])
        m_inScope = false;
    return result;
}

void MsprobeScope::beginModule(std::string_view name)
{
    if (m_kind == Kind::Api)
        return;
    if (!m_scope.empty() && name == m_scope[0])
        m_inScope = true;
    if (m_kind == Kind::Mix) {
        for (const std::string& item : m_items) {
            if (name.find(item) != std::string_view::npos) {
                m_inList = true;
                m_openModules.emplace(name);
            }
        }
    }
}

void MsprobeScope::endModule(std::string_view name)
{
    if (m_kind == Kind::Api)
        return;
    if (!m_scope.empty() && name == m_scope[1])
        m_inScope = false;
    if (m_kind == Kind::Mix) {
        if (const auto it = m_openModules.find(name); it != m_openModules.end())
            m_openModules.erase(it);
        if (m_openModules.empty())
            m_inList = false;
    }
}

} // namespace probescope::collect
