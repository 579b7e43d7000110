// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/compare/table/cell.h"
#include "core/compare/table/cellrows.h"
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

/**
 * @brief One leaf of an entry, as msprobe 1.2.2 flattens it (compare-spec Appendix A.2), in 96 bytes.
 *
 * A row name made of the entry key and a path below it ("….forward.0" + ".input.0") is kept as those two parts: the
 * key views the dump document and the tail is a counted text shared by the rows with the same tail, so the ~60 bytes
 * of a name are not copied for every row. nameHead() + nameTail() is the name.
 * The seven values (dtype, shape, Max, Min, Mean, Norm, md5) are kept as 8-byte payloads with their kinds in a byte
 * each; a text value is a pointer to a counted copy (TextArena::storeCounted) that lives as long as the rows do. At a
 * million entries a side has ~2.8 M rows: as seven FlatCells and two string_views (144 bytes) both sides' rows took
 * ~0.8 GB at the peak of a compare.
 */
struct FlatRow
{
    enum Slot : std::uint8_t { Dtype = 0, Shape = 1, Max = 2, Min = 3, Mean = 4, Norm = 5, Md5 = 6, Slots = 7 };

    /// Row name (data_name without extension, or the constructed path) as one text.
    std::string nameText() const
    {
        std::string out;
        appendName(out);
        return out;
    }
    void appendName(std::string& out) const
    {
        out += nameHead();
        out += nameTail();
    }
    /// The name is nameHead() followed by nameTail() (empty unless the name was set in two parts).
    std::string_view nameHead() const { return { m_name, m_nameSize }; }
    std::string_view nameTail() const { return m_nameTail ? TextArena::countedView(m_nameTail) : std::string_view(); }
    std::size_t nameSize() const { return m_nameSize + nameTail().size(); }
    bool sameName(const FlatRow& other) const;
    /// Whether the name contains `word`, which has no '.' (the tail starts with one, so no match straddles the parts).
    bool nameContains(std::string_view word) const
    {
        return nameHead().find(word) != std::string_view::npos || nameTail().find(word) != std::string_view::npos;
    }
    /// "-1" when the leaf has none.
    std::string_view dataName() const { return { m_dataName, m_dataNameSize }; }
    /// Dtype text, or None for a null leaf.
    FlatCell dtype() const { return cell(Dtype); }
    /// Python text of the shape ("[4, 3]", "(3,)", "[]"), or None.
    FlatCell shape() const { return cell(Shape); }
    /// Max, Min, Mean, Norm (0-3) as Python values.
    FlatCell stat(int i) const { return cell(Max + i); }
    /// md5 mode: leaf md5, else CRC-32 of str(value); None for a null leaf (and outside md5 mode).
    FlatCell md5() const { return cell(Md5); }
    FlatCell cell(int slot) const;

    /// The texts viewed must outlive the row.
    void setName(std::string_view name)
    {
        m_name = name.data();
        m_nameSize = static_cast<std::uint32_t>(name.size());
        m_nameTail = nullptr;
    }
    /// The name in two parts: `head` viewed, `countedTail` a counted copy (TextArena::storeCounted) starting with '.'.
    void setName(std::string_view head, const char* countedTail)
    {
        setName(head);
        m_nameTail = countedTail;
    }
    void setDataName(std::string_view dataName)
    {
        m_dataName = dataName.data();
        m_dataNameSize = static_cast<std::uint32_t>(dataName.size());
    }
    /// Sets a value; a text is copied into `texts` (counted).
    void set(int slot, const FlatCell& value, TextArena& texts);
    /// Sets a text value that is already a counted copy (TextArena::storeCounted) living as long as the row.
    void setCounted(int slot, CellKind kind, const char* counted);

    RowCategory category = RowCategory::Input;

private:
    const char* m_name = nullptr;
    const char* m_dataName = nullptr;
    std::uint32_t m_nameSize = 0;
    std::uint32_t m_dataNameSize = 0;
    const char* m_nameTail = nullptr;
    std::uint64_t m_value[Slots] {};
    CellKind m_kind[Slots] {};
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
