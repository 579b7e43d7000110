// SPDX-License-Identifier: Apache-2.0
#pragma once
// A run_ut backend for the UI tests: reports the API rows it is given while it "runs", then writes the two CSVs, as
// a replaying backend does (tst_runut_ui's live table and export, tst_leftovers' run_ut result in Chinese).

#include "ui/models/nodebadges.h"
#include "ui/panels/runutdialog.h"
#include "ui/runutplugin/runutbackend.h"

#include <QList>
#include <QSignalSpy>
#include <QString>

#include <chrono>
#include <cstdint>
#include <fstream>
#include <thread>
#include <utility>

namespace probescope::testing {

/// One judged API: overall SKIP when forward is, else the worse of forward and backward (a backward SKIP aside).
inline ui::RunUtApiRow runUtRow(int index, const char* name, const char* fwd, const char* bwd, const char* dumped = "")
{
    ui::RunUtApiRow r;
    r.index = index;
    r.fullName = name;
    r.forward = fwd;
    r.backward = bwd;
    r.overall = QString(fwd) == "SKIP" ? QStringLiteral("SKIP")
                                       : ui::worseRunUtStatus(fwd, QString(bwd) == "SKIP" ? "" : bwd);
    r.dumpedForward = dumped;
    r.dumpedOverall = dumped;
    return r;
}

/// Reports `rows` one every `pause`, then writes accuracy_checking_result/details_20240101000000.csv in the request's
/// output folder.
class FakeLiveRunUt : public ui::RunUtBackend
{
public:
    FakeLiveRunUt(QList<ui::RunUtApiRow> rows, std::chrono::milliseconds pause)
        : m_rows(std::move(rows))
        , m_pause(pause)
    {
    }
    bool isAvailable() const override { return true; }
    QString unavailableReason() const override { return {}; }
    ui::RunUtResult run(const ui::RunUtRequest& request, ProgressSink& progress) override
    {
        return runLive(request, progress, {});
    }
    ui::RunUtResult runLive(const ui::RunUtRequest& request, ProgressSink& progress,
                            const ui::RunUtApiSink& onApi) override
    {
        progress.setRange(static_cast<std::uint64_t>(m_rows.size()));
        for (int i = 0; i < m_rows.size(); ++i) {
            std::this_thread::sleep_for(m_pause);
            if (onApi)
                onApi(m_rows[i]);
            progress.advance(static_cast<std::uint64_t>(i + 1));
        }
        ui::RunUtResult r;
        r.ok = true;
        r.resultCsv = request.outputDir + "/accuracy_checking_result_20240101000000.csv";
        r.detailsCsv = request.outputDir + "/accuracy_checking_details_20240101000000.csv";
        std::ofstream(r.resultCsv.toStdString()) << "API name,Forward Test Success,Backward Test Success,Message\n";
        std::ofstream(r.detailsCsv.toStdString()) << "API Name\n";
        return r;
    }

private:
    QList<ui::RunUtApiRow> m_rows;
    std::chrono::milliseconds m_pause;
};

/// Runs `dialog` (a fake backend's) with its output in `outputDir` and waits up to 10 s for it to finish.
inline bool runToTheEnd(ui::RunUtDialog& dialog, const QString& outputDir)
{
    ui::RunUtRequest request = dialog.request();
    request.outputDir = outputDir;
    dialog.setRequest(request);
    dialog.task().setPollInterval(10);
    QSignalSpy done(&dialog, &ui::RunUtDialog::runFinished);
    dialog.startRun();
    return done.wait(10000);
}

} // namespace probescope::testing
