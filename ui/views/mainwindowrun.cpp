// SPDX-License-Identifier: Apache-2.0
// The main window's part for one run on its own (issue 34, docs/gui.md "One run"): a dump folder opened without a
// bench, shown as the run against itself (so the tree, the statistics, the rank map and every pair view work as for
// a pair), its NaN/Inf nodes badged, landing on the first NaN/Inf that core/overflow finds (the first step with one),
// with its chain across ranks (O, P and the "First NaN/Inf" tab); and the trend view's ways out: a bench run overlaid,
// a step's dump. Kept apart from mainwindow.cpp, which only calls in here.
#include "ui/views/mainwindow.h"

#include "core/overflow/overflowcheck.h"
#include "ui/jobs/backgroundtask.h"
#include "ui/jobs/graphfilejob.h"
#include "ui/models/comparetreemodel.h"
#include "ui/models/runanomalymodel.h"
#include "ui/panels/detailpanel.h"
#include "ui/views/comparetreeview.h"
#include "ui/panels/filterbar.h"
#include "ui/panels/legendwidget.h"
#include "ui/views/rankmapview.h"
#include "ui/views/trendview.h"

#include <QApplication>
#include <QComboBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QHeaderView>
#include <QMessageBox>
#include <QSettings>
#include <QTabWidget>
#include <QTableView>

namespace probescope::ui {

namespace {

QString toQ(const std::string& s)
{
    return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size()));
}

/// The plan's pair of (step, rank) as overflow_check numbers them (no step: -1; a rank folder without a number: 0).
int pairOfRun(const session::SessionPlan& plan, std::optional<std::int64_t> step, std::int64_t rank)
{
    for (std::size_t i = 0; i < plan.pairs.size(); ++i) {
        const session::RankPair& p = plan.pairs[i];
        if (p.step == step.value_or(-1) && p.npu.rank.value_or(0) == rank)
            return static_cast<int>(i);
    }
    return -1;
}

using SearchState = std::optional<Result<overflow::FirstAnomalyResult>>;

} // namespace

void MainWindow::buildRunViews()
{
    m_chainModel = new AnomalyChainModel(this);
    m_chainView = new QTableView(this);
    m_chainView->setObjectName("anomalyChain");
    m_chainView->setModel(m_chainModel);
    m_chainView->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_chainView->setSelectionMode(QAbstractItemView::SingleSelection);
    m_chainView->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_chainView->horizontalHeader()->setStretchLastSection(true);
    m_chainView->verticalHeader()->hide();
    m_chainView->hide(); // a tab once a run with a NaN/Inf is open
    connect(m_chainView, &QTableView::activated, this, [this](const QModelIndex& index) { showChainRow(index.row()); });
    m_runTask = new BackgroundTask(this);
    // The badges follow every finished compare of a run's pair (the pair's tree is replaced on each showPair).
    connect(this, &MainWindow::analysisFinished, this, [this](bool ok) {
        if (ok && m_runMode)
            updateRunBadges();
    });
    connect(m_trendView, &TrendView::stepDumpRequested, this, &MainWindow::showTrendStepDump);
    connect(m_trendView, &TrendView::benchRequested, this, &MainWindow::chooseTrendBench);
}

void MainWindow::retranslateRun()
{
    if (!m_chainModel)
        return;
    m_chainModel->retranslate();
    if (const int at = m_tabs->indexOf(m_chainView); at >= 0) {
        m_tabs->setTabText(at, tr("First NaN/Inf"));
        m_tabs->setTabToolTip(at, tr("Where the run first produced a NaN/Inf (overflow_check) and where it reached "
                                     "each other rank; O goes to the origin, P along the chain"));
    }
    if (m_runMode)
        setWindowTitle(tr("ProbeScope — %1 (one run)").arg(QFileInfo(m_runPath).fileName()));
}

bool MainWindow::isRunSearching() const
{
    return m_runTask && m_runTask->isRunning();
}

bool MainWindow::openRun(const QString& path)
{
    if (m_runTask->isRunning()) {
        say([=, this] { return tr("Still looking for the first NaN/Inf of %1.").arg(m_runPath); });
        return false;
    }
    m_runPath = path;
    setBusy(true);
    say([=, this] { return tr("Looking for the first NaN/Inf in %1…").arg(path); });
    // Every step and rank is read once on the pool (core/overflow, as overflow_check searches a dump root); the
    // window then opens the run at the pair that holds the origin.
    auto state = std::make_shared<SearchState>();
    const std::filesystem::path input = path.toStdString();
    connect(
        m_runTask, &BackgroundTask::finished, this, [this, state] {
            if (*state && **state) {
                auto& found = ***state;
                m_runRefused = found.refused;
                m_runFound = found.anomaly ? std::make_shared<const overflow::FirstAnomaly>(std::move(*found.anomaly)) : nullptr;
                m_runSearchError.clear();
            } else {
                m_runFound.reset();
                m_runSearchError = *state ? toQ((*state)->error().format()) : tr("cancelled");
            }
            onRunSearched();
        },
        Qt::SingleShotConnection);
    m_runTask->start([state, input](ProgressSink&) { *state = overflow::findFirstAnomaly(input); });
    return true;
}

void MainWindow::onRunSearched()
{
    setBusy(false);
    const QString path = m_runPath;
    const auto pendingCell = std::exchange(m_runPendingCell, std::nullopt);
    if (!m_runSearchError.isEmpty()) {
        const QString error = m_runSearchError;
        say([=, this] { return tr("Cannot open: %1").arg(error); });
        emit analysisFinished(false, error);
        if (!m_quiet && isVisible() && !QApplication::platformName().contains("offscreen"))
            QMessageBox::warning(this, tr("Cannot open the run"), error);
        return;
    }
    // The pair to show first: the step's dump asked for from the trends, else the origin's, else the first.
    int first = 0;
    auto plan = session::planSession(path.toStdString(), path.toStdString());
    if (plan) {
        int at = -1;
        if (pendingCell)
            at = pairOfRun(*plan, pendingCell->first, pendingCell->second);
        else if (m_runFound)
            at = pairOfRun(*plan, m_runFound->step, m_runFound->origin().rank);
        first = std::max(at, 0);
    }
    const auto anomaly = m_runFound;
    m_keepTrend = pendingCell && m_tabs->indexOf(m_trendView) >= 0;
    const bool opened = openInputs(path, path, first);
    m_keepTrend = false;
    if (!opened)
        return;
    m_followOrigin = false; // the run's origin is the NaN/Inf search's, not the compare's (everything passes)
    {
        // File → Recent opens it again as one run (the folder alone), not as the folder against itself.
        QSettings store;
        QStringList recent = store.value(QStringLiteral("recent/pairs")).toStringList();
        recent.removeAll(path + QLatin1Char('\n') + path);
        store.setValue(QStringLiteral("recent/pairs"), recent);
        rememberPair(path, QString());
    }
    m_runMode = true;
    m_runPath = path;
    m_runAnomaly = anomaly;
    m_chainModel->setAnomaly(anomaly);
    setRunViews(true);
    if (anomaly) {
        if (m_tabs->indexOf(m_chainView) < 0)
            m_tabs->insertTab(m_tabs->indexOf(m_rankPanel) + 1, m_chainView, QString());
        m_chainView->selectRow(0);
        if (!pendingCell && m_plan && pairOfRun(*m_plan, anomaly->step, anomaly->origin().rank) == m_pairIndex)
            m_pendingSelection = toQ(anomaly->origin().op); // selected when this pair's compare ends
    }
    if (pendingCell && m_tabs->indexOf(m_trendView) >= 0)
        m_tabs->setCurrentWidget(m_detail);
    updateInputActions();
    retranslate();
}

void MainWindow::setRunViews(bool on)
{
    // A pair's views say verdicts; one run's say what its own statistics hold (no bench, so no Pass, no diff).
    m_model->setRunMode(on);
    m_filter->setRunMode(on);
    if (on) {
        m_detail->setSingleRun([this](quint32 node) { return m_model->runState(tree::NodeId { node }); },
                               [this](quint32 node) { return m_model->failingBelow(tree::NodeId { node }); });
        m_overviewModel->setRunRanks(runRanks());
        m_legend->setVisible(false);
        // The rank box was filled while the run opened as a pair (openInputs): named by its one side now.
        for (int i = 0; m_plan && i < m_rankBox->count(); ++i) {
            const int pair = m_rankBox->itemData(i).toInt();
            if (pair >= 0 && std::size_t(pair) < m_plan->pairs.size())
                m_rankBox->setItemText(i, ui::runPairLabel(m_plan->pairs[std::size_t(pair)]));
        }
    } else {
        m_detail->setSingleRun({});
    }
}

std::vector<RankOverviewModel::RunRank> MainWindow::runRanks() const
{
    using State = RankOverviewModel::RunRankState;
    std::vector<RankOverviewModel::RunRank> out;
    if (!m_plan)
        return out;
    // The search (core/overflow) stops at the first step with an anomaly: the steps before it have no NaN/Inf origin,
    // the ranks of that step off the chain were never reached, the steps after it were not searched.
    const std::int64_t at = m_runAnomaly ? m_runAnomaly->step.value_or(-1) : 0;
    for (const session::RankPair& p : m_plan->pairs) {
        RankOverviewModel::RunRank rank;
        if (m_runRefused)
            rank.state = State::NotSearched;
        else if (!m_runAnomaly || p.step < at)
            rank.state = State::Clean;
        else if (p.step > at)
            rank.state = State::NotSearched;
        else {
            rank.state = State::Clean;
            for (const overflow::AnomalyNode& n : m_runAnomaly->chain) {
                if (n.rank == p.npu.rank.value_or(0)) {
                    rank.state = n.origin ? State::Origin : State::Reached;
                    rank.node = toQ(n.op);
                }
            }
        }
        out.push_back(rank);
    }
    return out;
}

void MainWindow::updateRunBadges()
{
    // The NPU side's dump: the tree's skeleton has it unless it came from the reopen cache (no dumps read yet); the
    // finished analysis's then has it.
    auto skeleton = m_model->skeleton();
    if ((!skeleton || !skeleton->npu || !skeleton->npu->dump) && m_analysis)
        skeleton = m_analysis->skeleton;
    if (!m_runMode || !m_plan || m_pairIndex < 0 || !skeleton || !skeleton->npu || !skeleton->npu->dump
        || !m_model->tree())
        return;
    const session::RankPair& pair = m_plan->pairs[std::size_t(m_pairIndex)];
    const std::optional<std::int64_t> step = pair.step >= 0 ? std::optional<std::int64_t>(pair.step) : std::nullopt;
    const int rank = static_cast<int>(pair.npu.rank.value_or(0));
    m_badges->setBadges(NodeBadgeDelegate::NanInf,
                        nanInfBadges(*m_model->tree(), *skeleton->npu, m_runAnomaly.get(), step, rank));
    // The Status column, the filter and its counts, N/Shift+N: the run's own states.
    m_model->setRunStates(runNodeStates(*m_model->tree(), *skeleton->npu, m_runAnomaly.get(), step, rank));
    m_filter->setCounts(m_model->counts());
    if (m_analysis && m_detail->hasNode())
        m_detail->setNode(m_analysis, m_detail->nodeId());
}

bool MainWindow::showChainRow(int row)
{
    const overflow::AnomalyNode* node = m_chainModel->nodeAt(row);
    if (!node || !m_plan || !m_runAnomaly)
        return false;
    const int pair = pairOfRun(*m_plan, m_runAnomaly->step, node->rank);
    if (pair < 0) {
        say([=, this] { return tr("The opened run has no rank %1 in that step.").arg(node->rank); });
        return false;
    }
    m_chainView->selectRow(row);
    m_rankPanel->map()->setCurrentPair(pair);
    showNodeInPair(pair, toQ(node->op));
    m_tree->setFocus();
    return true;
}

bool MainWindow::jumpToRunOrigin()
{
    if (!m_runAnomaly) {
        say([=, this] { return runLine(); });
        return false;
    }
    return showChainRow(0);
}

bool MainWindow::jumpToRunPeer()
{
    if (!m_runAnomaly || !m_plan || m_pairIndex < 0)
        return false;
    const session::RankPair& pair = m_plan->pairs[std::size_t(m_pairIndex)];
    const int row = m_chainModel->rowOfRank(static_cast<int>(pair.npu.rank.value_or(0)));
    if (row < 0 || toQ(m_chainModel->nodeAt(row)->op) != selectedNodeKey())
        return false; // not on the chain: P as for a job (a communication node's next rank)
    const int count = m_chainModel->rowCount();
    if (count < 2) {
        say([=, this] { return tr("The NaN/Inf reached no other rank: the chain is the origin alone."); });
        return true;
    }
    const int next = (row + 1) % count;
    const overflow::AnomalyNode to = *m_chainModel->nodeAt(next);
    m_nextNote = [=, this] { return tr("P: along the NaN/Inf chain to rank %1, %2.").arg(to.rank).arg(toQ(to.op)); };
    return showChainRow(next);
}

QString MainWindow::runLine() const
{
    if (!m_runAnomaly) {
        if (m_runRefused)
            return tr("One run: a dump is damaged, so the NaN/Inf search refused it (the Diagnostics tab says where).");
        return tr("One run: no NaN/Inf origin — no node has finite inputs and a NaN/Inf output (overflow_check finds "
                  "no anomaly).");
    }
    const overflow::AnomalyNode& o = m_runAnomaly->origin();
    const QString where = m_runAnomaly->step ? tr("step %1 rank %2").arg(*m_runAnomaly->step).arg(o.rank)
                                             : tr("rank %1").arg(o.rank);
    const int reached = static_cast<int>(m_runAnomaly->chain.size()) - 1;
    return tr("First NaN/Inf (O): %1, %2 — its inputs are finite, its output is not")
               .arg(where, toQ(o.op))
        + (reached > 0 ? tr("; it reached %n other rank(s) (P follows the chain)", nullptr, reached) : QString());
}

void MainWindow::showTrendStepDump(qint64 step, qint64 rank)
{
    const QString dir = m_trendView->dumpFolder();
    if (dir.isEmpty()) {
        say([=, this] { return tr("Choose the run's dump first (Dump of this run…) to open step %1's dump.").arg(step); });
        return;
    }
    if (m_runMode && m_runPath == dir && m_plan) {
        const int pair = pairOfRun(*m_plan, step, rank);
        if (pair < 0) {
            say([=, this] { return tr("The run's dump has no step %1, rank %2.").arg(step).arg(rank); });
            return;
        }
        m_rankPanel->map()->setCurrentPair(pair);
        showPair(pair);
        m_tabs->setCurrentWidget(m_detail);
        return;
    }
    m_runPendingCell = std::pair<std::int64_t, std::int64_t> { step, rank };
    openRun(dir);
}

void MainWindow::chooseTrendBench()
{
    const QString dir = QFileDialog::getExistingDirectory(this, tr("The bench run's monitor folder"), lastDialogFolder());
    rememberDialogFolder(dir);
    if (!dir.isEmpty())
        openTrendBench(dir);
}

void MainWindow::openTrendBench(const QString& path)
{
    auto* task = new BackgroundTask(this);
    auto outcome = std::make_shared<GraphFileOutcome>();
    const std::filesystem::path input = path.toStdString();
    connect(task, &BackgroundTask::finished, this, [this, task, outcome, path] {
        task->deleteLater();
        if (outcome->error || !outcome->trend) {
            const QString error = outcome->error ? toQ(outcome->error->format()) : tr("%1 holds no trends").arg(path);
            say([=, this] { return tr("Cannot open the bench run: %1").arg(error); });
            emit trendBenchLoaded(false);
            return;
        }
        m_trendView->setBenchTable(outcome->trend);
        say([=, this] { return tr("Bench run %1 overlaid on the trends.").arg(QFileInfo(path).fileName()); });
        emit trendBenchLoaded(true);
    });
    task->start([outcome, input](ProgressSink& progress) { *outcome = ui::openGraphFile(input, &progress); });
}

} // namespace probescope::ui
