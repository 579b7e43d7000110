// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/dump/keyscan.h"
#include "core/dump/rankdump.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace probescope::tree {

/// Index of a node; equal to the index of its entry in the dump file, so it is stable for a given dump.
struct NodeId
{
    std::uint32_t value = kInvalid;
    static constexpr std::uint32_t kInvalid = 0xffffffffu;
    bool valid() const { return value != kInvalid; }
    friend bool operator==(NodeId, NodeId) = default;
};

/// Why a node sits under its parent.
enum class ParentSource : std::uint8_t {
    None,      ///< a root
    Construct, ///< construct.json says so
    Inferred,  ///< deduced; see docs/tree.md (backward APIs msprobe leaves unparented, parameters_grad)
};

struct TreeNode
{
    std::string_view key;
    dump::EntryName name;
    NodeId parent;
    ParentSource parentSource = ParentSource::None;
    std::uint32_t firstChild = 0; ///< into ConstructTree's child list
    std::uint32_t childCount = 0;
    std::uint32_t row = 0;            ///< position among its parent's children (or among the roots)
    std::uint32_t depth = 0;
    std::uint32_t executionIndex = 0; ///< position in executionOrder()
};

/**
 * @brief The module/API hierarchy of one rank of one step, and the order in which things ran.
 *
 * Built from construct.json and the dump file's order; immutable. Children are ordered by when
 * their subtree started. Execution order places every node where it finished: after its children,
 * so an API inside a module comes before the module; a module's parameters_grad comes right before
 * the backward call of that module (where the gradient is computed), not after its forward where
 * msprobe writes it.
 */
class ConstructTree
{
public:
    static std::shared_ptr<const ConstructTree> build(std::shared_ptr<const dump::RankDump> rank);
    /// The same tree from the entry keys alone (dump/keyscan.h), owning them like a deserialized tree (no rank): what
    /// the viewer shows while the dumps are still being read. keysHash() tells whether it is the dump's tree.
    static std::shared_ptr<const ConstructTree> buildFromKeys(const dump::DumpKeys& keys,
                                                              const dump::ConstructMap& construct,
                                                              const std::filesystem::path& dumpPath);

    std::size_t size() const { return m_nodes.size(); }
    const TreeNode& node(NodeId id) const { return m_nodes[id.value]; }
    /// The node's dump entry; only a tree with its dump has one (hasRank()). node(id).key works on every tree.
    const dump::Entry& entry(NodeId id) const { return m_rank->dump->entries[id.value]; }
    std::span<const NodeId> roots() const { return { m_roots.data(), m_roots.size() }; }
    std::span<const NodeId> children(NodeId id) const
    {
        const TreeNode& n = node(id);
        return { m_children.data() + n.firstChild, n.childCount };
    }
    std::span<const NodeId> executionOrder() const { return { m_order.data(), m_order.size() }; }
    std::optional<NodeId> find(std::string_view key) const;
    /// The dump the tree was built from; absent in a tree read back by deserialize() (hasRank() false).
    const dump::RankDump& rank() const { return *m_rank; }
    bool hasRank() const { return m_rank != nullptr; }

    /// The tree as bytes (keys, parents, children, order; not the dump nor the diagnostics), for the reopen
    /// cache (session/paircache.h). Appended to `out`.
    void serialize(std::string& out) const;
    /// A tree read back from serialize()'s bytes, owning its keys; null (with `error`) when the bytes do not hold
    /// a consistent tree.
    static std::shared_ptr<const ConstructTree> deserialize(std::string_view bytes, std::string* error = nullptr);
    /// A hash of every key in node order: what tells that two trees are of the same dump.
    std::uint64_t keysHash() const;
    const Diagnostics& diagnostics() const { return m_diagnostics; }

private:
    void fill(const dump::DumpFile& dump, const dump::ConstructMap& construct);

    std::shared_ptr<const dump::RankDump> m_rank;
    std::vector<TreeNode> m_nodes;
    std::vector<NodeId> m_children;
    std::vector<NodeId> m_roots;
    std::vector<NodeId> m_order;
    Diagnostics m_diagnostics;
    std::shared_ptr<const std::string> m_keyText; ///< the keys of a deserialized tree (no dump to view into)
    std::vector<std::pair<std::uint64_t, std::uint32_t>> m_keyIndex; ///< (key hash, node) of a deserialized tree
};

struct PrintOptions
{
    bool markInferred = true;      ///< append "  (parent inferred)"
    bool showExecutionIndex = false; ///< prefix "[n] "
    std::string indent = "  ";
};

/// The hierarchy as indented text, one node per line (used by `probescope-cli tree` and golden tests).
std::string printTree(const ConstructTree& tree, const PrintOptions& options = {});

} // namespace probescope::tree
