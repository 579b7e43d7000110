// SPDX-License-Identifier: Apache-2.0
#include "core/tree/constructtree.h"

#include "core/util/bytes.h"

#include <algorithm>
#include <limits>
#include <string>
#include <tuple>
#include <unordered_map>

namespace probescope::tree {

using dump::Direction;
using dump::EntryKind;

std::optional<NodeId> ConstructTree::find(std::string_view key) const
{
    if (m_rank) {
        if (const dump::Entry* e = m_rank->dump->find(key))
            return NodeId { static_cast<std::uint32_t>(e - m_rank->dump->entries.data()) };
        return std::nullopt;
    }
    // A deserialized tree: its own index, sorted by key hash (the last duplicate wins, as in the dump's find).
    const std::uint64_t h = std::hash<std::string_view> {}(key);
    auto it = std::upper_bound(m_keyIndex.begin(), m_keyIndex.end(), std::pair(h, NodeId::kInvalid));
    while (it != m_keyIndex.begin()) {
        --it;
        if (it->first != h)
            break;
        if (m_nodes[it->second].key == key)
            return NodeId { it->second };
    }
    return std::nullopt;
}

namespace {

constexpr std::uint32_t kNone = NodeId::kInvalid;

struct Builder
{
    const dump::DumpFile& dump;
    const dump::ConstructMap& construct;
    Diagnostics& diagnostics;
    std::vector<std::uint32_t> parent;
    std::vector<ParentSource> source;
    std::vector<bool> gradAtEnd; // parameters_grad whose module has no backward entry

    std::uint32_t indexOf(std::string_view key) const
    {
        const dump::Entry* e = dump.find(key);
        return e ? static_cast<std::uint32_t>(e - dump.entries.data()) : kNone;
    }

    // Per module (prefix + op name): its last backward call and its first call of any direction, found in one
    // pass the first time an old-form parameters_grad asks (a scan per parameters_grad made the build
    // quadratic: 4.4 s at 1M entries).
    struct ModuleCalls
    {
        std::uint32_t lastBackward = kNone;
        std::uint32_t first = kNone;
    };
    struct ModuleKeyHash
    {
        std::size_t operator()(const std::pair<std::string_view, std::string_view>& k) const
        {
            return std::hash<std::string_view> {}(k.first) * 31 + std::hash<std::string_view> {}(k.second);
        }
    };
    std::unordered_map<std::pair<std::string_view, std::string_view>, ModuleCalls, ModuleKeyHash> moduleCalls;
    bool moduleCallsFound = false;

    const ModuleCalls* callsOf(const dump::EntryName& name)
    {
        if (!moduleCallsFound) {
            moduleCallsFound = true;
            for (std::uint32_t i = 0; i < dump.entries.size(); ++i) {
                const auto& n = dump.entries[i].name;
                if (n.kind != EntryKind::Module)
                    continue;
                ModuleCalls& calls = moduleCalls[{ n.prefix, n.opName }];
                if (calls.first == kNone)
                    calls.first = i;
                if (n.direction == Direction::Backward)
                    calls.lastBackward = i;
            }
        }
        const auto it = moduleCalls.find({ name.prefix, name.opName });
        return it == moduleCalls.end() ? nullptr : &it->second;
    }

    // The backward call in which a module's parameter gradients are computed.
    std::uint32_t gradOwner(const dump::EntryName& name, std::uint32_t self)
    {
        const std::string stem = name.stem();
        if (name.callIndex >= 0) {
            const std::uint32_t exact = indexOf(stem + ".backward." + std::to_string(name.callIndex));
            if (exact != kNone)
                return exact;
        }
        // Old form (no index): gradients accumulate over every backward call of the module; the last
        // one to run (the last in the file) completes them.
        const ModuleCalls* calls = callsOf(name);
        if (calls && calls->lastBackward != kNone)
            return calls->lastBackward;
        gradAtEnd[self] = true;
        return calls ? calls->first : kNone;
    }

    void resolve()
    {
        const std::size_t n = dump.entries.size();
        parent.assign(n, kNone);
        source.assign(n, ParentSource::None);
        gradAtEnd.assign(n, false);
        if (!construct.present) {
            // Without construct.json (level L1, debug, legacy) only parameters_grad can be placed.
            for (std::uint32_t i = 0; i < n; ++i) {
                if (dump.entries[i].name.kind == EntryKind::ParametersGrad)
                    setInferred(i, gradOwner(dump.entries[i].name, i));
            }
            return;
        }
        // Pass 1: what construct.json says.
        for (std::uint32_t i = 0; i < n; ++i) {
            const dump::Entry& e = dump.entries[i];
            if (e.name.kind == EntryKind::ParametersGrad)
                continue;
            const std::string* p = construct.parent(e.key);
            if (!p || p->empty())
                continue;
            const std::uint32_t pi = indexOf(*p);
            if (pi == kNone) {
                diagnostics.push_back(makeWarning(
                    "tree.unknown-parent", SourceLocation { dump.path.string(), e.offset, e.line, 0 },
                    "construct.json names \"" + *p + "\" as the parent of \"" + std::string(e.key)
                        + "\", but the dump has no such entry; shown as a root"));
                continue;
            }
            parent[i] = pi;
            source[i] = ParentSource::Construct;
        }
        // Pass 2: msprobe 1.x leaves backward APIs unparented; they ran inside the backward of the module
        // whose forward called them. parameters_grad belong to their module's backward call.
        for (std::uint32_t i = 0; i < n; ++i) {
            const dump::Entry& e = dump.entries[i];
            if (e.name.kind == EntryKind::ParametersGrad) {
                setInferred(i, gradOwner(e.name, i));
                continue;
            }
            if (parent[i] != kNone || e.name.direction != Direction::Backward
                || (e.name.kind != EntryKind::Api && e.name.kind != EntryKind::Module))
                continue;
            const std::uint32_t fwd = indexOf(dump::counterpartKey(e.name, Direction::Forward));
            if (fwd == kNone || parent[fwd] == kNone)
                continue;
            const dump::EntryName& fwdParent = dump.entries[parent[fwd]].name;
            if (fwdParent.kind != EntryKind::Module)
                continue;
            setInferred(i, indexOf(dump::counterpartKey(fwdParent, Direction::Backward)));
        }
        breakCycles();
    }

    void setInferred(std::uint32_t i, std::uint32_t p)
    {
        if (p == kNone || p == i)
            return;
        parent[i] = p;
        source[i] = ParentSource::Inferred;
    }

    // A construct.json that loops (a -> b -> a) would make the tree infinite.
    void breakCycles()
    {
        const std::size_t n = parent.size();
        std::vector<std::uint8_t> state(n, 0); // 0 unseen, 1 on the current path, 2 done
        std::vector<std::uint32_t> path;
        for (std::uint32_t start = 0; start < n; ++start) {
            std::uint32_t cur = start;
            path.clear();
            while (cur != kNone && state[cur] == 0) {
                state[cur] = 1;
                path.push_back(cur);
                cur = parent[cur];
            }
            if (cur != kNone && state[cur] == 1) {
                const dump::Entry& e = dump.entries[cur];
                diagnostics.push_back(makeWarning("tree.cycle", SourceLocation { dump.path.string(), e.offset, e.line, 0 },
                                                  "construct.json links \"" + std::string(e.key)
                                                      + "\" into a cycle; it is shown as a root"));
                parent[cur] = kNone;
                source[cur] = ParentSource::None;
            }
            for (std::uint32_t p : path)
                state[p] = 2;
        }
    }
};

} // namespace

std::shared_ptr<const ConstructTree> ConstructTree::build(std::shared_ptr<const dump::RankDump> rank)
{
    auto tree = std::make_shared<ConstructTree>();
    tree->m_rank = std::move(rank);
    tree->fill(*tree->m_rank->dump, tree->m_rank->construct);
    return tree;
}

std::shared_ptr<const ConstructTree> ConstructTree::buildFromKeys(const dump::DumpKeys& keys,
                                                                 const dump::ConstructMap& construct,
                                                                 const std::filesystem::path& dumpPath)
{
    // A dump of keys alone: what the builder reads of a dump is the keys, their parsed names and the order.
    dump::DumpFile file;
    file.path = dumpPath;
    file.entries.resize(keys.keys.size());
    for (std::size_t i = 0; i < keys.keys.size(); ++i) {
        file.entries[i].key = keys.keys[i];
        file.entries[i].name = dump::parseEntryName(keys.keys[i]);
    }
    file.buildIndex();
    auto tree = std::make_shared<ConstructTree>();
    tree->fill(file, construct);
    // The nodes view the scanned keys, which the tree keeps, as a deserialized tree keeps its own.
    tree->m_keyText = keys.text;
    tree->m_keyIndex.resize(tree->m_nodes.size());
    for (std::uint32_t i = 0; i < tree->m_nodes.size(); ++i)
        tree->m_keyIndex[i] = { std::hash<std::string_view> {}(tree->m_nodes[i].key), i };
    std::sort(tree->m_keyIndex.begin(), tree->m_keyIndex.end());
    return tree;
}

void ConstructTree::fill(const dump::DumpFile& dump, const dump::ConstructMap& construct)
{
    ConstructTree* tree = this;
    const std::size_t n = dump.entries.size();

    Builder builder { dump, construct, tree->m_diagnostics, {}, {}, {}, {}, false };
    builder.resolve();

    tree->m_nodes.resize(n);
    std::vector<std::vector<std::uint32_t>> kids(n);
    std::vector<std::uint32_t> roots;
    for (std::uint32_t i = 0; i < n; ++i) {
        TreeNode& node = tree->m_nodes[i];
        node.key = dump.entries[i].key;
        node.name = dump.entries[i].name;
        node.parent = NodeId { builder.parent[i] };
        node.parentSource = builder.source[i];
        if (builder.parent[i] == kNone)
            roots.push_back(i);
        else
            kids[builder.parent[i]].push_back(i);
    }

    // Siblings are ordered by when their subtree started: the smallest file position inside it. msprobe
    // writes a module after its children (it is recorded when it finishes), so the module's own position
    // would put it after the APIs it contains. parameters_grad are written after the forward call but
    // computed during backward, so they do not count and come last among their siblings.
    std::vector<std::uint32_t> startKey(n, std::numeric_limits<std::uint32_t>::max());
    {
        std::vector<std::uint32_t> depthOrder(n);
        // Each node's depth from its parent's, each computed once: walking every node up to its root was
        // quadratic in a deep chain (issue 25: 100,000 nested modules took minutes).
        constexpr std::uint32_t kUnknown = std::numeric_limits<std::uint32_t>::max();
        std::vector<std::uint32_t> depth(n, kUnknown);
        std::vector<std::uint32_t> path;
        for (std::uint32_t i = 0; i < n; ++i) {
            depthOrder[i] = i;
            path.clear();
            std::uint32_t cur = i;
            while (cur != kNone && depth[cur] == kUnknown && path.size() <= n) {
                path.push_back(cur);
                cur = builder.parent[cur];
            }
            std::uint32_t d = cur == kNone || depth[cur] == kUnknown ? 0 : depth[cur] + 1;
            for (auto it = path.rbegin(); it != path.rend(); ++it)
                depth[*it] = d++;
        }
        std::sort(depthOrder.begin(), depthOrder.end(),
                  [&](std::uint32_t a, std::uint32_t b) { return depth[a] > depth[b]; });
        for (std::uint32_t i : depthOrder) {
            const bool isGrad = dump.entries[i].name.kind == EntryKind::ParametersGrad;
            if (!isGrad)
                startKey[i] = std::min(startKey[i], i);
            const std::uint32_t p = builder.parent[i];
            if (p != kNone && !isGrad)
                startKey[p] = std::min(startKey[p], startKey[i]);
            tree->m_nodes[i].depth = depth[i];
        }
    }
    auto bySubtreeStart = [&](std::uint32_t a, std::uint32_t b) {
        return std::tie(startKey[a], a) < std::tie(startKey[b], b);
    };
    std::sort(roots.begin(), roots.end(), bySubtreeStart);
    for (auto& k : kids)
        std::sort(k.begin(), k.end(), bySubtreeStart);

    tree->m_children.reserve(n);
    for (std::uint32_t i = 0; i < n; ++i) {
        TreeNode& node = tree->m_nodes[i];
        node.firstChild = static_cast<std::uint32_t>(tree->m_children.size());
        node.childCount = static_cast<std::uint32_t>(kids[i].size());
        for (std::uint32_t row = 0; row < kids[i].size(); ++row) {
            tree->m_children.push_back(NodeId { kids[i][row] });
            tree->m_nodes[kids[i][row]].row = row;
        }
    }
    for (std::uint32_t row = 0; row < roots.size(); ++row) {
        tree->m_roots.push_back(NodeId { roots[row] });
        tree->m_nodes[roots[row]].row = row;
    }

    // Execution order: post-order (a node finishes after its children). Iterative, as dumps can be deep.
    tree->m_order.reserve(n);
    std::vector<std::uint32_t> deferred;
    struct Frame
    {
        std::uint32_t node;
        std::uint32_t next;
    };
    std::vector<Frame> stack;
    for (std::uint32_t r : roots) {
        stack.push_back({ r, 0 });
        while (!stack.empty()) {
            Frame& f = stack.back();
            if (f.next < kids[f.node].size()) {
                const std::uint32_t child = kids[f.node][f.next++];
                if (builder.gradAtEnd[child])
                    deferred.push_back(child); // computed in a backward pass the dump does not show
                else
                    stack.push_back({ child, 0 });
                continue;
            }
            tree->m_order.push_back(NodeId { f.node });
            stack.pop_back();
        }
    }
    for (std::uint32_t d : deferred)
        tree->m_order.push_back(NodeId { d });
    for (std::uint32_t pos = 0; pos < tree->m_order.size(); ++pos)
        tree->m_nodes[tree->m_order[pos].value].executionIndex = pos;
}

namespace {

constexpr std::uint32_t kTreeFormat = 1;

// TreeNode without its views: what serialize() stores per node.
struct StoredNode
{
    std::uint64_t keyOffset;
    std::uint32_t keyLength;
    std::uint32_t parent;
    std::uint32_t firstChild;
    std::uint32_t childCount;
    std::uint32_t row;
    std::uint32_t depth;
    std::uint32_t executionIndex;
    std::uint8_t parentSource;
    std::uint8_t pad[3];
};

} // namespace

std::uint64_t ConstructTree::keysHash() const
{
    // FNV-1a over the keys with a separator: cheap next to reading them, and any renamed, added or moved key
    // changes it.
    std::uint64_t h = fnv1a({});
    for (const TreeNode& n : m_nodes)
        h = fnv1a("\xff", fnv1a(n.key, h));
    return h;
}

void ConstructTree::serialize(std::string& out) const
{
    ByteWriter w(out);
    w.value(kTreeFormat);
    std::size_t keyBytes = 0;
    for (const TreeNode& n : m_nodes)
        keyBytes += n.key.size();
    std::string keys;
    keys.reserve(keyBytes);
    std::vector<StoredNode> nodes(m_nodes.size());
    for (std::size_t i = 0; i < m_nodes.size(); ++i) {
        const TreeNode& n = m_nodes[i];
        StoredNode& s = nodes[i];
        s = StoredNode {};
        s.keyOffset = keys.size();
        s.keyLength = static_cast<std::uint32_t>(n.key.size());
        keys += n.key;
        s.parent = n.parent.value;
        s.firstChild = n.firstChild;
        s.childCount = n.childCount;
        s.row = n.row;
        s.depth = n.depth;
        s.executionIndex = n.executionIndex;
        s.parentSource = static_cast<std::uint8_t>(n.parentSource);
    }
    w.text(keys);
    w.array(nodes);
    w.array(m_children);
    w.array(m_roots);
    w.array(m_order);
}

std::shared_ptr<const ConstructTree> ConstructTree::deserialize(std::string_view bytes, std::string* error)
{
    auto failed = [error](const char* why) -> std::shared_ptr<const ConstructTree> {
        if (error)
            *error = why;
        return nullptr;
    };
    ByteReader r(bytes);
    std::uint32_t format = 0;
    auto keys = std::make_shared<std::string>();
    std::vector<StoredNode> nodes;
    auto tree = std::make_shared<ConstructTree>();
    if (!r.value(format) || format != kTreeFormat)
        return failed("not a tree of this version");
    if (!r.text(*keys) || !r.array(nodes) || !r.array(tree->m_children) || !r.array(tree->m_roots)
        || !r.array(tree->m_order))
        return failed("the tree is cut short");
    const std::size_t n = nodes.size();
    auto validId = [n](NodeId id) { return id.value < n; };
    if (n >= NodeId::kInvalid || tree->m_order.size() != n || tree->m_children.size() + tree->m_roots.size() != n)
        return failed("the tree's lists do not add up");
    tree->m_nodes.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
        const StoredNode& s = nodes[i];
        if (s.keyOffset > keys->size() || s.keyLength > keys->size() - s.keyOffset
            || (s.parent != NodeId::kInvalid && s.parent >= n) || s.firstChild > tree->m_children.size()
            || s.childCount > tree->m_children.size() - s.firstChild || s.executionIndex >= n
            || s.parentSource > static_cast<std::uint8_t>(ParentSource::Inferred))
            return failed("a node points outside the tree");
        TreeNode& node = tree->m_nodes[i];
        node.key = std::string_view(*keys).substr(s.keyOffset, s.keyLength);
        node.name = dump::parseEntryName(node.key);
        node.parent = NodeId { s.parent };
        node.parentSource = static_cast<ParentSource>(s.parentSource);
        node.firstChild = s.firstChild;
        node.childCount = s.childCount;
        node.row = s.row;
        node.depth = s.depth;
        node.executionIndex = s.executionIndex;
    }
    if (!std::all_of(tree->m_children.begin(), tree->m_children.end(), validId)
        || !std::all_of(tree->m_roots.begin(), tree->m_roots.end(), validId)
        || !std::all_of(tree->m_order.begin(), tree->m_order.end(), validId))
        return failed("a list names a node outside the tree");
    // Views index rows by these links: every child sits where its parent's list says, at its row.
    for (std::uint32_t i = 0; i < tree->m_roots.size(); ++i) {
        const TreeNode& root = tree->m_nodes[tree->m_roots[i].value];
        if (root.parent.valid() || root.row != i || root.depth != 0)
            return failed("a root is not where the tree says");
    }
    for (std::uint32_t p = 0; p < n; ++p) {
        const TreeNode& parent = tree->m_nodes[p];
        for (std::uint32_t k = 0; k < parent.childCount; ++k) {
            const TreeNode& child = tree->m_nodes[tree->m_children[parent.firstChild + k].value];
            if (child.parent.value != p || child.row != k || child.depth != parent.depth + 1)
                return failed("a child is not where its parent says");
        }
    }
    tree->m_keyText = std::move(keys);
    tree->m_keyIndex.resize(n);
    for (std::uint32_t i = 0; i < n; ++i)
        tree->m_keyIndex[i] = { std::hash<std::string_view> {}(tree->m_nodes[i].key), i };
    std::sort(tree->m_keyIndex.begin(), tree->m_keyIndex.end());
    return tree;
}

} // namespace probescope::tree
