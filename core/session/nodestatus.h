// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/compare/table/comparetable.h"
#include "core/tree/constructtree.h"

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

/**
 * @brief The one fold of a node's row statuses into the node's own status (computeNodeStatus, the
 * streamed updates of analysePair and the GUI's model all come here).
 *
 * The worst matched row wins; a node none of whose rows has a bench counterpart is Unmatched, a node
 * without rows NoData. A Pending row keeps the node Pending unless an Error is already known: anything
 * milder may still turn into one.
 */
class OwnStatusFold
{
public:
    void add(Status row)
    {
        m_any = true;
        m_matched = m_matched || row != Status::Unmatched;
        m_pending = m_pending || row == Status::Pending;
        if (row != Status::Unmatched && row != Status::Pending)
            m_worst = worse(m_worst, row);
    }
    Status result() const
    {
        if (!m_any)
            return Status::NoData;
        if (!m_matched)
            return Status::Unmatched;
        return m_worst == Status::Error || !m_pending ? m_worst : Status::Pending;
    }

private:
    Status m_worst = Status::NoData;
    bool m_any = false;
    bool m_matched = false;
    bool m_pending = false;
};

/// OwnStatusFold over rowStates[r] for each of `rows` (a node's rows, NodeStatusTable::rowsOf).
Status foldRowStatuses(std::span<const std::uint32_t> rows, const std::vector<Status>& rowStates);

/// `metricsFilled[r]` false marks a row whose metrics are not computed yet (empty = all filled).
/// `rowStates`, when the caller already has rowStatuses(table, metricsFilled), is used instead of
/// working each row's status out again.
NodeStatusTable computeNodeStatus(const compare::CompareTable& table, const tree::ConstructTree& tree,
                                  const std::vector<bool>& metricsFilled = {},
                                  const std::vector<Status>* rowStates = nullptr);

/// Recomputes `subtree` and `failingBelow` from `own` (after own statuses changed).
void aggregate(NodeStatusTable& status, const tree::ConstructTree& tree);

/**
 * @brief Own statuses that change while a compare streams, with `subtree`, `failingBelow` and `counts`
 * folded again incrementally, as aggregate() folds them at once: an update costs the paths from its
 * nodes to the root, not the tree. What the GUI's tree model keeps between two status tables.
 */
class LiveNodeStatus
{
public:
    /// Every node of `tree` Pending; nullptr: no nodes. The tree must outlive its use here.
    void reset(const tree::ConstructTree* tree);
    /// The statuses of `table`, which must be of the tree last given to reset().
    void assign(const NodeStatusTable& table);

    struct Changes
    {
        std::vector<std::uint32_t> own;  ///< nodes whose own status changed, in update order
        std::vector<std::uint32_t> any;  ///< nodes whose own, subtree or failingBelow changed, once each
    };
    /// own[nodes[k]] = statuses[k] (later entries win; unknown nodes and values are skipped), then the
    /// ancestors' subtree worst and failing-below counts follow.
    Changes apply(std::span<const std::uint32_t> nodes, std::span<const Status> statuses);

    const std::vector<Status>& own() const { return m_own; }
    const std::vector<Status>& subtree() const { return m_subtree; }
    const std::vector<std::uint32_t>& failingBelow() const { return m_failingBelow; }
    /// Nodes per own Status.
    const std::array<std::uint32_t, 6>& counts() const { return m_counts; }

private:
    const tree::ConstructTree* m_tree = nullptr;
    std::vector<Status> m_own;
    std::vector<Status> m_subtree;
    std::vector<std::uint32_t> m_failingBelow;
    std::array<std::uint32_t, 6> m_counts {};
    std::vector<std::vector<std::uint32_t>> m_dirtyByDepth; ///< scratch of apply()
    std::vector<std::uint8_t> m_dirtyFlag;                  ///< scratch of apply()
};

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
