// SPDX-License-Identifier: Apache-2.0
// The application as a user meets it, second round (issue 28): the Open pair dialog says what each folder holds
// and refuses an ambiguous one, the window never vanishes, the failing column is in view, a job opens at its
// origin, run_ut's summary is labelled, every word follows the language.
#include "ui/panels/detailpanel.h"
#include "ui/panels/dumppreview.h"
#include "ui/panels/exportdialog.h"
#include "ui/panels/legendwidget.h"
#include "ui/panels/settingsdialog.h"
#include "ui/panels/shortcutsdialog.h"
#include "ui/inspect/metricplot.h"
#include "ui/inspect/nodetrendplot.h"
#include "ui/inspect/tensorinspector.h"
#include "ui/models/diagnosticsmodel.h"
#include "ui/models/rankoverviewmodel.h"
#include "ui/panels/settings.h"
#include "ui/views/rankmapview.h"
#include "core/job/origin.h"
#include "ui/models/nodebadges.h"
#include "ui/views/scriptedrun.h"
#include "ui/panels/runutdialog.h"
#include "ui/panels/taskprogressview.h"
#include "ui/models/runutresultmodel.h"
#include "ui/panels/openpairdialog.h"
#include "ui/views/comparetreeview.h"
#include "ui/views/mainwindow.h"

#include "testconfig.h"

#include <QApplication>
#include <QDialogButtonBox>
#include <QDir>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QAbstractButton>
#include <QCheckBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QListWidget>
#include <QStyle>
#include <QStyleOptionButton>
#include <QTableWidget>
#include <QTimer>
#include <QToolTip>
#include <QComboBox>
#include <QFile>
#include <QGroupBox>
#include <QHeaderView>
#include <QMainWindow>
#include <QMenu>
#include <QMenuBar>
#include <QPlainTextEdit>
#include <QRegularExpression>
#include <QTabBar>
#include <QTabWidget>
#include <QXmlStreamReader>
#include <QScrollBar>
#include <QTemporaryDir>
#include <QTableView>
#include <QSignalSpy>
#include <QTest>

#include <qcustomplot.h>

#include <gtest/gtest.h>

#include <filesystem>

using namespace probescope;
namespace fs = std::filesystem;

namespace {

QString q(const fs::path& p) { return QString::fromStdString(p.string()); }

fs::path demoRoot() { return probescope::testing::sourceDir() / "resources" / "demo"; }

fs::path fixture(const char* name) { return probescope::testing::fixturesDir() / name; }

QString shotPath(const char* name) { return QStringLiteral(PROBESCOPE_TEST_OUTPUT_DIR "/") + QLatin1String(name); }

/// Saves a picture for the report too, when PROBESCOPE_SHOTS names a folder.
void saveShot(QWidget* widget, const char* name)
{
    EXPECT_TRUE(widget->grab().save(shotPath(name)));
    if (const char* dir = std::getenv("PROBESCOPE_SHOTS"); dir && *dir)
        widget->grab().save(QDir(QString::fromLocal8Bit(dir)).filePath(QLatin1String(name)));
}

struct DialogParts
{
    QPushButton* open = nullptr;
    QLabel* reason = nullptr;
    QLineEdit* npu = nullptr;
    QLineEdit* bench = nullptr;
};

DialogParts partsOf(ui::OpenPairDialog& dialog)
{
    DialogParts p;
    p.open = dialog.findChild<QDialogButtonBox*>()->button(QDialogButtonBox::Open);
    p.reason = dialog.findChild<QLabel*>("missingReason");
    p.npu = dialog.findChild<QLineEdit*>("npuField");
    p.bench = dialog.findChild<QLineEdit*>("benchField");
    return p;
}

} // namespace

// Issue 28 item 1: the demo root holds npu/ and bench/ (two dumps at step0 · rank). On either side it is refused
// with a reason before Open, and Enter does not open it.
TEST(OpenPair, AFolderHoldingTwoDumpsIsRefusedOnEitherSide)
{
    const QString root = q(demoRoot());
    const QString bench = q(demoRoot() / "bench");
    for (const bool npuSide : { true, false }) {
        ui::OpenPairDialog dialog(ui::Settings {}, npuSide ? root : bench, npuSide ? bench : root);
        dialog.show();
        const DialogParts p = partsOf(dialog);
        ASSERT_TRUE(p.open && p.reason && p.npu && p.bench);
        EXPECT_FALSE(p.open->isEnabled()) << (npuSide ? "NPU" : "bench") << " side";
        EXPECT_TRUE(p.reason->isVisible());
        EXPECT_TRUE(p.reason->text().contains(npuSide ? "NPU" : "bench")) << p.reason->text().toStdString();
        EXPECT_TRUE(p.reason->text().contains("step0")) << p.reason->text().toStdString();
        EXPECT_TRUE(dialog.pairPreview().isEmpty()) << "nothing is said to be compared";
        // The sound side still says what it holds.
        EXPECT_TRUE((npuSide ? dialog.benchPreview() : dialog.npuPreview()).contains("2 steps"));
        QTest::keyClick(&dialog, Qt::Key_Return);
        EXPECT_TRUE(dialog.isVisible()) << "Enter does not accept";
        EXPECT_NE(dialog.result(), QDialog::Accepted);
        if (npuSide)
            saveShot(&dialog, "newuser-open-pair-demo-root.png");
    }
    EXPECT_FALSE(ui::pairProblem(root, bench).isEmpty());
    EXPECT_TRUE(ui::pairProblem(q(demoRoot() / "npu"), bench).isEmpty());
}

// The window never vanishes: the same folder given by any way in (here openInputs, which the dialog, drops, the
// recent pairs and the command line all use) is refused with the reason in the status line.
TEST(OpenPair, TheWindowRefusesAnAmbiguousFolderInsteadOfCrashing)
{
    ui::MainWindow window;
    window.setQuiet(true);
    window.show();
    QSignalSpy finished(&window, &ui::MainWindow::analysisFinished);
    for (const auto& [npu, bench] : { std::pair(demoRoot(), demoRoot() / "bench"), std::pair(demoRoot() / "npu", demoRoot()) }) {
        finished.clear();
        EXPECT_FALSE(window.openInputs(q(npu), q(bench)));
        ASSERT_EQ(finished.size(), 1);
        EXPECT_FALSE(finished.front().at(0).toBool());
        EXPECT_TRUE(window.statusLine().contains("step0")) << window.statusLine().toStdString();
        EXPECT_FALSE(window.isComparing());
        EXPECT_TRUE(window.isVisible());
    }
    // A sound pair still opens afterwards.
    finished.clear();
    ASSERT_TRUE(window.openInputs(q(demoRoot() / "npu"), q(demoRoot() / "bench")));
    ASSERT_TRUE(finished.wait(120000));
    EXPECT_TRUE(finished.front().at(0).toBool());
}

// What each side holds is said before Open, at every level: a dump root, a step, a rank, a dump.json, a .pkl.
TEST(OpenPair, EachSideSaysWhatItHoldsAndThePairPreviewsWhatIsCompared)
{
    ui::OpenPairDialog dialog(ui::Settings {}, QString(), QString());
    dialog.show();
    const DialogParts p = partsOf(dialog);
    ASSERT_TRUE(p.open && p.npu && p.bench);

    // Root against root: both steps.
    p.npu->setText(q(demoRoot() / "npu"));
    p.bench->setText(q(demoRoot() / "bench"));
    EXPECT_TRUE(dialog.npuPreview().contains("2 steps (step0, step1)")) << dialog.npuPreview().toStdString();
    EXPECT_TRUE(dialog.npuPreview().contains("1 rank (rank)")) << dialog.npuPreview().toStdString();
    EXPECT_TRUE(dialog.npuPreview().contains("dump.json")) << dialog.npuPreview().toStdString();
    EXPECT_TRUE(dialog.npuPreview().contains("task tensor")) << dialog.npuPreview().toStdString();
    EXPECT_TRUE(dialog.pairPreview().contains("2 pairs")) << dialog.pairPreview().toStdString();
    EXPECT_TRUE(p.open->isEnabled());
    saveShot(&dialog, "newuser-open-pair-preview.png");

    // A step folder on the bench side: one pair, the other step said to be skipped.
    p.bench->setText(q(demoRoot() / "bench" / "step1"));
    EXPECT_TRUE(dialog.benchPreview().contains("1 step (step1)")) << dialog.benchPreview().toStdString();
    EXPECT_TRUE(dialog.pairPreview().contains("1 pair")) << dialog.pairPreview().toStdString();
    EXPECT_TRUE(dialog.pairPreview().contains("step1")) << dialog.pairPreview().toStdString();
    EXPECT_TRUE(dialog.pairPreview().contains("no step 0")) << dialog.pairPreview().toStdString();
    EXPECT_TRUE(p.open->isEnabled());

    // A rank folder against a dump.json.
    p.npu->setText(q(demoRoot() / "npu" / "step0" / "rank"));
    p.bench->setText(q(demoRoot() / "bench" / "step0" / "rank" / "dump.json"));
    EXPECT_TRUE(dialog.npuPreview().contains("1 step (step0)")) << dialog.npuPreview().toStdString();
    EXPECT_TRUE(dialog.benchPreview().contains("dump.json")) << dialog.benchPreview().toStdString();
    EXPECT_TRUE(dialog.pairPreview().contains("1 pair")) << dialog.pairPreview().toStdString();
    EXPECT_TRUE(p.open->isEnabled());

    // ptdbg_ascend: a .pkl on each side.
    const fs::path pkl = fixture("legacy_ptdbg") / "all_mode";
    p.npu->setText(q(pkl / "npu" / "ptdbg_dump_v6.0" / "step0" / "rank0" / "dump.pkl"));
    p.bench->setText(q(pkl / "bench" / "ptdbg_dump_v6.0" / "step0" / "rank0" / "dump.pkl"));
    EXPECT_TRUE(dialog.npuPreview().contains("ptdbg_ascend .pkl")) << dialog.npuPreview().toStdString();
    EXPECT_TRUE(dialog.pairPreview().contains("1 pair")) << dialog.pairPreview().toStdString();
    EXPECT_TRUE(p.open->isEnabled());

    // A folder without any dump: the reason is discovery's.
    p.npu->setText(q(demoRoot() / "npu" / "step0" / "rank" / "dump_tensor_data"));
    EXPECT_FALSE(p.open->isEnabled());
    EXPECT_TRUE(p.reason->text().contains("no dump found")) << p.reason->text().toStdString();
}

// Typing waits for a pause before discovery runs, and Open stays off meanwhile.
TEST(OpenPair, TypingUpdatesAfterAPause)
{
    ui::OpenPairDialog dialog(ui::Settings {}, QString(), q(demoRoot() / "bench"));
    dialog.show();
    const DialogParts p = partsOf(dialog);
    p.npu->setFocus();
    QTest::keyClicks(p.npu, q(demoRoot() / "npu"));
    EXPECT_FALSE(p.open->isEnabled());
    EXPECT_TRUE(QTest::qWaitFor([&] { return p.open->isEnabled(); }, 3000));
    EXPECT_TRUE(dialog.npuPreview().contains("2 steps"));
}

// Item 10: Tab goes from the NPU field to the bench field (not to Browse).
TEST(OpenPair, TabGoesFromTheNpuFieldToTheBenchField)
{
    ui::OpenPairDialog dialog(ui::Settings {}, QString(), QString());
    dialog.show();
    QApplication::setActiveWindow(&dialog);
    ASSERT_TRUE(QTest::qWaitForWindowActive(&dialog));
    const DialogParts p = partsOf(dialog);
    p.npu->setFocus();
    ASSERT_EQ(QApplication::focusWidget(), p.npu);
    QTest::keyClick(p.npu, Qt::Key_Tab);
    EXPECT_EQ(QApplication::focusWidget(), p.bench);
    QTest::keyClick(p.bench, Qt::Key_Tab);
    EXPECT_EQ(QApplication::focusWidget(), dialog.findChild<QPushButton*>("npuFieldBrowse"));
}

namespace {

bool openPair(ui::MainWindow& window, const fs::path& npu, const fs::path& bench)
{
    QSignalSpy finished(&window, &ui::MainWindow::analysisFinished);
    if (!window.openInputs(q(npu), q(bench)))
        return false;
    return (!finished.isEmpty() || finished.wait(120000)) && finished.front().at(0).toBool();
}

/// Whether the failing leaf's column of the details is wholly inside the table's viewport.
::testing::AssertionResult failingColumnInView(ui::MainWindow& window)
{
    QApplication::processEvents();
    ui::DetailPanel* detail = window.detailPanel();
    if (!detail->hasNode())
        return ::testing::AssertionFailure() << "no node in the details";
    const int column = detail->failingColumn();
    if (column < 0)
        return ::testing::AssertionFailure() << window.selectedNodeKey().toStdString() << " has no failing leaf";
    QTableView* view = detail->rowsView();
    const QRect cell = view->visualRect(view->model()->index(0, column));
    const int width = view->viewport()->width();
    if (cell.left() < 0 || cell.right() >= width || cell.width() < 20)
        return ::testing::AssertionFailure() << window.selectedNodeKey().toStdString() << ": column " << column << " at "
                                             << cell.left() << ".." << cell.right() << ", viewport " << width;
    return ::testing::AssertionSuccess();
}

} // namespace

// Item 2: after F, N and Shift+N the failing leaf's figures are on screen, wherever the table was scrolled.
TEST(Details, TheFailingColumnIsInViewAfterFAndNAndShiftN)
{
    ui::MainWindow window;
    window.setQuiet(true);
    window.resize(1400, 860);
    window.show();
    ASSERT_TRUE(openPair(window, fixture("modelA_tensor_mix") / "npu", fixture("modelA_tensor_mix") / "bench"));
    QTableView* view = window.detailPanel()->rowsView();
    // A node with many leaves, scrolled to its right end, as a user leaves it.
    ASSERT_TRUE(window.selectNodeByKey("Module.block.ffn.FeedForward.forward.0"));
    QApplication::processEvents();
    view->horizontalScrollBar()->setValue(view->horizontalScrollBar()->maximum());
    window.treeView()->setFocus();
    QTest::keyClick(window.treeView(), Qt::Key_F);
    EXPECT_EQ(window.selectedNodeKey(), "Functional.gelu.0.forward");
    EXPECT_TRUE(failingColumnInView(window));
    saveShot(&window, "newuser-details-after-F.png");
    saveShot(window.detailPanel(), "newuser-details-panel-after-F.png");
    for (int i = 0; i < 4; ++i) {
        view->horizontalScrollBar()->setValue(i % 2 ? 0 : view->horizontalScrollBar()->maximum());
        QTest::keyClick(window.treeView(), Qt::Key_N);
        EXPECT_TRUE(failingColumnInView(window)) << "after N #" << i;
    }
    QTest::keyClick(window.treeView(), Qt::Key_N, Qt::ShiftModifier);
    EXPECT_TRUE(failingColumnInView(window)) << "after Shift+N";
}

// Item 5: a job opens at its origin (rank 1's relu in the all_reduce fixture, not rank 0's all_reduce), and the
// status line says "Job origin (O)".
TEST(Job, AJobOpensAtItsOriginAndSaysSo)
{
    const fs::path job = fixture("msprobe26_da") / "SYNTH_allreduce_group_2r" / "inputs";
    ui::MainWindow window;
    window.setQuiet(true);
    window.resize(1400, 860);
    window.show();
    QSignalSpy overview(&window, &ui::MainWindow::overviewFinished);
    ASSERT_TRUE(openPair(window, job / "npu", job / "bench"));
    EXPECT_EQ(window.currentPair(), 0);
    ASSERT_TRUE(overview.wait(120000));
    ASSERT_TRUE(QTest::qWaitFor([&] { return window.selectedNodeKey() == "Functional.relu.0.forward" && !window.isComparing(); },
                                60000))
        << window.selectedNodeKey().toStdString();
    const session::RankPair& pair = window.plan()->pairs[std::size_t(window.currentPair())];
    EXPECT_EQ(pair.npu.rankLabel, "rank1");
    EXPECT_TRUE(window.statusLine().contains("Job origin (O): step 0 rank1, node Functional.relu.0.forward"))
        << window.statusLine().toStdString();

    // Rank 0 (another pair of the job): its own first failure, and where the job's origin is.
    window.showPair(0);
    ASSERT_TRUE(QTest::qWaitFor([&] { return window.currentPair() == 0 && !window.isComparing() && window.analysis(); }, 60000));
    EXPECT_TRUE(window.statusLine().contains("This rank")) << window.statusLine().toStdString();
    EXPECT_TRUE(window.statusLine().contains("Job origin (O): step 0 rank1, node Functional.relu.0.forward"))
        << window.statusLine().toStdString();
}

// A single pair says its first failing node as before (no job, no origin).
TEST(Job, ASinglePairSaysItsFirstFailingNode)
{
    ui::MainWindow window;
    window.setQuiet(true);
    window.show();
    const fs::path pair = fixture("modelA_tensor_mix");
    ASSERT_TRUE(openPair(window, pair / "npu" / "step0" / "rank", pair / "bench" / "step0" / "rank"));
    EXPECT_TRUE(window.statusLine().startsWith("First failing node: Functional.gelu.0.forward")) << window.statusLine().toStdString();
}

namespace {

ui::RunUtApiRow runUtRow(int index, const char* name, const char* forward, const char* backward, const char* dumped)
{
    ui::RunUtApiRow r;
    r.index = index;
    r.fullName = name;
    r.forward = forward;
    r.backward = backward;
    r.overall = QString(forward) == "SKIP" ? QStringLiteral("SKIP") : ui::worseRunUtStatus(forward, backward);
    r.dumpedForward = dumped;
    r.dumpedOverall = dumped;
    return r;
}

/// Four APIs: two whose replay passes but whose dumped outputs fail (verdict error), one pass, one SKIP; the
/// backend's own first line counts the replay alone, as the LibTorch engine's does.
class ReplayPassesDumpFails : public ui::RunUtBackend
{
public:
    bool isAvailable() const override { return true; }
    QString unavailableReason() const override { return {}; }
    ui::RunUtResult run(const ui::RunUtRequest& request, ProgressSink& progress) override { return runLive(request, progress, {}); }
    ui::RunUtResult runLive(const ui::RunUtRequest&, ProgressSink& progress, const ui::RunUtApiSink& onApi) override
    {
        const QList<ui::RunUtApiRow> rows { runUtRow(0, "Functional.conv2d.0", "pass", "pass", "pass"),
                                            runUtRow(1, "Functional.gelu.0", "pass", "pass", "error"),
                                            runUtRow(2, "Torch.matmul.0", "pass", "pass", "error"),
                                            runUtRow(3, "Torch.ones_like.0", "SKIP", "", "") };
        progress.setRange(4);
        for (int i = 0; i < rows.size(); ++i) {
            if (onApi)
                onApi(rows[i]);
            progress.advance(std::uint64_t(i + 1));
        }
        ui::RunUtResult r;
        r.ok = true;
        r.summary = QStringLiteral("4 APIs: 3 pass, 0 warning, 0 error, 1 SKIP in 0.0 s\nFirst API whose dumped outputs fail "
                                   "against the bench: Functional.gelu.0");
        return r;
    }
};

} // namespace

// Item 4: run_ut's summary lines are labelled (verdict; replay; dumped outputs) and the column that explains an
// "error" beside a passing replay sits next to the verdict, on screen.
TEST(RunUt, SummaryLinesAreLabelledAndTheDumpedColumnIsBesideTheVerdict)
{
    QTemporaryDir out;
    ui::RunUtDialog dialog(std::make_unique<ReplayPassesDumpFails>());
    dialog.task().setPollInterval(10);
    ui::RunUtRequest request = dialog.request();
    request.dumpJson = q(fixture("modelA_statistics_mix") / "npu" / "step0" / "rank" / "dump.json");
    request.outputDir = out.path();
    dialog.setRequest(request);
    dialog.show();
    QSignalSpy done(&dialog, &ui::RunUtDialog::runFinished);
    dialog.startRun();
    ASSERT_TRUE(done.wait(10000));
    const QString text = dialog.findChild<ui::TaskProgressView*>()->text();
    const QStringList lines = text.split('\n');
    const auto lineWith = [&](const QString& start) {
        for (const QString& l : lines) {
            if (l.startsWith(start))
                return l;
        }
        return QString();
    };
    EXPECT_TRUE(lineWith("Verdict").contains("4 APIs: 1 pass, 0 warning, 2 error, 1 SKIP")) << text.toStdString();
    EXPECT_TRUE(lineWith("Replay").contains("3 pass, 0 warning, 0 error, 1 SKIP")) << text.toStdString();
    EXPECT_TRUE(lineWith("Dumped outputs").contains("1 pass, 0 warning, 2 error, 1 not judged")) << text.toStdString();
    EXPECT_TRUE(text.contains("First API whose dumped outputs fail")) << text.toStdString();
    EXPECT_FALSE(text.contains("4 APIs: 3 pass")) << "the backend's unlabelled counts are not repeated";

    QTableView* view = dialog.resultView();
    QHeaderView* header = view->horizontalHeader();
    EXPECT_EQ(header->visualIndex(ui::RunUtResultModel::DumpedColumn), header->visualIndex(ui::RunUtResultModel::VerdictColumn) + 1);
    QApplication::processEvents();
    const int dumpedRight = view->columnViewportPosition(ui::RunUtResultModel::DumpedColumn)
        + view->columnWidth(ui::RunUtResultModel::DumpedColumn);
    EXPECT_LE(dumpedRight, view->viewport()->width()) << "the explaining column is not cut off";
    const QModelIndex gelu = view->model()->index(1, ui::RunUtResultModel::VerdictColumn);
    EXPECT_EQ(gelu.data().toString(), "error");
    EXPECT_TRUE(gelu.data(Qt::ToolTipRole).toString().contains("dumped outputs")) << gelu.data(Qt::ToolTipRole).toString().toStdString();
    saveShot(&dialog, "newuser-runut-summary.png");
}

// ----- item 3: every word in the chosen language, at once and back -------------------------------------------

namespace {

bool hasCjk(const QString& text)
{
    for (const QChar c : text) {
        if (c.unicode() >= 0x4E00 && c.unicode() <= 0x9FFF)
            return true;
    }
    return false;
}

/// English phrases of the catalogue whose Chinese differs: seen in the Chinese UI, they are untranslated text.
/// A phrase is a run of the source between placeholders, tags and accelerators: two words or more, or a single
/// word of four letters or more. Phrases that a translation itself contains (dump, step, Cosine, …) are not.
struct EnglishPhrases
{
    QStringList multiWord;
    QStringList singleWord;
};

EnglishPhrases englishPhrases()
{
    QFile file(QStringLiteral(PROBESCOPE_TS_FILE));
    EXPECT_TRUE(file.open(QIODevice::ReadOnly));
    QXmlStreamReader xml(&file);
    QList<std::pair<QString, QString>> messages; // source, translation
    QString source;
    while (!xml.atEnd()) {
        xml.readNext();
        if (!xml.isStartElement())
            continue;
        if (xml.name() == QLatin1String("source")) {
            source = xml.readElementText();
        } else if (xml.name() == QLatin1String("translation")) {
            const auto type = xml.attributes().value(QLatin1String("type"));
            if (type == QLatin1String("vanished") || type == QLatin1String("obsolete"))
                continue;
            QString translation;
            while (xml.readNext() != QXmlStreamReader::EndElement || xml.name() != QLatin1String("translation")) {
                if (xml.isCharacters())
                    translation += xml.text();
                if (xml.atEnd())
                    break;
            }
            messages.append({ source, translation });
        }
    }
    QString allTranslations;
    for (const auto& [s, t] : messages)
        allTranslations += t + QLatin1Char('\n');
    static const QRegularExpression splitter(QStringLiteral("%(?:\\d+|n|L\\d+)|<[^>]*>|&|\\(|\\)|\\n|[:;,.!?…—·\"“”]|\\s-\\s"));
    static const QRegularExpression word(QStringLiteral("^[A-Za-z]{4,}$"));
    static const QRegularExpression twoWords(QStringLiteral("[A-Za-z]{2,}\\s+[A-Za-z]{2,}"));
    QSet<QString> multi, single;
    for (const auto& [s, t] : messages) {
        if (t.isEmpty() || t == s)
            continue;
        for (QString part : s.split(splitter, Qt::SkipEmptyParts)) {
            part = part.trimmed();
            if (part.isEmpty() || allTranslations.contains(part))
                continue;
            if (word.match(part).hasMatch())
                single.insert(part);
            else if (twoWords.match(part).hasMatch())
                multi.insert(part);
        }
    }
    return { multi.values(), single.values() };
}

struct SeenText
{
    QString where;
    QString text;
};

void addText(QList<SeenText>& out, const QString& where, QString text)
{
    text.remove(QRegularExpression(QStringLiteral("<[^>]*>")));
    text.remove(QChar(0x200B)); // break opportunities in long names
    if (!text.trimmed().isEmpty())
        out.append({ where, text });
}

void collectPlot(QList<SeenText>& out, QCustomPlot* plot, const QString& where)
{
    for (QCPAxis* axis : plot->axisRect()->axes())
        addText(out, where + "/axis", axis->label());
    for (int i = 0; i < plot->legend->itemCount(); ++i) {
        if (auto* item = qobject_cast<QCPPlottableLegendItem*>(plot->legend->item(i)))
            addText(out, where + "/legend", item->plottable()->name());
    }
    for (int i = 0; i < plot->plotLayout()->elementCount(); ++i) {
        if (auto* title = qobject_cast<QCPTextElement*>(plot->plotLayout()->elementAt(i)))
            addText(out, where + "/title", title->text());
    }
    for (int i = 0; i < plot->itemCount(); ++i) {
        if (auto* text = qobject_cast<QCPItemText*>(plot->item(i)); text && text->visible())
            addText(out, where + "/text", text->text());
    }
}

/// Whether `w` sits in the Details panel, whose table cells and stacks are the compare's and the dump's data.
bool inDetails(const QWidget* w)
{
    for (const QObject* o = w; o; o = o->parent()) {
        if (qobject_cast<const ui::DetailPanel*>(o))
            return true;
    }
    return false;
}

void collectView(QList<SeenText>& out, QAbstractItemView* view, const QString& where)
{
    QAbstractItemModel* model = view->model();
    const bool data = inDetails(view);
    if (!model)
        return;
    auto* table = qobject_cast<QTableView*>(view);
    for (int c = 0; c < model->columnCount(); ++c) {
        if (table && table->isColumnHidden(c))
            continue;
        if (!table || table->horizontalHeader()->isVisible())
            addText(out, where + "/header", model->headerData(c, Qt::Horizontal).toString());
        for (int r = 0; r < std::min(model->rowCount(), data ? 0 : 40); ++r) {
            addText(out, where + "/cell", model->index(r, c).data().toString());
            addText(out, where + "/tip", model->index(r, c).data(Qt::ToolTipRole).toString());
        }
    }
    if (table && table->verticalHeader()->isVisible()) {
        for (int r = 0; r < model->rowCount(); ++r)
            addText(out, where + "/rowheader", model->headerData(r, Qt::Vertical).toString());
    }
}

/// Every text a user can see in `root` as it is now (visible widgets only; hidden tabs are walked by the caller).
QList<SeenText> visibleTexts(QWidget* root)
{
    QList<SeenText> out;
    QList<QWidget*> widgets = root->findChildren<QWidget*>();
    widgets.prepend(root);
    for (QWidget* w : widgets) {
        if (!w->isVisible())
            continue;
        const QString where = QString::fromLatin1(w->metaObject()->className()) + QLatin1Char('#') + w->objectName();
        if (w->isWindow())
            addText(out, where + "/title", w->windowTitle());
        addText(out, where + "/tooltip", w->toolTip());
        if (auto* label = qobject_cast<QLabel*>(w))
            addText(out, where, label->text());
        else if (auto* button = qobject_cast<QAbstractButton*>(w))
            addText(out, where, button->text());
        else if (auto* box = qobject_cast<QGroupBox*>(w))
            addText(out, where, box->title());
        else if (auto* edit = qobject_cast<QLineEdit*>(w))
            addText(out, where + "/placeholder", edit->placeholderText());
        else if (auto* combo = qobject_cast<QComboBox*>(w)) {
            for (int i = 0; i < combo->count(); ++i)
                addText(out, where + "/item", combo->itemText(i));
            addText(out, where + "/placeholder", combo->placeholderText());
        } else if (auto* bar = qobject_cast<QTabBar*>(w)) {
            for (int i = 0; i < bar->count(); ++i)
                addText(out, where + "/tab", bar->tabText(i));
        } else if (auto* plot = qobject_cast<QCustomPlot*>(w))
            collectPlot(out, plot, where);
        else if (auto* view = qobject_cast<QAbstractItemView*>(w); view && !qobject_cast<QHeaderView*>(w))
            collectView(out, view, where);
        else if (auto* text = qobject_cast<QPlainTextEdit*>(w); text && !text->toPlainText().startsWith("File "))
            addText(out, where, text->toPlainText().left(400)); // not a stack: frames are the dump's
    }
    if (auto* window = qobject_cast<QMainWindow*>(root)) {
        for (QAction* a : window->menuBar()->actions()) {
            addText(out, "menu", a->text());
            if (a->menu()) {
                for (QAction* item : a->menu()->actions())
                    addText(out, "menu/" + a->text(), item->text() + QLatin1Char('\n') + item->statusTip());
            }
        }
    }
    return out;
}

/// Texts of the wrong language: Chinese characters in English, or English phrases of the catalogue in Chinese.
/// The allow-list: names and texts that come from the dump or from msprobe (Err_message, dump values), not from us.
QStringList g_dataTexts;

QStringList wrongLanguage(const QList<SeenText>& texts, bool chinese, const EnglishPhrases& phrases)
{
    QStringList wrong;
    for (SeenText t : texts) {
        if (!chinese) {
            if (hasCjk(t.text) && t.text != QStringLiteral("简体中文")) // the language's own name, in the picker
                wrong << t.where + ": " + t.text;
            continue;
        }
        for (const QString& d : g_dataTexts)
            t.text.remove(d);
        if (t.where.contains("freeBenchmarkTable/cell") && (t.text == "forward" || t.text == "backward"))
            continue; // free_benchmark.csv's own column
        QString found;
        for (const QString& p : phrases.multiWord) {
            if (t.text.contains(p))
                found = p;
        }
        // A single word counts where it stands alone: not inside a dump name (Module.fc2.Linear) or a path.
        for (const QString& w : phrases.singleWord) {
            const QRegularExpression alone(QStringLiteral("(?<![\\w./_-])%1(?![\\w./_-])").arg(QRegularExpression::escape(w)));
            if (alone.match(t.text).hasMatch())
                found = w;
        }
        if (!found.isEmpty())
            wrong << t.where + " [" + found + "]: " + t.text.left(200);
    }
    wrong.removeDuplicates();
    return wrong;
}

} // namespace

TEST(Language, EveryPanelTabPlotDialogAndBadgeSwitchesBothWays)
{
    const EnglishPhrases phrases = englishPhrases();
    ASSERT_GT(phrases.multiWord.size() + phrases.singleWord.size(), 200);

    ui::MainWindow window;
    window.setQuiet(true);
    window.resize(1500, 950);
    window.show();
    QSignalSpy overview(&window, &ui::MainWindow::overviewFinished);
    ASSERT_TRUE(openPair(window, demoRoot() / "npu", demoRoot() / "bench"));
    ASSERT_TRUE(overview.wait(120000));
    ASSERT_TRUE(QTest::qWaitFor([&] { return !window.isComparing() && window.analysis(); }, 60000));
    ASSERT_TRUE(window.selectFirstFailure());
    const QString selected = window.selectedNodeKey();
    {
        const auto& table = *window.analysis()->table;
        const int err = table.column("Err_message");
        for (std::size_t r = 0; err >= 0 && r < table.rows.size(); ++r) {
            const auto cell = table.rows[r][std::size_t(err)];
            if (cell.isString() && !cell.asString().empty())
                g_dataTexts << QString::fromStdString(cell.asString()).trimmed();
        }
        g_dataTexts.removeDuplicates();
    }
    // run_ut's badges on the shown dump, the Tensors tab on the selected node's failing leaf.
    const QString dumpJson = q(window.plan()->pairs[std::size_t(window.currentPair())].npu.dumpFile);
    QString api = selected;
    api.chop(QStringLiteral(".forward").size());
    window.applyRunUtVerdicts(dumpJson, { ui::RunUtVerdict { api, "pass", "pass", "", "error", "" } });
    ASSERT_FALSE(window.nodeBadges()->badges(ui::NodeBadgeDelegate::RunUt).isEmpty());
    QTabWidget* tabs = window.tabs();
    tabs->setCurrentWidget(window.tensorInspector());
    EXPECT_TRUE(QTest::qWaitFor([&] { return window.tensorInspector()->state() == ui::TensorInspector::State::Ready; }, 30000));

    // A free benchmark run in a second window, and the dialogs: one left open across the switch.
    ui::MainWindow freeBench;
    freeBench.setQuiet(true);
    freeBench.resize(1200, 800);
    freeBench.show();
    ASSERT_TRUE(freeBench.openInputs(q(probescope::testing::testDataDir() / "freebench" / "run"), QString()));
    ASSERT_TRUE(QTest::qWaitFor([&] { return freeBench.isFreeBenchmarkShown(); }, 30000));
    ui::OpenPairDialog openDialog(ui::Settings {}, q(demoRoot() / "npu"), q(demoRoot() / "bench"));
    openDialog.show();

    const auto walk = [&](bool chinese, const char* label) {
        QStringList wrong;
        const auto check = [&](QWidget* root, const QString& where) {
            QApplication::processEvents();
            for (const QString& w : wrongLanguage(visibleTexts(root), chinese, phrases))
                wrong << where + " / " + w;
        };
        for (int i = 0; i < tabs->count(); ++i) {
            tabs->setCurrentIndex(i);
            check(&window, QStringLiteral("main, tab %1").arg(i));
        }
        for (int i = 0; i < freeBench.tabs()->count(); ++i) {
            freeBench.tabs()->setCurrentIndex(i);
            check(&freeBench, QStringLiteral("free benchmark, tab %1").arg(i));
        }
        // The status lines and the badges, whatever is shown.
        QList<SeenText> extra;
        addText(extra, "status", window.statusLine());
        addText(extra, "free benchmark status", freeBench.statusLine());
        for (const ui::NodeBadge& b : window.nodeBadges()->badges(ui::NodeBadgeDelegate::RunUt))
            addText(extra, "run_ut badge", b.text + QLatin1Char('\n') + b.toolTip);
        for (const QString& w : wrongLanguage(extra, chinese, phrases))
            wrong << w;
        check(&openDialog, "open pair dialog (open across the switch)");
        {
            ui::OpenPairDialog fresh(ui::Settings {}, QString(), QString());
            fresh.show();
            check(&fresh, "open pair dialog");
        }
        {
            ui::ShortcutsDialog shortcuts(window.shortcutList());
            shortcuts.show();
            check(&shortcuts, "shortcuts");
        }
        {
            ui::SettingsDialog settings(ui::Settings {});
            settings.show();
            check(&settings, "settings");
        }
        {
            auto runUt = window.createRunUtDialog(std::make_unique<ReplayPassesDumpFails>());
            runUt->show();
            check(runUt.get(), "run_ut");
        }
        {
            ui::ExportDialog exportDialog(window.analysis(), ui::Settings {});
            exportDialog.show();
            check(&exportDialog, "export");
        }
        EXPECT_TRUE(wrong.isEmpty()) << label << ": " << wrong.size() << " texts in the other language:\n"
                                     << wrong.join('\n').toStdString();
        if (chinese) {
            tabs->setCurrentIndex(0);
            QApplication::processEvents();
            saveShot(&window, "newuser-zh_CN-main.png");
            tabs->setCurrentWidget(window.tensorInspector());
            QApplication::processEvents();
            saveShot(&window, "newuser-zh_CN-tensors.png");
            tabs->setCurrentIndex(1);
            QApplication::processEvents();
            saveShot(&window, "newuser-zh_CN-metric-plot.png");
            saveShot(&freeBench, "newuser-zh_CN-free-benchmark.png");
            saveShot(&openDialog, "newuser-zh_CN-open-pair.png");
        }
    };
    walk(false, "English before");
    ASSERT_TRUE(ui::switchLanguage(*qApp, "zh_CN"));
    QTest::qWait(200);
    walk(true, "简体中文");
    ASSERT_TRUE(ui::switchLanguage(*qApp, "en"));
    QTest::qWait(200);
    walk(false, "English again");
}

// ----- items 6 to 10 --------------------------------------------------------------------------------------------

// Item 6: every failing node that is not the first failure says why; and a reason line is never repeated.
TEST(Details, RedRowsThatAreNotTheFirstFailureSayWhy)
{
    ui::MainWindow window;
    window.setQuiet(true);
    window.resize(1400, 860);
    window.show();
    const fs::path pair = fixture("modelA_tensor_mix");
    ASSERT_TRUE(openPair(window, pair / "npu" / "step0" / "rank", pair / "bench" / "step0" / "rank"));
    const auto analysis = window.analysis();
    const auto& tree = *analysis->skeleton->tree;
    const auto& status = *analysis->status;
    int checked = 0;
    for (std::uint32_t id = 0; id < tree.size(); ++id) {
        if (!session::isFailing(status.own[id]) || id == analysis->firstFailure.node.value)
            continue;
        window.detailPanel()->setNode(analysis, id);
        const QStringList reasons = window.detailPanel()->reasons();
        ASSERT_FALSE(reasons.isEmpty());
        EXPECT_TRUE(reasons.back().startsWith("Not ")) << std::string(tree.node(tree::NodeId { id }).key) << ": "
                                                       << reasons.join(" | ").toStdString();
        EXPECT_EQ(reasons.size(), QSet<QString>(reasons.begin(), reasons.end()).size()) << "a line said twice";
        ++checked;
    }
    EXPECT_GT(checked, 3);
}

// Item 7: the salvaged notch shows on the origin's cell (drawn inside its heavy frame) and the origin line says
// that its pair was salvaged.
TEST(RankMapSalvage, TheOriginsSalvagedMarkAndSentence)
{
    session::SessionPlan plan;
    for (int rank = 0; rank < 2; ++rank) {
        session::RankPair p;
        p.step = 0;
        p.npu.rank = rank;
        p.npu.rankLabel = "rank" + std::to_string(rank);
        p.bench = p.npu;
        plan.pairs.push_back(p);
    }
    ui::RankOverviewModel model;
    ui::RankMapView view;
    view.setModel(&model);
    view.resize(400, 300);
    view.show();
    ASSERT_TRUE(QTest::qWaitForWindowExposed(&view));
    model.setPlan(plan);
    std::vector<session::PairSummary> summaries;
    for (std::size_t i = 0; i < 2; ++i) {
        session::PairSummary s;
        s.pairIndex = i;
        s.nodes = 10;
        s.failure.step = 0;
        s.failure.rank = static_cast<std::uint32_t>(i);
        s.failure.rankLabel = plan.pairs[i].npu.rankLabel;
        s.counts[std::size_t(session::Status::Pass)] = 10;
        if (i == 1) {
            s.counts[std::size_t(session::Status::Error)] = 1;
            s.firstFailure.found = true;
            s.firstFailure.key = "Functional.gelu.0.forward";
            s.firstFailure.executionIndex = 7;
            job::locateFailure(s.failure, s.firstFailure, nullptr);
            s.salvaged = "npu/step0/rank1/dump.json: cut after 1234 bytes; 10 entries read";
        }
        summaries.push_back(s);
    }
    model.setSummaries(summaries);
    ASSERT_EQ(model.originRow(), 1);
    EXPECT_TRUE(model.originText().contains("salvaged")) << model.originText().toStdString();
    EXPECT_TRUE(model.originText().contains("cut after 1234 bytes")) << model.originText().toStdString();
    QApplication::processEvents();
    const QImage image = view.viewport()->grab().toImage();
    const QRect rect = view.cellRect(1, 0).adjusted(1, 1, -1, -1);
    const int n = std::max(7, view.cellSize().height() / 2);
    const QColor ink = view.palette().color(QPalette::Text);
    // Inside the heavy frame, where only the notch can be.
    EXPECT_EQ(image.pixelColor(rect.topLeft() + QPoint(n - 1, 4)).rgb(), ink.rgb());
    saveShot(&view, "newuser-rankmap-salvaged-origin.png");
}

// Item 8: the Tensors tab shows the selected node's failing tensor; its empty hint says how to get one.
TEST(Tensors, TheTabLoadsTheSelectedNodesFailingLeaf)
{
    EXPECT_TRUE(ui::TensorInspector::emptyHint().contains("double-click")) << ui::TensorInspector::emptyHint().toStdString();
    ui::MainWindow window;
    window.setQuiet(true);
    window.resize(1400, 860);
    window.show();
    const fs::path pair = fixture("modelA_tensor_mix");
    ASSERT_TRUE(openPair(window, pair / "npu" / "step0" / "rank", pair / "bench" / "step0" / "rank"));
    ASSERT_TRUE(window.selectFirstFailure());
    window.tabs()->setCurrentWidget(window.tensorInspector());
    ui::TensorInspector* inspector = window.tensorInspector();
    EXPECT_NE(inspector->state(), ui::TensorInspector::State::Empty);
    EXPECT_TRUE(QString::fromStdString(inspector->files().npuName).startsWith("Functional.gelu.0.forward.output"))
        << inspector->files().npuName;
    EXPECT_TRUE(QTest::qWaitFor([&] { return inspector->state() == ui::TensorInspector::State::Ready && !inspector->isSliceLoading(); }, 30000));
    // A redraw of the shown slice (log colours, a language change) keeps its title: it once read freed memory.
    const auto heatmapTitle = [&] {
        QCustomPlot* plot = inspector->heatmapPlot();
        for (int i = 0; i < plot->plotLayout()->elementCount(); ++i) {
            if (auto* t = qobject_cast<QCPTextElement*>(plot->plotLayout()->elementAt(i)))
                return t->text();
        }
        return QString();
    };
    QApplication::processEvents();
    const QString title = heatmapTitle();
    auto* logColours = inspector->findChild<QCheckBox*>();
    ASSERT_NE(logColours, nullptr);
    logColours->toggle();
    logColours->toggle();
    EXPECT_EQ(heatmapTitle(), title);
    // Another node while the tab is shown: it follows.
    ASSERT_TRUE(window.selectNodeByKey("Module.block.ffn.FeedForward.forward.0"));
    EXPECT_TRUE(QString::fromStdString(inspector->files().npuName).startsWith("Module.block.ffn.FeedForward.forward.0"))
        << inspector->files().npuName;
}

// Item 9: the first impression is what to do; the legend comes with data.
TEST(FirstImpression, AnEmptyStateWithOpenPairDemoAndRecentPairs)
{
    ui::MainWindow window;
    window.setQuiet(true);
    window.show();
    QApplication::processEvents();
    ASSERT_NE(window.emptyState(), nullptr);
    EXPECT_TRUE(window.emptyState()->isVisible());
    EXPECT_FALSE(window.legend()->isVisible());
    auto* open = window.emptyState()->findChild<QPushButton*>("emptyOpenPair");
    auto* demo = window.emptyState()->findChild<QPushButton*>("emptyOpenDemo");
    ASSERT_TRUE(open && demo);
    EXPECT_TRUE(open->isVisible() && demo->isVisible());
    EXPECT_EQ(open->text(), "Open pair…");
    saveShot(&window, "newuser-empty-state.png");
    QSignalSpy finished(&window, &ui::MainWindow::analysisFinished);
    demo->click();
    ASSERT_TRUE(finished.wait(120000));
    EXPECT_FALSE(window.emptyState()->isVisible());
    EXPECT_TRUE(window.treeView()->isVisible());
    EXPECT_TRUE(window.legend()->isVisible());
    // The demo is a recent pair now: the next window lists it.
    ui::MainWindow next;
    next.show();
    auto* recent = next.emptyState()->findChild<QListWidget*>("emptyRecentPairs");
    ASSERT_NE(recent, nullptr);
    ASSERT_GE(recent->count(), 1);
    EXPECT_TRUE(recent->item(0)->text().contains("demo")) << recent->item(0)->text().toStdString();
}

// Item 10: the dark theme's check boxes have a visible frame.
TEST(SmallItems, DarkThemeCheckBoxesAreVisible)
{
    ui::applyTheme(*qApp, ui::Theme::Dark);
    QWidget host;
    auto* box = new QCheckBox(QStringLiteral("Fuzzy matching (-f)"), &host);
    host.resize(240, 40);
    host.show();
    QApplication::processEvents();
    const QImage image = box->grab().toImage();
    QStyleOptionButton option;
    option.initFrom(box);
    const QRect indicator = box->style()->subElementRect(QStyle::SE_CheckBoxIndicator, &option, box);
    int brightest = 0;
    for (int y = indicator.top(); y <= indicator.bottom(); ++y) {
        for (int x = indicator.left(); x <= indicator.right(); ++x)
            brightest = std::max(brightest, image.pixelColor(x, y).lightness());
    }
    const int window = box->palette().color(QPalette::Window).lightness();
    saveShot(&host, "newuser-dark-checkbox.png");
    ui::applyTheme(*qApp, ui::Theme::System);
    EXPECT_GE(brightest - window, 70) << "brightest " << brightest << " on a window of " << window;
}

// Item 10: Diagnostics gives the message the room; the location is elided.
TEST(SmallItems, DiagnosticsMessageKeepsHalfTheWidth)
{
    QTemporaryDir tmp;
    const fs::path to = fs::path(tmp.path().toStdString()) / "step0";
    fs::copy(fixture("modelA_tensor_mix") / "npu" / "step0", to, fs::copy_options::recursive);
    const fs::path json = to / "rank" / "dump.json";
    fs::permissions(json, fs::perms::owner_write, fs::perm_options::add);
    fs::resize_file(json, fs::file_size(json) * 60 / 100);
    ui::MainWindow window;
    window.setQuiet(true);
    window.resize(1400, 860);
    window.show();
    ASSERT_TRUE(openPair(window, to, fixture("modelA_tensor_mix") / "bench" / "step0"));
    window.showDiagnostics();
    QApplication::processEvents();
    auto* view = window.findChild<QTableView*>("diagnostics");
    ASSERT_NE(view, nullptr);
    ASSERT_GT(view->model()->rowCount(), 0);
    const int message = view->columnWidth(ui::DiagnosticsModel::MessageColumn);
    EXPECT_GE(message * 2, view->viewport()->width() - 4) << message << " of " << view->viewport()->width();
    EXPECT_LE(view->columnWidth(ui::DiagnosticsModel::LocationColumn), view->viewport()->width() / 4);
    saveShot(&window, "newuser-diagnostics.png");
}

// Item 10: F1 lists the tree's keys and shows every description whole.
TEST(SmallItems, ShortcutsListTreeKeysAndWholeDescriptions)
{
    ui::MainWindow window;
    const QList<ui::ShortcutEntry> entries = window.shortcutList();
    QStringList keys;
    for (const ui::ShortcutEntry& e : entries) {
        for (const QKeySequence& k : e.keys)
            keys << k.toString();
    }
    for (const char* k : { "Right", "Left", "+", "-", "*", "O", "P", "F", "N" })
        EXPECT_TRUE(keys.contains(QString::fromLatin1(k))) << k;
    ui::ShortcutsDialog dialog(entries);
    dialog.show();
    QApplication::processEvents();
    QTableWidget* table = dialog.table();
    const int width = table->columnWidth(2);
    for (int r = 0; r < table->rowCount(); ++r) {
        const QString text = table->item(r, 2)->text();
        const QRect needed = table->fontMetrics().boundingRect(QRect(0, 0, width - 8, 100000), Qt::TextWordWrap, text);
        EXPECT_GE(table->rowHeight(r), needed.height()) << text.toStdString();
        EXPECT_LE(table->columnViewportPosition(2) + width, table->viewport()->width() + 1);
    }
    saveShot(&dialog, "newuser-shortcuts.png");
}

// Item 10: the rank table's headers are whole ("Exec. index", not "Exec. in…").
TEST(SmallItems, RankTableHeadersAreWhole)
{
    ui::RankOverviewModel model;
    ui::RankOverviewPanel panel(&model);
    panel.resize(900, 500);
    panel.show();
    // The font a platform theme applies after construction (Xvfb's was wider than the one measured at first).
    QFont wider = panel.font();
    wider.setPointSizeF(wider.pointSizeF() * 1.6);
    panel.setFont(wider);
    QApplication::processEvents();
    auto* table = panel.findChild<QTableView*>("rankOverview");
    ASSERT_NE(table, nullptr);
    QHeaderView* h = table->horizontalHeader();
    QFont bold = h->font();
    bold.setBold(true);
    for (int c = 0; c < ui::RankOverviewModel::ColumnCount; ++c) {
        if (c == ui::RankOverviewModel::FirstFailureColumn)
            continue;
        const QString title = model.headerData(c, Qt::Horizontal).toString();
        const int needed = QFontMetrics(bold).horizontalAdvance(title) + 2 * h->style()->pixelMetric(QStyle::PM_HeaderMargin, nullptr, h);
        EXPECT_GE(h->sectionSize(c), needed) << title.toStdString();
    }
}

// Item 10: the across-steps legend of a dump without rank folders names the sides, not "rank NPU".
TEST(SmallItems, AcrossStepsLegendNamesTheSides)
{
    ui::MainWindow window;
    window.setQuiet(true);
    window.resize(1400, 860);
    window.show();
    ASSERT_TRUE(openPair(window, demoRoot() / "npu", demoRoot() / "bench"));
    auto* trend = window.findChild<ui::NodeTrendPlot*>();
    ASSERT_NE(trend, nullptr);
    QSignalSpy loaded(trend, &ui::NodeTrendPlot::loadingFinished);
    ASSERT_TRUE(window.selectFirstFailure());
    if (loaded.isEmpty()) {
        ASSERT_TRUE(loaded.wait(60000));
    }
    QStringList names;
    for (const auto& s : trend->series())
        names << s.name;
    EXPECT_TRUE(names.contains("NPU")) << names.join('|').toStdString();
    EXPECT_TRUE(names.contains("bench")) << names.join('|').toStdString();
    EXPECT_FALSE(names.join('|').contains("rank")) << names.join('|').toStdString();
}

namespace {

// Answers the next modal file dialog with `path` (the widget dialog: offscreen has no native one).
void answerFileDialog(const QString& path)
{
    QTimer::singleShot(50, qApp, [path] {
        auto* dialog = qobject_cast<QFileDialog*>(QApplication::activeModalWidget());
        if (!dialog) {
            answerFileDialog(path);
            return;
        }
        if (auto* name = dialog->findChild<QLineEdit*>("fileNameEdit"))
            name->setText(path);
        QMetaObject::invokeMethod(dialog, "accept");
    });
}

} // namespace

// Item 10: Save PNG says where it wrote the picture.
TEST(SmallItems, SavePngConfirms)
{
    QTemporaryDir tmp;
    ui::MetricPlot plot;
    plot.resize(500, 350);
    plot.show();
    QApplication::processEvents();
    const QString path = tmp.filePath("metric.png");
    answerFileDialog(path);
    plot.findChild<QPushButton*>("savePng")->click();
    EXPECT_TRUE(QFileInfo::exists(path));
    EXPECT_TRUE(QToolTip::isVisible());
    EXPECT_TRUE(QToolTip::text().contains("Saved")) << QToolTip::text().toStdString();
    EXPECT_TRUE(QToolTip::text().contains("metric.png")) << QToolTip::text().toStdString();
}

// Beyond the list: every panel is reachable from the keyboard (Alt+0 the tree, Alt+1… the tabs), and F1 lists it.
TEST(Keyboard, EveryPanelIsReachable)
{
    ui::MainWindow window;
    window.setQuiet(true);
    window.resize(1400, 860);
    window.show();
    QApplication::setActiveWindow(&window);
    ASSERT_TRUE(QTest::qWaitForWindowActive(&window));
    ASSERT_TRUE(openPair(window, demoRoot() / "npu", demoRoot() / "bench"));
    QTabWidget* tabs = window.tabs();
    for (int i = 0; i < tabs->count(); ++i) {
        QTest::keyClick(&window, Qt::Key(Qt::Key_1 + i), Qt::AltModifier);
        EXPECT_EQ(tabs->currentIndex(), i);
        QWidget* focus = QApplication::focusWidget();
        ASSERT_NE(focus, nullptr) << "tab " << i;
        EXPECT_TRUE(tabs->isAncestorOf(focus)) << "tab " << i << ": focus on " << focus->metaObject()->className();
    }
    QTest::keyClick(&window, Qt::Key_0, Qt::AltModifier);
    EXPECT_EQ(QApplication::focusWidget(), window.treeView());
    QStringList keys;
    for (const ui::ShortcutEntry& e : window.shortcutList()) {
        for (const QKeySequence& k : e.keys)
            keys << k.toString();
    }
    for (const char* k : { "Alt+0", "Alt+1", "Alt+6" })
        EXPECT_TRUE(keys.contains(QString::fromLatin1(k))) << k;
}

// Item 5: a user who moved before the origin was known stays where they went.
TEST(Job, AUserWhoMovedIsNotTakenToTheOrigin)
{
    const fs::path job = fixture("msprobe26_da") / "SYNTH_allreduce_group_2r" / "inputs";
    ui::MainWindow window;
    window.setQuiet(true);
    window.resize(1400, 860);
    window.show();
    QSignalSpy overview(&window, &ui::MainWindow::overviewFinished);
    ASSERT_TRUE(openPair(window, job / "npu", job / "bench"));
    ASSERT_TRUE(overview.isEmpty()) << "the overview ran faster than this test can move";
    ASSERT_TRUE(window.selectNodeByKey("Distributed.all_reduce.0.forward"));
    ASSERT_TRUE(overview.wait(120000));
    QTest::qWait(200);
    EXPECT_EQ(window.currentPair(), 0);
    EXPECT_EQ(window.selectedNodeKey(), "Distributed.all_reduce.0.forward");
    EXPECT_TRUE(window.statusLine().contains("Job origin (O): step 0 rank1")) << window.statusLine().toStdString();
}
