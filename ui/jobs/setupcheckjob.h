// SPDX-License-Identifier: Apache-2.0
#pragma once
// The "Check setup" page's work (issue 35, docs/config-check.md "In the GUI"): two config_check packs compared into
// result.xlsx's sheets, or two Megatron/MindSpeed checkpoints compared parameter by parameter, on the thread pool with
// progress and Cancel.

#include "core/ckpt/ckptcompare.h"
#include "core/compare/output/xlsxwriter.h"
#include "core/setupcheck/setupinputs.h"
#include "ui/jobs/backgroundtask.h"

#include <QObject>

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace probescope::ui {

/// What one setup check gave. Immutable once published.
struct SetupCheckOutcome
{
    setupcheck::SetupInput::Kind kind = setupcheck::SetupInput::Kind::None;
    std::filesystem::path first;  ///< the pack or checkpoint used (a run's folder resolved to its pack)
    std::filesystem::path second;
    std::vector<compare::XlsxSheet> sheets;                      ///< packs: summary first, then one per checker
    std::shared_ptr<const ckpt::CheckpointComparison> checkpoints; ///< checkpoints
    std::vector<std::string> log;                                ///< the checkpoint loader's lines (warnings)
    std::optional<Diagnostic> error;
    bool cancelled = false;
};

/// Classifies both inputs and runs the compare (blocking; SetupCheckJob calls it on a worker thread).
SetupCheckOutcome runSetupCheck(const std::filesystem::path& first, const std::filesystem::path& second,
                                ProgressSink* progress);

/// runSetupCheck on the thread pool. Starting another check while one runs cancels it; only the last is reported.
class SetupCheckJob : public QObject
{
    Q_OBJECT
public:
    explicit SetupCheckJob(QObject* parent = nullptr);
    ~SetupCheckJob() override;

    void start(const std::filesystem::path& first, const std::filesystem::path& second);
    void cancel() { m_task.cancel(); }
    bool isRunning() const { return m_task.isRunning() || m_pending.has_value(); }
    void waitForFinished() { m_task.waitForFinished(); }
    BackgroundTask& task() { return m_task; }
    std::shared_ptr<const SetupCheckOutcome> outcome() const { return m_outcome; }

signals:
    void progressChanged(qint64 done, qint64 total);
    void finished();

private:
    void startNow(const std::filesystem::path& first, const std::filesystem::path& second);

    BackgroundTask m_task;
    std::shared_ptr<SetupCheckOutcome> m_running;
    std::optional<std::pair<std::filesystem::path, std::filesystem::path>> m_pending;
    std::shared_ptr<const SetupCheckOutcome> m_outcome;
};

} // namespace probescope::ui
