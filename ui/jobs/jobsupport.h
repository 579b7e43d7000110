// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "jobs/jobprogress.h"
#include "util/diagnostic.h"

#include <QString>
#include <QThreadPool>

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

} // namespace probescope::ui
