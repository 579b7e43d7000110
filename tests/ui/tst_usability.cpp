// SPDX-License-Identifier: Apache-2.0
// The application as a new user meets it (issue 19): window icon, plots that follow the dark theme and can
// be saved as PNG, labelled selectors, a legend that can be hidden, shortcut descriptions.
#include "ui/inspect/metricplot.h"
#include "ui/inspect/nodetrendplot.h"
#include "ui/inspect/plotstyle.h"
#include "ui/views/mainwindow.h"
#include "ui/views/scriptedrun.h"
#include "ui/jobs/jobsupport.h"
#include "ui/panels/filterbar.h"
#include "ui/panels/legendwidget.h"
#include "ui/panels/detailpanel.h"
#include "ui/panels/shortcutsdialog.h"
#include "ui/panels/openpairdialog.h"

#include "testconfig.h"

#include <QApplication>
#include <QAction>
#include <QCheckBox>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QDragEnterEvent>
#include <QMimeData>
#include <QSignalSpy>
#include <QUrl>
#include <QLabel>
#include <QDir>
#include <QFileDialog>
#include <QLineEdit>
#include <QIcon>
#include <QPushButton>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>
#include <QToolButton>

#include <qcustomplot.h>

#include <gtest/gtest.h>

using namespace probescope;

namespace {

QPalette darkPalette()
{
    QPalette p;
    p.setColor(QPalette::Window, QColor(0x2b2b2b));
    p.setColor(QPalette::Base, QColor(0x1e1e1e));
    p.setColor(QPalette::Text, QColor(0xe6e6e6));
    p.setColor(QPalette::WindowText, QColor(0xe6e6e6));
    return p;
}

// The colour in the middle of the plot's top margin (title row, no data there), as the PNG shows it.
QColor plotBackground(QCustomPlot* plot)
{
    const QImage image = plot->toPixmap(300, 200).toImage();
    return image.pixelColor(5, 5);
}

// Answers the next modal file dialog with `path` (the widget dialog: offscreen has no native one).
void answerFileDialog(const QString& path, bool* seen)
{
    QTimer::singleShot(50, qApp, [path, seen] {
        auto* dialog = qobject_cast<QFileDialog*>(QApplication::activeModalWidget());
        if (!dialog) {
            answerFileDialog(path, seen);
            return;
        }
        *seen = true;
        // What a user types into the name field (selectFile would keep the suggested name there).
        auto* name = dialog->findChild<QLineEdit*>("fileNameEdit");
        if (name)
            name->setText(path);
        QMetaObject::invokeMethod(dialog, "accept"); // protected in QFileDialog, a slot all the same
    });
}

} // namespace

TEST(Usability, ApplicationIconHasEverySize)
{
    const QIcon icon = ui::applicationIcon();
    ASSERT_FALSE(icon.isNull());
    for (const int size : { 16, 32, 48, 256 })
        EXPECT_TRUE(icon.availableSizes().contains(QSize(size, size))) << size;
    // Not blank: the 48 px image has its dark background and coloured traces.
    const QImage image = icon.pixmap(48, 48).toImage();
    EXPECT_GT(qAlpha(image.pixel(24, 24)), 200);
}

TEST(Usability, PlotsFollowTheDarkTheme)
{
    ui::MetricPlot plot;
    plot.resize(400, 300);
    EXPECT_GT(plotBackground(plot.plot()).lightness(), 200);
    plot.setPalette(darkPalette());
    EXPECT_LT(plotBackground(plot.plot()).lightness(), 60);
    EXPECT_GT(plot.plot()->xAxis->tickLabelColor().lightness(), 180);
    EXPECT_TRUE(plot.plot()->toPixmap(400, 300).save(QStringLiteral(PROBESCOPE_TEST_OUTPUT_DIR "/usability-dark-plot.png")));
    // And back to light.
    plot.setPalette(QPalette(QColor(0xf0f0f0)));
    EXPECT_GT(plotBackground(plot.plot()).lightness(), 200);
}

TEST(Usability, SavePngButtonsWriteThePlot)
{
    QTemporaryDir tmp;
    ASSERT_TRUE(tmp.isValid());
    ui::MetricPlot metric;
    ui::NodeTrendPlot trend;
    int n = 0;
    for (QWidget* widget : { static_cast<QWidget*>(&metric), static_cast<QWidget*>(&trend) }) {
        widget->resize(500, 350);
        widget->show();
        auto* button = widget->findChild<QAbstractButton*>("savePng");
        ASSERT_NE(button, nullptr);
        EXPECT_TRUE(button->text().contains("PNG"));
        // Without the extension: it is added.
        const QString path = tmp.filePath(QStringLiteral("plot%1").arg(++n));
        bool seen = false;
        answerFileDialog(path, &seen);
        button->click();
        EXPECT_TRUE(seen);
        QImage written(path + ".png");
        EXPECT_FALSE(written.isNull()) << path.toStdString() << " holds: "
                                       << QDir(tmp.path()).entryList(QDir::Files).join(' ').toStdString();
        EXPECT_GT(written.width(), 100);
    }
}

TEST(Usability, SelectorsAreLabelledAndSayWhyTheyAreEmpty)
{
    ui::MainWindow window;
    window.show();
    for (const char* name : { "stepSelector", "rankSelector" }) {
        auto* box = window.findChild<QComboBox*>(name);
        ASSERT_NE(box, nullptr) << name;
        EXPECT_FALSE(box->isEnabled());
        EXPECT_FALSE(box->placeholderText().isEmpty());
        bool labelled = false;
        for (const QLabel* label : window.findChildren<QLabel*>())
            labelled = labelled || (label->buddy() == box && !label->text().isEmpty() && label->isVisibleTo(&window));
        EXPECT_TRUE(labelled) << name;
    }
}

TEST(Usability, LegendCanBeHidden)
{
    ui::MainWindow window;
    window.setQuiet(true);
    window.show();
    // The legend comes with data (issue 28): none before a pair is open, whatever the setting.
    EXPECT_FALSE(window.legend()->isVisible());
    QSignalSpy finished(&window, &ui::MainWindow::analysisFinished);
    ASSERT_TRUE(window.openInputs(ui::MainWindow::demoDir() + "/npu", ui::MainWindow::demoDir() + "/bench"));
    ASSERT_TRUE(finished.wait(120000));
    QAction* toggle = nullptr;
    for (QAction* a : window.shortcutActions())
        toggle = a->isCheckable() && a->shortcut() == QKeySequence(Qt::CTRL | Qt::Key_L) ? a : toggle;
    ASSERT_NE(toggle, nullptr);
    const bool before = window.legend()->isVisible();
    EXPECT_EQ(toggle->isChecked(), before);
    toggle->trigger();
    EXPECT_EQ(window.legend()->isVisible(), !before);
    // Remembered for the next window (shown once it has data).
    {
        ui::MainWindow next;
        next.setQuiet(true);
        next.show();
        QSignalSpy nextFinished(&next, &ui::MainWindow::analysisFinished);
        ASSERT_TRUE(next.openInputs(ui::MainWindow::demoDir() + "/npu", ui::MainWindow::demoDir() + "/bench"));
        ASSERT_TRUE(nextFinished.wait(120000));
        EXPECT_EQ(next.legend()->isVisible(), !before);
    }
    toggle->trigger();
    EXPECT_EQ(window.legend()->isVisible(), before);
}

TEST(Usability, EveryShortcutHasADescription)
{
    ui::MainWindow window;
    const QList<ui::ShortcutEntry> entries = ui::shortcutEntries(window.shortcutActions());
    EXPECT_GE(entries.size(), 12);
    for (const ui::ShortcutEntry& e : entries)
        EXPECT_FALSE(e.description.trimmed().isEmpty()) << e.action.toStdString();
}

namespace {

QString fixtureSide(const char* side)
{
    return QString::fromStdString((probescope::testing::fixturesDir() / "modelA_tensor_mix" / side).string());
}

void dropPaths(QWidget* target, const QStringList& paths)
{
    auto* mime = new QMimeData;
    QList<QUrl> urls;
    for (const QString& p : paths)
        urls << QUrl::fromLocalFile(p);
    mime->setUrls(urls);
    const QPoint at = target->rect().center();
    QDragEnterEvent enter(at, Qt::CopyAction, mime, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(target, &enter);
    EXPECT_TRUE(enter.isAccepted());
    QDropEvent drop(at, Qt::CopyAction, mime, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(target, &drop);
    EXPECT_TRUE(drop.isAccepted());
    delete mime;
}

} // namespace

TEST(Usability, OpenPairDialogNeedsBothSidesAndTakesDrops)
{
    ui::OpenPairDialog dialog(ui::Settings {}, QString(), QString());
    dialog.show();
    auto* open = dialog.findChild<QDialogButtonBox*>()->button(QDialogButtonBox::Open);
    auto* reason = dialog.findChild<QLabel*>("missingReason");
    auto* npu = dialog.findChild<QLineEdit*>("npuField");
    auto* bench = dialog.findChild<QLineEdit*>("benchField");
    ASSERT_TRUE(open && reason && npu && bench);
    EXPECT_FALSE(open->isEnabled());
    EXPECT_TRUE(reason->isVisible()); // said in the dialog, not only in a tooltip
    EXPECT_TRUE(reason->text().contains("NPU"));

    // One folder dropped on the bench field is the bench; still no NPU.
    dropPaths(bench, { fixtureSide("bench") });
    EXPECT_EQ(dialog.bench(), fixtureSide("bench"));
    EXPECT_FALSE(open->isEnabled());
    // Two folders dropped on the dialog: NPU then bench.
    dropPaths(&dialog, { fixtureSide("npu"), fixtureSide("bench") });
    EXPECT_EQ(dialog.npu(), fixtureSide("npu"));
    EXPECT_EQ(dialog.bench(), fixtureSide("bench"));
    EXPECT_TRUE(open->isEnabled());
    EXPECT_FALSE(reason->isVisible());
    // A side that does not exist is named.
    bench->setText("/nonexistent/bench");
    EXPECT_FALSE(open->isEnabled());
    EXPECT_TRUE(reason->text().contains("/nonexistent/bench"));
    EXPECT_TRUE(dialog.grab().save(QStringLiteral(PROBESCOPE_TEST_OUTPUT_DIR "/usability-open-pair.png")));

    // The compare options come back with the settings.
    dialog.findChild<QCheckBox*>()->setChecked(true); // fuzzy, the first option
    EXPECT_TRUE(dialog.settings().fuzzy);
}

TEST(Usability, OpeningOneSideAsksForThePairInsteadOfPairingWithTheStaleSide)
{
    ui::MainWindow window;
    window.setQuiet(true);
    window.show();
    QSignalSpy finished(&window, &ui::MainWindow::analysisFinished);
    ASSERT_TRUE(window.openInputs(fixtureSide("npu"), fixtureSide("bench")));
    ASSERT_TRUE(finished.wait(120000));
    ASSERT_TRUE(finished.takeFirst().at(0).toBool());
    const auto before = window.analysis();

    // Ctrl+Shift+O (open bench dump) shows the pair dialog filled with the open pair; cancelling changes nothing.
    QAction* openBench = nullptr;
    for (QAction* a : window.shortcutActions())
        openBench = a->shortcut() == QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_O) ? a : openBench;
    ASSERT_NE(openBench, nullptr);
    QString seenNpu, seenBench;
    QTimer::singleShot(100, qApp, [&] {
        auto* dialog = qobject_cast<ui::OpenPairDialog*>(QApplication::activeModalWidget());
        if (!dialog)
            return;
        seenNpu = dialog->npu();
        seenBench = dialog->bench();
        dialog->reject();
    });
    openBench->trigger();
    EXPECT_EQ(seenNpu, fixtureSide("npu"));
    EXPECT_EQ(seenBench, fixtureSide("bench"));
    EXPECT_FALSE(window.isComparing());
    EXPECT_EQ(window.analysis(), before);
    EXPECT_FALSE(finished.wait(300));
}

TEST(Usability, TimeLeftFollowsTheRecentRate)
{
    ui::RemainingTimeEstimator estimator;
    // Unknown at first: no half second of progress yet.
    EXPECT_LT(estimator.add(0.0, 0.0), 0);
    EXPECT_LT(estimator.add(0.2, 0.05), 0);
    // Loading is fast (10 % in 0.5 s), the compare then slow (1 % per 0.1 s = 10 %/s): the linear guess from
    // the start would say 4.5 s left at 1.0 s, the recent rate says about 8.5 s.
    estimator.add(0.5, 0.10);
    double left = -1;
    for (int i = 1; i <= 5; ++i)
        left = estimator.add(0.5 + 0.1 * i, 0.10 + 0.01 * i);
    EXPECT_NEAR(left, 0.85 / 0.1, 3.0);
    // Near the end at a steady 10 %/s: 0.3 s left, not 1.4 s.
    for (int i = 1; i <= 80; ++i)
        left = estimator.add(1.0 + 0.1 * i, std::min(0.97, 0.15 + 0.01 * i));
    EXPECT_LT(left, 1.0);
    EXPECT_GE(left, 0.0);
    // No progress: unknown rather than infinite.
    ui::RemainingTimeEstimator stalled;
    stalled.add(0.0, 0.3);
    EXPECT_LT(stalled.add(1.0, 0.3), 0);
}

TEST(Usability, CancelOffersCompareAgainAndFinishedStepsAreKept)
{
    ui::MainWindow window;
    window.setQuiet(true);
    window.show();
    QSignalSpy finished(&window, &ui::MainWindow::analysisFinished);
    ASSERT_TRUE(window.openInputs(fixtureSide("npu"), fixtureSide("bench")));
    window.cancelCompare();
    ASSERT_TRUE(finished.wait(120000) || !finished.isEmpty());
    const bool cancelled = !finished.takeFirst().at(0).toBool();
    if (cancelled) {
        // Said, and a retry offered; the chips do not keep counts of a run that did not finish.
        EXPECT_TRUE(window.retryButton()->isVisible());
        EXPECT_TRUE(window.statusLine().contains("incomplete")) << window.statusLine().toStdString();
        window.retryButton()->click();
        EXPECT_FALSE(window.retryButton()->isVisible());
        ASSERT_TRUE(finished.wait(120000) || !finished.isEmpty());
        ASSERT_TRUE(finished.takeFirst().at(0).toBool());
    }
    EXPECT_EQ(window.selectedNodeKey(), "Functional.gelu.0.forward");
    const auto step0 = window.analysis();
    ASSERT_NE(step0, nullptr);

    // Step 1, then back to step 0: shown again at once from the finished result, not recomputed.
    window.showPair(1);
    ASSERT_TRUE(finished.wait(120000) || !finished.isEmpty());
    ASSERT_TRUE(finished.takeFirst().at(0).toBool());
    ASSERT_NE(window.analysis(), step0);
    window.showPair(0);
    EXPECT_FALSE(window.isComparing());
    EXPECT_EQ(window.analysis(), step0);
    EXPECT_EQ(window.selectedNodeKey(), "Functional.gelu.0.forward");
    EXPECT_EQ(finished.size(), 1); // reported as finished, synchronously
}

// Issue 19 item 9: the details never describe a node the filters hide, and a jump that has to clear the
// filters says so.
TEST(Usability, FiltersCloseHiddenDetailsAndAJumpSaysItClearedThem)
{
    ui::MainWindow window;
    window.setQuiet(true);
    window.show();
    QSignalSpy finished(&window, &ui::MainWindow::analysisFinished);
    ASSERT_TRUE(window.openInputs(fixtureSide("npu"), fixtureSide("bench")));
    ASSERT_TRUE(finished.wait(120000) || !finished.isEmpty());
    ASSERT_TRUE(finished.takeFirst().at(0).toBool());
    ASSERT_EQ(window.selectedNodeKey(), "Functional.gelu.0.forward");
    ASSERT_TRUE(window.detailPanel()->hasNode());
    auto* filter = window.findChild<ui::FilterBar*>();
    ASSERT_TRUE(filter);
    filter->statusButton(session::Status::Error)->click(); // the culprit's status hidden
    EXPECT_FALSE(window.detailPanel()->hasNode());
    EXPECT_TRUE(window.statusLine().contains("hidden by the filters")) << window.statusLine().toStdString();

    // F goes back to the culprit: the filters are cleared to show it, and the status line says so.
    QAction* first = nullptr;
    for (QAction* a : window.shortcutActions())
        if (a->shortcut() == QKeySequence(Qt::Key_F))
            first = a;
    ASSERT_TRUE(first);
    first->trigger();
    EXPECT_TRUE(filter->spec().isDefault());
    EXPECT_EQ(window.selectedNodeKey(), "Functional.gelu.0.forward");
    EXPECT_TRUE(window.statusLine().contains("Filters cleared")) << window.statusLine().toStdString();
    EXPECT_TRUE(window.detailPanel()->hasNode());
}
