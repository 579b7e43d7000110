// SPDX-License-Identifier: Apache-2.0
#include "core/tree/constructtree.h"

#include <algorithm>

namespace probescope::tree {

namespace {
/// Levels of indentation printed at most; a node deeper than this is printed at this indentation with
/// "(depth N) " before its name.
constexpr std::uint32_t kMaxIndentLevels = 32;
} // namespace

std::string printTree(const ConstructTree& tree, const PrintOptions& options)
{
    std::string out;
    std::vector<std::pair<NodeId, std::uint32_t>> stack; // node, depth
    const auto roots = tree.roots();
    for (auto it = roots.rbegin(); it != roots.rend(); ++it)
        stack.emplace_back(*it, 0);
    while (!stack.empty()) {
        const auto [id, depth] = stack.back();
        stack.pop_back();
        const TreeNode& node = tree.node(id);
        // Bounded cost (issue 25, docs/reliability.md "Bounds"): indentation stops at kMaxIndentLevels, so
        // the output is linear in the node count however deep the model nests; deeper lines say their depth.
        for (std::uint32_t i = 0; i < std::min(depth, kMaxIndentLevels); ++i)
            out += options.indent;
        if (depth > kMaxIndentLevels)
            out += "(depth " + std::to_string(depth) + ") ";
        if (options.showExecutionIndex)
            out += "[" + std::to_string(node.executionIndex) + "] ";
        out += node.key;
        if (options.markInferred && node.parentSource == ParentSource::Inferred)
            out += "  (parent inferred)";
        out += '\n';
        const auto kids = tree.children(id);
        for (auto it = kids.rbegin(); it != kids.rend(); ++it)
            stack.emplace_back(*it, depth + 1);
    }
    return out;
}

} // namespace probescope::tree
