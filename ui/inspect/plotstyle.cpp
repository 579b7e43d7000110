// SPDX-License-Identifier: Apache-2.0
#include "inspect/plotstyle.h"

#include <qcustomplot.h>

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

QCustomPlot* makePlot(QWidget* parent, const QString& xLabel, QCPTextElement** title)
{
    auto* plot = new QCustomPlot(parent);
    plot->setMinimumSize(240, 160);
    applyBaseStyle(plot);
    *title = setTitle(plot, nullptr, QString());
    plot->xAxis->setLabel(xLabel);
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
