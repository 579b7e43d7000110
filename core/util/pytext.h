// SPDX-License-Identifier: Apache-2.0
#pragma once
// Python's spelling of numbers: one implementation for every writer that must match Python byte for byte
// (the dump writer's json.dump, the compare's CSV cells, the free-benchmark CSV).

#include <string>
#include <string_view>

namespace probescope {

/// Appends Python's repr() of a finite or non-finite float: shortest round-trip digits, scientific outside
/// [1e-4, 1e16) ("1e-05", "1.5e+16"), ".0" on integral values ("2.0"); "nan", "inf", "-inf".
void appendPyFloatRepr(std::string& out, double v);

/// pyFloatRepr as a string.
std::string pyFloatRepr(double v);

/// Appends `s` (UTF-8) as Python's json.dumps(ensure_ascii=True) spells a str: quoted, `\"` `\\` `\n` `\r` `\t`
/// `\b` `\f`, everything else outside ' '..'~' as \uXXXX of its code point (UTF-16 surrogate pairs above U+FFFF;
/// invalid UTF-8 bytes as U+FFFD, which is what Python sees after decoding with errors="replace").
void appendPyJsonString(std::string& out, std::string_view s);

} // namespace probescope
