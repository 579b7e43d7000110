// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: the JSON document (strict and salvaging), and a walk over every value it built.
#include "core/dump/jsondocument.h"

#include <cstdint>
#include <string_view>

using namespace probescope::dump;

namespace {
std::size_t walk(JsonValue v, int depth)
{
    std::size_t n = 1;
    if (depth > 600)
        return n;
    if (v.isArray() || v.isObject()) {
        for (std::uint32_t i = 0; i < v.size(); ++i) {
            if (v.isObject())
                n += v.keyAt(i).size();
            n += walk(v.at(i), depth + 1);
        }
    } else if (v.isString()) {
        n += v.asString().size();
    }
    return n;
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    for (const bool salvage : { false, true }) {
        JsonParseOptions options;
        options.salvageTruncated = salvage;
        const auto outcome = JsonDocument::parse(text, "fuzz.json", options);
        if (outcome.document)
            (void)walk(outcome.document->root(), 0);
        for (const auto& d : outcome.diagnostics)
            (void)d.format();
    }
    return 0;
}
