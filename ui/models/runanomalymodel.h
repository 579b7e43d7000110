// SPDX-License-Identifier: Apache-2.0
#pragma once
// One run on its own (issue 34): where it first went wrong, as core/overflow finds it, for the window's tree badges
// and the chain list (docs/gui.md, "One run").

#include "core/overflow/overflowcheck.h"
#include "core/session/nodestatus.h"
#include "core/session/session.h"
#include "core/tree/constructtree.h"
#include "ui/models/nodebadges.h"

#include <QAbstractTableModel>
#include <QHash>

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

namespace probescope::ui {

/**
 * @brief The first NaN/Inf of a run and its chain across ranks (overflow::FirstAnomaly), one row per rank: the rank,
 * the node, and whether it is the origin or where the NaN/Inf reached that rank. Row 0 is the origin.
 */
class AnomalyChainModel : public QAbstractTableModel
{
    Q_OBJECT
public:
    enum Column { RankColumn, NodeColumn, RoleColumn, ColumnCount };

    explicit AnomalyChainModel(QObject* parent = nullptr);

    /// nullptr: the run has no anomaly (or none is known yet).
    void setAnomaly(std::shared_ptr<const overflow::FirstAnomaly> anomaly);
    const overflow::FirstAnomaly* anomaly() const { return m_anomaly.get(); }
    const overflow::AnomalyNode* nodeAt(int row) const;
    /// The row of `rank`'s node, or -1.
    int rowOfRank(int rank) const;
    /// Headers and the role texts in the language in force.
    void retranslate();

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    std::shared_ptr<const overflow::FirstAnomaly> m_anomaly;
};

/// A path the window opens as one run when it comes alone: a folder, or a dump file (dump.json, debug.json, a .pkl).
/// msprobe's compare.json alone stays a pair (it names both sides).
bool isRunInput(const QString& path);

/// A pair of one run named by its one side, "step0 · rank1" (RankPair::label() says "step0 · rank1 ↔ rank1").
QString runPairLabel(const session::RankPair& pair);

/// The badge colour of a NaN/Inf (msprobe's error red, as the trend view shades a non-finite value).
QColor nanInfBadgeColor();

/// A node's state in one run on its own (no bench, so no verdict): what its dumped statistics say, the same cases
/// as its NaN/Inf badge (nanInfBadges). Ordered from harmless to the origin.
enum class RunNodeState : std::uint8_t {
    NoData,        ///< no entry in the dump (a module the tree inferred)
    Finite,        ///< inputs and outputs finite (Max/Min)
    NanInfInput,   ///< an input holds NaN/Inf, the outputs are finite ("in NaN/Inf")
    NanInfOutput,  ///< an output holds NaN/Inf ("NaN/Inf")
    NanInfReached, ///< where the run's first NaN/Inf reached this rank ("NaN here")
    NanInfOrigin,  ///< the run's first NaN/Inf: inputs finite, output not ("1st NaN")
};

/// The states of every node of `tree` (one rank's), as nanInfBadges marks them; `anomaly` as there.
std::vector<RunNodeState> runNodeStates(const tree::ConstructTree& tree, const dump::RankDump& dump,
                                        const overflow::FirstAnomaly* anomaly, std::optional<std::int64_t> step,
                                        int rank);
/// The class a state is filtered, counted and coloured by in the one-run tree: a NaN/Inf output (origin and reached
/// too) Error, an input-only NaN/Inf Warning, finite Pass (shown as "Finite", never with a pass mark), else NoData.
session::Status runStateClass(RunNodeState state);
/// The state's name in the language in force ("First NaN/Inf", "NaN/Inf output", "Finite", ...).
QString runStateLabel(RunNodeState state);
/// What the state means, one sentence in the language in force (the tree's tooltip, Details).
QString runStateExplanation(RunNodeState state);

/**
 * @brief Badges for the nodes of `tree` (one rank's) whose dumped outputs hold a NaN/Inf ("NaN/Inf"; an input-only
 * NaN/Inf is "in NaN/Inf", for a node that only received it), and "1st NaN" on the chain's node of `rank` in `step`
 * when `anomaly` is of that step. The tooltip names the leaves (Max/Min) that hold them.
 */
QHash<quint32, NodeBadge> nanInfBadges(const tree::ConstructTree& tree, const dump::RankDump& dump,
                                       const overflow::FirstAnomaly* anomaly, std::optional<std::int64_t> step,
                                       int rank);

} // namespace probescope::ui
