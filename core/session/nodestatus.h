// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "compare/comparetable.h"
#include "tree/constructtree.h"

#include <array>
#include <cmath>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace probescope::session {

/**
 * @brief What a node (or a compare row) looks like to a user, from best to worst.
 *
 * The numeric order is the severity order used to aggregate a module over its descendants
 * (worst wins). Pending = real-data metrics not computed yet; NoData = the node has no rows
 * (e.g. a module in an L1 dump); Unmatched = rows but no bench counterpart.
 */
enum class Status : std::uint8_t { NoData, Pending, Pass, Unmatched, Warning, Error };

inline Status worse(Status a, Status b) { return a < b ? b : a; }
inline bool isFailing(Status s) { return s == Status::Warning || s == Status::Error; }
const char* statusName(Status s); ///< "pass", "warning", "error", "unmatched", "pending", "no data"

/// The status of one table row; rows whose tensor metrics are still missing are Pending when
/// `metricsFilled` is false.
Status rowStatus(const compare::CompareTable& table, std::size_t row, bool metricsFilled = true);
/// rowStatus of every row (`metricsFilled` as in computeNodeStatus), finding the columns once.
std::vector<Status> rowStatuses(const compare::CompareTable& table, const std::vector<bool>& metricsFilled = {});

/// Key figures of a node over its own rows; NaN when the mode or the rows do not have them.
struct NodeMetrics
{
    double cosine = NAN;          ///< lowest Cosine over outputs (real data)
    double maxAbsErr = NAN;       ///< highest MaxAbsErr over outputs (real data), or Max diff (statistics)
    double maxRelErr = NAN;       ///< highest MaxRelativeErr over outputs (real data) or of the statistics
    double oneThousandth = NAN;   ///< lowest One Thousandth Err Ratio over outputs
    double normRelErr = NAN;      ///< highest |NormRelativeErr| over outputs (statistics), as a fraction
    double index = NAN;           ///< msprobe's legacy continuous precision index in [0, 1] (gui-anchors b.2)
};

/// Which figure a plot or a column shows.
enum class Metric : std::uint8_t { Cosine, MaxAbsErr, MaxRelErr, OneThousandth, NormRelErr, Index };
double metricValue(const NodeMetrics& m, Metric metric);
const char* metricName(Metric metric);

/**
 * @brief Per-node verdicts of one compared pair, over the NPU construct tree. Immutable once built.
 *
 * A node's own status is the worst of its rows; `subtree` is the worst over the node and all its
 * descendants and `failingBelow` counts descendants whose own status fails.
 */
struct NodeStatusTable
{
    std::vector<Status> own;
    std::vector<Status> subtree;
    std::vector<std::uint32_t> failingBelow;
    std::vector<NodeMetrics> metrics;
    std::vector<std::uint32_t> rowOffsets; ///< rows of node n: rowIndex[rowOffsets[n] .. rowOffsets[n+1])
    std::vector<std::uint32_t> rowIndex;
    std::array<std::uint32_t, 6> counts {}; ///< nodes per own Status

    std::span<const std::uint32_t> rowsOf(tree::NodeId node) const
    {
        return { rowIndex.data() + rowOffsets[node.value], rowOffsets[node.value + 1] - rowOffsets[node.value] };
    }
};

/// `metricsFilled[r]` false marks a row whose metrics are not computed yet (empty = all filled).
/// `rowStates`, when the caller already has rowStatuses(table, metricsFilled), is used instead of
/// working each row's status out again.
NodeStatusTable computeNodeStatus(const compare::CompareTable& table, const tree::ConstructTree& tree,
                                  const std::vector<bool>& metricsFilled = {},
                                  const std::vector<Status>* rowStates = nullptr);

/// Recomputes `subtree` and `failingBelow` from `own` (after own statuses changed).
void aggregate(NodeStatusTable& status, const tree::ConstructTree& tree);

/// User-editable colouring: msprobe's three-level rules (default) or the legacy continuous index.
struct ColorBands
{
    enum class Scheme : std::uint8_t { MsprobeRules, ContinuousIndex } scheme = Scheme::MsprobeRules;
    /// Lower bounds of the warning and error bands on the precision index (msprobe: 0.3 and 0.6).
    double warningFrom = 0.3;
    double errorFrom = 0.6;
};

/// The band a node is painted in: Pass, Warning, Error, Unmatched, Pending or NoData.
Status bandOf(Status own, const NodeMetrics& metrics, const ColorBands& bands);

} // namespace probescope::session
