// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace probescope::tensor {

enum class DType : std::uint8_t {
    Bool,
    UInt8,
    Int8,
    Int16,
    Int32,
    Int64,
    Float16,
    BFloat16,
    Float32,
    Float64,
};

/// Accepts the spellings found in dumps: "torch.float32", "Float32" (MindSpore), "float32" (numpy),
/// "torch.half", "torch.long", "BFloat16", "bool", ...
std::optional<DType> parseDType(std::string_view name);
std::size_t dtypeSize(DType dtype);
const char* torchName(DType dtype); ///< "torch.float32"
bool isFloating(DType dtype);

float halfToFloat(std::uint16_t bits);
float bfloat16ToFloat(std::uint16_t bits);
std::uint16_t floatToHalf(float value);     ///< round to nearest even
std::uint16_t floatToBfloat16(float value); ///< round to nearest even

} // namespace probescope::tensor
