// SPDX-License-Identifier: Apache-2.0
// msprobe 1.2.2's scope and list filters as its Python dumper applies them (its ScopeFactory), for the Python
// module (core/collect/python): which entries are written. LibTorch-free.
#pragma once

#include "probescope/collect/config.h"

#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace probescope::collect {

/**
 * @brief msprobe 1.2.2's scope range and list, asked per entry name in the order msprobe asks.
 *
 * Without scope and list the caller needs none. Level mix: a range of API or module names, and the list,
 * which also opens for everything inside a module whose name holds an item (a module's backward opens it for
 * the rest of the run: msprobe never closes it). Otherwise a range of API names or of module names, and the
 * list. The C++ API's Session (collectorstate.h) has its own rules for its aten entries (names without
 * direction, a mix list that closes): see docs/collect.md.
 */
class MsprobeScope
{
public:
    /// Throws CollectError("collect.config") naming `where` when a scope name is no full name of the level.
    MsprobeScope(const std::string& where, Level level, std::vector<std::string> scope, std::vector<std::string> list);

    /// Whether the entry `name` is written; opens and closes an API range at its ends.
    bool check(std::string_view name);
    /// A module call (forward or backward) begins / ends: module ranges, and mix's list.
    void beginModule(std::string_view name);
    void endModule(std::string_view name);

    /// msprobe's name patterns: "Torch.relu.0.forward" (APIs), "Module.fc1.Linear.forward.0" (modules).
    static bool isApiName(std::string_view name);
    static bool isModuleName(std::string_view name);

private:
    enum class Kind : std::uint8_t { Api, Module, Mix };
    bool listed(std::string_view name) const;

    Kind m_kind = Kind::Api;
    std::vector<std::string> m_scope; ///< empty or [first, last]
    std::vector<std::string> m_items;
    bool m_inScope = false;
    bool m_inList = false;
    std::set<std::string, std::less<>> m_openModules;
};

} // namespace probescope::collect
