// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: the .trend.db reader (msprobe 26 data2db), the input written to a file and opened as a database.
#include "core/graph/trend.h"
#include "fuzzfile.h"

#include <cstdint>

using namespace probescope;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const auto path = fuzz::writeInput("fuzz.trend.db", data, size);
    auto table = graph::readTrendDb(path);
    if (table) {
        for (const graph::TrendTarget& t : (*table)->targets)
            (void)graph::trendModuleOf(t.name);
    } else {
        (void)table.error().format();
    }
    return 0;
}
