// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <QString>
#include <QWidget>

class QPlainTextEdit;
class QProgressBar;

namespace probescope::ui {

class BackgroundTask;

/**
 * @brief The lower half of a tool dialog: a progress bar that follows a BackgroundTask (busy while the
 * total is unknown, then "%v of %m <unit>") above a read-only text for the outcome. The export and
 * run_ut dialogs share it, so starting, cancelling and closing behave the same in both.
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
    QString text() const;
    void setPlaceholderText(const QString& text);

private:
    BackgroundTask& m_task;
    QString m_unitFormat;
    QProgressBar* m_bar = nullptr;
    QPlainTextEdit* m_text = nullptr;
};

} // namespace probescope::ui
