// SPDX-License-Identifier: Apache-2.0
#pragma once
// JSON as Python's json module reads and writes it, for config_check packs: objects keep their key order (a dict),
// a repeated key keeps its first place and its last value, the tokens NaN, Infinity and -Infinity are numbers, and
// json.dumps(indent=4) is reproduced byte for byte (ensure_ascii, repr() of floats).

#include "core/compare/output/xlsxwriter.h"
#include "core/util/diagnostic.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace probescope::setupcheck {

using PyJson = nlohmann::ordered_json;

/// Parses JSON text as json.loads does; errors (id `config-check.json`) name `file` and the byte offset.
Result<PyJson> parsePyJson(std::string_view text, const std::string& file);
/// Reads (through the gate) and parses a JSON file.
Result<PyJson> loadPyJson(const std::filesystem::path& path);

/// json.dumps(value, indent=4) of Python.
std::string pyJsonDumps(const PyJson& value);

/// The number a JSON value is in Python (int, float, bool, NaN/Infinity tokens); nullopt for other types.
std::optional<double> pyNumber(const PyJson& value);
/// Python's `a == b` for values loaded by json.load (1 == 1.0 == True, NaN != NaN, deep for lists and dicts).
bool pyEqual(const PyJson& a, const PyJson& b);
/// Python's str() of the loaded value ("True", "None", "1.5e-06", "['a', 1]", "{'k': 2}").
std::string pyStr(const PyJson& value);
/// Is this value a Python int or float (bool included, as isinstance(x, (int, float)) counts it)?
bool isPyNumber(const PyJson& value);

/// The xlsx cell pandas/openpyxl writes for the value (None and NaN empty; a list or dict as its str()).
compare::XlsxSheetCell pyCell(const PyJson& value);

} // namespace probescope::setupcheck
