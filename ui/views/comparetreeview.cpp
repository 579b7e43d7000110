// SPDX-License-Identifier: Apache-2.0
#include "ui/views/comparetreeview.h"

#include "ui/models/comparetreemodel.h"
#include "ui/models/treebranchdelegate.h"
#include "ui/models/treerowsmodel.h"

#include <QHeaderView>
#include <QKeyEvent>
#include <QMouseEvent>
#include <QScrollBar>

namespace probescope::ui {

using tree::NodeId;

CompareTreeView::CompareTreeView(QWidget* parent)
    : QTableView(parent)
    , m_branches(new TreeBranchDelegate(this))
{
    setSelectionBehavior(SelectRows);
    setSelectionMode(SingleSelection);
    setEditTriggers(NoEditTriggers);
    setShowGrid(false);
    setWordWrap(false);
    setTabKeyNavigation(false);
    setCornerButtonEnabled(false);
    setVerticalScrollMode(ScrollPerItem);
    setHorizontalScrollMode(ScrollPerPixel);
    setItemDelegateForColumn(CompareTreeModel::NameColumn, m_branches);
    // Every row one height, never measured: the layout of a million rows stays constant time.
    verticalHeader()->hide();
    verticalHeader()->setSectionResizeMode(QHeaderView::Fixed);
    verticalHeader()->setMinimumSectionSize(1);
    const int icon = iconSize().height() > 0 ? iconSize().height() : 16;
    verticalHeader()->setDefaultSectionSize(std::max(fontMetrics().height(), icon) + 4);
    horizontalHeader()->setHighlightSections(false);
    horizontalHeader()->setDefaultAlignment(Qt::AlignLeft | Qt::AlignVCenter);
}

void CompareTreeView::setModel(QAbstractItemModel* model)
{
    if (m_rows)
        disconnect(m_rows, nullptr, this, nullptr);
    m_rows = qobject_cast<TreeRowsModel*>(model);
    Q_ASSERT(!model || m_rows);
    m_current = {};
    QTableView::setModel(m_rows);
    if (!m_rows)
        return;
    connect(m_rows, &QAbstractItemModel::layoutAboutToBeChanged, this, &CompareTreeView::saveAnchor);
    connect(m_rows, &QAbstractItemModel::layoutChanged, this, &CompareTreeView::restoreAnchor);
    // Expanding or collapsing one node inserts or removes rows, which may hide the top row too.
    connect(m_rows, &QAbstractItemModel::rowsAboutToBeInserted, this, &CompareTreeView::saveAnchor);
    connect(m_rows, &QAbstractItemModel::rowsInserted, this, &CompareTreeView::restoreAnchor);
    connect(m_rows, &QAbstractItemModel::rowsAboutToBeRemoved, this, &CompareTreeView::saveAnchor);
    connect(m_rows, &QAbstractItemModel::rowsRemoved, this, &CompareTreeView::restoreAnchor);
    connect(m_rows, &QAbstractItemModel::modelReset, this, [this] { m_current = {}; });
    connect(selectionModel(), &QItemSelectionModel::currentChanged, this, [this](const QModelIndex& current) {
        if (current.isValid())
            m_current = m_rows->nodeAt(current);
        else if (!m_rowsChanging)
            m_current = {}; // cleared on purpose, not lost to a filter
    });
}

NodeId CompareTreeView::currentNode() const
{
    return m_rows ? m_rows->nodeAt(currentIndex()) : NodeId {};
}

bool CompareTreeView::showNode(NodeId node, ScrollHint hint)
{
    if (!m_rows)
        return false;
    const QModelIndex index = m_rows->reveal(node);
    if (!index.isValid())
        return false;
    setCurrentIndex(index);
    scrollTo(index, hint);
    // Up and down only: a narrow pane scrolled sideways to the name column's end and cut every name's start.
    horizontalScrollBar()->setValue(0);
    return true;
}

bool CompareTreeView::isExpanded(const QModelIndex& index) const
{
    return m_rows && m_rows->isExpanded(m_rows->nodeAt(index));
}

void CompareTreeView::setExpanded(const QModelIndex& index, bool expanded)
{
    if (!m_rows)
        return;
    const NodeId node = m_rows->nodeAt(index);
    // As QTreeView: collapsing the current node's ancestor makes that ancestor current.
    bool currentInside = false;
    if (const tree::ConstructTree* tree = m_rows->treeModel()->tree(); tree && !expanded) {
        for (NodeId p = currentNode(); p.valid() && !currentInside; p = tree->node(p).parent)
            currentInside = tree->node(p).parent == node;
    }
    m_rows->setExpanded(node, expanded);
    if (currentInside)
        selectionModel()->setCurrentIndex(m_rows->mapFromNode(node),
                                          QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
}

void CompareTreeView::expandAll()
{
    if (m_rows)
        m_rows->expandAll();
}

void CompareTreeView::collapseAll()
{
    if (m_rows)
        m_rows->collapseAll();
}

void CompareTreeView::saveAnchor()
{
    m_rowsChanging = true;
    // The current row stays where it is on screen if it is on screen; otherwise the top row stays on top.
    const int top = rowAt(0);
    const QModelIndex current = currentIndex();
    const int height = viewport()->height();
    if (current.isValid() && rowViewportPosition(current.row()) >= 0 && rowViewportPosition(current.row()) < height) {
        m_anchor = m_rows->nodeAt(current);
        m_anchorOffset = current.row() - std::max(top, 0);
    } else {
        m_anchor = m_rows->nodeAtRow(top);
        m_anchorOffset = 0;
    }
}

void CompareTreeView::restoreAnchor()
{
    updateGeometries(); // the scroll bar's range for the new row count
    if (!currentIndex().isValid() && m_current.valid()) {
        // The current node is back (a filter that hid it was cleared).
        const QModelIndex index = m_rows->mapFromNode(m_current);
        if (index.isValid())
            selectionModel()->setCurrentIndex(index, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
    }
    // A hidden anchor: its closest shown ancestor.
    const tree::ConstructTree* tree = m_rows->treeModel() ? m_rows->treeModel()->tree() : nullptr;
    for (NodeId node = m_anchor; tree && node.valid(); node = tree->node(node).parent) {
        const QModelIndex index = m_rows->mapFromNode(node);
        if (index.isValid()) {
            verticalScrollBar()->setValue(std::max(0, index.row() - (node == m_anchor ? m_anchorOffset : 0)));
            break;
        }
    }
    m_anchor = {};
    m_rowsChanging = false;
}

bool CompareTreeView::onArrow(const QModelIndex& index, const QPoint& pos) const
{
    if (!index.isValid() || index.column() != CompareTreeModel::NameColumn
        || !index.data(TreeRowsModel::HasChildrenRole).toBool())
        return false;
    QStyleOptionViewItem option;
    initViewItemOption(&option);
    option.rect = visualRect(index);
    return TreeBranchDelegate::arrowRect(option, index).contains(pos);
}

void CompareTreeView::mousePressEvent(QMouseEvent* event)
{
    const QModelIndex index = indexAt(event->position().toPoint());
    if (event->button() == Qt::LeftButton && onArrow(index, event->position().toPoint())) {
        setExpanded(index, !isExpanded(index));
        event->accept();
        return;
    }
    QTableView::mousePressEvent(event);
}

void CompareTreeView::mouseDoubleClickEvent(QMouseEvent* event)
{
    const QModelIndex index = indexAt(event->position().toPoint());
    if (onArrow(index, event->position().toPoint())) {
        event->accept(); // the press already toggled it
        return;
    }
    QTableView::mouseDoubleClickEvent(event);
    // As QTreeView's expandsOnDoubleClick.
    if (event->button() == Qt::LeftButton && index.isValid() && index.data(TreeRowsModel::HasChildrenRole).toBool())
        setExpanded(index, !isExpanded(index));
}

void CompareTreeView::keyPressEvent(QKeyEvent* event)
{
    const QModelIndex current = currentIndex();
    const Qt::KeyboardModifiers mods = event->modifiers() & ~Qt::KeypadModifier;
    if (!m_rows || !current.isValid() || (mods != Qt::NoModifier && mods != Qt::ShiftModifier)) {
        QTableView::keyPressEvent(event);
        return;
    }
    const bool children = current.data(TreeRowsModel::HasChildrenRole).toBool();
    const bool expanded = isExpanded(current);
    auto moveTo = [this, &current](int row) {
        if (row < 0 || row >= m_rows->rowCount())
            return;
        const QModelIndex to = m_rows->index(row, current.column());
        selectionModel()->setCurrentIndex(to, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
        scrollTo(to);
    };
    switch (event->key()) {
    case Qt::Key_Right:
        // As in QTreeView: open a closed node, or step to the first child of an open one.
        if (children && !expanded)
            expand(current);
        else if (children)
            moveTo(current.row() + 1);
        break;
    case Qt::Key_Left:
        if (children && expanded)
            collapse(current);
        else
            moveTo(m_rows->parentRow(current.row()));
        break;
    case Qt::Key_Plus: expand(current); break;
    case Qt::Key_Minus: collapse(current); break;
    case Qt::Key_Asterisk: m_rows->expandSubtree(m_rows->nodeAt(current)); break;
    default: QTableView::keyPressEvent(event); return;
    }
    event->accept();
}

} // namespace probescope::ui
