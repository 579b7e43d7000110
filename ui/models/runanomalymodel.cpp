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

QColor nanInfBadgeColor()
{
    return QColor(0xD9, 0x36, 0x1E);
}

QHash<quint32, NodeBadge> nanInfBadges(const tree::ConstructTree& tree, const dump::RankDump& dump,
                                       const overflow::FirstAnomaly* anomaly, std::optional<std::int64_t> step,
                                       int rank)
{
    QHash<quint32, NodeBadge> out;
    if (!dump.dump)
        return out;
    std::string_view chainOp;
    if (anomaly && anomaly->step == step) {
        for (const overflow::AnomalyNode& n : anomaly->chain) {
            if (n.rank == rank)
                chainOp = n.op;
        }
    }
    for (std::uint32_t i = 0; i < tree.size(); ++i) {
        const tree::TreeNode& node = tree.node(tree::NodeId { i });
        const dump::Entry* entry = dump.dump->find(node.key);
        if (!entry)
            continue;
        const overflow::NanInfFlags flags = overflow::nanInfOf(*entry);
        const bool onChain = !chainOp.empty() && node.key == chainOp;
        if (!flags.input && !flags.output && !onChain)
            continue;
        NodeBadge badge;
        badge.color = nanInfBadgeColor();
        if (onChain && anomaly->origin().rank == rank) {
            badge.text = AnomalyChainModel::tr("1st NaN");
            badge.toolTip = AnomalyChainModel::tr("The first NaN/Inf of the run (overflow_check): its inputs are finite, "
                                                  "its output is not.");
        } else if (onChain) {
            badge.text = AnomalyChainModel::tr("NaN here");
            badge.toolTip = AnomalyChainModel::tr("Where the run's first NaN/Inf reached this rank: the first output "
                                                  "with a NaN/Inf here.");
        } else if (flags.output) {
            badge.text = AnomalyChainModel::tr("NaN/Inf");
            badge.toolTip = flags.input ? AnomalyChainModel::tr("Inputs and outputs hold NaN/Inf (Max/Min).")
                                        : AnomalyChainModel::tr("An output holds NaN/Inf (Max/Min); the inputs are finite.");
        } else {
            badge.text = AnomalyChainModel::tr("in NaN/Inf");
            badge.color = badge.color.lighter(140);
            badge.toolTip = AnomalyChainModel::tr("An input holds NaN/Inf (Max/Min); the outputs are finite.");
        }
        out.insert(i, badge);
    }
    return out;
}

} // namespace probescope::ui
