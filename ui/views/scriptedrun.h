// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "ui/panels/settings.h"

#include <QObject>
#include <QSize>
#include <QString>
#include <QTimer>

#include <optional>

class QApplication;
class QIcon;
class QWidget;

namespace probescope::ui {

class MainWindow;
class SetupCheckPage;

/// Applies the theme and loads the compiled translation for `language` ("en", "zh_CN"), else the user's
/// language setting, else the system locale. False when a Chinese translation was wanted but not found.
bool installTranslations(QApplication& app, const QString& language = {});

/// Changes the user-interface language of the running application ("en", "zh_CN"): the translators
/// installTranslations() put in are replaced, and Qt sends every widget a LanguageChange. False when a
/// Chinese translation was wanted but not found (the application is then in English).
bool switchLanguage(QApplication& app, const QString& language);
/// The code switchLanguage() takes for a Settings language.
QString languageCode(Language language);

/// `--size WIDTHxHEIGHT` ("1366x768", each 200-16384), or nullopt when it is not that.
std::optional<QSize> parseWindowSize(const QString& text);

/// ProbeScope's icon (resources/desktop) in every size it ships as PNG, for QApplication::setWindowIcon.
QIcon applicationIcon();

/**
 * @brief `probescope --screenshot FILE [--select first-failure|NODE]`: waits for the compare, applies
 * the selection, writes a PNG of the main window, prints the selected node's full name, exits 0.
 * FILE is written through core/util/outputfile.h: a name already taken (a file, a symlink) is an error (exit 1),
 * and a failed write (a full disk) leaves nothing under FILE.
 *
 * Driven by the window's signals, never by polling or processEvents. A failed open or compare exits 1
 * with the error on stderr; a run that takes more than ten minutes exits 3.
 */
class ScriptedRun : public QObject
{
    Q_OBJECT
public:
    void begin(MainWindow* window, const QString& pngPath, const QString& selection);
    /// `--screenshot FILE A B` with two config_check packs or two checkpoints (issue 35): waits for the "Check
    /// setup" page's check, writes its PNG and prints its report lines (SetupCheckPage::reportLines); a failed check
    /// exits 1 with the error.
    void beginSetupCheck(SetupCheckPage* page, const QString& pngPath);
    /// Grabs `widget` and writes it as a PNG through the one output writer; false (said on stderr) when not written.
    static bool writeScreenshot(QWidget* widget, const QString& pngPath);
    /// Why FILE cannot be the screenshot: something (a file, a folder, a symlink even dangling) already holds the
    /// name. ProbeScope never replaces an output (docs/gui.md, "Scripted mode"); the run exits 1.
    static std::optional<QString> outputProblem(const QString& pngPath);

private:
    void finish(bool ok, const QString& error);
    /// Writes the PNG and prints what the run found, once the graph view (when shown) has its sides.
    void capture();
    static void exitLater(int code);

    MainWindow* m_window = nullptr;
    QString m_png;
    QString m_selection;
    QTimer m_timeout;
    bool m_done = false;
    bool m_captured = false;
};

} // namespace probescope::ui
