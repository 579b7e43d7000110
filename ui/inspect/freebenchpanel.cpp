// SPDX-License-Identifier: Apache-2.0
#include "ui/inspect/freebenchpanel.h"

#include "ui/inspect/plotstyle.h"
#include "ui/models/freebenchmodel.h"

#include <QCheckBox>
#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include <qcustomplot.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

namespace probescope::ui {

namespace {

QString toQ(const std::string& s) { return QString::fromStdString(s); }

// APIs ordered worst first, so the combo starts with what a user should look at.
std::vector<std::pair<std::string, double>> apisByExcess(const probescope::freebench::FreeBenchTable& table)
{
    std::map<std::string, double> worst;
    for (const probescope::freebench::FreeBenchRow& row : table.rows) {
        double e = probescope::freebench::freeBenchExcess(row);
        if (std::isnan(e))
            e = -1;
        auto [it, added] = worst.try_emplace(row.apiName, e);
        if (!added)
            it->second = std::max(it->second, e);
    }
    std::vector<std::pair<std::string, double>> out(worst.begin(), worst.end());
    std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
    return out;
}

} // namespace

FreeBenchmarkPanel::FreeBenchmarkPanel(QWidget* parent)
    : QWidget(parent)
{
    setObjectName("freeBenchmarkPanel");
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);

    auto* top = new QWidget(this);
    auto* topLayout = new QVBoxLayout(top);
    topLayout->setContentsMargins(4, 4, 4, 0);
    m_summary = new QLabel(top);
    m_summary->setWordWrap(true);
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    topLayout->addWidget(m_summary);
    m_filter = new QLineEdit(top);
    m_filter->setClearButtonEnabled(true);
    topLayout->addWidget(m_filter);

    m_model = new FreeBenchmarkModel(this);
    m_proxy = new FreeBenchmarkProxy(this);
    m_proxy->setSourceModel(m_model);
    m_view = new QTableView(top);
    m_view->setObjectName("freeBenchmarkTable");
    m_view->setModel(m_proxy);
    m_view->setSortingEnabled(true);
    m_view->sortByColumn(FreeBenchmarkModel::StepColumn, Qt::AscendingOrder);
    m_view->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_view->setSelectionMode(QAbstractItemView::SingleSelection);
    m_view->verticalHeader()->hide();
    m_view->verticalHeader()->setDefaultSectionSize(m_view->fontMetrics().height() + 6);
    m_view->horizontalHeader()->setStretchLastSection(true);
    m_view->setColumnWidth(FreeBenchmarkModel::StepColumn, 48);
    m_view->setColumnWidth(FreeBenchmarkModel::RankColumn, 48);
    m_view->setColumnWidth(FreeBenchmarkModel::ApiColumn, 230);
    topLayout->addWidget(m_view, 1);

    auto* bottom = new QWidget(this);
    auto* bottomLayout = new QVBoxLayout(bottom);
    bottomLayout->setContentsMargins(0, 0, 0, 0);
    auto* bar = new QHBoxLayout;
    bar->setContentsMargins(4, 0, 4, 0);
    m_apiLabel = new QLabel(bottom);
    bar->addWidget(m_apiLabel);
    m_apiBox = new QComboBox(bottom);
    m_apiBox->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    bar->addWidget(m_apiBox, 1);
    m_logBox = new QCheckBox(bottom);
    m_logBox->setChecked(m_log);
    bar->addWidget(m_logBox);
    bottomLayout->addLayout(bar);
    m_plotWidget = plotstyle::makePlot(bottom, QString(), &m_title);
    m_plotWidget->yAxis->setLabel(QStringLiteral("max_rel"));
    auto ticker = QSharedPointer<QCPAxisTickerFixed>::create();
    ticker->setTickStep(1.0); // steps are whole numbers
    ticker->setScaleStrategy(QCPAxisTickerFixed::ssMultiples);
    m_plotWidget->xAxis->setTicker(ticker);
    m_offScaleGraph = m_plotWidget->addGraph();
    m_offScaleGraph->setLineStyle(QCPGraph::lsNone);
    m_offScaleGraph->setScatterStyle(
        QCPScatterStyle(QCPScatterStyle::ssTriangleInverted, QColor(0x8E2C18), QColor(0xD7301F), 9));
    m_plotWidget->legend->setVisible(true);
    m_plotWidget->axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignLeft | Qt::AlignTop);
    m_messageItem = plotstyle::addCentredMessage(m_plotWidget);
    bottomLayout->addWidget(m_plotWidget, 1);

    auto* splitter = new QSplitter(Qt::Vertical, this);
    splitter->addWidget(top);
    splitter->addWidget(bottom);
    splitter->setStretchFactor(0, 1);
    splitter->setStretchFactor(1, 1);
    layout->addWidget(splitter);

    connect(m_filter, &QLineEdit::textChanged, m_proxy, &QSortFilterProxyModel::setFilterFixedString);
    connect(m_view, &QTableView::clicked, this, [this](const QModelIndex& i) { rowChosen(i, true); });
    connect(m_view, &QTableView::activated, this, [this](const QModelIndex& i) { rowChosen(i, true); });
    connect(m_view->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex& i) { rowChosen(i, false); });
    connect(m_apiBox, &QComboBox::activated, this,
            [this](int index) { setApi(m_apiBox->itemData(index).toString()); });
    connect(m_logBox, &QCheckBox::toggled, this, &FreeBenchmarkPanel::setLogScale);
    connect(&m_watcher, &QFutureWatcherBase::finished, this, &FreeBenchmarkPanel::onLoaded);

    retranslate();
}

void FreeBenchmarkPanel::retranslate()
{
    m_filter->setPlaceholderText(tr("Filter APIs (e.g. gelu)"));
    m_apiLabel->setText(tr("API"));
    m_logBox->setText(tr("Log scale"));
    m_plotWidget->xAxis->setLabel(tr("step (no point: not flagged in that step)"));
    m_offScaleGraph->setName(tr("sign flip / inf (off the scale)"));
    fillApiBox(); // "(sign flip)" after the names
    // The model's headers are made when asked; the views ask again on this signal.
    if (m_model->columnCount() > 0)
        emit m_model->headerDataChanged(Qt::Horizontal, 0, m_model->columnCount() - 1);
    m_view->viewport()->update();
    updateSummary();
    rebuildPlot();
}

void FreeBenchmarkPanel::changeEvent(QEvent* event)
{
    if (event->type() == QEvent::LanguageChange && m_plotWidget)
        retranslate();
    QWidget::changeEvent(event);
}

FreeBenchmarkPanel::~FreeBenchmarkPanel()
{
    m_watcher.waitForFinished();
}

void FreeBenchmarkPanel::load(const QStringList& inputs)
{
    std::vector<std::filesystem::path> paths;
    for (const QString& input : inputs) {
        if (!input.isEmpty())
            paths.emplace_back(input.toStdString());
    }
    // Only files are read, and they are small next to a dump; no progress bar, but never on the GUI thread.
    m_watcher.setFuture(QtConcurrent::run([paths] {
        return std::make_shared<const probescope::freebench::FreeBenchTable>(probescope::freebench::loadFreeBenchmark(paths));
    }));
}

void FreeBenchmarkPanel::onLoaded()
{
    auto table = m_watcher.future().result();
    setTable(table);
    emit loaded(static_cast<int>(table->files.size()), static_cast<int>(table->rows.size()));
}

void FreeBenchmarkPanel::setTable(std::shared_ptr<const probescope::freebench::FreeBenchTable> table)
{
    m_table = std::move(table);
    m_model->setTable(m_table);
    fillApiBox();
    updateSummary();
    setApi(m_apiBox->itemData(0).toString());
}

void FreeBenchmarkPanel::fillApiBox()
{
    const QSignalBlocker block(m_apiBox);
    const QString current = m_apiBox->currentData().toString();
    m_apiBox->clear();
    if (!m_table)
        return;
    for (const auto& [api, excess] : apisByExcess(*m_table)) {
        const QString name = toQ(api);
        const QString label = excess == std::numeric_limits<double>::infinity() ? tr("%1 (sign flip)").arg(name)
            : excess > 0                                                         ? QStringLiteral("%1 (×%2)").arg(name).arg(excess, 0, 'g', 3)
                                                                                 : name;
        m_apiBox->addItem(label, name);
    }
    if (const int index = m_apiBox->findData(current); index >= 0)
        m_apiBox->setCurrentIndex(index);
}

QString FreeBenchmarkPanel::summary() const { return m_summary->text(); }

void FreeBenchmarkPanel::updateSummary()
{
    QString text;
    QStringList problems;
    if (!m_table) {
        text = tr("No free benchmark results loaded.");
    } else if (m_table->files.empty()) {
        text = tr("No free_benchmark.csv found.");
    } else {
        std::set<std::string> apis;
        std::set<std::int64_t> steps, ranks;
        for (const probescope::freebench::FreeBenchRow& row : m_table->rows) {
            apis.insert(row.apiName);
            steps.insert(row.step);
            ranks.insert(row.rank);
        }
        const QString files = tr("%n free_benchmark.csv file(s)", nullptr, static_cast<int>(m_table->files.size()));
        if (m_table->rows.empty())
            text = tr("No API exceeded its threshold: %1 without rows.").arg(files);
        else
            text = tr("%1 flagged rows of %2 APIs in %3 (steps %4–%5, %n rank(s)).", nullptr, static_cast<int>(ranks.size()))
                       .arg(m_table->rows.size())
                       .arg(apis.size())
                       .arg(files)
                       .arg(*steps.begin())
                       .arg(*steps.rbegin());
        for (const Diagnostic& d : m_table->diagnostics)
            problems << toQ(d.format());
        if (!problems.isEmpty())
            text += QLatin1Char(' ') + tr("%n line(s) could not be read (see the tooltip).", nullptr, static_cast<int>(problems.size()));
    }
    m_summary->setText(text);
    constexpr qsizetype kMaxShown = 20;
    if (problems.size() > kMaxShown) {
        const qsizetype more = problems.size() - kMaxShown;
        problems = problems.mid(0, kMaxShown);
        problems << tr("… and %1 more").arg(more);
    }
    m_summary->setToolTip(problems.join(QLatin1Char('\n')));
}

void FreeBenchmarkPanel::rowChosen(const QModelIndex& proxyIndex, bool activate)
{
    if (!proxyIndex.isValid())
        return;
    const QModelIndex source = m_proxy->mapToSource(proxyIndex);
    const QString api = source.data(FreeBenchmarkModel::ApiNameRole).toString();
    if (api != m_api)
        setApi(api);
    if (activate)
        emit apiActivated(api, source.data(FreeBenchmarkModel::StepRole).toLongLong(),
                          source.data(FreeBenchmarkModel::RankRole).toLongLong());
}

void FreeBenchmarkPanel::setApi(const QString& apiName)
{
    m_api = apiName;
    const int index = m_apiBox->findData(apiName);
    if (index != m_apiBox->currentIndex()) {
        const QSignalBlocker block(m_apiBox);
        m_apiBox->setCurrentIndex(index);
    }
    rebuildPlot();
}

void FreeBenchmarkPanel::setLogScale(bool on)
{
    m_log = on;
    {
        const QSignalBlocker block(m_logBox);
        m_logBox->setChecked(on);
    }
    rebuildPlot();
}

void FreeBenchmarkPanel::rebuildPlot()
{
    for (QCPGraph* g : m_rankGraphs)
        m_plotWidget->removeGraph(g);
    m_rankGraphs.clear();
    for (QCPItemStraightLine* line : m_thresholdLines)
        m_plotWidget->removeItem(line);
    for (QCPItemText* label : m_thresholdLabels)
        m_plotWidget->removeItem(label);
    m_thresholdLines.clear();
    m_thresholdLabels.clear();
    m_points.clear();
    m_thresholds.clear();
    m_offScaleGraph->data()->clear();

    auto finish = [this](const QString& title, const QString& message) {
        m_title->setText(title);
        m_plotMessage = message;
        m_messageItem->setText(message);
        m_messageItem->setVisible(!message.isEmpty());
        m_plotWidget->replot();
    };
    if (!m_table || m_api.isEmpty()) {
        m_plotWidget->xAxis->setRange(-0.5, 1.5);
        m_plotWidget->yAxis->setScaleType(QCPAxis::stLinear);
        m_plotWidget->yAxis->setTicker(QSharedPointer<QCPAxisTicker>::create());
        m_plotWidget->yAxis->setRange(0, 1);
        finish(QString(), m_table && !m_table->rows.empty() ? tr("Choose a row to plot its API across steps.")
                                                            : tr("No flagged API to plot."));
        return;
    }

    const std::string api = m_api.toStdString();
    std::set<std::pair<double, std::string>> thresholds; // value, dtype
    std::map<qint64, std::vector<std::size_t>> byRank;   // indexes into m_points
    int withoutValue = 0;
    int notDrawable = 0;
    double lo = std::numeric_limits<double>::infinity();
    double hi = -lo;
    double minStep = lo, maxStep = -lo;
    for (std::size_t i = 0; i < m_table->rows.size(); ++i) {
        const probescope::freebench::FreeBenchRow& row = m_table->rows[i];
        if (row.apiName != api)
            continue;
        const double threshold = probescope::freebench::freeBenchThreshold(row.dtype, row.pertMode);
        thresholds.emplace(threshold, row.pertMode == "no_change" ? std::string("no_change") : row.dtype);
        minStep = std::min(minStep, static_cast<double>(row.step));
        maxStep = std::max(maxStep, static_cast<double>(row.step));
        Point p;
        p.step = static_cast<double>(row.step);
        p.rank = row.rank;
        p.row = static_cast<int>(i);
        if (row.maxRelKind == probescope::freebench::MaxRelKind::Empty || (row.maxRelKind == probescope::freebench::MaxRelKind::Number && std::isnan(row.maxRel))) {
            ++withoutValue;
            continue;
        }
        if (row.maxRelKind == probescope::freebench::MaxRelKind::SymbolFlipping || std::isinf(row.maxRel)) {
            p.offScale = true;
        } else {
            if (m_log && row.maxRel <= 0) {
                ++notDrawable;
                continue;
            }
            p.y = row.maxRel;
            lo = std::min(lo, p.y);
            hi = std::max(hi, p.y);
        }
        m_points.push_back(p);
    }
    for (const auto& [value, dtype] : thresholds) {
        if (m_log && value <= 0)
            continue;
        lo = std::min(lo, value);
        hi = std::max(hi, value);
    }
    if (!std::isfinite(lo)) { // nothing finite: only sign flips, or nothing drawable at all
        lo = m_log ? 1e-4 : 0;
        hi = m_log ? 1 : 1;
    }
    // Off-scale points sit above everything else, on a row of their own.
    double top = 0, upper = 0, lower = 0;
    if (m_log) {
        lower = lo / 3;
        top = hi * 4;
        upper = top * 3;
    } else {
        const double span = std::max(hi - std::min(lo, 0.0), 1e-12);
        lower = std::min(lo, 0.0) - span * 0.05;
        top = hi + span * 0.15;
        upper = top + span * 0.1;
    }
    for (Point& p : m_points) {
        if (p.offScale)
            p.y = top;
        byRank[p.rank].push_back(static_cast<std::size_t>(&p - m_points.data()));
    }

    m_plotWidget->yAxis->setScaleType(m_log ? QCPAxis::stLogarithmic : QCPAxis::stLinear);
    if (m_log)
        m_plotWidget->yAxis->setTicker(QSharedPointer<QCPAxisTickerLog>::create());
    else
        m_plotWidget->yAxis->setTicker(QSharedPointer<QCPAxisTicker>::create());
    m_plotWidget->yAxis->setRange(lower, upper);
    m_plotWidget->xAxis->setRange(minStep - 0.5, maxStep + 0.5);

    int series = 0;
    for (const auto& [rank, indexes] : byRank) {
        QCPGraph* g = nullptr;
        for (const std::size_t i : indexes) {
            const Point& p = m_points[i];
            if (p.offScale) {
                m_offScaleGraph->addData(p.step, p.y);
                continue;
            }
            if (!g) {
                g = m_plotWidget->addGraph();
                g->setLineStyle(QCPGraph::lsNone); // a step without a row passed: no line through it
                const QColor c = plotstyle::seriesColor(series++);
                g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, c.darker(120), c, 8));
                g->setName(tr("rank %1").arg(rank));
                m_rankGraphs.push_back(g);
            }
            g->addData(p.step, p.y);
        }
    }
    m_offScaleGraph->setVisible(!m_offScaleGraph->data()->isEmpty());
    if (m_offScaleGraph->visible())
        m_offScaleGraph->addToLegend();
    else
        m_offScaleGraph->removeFromLegend();

    for (const auto& [value, dtype] : thresholds) {
        m_thresholds.push_back(value);
        if (m_log && value <= 0)
            continue;
        auto* line = new QCPItemStraightLine(m_plotWidget);
        line->setPen(QPen(QColor(0xD7301F), 1.5, Qt::DashLine));
        line->point1->setCoords(minStep - 1, value);
        line->point2->setCoords(maxStep + 1, value);
        m_thresholdLines.push_back(line);
        auto* label = new QCPItemText(m_plotWidget);
        label->position->setTypeX(QCPItemPosition::ptAxisRectRatio);
        label->position->setTypeY(QCPItemPosition::ptPlotCoords);
        label->position->setCoords(0.99, value);
        label->setPositionAlignment(Qt::AlignRight | Qt::AlignBottom);
        label->setColor(QColor(0xB0200F));
        label->setText(tr("threshold %1 (%2)").arg(plotstyle::formatNumber(value), toQ(dtype)));
        m_thresholdLabels.push_back(label);
    }

    QStringList notes;
    if (withoutValue > 0)
        notes << tr("%n row(s) without max_rel (to_cpu or integer output) not drawn", nullptr, withoutValue);
    if (notDrawable > 0)
        notes << tr("%n row(s) with max_rel 0 not drawn on the log scale", nullptr, notDrawable);
    if (m_log && !thresholds.empty() && thresholds.begin()->first <= 0)
        notes << tr("no_change's threshold 0 cannot be drawn on the log scale");
    QString title = tr("%1: max_rel per step").arg(m_api);
    if (!notes.isEmpty())
        title += QStringLiteral("\n") + notes.join(QStringLiteral("; "));
    finish(title, m_points.empty() ? tr("Nothing to draw for %1.").arg(m_api) : QString());
}

bool FreeBenchmarkPanel::savePng(const QString& path, int width, int height)
{
    return m_plotWidget->savePng(path, width, height);
}

} // namespace probescope::ui
