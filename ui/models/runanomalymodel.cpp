// SPDX-License-Identifier: Apache-2.0
#include "ui/models/runanomalymodel.h"

#include <QFileInfo>

namespace probescope::ui {

namespace {

QString toQ(std::string_view s)
{
    return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size()));
}

} // namespace

AnomalyChainModel::AnomalyChainModel(QObject* parent)
    : QAbstractTableModel(parent)
{
}

void AnomalyChainModel::setAnomaly(std::shared_ptr<const overflow::FirstAnomaly> anomaly)
{
    beginResetModel();
    m_anomaly = std::move(anomaly);
    endResetModel();
}

const overflow::AnomalyNode* AnomalyChainModel::nodeAt(int row) const
{
    if (!m_anomaly || row < 0 || static_cast<std::size_t>(row) >= m_anomaly->chain.size())
        return nullptr;
    return &m_anomaly->chain[static_cast<std::size_t>(row)];
}

int AnomalyChainModel::rowOfRank(int rank) const
{
    for (int r = 0; r < rowCount(); ++r) {
        if (nodeAt(r)->rank == rank)
            return r;
    }
    return -1;
}

void AnomalyChainModel::retranslate()
{
    emit headerDataChanged(Qt::Horizontal, 0, ColumnCount - 1);
    if (rowCount() > 0)
        emit dataChanged(index(0, 0), index(rowCount() - 1, ColumnCount - 1), { Qt::DisplayRole, Qt::ToolTipRole });
}

int AnomalyChainModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() || !m_anomaly ? 0 : static_cast<int>(m_anomaly->chain.size());
}

int AnomalyChainModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant AnomalyChainModel::data(const QModelIndex& index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const overflow::AnomalyNode* node = nodeAt(index.row());
    if (!node)
        return {};
    if (role == Qt::DisplayRole) {
        switch (index.column()) {
        case RankColumn: return node->rank;
        case NodeColumn: return toQ(node->op);
        case RoleColumn: return node->origin ? tr("origin: inputs finite, output NaN/Inf") : tr("first NaN/Inf output on this rank");
        default: return {};
        }
    }
    if (role == Qt::ToolTipRole && index.column() == NodeColumn)
        return tr("Double-click (or O / P) to show %1 in rank %2's tree").arg(toQ(node->op)).arg(node->rank);
    if (role == Qt::ForegroundRole && node->origin && index.column() == NodeColumn)
        return nanInfBadgeColor();
    return {};
}

QVariant AnomalyChainModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, orientation, role);
    switch (section) {
    case RankColumn: return tr("Rank");
    case NodeColumn: return tr("Node");
    case RoleColumn: return tr("In the chain");
    default: return {};
    }
}

bool isRunInput(const QString& path)
{
    const QFileInfo info(path);
    if (info.isDir())
        return true;
    return info.isFile()
        && (info.fileName() == QLatin1String("dump.json") || info.fileName() == QLatin1String("debug.json")
            || info.suffix() == QLatin1String("pkl"));
}

QString runPairLabel(const session::RankPair& pair)
{
    const QString rank = QString::fromStdString(session::rankName(pair.npu));
    return pair.step >= 0 ? QStringLiteral("step%1 \u00b7 %2").arg(pair.step).arg(rank) : rank;
}

QColor nanInfBadgeColor()
{
    return QColor(0xD9, 0x36, 0x1E);
}

std::vector<RunNodeState> runNodeStates(const tree::ConstructTree& tree, const dump::RankDump& dump,
                                        const overflow::FirstAnomaly* anomaly, std::optional<std::int64_t> step,
                                        int rank)
{
    std::vector<RunNodeState> out(tree.size(), RunNodeState::NoData);
    if (!dump.dump)
        return out;
    std::string_view chainOp;
    if (anomaly && anomaly->step == step) {
        for (const overflow::AnomalyNode& n : anomaly->chain) {
            if (n.rank == rank)
                chainOp = n.op;
        }
    }
    const bool originRank = anomaly && !anomaly->chain.empty() && anomaly->origin().rank == rank;
    for (std::uint32_t i = 0; i < tree.size(); ++i) {
        const tree::TreeNode& node = tree.node(tree::NodeId { i });
        const dump::Entry* entry = dump.dump->find(node.key);
        if (!entry)
            continue;
        const overflow::NanInfFlags flags = overflow::nanInfOf(*entry);
        if (!chainOp.empty() && node.key == chainOp)
            out[i] = originRank ? RunNodeState::NanInfOrigin : RunNodeState::NanInfReached;
        else if (flags.output)
            out[i] = RunNodeState::NanInfOutput;
        else if (flags.input)
            out[i] = RunNodeState::NanInfInput;
        else
            out[i] = RunNodeState::Finite;
    }
    return out;
}

session::Status runStateClass(RunNodeState state)
{
    switch (state) {
    case RunNodeState::NoData: return session::Status::NoData;
    case RunNodeState::Finite: return session::Status::Pass;
    case RunNodeState::NanInfInput: return session::Status::Warning;
    case RunNodeState::NanInfOutput:
    case RunNodeState::NanInfReached:
    case RunNodeState::NanInfOrigin: return session::Status::Error;
    }
    return session::Status::NoData;
}

QString runStateLabel(RunNodeState state)
{
    switch (state) {
    case RunNodeState::NoData: return AnomalyChainModel::tr("No statistics");
    case RunNodeState::Finite: return AnomalyChainModel::tr("Finite");
    case RunNodeState::NanInfInput: return AnomalyChainModel::tr("NaN/Inf input");
    case RunNodeState::NanInfOutput: return AnomalyChainModel::tr("NaN/Inf output");
    case RunNodeState::NanInfReached: return AnomalyChainModel::tr("NaN/Inf reached here");
    case RunNodeState::NanInfOrigin: return AnomalyChainModel::tr("First NaN/Inf");
    }
    return {};
}

QString runStateExplanation(RunNodeState state)
{
    switch (state) {
    case RunNodeState::NoData: return AnomalyChainModel::tr("The dump has no statistics of its own for this node.");
    case RunNodeState::Finite: return AnomalyChainModel::tr("Its inputs and outputs are finite (Max/Min).");
    case RunNodeState::NanInfInput: return AnomalyChainModel::tr("An input holds NaN/Inf (Max/Min); the outputs are finite.");
    case RunNodeState::NanInfOutput: return AnomalyChainModel::tr("An output holds NaN/Inf (Max/Min).");
    case RunNodeState::NanInfReached:
        return AnomalyChainModel::tr("Where the run's first NaN/Inf reached this rank: the first output with a NaN/Inf here.");
    case RunNodeState::NanInfOrigin:
        return AnomalyChainModel::tr("The first NaN/Inf of the run (overflow_check): its inputs are finite, its output is not.");
    }
    return {};
}

QHash<quint32, NodeBadge> nanInfBadges(const tree::ConstructTree& tree, const dump::RankDump& dump,
                                       const overflow::FirstAnomaly* anomaly, std::optional<std::int64_t> step,
                                       int rank)
{
    // The badges say in a pill what the one-run tree's Status column says in words (runNodeStates).
    QHash<quint32, NodeBadge> out;
    const std::vector<RunNodeState> states = runNodeStates(tree, dump, anomaly, step, rank);
    for (std::uint32_t i = 0; i < states.size(); ++i) {
        const RunNodeState state = states[i];
        if (state == RunNodeState::NoData || state == RunNodeState::Finite)
            continue;
        NodeBadge badge;
        badge.color = nanInfBadgeColor();
        badge.toolTip = runStateExplanation(state);
        switch (state) {
        case RunNodeState::NanInfOrigin: badge.text = AnomalyChainModel::tr("1st NaN"); break;
        case RunNodeState::NanInfReached: badge.text = AnomalyChainModel::tr("NaN here"); break;
        case RunNodeState::NanInfOutput: {
            badge.text = AnomalyChainModel::tr("NaN/Inf");
            const dump::Entry* entry = dump.dump->find(tree.node(tree::NodeId { i }).key);
            if (entry && overflow::nanInfOf(*entry).input)
                badge.toolTip = AnomalyChainModel::tr("Inputs and outputs hold NaN/Inf (Max/Min).");
            else
                badge.toolTip = AnomalyChainModel::tr("An output holds NaN/Inf (Max/Min); the inputs are finite.");
            break;
        }
        default:
            badge.text = AnomalyChainModel::tr("in NaN/Inf");
            badge.color = badge.color.lighter(140);
            break;
        }
        out.insert(i, badge);
    }
    return out;
}

} // namespace probescope::ui
