// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/freebench/freebenchcsv.h"
#include "core/tree/constructtree.h"

#include <QColor>
#include <QHash>
#include "ui/models/treebranchdelegate.h"

#include <array>

namespace probescope::ui {

/// A small labelled pill on a tree node: what another tool said about that API.
struct NodeBadge
{
    QString text; ///< short, never colour alone: "FB", "UT✓", "UT×"
    QColor color;
    QString toolTip;
};

/**
 * @brief Paints badges at the right of the name cell of tree nodes — free benchmark's flagged APIs and
 * run_ut's verdicts — and adds their explanations to the cell's tooltip.
 *
 * A delegate rather than roles of CompareTreeModel: the tree model stays about the compare, and badges follow
 * whatever results are loaded. Nodes are found by CompareTreeModel::NodeIdRole (through any proxy); badges
 * are node ids of one tree, so they must be replaced or cleared whenever the tree behind the view changes.
 */
class NodeBadgeDelegate : public TreeBranchDelegate
{
    Q_OBJECT
public:
    enum Source : int { FreeBenchmark, RunUt, NanInf, SourceCount }; ///< also the left-to-right order

    explicit NodeBadgeDelegate(QObject* parent = nullptr);

    void setBadges(Source source, QHash<quint32, NodeBadge> badges);
    void clear(Source source) { setBadges(source, {}); }
    void clearAll();
    const QHash<quint32, NodeBadge>& badges(Source source) const { return m_badges[source]; }
    const NodeBadge* badgeFor(const QModelIndex& index, Source source) const;
    /// Where `source`'s badge of `index` is painted in a cell at `cellRect` (empty when it has none).
    QRect badgeRect(const QRect& cellRect, const QModelIndex& index, const QFont& font, Source source) const;

    void paint(QPainter* painter, const QStyleOptionViewItem& option, const QModelIndex& index) const override;
    QSize sizeHint(const QStyleOptionViewItem& option, const QModelIndex& index) const override;
    bool helpEvent(QHelpEvent* event, QAbstractItemView* view, const QStyleOptionViewItem& option,
                   const QModelIndex& index) override;

signals:
    void badgesChanged();

private:
    quint32 nodeOf(const QModelIndex& index, bool* ok) const;
    std::array<QHash<quint32, NodeBadge>, SourceCount> m_badges;
};

/// The free benchmark badge colour (not one of the status fills, so it never reads as a compare verdict).
QColor freeBenchBadgeColor();

/// Badges for the nodes of `tree` whose key is an api_name of `table` in `step` and `rank` (< 0: any).
QHash<quint32, NodeBadge> freeBenchBadges(const tree::ConstructTree& tree,
                                          const probescope::freebench::FreeBenchTable& table, std::int64_t step,
                                          std::int64_t rank);

/// One API's run_ut verdict as msprobe writes it (pass, warning, error, SKIP; backward "" when none).
struct RunUtVerdict
{
    QString fullName; ///< "Functional.gelu.0"
    QString forward;
    QString backward;
    QString message;
    QString dumpedForward;  ///< the dumped outputs judged against the bench (tensor dumps), "" when not judged
    QString dumpedBackward;
};

/// The worse of two run_ut statuses (error > warning > pass > SKIP > "").
QString worseRunUtStatus(const QString& a, const QString& b);

/// The colour of a run_ut status (pass, warning, error, SKIP).
QColor runUtStatusColor(const QString& status);

/// run_ut names an API call without its direction ("Functional.gelu.0"); its forward verdict goes on the
/// tree node "….forward" and its backward verdict on "….backward". A badge shows the worse of the replay's
/// and the dumped outputs' verdicts; its tooltip gives both.
QHash<quint32, NodeBadge> runUtBadges(const tree::ConstructTree& tree, const QList<RunUtVerdict>& verdicts);

} // namespace probescope::ui
