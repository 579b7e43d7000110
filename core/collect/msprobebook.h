// SPDX-License-Identifier: Apache-2.0
// The collector core's bookkeeping in msprobe 1.2.2's Python-dumper mode: what the Python module (core/collect/
// python) drives, its hooks handing over names, leaf texts and frames. LibTorch-free.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace probescope::collect {

/**
 * @brief Call counters, construct.json parents, stack.json frames and the dump.json entries of one step, kept as
 * msprobe 1.2.2's Python dumper keeps them, and the three files' text laid out as its json.dump(indent=1).
 *
 * Why a mode of its own beside Session (the C++ API's bookkeeping, which appends each entry to the files as it is
 * recorded): msprobe's Python dumper holds a step's entries in memory and rewrites the files whole at stop(); an
 * entry may still change after it was recorded (parameters_grad's placeholder, set right after the module's
 * first forward entry and filled when the gradients arrive; a part added by a later hook), and construct.json is
 * its module_node dict merged into the API parents at every call (so the order of its members is msprobe's).
 * The rules in which the two modes differ are listed in docs/collect.md ("One collector core").
 *
 * The values are JSON text: an entry part's value laid out at depth 3 (dump::PyJsonWriter(text, 3)), a whole
 * entry (level debug) at depth 2.
 */
class MsprobeBook
{
public:
    /// `construct`: keep construct.json (levels L0 and mix; L1 writes "{}").
    explicit MsprobeBook(bool construct);

    /// step(): counters, entries, parents and frames start afresh.
    void reset();

    /// The number of this call of the API `stem` ("Functional.linear."), counted from 0 per step.
    std::int64_t countApi(std::string_view stem);
    /// The number of this call of `key` ("Module.fc1.Linear.forward"), counted from 0 per step.
    std::int64_t countModule(std::string_view key);
    /// level debug: the number of this save() of `name`.
    std::int64_t countDebug(std::string_view name);

    /// A module's forward begins (msprobe's forward pre hook): its parent is the innermost running module.
    void beginModule(const std::string& name);
    /// A module's forward ends: the API parent is the enclosing module again.
    void endModule();
    /// A module's backward begins: its parent is its forward parent's backward; APIs then have none.
    void beginModuleBackward(const std::string& name);
    /// msprobe's update_construct: construct[name] = the API parent, then every module's parent over it.
    void updateConstruct(const std::string& name);

    /// overflow_check: whether an entry whose tensors hold an inf or NaN (`overflow`) is written; the count runs
    /// over the whole run (reset() keeps it), and the entry that reaches `overflowNums` (> 0; -1 = no limit) is the
    /// last one written.
    bool admitOverflow(bool overflow, std::int64_t overflowNums);
    std::int64_t overflowCount() const { return m_overflows; }

    /// dict.update of the entry `name` with `parts` (part name, value text at depth 3): a new entry goes last,
    /// a part already there keeps its place and takes the new value.
    void put(const std::string& name, const std::vector<std::pair<std::string, std::string>>& parts);
    /// An entry whose value is `text` itself, at depth 2 (level debug: a leaf, or "null" until its gradient).
    void putValue(const std::string& name, std::string text);
    /// Removes the entry `name` (a parameters_grad placeholder whose module left the scope).
    void drop(const std::string& name);
    bool has(const std::string& name) const;
    /// stack.json's member for `name`: the frames as msprobe words them, innermost first.
    void setStack(const std::string& name, std::vector<std::string> frames);

    /// dump.json (or debug.json): task, level, framework, dump_data_dir (null when absent), data.
    std::string dumpText(std::string_view task, std::string_view level,
                         const std::optional<std::string>& dumpDataDir) const;
    std::string constructText() const;
    std::string stackText() const;
    std::size_t entryCount() const { return m_entryIndex.size(); }

private:
    struct Entry
    {
        std::string name;
        bool removed = false;
        bool whole = false;         ///< putValue(): `text` is the entry's value
        std::string text;
        std::vector<std::pair<std::string, std::string>> parts;
    };
    /// A dict of str -> str-or-None, kept in insertion order.
    struct OrderedParents
    {
        std::vector<std::pair<std::string, std::optional<std::string>>> items;
        std::unordered_map<std::string, std::size_t> index;
        void set(const std::string& key, const std::optional<std::string>& value);
        const std::optional<std::string>* find(const std::string& key) const;
        void clear();
    };

    bool m_construct;
    std::int64_t m_overflows = 0;
    bool m_overflowDone = false;
    std::unordered_map<std::string, std::int64_t> m_apiCounts, m_moduleCounts, m_debugCounts;
    std::vector<std::string> m_moduleStack;
    std::optional<std::string> m_apiParent; ///< "" at the start of a step (msprobe's initial value), else a name or null
    OrderedParents m_moduleNode;            ///< msprobe's module_node
    std::size_t m_moduleNodeMerged = 0;     ///< members of m_moduleNode already merged into m_constructJson
    OrderedParents m_constructJson;
    std::vector<Entry> m_entries;
    std::unordered_map<std::string, std::size_t> m_entryIndex;
    std::vector<std::pair<std::string, std::vector<std::string>>> m_stack;
    std::unordered_map<std::string, std::size_t> m_stackIndex;
};

} // namespace probescope::collect
