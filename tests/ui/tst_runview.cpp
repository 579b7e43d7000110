// SPDX-License-Identifier: Apache-2.0
// Issue 34 in the window: one run on its own (the first NaN/Inf of msprobe 26's overflow_check fixtures, its chain
// across ranks, O/P, the badges) and monitor folders as trends (msprobe's own data2db db as the oracle, the
// anomalies, a bench run overlaid, a step's dump). Models under QAbstractItemModelTester.
#include "core/graph/trend.h"
#include "core/overflow/overflowcheck.h"
#include "ui/jobs/graphfilejob.h"
#include "core/dump/dumpfile.h"
#include "ui/models/comparetreemodel.h"
#include "ui/models/rankoverviewmodel.h"
#include "ui/models/treerowsmodel.h"
#include "ui/panels/detailpanel.h"
#include "ui/panels/filterbar.h"
#include "ui/views/comparetreeview.h"
#include "ui/views/rankmapview.h"
#include "ui/models/nodebadges.h"
#include "ui/models/runanomalymodel.h"
#include "ui/models/trendgridmodel.h"
#include "ui/views/mainwindow.h"
#include "ui/views/scriptedrun.h"
#include "ui/views/trendview.h"

#include "core/tempdir.h"
#include "modeltestfailures.h"
#include "testconfig.h"

#include <QAbstractItemModelTester>
#include <QComboBox>
#include <QPushButton>
#include <QRegularExpression>
#include <QSettings>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTableView>
#include <QToolButton>
#include <QTreeWidget>

#include <qcustomplot.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <tuple>

using namespace probescope;
namespace fs = std::filesystem;

namespace {

fs::path workflow()
{
    return probescope::testing::fixturesDir() / "msprobe26_workflow";
}

fs::path overflowCase(const std::string& name)
{
    return workflow() / "overflow_check" / name;
}

fs::path monitorCase()
{
    return workflow() / "monitor" / "v1_all_ops_vpp2_2r";
}

QString q(const fs::path& p)
{
    return QString::fromStdString(p.string());
}

using probescope::testing::readAll;

/// msprobe's answer for a case: (rank, op_name) of the first node of its anomaly_analyze_*.json, none without one.
std::optional<std::pair<int, std::string>> msprobeOrigin(const fs::path& caseDir)
{
    for (const auto& e : fs::directory_iterator(caseDir / "expected")) {
        const std::string name = e.path().filename().string();
        if (!name.starts_with("anomaly_analyze_"))
            continue;
        const std::string text = readAll(e.path());
        const std::size_t rank = text.find("\"rank_");
        const std::size_t op = text.find("\"op_name\": \"");
        if (rank == std::string::npos || op == std::string::npos)
            return std::nullopt;
        const int r = std::stoi(text.substr(rank + 6));
        const std::size_t start = op + 12;
        return std::pair { r, text.substr(start, text.find('"', start) - start) };
    }
    return std::nullopt;
}

std::pair<bool, QString> waitFor(QSignalSpy& spy)
{
    if (spy.isEmpty() && !spy.wait(120000))
        return { false, QStringLiteral("timeout") };
    const auto args = spy.takeFirst();
    return { args.at(0).toBool(), args.at(1).toString() };
}

/// The next analysis `spy` (on MainWindow::analysisFinished) sees, waited for: a success, or a failure saying why.
::testing::AssertionResult analysisSucceeded(QSignalSpy& spy)
{
    const auto [ok, error] = waitFor(spy);
    if (!ok)
        return ::testing::AssertionFailure() << error.toStdString();
    return ::testing::AssertionSuccess();
}

/// The window as the run tests show it: quiet (no dialogs), 1400 x 860.
void showQuietly(ui::MainWindow& window)
{
    window.setQuiet(true);
    window.resize(1400, 860);
    window.show();
}

void copyTree(const fs::path& from, const fs::path& to)
{
    fs::create_directories(to);
    fs::copy(from, to, fs::copy_options::recursive);
}

} // namespace

TEST(RunAnomaly, TheOriginOfEveryOverflowFixtureIsMsprobes)
{
    int cases = 0;
    for (const auto& e : fs::directory_iterator(workflow() / "overflow_check")) {
        if (!e.is_directory())
            continue;
        ++cases;
        const auto expected = msprobeOrigin(e.path());
        auto found = overflow::findFirstAnomaly(e.path() / "inputs");
        ASSERT_TRUE(found) << e.path() << ": " << found.error().format();
        EXPECT_FALSE(found->refused) << e.path();
        ASSERT_EQ(found->anomaly.has_value(), expected.has_value()) << e.path();
        if (!expected)
            continue;
        EXPECT_EQ(found->anomaly->step, 0) << e.path();
        EXPECT_EQ(found->anomaly->origin().rank, expected->first) << e.path();
        EXPECT_EQ(found->anomaly->origin().op, expected->second) << e.path();
        EXPECT_TRUE(found->anomaly->origin().origin);
    }
    EXPECT_EQ(cases, 8);
}

TEST(RunAnomaly, TheChainReachesTheOtherRankThroughTheAllReduce)
{
    // The case's model makes a NaN on rank 1 between two all_reduces: rank 0 receives it in the second one.
    auto found = overflow::findFirstAnomaly(overflowCase("allreduce_nan_rank1_2r") / "inputs/step0");
    ASSERT_TRUE(found) << found.error().format();
    ASSERT_TRUE(found->anomaly);
    const auto& chain = found->anomaly->chain;
    ASSERT_EQ(chain.size(), 2u);
    EXPECT_EQ(chain[0].rank, 1);
    EXPECT_EQ(chain[1].rank, 0);
    EXPECT_FALSE(chain[1].origin);
    EXPECT_TRUE(chain[1].op.starts_with("Distributed.all_reduce.")) << chain[1].op;
}

TEST(RunAnomaly, AWholeRootAnswersTheFirstStepWithAnAnomaly)
{
    probescope::testing::TempDir tmp;
    copyTree(overflowCase("no_anomaly_2r") / "inputs/step0", tmp.path() / "step0");
    copyTree(overflowCase("allreduce_nan_rank1_2r") / "inputs/step0", tmp.path() / "step2");
    copyTree(overflowCase("p2p_send_recv_2r") / "inputs/step0", tmp.path() / "step1");
    auto found = overflow::findFirstAnomaly(tmp.path());
    ASSERT_TRUE(found) << found.error().format();
    ASSERT_TRUE(found->anomaly);
    EXPECT_EQ(found->anomaly->step, 1);
    const auto expected = msprobeOrigin(overflowCase("p2p_send_recv_2r"));
    ASSERT_TRUE(expected);
    EXPECT_EQ(found->anomaly->origin().rank, expected->first);
    EXPECT_EQ(found->anomaly->origin().op, expected->second);
}

TEST(RunAnomaly, ChainModelRowsAreTheChain)
{
    probescope::testing::ModelTestFailures failures;
    ui::AnomalyChainModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Warning);
    EXPECT_EQ(model.rowCount(), 0);
    auto found = overflow::findFirstAnomaly(overflowCase("allreduce_nan_rank1_2r") / "inputs");
    ASSERT_TRUE(found && found->anomaly);
    model.setAnomaly(std::make_shared<const overflow::FirstAnomaly>(*found->anomaly));
    ASSERT_EQ(model.rowCount(), 2);
    EXPECT_EQ(model.index(0, ui::AnomalyChainModel::RankColumn).data().toInt(), 1);
    EXPECT_EQ(model.index(0, ui::AnomalyChainModel::NodeColumn).data().toString(), "Torch.sqrt.0.forward");
    EXPECT_EQ(model.rowOfRank(0), 1);
    EXPECT_EQ(model.rowOfRank(7), -1);
    model.retranslate();
    model.setAnomaly(nullptr);
    EXPECT_EQ(model.rowCount(), 0);
}

TEST(RunWindow, OneFolderLandsOnTheFirstNaNAndOPFollowTheChain)
{
    ui::MainWindow window;
    showQuietly(window);
    QSignalSpy finished(&window, &ui::MainWindow::analysisFinished);
    ASSERT_TRUE(window.openInputs(q(overflowCase("allreduce_nan_rank1_2r") / "inputs"), {}));
    ASSERT_TRUE(analysisSucceeded(finished));
    ASSERT_TRUE(window.isRunShown());
    ASSERT_NE(window.runAnomaly(), nullptr);
    EXPECT_EQ(window.selectedNodeKey(), "Torch.sqrt.0.forward");
    ASSERT_NE(window.plan(), nullptr);
    EXPECT_EQ(window.plan()->pairs[std::size_t(window.currentPair())].npu.rank, 1);
    EXPECT_TRUE(window.statusLine().contains("First NaN/Inf (O)")) << window.statusLine().toStdString();
    EXPECT_GE(window.tabs()->indexOf(window.anomalyChainView()), 0);
    // The badges: the origin, and a node downstream of it; none on a node that ran before it.
    const auto& tree = *window.treeModel()->tree();
    const auto& badges = window.nodeBadges()->badges(ui::NodeBadgeDelegate::NanInf);
    const auto origin = tree.find("Torch.sqrt.0.forward");
    ASSERT_TRUE(origin);
    ASSERT_TRUE(badges.contains(origin->value));
    EXPECT_EQ(badges.value(origin->value).text, "1st NaN");
    const auto before = tree.find("Functional.gelu.0.forward");
    ASSERT_TRUE(before);
    EXPECT_FALSE(badges.contains(before->value));
    const auto after = tree.find("Functional.relu.0.forward");
    ASSERT_TRUE(after);
    EXPECT_EQ(badges.value(after->value).text, "NaN/Inf");

    // P: along the chain to rank 0, where the NaN arrived.
    ASSERT_TRUE(window.jumpToPeerRank());
    ASSERT_TRUE(analysisSucceeded(finished));
    EXPECT_EQ(window.plan()->pairs[std::size_t(window.currentPair())].npu.rank, 0);
    const std::string reached = window.runAnomaly()->chain[1].op;
    EXPECT_EQ(window.selectedNodeKey().toStdString(), reached);
    const auto& here = window.nodeBadges()->badges(ui::NodeBadgeDelegate::NanInf);
    const auto reachedNode = window.treeModel()->tree()->find(reached);
    ASSERT_TRUE(reachedNode);
    EXPECT_EQ(here.value(reachedNode->value).text, "NaN here");
    window.tabs()->setCurrentWidget(window.anomalyChainView());
    EXPECT_TRUE(window.grab().save(QStringLiteral(PROBESCOPE_TEST_OUTPUT_DIR "/runview-chain.png")));
    // O: back to the origin.
    ASSERT_TRUE(window.jumpToOrigin());
    ASSERT_TRUE(analysisSucceeded(finished));
    EXPECT_EQ(window.plan()->pairs[std::size_t(window.currentPair())].npu.rank, 1);
    EXPECT_EQ(window.selectedNodeKey(), "Torch.sqrt.0.forward");

    // Opening a pair afterwards leaves the one-run mode.
    const fs::path step = overflowCase("allreduce_nan_rank1_2r") / "inputs/step0";
    ASSERT_TRUE(window.openInputs(q(step / "rank0"), q(step / "rank1")));
    waitFor(finished); // the pair's own outcome is not what this checks
    EXPECT_FALSE(window.isRunShown());
    EXPECT_LT(window.tabs()->indexOf(window.anomalyChainView()), 0);
}

namespace {

/// What a run's node is, read from its dump with core's NaN/Inf test (overflow::nanInfOf, msprobe's Max/Min rule) and
/// the chain: the oracle the one-run views are checked against.
struct Expected
{
    std::map<std::string, ui::RunNodeState> states;
    std::array<std::uint32_t, 6> counts {}; ///< per runStateClass
};

Expected expectedStates(const ui::MainWindow& window)
{
    Expected out;
    const auto& skeleton = window.analysis()->skeleton; // the tree's may come from the reopen cache, without dumps
    const auto& tree = *window.treeModel()->tree();
    const session::RankPair& pair = window.plan()->pairs[std::size_t(window.currentPair())];
    const int rank = static_cast<int>(pair.npu.rank.value_or(0));
    std::string chainOp;
    for (const auto& n : window.runAnomaly() ? window.runAnomaly()->chain : std::vector<overflow::AnomalyNode> {})
        if (n.rank == rank)
            chainOp = n.op;
    for (std::uint32_t i = 0; i < tree.size(); ++i) {
        const std::string key(tree.node(tree::NodeId { i }).key);
        const dump::Entry* entry = skeleton->npu->dump->find(key);
        ui::RunNodeState state = ui::RunNodeState::NoData;
        if (entry) {
            const auto flags = overflow::nanInfOf(*entry);
            state = key == chainOp ? (window.runAnomaly()->origin().rank == rank ? ui::RunNodeState::NanInfOrigin
                                                                                  : ui::RunNodeState::NanInfReached)
                : flags.output     ? ui::RunNodeState::NanInfOutput
                : flags.input      ? ui::RunNodeState::NanInfInput
                                   : ui::RunNodeState::Finite;
        }
        out.states[key] = state;
        ++out.counts[std::size_t(ui::runStateClass(state))];
    }
    return out;
}

/// Every text a model shows (display role, every row and column, through the tree).
void collectTexts(const QAbstractItemModel& model, const QModelIndex& parent, QStringList& out)
{
    for (int r = 0; r < model.rowCount(parent); ++r) {
        for (int c = 0; c < model.columnCount(parent); ++c)
            out << model.index(r, c, parent).data().toString();
        collectTexts(model, model.index(r, 0, parent), out);
    }
}

} // namespace

TEST(RunWindow, OneRunShowsItsOwnStatesNotTheSelfComparesVerdicts)
{
    probescope::testing::ModelTestFailures failures;
    ui::MainWindow window;
    window.setQuiet(true);
    window.resize(1400, 860);
    window.show();
    QAbstractItemModelTester treeTester(window.treeModel(), QAbstractItemModelTester::FailureReportingMode::Warning);
    QAbstractItemModelTester rowsTester(window.treeRows(), QAbstractItemModelTester::FailureReportingMode::Warning);
    QAbstractItemModelTester rankTester(window.rankOverview(), QAbstractItemModelTester::FailureReportingMode::Warning);
    QSignalSpy finished(&window, &ui::MainWindow::analysisFinished);
    ASSERT_TRUE(window.openInputs(q(overflowCase("allreduce_nan_rank1_2r") / "inputs"), {}));
    auto [ok, error] = waitFor(finished);
    ASSERT_TRUE(ok) << error.toStdString();
    ASSERT_TRUE(window.isRunShown());
    ASSERT_TRUE(window.treeModel()->isRunMode());

    // The tree: each node's Status says its own state (the oracle read from the dump), never a verdict.
    const Expected expected = expectedStates(window);
    const auto& tree = *window.treeModel()->tree();
    int nanNodes = 0;
    for (std::uint32_t i = 0; i < tree.size(); ++i) {
        const tree::NodeId node { i };
        const std::string key(tree.node(node).key);
        const auto state = window.treeModel()->runState(node);
        ASSERT_TRUE(state) << key;
        EXPECT_EQ(*state, expected.states.at(key)) << key;
        const QString text = window.treeModel()->indexOf(node, ui::CompareTreeModel::StatusColumn).data().toString();
        EXPECT_TRUE(text.startsWith(ui::runStateLabel(*state))) << key << ": " << text.toStdString();
        nanNodes += *state >= ui::RunNodeState::NanInfOutput;
    }
    EXPECT_GE(nanNodes, 5); // the origin and what ran after it on rank 1
    EXPECT_EQ(window.treeModel()->runState(*tree.find("Torch.sqrt.0.forward")), ui::RunNodeState::NanInfOrigin);
    EXPECT_EQ(window.treeModel()->runState(*tree.find("Functional.gelu.0.forward")), ui::RunNodeState::Finite);
    QStringList texts;
    collectTexts(*window.treeModel(), {}, texts);
    EXPECT_FALSE(texts.join('\n').contains("Pass")) << texts.join('\n').toStdString();
    EXPECT_TRUE(window.treeModel()->indexOf(*tree.find("Functional.gelu.0.forward"), 0).data(Qt::DecorationRole).isNull());
    // Only the name and the state: the self-compare's metric columns are hidden.
    for (int c = ui::CompareTreeModel::FailingBelowColumn; c < ui::CompareTreeModel::ColumnCount; ++c)
        EXPECT_TRUE(window.treeView()->isColumnHidden(c)) << c;

    // The filter counts are the states' counts; no Pass, no unmatched toggle.
    ui::FilterBar* filter = window.filterBar();
    ASSERT_TRUE(filter->isRunMode());
    EXPECT_EQ(window.treeModel()->counts(), expected.counts);
    using session::Status;
    for (const Status s : { Status::Error, Status::Warning, Status::Pass }) {
        const QString chip = filter->statusButton(s)->text() + filter->statusButton(s)->toolTip();
        EXPECT_TRUE(chip.contains(QString::number(expected.counts[std::size_t(s)]))) << chip.toStdString();
        EXPECT_FALSE(chip.contains("Pass")) << chip.toStdString();
    }
    EXPECT_TRUE(filter->statusButton(Status::Error)->toolTip().contains("NaN/Inf output"));
    EXPECT_EQ(expected.counts[std::size_t(Status::Error)], std::uint32_t(nanNodes));
    EXPECT_TRUE(filter->statusButton(Status::Unmatched)->isHidden());
    // Showing the NaN/Inf outputs alone hides a finite node and keeps the origin.
    filter->setSpec(ui::FilterSpec { { int(Status::Error) }, 0, 0 });
    EXPECT_FALSE(window.treeRows()->isShown(*tree.find("Functional.gelu.0.forward")));
    EXPECT_TRUE(window.treeRows()->isShown(*tree.find("Torch.sqrt.0.forward")));
    filter->reset();
    // N goes from the origin to the next NaN/Inf node, not to a "failure" of the self-compare (there is none).
    ASSERT_TRUE(window.selectNodeByKey("Torch.sqrt.0.forward"));
    window.nextFailing();
    EXPECT_GE(expected.states.at(window.selectedNodeKey().toStdString()), ui::RunNodeState::NanInfInput)
        << window.selectedNodeKey().toStdString();
    ASSERT_TRUE(window.selectNodeByKey("Torch.sqrt.0.forward"));

    // Details: one side, no verdict, no bench or difference field, no bench stack; the state where a verdict was.
    ui::DetailPanel* detail = window.detailPanel();
    ASSERT_TRUE(detail->isSingleRun());
    ASSERT_TRUE(detail->hasNode());
    const ui::NodeRowsModel* rows = detail->rowsModel();
    QStringList shown;
    for (int f = 0; f < rows->columnCount(); ++f)
        if (!detail->rowsView()->isRowHidden(f))
            shown << rows->headerData(f, Qt::Horizontal).toString();
    EXPECT_TRUE(shown.contains("NPU max")) << shown.join(", ").toStdString();
    for (const QString& field : shown) {
        EXPECT_FALSE(field.contains("Bench") || field.contains("diff") || field.contains("Err") || field == "Verdict")
            << field.toStdString();
    }
    const QString details = detail->detailsText();
    EXPECT_TRUE(details.contains("Status: First NaN/Inf")) << details.toStdString();
    EXPECT_FALSE(details.contains("Pass")) << details.toStdString();
    EXPECT_FALSE(details.contains("Bench")) << details.toStdString();
    EXPECT_FALSE(details.contains(QStringLiteral("\u2194"))) << details.toStdString();
    EXPECT_TRUE(window.grab().save(QStringLiteral(PROBESCOPE_TEST_OUTPUT_DIR "/runview-one-run-details.png")));

    // The rank map: rank 1 holds the first NaN/Inf (the origin row, heavy frame), rank 0 is where it arrived.
    ui::RankOverviewModel* ranks = window.rankOverview();
    ASSERT_TRUE(ranks->isRunMode());
    int originPair = -1;
    int reachedPair = -1;
    for (std::size_t p = 0; p < window.plan()->pairs.size(); ++p)
        (window.plan()->pairs[p].npu.rank == 1 ? originPair : reachedPair) = int(p);
    EXPECT_EQ(ranks->originRow(), originPair);
    EXPECT_EQ(ranks->runRankState(std::size_t(originPair)), ui::RankOverviewModel::RunRankState::Origin);
    EXPECT_EQ(ranks->runRankState(std::size_t(reachedPair)), ui::RankOverviewModel::RunRankState::Reached);
    EXPECT_EQ(ranks->worstStatus(std::size_t(originPair)), Status::Error);
    EXPECT_EQ(ranks->worstStatus(std::size_t(reachedPair)), Status::Error);
    EXPECT_EQ(ranks->runCellText(std::size_t(originPair)), QStringLiteral("\u25b6 NaN"));
    EXPECT_EQ(ranks->index(originPair, ui::RankOverviewModel::FirstFailureColumn).data().toString(), "Torch.sqrt.0.forward");
    EXPECT_TRUE(ranks->originText().contains("Torch.sqrt.0.forward")) << ranks->originText().toStdString();
    QStringList rankTexts;
    collectTexts(*ranks, {}, rankTexts);
    EXPECT_FALSE(rankTexts.join('\n').contains("Pass")) << rankTexts.join('\n').toStdString();
    window.tabs()->setCurrentWidget(window.rankOverviewPanel());
    EXPECT_TRUE(window.grab().save(QStringLiteral(PROBESCOPE_TEST_OUTPUT_DIR "/runview-one-run-ranks.png")));

    // A pair opened afterwards has its verdicts again.
    const fs::path step = overflowCase("allreduce_nan_rank1_2r") / "inputs/step0";
    ASSERT_TRUE(window.openInputs(q(step / "rank0"), q(step / "rank1")));
    std::tie(ok, error) = waitFor(finished);
    EXPECT_FALSE(window.treeModel()->isRunMode());
    EXPECT_FALSE(filter->isRunMode());
    EXPECT_FALSE(detail->isSingleRun());
    EXPECT_FALSE(ranks->isRunMode());
    EXPECT_FALSE(filter->statusButton(Status::Unmatched)->isHidden());
}

TEST(RunWindow, TheRankMapOfAWholeRootSaysWhereTheSearchStopped)
{
    // step0 has no anomaly, step1 the first (p2p), step2 another: the map says "no NaN/Inf origin", the chain, and
    // "not searched" after the first NaN/Inf's step.
    probescope::testing::TempDir tmp;
    copyTree(overflowCase("no_anomaly_2r") / "inputs/step0", tmp.path() / "step0");
    copyTree(overflowCase("p2p_send_recv_2r") / "inputs/step0", tmp.path() / "step1");
    copyTree(overflowCase("allreduce_nan_rank1_2r") / "inputs/step0", tmp.path() / "step2");
    ui::MainWindow window;
    window.setQuiet(true);
    QSignalSpy finished(&window, &ui::MainWindow::analysisFinished);
    ASSERT_TRUE(window.openInputs(q(tmp.path()), {}));
    auto [ok, error] = waitFor(finished);
    ASSERT_TRUE(ok) << error.toStdString();
    ASSERT_NE(window.runAnomaly(), nullptr);
    const auto expected = msprobeOrigin(overflowCase("p2p_send_recv_2r"));
    ASSERT_TRUE(expected);
    using State = ui::RankOverviewModel::RunRankState;
    const ui::RankOverviewModel* ranks = window.rankOverview();
    int origins = 0;
    for (std::size_t p = 0; p < window.plan()->pairs.size(); ++p) {
        const session::RankPair& pair = window.plan()->pairs[p];
        const auto state = ranks->runRankState(p);
        ASSERT_TRUE(state);
        if (pair.step == 0)
            EXPECT_EQ(*state, State::Clean) << pair.label();
        else if (pair.step == 2)
            EXPECT_EQ(*state, State::NotSearched) << pair.label();
        else if (pair.npu.rank == expected->first) {
            EXPECT_EQ(*state, State::Origin) << pair.label();
            EXPECT_EQ(ranks->originRow(), int(p));
            ++origins;
        }
        EXPECT_NE(ranks->worstStatus(p), session::Status::Pass) << pair.label();
    }
    EXPECT_EQ(origins, 1);
    // The rank box names each rank by its one side.
    for (const QComboBox* box : window.findChildren<QComboBox*>())
        for (int i = 0; i < box->count(); ++i)
            EXPECT_FALSE(box->itemText(i).contains(QStringLiteral("\u2194"))) << box->itemText(i).toStdString();
}

TEST(RunWindow, InChineseAndRememberedAsOneRun)
{
    ASSERT_TRUE(ui::switchLanguage(*qApp, QStringLiteral("zh_CN")));
    {
        ui::MainWindow window;
        window.setQuiet(true);
        QSignalSpy finished(&window, &ui::MainWindow::analysisFinished);
        const QString run = q(overflowCase("nan_single_rank") / "inputs");
        ASSERT_TRUE(window.openInputs(run, {}));
        ASSERT_TRUE(analysisSucceeded(finished));
        EXPECT_EQ(window.tabs()->tabText(window.tabs()->indexOf(window.anomalyChainView())), QStringLiteral("首个 NaN/Inf"));
        EXPECT_TRUE(window.statusLine().startsWith(QStringLiteral("首个 NaN/Inf（O）"))) << window.statusLine().toStdString();
        EXPECT_EQ(window.anomalyChain()->headerData(ui::AnomalyChainModel::NodeColumn, Qt::Horizontal).toString(),
                  QStringLiteral("节点"));
        const auto origin = window.treeModel()->tree()->find(window.selectedNodeKey().toStdString());
        ASSERT_TRUE(origin);
        EXPECT_EQ(window.nodeBadges()->badges(ui::NodeBadgeDelegate::NanInf).value(origin->value).text,
                  QStringLiteral("首个 NaN"));
        // The run's own states in Chinese: the Status column, the filter toggles, Details' state, the rank map's state.
        const auto english = [](QString text) {
            text.remove(QStringLiteral("NaN")).remove(QStringLiteral("Inf")).remove(QStringLiteral("Max"))
                .remove(QStringLiteral("Min")).remove(QStringLiteral("dump")).remove(QStringLiteral("overflow_check"));
            return text.contains(QRegularExpression(QStringLiteral("[A-Za-z]{2,}")));
        };
        QStringList texts;
        const auto& tree = *window.treeModel()->tree();
        for (std::uint32_t i = 0; i < tree.size(); ++i) {
            const QModelIndex status = window.treeModel()->indexOf(tree::NodeId { i }, ui::CompareTreeModel::StatusColumn);
            texts << status.data().toString();
            texts << window.treeModel()->indexOf(tree::NodeId { i }).data(Qt::ToolTipRole).toString().section('\n', 1);
        }
        for (const session::Status s : { session::Status::Error, session::Status::Warning, session::Status::Pass })
            texts << window.filterBar()->statusButton(s)->toolTip();
        const QString details = window.detailPanel()->detailsText();
        texts << details.section('\n', 2, 3);
        for (int r = 0; r < window.rankOverview()->rowCount(); ++r)
            texts << window.rankOverview()->index(r, ui::RankOverviewModel::StateColumn).data().toString();
        EXPECT_TRUE(window.rankOverview()->originText().startsWith(QStringLiteral("首个 NaN/Inf："))); // then data
        EXPECT_TRUE(texts.contains(QStringLiteral("有限")) && texts.contains(QStringLiteral("首个 NaN/Inf")))
            << texts.join('\n').toStdString();
        for (const QString& text : texts)
            EXPECT_FALSE(english(text)) << text.toStdString();
        // File → Recent holds the folder alone (it opens as one run again), not the folder against itself.
        const QStringList recent = QSettings().value("recent/pairs").toStringList();
        ASSERT_FALSE(recent.isEmpty());
        EXPECT_EQ(recent.front(), run + QLatin1Char('\n'));
        EXPECT_FALSE(recent.contains(run + QLatin1Char('\n') + run));
    }
    ui::TrendView view;
    EXPECT_EQ(view.statisticBox()->count(), 0);
    EXPECT_TRUE(view.findChildren<QPushButton*>().front()->text().contains(QStringLiteral("标杆")));
    ASSERT_TRUE(ui::switchLanguage(*qApp, QStringLiteral("en")));
}

TEST(RunWindow, ARunWithoutAnAnomalySaysSo)
{
    ui::MainWindow window;
    window.setQuiet(true);
    QSignalSpy finished(&window, &ui::MainWindow::analysisFinished);
    ASSERT_TRUE(window.openInputs(q(overflowCase("no_anomaly_2r") / "inputs/step0"), {}));
    ASSERT_TRUE(analysisSucceeded(finished));
    EXPECT_TRUE(window.isRunShown());
    EXPECT_EQ(window.runAnomaly(), nullptr);
    EXPECT_TRUE(window.statusLine().contains("no NaN/Inf origin")) << window.statusLine().toStdString();
    EXPECT_FALSE(window.jumpToOrigin());
    EXPECT_LT(window.tabs()->indexOf(window.anomalyChainView()), 0);
}

TEST(TrendGrid, AMonitorFolderShowsWhatMsprobesOwnDbHolds)
{
    probescope::testing::ModelTestFailures failures;
    const ui::GraphFileOutcome o = ui::openGraphFile(monitorCase() / "inputs/monitor_output", nullptr);
    ASSERT_FALSE(o.error) << o.error->format();
    ASSERT_TRUE(o.trend);
    EXPECT_EQ(o.trend->path, (monitorCase() / "inputs/monitor_output").string());
    // The oracle: the db msprobe 26's data2db wrote for this folder (--micro_step false).
    auto theirs = graph::readTrendDb(monitorCase() / "expected/db_micro_step_false/monitor_data.trend.db");
    ASSERT_TRUE(theirs) << theirs.error().format();
    const graph::TrendTable& t = **theirs;
    EXPECT_EQ(o.trend->steps, t.steps);
    EXPECT_EQ(o.trend->ranks, t.ranks);

    ui::TrendGridModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Warning);
    model.setTables(o.trend);
    const graph::TrendTable& ours = *o.trend;
    std::size_t compared = 0;
    for (std::size_t i = 0; i < t.values.size(); ++i) {
        const graph::TrendValue& v = t.values[i];
        const graph::TrendTarget& target = t.targets[v.target];
        std::optional<std::uint32_t> mine;
        for (std::size_t k = 0; k < ours.targets.size() && !mine; ++k) {
            if (ours.targets[k].name == target.name && ours.targets[k].vppStage == target.vppStage
                && ours.targets[k].microStep == target.microStep)
                mine = static_cast<std::uint32_t>(k);
        }
        ASSERT_TRUE(mine) << target.name;
        const auto metric = std::find(ours.metrics.begin(), ours.metrics.end(), t.metrics[v.metric]);
        ASSERT_NE(metric, ours.metrics.end());
        for (std::size_t s = 0; s < t.statistics.size(); ++s) {
            const auto stat = ours.statisticIndex(t.statistics[s]);
            ASSERT_TRUE(stat) << t.statistics[s];
            ASSERT_TRUE(model.setSlice(*mine, static_cast<std::uint32_t>(metric - ours.metrics.begin()), *stat));
            const QModelIndex cell = model.index(model.rowOfStep(v.step), model.columnOfRank(v.rank));
            ASSERT_TRUE(cell.isValid());
            const auto expected = t.stat(i, s);
            const QVariant shown = cell.data(ui::TrendGridModel::ValueRole);
            ASSERT_EQ(shown.isValid(), expected.has_value()) << target.name << " " << t.statistics[s];
            if (expected) {
                EXPECT_DOUBLE_EQ(shown.toDouble(), *expected);
            }
            ++compared;
        }
    }
    EXPECT_EQ(compared, t.values.size() * t.statistics.size());

    // Against itself as the bench run: every bench value equals the cell's own, and nothing is shaded.
    model.setBench(*theirs);
    ASSERT_TRUE(model.setSlice(0, 0, *ours.statisticIndex("norm")));
    int cells = 0;
    for (int r = 0; r < model.rowCount(); ++r) {
        for (int c = 0; c < model.columnCount(); ++c) {
            const QModelIndex cell = model.index(r, c);
            if (!cell.data(ui::TrendGridModel::ValueRole).isValid())
                continue;
            ++cells;
            EXPECT_EQ(cell.data(ui::TrendGridModel::BenchValueRole), cell.data(ui::TrendGridModel::ValueRole));
            EXPECT_EQ(cell.data(Qt::BackgroundRole).value<QColor>(), QColor(Qt::white));
        }
    }
    EXPECT_GT(cells, 0);
    EXPECT_FALSE(model.setSlice(0, 0, 99));
    model.setTables(nullptr);
    EXPECT_EQ(model.rowCount(), 0);
}

TEST(TrendView, AnomaliesAreListedAndJumpable)
{
    const ui::GraphFileOutcome o = ui::openGraphFile(monitorCase() / "inputs/monitor_output", nullptr);
    ASSERT_TRUE(o.trend);
    ASSERT_FALSE(o.anomalies.empty());
    // msprobe's own top 8 (anomaly_processor -k 8) are among the listed anomalies.
    const auto top8 = ui::trendAnomaliesOf(readAll(monitorCase() / "expected/anomaly_topk8/anomaly_analyse.json"));
    ASSERT_EQ(top8.size(), 8u);
    std::set<std::tuple<std::int64_t, std::int64_t, std::string, std::string>> listed;
    for (const auto& a : o.anomalies)
        listed.emplace(a.rank, a.step, a.target, a.metric);
    for (const auto& a : top8) {
        EXPECT_TRUE(listed.count({ a.rank, a.step, a.target, a.metric })) << a.target;
        EXPECT_EQ(a.target.find('/'), std::string::npos);
    }
    ui::TrendView view;
    view.setTable(o.trend);
    view.setAnomalies(o.anomalies);
    EXPECT_EQ(view.anomalyList()->topLevelItemCount(), static_cast<int>(o.anomalies.size()));
    // Any statistic the table has is offered (msprobe's monitor dbs have zeros and nans too).
    EXPECT_EQ(view.statisticBox()->count(), static_cast<int>(o.trend->statistics.size()));
    EXPECT_GE(view.statisticBox()->findText("nans"), 0);
    for (int i : { 0, static_cast<int>(o.anomalies.size()) - 1 }) {
        const auto& a = o.anomalies[std::size_t(i)];
        ASSERT_TRUE(view.showAnomaly(i)) << a.target;
        const auto cell = view.selectedCell();
        ASSERT_TRUE(cell);
        EXPECT_EQ(cell->first, a.step);
        EXPECT_EQ(cell->second, a.rank);
        EXPECT_EQ(view.metricBox()->currentText().toStdString(), a.metric);
        const auto target = o.trend->targets[std::size_t(view.targetBox()->currentData().toInt())];
        EXPECT_EQ(target.name, a.target);
        EXPECT_EQ(target.microStep, a.microStep);
        EXPECT_EQ(view.plottedColumn(), view.gridModel()->columnOfRank(a.rank));
    }
    EXPECT_TRUE(view.report().join('\n').contains(QStringLiteral("anomalies: %1").arg(o.anomalies.size())));
}

TEST(TrendWindow, AMonitorFolderOpensDirectlyAndAStepOpensItsDump)
{
    ui::MainWindow window;
    showQuietly(window);
    QSignalSpy finished(&window, &ui::MainWindow::analysisFinished);
    ASSERT_TRUE(window.openInputs(q(monitorCase() / "inputs/monitor_output"), {}));
    ASSERT_TRUE(analysisSucceeded(finished));
    EXPECT_EQ(window.tabs()->currentWidget(), window.trendView());
    EXPECT_FALSE(window.trendView()->anomalies().empty());

    // A bench run overlaid: msprobe's own db of the same folder.
    QSignalSpy bench(&window, &ui::MainWindow::trendBenchLoaded);
    window.openTrendBench(q(monitorCase() / "expected/db_micro_step_false/monitor_data.trend.db"));
    ASSERT_TRUE(bench.wait(60000));
    EXPECT_TRUE(bench.takeFirst().at(0).toBool());
    ASSERT_NE(window.trendView()->benchTable(), nullptr);
    EXPECT_GE(window.trendView()->plot()->graphCount(), 3); // NPU, bench, anomaly marks
    ASSERT_TRUE(window.trendView()->showAnomaly(0));
    // The bench run's series is drawn (msprobe's db of the same folder: as many points as the NPU's).
    ASSERT_GE(window.trendView()->plot()->graphCount(), 3);
    EXPECT_GT(window.trendView()->plot()->graph(1)->dataCount(), 0);
    EXPECT_EQ(window.trendView()->plot()->graph(1)->dataCount(), window.trendView()->plot()->graph(0)->dataCount());
    QCoreApplication::processEvents(); // the plot's queued replot
    EXPECT_TRUE(window.grab().save(QStringLiteral(PROBESCOPE_TEST_OUTPUT_DIR "/runview-trend-bench.png")));

    // From step 0 of rank 1 to that step's dump: the run opens there, the trends stay beside it.
    window.trendView()->setDumpFolder(q(overflowCase("allreduce_nan_rank1_2r") / "inputs"));
    emit window.trendView()->stepDumpRequested(0, 1);
    ASSERT_TRUE(analysisSucceeded(finished));
    EXPECT_TRUE(window.isRunShown());
    EXPECT_EQ(window.plan()->pairs[std::size_t(window.currentPair())].npu.rank, 1);
    EXPECT_GE(window.tabs()->indexOf(window.trendView()), 0);
    EXPECT_NE(window.trendView()->table(), nullptr);
}
