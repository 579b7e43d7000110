// SPDX-License-Identifier: Apache-2.0
// Load problems are shown, not swallowed (issue 19, item 2): a dump.json cut short opens with its salvaged
// entries, a banner above the tree says so, and the Diagnostics tab lists file:line:col, id and message.
#include "ui/models/diagnosticsmodel.h"
#include "ui/inspect/nodetrendplot.h"
#include "ui/panels/loadproblembanner.h"
#include "ui/views/mainwindow.h"

#include "testconfig.h"

#include <QAbstractItemModelTester>
#include <QFile>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>

#include <gtest/gtest.h>

#include <filesystem>

using namespace probescope;
using probescope::ui::DiagnosticsModel;
using probescope::ui::MainWindow;

namespace {

QString fixtureStep(const char* side)
{
    return QString::fromStdString((probescope::testing::fixturesDir() / "modelA_tensor_mix" / side / "step0").string());
}

// A copy of the NPU side's step0 whose dump.json is cut to `percent` of its size, as a crashed run leaves it.
QString truncatedCopy(const QTemporaryDir& tmp, int percent)
{
    namespace fs = std::filesystem;
    const fs::path to = fs::path(tmp.path().toStdString()) / "step0";
    fs::copy(fixtureStep("npu").toStdString(), to, fs::copy_options::recursive);
    const fs::path json = to / "rank" / "dump.json";
    fs::resize_file(json, fs::file_size(json) * static_cast<std::uintmax_t>(percent) / 100);
    return QString::fromStdString(to.string());
}

bool waitForCompare(QSignalSpy& spy)
{
    if (spy.isEmpty() && !spy.wait(120000))
        return false;
    return spy.takeFirst().at(0).toBool();
}

} // namespace

TEST(LoadProblems, TruncatedDumpShowsBannerAndDiagnostics)
{
    QTemporaryDir tmp;
    ASSERT_TRUE(tmp.isValid());
    const QString npu = truncatedCopy(tmp, 60);

    MainWindow window;
    window.setQuiet(true);
    window.resize(1400, 860);
    window.show();
    QAbstractItemModelTester tester(window.diagnosticsModel(), QAbstractItemModelTester::FailureReportingMode::Fatal);
    QSignalSpy finished(&window, &MainWindow::analysisFinished);
    ASSERT_TRUE(window.openInputs(npu, fixtureStep("bench")));
    // Salvaged entries still compare: the run succeeds, but says what was lost.
    ASSERT_TRUE(waitForCompare(finished));

    const DiagnosticsModel* model = window.diagnosticsModel();
    int truncatedRow = -1;
    for (int r = 0; r < model->rowCount(); ++r) {
        if (model->index(r, DiagnosticsModel::IdColumn).data().toString() == "dump.truncated")
            truncatedRow = r;
    }
    ASSERT_GE(truncatedRow, 0) << "no dump.truncated diagnostic among " << model->rowCount() << " rows";
    const QString location = model->index(truncatedRow, DiagnosticsModel::LocationColumn).data().toString();
    EXPECT_TRUE(QRegularExpression(QStringLiteral("/rank/dump\\.json:[1-9][0-9]*:[1-9][0-9]*$")).match(location).hasMatch())
        << location.toStdString();
    EXPECT_TRUE(model->index(truncatedRow, DiagnosticsModel::MessageColumn).data().toString().contains("cut short"));
    EXPECT_EQ(model->index(truncatedRow, DiagnosticsModel::SeverityColumn).data().toString(), "error");

    ui::LoadProblemBanner* banner = window.loadProblemBanner();
    ASSERT_TRUE(banner->isVisible());
    EXPECT_TRUE(banner->text().contains("dump.json")) << banner->text().toStdString();
    EXPECT_TRUE(banner->text().contains("cut short")) << banner->text().toStdString();

    // "Show diagnostics" brings the list to the front.
    auto* tabs = window.findChild<QTabWidget*>();
    ASSERT_NE(tabs, nullptr);
    auto* list = window.findChild<QTableView*>("diagnostics");
    ASSERT_NE(list, nullptr);
    EXPECT_NE(tabs->currentWidget(), list);
    auto* button = banner->findChild<QWidget*>("showDiagnostics");
    ASSERT_NE(button, nullptr);
    QTest::mouseClick(button, Qt::LeftButton);
    EXPECT_EQ(tabs->currentWidget(), list);
    EXPECT_TRUE(tabs->tabText(tabs->currentIndex()).contains(QString::number(model->rowCount())));
    EXPECT_TRUE(window.grab().save(QStringLiteral(PROBESCOPE_TEST_OUTPUT_DIR "/loadproblems-truncated.png")));

    // A clean pair afterwards: no banner, an empty list (nothing stale from the previous pair).
    ASSERT_TRUE(window.openInputs(fixtureStep("npu"), fixtureStep("bench")));
    EXPECT_FALSE(banner->isVisible());
    ASSERT_TRUE(waitForCompare(finished));
    EXPECT_FALSE(banner->isVisible());
    EXPECT_EQ(model->problemCount(), 0);
}

TEST(LoadProblems, BannerCountsProblemsAndIgnoresInfos)
{
    ui::LoadProblemBanner banner;
    banner.show();
    banner.setDiagnostics({ makeWarning("stack.unreadable", { "/d/stack.json", std::nullopt, 3, 7 }, "bad stack") });
    EXPECT_TRUE(banner.isVisible());
    EXPECT_TRUE(banner.text().contains("stack.json: bad stack")) << banner.text().toStdString();
    EXPECT_FALSE(banner.text().contains("problems in all"));

    // Errors come first whatever the order they were found in.
    banner.setDiagnostics({ makeWarning("w", { "/d/stack.json", std::nullopt, 0, 0 }, "later"),
                            makeError("dump.truncated", { "/d/dump.json", std::nullopt, 10, 1 }, "cut") });
    EXPECT_TRUE(banner.text().contains("dump.json: cut")) << banner.text().toStdString();
    EXPECT_TRUE(banner.text().contains("2 problems in all")) << banner.text().toStdString();

    Diagnostic info;
    info.severity = Severity::Info;
    info.id = "i";
    banner.setDiagnostics({ info });
    EXPECT_FALSE(banner.isVisible());
}

TEST(LoadProblems, ModelShowsEachFindingOnceWithItsPosition)
{
    DiagnosticsModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Fatal);
    const Diagnostic cut = makeError("dump.truncated", { "/d/dump.json", std::nullopt, 12, 5 }, "cut");
    model.setDiagnostics({ cut, cut, makeWarning("w", { "/d/stack.json", std::nullopt, 0, 0 }, "no line") });
    ASSERT_EQ(model.rowCount(), 2);
    EXPECT_EQ(model.index(0, DiagnosticsModel::LocationColumn).data().toString(), "/d/dump.json:12:5");
    EXPECT_EQ(model.index(1, DiagnosticsModel::LocationColumn).data().toString(), "/d/stack.json");
    EXPECT_EQ(model.index(1, DiagnosticsModel::SeverityColumn).data().toString(), "warning");
    EXPECT_EQ(model.problemCount(), 2);
    model.clear();
    EXPECT_EQ(model.rowCount(), 0);
}

// Issue 25: what the trend plot's load step finds in other steps' and ranks' dumps joins the banner and the
// Diagnostics tab, and a later clean load takes it away again.
TEST(LoadProblems, TrendPlotFindingsJoinTheBannerAndDiagnostics)
{
    MainWindow window;
    window.setQuiet(true);
    auto* trend = window.findChild<probescope::ui::NodeTrendPlot*>();
    ASSERT_NE(trend, nullptr);
    const Diagnostic cut = makeError("dump.truncated", SourceLocation { "/x/bench/step1/rank/dump.json", 30000, 12, 3 },
                                     "the file was cut short after 30000 bytes");
    emit trend->loadProblems(Diagnostics { cut });
    const DiagnosticsModel* model = window.diagnosticsModel();
    ASSERT_EQ(model->rowCount(), 1);
    EXPECT_EQ(model->index(0, DiagnosticsModel::IdColumn).data().toString(), QStringLiteral("dump.truncated"));
    EXPECT_TRUE(window.loadProblemBanner()->isVisibleTo(&window));
    EXPECT_TRUE(window.loadProblemBanner()->text().contains(QStringLiteral("cut short"))) << window.loadProblemBanner()->text().toStdString();
    emit trend->loadProblems(Diagnostics {});
    EXPECT_EQ(model->rowCount(), 0);
}
