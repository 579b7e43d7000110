// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/job/origin.h"
#include "core/session/session.h"

#include <QAbstractTableModel>
#include <QString>
#include <QStringList>

#include <cstdint>
#include <optional>
#include <vector>

namespace probescope::ui {

/**
 * @brief One row per step/rank pair of a session: where each pair first fails and how many nodes
 * are in each state, filled in as the background analyses report; and the same pairs laid out as a
 * rank × step grid for the map (RankMapView).
 *
 * The job's origin is core's (job::findJobOrigin over the pairs done so far, each pair's
 * session::PairSummary::failure), the same the CLI's whole-job compare prints. Its pair is marked in
 * text ("job origin") and in bold, so the cue survives without colour.
 *
 * Summaries arrive in batches (setSummaries): one origin update and one dataChanged per batch, never
 * a reset, so a 1,024-rank job does not repaint its views per pair.
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
        OriginRole,                       ///< bool: the job's origin pair
        FirstFailureKeyRole,              ///< QString, empty when the pair has no failure (or is not done)
        SortRole,
        SalvagedRole,                     ///< QString: what a cut or damaged dump lost, empty when clean
        WorstStatusRole,                  ///< int (session::Status): worst own status of any node, NoData until done
    };
    enum class State : int { Pending, Running, Done, Failed };

    /// One rank of one run on its own (issue 34), as the NaN/Inf search (core/overflow) leaves it.
    enum class RunRankState : int {
        NotSearched, ///< a step after the first NaN/Inf's (the search stops there), or a run it refused
        Clean,       ///< no NaN/Inf origin here (before the first NaN/Inf's step, or a rank it never reached)
        Reached,     ///< the first NaN/Inf reached this rank (its chain)
        Origin,      ///< the run's first NaN/Inf
    };
    struct RunRank
    {
        RunRankState state = RunRankState::NotSearched;
        QString node; ///< the chain's node on this rank (Reached, Origin)
    };

    explicit RankOverviewModel(QObject* parent = nullptr);
    /// One run on its own: every pair's state in the run (one per pair of the plan), instead of the compare's
    /// summaries (the run against itself passes everywhere). The Origin's pair is the origin row; the map colours a
    /// NaN/Inf rank as an error, the others neutral. setPlan() ends it.
    void setRunRanks(std::vector<RunRank> ranks);
    bool isRunMode() const { return m_runMode; }
    /// The pair's state in the run; nullopt outside run mode.
    std::optional<RunRankState> runRankState(std::size_t pairIndex) const;
    /// The map's cell text of a pair in run mode ("▶ NaN", "NaN", "–", "·").
    QString runCellText(std::size_t pairIndex) const;
    /// The state's name in the language in force.
    static QString runRankLabel(RunRankState state);

    /// New session: every pair Pending (model reset).
    void setPlan(const session::SessionPlan& plan);
    void setRunning(std::size_t pairIndex);
    void setSummary(const session::PairSummary& summary);
    /// Several pairs done at once: one origin update and one dataChanged over the rows touched.
    void setSummaries(const std::vector<session::PairSummary>& summaries);
    void setFailed(std::size_t pairIndex, const QString& message);

    State state(std::size_t pairIndex) const;
    const session::PairSummary* summary(std::size_t pairIndex) const;
    QString error(std::size_t pairIndex) const;
    session::Status worstStatus(std::size_t pairIndex) const;
    /// The job's origin over the pairs done so far (`fails` false while none fails).
    const job::JobOrigin& origin() const { return m_origin; }
    /// Row (= pair index) of the origin, -1 while none fails.
    int originRow() const { return m_originRow; }
    /// "Origin: step S rank R, node K (#idx) — reason", or what the overview is still waiting for.
    QString originText() const;
    /// Why the origin is that rank (core's rule), in the language in force; "" while none fails.
    QString originReason() const;

    // The grid of the map: one row per NPU rank (by rank number, then folder name), one column per step.
    int gridRows() const { return static_cast<int>(m_rankNames.size()); }
    int gridColumns() const { return static_cast<int>(m_steps.size()); }
    const QStringList& rankNames() const { return m_rankNames; }
    const std::vector<std::int64_t>& steps() const { return m_steps; }
    /// Pair index at a grid cell, -1 where the plan has no such pair.
    int pairAt(int gridRow, int gridColumn) const;
    int gridRowOf(std::size_t pairIndex) const;
    int gridColumnOf(std::size_t pairIndex) const;

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
        int gridRow = -1;
        int gridColumn = -1;
    };

    void updateOrigin();
    void emitRowChanged(int row);
    QString firstFailureText(const Row& row, bool origin) const;
    QString toolTip(const Row& row, bool origin) const;

    std::vector<Row> m_rows;
    QStringList m_rankNames;
    std::vector<std::int64_t> m_steps;
    std::vector<int> m_grid; ///< gridRows() × gridColumns() pair indexes, row-major
    job::JobOrigin m_origin;
    int m_originRow = -1;
    bool m_runMode = false;
    std::vector<RunRank> m_runRanks;
};

/// Rich text that a tooltip wraps (about 80 characters wide): each line escaped, with break opportunities
/// after the dots and slashes of node keys and paths, which have no spaces to wrap at.
QString wrappingToolTip(const QStringList& lines);

} // namespace probescope::ui
