// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/compare/comparetable.h"
#include "core/tree/constructtree.h"

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

/// Index of the failure that ran earliest: a real culprit beats "inputs already differ", then the earlier
/// execution position wins, ties keep list order; null entries and ones without a key are skipped. -1 if none.
/// Ranks run in parallel, so positions are compared in each rank's own execution order.
long earliestFailure(const std::vector<const FirstFailure*>& failures);

/// `tree` must be built from the same NPU DumpFile the table was compared from.
FirstFailure findFirstFailure(const CompareTable& table, const tree::ConstructTree& tree);

} // namespace probescope::compare
