// SPDX-License-Identifier: Apache-2.0
#include "ui/jobs/setupcheckjob.h"

#include <mutex>

namespace probescope::ui {

SetupCheckOutcome runSetupCheck(const std::filesystem::path& first, const std::filesystem::path& second,
                                ProgressSink* progress)
{
    SetupCheckOutcome out;
    auto pair = setupcheck::classifySetupPair(first, second);
    if (!pair) {
        out.error = pair.error();
        return out;
    }
    out.kind = pair->first.kind;
    out.first = pair->first.path;
    out.second = pair->second.path;
    if (out.kind == setupcheck::SetupInput::Kind::Pack) {
        auto sheets = setupcheck::comparePackZips(out.first, out.second, {}, {}, progress);
        if (sheets)
            out.sheets = std::move(*sheets);
        else
            out.error = sheets.error();
    } else {
        // The log is written by the worker threads of the compare: one line at a time under a lock.
        auto lines = std::make_shared<std::pair<std::mutex, std::vector<std::string>>>();
        const ckpt::LogSink log = [lines](Severity severity, const std::string& line) {
            const std::lock_guard lock(lines->first);
            lines->second.push_back((severity == Severity::Warning ? "[WARNING] " : "[INFO] ") + line);
        };
        auto result = ckpt::compareCheckpoints(out.first, out.second, {}, log, progress);
        if (result)
            out.checkpoints = std::make_shared<const ckpt::CheckpointComparison>(std::move(*result));
        else
            out.error = result.error();
        const std::lock_guard lock(lines->first);
        out.log = lines->second;
    }
    out.cancelled = progress && progress->isCancelled();
    if (out.cancelled) {
        out.sheets.clear();
        out.checkpoints.reset();
        out.error.reset();
    }
    return out;
}

SetupCheckJob::SetupCheckJob(QObject* parent)
    : QObject(parent)
{
    connect(&m_task, &BackgroundTask::progressChanged, this, &SetupCheckJob::progressChanged);
    connect(&m_task, &BackgroundTask::finished, this, [this] {
        if (m_pending) {
            const auto next = *std::exchange(m_pending, std::nullopt);
            startNow(next.first, next.second);
            return;
        }
        m_outcome = std::move(m_running);
        emit finished();
    });
}

SetupCheckJob::~SetupCheckJob()
{
    m_task.cancel();
    m_task.waitForFinished();
}

void SetupCheckJob::start(const std::filesystem::path& first, const std::filesystem::path& second)
{
    if (m_task.isRunning()) {
        m_pending = std::pair { first, second };
        m_task.cancel();
        return;
    }
    startNow(first, second);
}

void SetupCheckJob::startNow(const std::filesystem::path& first, const std::filesystem::path& second)
{
    auto outcome = std::make_shared<SetupCheckOutcome>();
    m_running = outcome;
    m_task.start([outcome, first, second](ProgressSink& progress) {
        *outcome = runSetupCheck(first, second, &progress);
    });
}

} // namespace probescope::ui
