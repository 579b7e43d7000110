// SPDX-License-Identifier: Apache-2.0
#pragma once
// The one option parser of probescope-cli's subcommands: each subcommand lists its options as a table.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
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

/// An option as the user gave it: `canonical` is its first spelling in the table (the key of every OptionScope),
/// `typed` the spelling on the command line (what messages show).
struct GivenOption
{
    std::string_view canonical;
    std::string_view typed;
};

/// Parses argv[first..] against `options`, appending the positional words to `positional` and, when `given` is not
/// null, every option met to `given` in command-line order. Returns the first usage error, or nothing.
std::optional<std::string> parseOptions(int argc, char** argv, int first, const std::vector<Option>& options,
                                        const ParseRules& rules, std::vector<std::string_view>& positional,
                                        std::vector<GivenOption>* given = nullptr);

/**
 * @brief The options one command, compare profile or branch (-da) takes (issue 25).
 *
 * Several commands share one parse (msprobe lets options stand before the command word), so what applies is
 * only known afterwards: each command checks the options given against its scope with refuseForeignOptions().
 * An option outside the scope is a usage error that says why, never silently ignored.
 */
struct OptionScope
{
    std::string_view name;                 ///< as messages name it: "info", "compare -da"
    std::vector<std::string_view> accepts; ///< first spellings of the options it takes
    /// Why an option (first spelling) does not apply here, where "X applies to A, not NAME" would not say
    /// enough: { "--xlsx", "info writes no files" }.
    std::vector<std::pair<std::string_view, std::string_view>> reasons;

    bool takes(std::string_view canonical) const;
};

/**
 * @brief The first option in `given` that `scope` does not take, as a usage error message:
 * "--xlsx does not apply to info: info writes no files" when `scope` has a reason for it, else
 * "--exec-order applies to tree, not compare" naming the scopes of `others` that take it.
 */
std::optional<std::string> refuseForeignOptions(const std::vector<GivenOption>& given, const OptionScope& scope,
                                                const std::vector<const OptionScope*>& others = {});

/// A whole decimal number in [lo, hi], or nothing.
std::optional<std::int64_t> intIn(std::string_view text, std::int64_t lo, std::int64_t hi);

} // namespace probescope::cli
