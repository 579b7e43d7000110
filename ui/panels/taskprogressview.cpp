// SPDX-License-Identifier: Apache-2.0
#include "ui/panels/taskprogressview.h"

#include "ui/jobs/backgroundtask.h"

#include <QDesktopServices>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QProgressBar>
#include <QPushButton>
#include <QTextBrowser>
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
    m_text = new QTextBrowser(this);
    m_text->setOpenLinks(false);
    m_text->setLineWrapMode(QTextEdit::WidgetWidth);
    m_text->setMaximumHeight(m_text->fontMetrics().lineSpacing() * 7);
    layout->addWidget(m_text);
    auto* row = new QHBoxLayout;
    row->addStretch(1);
    m_openFolder = new QPushButton(tr("Open folder"), this);
    m_openFolder->setVisible(false);
    row->addWidget(m_openFolder);
    layout->addLayout(row);
    connect(m_text, &QTextBrowser::anchorClicked, this, &TaskProgressView::requestUrl);
    connect(m_openFolder, &QPushButton::clicked, this, [this] { requestUrl(m_folder); });

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
    setText({});
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
    m_folder.clear();
    m_openFolder->setVisible(false);
}

void TaskProgressView::setTextWithFiles(const QStringList& lines, const QStringList& files)
{
    QStringList html;
    for (const QString& line : lines) {
        QString escaped = line.toHtmlEscaped();
        for (const QString& file : files) {
            const QString shown = file.toHtmlEscaped();
            if (!file.isEmpty() && escaped.contains(shown)) {
                escaped.replace(shown, QStringLiteral("<a href=\"%1\">%2</a>")
                                           .arg(QUrl::fromLocalFile(file).toString(QUrl::FullyEncoded), shown));
            }
        }
        html << escaped;
    }
    m_text->setHtml(QStringLiteral("<p style=\"white-space: pre-wrap\">%1</p>").arg(html.join(QStringLiteral("<br>"))));
    m_folder = files.isEmpty() ? QUrl() : QUrl::fromLocalFile(QFileInfo(files.front()).absolutePath());
    m_openFolder->setVisible(!files.isEmpty());
    m_openFolder->setToolTip(m_folder.toLocalFile());
}

void TaskProgressView::requestUrl(const QUrl& url)
{
    if (url.isEmpty())
        return;
    emit urlRequested(url);
    if (m_opensUrls)
        QDesktopServices::openUrl(url);
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
