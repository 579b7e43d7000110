// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: the .npy reader.
#include "fuzzfile.h"
#include "core/tensor/tensor.h"

#include <cstdint>

using namespace probescope;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const auto path = fuzz::writeInput("fuzz.npy", data, size);
    auto t = tensor::loadNpy(path);
    if (t)
        (void)tensor::computeStats(*t);
    return 0;
}
