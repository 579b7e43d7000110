// SPDX-License-Identifier: Apache-2.0
#include "ui/panels/placeholdertable.h"

#include <QPainter>

namespace probescope::ui {

void PlaceholderTableView::setPlaceholderText(const QString& text)
{
    if (text == m_placeholder)
        return;
    m_placeholder = text;
    viewport()->update();
}

bool PlaceholderTableView::showsPlaceholder() const
{
    return !m_placeholder.isEmpty() && (!model() || model()->rowCount() == 0);
}

void PlaceholderTableView::paintEvent(QPaintEvent* event)
{
    QTableView::paintEvent(event);
    if (!showsPlaceholder())
        return;
    QPainter p(viewport());
    p.setPen(palette().color(QPalette::PlaceholderText));
    p.drawText(viewport()->rect().adjusted(16, 16, -16, -16), Qt::AlignCenter | Qt::TextWordWrap, m_placeholder);
}

} // namespace probescope::ui
