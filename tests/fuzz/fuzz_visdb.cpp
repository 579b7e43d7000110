// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: the .vis.db reader (msprobe 8.x / 26.x graph files; docs/reliability.md "Graph files: reader
// bounds"). The input is written to a file and opened as a database, as `info` and the GUI open one: read with and
// without its node data, every graph summarized, a few nodes' data fetched and parsed on demand.
#include "core/graph/graphreader.h"
#include "fuzzfile.h"

#include <cstdint>

using namespace probescope;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const auto path = fuzz::writeInput("fuzz.vis.db", data, size);
    for (const bool nodeData : { true, false }) {
        graph::ReadOptions options;
        options.nodeData = nodeData;
        options.scanConnections = nodeData ? 1 : 3; // the rowid-range split too
        auto file = graph::readVisDb(path, options);
        if (!file)
            continue;
        for (const graph::Graph& g : (*file)->graphs) {
            (void)graph::summarize(**file, g);
            for (std::uint32_t n = 0; n < g.nodes.size() && n < 4; ++n) {
                if (nodeData) {
                    (void)graph::parseParams(g.nodes[n].inputData);
                } else if (auto d = graph::readNodeData(**file, g, n)) {
                    (void)graph::parseParams(d->inputData);
                    (void)graph::parseParams(d->outputData);
                }
            }
        }
    }
    return 0;
}
