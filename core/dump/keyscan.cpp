// SPDX-License-Identifier: Apache-2.0
#include "core/dump/keyscan.h"

#include "core/dump/jsonscan.h"
#include "core/util/fileio.h"

#include <cstring>

namespace probescope::dump {

namespace {

/// Index of the first '"', '{', '}', '[' or ']' in p[i..n), or n: inside a value nothing else matters to a skip.
std::size_t nextStructural(const char* p, std::size_t i, std::size_t n)
{
#if defined(__SSE2__)
    const __m128i quote = _mm_set1_epi8('"');
    const __m128i open = _mm_set1_epi8('{');
    const __m128i close = _mm_set1_epi8('}');
    const __m128i openList = _mm_set1_epi8('[');
    const __m128i closeList = _mm_set1_epi8(']');
    for (; i + 16 <= n; i += 16) {
        const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i));
        const __m128i hit = _mm_or_si128(
            _mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_or_si128(_mm_cmpeq_epi8(v, open), _mm_cmpeq_epi8(v, close))),
            _mm_or_si128(_mm_cmpeq_epi8(v, openList), _mm_cmpeq_epi8(v, closeList)));
        if (const auto mask = static_cast<unsigned>(_mm_movemask_epi8(hit)))
            return i + static_cast<std::size_t>(__builtin_ctz(mask));
    }
#endif
    for (; i < n; ++i) {
        const char c = p[i];
        if (c == '"' || c == '{' || c == '}' || c == '[' || c == ']')
            return i;
    }
    return n;
}

class Scanner
{
public:
    Scanner(std::string_view text, DumpKeys& out)
        : m_p(text.data())
        , m_n(text.size())
        , m_out(out)
    {
    }

    /// Empty on success, else why the scan gave up.
    std::string run()
    {
        space();
        if (!take('{'))
            return "not a JSON object";
        bool data = false;
        space();
        if (peek('}'))
            return "no \"data\" object";
        while (true) {
            std::string_view name;
            if (!string(name))
                return m_error;
            space();
            if (!take(':'))
                return "':' expected";
            space();
            if (name == "data" && peek('{')) {
                if (!entries())
                    return m_error;
                data = true;
            } else if (name == "task" && peek('"')) {
                std::string_view task;
                if (!string(task))
                    return m_error;
                m_out.task = std::string(task);
            } else if (!skipValue()) {
                return m_error;
            }
            space();
            if (take(','))
            {
                space();
                continue;
            }
            if (take('}'))
                break;
            return "',' or '}' expected";
        }
        return data ? std::string() : "no \"data\" object";
    }

    std::string takeKeys() { return std::move(m_keys); }
    const std::vector<std::pair<std::size_t, std::size_t>>& keySpans() const { return m_spans; }

private:
    const char* m_p;
    std::size_t m_n;
    std::size_t m_i = 0;
    DumpKeys& m_out;
    std::string m_keys;
    std::vector<std::pair<std::size_t, std::size_t>> m_spans; // (offset, length) of each key in m_keys
    std::string m_error;

    void space() { m_i = jsonscan::skipSpace(m_p, m_i, m_n); }
    bool peek(char c) const { return m_i < m_n && m_p[m_i] == c; }
    bool take(char c)
    {
        if (!peek(c))
            return false;
        ++m_i;
        return true;
    }
    bool fail(const char* why)
    {
        m_error = why;
        return false;
    }

    /// A string without escapes (a key with one gives up the scan: the full reader handles it).
    bool string(std::string_view& text)
    {
        if (!take('"'))
            return fail("'\"' expected");
        bool high = false;
        const std::size_t start = m_i;
        const std::size_t end = jsonscan::scanStringRun(m_p, m_i, m_n, high);
        if (end >= m_n || m_p[end] != '"')
            return fail(end >= m_n ? "cut short" : "a key with an escape or a control character");
        text = std::string_view(m_p + start, end - start);
        m_i = end + 1;
        return true;
    }

    /// Past a string whatever it holds; `text` is set when it has no escape.
    bool skipString(std::string_view* text)
    {
        ++m_i; // the opening quote
        const std::size_t start = m_i;
        bool escaped = false;
        while (true) {
            bool high = false;
            const std::size_t at = jsonscan::scanStringRun(m_p, m_i, m_n, high);
            if (at >= m_n)
                return fail("cut short");
            if (m_p[at] == '"') {
                if (text && !escaped)
                    *text = std::string_view(m_p + start, at - start);
                m_i = at + 1;
                return true;
            }
            if (m_p[at] != '\\')
                return fail("a control character in a string");
            escaped = true;
            m_i = at + 2;
        }
    }

    bool skipValue()
    {
        if (peek('"'))
            return skipString(nullptr);
        if (!peek('{') && !peek('[')) {
            // A number, true, false, null, NaN, Infinity: up to the next ',', '}' or ']'.
            while (m_i < m_n && m_p[m_i] != ',' && m_p[m_i] != '}' && m_p[m_i] != ']')
                ++m_i;
            return m_i < m_n || fail("cut short");
        }
        int depth = 0;
        while (true) {
            m_i = nextStructural(m_p, m_i, m_n);
            if (m_i >= m_n)
                return fail("cut short");
            switch (m_p[m_i]) {
            case '"': {
                std::string_view text;
                if (!skipString(&text))
                    return false;
                // msprobe's md5 mode: a leaf with a member "md5" (compare/msprobe12/compare.cpp's detectMode decides).
                if (text.size() == 3 && text == "md5" && !m_out.md5Key) {
                    const std::size_t after = jsonscan::skipSpace(m_p, m_i, m_n);
                    m_out.md5Key = after < m_n && m_p[after] == ':';
                }
                continue;
            }
            case '{':
            case '[':
                ++depth;
                break;
            default:
                --depth;
                break;
            }
            ++m_i;
            if (depth == 0)
                return true;
        }
    }

    bool entries()
    {
        take('{');
        space();
        if (take('}'))
            return true;
        while (true) {
            std::string_view key;
            if (!string(key))
                return false;
            m_spans.emplace_back(m_keys.size(), key.size());
            m_keys.append(key);
            space();
            if (!take(':'))
                return fail("':' expected");
            space();
            if (!skipValue())
                return false;
            space();
            if (take(',')) {
                space();
                continue;
            }
            if (take('}'))
                return true;
            return fail("',' or '}' expected");
        }
    }
};

} // namespace

Result<DumpKeys> scanDumpKeysIn(std::string_view text, const std::filesystem::path& path)
{
    DumpKeys out;
    Scanner scanner(text, out);
    if (std::string error = scanner.run(); !error.empty())
        return makeError("dump.key-scan", fileLocation(path),
                         "the entry keys could not be scanned: " + error);
    auto keys = std::make_shared<std::string>(scanner.takeKeys());
    keys->shrink_to_fit(); // kept by the tree for as long as the viewer shows it
    out.keys.reserve(scanner.keySpans().size());
    for (const auto& [offset, length] : scanner.keySpans())
        out.keys.emplace_back(keys->data() + offset, length);
    out.text = std::move(keys);
    return out;
}

Result<DumpKeys> scanDumpKeys(const std::filesystem::path& path)
{
    auto file = MappedFile::open(path, maxJsonFileBytes());
    if (!file)
        return file.error();
    return scanDumpKeysIn((*file)->text(), path);
}

} // namespace probescope::dump
