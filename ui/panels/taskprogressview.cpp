// SPDX-License-Identifier: Apache-2.0
#include "ui/panels/taskprogressview.h"

#include "ui/jobs/backgroundtask.h"

#include <QPlainTextEdit>
#include <QProgressBar>
#include <QVBoxLayout>

#include <algorithm>
#include <climits>

namespace probescope::ui {

TaskProgressView::TaskProgressView(BackgroundTask& task, const QString& unitFormat, QWidget* parent)
    : QWidget(parent)
    , m_task(task)
    , m_unitFormat(unitFormat)
{
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    m_bar = new QProgressBar(this);
    m_bar->setVisible(false);
    layout->addWidget(m_bar);
    m_text = new QPlainTextEdit(this);
    m_text->setReadOnly(true);
    m_text->setMaximumHeight(m_text->fontMetrics().lineSpacing() * 6);
    layout->addWidget(m_text);

    connect(&m_task, &BackgroundTask::progressChanged, this, [this](qint64 done, qint64 total) {
        // Some work never says how much there is (a statistics compare): a busy bar until the end.
        m_bar->setRange(0, total > 0 ? static_cast<int>(std::min<qint64>(total, INT_MAX)) : 0);
        if (total > 0) {
            m_bar->setValue(static_cast<int>(std::min(done, total)));
            m_bar->setFormat(m_unitFormat.isEmpty() ? QStringLiteral("%p%") : m_unitFormat);
        }
    });
    connect(&m_task, &BackgroundTask::finished, this, [this] { m_bar->setVisible(false); });
}

void TaskProgressView::begin()
{
    m_text->clear();
    m_bar->setRange(0, 0);
    m_bar->setVisible(true);
}

bool TaskProgressView::requestCancel()
{
    if (!m_task.isRunning())
        return false;
    m_task.cancel();
    m_text->setPlainText(tr("Cancelling…"));
    return true;
}

void TaskProgressView::cancelAndWait()
{
    if (m_task.isRunning()) {
        m_task.cancel();
        m_task.waitForFinished();
    }
}

void TaskProgressView::setText(const QString& text)
{
    m_text->setPlainText(text);
}

QString TaskProgressView::text() const
{
    return m_text->toPlainText();
}

void TaskProgressView::setPlaceholderText(const QString& text)
{
    m_text->setPlaceholderText(text);
}

} // namespace probescope::ui
