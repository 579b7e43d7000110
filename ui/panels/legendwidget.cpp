// SPDX-License-Identifier: Apache-2.0
#include "ui/panels/legendwidget.h"

#include "ui/models/statuspalette.h"

#include <QEvent>
#include <QGridLayout>
#include <QLabel>

namespace probescope::ui {

using session::Status;

LegendWidget::LegendWidget(QWidget* parent)
    : QWidget(parent)
{
    auto* grid = new QGridLayout(this);
    grid->setContentsMargins(6, 6, 6, 6);
    grid->setHorizontalSpacing(6);
    grid->setVerticalSpacing(3);
    m_description = new QLabel(this);
    m_description->setWordWrap(true);
    m_description->setTextFormat(Qt::PlainText);
    grid->addWidget(m_description, 0, 0, 1, 2);
    for (std::size_t i = 0; i < kShown.size(); ++i) {
        m_chips[i] = new QLabel(this);
        m_labels[i] = new QLabel(this);
        m_labels[i]->setTextFormat(Qt::PlainText);
        m_labels[i]->setWordWrap(true); // a long band description never sets the tree pane's width
        grid->addWidget(m_chips[i], static_cast<int>(i) + 1, 0);
        grid->addWidget(m_labels[i], static_cast<int>(i) + 1, 1);
    }
    grid->setColumnStretch(1, 1);
    grid->setRowStretch(static_cast<int>(kShown.size()) + 1, 1);
    refresh();
}

void LegendWidget::setMode(compare::CompareMode mode)
{
    m_mode = mode;
    refresh();
}

void LegendWidget::setColorBands(const session::ColorBands& bands)
{
    m_bands = bands;
    refresh();
}

QString LegendWidget::modeDescription(compare::CompareMode mode)
{
    // msprobe's legend texts (gui-anchors §b.1), in English; the Chinese ones come with the translation.
    switch (mode) {
    case compare::CompareMode::Summary:
        return tr("Statistics: statistic error; the darker the colour, the bigger the deviation.");
    case compare::CompareMode::RealData:
        return tr("Real data: tensor error (cosine, error ratios, max errors); the darker the colour, the bigger "
                  "the error.");
    case compare::CompareMode::Md5:
        return tr("md5: error when any input or output md5 differs; pass when all are identical.");
    }
    return {};
}

QString LegendWidget::descriptionText() const
{
    QString text = modeDescription(m_mode);
    if (m_bands.scheme == session::ColorBands::Scheme::ContinuousIndex)
        text += QLatin1Char(' ') + tr("Colours follow the precision index (0 = same, 1 = worst).");
    else
        text += QLatin1Char(' ') + tr("Colours follow msprobe's rules.");
    return text;
}

QString LegendWidget::entryText(Status status) const
{
    const QString name = statuspalette::label(status);
    const bool index = m_bands.scheme == session::ColorBands::Scheme::ContinuousIndex;
    const QString w = QString::number(m_bands.warningFrom, 'f', 2);
    const QString e = QString::number(m_bands.errorFrom, 'f', 2);
    switch (status) {
    case Status::Pass:
        return index ? tr("%1 — index below %2").arg(name, w) : name;
    case Status::Warning:
        return index ? tr("%1 — index %2 to below %3").arg(name, w, e) : name;
    case Status::Error:
        return index ? tr("%1 — index %2 and above").arg(name, e) : name;
    case Status::Unmatched:
        return tr("%1 — no bench counterpart").arg(name);
    case Status::Pending:
        return tr("%1 — metrics not computed yet").arg(name);
    case Status::NoData:
        return tr("%1 — no rows").arg(name);
    }
    return name;
}

void LegendWidget::refresh()
{
    const bool dark = statuspalette::isDark(palette());
    m_description->setText(descriptionText());
    for (std::size_t i = 0; i < kShown.size(); ++i) {
        m_chips[i]->setPixmap(statuspalette::chip(kShown[i], dark, 16));
        m_labels[i]->setText(entryText(kShown[i]));
    }
}

void LegendWidget::changeEvent(QEvent* event)
{
    if (event->type() == QEvent::PaletteChange || event->type() == QEvent::LanguageChange)
        refresh();
    QWidget::changeEvent(event);
}

} // namespace probescope::ui
