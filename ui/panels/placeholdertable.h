// SPDX-License-Identifier: Apache-2.0
#pragma once
// A table that says why it is empty (issue 36 item 12: an empty Diagnostics tab was a bare grid).

#include <QTableView>

namespace probescope::ui {

/// A QTableView that paints `placeholderText()` in its middle while its model has no rows.
class PlaceholderTableView : public QTableView
{
    Q_OBJECT
public:
    using QTableView::QTableView;
    void setPlaceholderText(const QString& text);
    QString placeholderText() const { return m_placeholder; }
    /// True while the placeholder is what the table shows (no model or no rows).
    bool showsPlaceholder() const;

protected:
    void paintEvent(QPaintEvent* event) override;

private:
    QString m_placeholder;
};

} // namespace probescope::ui
