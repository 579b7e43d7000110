// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <QString>
#include <QStringList>
#include <QUrl>
#include <QWidget>

class QProgressBar;
class QPushButton;
class QTextBrowser;

namespace probescope::ui {

class BackgroundTask;

/**
 * @brief The lower half of a tool dialog: a progress bar that follows a BackgroundTask (busy while the
 * total is unknown, then "%v of %m <unit>") above a read-only text for the outcome. The export and
 * run_ut dialogs share it, so starting, cancelling and closing behave the same in both. Files the task
 * wrote are shown as links that open the file, with an "Open folder" button for the folder they are in.
 */
class TaskProgressView : public QWidget
{
    Q_OBJECT
public:
    /// `unitFormat` is the bar's text once the total is known, e.g. tr("%v of %m APIs"); empty = percent.
    TaskProgressView(BackgroundTask& task, const QString& unitFormat, QWidget* parent = nullptr);

    /// Clears the text and shows a busy bar; call right before starting the task.
    void begin();
    /// Asks the task to stop and says so; false when nothing runs.
    bool requestCancel();
    /// Cancels a running task and blocks until its work has returned (closing a dialog).
    void cancelAndWait();
    void setText(const QString& text);
    /// `lines`, where each entry of `files` (absolute paths) found in a line is a link that opens it; the
    /// folder of the first file becomes the "Open folder" target.
    void setTextWithFiles(const QStringList& lines, const QStringList& files);
    QString text() const;
    void setPlaceholderText(const QString& text);
    /// The folder "Open folder" opens; empty while nothing was written.
    QUrl folderUrl() const { return m_folder; }
    /// Whether links and "Open folder" open with the desktop's handler (tests turn it off).
    void setOpensUrls(bool open) { m_opensUrls = open; }

signals:
    /// A written file or its folder was asked for.
    void urlRequested(const QUrl& url);

private:
    void requestUrl(const QUrl& url);

    BackgroundTask& m_task;
    QString m_unitFormat;
    QProgressBar* m_bar = nullptr;
    QTextBrowser* m_text = nullptr;
    QPushButton* m_openFolder = nullptr;
    QUrl m_folder;
    bool m_opensUrls = true;
};

} // namespace probescope::ui
