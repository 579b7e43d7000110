// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "session/nodestatus.h"

#include <QColor>
#include <QIcon>
#include <QString>

#include <array>

namespace probescope::ui {

/**
 * @brief Fills, text colours and icons of the six statuses, for the tree and the overview.
 *
 * Light fills are msprobe's (gui-anchors §b.1): pass #FFFCF3, warning #FFDC7F, error #FF704D,
 * unmatched #C7C7C7; no data is white as msprobe paints nodes without an index. Colour is never the
 * only cue: every status has an icon shape of its own and a text label.
 */
QColor statusFill(session::Status status, bool dark);
/// Black or white, whichever reads better on statusFill(status, dark).
QColor statusTextColor(session::Status status, bool dark);
/// "pass", "warning", … as shown in the Status column.
QString statusLabel(session::Status status);

/**
 * @brief Status icons drawn with QPainter, built on first use and kept.
 *
 * Owned by a model rather than static: QPixmaps must not outlive the QGuiApplication.
 * `fromBelow` adds a small down-pointing mark: the icon shows a descendant's worse status.
 */
class StatusIcons
{
public:
    QIcon icon(session::Status status, bool fromBelow, bool dark) const;

private:
    mutable std::array<QIcon, 6 * 2 * 2> m_icons;
};

} // namespace probescope::ui
