// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "ui/jobs/jobsupport.h"
#include "ui/jobs/metatypes.h"
#include "core/session/session.h"

#include <QObject>
#include <QString>
#include <QThreadPool>
#include <QTimer>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>

namespace probescope::ui {

/// How a pair is analysed (the compare options a user can change).
struct CompareSettings
{
    // A constructor rather than an aggregate: callers name the first options and leave the mappings unset.
    CompareSettings(unsigned threads_ = 0, bool fuzzy_ = false, compare::Profile profile_ = compare::Profile::Msprobe12)
        : threads(threads_)
        , fuzzy(fuzzy_)
        , profile(profile_)
    {
    }

    unsigned threads = 0; ///< tensor pairs compared at once (0 = one per hardware thread)
    bool fuzzy = false;
    compare::Profile profile = compare::Profile::Msprobe12;
    bool stackMode = false; ///< msprobe's stack column
    /// -dm / -cm / -am / -lm as compare::JobOptions has them (an empty path = the option without a file).
    std::optional<std::filesystem::path> dataMapping;
    std::optional<std::filesystem::path> cellMapping;
    std::optional<std::filesystem::path> apiMapping;
    std::optional<std::filesystem::path> layerMapping;
    /// The graph view's manual matches (session::AnalysisOptions::manualMatches); none = the dumps' own matching.
    std::optional<graph::VisConfig> manualMatches;
    /// The reopen cache's folder (session/paircache.h); empty = none. The controller writes a finished pair's
    /// cache there after delivering it.
    std::filesystem::path cacheDir;

    /// Copies the compare options into what session::analysePair takes (the callbacks are left alone).
    void applyTo(session::AnalysisOptions& options) const
    {
        options.threads = threads;
        options.fuzzy = fuzzy;
        options.profile = profile;
        options.stackMode = stackMode;
        options.dataMapping = dataMapping;
        options.cellMapping = cellMapping;
        options.apiMapping = apiMapping;
        options.layerMapping = layerMapping;
        options.manualMatches = manualMatches;
        options.cacheDir = cacheDir;
    }
};

/**
 * @brief Runs session::analysePair for one pair on a worker thread and reports to the GUI thread.
 *
 * Order of signals for a run: skeletonReady → layoutReady → statusBatch* → finished, or failed /
 * cancelled at any point. Batches and progress are pulled by a 50 ms timer, so a compare that
 * produces thousands of updates per second costs the GUI at most 20 signals of each per second.
 * Every run has a generation; anything a superseded run still sends is dropped, so after start()
 * or cancel() only the newest run is ever heard from. Runs are QtConcurrent runs on the controller's
 * own pool (docs/gui-jobs.md); the destructor cancels and waits for them, so closing a window mid-run
 * is safe (it waits for core to notice the cancel flag).
 */
class CompareController : public QObject
{
    Q_OBJECT

public:
    using Settings = CompareSettings;
    /// What a run calls on its worker thread; session::analysePair unless replaced.
    using Analyser = std::function<Result<std::shared_ptr<const session::PairAnalysis>>(
        const session::RankPair&, const session::AnalysisOptions&, ProgressSink*)>;

    explicit CompareController(QObject* parent = nullptr);
    ~CompareController() override;

    /// Analyses plan.pairs[pairIndex]; a run still going is cancelled and will not be heard from again.
    void start(const session::SessionPlan& plan, std::size_t pairIndex, const Settings& settings = {});
    /// Asks the current run to stop; cancelled() follows once the worker has stopped.
    void cancel();
    /// From start() until finished(), failed() or cancelled() has been emitted.
    bool isRunning() const;
    std::uint64_t generation() const { return m_generation; }
    std::size_t pairIndex() const { return m_pairIndex; }
    /// Replaces the analysis the next runs perform (tests script timing and streaming with it).
    void setAnalyser(Analyser analyser);

signals:
    void skeletonReady(std::shared_ptr<const probescope::session::PairSkeleton> skeleton);
    void layoutReady(std::shared_ptr<const probescope::session::NodeStatusTable> status);
    /// Own statuses that changed since the last batch (last value per node).
    void statusBatch(const probescope::session::StatusUpdate& update);
    /// `remainingSeconds` is negative while no estimate is possible.
    void progress(const QString& stage, double fraction, double elapsedSeconds, double remainingSeconds);
    void finished(std::shared_ptr<const probescope::session::PairAnalysis> analysis);
    void failed(const QString& message);
    void cancelled();

private:
    struct Run;

    void work(std::shared_ptr<Run> run, session::RankPair pair, Settings settings, Analyser analyser);
    void wake(std::uint64_t generation);
    /// Delivers what the current run has produced, in order; `tick` = called by the timer.
    void pump(bool tick);
    void retireCurrent();

    Analyser m_analyser;
    std::shared_ptr<Run> m_run;
    QThreadPool m_pool;
    QTimer m_timer;
    std::uint64_t m_generation = 0;
    std::size_t m_pairIndex = 0;
    std::chrono::steady_clock::time_point m_lastProgress {};
    std::chrono::steady_clock::time_point m_lastBatch {};
};

} // namespace probescope::ui
