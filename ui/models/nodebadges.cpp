// SPDX-License-Identifier: Apache-2.0
#include "ui/models/nodebadges.h"

#include "ui/models/comparetreemodel.h"
#include "ui/models/freebenchmodel.h"
#include "ui/models/runutresultmodel.h"

#include <QAbstractItemView>
#include <QHelpEvent>
#include <QPainter>
#include <QToolTip>

#include <cmath>

namespace probescope::ui {

namespace {

constexpr int kGap = 3;

int badgeWidth(const QString& text, const QFont& font)
{
    QFont bold = font;
    bold.setBold(true);
    return QFontMetrics(bold).horizontalAdvance(text) + 10;
}

} // namespace

NodeBadgeDelegate::NodeBadgeDelegate(QObject* parent)
    : TreeBranchDelegate(parent)
{
}

void NodeBadgeDelegate::setBadges(Source source, QHash<quint32, NodeBadge> badges)
{
    m_badges[source] = std::move(badges);
    emit badgesChanged();
}

void NodeBadgeDelegate::clearAll()
{
    for (auto& b : m_badges)
        b.clear();
    emit badgesChanged();
}

quint32 NodeBadgeDelegate::nodeOf(const QModelIndex& index, bool* ok) const
{
    *ok = false;
    if (!index.isValid() || index.column() != 0)
        return 0;
    const QVariant id = index.data(CompareTreeModel::NodeIdRole);
    *ok = id.isValid();
    return id.toUInt();
}

const NodeBadge* NodeBadgeDelegate::badgeFor(const QModelIndex& index, Source source) const
{
    if (m_badges[source].isEmpty())
        return nullptr;
    bool ok = false;
    const quint32 node = nodeOf(index, &ok);
    if (!ok)
        return nullptr;
    const auto it = m_badges[source].constFind(node);
    return it == m_badges[source].constEnd() ? nullptr : &*it;
}

QRect NodeBadgeDelegate::badgeRect(const QRect& cellRect, const QModelIndex& index, const QFont& font,
                                   Source source) const
{
    if (!badgeFor(index, source))
        return {};
    // Right-aligned, sources left to right: walk from the last source leftwards.
    const int h = std::min(cellRect.height() - 4, QFontMetrics(font).height() + 2);
    int right = cellRect.right() - 2;
    for (int s = SourceCount - 1; s >= 0; --s) {
        const NodeBadge* b = badgeFor(index, static_cast<Source>(s));
        if (!b)
            continue;
        const int w = badgeWidth(b->text, font);
        const QRect r(right - w + 1, cellRect.center().y() - h / 2, w, h);
        if (s == source)
            return r;
        right = r.left() - kGap;
    }
    return {};
}

void NodeBadgeDelegate::paint(QPainter* painter, const QStyleOptionViewItem& cell, const QModelIndex& index) const
{
    // A flat tree row is indented first; the name and the badges share the rest of the cell.
    const QStyleOptionViewItem option = paintBranches(painter, cell, index);
    int left = option.rect.right() + 1;
    for (int s = 0; s < SourceCount; ++s) {
        const QRect r = badgeRect(option.rect, index, option.font, static_cast<Source>(s));
        if (!r.isEmpty())
            left = std::min(left, r.left());
    }
    if (left > option.rect.right()) {
        QStyledItemDelegate::paint(painter, option, index);
        return;
    }
    // The name is painted in what is left of the cell, so a long name is elided instead of hidden.
    QStyleOptionViewItem shrunk = option;
    shrunk.rect.setRight(left - kGap);
    QStyledItemDelegate::paint(painter, shrunk, index);
    // The strip under the badges keeps the row's own fill so the verdict colour stays continuous.
    QRect strip = option.rect;
    strip.setLeft(shrunk.rect.right() + 1);
    const QVariant fill = index.data(Qt::BackgroundRole);
    if (option.state & QStyle::State_Selected)
        painter->fillRect(strip, option.palette.highlight());
    else if (fill.canConvert<QBrush>())
        painter->fillRect(strip, fill.value<QBrush>());

    painter->save();
    painter->setRenderHint(QPainter::Antialiasing);
    QFont bold = option.font;
    bold.setBold(true);
    painter->setFont(bold);
    for (int s = 0; s < SourceCount; ++s) {
        const auto source = static_cast<Source>(s);
        const NodeBadge* b = badgeFor(index, source);
        if (!b)
            continue;
        const QRect r = badgeRect(option.rect, index, option.font, source);
        painter->setPen(Qt::NoPen);
        painter->setBrush(b->color);
        painter->drawRoundedRect(r, r.height() / 2.0, r.height() / 2.0);
        painter->setPen(b->color.lightnessF() > 0.6 ? Qt::black : Qt::white);
        painter->drawText(r, Qt::AlignCenter, b->text);
    }
    painter->restore();
}

QSize NodeBadgeDelegate::sizeHint(const QStyleOptionViewItem& option, const QModelIndex& index) const
{
    QSize size = TreeBranchDelegate::sizeHint(option, index);
    for (int s = 0; s < SourceCount; ++s) {
        if (const NodeBadge* b = badgeFor(index, static_cast<Source>(s)))
            size.rwidth() += badgeWidth(b->text, option.font) + kGap;
    }
    return size;
}

bool NodeBadgeDelegate::helpEvent(QHelpEvent* event, QAbstractItemView* view, const QStyleOptionViewItem& option,
                                  const QModelIndex& index)
{
    QStringList tips;
    for (int s = 0; s < SourceCount; ++s) {
        if (const NodeBadge* b = badgeFor(index, static_cast<Source>(s)))
            tips << b->toolTip;
    }
    if (tips.isEmpty() || event->type() != QEvent::ToolTip)
        return TreeBranchDelegate::helpEvent(event, view, option, index);
    const QString own = index.data(Qt::ToolTipRole).toString();
    if (!own.isEmpty())
        tips.prepend(own);
    QToolTip::showText(event->globalPos(), tips.join(QStringLiteral("\n\n")), view);
    return true;
}

// ---- free benchmark -------------------------------------------------------------------------------

QColor freeBenchBadgeColor() { return QColor(0x6A3D9A); }

QHash<quint32, NodeBadge> freeBenchBadges(const tree::ConstructTree& tree,
                                          const probescope::freebench::FreeBenchTable& table, std::int64_t step,
                                          std::int64_t rank)
{
    QHash<quint32, NodeBadge> out;
    for (const probescope::freebench::FlaggedApi& api : probescope::freebench::flaggedApis(table, step, rank)) {
        const auto id = tree.find(api.apiName);
        if (!id)
            continue;
        const probescope::freebench::FreeBenchRow& row = table.rows[api.worstRow];
        NodeBadge badge;
        badge.text = NodeBadgeDelegate::tr("FB", "free benchmark badge on a tree node");
        badge.color = freeBenchBadgeColor();
        QString worst = FreeBenchmarkModel::maxRelText(row);
        if (worst.isEmpty())
            worst = NodeBadgeDelegate::tr("none");
        const QString excess = FreeBenchmarkModel::excessText(row);
        badge.toolTip = NodeBadgeDelegate::tr("Free benchmark flagged this API (%1, %2, step %3): max_rel %4, "
                                              "threshold %5 for %6")
                            .arg(QString::fromStdString(row.pertMode), QString::fromStdString(row.stage))
                            .arg(row.step)
                            .arg(worst)
                            .arg(probescope::freebench::freeBenchThreshold(row.dtype, row.pertMode))
                            .arg(QString::fromStdString(row.dtype));
        if (!excess.isEmpty())
            badge.toolTip += QStringLiteral(" (%1)").arg(excess);
        if (api.rowCount > 1)
            badge.toolTip += QLatin1Char('\n')
                + NodeBadgeDelegate::tr("%n flagged row(s) in this step", nullptr, static_cast<int>(api.rowCount));
        out.insert(id->value, std::move(badge));
    }
    return out;
}

// ---- run_ut ---------------------------------------------------------------------------------------

QColor runUtStatusColor(const QString& status)
{
    if (status == QLatin1String("pass"))
        return QColor(0x2E8B57);
    if (status == QLatin1String("warning"))
        return QColor(0xE69F00);
    if (status == QLatin1String("error"))
        return QColor(0xD7301F);
    return QColor(0x8C8C8C); // SKIP
}

QString worseRunUtStatus(const QString& a, const QString& b)
{
    auto rank = [](const QString& s) {
        return s == QLatin1String("error") ? 4 : s == QLatin1String("warning") ? 3 : s == QLatin1String("pass") ? 2
            : s.trimmed().isEmpty()       ? 0
                                          : 1;
    };
    return rank(b) > rank(a) ? b : a;
}

QHash<quint32, NodeBadge> runUtBadges(const tree::ConstructTree& tree, const QList<RunUtVerdict>& verdicts)
{
    QHash<quint32, NodeBadge> out;
    auto add = [&](const RunUtVerdict& v, const char* direction, const QString& replay, const QString& dumped) {
        const QString status = worseRunUtStatus(replay.trimmed(), dumped.trimmed());
        if (status.isEmpty())
            return;
        const QString key = v.fullName + QLatin1Char('.') + QLatin1String(direction);
        const auto id = tree.find(key.toStdString());
        if (!id)
            return;
        NodeBadge badge;
        const QString mark = status == QLatin1String("pass") ? QStringLiteral("✓")
            : status == QLatin1String("warning")             ? QStringLiteral("!")
            : status == QLatin1String("error")               ? QStringLiteral("×")
                                                             : QStringLiteral("–");
        badge.text = NodeBadgeDelegate::tr("UT", "run_ut badge on a tree node") + mark;
        badge.color = runUtStatusColor(status);
        // msprobe's verdict words in the language in force (the run_ut table says them so too).
        badge.toolTip = NodeBadgeDelegate::tr("run_ut %1: replay %2")
                            .arg(v.fullName, replay.trimmed().isEmpty() ? QStringLiteral("–")
                                                                        : RunUtResultModel::verdictWord(replay.trimmed()));
        if (!dumped.trimmed().isEmpty())
            badge.toolTip += QLatin1Char('\n') + NodeBadgeDelegate::tr("dumped outputs against the bench: %1").arg(RunUtResultModel::verdictWord(dumped.trimmed()));
        if (!v.message.trimmed().isEmpty())
            badge.toolTip += QLatin1Char('\n') + v.message.trimmed();
        out.insert(id->value, std::move(badge));
    };
    for (const RunUtVerdict& v : verdicts) {
        add(v, "forward", v.forward, v.dumpedForward);
        add(v, "backward", v.backward, v.dumpedBackward);
    }
    return out;
}

} // namespace probescope::ui
