// SPDX-License-Identifier: Apache-2.0
#include "core/dump/jsondocument.h"
#include "core/util/utf8text.h"

#include "core/dump/jsonscan.h"
#include "core/util/textposition.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>


namespace probescope::dump {

using Node = JsonDocument::Node;

// ---------------------------------------------------------------------------------------------
// JsonValue

bool JsonValue::asBool() const
{
    const Node& n = m_doc->node(m_index);
    return n.type == JsonType::Bool && n.i != 0;
}

std::int64_t JsonValue::asInt() const
{
    const Node& n = m_doc->node(m_index);
    if (n.type == JsonType::Int || n.type == JsonType::Bool)
        return n.i;
    if (n.type == JsonType::Double && std::isfinite(n.d))
        return static_cast<std::int64_t>(n.d);
    return 0;
}

double JsonValue::asDouble() const
{
    const Node& n = m_doc->node(m_index);
    if (n.type == JsonType::Double)
        return n.d;
    if (n.type == JsonType::Int || n.type == JsonType::Bool)
        return static_cast<double>(n.i);
    return std::numeric_limits<double>::quiet_NaN();
}

std::optional<JsonValue> JsonValue::find(std::string_view key) const
{
    const Node& n = m_doc->node(m_index);
    if (n.type != JsonType::Object)
        return std::nullopt;
    // In a small object (every tensor leaf) comparing the members' keys costs less than hashing `key`.
    if (n.range.count <= 16) {
        for (std::uint32_t i = n.range.count; i-- > 0;) { // backwards: the last duplicate wins
            if (m_doc->keyText(m_doc->node(n.range.first + i).key) == key)
                return JsonValue(m_doc, n.range.first + i);
        }
        return std::nullopt;
    }
    return findId(m_doc->keyId(key));
}

std::optional<JsonValue> JsonValue::findId(std::optional<std::uint32_t> id) const
{
    const Node& n = m_doc->node(m_index);
    if (n.type != JsonType::Object || !id)
        return std::nullopt;
    // Backwards: the last duplicate wins, as in Python.
    for (std::uint32_t i = n.range.count; i-- > 0;) {
        if (m_doc->node(n.range.first + i).key == *id)
            return JsonValue(m_doc, n.range.first + i);
    }
    return std::nullopt;
}

// ---------------------------------------------------------------------------------------------
// JsonDocument

std::optional<std::uint32_t> JsonDocument::keyId(std::string_view key) const
{
    return m_keyTable.find(key, [this](std::uint32_t id) { return m_keys[id]; });
}

std::uint32_t JsonDocument::internKey(std::string_view key)
{
    // Slot from the length and the first and last bytes; a slot holds id + 1 (0 = empty).
    const std::size_t cacheSlot = key.empty()
        ? 0
        : (key.size() * 31 + static_cast<unsigned char>(key.front()) * 7 + static_cast<unsigned char>(key.back()))
            % kKeyCacheSize;
    if (const std::uint32_t cached = m_keyCache[cacheSlot]; cached != 0 && m_keys[cached - 1] == key)
        return cached - 1;
    bool added = false;
    const std::uint32_t id = m_keyTable.insert(key, static_cast<std::uint32_t>(m_keys.size()),
                                               [this](std::uint32_t i) { return m_keys[i]; }, added);
    m_keyCache[cacheSlot] = id + 1;
    if (!added)
        return id;
    // A new key: its text goes to the current chunk, or to a new one (its own when the key is long).
    constexpr std::size_t kChunkBytes = 64 * 1024;
    if (m_keyChunks.empty() || key.size() > m_keyChunkFree) {
        const std::size_t bytes = std::max(kChunkBytes, key.size());
        m_keyChunks.push_back(std::make_unique_for_overwrite<char[]>(bytes)); // written before read: no zeroing
        m_keyChunkNext = m_keyChunks.back().get();
        m_keyChunkFree = bytes;
    }
    char* text = m_keyChunkNext;
    std::memcpy(text, key.data(), key.size());
    m_keyChunkNext += key.size();
    m_keyChunkFree -= key.size();
    m_keys.emplace_back(text, key.size());
    return id;
}

std::uint64_t JsonDocument::exceptionOffset(std::uint32_t i) const
{
    const auto it = std::lower_bound(m_offsetExceptions.begin(), m_offsetExceptions.end(), std::make_pair(i, 0u));
    return it != m_offsetExceptions.end() && it->first == i ? it->second : 0;
}

void JsonDocument::appendNode(Node node, std::uint32_t offset)
{
    const auto index = static_cast<std::uint32_t>(m_nodes.size());
    if (index % kOffsetGroup == 0)
        m_offsetBase.push_back(offset);
    const std::int64_t delta = static_cast<std::int64_t>(offset) - m_offsetBase.back() + kOffsetBias;
    if (delta >= 0 && delta < kOffsetException) {
        node.offsetDelta = static_cast<std::uint16_t>(delta);
    } else {
        node.offsetDelta = kOffsetException;
        m_offsetExceptions.emplace_back(index, offset);
    }
    m_nodes.push_back(node);
}

std::size_t JsonDocument::memoryBytes() const
{
    std::size_t keyBytes = m_keys.capacity() * sizeof(std::string_view) + m_keyTable.memoryBytes();
    for (const std::string_view k : m_keys)
        keyBytes += k.size();
    return m_nodes.size() * sizeof(Node) + m_offsetBase.size() * sizeof(std::uint32_t)
        + m_offsetExceptions.size() * sizeof(m_offsetExceptions[0]) + m_strings.size()
        + keyBytes;
}

// ---------------------------------------------------------------------------------------------
// JsonBuilder

namespace {
std::uint32_t clampOffset(std::uint64_t offset)
{
    return offset > 0xffffffffull ? 0xffffffffu : static_cast<std::uint32_t>(offset);
}
} // namespace

JsonBuilder::JsonBuilder()
    : m_doc(new JsonDocument())
{
    m_scratch.reserve(256);
    m_scratchOffsets.reserve(256);
}

void JsonBuilder::reserveFor(std::size_t textBytes)
{
    // msprobe's indent=1 output averages about 22 bytes per value; leave head room for denser files.
    // The string arena never exceeds the text, and untouched reserved pages are never resident.
    const std::size_t values = textBytes / 12 + 16;
    m_doc->m_nodes.reserve(values);
    m_doc->m_offsetBase.reserve(values / JsonDocument::kOffsetGroup + 1);
    m_doc->m_strings.reserve(textBytes + 16);
}

void JsonBuilder::push(Node n, std::uint64_t offset)
{
    n.key = m_pendingKey;
    m_pendingKey = JsonDocument::kNoKey;
    m_scratch.push_back(n);
    m_scratchOffsets.push_back(clampOffset(offset));
}

void JsonBuilder::beginObject(std::uint64_t offset)
{
    m_open.push_back({ m_scratch.size(), JsonType::Object, m_pendingKey, offset });
    m_pendingKey = JsonDocument::kNoKey;
}

void JsonBuilder::beginArray(std::uint64_t offset)
{
    m_open.push_back({ m_scratch.size(), JsonType::Array, m_pendingKey, offset });
    m_pendingKey = JsonDocument::kNoKey;
}

void JsonBuilder::end()
{
    close(0);
}

void JsonBuilder::markOpenTruncated()
{
    m_pendingKey = JsonDocument::kNoKey;
    while (!m_open.empty())
        close(JsonDocument::kFlagTruncated);
}

void JsonBuilder::close(std::uint8_t flags)
{
    const Open open = m_open.back();
    m_open.pop_back();
    // Children of a container are moved to the document as one contiguous block; their own children
    // were flushed before, so the indices they hold stay valid.
    const std::size_t count = m_scratch.size() - open.scratchStart;
    const auto first = static_cast<std::uint32_t>(m_doc->m_nodes.size());
    for (std::size_t k = open.scratchStart; k < m_scratch.size(); ++k)
        m_doc->appendNode(m_scratch[k], m_scratchOffsets[k]);
    m_scratch.resize(open.scratchStart);
    m_scratchOffsets.resize(open.scratchStart);
    Node n {};
    n.type = open.type;
    n.flags = flags;
    n.range.first = first;
    n.range.count = static_cast<std::uint32_t>(count);
    m_pendingKey = open.key;
    push(n, open.offset);
}

void JsonBuilder::key(std::string_view key)
{
    m_pendingKey = m_doc->internKey(key);
}

void JsonBuilder::null(std::uint64_t offset)
{
    Node n {};
    n.type = JsonType::Null;
    push(n, offset);
}

void JsonBuilder::boolean(bool v, std::uint64_t offset)
{
    Node n {};
    n.type = JsonType::Bool;
    n.i = v ? 1 : 0;
    push(n, offset);
}

void JsonBuilder::integer(std::int64_t v, std::uint64_t offset)
{
    Node n {};
    n.type = JsonType::Int;
    n.i = v;
    push(n, offset);
}

void JsonBuilder::number(double v, std::uint64_t offset)
{
    Node n {};
    n.type = JsonType::Double;
    n.d = v;
    push(n, offset);
}

void JsonBuilder::string(std::string_view v, std::uint64_t offset)
{
    Node n {};
    n.type = JsonType::String;
    n.range.first = static_cast<std::uint32_t>(m_doc->m_strings.size());
    n.range.count = static_cast<std::uint32_t>(v.size());
    m_doc->m_strings.append(v);
    push(n, offset);
}

std::shared_ptr<const JsonDocument> JsonBuilder::finish()
{
    while (!m_open.empty())
        end();
    if (m_scratch.empty()) {
        Node n {};
        n.type = JsonType::Null;
        n.key = JsonDocument::kNoKey;
        m_scratch.push_back(n);
        m_scratchOffsets.push_back(0);
    }
    m_doc->m_root = static_cast<std::uint32_t>(m_doc->m_nodes.size());
    m_doc->appendNode(m_scratch.back(), m_scratchOffsets.back());
    m_scratch.clear();
    m_scratchOffsets.clear();
    // No shrink_to_fit of a large document: it would copy the whole document while the source text is still mapped.
    // A small one that used a fraction of what was reserved for its text (mostly padding, as -da's rank tables
    // reduced to what its analysis reads) is fitted: many are kept at once (10,000 ranks, issue 37).
    constexpr std::size_t kFitBelow = 4 << 20;
    auto fit = [&](auto& v, std::size_t elementBytes) {
        if (v.capacity() * elementBytes <= kFitBelow && v.capacity() > 2 * v.size() + 256)
            v.shrink_to_fit();
    };
    fit(m_doc->m_nodes, sizeof(Node));
    fit(m_doc->m_offsetBase, sizeof(std::uint32_t));
    fit(m_doc->m_strings, 1);
    if (m_doc->m_keyChunks.size() == 1 && m_doc->m_nodes.size() * sizeof(Node) <= kFitBelow) {
        // The keys' one chunk (64 KiB) to the bytes they take; the views move with them.
        const char* from = m_doc->m_keyChunks.front().get();
        const std::size_t used = static_cast<std::size_t>(m_doc->m_keyChunkNext - from);
        auto chunk = std::make_unique_for_overwrite<char[]>(std::max<std::size_t>(used, 1));
        std::memcpy(chunk.get(), from, used);
        for (std::string_view& k : m_doc->m_keys)
            k = std::string_view(chunk.get() + (k.data() - from), k.size());
        m_doc->m_keyChunkNext = chunk.get() + used;
        m_doc->m_keyChunkFree = 0;
        m_doc->m_keyChunks.front() = std::move(chunk);
    }
    return std::shared_ptr<const JsonDocument>(m_doc.release());
}

// ---------------------------------------------------------------------------------------------
// Number helpers

namespace {

// Exact powers of ten: a double holds 10^0..10^22 without rounding.
constexpr double kExactPow10[] = { 1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                   1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22 };

} // namespace

// ---------------------------------------------------------------------------------------------
// JsonParser: a non-recursive tokenizer feeding JsonBuilder.

namespace {
/// The statistics msprobe writes per tensor (the only keys whose text values nonFiniteText reads).
bool isStatisticKey(std::string_view key)
{
    return key == "Max" || key == "Min" || key == "Mean" || key == "Norm";
}

/// The float a text names when it is a non-finite spelling, ASCII case ignored: nan, inf, infinity, with an
/// optional sign (what str(float) and numpy print, and the tokens' own spelling); nothing for any other text.
std::optional<double> nonFiniteText(std::string_view text)
{
    if (text.size() < 3 || text.size() > 9)
        return std::nullopt;
    bool negative = false;
    if (text.front() == '-' || text.front() == '+') {
        negative = text.front() == '-';
        text.remove_prefix(1);
    }
    char lower[9] = {};
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        lower[i] = c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
    }
    const std::string_view t(lower, text.size());
    if (t == "nan")
        return std::numeric_limits<double>::quiet_NaN();
    if (t == "inf" || t == "infinity")
        return negative ? -HUGE_VAL : HUGE_VAL;
    return std::nullopt;
}
} // namespace

class JsonParser
{
public:
    JsonParser(std::string_view text, const std::string& fileName, const JsonParseOptions& options)
        : m_text(text)
        , m_file(fileName)
        , m_options(options)
    {
    }

    JsonDocument::ParseOutcome run();

private:
    struct Failure
    {
        std::string id;
        std::uint64_t offset;
        std::string message;
        bool atEnd; // the input ended: salvageable
    };

    enum class Expect : std::uint8_t { Value, KeyOrEnd, Key, ColonThenValue, CommaOrEnd };

    static constexpr std::size_t kReadPastEvery = std::size_t { 32 } << 20;
    std::string_view m_text;
    std::size_t m_pos = 0;
    std::size_t m_nextReadPast = kReadPastEvery;
    const std::string& m_file;
    JsonParseOptions m_options;
    JsonBuilder m_builder;
    std::vector<JsonType> m_stack; // open containers
    std::string m_buffer;          // unescaped string
    Diagnostics m_utf8Problems;    // invalid UTF-8 inside strings: reported, parsing goes on
    std::size_t m_utf8Count = 0;
    bool m_statisticKey = false;   // the key just read is Max, Min, Mean or Norm

    void checkUtf8(std::size_t begin, std::size_t end);
    void appendUtf8Problems(JsonDocument::ParseOutcome& outcome)
    {
        if (m_utf8Count > m_utf8Problems.size())
            m_utf8Problems.push_back(makeError("json.utf8", SourceLocation { m_file, std::nullopt, 0, 0 },
                                               std::to_string(m_utf8Count - m_utf8Problems.size())
                                                   + " more strings with invalid UTF-8"));
        for (Diagnostic& d : m_utf8Problems)
            outcome.diagnostics.push_back(std::move(d));
        m_utf8Problems.clear();
    }

    void skipSpace()
    {
        m_pos = jsonscan::skipSpace(m_text.data(), m_pos, m_text.size());
    }
    bool atEnd() const { return m_pos >= m_text.size(); }

    std::optional<Failure> parseString(std::string_view& out);
    std::optional<Failure> parseNumber(std::uint64_t start);
    std::optional<Failure> parseLiteral(std::uint64_t start);
    Failure endFailure(const char* what) const
    {
        return Failure { "json.truncated", m_pos, std::string("unexpected end of file ") + what, true };
    }
    Failure syntax(std::string message) const { return Failure { "json.syntax", m_pos, std::move(message), false }; }
    static std::string describe(char c);
};

std::string JsonParser::describe(char c)
{
    if (c >= 0x20 && c < 0x7f)
        return std::string("'") + c + "'";
    char buf[16];
    std::snprintf(buf, sizeof buf, "byte 0x%02x", static_cast<unsigned char>(c));
    return buf;
}

namespace {
int hexValue(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

void appendUtf8(std::string& out, std::uint32_t cp)
{
    if (cp < 0x80) {
        out += static_cast<char>(cp);
    } else if (cp < 0x800) {
        out += static_cast<char>(0xc0 | (cp >> 6));
        out += static_cast<char>(0x80 | (cp & 0x3f));
    } else if (cp < 0x10000) {
        out += static_cast<char>(0xe0 | (cp >> 12));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
        out += static_cast<char>(0x80 | (cp & 0x3f));
    } else {
        out += static_cast<char>(0xf0 | (cp >> 18));
        out += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
        out += static_cast<char>(0x80 | (cp & 0x3f));
    }
}
} // namespace

namespace {
/// Length of the valid UTF-8 sequence at p[0..n), 0 if invalid: the one RFC 3629 rule of core/util/utf8text.h.
std::size_t utf8SequenceLength(const unsigned char* p, std::size_t n)
{
    return probescope::utf8SequenceLength(std::string_view(reinterpret_cast<const char*>(p), n), 0);
}

// One file with a broken encoding would otherwise give a diagnostic per string.
constexpr std::size_t kMaxReportedUtf8 = 20;
} // namespace

// msprobe writes JSON with Python's ensure_ascii=False: any non-ASCII text is UTF-8. A flipped byte must not
// slip through as a name that matches nothing or a number that reads as None (issue 20).
void JsonParser::checkUtf8(std::size_t begin, std::size_t end)
{
    const auto* p = reinterpret_cast<const unsigned char*>(m_text.data());
    for (std::size_t i = begin; i < end;) {
        const std::size_t len = utf8SequenceLength(p + i, end - i);
        if (len > 0) {
            i += len;
            continue;
        }
        if (++m_utf8Count <= kMaxReportedUtf8) {
            char byte[8];
            std::snprintf(byte, sizeof byte, "0x%02x", p[i]);
            m_utf8Problems.push_back(makeError("json.utf8", locate(m_text, i, m_file),
                                               std::string("invalid UTF-8 (byte ") + byte + ") inside a string"));
        }
        return; // one diagnostic per string
    }
}

// On entry m_pos is at the opening quote. `out` views either the source text or m_buffer.
std::optional<JsonParser::Failure> JsonParser::parseString(std::string_view& out)
{
    const char* p = m_text.data();
    const std::size_t n = m_text.size();
    const std::size_t begin = m_pos + 1;
    bool high = false; // a byte >= 0x80: the string's UTF-8 is checked once it ends
    // Fast path: no escapes, the string is a view of the text.
    std::size_t i = jsonscan::scanStringRun(p, begin, n, high);
    if (i < n && p[i] == '"') {
        if (high)
            checkUtf8(begin, i);
        out = std::string_view(p + begin, i - begin);
        m_pos = i + 1;
        return std::nullopt;
    }
    m_buffer.assign(p + begin, i - begin);
    while (i < n) {
        const unsigned char c = static_cast<unsigned char>(p[i]);
        if (c == '"') {
            if (high)
                checkUtf8(begin, i);
            out = m_buffer;
            m_pos = i + 1;
            return std::nullopt;
        }
        if (c < 0x20) {
            m_pos = i;
            return syntax("control character " + describe(static_cast<char>(c)) + " inside a string");
        }
        if (c != '\\') {
            // Plain text up to the next quote, escape or control byte.
            const std::size_t run = jsonscan::scanStringRun(p, i, n, high);
            m_buffer.append(p + i, run - i);
            i = run;
            continue;
        }
        if (i + 1 >= n)
            break;
        const char e = p[i + 1];
        i += 2;
        switch (e) {
        case '"': m_buffer += '"'; break;
        case '\\': m_buffer += '\\'; break;
        case '/': m_buffer += '/'; break;
        case 'b': m_buffer += '\b'; break;
        case 'f': m_buffer += '\f'; break;
        case 'n': m_buffer += '\n'; break;
        case 'r': m_buffer += '\r'; break;
        case 't': m_buffer += '\t'; break;
        case 'u': {
            auto readHex = [&](std::size_t at, std::uint32_t& cp) -> int {
                if (at + 4 > n)
                    return 1;
                cp = 0;
                for (std::size_t k = 0; k < 4; ++k) {
                    const int h = hexValue(p[at + k]);
                    if (h < 0)
                        return 2;
                    cp = cp * 16 + static_cast<std::uint32_t>(h);
                }
                return 0;
            };
            std::uint32_t cp = 0;
            if (const int rc = readHex(i, cp); rc != 0) {
                m_pos = i;
                if (rc == 1)
                    return endFailure("inside a \\u escape");
                return syntax("invalid \\u escape");
            }
            i += 4;
            if (cp >= 0xd800 && cp < 0xdc00 && i + 6 <= n && p[i] == '\\' && p[i + 1] == 'u') {
                std::uint32_t low = 0;
                if (readHex(i + 2, low) == 0 && low >= 0xdc00 && low < 0xe000) {
                    cp = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00);
                    i += 6;
                }
            }
            // Lone surrogates (Python writes them for invalid text) become U+FFFD.
            if (cp >= 0xd800 && cp < 0xe000)
                cp = 0xfffd;
            appendUtf8(m_buffer, cp);
            break;
        }
        default:
            m_pos = i - 1;
            return syntax(std::string("invalid escape \\") + (e >= 0x20 && e < 0x7f ? std::string(1, e) : "?"));
        }
    }
    m_pos = n;
    return endFailure("inside a string");
}

std::optional<JsonParser::Failure> JsonParser::parseNumber(std::uint64_t start)
{
    const char* p = m_text.data();
    const std::size_t n = m_text.size();
    std::size_t i = m_pos;
    bool negative = false;
    if (p[i] == '-') {
        negative = true;
        ++i;
        if (i < n && p[i] == 'I') { // -Infinity
            m_pos = i;
            if (auto f = parseLiteral(start))
                return f;
            return std::nullopt;
        }
    }
    const std::size_t digitsStart = i;
    std::uint64_t mantissa = 0;
    bool overflow = false;
    // Up to 19 digits cannot overflow; longer runs check each step.
    while (i < n && i - digitsStart < 19 && p[i] >= '0' && p[i] <= '9')
        mantissa = mantissa * 10 + static_cast<std::uint64_t>(p[i++] - '0');
    while (i < n && p[i] >= '0' && p[i] <= '9') {
        const auto d = static_cast<std::uint64_t>(p[i] - '0');
        if (mantissa > (std::numeric_limits<std::uint64_t>::max() - d) / 10)
            overflow = true;
        else
            mantissa = mantissa * 10 + d;
        ++i;
    }
    if (i == digitsStart) {
        m_pos = i;
        if (i >= n)
            return endFailure("inside a number");
        return syntax("invalid number");
    }
    if (p[digitsStart] == '0' && i - digitsStart > 1) {
        m_pos = digitsStart;
        return syntax("leading zero in a number");
    }
    // Significant digits read into `mantissa` (a JSON integer part has no leading zeros, except a lone 0).
    std::size_t significant = mantissa == 0 ? 0 : i - digitsStart;
    // At least one digit must follow '.' and the exponent marker.
    const auto skipDigits = [p, n](std::size_t& at) {
        const std::size_t runStart = at;
        while (at < n && p[at] >= '0' && p[at] <= '9')
            ++at;
        return at > runStart;
    };
    const auto noDigit = [&](const char* where) {
        m_pos = i;
        return i >= n ? endFailure("inside a number") : syntax(std::string("digit expected ") + where);
    };
    bool isFloat = false;
    std::int64_t exponent10 = 0; // the value is mantissa * 10^exponent10 while `significant` <= 19
    if (i < n && p[i] == '.') {
        isFloat = true;
        ++i;
        const std::size_t fractionStart = i;
        if (!skipDigits(i))
            return noDigit("after '.'");
        for (std::size_t k = fractionStart; k < i && significant <= 19; ++k) {
            significant += significant > 0 || p[k] != '0';
            mantissa = mantissa * 10 + static_cast<std::uint64_t>(p[k] - '0');
            --exponent10;
        }
    }
    if (i < n && (p[i] == 'e' || p[i] == 'E')) {
        isFloat = true;
        ++i;
        bool negativeExponent = false;
        if (i < n && (p[i] == '+' || p[i] == '-'))
            negativeExponent = p[i++] == '-';
        const std::size_t exponentStart = i;
        if (!skipDigits(i))
            return noDigit("in exponent");
        std::int64_t e = 0;
        for (std::size_t k = exponentStart; k < i && e < 100000; ++k)
            e = e * 10 + (p[k] - '0');
        if (e >= 100000)
            significant = 99; // far outside the fast path's range; from_chars decides
        exponent10 += negativeExponent ? -e : e;
    }
    // A number that touches the end of the input inside a container may have been cut: it is not taken.
    // A bare number as the whole document has nothing around it to cut.
    if (i >= n && !m_stack.empty()) {
        m_pos = i;
        return endFailure("inside a number");
    }
    if (!isFloat && !overflow && mantissa <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
        const auto v = static_cast<std::int64_t>(mantissa);
        m_builder.integer(negative ? -v : v, start);
    } else if (!isFloat && !overflow && negative && mantissa == (std::uint64_t(1) << 63)) {
        m_builder.integer(std::numeric_limits<std::int64_t>::min(), start);
    } else if (isFloat && !overflow && significant <= 19 && mantissa <= (std::uint64_t(1) << 53)
               && exponent10 >= -22 && exponent10 <= 22) {
        // Clinger's fast path: mantissa and 10^|e| are exact doubles, so one multiplication or division
        // is correctly rounded, the same double from_chars gives. It covers nearly all msprobe statistics.
        double v = static_cast<double>(mantissa);
        v = exponent10 < 0 ? v / kExactPow10[-exponent10] : v * kExactPow10[exponent10];
        m_builder.number(negative ? -v : v, start);
    } else {
        double v = 0;
        const auto [ptr, ec] = std::from_chars(p + m_pos, p + i, v);
        if (ec == std::errc::result_out_of_range) {
            // from_chars leaves v unset when out of range; Python gives +-inf, or 0 for underflow.
            const std::string_view token(p + m_pos, i - m_pos);
            const bool underflow = token.find("e-") != std::string_view::npos || token.find("E-") != std::string_view::npos;
            v = underflow ? 0.0 : (negative ? -HUGE_VAL : HUGE_VAL);
        } else if (ec != std::errc() || ptr != p + i) {
            return syntax("invalid number");
        }
        m_builder.number(v, start);
    }
    m_pos = i;
    return std::nullopt;
}

std::optional<JsonParser::Failure> JsonParser::parseLiteral(std::uint64_t start)
{
    struct Literal
    {
        std::string_view text;
        int kind; // 0 null, 1 true, 2 false, 3 NaN, 4 Infinity
    };
    static constexpr Literal literals[] = { { "null", 0 }, { "true", 1 }, { "false", 2 }, { "NaN", 3 }, { "Infinity", 4 } };
    const std::string_view rest = m_text.substr(m_pos);
    for (const Literal& lit : literals) {
        if (rest.empty() || lit.text.front() != rest.front())
            continue; // the literals' first letters differ
        if (rest.substr(0, lit.text.size()) == lit.text) {
            m_pos += lit.text.size();
            if (atEnd() && !m_stack.empty())
                return endFailure("after a literal");
            const bool negative = start < m_pos && m_text[start] == '-';
            switch (lit.kind) {
            case 0: m_builder.null(start); break;
            case 1: m_builder.boolean(true, start); break;
            case 2: m_builder.boolean(false, start); break;
            case 3: m_builder.number(std::numeric_limits<double>::quiet_NaN(), start); break;
            case 4: m_builder.number(negative ? -HUGE_VAL : HUGE_VAL, start); break;
            }
            return std::nullopt;
        }
        if (lit.text.substr(0, rest.size()) == rest) {
            m_pos = m_text.size();
            return endFailure("inside a literal");
        }
    }
    return syntax("unexpected " + describe(m_text[m_pos]));
}

JsonDocument::ParseOutcome JsonParser::run()
{
    JsonDocument::ParseOutcome outcome;
    std::optional<Failure> failure;
    m_builder.reserveFor(m_text.size());
    // Editors on some systems add a UTF-8 byte order mark to files edited by hand.
    if (m_text.substr(0, 3) == "\xEF\xBB\xBF")
        m_pos = 3;
    Expect expect = Expect::Value;
    bool haveRoot = false;
    // The '}' or ']' at m_pos ends the innermost container (an empty one, or after its last item).
    auto closeContainer = [&] {
        ++m_pos;
        m_builder.end();
        m_stack.pop_back();
        expect = Expect::CommaOrEnd;
        if (m_stack.empty())
            haveRoot = true;
    };

    while (!failure) {
        skipSpace();
        if (atEnd()) {
            if (haveRoot && m_stack.empty())
                break;
            failure = endFailure(m_stack.empty() ? "before any value" : "inside an unclosed container");
            break;
        }
        const char c = m_text[m_pos];
        const std::uint64_t start = m_pos;
        if (haveRoot && m_stack.empty()) {
            failure = syntax("unexpected " + describe(c) + " after the end of the document");
            break;
        }
        switch (expect) {
        case Expect::Key:
        case Expect::KeyOrEnd: {
            if (c == '}' && expect == Expect::KeyOrEnd) {
                closeContainer();
                break;
            }
            if (c != '"') {
                failure = syntax("expected a string key, found " + describe(c));
                break;
            }
            std::string_view key;
            if (auto f = parseString(key)) {
                failure = std::move(f);
                break;
            }
            m_builder.key(key);
            m_statisticKey = isStatisticKey(key);
            expect = Expect::ColonThenValue;
            // The usual ':' right away, without a trip round the loop (anything else takes that trip).
            skipSpace();
            if (!atEnd() && m_text[m_pos] == ':') {
                ++m_pos;
                expect = Expect::Value;
            }
            break;
        }
        case Expect::ColonThenValue:
            if (c != ':') {
                failure = syntax("expected ':' after an object key, found " + describe(c));
                break;
            }
            ++m_pos;
            expect = Expect::Value;
            break;
        case Expect::CommaOrEnd: {
            const JsonType top = m_stack.back();
            if (c == ',') {
                ++m_pos;
                expect = top == JsonType::Object ? Expect::Key : Expect::Value;
            } else if ((c == '}' && top == JsonType::Object) || (c == ']' && top == JsonType::Array)) {
                closeContainer();
                if (m_pos >= m_nextReadPast && m_options.readPast) {
                    m_options.readPast(m_pos);
                    m_nextReadPast = m_pos + kReadPastEvery;
                }
            } else {
                failure = syntax(std::string("expected ',' or '") + (top == JsonType::Object ? '}' : ']')
                                 + "', found " + describe(c));
            }
            break;
        }
        case Expect::Value: {
            if (c == '{' || c == '[') {
                if (m_stack.size() >= m_options.maxDepth) {
                    failure = Failure { "json.too-deep", start,
                                        "nesting deeper than " + std::to_string(m_options.maxDepth) + " levels", false };
                    break;
                }
                ++m_pos;
                if (c == '{') {
                    m_builder.beginObject(start);
                    m_stack.push_back(JsonType::Object);
                    expect = Expect::KeyOrEnd;
                } else {
                    m_builder.beginArray(start);
                    m_stack.push_back(JsonType::Array);
                    skipSpace();
                    if (!atEnd() && m_text[m_pos] == ']')
                        closeContainer();
                }
                break;
            }
            std::optional<Failure> f;
            if (c == '"') {
                std::string_view s;
                f = parseString(s);
                if (!f && atEnd() && !m_stack.empty())
                    f = endFailure("after a string");
                if (!f) {
                    // A statistic as text that names a non-finite float ("nan", "inf", "-inf") is that float,
                    // exactly as the bare tokens NaN, Infinity and -Infinity Python's json.dump writes: every reader
                    // of statistics (compare profiles, -da, run-ut, the viewers) then judges the two spellings alike.
                    const auto nonFinite = m_statisticKey && !m_stack.empty() && m_stack.back() == JsonType::Object
                        ? nonFiniteText(s)
                        : std::nullopt;
                    if (nonFinite)
                        m_builder.number(*nonFinite, start);
                    else
                        m_builder.string(s, start);
                }
            } else if (c == '-' || (c >= '0' && c <= '9')) {
                f = parseNumber(start);
            } else {
                f = parseLiteral(start);
            }
            if (f) {
                failure = std::move(f);
                break;
            }
            expect = Expect::CommaOrEnd;
            if (m_stack.empty()) {
                haveRoot = true;
                break;
            }
            // The usual ',' right away, without a trip round the loop (anything else takes that trip).
            skipSpace();
            if (!atEnd() && m_text[m_pos] == ',') {
                ++m_pos;
                expect = m_stack.back() == JsonType::Object ? Expect::Key : Expect::Value;
            }
            break;
        }
        }
    }

    if (failure) {
        const bool salvage = failure->atEnd && m_options.salvageTruncated && !m_stack.empty();
        const SourceLocation where = locate(m_text, failure->offset, m_file);
        if (!salvage) {
            // The fatal problem first: callers report diagnostics.front() when there is no document.
            outcome.diagnostics.push_back(makeError(failure->id, where, failure->message));
            appendUtf8Problems(outcome);
            outcome.truncated = failure->atEnd;
            outcome.truncatedAt = failure->offset;
            return outcome;
        }
        outcome.truncated = true;
        outcome.truncatedAt = m_text.size();
        outcome.diagnostics.push_back(makeError(
            "json.truncated", locate(m_text, m_text.size(), m_file),
            "the file ends after " + std::to_string(m_text.size()) + " bytes, " + failure->message
                + "; the parts read completely are kept"));
        // Close every open container, keeping what was complete, and mark them truncated.
        m_builder.markOpenTruncated();
    }
    appendUtf8Problems(outcome);
    outcome.document = m_builder.finish();
    return outcome;
}

JsonDocument::ParseOutcome JsonDocument::parse(std::string_view text, const std::string& fileName,
                                               const JsonParseOptions& options)
{
    JsonParser parser(text, fileName, options);
    return parser.run();
}

} // namespace probescope::dump
