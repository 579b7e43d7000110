// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: what `graph` and `compare --match-file` read besides the dumps: a tb_graph_ascend .vis.config
// (resolved against two small node sets, its opposite-direction pairs, the text ProbeScope writes back and read
// again) and msprobe 8.x's graph input JSON (`graph -i`), from the same bytes.
#include "core/graph/graphwriter.h"
#include "core/visconfig/visconfig.h"
#include "fuzzfile.h"

#include <cstdint>
#include <cstdlib>
#include <set>
#include <string>

using namespace probescope;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const auto file = fuzz::writeInput("fuzz.vis.config", data, size);
    if (auto config = graph::readVisConfig(file); config) {
        // Every key is an NPU node and every value a bench node, plus a few of each on the other side: both
        // readings of resolveMatches and its conflict notes are reached.
        std::set<std::string> npu;
        std::set<std::string> bench;
        for (std::size_t i = 0; i < config->entries.size(); ++i) {
            (i % 3 == 2 ? bench : npu).insert(config->entries[i].key);
            (i % 5 == 4 ? npu : bench).insert(config->entries[i].value);
        }
        const auto isNpu = [&](std::string_view s) { return npu.count(std::string(s)) != 0; };
        const auto isBench = [&](std::string_view s) { return bench.count(std::string(s)) != 0; };
        const graph::ResolvedMatches resolved = graph::resolveMatches(*config, isNpu, isBench);
        const auto all = graph::withOpposites(resolved.matches, isNpu, isBench);
        // What ProbeScope writes must read back as the same matches, in order.
        const std::string text = graph::visConfigText(all);
        const auto back = fuzz::writeInput("back.vis.config", reinterpret_cast<const std::uint8_t*>(text.data()), text.size());
        auto again = graph::readVisConfig(back);
        if (!again || again->entries.size() != all.size())
            std::abort();
        for (std::size_t i = 0; i < all.size(); ++i)
            if (again->entries[i].key != all[i].npu || again->entries[i].value != all[i].bench)
                std::abort();
    }
    const auto input = fuzz::writeInput("graph.json", data, size);
    (void)graph::readGraphInputJson(input);
    return 0;
}
