// SPDX-License-Identifier: Apache-2.0
#include "ui/views/trendview.h"

#include "ui/inspect/plotstyle.h"
#include "ui/models/trendgridmodel.h"

#include <QComboBox>
#include <QEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QPushButton>
#include <QSplitter>
#include <QTableView>
#include <QTreeWidget>
#include <QVBoxLayout>

#include <qcustomplot.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace probescope::ui {

namespace {

QString toQ(const std::string& s)
{
    return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size()));
}

const char* statisticName(TrendView::Statistic s)
{
    switch (s) {
    case TrendView::Statistic::Norm: return "norm";
    case TrendView::Statistic::Max: return "max";
    case TrendView::Statistic::Min: return "min";
    case TrendView::Statistic::Mean: return "mean";
    }
    return "norm";
}

} // namespace

TrendView::TrendView(QWidget* parent)
    : QWidget(parent)
{
    setObjectName("trendView");
    m_model = new TrendGridModel(this);
    auto* layout = new QVBoxLayout(this);
    m_header = new QLabel(this);
    m_header->setWordWrap(true);
    layout->addWidget(m_header);
    auto* form = new QGridLayout;
    m_moduleLabel = new QLabel(this);
    m_targetLabel = new QLabel(this);
    m_metricLabel = new QLabel(this);
    m_statLabel = new QLabel(this);
    m_module = new QComboBox(this);
    m_module->setObjectName("trendModule");
    m_target = new QComboBox(this);
    m_target->setObjectName("trendTarget");
    m_metric = new QComboBox(this);
    m_metric->setObjectName("trendMetric");
    m_stat = new QComboBox(this);
    m_stat->setObjectName("trendStatistic");
    for (QComboBox* box : { m_module, m_target })
        box->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    m_moduleLabel->setBuddy(m_module);
    m_targetLabel->setBuddy(m_target);
    m_metricLabel->setBuddy(m_metric);
    m_statLabel->setBuddy(m_stat);
    form->addWidget(m_moduleLabel, 0, 0);
    form->addWidget(m_module, 0, 1, 1, 3);
    form->addWidget(m_targetLabel, 1, 0);
    form->addWidget(m_target, 1, 1, 1, 3);
    form->addWidget(m_metricLabel, 2, 0);
    form->addWidget(m_metric, 2, 1);
    form->addWidget(m_statLabel, 2, 2);
    form->addWidget(m_stat, 2, 3);
    form->setColumnStretch(1, 1);
    form->setColumnStretch(3, 1);
    layout->addLayout(form);
    auto* buttons = new QHBoxLayout;
    m_benchButton = new QPushButton(this);
    m_dumpButton = new QPushButton(this);
    m_stepButton = new QPushButton(this);
    buttons->addWidget(m_benchButton);
    buttons->addWidget(m_dumpButton);
    buttons->addWidget(m_stepButton);
    buttons->addStretch(1);
    layout->addLayout(buttons);

    auto* split = new QSplitter(Qt::Vertical, this);
    m_grid = new QTableView(split);
    m_grid->setObjectName("trendGrid");
    m_grid->setModel(m_model);
    m_grid->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_grid->setSelectionMode(QAbstractItemView::SingleSelection);
    m_grid->verticalHeader()->setDefaultSectionSize(m_grid->fontMetrics().height() + 6);
    // Uniform rows and fixed column widths: a 1,000-step grid lays out without measuring each cell.
    m_grid->verticalHeader()->setSectionResizeMode(QHeaderView::Fixed);
    m_grid->horizontalHeader()->setSectionResizeMode(QHeaderView::Interactive);
    m_grid->horizontalHeader()->setDefaultSectionSize(96);
    m_plot = plotstyle::makePlot(split, tr("step"), &m_plotTitle);
    m_plot->setObjectName("trendPlot");
    m_plot->setMinimumHeight(140);
    {
        // Steps are whole numbers: ticks on multiples of 1 (10, 100... on long runs), never at 0.5.
        QSharedPointer<QCPAxisTickerFixed> ticker(new QCPAxisTickerFixed);
        ticker->setTickStep(1.0);
        ticker->setScaleStrategy(QCPAxisTickerFixed::ssMultiples);
        m_plot->xAxis->setTicker(ticker);
    }
    auto* anomalyBox = new QWidget(split);
    auto* anomalyLayout = new QVBoxLayout(anomalyBox);
    anomalyLayout->setContentsMargins(0, 0, 0, 0);
    m_anomalyLabel = new QLabel(anomalyBox);
    m_anomalyList = new QTreeWidget(anomalyBox);
    m_anomalyList->setObjectName("trendAnomalies");
    m_anomalyList->setRootIsDecorated(false);
    m_anomalyList->setUniformRowHeights(true);
    m_anomalyList->setColumnCount(5);
    m_anomalyLabel->setBuddy(m_anomalyList);
    anomalyLayout->addWidget(m_anomalyLabel);
    anomalyLayout->addWidget(m_anomalyList);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 3);
    split->setStretchFactor(2, 2);
    split->setSizes({ 300, 260, 180 });
    layout->addWidget(split, 1);

    connect(m_module, &QComboBox::currentIndexChanged, this, [this] {
        if (!m_filling)
            fillTargets();
    });
    for (QComboBox* box : { m_target, m_metric, m_stat })
        connect(box, &QComboBox::currentIndexChanged, this, [this] {
            if (!m_filling)
                refresh();
        });
    connect(m_grid->selectionModel(), &QItemSelectionModel::currentChanged, this, [this](const QModelIndex& current) {
        if (current.isValid() && current.column() != m_plotColumn) {
            m_plotColumn = current.column();
            replot();
        }
    });
    connect(m_grid, &QTableView::doubleClicked, this, [this](const QModelIndex& index) {
        if (m_table && index.isValid())
            emit stepDumpRequested(m_table->steps[std::size_t(index.row())], m_table->ranks[std::size_t(index.column())]);
    });
    connect(m_stepButton, &QPushButton::clicked, this, [this] {
        if (const auto cell = selectedCell())
            emit stepDumpRequested(cell->first, cell->second);
    });
    connect(m_benchButton, &QPushButton::clicked, this, &TrendView::benchRequested);
    connect(m_dumpButton, &QPushButton::clicked, this, [this] {
        const QString dir = QFileDialog::getExistingDirectory(this, tr("The dump of this run"), m_dumpFolder);
        if (!dir.isEmpty())
            setDumpFolder(dir);
    });
    connect(m_anomalyList, &QTreeWidget::currentItemChanged, this, [this](QTreeWidgetItem* item) {
        if (item)
            showAnomaly(m_anomalyList->indexOfTopLevelItem(item));
    });
    connect(m_anomalyList, &QTreeWidget::itemActivated, this, [this](QTreeWidgetItem* item) {
        const int i = m_anomalyList->indexOfTopLevelItem(item);
        if (i >= 0 && showAnomaly(i))
            emit stepDumpRequested(m_anomalies[std::size_t(i)].step, m_anomalies[std::size_t(i)].rank);
    });
    retranslate();
}

TrendView::~TrendView() = default;

const graph::TrendTable* TrendView::table() const
{
    return m_table.get();
}

const graph::TrendTable* TrendView::benchTable() const
{
    return m_bench.get();
}

void TrendView::changeEvent(QEvent* event)
{
    if (event->type() == QEvent::LanguageChange)
        retranslate();
    QWidget::changeEvent(event);
}

void TrendView::retranslate()
{
    m_moduleLabel->setText(tr("M&odule:"));
    m_targetLabel->setText(tr("&Slot:"));
    m_metricLabel->setText(tr("M&etric:"));
    m_statLabel->setText(tr("S&tatistic:"));
    m_benchButton->setText(tr("Compare with a &bench run…"));
    m_benchButton->setToolTip(tr("Overlay another run's monitor folder or .trend.db (NPU run against bench run)"));
    m_dumpButton->setText(m_dumpFolder.isEmpty() ? tr("&Dump of this run…")
                                                 : tr("&Dump: %1").arg(QFileInfo(m_dumpFolder).fileName()));
    m_dumpButton->setToolTip(m_dumpFolder.isEmpty() ? tr("Choose the run's dump root, to go from a step to its dump")
                                                    : m_dumpFolder);
    m_stepButton->setText(tr("Open the step's d&ump"));
    m_stepButton->setToolTip(tr("Opens the selected cell's step and rank in the run's dump (also: double-click)"));
    m_anomalyLabel->setText(tr("&Anomalies (%n):", nullptr, static_cast<int>(m_anomalies.size())));
    m_anomalyList->setHeaderLabels({ tr("Step"), tr("Rank"), tr("Metric"), tr("Target"), tr("Message") });
    m_model->retranslate();
    if (!m_table) {
        m_header->setText(tr("No .trend.db is open."));
        return;
    }
    QString header = tr("<b>%1</b> — msprobe data2db: %n step(s)", nullptr, static_cast<int>(m_table->steps.size()))
                         .arg(QFileInfo(toQ(m_table->path)).fileName().toHtmlEscaped())
        + tr(" × %n rank(s)", nullptr, static_cast<int>(m_table->ranks.size()))
        + tr(" × %n module(s)", nullptr, static_cast<int>(m_table->modules.size()));
    if (m_bench)
        header += tr(" — against the bench run <b>%1</b>").arg(QFileInfo(toQ(m_bench->path)).fileName().toHtmlEscaped());
    m_header->setText(header);
    m_header->setToolTip(toQ(m_table->path));
    replot();
}

void TrendView::setTable(std::shared_ptr<const graph::TrendTable> table)
{
    m_table = std::move(table);
    m_bench.reset();
    m_anomalies.clear();
    m_anomalyList->clear();
    m_model->setTables(m_table);
    m_plotColumn = 0;
    m_filling = true;
    m_module->clear();
    m_metric->clear();
    m_stat->clear();
    if (m_table) {
        QStringList modules;
        for (const std::string& m : m_table->modules)
            modules << toQ(m);
        m_module->addItems(modules);
        for (const std::string& m : m_table->metrics)
            m_metric->addItem(toQ(m));
        // Whatever statistic columns the table has (msprobe's monitor dbs: min, max, norm, zeros, nans, mean...).
        for (const std::string& s : m_table->statistics)
            m_stat->addItem(toQ(s));
        if (const auto norm = m_table->statisticIndex("norm"))
            m_stat->setCurrentIndex(static_cast<int>(*norm));
    }
    m_filling = false;
    fillTargets();
    retranslate();
}

void TrendView::setBenchTable(std::shared_ptr<const graph::TrendTable> bench)
{
    m_bench = std::move(bench);
    m_model->setBench(m_bench);
    retranslate();
}

void TrendView::setAnomalies(std::vector<TrendAnomaly> anomalies)
{
    m_anomalies = std::move(anomalies);
    m_anomalyList->clear();
    QList<QTreeWidgetItem*> items;
    for (const TrendAnomaly& a : m_anomalies) {
        auto* item = new QTreeWidgetItem(QStringList { QString::number(a.step), QString::number(a.rank), toQ(a.metric),
                                                       toQ(a.target), toQ(a.message) });
        item->setToolTip(4, toQ(a.message));
        items << item;
    }
    m_anomalyList->addTopLevelItems(items);
    retranslate();
}

void TrendView::setDumpFolder(const QString& folder)
{
    m_dumpFolder = folder;
    retranslate();
}

bool TrendView::showAnomaly(int i)
{
    if (!m_table || i < 0 || std::size_t(i) >= m_anomalies.size())
        return false;
    const TrendAnomaly& a = m_anomalies[std::size_t(i)];
    const auto metric = std::find(m_table->metrics.begin(), m_table->metrics.end(), a.metric);
    if (metric == m_table->metrics.end())
        return false;
    for (std::size_t t = 0; t < m_table->targets.size(); ++t) {
        const graph::TrendTarget& target = m_table->targets[t];
        if (target.name != a.target || target.vppStage != a.vppStage || target.microStep != a.microStep)
            continue;
        const QString statistic = m_stat->currentText();
        if (!choose(static_cast<std::uint32_t>(t), static_cast<std::uint32_t>(metric - m_table->metrics.begin()), statistic))
            return false;
        if (m_anomalyList->currentItem() != m_anomalyList->topLevelItem(i)) {
            const QSignalBlocker quiet(m_anomalyList);
            m_anomalyList->setCurrentItem(m_anomalyList->topLevelItem(i));
        }
        return selectCell(a.step, a.rank);
    }
    return false;
}

void TrendView::fillTargets()
{
    m_filling = true;
    m_target->clear();
    if (m_table) {
        const std::string module = m_module->currentText().toStdString();
        for (std::size_t i = 0; i < m_table->targets.size(); ++i) {
            const graph::TrendTarget& t = m_table->targets[i];
            if (graph::trendModuleOf(t.name) != module)
                continue;
            QString label = toQ(t.name.substr(std::min(t.name.size(), module.size() + 1)));
            if (label.isEmpty())
                label = toQ(t.name);
            if (t.vppStage != 0)
                label += tr(" (VPP stage %1)").arg(t.vppStage);
            label += tr(" (micro step %1)").arg(t.microStep);
            m_target->addItem(label, static_cast<int>(i));
        }
    }
    m_filling = false;
    refresh();
}

bool TrendView::choose(std::uint32_t target, std::uint32_t metric, Statistic statistic)
{
    return choose(target, metric, QString::fromLatin1(statisticName(statistic)));
}

bool TrendView::choose(std::uint32_t target, std::uint32_t metric, const QString& statistic)
{
    if (!m_table || target >= m_table->targets.size() || metric >= m_table->metrics.size())
        return false;
    const auto stat = m_table->statisticIndex(statistic.toStdString());
    if (!stat)
        return false;
    // Several targets share a name (one per micro step and vpp stage): the index tells them apart.
    const int m = m_module->findText(toQ(graph::trendModuleOf(m_table->targets[target].name)));
    if (m < 0)
        return false;
    if (m != m_module->currentIndex()) {
        m_filling = true;
        m_module->setCurrentIndex(m);
        m_filling = false;
        fillTargets();
    }
    const int t = m_target->findData(static_cast<int>(target));
    if (t < 0)
        return false;
    m_filling = true;
    m_target->setCurrentIndex(t);
    m_metric->setCurrentIndex(static_cast<int>(metric));
    m_stat->setCurrentIndex(static_cast<int>(*stat));
    m_filling = false;
    refresh();
    return true;
}

std::uint32_t TrendView::currentTarget() const
{
    return static_cast<std::uint32_t>(m_target->currentData().toInt());
}

std::uint32_t TrendView::currentMetric() const
{
    return static_cast<std::uint32_t>(std::max(0, m_metric->currentIndex()));
}

std::size_t TrendView::currentStatistic() const
{
    return static_cast<std::size_t>(std::max(0, m_stat->currentIndex()));
}

bool TrendView::selectCell(std::int64_t step, std::int64_t rank)
{
    const int row = m_model->rowOfStep(step);
    const int column = m_model->columnOfRank(rank);
    if (row < 0 || column < 0)
        return false;
    const QModelIndex index = m_model->index(row, column);
    m_grid->setCurrentIndex(index);
    m_grid->scrollTo(index, QAbstractItemView::PositionAtCenter);
    if (m_plotColumn != column) {
        m_plotColumn = column;
        replot();
    }
    return true;
}

std::optional<std::pair<std::int64_t, std::int64_t>> TrendView::selectedCell() const
{
    const QModelIndex index = m_grid->currentIndex();
    if (!m_table || !index.isValid())
        return std::nullopt;
    return std::pair { m_table->steps[std::size_t(index.row())], m_table->ranks[std::size_t(index.column())] };
}

std::optional<double> TrendView::value(std::int64_t step, std::int64_t rank) const
{
    return m_model->value(m_model->rowOfStep(step), m_model->columnOfRank(rank));
}

void TrendView::refresh()
{
    if (!m_table || m_target->currentIndex() < 0 || m_metric->currentIndex() < 0 || m_stat->currentIndex() < 0) {
        m_model->setSlice(0, 0, std::numeric_limits<std::size_t>::max());
        replot();
        return;
    }
    m_model->setSlice(currentTarget(), currentMetric(), currentStatistic());
    replot();
}

void TrendView::replot()
{
    m_plot->clearGraphs();
    m_plot->clearItems();
    if (!m_table || m_model->columnCount() == 0 || m_target->currentIndex() < 0) {
        m_plot->replot(QCustomPlot::rpQueuedReplot);
        return;
    }
    const int column = std::clamp(m_plotColumn, 0, m_model->columnCount() - 1);
    const auto series = [&](bool bench, const QColor& color, Qt::PenStyle style, const QString& name) {
        const auto values = m_model->column(column, bench);
        QVector<double> xs;
        QVector<double> ys;
        xs.reserve(static_cast<qsizetype>(values.size()));
        ys.reserve(static_cast<qsizetype>(values.size()));
        for (std::size_t r = 0; r < values.size(); ++r) {
            if (values[r] && std::isfinite(*values[r])) {
                xs << static_cast<double>(m_table->steps[r]);
                ys << *values[r];
            }
        }
        QCPGraph* g = m_plot->addGraph();
        g->setName(name);
        g->setPen(QPen(color, 1.6, style));
        g->setData(xs, ys, true);
        return !xs.isEmpty();
    };
    const QString what = m_stat->currentText() + QStringLiteral(" · ") + m_metric->currentText();
    const QString rank = tr("rank %1").arg(m_table->ranks[std::size_t(column)]);
    series(false, plotstyle::seriesColor(0), Qt::SolidLine, tr("%1, %2").arg(what, rank));
    if (m_bench)
        series(true, plotstyle::seriesColor(1), Qt::DashLine, tr("bench run, %1").arg(rank));
    // The listed anomalies of this slot and rank, as red marks on the line.
    QCPGraph* marks = m_plot->addGraph();
    marks->setName(tr("anomalies"));
    marks->setLineStyle(QCPGraph::lsNone);
    marks->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, QColor(0xD9, 0x36, 0x1E), 8));
    if (m_target->currentIndex() >= 0) {
        const graph::TrendTarget& t = m_table->targets[currentTarget()];
        const std::string& metric = m_table->metrics[currentMetric()];
        for (const TrendAnomaly& a : m_anomalies) {
            if (a.rank != m_table->ranks[std::size_t(column)] || a.metric != metric || a.target != t.name
                || a.microStep != t.microStep || a.vppStage != t.vppStage)
                continue;
            if (const auto v = m_model->value(m_model->rowOfStep(a.step), column); v && std::isfinite(*v))
                marks->addData(static_cast<double>(a.step), *v);
        }
    }
    m_plot->legend->setVisible(true);
    m_plot->rescaleAxes();
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

QStringList TrendView::report() const
{
    QStringList lines;
    if (!m_table)
        return lines;
    QStringList steps;
    if (m_table->steps.size() <= 32) {
        for (const std::int64_t s : m_table->steps)
            steps << QString::number(s);
    } else {
        steps << QString::number(m_table->steps.front()) << QStringLiteral("…") << QString::number(m_table->steps.back());
    }
    QStringList ranks;
    for (const std::int64_t r : m_table->ranks)
        ranks << QString::number(r);
    QStringList metrics;
    for (const std::string& m : m_table->metrics)
        metrics << toQ(m);
    lines << QStringLiteral("trend: steps [%1], ranks [%2], %3 modules, %4 targets, metrics %5, %6 values")
                 .arg(steps.join(QStringLiteral(", ")), ranks.join(QStringLiteral(", ")))
                 .arg(m_table->modules.size())
                 .arg(m_table->targets.size())
                 .arg(metrics.join(' '))
                 .arg(m_table->values.size());
    if (!m_anomalies.empty())
        lines << QStringLiteral("anomalies: %1, first at step %2 rank %3: %4 %5")
                     .arg(m_anomalies.size())
                     .arg(m_anomalies.front().step)
                     .arg(m_anomalies.front().rank)
                     .arg(toQ(m_anomalies.front().metric), toQ(m_anomalies.front().target));
    if (m_bench)
        lines << QStringLiteral("bench: %1").arg(toQ(m_bench->path));
    return lines;
}

} // namespace probescope::ui
