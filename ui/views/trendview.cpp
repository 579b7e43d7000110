// SPDX-License-Identifier: Apache-2.0
#include "ui/views/trendview.h"

#include <QComboBox>
#include <QEvent>
#include <QFileInfo>
#include <QGridLayout>
#include <QHeaderView>
#include <QLabel>
#include <QTableWidget>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <limits>

namespace probescope::ui {

namespace {

QString toQ(const std::string& s)
{
    return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size()));
}

/// The statistic's column of the db (a db without it shows empty cells).
std::optional<double> pick(const graph::TrendTable& table, const graph::TrendValue& v, TrendView::Statistic s)
{
    switch (s) {
    case TrendView::Statistic::Norm: return table.stat(v, "norm");
    case TrendView::Statistic::Max: return table.stat(v, "max");
    case TrendView::Statistic::Min: return table.stat(v, "min");
    case TrendView::Statistic::Mean: return table.stat(v, "mean");
    }
    return std::nullopt;
}

} // namespace

TrendView::TrendView(QWidget* parent)
    : QWidget(parent)
{
    setObjectName("trendView");
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
    m_stat = new QComboBox(this);
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
    m_grid = new QTableWidget(this);
    m_grid->setObjectName("trendGrid");
    m_grid->setEditTriggers(QAbstractItemView::NoEditTriggers);
    layout->addWidget(m_grid, 1);
    connect(m_module, &QComboBox::currentIndexChanged, this, [this] {
        if (!m_filling)
            fillTargets();
    });
    for (QComboBox* box : { m_target, m_metric, m_stat })
        connect(box, &QComboBox::currentIndexChanged, this, [this] {
            if (!m_filling)
                refresh();
        });
    retranslate();
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
    m_filling = true;
    const int stat = std::max(0, m_stat->currentIndex());
    m_stat->clear();
    m_stat->addItems({ tr("norm"), tr("max"), tr("min"), tr("mean") });
    m_stat->setCurrentIndex(stat);
    m_filling = false;
    if (!m_table) {
        m_header->setText(tr("No .trend.db is open."));
        return;
    }
    m_header->setText(tr("<b>%1</b> — msprobe data2db: %n step(s)", nullptr, static_cast<int>(m_table->steps.size()))
                          .arg(QFileInfo(toQ(m_table->path)).fileName().toHtmlEscaped())
                      + tr(" × %n rank(s)", nullptr, static_cast<int>(m_table->ranks.size()))
                      + tr(" × %n module(s)", nullptr, static_cast<int>(m_table->modules.size())));
    m_header->setToolTip(toQ(m_table->path));
    refresh();
}

void TrendView::setTable(std::shared_ptr<const graph::TrendTable> table)
{
    m_table = std::move(table);
    m_filling = true;
    m_module->clear();
    m_metric->clear();
    if (m_table) {
        for (const std::string& m : m_table->modules)
            m_module->addItem(toQ(m));
        for (const std::string& m : m_table->metrics)
            m_metric->addItem(toQ(m));
    }
    m_filling = false;
    fillTargets();
    retranslate();
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
            label += tr(" (micro step %1)").arg(t.microStep);
            m_target->addItem(label, static_cast<int>(i));
        }
    }
    m_filling = false;
    refresh();
}

bool TrendView::choose(std::uint32_t target, std::uint32_t metric, Statistic statistic)
{
    if (!m_table || target >= m_table->targets.size() || metric >= m_table->metrics.size())
        return false;
    // Several targets share a name (one per micro step and vpp stage): the index tells them apart.
    const int m = m_module->findText(toQ(graph::trendModuleOf(m_table->targets[target].name)));
    if (m < 0)
        return false;
    m_filling = true;
    m_module->setCurrentIndex(m);
    m_filling = false;
    fillTargets();
    const int t = m_target->findData(static_cast<int>(target));
    if (t < 0)
        return false;
    m_filling = true;
    m_target->setCurrentIndex(t);
    m_metric->setCurrentIndex(static_cast<int>(metric));
    m_stat->setCurrentIndex(static_cast<int>(statistic));
    m_filling = false;
    refresh();
    return true;
}

std::optional<double> TrendView::value(std::int64_t step, std::int64_t rank) const
{
    if (!m_table || m_target->currentIndex() < 0 || m_metric->currentIndex() < 0)
        return std::nullopt;
    const auto target = static_cast<std::uint32_t>(m_target->currentData().toInt());
    const auto metric = static_cast<std::uint32_t>(m_metric->currentIndex());
    const auto stat = static_cast<Statistic>(std::max(0, m_stat->currentIndex()));
    for (const graph::TrendValue& v : m_table->values)
        if (v.step == step && v.rank == rank && v.target == target && v.metric == metric)
            return pick(*m_table, v, stat);
    return std::nullopt;
}

void TrendView::refresh()
{
    m_grid->clear();
    if (!m_table) {
        m_grid->setRowCount(0);
        m_grid->setColumnCount(0);
        return;
    }
    const auto& steps = m_table->steps;
    const auto& ranks = m_table->ranks;
    m_grid->setRowCount(static_cast<int>(steps.size()));
    m_grid->setColumnCount(static_cast<int>(ranks.size()));
    QStringList rowNames;
    for (const std::int64_t s : steps)
        rowNames << tr("step %1").arg(s);
    QStringList columnNames;
    for (const std::int64_t r : ranks)
        columnNames << tr("rank %1").arg(r);
    m_grid->setVerticalHeaderLabels(rowNames);
    m_grid->setHorizontalHeaderLabels(columnNames);
    if (m_target->currentIndex() < 0 || m_metric->currentIndex() < 0)
        return;
    const auto target = static_cast<std::uint32_t>(m_target->currentData().toInt());
    const auto metric = static_cast<std::uint32_t>(m_metric->currentIndex());
    const auto stat = static_cast<Statistic>(std::max(0, m_stat->currentIndex()));
    // One pass over the table (sorted by step, rank, target, metric): the cells of this slot and metric.
    std::vector<std::optional<double>> cells(steps.size() * ranks.size());
    std::vector<bool> present(cells.size(), false);
    double lo = std::numeric_limits<double>::infinity();
    double hi = -lo;
    for (const graph::TrendValue& v : m_table->values) {
        if (v.target != target || v.metric != metric)
            continue;
        const auto s = std::lower_bound(steps.begin(), steps.end(), v.step) - steps.begin();
        const auto r = std::lower_bound(ranks.begin(), ranks.end(), v.rank) - ranks.begin();
        const std::size_t at = static_cast<std::size_t>(s) * ranks.size() + static_cast<std::size_t>(r);
        cells[at] = pick(*m_table, v, stat);
        present[at] = true;
        if (cells[at] && std::isfinite(*cells[at])) {
            lo = std::min(lo, *cells[at]);
            hi = std::max(hi, *cells[at]);
        }
    }
    for (std::size_t s = 0; s < steps.size(); ++s) {
        for (std::size_t r = 0; r < ranks.size(); ++r) {
            const std::size_t at = s * ranks.size() + r;
            auto* item = new QTableWidgetItem;
            if (!present[at]) {
                item->setText(QString());
                item->setToolTip(tr("not in the db for this step and rank"));
            } else if (!cells[at]) {
                item->setText(tr("None"));
            } else {
                const double x = *cells[at];
                item->setText(QString::number(x, 'g', 6));
                QColor shade(0xFF, 0x70, 0x4D); // msprobe's error colour for a non-finite value
                if (std::isfinite(x)) {
                    const double f = hi > lo ? (x - lo) / (hi - lo) : 0.0;
                    // White to msprobe's warning orange: the largest value of the column of steps stands out.
                    shade = QColor::fromRgbF(1.0f, static_cast<float>(1.0 - 0.25 * f), static_cast<float>(1.0 - 0.6 * f));
                }
                item->setBackground(shade);
                item->setForeground(QColor(Qt::black));
            }
            item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
            m_grid->setItem(static_cast<int>(s), static_cast<int>(r), item);
        }
    }
}

QStringList TrendView::report() const
{
    QStringList lines;
    if (!m_table)
        return lines;
    QStringList steps;
    for (const std::int64_t s : m_table->steps)
        steps << QString::number(s);
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
    return lines;
}

} // namespace probescope::ui
