// SPDX-License-Identifier: Apache-2.0
#include "jobs/jobsupport.h"

#include "jobs/metatypes.h"

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

void registerJobMetaTypes()
{
    qRegisterMetaType<std::shared_ptr<const session::PairSkeleton>>();
    qRegisterMetaType<std::shared_ptr<const session::NodeStatusTable>>();
    qRegisterMetaType<std::shared_ptr<const session::PairAnalysis>>();
    qRegisterMetaType<session::StatusUpdate>();
    qRegisterMetaType<session::PairSummary>();
}

} // namespace probescope::ui
