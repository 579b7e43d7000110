// SPDX-License-Identifier: Apache-2.0
// The panels and dialogs of ui/panels on the real msprobe fixtures (gelu is the injected bug).
#include "core/compare/pipeline/comparerun.h"
#include "core/compare/table/pytext.h"
#include "ui/panels/detailpanel.h"
#include "ui/panels/elidedlabel.h"
#include "ui/panels/exportdialog.h"
#include "ui/panels/filterbar.h"
#include "ui/panels/legendwidget.h"
#include "ui/models/noderowsmodel.h"
#include "ui/panels/runutdialog.h"
#include "ui/panels/searchbar.h"
#include "ui/panels/settings.h"
#include "ui/panels/settingsdialog.h"
#include "ui/panels/shortcutsdialog.h"
#include "ui/panels/taskprogressview.h"
#include "ui/models/statuspalette.h"
#include "core/session/session.h"
#include "core/tempdir.h"
#include "testconfig.h"

#include <QAbstractItemModelTester>
#include <QAction>
#include <QApplication>
#include <QProxyStyle>
#include <QCheckBox>
#include <QClipboard>
#include <QComboBox>
#include <QCoreApplication>
#include <QDialogButtonBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QFile>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QScrollBar>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardItemModel>
#include <QTableView>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QTextBrowser>
#include <QToolButton>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <map>
#include <thread>

using namespace probescope;
using namespace probescope::ui;
using session::Status;

namespace {

constexpr const char* kGelu = "Functional.gelu.0.forward";

/// The step-0 analysis of a fixture (tensor / statistics / md5), computed once per test program.
std::shared_ptr<const session::PairAnalysis> analysis(const std::string& fixture,
                                                     compare::Profile profile = compare::Profile::Msprobe12)
{
    static std::map<std::pair<std::string, compare::Profile>, std::shared_ptr<const session::PairAnalysis>> cache;
    auto& slot = cache[{ fixture, profile }];
    if (slot)
        return slot;
    const auto base = probescope::testing::fixturesDir() / fixture;
    auto plan = session::planSession(base / "npu", base / "bench");
    EXPECT_TRUE(plan.ok()) << (plan.ok() ? "" : plan.error().format());
    if (!plan.ok() || plan->pairs.empty())
        return nullptr;
    session::AnalysisOptions options;
    options.threads = 2;
    options.profile = profile;
    auto result = session::analysePair(plan->pairs.front(), options);
    EXPECT_TRUE(result.ok()) << (result.ok() ? "" : result.error().format());
    if (result.ok())
        slot = *result;
    return slot;
}

quint32 geluNode(const session::PairAnalysis& a)
{
    auto id = a.skeleton->tree->find(kGelu);
    EXPECT_TRUE(id.has_value());
    return id ? id->value : 0;
}

/// Counts the warnings QAbstractItemModelTester reports (it warns in Warning mode).
struct TesterWarnings
{
    static inline std::atomic<int> count { 0 };
    static inline QtMessageHandler previous = nullptr;
    TesterWarnings()
    {
        count = 0;
        previous = qInstallMessageHandler([](QtMsgType type, const QMessageLogContext& ctx, const QString& msg) {
            if (type == QtWarningMsg && QString::fromUtf8(ctx.category ? ctx.category : "").contains(QLatin1String("modeltest")))
                ++count;
            if (type == QtWarningMsg && msg.contains(QLatin1String("FAIL!")))
                ++count;
            if (previous)
                previous(type, ctx, msg);
        });
    }
    ~TesterWarnings() { qInstallMessageHandler(previous); }
};

QString screenshotDir()
{
    const QString dir = QCoreApplication::applicationDirPath() + QStringLiteral("/screenshots-panels");
    QDir().mkpath(dir);
    return dir;
}

void saveShot(QWidget& w, const QString& name)
{
    w.show();
    QApplication::processEvents();
    EXPECT_TRUE(w.grab().save(screenshotDir() + QLatin1Char('/') + name));
}

int column(const NodeRowsModel& m, const QString& title)
{
    for (int c = 0; c < m.columnCount(); ++c) {
        if (m.headerData(c, Qt::Horizontal).toString() == title)
            return c;
    }
    return -1;
}

// Every table cell a column shows equals what msprobe's xlsx shows for that cell.
void expectCellsMatchTable(const NodeRowsModel& m, const session::PairAnalysis& a)
{
    for (int r = 0; r < m.rowCount(); ++r) {
        for (int c = 0; c < m.columnCount(); ++c) {
            const int tc = m.index(r, c).data(NodeRowsModel::TableColumnRole).toInt();
            if (tc < 0)
                continue;
            std::string t = compare::excelText(a.table->rows[m.tableRow(r)][static_cast<std::size_t>(tc)]);
            while (!t.empty() && t.back() == '\t')
                t.pop_back();
            EXPECT_EQ(m.index(r, c).data().toString().toStdString(), t) << "row " << r << " column " << c;
        }
    }
}

/// gelu's NodeRowsModel under QAbstractItemModelTester; at the end every shown cell is checked against
/// the table and the tester must have stayed silent.
struct CheckedGeluRows
{
    explicit CheckedGeluRows(std::shared_ptr<const session::PairAnalysis> a)
        : analysis(std::move(a))
    {
        model.setNode(analysis, geluNode(*analysis));
    }
    ~CheckedGeluRows()
    {
        expectCellsMatchTable(model, *analysis);
        EXPECT_EQ(warnings.count.load(), 0);
    }
    QString cell(int row, const char* title) const { return model.cellText(row, column(model, title)); }

    std::shared_ptr<const session::PairAnalysis> analysis;
    TesterWarnings warnings;
    NodeRowsModel model;
    QAbstractItemModelTester tester { &model, QAbstractItemModelTester::FailureReportingMode::Warning };
};

} // namespace

// ---------------------------------------------------------------------------------------------------
// NodeRowsModel

TEST(NodeRowsModel, TensorGeluRowsSideBySide)
{
    auto a = analysis("modelA_tensor_mix");
    ASSERT_TRUE(a);
    CheckedGeluRows g(a);
    NodeRowsModel& model = g.model;
    ASSERT_EQ(model.rowCount(), 2);
    EXPECT_EQ(model.cellText(0, 0), "input.0");
    EXPECT_EQ(model.cellText(1, 0), "output.0");
    const std::size_t out = model.tableRow(1);
    EXPECT_EQ(a->table->rows[out][0].asString(), "Functional.gelu.0.forward.output.0");

    // Values as msprobe writes them (expected/nostack/step0/compare_result.csv line 178).
    EXPECT_EQ(g.cell(1, "NPU dtype"), "torch.float32");
    EXPECT_EQ(g.cell(1, "Bench shape"), "[4, 16, 32]");
    EXPECT_EQ(g.cell(1, "Cosine"), "0.879928374486");
    EXPECT_EQ(g.cell(1, "MaxAbsErr"), "1.163048326969");
    EXPECT_EQ(g.cell(1, "MaxRelativeErr"), "4594.5234375");
    EXPECT_EQ(g.cell(1, "NPU max"), "2.118187427520752");
    EXPECT_EQ(g.cell(1, "Bench max"), "1.515306949615479");
    EXPECT_EQ(g.cell(1, "Accuracy reached"), "No");
    EXPECT_EQ(g.cell(1, "Err_message"),
              "The input/parameters's one thousandth err ratio exceeds 0.9, while the output's is below 0.6");
    EXPECT_EQ(g.cell(1, "NPU data file"), "Functional.gelu.0.forward.output.0.pt");
    EXPECT_EQ(g.cell(1, "Bench data file"), "Functional.gelu.0.forward.output.0.pt");
    EXPECT_TRUE(QFile::exists(model.npuDataPath(1)));
    EXPECT_TRUE(QFile::exists(model.benchDataPath(1)));
    // NPU and bench of one statistic sit next to each other.
    EXPECT_EQ(column(model, "Bench max"), column(model, "NPU max") + 1);
    EXPECT_EQ(column(model, "EucDist"), -1); // msprobe 1.2 has no EucDist: not shown

    // Verdict: text and icon, and the row painted in its status colour.
    const int verdict = column(model, "Verdict");
    ASSERT_GE(verdict, 0);
    EXPECT_EQ(model.rowStatus(0), Status::Pass);
    EXPECT_EQ(model.rowStatus(1), Status::Error);
    EXPECT_EQ(model.cellText(1, verdict), "Error");
    EXPECT_FALSE(model.index(1, verdict).data(Qt::DecorationRole).value<QIcon>().isNull());
    EXPECT_EQ(model.index(1, 3).data(Qt::BackgroundRole).value<QBrush>().color(), QColor("#FF704D"));
    EXPECT_EQ(model.index(0, 3).data(Qt::BackgroundRole).value<QBrush>().color(), QColor("#FFFCF3"));
    model.setDarkTheme(true);
    EXPECT_EQ(model.index(1, 3).data(Qt::BackgroundRole).value<QBrush>().color(), statuspalette::fill(Status::Error, true));
    EXPECT_EQ(model.index(1, 0).data(NodeRowsModel::TableRowRole).toULongLong(), out);
}

TEST(NodeRowsModel, StatisticsGelu)
{
    auto a = analysis("modelA_statistics_mix");
    ASSERT_TRUE(a);
    CheckedGeluRows g(a);
    ASSERT_EQ(g.model.rowCount(), 2);
    EXPECT_EQ(g.cell(1, "Max diff"), "0.6028804779052734");
    EXPECT_EQ(g.cell(1, "MaxRelativeErr"), "39.78603002238321%");
    EXPECT_EQ(g.cell(1, "NormRelativeErr"), "14.730211114889538%");
    EXPECT_EQ(g.cell(0, "MaxRelativeErr"), "0.0%");
    EXPECT_EQ(g.cell(1, "Err_message"),
              "The output's maximum relative error exceeds 0.1, while the input/parameters's is below 0.01");
    EXPECT_EQ(column(g.model, "Cosine"), -1);
    EXPECT_EQ(column(g.model, "NPU data file"), -1); // statistics dumps have no tensor files
    EXPECT_TRUE(session::isFailing(g.model.rowStatus(1)));
    EXPECT_EQ(g.model.rowStatus(0), Status::Pass);
}

TEST(NodeRowsModel, Md5Gelu)
{
    auto a = analysis("modelA_md5_mix");
    ASSERT_TRUE(a);
    CheckedGeluRows g(a);
    ASSERT_EQ(g.model.rowCount(), 2);
    EXPECT_EQ(g.cell(0, "NPU md5"), "6dfb6d17");
    EXPECT_EQ(g.cell(0, "Bench md5"), "6dfb6d17");
    EXPECT_EQ(g.cell(0, "Result"), "pass");
    EXPECT_EQ(g.cell(1, "NPU md5"), "9afbd094");
    EXPECT_EQ(g.cell(1, "Bench md5"), "7c0389b0");
    EXPECT_EQ(g.cell(1, "Result"), "Different");
    EXPECT_EQ(g.model.rowStatus(1), Status::Error);
    EXPECT_EQ(column(g.model, "NPU max"), -1);
}

TEST(NodeRowsModel, Msprobe26ProfileColumns)
{
    auto a = analysis("modelA_tensor_mix", compare::Profile::Msprobe26);
    ASSERT_TRUE(a);
    CheckedGeluRows g(a);
    ASSERT_EQ(g.model.rowCount(), 2);
    // msprobe 26 adds EucDist, the requires_grad pair and its own Result column.
    EXPECT_GE(column(g.model, "EucDist"), 0);
    EXPECT_GE(column(g.model, "NPU requires_grad"), 0);
    EXPECT_GE(column(g.model, "Result"), 0);
    EXPECT_EQ(column(g.model, "Accuracy reached"), -1);
    EXPECT_EQ(g.cell(1, "Cosine"), "0.879928374486");
    EXPECT_TRUE(session::isFailing(g.model.rowStatus(1)));
    EXPECT_EQ(g.cell(1, "NPU data file"), "Functional.gelu.0.forward.output.0.pt");
}

TEST(NodeRowsModel, EveryNodeOfTheTensorPairPassesTheTester)
{
    auto a = analysis("modelA_tensor_mix");
    ASSERT_TRUE(a);
    TesterWarnings warnings;
    NodeRowsModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Warning);
    std::size_t rows = 0;
    for (quint32 n = 0; n < a->skeleton->tree->size(); ++n) {
        model.setNode(a, n);
        rows += static_cast<std::size_t>(model.rowCount());
        if (n % 16 == 0)
            expectCellsMatchTable(model, *a);
    }
    EXPECT_EQ(rows, a->table->rows.size()); // every row belongs to exactly one node
    EXPECT_EQ(warnings.count.load(), 0);
    EXPECT_EQ(NodeRowsModel::leafName("Module.a.B.forward.0.input.0", "Module.a.B.forward.0"), "input.0");
    EXPECT_EQ(NodeRowsModel::leafName("Other.x", "Module.a"), "Other.x");
}

// ---------------------------------------------------------------------------------------------------
// DetailPanel

TEST(DetailPanel, ShowsGeluReasonsStackAndCopies)
{
    auto a = analysis("modelA_tensor_mix");
    ASSERT_TRUE(a);
    DetailPanel panel;
    panel.resize(1100, 640);
    panel.setNode(a, geluNode(*a));
    ASSERT_TRUE(panel.hasNode());
    const QStringList reasons = panel.reasons();
    ASSERT_GE(reasons.size(), 2);
    EXPECT_EQ(reasons[0],
              "output.0: The input/parameters's one thousandth err ratio exceeds 0.9, while the output's is below 0.6");
    EXPECT_TRUE(reasons.back().startsWith("First failing node in execution order")) << reasons.back().toStdString();
    EXPECT_TRUE(panel.npuStackText().contains("File ")) << panel.npuStackText().toStdString();
    EXPECT_TRUE(panel.npuStackText().contains("models.py")) << panel.npuStackText().toStdString();
    EXPECT_FALSE(panel.benchStackText().isEmpty());

    // The table shows the fields down and the node's rows across (no scrolling sideways for a node's
    // figures); Err_message is not a field there, the reasons above say it with the row it belongs to.
    QTableView* view = panel.rowsView();
    NodeRowsModel* m = panel.rowsModel();
    QAbstractItemModel* shown = view->model();
    const int cosine = column(*m, "Cosine");
    const int dtype = column(*m, "NPU dtype");
    const int err = m->columnOfTableColumn("Err_message");
    ASSERT_TRUE(dtype > 0 && cosine > dtype && err >= 0);
    EXPECT_EQ(shown->rowCount(), m->columnCount());
    EXPECT_EQ(shown->columnCount(), m->rowCount());
    EXPECT_EQ(shown->headerData(cosine, Qt::Vertical).toString(), "Cosine");
    EXPECT_EQ(shown->index(cosine, 1).data().toString(), "0.879928374486");
    EXPECT_TRUE(view->isRowHidden(err));
    EXPECT_FALSE(view->isRowHidden(cosine));
    panel.show();
    QApplication::processEvents();
    EXPECT_FALSE(view->horizontalScrollBar()->isVisible()); // every row of the node fits across

    // Ctrl+C on the table: the selected cells as TSV, as shown.
    view->selectionModel()->select(shown->index(0, 1), QItemSelectionModel::Select);
    view->selectionModel()->select(shown->index(dtype, 1), QItemSelectionModel::Select);
    view->selectionModel()->select(shown->index(cosine, 1), QItemSelectionModel::Select);
    view->selectionModel()->select(shown->index(0, 0), QItemSelectionModel::Select);
    QApplication::clipboard()->clear();
    view->setFocus();
    QApplication::processEvents();
    QTest::keySequence(view, QKeySequence::Copy);
    // The bounding box of the selection, one line per field, unselected cells empty.
    QString expected;
    for (int f = 0; f <= cosine; ++f) {
        const QString first = f == 0 ? QStringLiteral("input.0") : QString();
        const QString second = f == 0 ? QStringLiteral("output.0")
            : f == dtype              ? QStringLiteral("torch.float32")
            : f == cosine             ? QStringLiteral("0.879928374486")
                                      : QString();
        expected += first + '\t' + second + '\n';
    }
    EXPECT_EQ(QApplication::clipboard()->text().toStdString(), expected.toStdString());

    panel.copyDetails();
    const QString details = QApplication::clipboard()->text();
    EXPECT_TRUE(details.startsWith("Node: Functional.gelu.0.forward\n")) << details.toStdString();
    EXPECT_TRUE(details.contains("  - output.0: The input/parameters's one thousandth err ratio exceeds 0.9"));
    EXPECT_TRUE(details.contains("0.879928374486"));
    EXPECT_TRUE(details.contains("NPU stack:\nFile "));
    EXPECT_TRUE(details.contains("Functional.gelu.0.forward.output.0.pt"));

    // Double-click opens the tensor inspector (through the window): the table row is emitted.
    QSignalSpy activated(&panel, &DetailPanel::rowActivated);
    const QRect cell = view->visualRect(shown->index(0, 1));
    // QTest's widget double-click sends only the DblClick event; a real one comes after a click.
    QTest::mouseClick(view->viewport(), Qt::LeftButton, {}, cell.center());
    QTest::mouseDClick(view->viewport(), Qt::LeftButton, {}, cell.center());
    ASSERT_EQ(activated.count(), 1);
    EXPECT_EQ(activated.front().front().value<std::size_t>(), m->tableRow(1));

    saveShot(panel, "detailpanel-tensor-gelu.png");
    view->scrollTo(shown->index(shown->rowCount() - 1, 1));
    saveShot(panel, "detailpanel-tensor-gelu-bottom.png");
    panel.clear();
    EXPECT_FALSE(panel.hasNode());
    EXPECT_EQ(m->rowCount(), 0);
}

TEST(DetailPanel, Md5AndStatisticsReasonsAndDarkScreenshot)
{
    auto md5 = analysis("modelA_md5_mix");
    ASSERT_TRUE(md5);
    DetailPanel panel;
    panel.resize(1000, 560);
    panel.setNode(md5, geluNode(*md5));
    ASSERT_FALSE(panel.reasons().isEmpty());
    EXPECT_EQ(panel.reasons().front(), "output.0: md5 differs (NPU 9afbd094, bench 7c0389b0)");

    auto stats = analysis("modelA_statistics_mix");
    ASSERT_TRUE(stats);
    panel.setNode(stats, geluNode(*stats));
    EXPECT_EQ(panel.reasons().front(),
              "output.0: The output's maximum relative error exceeds 0.1, while the input/parameters's is below 0.01");
    applyTheme(*qApp, Theme::Dark);
    QApplication::processEvents();
    EXPECT_EQ(panel.rowsModel()->index(1, 0).data(Qt::BackgroundRole).value<QBrush>().color(),
              statuspalette::fill(panel.rowsModel()->rowStatus(1), true));
    saveShot(panel, "detailpanel-statistics-gelu-dark.png");
    applyTheme(*qApp, Theme::System);
    QApplication::processEvents();
    EXPECT_EQ(panel.rowsModel()->index(1, 0).data(Qt::BackgroundRole).value<QBrush>().color(),
              statuspalette::fill(panel.rowsModel()->rowStatus(1), false));
}

TEST(DetailPanel, IndexesToTsvFillsGapsAndFlattensText)
{
    QStandardItemModel m(3, 3);
    m.setItem(0, 0, new QStandardItem("a"));
    m.setItem(0, 2, new QStandardItem("two\tparts"));
    m.setItem(2, 1, new QStandardItem("line\nbreak"));
    // Selection order does not matter; cells not selected inside the bounding box stay empty.
    const QString tsv = DetailPanel::indexesToTsv({ m.index(2, 1), m.index(0, 2), m.index(0, 0) });
    EXPECT_EQ(tsv.toStdString(), "a\t\ttwo parts\n\t\t\n\tline break\t\n");
    EXPECT_TRUE(DetailPanel::indexesToTsv({}).isEmpty());
}

// Issue 19 item 8: the status line's message was cut at its end at 1400 px.
TEST(ElidedLabel, ElidesInTheMiddleAndKeepsTheWholeTextInItsTooltip)
{
    ElidedLabel label;
    const QString text = "Compared step0 · rank0 ↔ rank0: first failing node "
                         "Module.layers.31.mlp.down_proj.Linear.forward.0 (execution #1234567), 3 error(s)  [12.34 s]";
    label.setText(text);
    label.resize(260, 30);
    label.show();
    QApplication::processEvents();
    EXPECT_EQ(label.fullText(), text);
    EXPECT_NE(label.text(), text);
    EXPECT_TRUE(label.text().contains(QChar(0x2026))) << label.text().toStdString();
    EXPECT_TRUE(label.text().startsWith("Compared")) << label.text().toStdString();
    EXPECT_TRUE(label.text().endsWith("[12.34 s]")) << label.text().toStdString(); // the figures stay
    EXPECT_EQ(label.toolTip(), text);
    EXPECT_EQ(label.minimumSizeHint().width(), 0); // never widens the status bar
    label.resize(2000, 30);
    QApplication::processEvents();
    EXPECT_EQ(label.text(), text);
    EXPECT_TRUE(label.toolTip().isEmpty());
}

// ---------------------------------------------------------------------------------------------------
// SearchBar

TEST(SearchBar, DebouncesTypingIntoOneRequest)
{
    SearchBar bar;
    bar.show();
    QSignalSpy spy(&bar, &SearchBar::searchRequested);
    QTest::keyClicks(bar.lineEdit(), "gelu.0");
    EXPECT_EQ(spy.count(), 0); // nothing while typing
    ASSERT_TRUE(spy.wait(2000));
    QTest::qWait(bar.debounceInterval() + 100);
    ASSERT_EQ(spy.count(), 1);
    EXPECT_EQ(spy.front().at(0).toString(), "gelu.0");
    EXPECT_FALSE(spy.front().at(1).toBool());
    EXPECT_FALSE(spy.front().at(2).toBool());

    // A toggle searches again at once, with its new meaning.
    QToolButton* regex = nullptr;
    QToolButton* matchCase = nullptr;
    for (QToolButton* b : bar.findChildren<QToolButton*>()) {
        if (b->text() == ".*")
            regex = b;
        if (b->text() == "Aa")
            matchCase = b;
    }
    ASSERT_TRUE(regex && matchCase);
    matchCase->click();
    ASSERT_EQ(spy.count(), 2);
    EXPECT_TRUE(spy.at(1).at(2).toBool());

    bar.setHits(3, 17);
    EXPECT_EQ(bar.counterText(), "3 / 17");
    bar.setHits(0, 0);
    EXPECT_EQ(bar.counterText(), "No hits");
}

TEST(SearchBar, InvalidRegexIsShownAndNotSent)
{
    SearchBar bar;
    bar.show();
    bar.setRegex(true);
    QSignalSpy spy(&bar, &SearchBar::searchRequested);
    spy.clear();
    QTest::keyClicks(bar.lineEdit(), "gelu(");
    QTest::qWait(bar.debounceInterval() + 150);
    EXPECT_EQ(spy.count(), 0);
    EXPECT_FALSE(bar.isPatternValid());
    EXPECT_EQ(bar.counterText(), "Invalid regex");
    EXPECT_FALSE(bar.patternError().isEmpty());
    QTest::keyClick(bar.lineEdit(), Qt::Key_Backspace);
    ASSERT_TRUE(spy.wait(2000));
    EXPECT_TRUE(bar.isPatternValid());
    EXPECT_EQ(spy.back().at(0).toString(), "gelu");
    EXPECT_TRUE(spy.back().at(1).toBool());
    saveShot(bar, "searchbar.png");
}

TEST(SearchBar, EnterStepsAndFlushesAPendingSearch)
{
    SearchBar bar;
    bar.show();
    QSignalSpy search(&bar, &SearchBar::searchRequested);
    QSignalSpy next(&bar, &SearchBar::nextRequested);
    QSignalSpy previous(&bar, &SearchBar::previousRequested);
    QTest::keyClicks(bar.lineEdit(), "relu");
    QTest::keyClick(bar.lineEdit(), Qt::Key_Return); // pending search: sent now, no step
    EXPECT_EQ(search.count(), 1);
    EXPECT_EQ(next.count(), 0);
    QTest::keyClick(bar.lineEdit(), Qt::Key_Return);
    EXPECT_EQ(next.count(), 1);
    QTest::keyClick(bar.lineEdit(), Qt::Key_Return, Qt::ShiftModifier);
    EXPECT_EQ(previous.count(), 1);
    QTest::qWait(bar.debounceInterval() + 50);
    EXPECT_EQ(search.count(), 1);
}

// ---------------------------------------------------------------------------------------------------
// FilterBar

// Issue 19 item 9: an active chip looked grey and an inactive one white. Now a hidden status is dimmed,
// struck out and dashed, a shown one coloured and framed, and each says which it is.
TEST(FilterBar, ShownAndHiddenChipsLookDifferentAndSaySo)
{
    FilterBar bar;
    bar.setCounts({ 0, 0, 120, 7, 3, 2 });
    bar.resize(760, 36);
    QToolButton* pass = bar.statusButton(Status::Pass);
    QToolButton* error = bar.statusButton(Status::Error);
    ASSERT_TRUE(pass && error);
    EXPECT_EQ(pass->accessibleDescription(), "shown");
    EXPECT_TRUE(pass->toolTip().contains("shown")) << pass->toolTip().toStdString();
    const QImage shownIcon = pass->icon().pixmap(QSize(30, 16)).toImage();
    pass->click();
    EXPECT_EQ(pass->accessibleDescription(), "hidden");
    EXPECT_TRUE(pass->toolTip().contains("hidden")) << pass->toolTip().toStdString();
    EXPECT_TRUE(pass->styleSheet().contains("dashed"));
    EXPECT_TRUE(error->styleSheet().contains("solid"));
    const QImage hiddenIcon = pass->icon().pixmap(QSize(30, 16)).toImage();
    ASSERT_EQ(shownIcon.size(), hiddenIcon.size());
    // The hidden chip has no colour left.
    bool colourLeft = false;
    for (int y = 0; y < hiddenIcon.height(); ++y)
        for (int x = 0; x < hiddenIcon.width(); ++x) {
            const QRgb c = hiddenIcon.pixel(x, y);
            colourLeft = colourLeft || (qAlpha(c) > 0 && (qRed(c) != qGreen(c) || qGreen(c) != qBlue(c)));
        }
    EXPECT_FALSE(colourLeft);
    EXPECT_NE(shownIcon, hiddenIcon);
    saveShot(bar, "filterbar-pass-hidden.png");
    pass->click();
    EXPECT_EQ(pass->accessibleDescription(), "shown");
}

TEST(FilterBar, EmitsTheSpec)
{
    FilterBar bar;
    QSignalSpy spy(&bar, &FilterBar::filterChanged);
    EXPECT_TRUE(bar.spec().isDefault());
    bar.statusButton(Status::Pass)->click();
    ASSERT_EQ(spy.count(), 1);
    FilterSpec s = spy.back().front().value<FilterSpec>();
    EXPECT_EQ(s.statuses, (QSet<int> { int(Status::Error), int(Status::Warning), int(Status::Unmatched) }));
    EXPECT_FALSE(s.acceptsStatus(Status::Pass));
    EXPECT_TRUE(s.acceptsStatus(Status::Error));

    auto* direction = bar.findChildren<QComboBox*>().at(0);
    auto* kind = bar.findChildren<QComboBox*>().at(1);
    direction->setCurrentIndex(2);
    kind->setCurrentIndex(1);
    ASSERT_EQ(spy.count(), 3);
    s = spy.back().front().value<FilterSpec>();
    EXPECT_EQ(s.direction, FilterSpec::Backward);
    EXPECT_EQ(s.kind, FilterSpec::Module);
    EXPECT_TRUE(s.acceptsName(dump::parseEntryName("Module.conv.Conv2d.backward.0")));
    EXPECT_FALSE(s.acceptsName(dump::parseEntryName("Module.conv.Conv2d.forward.0")));
    EXPECT_FALSE(s.acceptsName(dump::parseEntryName("Functional.gelu.0.backward")));

    // The last status toggle cannot be switched off: an empty tree helps nobody.
    for (Status st : { Status::Error, Status::Warning, Status::Unmatched })
        bar.statusButton(st)->click();
    EXPECT_TRUE(bar.statusButton(Status::Unmatched)->isChecked());
    EXPECT_EQ(bar.spec().statuses, (QSet<int> { int(Status::Unmatched) }));

    bar.setCounts({ 0, 0, 120, 7, 3, 2 });
    EXPECT_EQ(bar.statusButton(Status::Error)->text(), "Error (2)");
    bar.reset();
    EXPECT_TRUE(bar.spec().isDefault());
    EXPECT_TRUE(spy.back().front().value<FilterSpec>().isDefault());
    saveShot(bar, "filterbar.png");
}

// ---------------------------------------------------------------------------------------------------
// LegendWidget and the palette

TEST(LegendWidget, ModeTextsAndBands)
{
    LegendWidget legend;
    legend.setMode(compare::CompareMode::Summary);
    EXPECT_TRUE(legend.descriptionText().contains("the darker the colour, the bigger the deviation"));
    legend.setMode(compare::CompareMode::Md5);
    EXPECT_TRUE(legend.descriptionText().contains("any input or output md5 differs"));
    legend.setMode(compare::CompareMode::RealData);
    EXPECT_TRUE(legend.descriptionText().startsWith("Real data: tensor error"));
    EXPECT_EQ(legend.entryText(Status::Pass), "Pass");
    session::ColorBands bands;
    bands.scheme = session::ColorBands::Scheme::ContinuousIndex;
    bands.warningFrom = 0.25;
    legend.setColorBands(bands);
    EXPECT_EQ(legend.entryText(Status::Warning), "Warning — index 0.25 to below 0.60");
    saveShot(legend, "legend-continuous.png");
    legend.setColorBands({});
    legend.resize(360, 190);
    saveShot(legend, "legend-rules.png");
}

TEST(StatusPalette, MsprobeColoursAndDistinctIcons)
{
    EXPECT_EQ(statuspalette::fill(Status::Pass, false), QColor("#FFFCF3"));
    EXPECT_EQ(statuspalette::fill(Status::Warning, false), QColor("#FFDC7F"));
    EXPECT_EQ(statuspalette::fill(Status::Error, false), QColor("#FF704D"));
    EXPECT_EQ(statuspalette::fill(Status::Unmatched, false), QColor("#C7C7C7"));
    QSet<QString> images;
    for (int s = 0; s < 6; ++s) {
        const auto st = static_cast<Status>(s);
        EXPECT_LT(statuspalette::fill(st, true).lightness(), 128);
        EXPECT_GT(statuspalette::fill(st, false).lightness(), 128);
        const QImage img = statuspalette::icon(st).pixmap(24, 24).toImage();
        QByteArray bytes(reinterpret_cast<const char*>(img.constBits()), img.sizeInBytes());
        images.insert(QString::fromLatin1(bytes.toBase64()));
        EXPECT_FALSE(statuspalette::label(st).isEmpty());
    }
    EXPECT_EQ(images.size(), 6); // six different pictures
    EXPECT_TRUE(statuspalette::isDark(QPalette(QColor("#202020"))));
    EXPECT_FALSE(statuspalette::isDark(QPalette(QColor("#F0F0F0"))));
}

// ---------------------------------------------------------------------------------------------------
// Settings

TEST(Settings, RoundTripThroughQSettings)
{
    QTemporaryDir dir;
    ASSERT_TRUE(dir.isValid());
    const QString file = dir.filePath("probescope.ini");
    Settings s;
    s.bands.scheme = session::ColorBands::Scheme::ContinuousIndex;
    s.bands.warningFrom = 0.2;
    s.bands.errorFrom = 0.45;
    s.theme = Theme::Dark;
    s.language = Language::SimplifiedChinese;
    s.threads = 6;
    s.fuzzy = true;
    s.exportProfile = compare::Profile::Msprobe26;
    s.exportXlsx = true;
    {
        QSettings store(file, QSettings::IniFormat);
        s.save(store);
    }
    const QSettings store(file, QSettings::IniFormat);
    EXPECT_TRUE(Settings::load(store) == s);
    EXPECT_EQ(store.value("export/profile").toString(), "msprobe-26");

    // Damaged values fall back to the defaults.
    {
        QSettings bad(dir.filePath("bad.ini"), QSettings::IniFormat);
        bad.setValue("colors/warningFrom", 0.8);
        bad.setValue("colors/errorFrom", 0.5);
        bad.setValue("ui/theme", 17);
        bad.setValue("compare/threads", "many");
    }
    const Settings fallback = Settings::load(QSettings(dir.filePath("bad.ini"), QSettings::IniFormat));
    EXPECT_TRUE(fallback == Settings {});
}

TEST(Settings, BandValidation)
{
    EXPECT_TRUE(validBands(0.3, 0.6));
    EXPECT_TRUE(validBands(0.01, 1.0));
    EXPECT_FALSE(validBands(0.0, 0.6));
    EXPECT_FALSE(validBands(0.6, 0.6));
    EXPECT_FALSE(validBands(0.7, 0.6));
    EXPECT_FALSE(validBands(0.3, 1.01));
    EXPECT_FALSE(validBands(NAN, 0.5));
    QString why;
    EXPECT_FALSE(validBands(0.5, 0.4, &why));
    EXPECT_EQ(why, "The error band must start above the warning band.");
    Settings s;
    s.bands.errorFrom = 0.2;
    EXPECT_FALSE(s.validate().isEmpty());
}

TEST(SettingsDialog, ValidatesAndSaysLanguageNeedsRestart)
{
    Settings initial;
    initial.bands.scheme = session::ColorBands::Scheme::ContinuousIndex;
    SettingsDialog dialog(initial);
    EXPECT_TRUE(dialog.settings() == initial);
    EXPECT_TRUE(dialog.isValid());
    auto spins = dialog.findChildren<QDoubleSpinBox*>();
    ASSERT_EQ(spins.size(), 2);
    spins[0]->setValue(0.7); // warning above error
    EXPECT_FALSE(dialog.isValid());
    EXPECT_EQ(dialog.validationMessage(), "The error band must start above the warning band.");
    auto* box = dialog.findChild<QDialogButtonBox*>();
    ASSERT_TRUE(box);
    EXPECT_FALSE(box->button(QDialogButtonBox::Ok)->isEnabled());
    saveShot(dialog, "settings-invalid.png");
    spins[0]->setValue(0.3);
    EXPECT_TRUE(box->button(QDialogButtonBox::Ok)->isEnabled());
    EXPECT_FALSE(dialog.languageChanged());
    Settings changed = dialog.settings();
    changed.language = Language::SimplifiedChinese;
    changed.threads = 4;
    dialog.setSettings(changed);
    EXPECT_TRUE(dialog.languageChanged());
    EXPECT_TRUE(dialog.settings() == changed);
    saveShot(dialog, "settings.png");
}

TEST(Theme, DarkUsesFusionAndADarkPalette)
{
    applyTheme(*qApp, Theme::Dark);
    // Fusion, under a proxy that gives check boxes a visible frame in the dark (issue 28).
    const auto* proxy = qobject_cast<const QProxyStyle*>(QApplication::style());
    EXPECT_EQ((proxy ? proxy->baseStyle() : QApplication::style())->name().toLower(), "fusion");
    EXPECT_TRUE(statuspalette::isDark(QApplication::palette()));
    EXPECT_TRUE(isDarkTheme(Theme::Dark));
    applyTheme(*qApp, Theme::Light);
    EXPECT_FALSE(statuspalette::isDark(QApplication::palette()));
    applyTheme(*qApp, Theme::System);
    EXPECT_FALSE(isDarkTheme(Theme::Light));
}

// ---------------------------------------------------------------------------------------------------
// Export

TEST(Export, WritesTheAnalysisTableAndNeverOverwrites)
{
    auto a = analysis("modelA_tensor_mix");
    ASSERT_TRUE(a);
    QTemporaryDir dir;
    ASSERT_TRUE(dir.isValid());
    ExportRequest request = exportRequestFor(*a, Settings {}, dir.path().toStdString());
    EXPECT_EQ(request.options.profile, compare::Profile::Msprobe12);
    EXPECT_FALSE(request.options.stackFlag); // the analysis has no stack column
    request.options.timestamp = "20240102030405";
    // A file that already has the name the export would pick must survive.
    const QString taken = dir.filePath("compare_result_20240102030405.csv");
    {
        QFile f(taken);
        ASSERT_TRUE(f.open(QIODevice::WriteOnly));
        f.write("keep me");
    }
    ExportJob job;
    QSignalSpy finished(&job, &ExportJob::finished);
    QSignalSpy progress(&job, &ExportJob::progressChanged);
    ASSERT_TRUE(job.start(request));
    EXPECT_FALSE(job.start(request)); // one run at a time
    ASSERT_TRUE(finished.wait(120000));
    const ExportOutcome& o = job.outcome();
    ASSERT_TRUE(o.ok) << o.error.toStdString();
    ASSERT_FALSE(o.files.isEmpty());
    EXPECT_EQ(o.files.front(), dir.filePath("compare_result_20240102030405_1.csv"));
    EXPECT_TRUE(o.files.contains(dir.filePath("advisor_20240102030405_1.txt")));
    EXPECT_EQ(probescope::testing::readAll(o.files.front().toStdString()), compare::tableCsv(*a->table));
    QFile keep(taken);
    ASSERT_TRUE(keep.open(QIODevice::ReadOnly));
    EXPECT_EQ(keep.readAll(), "keep me");
    ASSERT_FALSE(progress.isEmpty());
    EXPECT_EQ(progress.back().at(0).toLongLong(), progress.back().at(1).toLongLong()); // ended at 100 %
}

TEST(ExportDialog, RunsAndListsTheWrittenFiles)
{
    auto a = analysis("modelA_statistics_mix");
    ASSERT_TRUE(a);
    QTemporaryDir dir;
    Settings settings;
    settings.exportXlsx = true;
    ExportDialog dialog(a, settings);
    EXPECT_TRUE(dialog.xlsx());
    EXPECT_EQ(dialog.profile(), compare::Profile::Msprobe12);
    dialog.setOutputFolder(dir.path());
    saveShot(dialog, "export.png");
    QSignalSpy done(&dialog, &ExportDialog::exportFinished);
    dialog.startExport();
    EXPECT_TRUE(dialog.isRunning());
    ASSERT_TRUE(done.wait(120000));
    const QStringList files = done.front().front().toStringList();
    ASSERT_EQ(files.size(), 3); // CSV, XLSX, advisor
    EXPECT_TRUE(files[0].endsWith(".csv"));
    EXPECT_TRUE(files[1].endsWith(".xlsx"));
    EXPECT_TRUE(dialog.resultText().contains(files[0]));
    EXPECT_EQ(probescope::testing::readAll(files[0].toStdString()), compare::tableCsv(*a->table));
    saveShot(dialog, "export-done.png");

    // Second export in the same second: new names, the first files untouched.
    dialog.setProfile(compare::Profile::Msprobe26);
    dialog.setXlsx(false);
    dialog.startExport();
    ASSERT_TRUE(done.wait(120000));
    const QStringList second = done.back().front().toStringList();
    ASSERT_EQ(second.size(), 1); // msprobe 26 writes no advisor
    EXPECT_NE(second.front(), files.front());
    EXPECT_EQ(probescope::testing::readAll(files[0].toStdString()), compare::tableCsv(*a->table));
}

// Issue 19 item 6: a default folder (Export works without typing), written paths as links, "Open folder".
TEST(ExportDialog, StartsInADefaultFolderAndLinksTheWrittenFiles)
{
    auto a = analysis("modelA_md5_mix");
    ASSERT_TRUE(a);
    {
        ExportDialog fresh(a, Settings {});
        EXPECT_EQ(fresh.outputFolder(), defaultOutputFolder("compare"));
        EXPECT_TRUE(fresh.outputFolder().endsWith("ProbeScope/compare")) << fresh.outputFolder().toStdString();
        QPushButton* exportButton = nullptr;
        for (QPushButton* b : fresh.findChildren<QPushButton*>())
            if (b->text() == "Export")
                exportButton = b;
        ASSERT_TRUE(exportButton);
        EXPECT_TRUE(exportButton->isEnabled());
    }
    QTemporaryDir dir;
    Settings settings;
    settings.exportFolder = dir.filePath("last-used");
    ExportDialog dialog(a, settings);
    EXPECT_EQ(dialog.outputFolder(), settings.exportFolder); // the folder the last export wrote to
    auto* view = dialog.findChild<TaskProgressView*>();
    ASSERT_TRUE(view);
    view->setOpensUrls(false);
    QSignalSpy asked(view, &TaskProgressView::urlRequested);
    QSignalSpy done(&dialog, &ExportDialog::exportFinished);
    dialog.startExport();
    ASSERT_TRUE(done.wait(60000));
    const QStringList files = done.front().front().toStringList();
    ASSERT_FALSE(files.isEmpty());
    EXPECT_TRUE(files.front().startsWith(settings.exportFolder)); // the folder was created
    EXPECT_EQ(view->folderUrl(), QUrl::fromLocalFile(settings.exportFolder));
    auto* browser = view->findChild<QTextBrowser*>();
    ASSERT_TRUE(browser);
    EXPECT_TRUE(browser->toHtml().contains(QUrl::fromLocalFile(files.front()).toString(QUrl::FullyEncoded)));
    EXPECT_TRUE(dialog.resultText().contains(files.front()));
    emit browser->anchorClicked(QUrl::fromLocalFile(files.front()));
    QPushButton* openFolder = nullptr;
    for (QPushButton* b : view->findChildren<QPushButton*>())
        if (b->text() == "Open folder")
            openFolder = b;
    ASSERT_TRUE(openFolder);
    EXPECT_TRUE(openFolder->isVisible() || !dialog.isVisible());
    EXPECT_FALSE(openFolder->isHidden());
    openFolder->click();
    ASSERT_EQ(asked.size(), 2);
    EXPECT_EQ(asked.at(0).at(0).toUrl(), QUrl::fromLocalFile(files.front()));
    EXPECT_EQ(asked.at(1).at(0).toUrl(), QUrl::fromLocalFile(settings.exportFolder));
    dialog.resize(700, 420);
    saveShot(dialog, "export-links.png");
}

TEST(ExportDialog, ReportsErrors)
{
    auto a = analysis("modelA_md5_mix");
    ASSERT_TRUE(a);
    QTemporaryDir dir;
    const QString blocker = dir.filePath("a-file");
    {
        QFile f(blocker);
        ASSERT_TRUE(f.open(QIODevice::WriteOnly));
    }
    ExportDialog dialog(a, Settings {});
    dialog.setOutputFolder(blocker + "/sub"); // cannot create a folder under a file
    QSignalSpy done(&dialog, &ExportDialog::exportFinished);
    dialog.startExport();
    ASSERT_TRUE(done.wait(60000));
    EXPECT_TRUE(done.front().front().toStringList().isEmpty());
    EXPECT_TRUE(dialog.resultText().startsWith("Export failed: ")) << dialog.resultText().toStdString();
    EXPECT_TRUE(dialog.resultText().contains("compare.output"));
}

// ---------------------------------------------------------------------------------------------------
// run_ut

namespace {

/// A backend that replays `total` pretend APIs, one every few milliseconds, until cancelled.
class FakeRunUt : public RunUtBackend
{
public:
    explicit FakeRunUt(int total, int msPerApi)
        : m_total(total)
        , m_ms(msPerApi)
    {
    }
    bool isAvailable() const override { return true; }
    QString unavailableReason() const override { return {}; }
    RunUtResult run(const RunUtRequest& request, ProgressSink& progress) override
    {
        RunUtResult r;
        progress.setRange(static_cast<std::uint64_t>(m_total));
        for (int i = 1; i <= m_total; ++i) {
            if (progress.isCancelled()) {
                r.cancelled = true;
                return r;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(m_ms));
            progress.advance(static_cast<std::uint64_t>(i));
        }
        r.ok = true;
        r.resultCsv = request.outputDir + "/accuracy_checking_result_20240101000000.csv";
        r.detailsCsv = request.outputDir + "/accuracy_checking_details_20240101000000.csv";
        return r;
    }

private:
    int m_total;
    int m_ms;
};

RunUtRequest fixtureRunUtRequest(const QString& out)
{
    RunUtRequest r;
    r.dumpJson = QString::fromStdString(
        (probescope::testing::fixturesDir() / "modelA_tensor_mix/npu/step0/rank/dump.json").string());
    r.outputDir = out;
    r.whiteList = { "conv2d", "gelu" };
    return r;
}

} // namespace

TEST(RunUtDialog, SaysItIsNotAvailableAndKeepsRunDisabled)
{
    RunUtDialog dialog;
    dialog.setRequest(fixtureRunUtRequest(QDir::tempPath()));
    const QString reason = "The run_ut API accuracy checker is not available in this build yet.";
    EXPECT_EQ(dialog.availabilityText(), reason);
    EXPECT_FALSE(dialog.canRun());
    EXPECT_EQ(dialog.runBlockedReason(), reason);
    QPushButton* run = nullptr;
    for (QPushButton* b : dialog.findChildren<QPushButton*>()) {
        if (b->text() == "Run")
            run = b;
    }
    ASSERT_TRUE(run);
    EXPECT_FALSE(run->isEnabled());
    EXPECT_EQ(run->toolTip(), reason);
    dialog.startRun(); // ignored
    EXPECT_FALSE(dialog.isRunning());
    saveShot(dialog, "runut-unavailable.png");
}

TEST(RunUtDialog, FakeBackendReportsProgressAndResult)
{
    RunUtDialog dialog(std::make_unique<FakeRunUt>(20, 5));
    dialog.task().setPollInterval(10);
    EXPECT_TRUE(dialog.availabilityText().isEmpty());
    EXPECT_FALSE(dialog.canRun()); // no dump.json yet
    dialog.setRequest(fixtureRunUtRequest("/tmp/run-ut-out"));
    EXPECT_EQ(dialog.request().whiteList, (QStringList { "conv2d", "gelu" }));
    ASSERT_TRUE(dialog.canRun()) << dialog.runBlockedReason().toStdString();
    QSignalSpy progress(&dialog.task(), &BackgroundTask::progressChanged);
    QSignalSpy done(&dialog, &RunUtDialog::runFinished);
    dialog.startRun();
    EXPECT_TRUE(dialog.isRunning());
    EXPECT_FALSE(dialog.canRun());
    ASSERT_TRUE(done.wait(10000));
    EXPECT_TRUE(done.front().at(0).toBool());
    EXPECT_EQ(done.front().at(1).toString(), "/tmp/run-ut-out/accuracy_checking_result_20240101000000.csv");
    EXPECT_TRUE(dialog.resultText().contains("accuracy_checking_details_20240101000000.csv"));
    EXPECT_EQ(progress.back().at(0).toLongLong(), 20);
    EXPECT_EQ(progress.back().at(1).toLongLong(), 20);
    EXPECT_TRUE(dialog.canRun());
    saveShot(dialog, "runut-done.png");
}

// Issue 19 item 6: Run works with the default folder, and when it cannot, the reason is on screen.
TEST(RunUtDialog, DefaultFolderAndAVisibleReasonWhenRunIsDisabled)
{
    QTemporaryDir dir;
    RunUtDialog dialog(std::make_unique<FakeRunUt>(3, 1));
    dialog.task().setPollInterval(10);
    EXPECT_EQ(dialog.request().outputDir, defaultOutputFolder("run_ut"));
    RunUtRequest r = fixtureRunUtRequest(dir.filePath("made/by/run"));
    dialog.setRequest(r);
    EXPECT_TRUE(dialog.canRun()) << dialog.runBlockedReason().toStdString();
    QLabel* reason = nullptr;
    for (QLabel* l : dialog.findChildren<QLabel*>())
        if (l->accessibleName() == "Why Run is disabled")
            reason = l;
    ASSERT_TRUE(reason);
    EXPECT_TRUE(reason->isHidden());
    r.outputDir.clear();
    dialog.setRequest(r);
    EXPECT_FALSE(dialog.canRun());
    EXPECT_FALSE(reason->isHidden());
    EXPECT_EQ(reason->text(), "Choose an output folder.");
    saveShot(dialog, "runut-blocked.png");

    r.outputDir = dir.filePath("made/by/run");
    dialog.setRequest(r);
    EXPECT_TRUE(reason->isHidden());
    auto* view = dialog.findChild<TaskProgressView*>();
    ASSERT_TRUE(view);
    view->setOpensUrls(false);
    QSignalSpy done(&dialog, &RunUtDialog::runFinished);
    dialog.startRun();
    ASSERT_TRUE(done.wait(10000));
    EXPECT_TRUE(QDir(r.outputDir).exists()); // the folder is made for the run
    EXPECT_FALSE(view->folderUrl().isEmpty());
    auto* browser = view->findChild<QTextBrowser*>();
    ASSERT_TRUE(browser);
    EXPECT_TRUE(browser->toHtml().contains("href=\"file://")) << browser->toHtml().toStdString();
}

TEST(RunUtDialog, CancelStopsTheRun)
{
    RunUtDialog dialog(std::make_unique<FakeRunUt>(100000, 2));
    dialog.setRequest(fixtureRunUtRequest("/tmp/run-ut-out"));
    QSignalSpy done(&dialog, &RunUtDialog::runFinished);
    dialog.task().setPollInterval(10);
    dialog.startRun();
    QTest::qWait(80);
    saveShot(dialog, "runut-running.png");
    dialog.cancelRun();
    ASSERT_TRUE(done.wait(10000));
    EXPECT_FALSE(done.front().at(0).toBool());
    EXPECT_TRUE(dialog.lastResult().cancelled);
    EXPECT_EQ(dialog.resultText(), "Cancelled.");
}

TEST(RunUtRequest, Validation)
{
    RunUtRequest r = fixtureRunUtRequest("/tmp/out");
    EXPECT_TRUE(validateRunUtRequest(r).isEmpty());
    r.blackList = { "gelu" };
    EXPECT_EQ(validateRunUtRequest(r), "gelu is in both the white list and the black list.");
    r.blackList.clear();
    r.dumpJson = "/nonexistent/dump.json";
    EXPECT_FALSE(validateRunUtRequest(r).isEmpty());
    EXPECT_EQ(splitApiList(" conv2d, linalg.inv  matmul;"), (QStringList { "conv2d", "linalg.inv", "matmul" }));
}

// ---------------------------------------------------------------------------------------------------
// Shortcuts

TEST(ShortcutsDialog, ListsTheActions)
{
    QAction open("&Open…");
    open.setShortcut(QKeySequence("Ctrl+O"));
    open.setStatusTip("Open an NPU and a bench dump");
    QAction next("Next &failing node");
    next.setShortcuts({ QKeySequence("N"), QKeySequence("F3") });
    QAction noKey("About");
    ShortcutsDialog dialog(QList<QAction*> { &open, &next, &noKey });
    QTableWidget* t = dialog.table();
    ASSERT_EQ(t->rowCount(), 2);
    EXPECT_EQ(t->item(0, 0)->text(), "Open…");
    EXPECT_EQ(t->item(0, 1)->text(), QKeySequence("Ctrl+O").toString(QKeySequence::NativeText));
    EXPECT_EQ(t->item(0, 2)->text(), "Open an NPU and a bench dump");
    EXPECT_EQ(t->item(1, 0)->text(), "Next failing node");
    EXPECT_TRUE(t->item(1, 1)->text().contains("F3"));
    dialog.setFilterText("fail");
    EXPECT_EQ(dialog.visibleRowCount(), 1);
    dialog.setFilterText("");
    EXPECT_EQ(dialog.visibleRowCount(), 2);
    saveShot(dialog, "shortcuts.png");
}
