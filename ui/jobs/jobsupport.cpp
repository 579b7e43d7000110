// SPDX-License-Identifier: Apache-2.0
#include "ui/jobs/jobsupport.h"

#include "ui/jobs/metatypes.h"

#include <algorithm>

namespace probescope::ui {

void prepareJobPool(QThreadPool& pool)
{
    // A superseded compare keeps its thread until core sees the cancel flag (a tensor pair at most);
    // the new run must not queue behind it, and nothing here runs more than a few runs at once.
    pool.setMaxThreadCount(std::max(pool.maxThreadCount(), 64));
}

bool isCancellation(const Diagnostic& diagnostic)
{
    return diagnostic.id == "session.cancelled";
}

QString formatDiagnostic(const Diagnostic& diagnostic)
{
    return QString::fromStdString(diagnostic.format());
}

double RemainingTimeEstimator::add(double elapsed, double fraction)
{
    constexpr double kWindow = 3.0; // seconds of history the rate is taken over
    m_samples.emplace_back(elapsed, fraction);
    while (m_samples.size() > 2 && m_samples[1].first <= elapsed - kWindow)
        m_samples.pop_front();
    const auto& [t0, f0] = m_samples.front();
    const double dt = elapsed - t0;
    const double df = fraction - f0;
    if (dt < 0.5 || df <= 0.0)
        return -1.0;
    return std::max(0.0, (1.0 - fraction) * dt / df);
}

void registerJobMetaTypes()
{
    qRegisterMetaType<std::shared_ptr<const session::PairSkeleton>>();
    qRegisterMetaType<std::shared_ptr<const session::NodeStatusTable>>();
    qRegisterMetaType<std::shared_ptr<const session::PairAnalysis>>();
    qRegisterMetaType<session::StatusUpdate>();
    qRegisterMetaType<session::PairSummary>();
    qRegisterMetaType<std::vector<session::PairSummary>>();
}

} // namespace probescope::ui
