// SPDX-License-Identifier: Apache-2.0
// Charts and the tensor inspector on the real msprobe fixtures. Oracles: the session's own node
// metrics and first failure, msprobe's compare CSV (expected/nostack/step*/compare_result.csv) for
// statistics and MaxAbsErr, core's elementdiff on tensors read independently, and QImage for PNGs.
// Each widget is also saved as a screenshot next to the test program (screenshots/), to be looked at.
#include "fixtureguard.h"
#include "ui/inspect/metricplot.h"
#include "ui/inspect/nodetrendplot.h"
#include "ui/inspect/tensorinspector.h"
#include "ui/inspect/tensorrow.h"
#include "core/session/session.h"
#include "core/tensor/elementdiff.h"
#include "testconfig.h"

#include <QCoreApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QImage>
#include <QSignalSpy>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QThreadPool>

#include <gtest/gtest.h>
#include <qcustomplot.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>

using namespace probescope;
using namespace probescope::ui;
namespace fs = std::filesystem;

namespace {

constexpr const char* kGelu = "Functional.gelu.0.forward";
constexpr const char* kGeluOut = "Functional.gelu.0.forward.output.0";

fs::path fixtureSide(const std::string& fixture, const char* side)
{
    return probescope::testing::fixturesDir() / fixture / side;
}

/// A writable copy of modelA_tensor_mix's step 0 (both sides) under `root`.
void copyTensorStep0(const fs::path& root)
{
    for (const char* side : { "npu", "bench" }) {
        fs::create_directories(root / side / "step0");
        fs::copy(fixtureSide("modelA_tensor_mix", side) / "step0" / "rank", root / side / "step0" / "rank",
                 fs::copy_options::recursive);
    }
}

std::shared_ptr<const session::PairAnalysis> analyseAt(const fs::path& npu, const fs::path& bench, std::int64_t step)
{
    auto plan = session::planSession(npu, bench);
    EXPECT_TRUE(plan.ok()) << (plan.ok() ? "" : plan.error().format());
    if (!plan.ok())
        return nullptr;
    for (const session::RankPair& pair : plan->pairs) {
        if (pair.step != step)
            continue;
        session::AnalysisOptions options;
        options.threads = 2;
        auto analysis = session::analysePair(pair, options);
        EXPECT_TRUE(analysis.ok()) << (analysis.ok() ? "" : analysis.error().format());
        return analysis.ok() ? *analysis : nullptr;
    }
    ADD_FAILURE() << "no pair of step " << step;
    return nullptr;
}

/// Analyses of the fixtures, computed once per test program.
std::shared_ptr<const session::PairAnalysis> analysis(const std::string& fixture, std::int64_t step)
{
    static std::map<std::pair<std::string, std::int64_t>, std::shared_ptr<const session::PairAnalysis>> cache;
    auto& slot = cache[{ fixture, step }];
    if (!slot)
        slot = analyseAt(fixtureSide(fixture, "npu"), fixtureSide(fixture, "bench"), step);
    return slot;
}

std::size_t rowOf(const compare::CompareTable& table, const std::string& npuName)
{
    const int c = table.column("NPU Name");
    for (std::size_t r = 0; r < table.rows.size(); ++r) {
        if (table.rows[r][static_cast<std::size_t>(c)].asString() == npuName)
            return r;
    }
    ADD_FAILURE() << "no row " << npuName;
    return 0;
}

bool waitFor(QSignalSpy& spy, int count, int timeoutMs = 30000)
{
    QElapsedTimer timer;
    timer.start();
    while (spy.count() < count && timer.elapsed() < timeoutMs)
        spy.wait(static_cast<int>(std::max<qint64>(1, timeoutMs - timer.elapsed())));
    return spy.count() >= count;
}

/// Waits until a slice newer than the `seen`-th is drawn and no other is being computed.
bool waitForSlice(const TensorInspector& inspector, QSignalSpy& spy, int seen)
{
    while (spy.count() <= seen || inspector.isSliceLoading()) {
        if (!spy.wait(30000))
            return false;
    }
    return true;
}

QString screenshotDir()
{
    const QString dir = QCoreApplication::applicationDirPath() + QStringLiteral("/screenshots");
    QDir().mkpath(dir);
    return dir;
}

void saveScreenshot(QWidget& w, const QString& name)
{
    const QString path = screenshotDir() + QLatin1Char('/') + name;
    EXPECT_TRUE(w.grab().save(path)) << path.toStdString();
}

bool isPng(const QString& path)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return false;
    return f.read(8) == QByteArray("\x89PNG\r\n\x1a\n", 8);
}

tensor::Tensor loadFixtureTensor(const char* side, const std::string& name, int step = 0)
{
    auto t = tensor::loadTensorFile(fixtureSide("modelA_tensor_mix", side) / ("step" + std::to_string(step)) / "rank"
                                        / "dump_tensor_data",
                                    name + ".pt");
    EXPECT_TRUE(t.ok());
    return t.ok() ? std::move(t).value() : tensor::Tensor {};
}

QString indexText(const std::vector<std::int64_t>& index)
{
    QStringList parts;
    for (auto i : index)
        parts << QString::number(i);
    return QStringLiteral("[") + parts.join(QStringLiteral(", ")) + QStringLiteral("]");
}

} // namespace

// ---------------------------------------------------------------------------------------------------
// MetricPlot

TEST(MetricPlot, PlotsEveryNodeThatHasTheMetric)
{
    auto a = analysis("modelA_tensor_mix", 0);
    ASSERT_TRUE(a);
    MetricPlot plot;
    plot.setAnalysis(a);
    const tree::ConstructTree& tree = *a->skeleton->tree;
    for (session::Metric metric : { session::Metric::Cosine, session::Metric::MaxAbsErr, session::Metric::MaxRelErr,
                                    session::Metric::OneThousandth, session::Metric::Index }) {
        plot.setMetric(metric);
        plot.setLogScale(false);
        std::size_t expected = 0;
        std::size_t positive = 0;
        for (tree::NodeId id : tree.executionOrder()) {
            const double v = session::metricValue(a->status->metrics[id.value], metric);
            expected += std::isfinite(v) ? 1 : 0;
            positive += std::isfinite(v) && v > 0 ? 1 : 0;
        }
        EXPECT_GT(expected, 0u) << session::metricName(metric);
        EXPECT_EQ(plot.points().size(), expected) << session::metricName(metric);
        EXPECT_TRUE(plot.message().isEmpty());
        for (const MetricPlot::Point& p : plot.points()) {
            EXPECT_EQ(p.status, a->status->own[p.node]);
            EXPECT_EQ(p.x, tree.node(tree::NodeId { p.node }).executionIndex);
        }
        // On a log scale only positive values can be drawn.
        plot.setLogScale(true);
        EXPECT_EQ(plot.points().size(), positive) << session::metricName(metric);
    }
    // Each status graph holds exactly its points.
    plot.setMetric(session::Metric::Cosine);
    std::size_t inGraphs = 0;
    for (int g = 1; g <= 6; ++g)
        inGraphs += static_cast<std::size_t>(plot.plot()->graph(g)->dataCount());
    EXPECT_EQ(inGraphs, plot.points().size());
}

TEST(MetricPlot, MarksTheFirstFailureAtGelu)
{
    auto a = analysis("modelA_tensor_mix", 0);
    ASSERT_TRUE(a);
    ASSERT_TRUE(a->firstFailure.found);
    ASSERT_EQ(a->firstFailure.key, kGelu);
    const auto gelu = a->skeleton->tree->find(kGelu);
    ASSERT_TRUE(gelu);
    MetricPlot plot;
    plot.setAnalysis(a);
    ASSERT_TRUE(plot.firstFailureX().has_value());
    EXPECT_EQ(*plot.firstFailureX(), a->skeleton->tree->node(*gelu).executionIndex);
    // The marker stays when the metric changes, and in modes without the metric.
    plot.setMetric(session::Metric::MaxAbsErr);
    EXPECT_EQ(*plot.firstFailureX(), a->skeleton->tree->node(*gelu).executionIndex);
    // gelu's own point is an error.
    const auto it = std::find_if(plot.points().begin(), plot.points().end(),
                                 [&](const MetricPlot::Point& p) { return p.node == gelu->value; });
    ASSERT_NE(it, plot.points().end());
    EXPECT_EQ(it->status, session::Status::Error);
    EXPECT_NEAR(it->y, 1.163048326969, 1e-9);
}

TEST(MetricPlot, ClickEmitsTheNearestNode)
{
    auto a = analysis("modelA_tensor_mix", 0);
    ASSERT_TRUE(a);
    const auto gelu = a->skeleton->tree->find(kGelu);
    ASSERT_TRUE(gelu);
    MetricPlot plot;
    plot.resize(900, 480);
    plot.setAnalysis(a);
    plot.setMetric(session::Metric::Cosine);
    plot.show();
    ASSERT_TRUE(QTest::qWaitForWindowExposed(&plot));
    plot.plot()->replot();

    QSignalSpy spy(&plot, &MetricPlot::nodeClicked);
    const auto it = std::find_if(plot.points().begin(), plot.points().end(),
                                 [&](const MetricPlot::Point& p) { return p.node == gelu->value; });
    ASSERT_NE(it, plot.points().end());
    const QPoint at(static_cast<int>(std::lround(plot.plot()->xAxis->coordToPixel(it->x))),
                    static_cast<int>(std::lround(plot.plot()->yAxis->coordToPixel(it->y))));
    // A click a pixel off still picks gelu: it is the nearest point.
    QTest::mouseClick(plot.plot(), Qt::LeftButton, {}, at + QPoint(1, 1));
    ASSERT_EQ(spy.count(), 1);
    EXPECT_EQ(spy.front().front().value<quint32>(), gelu->value);
    EXPECT_EQ(plot.selectedNode(), gelu->value);
    const QCPGraph* selection = plot.plot()->graph(plot.plot()->graphCount() - 1);
    ASSERT_EQ(selection->dataCount(), 1);
    EXPECT_EQ(selection->data()->begin()->key, it->x);

    // A drag is not a click.
    QTest::mousePress(plot.plot(), Qt::LeftButton, {}, at);
    QTest::mouseMove(plot.plot(), at + QPoint(60, 0));
    QTest::mouseRelease(plot.plot(), Qt::LeftButton, {}, at + QPoint(60, 0));
    EXPECT_EQ(spy.count(), 1);
    // Far from every point (in the title row): nothing.
    QTest::mouseClick(plot.plot(), Qt::LeftButton, {}, QPoint(3, 3));
    EXPECT_EQ(spy.count(), 1);

    // setSelectedNode highlights programmatically; clearSelection removes it.
    const MetricPlot::Point& first = plot.points().front();
    plot.setSelectedNode(first.node);
    ASSERT_EQ(selection->dataCount(), 1);
    EXPECT_EQ(selection->data()->begin()->key, first.x);
    plot.clearSelection();
    EXPECT_EQ(selection->dataCount(), 0);
    saveScreenshot(plot, QStringLiteral("metricplot-cosine.png"));
    plot.setMetric(session::Metric::MaxAbsErr);
    plot.setSelectedNode(gelu->value);
    saveScreenshot(plot, QStringLiteral("metricplot-maxabserr-log.png"));
}

TEST(MetricPlot, ModesWithoutTheMetricShowAMessage)
{
    auto a = analysis("modelA_statistics_mix", 0);
    ASSERT_TRUE(a);
    MetricPlot plot;
    plot.resize(900, 480);
    plot.setAnalysis(a);
    plot.setMetric(session::Metric::Cosine);
    EXPECT_TRUE(plot.points().empty());
    EXPECT_TRUE(plot.message().contains(QStringLiteral("not available"))) << plot.message().toStdString();
    EXPECT_TRUE(plot.message().contains(QStringLiteral("statistics")));
    EXPECT_TRUE(plot.firstFailureX().has_value()); // the culprit is still marked
    saveScreenshot(plot, QStringLiteral("metricplot-statistics-cosine.png"));
    plot.setMetric(session::Metric::NormRelErr);
    EXPECT_FALSE(plot.points().empty());
    EXPECT_TRUE(plot.message().isEmpty());
    saveScreenshot(plot, QStringLiteral("metricplot-statistics-normrel.png"));

    MetricPlot empty;
    EXPECT_TRUE(empty.points().empty());
    EXPECT_FALSE(empty.message().isEmpty());
    EXPECT_FALSE(empty.firstFailureX().has_value());
}

TEST(MetricPlot, SavesAPngOfTheRequestedSize)
{
    auto a = analysis("modelA_tensor_mix", 0);
    ASSERT_TRUE(a);
    MetricPlot plot;
    plot.resize(700, 400);
    plot.setAnalysis(a);
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("metric.png"));
    ASSERT_TRUE(plot.savePng(path, 640, 360));
    EXPECT_TRUE(isPng(path));
    const QImage image(path);
    EXPECT_EQ(image.size(), QSize(640, 360));
    EXPECT_FALSE(plot.savePng(dir.filePath(QStringLiteral("no/such/folder/x.png")), 100, 100));
}

// ---------------------------------------------------------------------------------------------------
// NodeTrendPlot

TEST(NodeTrendPlot, StatisticsOfANodeAcrossSteps)
{
    auto plan = session::planSession(fixtureSide("modelA_tensor_mix", "npu"), fixtureSide("modelA_tensor_mix", "bench"));
    ASSERT_TRUE(plan.ok());
    NodeTrendPlot trend;
    trend.resize(800, 420);
    QSignalSpy finished(&trend, &NodeTrendPlot::loadingFinished);
    trend.setPlan(std::make_shared<const session::SessionPlan>(*plan));
    trend.setNode(QString::fromLatin1(kGelu));
    EXPECT_TRUE(trend.isLoading()); // the load runs on the thread pool
    ASSERT_TRUE(waitFor(finished, 1));
    EXPECT_FALSE(trend.isLoading());
    EXPECT_EQ(trend.leaf(), QStringLiteral("output.0"));
    EXPECT_TRUE(trend.leaves().contains(QStringLiteral("input.0")));
    ASSERT_EQ(trend.series().size(), 2u); // rank NPU, rank bench
    const NodeTrendPlot::Series& npu = trend.series()[0];
    const NodeTrendPlot::Series& bench = trend.series()[1];
    EXPECT_FALSE(npu.bench);
    EXPECT_TRUE(bench.bench);
    ASSERT_EQ(npu.steps, (QVector<double> { 0, 1 }));
    ASSERT_EQ(bench.steps, (QVector<double> { 0, 1 }));
    // msprobe's compare CSV, row Functional.gelu.0.forward.output.0: NPU max / bench max of step 0 and 1.
    EXPECT_DOUBLE_EQ(npu.values[0], 2.118187427520752);
    EXPECT_DOUBLE_EQ(bench.values[0], 1.515306949615479);
    EXPECT_DOUBLE_EQ(npu.values[1], 2.053556442260742);
    EXPECT_DOUBLE_EQ(bench.values[1], 1.56762170791626);
    EXPECT_EQ(trend.plot()->graphCount(), 2);

    trend.setStatistic(NodeTrendPlot::Statistic::Norm);
    EXPECT_DOUBLE_EQ(trend.series()[0].values[0], 21.58971977233887);
    EXPECT_DOUBLE_EQ(trend.series()[1].values[0], 18.81781578063965);
    trend.setStatistic(NodeTrendPlot::Statistic::Max);
    saveScreenshot(trend, QStringLiteral("nodetrend-gelu-max.png"));

    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("trend.png"));
    ASSERT_TRUE(trend.savePng(path, 500, 300));
    EXPECT_TRUE(isPng(path));
    EXPECT_EQ(QImage(path).size(), QSize(500, 300));

    // Switching the leaf needs no reload.
    trend.setLeaf(QStringLiteral("input.0"));
    EXPECT_EQ(finished.count(), 1);
    ASSERT_EQ(trend.series().size(), 2u);
    EXPECT_DOUBLE_EQ(trend.series()[0].values[0], 1.602659702301025); // gelu's input max, identical on both sides
    EXPECT_DOUBLE_EQ(trend.series()[1].values[0], 1.602659702301025);
}

TEST(NodeTrendPlot, ANewNodeOvertakesTheRunningLoad)
{
    auto plan = session::planSession(fixtureSide("modelA_statistics_mix", "npu"),
                                     fixtureSide("modelA_statistics_mix", "bench"));
    ASSERT_TRUE(plan.ok());
    NodeTrendPlot trend;
    QSignalSpy finished(&trend, &NodeTrendPlot::loadingFinished);
    trend.setPlan(std::make_shared<const session::SessionPlan>(*plan));
    trend.setNode(QStringLiteral("Functional.conv2d.0.forward"));
    trend.setNode(QString::fromLatin1(kGelu)); // before the first load can finish
    ASSERT_TRUE(waitFor(finished, 1));
    QTest::qWait(200); // a stale result would arrive as a second signal
    EXPECT_EQ(finished.count(), 1);
    EXPECT_EQ(trend.nodeKey(), QString::fromLatin1(kGelu));
    ASSERT_EQ(trend.series().size(), 2u);
    EXPECT_DOUBLE_EQ(trend.series()[0].values[0], 2.118187427520752); // same run: same statistics as tensor mode

    trend.setNode(QStringLiteral("No.such.node.0.forward"));
    ASSERT_TRUE(waitFor(finished, 2));
    EXPECT_TRUE(trend.message().contains(QStringLiteral("none of the dumps"))) << trend.message().toStdString();

    // Cancel right away: the load ends (cancelled or already done) and nothing breaks.
    trend.setNode(QString::fromLatin1(kGelu));
    trend.cancel();
    ASSERT_TRUE(waitFor(finished, 3));
    EXPECT_FALSE(trend.isLoading());

    // A widget destroyed while loading leaves its worker to finish alone.
    {
        NodeTrendPlot gone;
        gone.setPlan(std::make_shared<const session::SessionPlan>(*plan));
        gone.setNode(QString::fromLatin1(kGelu));
    }
    QThreadPool::globalInstance()->waitForDone();
}

// Issue 25: the trend reads every dump through the load step; a damaged one is reported, not plotted as whole.
TEST(NodeTrendPlot, ADamagedDumpIsReportedThroughTheLoadStep)
{
    QTemporaryDir dir;
    const fs::path root = dir.path().toStdString();
    for (const char* side : { "npu", "bench" })
        fs::copy(fixtureSide("modelA_statistics_mix", side), root / side, fs::copy_options::recursive);
    // step1's bench dump cut short: gelu (early in the file) is still read, later entries are lost.
    const fs::path cut = root / "bench/step1/rank/dump.json";
    std::string text;
    {
        std::ifstream in(cut, std::ios::binary);
        text.assign(std::istreambuf_iterator<char>(in), {});
    }
    std::ofstream(cut, std::ios::binary | std::ios::trunc) << text.substr(0, text.size() / 2);
    auto plan = session::planSession(root / "npu", root / "bench");
    ASSERT_TRUE(plan.ok()) << plan.error().format();
    NodeTrendPlot trend;
    int reported = 0;
    QObject::connect(&trend, &NodeTrendPlot::loadProblems, &trend, [&](const Diagnostics& problems) {
        reported += static_cast<int>(problems.size());
    });
    QSignalSpy finished(&trend, &NodeTrendPlot::loadingFinished);
    trend.setPlan(std::make_shared<const session::SessionPlan>(*plan));
    trend.setNode(QString::fromLatin1(kGelu));
    ASSERT_TRUE(waitFor(finished, 1));
    const Diagnostics& problems = trend.problems();
    ASSERT_TRUE(std::any_of(problems.begin(), problems.end(), [&](const Diagnostic& d) {
        return d.severity == Severity::Error && d.id == "dump.truncated" && d.location.file == cut.string();
    })) << (problems.empty() ? std::string("no problems") : problems.front().format());
    EXPECT_GT(reported, 0) << "the main window's banner and Diagnostics tab get them";
    // The clean dumps are plotted as before.
    ASSERT_EQ(trend.series().size(), 2u);
    EXPECT_DOUBLE_EQ(trend.series()[0].values[0], 2.118187427520752);
}

// ---------------------------------------------------------------------------------------------------
// TensorInspector

TEST(TensorInspector, GeluOutputAgreesWithCoreAndTheCompareTable)
{
    auto a = analysis("modelA_tensor_mix", 0);
    ASSERT_TRUE(a);
    const std::size_t row = rowOf(*a->table, kGeluOut);
    TensorInspector inspector;
    inspector.resize(1200, 760);
    QSignalSpy loaded(&inspector, &TensorInspector::loaded);
    QSignalSpy slice(&inspector, &TensorInspector::sliceShown);
    inspector.showRow(a, row);
    EXPECT_EQ(inspector.state(), TensorInspector::State::Loading);
    ASSERT_TRUE(waitFor(loaded, 1));
    ASSERT_EQ(inspector.state(), TensorInspector::State::Ready) << inspector.messageText().toStdString();
    EXPECT_TRUE(inspector.messageText().isEmpty()) << inspector.messageText().toStdString();

    // Max |Δ| equals the compare table's MaxAbsErr (and msprobe's 1.163048326969).
    const auto summary = inspector.summary();
    ASSERT_TRUE(summary.has_value());
    const int maxAbsColumn = a->table->column("MaxAbsErr");
    const double tableMaxAbs = a->table->rows[row][static_cast<std::size_t>(maxAbsColumn)].asDouble();
    EXPECT_NEAR(summary->maxAbs, tableMaxAbs, 1e-6);
    EXPECT_NEAR(summary->maxAbs, 1.163048326969, 1e-6);
    ASSERT_TRUE(inspector.files().tableMaxAbsErr.has_value());
    EXPECT_EQ(*inspector.files().tableMaxAbsErr, tableMaxAbs);

    // The worst elements are core's, computed here from independently read tensors.
    const tensor::Tensor npu = loadFixtureTensor("npu", kGeluOut);
    const tensor::Tensor bench = loadFixtureTensor("bench", kGeluOut);
    auto expected = tensor::worstElements(npu, bench, 20);
    ASSERT_TRUE(expected.ok());
    const std::vector<tensor::WorstElement> shown = inspector.worstElements();
    ASSERT_EQ(shown.size(), 20u);
    for (std::size_t i = 0; i < shown.size(); ++i) {
        EXPECT_EQ(shown[i].flatIndex, (*expected)[i].flatIndex) << i;
        EXPECT_EQ(shown[i].index, (*expected)[i].index) << i;
        EXPECT_EQ(shown[i].absDiff, (*expected)[i].absDiff) << i;
    }
    QTableWidget* table = inspector.worstTable();
    ASSERT_EQ(table->rowCount(), 20);
    EXPECT_EQ(table->item(0, 1)->text(), indexText((*expected)[0].index));
    EXPECT_EQ(table->item(0, 4)->text(), QString::number((*expected)[0].absDiff, 'g', 7));
    inspector.setTopK(5);
    EXPECT_EQ(table->rowCount(), 5);
    inspector.setWorstBy(tensor::ElementKind::RelDiff);
    auto byRel = tensor::worstElements(npu, bench, 5, tensor::ElementKind::RelDiff);
    ASSERT_TRUE(byRel.ok());
    EXPECT_EQ(inspector.worstElements().front().flatIndex, byRel->front().flatIndex);
    inspector.setWorstBy(tensor::ElementKind::AbsDiff);
    inspector.setTopK(20);

    // The first heatmap is |Δ| on the slice through the worst element, with the same maximum.
    ASSERT_TRUE(waitFor(slice, 1));
    EXPECT_EQ(inspector.view(), tensor::ElementKind::AbsDiff);
    EXPECT_EQ(inspector.slice().fixed[0], (*expected)[0].index[0]);
    ASSERT_TRUE(inspector.sliceSummary().has_value());
    EXPECT_EQ(inspector.sliceSummary()->maxAbs, summary->maxAbs);
    EXPECT_TRUE(inspector.summaryText().contains(QStringLiteral("1.163048"))) << inspector.summaryText().toStdString();
    saveScreenshot(inspector, QStringLiteral("tensorinspector-gelu-absdiff.png"));

    QTemporaryDir dir;
    ASSERT_TRUE(inspector.saveHeatmapPng(dir.filePath(QStringLiteral("h.png")), 400, 300));
    EXPECT_EQ(QImage(dir.filePath(QStringLiteral("h.png"))).size(), QSize(400, 300));
    ASSERT_TRUE(inspector.saveHistogramPng(dir.filePath(QStringLiteral("g.png")), 300, 200));
    EXPECT_EQ(QImage(dir.filePath(QStringLiteral("g.png"))).size(), QSize(300, 200));
}

TEST(TensorInspector, HeatmapCellsAreTheSliceValues)
{
    auto a = analysis("modelA_tensor_mix", 0);
    ASSERT_TRUE(a);
    TensorInspector inspector;
    inspector.resize(1200, 760);
    QSignalSpy loaded(&inspector, &TensorInspector::loaded);
    QSignalSpy slice(&inspector, &TensorInspector::sliceShown);
    inspector.showRow(a, rowOf(*a->table, kGeluOut));
    ASSERT_TRUE(waitFor(loaded, 1));
    ASSERT_TRUE(waitForSlice(inspector, slice, 0));

    const tensor::Tensor npu = loadFixtureTensor("npu", kGeluOut);
    const tensor::Tensor bench = loadFixtureTensor("bench", kGeluOut);
    const int before = slice.count();
    inspector.setView(tensor::ElementKind::Npu);
    inspector.setSlice(tensor::SliceSpec { 0, 2, { 0, 5, 0 } }); // rows along dim 0, columns along dim 2, dim 1 at 5
    // Requests made while a slice runs collapse into the newest one; wait until that is drawn.
    ASSERT_TRUE(waitForSlice(inspector, slice, before));
    auto* map = qobject_cast<QCPColorMap*>(inspector.heatmapPlot()->plottable(0));
    ASSERT_TRUE(map);
    ASSERT_EQ(map->data()->keySize(), 32);
    ASSERT_EQ(map->data()->valueSize(), 4);
    for (int r = 0; r < 4; ++r)
        for (int c = 0; c < 32; c += 7) {
            const std::vector<std::int64_t> index { r, 5, c };
            EXPECT_DOUBLE_EQ(map->data()->cell(c, r), npu.valueAt(*tensor::ravelIndex(npu.shape, index)));
        }
    saveScreenshot(inspector, QStringLiteral("tensorinspector-gelu-npu.png"));

    const int beforeRel = slice.count();
    inspector.setView(tensor::ElementKind::RelDiff);
    ASSERT_TRUE(waitForSlice(inspector, slice, beforeRel));
    const std::vector<std::int64_t> index { 2, 5, 9 };
    const auto flat = *tensor::ravelIndex(npu.shape, index);
    const double rel = tensor::relativeDifference(npu.valueAt(flat), bench.valueAt(flat));
    const QCPRange range = map->dataRange();
    EXPECT_DOUBLE_EQ(map->data()->cell(9, 2), std::clamp(rel, range.lower, range.upper));
    saveScreenshot(inspector, QStringLiteral("tensorinspector-gelu-reldiff.png"));

    // A worst element chosen in the table moves the slice to it.
    inspector.setView(tensor::ElementKind::AbsDiff);
    const auto worst = inspector.worstElements();
    ASSERT_GE(worst.size(), 3u);
    inspector.showElement(worst[2].index);
    EXPECT_EQ(inspector.slice().fixed[1], worst[2].index[1]);
}

TEST(TensorInspector, StatisticsAndMd5RowsHaveNoTensors)
{
    for (const char* fixture : { "modelA_statistics_mix", "modelA_md5_mix" }) {
        auto a = analysis(fixture, 0);
        ASSERT_TRUE(a);
        TensorInspector inspector;
        inspector.resize(900, 600);
        inspector.showRow(a, rowOf(*a->table, kGeluOut));
        EXPECT_EQ(inspector.state(), TensorInspector::State::Message);
        EXPECT_TRUE(inspector.messageText().contains(QStringLiteral("no tensors"))) << inspector.messageText().toStdString();
        EXPECT_FALSE(inspector.summary().has_value());
        if (std::string(fixture) == "modelA_statistics_mix")
            saveScreenshot(inspector, QStringLiteral("tensorinspector-statistics.png"));
    }
}

TEST(TensorInspector, UnmatchedAndScalarRows)
{
    auto a = analysis("modelA_tensor_mix", 0);
    ASSERT_TRUE(a);
    TensorInspector inspector;
    inspector.resize(1000, 700);
    QSignalSpy loaded(&inspector, &TensorInspector::loaded);
    QSignalSpy slice(&inspector, &TensorInspector::sliceShown);
    inspector.showRow(a, rowOf(*a->table, "Tensor.reshape.0.forward.output.0"));
    ASSERT_TRUE(waitFor(loaded, 1));
    ASSERT_TRUE(waitForSlice(inspector, slice, 0));
    saveScreenshot(inspector, QStringLiteral("tensorinspector-npu-only.png"));
    EXPECT_EQ(inspector.state(), TensorInspector::State::Ready);
    EXPECT_TRUE(inspector.messageText().contains(QStringLiteral("No bench counterpart"))) << inspector.messageText().toStdString();
    EXPECT_EQ(inspector.view(), tensor::ElementKind::Npu);
    EXPECT_FALSE(inspector.summary().has_value());
    EXPECT_TRUE(inspector.worstElements().empty());
    inspector.setView(tensor::ElementKind::AbsDiff); // not available: ignored
    EXPECT_EQ(inspector.view(), tensor::ElementKind::Npu);

    inspector.showRow(a, rowOf(*a->table, "Tensor.reshape.0.forward.input.1")); // an int argument
    EXPECT_EQ(inspector.state(), TensorInspector::State::Message);
    EXPECT_TRUE(inspector.messageText().contains(QStringLiteral("not a tensor"))) << inspector.messageText().toStdString();

    inspector.showRow(a, a->table->rows.size() + 5);
    EXPECT_EQ(inspector.state(), TensorInspector::State::Message);
    inspector.showRow(nullptr, 0);
    EXPECT_EQ(inspector.state(), TensorInspector::State::Empty);
}

TEST(TensorInspector, MissingAndCorruptFilesAreNamed)
{
    // A copy of step 0 where the NPU gelu output is gone and the bench gelu input is garbage.
    QTemporaryDir dir;
    ASSERT_TRUE(dir.isValid());
    const fs::path root = dir.path().toStdString();
    copyTensorStep0(root);
    fs::remove(root / "npu/step0/rank/dump_tensor_data" / (std::string(kGeluOut) + ".pt"));
    std::ofstream(root / "bench/step0/rank/dump_tensor_data/Functional.gelu.0.forward.input.0.pt", std::ios::trunc)
        << "this is not a zip archive";
    auto a = analyseAt(root / "npu", root / "bench", 0);
    ASSERT_TRUE(a);

    TensorInspector inspector;
    inspector.resize(1000, 700);
    QSignalSpy loaded(&inspector, &TensorInspector::loaded);
    inspector.showRow(a, rowOf(*a->table, kGeluOut));
    ASSERT_TRUE(waitFor(loaded, 1));
    // The bench side still loads and is shown; the message names the missing NPU file.
    EXPECT_EQ(inspector.state(), TensorInspector::State::Ready);
    EXPECT_TRUE(inspector.messageText().contains(QString::fromLatin1(kGeluOut) + QStringLiteral(".pt")))
        << inspector.messageText().toStdString();
    EXPECT_TRUE(inspector.messageText().contains(QStringLiteral("Cannot read")));
    EXPECT_EQ(inspector.view(), tensor::ElementKind::Bench);
    QSignalSpy slice(&inspector, &TensorInspector::sliceShown);
    ASSERT_TRUE(waitForSlice(inspector, slice, 0));
    saveScreenshot(inspector, QStringLiteral("tensorinspector-missing-npu.png"));

    inspector.showRow(a, rowOf(*a->table, "Functional.gelu.0.forward.input.0"));
    ASSERT_TRUE(waitFor(loaded, 2));
    EXPECT_TRUE(inspector.messageText().contains(QStringLiteral("Functional.gelu.0.forward.input.0.pt")))
        << inspector.messageText().toStdString();
    EXPECT_EQ(inspector.view(), tensor::ElementKind::Npu);

    // Neither side readable: an error state, no crash.
    TensorRowFiles none;
    none.kind = TensorRowFiles::Kind::Tensors;
    none.npuName = "x";
    none.npuDir = root / "npu";
    none.npuDataName = "missing.pt";
    none.benchDir = root / "bench";
    none.benchDataName = "../escape.pt";
    inspector.showFiles(none);
    ASSERT_TRUE(waitFor(loaded, 3));
    EXPECT_EQ(inspector.state(), TensorInspector::State::Error);
    EXPECT_TRUE(inspector.messageText().contains(QStringLiteral("missing.pt")));
    EXPECT_TRUE(inspector.messageText().contains(QStringLiteral("../escape.pt")));
    saveScreenshot(inspector, QStringLiteral("tensorinspector-error.png"));
}

// Issue 33: the inspector reads through the dump's tensor resolver, as the compare does. A NPU tensor folder that is a
// link to the bench's (which the compare refuses) is not shown as the NPU's tensors.
TEST(TensorInspector, ATensorFolderLinkedOutOfTheDumpIsRefusedAsTheCompareRefusesIt)
{
    PROBESCOPE_REQUIRE_FIXTURE(fixtureSide("modelA_tensor_mix", "npu"));
    QTemporaryDir dir;
    ASSERT_TRUE(dir.isValid());
    const fs::path root = dir.path().toStdString();
    copyTensorStep0(root);
    auto a = analyseAt(root / "npu", root / "bench", 0);
    ASSERT_TRUE(a);
    const fs::path npuTensors = root / "npu/step0/rank/dump_tensor_data";
    fs::rename(npuTensors, root / "npu/step0/rank/aside"); // same folder: no write to the moved folder itself
    fs::create_directory_symlink(root / "bench/step0/rank/dump_tensor_data", npuTensors);

    TensorInspector inspector;
    inspector.resize(1000, 700);
    QSignalSpy loaded(&inspector, &TensorInspector::loaded);
    inspector.showRow(a, rowOf(*a->table, kGeluOut));
    ASSERT_TRUE(waitFor(loaded, 1));
    EXPECT_TRUE(inspector.messageText().contains(QStringLiteral("tensor.path-escape")))
        << inspector.messageText().toStdString();
    EXPECT_EQ(inspector.view(), tensor::ElementKind::Bench) << "only the bench's own tensor is shown";
}

TEST(TensorInspector, ANewRowOvertakesTheRunningLoad)
{
    auto a = analysis("modelA_tensor_mix", 0);
    ASSERT_TRUE(a);
    TensorInspector inspector;
    QSignalSpy loaded(&inspector, &TensorInspector::loaded);
    inspector.showRow(a, rowOf(*a->table, "Functional.gelu.0.forward.input.0"));
    inspector.showRow(a, rowOf(*a->table, kGeluOut));
    ASSERT_TRUE(waitFor(loaded, 1));
    QTest::qWait(200);
    EXPECT_EQ(loaded.count(), 1);
    EXPECT_EQ(inspector.files().npuName, kGeluOut);
    ASSERT_TRUE(inspector.summary().has_value());
    EXPECT_GT(inspector.summary()->maxAbs, 1.0);
    {
        TensorInspector gone;
        gone.showRow(a, rowOf(*a->table, kGeluOut));
    }
    QThreadPool::globalInstance()->waitForDone();

    // Identical tensors: no difference anywhere.
    inspector.resize(1000, 640);
    QSignalSpy slice(&inspector, &TensorInspector::sliceShown);
    inspector.showRow(a, rowOf(*a->table, "Functional.gelu.0.forward.input.0"));
    ASSERT_TRUE(waitFor(loaded, 2));
    ASSERT_TRUE(waitForSlice(inspector, slice, 0));
    ASSERT_TRUE(inspector.summary().has_value());
    EXPECT_EQ(inspector.summary()->maxAbs, 0.0);
    EXPECT_EQ(inspector.summary()->overOneThousandth, 0);
    EXPECT_TRUE(inspector.worstElements().empty()); // nothing differs, so nothing is "worst"
    EXPECT_EQ(inspector.worstTable()->rowCount(), 0);
    saveScreenshot(inspector, QStringLiteral("tensorinspector-identical.png"));
}
