// SPDX-License-Identifier: Apache-2.0
#include "ui/models/treebranchdelegate.h"

#include "ui/models/treerowsmodel.h"

#include <QApplication>
#include <QPainter>
#include <QStyle>

namespace probescope::ui {

namespace {

const QStyle* styleOf(const QStyleOptionViewItem& option)
{
    return option.widget ? option.widget->style() : QApplication::style();
}

/// Levels of indentation before the item: the depth plus the arrow's column; 0 without DepthRole.
int levels(const QModelIndex& index)
{
    const QVariant depth = index.data(TreeRowsModel::DepthRole);
    return depth.isValid() ? depth.toInt() + 1 : 0;
}

} // namespace

int TreeBranchDelegate::indentation(const QStyleOptionViewItem& option)
{
    return styleOf(option)->pixelMetric(QStyle::PM_TreeViewIndentation, nullptr, option.widget);
}

QRect TreeBranchDelegate::arrowRect(const QStyleOptionViewItem& option, const QModelIndex& index)
{
    const int n = levels(index);
    if (n == 0)
        return {};
    const int indent = indentation(option);
    return QRect(option.rect.left() + (n - 1) * indent, option.rect.top(), indent, option.rect.height())
        .intersected(option.rect);
}

QStyleOptionViewItem TreeBranchDelegate::itemOption(const QStyleOptionViewItem& option, const QModelIndex& index)
{
    QStyleOptionViewItem item = option;
    item.rect.setLeft(std::min(option.rect.left() + levels(index) * indentation(option), option.rect.right()));
    return item;
}

QStyleOptionViewItem TreeBranchDelegate::paintBranches(QPainter* painter, const QStyleOptionViewItem& option,
                                                       const QModelIndex& index) const
{
    QStyleOptionViewItem item = itemOption(option, index);
    if (item.rect.left() == option.rect.left())
        return item;
    QRect branches = option.rect;
    branches.setRight(item.rect.left() - 1);
    // As QTreeView does: the row's fill (or the selection) runs under the indentation.
    if (option.state & QStyle::State_Selected) {
        painter->fillRect(branches, option.palette.highlight());
    } else {
        const QVariant fill = index.data(Qt::BackgroundRole);
        if (fill.canConvert<QBrush>())
            painter->fillRect(branches, fill.value<QBrush>());
    }
    if (index.data(TreeRowsModel::HasChildrenRole).toBool()) {
        QStyleOption arrow;
        arrow.initFrom(option.widget ? option.widget : nullptr);
        arrow.rect = arrowRect(option, index);
        arrow.palette = option.palette;
        // The arrow in the row's text colour, so it reads on every band of both palettes.
        const QVariant text = index.data(Qt::ForegroundRole);
        if ((option.state & QStyle::State_Selected))
            arrow.palette.setColor(QPalette::WindowText, option.palette.color(QPalette::HighlightedText));
        else if (text.canConvert<QBrush>())
            arrow.palette.setColor(QPalette::WindowText, text.value<QBrush>().color());
        arrow.palette.setColor(QPalette::ButtonText, arrow.palette.color(QPalette::WindowText));
        arrow.palette.setColor(QPalette::Text, arrow.palette.color(QPalette::WindowText));
        arrow.state = QStyle::State_Item | QStyle::State_Children | (option.state & QStyle::State_Enabled);
        if (index.data(TreeRowsModel::ExpandedRole).toBool())
            arrow.state |= QStyle::State_Open;
        styleOf(option)->drawPrimitive(QStyle::PE_IndicatorBranch, &arrow, painter, option.widget);
    }
    return item;
}

void TreeBranchDelegate::paint(QPainter* painter, const QStyleOptionViewItem& option, const QModelIndex& index) const
{
    QStyledItemDelegate::paint(painter, paintBranches(painter, option, index), index);
}

QSize TreeBranchDelegate::sizeHint(const QStyleOptionViewItem& option, const QModelIndex& index) const
{
    QSize size = QStyledItemDelegate::sizeHint(option, index);
    size.rwidth() += levels(index) * indentation(option);
    return size;
}

bool TreeBranchDelegate::helpEvent(QHelpEvent* event, QAbstractItemView* view, const QStyleOptionViewItem& option,
                                   const QModelIndex& index)
{
    return QStyledItemDelegate::helpEvent(event, view, itemOption(option, index), index);
}

} // namespace probescope::ui
