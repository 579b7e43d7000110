// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <QStyledItemDelegate>

namespace probescope::ui {

/**
 * @brief Paints a flat row of a tree (TreeRowsModel) as a tree view would: indented by its depth, with
 * the style's branch arrow when it has children, and the item in the rest of the cell.
 *
 * The indentation takes the row's background (its verdict band, or the selection) so the colour runs
 * across the whole row. For a model without TreeRowsModel::DepthRole nothing is indented, so a delegate
 * built on this one also works in a plain tree or table view.
 */
class TreeBranchDelegate : public QStyledItemDelegate
{
    Q_OBJECT
public:
    using QStyledItemDelegate::QStyledItemDelegate;

    /// Width of one level of indentation (the style's tree indentation).
    static int indentation(const QStyleOptionViewItem& option);
    /// Where the branch arrow of `index` is drawn in a cell at `option.rect` (empty without depth).
    static QRect arrowRect(const QStyleOptionViewItem& option, const QModelIndex& index);

    void paint(QPainter* painter, const QStyleOptionViewItem& option, const QModelIndex& index) const override;
    QSize sizeHint(const QStyleOptionViewItem& option, const QModelIndex& index) const override;
    bool helpEvent(QHelpEvent* event, QAbstractItemView* view, const QStyleOptionViewItem& option,
                   const QModelIndex& index) override;

protected:
    /// Paints the indentation and the arrow; returns the option for the item, in the rest of the cell.
    QStyleOptionViewItem paintBranches(QPainter* painter, const QStyleOptionViewItem& option,
                                       const QModelIndex& index) const;
    /// `option` with its rect narrowed to the item's part of the cell.
    static QStyleOptionViewItem itemOption(const QStyleOptionViewItem& option, const QModelIndex& index);
};

} // namespace probescope::ui
