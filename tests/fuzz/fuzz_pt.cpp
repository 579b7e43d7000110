// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: the native .pt reader (zip directory, pickle, storage) on bytes in memory.
#include "core/tensor/ptnative.h"
#include "core/tensor/tensor.h"

#include <cstdint>
#include <string_view>

using namespace probescope;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const std::string_view bytes(reinterpret_cast<const char*>(data), size);
    auto t = tensor::parsePtArchive(bytes, "fuzz.pt");
    if (t)
        (void)tensor::computeStats(*t);
    return 0;
}
