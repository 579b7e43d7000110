// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "panels/backgroundtask.h"
#include "panels/runutbackend.h"

#include <QDialog>

#include <memory>

class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QPushButton;

namespace probescope::ui {

class TaskProgressView;

/**
 * @brief Tools → Run run_ut…: dump.json, device, -f (filter similar calls), white and black lists and the
 * output folder, then Run replays through a RunUtBackend on a worker thread with a progress bar and
 * Cancel and shows the result CSV paths. When the backend is not available its reason is shown at the
 * top and Run stays disabled with that reason as its tooltip.
 */
class RunUtDialog : public QDialog
{
    Q_OBJECT
public:
    /// Uses this build's backend (runUtBackend()).
    explicit RunUtDialog(QWidget* parent = nullptr);
    RunUtDialog(std::unique_ptr<RunUtBackend> backend, QWidget* parent = nullptr);
    ~RunUtDialog() override;

    RunUtRequest request() const;
    void setRequest(const RunUtRequest& request);
    /// Whether Run is enabled; runBlockedReason() says why not.
    bool canRun() const;
    QString runBlockedReason() const;
    /// The banner text (the backend's unavailable reason), empty when available.
    QString availabilityText() const;
    bool isRunning() const { return m_task.isRunning(); }
    const RunUtResult& lastResult() const { return m_result; }
    QString resultText() const;
    BackgroundTask& task() { return m_task; }

public slots:
    void startRun();
    void cancelRun();
    void reject() override;

signals:
    void runFinished(bool ok, const QString& resultCsv);

private:
    void onFinished();
    void updateState();

    std::unique_ptr<RunUtBackend> m_backend;
    BackgroundTask m_task;
    std::shared_ptr<RunUtResult> m_running;
    RunUtResult m_result;
    QLabel* m_banner = nullptr;
    QLineEdit* m_dumpJson = nullptr;
    QComboBox* m_device = nullptr;
    QCheckBox* m_filter = nullptr;
    QLineEdit* m_white = nullptr;
    QLineEdit* m_black = nullptr;
    QLineEdit* m_output = nullptr;
    TaskProgressView* m_progress = nullptr;
    QPushButton* m_browseDump = nullptr;
    QPushButton* m_browseOutput = nullptr;
    QPushButton* m_run = nullptr;
    QPushButton* m_cancel = nullptr;
};

} // namespace probescope::ui
