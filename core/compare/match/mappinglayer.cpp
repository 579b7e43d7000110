// SPDX-License-Identifier: Apache-2.0
// layer_mapping (-lm): NPU entries are placed in a tree of scopes, the scopes renamed by the user's rules,
// and each entry paired with the entry at the same position of the renamed scope in the bench tree.
// The procedure is the one of msprobe 8.x/26 (compare-spec §3.6 names only its inputs); docs/compare.md
// ("layer_mapping") states it step by step.
#include "core/compare/match/mapping.h"

#include "core/compare/match/mappingutil.h"

#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <unordered_map>

namespace probescope::compare {

namespace {

constexpr const char* kTopLayer = "TopLayer";

/// One dump entry placed in the scope tree (msprobe's DumpDataItem).
struct ScopeItem
{
    std::string key;       ///< the entry key (msprobe's data_name)
    std::string typeName;  ///< class for cells/modules, API name for APIs
    std::string apiName;   ///< the last scope level: instance name of a cell/module, API name otherwise
    std::string state;     ///< forward, backward or parameters_grad
    std::string layerScope;
    std::string frameScope; ///< the framework function that called the API, from stack.json
    std::string fullScope;
};

bool isLayer(std::string_view apiType)
{
    return apiType == "Cell" || apiType == "Module";
}

/// The framework function an API was called from: in the frames after msprobe's wrapper (a line naming
/// "Template") and before the model's own construct/forward, the last of the leading frames that lie in
/// the framework's installed package. Empty when there is none.
std::string frameScopeOf(const std::vector<std::string>& frames, bool mindspore)
{
    auto isEnd = [mindspore](const std::string& line) {
        if (mindspore)
            return line.find("construct") != std::string::npos;
        return line.find("in forward,") != std::string::npos || line.find("in backward,") != std::string::npos;
    };
    long start = -1;
    std::size_t end = frames.size();
    for (std::size_t i = 0; i < frames.size(); ++i) {
        if (frames[i].find("Template") != std::string::npos) {
            start = static_cast<long>(i);
        } else if (start >= 0 && isEnd(frames[i])) {
            end = i;
            break;
        }
    }
    static constexpr std::string_view frameFiles[] = { "site-packages/torch", "package/torch",
                                                       "site-packages/mindspore", "package/mindspore" };
    auto field = [](const std::string& line, std::size_t n) -> std::optional<std::string> {
        std::size_t from = 0;
        for (std::size_t k = 0; k < n; ++k) {
            from = line.find(',', from);
            if (from == std::string::npos)
                return std::nullopt;
            ++from;
        }
        const std::size_t to = line.find(',', from);
        return line.substr(from, to == std::string::npos ? std::string::npos : to - from);
    };
    const std::string* entrance = nullptr;
    for (std::size_t i = static_cast<std::size_t>(start + 1); i < end; ++i) {
        const std::string file = *field(frames[i], 0);
        bool framework = false;
        for (std::string_view f : frameFiles)
            framework = framework || file.find(f) != std::string::npos;
        if (!framework)
            break; // the first user frame ends the framework run
        entrance = &frames[i];
    }
    if (!entrance)
        return {};
    const std::string file = *field(*entrance, 0);
    if (file.find("msprobe") != std::string::npos || file.find("MindSpeed") != std::string::npos)
        return {};
    const auto func = field(*entrance, 2); // " in name"
    if (!func || func->find("construct") != std::string::npos || func->find("__call__") != std::string::npos)
        return {};
    std::vector<std::string> words;
    std::size_t pos = 0;
    while (pos < func->size()) {
        const std::size_t begin = func->find_first_not_of(" \t\n", pos);
        if (begin == std::string::npos)
            break;
        const std::size_t stop = func->find_first_of(" \t\n", begin);
        words.push_back(func->substr(begin, stop == std::string::npos ? std::string::npos : stop - begin));
        pos = stop == std::string::npos ? func->size() : stop;
    }
    return words.size() >= 2 ? words[1] : std::string();
}

SourceLocation entryLocation(const dump::DumpFile& dump, const dump::Entry& e)
{
    return SourceLocation { dump.path.string(), e.offset, e.line, 0 };
}

Result<std::vector<ScopeItem>> scopeItems(const dump::RankDump& side)
{
    std::vector<ScopeItem> items;
    // msprobe gives up on layer mapping when either file is missing or empty.
    if (!side.construct.present || side.construct.links.empty() || !side.stack.present || side.stack.framesOf.empty())
        return items;
    const dump::DumpFile& dump = *side.dump;
    const bool mindspore = isMindSporeDump(dump, false);
    items.reserve(dump.entries.size());
    for (const dump::Entry& e : dump.entries) {
        ScopeItem item;
        item.key = std::string(e.key);
        const auto parts = splitDots(item.key);
        const std::size_t n = parts.size();
        if (n < 4)
            return makeError("compare.layer-mapping", entryLocation(dump, e),
                             "entry \"" + item.key + "\" has fewer than four dot-separated parts; layer mapping cannot place it");
        std::string apiType;
        if (parts[n - 1] == "parameters_grad") {
            apiType = "parameters_grad";
            item.apiName = parts[n - 3];
            item.typeName = parts[n - 2];
            item.state = "parameters_grad";
            item.layerScope = joinDots(parts, 0, n - 3);
        } else {
            apiType = parts[0];
            item.typeName = parts[n - 3];
            if (isLayer(apiType)) {
                item.apiName = parts[n - 4];
                item.state = parts[n - 2];
                item.layerScope = joinDots(parts, 0, n - 4); // the path of the enclosing cell/module
            } else {
                item.apiName = item.typeName;
                item.state = parts[n - 1];
            }
        }
        const std::string* parent = side.construct.parent(item.key);
        if (parent && !parent->empty() && parent->find('.') != std::string::npos && splitDots(*parent).size() < 4)
            return makeError("compare.layer-mapping", entryLocation(dump, e),
                             "construct.json names \"" + *parent + "\" as the parent of \"" + item.key
                                 + "\"; a parent needs at least four dot-separated parts");
        if (!isLayer(apiType) && apiType != "parameters_grad") {
            if (parent && !parent->empty()) {
                const auto p = splitDots(*parent);
                item.layerScope = joinDots(p, 0, p.size() >= 3 ? p.size() - 3 : 0); // the parent's own path
            } else {
                item.layerScope = kTopLayer;
            }
        }
        if (!isLayer(apiType) && apiType != "Primitive" && apiType != "Jit") {
            if (const auto* frames = side.stack.frames(item.key); frames && !frames->empty())
                item.frameScope = frameScopeOf(*frames, mindspore);
        }
        item.fullScope = item.layerScope + (item.frameScope.empty() ? "" : "." + item.frameScope) + "." + item.apiName;
        items.push_back(std::move(item));
    }
    return items;
}

/// A backward entry has no stack of its own: it takes the scopes of its forward twin.
void inheritForwardScopes(std::vector<ScopeItem>& items)
{
    std::unordered_map<std::string, std::size_t> byKey;
    for (std::size_t i = 0; i < items.size(); ++i)
        byKey.emplace(items[i].key, i);
    for (ScopeItem& item : items) {
        auto parts = splitDots(item.key);
        const std::size_t from = parts.size() >= 2 ? parts.size() - 2 : 0;
        bool backward = false;
        for (std::size_t i = from; i < parts.size(); ++i)
            backward = backward || parts[i] == "backward";
        if (!backward)
            continue;
        for (std::size_t i = from; i < parts.size(); ++i)
            parts[i] = replaceAll(parts[i], "backward", "forward");
        const auto twin = byKey.find(joinDots(parts, 0, parts.size()));
        if (twin == byKey.end())
            continue;
        const ScopeItem& forward = items[twin->second];
        item.frameScope = forward.frameScope;
        item.fullScope = forward.fullScope;
        item.layerScope = forward.layerScope;
    }
}

/// The number at the end of the scope level right after `prefix` ("layers.12" -> 12), if any.
std::optional<long long> indexAfter(const std::string& scope, const std::string& prefix, std::string* level = nullptr)
{
    if (scope.size() <= prefix.size() + 1 || scope.compare(0, prefix.size(), prefix) != 0 || scope[prefix.size()] != '.')
        return std::nullopt;
    const std::size_t begin = prefix.size() + 1;
    const std::size_t dot = scope.find('.', begin);
    const std::string next = scope.substr(begin, dot == std::string::npos ? std::string::npos : dot - begin);
    if (next.empty() || next.find_first_of(" \t\n") != std::string::npos)
        return std::nullopt;
    if (level)
        *level = next;
    const std::size_t lastDigit = next.find_last_of("0123456789");
    if (lastDigit == std::string::npos)
        return std::nullopt;
    const std::size_t firstDigit = next.find_last_not_of("0123456789", lastDigit);
    const std::string digits = next.substr(firstDigit == std::string::npos ? 0 : firstDigit + 1,
                                           lastDigit - (firstDigit == std::string::npos ? 0 : firstDigit + 1) + 1);
    if (digits.size() > 15)
        return std::nullopt; // far beyond any layer count; left alone
    return std::stoll(digits);
}

/// MindSpore numbers the layers of a pipeline-parallel ParallelTransformer globally (a stage holds layers
/// 4..7), PyTorch per stage (0..3): the layer index below every ParallelTransformer is made relative to
/// the smallest one seen.
void renumberParallelLayers(std::vector<ScopeItem>& items)
{
    std::vector<std::string> prefixes;
    for (const ScopeItem& item : items) {
        if (item.typeName != "ParallelTransformer")
            continue;
        std::string prefix = item.fullScope + ".layers";
        if (std::find(prefixes.begin(), prefixes.end(), prefix) == prefixes.end())
            prefixes.push_back(std::move(prefix));
    }
    std::vector<std::optional<long long>> smallest(prefixes.size());
    for (std::size_t p = 0; p < prefixes.size(); ++p) {
        for (const ScopeItem& item : items) {
            const auto index = indexAfter(item.fullScope, prefixes[p]);
            if (index && (!smallest[p] || *index < *smallest[p]))
                smallest[p] = index;
        }
    }
    for (std::size_t p = 0; p < prefixes.size(); ++p) {
        if (!smallest[p])
            continue;
        for (ScopeItem& item : items) {
            std::string level;
            const auto index = indexAfter(item.fullScope, prefixes[p], &level);
            if (!index)
                continue;
            item.fullScope = prefixes[p] + "." + std::to_string(*index - *smallest[p])
                + item.fullScope.substr(prefixes[p].size() + 1 + level.size());
        }
    }
}

class ScopeTree
{
public:
    void insert(const ScopeItem& item)
    {
        const auto parts = splitDots(item.fullScope);
        Node* node = &m_root;
        for (std::size_t i = 1; i < parts.size(); ++i) {
            auto& child = node->children[parts[i]];
            if (!child) {
                child = std::make_unique<Node>();
                child->typeName = parts[i];
            }
            node = child.get();
        }
        node->items[item.state].push_back(&item);
        node->typeName = item.typeName;
    }

    /// The NPU item's scope with the user's renames applied, and its position among the items of its
    /// state at its own scope.
    std::pair<std::string, std::size_t> renamed(const ScopeItem& item, const LayerMapping& rules) const
    {
        const auto scope = splitDots(item.fullScope);
        std::string out = kTopLayer;
        const Node* node = &m_root;
        std::size_t idx = 0;
        while (idx + 1 < scope.size() && node) {
            const std::string& child = scope[idx + 1];
            std::string target = child;
            std::size_t step = 1;
            for (const auto& [cls, list] : rules.classes) {
                if (cls != node->typeName)
                    continue;
                for (const LayerRule& rule : list) {
                    if (splitDots(rule.origin).front() == child
                        && joinDots(scope, idx + 1, idx + 1 + rule.levels) == rule.origin) {
                        target = rule.target;
                        step = rule.levels;
                        break;
                    }
                }
                break;
            }
            out += "." + target;
            for (std::size_t s = 0; s < step && node; ++s) {
                node = node->child(scope[idx + 1]);
                ++idx;
            }
        }
        std::size_t position = 0;
        if (node) {
            if (const auto it = node->items.find(item.state); it != node->items.end()) {
                for (std::size_t i = 0; i < it->second.size(); ++i) {
                    if (it->second[i]->key == item.key)
                        position = i;
                }
            }
        }
        return { out, position };
    }

    const ScopeItem* at(const std::string& scope, const std::string& state, std::size_t position) const
    {
        const auto parts = splitDots(scope);
        const Node* node = &m_root;
        for (std::size_t i = 1; i < parts.size() && node; ++i)
            node = node->child(parts[i]);
        if (!node)
            return nullptr;
        const auto it = node->items.find(state);
        return it == node->items.end() || position >= it->second.size() ? nullptr : it->second[position];
    }

private:
    struct Node
    {
        std::string typeName = kTopLayer;
        std::map<std::string, std::vector<const ScopeItem*>> items; ///< by state, in dump order
        std::map<std::string, std::unique_ptr<Node>> children;

        const Node* child(const std::string& name) const
        {
            const auto it = children.find(name);
            return it == children.end() ? nullptr : it->second.get();
        }
    };
    Node m_root;
};

Result<std::vector<ScopeItem>> placedItems(const dump::RankDump& side)
{
    auto items = scopeItems(side);
    if (!items)
        return items;
    inheritForwardScopes(*items);
    renumberParallelLayers(*items);
    return items;
}

} // namespace

Result<std::vector<std::pair<std::string, std::string>>> layerEntryMapping(const dump::RankDump& npu,
                                                                           const dump::RankDump& bench,
                                                                           const LayerMapping& rules)
{
    auto npuItems = placedItems(npu);
    if (!npuItems)
        return npuItems.error();
    auto benchItems = placedItems(bench);
    if (!benchItems)
        return benchItems.error();
    std::vector<std::pair<std::string, std::string>> out;
    if (npuItems->empty())
        return out; // nothing to map: msprobe then compares by name
    // A bench side without construct.json/stack.json gives an empty tree: every NPU entry maps to N/A.
    ScopeTree npuTree;
    ScopeTree benchTree;
    for (const ScopeItem& item : *npuItems)
        npuTree.insert(item);
    for (const ScopeItem& item : *benchItems)
        benchTree.insert(item);
    out.reserve(npuItems->size());
    for (const ScopeItem& item : *npuItems) {
        const auto [scope, position] = npuTree.renamed(item, rules);
        const ScopeItem* match = benchTree.at(scope, item.state, position);
        out.emplace_back(item.key, match ? match->key : std::string("N/A"));
    }
    return out;
}

} // namespace probescope::compare
