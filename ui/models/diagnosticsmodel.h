// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/util/diagnostic.h"

#include <QAbstractTableModel>

namespace probescope::ui {

/**
 * @brief The load problems of the shown pair as a table: severity, file:line:col, stable id, message.
 *
 * Fed whole (setDiagnostics) when a pair's skeleton arrives; duplicates (the same finding reported by the
 * rank dump and again by the pair) are shown once.
 */
class DiagnosticsModel : public QAbstractTableModel
{
    Q_OBJECT
public:
    enum Column { SeverityColumn, LocationColumn, IdColumn, MessageColumn, ColumnCount };

    using QAbstractTableModel::QAbstractTableModel;

    void setDiagnostics(const Diagnostics& diagnostics);
    void clear();
    const Diagnostics& diagnostics() const { return m_rows; }
    /// Warnings and errors (infos are listed but do not raise the banner).
    int problemCount() const;

    /// "file:line:col" (line and column left out when unknown, as compilers do).
    static QString location(const Diagnostic& diagnostic);

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    Diagnostics m_rows;
};

} // namespace probescope::ui
