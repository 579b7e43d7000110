// SPDX-License-Identifier: Apache-2.0
#include "ui/views/scriptedrun.h"

#include "ui/panels/settings.h"
#include "ui/views/mainwindow.h"
#include "ui/views/setupcheckpage.h"
#include "ui/models/diagnosticsmodel.h"

#include "core/util/outputfile.h"

#include <QApplication>
#include <QBuffer>
#include <QIcon>
#include <QLibraryInfo>
#include <QLocale>
#include <QPixmap>
#include <QPointer>
#include <QSettings>
#include <QTranslator>

#include <cstdio>
#include <utility>
#include <filesystem>

namespace probescope::ui {

namespace {

// The translators this file installed (ours and Qt's own), so a language switch can take them out again.
QList<QPointer<QTranslator>>& installedTranslators()
{
    static QList<QPointer<QTranslator>> list;
    return list;
}

} // namespace

bool switchLanguage(QApplication& app, const QString& language)
{
    for (const QPointer<QTranslator>& t : installedTranslators()) {
        if (t) {
            QApplication::removeTranslator(t);
            delete t;
        }
    }
    installedTranslators().clear();
    if (!language.startsWith(QLatin1String("zh")))
        return true;
    auto* ours = new QTranslator(&app);
    const bool loaded = ours->load(QStringLiteral(":/i18n/probescope_zh_CN.qm"));
    if (loaded) {
        QApplication::installTranslator(ours);
        installedTranslators().append(ours);
    } else {
        delete ours;
    }
    auto* qt = new QTranslator(&app);
    if (qt->load(QLocale(QLocale::Chinese, QLocale::China), QStringLiteral("qtbase"), QStringLiteral("_"),
                 QLibraryInfo::path(QLibraryInfo::TranslationsPath))) {
        QApplication::installTranslator(qt);
        installedTranslators().append(qt);
    } else {
        delete qt;
    }
    return loaded;
}

QString languageCode(Language language)
{
    return language == Language::SimplifiedChinese ? QStringLiteral("zh_CN") : QStringLiteral("en");
}

bool installTranslations(QApplication& app, const QString& override)
{
    const Settings settings = Settings::load();
    applyTheme(app, settings.theme);
    // An explicit choice wins; before the user chose, the system locale decides.
    QString language = override;
    if (language.isEmpty())
        language = QSettings().contains(QStringLiteral("ui/language")) ? languageCode(settings.language)
                                                                       : QLocale::system().name();
    return switchLanguage(app, language);
}

std::optional<QSize> parseWindowSize(const QString& text)
{
    const QStringList parts = text.split(QLatin1Char('x'));
    if (parts.size() != 2)
        return std::nullopt;
    bool okW = false;
    bool okH = false;
    const int w = parts[0].toInt(&okW);
    const int h = parts[1].toInt(&okH);
    if (!okW || !okH || w < 200 || h < 200 || w > 16384 || h > 16384)
        return std::nullopt;
    return QSize(w, h);
}

QIcon applicationIcon()
{
    // PNGs rather than the SVG: the SVG icon engine is a separate Qt package the app does not depend on.
    QIcon icon;
    for (const int size : { 16, 24, 32, 48, 64, 128, 256 })
        icon.addFile(QStringLiteral(":/icons/probescope-%1.png").arg(size), QSize(size, size));
    return icon;
}

// The result may be known before the event loop runs (an input that cannot be opened), when
// QCoreApplication::exit() would be lost; a queued call reaches the loop once it starts.
void ScriptedRun::exitLater(int code)
{
    QTimer::singleShot(0, qApp, [code] { QCoreApplication::exit(code); });
}

namespace {

std::filesystem::path screenshotPath(const QString& png)
{
    return std::filesystem::path(png.toStdString()); // main() takes UTF-8 paths only
}

QString takenMessage(const QString& png)
{
    return QStringLiteral("%1 already exists; --screenshot never replaces a file (nor writes through a link): remove "
                          "it or name another file")
        .arg(png);
}

} // namespace

std::optional<QString> ScriptedRun::outputProblem(const QString& pngPath)
{
    // Said before the pair is opened, so a script learns it at once; the write itself claims the name atomically.
    std::error_code ec;
    const auto status = std::filesystem::symlink_status(screenshotPath(pngPath), ec);
    if (!ec && status.type() != std::filesystem::file_type::not_found)
        return takenMessage(pngPath);
    return std::nullopt;
}

bool ScriptedRun::writeScreenshot(QWidget* widget, const QString& pngPath)
{
    const QPixmap shot = widget->grab();
    // Encoded in memory, then written by the one output writer (issue 33): claimed under FILE only when
    // complete (a full disk leaves nothing), never replacing a file and never following a symlink at FILE.
    QByteArray png;
    QBuffer buffer(&png);
    if (!buffer.open(QIODevice::WriteOnly) || !shot.save(&buffer, "PNG")) {
        std::fprintf(stderr, "probescope: cannot encode the PNG for %s\n", qPrintable(pngPath));
        return false;
    }
    if (const auto failure = writeFileAtomically(screenshotPath(pngPath), std::string_view(png.constData(),
                                                                                         static_cast<std::size_t>(png.size())),
                                                 ReplaceMode::Never)) {
        if (failure->nameTaken)
            std::fprintf(stderr, "probescope: %s\n", qPrintable(takenMessage(pngPath)));
        else
            std::fprintf(stderr, "probescope: %s\n", failure->message.c_str());
        return false;
    }
    return true;
}

void ScriptedRun::beginSetupCheck(SetupCheckPage* page, const QString& pngPath)
{
    m_png = pngPath;
    connect(page, &SetupCheckPage::finished, this, [this, page](bool ok, const QString& error) {
        if (std::exchange(m_done, true))
            return;
        m_timeout.stop();
        if (!ok) {
            std::fprintf(stderr, "probescope: %s\n", qPrintable(error));
            exitLater(1);
            return;
        }
        // One turn of the event loop lets the tables lay out before the page is grabbed.
        QTimer::singleShot(0, this, [this, page] {
            if (!writeScreenshot(page, m_png)) {
                exitLater(1);
                return;
            }
            for (const QString& line : page->reportLines())
                std::printf("%s\n", qPrintable(line));
            std::fflush(stdout);
            exitLater(0);
        });
    });
    m_timeout.setSingleShot(true);
    connect(&m_timeout, &QTimer::timeout, this, [] {
        std::fprintf(stderr, "probescope: the setup check did not finish within ten minutes\n");
        QCoreApplication::exit(3);
    });
    m_timeout.start(10 * 60 * 1000);
}

void ScriptedRun::begin(MainWindow* window, const QString& pngPath, const QString& selection)
{
    m_window = window;
    window->setQuiet(true);
    m_png = pngPath;
    m_selection = selection.isEmpty() ? QStringLiteral("first-failure") : selection;
    connect(window, &MainWindow::analysisFinished, this, &ScriptedRun::finish);
    m_timeout.setSingleShot(true);
    connect(&m_timeout, &QTimer::timeout, this, [] {
        std::fprintf(stderr, "probescope: the compare did not finish within ten minutes\n");
        QCoreApplication::exit(3);
    });
    m_timeout.start(10 * 60 * 1000);
}

void ScriptedRun::finish(bool ok, const QString& error)
{
    if (m_done)
        return;
    m_done = true;
    m_timeout.stop();
    if (!ok) {
        std::fprintf(stderr, "probescope: %s\n", qPrintable(error));
        exitLater(1);
        return;
    }
    const bool selected = m_selection == QLatin1String("first-failure") ? m_window->selectFirstFailure()
                                                                         : m_window->selectNodeByKey(m_selection);
    if (!selected && m_selection != QLatin1String("first-failure")) {
        std::fprintf(stderr, "probescope: no node named %s\n", qPrintable(m_selection));
        exitLater(1);
        return;
    }
    // The picture waits until the window has settled (the timeout above still bounds the run): the graph view's
    // sides are made on a worker after the compare, and a job's overview may then open the job's origin (another
    // compare, whose selection is the one printed).
    const auto settled = [this] {
        return !m_window->isComparing() && !m_window->isOverviewRunning() && m_window->isGraphViewReady();
    };
    const auto tryCapture = [this, settled] {
        if (settled() && !std::exchange(m_captured, true))
            capture();
    };
    if (!settled()) {
        connect(m_window, &MainWindow::graphViewUpdated, this, tryCapture);
        connect(m_window, &MainWindow::overviewFinished, this, tryCapture, Qt::QueuedConnection);
        connect(m_window, &MainWindow::analysisFinished, this, tryCapture, Qt::QueuedConnection);
        return;
    }
    m_captured = true;
    capture();
}

void ScriptedRun::capture()
{
    // One turn of the event loop lets the view lay out the selection before the window is grabbed.
    QTimer::singleShot(0, this, [this] {
        if (!writeScreenshot(m_window, m_png)) {
            exitLater(1);
            return;
        }
        // A graph file (.vis, .vis.db, .trend.db) reports its graphs first, one line each, then the selection.
        for (const QString& line : m_window->graphFileReport())
            std::printf("%s\n", qPrintable(line));
        std::printf("%s\n", qPrintable(m_window->selectedNodeKey()));
        std::fflush(stdout);
        // A pair with load errors was salvaged for the window (its banner says so); a script must not take that
        // for a clean result: the errors go to stderr as file:line:col, and the exit status is 1, as the CLI's
        // --salvage gives (docs/reliability.md).
        bool errors = false;
        for (const Diagnostic& d : m_window->diagnosticsModel()->diagnostics()) {
            if (d.severity == Severity::Error) {
                std::fprintf(stderr, "%s\n", d.format().c_str());
                errors = true;
            }
        }
        exitLater(errors ? 1 : 0);
    });
}

} // namespace probescope::ui
