// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/session/nodestatus.h"

#include <QColor>
#include <QString>

class QCustomPlot;
class QCPItemText;
class QCPTextElement;
class QPalette;
class QWidget;

namespace probescope::ui::plotstyle {

/**
 * @brief Marker colour of a node's own status on a white plot.
 *
 * The tree's fills (ui/models statuspalette::fill) are pale by design, to sit behind text; a 6-pixel marker
 * needs saturated colours of the same hues.
 */
QColor statusMarker(session::Status status);

/// A colour-blind-safe categorical colour (Okabe-Ito), cycling.
QColor seriesColor(int index);

/// Shared look: antialiasing, light grid, a font a little smaller than the widget's.
void applyBaseStyle(QCustomPlot* plot);

/// A styled plot with a title row and an x-axis label, as every chart of this folder starts. It follows
/// the palette (light/dark theme) and has a context menu with "Save PNG…".
QCustomPlot* makePlot(QWidget* parent, const QString& xLabel, QCPTextElement** title);

/// Colours the plot's background, axes, grid, legend and title from `palette` (Base and Text), so a plot
/// is dark in the dark theme. makePlot's plots call it on every palette change.
void applyPalette(QCustomPlot* plot, const QPalette& palette);

/// Asks for a file (in the folder last saved to, else Pictures) and writes the plot there as a PNG; a
/// failure is said in a message box. Returns the path written, or "" when cancelled or failed.
QString savePngInteractively(QCustomPlot* plot, QWidget* parent, const QString& suggestedName);

/// A grey text centred in the axis rect, for "nothing to show" (it is part of an exported PNG too).
QCPItemText* addCentredMessage(QCustomPlot* plot);

/// Adds (or updates) a title row above the axis rect, so exported PNGs say what they show.
QCPTextElement* setTitle(QCustomPlot* plot, QCPTextElement* existing, const QString& text);

/// "1.163048", "4594.52", "3.1e-09", "nan", "inf": 7 significant digits at most.
QString formatNumber(double value);

} // namespace probescope::ui::plotstyle
