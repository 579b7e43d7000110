// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "ui/models/comparetreemodel.h"
#include "ui/models/nodesearch.h"
#include "core/session/nodestatus.h"
#include "core/tree/constructtree.h"

#include <QAbstractTableModel>
#include <QString>

#include <cstdint>
#include <future>
#include <memory>
#include <span>
#include <vector>

namespace probescope::ui {

/**
 * @brief The rows a tree view shows of a CompareTreeModel: the nodes that pass the filters (and their
 * ancestors) whose ancestors are all expanded, in display (pre-)order, as a flat table.
 *
 * Filtering by own status, direction, kind and name keeps the ancestors of every accepted node, so a
 * hit is always shown in its place in the hierarchy. Expansion is kept here too, per node, so that
 * expand-all, collapse-all and a filter change are one pass over flat arrays indexed by display position
 * (a few ms at 1M nodes) and one layout change for the view; QTreeView with a QSortFilterProxyModel
 * walked every visible row through Qt for each of them (0.3-0.6 s at 1M). Expanding or collapsing one
 * node inserts or removes its rows. A CompareTreeView draws the indentation and the branch arrows from
 * DepthRole, HasChildrenRole and ExpandedRole.
 *
 * Every other role and every column is the CompareTreeModel's. Streamed status changes update the
 * filter state node by node (CompareTreeModel::ownStatusesChanged) and re-lay the rows only when a
 * node's visibility changed. Persistent indexes (a view's current row and selection) follow their
 * node through every change, or become invalid when it is hidden.
 */
class TreeRowsModel : public QAbstractTableModel
{
    Q_OBJECT

public:
    enum Role : int {
        DepthRole = CompareTreeModel::SortRole + 1, ///< int, 0 for a root
        HasChildrenRole,                            ///< bool: the node has shown children (an arrow)
        ExpandedRole,                               ///< bool
    };
    enum class DirectionFilter { All, Forward, Backward };
    enum class KindFilter { All, Module, Api };

    /// One bit per session::Status (bit n = Status value n).
    static constexpr std::uint32_t kAllStatuses = 0x3fu;
    static constexpr std::uint32_t statusBit(session::Status s) { return 1u << static_cast<unsigned>(s); }

    explicit TreeRowsModel(QObject* parent = nullptr);
    ~TreeRowsModel() override;

    void setSourceModel(CompareTreeModel* model);
    CompareTreeModel* treeModel() const { return m_model; }
    /// The name search over the current tree (the name filter uses it too), or null without a tree.
    /// Built on a thread of its own when the tree arrives (reading every key scattered through the
    /// dump's text took ~1 s of setSkeleton at 1M nodes); the first call waits for it if need be.
    const NodeSearch* nodeSearch() const;

    // ---- filters
    void setStatusMask(std::uint32_t mask);
    void setStatusVisible(session::Status status, bool visible);
    std::uint32_t statusMask() const { return m_statusMask; }
    void setDirectionFilter(DirectionFilter direction);
    DirectionFilter directionFilter() const { return m_direction; }
    void setKindFilter(KindFilter kind);
    KindFilter kindFilter() const { return m_kind; }
    /// Keys containing `text` (or matching it as a regular expression). Empty clears the name filter.
    /// An invalid expression matches nothing; nameFilterError() says why.
    void setNameFilter(const QString& text, bool regex = false,
                       Qt::CaseSensitivity sensitivity = Qt::CaseInsensitive);
    QString nameFilterError() const { return m_nameError; }
    /// Status mask, direction and kind at once: one recomputation (a filter bar changes them together).
    void setFilters(std::uint32_t statusMask, DirectionFilter direction, KindFilter kind);
    void clearFilters();
    bool isFiltering() const;
    /// Whether a node passes the filters by itself (ancestors of accepted nodes are shown too).
    bool acceptsNode(tree::NodeId node) const;
    /// Whether a node passes the filters or has a descendant that does: it has a row once its
    /// ancestors are expanded.
    bool isShown(tree::NodeId node) const;

    // ---- expansion
    bool isExpanded(tree::NodeId node) const;
    /// Inserts (removes) the rows of the node's shown descendants whose ancestors are expanded.
    void setExpanded(tree::NodeId node, bool expanded);
    /// Several nodes at once, as one layout change.
    void setExpanded(std::span<const tree::NodeId> nodes, bool expanded);
    /// Expands the node and every node below it.
    void expandSubtree(tree::NodeId node);
    void expandAll();
    void collapseAll();
    /// Expands the ancestors of `node`, so that it has a row when it is shown; returns that row's index.
    QModelIndex reveal(tree::NodeId node, int column = 0);

    // ---- rows and nodes
    /// The node's row, or an invalid index when it is filtered out or under a collapsed node.
    QModelIndex mapFromNode(tree::NodeId node, int column = 0) const;
    tree::NodeId nodeAt(const QModelIndex& index) const;
    tree::NodeId nodeAtRow(int row) const;
    /// The CompareTreeModel index of a row's node.
    QModelIndex mapToSource(const QModelIndex& index) const;
    QModelIndex mapFromSource(const QModelIndex& source) const;
    /// The row of the node's parent, or -1 (a root, or its parent has no row).
    int parentRow(int row) const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;
    Qt::ItemFlags flags(const QModelIndex& index) const override;
    QHash<int, QByteArray> roleNames() const override;

private:
    // Everything below is indexed by display position (CompareTreeModel::displayPosition), so the
    // passes over the whole tree read memory in order.
    static constexpr std::uint32_t kNone = 0xffffffffu;
    enum Trait : std::uint8_t { Forward = 1, Backward = 2, ModuleLike = 4, Api = 8 };

    void onSourceReset();
    void onSourceDataChanged(const QModelIndex& topLeft, const QModelIndex& bottomRight, const QList<int>& roles);
    void onOwnStatusesChanged(const std::vector<std::uint32_t>& nodes);
    void onStatusesChanged();
    void onAppearanceChanged();

    std::uint32_t positionOf(tree::NodeId node) const;
    bool acceptsPosition(std::uint32_t pos) const;
    bool shown(std::uint32_t pos) const { return !m_filtering || m_self[pos] || m_shownChildren[pos]; }
    bool hasShownChildren(std::uint32_t pos) const;
    /// The row showing display position `pos`, or -1.
    int rowOf(std::uint32_t pos) const;
    /// Appends the rows of the subtree at `pos` (not `pos` itself) that are shown and expanded into.
    void appendRowsBelow(std::uint32_t pos, std::vector<std::uint32_t>& out) const;
    /// Recomputes which nodes are shown, then the rows.
    void refilter();
    void computeShown();
    /// Recomputes the rows from the flags, as one layout change that keeps persistent indexes on their node.
    void relayout();
    void emitRowChanged(int row);

    CompareTreeModel* m_model = nullptr;
    std::uint32_t m_statusMask = kAllStatuses;
    DirectionFilter m_direction = DirectionFilter::All;
    KindFilter m_kind = KindFilter::All;
    QString m_nameText;
    bool m_nameRegex = false;
    Qt::CaseSensitivity m_nameCase = Qt::CaseInsensitive;
    QString m_nameError;
    /// Keys lowered in display order, built with each tree (see nodeSearch()).
    std::shared_future<std::shared_ptr<const NodeSearch>> m_search;

    std::vector<std::uint32_t> m_end;    ///< one past the last position of the node's subtree
    std::vector<std::uint32_t> m_parent; ///< the parent's position, or kNone
    std::vector<std::uint8_t> m_traits;  ///< Trait bits, for the direction and kind filters
    std::vector<std::uint8_t> m_expanded;

    bool m_filtering = false;
    std::vector<std::uint8_t> m_nameHit;        ///< passes the name filter (while there is one)
    std::vector<std::uint8_t> m_self;           ///< passes every filter itself
    std::vector<std::uint32_t> m_shownChildren; ///< children that are shown
    bool m_visibilityChanged = false; ///< streamed statuses changed which nodes are shown
    bool m_recompute = false;         ///< a bulk status change: recompute which nodes are shown

    std::vector<std::uint32_t> m_rows; ///< display positions, ascending
};

} // namespace probescope::ui
