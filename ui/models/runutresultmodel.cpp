// SPDX-License-Identifier: Apache-2.0
#include "ui/models/runutresultmodel.h"

#include <QBrush>

namespace probescope::ui {

RunUtResultModel::RunUtResultModel(QObject* parent)
    : QAbstractTableModel(parent)
{
}

void RunUtResultModel::append(const QList<RunUtApiRow>& rows)
{
    if (rows.isEmpty())
        return;
    const int first = static_cast<int>(m_rows.size());
    beginInsertRows({}, first, first + static_cast<int>(rows.size()) - 1);
    m_rows.append(rows);
    endInsertRows();
}

void RunUtResultModel::clear()
{
    beginResetModel();
    m_rows.clear();
    endResetModel();
}

QList<RunUtVerdict> RunUtResultModel::verdicts() const
{
    QList<RunUtVerdict> out;
    out.reserve(m_rows.size());
    for (const RunUtApiRow& r : m_rows)
        out.append(RunUtVerdict { r.fullName, r.forward, r.backward, r.message, r.dumpedForward, r.dumpedBackward });
    return out;
}

int RunUtResultModel::severity(const QString& status)
{
    const QString s = status.trimmed();
    if (s == QLatin1String("error"))
        return 4;
    if (s == QLatin1String("warning"))
        return 3;
    if (s == QLatin1String("pass"))
        return 2;
    return s.isEmpty() ? 0 : 1;
}

QString RunUtResultModel::verdictOf(const RunUtApiRow& row)
{
    return worseRunUtStatus(row.overall.trimmed(), row.dumpedOverall.trimmed());
}

int RunUtResultModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(m_rows.size());
}

int RunUtResultModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant RunUtResultModel::data(const QModelIndex& index, int role) const
{
    if (!index.isValid() || index.row() >= m_rows.size() || index.column() >= ColumnCount)
        return {};
    const RunUtApiRow& r = m_rows[index.row()];
    const int c = index.column();
    auto display = [&]() -> QString {
        switch (c) {
        case IndexColumn: return QString::number(r.index);
        case ApiColumn: return r.fullName;
        case VerdictColumn: return verdictWord(verdictOf(r));
        case ForwardColumn: return verdictWord(r.forward);
        case BackwardColumn: return r.backward.trimmed().isEmpty() ? QStringLiteral("–") : verdictWord(r.backward);
        case DumpedColumn: return r.dumpedOverall.isEmpty() ? QStringLiteral("–") : verdictWord(r.dumpedOverall);
        case MessageColumn: return r.message.simplified();
        }
        return {};
    };
    switch (role) {
    case Qt::DisplayRole: return display();
    case Qt::ToolTipRole:
        if (c == MessageColumn)
            return r.message;
        if (c == VerdictColumn)
            return r.dumpedOverall.isEmpty() ? tr("The replay on the device against the CPU: %1").arg(verdictWord(r.overall))
                                             : tr("The worse of the replay on the device against the CPU (%1) and of the "
                                                  "dumped outputs against the CPU (%2)")
                                                   .arg(verdictWord(r.overall), verdictWord(r.dumpedOverall));
        return {};
    case SortRole:
        switch (c) {
        case IndexColumn: return r.index;
        case VerdictColumn: return severity(verdictOf(r));
        case ForwardColumn: return severity(r.forward);
        case BackwardColumn: return severity(r.backward);
        case DumpedColumn: return severity(r.dumpedOverall);
        default: return display();
        }
    case StatusRole: return verdictOf(r);
    case FullNameRole: return r.fullName;
    case Qt::BackgroundRole:
        if (c == VerdictColumn && !verdictOf(r).isEmpty()) {
            QColor fill = runUtStatusColor(verdictOf(r));
            fill.setAlpha(70); // a tint behind dark text, in both themes
            return QBrush(fill);
        }
        return {};
    case Qt::TextAlignmentRole:
        return QVariant::fromValue(c == IndexColumn ? Qt::AlignRight | Qt::AlignVCenter : Qt::AlignLeft | Qt::AlignVCenter);
    default: return {};
    }
}

QString RunUtResultModel::verdictWord(const QString& status)
{
    // msprobe's words (its CSV keeps them; StatusRole and the filter use them) shown in the language in force.
    if (status == QLatin1String("pass"))
        return tr("pass");
    if (status == QLatin1String("warning"))
        return tr("warning");
    if (status == QLatin1String("error"))
        return tr("error");
    if (status == QLatin1String("SKIP"))
        return tr("SKIP");
    return status;
}

QVariant RunUtResultModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    // The tooltip names msprobe's column of accuracy_checking_result.csv where the header translates it.
    if (orientation == Qt::Horizontal && role == Qt::ToolTipRole) {
        switch (section) {
        case ApiColumn: return tr("msprobe's column: %1").arg(QStringLiteral("API name"));
        case ForwardColumn: return tr("msprobe's column: %1").arg(QStringLiteral("Forward Test Success"));
        case BackwardColumn: return tr("msprobe's column: %1").arg(QStringLiteral("Backward Test Success"));
        default: return {};
        }
    }
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, orientation, role);
    switch (section) {
    case IndexColumn: return QStringLiteral("#");
    case ApiColumn: return tr("API name");
    case VerdictColumn: return tr("Verdict");
    case ForwardColumn: return tr("Forward Test Success");
    case BackwardColumn: return tr("Backward Test Success");
    case DumpedColumn: return tr("Dumped outputs vs CPU");
    case MessageColumn: return tr("Message");
    }
    return {};
}

RunUtStatusFilter::RunUtStatusFilter(QObject* parent)
    : QSortFilterProxyModel(parent)
    , m_accepted { QStringLiteral("pass"), QStringLiteral("warning"), QStringLiteral("error"), QStringLiteral("SKIP") }
{
    setSortRole(RunUtResultModel::SortRole);
}

void RunUtStatusFilter::setAcceptedStatuses(const QSet<QString>& statuses)
{
    m_accepted = statuses;
    invalidateFilter();
}

bool RunUtStatusFilter::filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const
{
    const QModelIndex i = sourceModel()->index(sourceRow, 0, sourceParent);
    return m_accepted.contains(i.data(RunUtResultModel::StatusRole).toString());
}

} // namespace probescope::ui
