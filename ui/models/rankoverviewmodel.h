// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/session/session.h"

#include <QAbstractTableModel>
#include <QString>

#include <optional>
#include <vector>

namespace probescope::ui {

/**
 * @brief One row per step/rank pair of a session: where each pair first fails and how many nodes
 * are in each state, filled in as the background analyses report.
 *
 * The pair that diverges first is marked in text ("first to diverge") and in bold, so the cue
 * survives without colour: the earliest step with a failure, and within it the rank whose culprit
 * ran earliest (session::firstDivergingRank), over the pairs done so far.
 */
class RankOverviewModel : public QAbstractTableModel
{
    Q_OBJECT

public:
    enum Column : int {
        StepColumn,
        RanksColumn,
        FirstFailureColumn,
        ExecutionIndexColumn,
        ErrorsColumn,
        WarningsColumn,
        UnmatchedColumn,
        PassColumn,
        StateColumn,
        ColumnCount
    };
    enum Role : int {
        PairIndexRole = Qt::UserRole + 1, ///< qulonglong, index into SessionPlan::pairs
        StateRole,                        ///< int (State)
        FirstDivergingRole,               ///< bool
        FirstFailureKeyRole,              ///< QString, empty when the pair has no failure (or is not done)
        SortRole,
    };
    enum class State : int { Pending, Running, Done, Failed };

    explicit RankOverviewModel(QObject* parent = nullptr);

    /// New session: every pair Pending (model reset).
    void setPlan(const session::SessionPlan& plan);
    void setRunning(std::size_t pairIndex);
    void setSummary(const session::PairSummary& summary);
    void setFailed(std::size_t pairIndex, const QString& message);

    State state(std::size_t pairIndex) const;
    const session::PairSummary* summary(std::size_t pairIndex) const;
    /// Row of the pair that diverges first, -1 while none fails.
    int firstDivergingRow() const { return m_firstDiverging; }

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    struct Row
    {
        session::RankPair pair;
        State state = State::Pending;
        std::optional<session::PairSummary> summary;
        QString error;
    };

    void updateFirstDiverging();
    void emitRowChanged(int row);
    QString firstFailureText(const Row& row, bool diverging) const;

    std::vector<Row> m_rows;
    int m_firstDiverging = -1;
};

} // namespace probescope::ui
