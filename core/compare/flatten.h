// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/compare/cell.h"
#include "core/dump/dumpfile.h"
#include "core/util/diagnostic.h"

#include <array>
#include <optional>
#include <string>
#include <vector>

namespace probescope::compare {

enum class CompareMode : std::uint8_t {
    RealData, ///< task tensor ("ALL")
    Summary,  ///< task statistics
    Md5,      ///< task statistics with summary_mode md5
};

/// A row's category, from its row name (msprobe 1.2.2: kwargs count as input).
enum class RowCategory : std::uint8_t { Input = 0, Parameters = 1, Output = 2, ParametersGrad = 3 };

/// One leaf of an entry, as msprobe 1.2.2 flattens it (compare-spec Appendix A.2).
struct FlatRow
{
    std::string name;     ///< row name: data_name without extension, or the constructed path
    Cell dtype;           ///< text, or None for a null leaf
    Cell shape;           ///< Python text of the shape ("[4, 3]", "(3,)", "[]"), or None
    std::array<Cell, 4> stats; ///< Max, Min, Mean, Norm as Python values
    Cell md5;             ///< leaf md5, else CRC-32 of str(value); None for a null leaf
    std::string dataName; ///< "-1" when the leaf has none
    RowCategory category = RowCategory::Input;
    std::string batchKey; ///< "Functional.conv2d.0.forward." or "Module.x.Y." for parameters_grad
};

/// One dump entry's rows and struct lists (A.3).
struct Op
{
    std::string key;
    std::uint32_t entryIndex = 0;
    std::vector<FlatRow> rows; ///< parse order
    Cell stack;                ///< the NPU stack.json value as Python list text, or None
    /// Struct text per category: dtype/shape (and md5 in md5 mode) joined, for exact comparisons.
    std::array<std::vector<std::string>, 4> structs;
    std::array<std::vector<std::pair<std::string, std::string>>, 4> dtypeShape; ///< for the tolerant test

    /// Rows re-ordered stably by category (input, parameters, output, parameters_grad).
    std::vector<const FlatRow*> rowsByCategory() const;
};

/// Python str() of a Cell-able JSON value as msprobe's stats cells hold it.
Cell cellFromJson(std::optional<dump::JsonValue> v);

/// CRC-32 (zlib/IEEE polynomial) as 8 lowercase hex digits.
std::string crc32Hex(std::string_view data);

/// The category and batch key of a row name; std::nullopt when msprobe would abort ("Invalid name string").
std::optional<std::pair<RowCategory, std::string>> categorize(std::string_view rowName);

/**
 * @brief Flattens one entry into an Op. Errors are the problems that make msprobe 1.2.2 abort the whole
 * compare (nesting deeper than 10 levels, a row name without forward/backward and category).
 */
/// Ids of the keys flattenEntry reads, resolved once per document instead of hashed at every leaf.
struct FlattenKeys
{
    std::optional<std::uint32_t> type, dataName, max, min, mean, norm, md5, dtype, value, shape, groupRanks;
    static FlattenKeys of(const dump::JsonDocument& document);
};

Result<Op> flattenEntry(const dump::Entry& entry, std::uint32_t entryIndex, CompareMode mode,
                        const FlattenKeys* keys = nullptr);

/// Python list text of stack frames: ['File a.py, line 1, in f, \n x', ...].
std::string stackText(const std::vector<std::string>& frames);

} // namespace probescope::compare
