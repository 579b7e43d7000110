// SPDX-License-Identifier: Apache-2.0
#pragma once
// The data msprobe 26's config_check compares with (python/msprobe/core/config_check/resource/{env,dependency,
// hyperparameter}.yaml at 8ff00da3), kept as ProbeScope's own tables: their content is data, not code. Each table
// keeps msprobe's order, because the result rows follow it.

#include <optional>
#include <span>
#include <string_view>

namespace probescope::setupcheck {

/// A default value of env.yaml, typed as PyYAML loads it (False is a bool, `None` a string, 0 an int).
struct EnvDefault
{
    enum class Kind { Bool, Text, Int };
    Kind kind;
    std::string_view text; ///< Text
    long long number = 0;  ///< Int; Bool: 0/1
};

struct EnvSide
{
    std::string_view name;
    EnvDefault defaultValue;
};

/// One entry of env.yaml: the NPU variable and its GPU counterpart (either may be absent).
struct EnvEntry
{
    std::string_view key;
    std::optional<EnvSide> npu;
    std::optional<EnvSide> gpu;
};

std::span<const EnvEntry> envTable();

/// dependency.yaml's `dependency` list: the packages whose versions are compared.
std::span<const std::string_view> dependencyTable();

/// hyperparameter.yaml: a standard name and its aliases.
struct AliasEntry
{
    std::string_view standard;
    std::span<const std::string_view> aliases;
};
std::span<const AliasEntry> aliasTable();

} // namespace probescope::setupcheck
