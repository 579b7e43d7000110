// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/compare/cell.h"
#include "core/compare/cellrows.h"
#include "core/dump/dumpfile.h"
#include "core/util/diagnostic.h"
#include "core/util/textarena.h"

#include <array>
#include <optional>
#include <span>
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

/**
 * @brief A value of a flattened row in 16 bytes: a number by value, or a text that lives as long as the rows do
 * (in the dump document, in the rows' TextArena, or a literal).
 *
 * At a million entries a side has ~2.8 M rows; as `Cell`s (a 40-byte variant with a `std::string`) the rows of both
 * sides took ~3.5 GB and most of the flattening time went to malloc and free.
 */
struct FlatCell
{
    CellKind kind = CellKind::None;
    std::uint32_t size = 0; ///< text length
    union {
        double number;
        std::int64_t integer = 0;
        bool boolean;
        const char* chars;
    };

    static FlatCell none() { return {}; }
    static FlatCell text(std::string_view s) { return ofText(CellKind::String, s); }
    static FlatCell pyText(std::string_view s) { return ofText(CellKind::PyText, s); }
    static FlatCell ofNumber(double d)
    {
        FlatCell c;
        c.kind = CellKind::Float;
        c.number = d;
        return c;
    }
    static FlatCell ofInteger(std::int64_t i)
    {
        FlatCell c;
        c.kind = CellKind::Int;
        c.integer = i;
        return c;
    }
    static FlatCell ofBool(bool b)
    {
        FlatCell c;
        c.kind = CellKind::Bool;
        c.integer = 0;
        c.boolean = b;
        return c;
    }

    bool isNone() const { return kind == CellKind::None; }
    bool isString() const { return kind == CellKind::String; }
    bool isText() const { return kind == CellKind::String || kind == CellKind::PyText; }
    bool isNumber() const { return kind == CellKind::Int || kind == CellKind::Float; }
    /// The text of a String or PyText value (empty for the others).
    std::string_view textView() const { return isText() ? std::string_view(chars, size) : std::string_view(); }
    double asDouble() const { return view().asDouble(); }
    CellView view() const;
    Cell toCell() const { return view().toCell(); }

private:
    static FlatCell ofText(CellKind kind, std::string_view s)
    {
        FlatCell c;
        c.kind = kind;
        c.size = static_cast<std::uint32_t>(s.size());
        c.chars = s.data();
        return c;
    }
};

/// Whether two values print the same in the CSV (msprobe compares their text): the struct test of the matcher.
bool sameText(const FlatCell& a, const FlatCell& b);

/// One leaf of an entry, as msprobe 1.2.2 flattens it (compare-spec Appendix A.2). Texts are views (see FlatCell).
struct FlatRow
{
    std::string_view name;     ///< row name: data_name without extension, or the constructed path
    std::string_view dataName; ///< "-1" when the leaf has none
    FlatCell dtype;            ///< text, or None for a null leaf
    FlatCell shape;            ///< Python text of the shape ("[4, 3]", "(3,)", "[]"), or None
    std::array<FlatCell, 4> stats; ///< Max, Min, Mean, Norm as Python values
    FlatCell md5;              ///< md5 mode: leaf md5, else CRC-32 of str(value); None for a null leaf
    RowCategory category = RowCategory::Input;
};

/// One dump entry: its rows (in the storage of the FlatSide or FlatEntry that made it).
struct Op
{
    std::string_view key;
    std::uint32_t entryIndex = 0;
    std::span<const FlatRow> rows; ///< parse order

    /// Rows re-ordered stably by category (input, parameters, output, parameters_grad).
    std::vector<const FlatRow*> rowsByCategory() const;
    /// The same into `out` (reused by the hot loops, so no allocation per op).
    void rowsByCategory(std::vector<const FlatRow*>& out) const;
};

/// One side of a compare flattened: every entry's op, the rows of all of them and the texts they made.
struct FlatSide
{
    CompareMode mode = CompareMode::Summary;
    std::vector<Op> ops; ///< one per dump entry, in file order
    std::vector<FlatRow> rows;
    TextArena texts;

    FlatSide() = default;
    FlatSide(FlatSide&&) = default;
    FlatSide& operator=(FlatSide&&) = default;
    FlatSide(const FlatSide&) = delete; // the ops view `rows`
    FlatSide& operator=(const FlatSide&) = delete;
    /// Heap bytes (ops, rows, texts), for the docs' figures.
    std::size_t memoryBytes() const;
};

/// One entry flattened on its own (the GUI's detail views): `op.rows` views `rows`.
struct FlatEntry
{
    Op op;
    std::vector<FlatRow> rows;
    TextArena texts;

    FlatEntry() = default;
    FlatEntry(FlatEntry&& other) noexcept { *this = std::move(other); }
    FlatEntry& operator=(FlatEntry&& other) noexcept
    {
        op = other.op;
        rows = std::move(other.rows);
        texts = std::move(other.texts);
        op.rows = rows; // a moved vector keeps its buffer, but say so
        return *this;
    }
    std::vector<const FlatRow*> rowsByCategory() const { return op.rowsByCategory(); }
};

/// Python str() of a Cell-able JSON value as msprobe's stats cells hold it.
Cell cellFromJson(std::optional<dump::JsonValue> v);

/// CRC-32 (zlib/IEEE polynomial) as 8 lowercase hex digits.
std::string crc32Hex(std::string_view data);

/// The category and batch key of a row name; std::nullopt when msprobe would abort ("Invalid name string").
std::optional<std::pair<RowCategory, std::string>> categorize(std::string_view rowName);
/// categorize() without the batch key's copy: the category and the key's length (the key is a prefix of the name).
std::optional<std::pair<RowCategory, std::size_t>> categoryOf(std::string_view rowName);

/// Ids of the keys the flattener reads, resolved once per document instead of hashed at every leaf.
struct FlattenKeys
{
    std::optional<std::uint32_t> type, dataName, max, min, mean, norm, md5, dtype, value, shape, groupRanks;
    static FlattenKeys of(const dump::JsonDocument& document);
};

/**
 * @brief Flattens one entry. Errors are the problems that make msprobe 1.2.2 abort the whole compare (nesting
 * deeper than 10 levels, a row name without forward/backward and category).
 */
Result<FlatEntry> flattenEntry(const dump::Entry& entry, std::uint32_t entryIndex, CompareMode mode,
                               const FlattenKeys* keys = nullptr);

/// Flattens every entry of a dump. The texts of the rows view the dump's document: it must outlive the result.
Result<FlatSide> flattenDump(const dump::DumpFile& dump, CompareMode mode);

/// Python list text of stack frames: ['File a.py, line 1, in f, \n x', ...].
std::string stackText(const std::vector<std::string>& frames);

} // namespace probescope::compare
