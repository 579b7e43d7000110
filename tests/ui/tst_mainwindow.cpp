// SPDX-License-Identifier: Apache-2.0
// The main window end to end, offscreen: open each fixture pair, wait for the compare (signals, not
// sleeps), check the first failing node is selected; cancel and reopen mid-run; keyboard navigation.
#include "ui/models/comparetreemodel.h"
#include "ui/models/rankoverviewmodel.h"
#include "ui/models/treerowsmodel.h"
#include "ui/panels/detailpanel.h"
#include "ui/views/comparetreeview.h"
#include "ui/views/mainwindow.h"
#include "core/session/paircache.h"

#include "testconfig.h"

#include <QSignalSpy>
#include <QTest>

#include <gtest/gtest.h>

#include <filesystem>
#include <map>

using namespace probescope;
using probescope::ui::MainWindow;

namespace {

QString fixture(const char* name, const char* side)
{
    return QString::fromStdString((probescope::testing::fixturesDir() / name / side).string());
}

// Waits for the window's analysisFinished and returns its arguments.
std::pair<bool, QString> waitForCompare(MainWindow&, QSignalSpy& spy, int timeoutMs = 120000)
{
    if (spy.isEmpty() && !spy.wait(timeoutMs))
        return { false, QStringLiteral("timeout") };
    const auto args = spy.takeFirst();
    return { args.at(0).toBool(), args.at(1).toString() };
}

} // namespace

class MainWindowFixtures : public ::testing::TestWithParam<const char*>
{
};

TEST_P(MainWindowFixtures, SelectsTheFirstFailingNode)
{
    MainWindow window;
    window.show();
    QSignalSpy finished(&window, &MainWindow::analysisFinished);
    ASSERT_TRUE(window.openInputs(fixture(GetParam(), "npu"), fixture(GetParam(), "bench")));
    const auto [ok, error] = waitForCompare(window, finished);
    ASSERT_TRUE(ok) << error.toStdString();
    EXPECT_EQ(window.selectedNodeKey(), "Functional.gelu.0.forward");
    EXPECT_TRUE(window.statusLine().contains("Functional.gelu.0.forward")) << window.statusLine().toStdString();
    // The selected row is visible: all its ancestors are expanded.
    const QModelIndex current = window.treeView()->currentIndex();
    ASSERT_TRUE(current.isValid());
    const tree::NodeId selected = window.treeRows()->nodeAt(current);
    ASSERT_TRUE(selected.valid());
    const tree::ConstructTree& t = *window.treeModel()->tree();
    ASSERT_TRUE(t.node(selected).parent.valid()) << "a nested node";
    for (tree::NodeId p = t.node(selected).parent; p.valid(); p = t.node(p).parent)
        EXPECT_TRUE(window.treeRows()->isExpanded(p)) << t.node(p).key;
    EXPECT_TRUE(window.detailPanel()->hasNode());
    // Two steps: step0 and step1 pairs.
    ASSERT_NE(window.plan(), nullptr);
    EXPECT_EQ(window.plan()->pairs.size(), 2u);

    const QString shot = QString::fromStdString(
        (std::filesystem::path(PROBESCOPE_TEST_OUTPUT_DIR) / (std::string("mainwindow-") + GetParam() + ".png")).string());
    EXPECT_TRUE(window.grab().save(shot));
}

INSTANTIATE_TEST_SUITE_P(Fixtures, MainWindowFixtures,
                         ::testing::Values("modelA_tensor_mix", "modelA_statistics_mix", "modelA_md5_mix"));

TEST(MainWindow, KeyboardNavigation)
{
    MainWindow window;
    window.show();
    QSignalSpy finished(&window, &MainWindow::analysisFinished);
    ASSERT_TRUE(window.openInputs(fixture("modelA_statistics_mix", "npu"), fixture("modelA_statistics_mix", "bench")));
    ASSERT_TRUE(waitForCompare(window, finished).first);
    ui::CompareTreeView* tree = window.treeView();
    tree->setFocus();
    // N walks to failing nodes only; Shift+N comes back; F returns to the culprit.
    const QString first = window.selectedNodeKey();
    QTest::keyClick(tree, Qt::Key_N);
    const QString next = window.selectedNodeKey();
    EXPECT_NE(next, first);
    const auto* model = window.treeModel();
    const auto node = model->tree()->find(next.toStdString());
    ASSERT_TRUE(node.has_value());
    EXPECT_TRUE(session::isFailing(model->ownStatus(*node)));
    QTest::keyClick(tree, Qt::Key_N, Qt::ShiftModifier);
    EXPECT_EQ(window.selectedNodeKey(), first);
    QTest::keyClick(tree, Qt::Key_N);
    QTest::keyClick(tree, Qt::Key_F);
    EXPECT_EQ(window.selectedNodeKey(), "Functional.gelu.0.forward");
}

TEST(MainWindow, CancelMidRun)
{
    MainWindow window;
    window.show();
    QSignalSpy finished(&window, &MainWindow::analysisFinished);
    ASSERT_TRUE(window.openInputs(fixture("modelA_tensor_mix", "npu"), fixture("modelA_tensor_mix", "bench")));
    window.cancelCompare();
    const auto [ok, error] = waitForCompare(window, finished);
    // Cancelling right away may still lose the race against a fast compare; either way the window is
    // consistent: a cancelled run leaves no analysis, a finished one has its culprit.
    if (!ok) {
        EXPECT_EQ(error, "cancelled");
        EXPECT_EQ(window.analysis(), nullptr);
    } else {
        EXPECT_EQ(window.selectedNodeKey(), "Functional.gelu.0.forward");
    }
    EXPECT_FALSE(window.isComparing());
}

TEST(MainWindow, ReopenMidRunShowsOnlyTheNewPair)
{
    MainWindow window;
    window.show();
    QSignalSpy finished(&window, &MainWindow::analysisFinished);
    ASSERT_TRUE(window.openInputs(fixture("modelA_tensor_mix", "npu"), fixture("modelA_tensor_mix", "bench")));
    ASSERT_TRUE(window.openInputs(fixture("modelA_md5_mix", "npu"), fixture("modelA_md5_mix", "bench"), 1));
    // Wait until a successful compare arrives; it must be the md5 pair's step1.
    bool ok = false;
    for (int i = 0; i < 3 && !ok; ++i)
        ok = waitForCompare(window, finished).first;
    ASSERT_TRUE(ok);
    ASSERT_NE(window.analysis(), nullptr);
    EXPECT_EQ(window.currentPair(), 1);
    EXPECT_EQ(window.analysis()->table->mode, compare::CompareMode::Md5);
    EXPECT_NE(window.analysis()->skeleton->pair.npu.dir.string().find("modelA_md5_mix"), std::string::npos);
    // No stale result arrives later.
    EXPECT_FALSE(finished.wait(500));
}

TEST(MainWindow, ClosingMidRunIsSafe)
{
    auto* window = new MainWindow;
    window->show();
    bool destroyed = false;
    QObject::connect(window, &QObject::destroyed, [&] { destroyed = true; });
    ASSERT_TRUE(window->openInputs(fixture("modelA_tensor_mix", "npu"), fixture("modelA_tensor_mix", "bench")));
    window->close(); // cancels the compare and the overview
    // Nothing has been delivered yet (no event loop ran): the delete below really happens mid-run.
    ASSERT_TRUE(window->isComparing());
    delete window; // waits for the workers to notice the cancel
    EXPECT_TRUE(destroyed);
    QTest::qWait(200); // a stale queued call to the dead window would crash here
}

TEST(MainWindow, BadInputIsReportedNotCrashed)
{
    MainWindow window;
    QSignalSpy finished(&window, &MainWindow::analysisFinished);
    EXPECT_FALSE(window.openInputs("/nonexistent/npu", fixture("modelA_md5_mix", "bench")));
    ASSERT_EQ(finished.size(), 1);
    EXPECT_FALSE(finished.first().at(0).toBool());
    EXPECT_TRUE(finished.first().at(1).toString().contains("/nonexistent/npu"));
}

TEST(MainWindow, RankOverviewCoversEveryPair)
{
    MainWindow window;
    window.show();
    QSignalSpy finished(&window, &MainWindow::analysisFinished);
    QSignalSpy overview(&window, &MainWindow::overviewFinished);
    ASSERT_TRUE(window.openInputs(fixture("modelA_statistics_mix", "npu"), fixture("modelA_statistics_mix", "bench")));
    ASSERT_TRUE(waitForCompare(window, finished).first);
    ASSERT_TRUE(overview.wait(60000));
    EXPECT_EQ(window.rankOverview()->rowCount(), 2);
}

// Issue 17: a pair opened before is shown from the reopen cache (its tree and verdicts at once), then the
// analysis completes as usual and lands on the same culprit.
TEST(MainWindow, ReopeningAPairUsesTheCache)
{
    const std::filesystem::path cacheDir = session::defaultCacheDir();
    auto cacheFiles = [&] {
        std::map<std::string, std::filesystem::file_time_type> files;
        std::error_code ec;
        for (const auto& e : std::filesystem::directory_iterator(cacheDir, ec))
            files[e.path().string()] = e.last_write_time(ec);
        return files;
    };
    MainWindow window;
    window.show();
    QSignalSpy finished(&window, &MainWindow::analysisFinished);
    const auto before = cacheFiles();
    ASSERT_TRUE(window.openInputs(fixture("modelA_tensor_mix", "npu"), fixture("modelA_tensor_mix", "bench")));
    ASSERT_TRUE(waitForCompare(window, finished).first);
    const QString culprit = window.selectedNodeKey();
    ASSERT_FALSE(culprit.isEmpty());
    // The controller writes the cache after delivering the result (or it was there from an earlier test).
    if (!window.analysis()->reopened) {
        EXPECT_TRUE(QTest::qWaitFor([&] { return cacheFiles() != before; }, 20000));
    }

    ASSERT_TRUE(window.openInputs(fixture("modelA_tensor_mix", "npu"), fixture("modelA_tensor_mix", "bench")));
    ASSERT_TRUE(waitForCompare(window, finished).first);
    ASSERT_TRUE(window.analysis());
    EXPECT_TRUE(window.analysis()->reopened);
    EXPECT_TRUE(window.analysis()->skeleton->fromCache);
    EXPECT_TRUE(window.analysis()->skeleton->npu); // the dumps were read too
    EXPECT_EQ(window.selectedNodeKey(), culprit);
    EXPECT_TRUE(window.detailPanel()->hasNode());
}
