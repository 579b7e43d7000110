// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/dump/stringidtable.h"
#include "core/util/diagnostic.h"

#include <array>
#include <cstdint>
#include <functional>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace probescope::dump {

enum class JsonType : std::uint8_t { Null, Bool, Int, Double, String, Array, Object };

class JsonDocument;

/**
 * @brief A cheap handle to one value of a JsonDocument (document pointer + node index).
 *
 * Objects keep their members in file order and may hold duplicate keys; find() returns the last
 * duplicate, as Python's json module does.
 */
class JsonValue
{
public:
    JsonValue() = default;
    JsonValue(const JsonDocument* doc, std::uint32_t index)
        : m_doc(doc)
        , m_index(index)
    {
    }

    bool valid() const { return m_doc != nullptr; }
    JsonType type() const;
    bool isNull() const { return type() == JsonType::Null; }
    bool isBool() const { return type() == JsonType::Bool; }
    bool isInt() const { return type() == JsonType::Int; }
    bool isNumber() const { return type() == JsonType::Int || type() == JsonType::Double; }
    bool isString() const { return type() == JsonType::String; }
    bool isArray() const { return type() == JsonType::Array; }
    bool isObject() const { return type() == JsonType::Object; }
    /// True when the input ended inside this container; it holds only the members read completely.
    bool isTruncated() const;

    bool asBool() const;
    std::int64_t asInt() const;
    double asDouble() const; ///< ints are converted
    std::string_view asString() const;

    /// Number of elements (array) or members (object); 0 for scalars.
    std::uint32_t size() const;
    JsonValue at(std::uint32_t i) const; ///< i-th element or member value
    std::string_view keyAt(std::uint32_t i) const; ///< key of the i-th member (objects)
    std::optional<JsonValue> find(std::string_view key) const;
    /// find() by an id from JsonDocument::keyId, for loops that look up the same keys many times.
    std::optional<JsonValue> findId(std::optional<std::uint32_t> keyId) const;

    /// The member key this value was stored under ("" for array elements and the root).
    std::string_view key() const;
    /// Byte offset of the value's first character in the source text (saturates at 4 GiB).
    std::uint64_t offset() const;
    std::uint32_t index() const { return m_index; }
    const JsonDocument* document() const { return m_doc; }

private:
    const JsonDocument* m_doc = nullptr;
    std::uint32_t m_index = 0;
};

struct JsonParseOptions
{
    /// Accept a document cut short: open containers are closed keeping the members read completely,
    /// and marked truncated. Without it, a truncated document is an error.
    bool salvageTruncated = false;
    std::uint32_t maxDepth = 512;
    /// Called now and then with an offset the parser will not read before again (a container just closed there); a
    /// caller whose text is a file mapping can give those pages back (MappedFile::release). May be empty.
    std::function<void(std::size_t offset)> readPast;
};

/**
 * @brief An immutable, compact JSON document (16 bytes per value, its source offset included).
 *
 * Accepts what Python's json.dump(allow_nan=True) writes: the bare tokens NaN, Infinity and -Infinity.
 * Integers that fit int64 stay integers (msprobe output distinguishes 2 from 2.0).
 */
class JsonDocument
{
public:
    struct ParseOutcome;
    /// Parses `text`; the document does not refer to `text` afterwards.
    static ParseOutcome parse(std::string_view text, const std::string& fileName, const JsonParseOptions& options = {});

    JsonValue root() const { return JsonValue(this, m_root); }
    std::size_t nodeCount() const { return m_nodes.size(); }
    std::size_t memoryBytes() const;

    // Node storage; public to the parser and to JsonValue only through these accessors.
    struct Range
    {
        std::uint32_t first;
        std::uint32_t count;
    };
    struct Node
    {
        JsonType type;
        std::uint8_t flags;
        std::uint16_t offsetDelta; // source offset - the offset base of its group of 16 + kOffsetBias
        std::uint32_t key; // interned key id for object members, kNoKey otherwise
        union {
            std::int64_t i;
            double d;
            Range range; // arrays/objects: children; strings: offset/length in the string arena
        };
    };
    static_assert(sizeof(Node) == 16);
    static constexpr std::uint32_t kNoKey = 0xffffffffu;
    static constexpr std::uint8_t kFlagTruncated = 1;

    const Node& node(std::uint32_t i) const { return m_nodes[i]; }
    std::string_view stringAt(std::uint32_t offset, std::uint32_t length) const
    {
        return std::string_view(m_strings.data() + offset, length);
    }
    std::string_view keyText(std::uint32_t key) const { return key == kNoKey ? std::string_view() : m_keys[key]; }
    /// Id of `key` if any member anywhere uses it.
    std::optional<std::uint32_t> keyId(std::string_view key) const;
    /// Number of distinct member keys (ids are 0..keyCount()-1).
    std::size_t keyCount() const { return m_keys.size(); }
    std::uint64_t nodeOffset(std::uint32_t i) const
    {
        const std::uint16_t delta = m_nodes[i].offsetDelta;
        if (delta == kOffsetException)
            return exceptionOffset(i);
        return static_cast<std::uint64_t>(static_cast<std::int64_t>(m_offsetBase[i / kOffsetGroup]) + delta
                                          - kOffsetBias);
    }

private:
    friend class JsonParser;
    friend class JsonBuilder;

    std::vector<Node> m_nodes;
    // Source offsets (saturating at 4 GiB) cost 0.25 bytes a value instead of 4: each group of 16 nodes has
    // a base (the offset of its first node), each node a 16-bit signed distance from it in Node::offsetDelta.
    // Nodes are stored container by container, so neighbours sit close in the text; the rare node farther
    // than 32 KiB from its base is listed with its exact offset.
    static constexpr std::uint32_t kOffsetGroup = 16;
    static constexpr std::int64_t kOffsetBias = 0x8000;
    static constexpr std::uint16_t kOffsetException = 0xffff;
    std::vector<std::uint32_t> m_offsetBase;
    std::vector<std::pair<std::uint32_t, std::uint32_t>> m_offsetExceptions; // node index (ascending), offset
    std::uint64_t exceptionOffset(std::uint32_t i) const;
    void appendNode(Node node, std::uint32_t offset);
    std::string m_strings;
    // Interned keys: id -> text. The text lives in fixed chunks, so views stay valid while keys are added.
    // A dump's entry names are a million distinct keys: a node-based map cost ~130 bytes for each; this
    // costs the text, a 16-byte view and two 8-byte table slots (id and hash).
    std::vector<std::string_view> m_keys;
    std::vector<std::unique_ptr<char[]>> m_keyChunks;
    char* m_keyChunkNext = nullptr;
    std::size_t m_keyChunkFree = 0;
    StringIdTable m_keyTable;
    // Most keys of a dump repeat (type, dtype, shape, Max, ...): a direct-mapped cache of recent ids,
    // indexed by a cheap hash, spares them the full string hash and the table probe while parsing.
    static constexpr std::size_t kKeyCacheSize = 256;
    std::array<std::uint32_t, kKeyCacheSize> m_keyCache {};
    std::uint32_t m_root = 0;

    std::uint32_t internKey(std::string_view key);
};

// The accessors every walk over a document calls, inline.

inline JsonType JsonValue::type() const
{
    return m_doc->node(m_index).type;
}

inline bool JsonValue::isTruncated() const
{
    return (m_doc->node(m_index).flags & JsonDocument::kFlagTruncated) != 0;
}

inline std::string_view JsonValue::asString() const
{
    const JsonDocument::Node& n = m_doc->node(m_index);
    return n.type == JsonType::String ? m_doc->stringAt(n.range.first, n.range.count) : std::string_view();
}

inline std::uint32_t JsonValue::size() const
{
    const JsonDocument::Node& n = m_doc->node(m_index);
    return (n.type == JsonType::Array || n.type == JsonType::Object) ? n.range.count : 0;
}

inline JsonValue JsonValue::at(std::uint32_t i) const
{
    return JsonValue(m_doc, m_doc->node(m_index).range.first + i);
}

inline std::string_view JsonValue::keyAt(std::uint32_t i) const
{
    return m_doc->keyText(m_doc->node(m_doc->node(m_index).range.first + i).key);
}

inline std::string_view JsonValue::key() const
{
    return m_doc->keyText(m_doc->node(m_index).key);
}

inline std::uint64_t JsonValue::offset() const
{
    return m_doc->nodeOffset(m_index);
}

struct JsonDocument::ParseOutcome
{
    std::shared_ptr<const JsonDocument> document; ///< null on a fatal error
    Diagnostics diagnostics;                      ///< the fatal error, or the truncation notice
    bool truncated = false;
    std::uint64_t truncatedAt = 0; ///< byte offset where the input ended
};

/**
 * @brief Builds a JsonDocument programmatically (for formats that are not JSON, like legacy .pkl files).
 *
 * Usage mirrors a SAX writer: beginObject/key/value.../endObject. Children are stored contiguously.
 */
class JsonBuilder
{
public:
    JsonBuilder();
    /// Reserves room for a document parsed from `textBytes` of JSON, so storage is not copied while it
    /// grows (a copy would briefly double the peak memory). Reserved but unused pages cost no memory.
    void reserveFor(std::size_t textBytes);
    void beginObject(std::uint64_t offset = 0);
    void beginArray(std::uint64_t offset = 0);
    void end(); ///< closes the innermost container
    /// Closes every open container, flagging each as truncated; a key still waiting for its value is dropped.
    void markOpenTruncated();
    void key(std::string_view key);
    void null(std::uint64_t offset = 0);
    void boolean(bool v, std::uint64_t offset = 0);
    void integer(std::int64_t v, std::uint64_t offset = 0);
    void number(double v, std::uint64_t offset = 0);
    void string(std::string_view v, std::uint64_t offset = 0);
    std::shared_ptr<const JsonDocument> finish();

private:
    std::unique_ptr<JsonDocument> m_doc;
    std::vector<JsonDocument::Node> m_scratch;
    std::vector<std::uint32_t> m_scratchOffsets;
    struct Open
    {
        std::size_t scratchStart;
        JsonType type;
        std::uint32_t key;
        std::uint64_t offset;
    };
    std::vector<Open> m_open;
    void close(std::uint8_t flags);
    std::uint32_t m_pendingKey = JsonDocument::kNoKey;
    void push(JsonDocument::Node n, std::uint64_t offset);
};

} // namespace probescope::dump
