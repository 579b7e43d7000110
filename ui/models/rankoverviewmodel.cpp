// SPDX-License-Identifier: Apache-2.0
#include "ui/models/rankoverviewmodel.h"

#include <QFont>

#include <algorithm>

namespace probescope::ui {

using session::Status;

namespace {

QString rankText(const dump::RankLocation& r) { return QString::fromStdString(session::rankName(r)); }

std::uint32_t countOf(const session::PairSummary& s, Status status)
{
    return s.counts[static_cast<std::size_t>(status)];
}

} // namespace

RankOverviewModel::RankOverviewModel(QObject* parent)
    : QAbstractTableModel(parent)
{
}

void RankOverviewModel::setPlan(const session::SessionPlan& plan)
{
    beginResetModel();
    m_rows.clear();
    m_rows.reserve(plan.pairs.size());
    for (const session::RankPair& pair : plan.pairs)
        m_rows.push_back(Row { pair, State::Pending, std::nullopt, {} });
    m_firstDiverging = -1;
    endResetModel();
}

void RankOverviewModel::setRunning(std::size_t pairIndex)
{
    if (pairIndex >= m_rows.size())
        return;
    m_rows[pairIndex].state = State::Running;
    emitRowChanged(int(pairIndex));
}

void RankOverviewModel::setSummary(const session::PairSummary& summary)
{
    if (summary.pairIndex >= m_rows.size())
        return;
    Row& row = m_rows[summary.pairIndex];
    row.state = State::Done;
    row.summary = summary;
    row.error.clear();
    emitRowChanged(int(summary.pairIndex));
    updateFirstDiverging();
}

void RankOverviewModel::setFailed(std::size_t pairIndex, const QString& message)
{
    if (pairIndex >= m_rows.size())
        return;
    Row& row = m_rows[pairIndex];
    row.state = State::Failed;
    row.summary.reset();
    row.error = message;
    emitRowChanged(int(pairIndex));
    updateFirstDiverging();
}

RankOverviewModel::State RankOverviewModel::state(std::size_t pairIndex) const
{
    return pairIndex < m_rows.size() ? m_rows[pairIndex].state : State::Pending;
}

const session::PairSummary* RankOverviewModel::summary(std::size_t pairIndex) const
{
    return pairIndex < m_rows.size() && m_rows[pairIndex].summary ? &*m_rows[pairIndex].summary : nullptr;
}

void RankOverviewModel::updateFirstDiverging()
{
    // Ranks of one step run at the same time, so core compares their positions in execution order;
    // steps run one after the other, so a failure in an earlier step comes first whatever its position.
    int now = -1;
    std::vector<std::int64_t> steps;
    for (const Row& row : m_rows) {
        if (row.summary && std::find(steps.begin(), steps.end(), row.pair.step) == steps.end())
            steps.push_back(row.pair.step);
    }
    std::sort(steps.begin(), steps.end());
    for (const std::int64_t step : steps) {
        std::vector<session::PairSummary> done;
        std::vector<int> rowOf;
        for (std::size_t i = 0; i < m_rows.size(); ++i) {
            if (m_rows[i].summary && m_rows[i].pair.step == step) {
                done.push_back(*m_rows[i].summary);
                rowOf.push_back(int(i));
            }
        }
        const long k = session::firstDivergingRank(done);
        if (k >= 0 && static_cast<std::size_t>(k) < rowOf.size()) {
            now = rowOf[static_cast<std::size_t>(k)];
            break;
        }
    }
    if (now == m_firstDiverging)
        return;
    const int before = m_firstDiverging;
    m_firstDiverging = now;
    if (before >= 0)
        emitRowChanged(before);
    if (now >= 0)
        emitRowChanged(now);
}

void RankOverviewModel::emitRowChanged(int row)
{
    emit dataChanged(index(row, 0), index(row, ColumnCount - 1));
}

int RankOverviewModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(m_rows.size());
}

int RankOverviewModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QString RankOverviewModel::firstFailureText(const Row& row, bool diverging) const
{
    if (row.state == State::Failed)
        return row.error;
    if (!row.summary)
        return {};
    const compare::FirstFailure& f = row.summary->firstFailure;
    if (f.key.empty())
        return tr("none");
    QString text = QString::fromStdString(f.key);
    if (f.inputsAlreadyDiffer)
        text += tr(" (inputs already differ)");
    if (diverging)
        text = QStringLiteral("\u25b6 ") + text + tr(" \u2014 first to diverge");
    return text;
}

QVariant RankOverviewModel::data(const QModelIndex& index, int role) const
{
    if (!index.isValid() || index.model() != this || index.row() >= int(m_rows.size()))
        return {};
    const Row& row = m_rows[static_cast<std::size_t>(index.row())];
    const bool diverging = index.row() == m_firstDiverging;
    const session::PairSummary* s = row.summary ? &*row.summary : nullptr;
    const bool hasFailure = s && !s->firstFailure.key.empty();
    switch (role) {
    case Qt::DisplayRole:
        switch (index.column()) {
        case StepColumn: return row.pair.step >= 0 ? QVariant(qlonglong(row.pair.step)) : QVariant(QStringLiteral("\u2014"));
        case RanksColumn: return rankText(row.pair.npu) + QStringLiteral(" \u2194 ") + rankText(row.pair.bench);
        case FirstFailureColumn: return firstFailureText(row, diverging);
        case ExecutionIndexColumn: return hasFailure ? QVariant(s->firstFailure.executionIndex) : QVariant();
        case ErrorsColumn: return s ? QVariant(countOf(*s, Status::Error)) : QVariant();
        case WarningsColumn: return s ? QVariant(countOf(*s, Status::Warning)) : QVariant();
        case UnmatchedColumn: return s ? QVariant(countOf(*s, Status::Unmatched)) : QVariant();
        case PassColumn: return s ? QVariant(countOf(*s, Status::Pass)) : QVariant();
        case StateColumn:
            switch (row.state) {
            case State::Pending: return tr("pending");
            case State::Running: return tr("running");
            case State::Done: return tr("done");
            case State::Failed: return tr("failed");
            }
            return {};
        default: return {};
        }
    case Qt::FontRole:
        if (diverging) {
            QFont font;
            font.setBold(true);
            return font;
        }
        return {};
    case Qt::ToolTipRole:
        if (row.state == State::Failed)
            return row.error;
        if (hasFailure)
            return QString::fromStdString(s->firstFailure.summary);
        return {};
    case Qt::TextAlignmentRole:
        if (index.column() >= ExecutionIndexColumn && index.column() <= PassColumn)
            return QVariant::fromValue(Qt::Alignment(Qt::AlignRight | Qt::AlignVCenter));
        return {};
    case PairIndexRole: return qulonglong(index.row());
    case StateRole: return int(row.state);
    case FirstDivergingRole: return diverging;
    case FirstFailureKeyRole: return hasFailure ? QString::fromStdString(s->firstFailure.key) : QString();
    case SortRole:
        switch (index.column()) {
        case StepColumn: return qlonglong(row.pair.step);
        case RanksColumn: return qlonglong(row.pair.npu.rank.value_or(-1));
        case ExecutionIndexColumn: return hasFailure ? qlonglong(s->firstFailure.executionIndex) : qlonglong(-1);
        case StateColumn: return int(row.state);
        default: return data(index, Qt::DisplayRole);
        }
    default: return {};
    }
}

QVariant RankOverviewModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, orientation, role);
    switch (section) {
    case StepColumn: return tr("Step");
    case RanksColumn: return tr("NPU \u2194 bench");
    case FirstFailureColumn: return tr("First failing node");
    case ExecutionIndexColumn: return tr("Exec. index");
    case ErrorsColumn: return tr("Errors");
    case WarningsColumn: return tr("Warnings");
    case UnmatchedColumn: return tr("Unmatched");
    case PassColumn: return tr("Pass");
    case StateColumn: return tr("State");
    default: return {};
    }
}

} // namespace probescope::ui
