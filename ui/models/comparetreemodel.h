// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "ui/models/runanomalymodel.h"
#include "ui/models/statuspalette.h"
#include "core/session/nodestatus.h"
#include "core/session/session.h"
#include "core/tree/constructtree.h"

#include <QAbstractItemModel>
#include <QList>

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

class QAbstractItemView;

namespace probescope::ui {

/**
 * @brief The NPU construct tree of one compared pair, coloured by verdict.
 *
 * A thin view over immutable core data: an index's internal id is its NodeId and its row is
 * TreeNode::row, so index() and parent() are O(1) and nothing is copied per node except the three
 * status vectors that streamed updates change (own, subtree worst, failing-below count), which core's
 * session::LiveNodeStatus folds; the model only maps them to rows and roles.
 *
 * A row is filled with the band of the node's OWN status (msprobe colours a module by its own
 * inputs and outputs); the Status column says "own · N failing below" for modules, and the icon shows
 * the subtree's worst status, with a badge, when that is worse than the node's own. Every node is
 * Pending until a status table arrives.
 */
class CompareTreeModel : public QAbstractItemModel
{
    Q_OBJECT

public:
    enum Column : int {
        NameColumn,
        StatusColumn,
        FailingBelowColumn,
        CosineColumn,
        MaxAbsErrColumn,
        MaxRelErrColumn,
        NormRelErrColumn,
        ColumnCount
    };

    enum Role : int {
        NodeIdRole = Qt::UserRole + 1, ///< quint32 (tree::NodeId::value)
        OwnStatusRole,                 ///< int (session::Status)
        SubtreeStatusRole,             ///< int (session::Status), worst over the node and its descendants
        BandRole,                      ///< int (session::Status): the colour band painted
        FailingBelowRole,              ///< quint32
        KindRole,                      ///< int (NodeKind)
        DirectionRole,                 ///< int (dump::Direction: None, Forward, Backward)
        KeyRole,                       ///< QString, the dump.json key
        ExecutionIndexRole,            ///< quint32, position in execution order
        SortRole,                      ///< a value that sorts the column sensibly (numbers as double)
    };

    enum class NodeKind : int { Module, Api, Other };

    explicit CompareTreeModel(QObject* parent = nullptr);
    ~CompareTreeModel() override;

    /// Whether a column has values in a compare mode (the view hides the others).
    static bool columnApplies(int column, compare::CompareMode mode);
    static QList<int> columnsFor(compare::CompareMode mode);
    static NodeKind kindOf(const dump::EntryName& name);

    /// A new tree (model reset); every node Pending until setStatus(). Without `mode` it is detected
    /// from the dumps (compare::detectMode scans a statistics dump for md5 fields: ~50 ms at 20k nodes).
    void setSkeleton(std::shared_ptr<const session::PairSkeleton> skeleton,
                     std::optional<compare::CompareMode> mode = std::nullopt);
    /// One run on its own (issue 34): the tree is the run compared with itself, so its verdicts say nothing. In this
    /// mode the compare's statuses are ignored (setStatus keeps the table for its rows; applyUpdate does nothing)
    /// and each node shows its own state in the run (setRunStates): the Status column names it, the filter, the
    /// counts, N/Shift+N and the colours go by runStateClass (a NaN/Inf output Error, an input-only one Warning,
    /// finite Pass, shown without a pass mark or fill). Kept across setSkeleton; the states are not.
    void setRunMode(bool on);
    bool isRunMode() const { return m_runMode; }
    /// Every node's state in the run (one per tree node; another size is ignored). Only in run mode.
    void setRunStates(std::vector<RunNodeState> states);
    /// The node's state in the run; nullopt outside run mode or before setRunStates.
    std::optional<RunNodeState> runState(tree::NodeId node) const;
    /// Replaces every node's verdicts (nullptr: back to Pending). Emits dataChanged only for runs of
    /// rows whose display changed, so a final table that agrees with the streamed updates costs little;
    /// beyond bulkThreshold() changed nodes, in bulk (appearanceChanged()).
    void setStatus(std::shared_ptr<const session::NodeStatusTable> status);
    /// Streamed own statuses: ancestors' aggregates are updated incrementally.
    void applyUpdate(const session::StatusUpdate& update);
    void setBands(const session::ColorBands& bands);
    void setDarkPalette(bool dark);
    /// Above this many changed nodes, setStatus()/applyUpdate() signal the change in bulk: dataChanged
    /// for the top-level rows only, plus appearanceChanged(); see emitAppearanceChanged().
    void setBulkThreshold(std::size_t nodes) { m_bulkThreshold = nodes; }
    std::size_t bulkThreshold() const { return m_bulkThreshold; }
    void clear();

    const std::shared_ptr<const session::PairSkeleton>& skeleton() const { return m_skeleton; }
    const tree::ConstructTree* tree() const { return m_tree; }
    /// The last table given to setStatus() (metrics, rows); statuses may have moved on since.
    const std::shared_ptr<const session::NodeStatusTable>& statusTable() const { return m_statusTable; }
    /// The mode of the pair, when its dumps agree on one.
    std::optional<compare::CompareMode> mode() const { return m_mode; }
    const session::ColorBands& bands() const { return m_bands; }
    bool darkPalette() const { return m_dark; }

    session::Status ownStatus(tree::NodeId node) const { return m_live.own()[node.value]; }
    session::Status subtreeStatus(tree::NodeId node) const { return m_live.subtree()[node.value]; }
    std::uint32_t failingBelow(tree::NodeId node) const { return m_live.failingBelow()[node.value]; }
    session::Status band(tree::NodeId node) const;
    const session::NodeMetrics* metrics(tree::NodeId node) const;
    /// Nodes per own status, kept current through applyUpdate().
    const std::array<std::uint32_t, 6>& counts() const { return m_live.counts(); }
    std::size_t nodeCount() const { return m_live.own().size(); }

    QModelIndex indexOf(tree::NodeId node, int column = 0) const;
    tree::NodeId nodeAt(const QModelIndex& index) const;

    /// Every node in pre-order, the order a fully expanded tree shows them.
    std::span<const tree::NodeId> displayOrder() const { return m_preorder; }
    std::uint32_t displayPosition(tree::NodeId node) const { return m_preorderPos[node.value]; }
    std::vector<tree::NodeId> failingNodesInDisplayOrder() const;
    /// The next (previous) node after (before) `from` in display order whose own status fails;
    /// an invalid `from` starts at the top (bottom). With `wrap` the search continues at the other end.
    tree::NodeId nextFailing(tree::NodeId from, bool wrap = true) const;
    tree::NodeId previousFailing(tree::NodeId from, bool wrap = true) const;

    QModelIndex index(int row, int column, const QModelIndex& parent = {}) const override;
    QModelIndex parent(const QModelIndex& child) const override;
    QModelIndex sibling(int row, int column, const QModelIndex& index) const override;
    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    bool hasChildren(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;
    Qt::ItemFlags flags(const QModelIndex& index) const override;
    QHash<int, QByteArray> roleNames() const override;

signals:
    /// The own status of these nodes changed; emitted before the dataChanged signals of the change, so
    /// a proxy can bring its filter state up to date before it re-filters the changed rows.
    void ownStatusesChanged(const std::vector<std::uint32_t>& nodes);
    /// A setStatus() or applyUpdate() has been signalled completely.
    void statusesChanged();
    /// What possibly every node shows changed (setBands, setDarkPalette, a bulk setStatus). Only the
    /// top-level rows get a dataChanged (signalling every node costs a tree view ~0.5 s at 200k
    /// nodes), so a view must repaint on this signal: see repaintOnAppearanceChange().
    void appearanceChanged();

private:
    QString statusText(tree::NodeId node) const;
    QString toolTip(tree::NodeId node) const;
    QVariant metricValue(tree::NodeId node, int column) const;
    QVariant sortValue(tree::NodeId node, int column) const;
    /// One dataChanged per run of changed siblings that are adjacent in display order.
    void emitChanged(const std::vector<std::uint8_t>& changed, const QList<int>& roles);
    void emitChangedNodes(std::vector<std::uint32_t> nodes, const QList<int>& roles);
    void emitAppearanceChanged(const QList<int>& roles);
    /// `nodes` in display order.
    void emitRuns(const std::vector<std::uint32_t>& nodes, const QList<int>& roles);
    void resetStatusVectors();

    std::shared_ptr<const session::PairSkeleton> m_skeleton;
    const tree::ConstructTree* m_tree = nullptr;
    std::shared_ptr<const session::NodeStatusTable> m_statusTable;
    std::optional<compare::CompareMode> m_mode;
    /// Own, subtree-worst and failing-below statuses as streamed updates leave them (folded in core).
    session::LiveNodeStatus m_live;
    std::vector<tree::NodeId> m_preorder;
    std::vector<std::uint32_t> m_preorderPos;
    session::ColorBands m_bands;
    bool m_dark = false;
    std::size_t m_bulkThreshold = 2048;
    bool m_runMode = false;
    std::vector<RunNodeState> m_runStates; ///< one per node in run mode once known, else empty
    StatusIcons m_icons;
};

/// Makes `view` repaint when the model's colours change (setBands, setDarkPalette). Every view that
/// shows a CompareTreeModel, directly or through a proxy, needs this once.
void repaintOnAppearanceChange(const CompareTreeModel* model, QAbstractItemView* view);

} // namespace probescope::ui
