// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: dump.json as compare and info read it (entries, names, every leaf, validation),
// then the construct tree built from it.
#include "core/dump/dumpfile.h"
#include "core/dump/leaf.h"
#include "core/dump/rankdump.h"
#include "core/tree/constructtree.h"

#include <cstdint>
#include <string_view>

using namespace probescope;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    auto dump = dump::parseDumpJson(text, "/nonexistent/fuzz/dump.json");
    if (!dump)
        return 0;
    for (const dump::Entry& e : (*dump)->entries) {
        (void)dump::parseEntryName(e.key);
        dump::forEachLeaf(e.value, [](const dump::LeafPath&, dump::JsonValue leaf, dump::LeafKind kind) {
            if (kind == dump::LeafKind::Tensor)
                (void)dump::readTensorLeaf(leaf);
            return true;
        });
    }
    for (const auto& d : (*dump)->diagnostics)
        (void)d.format();
    auto rank = std::make_shared<dump::RankDump>();
    rank->dump = *dump;
    (void)tree::ConstructTree::build(rank);
    return 0;
}
