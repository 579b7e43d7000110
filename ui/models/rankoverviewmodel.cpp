// SPDX-License-Identifier: Apache-2.0
#include "ui/models/rankoverviewmodel.h"

#include "ui/models/runanomalymodel.h"
#include "ui/models/statuspalette.h"

#include <QFont>

#include <algorithm>
#include <map>
#include <tuple>

namespace probescope::ui {

using session::Status;

namespace {

QString rankText(const dump::RankLocation& r) { return QString::fromStdString(session::rankName(r)); }

std::uint32_t countOf(const session::PairSummary& s, Status status)
{
    return s.counts[static_cast<std::size_t>(status)];
}

/// The worst own status of any node of the pair (the pair's colour).
Status worstOf(const session::PairSummary& s)
{
    Status worst = Status::NoData;
    for (const Status st : { Status::Pass, Status::Unmatched, Status::Warning, Status::Error }) {
        if (countOf(s, st) > 0)
            worst = session::worse(worst, st);
    }
    return worst;
}

} // namespace

QString wrappingToolTip(const QStringList& lines)
{
    QStringList escaped;
    for (const QString& line : lines) {
        QString html = line.toHtmlEscaped();
        // U+200B: a zero-width break opportunity, so "Module.layers.12.mlp.…" wraps instead of running off screen.
        html.replace(QLatin1Char('.'), QStringLiteral(".\u200b"));
        html.replace(QLatin1Char('/'), QStringLiteral("/\u200b"));
        escaped << html;
    }
    return QStringLiteral("<qt>") + escaped.join(QStringLiteral("<br>")) + QStringLiteral("</qt>");
}

RankOverviewModel::RankOverviewModel(QObject* parent)
    : QAbstractTableModel(parent)
{
}

void RankOverviewModel::setPlan(const session::SessionPlan& plan)
{
    beginResetModel();
    m_rows.clear();
    m_rows.reserve(plan.pairs.size());
    // The grid's axes: every step, and every NPU rank by number (bare folders, -1, first), then folder name.
    std::map<std::tuple<std::int64_t, std::string>, int> ranks;
    std::map<std::int64_t, int> steps;
    for (const session::RankPair& pair : plan.pairs) {
        ranks.emplace(std::make_tuple(pair.npu.rank.value_or(-1), session::rankName(pair.npu)), 0);
        steps.emplace(pair.step, 0);
    }
    m_rankNames.clear();
    for (auto& [key, index] : ranks) {
        index = static_cast<int>(m_rankNames.size());
        m_rankNames << QString::fromStdString(std::get<1>(key));
    }
    m_steps.clear();
    for (auto& [step, index] : steps) {
        index = static_cast<int>(m_steps.size());
        m_steps.push_back(step);
    }
    m_grid.assign(m_rankNames.size() * m_steps.size(), -1);
    for (const session::RankPair& pair : plan.pairs) {
        Row row { pair, State::Pending, std::nullopt, {}, -1, -1 };
        row.gridRow = ranks.at(std::make_tuple(pair.npu.rank.value_or(-1), session::rankName(pair.npu)));
        row.gridColumn = steps.at(pair.step);
        int& cell = m_grid[static_cast<std::size_t>(row.gridRow) * m_steps.size() + std::size_t(row.gridColumn)];
        if (cell < 0) // two NPU folders of one rank number and name cannot both be planned; keep the first
            cell = static_cast<int>(m_rows.size());
        m_rows.push_back(std::move(row));
    }
    m_origin = {};
    m_originRow = -1;
    m_runMode = false;
    m_runRanks.clear();
    endResetModel();
}

void RankOverviewModel::setRunRanks(std::vector<RunRank> ranks)
{
    if (ranks.size() != m_rows.size())
        return;
    beginResetModel();
    m_runMode = true;
    m_runRanks = std::move(ranks);
    m_origin = {};
    m_originRow = -1;
    for (std::size_t i = 0; i < m_rows.size(); ++i) {
        m_rows[i].summary.reset();
        m_rows[i].error.clear();
        m_rows[i].state = m_runRanks[i].state == RunRankState::NotSearched ? State::Pending : State::Done;
        if (m_runRanks[i].state == RunRankState::Origin)
            m_originRow = static_cast<int>(i);
    }
    endResetModel();
}

std::optional<RankOverviewModel::RunRankState> RankOverviewModel::runRankState(std::size_t pairIndex) const
{
    if (!m_runMode || pairIndex >= m_runRanks.size())
        return std::nullopt;
    return m_runRanks[pairIndex].state;
}

QString RankOverviewModel::runCellText(std::size_t pairIndex) const
{
    switch (runRankState(pairIndex).value_or(RunRankState::NotSearched)) {
    case RunRankState::NotSearched: return QStringLiteral("\u00b7");
    case RunRankState::Clean: return QStringLiteral("\u2013");
    case RunRankState::Reached: return QStringLiteral("NaN");
    case RunRankState::Origin: return QStringLiteral("\u25b6 NaN");
    }
    return {};
}

QString RankOverviewModel::runRankLabel(RunRankState state)
{
    switch (state) {
    case RunRankState::NotSearched: return tr("not searched");
    case RunRankState::Clean: return tr("no NaN/Inf origin");
    case RunRankState::Reached: return tr("NaN/Inf reached");
    case RunRankState::Origin: return tr("first NaN/Inf");
    }
    return {};
}

int RankOverviewModel::pairAt(int gridRow, int gridColumn) const
{
    if (gridRow < 0 || gridColumn < 0 || gridRow >= gridRows() || gridColumn >= gridColumns())
        return -1;
    return m_grid[static_cast<std::size_t>(gridRow) * m_steps.size() + static_cast<std::size_t>(gridColumn)];
}

int RankOverviewModel::gridRowOf(std::size_t pairIndex) const
{
    return pairIndex < m_rows.size() ? m_rows[pairIndex].gridRow : -1;
}

int RankOverviewModel::gridColumnOf(std::size_t pairIndex) const
{
    return pairIndex < m_rows.size() ? m_rows[pairIndex].gridColumn : -1;
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
    setSummaries({ summary });
}

void RankOverviewModel::setSummaries(const std::vector<session::PairSummary>& summaries)
{
    int first = -1;
    int last = -1;
    for (const session::PairSummary& summary : summaries) {
        if (summary.pairIndex >= m_rows.size())
            continue;
        Row& row = m_rows[summary.pairIndex];
        row.state = State::Done;
        row.summary = summary;
        row.error.clear();
        const int r = static_cast<int>(summary.pairIndex);
        first = first < 0 ? r : std::min(first, r);
        last = std::max(last, r);
    }
    if (first < 0)
        return;
    // The origin first: whoever listens to the batch's signal reads the origin it leads to.
    updateOrigin();
    // One signal over the span touched: views repaint what of it is visible, once.
    emit dataChanged(index(first, 0), index(last, ColumnCount - 1));
}

void RankOverviewModel::setFailed(std::size_t pairIndex, const QString& message)
{
    if (pairIndex >= m_rows.size())
        return;
    Row& row = m_rows[pairIndex];
    row.state = State::Failed;
    row.summary.reset();
    row.error = message;
    updateOrigin();
    emitRowChanged(int(pairIndex));
}

RankOverviewModel::State RankOverviewModel::state(std::size_t pairIndex) const
{
    return pairIndex < m_rows.size() ? m_rows[pairIndex].state : State::Pending;
}

const session::PairSummary* RankOverviewModel::summary(std::size_t pairIndex) const
{
    return pairIndex < m_rows.size() && m_rows[pairIndex].summary ? &*m_rows[pairIndex].summary : nullptr;
}

QString RankOverviewModel::error(std::size_t pairIndex) const
{
    return pairIndex < m_rows.size() ? m_rows[pairIndex].error : QString();
}

Status RankOverviewModel::worstStatus(std::size_t pairIndex) const
{
    if (const auto run = runRankState(pairIndex)) // one run: only a NaN/Inf is coloured, never a "pass"
        return *run == RunRankState::Reached || *run == RunRankState::Origin ? Status::Error : Status::NoData;
    const session::PairSummary* s = summary(pairIndex);
    return s ? worstOf(*s) : Status::NoData;
}

void RankOverviewModel::updateOrigin()
{
    // Core decides (the CLI's rule); the row is found again by step and rank.
    std::vector<job::RankFailure> failures;
    std::vector<int> rowOf;
    for (std::size_t i = 0; i < m_rows.size(); ++i) {
        if (m_rows[i].summary && m_rows[i].summary->failure.failed) {
            failures.push_back(m_rows[i].summary->failure);
            rowOf.push_back(static_cast<int>(i));
        }
    }
    m_origin = job::findJobOrigin(failures);
    int now = -1;
    for (std::size_t k = 0; m_origin.fails && k < failures.size() && now < 0; ++k) {
        const job::RankFailure& f = failures[k];
        if (f.step == m_origin.step && f.rank == m_origin.rank && f.rankLabel == m_origin.rankLabel)
            now = rowOf[k];
    }
    if (now == m_originRow)
        return;
    const int before = m_originRow;
    m_originRow = now;
    if (before >= 0)
        emitRowChanged(before);
    if (now >= 0)
        emitRowChanged(now);
}

QString RankOverviewModel::originReason() const
{
    if (!m_origin.fails)
        return {};
    // Core's rule (job::findJobOrigin) said in the user's language; core's own sentence is English.
    std::uint32_t commBefore = 0;
    if (m_originRow >= 0 && std::size_t(m_originRow) < m_rows.size() && m_rows[std::size_t(m_originRow)].summary)
        commBefore = m_rows[std::size_t(m_originRow)].summary->failure.commBefore;
    if (!job::isCommunicationKey(m_origin.key)) {
        const int n = static_cast<int>(commBefore);
        return n == 1 ? tr("first failure not caused by a communication, after 1 communication call, fewer than or as "
                           "many as any other diverging rank")
                      : tr("first failure not caused by a communication, after %1 communication calls, fewer than or "
                           "as many as any other diverging rank")
                            .arg(n);
    }
    return tr("every diverging rank first fails in a communication node; this one after the fewest (%1)").arg(commBefore);
}

QString RankOverviewModel::originText() const
{
    if (m_runMode) {
        if (m_originRow < 0)
            return tr("First NaN/Inf: none (no node has finite inputs and a NaN/Inf output).");
        const session::RankPair& p = m_rows[std::size_t(m_originRow)].pair;
        return tr("First NaN/Inf: %1 %2, node %3")
            .arg(p.step >= 0 ? tr("step %1").arg(p.step) : QString(), rankText(p.npu),
                 m_runRanks[std::size_t(m_originRow)].node);
    }
    if (!m_origin.fails) {
        const bool done = std::all_of(m_rows.begin(), m_rows.end(), [](const Row& r) {
            return r.state == State::Done || r.state == State::Failed;
        });
        return done ? tr("Origin: no compared pair fails.") : tr("Origin: none yet (no pair analysed so far fails).");
    }
    const QString rank = m_origin.rankLabel.empty() ? tr("rank") : QString::fromStdString(m_origin.rankLabel);
    QString text = tr("Origin: step %1 %2, node %3 (#%4) — %5")
                       .arg(m_origin.step)
                       .arg(rank, QString::fromStdString(m_origin.key))
                       .arg(m_origin.executionIndex)
                       .arg(originReason());
    // The origin's pair read from a damaged dump: the origin may be wrong where the lost part would have said
    // otherwise, so the line says so (issue 28).
    if (m_originRow >= 0 && std::size_t(m_originRow) < m_rows.size() && m_rows[std::size_t(m_originRow)].summary
        && !m_rows[std::size_t(m_originRow)].summary->salvaged.empty())
        text += QLatin1Char(' ')
            + tr("(its pair was salvaged from a damaged dump: %1)")
                  .arg(QString::fromStdString(m_rows[std::size_t(m_originRow)].summary->salvaged));
    return text;
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

QString RankOverviewModel::firstFailureText(const Row& row, bool origin) const
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
    // A prefix, not a suffix: the column elides in the middle and keeps both ends of the key.
    if (origin)
        text = tr("\u25b6 job origin: %1").arg(text);
    return text;
}

QString RankOverviewModel::toolTip(const Row& row, bool origin) const
{
    QStringList lines;
    lines << QString::fromStdString(row.pair.label());
    switch (row.state) {
    case State::Pending: lines << tr("Not analysed yet."); break;
    case State::Running: lines << tr("Being analysed…"); break;
    case State::Failed: lines << tr("Failed to compare: %1").arg(row.error); break;
    case State::Done: {
        const session::PairSummary& s = *row.summary;
        lines << tr("Worst verdict: %1").arg(statuspalette::label(worstOf(s)));
        const compare::FirstFailure& f = s.firstFailure;
        if (f.key.empty())
            lines << tr("No failing node.");
        else
            lines << tr("First failure #%1: %2%3")
                         .arg(f.executionIndex)
                         .arg(QString::fromStdString(f.key), f.inputsAlreadyDiffer ? tr(" (inputs already differ)") : QString());
        if (s.failure.failed)
            lines << tr("after %n communication call(s)", nullptr, int(s.failure.commBefore));
        if (origin)
            lines << tr("▶ The job's origin: %1").arg(originReason());
        if (!s.salvaged.empty())
            lines << tr("Salvaged: a dump was cut or damaged and read partially — %1").arg(QString::fromStdString(s.salvaged));
        break;
    }
    }
    return wrappingToolTip(lines);
}

QVariant RankOverviewModel::data(const QModelIndex& index, int role) const
{
    if (!index.isValid() || index.model() != this || index.row() >= int(m_rows.size()))
        return {};
    const Row& row = m_rows[static_cast<std::size_t>(index.row())];
    const bool origin = index.row() == m_originRow;
    const session::PairSummary* s = row.summary ? &*row.summary : nullptr;
    const bool hasFailure = s && !s->firstFailure.key.empty();
    if (m_runMode && index.row() < int(m_runRanks.size())) {
        // One run: its rank's state in the NaN/Inf search; no verdict counts (nothing was compared).
        const RunRank& run = m_runRanks[std::size_t(index.row())];
        switch (role) {
        case Qt::DisplayRole:
            switch (index.column()) {
            case StepColumn: break;
            case RanksColumn: return rankText(row.pair.npu);
            case FirstFailureColumn: return run.node;
            case StateColumn: return runRankLabel(run.state);
            default: return {};
            }
            break;
        case Qt::ToolTipRole: {
            QStringList lines { runPairLabel(row.pair), runRankLabel(run.state) };
            if (!run.node.isEmpty())
                lines << run.node;
            return wrappingToolTip(lines);
        }
        case FirstFailureKeyRole: return run.node;
        case SortRole:
            if (index.column() == StateColumn)
                return int(run.state);
            break;
        default: break;
        }
    }
    switch (role) {
    case Qt::DisplayRole:
        switch (index.column()) {
        case StepColumn: return row.pair.step >= 0 ? QVariant(qlonglong(row.pair.step)) : QVariant(QStringLiteral("\u2014"));
        case RanksColumn: return rankText(row.pair.npu) + QStringLiteral(" \u2194 ") + rankText(row.pair.bench);
        case FirstFailureColumn: return firstFailureText(row, origin);
        case ExecutionIndexColumn: return hasFailure ? QVariant(s->firstFailure.executionIndex) : QVariant();
        case ErrorsColumn: return s ? QVariant(countOf(*s, Status::Error)) : QVariant();
        case WarningsColumn: return s ? QVariant(countOf(*s, Status::Warning)) : QVariant();
        case UnmatchedColumn: return s ? QVariant(countOf(*s, Status::Unmatched)) : QVariant();
        case PassColumn: return s ? QVariant(countOf(*s, Status::Pass)) : QVariant();
        case StateColumn:
            switch (row.state) {
            case State::Pending: return tr("pending");
            case State::Running: return tr("running");
            case State::Done: return s && !s->salvaged.empty() ? tr("done (salvaged)") : tr("done");
            case State::Failed: return tr("failed");
            }
            return {};
        default: return {};
        }
    case Qt::FontRole:
        if (origin) {
            QFont font;
            font.setBold(true);
            return font;
        }
        return {};
    case Qt::ToolTipRole: return toolTip(row, origin);
    case Qt::TextAlignmentRole:
        if (index.column() >= ExecutionIndexColumn && index.column() <= PassColumn)
            return QVariant::fromValue(Qt::Alignment(Qt::AlignRight | Qt::AlignVCenter));
        return {};
    case PairIndexRole: return qulonglong(index.row());
    case StateRole: return int(row.state);
    case OriginRole: return origin;
    case FirstFailureKeyRole: return hasFailure ? QString::fromStdString(s->firstFailure.key) : QString();
    case SalvagedRole: return s ? QString::fromStdString(s->salvaged) : QString();
    case WorstStatusRole: return int(worstStatus(static_cast<std::size_t>(index.row())));
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
    case RanksColumn: return m_runMode ? tr("Rank") : tr("NPU \u2194 bench");
    case FirstFailureColumn: return m_runMode ? tr("NaN/Inf node") : tr("First failing node");
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
