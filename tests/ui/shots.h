// SPDX-License-Identifier: Apache-2.0
#pragma once
// Screenshots the UI tests take for a reader to look at: written only when $PROBESCOPE_SHOTS_DIR is set.

#include <QByteArray>
#include <QString>
#include <QWidget>

#include <filesystem>

namespace probescope::testing {

/// `widget` grabbed to $PROBESCOPE_SHOTS_DIR/`name`.png (the folder is created); nothing without the variable.
inline void shoot(QWidget* widget, const char* name)
{
    const QByteArray dir = qgetenv("PROBESCOPE_SHOTS_DIR");
    if (dir.isEmpty())
        return;
    std::filesystem::create_directories(dir.toStdString());
    widget->grab().save(QString::fromUtf8(dir) + "/" + name + ".png");
}

} // namespace probescope::testing
