// SPDX-License-Identifier: Apache-2.0
#include "jobs/jobsupport.h"

#include "jobs/metatypes.h"

#include <algorithm>

namespace probescope::ui {

double RunProgress::fraction() const
{
    const std::uint64_t total = m_total.load(std::memory_order_relaxed);
    if (total == 0)
        return 0.0;
    return std::clamp(double(m_done.load(std::memory_order_relaxed)) / double(total), 0.0, 1.0);
}

void RetiredThreads::add(std::thread thread, std::shared_ptr<const std::atomic<bool>> ended)
{
    if (thread.joinable())
        m_threads.emplace_back(std::move(thread), std::move(ended));
}

void RetiredThreads::reap()
{
    for (auto it = m_threads.begin(); it != m_threads.end();) {
        if (it->second && it->second->load()) {
            it->first.join();
            it = m_threads.erase(it);
        } else {
            ++it;
        }
    }
}

void RetiredThreads::joinAll()
{
    for (auto& entry : m_threads)
        entry.first.join();
    m_threads.clear();
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
