// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <QLabel>

namespace probescope::ui {

/**
 * @brief A one-line label that never asks for more width than it gets: text too long for it is elided in
 * the middle (the start says what, the end says the figures) and the whole text is its tooltip. For the
 * status line, whose messages name pairs and paths of any length.
 */
class ElidedLabel : public QLabel
{
    Q_OBJECT
public:
    explicit ElidedLabel(QWidget* parent = nullptr);

    /// The whole text (QLabel::text() is what is painted).
    QString fullText() const { return m_full; }
    void setText(const QString& text);

    QSize minimumSizeHint() const override;

protected:
    void resizeEvent(QResizeEvent* event) override;

private:
    void relayout();

    QString m_full;
};

} // namespace probescope::ui
