// SPDX-License-Identifier: Apache-2.0
// Python's str(dtype) for LibTorch scalar types, shared by the dump leaves and free_benchmark.csv.
#pragma once

#include <c10/core/ScalarType.h>

namespace probescope::collect {

inline const char* torchDtypeName(c10::ScalarType t)
{
    switch (t) {
    case c10::kFloat: return "torch.float32";
    case c10::kDouble: return "torch.float64";
    case c10::kHalf: return "torch.float16";
    case c10::kBFloat16: return "torch.bfloat16";
    case c10::kLong: return "torch.int64";
    case c10::kInt: return "torch.int32";
    case c10::kShort: return "torch.int16";
    case c10::kChar: return "torch.int8";
    case c10::kByte: return "torch.uint8";
    case c10::kBool: return "torch.bool";
    case c10::kComplexFloat: return "torch.complex64";
    case c10::kComplexDouble: return "torch.complex128";
    default: return "torch.unknown";
    }
}

} // namespace probescope::collect
