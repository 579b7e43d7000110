// SPDX-License-Identifier: Apache-2.0
#include "ui/inspect/plotstyle.h"

#include <qcustomplot.h>

#include <QAction>
#include <QContextMenuEvent>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QMenu>
#include <QMessageBox>
#include <QSettings>
#include <QStandardPaths>
#include <QToolTip>

#include <array>
#include <cmath>

namespace probescope::ui::plotstyle {

QColor statusMarker(session::Status status)
{
    switch (status) {
    case session::Status::Pass:
        return QColor(0x2E8B57);
    case session::Status::Warning:
        return QColor(0xE69F00);
    case session::Status::Error:
        return QColor(0xD7301F);
    case session::Status::Unmatched:
        return QColor(0x8C8C8C);
    case session::Status::Pending:
        return QColor(0x5B8BC9);
    case session::Status::NoData:
        break;
    }
    return QColor(0xBDBDBD);
}

QColor seriesColor(int index)
{
    static constexpr std::array<QRgb, 7> kColors = { 0x0072B2, 0xD55E00, 0x009E73, 0xCC79A7,
                                                     0xE69F00, 0x56B4E9, 0x000000 };
    const auto i = static_cast<std::size_t>(index < 0 ? -index : index) % kColors.size();
    return QColor(kColors[i]);
}

void applyBaseStyle(QCustomPlot* plot)
{
    plot->setAntialiasedElements(QCP::aePlottables | QCP::aeItems | QCP::aeScatters);
    QFont font = plot->font();
    font.setPointSizeF(std::max(7.0, font.pointSizeF() * 0.9));
    for (QCPAxis* axis : { plot->xAxis, plot->yAxis }) {
        axis->setTickLabelFont(font);
        axis->setLabelFont(font);
        axis->grid()->setPen(QPen(QColor(0xE3E3E3), 0));
        axis->grid()->setSubGridVisible(false);
    }
    plot->legend->setFont(font);
    plot->legend->setBrush(QColor(255, 255, 255, 215));
    plot->legend->setBorderPen(QPen(QColor(0xC8C8C8)));
}

QCPTextElement* setTitle(QCustomPlot* plot, QCPTextElement* existing, const QString& text)
{
    if (existing) {
        existing->setText(text);
        return existing;
    }
    plot->plotLayout()->insertRow(0);
    QFont font = plot->font();
    font.setBold(true);
    auto* title = new QCPTextElement(plot, text, font);
    plot->plotLayout()->addElement(0, 0, title);
    return title;
}

namespace {

// Re-colours a plot when its palette changes (the theme switch reaches every widget as a PaletteChange)
// and offers "Save PNG…" on a right click. A child of the plot, so it lives and dies with it.
class PlotHelper : public QObject
{
public:
    explicit PlotHelper(QCustomPlot* plot)
        : QObject(plot)
        , m_plot(plot)
    {
        plot->installEventFilter(this);
    }

protected:
    bool eventFilter(QObject* watched, QEvent* event) override
    {
        if (watched != m_plot)
            return false;
        if (event->type() == QEvent::PaletteChange) {
            applyPalette(m_plot, m_plot->palette());
            m_plot->replot();
        } else if (event->type() == QEvent::ContextMenu) {
            QMenu menu(m_plot);
            QAction* save = menu.addAction(QCoreApplication::translate("probescope::ui::plotstyle", "Save PNG…"));
            if (menu.exec(static_cast<QContextMenuEvent*>(event)->globalPos()) == save)
                savePngInteractively(m_plot, m_plot->window(), QStringLiteral("plot.png"));
            return true;
        }
        return false;
    }

private:
    QCustomPlot* m_plot;
};

} // namespace

void applyPalette(QCustomPlot* plot, const QPalette& palette)
{
    const QColor base = palette.color(QPalette::Base);
    const QColor text = palette.color(QPalette::Text);
    const bool dark = base.lightness() < 128;
    plot->setBackground(base);
    plot->axisRect()->setBackground(base);
    const QColor grid = dark ? base.lighter(160) : QColor(0xE3E3E3);
    for (QCPAxis* axis : plot->axisRect()->axes()) {
        axis->setBasePen(QPen(text, 1));
        axis->setTickPen(QPen(text, 1));
        axis->setSubTickPen(QPen(text, 1));
        axis->setTickLabelColor(text);
        axis->setLabelColor(text);
        axis->grid()->setPen(QPen(grid, 0));
    }
    QColor legendBrush = base;
    legendBrush.setAlpha(215);
    plot->legend->setBrush(legendBrush);
    plot->legend->setTextColor(text);
    plot->legend->setBorderPen(QPen(dark ? base.lighter(200) : QColor(0xC8C8C8)));
    for (int i = 0; i < plot->plotLayout()->elementCount(); ++i) {
        if (auto* title = qobject_cast<QCPTextElement*>(plot->plotLayout()->elementAt(i)))
            title->setTextColor(text);
    }
}

QString savePngInteractively(QCustomPlot* plot, QWidget* parent, const QString& suggestedName)
{
    QSettings store;
    QString folder = store.value(QStringLiteral("output/pngFolder")).toString();
    if (folder.isEmpty() || !QFileInfo(folder).isDir())
        folder = QStandardPaths::writableLocation(QStandardPaths::PicturesLocation);
    if (folder.isEmpty() || !QFileInfo(folder).isDir())
        folder = QDir::homePath();
    const auto tr = [](const char* text) { return QCoreApplication::translate("probescope::ui::plotstyle", text); };
    QString path = QFileDialog::getSaveFileName(parent, tr("Save PNG"), QDir(folder).filePath(suggestedName),
                                                tr("PNG images (*.png)"));
    if (path.isEmpty())
        return {};
    if (!path.endsWith(QLatin1String(".png"), Qt::CaseInsensitive))
        path += QStringLiteral(".png");
    if (!plot->savePng(path)) {
        QMessageBox::warning(parent, tr("Save PNG"), tr("Could not write %1.").arg(QDir::toNativeSeparators(path)));
        return {};
    }
    store.setValue(QStringLiteral("output/pngFolder"), QFileInfo(path).absolutePath());
    // Said where it was written, over the plot, for a few seconds (nothing was said before, issue 28).
    QToolTip::showText(plot->mapToGlobal(plot->rect().center()),
                       QCoreApplication::translate("probescope::ui::plotstyle", "Saved %1").arg(QDir::toNativeSeparators(path)),
                       plot, QRect(), 6000);
    return path;
}

QCustomPlot* makePlot(QWidget* parent, const QString& xLabel, QCPTextElement** title)
{
    auto* plot = new QCustomPlot(parent);
    plot->setMinimumSize(240, 160);
    applyBaseStyle(plot);
    *title = setTitle(plot, nullptr, QString());
    plot->xAxis->setLabel(xLabel);
    applyPalette(plot, plot->palette());
    new PlotHelper(plot);
    return plot;
}

QCPItemText* addCentredMessage(QCustomPlot* plot)
{
    auto* item = new QCPItemText(plot);
    item->position->setType(QCPItemPosition::ptAxisRectRatio);
    item->position->setCoords(0.5, 0.45);
    item->setPositionAlignment(Qt::AlignCenter);
    item->setColor(QColor(0x606060));
    return item;
}

QString formatNumber(double value)
{
    if (std::isnan(value))
        return QStringLiteral("nan");
    if (std::isinf(value))
        return value > 0 ? QStringLiteral("inf") : QStringLiteral("-inf");
    return QString::number(value, 'g', 7);
}

} // namespace probescope::ui::plotstyle
