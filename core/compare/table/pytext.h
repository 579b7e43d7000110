// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/compare/table/cell.h"
#include "core/compare/table/cellrows.h"
#include "core/dump/jsondocument.h"
#include "core/util/pytext.h"

#include <optional>
#include <string>
#include <string_view>

namespace probescope::compare {

/// Python's repr(float) (util/pytext.h, shared with the dump writer): "inf", "nan", "1e-05", "2.0".
using probescope::pyFloatRepr;

/// Python's bool() of a value loaded by json.load: None, False, 0, 0.0, "" and empty containers are false.
bool pyTruthy(dump::JsonValue v);

/// Python's str() of a value loaded by json.load: str verbatim at top level, repr inside containers
/// ('a'), None/True/False, ints, float repr, lists "[1, None]", dicts "{'k': 1}". A key repeated in an
/// object shows once, at its first position with its last value, as in the dict json.load builds.
std::string pyStr(dump::JsonValue v);

/// Python's repr() of a value loaded by json.load (like pyStr, but a top-level str is quoted too).
std::string pyRepr(dump::JsonValue v);

/// Python's str() of a cell's value: None, True/False, ints, float repr, strings and PyText verbatim.
std::string pyStr(const Cell& cell);

/// Python's str(int(v)) for a whole-valued double: every digit, exactly (2**80 → 1208925819614629174706176).
/// A fractional part is dropped; inf/nan give "inf"/"-inf"/"nan".
std::string integralDoubleText(double v);

/// Name of the Python type json.load gives a value ("int", "float", "str", "list", "dict", "bool";
/// "NoneType" for null or an absent value).
const char* pyTypeName(std::optional<dump::JsonValue> v);

/// numpy's shape text of np.array(v) for a flat list: "(3,)"; "()" for anything else or no value.
std::string numpyShapeText(std::optional<dump::JsonValue> v);

/// Python's repr of a str ('text', or "it's" when it holds a single quote but no double quote).
/// Escapes \\ \n \r \t, \xNN for other control characters and \x/\u/\U for non-printable code points
/// (C1 controls, Unicode separators, format and private-use characters); other UTF-8 is kept. Python's
/// full Unicode table is not reproduced: unassigned code points are kept as they are.
std::string pyStrRepr(std::string_view s);

/// float('{:.12f}'.format(x)) — msprobe's metric rounding.
double fmt12(double x);
/// Python round(x, 6) (correctly rounded, half to even on the exact binary value).
double round6(double x);

/// The text a cell shows in msprobe's xlsx read back with pandas (see docs): numbers as openpyxl's
/// "%.16g" parsed back, whole values printed as integers; inf/-inf/nan floats and the strings "inf",
/// "-inf", "nan" followed by a TAB; None/True/False as Python prints them; strings verbatim.
/// (A double so close to DBL_MAX that "%.16g" overflows, which crashes pandas, gives "inf".)
std::string excelText(const Cell& cell);
/// excelText appended to `out`, without allocating (the CSV writer's path).
void appendExcelText(std::string& out, const CellView& cell);
/// The texts that excelText follows with a TAB: "inf", "-inf", "nan".
bool isPyNonFiniteText(std::string_view s);

} // namespace probescope::compare
