// SPDX-License-Identifier: Apache-2.0
#include "ui/runutplugin/runutengine.h"

#include "core/runut/runner.h"
#include "core/runuttorch/torchreplayer.h"

namespace probescope::ui {

namespace {

QString toQ(const std::string& s) { return QString::fromStdString(s); }
QString toQ(const std::filesystem::path& p) { return QString::fromStdString(p.string()); }

std::vector<std::string> toStd(const QStringList& list)
{
    std::vector<std::string> out;
    for (const QString& s : list)
        out.push_back(s.toStdString());
    return out;
}

RunUtApiRow rowOf(const runut::ApiOutcome& outcome)
{
    RunUtApiRow row;
    row.index = static_cast<int>(outcome.index);
    row.fullName = toQ(outcome.fullName);
    row.forward = toQ(outcome.replay.forwardStatus);
    row.backward = toQ(outcome.replay.backwardStatus);
    row.overall = toQ(outcome.replay.overall());
    row.message = toQ(outcome.replay.message);
    row.detailRows = static_cast<int>(outcome.replay.rows.size());
    if (outcome.dumped) {
        row.dumpedForward = toQ(outcome.dumped->forwardStatus);
        row.dumpedBackward = toQ(outcome.dumped->backwardStatus);
        row.dumpedOverall = toQ(outcome.dumped->overall());
    }
    return row;
}

class EngineBackend final : public RunUtBackend
{
public:
    bool isAvailable() const override { return true; }
    QString unavailableReason() const override { return {}; }
    QStringList devices() const override
    {
        QStringList d { QStringLiteral("cpu") };
        if (runuttorch::cudaAvailable())
            d << QStringLiteral("cuda");
        return d;
    }
    RunUtResult run(const RunUtRequest& request, ProgressSink& progress) override
    {
        return runLive(request, progress, {});
    }
    RunUtResult runLive(const RunUtRequest& request, ProgressSink& progress, const RunUtApiSink& onApi) override
    {
        runut::RunUtOptions options;
        options.apiInfo = request.dumpJson.toStdString();
        options.outDir = request.outputDir.toStdString();
        options.filterApi = request.filterApi;
        options.whiteList = toStd(request.whiteList);
        options.blackList = toStd(request.blackList);
        options.profile = request.profile == QLatin1String("msprobe-26") ? runut::Profile::Msprobe26
                                                                          : runut::Profile::Msprobe12;
        options.replay.device = request.device.toStdString();
        const runut::ReplayOptions replay = options.replay;
        const runut::ReplayerFactory factory = [replay] { return runuttorch::makeTorchReplayer(replay); };
        std::function<void(const runut::ApiOutcome&)> forward;
        if (onApi)
            forward = [&onApi](const runut::ApiOutcome& outcome) { onApi(rowOf(outcome)); };

        RunUtResult result;
        auto summary = runut::runUt(options, factory, &progress, forward);
        if (!summary) {
            result.error = toQ(summary.error().format());
            return result;
        }
        result.cancelled = summary->cancelled;
        result.ok = !summary->cancelled;
        // A cancelled run's files are valid (they can be resumed with -csv_path), so they are listed too.
        result.resultCsv = toQ(summary->resultCsv);
        result.detailsCsv = toQ(summary->detailsCsv);
        if (summary->dumpedResultCsv)
            result.dumpedResultCsv = toQ(*summary->dumpedResultCsv);
        if (summary->dumpedDetailsCsv)
            result.dumpedDetailsCsv = toQ(*summary->dumpedDetailsCsv);
        result.summary = RunUtText::tr("%1 APIs: %2 pass, %3 warning, %4 error, %5 SKIP in %6 s")
                             .arg(summary->apis)
                             .arg(summary->passed)
                             .arg(summary->warnings)
                             .arg(summary->errors)
                             .arg(summary->skipped)
                             .arg(summary->seconds, 0, 'f', 1);
        if (!summary->firstFailing.empty())
            result.summary += QLatin1Char('\n') + RunUtText::tr("First failing API: %1").arg(toQ(summary->firstFailing));
        if (!summary->firstDumpedFailing.empty())
            result.summary += QLatin1Char('\n')
                + RunUtText::tr("First API whose dumped outputs fail against the bench: %1").arg(toQ(summary->firstDumpedFailing));
        return result;
    }
};

} // namespace

std::unique_ptr<RunUtBackend> makeRunUtEngineBackend()
{
    return std::make_unique<EngineBackend>();
}

} // namespace probescope::ui

/// The plugin's entry point (loadRunUtBackend resolves it by this name); the caller owns the result.
extern "C" Q_DECL_EXPORT probescope::ui::RunUtBackend* probescope_make_runut_backend()
{
    return probescope::ui::makeRunUtEngineBackend().release();
}
