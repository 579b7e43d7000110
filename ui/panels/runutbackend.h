// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "util/diagnostic.h"

#include <QCoreApplication>
#include <QString>
#include <QStringList>

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
};

struct RunUtResult
{
    bool ok = false;
    bool cancelled = false;
    QString resultCsv;  ///< accuracy_checking_result_{ts}.csv
    QString detailsCsv; ///< accuracy_checking_details_{ts}.csv
    QString error;
};

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
};

/// The backend of this build: today one that says plainly that run_ut is not available yet.
std::unique_ptr<RunUtBackend> runUtBackend();

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
