// SPDX-License-Identifier: Apache-2.0
// Issue 35 in the GUI: the "Check setup" page on msprobe 26's real config_check packs and checkpoints, its models
// under QAbstractItemModelTester, and the whole-job view's merge_result table made from a real 3-rank job's compare
// results in memory, checked against msprobe's own merged workbook (the CSVs beside it).

#include "core/compare/msprobe26/commmerge.h"
#include "core/compare/msprobe26/mergeresult.h"
#include "core/setupcheck/setupinputs.h"
#include "ui/jobs/overviewjob.h"
#include "ui/jobs/setupcheckjob.h"
#include "ui/models/commmergemodel.h"
#include "ui/models/rankoverviewmodel.h"
#include "ui/models/setupcheckmodels.h"
#include "ui/views/commmergepanel.h"
#include "ui/views/mainwindow.h"
#include "ui/views/setupcheckpage.h"

#include "core/csvread.h"
#include "core/tempdir.h"
#include "modeltestfailures.h"
#include "testconfig.h"

#include <QAbstractItemModelTester>
#include <QApplication>
#include <QComboBox>
#include <QDropEvent>
#include <QMenu>
#include <QMenuBar>
#include <QMimeData>
#include <QTabWidget>
#include <QUrl>
#include <QHeaderView>
#include <QProgressBar>
#include <QPushButton>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QTest>

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

using namespace probescope;
using namespace probescope::ui;
using probescope::testing::fixturesDir;

namespace {

constexpr int kTimeoutMs = 120000;

std::filesystem::path workflow()
{
    return fixturesDir() / "msprobe26_workflow";
}

QString q(const std::filesystem::path& p)
{
    return QString::fromStdString(p.string());
}

using probescope::testing::readCsv;

const std::filesystem::path kDynamic = "config_check/dynamic_weights_dataset_random";

std::shared_ptr<const std::vector<compare::XlsxSheet>> dynamicSheets()
{
    static const auto sheets = [] {
        auto result = setupcheck::comparePackZips(workflow() / kDynamic / "inputs/bench.zip",
                                                  workflow() / kDynamic / "inputs/cmp.zip");
        EXPECT_TRUE(result) << (result ? "" : result.error().message);
        return std::make_shared<const std::vector<compare::XlsxSheet>>(result ? *result : std::vector<compare::XlsxSheet> {});
    }();
    return sheets;
}

} // namespace

// ---- inputs ----------------------------------------------------------------------------------------------------

TEST(SetupInputs, PacksCheckpointsAndRunFolders)
{
    using Kind = setupcheck::SetupInput::Kind;
    const auto zip = workflow() / kDynamic / "inputs/bench.zip";
    EXPECT_EQ(setupcheck::classifySetupInput(zip).kind, Kind::Pack);
    const auto ckpt = workflow() / "ckpt_compare/tp2/inputs/ckptA";
    EXPECT_EQ(setupcheck::classifySetupInput(ckpt).kind, Kind::Checkpoint);
    // An iteration folder is a checkpoint too (it holds mp_rank_*).
    EXPECT_EQ(setupcheck::classifySetupInput(ckpt / "iter_0000100").kind, Kind::Checkpoint);

    // A run's folder: the pack beside the dump folder is found from the dump folder (its parent) and from the run.
    probescope::testing::TempDir tmp;
    std::filesystem::create_directories(tmp.path() / "run/dump/step0/rank0");
    std::filesystem::copy_file(zip, tmp.path() / "run/config_pack.zip");
    tmp.write("run/notes.zip", "not a zip at all");
    const auto fromDump = setupcheck::classifySetupInput(tmp.path() / "run/dump");
    EXPECT_EQ(fromDump.kind, Kind::Pack);
    EXPECT_EQ(fromDump.path.filename(), "config_pack.zip");
    EXPECT_EQ(setupcheck::classifySetupInput(tmp.path() / "run").path.filename(), "config_pack.zip");
    // Two packs side by side: ambiguous, and the reason names both.
    std::filesystem::copy_file(zip, tmp.path() / "run/other_pack.zip");
    const auto ambiguous = setupcheck::classifySetupInput(tmp.path() / "run");
    EXPECT_EQ(ambiguous.kind, Kind::None);
    EXPECT_NE(ambiguous.why.find("config_pack.zip, other_pack.zip"), std::string::npos) << ambiguous.why;

    // A pack and a checkpoint are not a pair; the error names the path.
    const auto mixed = setupcheck::classifySetupPair(zip, ckpt);
    ASSERT_FALSE(mixed);
    EXPECT_EQ(mixed.error().id, "setup.input");
    EXPECT_NE(mixed.error().message.find(ckpt.string()), std::string::npos);
    const auto missing = setupcheck::classifySetupPair(zip, tmp.path() / "nothere");
    ASSERT_FALSE(missing);
    EXPECT_NE(missing.error().message.find("nothere: no such file or folder"), std::string::npos);

    // What a drop onto the window takes for a setup check: two zips or two checkpoints, never two dump folders.
    EXPECT_TRUE(isSetupCheckPair(q(zip), q(workflow() / kDynamic / "inputs/cmp.zip")));
    EXPECT_TRUE(isSetupCheckPair(q(ckpt), q(workflow() / "ckpt_compare/tp2/inputs/ckptB")));
    EXPECT_FALSE(isSetupCheckPair(q(tmp.path() / "run/dump"), q(tmp.path() / "run/dump")));
    EXPECT_FALSE(isSetupCheckPair(q(zip), q(ckpt)));
}

TEST(SetupInputs, PackCompareLeavesNothingBehindAndRefusesHostileZips)
{
    probescope::testing::TempDir tmp;
    auto sheets = setupcheck::comparePackZips(workflow() / kDynamic / "inputs/bench.zip",
                                              workflow() / kDynamic / "inputs/cmp.zip", tmp.path());
    ASSERT_TRUE(sheets) << sheets.error().message;
    EXPECT_TRUE(std::filesystem::is_empty(tmp.path())) << "the scratch folder was not removed";
    // The same sheets as the CLI's result.xlsx: the summary's rows equal msprobe's.
    const auto expected = readCsv(workflow() / kDynamic / "expected/result.summary.csv");
    ASSERT_EQ(sheets->front().rows.size() + 1, expected.size());
    for (std::size_t r = 0; r < sheets->front().rows.size(); ++r) {
        EXPECT_EQ(sheets->front().rows[r][0].text, expected[r + 1][0]);
        EXPECT_EQ(sheets->front().rows[r][1].text, expected[r + 1][1]);
    }
    const auto evil = probescope::testing::testDataDir() / "configcheck/evil_dotdot.zip";
    auto refused = setupcheck::comparePackZips(evil, workflow() / kDynamic / "inputs/cmp.zip", tmp.path());
    ASSERT_FALSE(refused);
    EXPECT_NE(refused.error().message.find("evil_dotdot.zip"), std::string::npos) << refused.error().message;
    EXPECT_TRUE(std::filesystem::is_empty(tmp.path()));
    const auto bomb = probescope::testing::testDataDir() / "configcheck/bomb.zip";
    auto bombed = setupcheck::comparePackZips(workflow() / kDynamic / "inputs/bench.zip", bomb, tmp.path());
    ASSERT_FALSE(bombed);
    EXPECT_NE(bombed.error().message.find("bomb.zip"), std::string::npos) << bombed.error().message;
    EXPECT_TRUE(std::filesystem::is_empty(tmp.path()));

    // Cancelled before it starts: nothing is compared, the outcome says so.
    JobProgress progress;
    progress.cancel();
    const auto cancelled = runSetupCheck(workflow() / kDynamic / "inputs/bench.zip",
                                         workflow() / kDynamic / "inputs/cmp.zip", &progress);
    EXPECT_TRUE(cancelled.cancelled);
    EXPECT_TRUE(cancelled.sheets.empty());
}

// ---- models ----------------------------------------------------------------------------------------------------

TEST(SetupCheckModels, SummaryPutsTheLikelyCauseFirstAndOpensEachSheet)
{
    probescope::testing::ModelTestFailures failures;
    const auto sheets = dynamicSheets();
    ASSERT_FALSE(sheets->empty());
    SetupSummaryModel summary;
    QAbstractItemModelTester tester(&summary, QAbstractItemModelTester::FailureReportingMode::Warning);
    summary.setSheets(sheets);
    // msprobe's summary: env pass, pip pass, dataset error, weights error, hyperparameters pass, random error.
    // Errors first, each group in the likely-cause order (hyperparameters, weights, dataset, random, env, pip).
    QStringList order;
    for (int r = 0; r < summary.rowCount(); ++r)
        order << summary.index(r, SetupSummaryModel::CheckColumn).data().toString();
    EXPECT_EQ(order, (QStringList { "weights", "dataset", "random", "hyperparameters", "env", "pip" }));
    EXPECT_EQ(summary.index(0, 0).data(SetupStatusRole).toInt(), static_cast<int>(session::Status::Error));
    EXPECT_EQ(summary.index(3, 0).data(SetupStatusRole).toInt(), static_cast<int>(session::Status::Pass));

    // Each row opens its sheet: the weights rows, the ones msprobe marks equal=False first.
    SetupSheetModel sheet;
    QAbstractItemModelTester sheetTester(&sheet, QAbstractItemModelTester::FailureReportingMode::Warning);
    sheet.setSheet(sheets, summary.sheetOfRow(0));
    EXPECT_EQ(sheet.sheetName(), "weights");
    const auto csv = readCsv(workflow() / kDynamic / "expected/result.weights.csv");
    ASSERT_EQ(sheet.rowCount() + 1, static_cast<int>(csv.size()));
    ASSERT_EQ(sheet.columnCount(), static_cast<int>(csv[0].size()));
    int falses = 0;
    for (std::size_t r = 1; r < csv.size(); ++r)
        falses += csv[r][3] == "False" ? 1 : 0;
    ASSERT_GT(falses, 0);
    ASSERT_LT(falses, sheet.rowCount());
    for (int r = 0; r < sheet.rowCount(); ++r) {
        const bool bad = r < falses;
        EXPECT_EQ(sheet.index(r, 3).data().toString(), bad ? "False" : "True") << r;
        EXPECT_EQ(sheet.index(r, 0).data(SetupStatusRole).toInt(),
                  static_cast<int>(bad ? session::Status::Error : session::Status::Pass));
    }
    // The flagged count in the summary is the same number.
    EXPECT_EQ(summary.index(0, SetupSummaryModel::FlaggedColumn).data().toString(),
              QString("%1 of %2").arg(falses).arg(sheet.rowCount()));
    // The env sheet of GPU vs NPU packs: levels from msprobe's own column.
    auto gpuNpu = setupcheck::comparePackZips(workflow() / "config_check/static_gpu_vs_npu/inputs/bench.zip",
                                              workflow() / "config_check/static_gpu_vs_npu/inputs/cmp.zip");
    ASSERT_TRUE(gpuNpu);
    auto shared = std::make_shared<const std::vector<compare::XlsxSheet>>(std::move(*gpuNpu));
    summary.setSheets(shared);
    order.clear();
    for (int r = 0; r < summary.rowCount(); ++r)
        order << summary.index(r, 0).data().toString();
    EXPECT_EQ(order, (QStringList { "hyperparameters", "env", "pip" }));
    sheet.setSheet(shared, summary.sheetOfRow(1));
    EXPECT_EQ(sheet.sheetName(), "env");
    const auto envCsv = readCsv(workflow() / "config_check/static_gpu_vs_npu/expected/result.env.csv");
    ASSERT_EQ(sheet.rowCount() + 1, static_cast<int>(envCsv.size()));
    EXPECT_EQ(sheet.index(0, 4).data().toString(), "error");
    EXPECT_EQ(sheet.index(sheet.rowCount() - 1, 4).data().toString() == "error", false);
    sheet.setSheet(nullptr, -1);
    EXPECT_EQ(sheet.rowCount(), 0);
}

TEST(SetupCheckModels, CheckpointTableSortsByCosAndL2)
{
    probescope::testing::ModelTestFailures failures;
    JobProgress progress;
    const auto outcome = runSetupCheck(workflow() / "ckpt_compare/tp2_pp2_legacy_names/inputs/ckptA",
                                       workflow() / "ckpt_compare/tp2_pp2_legacy_names/inputs/ckptB/iter_0000200", &progress);
    ASSERT_FALSE(outcome.error) << outcome.error->message;
    ASSERT_TRUE(outcome.checkpoints);
    CheckpointModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Warning);
    model.setComparison(outcome.checkpoints);
    const auto& params = outcome.checkpoints->params;
    ASSERT_EQ(model.rowCount(), static_cast<int>(params.size() + outcome.checkpoints->onlyInFirst.size()
                                                 + outcome.checkpoints->onlyInSecond.size()));
    QSortFilterProxyModel proxy;
    proxy.setSourceModel(&model);
    proxy.setSortRole(SetupSortRole);
    QAbstractItemModelTester proxyTester(&proxy, QAbstractItemModelTester::FailureReportingMode::Warning);
    double lowestCos = 2;
    double largestL2 = -1;
    for (const auto& p : params) {
        if (p.cos)
            lowestCos = std::min(lowestCos, *p.cos);
        if (p.l2)
            largestL2 = std::max(largestL2, *p.l2);
    }
    proxy.sort(CheckpointModel::CosColumn, Qt::AscendingOrder);
    double previous = -std::numeric_limits<double>::infinity();
    for (int r = 0; r < proxy.rowCount(); ++r) {
        const double cos = proxy.index(r, CheckpointModel::CosColumn).data(SetupSortRole).toDouble();
        EXPECT_LE(previous, cos) << r;
        previous = cos;
    }
    // The lowest real cos is the first row that has one.
    for (int r = 0; r < proxy.rowCount(); ++r) {
        if (proxy.index(r, CheckpointModel::CosColumn).data().toString() != "None"
            && !proxy.index(r, CheckpointModel::CosColumn).data().toString().isEmpty()) {
            EXPECT_EQ(proxy.index(r, CheckpointModel::CosColumn).data(SetupSortRole).toDouble(), lowestCos);
            break;
        }
    }
    proxy.sort(CheckpointModel::L2Column, Qt::DescendingOrder);
    int first = 0;
    while (first < proxy.rowCount() && std::isinf(proxy.index(first, CheckpointModel::L2Column).data(SetupSortRole).toDouble()))
        ++first;
    ASSERT_LT(first, proxy.rowCount());
    EXPECT_EQ(proxy.index(first, CheckpointModel::L2Column).data(SetupSortRole).toDouble(), largestL2);
    // Every row's name, cos and l2 are the ones the compare gave (the ckpt_similarity.json values, checked in the
    // core tests).
    for (std::size_t i = 0; i < params.size(); ++i) {
        const int r = static_cast<int>(i);
        EXPECT_EQ(model.index(r, CheckpointModel::NameColumn).data().toString().toStdString(), params[i].name);
        if (params[i].cos) {
            EXPECT_EQ(model.index(r, CheckpointModel::CosColumn).data(SetupSortRole).toDouble(), *params[i].cos);
        }
    }
}

// ---- the page --------------------------------------------------------------------------------------------------

TEST(SetupCheckPage, PacksShowTheSummaryAndTheFirstChecksRows)
{
    SetupCheckPage page;
    QSignalSpy finished(&page, &SetupCheckPage::finished);
    page.open(q(workflow() / kDynamic / "inputs/bench.zip"), q(workflow() / kDynamic / "inputs/cmp.zip"));
    EXPECT_TRUE(page.isRunning());
    ASSERT_TRUE(QTest::qWaitFor([&] { return finished.count() > 0; }, kTimeoutMs));
    EXPECT_TRUE(finished.at(0).at(0).toBool()) << finished.at(0).at(1).toString().toStdString();
    EXPECT_FALSE(page.progressBar()->isVisibleTo(&page));
    EXPECT_FALSE(page.cancelButton()->isVisibleTo(&page));
    ASSERT_EQ(page.summaryModel()->rowCount(), 6);
    // The likely cause is selected and its rows shown.
    EXPECT_EQ(page.sheetModel()->sheetName(), "weights");
    page.showDetails(2);
    EXPECT_EQ(page.sheetModel()->sheetName(), "random");
    EXPECT_EQ(page.reportLines().value(0), "weights: error (28 rows)");
}

TEST(SetupCheckPage, CheckpointsAndErrors)
{
    SetupCheckPage page;
    QSignalSpy finished(&page, &SetupCheckPage::finished);
    page.open(q(workflow() / "ckpt_compare/tp2/inputs/ckptA"), q(workflow() / "ckpt_compare/tp2/inputs/ckptB"));
    ASSERT_TRUE(QTest::qWaitFor([&] { return finished.count() > 0; }, kTimeoutMs));
    ASSERT_TRUE(finished.at(0).at(0).toBool()) << finished.at(0).at(1).toString().toStdString();
    EXPECT_GT(page.checkpointModel()->rowCount(), 0);
    // Sorted by cos, lowest first, as the page opens.
    EXPECT_EQ(page.checkpointView()->horizontalHeader()->sortIndicatorSection(), CheckpointModel::CosColumn);
    const QStringList lines = page.reportLines();
    ASSERT_EQ(lines.size(), 2);
    EXPECT_TRUE(lines[0].startsWith("checkpoints: ")) << lines[0].toStdString();

    // A hostile pack: the error names the zip, the page says so and keeps nothing half-done.
    page.open(q(probescope::testing::testDataDir() / "configcheck/evil_dotdot.zip"),
              q(workflow() / kDynamic / "inputs/cmp.zip"));
    ASSERT_TRUE(QTest::qWaitFor([&] { return finished.count() > 1; }, kTimeoutMs));
    EXPECT_FALSE(finished.at(1).at(0).toBool());
    EXPECT_TRUE(finished.at(1).at(1).toString().contains("evil_dotdot.zip"));
}

// ---- the job view's merge_result table ----------------------------------------------------------------------

namespace {

const std::filesystem::path kMerge = "merge_result/summary_3ranks";

/// The 3-rank job of the merge fixture analysed by the overview (msprobe 26 profile), in a RankOverviewModel.
struct JobRun
{
    session::SessionPlan plan;
    RankOverviewModel model;
    OverviewJob job;
    bool done = false;

    bool run()
    {
        auto planned = session::planSession(workflow() / kMerge / "inputs/dump/npu/step0",
                                            workflow() / kMerge / "inputs/dump/bench/step0");
        if (!planned)
            return false;
        plan = *planned;
        model.setPlan(plan);
        QObject::connect(&job, &OverviewJob::summariesReady, &model, &RankOverviewModel::setSummaries);
        QObject::connect(&job, &OverviewJob::finished, [this] { done = true; });
        job.startAll(plan, CompareSettings { 1, false, Profile::Msprobe26 });
        return QTest::qWaitFor([this] { return done; }, kTimeoutMs);
    }
};

double numberOf(const std::string& text)
{
    return std::strtod(text.c_str(), nullptr);
}

} // namespace

TEST(CommMerge, TheJobsTableEqualsMsprobesMergedWorkbook)
{
    JobRun job;
    ASSERT_TRUE(job.run());
    ASSERT_EQ(job.plan.pairs.size(), 3u);
    // The core merge with the fixture's merge_all_indexes.yaml (all_reduce, broadcast, all_gather; every index).
    std::vector<compare::msprobe26::RankCommInput> ranks;
    for (std::size_t i = 0; i < job.plan.pairs.size(); ++i) {
        const auto* summary = job.model.summary(i);
        ASSERT_TRUE(summary && summary->comm);
        ranks.push_back({ summary->failure.rank, summary->comm });
    }
    auto config = compare::msprobe26::loadMergeConfig(workflow() / kMerge / "inputs/merge_all_indexes.yaml");
    ASSERT_TRUE(config);
    std::vector<std::string> notes;
    const auto sheets = compare::msprobe26::mergeCommRows(ranks, *config, notes);
    const auto folder = workflow() / kMerge / "expected/merge_all_indexes";
    ASSERT_EQ(sheets.size(), 9u);
    for (const auto& sheet : sheets) {
        SCOPED_TRACE(sheet.name);
        const auto csv = readCsv(folder / ("multi_ranks_compare_merge_20261128061146." + sheet.name + ".csv"));
        ASSERT_EQ(sheet.header, csv[0]);
        ASSERT_EQ(sheet.rows.size() + 1, csv.size());
        for (std::size_t r = 0; r < sheet.rows.size(); ++r) {
            EXPECT_EQ(sheet.rows[r][0].text, csv[r + 1][0]);
            for (std::size_t c = 1; c < sheet.header.size(); ++c) {
                const auto& cell = sheet.rows[r][c];
                const std::string& want = csv[r + 1][c];
                // A statistics compare keeps some diffs as texts of full repr digits; they are numbers all the same.
                char* end = nullptr;
                const double asNumber = cell.kind == compare::XlsxSheetCell::Kind::Text
                    ? std::strtod(cell.text.c_str(), &end)
                    : cell.number;
                const bool numeric = cell.kind == compare::XlsxSheetCell::Kind::Number
                    || (cell.kind == compare::XlsxSheetCell::Kind::Text && !cell.text.empty() && end && *end == '\0');
                if (numeric) {
                    // msprobe's CSV went through pandas' xstrtod, which keeps 17 digits: equal to 1e-13.
                    EXPECT_NEAR(asNumber, numberOf(want), 1e-13 * std::max(1.0, std::fabs(numberOf(want))))
                        << r << "," << c;
                } else {
                    EXPECT_EQ(setupCellText(cell).toStdString(), want) << r << "," << c;
                }
            }
        }
    }
}

TEST(CommMerge, ModelFollowsTheOverviewWithoutAnyFile)
{
    probescope::testing::ModelTestFailures failures;
    JobRun job;
    CommMergeModel model(&job.model);
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Warning);
    ASSERT_TRUE(job.run());
    model.rebuild();
    EXPECT_EQ(model.ranksTotal(), 3);
    EXPECT_EQ(model.ranksDone(), 3);
    EXPECT_EQ(model.metrics(), (QStringList { "Max diff", "Min diff", "Mean diff", "L2norm diff", "MaxRelativeErr",
                                              "MinRelativeErr", "MeanRelativeErr", "NormRelativeErr",
                                              "Requires_grad Consistent" }));
    ASSERT_EQ(model.columnCount(), 4);
    EXPECT_EQ(model.headerData(1, Qt::Horizontal).toString(), "rank0");
    EXPECT_EQ(model.headerData(3, Qt::Horizontal).toString(), "rank2");
    // Every communication row of msprobe's merge (all three APIs) is there, with the same Max diff values.
    const auto csv = readCsv(workflow() / kMerge / "expected/merge_all_indexes/multi_ranks_compare_merge_20261128061146.Max diff.csv");
    ASSERT_EQ(model.rowCount() + 1, static_cast<int>(csv.size()));
    std::map<std::string, std::vector<std::string>> expected;
    for (std::size_t r = 1; r < csv.size(); ++r)
        expected[csv[r][0]] = csv[r];
    for (int r = 0; r < model.rowCount(); ++r) {
        const std::string name = model.index(r, 0).data().toString().toStdString();
        ASSERT_TRUE(expected.count(name)) << name;
        for (int c = 1; c < 4; ++c)
            EXPECT_NEAR(model.index(r, c).data(CommMergeModel::SortRole).toDouble(),
                        numberOf(expected[name][static_cast<std::size_t>(c)]), 1e-13)
                << name << " rank" << c - 1;
    }
    model.setMetric(8);
    EXPECT_EQ(model.index(0, 1).data().toString(), "True");

    // The panel of the whole-job view over the same model.
    CommMergePanel panel(&job.model);
    panel.model()->rebuild();
    EXPECT_EQ(panel.metricBox()->count(), 9);
    EXPECT_EQ(panel.table()->model()->rowCount(), model.rowCount() == 0 ? 0 : panel.model()->rowCount());
    EXPECT_GT(panel.table()->model()->rowCount(), 0);
}

// The whole-job view: a job opened in the window fills its Communication ops tab from the overview, and a drop of
// two packs on the window opens the Check setup page (File menu has it too).
TEST(CommMerge, TheWindowsJobViewAndEntryPoints)
{
    MainWindow window;
    window.resize(1366, 768);
    window.show();
    QSignalSpy overview(&window, &MainWindow::overviewFinished);
    ASSERT_TRUE(window.openInputs(q(workflow() / kMerge / "inputs/dump/npu"), q(workflow() / kMerge / "inputs/dump/bench")));
    ASSERT_TRUE(overview.wait(kTimeoutMs));
    CommMergePanel* panel = window.commMergePanel();
    ASSERT_NE(panel, nullptr);
    QTabWidget* tabs = window.tabs();
    const int tab = tabs->indexOf(panel);
    ASSERT_GE(tab, 0);
    EXPECT_EQ(tabs->tabText(tab), "Communication ops");
    tabs->setCurrentIndex(tab);
    ASSERT_TRUE(QTest::qWaitFor([&] { return panel->model()->ranksDone() == 3; }, kTimeoutMs));
    EXPECT_EQ(panel->model()->ranksTotal(), 3);
    // The window compares with its profile (msprobe 1.2 by default), whose statistics table has no
    // Requires_grad Consistent: the eight statistics indexes.
    EXPECT_EQ(panel->metricBox()->count(), 8);
    EXPECT_EQ(panel->model()->rowCount(), 16); // msprobe's merged sheets have 16 rows (all_reduce, broadcast, all_gather)
    QApplication::processEvents();
    EXPECT_TRUE(window.grab().save(QString::fromStdString(
        (std::filesystem::path(PROBESCOPE_TEST_OUTPUT_DIR) / "setupgui-comm.png").string())));

    // File → Check setup… is there.
    bool inMenu = false;
    for (QAction* menu : window.menuBar()->actions()) {
        for (QAction* a : menu->menu() ? menu->menu()->actions() : QList<QAction*> {})
            inMenu = inMenu || a->text().contains("Check &setup");
    }
    EXPECT_TRUE(inMenu);
    // A drop of two packs: the page, checking them.
    QMimeData mime;
    mime.setUrls({ QUrl::fromLocalFile(q(workflow() / kDynamic / "inputs/bench.zip")),
                   QUrl::fromLocalFile(q(workflow() / kDynamic / "inputs/cmp.zip")) });
    const QPoint at = window.rect().center();
    QDragEnterEvent enter(at, Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(&window, &enter);
    EXPECT_TRUE(enter.isAccepted());
    QDropEvent drop(at, Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(&window, &drop);
    EXPECT_TRUE(drop.isAccepted());
    auto* page = window.findChild<SetupCheckPage*>();
    ASSERT_NE(page, nullptr);
    EXPECT_TRUE(page->isWindow());
    ASSERT_TRUE(QTest::qWaitFor([&] { return !page->isRunning(); }, kTimeoutMs));
    EXPECT_EQ(page->summaryModel()->rowCount(), 6);
    // The window itself did not start a dump compare of the zips.
    EXPECT_EQ(panel->model()->ranksDone(), 3);
}
