// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <array>

#include "core/session/nodestatus.h"

#include <QColor>
#include <QIcon>
#include <QPalette>
#include <QPixmap>
#include <QString>

/**
 * @brief The status colours and icons of every view (tree, rows, legend, filter chips, plots).
 *
 * Light fills are msprobe's (gui-anchors §b.1): pass #FFFCF3, warning #FFDC7F, error #FF704D,
 * unmatched #C7C7C7. The dark variant keeps the hue order but lowers the lightness so light text
 * stays readable. Colour is never the only cue: each status also has an icon of its own shape
 * (pass circle, warning triangle, error octagon, unmatched hollow square, pending clock, no data dash)
 * and a label.
 */
namespace probescope::ui::statuspalette {

/// Background fill of a node or row in that status.
QColor fill(session::Status status, bool dark);
/// Text colour that reads well on fill(status, dark).
QColor text(session::Status status, bool dark);
/// Outline of a chip or icon (the fill darkened, as msprobe strokes its nodes).
QColor outline(session::Status status, bool dark);
/// The status's shape alone, `size` pixels square.
QPixmap pixmapOf(session::Status status, int size);
/// An icon of the status's own shape, drawn with QPainter at 16, 24, 32 and 48 px.
QIcon icon(session::Status status);
/// A legend/filter chip `height` px high: a swatch of fill(status, dark) followed by the status icon.
QPixmap chip(session::Status status, bool dark, int height = 16);
/// "Pass", "Warning", "Error", "Unmatched", "Pending", "No data" (translated).
QString label(session::Status status);
/// Whether a palette is dark (its window colour is darker than its text).
bool isDark(const QPalette& palette);

} // namespace probescope::ui::statuspalette

namespace probescope::ui {

/**
 * @brief statuspalette::icon() per status, plus a variant with a small down-pointing badge meaning "this
 * is a descendant's worse status" (the tree's collapsed modules), built on first use and kept.
 *
 * Owned by a model rather than static: pixmaps must not outlive the QGuiApplication.
 */
class StatusIcons
{
public:
    QIcon icon(session::Status status, bool fromBelow, bool dark) const;

private:
    mutable std::array<QIcon, 6 * 2 * 2> m_icons;
};

} // namespace probescope::ui
