// SPDX-License-Identifier: Apache-2.0
#pragma once
// The one option parser of probescope-cli's subcommands: each subcommand lists its options as a table.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace probescope::cli {

/// One option of a subcommand: its spellings, whether it takes a value, and what to do with it.
struct Option
{
    enum class Takes : std::uint8_t {
        Nothing,       ///< a flag
        Value,         ///< the next word, always
        OptionalValue, ///< msprobe's nargs='?': the next word unless it is an option or a reserved word
    };
    std::vector<std::string_view> names;
    Takes takes = Takes::Nothing;
    /// What the value is, for the message when it is missing: "-o needs a path".
    std::string_view needs;
    /// Applies the option (`name` as typed; `value` absent for flags and an OptionalValue without one).
    /// Returns a usage error message, or nothing.
    std::function<std::optional<std::string>(std::string_view name, std::optional<std::string_view> value)> apply;
};

struct ParseRules
{
    /// "unknown {unknownLabel} X" for a word starting with '-' that no option names ("option", "run-ut option").
    std::string_view unknownLabel = "option";
    /// Whether words that are not options are positional (else they are unknown options too).
    bool positionalWords = true;
    /// A word an OptionalValue must not take as its value, given the positional words so far (the command name).
    std::function<bool(std::string_view word, const std::vector<std::string_view>& positional)> reserved;
};

/// Parses argv[first..] against `options`, appending the positional words to `positional`. Returns the first
/// usage error, or nothing.
std::optional<std::string> parseOptions(int argc, char** argv, int first, const std::vector<Option>& options,
                                        const ParseRules& rules, std::vector<std::string_view>& positional);

/// A whole decimal number in [lo, hi], or nothing.
std::optional<std::int64_t> intIn(std::string_view text, std::int64_t lo, std::int64_t hi);

} // namespace probescope::cli
