// SPDX-License-Identifier: Apache-2.0
#include "ui/inspect/nodetrendplot.h"

#include "ui/inspect/plotstyle.h"
#include "ui/jobs/jobprogress.h"

#include "core/compare/table/flatten.h"
#include "core/dump/dumpfile.h"
#include "core/dump/loadreport.h"
#include "core/dump/rankdump.h"

#include <QComboBox>
#include <QFutureWatcher>
#include <QHBoxLayout>
#include <QLabel>
#include <QTimer>
#include <QToolButton>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include <qcustomplot.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <filesystem>
#include <limits>
#include <list>
#include <map>
#include <mutex>
#include <system_error>
#include <tuple>

namespace probescope::ui {

namespace trend {

/**
 * Dump files read for trends, shared with the workers (which may outlive the widget). Bounded by the
 * size of the files read, least recently used first out: a session of many large ranks must not keep
 * every dump.json in memory.
 */
class DumpCache
{
public:
    static constexpr std::uint64_t kLimitBytes = std::uint64_t { 1 } << 30;

    struct Loaded
    {
        std::shared_ptr<const dump::DumpFile> dump;
        Diagnostics problems; ///< the load step's errors and warnings (empty for a clean dump)
    };

    Result<Loaded> get(const dump::RankLocation& location)
    {
        const std::filesystem::path& path = location.dumpFile;
        {
            std::lock_guard lock(m_mutex);
            for (auto it = m_entries.begin(); it != m_entries.end(); ++it) {
                if (it->path == path) {
                    m_entries.splice(m_entries.begin(), m_entries, it);
                    return m_entries.front().loaded;
                }
            }
        }
        // Read outside the lock: two workers reading different files must not wait for each other.
        // The load step every viewer shares (dump::loadRank + dump::loadReport, docs/reliability.md §1): a dump cut
        // short, mistyped or with invalid UTF-8 is read as far as it goes and its problems are reported, never
        // plotted as if it were whole. Only the dump file is needed here, not construct.json or stack.json.
        dump::ReadOptions options;
        options.constructJson = false;
        options.stackJson = false;
        auto rank = dump::loadRank(location, options);
        if (!rank)
            return rank.error();
        const dump::LoadReport report = dump::loadReport(**rank);
        Loaded loaded { (*rank)->dump, {} };
        for (const Diagnostic& d : report.diagnostics) {
            if (d.severity != Severity::Info)
                loaded.problems.push_back(d);
        }
        std::error_code ec;
        const std::uint64_t bytes = std::filesystem::file_size(path, ec);
        std::lock_guard lock(m_mutex);
        m_entries.push_front({ path, loaded, ec ? 0 : bytes });
        m_bytes += m_entries.front().bytes;
        while (m_bytes > kLimitBytes && m_entries.size() > 1) {
            m_bytes -= m_entries.back().bytes;
            m_entries.pop_back();
        }
        return loaded;
    }

private:
    struct Item
    {
        std::filesystem::path path;
        Loaded loaded;
        std::uint64_t bytes = 0;
    };
    std::mutex m_mutex;
    std::list<Item> m_entries;
    std::uint64_t m_bytes = 0;
};

namespace {

double statNumber(const compare::FlatCell& cell)
{
    return cell.isNumber() ? cell.asDouble() : std::numeric_limits<double>::quiet_NaN();
}

Sample sampleOf(const dump::RankLocation& location, std::int64_t step, bool bench, const std::string& key,
                DumpCache& cache)
{
    Sample s;
    s.step = step;
    s.bench = bench;
    s.rankOrder = location.rank.value_or(-1);
    s.rankLabel = QString::fromStdString(location.rankLabel.empty() ? std::string("rank") : location.rankLabel);
    auto loaded = cache.get(location);
    if (!loaded) {
        s.error = QString::fromStdString(loaded.error().format());
        s.problems.push_back(loaded.error());
        return s;
    }
    s.problems = loaded->problems;
    const dump::DumpFile& d = *loaded->dump;
    const dump::Entry* entry = d.find(key);
    if (!entry)
        return s;
    s.present = true;
    auto op = compare::flattenEntry(*entry, static_cast<std::uint32_t>(entry - d.entries.data()),
                                    compare::CompareMode::Summary);
    if (!op) {
        s.error = QString::fromStdString(op.error().format());
        return s;
    }
    const std::string prefix = key + ".";
    for (const compare::FlatRow& row : op->rows) {
        const std::string name = row.nameText();
        std::string leaf(name.starts_with(prefix) ? name.substr(prefix.size()) : name);
        s.leaves.push_back({ std::move(leaf),
                             { statNumber(row.stat(0)), statNumber(row.stat(1)), statNumber(row.stat(2)),
                               statNumber(row.stat(3)) } });
    }
    return s;
}

Data collect(const std::shared_ptr<const session::SessionPlan>& plan, const std::string& key,
             const std::shared_ptr<DumpCache>& cache, const std::shared_ptr<JobProgress>& state)
{
    Data data;
    std::uint64_t done = 0;
    for (std::size_t i = 0; i < plan->pairs.size(); ++i) {
        const session::RankPair& pair = plan->pairs[i];
        for (const bool bench : { false, true }) {
            if (state->isCancelled()) {
                data.cancelled = true;
                return data;
            }
            data.samples.push_back(sampleOf(bench ? pair.bench : pair.npu, pair.step, bench, key, *cache));
            for (const auto& [leaf, stats] : data.samples.back().leaves) {
                if (std::find(data.leaves.begin(), data.leaves.end(), leaf) == data.leaves.end())
                    data.leaves.push_back(leaf);
            }
            state->advance(++done);
        }
    }
    return data;
}

} // namespace

} // namespace trend

namespace {

/// Series named in the legend (8 ranks, NPU and bench).
constexpr std::size_t kLegendEntries = 16;

} // namespace

NodeTrendPlot::NodeTrendPlot(QWidget* parent)
    : QWidget(parent)
    , m_cache(std::make_shared<trend::DumpCache>())
{
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    auto* bar = new QHBoxLayout;
    m_leafLabel = new QLabel(this);
    bar->addWidget(m_leafLabel);
    m_leafBox = new QComboBox(this);
    m_leafBox->setMinimumContentsLength(10);
    m_leafBox->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    bar->addWidget(m_leafBox);
    m_statLabel = new QLabel(this);
    bar->addWidget(m_statLabel);
    m_statBox = new QComboBox(this);
    for (Statistic s : { Statistic::Max, Statistic::Min, Statistic::Mean, Statistic::Norm })
        m_statBox->addItem(statisticName(s), static_cast<int>(s));
    bar->addWidget(m_statBox);
    m_status = new QLabel(this);
    bar->addWidget(m_status, 1);
    m_cancel = new QToolButton(this);
    m_cancel->setVisible(false);
    bar->addWidget(m_cancel);
    auto* save = new QToolButton(this);
    m_save = save;
    save->setObjectName("savePng");
    bar->addWidget(save);
    layout->addLayout(bar);

    m_plot = plotstyle::makePlot(this, QString(), &m_title);
    connect(save, &QToolButton::clicked, this,
            [this] { plotstyle::savePngInteractively(m_plot, this, QStringLiteral("node-trend.png")); });
    QSharedPointer<QCPAxisTickerFixed> ticker(new QCPAxisTickerFixed);
    ticker->setTickStep(1.0);
    ticker->setScaleStrategy(QCPAxisTickerFixed::ssMultiples);
    m_plot->xAxis->setTicker(ticker);
    m_plot->legend->setVisible(true);
    // Legend entries are added by hand, a few only: QCustomPlot's legend grid costs O(entries) per entry
    // added, which at 1,024 ranks (2,048 series) held the GUI thread for 0.2-0.4 s (docs/scale-out.md).
    m_plot->setAutoAddPlottableToLegend(false);
    m_plot->axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignRight | Qt::AlignTop);
    m_messageItem = plotstyle::addCentredMessage(m_plot);
    layout->addWidget(m_plot, 1);

    m_progressTimer = new QTimer(this);
    m_progressTimer->setInterval(100);
    connect(m_progressTimer, &QTimer::timeout, this, &NodeTrendPlot::updateProgress);
    connect(m_cancel, &QToolButton::clicked, this, &NodeTrendPlot::cancel);
    connect(m_leafBox, &QComboBox::activated, this, [this](int index) { setLeaf(m_leafBox->itemText(index)); });
    connect(m_statBox, &QComboBox::activated, this,
            [this](int index) { setStatistic(static_cast<Statistic>(m_statBox->itemData(index).toInt())); });
    retranslate();
}

void NodeTrendPlot::retranslate()
{
    m_leafLabel->setText(tr("Leaf"));
    m_statLabel->setText(tr("Statistic"));
    m_cancel->setText(tr("Cancel"));
    m_save->setText(tr("Save PNG…"));
    for (int i = 0; i < m_statBox->count(); ++i)
        m_statBox->setItemText(i, statisticName(static_cast<Statistic>(m_statBox->itemData(i).toInt())));
    m_plot->xAxis->setLabel(tr("step"));
    // The status beside the bar: the running load says itself again at its next tick; a finished one here.
    if (m_watcher) {
        updateProgress();
    } else if (!m_status->text().isEmpty()) {
        int errors = 0;
        for (const trend::Sample& sample : m_data.samples)
            errors += sample.error.isEmpty() ? 0 : 1;
        m_status->setText(m_data.cancelled ? tr("Cancelled.") : errors > 0 ? tr("%1 dump files could not be read.").arg(errors) : QString());
    }
    rebuild();
}

void NodeTrendPlot::changeEvent(QEvent* event)
{
    if (event->type() == QEvent::LanguageChange && m_plot)
        retranslate();
    QWidget::changeEvent(event);
}

NodeTrendPlot::~NodeTrendPlot()
{
    // The worker owns shared copies of everything it touches, so it may finish after the widget is gone.
    if (m_state)
        m_state->cancel();
}

QString NodeTrendPlot::statisticName(Statistic statistic)
{
    switch (statistic) {
    case Statistic::Max:
        return tr("Max", "statistic");
    case Statistic::Min:
        return tr("Min", "statistic");
    case Statistic::Mean:
        return tr("Mean", "statistic");
    case Statistic::Norm:
        return tr("Norm", "statistic");
    }
    return QStringLiteral("?");
}

void NodeTrendPlot::setPlan(std::shared_ptr<const session::SessionPlan> plan)
{
    m_plan = std::move(plan);
    m_cache = std::make_shared<trend::DumpCache>(); // other inputs: the old files are of no use
    startLoad();
}

void NodeTrendPlot::setNode(const QString& nodeKey)
{
    m_key = nodeKey;
    startLoad();
}

void NodeTrendPlot::setLeaf(const QString& leaf)
{
    m_leaf = leaf;
    rebuild();
}

void NodeTrendPlot::setStatistic(Statistic statistic)
{
    m_statistic = statistic;
    const int index = m_statBox->findData(static_cast<int>(statistic));
    if (index >= 0)
        m_statBox->setCurrentIndex(index);
    rebuild();
}

QStringList NodeTrendPlot::leaves() const
{
    QStringList out;
    for (const std::string& l : m_data.leaves)
        out << QString::fromStdString(l);
    return out;
}

bool NodeTrendPlot::isLoading() const
{
    return m_watcher != nullptr;
}

void NodeTrendPlot::cancel()
{
    if (m_state)
        m_state->cancel();
}

void NodeTrendPlot::startLoad()
{
    if (m_state)
        m_state->cancel();
    if (m_watcher) {
        // The old load's result is of no interest any more; its worker stops at the next file.
        m_watcher->disconnect(this);
        m_watcher->deleteLater();
        m_watcher = nullptr;
    }
    m_data = {};
    m_problems.clear();
    m_state.reset();
    if (!m_plan || m_key.isEmpty()) {
        m_progressTimer->stop();
        m_cancel->setVisible(false);
        m_status->clear();
        rebuild();
        return;
    }
    // Progress is polled by m_progressTimer (never a queued signal per file), as every job's is.
    auto state = std::make_shared<JobProgress>();
    state->setRange(m_plan->pairs.size() * 2);
    m_state = state;
    m_watcher = new QFutureWatcher<trend::Data>(this);
    auto* watcher = m_watcher;
    connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher] {
        if (watcher != m_watcher)
            return;
        const trend::Data result = watcher->result();
        m_watcher = nullptr;
        watcher->deleteLater();
        onLoaded(result);
    });
    watcher->setFuture(QtConcurrent::run([plan = m_plan, key = m_key.toStdString(), cache = m_cache, state] {
        return trend::collect(plan, key, cache, state);
    }));
    m_cancel->setVisible(true);
    m_progressTimer->start();
    updateProgress();
    rebuild();
}

void NodeTrendPlot::updateProgress()
{
    if (!m_state || !m_watcher)
        return;
    m_status->setText(tr("Reading %1 of %2 dump files\u2026").arg(m_state->done()).arg(m_state->total()));
}

void NodeTrendPlot::onLoaded(const trend::Data& result)
{
    m_progressTimer->stop();
    m_cancel->setVisible(false);
    m_data = result;
    int errors = 0;
    int damaged = 0;
    m_problems.clear();
    for (const trend::Sample& s : m_data.samples) {
        errors += s.error.isEmpty() ? 0 : 1;
        damaged += s.error.isEmpty() && hasErrors(s.problems) ? 1 : 0;
        // A dump read for several samples reports its findings once.
        for (const Diagnostic& d : s.problems) {
            const bool seen = std::any_of(m_problems.begin(), m_problems.end(), [&](const Diagnostic& p) {
                return p.id == d.id && p.location.file == d.location.file && p.location.offset == d.location.offset
                    && p.message == d.message;
            });
            if (!seen)
                m_problems.push_back(d);
        }
    }
    if (m_data.cancelled)
        m_status->setText(tr("Cancelled."));
    else if (errors > 0)
        m_status->setText(tr("%1 dump files could not be read (see Diagnostics).").arg(errors));
    else if (damaged > 0)
        m_status->setText(tr("%1 dump files have errors; plotted as far as they could be read (see Diagnostics).")
                              .arg(damaged));
    else
        m_status->clear();

    // Keep the chosen leaf when the new node has it; otherwise output.0, the first output, or the first leaf.
    const QStringList all = leaves();
    if (!all.contains(m_leaf)) {
        if (all.contains(QStringLiteral("output.0")))
            m_leaf = QStringLiteral("output.0");
        else {
            const auto output = std::find_if(all.begin(), all.end(), [](const QString& l) { return l.startsWith("output"); });
            m_leaf = output != all.end() ? *output : (all.isEmpty() ? QStringLiteral("output.0") : all.front());
        }
    }
    rebuild();
    if (!m_data.cancelled)
        emit loadProblems(m_problems); // empty too: the findings of an earlier load are gone
    emit loadingFinished();
}

void NodeTrendPlot::rebuild()
{
    {
        const QSignalBlocker block(m_leafBox);
        m_leafBox->clear();
        m_leafBox->addItems(leaves());
        m_leafBox->setCurrentIndex(m_leafBox->findText(m_leaf));
    }
    m_plot->clearGraphs();
    m_series.clear();
    m_message.clear();
    const QString stat = statisticName(m_statistic);
    m_title->setText(m_key.isEmpty() ? tr("Statistics across steps and ranks")
                                     : tr("%1 of %2.%3 across steps and ranks").arg(stat, m_key, m_leaf));
    m_plot->yAxis->setLabel(stat);

    if (!m_plan)
        m_message = tr("No session opened.");
    else if (m_key.isEmpty())
        m_message = tr("Select a node to see its statistics across steps and ranks.");
    else if (m_watcher)
        m_message = tr("Loading\u2026");
    else if (m_data.cancelled)
        m_message = tr("Loading was cancelled.");

    // Series: per rank (in rank order; a rank is its number, or its folder name when it has none) NPU then bench.
    using RankKey = std::pair<std::int64_t, QString>;
    std::map<std::pair<RankKey, bool>, std::size_t> seriesOf;
    std::map<RankKey, int> colourOf;
    const std::size_t statIndex = static_cast<std::size_t>(m_statistic);
    const std::string leaf = m_leaf.toStdString();
    bool anyPresent = false;
    std::vector<const trend::Sample*> ordered;
    for (const trend::Sample& s : m_data.samples)
        ordered.push_back(&s);
    std::stable_sort(ordered.begin(), ordered.end(), [](const trend::Sample* a, const trend::Sample* b) {
        return std::tie(a->rankOrder, a->rankLabel, a->bench) < std::tie(b->rankOrder, b->rankLabel, b->bench);
    });
    double xLo = std::numeric_limits<double>::infinity();
    double xHi = -xLo;
    for (const trend::Sample* s : ordered) {
        anyPresent = anyPresent || s->present;
        const RankKey rank { s->rankOrder, s->rankLabel };
        const auto id = std::make_pair(rank, s->bench);
        auto it = seriesOf.find(id);
        if (it == seriesOf.end()) {
            Series series;
            // A bare "rank" folder (not distributed) names no rank: the sides alone ("rank NPU" read as a rank).
            if (s->rankLabel.isEmpty() || s->rankLabel == QLatin1String("rank"))
                series.name = s->bench ? tr("bench", "series of a dump without rank folders")
                                       : tr("NPU", "series of a dump without rank folders");
            else
                series.name = (s->bench ? tr("%1 bench", "rank") : tr("%1 NPU", "rank")).arg(s->rankLabel);
            series.bench = s->bench;
            it = seriesOf.emplace(id, m_series.size()).first;
            m_series.push_back(series);
            colourOf.emplace(rank, static_cast<int>(colourOf.size()));
        }
        const double x = static_cast<double>(std::max<std::int64_t>(s->step, 0));
        xLo = std::min(xLo, x);
        xHi = std::max(xHi, x);
        for (const auto& [name, stats] : s->leaves) {
            if (name == leaf && std::isfinite(stats[statIndex])) {
                m_series[it->second].steps.push_back(x);
                m_series[it->second].values.push_back(stats[statIndex]);
            }
        }
    }
    if (m_message.isEmpty() && !anyPresent)
        m_message = tr("%1 is in none of the dumps.").arg(m_key);

    double yLo = std::numeric_limits<double>::infinity();
    double yHi = -yLo;
    std::size_t plotted = 0;
    // In the order the series were made (rank order, NPU before bench), so the legend reads the same way.
    std::vector<std::pair<std::pair<RankKey, bool>, std::size_t>> byIndex(seriesOf.begin(), seriesOf.end());
    std::sort(byIndex.begin(), byIndex.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
    for (const auto& [id, index] : byIndex) {
        Series& series = m_series[index];
        if (series.values.isEmpty())
            continue;
        QCPGraph* g = m_plot->addGraph();
        g->setName(series.name);
        // The first ranks are named; a legend of hundreds of entries would cover the plot and name nothing readably.
        if (plotted < kLegendEntries)
            g->addToLegend();
        const QColor colour = plotstyle::seriesColor(colourOf[id.first]);
        QPen pen(colour, 1.8, series.bench ? Qt::DashLine : Qt::SolidLine);
        g->setPen(pen);
        g->setScatterStyle(series.bench ? QCPScatterStyle(QCPScatterStyle::ssSquare, QPen(colour, 1.5), Qt::white, 8)
                                        : QCPScatterStyle(QCPScatterStyle::ssDisc, colour, colour, 7));
        g->setData(series.steps, series.values);
        for (double v : series.values) {
            yLo = std::min(yLo, v);
            yHi = std::max(yHi, v);
        }
        ++plotted;
    }
    if (m_message.isEmpty() && plotted == 0)
        m_message = tr("%1 has no %2 value for %3.").arg(m_key, stat, m_leaf);

    if (std::isfinite(xLo))
        m_plot->xAxis->setRange(xLo - 0.5, xHi + 0.5);
    else
        m_plot->xAxis->setRange(-0.5, 1.5);
    if (plotted > 0) {
        double pad = (yHi - yLo) * 0.08;
        if (pad == 0)
            pad = std::max(std::fabs(yHi) * 0.05, 0.05);
        m_plot->yAxis->setRange(yLo - pad, yHi + pad);
    } else {
        m_plot->yAxis->setRange(0, 1);
    }
    m_plot->legend->setVisible(plotted > 0);
    m_messageItem->setText(m_message);
    m_messageItem->setVisible(!m_message.isEmpty());
    m_plot->replot();
}

bool NodeTrendPlot::savePng(const QString& path, int width, int height)
{
    return m_plot->savePng(path, width, height);
}

} // namespace probescope::ui
