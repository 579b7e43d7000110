// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/compare/table/flatten.h"
#include "core/session/nodestatus.h"

#include <QWidget>

#include <array>

class QGridLayout;
class QLabel;

namespace probescope::ui {

/**
 * @brief The colour key: a chip (swatch + icon) and a label for pass, warning, error, unmatched and
 * pending, under a line describing what the colours measure in the current mode (msprobe's legend
 * texts, gui-anchors §b.1). With the continuous-index scheme the labels show the band limits.
 * Follows the palette (light/dark) by itself.
 */
class LegendWidget : public QWidget
{
    Q_OBJECT
public:
    explicit LegendWidget(QWidget* parent = nullptr);

    compare::CompareMode mode() const { return m_mode; }
    const session::ColorBands& colorBands() const { return m_bands; }
    /// The mode's description line.
    QString descriptionText() const;
    /// The label shown next to a status's chip.
    QString entryText(session::Status status) const;
    static QString modeDescription(compare::CompareMode mode);

public slots:
    void setMode(probescope::compare::CompareMode mode);
    void setColorBands(const probescope::session::ColorBands& bands);

protected:
    void changeEvent(QEvent* event) override;

private:
    void refresh();

    static constexpr std::array<session::Status, 5> kShown = { session::Status::Pass, session::Status::Warning,
                                                               session::Status::Error, session::Status::Unmatched,
                                                               session::Status::Pending };
    compare::CompareMode m_mode = compare::CompareMode::RealData;
    session::ColorBands m_bands;
    QLabel* m_description = nullptr;
    std::array<QLabel*, 5> m_chips {};
    std::array<QLabel*, 5> m_labels {};
};

} // namespace probescope::ui
