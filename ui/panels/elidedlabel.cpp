// SPDX-License-Identifier: Apache-2.0
#include "ui/panels/elidedlabel.h"

#include <QFontMetrics>
#include <QResizeEvent>

namespace probescope::ui {

ElidedLabel::ElidedLabel(QWidget* parent)
    : QLabel(parent)
{
    setTextFormat(Qt::PlainText);
    setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
}

void ElidedLabel::setText(const QString& text)
{
    m_full = text;
    relayout();
}

QSize ElidedLabel::minimumSizeHint() const
{
    // Width is whatever the layout gives: the status bar's permanent widgets keep theirs.
    return { 0, QLabel::minimumSizeHint().height() };
}

void ElidedLabel::resizeEvent(QResizeEvent* event)
{
    QLabel::resizeEvent(event);
    relayout();
}

void ElidedLabel::relayout()
{
    const int room = contentsRect().width();
    const QString shown = room > 0 ? fontMetrics().elidedText(m_full, Qt::ElideMiddle, room) : m_full;
    QLabel::setText(shown);
    setToolTip(shown == m_full ? QString() : m_full);
}

} // namespace probescope::ui
