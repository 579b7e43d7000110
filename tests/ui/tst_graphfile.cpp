// SPDX-License-Identifier: Apache-2.0
// msprobe's graph files in the window (issue 27): GraphFileModel under QAbstractItemModelTester on the real 8.3.3 and
// 26.0.0 dbs and the 1.2 .vis goldens (node counts, colours per band, the first failing node: the figures
// `probescope-cli info` prints for the same files, written out here), the background open (GraphFileJob: cancel, a
// damaged db is an error naming the file), the window's graph page and trend tab, and the export as a .vis.db.
#include "core/graph/graphreader.h"
#include "core/graph/trend.h"
#include "ui/jobs/graphfilejob.h"
#include "ui/jobs/jobprogress.h"
#include "ui/models/graphfilemodel.h"
#include "ui/panels/exportdialog.h"
#include "ui/panels/openpairdialog.h"
#include "ui/panels/searchbar.h"
#include "ui/views/graphfilepanel.h"
#include "ui/views/mainwindow.h"
#include "ui/models/graphsides.h"
#include "ui/views/graphview.h"
#include "ui/views/trendview.h"

#include "core/tempdir.h"
#include "modeltestfailures.h"
#include "testconfig.h"

#include <QAbstractItemModelTester>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QLineEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QTest>
#include <QTabWidget>
#include <QTableWidget>
#include <QTextBrowser>
#include <QTreeView>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>

using namespace probescope;
using probescope::testing::ModelTestFailures;
using probescope::ui::GraphFileModel;
namespace fs = std::filesystem;

namespace {

fs::path graphFixture(const std::string& relative)
{
    return probescope::testing::fixturesDir() / "msprobe_graph" / relative;
}

fs::path visFixture(const std::string& name)
{
    return probescope::testing::fixturesDir() / "modelA_tensor_mix" / "expected" / "graph" / name;
}

std::shared_ptr<const graph::GraphFile> read(const fs::path& path)
{
    graph::ReadOptions options;
    options.nodeData = false; // as the window reads it
    auto file = graph::readGraphFile(path, options);
    EXPECT_TRUE(file) << (file ? std::string() : file.error().format());
    return file ? *file : nullptr;
}

/// Every index of the model below `parent`, depth first.
void collect(const QAbstractItemModel& model, const QModelIndex& parent, std::vector<QModelIndex>& out)
{
    for (int r = 0; r < model.rowCount(parent); ++r) {
        const QModelIndex i = model.index(r, 0, parent);
        out.push_back(i);
        collect(model, i, out);
    }
}

/// What `probescope-cli info` prints for one NPU graph: node count, the count per colour, unmatched, first failing.
struct InfoFigures
{
    const char* file;
    int graph;
    std::size_t nodes;
    std::map<std::string, std::size_t> perColour; ///< ranged bands only
    std::size_t unmatched;
    const char* firstFailing; ///< "" = none
    int firstFailingOrder;
};

const InfoFigures kInfo[] = {
    { "v26/modelA_tensor_mix/compare_steps.vis.db", 0, 127, { { "#FFFCF3", 109 }, { "#FFDC7F", 3 }, { "#FF704D", 3 } }, 11,
      "Functional.gelu.0.forward", 38 },
    { "v26/modelA_tensor_mix/compare_steps.vis.db", 2, 127, { { "#FFFCF3", 112 }, { "#FFDC7F", 3 }, { "#FF704D", 0 } }, 11, "",
      -1 },
    { "v833/modelA_statistics_mix/compare_step0_rank.vis.db", 0, 127,
      { { "#FFFCF3", 68 }, { "#FFEDBE", 6 }, { "#FFDC7F", 4 }, { "#FFC62E", 6 }, { "#FF704D", 31 } }, 11,
      "Functional.linear.7.backward", 59 },
    { "v833/modelA_md5_mix/compare_step0_rank.vis.db", 0, 127, { { "#FFFCF3", 40 }, { "#FF704D", 75 } }, 11,
      "Functional.gelu.0.forward", 38 },
    { "v833/modelA_tensor_mix/compare_steps.vis.db", 2, 127,
      { { "#FFFCF3", 90 }, { "#FFEDBE", 9 }, { "#FFDC7F", 2 }, { "#FFC62E", 1 }, { "#FF704D", 13 } }, 11,
      "Functional.conv2d.1.forward", 7 },
};

} // namespace

class GraphFileModelInfo : public ::testing::TestWithParam<InfoFigures>
{
};

TEST_P(GraphFileModelInfo, ShowsWhatInfoCounts)
{
    const InfoFigures& want = GetParam();
    const auto file = read(graphFixture(want.file));
    ASSERT_TRUE(file);
    GraphFileModel model;
    ModelTestFailures failures;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Warning);
    model.setGraph(file, want.graph);
    std::vector<QModelIndex> all;
    collect(model, {}, all);
    EXPECT_EQ(all.size(), want.nodes);
    std::map<std::string, std::size_t> perColour;
    std::size_t unmatched = 0;
    for (const QModelIndex& i : all) {
        const auto status = static_cast<graph::Status>(i.data(GraphFileModel::StatusRole).toInt());
        const QColor colour = i.data(GraphFileModel::ColourRole).value<QColor>();
        // A node without a verdict takes the theme's base (issue 36: white in a dark theme), any other its colour.
        if (status == graph::Status::NoValue)
            EXPECT_FALSE(i.data(Qt::BackgroundRole).isValid());
        else
            EXPECT_EQ(i.data(Qt::BackgroundRole).value<QColor>(), colour);
        if (status == graph::Status::Banded)
            ++perColour[colour.name(QColor::HexRgb).toUpper().toStdString()];
        if (status == graph::Status::Unmatched) {
            ++unmatched;
            EXPECT_EQ(colour, QColor("#C7C7C7")) << "unmatched nodes are msprobe's grey";
            EXPECT_EQ(model.index(i.row(), GraphFileModel::VerdictColumn, i.parent()).data().toString(), "unmatched");
        }
        // Each index maps back to its node and the node to the index.
        const auto node = model.nodeOf(i);
        ASSERT_TRUE(node);
        EXPECT_EQ(model.indexOfNode(*node), i);
    }
    for (const auto& [colour, count] : want.perColour)
        EXPECT_EQ(perColour[colour], count) << colour;
    EXPECT_EQ(unmatched, want.unmatched);

    ui::GraphFilePanel panel;
    panel.setFile(file, {});
    ASSERT_TRUE(panel.showGraph(want.graph));
    // Without a failing node the panel lands on the first warning (issue 36 item 7), when there is one.
    const auto warning = panel.firstWarning(want.graph);
    const std::string landing = std::string(want.firstFailing) != "" ? std::string(want.firstFailing)
        : warning ? file->graphs[static_cast<std::size_t>(want.graph)].nodes[*warning].name : std::string();
    EXPECT_EQ(panel.selectFirstFailure(), !landing.empty());
    EXPECT_EQ(panel.selectedNodeName().toStdString(), landing);
    if (want.firstFailingOrder >= 0) {
        EXPECT_TRUE(panel.firstFailureLine().contains(QStringLiteral("node_order %1").arg(want.firstFailingOrder)))
            << panel.firstFailureLine().toStdString();
    }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, GraphFileModelInfo, ::testing::ValuesIn(kInfo));

TEST(GraphFileModel, VisGoldenOfMsprobe12)
{
    const auto file = read(visFixture("graph_compare_step0_rank.vis"));
    ASSERT_TRUE(file);
    ASSERT_EQ(file->graphs.size(), 2u);
    GraphFileModel model;
    ModelTestFailures failures;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Warning);
    for (int g = 0; g < 2; ++g) {
        model.setGraph(file, g);
        std::vector<QModelIndex> all;
        collect(model, {}, all);
        // info: NPU_0_0 114 nodes, Bench_0_0 110 nodes.
        EXPECT_EQ(all.size(), g == 0 ? 114u : 110u);
    }
    ui::GraphFilePanel panel;
    panel.setFile(file, {});
    ASSERT_TRUE(panel.selectFirstFailure());
    EXPECT_EQ(panel.selectedNodeName(), "Functional.gelu.0.forward");
    // The .vis keeps its data in the file: the details show it without a db lookup.
    EXPECT_TRUE(panel.detailsText().contains("input_data")) << panel.detailsText().toStdString();
    EXPECT_TRUE(panel.detailsText().contains("Functional.gelu.0.forward"));
}

TEST(GraphFileModel, BenchNodesTakeTheBenchColourAndBuildGraphsNone)
{
    const auto file = read(graphFixture("v26/modelA_tensor_mix/compare_step0_rank.vis.db"));
    ASSERT_TRUE(file);
    GraphFileModel model;
    model.setGraph(file, 1);
    ASSERT_EQ(model.graph()->side, graph::Side::Bench);
    std::vector<QModelIndex> all;
    collect(model, {}, all);
    std::size_t bench = 0;
    for (const QModelIndex& i : all)
        bench += static_cast<graph::Status>(i.data(GraphFileModel::StatusRole).toInt()) == graph::Status::Bench;
    EXPECT_EQ(bench, 116u); // info: matched 116, unmatched 7

    const auto build = read(graphFixture("v26/modelA_statistics_mix/build_step0_rank.vis.db"));
    ASSERT_TRUE(build);
    model.setGraph(build, 0);
    all.clear();
    collect(model, {}, all);
    EXPECT_EQ(all.size(), 127u);
    for (const QModelIndex& i : all)
        EXPECT_EQ(static_cast<graph::Status>(i.data(GraphFileModel::StatusRole).toInt()), graph::Status::NoValue);
    ui::GraphFilePanel panel;
    panel.setFile(build, {});
    EXPECT_FALSE(panel.selectFirstFailure());
}

TEST(GraphFileModel, MicroStepKeepsTheTopLevelNodesOfThatStep)
{
    const auto file = read(graphFixture("v26/modelA_tensor_mix/compare_step0_rank.vis.db"));
    ASSERT_TRUE(file);
    GraphFileModel model;
    ModelTestFailures failures;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Warning);
    const graph::Graph& g = file->graphs[0];
    ASSERT_FALSE(g.microSteps.empty());
    model.setGraph(file, 0, g.microSteps.front());
    std::vector<QModelIndex> all;
    collect(model, {}, all);
    std::size_t expected = 0;
    for (const graph::Node& n : g.nodes) {
        // Shown: the roots, and every node whose top-level ancestor (the root's child) is of that micro step.
        std::int32_t at = static_cast<std::int32_t>(&n - g.nodes.data());
        std::int32_t top = at;
        while (g.nodes[static_cast<std::size_t>(at)].parent >= 0) {
            top = at;
            at = g.nodes[static_cast<std::size_t>(at)].parent;
        }
        expected += n.parent < 0 || g.nodes[static_cast<std::size_t>(top)].microStep == g.microSteps.front();
    }
    EXPECT_EQ(all.size(), expected);
    // A micro step no node has: the root alone.
    model.setGraph(file, 0, 12345);
    all.clear();
    collect(model, {}, all);
    EXPECT_EQ(all.size(), g.roots.size());
}

TEST(GraphFileJob, OpensInTheBackgroundAndADamagedDbIsAnErrorNamingTheFile)
{
    ui::GraphFileJob job;
    QSignalSpy finished(&job, &ui::GraphFileJob::finished);
    job.open(graphFixture("v26/modelA_tensor_mix/compare_steps.vis.db"));
    ASSERT_TRUE(finished.wait(60000));
    ASSERT_FALSE(job.outcome().error) << job.outcome().error->format();
    ASSERT_TRUE(job.outcome().graphs);
    EXPECT_EQ(job.outcome().graphs->graphs.size(), 4u);
    EXPECT_TRUE(job.outcome().graphs->dataDeferred);
    ASSERT_EQ(job.outcome().summaries.size(), 4u);
    EXPECT_EQ(job.outcome().summaries[0].nodes, 127u);

    // A db cut short: SQLite's "malformed" or a missing table, as graph.db with the file's name; no model.
    probescope::testing::TempDir dir;
    const fs::path cut = dir.path() / "cut.vis.db";
    {
        std::ifstream in(graphFixture("v26/modelA_tensor_mix/compare_step0_rank.vis.db"), std::ios::binary);
        std::string bytes((std::istreambuf_iterator<char>(in)), {});
        std::ofstream(cut, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size() / 3));
    }
    finished.clear();
    job.open(cut);
    ASSERT_TRUE(finished.wait(60000));
    ASSERT_TRUE(job.outcome().error);
    EXPECT_EQ(job.outcome().error->id, "graph.db");
    EXPECT_NE(job.outcome().error->format().find(cut.string()), std::string::npos) << job.outcome().error->format();
    EXPECT_FALSE(job.outcome().graphs);

    // Not SQLite at all.
    const fs::path text = dir.write("notes.vis.db", "hello\n");
    finished.clear();
    job.open(text);
    ASSERT_TRUE(finished.wait(60000));
    ASSERT_TRUE(job.outcome().error);
    EXPECT_NE(job.outcome().error->format().find("not an SQLite database"), std::string::npos);
}

TEST(GraphFileJob, CancelledOpenGivesNoModel)
{
    ui::JobProgress progress;
    progress.cancel();
    const ui::GraphFileOutcome o = ui::openGraphFile(graphFixture("v26/modelA_tensor_mix/compare_steps.vis.db"), &progress);
    EXPECT_TRUE(o.cancelled);
    ASSERT_TRUE(o.error);
    EXPECT_EQ(o.error->id, "graph.cancelled");
    EXPECT_FALSE(o.graphs);
}

TEST(GraphFileJob, TrendDb)
{
    const ui::GraphFileOutcome o
        = ui::openGraphFile(graphFixture("v26/modelA_tensor_mix/dump_data_npu_layout_rank0.trend.db"), nullptr);
    ASSERT_FALSE(o.error) << o.error->format();
    ASSERT_TRUE(o.trend);
    ui::TrendView view;
    view.setTable(o.trend);
    // info: steps 0..9, ranks [0], 31 modules, 130 targets.
    EXPECT_EQ(view.grid()->model()->rowCount(), 10);
    EXPECT_EQ(view.grid()->model()->columnCount(), 1);
    EXPECT_EQ(view.moduleBox()->count(), 31);
    // Each shown cell is the table's value for that (step, rank, target, metric).
    const graph::TrendTable& t = *o.trend;
    const graph::TrendValue& v = t.values.front();
    ASSERT_TRUE(view.choose(v.target, v.metric, ui::TrendView::Statistic::Norm));
    EXPECT_EQ(view.moduleBox()->currentText().toStdString(), graph::trendModuleOf(t.targets[v.target].name));
    const auto shown = view.value(v.step, v.rank);
    const auto norm = t.stat(v, "norm");
    ASSERT_EQ(shown.has_value(), norm.has_value());
    if (norm) {
        EXPECT_DOUBLE_EQ(*shown, *norm);
    }
    const auto row = static_cast<int>(std::find(t.steps.begin(), t.steps.end(), v.step) - t.steps.begin());
    if (norm) {
        EXPECT_EQ(view.grid()->model()->index(row, 0).data().toString(), QString::number(*norm, 'g', 6));
    }
}

TEST(GraphFilePanel, SearchAndMatchedLink)
{
    const auto file = read(graphFixture("v26/modelA_tensor_mix/compare_step0_rank.vis.db"));
    ASSERT_TRUE(file);
    ui::GraphFilePanel panel;
    panel.setFile(file, {});
    panel.searchBar()->setDebounceInterval(0);
    QSignalSpy searched(panel.searchBar(), &ui::SearchBar::searchRequested);
    panel.searchBar()->setPattern("gelu");
    panel.searchBar()->flush();
    EXPECT_TRUE(panel.selectedNodeName().contains("gelu")) << panel.selectedNodeName().toStdString();
    EXPECT_TRUE(panel.searchBar()->counterText().startsWith("1 / ")) << panel.searchBar()->counterText().toStdString();
    const QString plainHits = panel.searchBar()->counterText();
    // Case folded unless Match case is on; a regex finds the same nodes.
    panel.searchBar()->setPattern("GELU");
    panel.searchBar()->flush();
    EXPECT_EQ(panel.searchBar()->counterText(), plainHits);
    panel.searchBar()->setCaseSensitive(true);
    panel.searchBar()->flush();
    EXPECT_EQ(panel.searchBar()->counterText(), "No hits");
    panel.searchBar()->setCaseSensitive(false);
    panel.searchBar()->setRegex(true);
    panel.searchBar()->setPattern("g.lu");
    panel.searchBar()->flush();
    EXPECT_EQ(panel.searchBar()->counterText(), plainHits);
    panel.searchBar()->setRegex(false);

    // The first failing node's details name its matched bench node; following the link shows the bench graph.
    ASSERT_TRUE(panel.selectFirstFailure());
    const QString details = panel.detailsText();
    EXPECT_TRUE(details.contains("precision_index")) << details.toStdString();
    EXPECT_TRUE(details.contains("error")) << details.toStdString();
    EXPECT_TRUE(details.contains("output_data"));
    // Deferred node data is read on selection: the gelu's statistics are in the details.
    EXPECT_TRUE(details.contains("Max")) << details.toStdString();
    emit panel.details()->anchorClicked(QUrl(QStringLiteral("node:1/Functional.gelu.0.forward")));
    EXPECT_EQ(panel.currentGraph(), 1);
    EXPECT_EQ(panel.selectedNodeName(), "Functional.gelu.0.forward");
    // Choosing the other graph keeps the same node selected.
    panel.graphBox()->setCurrentIndex(0);
    EXPECT_EQ(panel.currentGraph(), 0);
    EXPECT_EQ(panel.selectedNodeName(), "Functional.gelu.0.forward");
}

namespace {

std::pair<bool, QString> waitFor(QSignalSpy& spy)
{
    if (spy.isEmpty() && !spy.wait(120000))
        return { false, QStringLiteral("timeout") };
    const auto args = spy.takeFirst();
    return { args.at(0).toBool(), args.at(1).toString() };
}

} // namespace

TEST(GraphFileWindow, OpensDbVisAndTrendAndRefusesADamagedDb)
{
    ui::MainWindow window;
    window.setQuiet(true);
    window.show();
    QSignalSpy finished(&window, &ui::MainWindow::analysisFinished);

    ASSERT_TRUE(window.openInputs(QString::fromStdString(graphFixture("v833/modelA_md5_mix/compare_step0_rank.vis.db").string()), {}));
    EXPECT_TRUE(window.isGraphFileLoading());
    auto [ok, error] = waitFor(finished);
    ASSERT_TRUE(ok) << error.toStdString();
    EXPECT_TRUE(window.isGraphFileShown());
    EXPECT_EQ(window.selectedNodeKey(), "Functional.gelu.0.forward");
    EXPECT_TRUE(window.statusLine().contains("Functional.gelu.0.forward")) << window.statusLine().toStdString();
    EXPECT_FALSE(window.tabs()->isVisible()); // the pair's tabs give way to the graph page's own details
    ASSERT_EQ(window.graphFileReport().size(), 2);
    EXPECT_TRUE(window.graphFileReport()[0].startsWith("NPU_0_0: step 0, rank 0, NPU, 127 nodes"));
    EXPECT_TRUE(window.selectNodeByKey("Module.conv.ConvNet.forward.0"));
    EXPECT_EQ(window.selectedNodeKey(), "Module.conv.ConvNet.forward.0");

    ASSERT_TRUE(window.openInputs(QString::fromStdString(visFixture("graph_compare_step0_rank.vis").string()), {}));
    std::tie(ok, error) = waitFor(finished);
    ASSERT_TRUE(ok) << error.toStdString();
    EXPECT_EQ(window.graphFilePanel()->file()->version, graph::MsprobeVersion::V12Vis);
    EXPECT_EQ(window.selectedNodeKey(), "Functional.gelu.0.forward");

    ASSERT_TRUE(window.openInputs(
        QString::fromStdString(graphFixture("v26/modelA_tensor_mix/dump_data_npu_layout_rank0.trend.db").string()), {}));
    std::tie(ok, error) = waitFor(finished);
    ASSERT_TRUE(ok) << error.toStdString();
    EXPECT_GE(window.tabs()->indexOf(window.trendView()), 0);
    EXPECT_EQ(window.tabs()->currentWidget(), window.trendView());
    EXPECT_TRUE(window.tabs()->isVisible());

    probescope::testing::TempDir dir;
    const fs::path cut = dir.path() / "cut.vis.db";
    {
        std::ifstream in(graphFixture("v26/modelA_tensor_mix/compare_step0_rank.vis.db"), std::ios::binary);
        std::string bytes((std::istreambuf_iterator<char>(in)), {});
        std::ofstream(cut, std::ios::binary).write(bytes.data(), 40000);
    }
    window.openInputs(QString::fromStdString(cut.string()), {});
    std::tie(ok, error) = waitFor(finished);
    EXPECT_FALSE(ok);
    EXPECT_TRUE(error.contains(QString::fromStdString(cut.string()))) << error.toStdString();
    EXPECT_TRUE(window.statusLine().contains("Cannot open")) << window.statusLine().toStdString();
}

TEST(GraphFileWindow, TheGraphViewShowsTheOpenedFilesNpuAndBenchGraphs)
{
    ui::MainWindow window;
    window.setQuiet(true);
    window.show();
    window.setGraphViewShown(true);
    QSignalSpy finished(&window, &ui::MainWindow::analysisFinished);
    ASSERT_TRUE(window.openInputs(QString::fromStdString(graphFixture("v26/modelA_tensor_mix/compare_step0_rank.vis.db").string()), {}));
    auto [ok, error] = waitFor(finished);
    ASSERT_TRUE(ok) << error.toStdString();
    // Made on a worker: the file's NPU graph (127 nodes) beside its bench graph (123), as the report counts them.
    ASSERT_TRUE(QTest::qWaitFor([&] { return window.graphView()->sides() != nullptr; }, 60000));
    auto sides = window.graphView()->sides();
    EXPECT_EQ(sides->npu().size(), 127u);
    EXPECT_EQ(sides->bench().size(), 123u);
    // Choosing the bench graph in the page keeps the same sides (its NPU graph's).
    window.graphFilePanel()->showGraph(1);
    QCoreApplication::processEvents();
    EXPECT_EQ(window.graphView()->sides(), sides);
    window.setGraphViewShown(false);
}

TEST(GraphFileExport, WritesTheOpenPairAsAVisDb)
{
    // The export of a compared pair as msprobe's graph db: the same writer as `probescope-cli graph`.
    ui::MainWindow window;
    window.setQuiet(true);
    QSignalSpy finished(&window, &ui::MainWindow::analysisFinished);
    const fs::path pair = probescope::testing::fixturesDir() / "modelA_tensor_mix";
    ASSERT_TRUE(window.openInputs(QString::fromStdString((pair / "npu").string()),
                                  QString::fromStdString((pair / "bench").string())));
    auto [ok, error] = waitFor(finished);
    ASSERT_TRUE(ok) << error.toStdString();
    ASSERT_TRUE(window.analysis());

    probescope::testing::TempDir dir;
    ui::ExportDialog dialog(window.analysis(), ui::Settings {});
    dialog.setOutputFolder(QString::fromStdString(dir.path().string()));
    dialog.setFormat(ui::ExportFormat::VisDb26);
    QSignalSpy done(&dialog, &ui::ExportDialog::exportFinished);
    dialog.startExport();
    ASSERT_TRUE(done.wait(300000));
    const QStringList files = done.takeFirst().at(0).toStringList();
    ASSERT_EQ(files.size(), 1) << dialog.resultText().toStdString();
    EXPECT_TRUE(files[0].contains("compare_")) << files[0].toStdString();
    EXPECT_TRUE(files[0].endsWith(".vis.db"));
    // Read back: the same first failing node the pair's compare found.
    const auto file = read(files[0].toStdString());
    ASSERT_TRUE(file);
    EXPECT_EQ(file->version, graph::MsprobeVersion::V26);
    const auto summary = graph::summarize(*file, file->graphs.at(0));
    ASSERT_TRUE(summary.firstFailing);
    EXPECT_EQ(file->graphs[0].nodes[*summary.firstFailing].name, "Functional.gelu.0.forward");
}

TEST(GraphFileOpen, OpenPairDialogTakesAGraphFileAlone)
{
    // File → Open pair…: a graph file in the NPU field opens alone, like msprobe's compare.json.
    const QString db = QString::fromStdString(graphFixture("v26/modelA_tensor_mix/compare_step0_rank.vis.db").string());
    ui::OpenPairDialog dialog(ui::Settings {}, db, QString());
    QPushButton* open = dialog.findChild<QDialogButtonBox*>()->button(QDialogButtonBox::Open);
    ASSERT_NE(open, nullptr);
    EXPECT_TRUE(open->isEnabled());
    EXPECT_TRUE(dialog.bench().isEmpty());
    EXPECT_EQ(dialog.npu(), db);
    // A graph file name that is no file is still refused, with the reason.
    ui::OpenPairDialog missing(ui::Settings {}, QStringLiteral("/nonexistent/compare.vis.db"), QString());
    EXPECT_FALSE(missing.findChild<QDialogButtonBox*>()->button(QDialogButtonBox::Open)->isEnabled());
}

TEST(GraphReader, ScanInRowidRangesGivesTheSameFile)
{
    // A large db is scanned in rowid ranges on several connections at once; forced here on the real files (a range
    // ends inside a graph, and a graph's rows come from two ranges), the file read must equal the one-scan read.
    for (const char* name : { "v26/modelA_tensor_mix/compare_steps.vis.db", "v833/modelA_md5_mix/compare_steps.vis.db" }) {
        for (const bool data : { false, true }) {
            graph::ReadOptions one;
            one.nodeData = data;
            one.scanConnections = 1;
            graph::ReadOptions three = one;
            three.scanConnections = 3;
            auto a = graph::readVisDb(graphFixture(name), one);
            auto b = graph::readVisDb(graphFixture(name), three);
            ASSERT_TRUE(a && b) << name;
            const graph::GraphFile& x = **a;
            const graph::GraphFile& y = **b;
            EXPECT_EQ(x.warnings, y.warnings);
            ASSERT_EQ(x.graphs.size(), y.graphs.size());
            for (std::size_t g = 0; g < x.graphs.size(); ++g) {
                const graph::Graph& p = x.graphs[g];
                const graph::Graph& q = y.graphs[g];
                EXPECT_EQ(p.id, q.id);
                EXPECT_EQ(p.roots, q.roots);
                EXPECT_EQ(p.stacks, q.stacks);
                EXPECT_EQ(p.microSteps, q.microSteps);
                EXPECT_EQ(p.dumpDataDir, q.dumpDataDir);
                ASSERT_EQ(p.nodes.size(), q.nodes.size());
                for (std::size_t i = 0; i < p.nodes.size(); ++i) {
                    const graph::Node& m = p.nodes[i];
                    const graph::Node& n = q.nodes[i];
                    ASSERT_EQ(m.name, n.name) << name << " " << p.id << " " << i;
                    EXPECT_EQ(m.type, n.type);
                    EXPECT_EQ(m.parent, n.parent);
                    EXPECT_EQ(m.children, n.children);
                    EXPECT_EQ(m.subNodes, n.subNodes);
                    EXPECT_EQ(m.matchedLink, n.matchedLink);
                    EXPECT_EQ(m.precision, n.precision);
                    EXPECT_EQ(m.stack, n.stack);
                    EXPECT_EQ(m.status, n.status);
                    EXPECT_EQ(m.band, n.band);
                    EXPECT_EQ(m.inputData, n.inputData);
                    EXPECT_EQ(m.outputData, n.outputData);
                    EXPECT_EQ(m.dumpDataDir, n.dumpDataDir);
                }
            }
        }
    }
}

TEST(GraphFileUi, DeepChainOpensWithinTheShownDepth)
{
    // A chain 3,000 deep (a 2,000-deep db held the window 19 s: every expansion of the chain re-measured the columns
    // and QTreeView updates each ancestor per expansion). The page opens at most kMaxShownDepth levels above the
    // selected node, under that ancestor; the graph view reveals the whole chain in one pass.
    probescope::testing::TempDir dir;
    constexpr int kDepth = 3000;
    std::string text = R"({"root": "n0", "node": {)";
    for (int d = 0; d < kDepth; ++d)
        text += (d ? ", \"n" : "\"n") + std::to_string(d) + "\": {\"node_type\": 0, \"upnode\": \""
            + (d ? "n" + std::to_string(d - 1) : std::string("None")) + "\", \"subnodes\": ["
            + (d + 1 < kDepth ? "\"n" + std::to_string(d + 1) + "\"" : std::string()) + "]}";
    text += "}}";
    const fs::path path = dir.write("build_step0_rank0.vis", text);
    const auto file = read(path);
    ASSERT_TRUE(file);
    ui::GraphFilePanel panel;
    panel.setFile(file, {});
    const QString deepest = QString::fromStdString("n" + std::to_string(kDepth - 1));
    ASSERT_TRUE(panel.selectNode(deepest));
    EXPECT_EQ(panel.selectedNodeName(), deepest);
    const QModelIndex root = panel.tree()->rootIndex();
    ASSERT_TRUE(root.isValid());
    int levels = 0;
    for (QModelIndex p = panel.tree()->currentIndex().parent(); p.isValid() && p != root; p = p.parent())
        ++levels;
    EXPECT_EQ(levels, 15); // the root itself is the 16th ancestor (kMaxShownDepth)
    EXPECT_TRUE(panel.tree()->isExpanded(panel.tree()->currentIndex().parent()));
    // A shallow node shows the tree from the top again.
    ASSERT_TRUE(panel.selectNode("n3"));
    EXPECT_FALSE(panel.tree()->rootIndex().isValid());
    EXPECT_EQ(panel.selectedNodeName(), "n3");

    // The graph view: every ancestor opened, the rows made once: the chain's 3,000 rows, the node current.
    ui::GraphView view;
    view.setSides(ui::graphSidesFromGraphFile(file, 0));
    const auto node = view.sides()->npu().find(deepest.toStdString());
    ASSERT_TRUE(node);
    view.selectNode(ui::GraphSideId::Npu, *node);
    EXPECT_EQ(view.pane(ui::GraphSideId::Npu)->rows().size(), static_cast<std::size_t>(kDepth));
    EXPECT_EQ(view.pane(ui::GraphSideId::Npu)->rowOf(*node), kDepth - 1);
    EXPECT_EQ(view.current(ui::GraphSideId::Npu), node);
}
