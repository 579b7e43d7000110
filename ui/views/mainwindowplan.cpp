// SPDX-License-Identifier: Apache-2.0
// Opening a job without holding the GUI thread (issue 37): the discovery of both sides and the plan of pairs run on
// the worker pool with progress and Cancel; openInputs() continues with the plan when it arrives.
#include "ui/views/mainwindow.h"
#include "ui/jobs/planjob.h"
#include "ui/panels/dumppreview.h"

namespace probescope::ui {

void MainWindow::buildPlanJob()
{
    m_planJob = new PlanJob(this);
    connect(m_planJob, &PlanJob::progressChanged, this, [this](qint64 done, qint64 total, double elapsed) {
        const double fraction = total > 0 ? double(done) / double(total) : 0.0;
        onProgress(done == 0 ? tr("Checking both sides") : tr("Planning the pairs"), fraction, elapsed, -1.0);
    });
    connect(m_planJob, &PlanJob::finished, this, [this] {
        setBusy(isComparing());
        openInputs(m_planKey.npu, m_planKey.bench, m_planKey.pairIndex);
    });
    connect(m_planJob, &PlanJob::cancelled, this, [this] {
        // Nothing of the cancelled open was applied: what was shown before stays as it was.
        setBusy(isComparing());
        say([=, this] { return tr("Opening cancelled."); });
        emit analysisFinished(false, tr("cancelled"));
    });
}

bool MainWindow::isPlanning() const { return m_planJob && m_planJob->isRunning(); }

std::optional<Result<session::SessionPlan>> MainWindow::takePlan(const QString& npu, const QString& bench, int pairIndex)
{
    const PlanKey key { npu, bench, pairIndex };
    if (!m_planJob->isRunning() && key.npu == m_planKey.npu && key.bench == m_planKey.bench
        && key.pairIndex == m_planKey.pairIndex) {
        if (auto ready = m_planJob->takeResult())
            return ready;
    }
    m_planKey = key;
    // Discovery first, as the Open pair dialog shows it: a side it refuses or finds ambiguous (two dumps at one step
    // and rank) is refused with its reason ("ui.open"), whichever way it came, and never reaches the planner.
    m_planJob->start([npu, bench](ProgressSink& progress) -> Result<session::SessionPlan> {
        progress.setRange(2); // the two sides checked, then the pairs planned
        // Both stages walk the sides' folders with the cancel: a cancelled open stops within a folder.
        const QString problem = pairProblem(npu, bench, &progress);
        if (progress.isCancelled())
            return makeError("session.cancelled", {}, "cancelled");
        if (!problem.isEmpty())
            return makeError("ui.open", {}, problem.toStdString());
        progress.advance(1);
        return session::planSession(npu.toStdString(), bench.toStdString(), &progress);
    });
    // A pair or a small job is planned within m_planWaitMs and opens in one go, as before; a larger job shows progress
    // and Cancel at once and opens when its plan arrives, so the GUI thread is never held longer than that (the rank
    // map's budget per interaction is 100 ms).
    if (m_planJob->waitFor(m_planWaitMs))
        return m_planJob->takeResult();
    setBusy(true);
    say([=, this] { return tr("Reading the folders of %1…").arg(npu); });
    return std::nullopt;
}

} // namespace probescope::ui
