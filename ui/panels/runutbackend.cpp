// SPDX-License-Identifier: Apache-2.0
#include "panels/runutbackend.h"

#include <QDir>
#include <QFile>
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

QStringList exportRunUtFiles(const QStringList& files, const QString& folder, QString* error)
{
    QStringList written;
    const QDir dir(folder);
    if (!dir.exists()) {
        if (error)
            *error = RunUtText::tr("%1 is not a folder.").arg(folder);
        return written;
    }
    for (const QString& file : files) {
        if (file.isEmpty())
            continue;
        const QFileInfo source(file);
        QString target = dir.filePath(source.fileName());
        for (int n = 1; QFileInfo::exists(target); ++n)
            target = dir.filePath(QStringLiteral("%1_%2.%3").arg(source.completeBaseName()).arg(n).arg(source.suffix()));
        if (!QFile::copy(file, target)) {
            if (error)
                *error = RunUtText::tr("Cannot copy %1 to %2.").arg(file, target);
            return written;
        }
        written << target;
    }
    return written;
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
    if (request.profile != QLatin1String("msprobe-1.2") && request.profile != QLatin1String("msprobe-26"))
        return RunUtText::tr("Unknown profile %1 (msprobe-1.2 or msprobe-26).").arg(request.profile);
    for (const QString& name : request.whiteList) {
        if (request.blackList.contains(name))
            return RunUtText::tr("%1 is in both the white list and the black list.").arg(name);
    }
    return {};
}

} // namespace probescope::ui
