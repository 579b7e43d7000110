// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/util/diagnostic.h"

#include <QCoreApplication>
#include <QString>
#include <QStringList>

#include <functional>
#include <memory>

namespace probescope::ui {

/// What Tools → Run run_ut… asks for (msprobe's run_ut / acc_check flags, run-ut-spec §3.1).
struct RunUtRequest
{
    QString dumpJson;        ///< -api_info: the dump.json whose APIs are replayed
    QString device = QStringLiteral("cpu"); ///< -d (this build replays on the CPU only)
    bool filterApi = false;  ///< -f / --filter_api: replay one call of each group of similar calls
    QStringList whiteList;   ///< API names (e.g. conv2d, linalg.inv); empty = all
    QStringList blackList;   ///< API names skipped; wins over the white list
    QString outputDir;       ///< -o
    /// Precision-standard dispatch: "msprobe-1.2" (per-API standard lists, the default) or "msprobe-26"
    /// (current msprobe: the benchmark standard for every float).
    QString profile = QStringLiteral("msprobe-1.2");
};

/// One judged API as the result table shows it (msprobe's result row, plus the dumped outputs' verdict).
struct RunUtApiRow
{
    int index = 0;       ///< position among the dump's forward calls
    QString fullName;    ///< "Functional.gelu.0"
    QString forward;     ///< pass, warning, error, SKIP
    QString backward;    ///< the same, or "" when the API has no backward
    QString overall;     ///< SKIP when forward is SKIP, else the worse of forward and backward
    QString message;
    QString dumpedForward;  ///< tensor dumps: the dumped outputs judged against the bench ("" otherwise)
    QString dumpedBackward;
    QString dumpedOverall;
    int detailRows = 0;  ///< rows of accuracy_checking_details
};

struct RunUtResult
{
    bool ok = false;
    bool cancelled = false;
    QString resultCsv;  ///< accuracy_checking_result_{ts}.csv
    QString detailsCsv; ///< accuracy_checking_details_{ts}.csv
    QString dumpedResultCsv;  ///< dumped_output_checking_result_{ts}.csv, when written
    QString dumpedDetailsCsv;
    QString summary;    ///< one line: APIs, pass/warning/error/SKIP, seconds
    QString error;
};

/// Receives each judged API, in dump order, from the worker thread.
using RunUtApiSink = std::function<void(const RunUtApiRow&)>;

/**
 * @brief Who actually replays the APIs. The dialog and its job only know this interface, so a real
 * backend (core/runut, LibTorch) can be dropped in without touching the UI, and tests use a fake.
 */
class RunUtBackend
{
public:
    virtual ~RunUtBackend() = default;
    virtual bool isAvailable() const = 0;
    /// Why the backend cannot run (shown in the dialog; empty when available).
    virtual QString unavailableReason() const = 0;
    /// Devices offered (-d).
    virtual QStringList devices() const { return { QStringLiteral("cpu") }; }
    /// Replays the request to the end or until `progress` says cancelled; called on a worker thread.
    /// Progress counts APIs (setRange(total), advance(done)).
    virtual RunUtResult run(const RunUtRequest& request, ProgressSink& progress) = 0;
    /// run() that also reports every judged API as soon as it is judged (for the live result table). The
    /// default reports nothing; backends that can tell override it.
    virtual RunUtResult runLive(const RunUtRequest& request, ProgressSink& progress, const RunUtApiSink& onApi)
    {
        (void)onApi;
        return run(request, progress);
    }
};

/// The fallback backend of this target, which says plainly that run_ut is not available. The replaying
/// backend (LibTorch) is makeRunUtEngineBackend() in the run_ut plugin, which loadRunUtBackend() loads;
/// keeping it out of this target keeps LibTorch out of everything that links the panels.
std::unique_ptr<RunUtBackend> runUtBackend();

/**
 * @brief The real backend from the run_ut plugin (libprobescope-runut.so, LibTorch), loaded on first call
 * and kept loaded; the "not available" backend, naming the folders searched, when it cannot be loaded.
 * Searched: $PROBESCOPE_PLUGIN_DIR, <app dir>/../lib/probescope, the build tree's lib/probescope.
 */
std::unique_ptr<RunUtBackend> loadRunUtBackend();

/**
 * @brief Copies run_ut's output files into `folder`, never overwriting: a taken name gets _1, _2… before
 * its extension. Returns the written paths; on failure `error` says which file and why, and the copies
 * already made stay.
 */
QStringList exportRunUtFiles(const QStringList& files, const QString& folder, QString* error);

/// Empty when the request can be run, else why not (translated): dump.json missing, no output folder,
/// an API name in both lists.
QString validateRunUtRequest(const RunUtRequest& request);

/// "conv2d, linalg.inv  matmul" -> {conv2d, linalg.inv, matmul}: commas and spaces separate names.
QStringList splitApiList(const QString& text);

struct RunUtText
{
    Q_DECLARE_TR_FUNCTIONS(RunUt)
};

} // namespace probescope::ui
