// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/compare/pipeline/comparerun.h"
#include "ui/jobs/backgroundtask.h"
#include "ui/panels/settings.h"
#include "core/session/session.h"

#include <QDialog>
#include <QObject>
#include <QStringList>

#include <filesystem>
#include <memory>

class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QPushButton;

namespace probescope::ui {

class TaskProgressView;

/// What the export writes: msprobe's compare_result CSV (and XLSX), or msprobe's graph db of the pair as
/// `probescope-cli graph` writes it (msprobe 26's or 8.3's tables; docs/graph.md).
enum class ExportFormat { Csv, VisDb26, VisDb83 };

/// What File → Export comparison… runs: compare::runCompareJob on the pair's two dump.json files, or
/// graph::writeGraphDb on the pair's two rank folders.
struct ExportRequest
{
    compare::CompareInput input;
    std::filesystem::path outDir;
    compare::JobOptions options;
    ExportFormat format = ExportFormat::Csv;
    std::filesystem::path npuRankDir; ///< the rank folders the graph is built from (ExportFormat::VisDb*)
    std::filesystem::path benchRankDir;
};

/// The export of an analysed pair with the profile, XLSX, fuzzy and thread settings; the NPU stack
/// column is written when the analysis had it (msprobe 1.2's -s) and stack.json is there.
ExportRequest exportRequestFor(const session::PairAnalysis& analysis, const Settings& settings,
                               const std::filesystem::path& outDir);

struct ExportOutcome
{
    bool ok = false;
    bool cancelled = false;
    QStringList files; ///< every file written (CSV, then XLSX and advisor when written)
    QStringList notes; ///< what a graph export says about the run (where it differs from msprobe's)
    QString error;     ///< the diagnostic, formatted, when !ok
};

/// Runs an export to the end (blocking; ExportJob calls it on a worker thread). Never overwrites a file:
/// runCompareJob picks "_1", "_2"… names when a result of the same second exists.
ExportOutcome runExport(const ExportRequest& request, ProgressSink* progress);

/// runExport on the thread pool with progress and Cancel.
class ExportJob : public QObject
{
    Q_OBJECT
public:
    explicit ExportJob(QObject* parent = nullptr);

    bool start(const ExportRequest& request);
    void cancel() { m_task.cancel(); }
    bool isRunning() const { return m_task.isRunning(); }
    void waitForFinished() { m_task.waitForFinished(); }
    BackgroundTask& task() { return m_task; }
    /// The outcome of the last finished run.
    const ExportOutcome& outcome() const { return m_outcome; }

signals:
    void progressChanged(qint64 done, qint64 total);
    void finished();

private:
    BackgroundTask m_task;
    std::shared_ptr<ExportOutcome> m_running;
    ExportOutcome m_outcome;
};

/**
 * @brief File → Export comparison CSV…: output folder, profile, XLSX, stack column and fuzzy options,
 * then Export runs an ExportJob with a progress bar and Cancel and lists the written paths (or the error).
 */
class ExportDialog : public QDialog
{
    Q_OBJECT
public:
    ExportDialog(std::shared_ptr<const session::PairAnalysis> analysis, const Settings& settings,
                 QWidget* parent = nullptr);
    ~ExportDialog() override;

    QString outputFolder() const;
    void setOutputFolder(const QString& folder);
    compare::Profile profile() const;
    void setProfile(compare::Profile profile);
    bool xlsx() const;
    void setXlsx(bool on);
    ExportFormat format() const;
    void setFormat(ExportFormat format);
    ExportRequest request() const;
    bool isRunning() const { return m_job.isRunning(); }
    ExportJob& job() { return m_job; }
    /// What the result area shows (written paths, or the error).
    QString resultText() const;

public slots:
    void startExport();
    void cancelExport();
    void reject() override;

signals:
    /// A run finished; `files` are the paths written (empty on error or cancel).
    void exportFinished(const QStringList& files);

private:
    void onFinished();
    void updateState();

    std::shared_ptr<const session::PairAnalysis> m_analysis;
    Settings m_settings;
    ExportJob m_job;
    QLineEdit* m_folder = nullptr;
    QPushButton* m_browse = nullptr;
    QComboBox* m_format = nullptr;
    QComboBox* m_profile = nullptr;
    QCheckBox* m_xlsx = nullptr;
    QCheckBox* m_stack = nullptr;
    QCheckBox* m_fuzzy = nullptr;
    TaskProgressView* m_progress = nullptr;
    QPushButton* m_export = nullptr;
    QPushButton* m_cancel = nullptr;
    QPushButton* m_close = nullptr;
};

} // namespace probescope::ui
