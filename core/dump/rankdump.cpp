// SPDX-License-Identifier: Apache-2.0
#include "core/dump/rankdump.h"

#include "core/dump/jsonscan.h"
#include "core/util/fileio.h"
#include "core/util/textposition.h"

#include <algorithm>
#include <atomic>
#include <functional>
#include <cctype>
#include <mutex>

#include <unistd.h>

namespace probescope::dump {

namespace fs = std::filesystem;

void ConstructLinks::reserve(std::size_t links, std::size_t childBytes)
{
    m_items.reserve(links);
    m_childText.reserve(childBytes);
}

void ConstructLinks::emplace_back(std::string_view child, std::string_view parent)
{
    bool added = false;
    const auto textOf = [this](std::uint32_t id) -> std::string_view { return m_parents[id]; };
    const std::uint32_t parentId = m_parentIds.insert(parent, static_cast<std::uint32_t>(m_parents.size()), textOf, added);
    if (added)
        m_parents.emplace_back(parent);
    const auto item = static_cast<std::uint32_t>(m_items.size());
    m_items.push_back({ m_childText.size(), static_cast<std::uint32_t>(child.size()), parentId });
    m_childText.append(child);
    m_childIds.insert(child, item, [this](std::uint32_t i) { return (*this)[i].child; }, added);
    if (!added)
        m_childIds.setLast(item); // the last link wins, as in a Python dict
}

const std::string* ConstructLinks::parent(std::string_view child) const
{
    const auto item = m_childIds.find(child, [this](std::uint32_t i) { return (*this)[i].child; });
    return item ? &m_parents[m_items[*item].parent] : nullptr;
}

std::size_t ConstructLinks::memoryBytes() const
{
    std::size_t bytes = m_childText.capacity() + m_items.capacity() * sizeof(Item) + m_parentIds.memoryBytes()
        + m_childIds.memoryBytes();
    for (const std::string& p : m_parents)
        bytes += sizeof(std::string) + (p.size() > 15 ? p.capacity() + 1 : 0);
    return bytes;
}

const std::string* ConstructMap::parent(std::string_view key) const
{
    if (const std::string* p = links.parent(key))
        return p;
    if (parentOf.empty())
        return nullptr;
    const auto it = parentOf.find(std::string(key));
    return it == parentOf.end() ? nullptr : &it->second;
}

namespace {

struct LoadedJson
{
    std::shared_ptr<const MappedFile> file;
    std::shared_ptr<const JsonDocument> document;
};

Result<LoadedJson> loadJson(const fs::path& path)
{
    auto file = MappedFile::open(path, maxJsonFileBytes());
    if (!file)
        return file.error();
    auto parsed = JsonDocument::parse((*file)->text(), path.string());
    if (!parsed.document)
        return parsed.diagnostics.front();
    return LoadedJson { *file, parsed.document };
}

Diagnostic typeError(const LoadedJson& json, JsonValue at, std::string id, std::string message)
{
    return makeError(std::move(id), locate(json.file->text(), at.offset(), json.file->path().string()),
                     std::move(message));
}

// msprobe stack frames are strings; other shapes are kept readable rather than dropped.
std::vector<std::string> framesFrom(JsonValue list)
{
    std::vector<std::string> frames;
    for (std::uint32_t i = 0; i < list.size(); ++i) {
        const JsonValue f = list.at(i);
        if (f.isString()) {
            frames.emplace_back(f.asString());
        } else if (f.isArray()) {
            std::string joined;
            for (std::uint32_t k = 0; k < f.size(); ++k) {
                if (k)
                    joined += ", ";
                const JsonValue part = f.at(k);
                joined += part.isString() ? std::string(part.asString())
                                          : (part.isInt() ? std::to_string(part.asInt()) : std::string("?"));
            }
            frames.push_back(std::move(joined));
        }
    }
    return frames;
}

} // namespace

Result<ConstructMap> readConstructJson(const fs::path& path)
{
    auto json = loadJson(path);
    if (!json)
        return json.error();
    const JsonValue root = json->document->root();
    if (!root.isObject())
        return typeError(*json, root, "construct.type", "construct.json must hold an object of node -> parent");
    ConstructMap map;
    map.present = true;
    map.links.reserve(root.size(), json->file->text().size() / 2);
    for (std::uint32_t i = 0; i < root.size(); ++i) {
        const std::string_view key = root.keyAt(i);
        JsonValue v = root.at(i);
        if (key == "megatron_micro_step_number") {
            if (v.isInt())
                map.megatronMicroSteps = v.asInt();
            continue;
        }
        // Megatron dumps write [parent, micro_step].
        if (v.isArray() && v.size() >= 1)
            v = v.at(0);
        if (!v.isString() && !v.isNull())
            return typeError(*json, v, "construct.type",
                             "the parent of \"" + std::string(key) + "\" must be a string or null");
        map.links.emplace_back(key, v.asString());
    }
    return map;
}

// ---------------------------------------------------------------------------------------------
// stack.json index

namespace {
/// Sources are told apart by a serial number, never by address: a freed Source's address can come back.
std::atomic<std::uint64_t> g_stackSourceSerial { 0 };

/**
 * A thread's window on the last stack.json it read. A compare asks for the stacks of its ops in file order, one
 * short range (~500 bytes) each: a pread each was half a million system calls at a million entries. The window
 * reads ahead once a thread goes forward through the file, and serves the next ranges from memory. Reads stay
 * preads of the open file (not a mapping): a file cut short on disk is a failed read, never a SIGBUS.
 */
struct StackWindow
{
    std::uint64_t source = 0; // serial of the Source read (0: none)
    std::uint64_t begin = 0;  // file offset of text[0]
    std::uint64_t lastEnd = 0; // end of the last range asked for
    std::string text;
};
thread_local StackWindow t_stackWindow;
constexpr std::size_t kStackWindowBytes = std::size_t { 256 } << 10;
} // namespace

struct StackIndex::Source
{
    std::string path;
    int fd = -1; // -1: every group was filled when the index was built (legacy .pkl stacks)
    std::mutex mutex;
    std::unordered_map<std::uint32_t, std::vector<std::string>> frames; // by group; nodes never move
    const std::uint64_t serial = ++g_stackSourceSerial;

    Source() = default;
    Source(const Source&) = delete;
    Source& operator=(const Source&) = delete;
    ~Source()
    {
        if (fd >= 0)
            ::close(fd);
    }

    /// Reads [begin, begin + size) of the file into `to`; false if the file ends first or a read fails.
    bool readAt(char* to, std::size_t size, std::uint64_t begin) const
    {
        std::size_t done = 0;
        while (done < size) {
            const ssize_t got = ::pread(fd, to + done, size - done, static_cast<off_t>(begin + done));
            if (got <= 0)
                return false;
            done += static_cast<std::size_t>(got);
        }
        return true;
    }

    bool readText(const Group& group, std::string& text) const
    {
        const std::size_t size = group.end - group.begin;
        StackWindow& w = t_stackWindow;
        if (w.source == serial && group.begin >= w.begin && group.end <= w.begin + w.text.size()) {
            text.assign(w.text, group.begin - w.begin, size);
            w.lastEnd = group.end;
            return true;
        }
        // Going forward from the last range (the next op of a compare, or a few ops later): read ahead a window.
        // Anything else (a viewer asking for one node) reads just the range.
        const bool forward = w.source == serial && group.begin >= w.lastEnd
            && group.begin - w.lastEnd <= kStackWindowBytes;
        w.source = serial;
        w.lastEnd = group.end;
        if (forward && size < kStackWindowBytes) {
            w.text.resize(kStackWindowBytes);
            std::size_t got = 0;
            while (got < w.text.size()) {
                const ssize_t n = ::pread(fd, w.text.data() + got, w.text.size() - got,
                                          static_cast<off_t>(group.begin + got));
                if (n <= 0)
                    break; // the end of the file
                got += static_cast<std::size_t>(n);
            }
            w.text.resize(got);
            w.begin = group.begin;
            if (got >= size) {
                text.assign(w.text, 0, size);
                return true;
            }
            w.source = 0;
            return false;
        }
        w.text.clear();
        w.begin = group.begin;
        text.resize(size);
        return readAt(text.data(), size, group.begin);
    }

    std::vector<std::string> read(const Group& group) const
    {
        std::string text;
        if (!readText(group, text))
            return {};
        return parse(text);
    }

    std::vector<std::string> parse(std::string_view text) const
    {
        const auto parsed = JsonDocument::parse(text, path);
        if (!parsed.document || !parsed.document->root().isArray())
            return {};
        return framesFrom(parsed.document->root());
    }
};

std::optional<std::uint32_t> StackIndex::groupOf(std::string_view key) const
{
    const auto it = std::lower_bound(m_keys.begin(), m_keys.end(), key,
                                     [this](const Key& k, std::string_view wanted) { return keyText(k) < wanted; });
    if (it == m_keys.end() || keyText(*it) != key || !m_source)
        return std::nullopt;
    return it->group;
}

const std::vector<std::string>* StackIndex::frames(std::string_view key) const
{
    const std::optional<std::uint32_t> group = groupOf(key);
    if (!group)
        return nullptr;
    std::lock_guard lock(m_source->mutex);
    const auto [slot, added] = m_source->frames.try_emplace(*group);
    if (added && m_source->fd >= 0)
        slot->second = m_source->read(m_groups[*group]);
    return &slot->second;
}

std::optional<std::vector<std::string>> StackIndex::read(std::string_view key) const
{
    const std::optional<std::uint32_t> group = groupOf(key);
    if (!group)
        return std::nullopt;
    {
        std::lock_guard lock(m_source->mutex);
        if (const auto cached = m_source->frames.find(*group); cached != m_source->frames.end())
            return cached->second;
    }
    if (m_source->fd < 0)
        return std::vector<std::string> {};
    return m_source->read(m_groups[*group]);
}

bool StackIndex::readJson(std::string_view key, std::string& json) const
{
    const std::optional<std::uint32_t> group = groupOf(key);
    if (!group || m_source->fd < 0)
        return false;
    // The file stays open, so what is read is the stack.json the index was made of (or it fails: then read()).
    return m_source->readText(m_groups[*group], json);
}

std::vector<std::string> StackIndex::parseJson(std::string_view json) const
{
    return m_source ? m_source->parse(json) : std::vector<std::string> {};
}

std::size_t StackIndex::memoryBytes() const
{
    return m_keyText.capacity() + m_keys.capacity() * sizeof(Key) + m_groups.capacity() * sizeof(Group);
}

/// Collects keys and frame ranges in file order; finish() sorts the keys, the last duplicate winning.
class StackIndexBuilder
{
public:
    explicit StackIndexBuilder(std::shared_ptr<StackIndex::Source> source) { m_index.m_source = std::move(source); }

    std::uint32_t group(std::uint64_t begin, std::uint64_t end)
    {
        m_index.m_groups.push_back({ begin, end });
        return static_cast<std::uint32_t>(m_index.m_groups.size() - 1);
    }
    void key(std::string_view key, std::uint32_t group)
    {
        m_index.m_keys.push_back({ m_index.m_keyText.size(), static_cast<std::uint32_t>(key.size()), group });
        m_index.m_keyText.append(key);
    }

    StackIndex finish()
    {
        auto& keys = m_index.m_keys;
        std::stable_sort(keys.begin(), keys.end(), [this](const StackIndex::Key& a, const StackIndex::Key& b) {
            return m_index.keyText(a) < m_index.keyText(b);
        });
        // Of equal keys (stable: in file order) the last one is kept, as a Python dict would.
        std::size_t out = 0;
        for (std::size_t i = 0; i < keys.size(); ++i) {
            if (i + 1 < keys.size() && m_index.keyText(keys[i]) == m_index.keyText(keys[i + 1]))
                continue;
            keys[out++] = keys[i];
        }
        keys.resize(out);
        keys.shrink_to_fit();
        m_index.m_groups.shrink_to_fit();
        m_index.m_keyText.shrink_to_fit();
        return std::move(m_index);
    }

private:
    StackIndex m_index;
};

namespace {

// A legacy .pkl's stacks are already in its document: they are read at once into the index's cache.
void fillStack(JsonValue root, StackMap& map)
{
    map.present = true;
    auto source = std::make_shared<StackIndex::Source>();
    StackIndexBuilder builder(source);
    for (std::uint32_t i = 0; i < root.size(); ++i) {
        if (!root.at(i).isArray())
            continue;
        const std::uint32_t group = builder.group(0, 0);
        source->frames.emplace(group, framesFrom(root.at(i)));
        builder.key(root.keyAt(i), group);
    }
    map.framesOf = builder.finish();
}

/**
 * One pass over stack.json that checks the JSON and records where each value is, without building a
 * document. On the first problem it stops; the caller then asks the JSON parser for its diagnostic, so
 * that messages and positions are the parser's.
 */
class StackScanner
{
public:
    explicit StackScanner(std::string_view text)
        : m_p(text.data())
        , m_n(text.size())
    {
    }

    static constexpr std::size_t kFail = static_cast<std::size_t>(-1);
    static constexpr std::size_t kReportEvery = std::size_t { 32 } << 20;

    struct Member
    {
        std::uint64_t keyBegin; // the raw key, between its quotes
        std::uint32_t keyLength;
        bool keyEscaped;
        bool isArray;           // the value is a list
        std::uint64_t keyCopy;  // where the raw key is in rootObject()'s `keys`
        std::uint64_t valueBegin;
        std::uint64_t valueEnd;
    };

    /// Scans the root object's members; false when the text is not such an object or not JSON. The raw keys are
    /// copied into `keys`, and `readPast` (if any) is told now and then how far the scan has read: the caller can give
    /// the pages of a mapped file back behind it, as the keys no longer need the text.
    bool rootObject(std::vector<Member>& members, std::string& keys,
                    const std::function<void(std::size_t)>& readPast = {}) const
    {
        std::size_t nextReport = kReportEvery;
        std::size_t i = 0;
        if (m_n >= 3 && std::string_view(m_p, 3) == "\xEF\xBB\xBF")
            i = 3;
        i = space(i);
        if (i >= m_n || m_p[i] != '{')
            return false;
        i = space(i + 1);
        if (i < m_n && m_p[i] == '}')
            return space(i + 1) == m_n;
        while (true) {
            Member m {};
            const std::size_t keyEnd = string(i, &m.keyEscaped);
            if (keyEnd == kFail)
                return false;
            m.keyBegin = i + 1;
            m.keyLength = static_cast<std::uint32_t>(keyEnd - 1 - (i + 1));
            m.keyCopy = keys.size();
            keys.append(m_p + m.keyBegin, m.keyLength);
            i = space(keyEnd);
            if (i >= m_n || m_p[i] != ':')
                return false;
            i = space(i + 1);
            m.valueBegin = i;
            m.isArray = i < m_n && m_p[i] == '[';
            i = value(i);
            if (i == kFail)
                return false;
            m.valueEnd = i;
            members.push_back(m);
            if (readPast && i >= nextReport) {
                readPast(i);
                nextReport = i + kReportEvery;
            }
            i = space(i);
            if (i < m_n && m_p[i] == ',') {
                i = space(i + 1);
                continue;
            }
            if (i < m_n && m_p[i] == '}')
                return space(i + 1) == m_n;
            return false;
        }
    }

    /// The [begin, end) ranges of the elements of the array at `begin`, which rootObject() checked.
    std::vector<std::pair<std::uint64_t, std::uint64_t>> elements(std::uint64_t begin) const
    {
        std::vector<std::pair<std::uint64_t, std::uint64_t>> out;
        std::size_t i = space(begin + 1);
        if (m_p[i] == ']')
            return out;
        while (true) {
            const std::size_t end = value(i);
            out.emplace_back(i, end);
            i = space(end);
            if (m_p[i] == ']')
                return out;
            i = space(i + 1); // past ','
        }
    }

    /// End of the string at `i` (after its closing quote), or kFail; `escaped` when it holds an escape.
    std::size_t string(std::size_t i, bool* escaped) const
    {
        if (i >= m_n || m_p[i] != '"')
            return kFail;
        ++i;
        bool high = false;
        while (true) {
            i = jsonscan::scanStringRun(m_p, i, m_n, high);
            if (i >= m_n)
                return kFail;
            if (m_p[i] == '"')
                return i + 1;
            if (m_p[i] != '\\')
                return kFail; // a control byte
            *escaped = true;
            if (i + 1 >= m_n)
                return kFail;
            const char e = m_p[i + 1];
            if (e == 'u') {
                for (std::size_t k = i + 2; k < i + 6; ++k) {
                    if (k >= m_n || !std::isxdigit(static_cast<unsigned char>(m_p[k])))
                        return kFail;
                }
                i += 6;
            } else if (std::string_view("\"\\/bfnrt").find(e) != std::string_view::npos) {
                i += 2;
            } else {
                return kFail;
            }
        }
    }

private:
    const char* m_p;
    std::size_t m_n;

    std::size_t space(std::size_t i) const { return jsonscan::skipSpace(m_p, i, m_n); }

    /// End of the value at `i`, or kFail. Containers are followed with an explicit stack (no recursion).
    std::size_t value(std::size_t i) const
    {
        std::vector<char> open; // the closers expected, innermost last
        while (true) {
            if (i >= m_n)
                return kFail;
            const char c = m_p[i];
            if (c == '{' || c == '[') {
                if (open.size() >= JsonParseOptions {}.maxDepth)
                    return kFail;
                open.push_back(c == '{' ? '}' : ']');
                i = space(i + 1);
                if (i < m_n && m_p[i] == open.back()) {
                    ++i;
                    open.pop_back();
                } else {
                    if (open.back() == '}' && !key(i))
                        return kFail;
                    continue;
                }
            } else if (c == '"') {
                bool escaped = false;
                i = string(i, &escaped);
            } else {
                i = scalar(i);
            }
            // After a value: the closers, or ',' and the next value.
            while (true) {
                if (i == kFail)
                    return kFail;
                if (open.empty())
                    return i;
                i = space(i);
                if (i >= m_n)
                    return kFail;
                if (m_p[i] == open.back()) {
                    ++i;
                    open.pop_back();
                    continue;
                }
                if (m_p[i] != ',')
                    return kFail;
                i = space(i + 1);
                if (open.back() == '}' && !key(i))
                    return kFail;
                break;
            }
        }
    }

    /// At an object member: checks `"key" :` and moves `i` to the value.
    bool key(std::size_t& i) const
    {
        bool escaped = false;
        const std::size_t end = string(i, &escaped);
        if (end == kFail)
            return false;
        i = space(end);
        if (i >= m_n || m_p[i] != ':')
            return false;
        i = space(i + 1);
        return true;
    }

    /// A number or literal (NaN, Infinity and -Infinity included); a token that reaches the end of the
    /// text may have been cut, and fails.
    std::size_t scalar(std::size_t i) const
    {
        static constexpr std::string_view literals[] = { "null", "true", "false", "NaN", "Infinity", "-Infinity" };
        const std::string_view rest(m_p + i, m_n - i);
        for (const std::string_view lit : literals) {
            if (rest.substr(0, lit.size()) == lit)
                return lit.size() < rest.size() ? i + lit.size() : kFail;
        }
        std::size_t k = i;
        auto digits = [&] {
            const std::size_t from = k;
            while (k < m_n && m_p[k] >= '0' && m_p[k] <= '9')
                ++k;
            return k > from;
        };
        if (k < m_n && m_p[k] == '-')
            ++k;
        if (k < m_n && m_p[k] == '0')
            ++k;
        else if (!digits())
            return kFail;
        if (k < m_n && m_p[k] == '.') {
            ++k;
            if (!digits())
                return kFail;
        }
        if (k < m_n && (m_p[k] == 'e' || m_p[k] == 'E')) {
            ++k;
            if (k < m_n && (m_p[k] == '+' || m_p[k] == '-'))
                ++k;
            if (!digits())
                return kFail;
        }
        return k < m_n ? k : kFail;
    }
};

} // namespace

Result<StackMap> readStackJson(const fs::path& path)
{
    auto file = MappedFile::open(path, maxJsonFileBytes());
    if (!file)
        return file.error();
    const std::string_view text = (*file)->text();
    const std::string name = path.string();
    const StackScanner scanner(text);
    std::vector<StackScanner::Member> members;
    // The scan keeps copies of the keys, so the pages behind it go back as it goes (a million entries write a
    // stack.json of 360 MB, and a viewer reads both sides' at once).
    std::string keys;
    const MappedFile& mapped = **file;
    if (!scanner.rootObject(members, keys, [&mapped](std::size_t offset) { mapped.release(offset); })) {
        // Not a JSON object: the parser says what is wrong, or the text is JSON of another kind.
        auto parsed = JsonDocument::parse(text, name);
        if (!parsed.document)
            return parsed.diagnostics.front();
        if (parsed.document->root().isObject()) // the scanner and the parser disagree: say where it stopped
            return makeError("stack.syntax", SourceLocation { name, std::nullopt, 0, 0 },
                             "stack.json could not be indexed");
        return makeError("stack.type", locate(text, parsed.document->root().offset(), name),
                         "stack.json must hold an object");
    }

    // Frames are read later from the same open file, not from the mapping (which is released).
    auto opened = openRegularFile(path, maxJsonFileBytes());
    if (!opened)
        return opened.error();
    auto source = std::make_shared<StackIndex::Source>();
    source->path = name;
    source->fd = *opened;
    StackIndexBuilder builder(source);

    std::string unescaped;
    auto keyOf = [&](std::uint64_t begin, std::uint64_t length, bool escaped) -> std::string_view {
        const std::string_view raw = text.substr(begin, length);
        if (!escaped)
            return raw;
        // Rare: the parser unescapes the quoted key.
        const auto parsed = JsonDocument::parse(text.substr(begin - 1, length + 2), name);
        unescaped = parsed.document ? std::string(parsed.document->root().asString()) : std::string(raw);
        return unescaped;
    };
    // A member's key from the scan's copy (the text of the file is not read again for it).
    auto memberKey = [&](const StackScanner::Member& m) -> std::string_view {
        const std::string_view raw = std::string_view(keys).substr(m.keyCopy, m.keyLength);
        if (!m.keyEscaped)
            return raw;
        const auto parsed = JsonDocument::parse("\"" + std::string(raw) + "\"", name);
        unescaped = parsed.document ? std::string(parsed.document->root().asString()) : std::string(raw);
        return unescaped;
    };
    auto isArray = [&](std::uint64_t at) { return text[at] == '['; };

    StackMap map;
    map.present = true;
    // The new form is recognised by a non-empty list under "0" (the last "0", as find() would take).
    for (auto m = members.rbegin(); m != members.rend(); ++m) {
        if (memberKey(*m) == "0") {
            map.newForm = m->isArray && !scanner.elements(m->valueBegin).empty();
            break;
        }
    }
    for (const StackScanner::Member& m : members) {
        if (!m.isArray)
            continue;
        if (!map.newForm) {
            builder.key(memberKey(m), builder.group(m.valueBegin, m.valueEnd));
            continue;
        }
        // {"0": [[key1, key2, ...], [frames...]]}: identical stacks are stored once.
        const auto parts = scanner.elements(m.valueBegin);
        if (parts.size() != 2 || !isArray(parts[0].first))
            continue;
        const std::uint32_t group = builder.group(parts[1].first, parts[1].second);
        for (const auto& [begin, end] : scanner.elements(parts[0].first)) {
            if (text[begin] != '"')
                continue;
            bool escaped = false;
            scanner.string(begin, &escaped);
            builder.key(keyOf(begin + 1, end - begin - 2, escaped), group);
        }
    }
    map.framesOf = builder.finish();
    return map;
}

Result<std::shared_ptr<const RankDump>> loadRank(const RankLocation& location, const ReadOptions& options)
{
    auto rank = std::make_shared<RankDump>();
    rank->location = location;
    auto dump = location.format == DumpFormat::LegacyPkl ? readLegacyPkl(location.dumpFile, options)
                                                         : readDumpJson(location.dumpFile, options);
    if (!dump)
        return dump.error();
    rank->dump = *dump;
    rank->diagnostics = rank->dump->diagnostics;

    if (location.format == DumpFormat::LegacyPkl) {
        // The legacy reader keeps api_stack rows under a top-level "stack" object.
        if (const auto stack = rank->dump->document->root().find("stack"); stack && stack->isObject())
            fillStack(*stack, rank->stack);
        return std::shared_ptr<const RankDump>(std::move(rank));
    }
    std::error_code ec;
    if (const fs::path p = location.dir / "construct.json"; options.constructJson && fs::exists(p, ec)) {
        if (auto construct = readConstructJson(p))
            rank->construct = std::move(*construct);
        else
            rank->diagnostics.push_back(construct.error());
    }
    if (const fs::path p = location.dir / "stack.json"; fs::exists(p, ec)) { // one stat: a whole job asks every rank
        if (!options.stackJson)
            rank->stackDeferred = true;
        else if (auto stack = readStackJson(p))
            rank->stack = std::move(*stack);
        else
            rank->diagnostics.push_back(stack.error());
    }
    return std::shared_ptr<const RankDump>(std::move(rank));
}

Result<StackMap> readRankStack(const RankDump& rank)
{
    if (!rank.stackDeferred)
        return rank.stack;
    return readStackJson(rank.location.dir / "stack.json");
}

} // namespace probescope::dump
