// SPDX-License-Identifier: Apache-2.0
#include "ui/panels/settings.h"

#include "ui/models/statuspalette.h"

#include <QApplication>
#include <QPainter>
#include <QPalette>
#include <QProxyStyle>
#include <QStyleOption>
#include <QDir>
#include <QSettings>
#include <QStandardPaths>
#include <QStyle>
#include <QStyleFactory>

#include <cmath>
#include <optional>

namespace probescope::ui {

namespace {

template<typename Enum>
Enum enumValue(const QSettings& store, const char* key, Enum fallback, int count)
{
    bool ok = false;
    const int v = store.value(QLatin1String(key), static_cast<int>(fallback)).toInt(&ok);
    return ok && v >= 0 && v < count ? static_cast<Enum>(v) : fallback;
}

// "compare/dataMapping" holds the file, "compare/dataMappingOn" whether the option is given.
std::optional<QString> loadMapping(const QSettings& store, const QString& name)
{
    if (!store.value(QStringLiteral("compare/") + name + QStringLiteral("On"), false).toBool())
        return std::nullopt;
    return store.value(QStringLiteral("compare/") + name).toString();
}

void saveMapping(QSettings& store, const QString& name, const std::optional<QString>& value)
{
    store.setValue(QStringLiteral("compare/") + name + QStringLiteral("On"), value.has_value());
    store.setValue(QStringLiteral("compare/") + name, value.value_or(QString()));
}

QString profileKey(compare::Profile p)
{
    return p == compare::Profile::Msprobe26 ? QStringLiteral("msprobe-26") : QStringLiteral("msprobe-1.2");
}

// What the application looked like before the first applyTheme, so System can go back to it.
struct Original
{
    QString style;
    QPalette palette;
};
std::optional<Original>& original()
{
    static std::optional<Original> o;
    return o;
}

QPalette darkPalette()
{
    QPalette p;
    const QColor window(0x2D, 0x2D, 0x30);
    const QColor base(0x1E, 0x1E, 0x1E);
    const QColor text(0xE6, 0xE6, 0xE6);
    const QColor disabled(0x80, 0x80, 0x80);
    p.setColor(QPalette::Window, window);
    p.setColor(QPalette::WindowText, text);
    p.setColor(QPalette::Base, base);
    p.setColor(QPalette::AlternateBase, QColor(0x26, 0x26, 0x28));
    p.setColor(QPalette::ToolTipBase, QColor(0x3A, 0x3A, 0x3D));
    p.setColor(QPalette::ToolTipText, text);
    p.setColor(QPalette::PlaceholderText, disabled);
    p.setColor(QPalette::Text, text);
    p.setColor(QPalette::Button, window);
    p.setColor(QPalette::ButtonText, text);
    p.setColor(QPalette::BrightText, QColor(0xFF, 0x70, 0x4D));
    p.setColor(QPalette::Light, QColor(0x45, 0x45, 0x48));
    p.setColor(QPalette::Midlight, QColor(0x3A, 0x3A, 0x3D));
    p.setColor(QPalette::Mid, QColor(0x25, 0x25, 0x26));
    p.setColor(QPalette::Dark, QColor(0x18, 0x18, 0x18));
    p.setColor(QPalette::Shadow, Qt::black);
    p.setColor(QPalette::Highlight, QColor(0x3D, 0x6E, 0xB4));
    p.setColor(QPalette::HighlightedText, Qt::white);
    p.setColor(QPalette::Link, QColor(0x6A, 0xA7, 0xF8));
    p.setColor(QPalette::LinkVisited, QColor(0xA0, 0x8C, 0xF0));
    for (auto role : { QPalette::WindowText, QPalette::Text, QPalette::ButtonText })
        p.setColor(QPalette::Disabled, role, disabled);
    p.setColor(QPalette::Disabled, QPalette::Base, window);
    return p;
}

/// Fusion in a dark palette draws a check box's and a radio button's frame a little darker than the window, on a
/// base darker still: nearly invisible (issue 28). This style adds a frame in the text colour, half strength.
class DarkIndicatorStyle : public QProxyStyle
{
public:
    using QProxyStyle::QProxyStyle;

    void drawPrimitive(PrimitiveElement element, const QStyleOption* option, QPainter* painter,
                       const QWidget* widget) const override
    {
        QProxyStyle::drawPrimitive(element, option, painter, widget);
        if (element != PE_IndicatorCheckBox && element != PE_IndicatorRadioButton && element != PE_IndicatorItemViewItemCheck)
            return;
        QColor edge = option->palette.color(QPalette::Text);
        edge.setAlpha(option->state & State_Enabled ? 170 : 90);
        painter->save();
        painter->setRenderHint(QPainter::Antialiasing, true);
        painter->setPen(QPen(edge, 1));
        painter->setBrush(Qt::NoBrush);
        const QRectF r = QRectF(option->rect).adjusted(0.5, 0.5, -0.5, -0.5);
        if (element == PE_IndicatorRadioButton)
            painter->drawEllipse(r);
        else
            painter->drawRoundedRect(r, 2, 2);
        painter->restore();
    }
};

} // namespace

bool validBands(double warningFrom, double errorFrom, QString* why)
{
    QString reason;
    if (!std::isfinite(warningFrom) || !std::isfinite(errorFrom))
        reason = Settings::tr("Band limits must be numbers.");
    else if (warningFrom <= 0)
        reason = Settings::tr("The warning band must start above 0.");
    else if (errorFrom <= warningFrom)
        reason = Settings::tr("The error band must start above the warning band.");
    else if (errorFrom > 1)
        reason = Settings::tr("The error band must start at 1 or below.");
    if (why)
        *why = reason;
    return reason.isEmpty();
}

Settings Settings::load(const QSettings& store)
{
    Settings s;
    s.bands.scheme = enumValue(store, "colors/scheme", s.bands.scheme, 2);
    bool okW = false;
    bool okE = false;
    const double w = store.value(QStringLiteral("colors/warningFrom"), s.bands.warningFrom).toDouble(&okW);
    const double e = store.value(QStringLiteral("colors/errorFrom"), s.bands.errorFrom).toDouble(&okE);
    if (okW && okE && validBands(w, e)) {
        s.bands.warningFrom = w;
        s.bands.errorFrom = e;
    }
    s.theme = enumValue(store, "ui/theme", s.theme, 3);
    s.language = enumValue(store, "ui/language", s.language, 2);
    bool okT = false;
    const uint threads = store.value(QStringLiteral("compare/threads"), 0u).toUInt(&okT);
    s.threads = okT && threads <= kMaxThreads ? threads : 0;
    s.fuzzy = store.value(QStringLiteral("compare/fuzzy"), false).toBool();
    s.stackMode = store.value(QStringLiteral("compare/stackMode"), false).toBool();
    s.dataMapping = loadMapping(store, QStringLiteral("dataMapping"));
    s.cellMapping = loadMapping(store, QStringLiteral("cellMapping"));
    s.apiMapping = loadMapping(store, QStringLiteral("apiMapping"));
    s.layerMapping = loadMapping(store, QStringLiteral("layerMapping"));
    s.exportProfile = store.value(QStringLiteral("export/profile")).toString() == profileKey(compare::Profile::Msprobe26)
        ? compare::Profile::Msprobe26
        : compare::Profile::Msprobe12;
    s.exportXlsx = store.value(QStringLiteral("export/xlsx"), false).toBool();
    s.exportFolder = store.value(QStringLiteral("export/folder")).toString();
    s.runUtFolder = store.value(QStringLiteral("runut/folder")).toString();
    return s;
}

void Settings::save(QSettings& store) const
{
    store.setValue(QStringLiteral("colors/scheme"), static_cast<int>(bands.scheme));
    store.setValue(QStringLiteral("colors/warningFrom"), bands.warningFrom);
    store.setValue(QStringLiteral("colors/errorFrom"), bands.errorFrom);
    store.setValue(QStringLiteral("ui/theme"), static_cast<int>(theme));
    store.setValue(QStringLiteral("ui/language"), static_cast<int>(language));
    store.setValue(QStringLiteral("compare/threads"), threads);
    store.setValue(QStringLiteral("compare/fuzzy"), fuzzy);
    store.setValue(QStringLiteral("compare/stackMode"), stackMode);
    saveMapping(store, QStringLiteral("dataMapping"), dataMapping);
    saveMapping(store, QStringLiteral("cellMapping"), cellMapping);
    saveMapping(store, QStringLiteral("apiMapping"), apiMapping);
    saveMapping(store, QStringLiteral("layerMapping"), layerMapping);
    store.setValue(QStringLiteral("export/profile"), profileKey(exportProfile));
    store.setValue(QStringLiteral("export/xlsx"), exportXlsx);
    store.setValue(QStringLiteral("export/folder"), exportFolder);
    store.setValue(QStringLiteral("runut/folder"), runUtFolder);
}

Settings Settings::load()
{
    const QSettings store;
    return load(store);
}

void Settings::save() const
{
    QSettings store;
    save(store);
}

QString Settings::validate() const
{
    QString why;
    if (!validBands(bands.warningFrom, bands.errorFrom, &why))
        return why;
    if (threads > kMaxThreads)
        return Settings::tr("At most %1 compare threads.").arg(kMaxThreads);
    if (dataMapping && dataMapping->isEmpty())
        return Settings::tr("Data mapping (-dm) needs a mapping file.");
    return {};
}

bool operator==(const Settings& a, const Settings& b)
{
    return a.bands.scheme == b.bands.scheme && a.bands.warningFrom == b.bands.warningFrom
        && a.bands.errorFrom == b.bands.errorFrom && a.theme == b.theme && a.language == b.language
        && a.threads == b.threads && a.fuzzy == b.fuzzy && a.exportProfile == b.exportProfile
        && a.exportXlsx == b.exportXlsx && a.stackMode == b.stackMode && a.dataMapping == b.dataMapping
        && a.cellMapping == b.cellMapping && a.apiMapping == b.apiMapping && a.layerMapping == b.layerMapping
        && a.exportFolder == b.exportFolder && a.runUtFolder == b.runUtFolder;
}

QString defaultOutputFolder(const QString& tool)
{
    QString base = QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation);
    if (base.isEmpty())
        base = QDir::homePath();
    return QDir(base).filePath(QStringLiteral("ProbeScope/") + tool);
}

QString outputFolderOr(const QString& chosen, const QString& tool)
{
    return chosen.trimmed().isEmpty() ? defaultOutputFolder(tool) : chosen;
}

void applyTheme(QApplication& app, Theme theme)
{
    if (!original())
        original() = Original { app.style() ? app.style()->name() : QString(), app.palette() };
    switch (theme) {
    case Theme::System:
        if (!original()->style.isEmpty())
            app.setStyle(QStyleFactory::create(original()->style));
        app.setPalette(original()->palette);
        break;
    case Theme::Light:
        app.setStyle(QStyleFactory::create(QStringLiteral("Fusion")));
        app.setPalette(app.style()->standardPalette());
        break;
    case Theme::Dark:
        app.setStyle(new DarkIndicatorStyle(QStyleFactory::create(QStringLiteral("Fusion"))));
        app.setPalette(darkPalette());
        break;
    }
}

bool isDarkTheme(Theme theme)
{
    switch (theme) {
    case Theme::Light:
        return false;
    case Theme::Dark:
        return true;
    case Theme::System:
        break;
    }
    return statuspalette::isDark(QApplication::palette());
}

} // namespace probescope::ui
