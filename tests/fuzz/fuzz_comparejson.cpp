// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: msprobe's compare.json input file.
#include "core/compare/pipeline/comparerun.h"
#include "fuzzfile.h"

#include <cstdint>

using namespace probescope;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const auto path = fuzz::writeInput("compare.json", data, size);
    auto input = compare::readCompareJson(path);
    if (!input)
        (void)input.error().format();
    return 0;
}
