// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "ui/models/nodesearch.h"
#include "core/session/nodestatus.h"
#include "core/tree/constructtree.h"

#include <QSortFilterProxyModel>
#include <QString>

#include <cstdint>

namespace probescope::ui {

class CompareTreeModel;

/**
 * @brief Filters a CompareTreeModel by own status, direction, kind and name; keeps the ancestors of
 * every accepted node, so a hit is always shown in its place in the hierarchy.
 *
 * Takes plain values, so a filter bar of any shape can drive it. With no filter set every row is
 * accepted at once. With a filter, which nodes are shown is computed in one pass over the tree and
 * kept (a node is shown when it passes or has a shown child), instead of Qt's recursive filtering,
 * which re-walks rejected subtrees for every level it maps. Streamed status changes update that
 * state node by node (CompareTreeModel::ownStatusesChanged) before the proxy re-filters the rows.
 */
class TreeFilterProxy : public QSortFilterProxyModel
{
    Q_OBJECT

public:
    enum class DirectionFilter { All, Forward, Backward };
    enum class KindFilter { All, Module, Api };

    /// One bit per session::Status (bit n = Status value n).
    static constexpr std::uint32_t kAllStatuses = 0x3fu;
    static constexpr std::uint32_t statusBit(session::Status s) { return 1u << static_cast<unsigned>(s); }

    explicit TreeFilterProxy(QObject* parent = nullptr);

    void setSourceModel(QAbstractItemModel* model) override;
    CompareTreeModel* treeModel() const { return m_model; }

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
    QString nameFilterError() const { return m_name.error(); }
    void clearFilters();
    bool isFiltering() const;

    /// Whether a node passes the filters by itself (ancestors of accepted nodes are shown too).
    bool acceptsNode(tree::NodeId node) const;
    QModelIndex mapFromNode(tree::NodeId node, int column = 0) const;

protected:
    bool filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const override;

private:
    void refilter();
    bool shown(std::uint32_t node) const { return m_self[node] || m_shownChildren[node]; }
    void ensureState() const;
    void onOwnStatusesChanged(const std::vector<std::uint32_t>& nodes);
    void onStatusesChanged();

    CompareTreeModel* m_model = nullptr;
    std::uint32_t m_statusMask = kAllStatuses;
    DirectionFilter m_direction = DirectionFilter::All;
    KindFilter m_kind = KindFilter::All;
    QString m_nameText;
    bool m_nameRegex = false;
    Qt::CaseSensitivity m_nameCase = Qt::CaseInsensitive;
    NameMatcher m_name;

    // Which nodes are shown, valid while m_stateValid (filters and statuses unchanged since).
    mutable bool m_stateValid = false;
    mutable std::vector<std::uint8_t> m_self;            ///< the node passes the filters itself
    mutable std::vector<std::uint32_t> m_shownChildren;  ///< children that are shown
    bool m_refilterRows = false; ///< a node's visibility changed outside the rows the model signalled
    bool m_relayout = false;     ///< a bulk status change: re-filter everything
};

} // namespace probescope::ui
