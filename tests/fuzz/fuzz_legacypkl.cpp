// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: the ptdbg_ascend .pkl reader (JSON lines), without its .npy folder.
#include "core/dump/dumpfile.h"
#include "fuzzfile.h"

#include <cstdint>

using namespace probescope;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const auto path = fuzz::writeInput("fuzz.pkl", data, size);
    auto dump = dump::readLegacyPkl(path);
    if (dump) {
        for (const auto& d : (*dump)->diagnostics)
            (void)d.format();
    }
    return 0;
}
