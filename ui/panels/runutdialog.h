// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "ui/jobs/backgroundtask.h"
#include "ui/models/nodebadges.h"
#include "ui/runutplugin/runutbackend.h"

#include <QDialog>
#include <QElapsedTimer>

#include <memory>
#include <mutex>

class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QTableView;

namespace probescope::ui {

class RunUtResultModel;
class RunUtStatusFilter;
class TaskProgressView;

/**
 * @brief Tools → Run run_ut…: dump.json, device, -f (filter similar calls), white and black lists and the
 * output folder, then Run replays through a RunUtBackend on a worker thread with a progress bar and
 * Cancel and shows the result CSV paths. When the backend is not available its reason is shown at the
 * top and Run stays disabled with that reason as its tooltip.
 *
 * Judged APIs fill a result table while the run goes (sortable; filtered by verdict with four toggles),
 * verdictsChanged() hands them to the tree's badges, and Export copies the written CSVs to a chosen folder
 * without overwriting anything.
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
    RunUtResultModel* resultModel() const { return m_results; }
    RunUtStatusFilter* resultFilter() const { return m_filterProxy; }
    QTableView* resultView() const { return m_resultView; }
    /// The files the last run wrote (result, details, and the dumped-output pair when written).
    QStringList writtenFiles() const;
    /// Copies writtenFiles() into `folder` (never overwriting); the copies, or empty with `error` set.
    QStringList exportTo(const QString& folder, QString* error = nullptr);

public slots:
    void startRun();
    void cancelRun();
    void reject() override;

signals:
    void runFinished(bool ok, const QString& resultCsv);
    /// Every API judged so far (after each batch of live rows), for the tree's badges.
    void verdictsChanged(const QString& dumpJson, const QList<RunUtVerdict>& verdicts);
    /// A result row was double-clicked: show this API ("Functional.gelu.0") in the tree.
    void apiActivated(const QString& fullName);

private:
    void onFinished();
    void updateState();
    void drainLiveRows();
    void applyStatusToggles();
    void exportFiles();

    struct LiveRows
    {
        std::mutex mutex;
        QList<RunUtApiRow> rows;
    };

    std::unique_ptr<RunUtBackend> m_backend;
    BackgroundTask m_task;
    std::shared_ptr<RunUtResult> m_running;
    QElapsedTimer m_elapsed; ///< the run's wall time, as the user waited for it
    std::shared_ptr<LiveRows> m_live;
    QString m_runningDump;
    RunUtResult m_result;
    QLabel* m_banner = nullptr;
    QLabel* m_blocked = nullptr;
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
    QComboBox* m_profile = nullptr;
    RunUtResultModel* m_results = nullptr;
    RunUtStatusFilter* m_filterProxy = nullptr;
    QTableView* m_resultView = nullptr;
    QList<QCheckBox*> m_statusToggles;
    QPushButton* m_export = nullptr;
};

} // namespace probescope::ui
