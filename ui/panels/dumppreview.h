// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/util/diagnostic.h"

#include <QString>
#include <QStringList>

namespace probescope::ui {

/**
 * @brief What one side of a pair holds, as dump::discoverDump (the one discovery) finds it: the Open pair dialog
 * shows it before anything is read, and MainWindow checks it again before any compare starts.
 *
 * Only folder names and the first few hundred bytes of one dump file are read, so it runs as the user types.
 */
struct DumpPreview
{
    bool ok = false;   ///< a dump was found and discovery reported no error
    QString summary;   ///< "2 steps (step0, step1) × 1 rank (rank) · msprobe dump.json · task statistics, level mix"
    QString problem;   ///< why this side cannot be opened ("" when ok)
    QStringList notes; ///< discovery's warnings (a rank folder without a dump file, …)
};

/// `progress` (may be null): a cancel stops discovery's folder walk; the preview then says "cancelled" (not ok).
DumpPreview previewDump(const QString& path, const ProgressSink* progress = nullptr);

/// Why the pair cannot be compared: a side that discovery refuses or finds ambiguous (two dumps at the same
/// step and rank), "" when both are sound. An msprobe or ptdbg compare.json (`bench` empty) is resolved to the
/// two paths it names first. Every way into a compare (dialog, drop, recent pairs, command line) asks this
/// before planning, so an ambiguous folder is refused with a reason and never reaches the planner.
/// `progress` (may be null) is given to both sides' discovery; after a cancel the text is a problem to ignore.
QString pairProblem(const QString& npu, const QString& bench, const ProgressSink* progress = nullptr);

/// What opening (npu, bench) compares, as session::planSession plans it.
struct PairPreview
{
    bool ok = false;
    QString text;      ///< "2 pairs: step0 · rank ↔ rank, step1 · rank ↔ rank", or why nothing can be compared
    QStringList notes; ///< the planner's warnings (a step or rank on one side only, …)
};

PairPreview previewPair(const QString& npu, const QString& bench);

} // namespace probescope::ui
