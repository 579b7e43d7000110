// SPDX-License-Identifier: Apache-2.0
#include "ui/models/diagnosticsmodel.h"

#include <QApplication>
#include <QIcon>
#include <QStyle>

#include <set>
#include <string>

namespace probescope::ui {

void DiagnosticsModel::setDiagnostics(const Diagnostics& diagnostics)
{
    beginResetModel();
    m_rows.clear();
    std::set<std::string> seen;
    for (const Diagnostic& d : diagnostics) {
        if (seen.insert(d.format()).second)
            m_rows.push_back(d);
    }
    endResetModel();
}

void DiagnosticsModel::clear()
{
    if (m_rows.empty())
        return;
    beginResetModel();
    m_rows.clear();
    endResetModel();
}

int DiagnosticsModel::problemCount() const
{
    int n = 0;
    for (const Diagnostic& d : m_rows)
        n += d.severity == Severity::Info ? 0 : 1;
    return n;
}

QString DiagnosticsModel::location(const Diagnostic& diagnostic)
{
    QString text = QString::fromStdString(diagnostic.location.file);
    if (diagnostic.location.line > 0) {
        text += QStringLiteral(":%1").arg(diagnostic.location.line);
        if (diagnostic.location.column > 0)
            text += QStringLiteral(":%1").arg(diagnostic.location.column);
    }
    return text;
}

int DiagnosticsModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(m_rows.size());
}

int DiagnosticsModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant DiagnosticsModel::data(const QModelIndex& index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const Diagnostic& d = m_rows[static_cast<std::size_t>(index.row())];
    if (role == Qt::DisplayRole || role == Qt::ToolTipRole) {
        switch (index.column()) {
        case SeverityColumn:
            return d.severity == Severity::Error ? tr("error") : d.severity == Severity::Warning ? tr("warning") : tr("info");
        case LocationColumn:
            return location(d);
        case IdColumn:
            return QString::fromStdString(d.id);
        case MessageColumn:
            return QString::fromStdString(d.message);
        default:
            return {};
        }
    }
    if (role == Qt::DecorationRole && index.column() == SeverityColumn && qApp) {
        const QStyle::StandardPixmap icon = d.severity == Severity::Error ? QStyle::SP_MessageBoxCritical
            : d.severity == Severity::Warning                            ? QStyle::SP_MessageBoxWarning
                                                                         : QStyle::SP_MessageBoxInformation;
        return QApplication::style()->standardIcon(icon);
    }
    return {};
}

QVariant DiagnosticsModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, orientation, role);
    switch (section) {
    case SeverityColumn:
        return tr("Severity");
    case LocationColumn:
        return tr("Location");
    case IdColumn:
        return tr("Id");
    case MessageColumn:
        return tr("Message");
    default:
        return {};
    }
}

} // namespace probescope::ui
