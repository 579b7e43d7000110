// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/compare/table/cell.h"

#include <bit>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <memory>
#include <mutex>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace probescope::compare {

/// Which of Cell's alternatives a cell holds.
enum class CellKind : std::uint8_t { None, Bool, Int, Float, String, PyText };

/**
 * @brief A cell read without copying: the number by value, the text as a view into its CellRows.
 *
 * The view stays valid while the rows live (texts are never moved or freed before the rows are).
 */
struct CellView
{
    CellKind kind = CellKind::None;
    bool boolean = false;
    std::int64_t integer = 0;
    double number = 0;
    std::string_view text; ///< String and PyText

    bool isNone() const { return kind == CellKind::None; }
    bool isString() const { return kind == CellKind::String; }
    bool isNumber() const { return kind == CellKind::Int || kind == CellKind::Float; }
    /// Cell::asDouble's value (bools 0/1, ints converted, strings NaN).
    double asDouble() const;
    Cell toCell() const;
};

/// A Cell seen as a CellView (the text views the cell's string).
CellView viewOf(const Cell& cell);

/**
 * @brief The rows of a compare table, compact: 9 bytes a cell and each distinct short text once.
 *
 * At a million dump entries a table has ~2.8 M rows; as `std::vector<std::vector<Cell>>` that was over 1 KB a row.
 * Here a cell is an 8-byte payload (the double, the int, or where its text is) and a 1-byte kind; texts live in an
 * arena the rows own. Short texts (dtypes, shapes, "N/A", messages) are interned, and a long text equal to the one
 * stored just before it (the bench name beside the NPU name) is stored once. Cells are built and read as `Cell`
 * values (`rows[r][c]`, `push_back(std::vector<Cell>)`), and read without allocation through view().
 *
 * Rows may differ in length. Not thread-safe, except setShared()/rowShared(): a compare's workers fill the cells of
 * different rows at once through them.
 */
class CellRows
{
public:
    class CellRef;
    template<bool Const>
    class RowT;
    using Row = RowT<false>;
    using ConstRow = RowT<true>;
    template<bool Const>
    class IteratorT;
    using iterator = IteratorT<false>;
    using const_iterator = IteratorT<true>;

    CellRows();
    CellRows(const CellRows& other);
    CellRows(CellRows&& other) noexcept;
    CellRows(std::initializer_list<std::vector<Cell>> rows);
    explicit CellRows(const std::vector<std::vector<Cell>>& rows);
    CellRows& operator=(const CellRows& other);
    CellRows& operator=(CellRows&& other) noexcept;
    CellRows& operator=(const std::vector<std::vector<Cell>>& rows);
    ~CellRows();

    std::size_t size() const { return m_rowStart.size() - 1; }
    bool empty() const { return size() == 0; }
    void clear();
    /// Room for `rows` rows of `cellsPerRow` cells (no reallocation of the row index while they are added).
    void reserve(std::size_t rows, std::size_t cellsPerRow = 0);

    void push_back(const std::vector<Cell>& cells);
    /// Starts an empty last row; append() adds its cells (no std::vector<Cell> in between).
    void beginRow();
    void append(const Cell& cell);
    void appendNone();
    void appendBool(bool b);
    void appendInt(std::int64_t i);
    void appendNumber(double d);
    void appendText(std::string_view s);
    void appendPyText(std::string_view s);
    void pop_back();
    /// Appends every row of `other`.
    void appendRows(const CellRows& other);
    /// Appends `rows` rows of `cellsPerRow` cells each, to be filled through Writers (every cell must be written).
    void layOut(std::size_t rows, std::size_t cellsPerRow);
    class Writer;

    std::size_t rowSize(std::size_t r) const { return static_cast<std::size_t>(m_rowStart[r + 1] - m_rowStart[r]); }
    CellView view(std::size_t r, std::size_t c) const { return viewAt(m_rowStart[r] + c); }
    Cell cell(std::size_t r, std::size_t c) const { return view(r, c).toCell(); }
    CellKind kind(std::size_t r, std::size_t c) const { return kindAt(m_rowStart[r] + c); }
    void set(std::size_t r, std::size_t c, const Cell& cell);
    /// set() for threads that fill different rows at once (text cells take a lock).
    void setShared(std::size_t r, std::size_t c, const Cell& cell);
    std::vector<Cell> rowCells(std::size_t r) const;
    /// rowCells() while other threads call setShared().
    std::vector<Cell> rowShared(std::size_t r) const;

    Row operator[](std::size_t r);
    ConstRow operator[](std::size_t r) const;
    Row front();
    ConstRow front() const;
    Row back();
    ConstRow back() const;
    iterator begin();
    iterator end();
    const_iterator begin() const;
    const_iterator end() const;

    /// Heap bytes held (cells, row index, texts, intern table), for the docs' bytes-per-row figures.
    std::size_t memoryBytes() const;

    friend bool operator==(const CellRows& a, const CellRows& b);

private:
    static constexpr unsigned kChunkBits = 16;
    static constexpr std::size_t kChunkCells = std::size_t { 1 } << kChunkBits;
    struct Chunk
    {
        std::uint64_t payload[kChunkCells];
        std::uint8_t tag[kChunkCells];
    };
    // A text's payload: block index (20 bits), offset in the block (22 bits), length (22 bits).
    static constexpr unsigned kFieldBits = 22;
    static constexpr std::uint64_t kFieldMask = (std::uint64_t { 1 } << kFieldBits) - 1;
    struct Block
    {
        std::unique_ptr<char[]> data;
        std::size_t capacity = 0;
        std::size_t used = 0;
    };

    std::vector<std::unique_ptr<Chunk>> m_chunks;
    std::vector<std::uint64_t> m_rowStart; ///< first cell of each row, then the end of the last
    std::vector<Block> m_blocks;
    std::vector<std::string> m_longTexts; ///< texts too long for a block
    std::unordered_map<std::string_view, std::uint64_t> m_interned;
    std::uint64_t m_lastTextPayload = 0;
    std::uint8_t m_lastTextTag = 0;
    std::string_view m_lastText;
    std::unique_ptr<std::mutex> m_mutex;

    std::uint64_t cellCount() const { return m_rowStart.back(); }
    CellKind kindAt(std::uint64_t i) const
    {
        return static_cast<CellKind>(m_chunks[i >> kChunkBits]->tag[i & (kChunkCells - 1)] & 7);
    }
    CellView viewAt(std::uint64_t i) const;
    void store(std::uint64_t i, CellKind kind, std::uint64_t payload, bool longText = false);
    void storeText(std::uint64_t i, CellKind kind, std::string_view s);
    void setAt(std::uint64_t i, const Cell& cell);
    std::uint64_t pushCell();
    /// The payload of a text in a block; textOf() reads it back.
    static std::uint64_t textPayload(std::size_t block, std::size_t offset, std::size_t length)
    {
        return (static_cast<std::uint64_t>(block) << (2 * kFieldBits)) | (static_cast<std::uint64_t>(offset) << kFieldBits)
            | length;
    }
    std::string_view textOf(std::uint64_t payload, bool longText) const
    {
        if (longText)
            return m_longTexts[payload];
        const std::size_t length = payload & kFieldMask;
        if (length == 0)
            return {};
        const Block& block = m_blocks[payload >> (2 * kFieldBits)];
        return std::string_view(block.data.get() + ((payload >> kFieldBits) & kFieldMask), length);
    }
};

/**
 * @brief Fills rows that layOut() made, from several threads at once: each thread its own Writer, on rows no other
 * writer touches. A writer takes text blocks from the rows under their lock once per block and writes into them
 * alone; short texts are interned per writer. A table of millions of rows is built in place, on every core, with no
 * partial tables to join. No reader may look at the rows until every writer is gone.
 */
class CellRows::Writer
{
public:
    explicit Writer(CellRows& rows);
    ~Writer();
    Writer(const Writer&) = delete;
    Writer& operator=(const Writer&) = delete;

    /// The next append goes to cell 0 of row `r`.
    void beginRow(std::size_t r) { m_cell = m_rows.m_rowStart[r]; }
    void appendNone() { put(CellKind::None, 0); }
    void appendBool(bool b) { put(CellKind::Bool, b ? 1 : 0); }
    void appendInt(std::int64_t i) { put(CellKind::Int, static_cast<std::uint64_t>(i)); }
    void appendNumber(double d) { put(CellKind::Float, std::bit_cast<std::uint64_t>(d)); }
    void appendText(std::string_view s) { putText(CellKind::String, s, Intern::Short); }
    void appendPyText(std::string_view s) { putText(CellKind::PyText, s, Intern::Short); }
    /// A text that rarely repeats (a relative error as "12.5%"): stored without a trip through the intern table.
    void appendUniqueText(std::string_view s) { putText(CellKind::String, s, Intern::Never); }
    /// A long text that repeats (the stack of an API called from many layers): stored once whatever its length.
    void appendSharedPyText(std::string_view s) { putText(CellKind::PyText, s, Intern::Always); }
    void append(const Cell& cell);

private:
    enum class Intern : std::uint8_t { Short, Never, Always };
    CellRows& m_rows;
    std::uint64_t m_cell = 0;
    std::size_t m_block = 0;   // index of the block this writer fills
    char* m_data = nullptr;    // its characters (stable while the vector of blocks grows)
    std::size_t m_capacity = 0;
    std::size_t m_used = 0;
    std::size_t m_nextCapacity;
    std::unordered_map<std::string_view, std::uint64_t> m_interned;
    std::unordered_map<std::string_view, std::pair<std::uint64_t, bool>> m_shared;
    std::string_view m_lastText;
    std::uint64_t m_lastPayload = 0;
    bool m_lastLong = false;

    void put(CellKind kind, std::uint64_t payload, bool longText = false)
    {
        m_rows.store(m_cell++, kind, payload, longText);
    }
    void putText(CellKind kind, std::string_view s, Intern intern);
    void releaseBlock();
};

/// One cell of non-const rows: reads as a Cell, assigning a Cell stores it.
class CellRows::CellRef
{
public:
    CellRef(CellRows* rows, std::size_t r, std::size_t c) : m_rows(rows), m_r(r), m_c(c) {}
    operator Cell() const { return m_rows->cell(m_r, m_c); }
    CellRef& operator=(const Cell& cell)
    {
        m_rows->set(m_r, m_c, cell);
        return *this;
    }
    CellRef& operator=(const CellRef& other) { return *this = Cell(other); }
    CellView view() const { return m_rows->view(m_r, m_c); }
    bool isNone() const { return view().isNone(); }
    bool isString() const { return view().isString(); }
    bool isNumber() const { return view().isNumber(); }
    double asDouble() const { return view().asDouble(); }
    std::string asString() const { return Cell(*this).asString(); }

    friend bool operator==(const CellRef& a, const Cell& b) { return Cell(a) == b; }

private:
    CellRows* m_rows;
    std::size_t m_r;
    std::size_t m_c;
};

/// One row: `row[c]`, `row.size()`, iteration over its cells (as Cell values), conversion to std::vector<Cell>.
template<bool Const>
class CellRows::RowT
{
public:
    using Rows = std::conditional_t<Const, const CellRows, CellRows>;

    class CellIterator
    {
    public:
        using iterator_category = std::random_access_iterator_tag;
        using value_type = Cell;
        using difference_type = std::ptrdiff_t;
        using pointer = void;
        using reference = Cell;
        CellIterator() = default;
        CellIterator(const CellRows* rows, std::size_t r, std::size_t c) : m_rows(rows), m_r(r), m_c(c) {}
        Cell operator*() const { return m_rows->cell(m_r, m_c); }
        Cell operator[](difference_type n) const { return m_rows->cell(m_r, m_c + n); }
        CellIterator& operator++() { ++m_c; return *this; }
        CellIterator operator++(int) { auto old = *this; ++m_c; return old; }
        CellIterator& operator--() { --m_c; return *this; }
        CellIterator& operator+=(difference_type n) { m_c += n; return *this; }
        CellIterator operator+(difference_type n) const { auto it = *this; return it += n; }
        CellIterator operator-(difference_type n) const { auto it = *this; return it += -n; }
        difference_type operator-(const CellIterator& o) const
        {
            return static_cast<difference_type>(m_c) - static_cast<difference_type>(o.m_c);
        }
        bool operator==(const CellIterator& o) const { return m_c == o.m_c; }
        auto operator<=>(const CellIterator& o) const { return m_c <=> o.m_c; }

    private:
        const CellRows* m_rows = nullptr;
        std::size_t m_r = 0;
        std::size_t m_c = 0;
    };

    RowT(Rows* rows, std::size_t r) : m_rows(rows), m_r(r) {}
    /// A row of non-const rows reads as a row of const rows.
    operator RowT<true>() const { return RowT<true>(m_rows, m_r); }

    std::size_t size() const { return m_rows->rowSize(m_r); }
    bool empty() const { return size() == 0; }
    std::size_t index() const { return m_r; }
    CellView view(std::size_t c) const { return m_rows->view(m_r, c); }
    auto operator[](std::size_t c) const
    {
        if constexpr (Const)
            return m_rows->cell(m_r, c);
        else
            return CellRef(m_rows, m_r, c);
    }
    auto at(std::size_t c) const { return (*this)[c]; }
    Cell front() const { return m_rows->cell(m_r, 0); }
    Cell back() const { return m_rows->cell(m_r, size() - 1); }
    CellIterator begin() const { return CellIterator(m_rows, m_r, 0); }
    CellIterator end() const { return CellIterator(m_rows, m_r, size()); }
    std::vector<Cell> cells() const { return m_rows->rowCells(m_r); }
    operator std::vector<Cell>() const { return cells(); }
    /// Appends a cell to the last row.
    void push_back(const Cell& cell) const
        requires(!Const)
    {
        m_rows->append(cell);
    }

    friend bool operator==(const RowT& a, const std::vector<Cell>& b) { return a.cells() == b; }

private:
    Rows* m_rows;
    std::size_t m_r;
};

template<bool Const>
class CellRows::IteratorT
{
public:
    using Rows = std::conditional_t<Const, const CellRows, CellRows>;
    using iterator_category = std::random_access_iterator_tag;
    using value_type = RowT<Const>;
    using difference_type = std::ptrdiff_t;
    using pointer = void;
    using reference = RowT<Const>;

    IteratorT() = default;
    IteratorT(Rows* rows, std::size_t r) : m_rows(rows), m_r(r) {}
    operator IteratorT<true>() const { return IteratorT<true>(m_rows, m_r); }
    RowT<Const> operator*() const { return RowT<Const>(m_rows, m_r); }
    RowT<Const> operator[](difference_type n) const { return RowT<Const>(m_rows, m_r + n); }
    IteratorT& operator++() { ++m_r; return *this; }
    IteratorT operator++(int) { auto old = *this; ++m_r; return old; }
    IteratorT& operator--() { --m_r; return *this; }
    IteratorT& operator+=(difference_type n) { m_r += n; return *this; }
    IteratorT operator+(difference_type n) const { auto it = *this; return it += n; }
    IteratorT operator-(difference_type n) const { auto it = *this; return it += -n; }
    difference_type operator-(const IteratorT& o) const
    {
        return static_cast<difference_type>(m_r) - static_cast<difference_type>(o.m_r);
    }
    bool operator==(const IteratorT& o) const { return m_r == o.m_r; }
    auto operator<=>(const IteratorT& o) const { return m_r <=> o.m_r; }

private:
    Rows* m_rows = nullptr;
    std::size_t m_r = 0;
};

inline CellRows::Row CellRows::operator[](std::size_t r) { return Row(this, r); }
inline CellRows::ConstRow CellRows::operator[](std::size_t r) const { return ConstRow(this, r); }
inline CellRows::Row CellRows::front() { return (*this)[0]; }
inline CellRows::ConstRow CellRows::front() const { return (*this)[0]; }
inline CellRows::Row CellRows::back() { return (*this)[size() - 1]; }
inline CellRows::ConstRow CellRows::back() const { return (*this)[size() - 1]; }
inline CellRows::iterator CellRows::begin() { return iterator(this, 0); }
inline CellRows::iterator CellRows::end() { return iterator(this, size()); }
inline CellRows::const_iterator CellRows::begin() const { return const_iterator(this, 0); }
inline CellRows::const_iterator CellRows::end() const { return const_iterator(this, size()); }

inline CellView CellRows::viewAt(std::uint64_t i) const
{
    const Chunk& chunk = *m_chunks[i >> kChunkBits];
    const std::size_t k = i & (kChunkCells - 1);
    const std::uint8_t tag = chunk.tag[k];
    const std::uint64_t payload = chunk.payload[k];
    CellView v;
    v.kind = static_cast<CellKind>(tag & 7);
    switch (v.kind) {
    case CellKind::None: break;
    case CellKind::Bool: v.boolean = payload != 0; break;
    case CellKind::Int: v.integer = static_cast<std::int64_t>(payload); break;
    case CellKind::Float: v.number = std::bit_cast<double>(payload); break;
    case CellKind::String:
    case CellKind::PyText: v.text = textOf(payload, (tag & 8) != 0); break;
    }
    return v;
}

} // namespace probescope::compare
