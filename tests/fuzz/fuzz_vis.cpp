// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: the .vis reader (msprobe 1.2.x graph JSON), through readGraphFile as `info` opens it.
#include "core/graph/graphreader.h"
#include "fuzzfile.h"

#include <cstdint>

using namespace probescope;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const auto path = fuzz::writeInput("compare_step0_rank0.vis", data, size);
    auto file = graph::readGraphFile(path);
    if (file) {
        for (const graph::Graph& g : (*file)->graphs) {
            (void)graph::summarize(**file, g);
            for (std::uint32_t n = 0; n < g.nodes.size() && n < 4; ++n)
                (void)graph::parseParams(g.nodes[n].outputData);
        }
    } else {
        (void)file.error().format();
    }
    return 0;
}
