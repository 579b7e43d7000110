// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/tree/constructtree.h"

#include <QTableView>

namespace probescope::ui {

class TreeBranchDelegate;
class TreeRowsModel;

/**
 * @brief The compare tree as a flat table of TreeRowsModel rows that looks and behaves like a tree
 * view: indentation and branch arrows (TreeBranchDelegate), expand and collapse by a click on the arrow,
 * a double click, Right/Left (or +/-), * for a whole subtree.
 *
 * A QTableView with uniform rows lays out any number of rows in constant time, where QTreeView walks
 * every expanded row after each expand, collapse or filter change (about 110 ms at 1M rows). Across
 * those changes the view keeps its current node (also through a filter that hid it for a while) and
 * the node at the top of the viewport, or the current one where it was on screen.
 */
class CompareTreeView : public QTableView
{
    Q_OBJECT

public:
    explicit CompareTreeView(QWidget* parent = nullptr);

    /// Must be a TreeRowsModel.
    void setModel(QAbstractItemModel* model) override;
    TreeRowsModel* rowsModel() const { return m_rows; }

    tree::NodeId currentNode() const;
    /// Makes `node` current, expanding its ancestors; false when a filter hides it.
    bool showNode(tree::NodeId node, ScrollHint hint = EnsureVisible);
    bool isExpanded(const QModelIndex& index) const;
    void setExpanded(const QModelIndex& index, bool expanded);
    void expand(const QModelIndex& index) { setExpanded(index, true); }
    void collapse(const QModelIndex& index) { setExpanded(index, false); }

public slots:
    void expandAll();
    void collapseAll();

protected:
    void keyPressEvent(QKeyEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void mouseDoubleClickEvent(QMouseEvent* event) override;

private:
    bool onArrow(const QModelIndex& index, const QPoint& pos) const;
    void saveAnchor();
    void restoreAnchor();

    TreeRowsModel* m_rows = nullptr;
    TreeBranchDelegate* m_branches = nullptr;
    tree::NodeId m_current; ///< kept while a filter hides the current row
    tree::NodeId m_anchor;  ///< the node kept in place across a layout change
    int m_anchorOffset = 0; ///< its row in the viewport
    bool m_rowsChanging = false; ///< between saveAnchor() and restoreAnchor()
};

} // namespace probescope::ui
