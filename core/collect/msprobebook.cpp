// SPDX-License-Identifier: Apache-2.0
#include "core/collect/msprobebook.h"

#include "core/dump/dumpwriter.h"

namespace probescope::collect {

namespace {

/// _replace_last of msprobe's dumper: `old`'s last occurrence in `text` replaced by `by`.
std::optional<std::string> replaceLast(const std::optional<std::string>& text, std::string_view old,
                                       std::string_view by)
{
    if (!text)
        return std::nullopt;
    const std::size_t at = text->rfind(old);
    if (at == std::string::npos)
        return text;
    std::string out = *text;
    out.replace(at, old.size(), by);
    return out;
}

std::int64_t bump(std::unordered_map<std::string, std::int64_t>& counts, std::string_view key)
{
    auto [it, fresh] = counts.try_emplace(std::string(key), 0);
    return it->second++;
}

/// A member of an object laid out as json.dump(indent=1) lays it out: `depth` is the object's own level.
void openMember(std::string& out, bool first, unsigned depth, std::string_view key)
{
    out += first ? "\n" : ",\n";
    out.append(depth + 1, ' ');
    dump::appendPyString(out, key);
    out += ": ";
}

void closeObject(std::string& out, bool empty, unsigned depth)
{
    if (empty) {
        out += '}';
        return;
    }
    out += '\n';
    out.append(depth, ' ');
    out += '}';
}

} // namespace

void MsprobeBook::OrderedParents::set(const std::string& key, const std::optional<std::string>& value)
{
    auto [it, fresh] = index.try_emplace(key, items.size());
    if (fresh)
        items.emplace_back(key, value);
    else
        items[it->second].second = value;
}

const std::optional<std::string>* MsprobeBook::OrderedParents::find(const std::string& key) const
{
    const auto it = index.find(key);
    return it == index.end() ? nullptr : &items[it->second].second;
}

void MsprobeBook::OrderedParents::clear()
{
    items.clear();
    index.clear();
}

MsprobeBook::MsprobeBook(bool construct)
    : m_construct(construct)
{
    reset();
}

void MsprobeBook::reset()
{
    m_apiCounts.clear();
    m_moduleCounts.clear();
    m_debugCounts.clear();
    m_moduleStack.clear();
    m_apiParent = std::string();
    m_moduleNode.clear();
    m_moduleNodeMerged = 0;
    m_constructJson.clear();
    m_entries.clear();
    m_entryIndex.clear();
    m_stack.clear();
    m_stackIndex.clear();
}

std::int64_t MsprobeBook::countApi(std::string_view stem) { return bump(m_apiCounts, stem); }
std::int64_t MsprobeBook::countModule(std::string_view key) { return bump(m_moduleCounts, key); }
std::int64_t MsprobeBook::countDebug(std::string_view name) { return bump(m_debugCounts, name); }

void MsprobeBook::beginModule(const std::string& name)
{
    m_moduleNode.set(name, m_moduleStack.empty() ? std::nullopt : std::optional(m_moduleStack.back()));
    m_moduleStack.push_back(name);
    m_apiParent = name;
}

void MsprobeBook::endModule()
{
    if (!m_moduleStack.empty())
        m_moduleStack.pop_back();
    m_apiParent = m_moduleStack.empty() ? std::nullopt : std::optional(m_moduleStack.back());
}

void MsprobeBook::beginModuleBackward(const std::string& name)
{
    const std::optional<std::string> forwardName = replaceLast(name, "backward", "forward");
    const std::optional<std::string>* forwardParent = m_moduleNode.find(*forwardName);
    m_moduleNode.set(name, replaceLast(forwardParent ? *forwardParent : std::nullopt, "forward", "backward"));
    m_apiParent = std::nullopt;
}

void MsprobeBook::updateConstruct(const std::string& name)
{
    if (!m_construct)
        return;
    // construct[name] = api_parent_node; construct.update(module_node). module_node's values never change once
    // set, so only its new members need merging, and `name` itself, whose value the first line may have replaced.
    m_constructJson.set(name, m_apiParent);
    for (; m_moduleNodeMerged < m_moduleNode.items.size(); ++m_moduleNodeMerged) {
        const auto& [key, parent] = m_moduleNode.items[m_moduleNodeMerged];
        m_constructJson.set(key, parent);
    }
    if (const std::optional<std::string>* parent = m_moduleNode.find(name))
        m_constructJson.set(name, *parent);
}

bool MsprobeBook::admitOverflow(bool overflow, std::int64_t overflowNums)
{
    if (!overflow || m_overflowDone)
        return false;
    ++m_overflows;
    if (overflowNums > 0 && m_overflows >= overflowNums)
        m_overflowDone = true; // this one is still written
    return true;
}

void MsprobeBook::put(const std::string& name, const std::vector<std::pair<std::string, std::string>>& parts)
{
    const auto [it, fresh] = m_entryIndex.try_emplace(name, m_entries.size());
    if (fresh)
        m_entries.push_back(Entry { name, false, false, {}, {} });
    Entry& entry = m_entries[it->second];
    if (entry.whole) { // a value replaced by parts (msprobe never mixes the two for one name)
        entry.whole = false;
        entry.text.clear();
    }
    for (const auto& [part, text] : parts) {
        bool found = false;
        for (auto& [existing, value] : entry.parts) {
            if (existing == part) {
                value = text;
                found = true;
                break;
            }
        }
        if (!found)
            entry.parts.emplace_back(part, text);
    }
}

void MsprobeBook::putValue(const std::string& name, std::string text)
{
    const auto [it, fresh] = m_entryIndex.try_emplace(name, m_entries.size());
    if (fresh)
        m_entries.push_back(Entry { name, false, true, {}, {} });
    Entry& entry = m_entries[it->second];
    entry.whole = true;
    entry.parts.clear();
    entry.text = std::move(text);
}

void MsprobeBook::drop(const std::string& name)
{
    const auto it = m_entryIndex.find(name);
    if (it == m_entryIndex.end())
        return;
    Entry& entry = m_entries[it->second];
    entry.removed = true;
    entry.parts.clear();
    entry.text.clear();
    m_entryIndex.erase(it); // put() again adds it last, as dict.pop() then an assignment does
}

bool MsprobeBook::has(const std::string& name) const { return m_entryIndex.contains(name); }

void MsprobeBook::setStack(const std::string& name, std::vector<std::string> frames)
{
    auto [it, fresh] = m_stackIndex.try_emplace(name, m_stack.size());
    if (fresh)
        m_stack.emplace_back(name, std::move(frames));
    else
        m_stack[it->second].second = std::move(frames);
}

std::string MsprobeBook::dumpText(std::string_view task, std::string_view level,
                                  const std::optional<std::string>& dumpDataDir) const
{
    std::string out = "{";
    openMember(out, true, 0, "task");
    dump::appendPyString(out, task);
    openMember(out, false, 0, "level");
    dump::appendPyString(out, level);
    openMember(out, false, 0, "framework");
    out += "\"pytorch\"";
    openMember(out, false, 0, "dump_data_dir");
    if (dumpDataDir)
        dump::appendPyString(out, *dumpDataDir);
    else
        out += "null";
    openMember(out, false, 0, "data");
    out += '{';
    bool firstEntry = true;
    for (const Entry& entry : m_entries) {
        if (entry.removed)
            continue;
        openMember(out, firstEntry, 1, entry.name);
        firstEntry = false;
        if (entry.whole) {
            out += entry.text;
            continue;
        }
        out += '{';
        bool firstPart = true;
        for (const auto& [part, text] : entry.parts) {
            openMember(out, firstPart, 2, part);
            firstPart = false;
            out += text;
        }
        closeObject(out, entry.parts.empty(), 2);
    }
    closeObject(out, firstEntry, 1);
    closeObject(out, false, 0);
    return out;
}

std::string MsprobeBook::constructText() const
{
    std::string out = "{";
    bool first = true;
    for (const auto& [name, parent] : m_constructJson.items) {
        openMember(out, first, 0, name);
        first = false;
        if (parent)
            dump::appendPyString(out, *parent);
        else
            out += "null";
    }
    closeObject(out, first, 0);
    return out;
}

std::string MsprobeBook::stackText() const
{
    std::string out = "{";
    bool first = true;
    for (const auto& [name, frames] : m_stack) {
        openMember(out, first, 0, name);
        first = false;
        if (frames.empty()) {
            out += "[]";
            continue;
        }
        out += '[';
        for (std::size_t i = 0; i < frames.size(); ++i) {
            out += i == 0 ? "\n  " : ",\n  ";
            dump::appendPyString(out, frames[i]);
        }
        out += "\n ]";
    }
    closeObject(out, first, 0);
    return out;
}

} // namespace probescope::collect
