// SPDX-License-Identifier: Apache-2.0
#include "core/tensor/dtype.h"

#include <bit>
#include <cmath>

namespace probescope::tensor {

namespace {

struct DTypeName
{
    std::string_view name;
    DType dtype;
    bool torchOnly = false; ///< "float" is float64 and "int" int64 to numpy, so only torch's meaning is taken
};

// Lower-case spellings after any "torch." / "mindspore." / "numpy." / "np." prefix is removed.
// MindSpore writes "Float32", numpy "float32", torch "torch.float32" and its aliases ("torch.half").
constexpr DTypeName kNames[] = {
    { "bool", DType::Bool },
    { "bool_", DType::Bool },
    { "uint8", DType::UInt8 },
    { "int8", DType::Int8 },
    { "int16", DType::Int16 },
    { "short", DType::Int16 },
    { "int32", DType::Int32 },
    { "int", DType::Int32, true },
    { "int64", DType::Int64 },
    { "long", DType::Int64, true },
    { "float16", DType::Float16 },
    { "half", DType::Float16 },
    { "bfloat16", DType::BFloat16 },
    { "float32", DType::Float32 },
    { "float", DType::Float32, true },
    { "float64", DType::Float64 },
    { "double", DType::Float64 },
};

bool equalsIgnoringCase(std::string_view a, std::string_view b)
{
    if (a.size() != b.size())
        return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
        char ca = a[i];
        if (ca >= 'A' && ca <= 'Z')
            ca = static_cast<char>(ca - 'A' + 'a');
        if (ca != b[i])
            return false;
    }
    return true;
}

bool startsWithIgnoringCase(std::string_view text, std::string_view prefix)
{
    return text.size() >= prefix.size() && equalsIgnoringCase(text.substr(0, prefix.size()), prefix);
}

} // namespace

std::optional<DType> parseDType(std::string_view name)
{
    while (!name.empty() && (name.front() == ' ' || name.front() == '\t'))
        name.remove_prefix(1);
    while (!name.empty() && (name.back() == ' ' || name.back() == '\t'))
        name.remove_suffix(1);
    bool torchPrefix = false;
    for (std::string_view prefix : { "torch.", "mindspore.", "numpy.", "np.", "ms." }) {
        if (startsWithIgnoringCase(name, prefix)) {
            torchPrefix = prefix == "torch.";
            name.remove_prefix(prefix.size());
            break;
        }
    }
    for (const DTypeName& entry : kNames) {
        if (equalsIgnoringCase(name, entry.name) && (!entry.torchOnly || torchPrefix))
            return entry.dtype;
    }
    return std::nullopt;
}

std::size_t dtypeSize(DType dtype)
{
    switch (dtype) {
    case DType::Bool:
    case DType::UInt8:
    case DType::Int8:
        return 1;
    case DType::Int16:
    case DType::Float16:
    case DType::BFloat16:
        return 2;
    case DType::Int32:
    case DType::Float32:
        return 4;
    case DType::Int64:
    case DType::Float64:
        return 8;
    }
    return 1;
}

const char* torchName(DType dtype)
{
    switch (dtype) {
    case DType::Bool:
        return "torch.bool";
    case DType::UInt8:
        return "torch.uint8";
    case DType::Int8:
        return "torch.int8";
    case DType::Int16:
        return "torch.int16";
    case DType::Int32:
        return "torch.int32";
    case DType::Int64:
        return "torch.int64";
    case DType::Float16:
        return "torch.float16";
    case DType::BFloat16:
        return "torch.bfloat16";
    case DType::Float32:
        return "torch.float32";
    case DType::Float64:
        return "torch.float64";
    }
    return "torch.unknown";
}

bool isFloating(DType dtype)
{
    return dtype == DType::Float16 || dtype == DType::BFloat16 || dtype == DType::Float32
        || dtype == DType::Float64;
}

float halfToFloat(std::uint16_t bits)
{
    const std::uint32_t sign = static_cast<std::uint32_t>(bits & 0x8000u) << 16;
    const std::uint32_t exponent = (bits >> 10) & 0x1Fu;
    const std::uint32_t mantissa = bits & 0x3FFu;
    if (exponent == 0) {
        // Zero or subnormal: mantissa * 2^-24 is exact in float (10 significant bits at most).
        const float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
        return sign ? -magnitude : magnitude;
    }
    if (exponent == 0x1F) // infinity, or NaN with its payload kept in the top mantissa bits
        return std::bit_cast<float>(sign | 0x7F800000u | (mantissa << 13));
    return std::bit_cast<float>(sign | ((exponent + 127 - 15) << 23) | (mantissa << 13));
}

float bfloat16ToFloat(std::uint16_t bits)
{
    // bfloat16 is the top half of a float32, so widening is a shift.
    return std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16);
}

std::uint16_t floatToHalf(float value)
{
    const std::uint32_t x = std::bit_cast<std::uint32_t>(value);
    const auto sign = static_cast<std::uint16_t>((x >> 16) & 0x8000u);
    const std::uint32_t exponent = (x >> 23) & 0xFFu;
    const std::uint32_t mantissa = x & 0x7FFFFFu;

    if (exponent == 0xFF) {
        if (mantissa == 0)
            return sign | 0x7C00u;
        // Keep as much payload as fits but always set the quiet bit so a NaN never becomes infinity.
        return static_cast<std::uint16_t>(sign | 0x7E00u | (mantissa >> 13));
    }
    if (exponent >= 143) // 2^16 and above overflow half's largest finite value even before rounding
        return sign | 0x7C00u;
    if (exponent >= 113) {
        // Normal half. A rounding carry out of the mantissa correctly bumps the exponent,
        // and from the largest binade into 0x7C00 (infinity).
        std::uint32_t h = ((exponent - 112) << 10) | (mantissa >> 13);
        const std::uint32_t rest = mantissa & 0x1FFFu;
        if (rest > 0x1000u || (rest == 0x1000u && (h & 1u)))
            ++h;
        return static_cast<std::uint16_t>(sign | h);
    }
    if (exponent < 102) // below 2^-25, half of the smallest subnormal: rounds to zero
        return sign;
    // Subnormal half: the value in units of 2^-24 is (1.mantissa) >> (126 - exponent).
    const std::uint32_t full = mantissa | 0x800000u;
    const std::uint32_t shift = 126 - exponent; // 14..24
    std::uint32_t h = full >> shift;
    const std::uint32_t rest = full & ((1u << shift) - 1u);
    const std::uint32_t halfway = 1u << (shift - 1);
    if (rest > halfway || (rest == halfway && (h & 1u)))
        ++h; // may carry into 0x400, the smallest normal, which is the right encoding
    return static_cast<std::uint16_t>(sign | h);
}

std::uint16_t floatToBfloat16(float value)
{
    const std::uint32_t x = std::bit_cast<std::uint32_t>(value);
    if ((x & 0x7F800000u) == 0x7F800000u && (x & 0x7FFFFFu) != 0) {
        // Rounding could carry a NaN with only low payload bits into infinity; force the quiet bit.
        return static_cast<std::uint16_t>((x >> 16) | 0x0040u);
    }
    const std::uint32_t roundingBias = 0x7FFFu + ((x >> 16) & 1u);
    return static_cast<std::uint16_t>((x + roundingBias) >> 16);
}

} // namespace probescope::tensor
