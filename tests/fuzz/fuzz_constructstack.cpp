// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: construct.json and stack.json (both forms) from the same bytes.
#include "core/dump/rankdump.h"
#include "fuzzfile.h"

#include <cstdint>

using namespace probescope;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const auto construct = fuzz::writeInput("construct.json", data, size);
    if (auto c = dump::readConstructJson(construct); c) {
        for (const auto& [key, parent] : c->links)
            (void)c->parent(key);
    }
    const auto stack = fuzz::writeInput("stack.json", data, size);
    if (auto s = dump::readStackJson(stack); s) {
        for (std::size_t i = 0; i < s->framesOf.size(); ++i)
            (void)s->frames(s->framesOf.keyAt(i));
    }
    return 0;
}
