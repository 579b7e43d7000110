// SPDX-License-Identifier: Apache-2.0
#pragma once
// Python's spelling of numbers: one implementation for every writer that must match Python byte for byte
// (the dump writer's json.dump, the compare's CSV cells, the free-benchmark CSV).

#include <array>
#include <cstddef>
#include <string>
#include <string_view>

namespace probescope {

/// A finite double's shortest round-trip decimal digits: value = 0.d1d2...dn x 10^(exponent + 1).
struct ShortestDigits
{
    std::array<char, 20> digits {}; ///< '0'..'9', no '.', the first nonzero unless the value is 0
    std::size_t count = 0;          ///< 1..17
    int exponent = 0;               ///< of the first digit, as in scientific notation
    bool negative = false;
};

/// std::to_chars(v, chars_format::scientific) split into digits and exponent; false only for inf/nan.
bool shortestDigits(double v, ShortestDigits& d);

/// The same split of a text in to_chars' scientific form ("-1.25e-07"); false if it is not one.
bool splitScientific(std::string_view text, ShortestDigits& d);

/// appendPyFloatRepr of a finite value from its shortest digits (the CSV writer's path, one to_chars a cell).
void appendPyReprDigits(std::string& out, const ShortestDigits& d);

/// Appends Python's repr() of a finite or non-finite float: shortest round-trip digits, scientific outside
/// [1e-4, 1e16) ("1e-05", "1.5e+16"), ".0" on integral values ("2.0"); "nan", "inf", "-inf".
void appendPyFloatRepr(std::string& out, double v);

/// pyFloatRepr as a string.
std::string pyFloatRepr(double v);

/// A float as Python's json.dumps writes it: repr, or the tokens NaN, Infinity, -Infinity.
void appendPyJsonFloat(std::string& out, double v);

/// Appends `s` (UTF-8) as Python's json.dumps(ensure_ascii=True) spells a str: quoted, `\"` `\\` `\n` `\r` `\t`
/// `\b` `\f`, everything else outside ' '..'~' as \uXXXX of its code point (UTF-16 surrogate pairs above U+FFFF;
/// invalid UTF-8 bytes as U+FFFD, which is what Python sees after decoding with errors="replace").
void appendPyJsonString(std::string& out, std::string_view s);

} // namespace probescope
