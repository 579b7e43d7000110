// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "ui/jobs/jobprogress.h"
#include "core/util/diagnostic.h"

#include <QString>
#include <QThreadPool>

#include <deque>
#include <utility>

namespace probescope::ui {

/**
 * @brief Gives `pool` the shape of a job owner's pool (CompareController, OverviewJob): every run starts
 * at once on a thread of its own, even while superseded runs are still on their way to notice their
 * cancel flag. The owner cancels its runs and calls pool.waitForDone() in its destructor, before its
 * members go, because the runs post to it.
 */
void prepareJobPool(QThreadPool& pool);

/// What core's cancelled analyses return (session.cancelled).
bool isCancellation(const Diagnostic& diagnostic);
/// "file:line:col: error [id]: message", as a QString.
QString formatDiagnostic(const Diagnostic& diagnostic);

/**
 * @brief Seconds left of a job from its progress samples, by the rate of the last few seconds.
 *
 * A run's stages go at different speeds (loading, then tensor pairs, then verdicts), so extrapolating from
 * the start says "1.7 s left" at 0.7 s of a 7.5 s compare; the recent rate follows the stage in progress.
 * Unknown (negative) until there is half a second of samples with progress in them.
 */
class RemainingTimeEstimator
{
public:
    void reset() { m_samples.clear(); }
    /// Adds the sample (seconds since the start, fraction done) and returns the seconds left, or -1.
    double add(double elapsed, double fraction);

private:
    std::deque<std::pair<double, double>> m_samples;
};

} // namespace probescope::ui
