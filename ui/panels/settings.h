// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/compare/pipeline/comparerun.h"
#include "core/session/nodestatus.h"

#include <QCoreApplication>
#include <QString>

#include <optional>

class QApplication;
class QSettings;

namespace probescope::ui {

enum class Theme : int { System = 0, Light = 1, Dark = 2 };
enum class Language : int { English = 0, SimplifiedChinese = 1 };

/**
 * @brief The user's preferences, as a plain value. load()/save() map it to QSettings keys
 * ("colors/scheme", "colors/warningFrom", "colors/errorFrom", "ui/theme", "ui/language",
 * "compare/threads", "compare/fuzzy", "compare/stackMode", the mapping options, "export/profile", "export/xlsx",
 * "export/folder", "runut/folder"). Values that are missing or out
 * of range fall back to the defaults, so a damaged settings file never breaks the start.
 */
struct Settings
{
    session::ColorBands bands;
    Theme theme = Theme::System;
    Language language = Language::English; ///< takes effect on the next start
    unsigned threads = 0;                  ///< tensor pairs compared at once; 0 = one per hardware thread
    bool fuzzy = false;                    ///< msprobe's -f
    bool stackMode = false;                ///< msprobe's stack mode: the NPU_Stack_Info column (-s)
    /// msprobe's mapping options: set = the option is given; an empty path = given without a file (-cm/-am/-lm
    /// use their built-in mappings then; -dm needs a file). Keys "compare/<name>Mapping" and "...MappingOn".
    std::optional<QString> dataMapping;
    std::optional<QString> cellMapping;
    std::optional<QString> apiMapping;
    std::optional<QString> layerMapping;
    compare::Profile exportProfile = compare::Profile::Msprobe12;
    bool exportXlsx = false;
    /// Where the last export / run_ut wrote (empty: defaultOutputFolder()). Keys "export/folder", "runut/folder".
    QString exportFolder;
    QString runUtFolder;

    static Settings load(const QSettings& store);
    void save(QSettings& store) const;
    /// The application's settings (QSettings() with the organisation and application names set by main).
    static Settings load();
    void save() const;

    /// Empty when the settings are usable, else why not (translated).
    QString validate() const;
    friend bool operator==(const Settings& a, const Settings& b);

    Q_DECLARE_TR_FUNCTIONS(Settings) // last: the macro ends in "private:"
};

/// 0 < warningFrom < errorFrom <= 1; `why` gets the reason when not.
bool validBands(double warningFrom, double errorFrom, QString* why = nullptr);

/// Where a tool writes when the user has not chosen yet: <Documents>/ProbeScope/<tool> ("compare", "run_ut"),
/// never inside a dump folder. Created when something is written.
QString defaultOutputFolder(const QString& tool);
/// `chosen` when set, else defaultOutputFolder(tool).
QString outputFolderOr(const QString& chosen, const QString& tool);

/// The highest thread count offered (the compare runs this many tensor pairs at once).
constexpr unsigned kMaxThreads = 256;

/**
 * @brief Applies a theme: Light and Dark use the Fusion style with a light or dark QPalette; System
 * restores the style and palette the application started with.
 */
void applyTheme(QApplication& app, Theme theme);
/// Whether `theme` shows dark (System follows the current palette).
bool isDarkTheme(Theme theme);

} // namespace probescope::ui
