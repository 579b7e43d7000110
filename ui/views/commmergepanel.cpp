// SPDX-License-Identifier: Apache-2.0
#include "ui/views/commmergepanel.h"

#include "ui/models/commmergemodel.h"
#include "ui/models/rankoverviewmodel.h"

#include <QComboBox>
#include <QEvent>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QSignalBlocker>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QVBoxLayout>

namespace probescope::ui {

CommMergePanel::CommMergePanel(RankOverviewModel* overview, QWidget* parent)
    : QWidget(parent)
    , m_overview(overview)
{
    setObjectName("commMergePanel");
    m_model = new CommMergeModel(overview, this);
    m_proxy = new QSortFilterProxyModel(this);
    m_proxy->setSourceModel(m_model);
    m_proxy->setSortRole(CommMergeModel::SortRole);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    auto* row = new QHBoxLayout;
    m_stepLabel = new QLabel(this);
    m_stepBox = new QComboBox(this);
    m_stepBox->setObjectName("commStep");
    m_metricLabel = new QLabel(this);
    m_metricBox = new QComboBox(this);
    m_metricBox->setObjectName("commMetric");
    m_stepLabel->setBuddy(m_stepBox);
    m_metricLabel->setBuddy(m_metricBox);
    row->addWidget(m_stepLabel);
    row->addWidget(m_stepBox);
    row->addWidget(m_metricLabel);
    row->addWidget(m_metricBox);
    row->addStretch(1);
    m_status = new QLabel(this);
    m_status->setWordWrap(true);
    m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_table = new QTableView(this);
    m_table->setObjectName("commMergeTable");
    m_table->setModel(m_proxy);
    m_table->setSortingEnabled(true);
    m_table->horizontalHeader()->setSortIndicator(-1, Qt::AscendingOrder);
    m_table->verticalHeader()->hide();
    m_table->verticalHeader()->setDefaultSectionSize(m_table->fontMetrics().height() + 6);
    m_table->setTextElideMode(Qt::ElideMiddle);
    m_table->setWordWrap(false);
    layout->addLayout(row);
    layout->addWidget(m_status);
    layout->addWidget(m_table, 1);
    connect(m_stepBox, &QComboBox::activated, this, [this](int i) {
        m_model->setStep(m_stepBox->itemData(i).toLongLong());
    });
    connect(m_metricBox, &QComboBox::activated, this, [this](int i) { m_model->setMetric(i); });
    connect(m_model, &CommMergeModel::rebuilt, this, &CommMergePanel::refresh);
    retranslate();
}

void CommMergePanel::refresh()
{
    {
        const QSignalBlocker blockSteps(m_stepBox);
        m_stepBox->clear();
        for (const std::int64_t step : m_overview->steps())
            m_stepBox->addItem(step < 0 ? tr("(no step)") : tr("step %1").arg(step), QVariant::fromValue<qint64>(step));
        m_stepBox->setCurrentIndex(std::max(0, m_stepBox->findData(QVariant::fromValue<qint64>(m_model->step()))));
        m_stepBox->setEnabled(m_stepBox->count() > 1);
        const QSignalBlocker blockMetrics(m_metricBox);
        m_metricBox->clear();
        m_metricBox->addItems(m_model->metrics());
        m_metricBox->setCurrentIndex(m_model->metric());
    }
    QStringList lines;
    if (m_model->ranksTotal() == 0)
        lines << tr("Open a job (several ranks) to see its communication ops side by side.");
    else if (m_model->ranksDone() < m_model->ranksTotal())
        lines << tr("%1 of %2 ranks of this step compared so far.").arg(m_model->ranksDone()).arg(m_model->ranksTotal());
    else if (m_model->rowCount() == 0)
        lines << tr("No communication op (Distributed.*) in this step's compare results.");
    else
        lines << tr("merge_result's table for this step: %1 communication rows over %2 ranks.")
                     .arg(m_model->rowCount())
                     .arg(m_model->ranksDone());
    for (const auto& note : m_model->notes())
        lines << QString::fromStdString(note);
    m_status->setText(lines.join(QLatin1Char('\n')));
    m_table->resizeColumnsToContents();
}

void CommMergePanel::retranslate()
{
    m_stepLabel->setText(tr("S&tep:"));
    m_metricLabel->setText(tr("&Metric:"));
    m_table->setToolTip(tr("The same table as probescope-cli merge_result, made from this job's compare results"));
    refresh();
}

void CommMergePanel::changeEvent(QEvent* event)
{
    if (event->type() == QEvent::LanguageChange)
        retranslate();
    QWidget::changeEvent(event);
}

} // namespace probescope::ui
