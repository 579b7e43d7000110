// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/dump/dumpfile.h"
#include "core/dump/dumplayout.h"
#include "core/dump/stringidtable.h"

#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace probescope::dump {

/**
 * @brief construct.json's links (child key -> parent key, "" for a root) in file order, compactly.
 *
 * Each child key is stored once and each distinct parent once (a million links cost ~70 bytes each, where
 * two std::string copies of every key in a vector and a map cost ~350). Lookups take the child's last link.
 */
class ConstructLinks
{
public:
    struct Link
    {
        std::string_view child;
        std::string_view parent;
    };

    void emplace_back(std::string_view child, std::string_view parent);
    void reserve(std::size_t links, std::size_t childBytes);
    std::size_t size() const { return m_items.size(); }
    bool empty() const { return m_items.empty(); }
    Link operator[](std::size_t i) const
    {
        const Item& item = m_items[i];
        return { std::string_view(m_childText).substr(item.child, item.length), m_parents[item.parent] };
    }
    /// The parent of the child's last link (never null for a child that has one), or null.
    const std::string* parent(std::string_view child) const;
    std::size_t memoryBytes() const;

    class const_iterator
    {
    public:
        const_iterator(const ConstructLinks* links, std::size_t i)
            : m_links(links)
            , m_i(i)
        {
        }
        Link operator*() const { return (*m_links)[m_i]; }
        const_iterator& operator++()
        {
            ++m_i;
            return *this;
        }
        bool operator==(const const_iterator& other) const = default;

    private:
        const ConstructLinks* m_links;
        std::size_t m_i;
    };
    const_iterator begin() const { return { this, 0 }; }
    const_iterator end() const { return { this, m_items.size() }; }

private:
    struct Item
    {
        std::uint64_t child; // offset into m_childText
        std::uint32_t length;
        std::uint32_t parent; // index into m_parents
    };
    std::string m_childText;
    std::vector<Item> m_items;
    std::deque<std::string> m_parents; // distinct parents; a deque keeps parent()'s pointers valid
    StringIdTable m_parentIds;         // text -> index into m_parents
    StringIdTable m_childIds;          // text -> the child's last item
};

/// construct.json: node key -> parent module key ("" or null for a root).
struct ConstructMap
{
    bool present = false;
    ConstructLinks links; ///< file order; parent "" = root
    /// Links added one by one (tests, tools): parent() looks here for a child `links` does not have.
    /// readConstructJson() leaves it empty.
    std::unordered_map<std::string, std::string> parentOf;
    std::optional<std::int64_t> megatronMicroSteps; ///< "megatron_micro_step_number"

    const std::string* parent(std::string_view key) const;
};

/**
 * @brief stack.json in either form as an index: entry key -> where its frames are in the file.
 *
 * One scan of the file records each key (in file order, the last duplicate wins) and the byte range of its
 * frames list; nothing else of the file is kept. Frames are parsed from the file when first asked for and
 * kept for later calls (in the new form, once per stack that many keys share). The file stays open, so a
 * stack.json replaced on disk later does not change what is read. Copies share the file and the cache.
 */
class StackIndex
{
public:
    std::size_t size() const { return m_keys.size(); }
    bool empty() const { return m_keys.empty(); }
    /// The i-th key in sorted order.
    std::string_view keyAt(std::size_t i) const { return keyText(m_keys[i]); }
    /// The frames of `key`, null when stack.json does not name it. Valid as long as any copy of the index.
    /// Thread-safe. A frames list that cannot be read any more (the file changed under it) is empty.
    const std::vector<std::string>* frames(std::string_view key) const;
    /// The frames of `key` read for the caller and not kept (a compare writes each op's stack once; at a million
    /// entries keeping them all would cost GBs). Nothing when stack.json does not name it. Thread-safe.
    std::optional<std::vector<std::string>> read(std::string_view key) const;
    /// The JSON text of the frames list of `key` as stack.json spells it, into `json`: false when stack.json does not
    /// name it or the index is not backed by a file (then read()). Equal texts are equal frames, so a caller can keep
    /// what it made of one text for the next key with the same stack without parsing it again.
    bool readJson(std::string_view key, std::string& json) const;
    /// The frames of a text readJson() gave (empty if it does not read as a list of frames).
    std::vector<std::string> parseJson(std::string_view json) const;
    /// Bytes held by the index itself (keys and ranges), without the frames read so far.
    std::size_t memoryBytes() const;

    struct Source; ///< the open file and the frames read so far (defined in rankdump.cpp)

private:
    friend class StackIndexBuilder;
    struct Key
    {
        std::uint64_t text; // offset into m_keyText
        std::uint32_t length;
        std::uint32_t group; // index into m_groups
    };
    struct Group
    {
        std::uint64_t begin; // byte range of the frames list in the file
        std::uint64_t end;
    };
    std::string m_keyText;     // every key once, unescaped
    std::vector<Key> m_keys;   // sorted by text
    std::vector<Group> m_groups;
    std::shared_ptr<Source> m_source; // the open file and the frames read so far

    std::string_view keyText(const Key& k) const { return std::string_view(m_keyText).substr(k.text, k.length); }
    /// The frames group of `key` (the one lookup frames(), read() and readJson() share); none without a source.
    std::optional<std::uint32_t> groupOf(std::string_view key) const;
};

/// stack.json in either form.
struct StackMap
{
    bool present = false;
    bool newForm = false; ///< {"0": [[keys...], [frames...]]} (msprobe 8.x and later)
    StackIndex framesOf;

    const std::vector<std::string>* frames(std::string_view key) const { return framesOf.frames(key); }
};

Result<ConstructMap> readConstructJson(const std::filesystem::path& path);
Result<StackMap> readStackJson(const std::filesystem::path& path);

/// Everything ProbeScope reads of one rank of one step. Immutable once loaded.
struct RankDump
{
    RankLocation location;
    std::shared_ptr<const DumpFile> dump;
    ConstructMap construct;
    StackMap stack;
    bool stackDeferred = false; ///< stack.json exists but was not read (ReadOptions::stackJson off)
    Diagnostics diagnostics; ///< dump file diagnostics plus construct/stack problems
};

/// The rank's stack: `rank.stack` when it was read with the rank, else stack.json read now.
Result<StackMap> readRankStack(const RankDump& rank);

/// Loads one rank: the dump file (required) and construct.json / stack.json when present.
/// A broken construct.json or stack.json is reported and skipped; a broken dump file is an error.
Result<std::shared_ptr<const RankDump>> loadRank(const RankLocation& location, const ReadOptions& options = {});

} // namespace probescope::dump
