// SPDX-License-Identifier: Apache-2.0
#include "core/compare/table/cellrows.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <variant>

namespace probescope::compare {

namespace {

// Texts up to this long are interned: dtypes, shapes, "N/A", verdicts, short messages repeat on every row.
constexpr std::size_t kInternMax = 24;
// Text blocks grow from 64 KB to 4 MB (a block offset has 22 bits); longer texts are kept on their own.
constexpr std::size_t kFirstBlock = std::size_t { 64 } << 10;
constexpr std::size_t kMaxBlock = std::size_t { 4 } << 20;
constexpr std::size_t kMaxBlockText = std::size_t { 64 } << 10;
constexpr std::uint8_t kLongTextFlag = 8;

} // namespace

double CellView::asDouble() const
{
    switch (kind) {
    case CellKind::Float: return number;
    case CellKind::Int: return static_cast<double>(integer);
    case CellKind::Bool: return boolean ? 1.0 : 0.0;
    default: return std::numeric_limits<double>::quiet_NaN();
    }
}

CellView viewOf(const Cell& cell)
{
    struct Visitor
    {
        CellView view(CellKind kind) const
        {
            CellView v;
            v.kind = kind;
            return v;
        }
        CellView operator()(Cell::None) const { return {}; }
        CellView operator()(bool b) const
        {
            CellView v = view(CellKind::Bool);
            v.boolean = b;
            return v;
        }
        CellView operator()(std::int64_t i) const
        {
            CellView v = view(CellKind::Int);
            v.integer = i;
            return v;
        }
        CellView operator()(double d) const
        {
            CellView v = view(CellKind::Float);
            v.number = d;
            return v;
        }
        CellView operator()(const std::string& s) const
        {
            CellView v = view(CellKind::String);
            v.text = s;
            return v;
        }
        CellView operator()(const Cell::PyText& t) const
        {
            CellView v = view(CellKind::PyText);
            v.text = t.text;
            return v;
        }
    };
    return std::visit(Visitor {}, cell.value);
}

Cell CellView::toCell() const
{
    switch (kind) {
    case CellKind::None: return Cell::none();
    case CellKind::Bool: return Cell::boolean(boolean);
    case CellKind::Int: return Cell::integer(integer);
    case CellKind::Float: return Cell::number(number);
    case CellKind::String: return Cell::text(std::string(text));
    case CellKind::PyText: return Cell::pyText(std::string(text));
    }
    return Cell::none();
}

CellRows::CellRows() : m_rowStart { 0 }, m_mutex(std::make_unique<std::mutex>()) {}

CellRows::CellRows(const CellRows& other) : CellRows()
{
    appendRows(other);
}

CellRows::CellRows(CellRows&& other) noexcept : CellRows()
{
    *this = std::move(other);
}

CellRows::CellRows(std::initializer_list<std::vector<Cell>> rows) : CellRows()
{
    for (const auto& row : rows)
        push_back(row);
}

CellRows::CellRows(const std::vector<std::vector<Cell>>& rows) : CellRows()
{
    for (const auto& row : rows)
        push_back(row);
}

CellRows& CellRows::operator=(const CellRows& other)
{
    if (this != &other) {
        clear();
        appendRows(other);
    }
    return *this;
}

CellRows& CellRows::operator=(CellRows&& other) noexcept
{
    if (this != &other) {
        m_chunks = std::move(other.m_chunks);
        m_rowStart = std::move(other.m_rowStart);
        m_blocks = std::move(other.m_blocks);
        m_longTexts = std::move(other.m_longTexts);
        m_interned = std::move(other.m_interned);
        m_lastTextPayload = other.m_lastTextPayload;
        m_lastTextTag = other.m_lastTextTag;
        m_lastText = other.m_lastText;
        other.clear();
    }
    return *this;
}

CellRows& CellRows::operator=(const std::vector<std::vector<Cell>>& rows)
{
    clear();
    for (const auto& row : rows)
        push_back(row);
    return *this;
}

CellRows::~CellRows() = default;

void CellRows::clear()
{
    m_chunks.clear();
    m_rowStart.assign(1, 0);
    m_blocks.clear();
    m_longTexts.clear();
    m_interned.clear();
    m_lastTextPayload = 0;
    m_lastTextTag = 0;
    m_lastText = {};
}

void CellRows::appendRows(const CellRows& other)
{
    // Numbers are copied as they are; other's interned texts are interned here once each (by payload, not by text).
    std::unordered_map<std::uint64_t, std::uint64_t> interned;
    m_rowStart.reserve(m_rowStart.size() + other.size());
    for (std::size_t r = 0; r < other.size(); ++r) {
        beginRow();
        for (std::uint64_t j = other.m_rowStart[r]; j < other.m_rowStart[r + 1]; ++j) {
            const Chunk& from = *other.m_chunks[j >> kChunkBits];
            const std::size_t k = j & (kChunkCells - 1);
            const std::uint8_t tag = from.tag[k];
            const auto kind = static_cast<CellKind>(tag & 7);
            const std::uint64_t i = pushCell();
            if (kind != CellKind::String && kind != CellKind::PyText) {
                store(i, kind, from.payload[k]);
                continue;
            }
            const std::string_view text = other.textOf(from.payload[k], (tag & kLongTextFlag) != 0);
            if (text.empty() || text.size() > kInternMax) {
                storeText(i, kind, text);
                continue;
            }
            if (const auto it = interned.find(from.payload[k]); it != interned.end()) {
                store(i, kind, it->second);
                continue;
            }
            storeText(i, kind, text);
            interned.emplace(from.payload[k], m_chunks[i >> kChunkBits]->payload[i & (kChunkCells - 1)]);
        }
    }
}

void CellRows::layOut(std::size_t rows, std::size_t cellsPerRow)
{
    std::uint64_t end = m_rowStart.back();
    m_rowStart.reserve(m_rowStart.size() + rows);
    for (std::size_t r = 0; r < rows; ++r) {
        end += cellsPerRow;
        m_rowStart.push_back(end);
    }
    while ((end + kChunkCells - 1) >> kChunkBits > m_chunks.size())
        m_chunks.push_back(std::unique_ptr<Chunk>(new Chunk)); // not zeroed: the writers store every cell
}

CellRows::Writer::Writer(CellRows& rows)
    : m_rows(rows)
    , m_nextCapacity(kFirstBlock)
{
    if (!m_rows.m_mutex)
        m_rows.m_mutex = std::make_unique<std::mutex>();
}

CellRows::Writer::~Writer()
{
    releaseBlock();
}

void CellRows::Writer::releaseBlock()
{
    if (!m_data)
        return;
    std::lock_guard lock(*m_rows.m_mutex);
    m_rows.m_blocks[m_block].used = m_used;
    m_data = nullptr;
}

void CellRows::Writer::append(const Cell& cell)
{
    struct Visitor
    {
        Writer& w;
        void operator()(Cell::None) const { w.appendNone(); }
        void operator()(bool b) const { w.appendBool(b); }
        void operator()(std::int64_t i) const { w.appendInt(i); }
        void operator()(double d) const { w.appendNumber(d); }
        void operator()(const std::string& t) const { w.appendText(t); }
        void operator()(const Cell::PyText& t) const { w.appendPyText(t.text); }
    };
    std::visit(Visitor { *this }, cell.value);
}

void CellRows::Writer::putText(CellKind kind, std::string_view s, Intern intern)
{
    if (s.empty()) {
        put(kind, 0);
        return;
    }
    const bool shortText = intern == Intern::Short && s.size() <= kInternMax;
    if (shortText) {
        if (const auto it = m_interned.find(s); it != m_interned.end()) {
            put(kind, it->second);
            return;
        }
    } else if (intern == Intern::Always) {
        if (const auto it = m_shared.find(s); it != m_shared.end()) {
            put(kind, it->second.first, it->second.second);
            return;
        }
    } else if (s == m_lastText) {
        put(kind, m_lastPayload, m_lastLong);
        return;
    }
    std::uint64_t payload = 0;
    bool longText = false;
    std::string_view stored;
    if (s.size() > kMaxBlockText) {
        std::lock_guard lock(*m_rows.m_mutex);
        payload = m_rows.m_longTexts.size();
        longText = true;
        m_rows.m_longTexts.emplace_back(s);
        stored = m_rows.m_longTexts.back(); // over 64 KB: on the heap, where it stays when the vector grows
    } else {
        if (!m_data || m_capacity - m_used < s.size()) {
            releaseBlock();
            std::lock_guard lock(*m_rows.m_mutex);
            m_rows.m_blocks.push_back(Block { std::unique_ptr<char[]>(new char[m_nextCapacity]), m_nextCapacity, 0 });
            m_block = m_rows.m_blocks.size() - 1;
            m_data = m_rows.m_blocks.back().data.get();
            m_capacity = m_nextCapacity;
            m_used = 0;
            m_nextCapacity = std::min(kMaxBlock, m_nextCapacity * 2);
        }
        std::memcpy(m_data + m_used, s.data(), s.size());
        stored = std::string_view(m_data + m_used, s.size());
        payload = textPayload(m_block, m_used, s.size());
        m_used += s.size();
    }
    if (shortText)
        m_interned.emplace(stored, payload);
    else if (intern == Intern::Always)
        m_shared.emplace(stored, std::pair { payload, longText });
    m_lastText = stored;
    m_lastPayload = payload;
    m_lastLong = longText;
    put(kind, payload, longText);
}

void CellRows::reserve(std::size_t rows, std::size_t cellsPerRow)
{
    m_rowStart.reserve(rows + 1);
    m_chunks.reserve((rows * cellsPerRow + kChunkCells - 1) >> kChunkBits);
}

void CellRows::beginRow()
{
    m_rowStart.push_back(m_rowStart.back());
}

std::uint64_t CellRows::pushCell()
{
    const std::uint64_t i = m_rowStart.back();
    if ((i >> kChunkBits) >= m_chunks.size())
        m_chunks.push_back(std::unique_ptr<Chunk>(new Chunk)); // not zeroed: every cell is stored before it is read
    ++m_rowStart.back();
    return i;
}

void CellRows::pop_back()
{
    m_rowStart.pop_back();
}

void CellRows::store(std::uint64_t i, CellKind kind, std::uint64_t payload, bool longText)
{
    Chunk& chunk = *m_chunks[i >> kChunkBits];
    const std::size_t k = i & (kChunkCells - 1);
    chunk.payload[k] = payload;
    chunk.tag[k] = static_cast<std::uint8_t>(static_cast<std::uint8_t>(kind) | (longText ? kLongTextFlag : 0));
}

void CellRows::storeText(std::uint64_t i, CellKind kind, std::string_view s)
{
    if (s.empty()) {
        store(i, kind, 0);
        return;
    }
    const bool internable = s.size() <= kInternMax;
    if (internable) {
        if (const auto it = m_interned.find(s); it != m_interned.end()) {
            store(i, kind, it->second);
            return;
        }
    } else if (s == m_lastText) {
        store(i, kind, m_lastTextPayload, (m_lastTextTag & kLongTextFlag) != 0);
        return;
    }
    std::uint64_t payload = 0;
    bool longText = false;
    std::string_view stored;
    if (s.size() > kMaxBlockText) {
        payload = m_longTexts.size();
        longText = true;
        m_longTexts.emplace_back(s);
        stored = m_longTexts.back(); // a std::string's characters stay put when the vector moves it
    } else {
        if (m_blocks.empty() || m_blocks.back().capacity - m_blocks.back().used < s.size()) {
            const std::size_t capacity = m_blocks.empty() ? kFirstBlock : std::min(kMaxBlock, m_blocks.back().capacity * 2);
            m_blocks.push_back(Block { std::unique_ptr<char[]>(new char[capacity]), capacity, 0 });
        }
        Block& block = m_blocks.back();
        std::memcpy(block.data.get() + block.used, s.data(), s.size());
        stored = std::string_view(block.data.get() + block.used, s.size());
        payload = textPayload(m_blocks.size() - 1, block.used, s.size());
        block.used += s.size();
    }
    if (internable) {
        m_interned.emplace(stored, payload);
    } else {
        m_lastText = stored;
        m_lastTextPayload = payload;
        m_lastTextTag = longText ? kLongTextFlag : 0;
    }
    store(i, kind, payload, longText);
}

void CellRows::push_back(const std::vector<Cell>& cells)
{
    beginRow();
    for (const Cell& cell : cells)
        append(cell);
}

void CellRows::append(const Cell& cell)
{
    setAt(pushCell(), cell);
}

void CellRows::appendNone()
{
    store(pushCell(), CellKind::None, 0);
}

void CellRows::appendBool(bool b)
{
    store(pushCell(), CellKind::Bool, b ? 1 : 0);
}

void CellRows::appendInt(std::int64_t i)
{
    store(pushCell(), CellKind::Int, static_cast<std::uint64_t>(i));
}

void CellRows::appendNumber(double d)
{
    store(pushCell(), CellKind::Float, std::bit_cast<std::uint64_t>(d));
}

void CellRows::appendText(std::string_view s)
{
    storeText(pushCell(), CellKind::String, s);
}

void CellRows::appendPyText(std::string_view s)
{
    storeText(pushCell(), CellKind::PyText, s);
}

void CellRows::set(std::size_t r, std::size_t c, const Cell& cell)
{
    setAt(m_rowStart[r] + c, cell);
}

void CellRows::setAt(std::uint64_t i, const Cell& cell)
{
    struct Visitor
    {
        CellRows& rows;
        std::uint64_t i;
        void operator()(Cell::None) const { rows.store(i, CellKind::None, 0); }
        void operator()(bool b) const { rows.store(i, CellKind::Bool, b ? 1 : 0); }
        void operator()(std::int64_t v) const { rows.store(i, CellKind::Int, static_cast<std::uint64_t>(v)); }
        void operator()(double d) const { rows.store(i, CellKind::Float, std::bit_cast<std::uint64_t>(d)); }
        void operator()(const std::string& s) const { rows.storeText(i, CellKind::String, s); }
        void operator()(const Cell::PyText& t) const { rows.storeText(i, CellKind::PyText, t.text); }
    };
    std::visit(Visitor { *this, i }, cell.value);
}

void CellRows::setShared(std::size_t r, std::size_t c, const Cell& cell)
{
    // Numbers go to the row's own cells; a text may grow the arena, which readers of other rows also use.
    if (cell.isString() || std::holds_alternative<Cell::PyText>(cell.value)) {
        const std::lock_guard lock(*m_mutex);
        set(r, c, cell);
    } else {
        set(r, c, cell);
    }
}

std::vector<Cell> CellRows::rowCells(std::size_t r) const
{
    std::vector<Cell> cells;
    const std::size_t n = rowSize(r);
    cells.reserve(n);
    for (std::size_t c = 0; c < n; ++c)
        cells.push_back(cell(r, c));
    return cells;
}

std::vector<Cell> CellRows::rowShared(std::size_t r) const
{
    const std::lock_guard lock(*m_mutex);
    return rowCells(r);
}

std::size_t CellRows::memoryBytes() const
{
    std::size_t bytes = m_chunks.capacity() * sizeof(void*) + m_chunks.size() * sizeof(Chunk)
        + m_rowStart.capacity() * sizeof(std::uint64_t) + m_blocks.capacity() * sizeof(Block);
    for (const Block& block : m_blocks)
        bytes += block.capacity;
    for (const std::string& text : m_longTexts)
        bytes += sizeof(std::string) + text.capacity();
    // A node of the intern table: the key, the payload, the hash and the next pointer; plus its bucket.
    bytes += m_interned.size() * (sizeof(std::string_view) + 3 * sizeof(std::uint64_t))
        + m_interned.bucket_count() * sizeof(void*);
    return bytes;
}

bool operator==(const CellRows& a, const CellRows& b)
{
    if (a.size() != b.size())
        return false;
    for (std::size_t r = 0; r < a.size(); ++r) {
        if (a.rowCells(r) != b.rowCells(r))
            return false;
    }
    return true;
}

} // namespace probescope::compare
