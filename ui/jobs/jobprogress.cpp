// SPDX-License-Identifier: Apache-2.0
#include "ui/jobs/jobprogress.h"

#include <algorithm>

namespace probescope::ui {

void JobProgress::reset()
{
    m_total.store(0, std::memory_order_relaxed);
    m_done.store(0, std::memory_order_relaxed);
    m_cancelled.store(false, std::memory_order_relaxed);
}

double JobProgress::fraction() const
{
    const std::uint64_t total = m_total.load(std::memory_order_relaxed);
    if (total == 0)
        return 0.0;
    return std::clamp(double(m_done.load(std::memory_order_relaxed)) / double(total), 0.0, 1.0);
}

} // namespace probescope::ui
