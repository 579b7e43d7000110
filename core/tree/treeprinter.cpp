// SPDX-License-Identifier: Apache-2.0
#include "core/tree/constructtree.h"

namespace probescope::tree {

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
        for (std::uint32_t i = 0; i < depth; ++i)
            out += options.indent;
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
