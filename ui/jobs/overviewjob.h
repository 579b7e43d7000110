// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "ui/jobs/comparecontroller.h"
#include "ui/jobs/jobsupport.h"
#include "ui/jobs/metatypes.h"
#include "core/session/session.h"

#include <QObject>
#include <QString>
#include <QThreadPool>

#include <cstdint>
#include <memory>
#include <vector>

namespace probescope::ui {

/**
 * @brief Analyses several pairs one after the other in the background and reports their summaries,
 * for the rank overview. Each analysis is dropped once summarised, so memory holds one pair.
 *
 * Summaries go out in batches, at most one every kBatchInterval (and at the end): a job of thousands of
 * small pairs would otherwise update the overview thousands of times a second.
 *
 * Signals of a superseded or cancelled run are dropped as in CompareController; runs are
 * QtConcurrent runs on the job's own pool, and the destructor cancels and waits for them.
 */
class OverviewJob : public QObject
{
    Q_OBJECT

public:
    static constexpr int kBatchIntervalMs = 100;

    explicit OverviewJob(QObject* parent = nullptr);
    ~OverviewJob() override;

    /// The listed pairs, in order (a run still going is cancelled first).
    void start(const session::SessionPlan& plan, std::vector<std::size_t> pairIndexes,
               const CompareSettings& settings = {});
    void startStep(const session::SessionPlan& plan, std::int64_t step, const CompareSettings& settings = {});
    void startAll(const session::SessionPlan& plan, const CompareSettings& settings = {});
    void cancel();
    bool isRunning() const { return m_running; }

signals:
    void pairStarted(std::size_t pairIndex);
    /// Pairs summarised since the last batch, in the order they finished.
    void summariesReady(const std::vector<probescope::session::PairSummary>& summaries);
    void pairFailed(std::size_t pairIndex, const QString& message);
    /// Pairs done (summarised or failed) out of the pairs of this run.
    void progress(std::size_t done, std::size_t total);
    void finished();
    void cancelled();

private:
    struct Run;

    void work(std::shared_ptr<Run> run);
    /// Runs `deliver` on the GUI thread unless the run has been superseded by then.
    template<typename F>
    void post(std::uint64_t generation, F deliver);

    std::shared_ptr<Run> m_run;
    QThreadPool m_pool;
    std::uint64_t m_generation = 0;
    bool m_running = false;
};

} // namespace probescope::ui
