// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/session/nodestatus.h"
#include "core/session/session.h"

#include <QMetaType>

#include <memory>
#include <vector>

// Core values carried by the jobs' signals, so they can also cross queued connections.
Q_DECLARE_METATYPE(std::shared_ptr<const probescope::session::PairSkeleton>)
Q_DECLARE_METATYPE(std::shared_ptr<const probescope::session::NodeStatusTable>)
Q_DECLARE_METATYPE(std::shared_ptr<const probescope::session::PairAnalysis>)
Q_DECLARE_METATYPE(probescope::session::StatusUpdate)
Q_DECLARE_METATYPE(probescope::session::PairSummary)
Q_DECLARE_METATYPE(std::vector<probescope::session::PairSummary>)

namespace probescope::ui {

/// Registers the types above with Qt's meta-type system (idempotent; the jobs call it themselves).
void registerJobMetaTypes();

} // namespace probescope::ui
