// SPDX-License-Identifier: Apache-2.0
// The rank overview's step × rank map (issue 15 item 5, issue 19): a 1,024-rank × 2-step map filled with
// synthetic summaries (model state, visible-only painting, the figures docs/scale-out.md quotes), a real
// multi-rank fixture (colours, numbers, the origin marked, the origin key and the peer-rank jump), and a
// truncated dump shown as salvaged.
#include "ui/models/rankoverviewmodel.h"
#include "ui/models/statuspalette.h"
#include "ui/views/comparetreeview.h"
#include "ui/views/mainwindow.h"
#include "ui/views/rankmapview.h"

#include "core/tempdir.h"
#include "modeltestfailures.h"
#include "syntheticplan.h"
#include "testconfig.h"

#include <QAbstractItemModelTester>
#include <QApplication>
#include <QElapsedTimer>
#include <QLabel>
#include <QPushButton>
#include <QSignalSpy>
#include <QStatusBar>
#include <QTableView>
#include <QTest>
#include <QTimer>
#include <QToolTip>
#include <QScreen>
#include <QHelpEvent>
#include <QTreeView>

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <iostream>

using namespace probescope;
using probescope::testing::ModelTestFailures;
using probescope::testing::syntheticPlan;
using probescope::ui::MainWindow;
using probescope::ui::RankMapView;
using probescope::ui::RankOverviewModel;
using probescope::ui::RankOverviewPanel;
using session::Status;
namespace fs = std::filesystem;

namespace {

fs::path outputDir() { return fs::path(PROBESCOPE_TEST_OUTPUT_DIR); }

QString shotPath(const char* name) { return QString::fromStdString((outputDir() / name).string()); }

fs::path daFixture(const char* name) { return probescope::testing::fixturesDir() / "msprobe26_da" / name / "inputs"; }

/// Pair i of the synthetic job: every 7th rank fails with an error (position and communication count vary),
/// every 5th has warnings only, rank 700 of step 1 is salvaged; the rest pass. No compare runs.
session::PairSummary syntheticSummary(const session::SessionPlan& plan, std::size_t i)
{
    const session::RankPair& pair = plan.pairs[i];
    const auto rank = static_cast<std::uint32_t>(*pair.npu.rank);
    session::PairSummary s;
    s.pairIndex = i;
    s.nodes = 100;
    s.counts[std::size_t(Status::Pass)] = 90;
    s.failure.step = pair.step;
    s.failure.rank = rank;
    s.failure.rankLabel = pair.npu.rankLabel;
    if (rank % 7 == 3) {
        s.counts[std::size_t(Status::Error)] = 2;
        s.firstFailure.found = true;
        s.firstFailure.key = "Functional.linear." + std::to_string(rank) + ".forward";
        s.firstFailure.executionIndex = 10 + rank % 50;
        job::locateFailure(s.failure, s.firstFailure, nullptr);
        s.failure.commBefore = rank == 500 ? 0 : 1 + rank % 11; // rank 500 fails before any collective
    } else if (rank % 5 == 0) {
        s.counts[std::size_t(Status::Warning)] = 1;
    }
    if (pair.step == 1 && rank == 700)
        s.salvaged = "npu/step1/rank700/dump.json: cut after 1234 bytes; 10 entries read, the rest of the file is lost";
    return s;
}

} // namespace

TEST(RankMap, ThousandRanksTwoStepsFromSyntheticSummaries)
{
    ModelTestFailures failures;
    constexpr int kRanks = 1024;
    const session::SessionPlan plan = syntheticPlan(kRanks, 2);
    RankOverviewModel model;
    RankMapView view;
    view.setModel(&model);
    view.resize(520, 420);
    view.show();
    ASSERT_TRUE(QTest::qWaitForWindowExposed(&view));

    QElapsedTimer timer;
    timer.start();
    model.setPlan(plan);
    const double planMs = timer.nsecsElapsed() / 1e6;
    EXPECT_EQ(model.gridRows(), kRanks);
    EXPECT_EQ(model.gridColumns(), 2);
    EXPECT_EQ(model.rankNames().at(1023), QString("rank1023"));
    EXPECT_EQ(model.pairAt(5, 1), kRanks + 5);
    EXPECT_EQ(model.pairAt(kRanks, 0), -1);
    EXPECT_EQ(view.cellText(0), QString("\u00b7")) << "pending";
    model.setRunning(1);
    EXPECT_EQ(view.cellText(1), QString("\u2026")) << "running";

    std::vector<session::PairSummary> all;
    for (std::size_t i = 0; i < plan.pairs.size(); ++i)
        all.push_back(syntheticSummary(plan, i));
    QSignalSpy changes(&model, &QAbstractItemModel::dataChanged);
    QSignalSpy resets(&model, &QAbstractItemModel::modelReset);
    timer.restart();
    model.setSummaries(all);
    const double batchMs = timer.nsecsElapsed() / 1e6;
    EXPECT_EQ(resets.count(), 0) << "a batch is no reset";
    EXPECT_LE(changes.count(), 3) << "one dataChanged for the batch, two for the origin moving";

    // Core's origin: the earliest step, the fewest communication calls before the failure (rank 500: none).
    ASSERT_TRUE(model.origin().fails);
    EXPECT_EQ(model.origin().step, 0);
    EXPECT_EQ(model.origin().rankLabel, "rank500");
    EXPECT_EQ(model.originRow(), 500);
    EXPECT_TRUE(model.originText().startsWith("Origin: step 0 rank500, node Functional.linear.500.forward (#"))
        << model.originText().toStdString();
    EXPECT_EQ(view.cellText(500), QString("\u25b6 ") + QString::number(10 + 500 % 50));
    EXPECT_EQ(view.cellText(3), QString::number(13)) << "the first failure's execution index";
    EXPECT_EQ(view.cellText(1), QString("\u2713")) << "done without failure";
    EXPECT_EQ(model.worstStatus(3), Status::Error);
    EXPECT_EQ(model.worstStatus(5), Status::Warning);
    EXPECT_EQ(model.worstStatus(1), Status::Pass);
    const int salvaged = kRanks + 700;
    EXPECT_FALSE(model.data(model.index(salvaged, 0), RankOverviewModel::SalvagedRole).toString().isEmpty());
    EXPECT_EQ(model.data(model.index(salvaged, RankOverviewModel::StateColumn)).toString(), QString("done (salvaged)"));
    model.setFailed(2, "json.syntax: rank2/dump.json:1:5");
    EXPECT_EQ(view.cellText(2), QString("\u00d7"));

    // Painting touches the visible cells only, at any scroll position.
    timer.restart();
    view.viewport()->repaint();
    const double paintMs = timer.nsecsElapsed() / 1e6;
    const int visible = ((view.viewport()->height() / view.cellSize().height()) + 1) * 2;
    EXPECT_GT(view.lastPaintedCells(), 0);
    EXPECT_LE(view.lastPaintedCells(), visible);
    view.setCurrentPair(salvaged);
    EXPECT_EQ(view.currentCell(), QPoint(1, 700));
    timer.restart();
    view.viewport()->repaint();
    const double paintScrolledMs = timer.nsecsElapsed() / 1e6;
    EXPECT_LE(view.lastPaintedCells(), visible);
    EXPECT_TRUE(view.cellRect(700, 1).intersects(view.viewport()->rect())) << "scrolled to the current cell";

    // The same summaries one by one (as without batching): each a one-cell update, the origin found each time.
    RankOverviewModel single;
    single.setPlan(plan);
    timer.restart();
    for (const session::PairSummary& s : all)
        single.setSummary(s);
    const double oneByOneMs = timer.nsecsElapsed() / 1e6;
    EXPECT_EQ(single.originRow(), 500);

    {
        // The model's invariants, under the tester, on a batch and single updates.
        RankOverviewModel tested;
        QAbstractItemModelTester tester(&tested, QAbstractItemModelTester::FailureReportingMode::Warning);
        tested.setPlan(plan);
        tested.setSummaries(std::vector<session::PairSummary>(all.begin(), all.begin() + 100));
        tested.setSummary(all[1500]);
        tested.setFailed(7, "broken");
    }

    std::cout << "[rankmap] 1024 ranks x 2 steps: plan " << planMs << " ms; 2048 summaries in one batch " << batchMs
              << " ms, one by one " << oneByOneMs << " ms; paint " << paintMs << " ms (" << view.lastPaintedCells()
              << " cells), scrolled " << paintScrolledMs << " ms" << std::endl;
    EXPECT_LT(batchMs, 1000.0);
    EXPECT_TRUE(view.grab().save(shotPath("rankmap-1024.png")));

    // The dark theme: the palette's dark fills and frames.
    QPalette dark;
    dark.setColor(QPalette::Window, QColor("#202124"));
    dark.setColor(QPalette::Base, QColor("#1b1b1d"));
    dark.setColor(QPalette::AlternateBase, QColor("#26262a"));
    dark.setColor(QPalette::Text, QColor("#e8e8e8"));
    dark.setColor(QPalette::WindowText, QColor("#e8e8e8"));
    dark.setColor(QPalette::Button, QColor("#2d2d30"));
    dark.setColor(QPalette::ButtonText, QColor("#e8e8e8"));
    view.setPalette(dark);
    ASSERT_TRUE(ui::statuspalette::isDark(view.palette()));
    view.setCurrentPair(500);
    const QImage image = view.viewport()->grab().toImage();
    const QRect origin = view.cellRect(500, 0);
    EXPECT_EQ(image.pixelColor(origin.center() + QPoint(origin.width() / 2 - 6, 0)).rgb(),
              ui::statuspalette::fill(Status::Error, true).rgb());
    EXPECT_TRUE(view.grab().save(shotPath("rankmap-1024-dark.png")));
}

// Issue 37: the map filtered to a group of ranks (a rank list as the panel's field takes it): only those rows are
// laid out, painted and reachable by keys; a jump to a rank the filter hides shows every rank again.
TEST(RankMap, FilterByGroupShowsOnlyThoseRanks)
{
    const session::SessionPlan plan = syntheticPlan(64, 2);
    RankOverviewModel model;
    model.setPlan(plan);
    RankMapView view;
    view.setModel(&model);
    view.resize(400, 300);
    view.show();
    ASSERT_TRUE(QTest::qWaitForWindowExposed(&view));
    EXPECT_FALSE(view.isFiltered());
    EXPECT_EQ(view.shownRows(), 64);
    ASSERT_TRUE(view.setRankFilter(" 8-11, 40 "));
    EXPECT_TRUE(view.isFiltered());
    EXPECT_EQ(view.shownRows(), 5);
    // The fifth row shown is rank 40; rank 12 has no place on screen.
    const QRect fifth = view.cellRect(40, 0);
    EXPECT_EQ(fifth.top(), view.cellRect(8, 0).top() + 4 * view.cellSize().height());
    EXPECT_EQ(view.cellAt(fifth.center()), QPoint(0, 40));
    EXPECT_FALSE(view.cellRect(12, 0).intersects(view.viewport()->rect()));
    view.viewport()->repaint();
    EXPECT_EQ(view.lastPaintedCells(), 5 * 2);
    // Keys move over the rows shown: Down from rank 11 goes to rank 40.
    view.setCurrentCell(11, 0);
    EXPECT_TRUE(view.isFiltered());
    QTest::keyClick(&view, Qt::Key_Down);
    EXPECT_EQ(view.currentCell(), QPoint(0, 40));
    QTest::keyClick(&view, Qt::Key_End);
    EXPECT_EQ(view.currentCell(), QPoint(0, 40));
    // Not a rank list, or no such rank: refused, the filter stays.
    EXPECT_FALSE(view.setRankFilter("8-"));
    EXPECT_FALSE(view.setRankFilter("9-3"));
    EXPECT_FALSE(view.setRankFilter("500"));
    EXPECT_EQ(view.shownRows(), 5);
    // A jump (the origin key, a peer) to a hidden rank lands: every rank is shown again.
    view.setCurrentPair(64 + 20);
    EXPECT_FALSE(view.isFiltered());
    EXPECT_EQ(view.currentCell(), QPoint(1, 20));
    EXPECT_TRUE(view.cellRect(20, 1).intersects(view.viewport()->rect()));
    ASSERT_TRUE(view.setRankFilter("3"));
    EXPECT_TRUE(view.setRankFilter(""));
    EXPECT_EQ(view.shownRows(), 64);
    // A new plan drops the filter.
    ASSERT_TRUE(view.setRankFilter("1-2"));
    model.setPlan(syntheticPlan(8, 1));
    EXPECT_FALSE(view.isFiltered());
    EXPECT_EQ(view.shownRows(), 8);
}

TEST(RankMap, TooltipsAreShortAndWrap)
{
    const QString key = QStringLiteral("Module.model.layers.12.self_attention.core_attention.flash_attention."
                                       "FlashSelfAttention.forward.0.output.0");
    const QString tip = ui::wrappingToolTip({ QStringLiteral("step 0 · rank3 ↔ rank3"), key, key });
    EXPECT_TRUE(Qt::mightBeRichText(tip)) << "rich text: QToolTip word-wraps it";
    // As QToolTip's label lays it out: wrapped at the break opportunities after the dots.
    QLabel label;
    label.setWordWrap(true);
    label.setText(tip);
    EXPECT_LT(label.sizeHint().width(), 700) << label.sizeHint().width();
    EXPECT_GT(label.sizeHint().height(), 3 * label.fontMetrics().height());
}

namespace {

/// Opens `npu`/`bench` in `window` and waits for the shown pair and the whole overview.
::testing::AssertionResult openJob(MainWindow& window, const fs::path& inputs)
{
    QSignalSpy finished(&window, &MainWindow::analysisFinished);
    QSignalSpy overview(&window, &MainWindow::overviewFinished);
    if (!window.openInputs(QString::fromStdString((inputs / "npu").string()),
                           QString::fromStdString((inputs / "bench").string())))
        return ::testing::AssertionFailure() << "cannot open " << inputs;
    if (finished.isEmpty() && !finished.wait(120000))
        return ::testing::AssertionFailure() << "no compare finished";
    if (overview.isEmpty() && !overview.wait(120000))
        return ::testing::AssertionFailure() << "the overview did not finish";
    return ::testing::AssertionSuccess();
}

/// Brings the Rank overview tab to the front and lets its layout settle, so the map has its real size.
RankMapView* showMap(MainWindow& window)
{
    QTabWidget* tabs = window.findChild<QTabWidget*>();
    tabs->setCurrentWidget(window.rankOverviewPanel());
    QApplication::processEvents();
    return window.rankOverviewPanel()->map();
}

bool waitForPair(MainWindow& window, int pair)
{
    return QTest::qWaitFor([&] { return window.currentPair() == pair && !window.isComparing() && window.analysis(); },
                           60000);
}

} // namespace

TEST(RankMap, RealJobOriginKeyAndPeerRankJump)
{
    MainWindow window;
    window.resize(1400, 860);
    window.show();
    ASSERT_TRUE(openJob(window, daFixture("SYNTH_allreduce_group_2r")));
    RankOverviewModel* model = window.rankOverview();
    RankMapView* map = window.rankOverviewPanel()->map();
    ASSERT_EQ(model->gridRows(), 2);
    ASSERT_EQ(model->gridColumns(), 1);
    const int rank0 = model->pairAt(0, 0);
    const int rank1 = model->pairAt(1, 0);
    ASSERT_GE(rank0, 0);
    ASSERT_GE(rank1, 0);
    for (const int pair : { rank0, rank1 })
        ASSERT_EQ(model->state(std::size_t(pair)), RankOverviewModel::State::Done);

    // msprobe's -da names rank 1's relu (fixtures README); core agrees, and the CLI's rule picks rank 1 as origin.
    const session::PairSummary* s1 = model->summary(std::size_t(rank1));
    ASSERT_NE(s1, nullptr);
    EXPECT_EQ(s1->firstFailure.key, "Functional.relu.0.forward");
    EXPECT_EQ(s1->failure.commBefore, 1u) << "after all_reduce.0";
    EXPECT_EQ(s1->failure.nextCommKey, "Distributed.all_reduce.1.forward");
    EXPECT_EQ(model->originRow(), rank1);
    EXPECT_EQ(model->origin().key, "Functional.relu.0.forward");
    EXPECT_EQ(map->cellText(rank1), QString("\u25b6 %1").arg(s1->firstFailure.executionIndex));
    EXPECT_TRUE(window.rankOverviewPanel()->originLabel()->text().startsWith(
        QString("Origin: step 0 rank1, node Functional.relu.0.forward (#%1)").arg(s1->firstFailure.executionIndex)))
        << window.rankOverviewPanel()->originLabel()->text().toStdString();
    EXPECT_TRUE(model->data(model->index(rank1, RankOverviewModel::FirstFailureColumn)).toString().contains("job origin"));
    // The colour is the worst verdict, and the number the first failure's position.
    EXPECT_EQ(model->worstStatus(std::size_t(rank1)), Status::Error);
    const session::PairSummary* s0 = model->summary(std::size_t(rank0));
    ASSERT_NE(s0, nullptr);
    EXPECT_EQ(map->cellText(rank0),
              s0->firstFailure.key.empty() ? QString("\u2713") : QString::number(s0->firstFailure.executionIndex));
    showMap(window);
    ASSERT_GT(map->viewport()->height(), 3 * map->cellSize().height());
    const QImage mapImage = map->viewport()->grab().toImage();
    const QRect cell1 = map->cellRect(1, 0);
    const QColor errorFill = ui::statuspalette::fill(Status::Error, ui::statuspalette::isDark(map->palette()));
    EXPECT_EQ(mapImage.pixelColor(cell1.center() + QPoint(cell1.width() / 2 - 6, 0)).rgb(), errorFill.rgb())
        << "rank 1's cell is filled with the error colour";

    // Hovering a cell shows the model's tooltip, wrapped and inside the screen even at the screen's right edge.
    {
        const QPoint at = map->cellRect(1, 0).center();
        QHelpEvent help(QEvent::ToolTip, at, map->viewport()->mapToGlobal(at));
        QApplication::sendEvent(map->viewport(), &help);
        EXPECT_TRUE(QToolTip::isVisible());
        EXPECT_TRUE(QToolTip::text().contains("rank1")) << QToolTip::text().toStdString();
        EXPECT_TRUE(QToolTip::text().contains("job")) << QToolTip::text().toStdString();
        const QRect screen = map->screen()->availableGeometry();
        QToolTip::showText(screen.topRight() - QPoint(2, -2), QToolTip::text(), map->viewport());
        QWidget* tip = nullptr;
        for (QWidget* w : QApplication::topLevelWidgets()) {
            if (w->inherits("QTipLabel") && w->isVisible())
                tip = w;
        }
        ASSERT_NE(tip, nullptr);
        EXPECT_TRUE(screen.contains(tip->geometry())) << tip->geometry().x() << "+" << tip->geometry().width();
        EXPECT_LT(tip->width(), screen.width() / 2);
        QToolTip::hideText();
    }

    // The origin key opens rank 1's pair and selects the origin node.
    ASSERT_TRUE(waitForPair(window, window.currentPair()));
    window.treeView()->setFocus();
    QTest::keyClick(window.treeView(), Qt::Key_O);
    ASSERT_TRUE(waitForPair(window, rank1));
    EXPECT_EQ(window.selectedNodeKey(), "Functional.relu.0.forward");
    EXPECT_EQ(map->currentCell(), QPoint(0, 1));
    EXPECT_TRUE(window.grab().save(shotPath("rankmap-origin.png")));

    // On a communication node, P opens the other rank's pair at the same node (and back, cyclically).
    ASSERT_TRUE(window.selectNodeByKey("Distributed.all_reduce.1.forward"));
    window.treeView()->setFocus();
    QTest::keyClick(window.treeView(), Qt::Key_P);
    ASSERT_TRUE(waitForPair(window, rank0));
    EXPECT_EQ(window.selectedNodeKey(), "Distributed.all_reduce.1.forward");
    EXPECT_TRUE(window.jumpToPeerRank());
    ASSERT_TRUE(waitForPair(window, rank1));
    EXPECT_EQ(window.selectedNodeKey(), "Distributed.all_reduce.1.forward");
    // Elsewhere it says why it does nothing.
    ASSERT_TRUE(window.selectNodeByKey("Functional.relu.0.forward"));
    EXPECT_FALSE(window.jumpToPeerRank());
    EXPECT_TRUE(window.statusLine().contains("communication node")) << window.statusLine().toStdString();
    EXPECT_EQ(window.currentPair(), rank1);

    // Both keys are listed in F1's table.
    QStringList keys;
    for (const QAction* a : window.shortcutActions())
        keys << a->shortcut().toString();
    EXPECT_TRUE(keys.contains("O"));
    EXPECT_TRUE(keys.contains("P"));
    EXPECT_EQ(keys.count("O"), 1);
    EXPECT_EQ(keys.count("P"), 1);
}

TEST(RankMap, ClickAndEnterOpenAPair)
{
    MainWindow window;
    window.resize(1400, 860);
    window.show();
    ASSERT_TRUE(openJob(window, daFixture("SYNTH_broadcast_group_3r")));
    RankOverviewModel* model = window.rankOverview();
    RankMapView* map = window.rankOverviewPanel()->map();
    ASSERT_EQ(model->gridRows(), 3);
    ASSERT_TRUE(waitForPair(window, window.currentPair()));
    ASSERT_EQ(model->originRow(), model->pairAt(0, 0)) << "rank 0's linear.1 (fixtures README)";
    // The chain of evidence: rank 0 sent on broadcast.1, ranks 1 and 2 received it.
    const QString chain = window.rankOverviewPanel()->originLabel()->toolTip();
    EXPECT_TRUE(chain.contains("sent")) << chain.toStdString();
    EXPECT_TRUE(chain.contains("rank2")) << chain.toStdString();
    showMap(window);
    QTest::mouseClick(map->viewport(), Qt::LeftButton, {}, map->cellRect(2, 0).center());
    ASSERT_TRUE(waitForPair(window, model->pairAt(2, 0)));
    map->setFocus();
    QTest::keyClick(map, Qt::Key_Up);
    QTest::keyClick(map, Qt::Key_Return);
    ASSERT_TRUE(waitForPair(window, model->pairAt(1, 0)));
    EXPECT_TRUE(window.rankOverviewPanel()->grab().save(shotPath("rankmap-broadcast.png")));
}

TEST(RankMap, TruncatedDumpShowsAsSalvaged)
{
    probescope::testing::TempDir dir;
    const fs::path job = dir.path() / "job";
    fs::copy(daFixture("SYNTH_allreduce_group_2r"), job, fs::copy_options::recursive);
    const fs::path cut = job / "npu" / "step0" / "rank0" / "dump.json";
    fs::permissions(cut, fs::perms::owner_write, fs::perm_options::add);
    fs::resize_file(cut, fs::file_size(cut) * 2 / 3);

    MainWindow window;
    window.resize(1400, 860);
    window.show();
    ASSERT_TRUE(openJob(window, job));
    RankOverviewModel* model = window.rankOverview();
    const int rank0 = model->pairAt(0, 0);
    const int rank1 = model->pairAt(1, 0);
    ASSERT_EQ(model->state(std::size_t(rank0)), RankOverviewModel::State::Done) << "read partially, not refused";
    const QString lost = model->data(model->index(rank0, 0), RankOverviewModel::SalvagedRole).toString();
    EXPECT_TRUE(lost.contains("cut after")) << lost.toStdString();
    EXPECT_TRUE(model->data(model->index(rank1, 0), RankOverviewModel::SalvagedRole).toString().isEmpty());
    EXPECT_EQ(model->data(model->index(rank0, RankOverviewModel::StateColumn)).toString(), QString("done (salvaged)"));
    EXPECT_TRUE(model->data(model->index(rank0, 0), Qt::ToolTipRole).toString().contains("Salvaged"));
    // Without colour: the dashed frame and the corner notch (the notch's corner is drawn in the text colour).
    RankMapView* map = showMap(window);
    ASSERT_GT(map->viewport()->height(), 3 * map->cellSize().height());
    const QImage image = map->viewport()->grab().toImage();
    const QRect cell = map->cellRect(0, 0);
    EXPECT_EQ(image.pixelColor(cell.topLeft() + QPoint(5, 4)).rgb(), map->palette().color(QPalette::Text).rgb());
    const QRect clean = map->cellRect(1, 0);
    EXPECT_NE(image.pixelColor(clean.topLeft() + QPoint(5, 4)).rgb(), map->palette().color(QPalette::Text).rgb());
    EXPECT_TRUE(window.rankOverviewPanel()->grab().save(shotPath("rankmap-salvaged.png")));
}

// A real overview of a generated 1,024-rank x 2-step job (probescope-gendump job --ranks 1024 --steps 2
// --layers 2 --width 2 --bug-rank 5 --bug-step 0 --bug-layer 1 --out DIR), for docs/scale-out.md: how long the
// background analyses take and how long the GUI thread is ever kept from its events meanwhile. Runs only with
// PROBESCOPE_RANKMAP_JOB=DIR (about a minute on two cores).
TEST(RankMap, GeneratedJobOverviewStaysResponsive)
{
    const QByteArray dir = qgetenv("PROBESCOPE_RANKMAP_JOB");
    if (dir.isEmpty())
        GTEST_SKIP() << "set PROBESCOPE_RANKMAP_JOB to a generated job";
    MainWindow window;
    window.resize(1400, 860);
    window.show();
    showMap(window);
    QSignalSpy finished(&window, &MainWindow::analysisFinished);
    QSignalSpy overview(&window, &MainWindow::overviewFinished);
    // The longest gap between two ticks of a 5 ms timer: how long the event loop was kept busy at once.
    QElapsedTimer clock;
    qint64 last = 0;
    qint64 longest = 0;
    QTimer tick;
    int stalls = 0; // gaps over 50 ms
    QObject::connect(&tick, &QTimer::timeout, [&] {
        const qint64 now = clock.nsecsElapsed();
        if (now - last > 50'000'000) {
            ++stalls;
            if (qEnvironmentVariableIsSet("PROBESCOPE_RANKMAP_TRACE"))
                std::cout << "stall " << (now - last) / 1e6 << " ms ending at " << now / 1e6 << " ms, "
                          << window.rankOverview()->rowCount() << std::endl;
        }
        longest = std::max(longest, now - last);
        last = now;
    });
    QElapsedTimer total;
    total.start();
    ASSERT_TRUE(window.openInputs(QString::fromUtf8(dir) + "/npu", QString::fromUtf8(dir) + "/bench"));
    const double openMs = total.nsecsElapsed() / 1e6;
    clock.start();
    tick.start(5);
    ASSERT_TRUE(finished.wait(120000));
    ASSERT_TRUE(overview.wait(600000));
    const double seconds = total.nsecsElapsed() / 1e9;
    tick.stop();
    RankOverviewModel* model = window.rankOverview();
    EXPECT_EQ(model->gridRows(), 1024);
    EXPECT_EQ(model->gridColumns(), 2);
    ASSERT_TRUE(model->origin().fails);
    EXPECT_EQ(model->origin().step, 0);
    EXPECT_EQ(model->origin().rankLabel, "rank5");
    EXPECT_EQ(model->origin().key, "Functional.gelu.1.forward");
    std::cout << "[rankmap] generated job, " << model->rowCount() << " pairs: open " << openMs << " ms, overview "
              << seconds << " s, longest event-loop stall " << longest / 1e6 << " ms, " << stalls << " over 50 ms; origin "
              << model->originText().toStdString() << std::endl;
    EXPECT_TRUE(window.grab().save(shotPath("rankmap-generated-1024.png")));
}

// Issue 37: a job is planned off the GUI thread. Opening returns at once with progress and Cancel in the status bar;
// Cancel returns at once and leaves the job shown before exactly as it was (nothing of the cancelled open arrives
// later); opened again, the job's plan arrives while the event loop keeps serving a 5 ms timer.
TEST(RankMap, OpeningAJobPlansOffTheGuiThreadWithProgressAndCancel)
{
    probescope::testing::TempDir dir;
    constexpr int kRanks = 200;
    const fs::path from = daFixture("SYNTH_allreduce_group_2r") / "npu" / "step0" / "rank0" / "dump.json";
    for (const char* side : { "npu", "bench" }) {
        for (int r = 0; r < kRanks; ++r) {
            const fs::path rank = dir.path() / "job" / side / "step0" / ("rank" + std::to_string(r));
            fs::create_directories(rank);
            fs::copy_file(from, rank / "dump.json");
        }
    }
    const QString npu = QString::fromStdString((dir.path() / "job" / "npu").string());
    const QString bench = QString::fromStdString((dir.path() / "job" / "bench").string());

    MainWindow window;
    window.resize(1400, 860);
    window.show();
    ASSERT_TRUE(openJob(window, daFixture("SYNTH_allreduce_group_2r")));
    RankOverviewModel* model = window.rankOverview();
    ASSERT_EQ(model->gridRows(), 2);
    // The job then moves to its origin's pair: let that compare end too.
    ASSERT_TRUE(QTest::qWaitFor([&] { return !window.isComparing() && window.analysis(); }, 60000));
    const auto shownBefore = window.analysis();
    ASSERT_TRUE(shownBefore);
    window.setPlanWait(0); // always in the background, however fast this machine lists 400 rank folders

    auto statusWidget = [&]<typename W>(W*, const QString& prefix) -> W* {
        for (W* w : window.statusBar()->findChildren<W*>()) {
            if (w->isVisibleTo(&window) && w->text().startsWith(prefix))
                return w;
        }
        return nullptr;
    };
    QSignalSpy finished(&window, &MainWindow::analysisFinished);
    ASSERT_TRUE(window.openInputs(npu, bench));
    EXPECT_TRUE(window.isPlanning());
    EXPECT_NE(statusWidget(static_cast<QLabel*>(nullptr), QStringLiteral("Checking both sides")), nullptr);
    QPushButton* cancel = statusWidget(static_cast<QPushButton*>(nullptr), QStringLiteral("Cancel"));
    ASSERT_NE(cancel, nullptr);
    QTest::mouseClick(cancel, Qt::LeftButton);
    EXPECT_FALSE(window.isPlanning());
    ASSERT_EQ(finished.size(), 1);
    EXPECT_FALSE(finished.front().at(0).toBool());
    // The worker may well have finished its plan meanwhile: its result must never arrive.
    QTest::qWait(400);
    EXPECT_EQ(finished.size(), 1);
    EXPECT_EQ(model->gridRows(), 2);
    EXPECT_EQ(window.analysis(), shownBefore);
    EXPECT_EQ(statusWidget(static_cast<QPushButton*>(nullptr), QStringLiteral("Cancel")), nullptr);

    // Again, to the end. isPlanning() stays true until the job's poll (100 ms) takes the plan, so a GUI thread that
    // served its events meanwhile counts ticks while planning; one that planned inside openInputs() counts none.
    QElapsedTimer clock;
    qint64 last = 0;
    qint64 longest = 0;
    int ticksWhilePlanning = 0;
    QTimer tick;
    QObject::connect(&tick, &QTimer::timeout, [&] {
        const qint64 now = clock.nsecsElapsed();
        longest = std::max(longest, now - last);
        last = now;
        if (window.isPlanning())
            ++ticksWhilePlanning;
    });
    finished.clear();
    clock.start();
    tick.start(5);
    ASSERT_TRUE(window.openInputs(npu, bench));
    const double openMs = clock.nsecsElapsed() / 1e6;
    ASSERT_TRUE(QTest::qWaitFor([&] { return !window.isPlanning(); }, 60000));
    const double planMs = clock.nsecsElapsed() / 1e6;
    ASSERT_TRUE(!finished.isEmpty() || finished.wait(120000));
    tick.stop();
    EXPECT_GT(ticksWhilePlanning, 0);
    EXPECT_TRUE(finished.back().at(0).toBool()) << finished.back().at(1).toString().toStdString();
    EXPECT_EQ(model->gridRows(), kRanks);
    EXPECT_NE(window.analysis(), shownBefore);
    std::cout << "[rankmap] " << kRanks << "-rank job: openInputs returned in " << openMs << " ms, planned in "
              << planMs << " ms, " << ticksWhilePlanning << " timer ticks while planning, longest event-loop gap "
              << longest / 1e6 << " ms" << std::endl;
}
