// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/compare/table/comparetable.h"
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

/**
 * @brief ProbeScope's own verdict on a statistic msprobe does not flag (issue 33): an NPU statistic (max, min, mean,
 * l2norm) that is NaN or ±Inf where the bench's same statistic is finite is a divergence.
 *
 * msprobe's cells stay as msprobe writes them (its highlight lets a NaN through, since every comparison with NaN is
 * false); the first failing node and every node status call the row what it is. A number cell, or a text cell
 * spelling a number or a non-finite value ("nan", "Nan", "inf", "-Infinity", any case), is read; other text
 * ("N/A", "None") is no statistic. The same columns in every profile (msprobe 1.2, msprobe 26, ptdbg).
 */
class NonFiniteStatistics
{
public:
    explicit NonFiniteStatistics(const CompareTable& table);
    /// Row `row` of `table` (the table the columns were found in).
    bool diverges(const CompareTable& table, std::size_t row) const;
    /// A row's cells, in the table's column order (a row streamed before the table is complete).
    bool diverges(const std::vector<Cell>& cells) const;

private:
    int m_npu[4];
    int m_bench[4];
};

/// Whether a table row fails: Accuracy "No" or a red highlight (tensor); Result "Warning" or any highlight
/// (statistics); Result "Different" (md5); in every mode an NPU statistic that is NaN or ±Inf where the bench's is
/// finite (NonFiniteStatistics).
bool rowFails(const CompareTable& table, std::size_t row);
/// rowFails with the statistic columns found once (a loop over every row of a large table).
bool rowFails(const CompareTable& table, std::size_t row, const NonFiniteStatistics& nonFinite);

/// Index of the failure that ran earliest: a real culprit beats "inputs already differ", then the earlier
/// execution position wins, ties keep list order; null entries and ones without a key are skipped. -1 if none.
/// Ranks run in parallel, so positions are compared in each rank's own execution order.
long earliestFailure(const std::vector<const FirstFailure*>& failures);

/// `tree` must be built from the same NPU DumpFile the table was compared from.
FirstFailure findFirstFailure(const CompareTable& table, const tree::ConstructTree& tree);

} // namespace probescope::compare
