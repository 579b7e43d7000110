// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "compare/comparetable.h"
#include "tree/constructtree.h"

#include <optional>
#include <string>
#include <vector>

namespace probescope::compare {

/**
 * @brief Where a compare first goes wrong, in the order things ran (not the order msprobe lists them).
 *
 * The culprit is the earliest node in execution order (tree::ConstructTree) whose outputs fail while
 * its inputs pass. Nodes are placed where they finish, so an API inside a module comes before the module
 * and the innermost culprit wins; parameters_grad is placed where its gradient is computed.
 */
struct FirstFailure
{
    bool found = false;            ///< a node with failing outputs and passing inputs exists
    tree::NodeId node;             ///< the culprit (or, when !found, the first node with any failing row)
    std::string key;               ///< its dump.json key
    std::uint32_t executionIndex = 0;
    long firstFailingRow = -1;     ///< table row of its first failing output (or first failing row)
    bool inputsAlreadyDiffer = false; ///< !found but rows fail: the divergence began before this dump
    std::string summary;           ///< one line for people
};

/// Whether a table row fails: Accuracy "No" or a red highlight (tensor); Result "Warning" or any highlight
/// (statistics); Result "Different" (md5).
bool rowFails(const CompareTable& table, std::size_t row);

/// `tree` must be built from the same NPU DumpFile the table was compared from.
FirstFailure findFirstFailure(const CompareTable& table, const tree::ConstructTree& tree);

} // namespace probescope::compare
