// SPDX-License-Identifier: Apache-2.0
#include "ui/runutplugin/runutbackend.h"

#include "core/util/fileio.h"
#include "core/util/outputfile.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QLibrary>

#include <filesystem>
#include <string>

namespace probescope::ui {

namespace {

class UnavailableBackend final : public RunUtBackend
{
public:
    explicit UnavailableBackend(QString reason = {})
        : m_reason(std::move(reason))
    {
    }
    bool isAvailable() const override { return false; }
    QString unavailableReason() const override
    {
        return m_reason.isEmpty() ? RunUtText::tr("The run_ut API accuracy checker is not available in this build yet.")
                                  : m_reason;
    }
    RunUtResult run(const RunUtRequest&, ProgressSink&) override
    {
        RunUtResult r;
        r.error = unavailableReason();
        return r;
    }

private:
    QString m_reason;
};

} // namespace

std::unique_ptr<RunUtBackend> runUtBackend()
{
    return std::make_unique<UnavailableBackend>();
}

std::unique_ptr<RunUtBackend> loadRunUtBackend()
{
    using Factory = RunUtBackend* (*)();
    static QLibrary* plugin = nullptr; // never unloaded: LibTorch does not survive dlclose
    static Factory factory = nullptr;
    static QStringList tried;
    if (!factory && tried.isEmpty()) {
        QStringList dirs;
        if (const QString env = qEnvironmentVariable("PROBESCOPE_PLUGIN_DIR"); !env.isEmpty())
            dirs << env;
        dirs << QCoreApplication::applicationDirPath() + QStringLiteral("/../lib/probescope")
             << QStringLiteral(PROBESCOPE_RUNUT_PLUGIN_BUILD_DIR);
        for (const QString& dir : dirs) {
            auto* library = new QLibrary(QDir(dir).filePath(QStringLiteral("libprobescope-runut.so")));
            library->setLoadHints(QLibrary::PreventUnloadHint);
            if (library->load()) {
                if (auto f = reinterpret_cast<Factory>(library->resolve("probescope_make_runut_backend"))) {
                    plugin = library;
                    factory = f;
                    break;
                }
            }
            tried << library->fileName() + QStringLiteral(": ") + library->errorString();
            delete library;
        }
        if (!factory && tried.isEmpty())
            tried << QStringLiteral("?");
    }
    if (!factory)
        return std::make_unique<UnavailableBackend>(
            RunUtText::tr("The run_ut plugin could not be loaded:\n%1").arg(tried.join(QLatin1Char('\n'))));
    Q_UNUSED(plugin);
    return std::unique_ptr<RunUtBackend>(factory());
}

QStringList splitApiList(const QString& text)
{
    // Commas, semicolons and white space separate the names (one pass; no regular expression, issue 33).
    QStringList names;
    QString name;
    for (const QChar c : text) {
        if (c == QLatin1Char(',') || c == QLatin1Char(';') || c.isSpace()) {
            if (!name.isEmpty())
                names << name;
            name.clear();
        } else {
            name += c;
        }
    }
    if (!name.isEmpty())
        names << name;
    return names;
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
        // Read through the gate (a regular file, never a FIFO) and written by the one output writer: each copy is
        // claimed under the first free name (NAME.csv, NAME_1.csv, ...), never replacing a file or following a
        // symlink, complete or absent on a full disk (issue 33).
        const QFileInfo source(file);
        auto text = readTextFile(std::filesystem::path(file.toStdString()));
        if (!text) {
            if (error)
                *error = RunUtText::tr("Cannot read %1: %2").arg(file, QString::fromStdString(text.error().message));
            return written;
        }
        std::string why;
        const auto target = writeToFreeName(std::filesystem::path(dir.absolutePath().toStdString()),
                                            source.completeBaseName().toStdString(),
                                            "." + source.suffix().toStdString(), *text, why);
        if (!target) {
            if (error)
                *error = RunUtText::tr("Cannot copy %1 into %2: %3").arg(file, folder, QString::fromStdString(why));
            return written;
        }
        written << QString::fromStdString(target->string());
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
