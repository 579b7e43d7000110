// SPDX-License-Identifier: Apache-2.0
#include "ui/inspect/metricplot.h"

#include "ui/inspect/plotstyle.h"

#include <QCheckBox>
#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QToolTip>
#include <QVBoxLayout>

#include <qcustomplot.h>

#include <algorithm>
#include <array>
#include <cmath>

namespace probescope::ui {

namespace {

constexpr std::array<session::Metric, 6> kMetrics = {
    session::Metric::Cosine,        session::Metric::MaxAbsErr,  session::Metric::MaxRelErr,
    session::Metric::OneThousandth, session::Metric::NormRelErr, session::Metric::Index,
};

// Legend order: the statuses a user looks for first.
constexpr std::array<session::Status, 6> kLegendOrder = {
    session::Status::Error,   session::Status::Warning, session::Status::Unmatched,
    session::Status::Pass,    session::Status::Pending, session::Status::NoData,
};

constexpr double kClickRadius = 24.0;
constexpr double kHoverRadius = 12.0;

// The texts below are the GUI's own words for core's English names (session::statusName, metricName).
QString modeName(compare::CompareMode mode)
{
    switch (mode) {
    case compare::CompareMode::RealData:
        return MetricPlot::tr("tensor", "compare mode");
    case compare::CompareMode::Summary:
        return MetricPlot::tr("statistics", "compare mode");
    case compare::CompareMode::Md5:
        return MetricPlot::tr("md5", "compare mode");
    }
    return QStringLiteral("?");
}

QString statusText(session::Status status)
{
    switch (status) {
    case session::Status::NoData:
        return MetricPlot::tr("no data");
    case session::Status::Pending:
        return MetricPlot::tr("pending");
    case session::Status::Pass:
        return MetricPlot::tr("pass");
    case session::Status::Unmatched:
        return MetricPlot::tr("unmatched");
    case session::Status::Warning:
        return MetricPlot::tr("warning");
    case session::Status::Error:
        return MetricPlot::tr("error");
    }
    return QStringLiteral("?");
}

// msprobe's column names (Cosine, MaxAbsErr, ...) and ProbeScope's precision index.
QString metricText(session::Metric metric)
{
    switch (metric) {
    case session::Metric::Cosine:
        return MetricPlot::tr("Cosine");
    case session::Metric::MaxAbsErr:
        return MetricPlot::tr("MaxAbsErr");
    case session::Metric::MaxRelErr:
        return MetricPlot::tr("MaxRelativeErr");
    case session::Metric::OneThousandth:
        return MetricPlot::tr("One Thousandth Err Ratio");
    case session::Metric::NormRelErr:
        return MetricPlot::tr("NormRelativeErr");
    case session::Metric::Index:
        return MetricPlot::tr("Precision index");
    }
    return QStringLiteral("?");
}

} // namespace

MetricPlot::MetricPlot(QWidget* parent)
    : QWidget(parent)
{
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    auto* bar = new QHBoxLayout;
    m_metricLabel = new QLabel(this);
    bar->addWidget(m_metricLabel);
    m_metricBox = new QComboBox(this);
    for (session::Metric m : kMetrics)
        m_metricBox->addItem(metricText(m), static_cast<int>(m));
    m_metricLabel->setBuddy(m_metricBox);
    bar->addWidget(m_metricBox);
    m_logBox = new QCheckBox(this);
    bar->addWidget(m_logBox);
    bar->addStretch(1);
    auto* save = new QPushButton(this);
    m_save = save;
    save->setObjectName("savePng");
    bar->addWidget(save);
    layout->addLayout(bar);

    m_plot = plotstyle::makePlot(this, QString(), &m_title);
    connect(save, &QPushButton::clicked, this,
            [this] { plotstyle::savePngInteractively(m_plot, this, QStringLiteral("metric-plot.png")); });
    m_plot->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    m_plot->axisRect()->setRangeDrag(Qt::Horizontal);
    m_plot->axisRect()->setRangeZoom(Qt::Horizontal);
    layout->addWidget(m_plot, 1);

    // A faint line through every point shows the trend without competing with the status colours.
    m_trend = m_plot->addGraph();
    m_trend->setPen(QPen(QColor(0xC0C0C0), 1));
    m_trend->removeFromLegend();
    for (int s = 0; s < 6; ++s) {
        const auto status = static_cast<session::Status>(s);
        QCPGraph* g = m_plot->addGraph();
        g->setLineStyle(QCPGraph::lsNone);
        const QColor c = plotstyle::statusMarker(status);
        g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, c.darker(125), c, 6));
        g->setName(statusText(status));
        m_statusGraphs.push_back(g);
    }
    m_selection = m_plot->addGraph();
    m_selection->setLineStyle(QCPGraph::lsNone);
    m_selection->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, QPen(Qt::black, 2), Qt::NoBrush, 15));
    m_selection->removeFromLegend();
    m_plot->legend->setVisible(true);
    // Bottom left: cosines sit at the top and errors are 0 (not drawn) before the first failure.
    m_plot->axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignLeft | Qt::AlignBottom);

    // The marker spans the axis rect vertically whatever the y scale: x in plot coordinates, y as a ratio.
    m_failureLine = new QCPItemStraightLine(m_plot);
    m_failureLine->setPen(QPen(QColor(0xD7301F), 1.5, Qt::DashLine));
    for (QCPItemPosition* p : { m_failureLine->point1, m_failureLine->point2 }) {
        p->setTypeX(QCPItemPosition::ptPlotCoords);
        p->setTypeY(QCPItemPosition::ptAxisRectRatio);
    }
    m_failureLabel = new QCPItemText(m_plot);
    m_failureLabel->position->setTypeX(QCPItemPosition::ptPlotCoords);
    m_failureLabel->position->setTypeY(QCPItemPosition::ptAxisRectRatio);
    m_failureLabel->setColor(QColor(0xB0200F));
    m_failureLabel->setBrush(QColor(255, 255, 255, 225));
    m_failureLabel->setPadding(QMargins(3, 1, 3, 1));
    m_messageItem = plotstyle::addCentredMessage(m_plot);

    connect(m_metricBox, &QComboBox::currentIndexChanged, this, [this](int index) {
        if (index >= 0)
            setMetric(static_cast<session::Metric>(m_metricBox->itemData(index).toInt()));
    });
    connect(m_logBox, &QCheckBox::toggled, this, &MetricPlot::setLogScale);
    connect(m_plot, &QCustomPlot::mousePress, this, &MetricPlot::onPress);
    connect(m_plot, &QCustomPlot::mouseRelease, this, &MetricPlot::onRelease);
    connect(m_plot, &QCustomPlot::mouseMove, this, &MetricPlot::onMove);
    connect(m_plot, &QCustomPlot::mouseDoubleClick, this, [this](QMouseEvent*) { rebuild(); });

    m_log = defaultLogScale(m_metric);
    m_logBox->setChecked(m_log);
    retranslate();
}

MetricPlot::~MetricPlot() = default;

void MetricPlot::retranslate()
{
    m_metricLabel->setText(tr("Metric"));
    m_logBox->setText(tr("Log scale"));
    m_save->setText(tr("Save PNG…"));
    for (int i = 0; i < m_metricBox->count(); ++i)
        m_metricBox->setItemText(i, metricText(static_cast<session::Metric>(m_metricBox->itemData(i).toInt())));
    for (std::size_t s = 0; s < m_statusGraphs.size(); ++s)
        m_statusGraphs[s]->setName(statusText(static_cast<session::Status>(s)));
    m_plot->xAxis->setLabel(tr("execution order"));
    rebuild(); // the title, the y axis, the first-failure label and the message
}

void MetricPlot::changeEvent(QEvent* event)
{
    if (event->type() == QEvent::LanguageChange && m_plot)
        retranslate();
    QWidget::changeEvent(event);
}

bool MetricPlot::defaultLogScale(session::Metric metric)
{
    return metric == session::Metric::MaxAbsErr || metric == session::Metric::MaxRelErr
        || metric == session::Metric::NormRelErr;
}

void MetricPlot::setAnalysis(std::shared_ptr<const session::PairAnalysis> analysis)
{
    m_analysis = std::move(analysis);
    m_selected.reset();
    // Open on a metric the compare has (issue 36 item 9): a statistics or md5 pair has no Cosine, and an empty plot
    // of it said nothing. The metric chosen stays while it has values.
    if (m_analysis && m_analysis->status && !hasValues(m_metric)) {
        for (const session::Metric m : kMetrics) {
            if (hasValues(m)) {
                setMetric(m); // rebuilds
                return;
            }
        }
    }
    rebuild();
}

bool MetricPlot::hasValues(session::Metric metric) const
{
    if (!m_analysis || !m_analysis->status)
        return false;
    const auto& metrics = m_analysis->status->metrics;
    return std::any_of(metrics.begin(), metrics.end(),
                       [metric](const session::NodeMetrics& m) { return std::isfinite(session::metricValue(m, metric)); });
}

void MetricPlot::setMetric(session::Metric metric)
{
    const bool changed = metric != m_metric;
    m_metric = metric;
    const int index = m_metricBox->findData(static_cast<int>(metric));
    if (index >= 0 && index != m_metricBox->currentIndex()) {
        const QSignalBlocker block(m_metricBox);
        m_metricBox->setCurrentIndex(index);
    }
    m_log = defaultLogScale(metric);
    {
        const QSignalBlocker block(m_logBox);
        m_logBox->setChecked(m_log);
    }
    rebuild();
    if (changed)
        emit metricChanged(static_cast<int>(metric));
}

void MetricPlot::setLogScale(bool on)
{
    if (m_logBox->isChecked() != on) {
        const QSignalBlocker block(m_logBox);
        m_logBox->setChecked(on);
    }
    if (on == m_log)
        return;
    m_log = on;
    rebuild();
}

void MetricPlot::rebuild()
{
    m_points.clear();
    m_failureX.reset();
    m_message.clear();
    m_trend->data()->clear();
    for (QCPGraph* g : m_statusGraphs)
        g->data()->clear();
    m_failureLine->setVisible(false);
    m_failureLabel->setVisible(false);

    const QString metricName = metricText(m_metric);
    QString title = tr("%1 along execution order").arg(metricName);
    std::size_t finite = 0;
    std::size_t hiddenOnLog = 0;
    std::size_t nodeCount = 0;
    if (m_analysis && m_analysis->skeleton && m_analysis->skeleton->tree && m_analysis->status) {
        const tree::ConstructTree& tree = *m_analysis->skeleton->tree;
        const session::NodeStatusTable& status = *m_analysis->status;
        nodeCount = tree.size();
        title += QStringLiteral(" \u2014 ") + QString::fromStdString(m_analysis->skeleton->pair.label());
        for (const tree::NodeId id : tree.executionOrder()) {
            if (id.value >= status.metrics.size())
                continue;
            const double y = session::metricValue(status.metrics[id.value], m_metric);
            if (!std::isfinite(y))
                continue;
            ++finite;
            if (m_log && y <= 0) {
                ++hiddenOnLog;
                continue;
            }
            const session::Status own = id.value < status.own.size() ? status.own[id.value] : session::Status::NoData;
            m_points.push_back({ id.value, static_cast<double>(tree.node(id).executionIndex), y, own });
        }
        // Execution order is the x order, so points are sorted by x (pointNear relies on it).
        std::stable_sort(m_points.begin(), m_points.end(), [](const Point& a, const Point& b) { return a.x < b.x; });

        const compare::FirstFailure& ff = m_analysis->firstFailure;
        if (ff.node.valid() && ff.node.value < tree.size()) {
            m_failureX = static_cast<double>(tree.node(ff.node).executionIndex);
            const QString what = ff.found ? tr("first failure") : tr("first failing node (inputs already differ)");
            m_failureLabel->setText(tr("%1: %2", "first failure: node").arg(what, QString::fromStdString(ff.key)));
        }
        if (finite == 0) {
            m_message = tr("%1 is not available in a %2 compare.")
                            .arg(metricName, modeName(m_analysis->table ? m_analysis->table->mode
                                                                        : compare::CompareMode::RealData));
        } else if (m_points.empty()) {
            m_message = tr("All %1 values are 0: nothing to show on a log scale.").arg(finite);
        }
        if (hiddenOnLog > 0 && !m_points.empty())
            title += tr(" (%1 values of 0 not shown on the log scale)").arg(hiddenOnLog);
    } else {
        m_message = tr("No compare loaded.");
    }
    m_title->setText(title);

    QVector<double> keys;
    QVector<double> values;
    std::array<QVector<double>, 6> statusKeys;
    std::array<QVector<double>, 6> statusValues;
    keys.reserve(static_cast<qsizetype>(m_points.size()));
    values.reserve(static_cast<qsizetype>(m_points.size()));
    for (const Point& p : m_points) {
        keys.push_back(p.x);
        values.push_back(p.y);
        const auto s = static_cast<std::size_t>(p.status);
        statusKeys[s].push_back(p.x);
        statusValues[s].push_back(p.y);
    }
    m_trend->setData(keys, values, true);
    for (QCPGraph* g : m_statusGraphs)
        g->removeFromLegend();
    for (session::Status s : kLegendOrder) {
        const auto i = static_cast<std::size_t>(s);
        m_statusGraphs[i]->setData(statusKeys[i], statusValues[i], true);
        if (!statusKeys[i].isEmpty())
            m_statusGraphs[i]->addToLegend();
    }
    m_plot->legend->setVisible(!m_points.empty());

    m_plot->yAxis->setLabel(metricName);
    if (m_log) {
        m_plot->yAxis->setScaleType(QCPAxis::stLogarithmic);
        m_plot->yAxis->setTicker(QSharedPointer<QCPAxisTickerLog>(new QCPAxisTickerLog));
        m_plot->yAxis->setNumberFormat(QStringLiteral("eb"));
        m_plot->yAxis->setNumberPrecision(0);
    } else {
        m_plot->yAxis->setScaleType(QCPAxis::stLinear);
        m_plot->yAxis->setTicker(QSharedPointer<QCPAxisTicker>(new QCPAxisTicker));
        m_plot->yAxis->setNumberFormat(QStringLiteral("gb"));
        m_plot->yAxis->setNumberPrecision(6);
    }

    // Ranges: every node's x (so the marker shows even where points are missing), y over the points with
    // headroom above them for the first-failure label.
    const double xHi = nodeCount > 1 ? static_cast<double>(nodeCount - 1) : 1.0;
    const double xPad = std::max(1.0, xHi * 0.02);
    m_plot->xAxis->setRange(-xPad, xHi + xPad);
    if (!m_points.empty()) {
        double lo = m_points.front().y;
        double hi = lo;
        for (const Point& p : m_points) {
            lo = std::min(lo, p.y);
            hi = std::max(hi, p.y);
        }
        if (m_log) {
            const double decades = std::log10(hi / lo);
            m_plot->yAxis->setRange(lo / 2, hi * std::pow(10.0, std::max(0.5, decades * 0.15)));
        } else {
            double span = hi - lo;
            if (span == 0)
                span = std::max(std::fabs(hi) * 0.1, 0.1);
            m_plot->yAxis->setRange(lo - span * 0.05, hi + span * 0.14);
        }
    } else {
        m_plot->yAxis->setRange(m_log ? QCPRange(0.1, 10) : QCPRange(0, 1));
    }

    if (m_failureX) {
        m_failureLine->point1->setCoords(*m_failureX, 0);
        m_failureLine->point2->setCoords(*m_failureX, 1);
        m_failureLine->setVisible(true);
        // The label reads away from the nearer edge so it is never cut off.
        const bool rightHalf = *m_failureX > xHi / 2;
        m_failureLabel->position->setCoords(*m_failureX, 0.02);
        m_failureLabel->setPositionAlignment(Qt::AlignTop | (rightHalf ? Qt::AlignRight : Qt::AlignLeft));
        m_failureLabel->setVisible(true);
    }
    m_messageItem->setText(m_message);
    m_messageItem->setVisible(!m_message.isEmpty());
    updateSelectionGraph();
    m_plot->replot();
}

void MetricPlot::updateSelectionGraph()
{
    m_selection->data()->clear();
    if (!m_selected)
        return;
    for (const Point& p : m_points) {
        if (p.node == *m_selected) {
            m_selection->addData(p.x, p.y);
            break;
        }
    }
}

void MetricPlot::setSelectedNode(quint32 nodeId)
{
    m_selected = nodeId;
    updateSelectionGraph();
    m_plot->replot();
}

void MetricPlot::clearSelection()
{
    m_selected.reset();
    updateSelectionGraph();
    m_plot->replot();
}

std::optional<std::size_t> MetricPlot::pointNear(const QPoint& pos, double radius) const
{
    if (m_points.empty())
        return std::nullopt;
    double a = m_plot->xAxis->pixelToCoord(pos.x() - radius);
    double b = m_plot->xAxis->pixelToCoord(pos.x() + radius);
    if (a > b)
        std::swap(a, b);
    auto first = std::lower_bound(m_points.begin(), m_points.end(), a, [](const Point& p, double x) { return p.x < x; });
    std::optional<std::size_t> best;
    double bestDistance = radius * radius;
    for (auto it = first; it != m_points.end() && it->x <= b; ++it) {
        const double dx = m_plot->xAxis->coordToPixel(it->x) - pos.x();
        const double dy = m_plot->yAxis->coordToPixel(it->y) - pos.y();
        const double d = dx * dx + dy * dy;
        if (d <= bestDistance) {
            bestDistance = d;
            best = static_cast<std::size_t>(it - m_points.begin());
        }
    }
    return best;
}

void MetricPlot::onPress(QMouseEvent* event)
{
    m_pressPos = event->pos();
    m_pressed = event->button() == Qt::LeftButton;
}

void MetricPlot::onRelease(QMouseEvent* event)
{
    // A press and release at (nearly) the same place is a click; anything longer was a drag.
    if (!m_pressed || event->button() != Qt::LeftButton || (event->pos() - m_pressPos).manhattanLength() > 4) {
        m_pressed = false;
        return;
    }
    m_pressed = false;
    const auto index = pointNear(event->pos(), kClickRadius);
    if (!index)
        return;
    const quint32 node = m_points[*index].node;
    setSelectedNode(node);
    emit nodeClicked(node);
}

void MetricPlot::onMove(QMouseEvent* event)
{
    if (event->buttons() != Qt::NoButton || !m_analysis)
        return;
    const auto index = pointNear(event->pos(), kHoverRadius);
    if (!index) {
        QToolTip::hideText();
        return;
    }
    const Point& p = m_points[*index];
    const tree::ConstructTree& tree = *m_analysis->skeleton->tree;
    const auto key = tree.node(tree::NodeId { p.node }).key;
    QToolTip::showText(event->globalPosition().toPoint(),
                       tr("%1\n%2: %3\n#%4 \u00b7 %5", "node key, metric: value, execution index \u00b7 status")
                           .arg(QString::fromUtf8(key.data(), static_cast<qsizetype>(key.size())),
                                metricText(m_metric), plotstyle::formatNumber(p.y),
                                QString::number(static_cast<qint64>(p.x)), statusText(p.status)),
                       m_plot);
}

bool MetricPlot::savePng(const QString& path, int width, int height)
{
    return m_plot->savePng(path, width, height);
}

} // namespace probescope::ui
