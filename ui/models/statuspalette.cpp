// SPDX-License-Identifier: Apache-2.0
#include "ui/models/statuspalette.h"

#include <QCoreApplication>
#include <QPainter>
#include <QPainterPath>
#include <QPixmap>
#include <QPolygonF>

#include <array>
#include <cmath>

namespace probescope::ui::statuspalette {

using session::Status;

namespace {

struct Colors
{
    const char* light;
    const char* dark;
};

// Indexed by Status (NoData, Pending, Pass, Unmatched, Warning, Error). NoData is white in msprobe
// ("no index"); Pending is a cool tint no other band uses, so "not computed yet" never reads as pass.
constexpr std::array<Colors, 6> kFills = { {
    { "#FFFFFF", "#2B2B2B" }, // no data
    { "#E8F0FA", "#28384A" }, // pending
    { "#FFFCF3", "#3A3D31" }, // pass
    { "#C7C7C7", "#555555" }, // unmatched
    { "#FFDC7F", "#7A5C10" }, // warning
    { "#FF704D", "#8E2C18" }, // error
} };

std::size_t indexOf(Status s)
{
    const auto i = static_cast<std::size_t>(s);
    return i < kFills.size() ? i : 0;
}

void drawShape(QPainter& p, Status status, double size)
{
    const double m = size * 0.1;
    const QRectF box(m, m, size - 2 * m, size - 2 * m);
    const QColor body = fill(status, false);
    const QColor edge = outline(status, false);
    QPen pen(edge, std::max(1.0, size / 12.0));
    pen.setJoinStyle(Qt::RoundJoin);
    p.setPen(pen);
    p.setBrush(body);
    const QPointF c = box.center();
    const double r = box.width() / 2;
    switch (status) {
    case Status::Pass: {
        p.drawEllipse(box);
        // A check mark: the shape alone already differs, the mark helps at a glance.
        QPen mark(QColor("#4D7A2A"), std::max(1.5, size / 9.0), Qt::SolidLine, Qt::RoundCap, Qt::RoundJoin);
        p.setPen(mark);
        p.setBrush(Qt::NoBrush);
        p.drawPolyline(QPolygonF({ QPointF(c.x() - r * 0.45, c.y()), QPointF(c.x() - r * 0.1, c.y() + r * 0.38),
                                   QPointF(c.x() + r * 0.5, c.y() - r * 0.4) }));
        break;
    }
    case Status::Warning: {
        p.drawPolygon(QPolygonF({ QPointF(c.x(), box.top()), QPointF(box.right(), box.bottom()),
                                  QPointF(box.left(), box.bottom()) }));
        QPen mark(QColor("#5A4000"), std::max(1.5, size / 9.0), Qt::SolidLine, Qt::RoundCap);
        p.setPen(mark);
        p.drawLine(QPointF(c.x(), box.top() + r * 0.7), QPointF(c.x(), box.bottom() - r * 0.6));
        p.drawPoint(QPointF(c.x(), box.bottom() - r * 0.28));
        break;
    }
    case Status::Error: {
        QPolygonF octagon;
        for (int i = 0; i < 8; ++i) {
            const double a = (22.5 + 45.0 * i) * M_PI / 180.0;
            octagon << QPointF(c.x() + r * std::cos(a), c.y() + r * std::sin(a));
        }
        p.drawPolygon(octagon);
        QPen mark(Qt::white, std::max(1.5, size / 9.0), Qt::SolidLine, Qt::RoundCap);
        p.setPen(mark);
        const double d = r * 0.38;
        p.drawLine(QPointF(c.x() - d, c.y() - d), QPointF(c.x() + d, c.y() + d));
        p.drawLine(QPointF(c.x() + d, c.y() - d), QPointF(c.x() - d, c.y() + d));
        break;
    }
    case Status::Unmatched: {
        // Hollow: "nothing on the other side".
        QPen dashed(QColor("#5A5A5A"), std::max(1.0, size / 10.0), Qt::DashLine);
        p.setPen(dashed);
        p.setBrush(body);
        p.drawRect(box.adjusted(r * 0.1, r * 0.1, -r * 0.1, -r * 0.1));
        break;
    }
    case Status::Pending: {
        p.drawEllipse(box);
        QPen hand(QColor("#3A5A80"), std::max(1.2, size / 12.0), Qt::SolidLine, Qt::RoundCap);
        p.setPen(hand);
        p.drawLine(c, QPointF(c.x(), c.y() - r * 0.6));
        p.drawLine(c, QPointF(c.x() + r * 0.45, c.y()));
        break;
    }
    case Status::NoData: {
        QPen dash(QColor("#8A8A8A"), std::max(1.5, size / 8.0), Qt::SolidLine, Qt::RoundCap);
        p.setPen(dash);
        p.drawLine(QPointF(box.left() + r * 0.3, c.y()), QPointF(box.right() - r * 0.3, c.y()));
        break;
    }
    }
}

QPixmap pixmap(Status status, int size)
{
    QPixmap pm(size, size);
    pm.fill(Qt::transparent);
    QPainter p(&pm);
    p.setRenderHint(QPainter::Antialiasing);
    drawShape(p, status, size);
    return pm;
}

} // namespace

QColor fill(Status status, bool dark)
{
    const Colors& c = kFills[indexOf(status)];
    return QColor(QString::fromLatin1(dark ? c.dark : c.light));
}

QColor text(Status status, bool dark)
{
    Q_UNUSED(status);
    // Every light fill is light and every dark fill is dark, so one text colour per theme suffices.
    return dark ? QColor("#F0F0F0") : QColor("#1A1A1A");
}

QColor outline(Status status, bool dark)
{
    const QColor f = fill(status, dark);
    return dark ? f.lighter(160) : f.darker(160);
}

QPixmap pixmapOf(Status status, int size) { return pixmap(status, size); }

QIcon icon(Status status)
{
    // Not cached in a static: pixmaps must not outlive QGuiApplication. Views that paint many rows keep
    // their own copies (NodeRowsModel does).
    QIcon i;
    for (int size : { 16, 24, 32, 48 })
        i.addPixmap(pixmap(status, size));
    return i;
}

QPixmap chip(Status status, bool dark, int height)
{
    const double swatch = height * 0.65;
    QPixmap pm(static_cast<int>(swatch) + 4 + height, height);
    pm.fill(Qt::transparent);
    QPainter p(&pm);
    p.setRenderHint(QPainter::Antialiasing);
    p.setPen(QPen(outline(status, dark), 1));
    p.setBrush(fill(status, dark));
    p.drawRoundedRect(QRectF(0.5, height * 0.15 + 0.5, swatch, height * 0.7), 2, 2);
    p.drawPixmap(static_cast<int>(swatch) + 4, 0, pixmap(status, height));
    return pm;
}

QString label(Status status)
{
    switch (status) {
    case Status::NoData:
        return QCoreApplication::translate("StatusPalette", "No data");
    case Status::Pending:
        return QCoreApplication::translate("StatusPalette", "Pending");
    case Status::Pass:
        return QCoreApplication::translate("StatusPalette", "Pass");
    case Status::Unmatched:
        return QCoreApplication::translate("StatusPalette", "Unmatched");
    case Status::Warning:
        return QCoreApplication::translate("StatusPalette", "Warning");
    case Status::Error:
        return QCoreApplication::translate("StatusPalette", "Error");
    }
    return {};
}

bool isDark(const QPalette& palette)
{
    return palette.color(QPalette::Window).lightness() < palette.color(QPalette::WindowText).lightness();
}

} // namespace probescope::ui::statuspalette

namespace probescope::ui {

using statuspalette::pixmapOf;

QIcon StatusIcons::icon(session::Status status, bool fromBelow, bool dark) const
{
    const auto s = std::min<std::size_t>(static_cast<std::size_t>(status), 5);
    QIcon& cached = m_icons[s * 4 + (fromBelow ? 2 : 0) + (dark ? 1 : 0)];
    if (!cached.isNull())
        return cached;
    for (const int size : { 16, 24, 32, 48 }) {
        QPixmap pm = pixmapOf(status, size);
        if (fromBelow) {
            // A small down-pointing badge in the lower right: "this comes from a descendant".
            QPainter p(&pm);
            p.setRenderHint(QPainter::Antialiasing);
            const double b = size * 0.42;
            const QRectF badge(size - b, size - b, b, b);
            p.setPen(QPen(dark ? QColor(0xF0F0F0) : QColor(0x202020), std::max(1.0, size / 20.0)));
            p.setBrush(dark ? QColor(0x202020) : QColor(0xFFFFFF));
            p.drawPolygon(QPolygonF({ badge.topLeft(), badge.topRight(), QPointF(badge.center().x(), badge.bottom()) }));
        }
        cached.addPixmap(pm);
    }
    return cached;
}

} // namespace probescope::ui
