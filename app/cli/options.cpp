// SPDX-License-Identifier: Apache-2.0
#include "options.h"

#include <algorithm>
#include <charconv>

namespace probescope::cli {

std::optional<std::int64_t> intIn(std::string_view text, std::int64_t lo, std::int64_t hi)
{
    std::int64_t v = 0;
    const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || ptr != text.data() + text.size() || v < lo || v > hi)
        return std::nullopt;
    return v;
}

std::optional<std::string> parseOptions(int argc, char** argv, int first, const std::vector<Option>& options,
                                        const ParseRules& rules, std::vector<std::string_view>& positional,
                                        std::vector<GivenOption>* given)
{
    for (int i = first; i < argc; ++i) {
        const std::string_view word = argv[i];
        const auto option = std::find_if(options.begin(), options.end(), [&](const Option& o) {
            return std::find(o.names.begin(), o.names.end(), word) != o.names.end();
        });
        if (option == options.end()) {
            if (rules.positionalWords && !(word.size() > 1 && word[0] == '-')) {
                positional.push_back(word);
                continue;
            }
            return "unknown " + std::string(rules.unknownLabel) + " " + std::string(word);
        }
        if (given)
            given->push_back({ option->names.front(), word });
        std::optional<std::string_view> value;
        switch (option->takes) {
        case Option::Takes::Nothing:
            break;
        case Option::Takes::Value:
            if (i + 1 >= argc)
                return std::string(word) + " needs " + std::string(option->needs);
            value = argv[++i];
            break;
        case Option::Takes::OptionalValue:
            if (i + 1 < argc && argv[i + 1][0] != '-' && !(rules.reserved && rules.reserved(argv[i + 1], positional)))
                value = argv[++i];
            break;
        }
        if (auto error = option->apply(word, value))
            return error;
    }
    return std::nullopt;
}

bool OptionScope::takes(std::string_view canonical) const
{
    return std::find(accepts.begin(), accepts.end(), canonical) != accepts.end();
}

std::optional<std::string> refuseForeignOptions(const std::vector<GivenOption>& given, const OptionScope& scope,
                                                const std::vector<const OptionScope*>& others)
{
    for (const GivenOption& g : given) {
        if (scope.takes(g.canonical))
            continue;
        const std::string typed(g.typed);
        const auto reason = std::find_if(scope.reasons.begin(), scope.reasons.end(),
                                         [&](const auto& r) { return r.first == g.canonical; });
        if (reason != scope.reasons.end())
            return typed + " does not apply to " + std::string(scope.name) + ": " + std::string(reason->second);
        std::vector<std::string_view> homes;
        for (const OptionScope* other : others) {
            if (other != &scope && other->takes(g.canonical)
                && std::find(homes.begin(), homes.end(), other->name) == homes.end())
                homes.push_back(other->name);
        }
        if (homes.empty())
            return typed + " does not apply to " + std::string(scope.name);
        std::string where;
        for (std::size_t i = 0; i < homes.size(); ++i) {
            if (i > 0)
                where += i + 1 == homes.size() ? " and " : ", ";
            where += homes[i];
        }
        return typed + " applies to " + where + ", not " + std::string(scope.name);
    }
    return std::nullopt;
}

} // namespace probescope::cli
