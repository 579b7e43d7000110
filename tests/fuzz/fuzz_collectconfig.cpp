// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: config.json of the collectors, the C++ API's and the Python module's alike (the module reads
// its config through the same parser, core/collect/config.cpp). Every input ends in a Config or a CollectError
// naming the file, never a crash; and whatever is accepted keeps its bounds (steps and ranks within msprobe's
// 1e6, ranges never expanded).
#include "probescope/collect/config.h"

#include <cstdint>
#include <cstdlib>
#include <string_view>

using namespace probescope::collect;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    try {
        const Config c = parseConfigText(text, "fuzz.json");
        for (const auto* list : { &c.steps, &c.ranks }) {
            for (const std::int64_t v : *list) {
                if (v < 0 || v > kMaxStepOrRank)
                    std::abort();
            }
        }
        for (const auto* ranges : { &c.stepRanges, &c.rankRanges }) {
            for (const auto& [first, last] : *ranges) {
                if (first < 0 || first > last || last > kMaxStepOrRank)
                    std::abort();
            }
        }
        (void)selects(c.steps, c.stepRanges, kMaxStepOrRank);
    } catch (const CollectError& e) {
        if (std::string_view(e.what()).find("fuzz.json") == std::string_view::npos)
            std::abort(); // every error names the file
    }
    return 0;
}
