// SPDX-License-Identifier: Apache-2.0
// Free benchmark results (issue 7 §5): the free_benchmark.csv reader and finder on hand-made files
// (tests/data/freebench, written with Python's csv module), the table model under
// QAbstractItemModelTester, the panel's plot, and the main window: a folder holding only the CSV shows the
// panel, and with a compared pair the flagged API nodes carry badges and a row click selects its node.
#include "core/freebench/freebenchcsv.h"
#include "ui/inspect/freebenchpanel.h"
#include "ui/models/comparetreemodel.h"
#include "ui/models/nodebadges.h"
#include "ui/models/freebenchmodel.h"
#include "ui/models/treerowsmodel.h"
#include "ui/views/comparetreeview.h"
#include "ui/modeltestfailures.h"
#include "ui/views/mainwindow.h"

#include "core/tempdir.h"
#include "testconfig.h"

#include <QAbstractItemModelTester>
#include <QLineEdit>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QTabWidget>
#include <QTableView>
#include <QTest>

#include <qcustomplot.h>

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <tuple>

using namespace probescope;
using probescope::testing::TempDir;
namespace fs = std::filesystem;

namespace {

fs::path data() { return probescope::testing::testDataDir() / "freebench"; }

QString q(const fs::path& p) { return QString::fromStdString(p.string()); }

using probescope::testing::ModelTestFailures;

std::shared_ptr<const freebench::FreeBenchTable> runTable()
{
    return std::make_shared<const freebench::FreeBenchTable>(freebench::loadFreeBenchmark({ data() / "run" }));
}

const Diagnostic* findDiag(const Diagnostics& ds, const std::string& id, std::uint32_t line)
{
    for (const Diagnostic& d : ds) {
        if (d.id == id && d.location.line == line)
            return &d;
    }
    return nullptr;
}

} // namespace

// ---- reader -----------------------------------------------------------------------------------------

TEST(FreeBenchCsv, ReadsPythonCsvWithAHeaderlessAppend)
{
    auto t = freebench::readFreeBenchmarkCsv(data() / "run/step0/rank0/free_benchmark.csv");
    ASSERT_TRUE(t) << t.error().format();
    EXPECT_TRUE(t->diagnostics.empty());
    ASSERT_EQ(t->rows.size(), 4u); // 2 rows after the header, 2 appended without one
    const auto& gelu = t->rows[0];
    EXPECT_EQ(gelu.rank, 0);
    EXPECT_EQ(gelu.pertMode, "bit_noise");
    EXPECT_EQ(gelu.stage, "forward");
    EXPECT_EQ(gelu.step, 0);
    EXPECT_EQ(gelu.apiName, "Functional.gelu.0.forward");
    EXPECT_EQ(gelu.maxRelKind, freebench::MaxRelKind::Number);
    EXPECT_DOUBLE_EQ(gelu.maxRel, 0.0153);
    EXPECT_EQ(gelu.dtype, "torch.float16");
    EXPECT_EQ(gelu.shape, "torch.Size([4, 16, 32])"); // quoted: it holds commas
    EXPECT_FALSE(gelu.outputIndex);
    EXPECT_EQ(gelu.line, 2u);
    const auto& chunk = t->rows[2];
    EXPECT_EQ(chunk.apiName, "Tensor.chunk.0.forward");
    EXPECT_EQ(chunk.maxRelKind, freebench::MaxRelKind::SymbolFlipping);
    ASSERT_TRUE(chunk.outputIndex);
    EXPECT_EQ(*chunk.outputIndex, 1);
    EXPECT_EQ(chunk.line, 4u);
    EXPECT_EQ(t->rows[3].stage, "backward");
    EXPECT_EQ(t->rows[3].outputIndex.value_or(-1), 0);
}

TEST(FreeBenchCsv, ThresholdsAreTheDocumentedRelativeErrors)
{
    // msprobe's table (seed 004): float16 0.002, bfloat16 0.004, float32 0.0002, others 0.0002; no_change 1.0 - 1.
    EXPECT_DOUBLE_EQ(freebench::freeBenchThreshold("torch.float16", "bit_noise"), 0.002);
    EXPECT_DOUBLE_EQ(freebench::freeBenchThreshold("torch.bfloat16", "add_noise"), 0.004);
    EXPECT_DOUBLE_EQ(freebench::freeBenchThreshold("torch.float32", "improve_precision"), 0.0002);
    EXPECT_DOUBLE_EQ(freebench::freeBenchThreshold("torch.float64", "change_value"), 0.0002);
    EXPECT_DOUBLE_EQ(freebench::freeBenchThreshold("torch.float16", "no_change"), 0.0);
    freebench::FreeBenchRow row;
    row.dtype = "torch.float16";
    row.pertMode = "bit_noise";
    row.maxRelKind = freebench::MaxRelKind::Number;
    row.maxRel = 0.0153;
    EXPECT_NEAR(freebench::freeBenchExcess(row), 7.65, 1e-12);
    row.maxRelKind = freebench::MaxRelKind::SymbolFlipping;
    EXPECT_TRUE(std::isinf(freebench::freeBenchExcess(row)));
    row.maxRelKind = freebench::MaxRelKind::Empty;
    EXPECT_TRUE(std::isnan(freebench::freeBenchExcess(row)));
    row.maxRelKind = freebench::MaxRelKind::Number;
    row.pertMode = "no_change";
    row.maxRel = 1e-7; // any change fails no_change
    EXPECT_TRUE(std::isinf(freebench::freeBenchExcess(row)));
}

TEST(FreeBenchCsv, MalformedRowsAreReportedWithFileAndLineAndTheRestIsRead)
{
    auto t = freebench::readFreeBenchmarkCsv(data() / "malformed/bad_rows.csv");
    ASSERT_TRUE(t) << t.error().format();
    ASSERT_EQ(t->rows.size(), 2u);
    EXPECT_EQ(t->rows[0].apiName, "Torch.sum.0.forward");
    EXPECT_EQ(t->rows[1].apiName, "Torch.sum.5.forward");
    EXPECT_TRUE(std::isinf(t->rows[1].maxRel)); // Python writes float('inf') as inf
    EXPECT_EQ(t->rows[1].shape, "torch.Size([2, 4])");
    EXPECT_EQ(t->rows[1].line, 8u); // after a blank line
    // rank "x", max_rel "lots", 8 fields, output_index -1; the cut-short last line is a warning.
    for (const std::uint32_t line : { 3u, 4u, 5u, 6u }) {
        const Diagnostic* d = findDiag(t->diagnostics, "freebench.row", line);
        ASSERT_NE(d, nullptr) << "line " << line;
        EXPECT_EQ(d->severity, Severity::Error);
        EXPECT_NE(d->format().find("bad_rows.csv:" + std::to_string(line)), std::string::npos) << d->format();
    }
    EXPECT_NE(findDiag(t->diagnostics, "freebench.row", 4)->message.find("lots"), std::string::npos);
    const Diagnostic* cut = findDiag(t->diagnostics, "freebench.truncated", 9);
    ASSERT_NE(cut, nullptr);
    EXPECT_EQ(cut->severity, Severity::Warning);
    EXPECT_EQ(t->diagnostics.size(), 5u);
}

TEST(FreeBenchCsv, AForeignFileIsRefusedAtItsHeader)
{
    auto t = freebench::readFreeBenchmarkCsv(data() / "malformed/foreign_header.csv");
    ASSERT_FALSE(t);
    EXPECT_EQ(t.error().id, "freebench.header");
    EXPECT_EQ(t.error().location.line, 1u);
    EXPECT_NE(t.error().format().find("foreign_header.csv:1"), std::string::npos);
    auto missing = freebench::readFreeBenchmarkCsv(data() / "malformed/nope.csv");
    ASSERT_FALSE(missing);
    EXPECT_NE(missing.error().format().find("nope.csv"), std::string::npos);
}

TEST(FreeBenchCsv, AHeaderlessFileWithABomAndAMultiLineFieldIsReadWithAWarning)
{
    auto t = freebench::readFreeBenchmarkCsv(data() / "malformed/no_header.csv");
    ASSERT_TRUE(t) << t.error().format();
    ASSERT_EQ(t->rows.size(), 1u);
    EXPECT_EQ(t->rows[0].shape, "torch.Size([2,\n 2])");
    EXPECT_EQ(t->rows[0].pertMode, "no_change");
    EXPECT_EQ(freebench::freeBenchExcess(t->rows[0]), 0.0); // max_rel 0 under no_change's threshold 0
    ASSERT_EQ(t->diagnostics.size(), 1u);
    EXPECT_EQ(t->diagnostics[0].id, "freebench.no-header");
    EXPECT_EQ(t->diagnostics[0].severity, Severity::Warning);
    auto empty = freebench::parseFreeBenchmarkCsv("", "empty.csv");
    ASSERT_TRUE(empty);
    EXPECT_TRUE(empty->rows.empty());
}

TEST(FreeBenchCsv, FinderLooksAtEveryLevelOfAnOpenedDump)
{
    const fs::path run = data() / "run";
    const auto all = freebench::findFreeBenchmarkCsvs(run);
    ASSERT_EQ(all.size(), 3u);
    EXPECT_EQ(all[0], run / "step0/rank0/free_benchmark.csv");
    EXPECT_EQ(all[1], run / "step1/rank0/free_benchmark.csv");
    EXPECT_EQ(all[2], run / "step1/rank1/free_benchmark.csv");
    EXPECT_EQ(freebench::findFreeBenchmarkCsvs(run / "step1").size(), 2u);
    EXPECT_EQ(freebench::findFreeBenchmarkCsvs(run / "step1/rank1"),
              std::vector<fs::path> { run / "step1/rank1/free_benchmark.csv" });
    EXPECT_EQ(freebench::findFreeBenchmarkCsvs(run / "step0/rank0/free_benchmark.csv").size(), 1u);
    EXPECT_TRUE(freebench::findFreeBenchmarkCsvs(data() / "nowhere").empty());
    EXPECT_TRUE(freebench::findFreeBenchmarkCsvs(data() / "malformed").empty()); // no file of that name

    // A dump.json names its folder; step numbers sort numerically (step10 after step2); the root counts too.
    TempDir tmp;
    tmp.write("step10/rank/free_benchmark.csv", "");
    tmp.write("step2/rank/free_benchmark.csv", "");
    tmp.write("step2/rank/dump.json", "{}");
    tmp.write("free_benchmark.csv", "");
    tmp.write("step2/rank/dump_tensor_data/free_benchmark.csv", ""); // never looked at
    const auto found = freebench::findFreeBenchmarkCsvs(tmp.path());
    ASSERT_EQ(found.size(), 3u);
    EXPECT_EQ(found[0], tmp.path() / "free_benchmark.csv");
    EXPECT_EQ(found[1], tmp.path() / "step2/rank/free_benchmark.csv");
    EXPECT_EQ(found[2], tmp.path() / "step10/rank/free_benchmark.csv");
    EXPECT_EQ(freebench::findFreeBenchmarkCsvs(tmp.path() / "step2/rank/dump.json"),
              std::vector<fs::path> { tmp.path() / "step2/rank/free_benchmark.csv" });
}

TEST(FreeBenchCsv, LoadReadsEachFileOnceAndKeepsTheirOrigin)
{
    const fs::path run = data() / "run";
    TempDir tmp; // a file of that name that is something else: reported, skipped, the rest still read
    fs::copy_file(data() / "malformed/foreign_header.csv", tmp.path() / "free_benchmark.csv");
    const auto t = freebench::loadFreeBenchmark({ run, run / "step1", run / "step1/rank1/free_benchmark.csv",
                                                tmp.path() });
    ASSERT_EQ(t.files.size(), 3u);
    EXPECT_EQ(t.rows.size(), 8u);
    ASSERT_EQ(t.diagnostics.size(), 1u);
    EXPECT_EQ(t.diagnostics[0].id, "freebench.header");
    EXPECT_EQ(t.files[t.rows.back().file], run / "step1/rank1/free_benchmark.csv");
    EXPECT_EQ(t.rows.back().apiName, "Functional.linear.0.forward");
}

TEST(FreeBenchCsv, FlaggedApisPickTheWorstRowPerApiOfAStepAndRank)
{
    const auto t = runTable();
    const auto step1rank0 = freebench::flaggedApis(*t, 1, 0);
    ASSERT_EQ(step1rank0.size(), 1u);
    EXPECT_EQ(step1rank0[0].apiName, "Functional.gelu.0.forward");
    EXPECT_EQ(step1rank0[0].rowCount, 2u);
    EXPECT_DOUBLE_EQ(t->rows[step1rank0[0].worstRow].maxRel, 0.0422);
    EXPECT_EQ(freebench::flaggedApis(*t, 1, 1).size(), 2u); // gelu and the to_cpu linear
    EXPECT_EQ(freebench::flaggedApis(*t, 0, 0).size(), 4u);
    EXPECT_EQ(freebench::flaggedApis(*t, 0, 1).size(), 0u);
    const auto any = freebench::flaggedApis(*t, -1, -1);
    ASSERT_EQ(any.size(), 5u);
    EXPECT_EQ(any[0].rowCount, 4u); // gelu forward: steps 0, 1, 1 and rank 1
    EXPECT_DOUBLE_EQ(t->rows[any[0].worstRow].maxRel, 0.0422);
}

TEST(FreeBenchCsv, ReadsTheCollectorsOwnOutput)
{
    // The collection library writes msprobe's layout: step{N}/rank/free_benchmark.csv with a BOM.
    const fs::path run = data() / "example-train";
    const auto files = freebench::findFreeBenchmarkCsvs(run);
    ASSERT_EQ(files.size(), 3u);
    EXPECT_EQ(files[2], run / "step2/rank/free_benchmark.csv");
    const auto t = freebench::loadFreeBenchmark({ run });
    EXPECT_TRUE(t.diagnostics.empty());
    ASSERT_EQ(t.rows.size(), 3u);
    for (std::size_t i = 0; i < t.rows.size(); ++i) {
        EXPECT_EQ(t.rows[i].step, static_cast<std::int64_t>(i));
        EXPECT_EQ(t.rows[i].apiName, "Aten.layer_norm.2.forward");
        EXPECT_EQ(t.rows[i].pertMode, "improve_precision");
        EXPECT_EQ(t.rows[i].dtype, "torch.bfloat16");
        EXPECT_GT(freebench::freeBenchExcess(t.rows[i]), 1.0); // flagged: over bf16's 0.004
    }
    EXPECT_DOUBLE_EQ(t.rows[0].maxRel, 0.09451653164597817);
}

// ---- model ------------------------------------------------------------------------------------------

TEST(FreeBenchModel, PassesTheModelTesterAndShowsTheCells)
{
    ModelTestFailures failures;
    ui::FreeBenchmarkModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Warning);
    QSortFilterProxyModel proxy;
    proxy.setSourceModel(&model);
    proxy.setSortRole(ui::FreeBenchmarkModel::SortRole);
    QAbstractItemModelTester proxyTester(&proxy, QAbstractItemModelTester::FailureReportingMode::Warning);
    model.setTable(runTable());
    ASSERT_EQ(model.rowCount(), 8);
    EXPECT_EQ(model.columnCount(), ui::FreeBenchmarkModel::ColumnCount);
    auto cell = [&](int row, int column) { return model.index(row, column).data().toString(); };
    EXPECT_EQ(cell(0, ui::FreeBenchmarkModel::ApiColumn), "Functional.gelu.0.forward");
    EXPECT_EQ(cell(0, ui::FreeBenchmarkModel::MaxRelColumn), "0.0153");
    EXPECT_EQ(cell(0, ui::FreeBenchmarkModel::ThresholdColumn), "0.002");
    EXPECT_EQ(cell(0, ui::FreeBenchmarkModel::ExcessColumn), QStringLiteral("×7.65"));
    EXPECT_EQ(cell(0, ui::FreeBenchmarkModel::ShapeColumn), "torch.Size([4, 16, 32])");
    EXPECT_EQ(cell(2, ui::FreeBenchmarkModel::MaxRelColumn), "symbol_flipping");
    EXPECT_EQ(cell(2, ui::FreeBenchmarkModel::OutputIndexColumn), "1");
    EXPECT_EQ(cell(3, ui::FreeBenchmarkModel::ThresholdColumn), "0.004"); // bfloat16
    EXPECT_EQ(cell(7, ui::FreeBenchmarkModel::MaxRelColumn), ""); // to_cpu
    EXPECT_TRUE(model.index(0, 0).data(Qt::ToolTipRole).toString().contains("step0/rank0/free_benchmark.csv:2"));

    // Worst first by max_rel: the sign flip, then the numbers descending, the empty to_cpu row last.
    proxy.sort(ui::FreeBenchmarkModel::MaxRelColumn, Qt::DescendingOrder);
    auto sorted = [&](int row, int column) { return proxy.index(row, column).data().toString(); };
    EXPECT_EQ(sorted(0, ui::FreeBenchmarkModel::MaxRelColumn), "symbol_flipping");
    EXPECT_EQ(sorted(1, ui::FreeBenchmarkModel::MaxRelColumn), "0.0422");
    EXPECT_EQ(sorted(2, ui::FreeBenchmarkModel::MaxRelColumn), "0.0153");
    EXPECT_EQ(sorted(7, ui::FreeBenchmarkModel::MaxRelColumn), "");
    // By excess: fp32 matmul 0.00031/0.0002 = 1.55 is further over than bf16 gelu backward 0.0061/0.004 = 1.525.
    proxy.sort(ui::FreeBenchmarkModel::ExcessColumn, Qt::AscendingOrder);
    EXPECT_EQ(sorted(0, ui::FreeBenchmarkModel::MaxRelColumn), ""); // no ratio
    EXPECT_EQ(sorted(1, ui::FreeBenchmarkModel::ApiColumn), "Functional.gelu.0.backward");
    EXPECT_EQ(sorted(2, ui::FreeBenchmarkModel::ApiColumn), "Torch.matmul.0.forward");
    model.clear();
    EXPECT_EQ(proxy.rowCount(), 0);
}

// ---- panel ------------------------------------------------------------------------------------------

TEST(FreeBenchPanel, PlotsMaxRelPerStepWithTheThresholdLine)
{
    ui::FreeBenchmarkPanel panel;
    panel.resize(700, 700);
    panel.setTable(runTable());
    EXPECT_EQ(panel.api(), "Tensor.chunk.0.forward"); // the combo starts with the worst API (a sign flip)
    panel.setApi("Functional.gelu.0.forward");
    // gelu forward rows: step0 rank0 0.0153; step1 rank0 0.0422 and 0.0105; step1 rank1 0.0071.
    const auto& points = panel.points();
    ASSERT_EQ(points.size(), 4u);
    std::multiset<std::tuple<double, qint64, double>> got;
    for (const auto& p : points) {
        EXPECT_FALSE(p.offScale);
        got.emplace(p.step, p.rank, p.y);
    }
    const std::multiset<std::tuple<double, qint64, double>> expected { { 0, 0, 0.0153 }, { 1, 0, 0.0422 },
                                                                       { 1, 0, 0.0105 }, { 1, 1, 0.0071 } };
    EXPECT_EQ(got, expected);
    ASSERT_EQ(panel.thresholds(), std::vector<double> { 0.002 });
    // What QCustomPlot holds: two rank series with 3 + 1 points, and a dashed line at y = 0.002.
    QCustomPlot* plot = panel.plot();
    int plotted = 0;
    for (int g = 0; g < plot->graphCount(); ++g)
        plotted += plot->graph(g)->visible() ? plot->graph(g)->dataCount() : 0;
    EXPECT_EQ(plotted, 4);
    int lines = 0;
    for (int i = 0; i < plot->itemCount(); ++i) {
        if (auto* line = qobject_cast<QCPItemStraightLine*>(plot->item(i))) {
            ++lines;
            EXPECT_DOUBLE_EQ(line->point1->coords().y(), 0.002);
            EXPECT_DOUBLE_EQ(line->point2->coords().y(), 0.002);
        }
    }
    EXPECT_EQ(lines, 1);
    EXPECT_EQ(plot->yAxis->scaleType(), QCPAxis::stLogarithmic);
    EXPECT_LT(plot->yAxis->range().lower, 0.002);
    EXPECT_GT(plot->yAxis->range().upper, 0.0422);

    // A sign flip sits above everything, off the scale; the to_cpu row has nothing to draw.
    panel.setApi("Tensor.chunk.0.forward");
    ASSERT_EQ(panel.points().size(), 1u);
    EXPECT_TRUE(panel.points()[0].offScale);
    EXPECT_GT(panel.points()[0].y, 0.0002);
    panel.setApi("Functional.linear.0.forward");
    EXPECT_TRUE(panel.points().empty());
    EXPECT_FALSE(panel.plotMessage().isEmpty());

    panel.setLogScale(false);
    panel.setApi("Functional.gelu.0.forward");
    EXPECT_EQ(plot->yAxis->scaleType(), QCPAxis::stLinear);
    EXPECT_EQ(panel.points().size(), 4u);
    const QString png = QStringLiteral(PROBESCOPE_TEST_OUTPUT_DIR "/freebench-plot.png");
    panel.setLogScale(true);
    EXPECT_TRUE(panel.grab().save(png));
}

TEST(FreeBenchPanel, LoadsInTheBackgroundAndEmitsTheRowClicked)
{
    ui::FreeBenchmarkPanel panel;
    panel.resize(800, 700);
    panel.show();
    QSignalSpy loaded(&panel, &ui::FreeBenchmarkPanel::loaded);
    panel.load({ q(data() / "run") });
    ASSERT_TRUE(loaded.wait(10000));
    EXPECT_EQ(loaded.at(0).at(0).toInt(), 3);
    EXPECT_EQ(loaded.at(0).at(1).toInt(), 8);
    EXPECT_TRUE(panel.summary().contains("8")) << panel.summary().toStdString();

    QSignalSpy activated(&panel, &ui::FreeBenchmarkPanel::apiActivated);
    QTableView* view = panel.tableView();
    // Sorted by step: the last row is a step-1 row of rank 1.
    const QModelIndex last = panel.proxy()->index(panel.proxy()->rowCount() - 1, ui::FreeBenchmarkModel::ApiColumn);
    const QString api = last.data().toString();
    const qint64 rank = last.data(ui::FreeBenchmarkModel::RankRole).toLongLong();
    view->scrollTo(last);
    QTest::mouseClick(view->viewport(), Qt::LeftButton, {}, view->visualRect(last).center());
    ASSERT_EQ(activated.size(), 1);
    EXPECT_EQ(activated.at(0).at(0).toString(), api);
    EXPECT_EQ(activated.at(0).at(1).toLongLong(), 1);
    EXPECT_EQ(activated.at(0).at(2).toLongLong(), rank);
    EXPECT_EQ(panel.api(), api);

    // The API filter narrows the table.
    panel.findChild<QLineEdit*>()->setText("GELU");
    EXPECT_EQ(panel.proxy()->rowCount(), 5);
}

// ---- main window ------------------------------------------------------------------------------------

namespace {

// Copies a fixture side's dump.json, construct.json and stack.json (no tensors) to `to`.
void copyDumpFiles(const fs::path& from, const fs::path& to)
{
    for (const auto& e : fs::recursive_directory_iterator(from)) {
        if (!e.is_regular_file() || e.path().extension() != ".json")
            continue;
        const fs::path target = to / fs::relative(e.path(), from);
        fs::create_directories(target.parent_path());
        fs::copy_file(e.path(), target);
    }
}

std::pair<bool, QString> waitFor(QSignalSpy& spy, int timeoutMs = 120000)
{
    if (spy.isEmpty() && !spy.wait(timeoutMs))
        return { false, QStringLiteral("timeout") };
    const auto args = spy.takeFirst();
    return { args.at(0).toBool(), args.size() > 1 ? args.at(1).toString() : QString() };
}

} // namespace

TEST(FreeBenchWindow, AFolderWithOnlyTheCsvShowsThePanel)
{
    ui::MainWindow window;
    window.setQuiet(true);
    window.resize(1400, 860);
    window.show();
    EXPECT_FALSE(window.isFreeBenchmarkShown());
    QSignalSpy loaded(window.freeBenchmarkPanel(), &ui::FreeBenchmarkPanel::loaded);
    ASSERT_TRUE(window.openInputs(q(data() / "run"), QString()));
    ASSERT_TRUE(loaded.wait(10000));
    EXPECT_TRUE(window.isFreeBenchmarkShown());
    EXPECT_EQ(window.freeBenchmarkPanel()->model()->rowCount(), 8);
    auto* tabs = window.findChild<QTabWidget*>();
    ASSERT_NE(tabs, nullptr);
    EXPECT_EQ(tabs->currentWidget(), window.freeBenchmarkPanel());
    EXPECT_TRUE(window.statusLine().contains("Free benchmark")) << window.statusLine().toStdString();
    window.freeBenchmarkPanel()->setApi("Functional.gelu.0.forward");
    EXPECT_TRUE(window.grab().save(QStringLiteral(PROBESCOPE_TEST_OUTPUT_DIR "/freebench-only.png")));

    // A folder without any CSV and without a bench is still refused as before.
    EXPECT_FALSE(window.openInputs(q(data() / "malformed"), QString()));
}

TEST(FreeBenchWindow, ARankFolderWithDumpJsonAndTheCsvShowsThePanel)
{
    TempDir tmp;
    copyDumpFiles(probescope::testing::fixturesDir() / "modelA_statistics_mix/npu/step0/rank", tmp.path() / "rank");
    fs::copy_file(data() / "run/step0/rank0/free_benchmark.csv", tmp.path() / "rank/free_benchmark.csv");
    ui::MainWindow window;
    window.setQuiet(true);
    QSignalSpy loaded(window.freeBenchmarkPanel(), &ui::FreeBenchmarkPanel::loaded);
    ASSERT_TRUE(window.openInputs(q(tmp.path() / "rank"), QString()));
    ASSERT_TRUE(loaded.wait(10000));
    EXPECT_TRUE(window.isFreeBenchmarkShown());
    EXPECT_EQ(window.freeBenchmarkPanel()->model()->rowCount(), 4);
}

TEST(FreeBenchWindow, BadgesOnTheFlaggedNodesAndARowClickSelectsItsNode)
{
    // A compared pair of one run whose NPU side also ran the free benchmark: the fixture's dumps, with a CSV
    // in each NPU rank folder naming APIs of that step (and one name the dump does not have).
    TempDir tmp;
    const fs::path fixture = probescope::testing::fixturesDir() / "modelA_statistics_mix";
    copyDumpFiles(fixture / "npu", tmp.path() / "npu");
    copyDumpFiles(fixture / "bench", tmp.path() / "bench");
    tmp.write("npu/step0/rank/free_benchmark.csv",
              "rank,pert_mode,stage,step,api_name,max_rel,dtype,shape,output_index\r\n"
              "0,add_noise,forward,0,Torch.matmul.0.forward,0.0009,torch.float32,\"torch.Size([4, 16, 16])\",\r\n"
              "0,add_noise,forward,0,Functional.softmax.0.forward,symbol_flipping,torch.float32,\"torch.Size([4, 16, 16])\",\r\n"
              "0,add_noise,forward,0,Torch.not_in_dump.0.forward,0.5,torch.float32,torch.Size([2]),\r\n");
    tmp.write("npu/step1/rank/free_benchmark.csv",
              "rank,pert_mode,stage,step,api_name,max_rel,dtype,shape,output_index\r\n"
              "0,add_noise,forward,1,Functional.linear.1.forward,0.001,torch.float32,\"torch.Size([4, 16])\",\r\n");

    ui::MainWindow window;
    window.setQuiet(true);
    window.resize(1400, 860);
    window.show();
    QSignalSpy finished(&window, &ui::MainWindow::analysisFinished);
    QSignalSpy loaded(window.freeBenchmarkPanel(), &ui::FreeBenchmarkPanel::loaded);
    ASSERT_TRUE(window.openInputs(q(tmp.path() / "npu"), q(tmp.path() / "bench")));
    const auto [ok, error] = waitFor(finished);
    ASSERT_TRUE(ok) << error.toStdString();
    if (loaded.isEmpty()) {
        ASSERT_TRUE(loaded.wait(10000));
    }
    EXPECT_EQ(loaded.at(0).at(0).toInt(), 2);
    EXPECT_TRUE(window.isFreeBenchmarkShown());

    // Step 0 is shown: matmul and softmax carry badges; the step-1 linear and the unknown name do not.
    ui::NodeBadgeDelegate* badges = window.nodeBadges();
    constexpr auto FB = ui::NodeBadgeDelegate::FreeBenchmark;
    ASSERT_EQ(badges->badges(FB).size(), 2);
    auto proxyIndexOf = [&](const char* key) {
        const auto id = window.treeModel()->tree()->find(key);
        EXPECT_TRUE(id) << key;
        return id ? window.treeRows()->mapFromNode(*id) : QModelIndex();
    };
    // Rows for the three nodes first (a reveal moves the rows below, so indexes are taken after).
    for (const char* key : { "Torch.matmul.0.forward", "Functional.softmax.0.forward", "Functional.linear.1.forward" }) {
        if (const auto id = window.treeModel()->tree()->find(key))
            window.treeRows()->reveal(*id);
    }
    const QModelIndex matmul = proxyIndexOf("Torch.matmul.0.forward");
    const QModelIndex softmax = proxyIndexOf("Functional.softmax.0.forward");
    const QModelIndex linear1 = proxyIndexOf("Functional.linear.1.forward");
    ASSERT_NE(badges->badgeFor(matmul, FB), nullptr);
    EXPECT_EQ(badges->badgeFor(matmul, FB)->text, "FB");
    EXPECT_TRUE(badges->badgeFor(matmul, FB)->toolTip.contains("max_rel 0.0009")) << badges->badgeFor(matmul, FB)->toolTip.toStdString();
    EXPECT_TRUE(badges->badgeFor(matmul, FB)->toolTip.contains(QStringLiteral("×4.5"))); // 0.0009 / 0.0002
    ASSERT_NE(badges->badgeFor(softmax, FB), nullptr);
    EXPECT_TRUE(badges->badgeFor(softmax, FB)->toolTip.contains("symbol_flipping"));
    EXPECT_EQ(badges->badgeFor(linear1, FB), nullptr);
    EXPECT_EQ(badges->badges(ui::NodeBadgeDelegate::RunUt).size(), 0);
    EXPECT_EQ(window.treeView()->itemDelegateForColumn(0), badges);

    // The badge is painted: the pixel at its centre has the badge colour, the same spot of an unflagged row not.
    ui::CompareTreeView* tree = window.treeView();
    tree->scrollTo(matmul);
    QCoreApplication::processEvents();
    const QImage image = tree->viewport()->grab().toImage();
    const QRect cell = tree->visualRect(matmul);
    const QRect badge = badges->badgeRect(cell, matmul, tree->font(), FB);
    ASSERT_FALSE(badge.isEmpty());
    auto near = [](QColor a, QColor b) {
        return std::abs(a.red() - b.red()) + std::abs(a.green() - b.green()) + std::abs(a.blue() - b.blue()) < 40;
    };
    // Inside the pill's rounded left end, left of the white "FB" text.
    const QPoint inPill(badge.left() + 2, badge.center().y());
    EXPECT_TRUE(near(image.pixelColor(inPill * image.devicePixelRatio()), ui::freeBenchBadgeColor()))
        << image.pixelColor(inPill * image.devicePixelRatio()).name().toStdString() << " at " << inPill.x() << ","
        << inPill.y() << " cell " << cell.x() << "," << cell.y() << " " << cell.width() << "x" << cell.height()
        << " image " << image.width() << "x" << image.height();
    const QRect plainCell = tree->visualRect(linear1);
    if (plainCell.isValid() && plainCell.intersects(tree->viewport()->rect())) {
        const QPoint same(inPill.x(), plainCell.top() + (inPill.y() - cell.top()));
        EXPECT_FALSE(near(image.pixelColor(same * image.devicePixelRatio()), ui::freeBenchBadgeColor()));
    }
    EXPECT_TRUE(window.grab().save(QStringLiteral(PROBESCOPE_TEST_OUTPUT_DIR "/freebench-badges.png")));

    // A click on matmul's row selects its node in the shown pair.
    ui::FreeBenchmarkPanel* panel = window.freeBenchmarkPanel();
    auto rowOf = [&](const QString& api) {
        for (int r = 0; r < panel->proxy()->rowCount(); ++r) {
            const QModelIndex i = panel->proxy()->index(r, ui::FreeBenchmarkModel::ApiColumn);
            if (i.data().toString() == api)
                return i;
        }
        return QModelIndex();
    };
    auto* tabs = window.findChild<QTabWidget*>();
    tabs->setCurrentWidget(panel);
    QCoreApplication::processEvents();
    const QModelIndex matmulRow = rowOf("Torch.matmul.0.forward");
    ASSERT_TRUE(matmulRow.isValid());
    QTest::mouseClick(panel->tableView()->viewport(), Qt::LeftButton, {}, panel->tableView()->visualRect(matmulRow).center());
    EXPECT_EQ(window.selectedNodeKey(), "Torch.matmul.0.forward");
    EXPECT_EQ(window.currentPair(), 0);

    // A step-1 row switches to step 1's pair and selects its node once that compare ends (not the first failure).
    const QModelIndex linearRow = rowOf("Functional.linear.1.forward");
    ASSERT_TRUE(linearRow.isValid());
    finished.clear();
    QTest::mouseClick(panel->tableView()->viewport(), Qt::LeftButton, {}, panel->tableView()->visualRect(linearRow).center());
    const auto [ok1, error1] = waitFor(finished);
    ASSERT_TRUE(ok1) << error1.toStdString();
    EXPECT_EQ(window.plan()->pairs[static_cast<std::size_t>(window.currentPair())].step, 1);
    EXPECT_EQ(window.selectedNodeKey(), "Functional.linear.1.forward");
    ASSERT_EQ(badges->badges(FB).size(), 1); // now step 1's row
    EXPECT_NE(badges->badgeFor(proxyIndexOf("Functional.linear.1.forward"), FB), nullptr);
}
