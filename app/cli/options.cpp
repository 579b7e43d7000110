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
                                        const ParseRules& rules, std::vector<std::string_view>& positional)
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

} // namespace probescope::cli
