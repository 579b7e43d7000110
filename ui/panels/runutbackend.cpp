// SPDX-License-Identifier: Apache-2.0
#include "panels/runutbackend.h"

#include <QFileInfo>
#include <QRegularExpression>

namespace probescope::ui {

namespace {

class UnavailableBackend final : public RunUtBackend
{
public:
    bool isAvailable() const override { return false; }
    QString unavailableReason() const override
    {
        return RunUtText::tr("The run_ut API accuracy checker is not available in this build yet.");
    }
    RunUtResult run(const RunUtRequest&, ProgressSink&) override
    {
        RunUtResult r;
        r.error = unavailableReason();
        return r;
    }
};

} // namespace

std::unique_ptr<RunUtBackend> runUtBackend()
{
    return std::make_unique<UnavailableBackend>();
}

QStringList splitApiList(const QString& text)
{
    static const QRegularExpression separators(QStringLiteral("[,;\\s]+"));
    return text.split(separators, Qt::SkipEmptyParts);
}

QString validateRunUtRequest(const RunUtRequest& request)
{
    if (request.dumpJson.isEmpty())
        return RunUtText::tr("Choose the dump.json to replay.");
    const QFileInfo dump(request.dumpJson);
    if (!dump.isFile())
        return RunUtText::tr("%1 is not a file.").arg(request.dumpJson);
    if (request.outputDir.isEmpty())
        return RunUtText::tr("Choose an output folder.");
    for (const QString& name : request.whiteList) {
        if (request.blackList.contains(name))
            return RunUtText::tr("%1 is in both the white list and the black list.").arg(name);
    }
    return {};
}

} // namespace probescope::ui
