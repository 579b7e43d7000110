// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "ui/models/nodebadges.h"
#include "ui/runutplugin/runutbackend.h"

#include <QAbstractTableModel>
#include <QSet>
#include <QSortFilterProxyModel>

namespace probescope::ui {

/**
 * @brief run_ut's judged APIs, one row each, appended live as the run goes.
 *
 * The Verdict column is the worse of run_ut's own result (forward/backward replay, msprobe's
 * accuracy_checking_result) and the verdict on the dumped outputs (tensor dumps), so filtering on "error"
 * also finds an API whose replay passes but whose recorded device output does not — the faulty kernel.
 */
class RunUtResultModel : public QAbstractTableModel
{
    Q_OBJECT
public:
    /// The dumped outputs' verdict sits beside the Verdict it can decide (an "error" beside a replay that passes
    /// forward and backward is explained there, not in a column cut off at the right).
    enum Column : int { IndexColumn, ApiColumn, VerdictColumn, DumpedColumn, ForwardColumn, BackwardColumn, MessageColumn, ColumnCount };
    enum Role : int {
        SortRole = Qt::UserRole + 1, ///< statuses by severity, the index as a number
        StatusRole,                  ///< QString: the Verdict column's status
        FullNameRole,                ///< QString: "Functional.gelu.0"
    };

    explicit RunUtResultModel(QObject* parent = nullptr);

    void append(const QList<RunUtApiRow>& rows);
    void clear();
    const QList<RunUtApiRow>& rows() const { return m_rows; }
    /// The rows as the tree's badges want them.
    QList<RunUtVerdict> verdicts() const;
    /// The worse of run_ut's overall and the dumped outputs' verdicts.
    static QString verdictOf(const RunUtApiRow& row);
    /// msprobe's verdict word ("pass", "warning", "error", "SKIP") as shown, in the language in force.
    static QString verdictWord(const QString& status);
    /// error 4, warning 3, pass 2, SKIP 1, none 0.
    static int severity(const QString& status);

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    QList<RunUtApiRow> m_rows;
};

/// Sorts by RunUtResultModel::SortRole and keeps the rows whose verdict is one of the accepted statuses.
class RunUtStatusFilter : public QSortFilterProxyModel
{
    Q_OBJECT
public:
    explicit RunUtStatusFilter(QObject* parent = nullptr);
    /// pass, warning, error, SKIP; all four by default.
    void setAcceptedStatuses(const QSet<QString>& statuses);
    QSet<QString> acceptedStatuses() const { return m_accepted; }

protected:
    bool filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const override;

private:
    QSet<QString> m_accepted;
};

} // namespace probescope::ui
