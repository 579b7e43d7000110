// SPDX-License-Identifier: Apache-2.0
#include "models/statuspalette.h"

#include <QImage>
#include <QPainter>
#include <QPainterPath>
#include <QPixmap>
#include <QPolygonF>

#include <algorithm>
#include <cmath>

namespace probescope::ui {

using session::Status;

namespace {

struct Fill
{
    QRgb light;
    QRgb dark;
};

// Indexed by Status (NoData, Pending, Pass, Unmatched, Warning, Error). Pending gets a cool tint no
// band uses, so "not computed yet" never reads as pass. Dark fills keep the hue order at a lightness
// where light text stays readable.
constexpr std::array<Fill, 6> kFills = { {
    { 0xFFFFFFFF, 0xFF2B2B2B }, // no data
    { 0xFFE8F0FA, 0xFF28384A }, // pending
    { 0xFFFFFCF3, 0xFF3A3D31 }, // pass
    { 0xFFC7C7C7, 0xFF555555 }, // unmatched
    { 0xFFFFDC7F, 0xFF7A5C10 }, // warning
    { 0xFFFF704D, 0xFF8E2C18 }, // error
} };

std::size_t slot(Status s)
{
    const auto i = static_cast<std::size_t>(s);
    return i < kFills.size() ? i : 0;
}

// Relative luminance (sRGB, WCAG) decides black or white text.
double luminance(const QColor& c)
{
    auto channel = [](double v) { return v <= 0.03928 ? v / 12.92 : std::pow((v + 0.055) / 1.055, 2.4); };
    return 0.2126 * channel(c.redF()) + 0.7152 * channel(c.greenF()) + 0.0722 * channel(c.blueF());
}

// Icons use the light fills with a darker stroke in both palettes: small shapes need the contrast.
void drawIcon(QPainter& p, Status status, bool fromBelow, bool dark, double size)
{
    const double margin = size * 0.08;
    const QRectF box(margin, margin, size - 2 * margin, size - 2 * margin);
    const QPointF c = box.center();
    const double r = box.width() / 2;
    const QColor body = statusFill(status, false);
    const QColor edge = status == Status::NoData ? QColor(dark ? 0xB0B0B0 : 0x808080) : body.darker(170);
    const double stroke = std::max(1.0, size / 14.0);
    p.setPen(QPen(edge, stroke, Qt::SolidLine, Qt::RoundCap, Qt::RoundJoin));
    p.setBrush(body);
    QPen mark(QColor(0x303030), std::max(1.5, size / 9.0), Qt::SolidLine, Qt::RoundCap, Qt::RoundJoin);
    switch (status) {
    case Status::Pass:
        p.drawEllipse(box);
        p.setPen(QPen(QColor(0x3F7A2A), mark.widthF(), Qt::SolidLine, Qt::RoundCap, Qt::RoundJoin));
        p.setBrush(Qt::NoBrush);
        p.drawPolyline(QPolygonF({ QPointF(c.x() - r * 0.45, c.y()), QPointF(c.x() - r * 0.1, c.y() + r * 0.4),
                                   QPointF(c.x() + r * 0.5, c.y() - r * 0.4) }));
        break;
    case Status::Warning:
        p.drawPolygon(QPolygonF({ QPointF(c.x(), box.top()), QPointF(box.right(), box.bottom()),
                                  QPointF(box.left(), box.bottom()) }));
        p.setPen(mark);
        p.drawLine(QPointF(c.x(), box.top() + r * 0.65), QPointF(c.x(), box.bottom() - r * 0.62));
        p.drawPoint(QPointF(c.x(), box.bottom() - r * 0.28));
        break;
    case Status::Error: {
        QPolygonF octagon;
        for (int i = 0; i < 8; ++i) {
            const double a = (22.5 + 45.0 * i) * M_PI / 180.0;
            octagon << QPointF(c.x() + r * std::cos(a), c.y() + r * std::sin(a));
        }
        p.drawPolygon(octagon);
        mark.setColor(Qt::white);
        p.setPen(mark);
        const double d = r * 0.36;
        p.drawLine(QPointF(c.x() - d, c.y() - d), QPointF(c.x() + d, c.y() + d));
        p.drawLine(QPointF(c.x() + d, c.y() - d), QPointF(c.x() - d, c.y() + d));
        break;
    }
    case Status::Unmatched:
        // Hollow and dashed: nothing on the bench side.
        p.setPen(QPen(QColor(0x5A5A5A), stroke, Qt::DashLine));
        p.drawRect(box.adjusted(r * 0.12, r * 0.12, -r * 0.12, -r * 0.12));
        break;
    case Status::Pending:
        p.drawEllipse(box);
        p.setPen(QPen(QColor(0x3A5A80), std::max(1.2, size / 12.0), Qt::SolidLine, Qt::RoundCap));
        p.drawLine(c, QPointF(c.x(), c.y() - r * 0.6));
        p.drawLine(c, QPointF(c.x() + r * 0.45, c.y()));
        break;
    case Status::NoData:
        p.setPen(QPen(edge, std::max(1.5, size / 8.0), Qt::SolidLine, Qt::RoundCap));
        p.drawLine(QPointF(box.left() + r * 0.3, c.y()), QPointF(box.right() - r * 0.3, c.y()));
        break;
    }
    if (fromBelow) {
        // A small down-pointing badge in the lower right: "this comes from a descendant".
        const double b = size * 0.42;
        const QRectF badge(size - b, size - b, b, b);
        p.setPen(QPen(dark ? QColor(0xF0F0F0) : QColor(0x202020), std::max(1.0, size / 20.0)));
        p.setBrush(dark ? QColor(0x202020) : QColor(0xFFFFFF));
        p.drawPolygon(QPolygonF({ badge.topLeft(), badge.topRight(),
                                  QPointF(badge.center().x(), badge.bottom()) }));
    }
}

QPixmap renderIcon(Status status, bool fromBelow, bool dark, int size)
{
    QImage image(size, size, QImage::Format_ARGB32_Premultiplied);
    image.fill(Qt::transparent);
    QPainter painter(&image);
    painter.setRenderHint(QPainter::Antialiasing);
    drawIcon(painter, status, fromBelow, dark, size);
    painter.end();
    return QPixmap::fromImage(image);
}

} // namespace

QColor statusFill(Status status, bool dark)
{
    const Fill& f = kFills[slot(status)];
    return QColor::fromRgba(dark ? f.dark : f.light);
}

QColor statusTextColor(Status status, bool dark)
{
    return luminance(statusFill(status, dark)) > 0.18 ? QColor(0x1A1A1A) : QColor(0xF2F2F2);
}

QString statusLabel(Status status)
{
    return QString::fromLatin1(session::statusName(status));
}

QIcon StatusIcons::icon(Status status, bool fromBelow, bool dark) const
{
    const std::size_t i = slot(status) * 4 + (fromBelow ? 2 : 0) + (dark ? 1 : 0);
    QIcon& cached = m_icons[i];
    if (cached.isNull()) {
        for (const int size : { 16, 24, 32, 48 })
            cached.addPixmap(renderIcon(status, fromBelow, dark, size));
    }
    return cached;
}

} // namespace probescope::ui
