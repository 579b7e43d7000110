// SPDX-License-Identifier: Apache-2.0
#include "ui/panels/filterbar.h"

#include "ui/models/runanomalymodel.h"
#include "ui/models/statuspalette.h"

#include <QComboBox>
#include <QEvent>
#include <QHBoxLayout>
#include <QResizeEvent>
#include <QImage>
#include <QLabel>
#include <QToolButton>

#include <algorithm>

namespace probescope::ui {

using session::Status;

bool FilterSpec::acceptsName(const dump::EntryName& name) const
{
    if (direction == Forward && name.direction != dump::Direction::Forward)
        return false;
    if (direction == Backward && name.direction != dump::Direction::Backward)
        return false;
    if (kind == Module && !name.isModuleLike())
        return false;
    if (kind == Api && name.kind != dump::EntryKind::Api && name.kind != dump::EntryKind::Legacy)
        return false;
    return true;
}

FilterBar::FilterBar(QWidget* parent)
    : QWidget(parent)
{
    qRegisterMetaType<FilterSpec>();
    auto* layout = new QHBoxLayout(this);
    layout->setContentsMargins(2, 2, 2, 2);
    layout->setSpacing(4);
    // The layout does not set the bar's minimum: minimumSizeHint() says the compact form's (issue 36 item 1).
    layout->setSizeConstraint(QLayout::SetNoConstraint);
    // Nor the tree pane's: below the compact form the bar is cut at its right end rather than holding the splitter.
    setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Fixed);
    m_showLabel = new QLabel(this);
    layout->addWidget(m_showLabel);
    for (std::size_t i = 0; i < kStatuses.size(); ++i) {
        auto* b = new QToolButton(this);
        b->setCheckable(true);
        b->setChecked(true);
        b->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
        b->setIconSize(QSize(30, 16));
        b->setAutoRaise(false);
        connect(b, &QToolButton::toggled, this, [this, b](bool on) {
            // Hiding every status would show an empty tree; keep the last toggle on instead.
            if (!on && std::none_of(m_buttons.begin(), m_buttons.end(), [](QToolButton* x) { return x->isChecked(); })) {
                const bool wasSilent = m_silent;
                m_silent = true;
                b->setChecked(true);
                m_silent = wasSilent;
                return;
            }
            updateButtons();
            emitChanged();
        });
        m_buttons[i] = b;
        layout->addWidget(b);
    }
    layout->addSpacing(8);
    m_directionLabel = new QLabel(this);
    layout->addWidget(m_directionLabel);
    m_direction = new QComboBox(this);
    for (const int d : { FilterSpec::AnyDirection, FilterSpec::Forward, FilterSpec::Backward })
        m_direction->addItem(QString(), d);
    layout->addWidget(m_direction);
    m_kindLabel = new QLabel(this);
    layout->addWidget(m_kindLabel);
    m_kind = new QComboBox(this);
    for (const int k : { FilterSpec::AnyKind, FilterSpec::Module, FilterSpec::Api })
        m_kind->addItem(QString(), k);
    layout->addWidget(m_kind);
    layout->addStretch(1);
    connect(m_direction, &QComboBox::currentIndexChanged, this, &FilterBar::emitChanged);
    connect(m_kind, &QComboBox::currentIndexChanged, this, &FilterBar::emitChanged);
    retranslate();
}

void FilterBar::retranslate()
{
    m_showLabel->setText(tr("Show:"));
    m_directionLabel->setText(tr("Direction:"));
    m_direction->setItemText(0, tr("All"));
    m_direction->setItemText(1, tr("Forward"));
    m_direction->setItemText(2, tr("Backward"));
    m_kindLabel->setText(tr("Kind:"));
    // What the combo boxes are, also when the compact form hides their captions.
    m_direction->setToolTip(m_directionLabel->text());
    m_kind->setToolTip(m_kindLabel->text());
    m_kind->setItemText(0, tr("All"));
    m_kind->setItemText(1, tr("Modules"));
    m_kind->setItemText(2, tr("APIs"));
    updateButtons();
}

FilterSpec FilterBar::spec() const
{
    FilterSpec s;
    bool all = true;
    QSet<int> checked;
    for (std::size_t i = 0; i < kStatuses.size(); ++i) {
        if (m_buttons[i]->isChecked())
            checked.insert(static_cast<int>(kStatuses[i]));
        else
            all = false;
    }
    if (!all)
        s.statuses = checked;
    s.direction = m_direction->currentData().toInt();
    s.kind = m_kind->currentData().toInt();
    return s;
}

void FilterBar::setSpec(const FilterSpec& spec)
{
    const FilterSpec before = this->spec();
    m_silent = true;
    for (std::size_t i = 0; i < kStatuses.size(); ++i)
        m_buttons[i]->setChecked(spec.statuses.isEmpty() || spec.statuses.contains(static_cast<int>(kStatuses[i])));
    m_direction->setCurrentIndex(std::max(0, m_direction->findData(spec.direction)));
    m_kind->setCurrentIndex(std::max(0, m_kind->findData(spec.kind)));
    m_silent = false;
    if (this->spec() != before)
        emit filterChanged(this->spec());
}

void FilterBar::reset()
{
    setSpec(FilterSpec {});
}

void FilterBar::setRunMode(bool on)
{
    if (on == m_runMode)
        return;
    m_runMode = on;
    updateButtons();
    if (isVisible())
        fitToWidth(width());
}

QString FilterBar::statusName(Status s) const
{
    if (m_runMode) {
        switch (s) {
        // The states' own names (the tree's Status column says the same words).
        case Status::Error: return runStateLabel(RunNodeState::NanInfOutput);
        case Status::Warning: return runStateLabel(RunNodeState::NanInfInput);
        case Status::Pass: return runStateLabel(RunNodeState::Finite);
        default: break;
        }
    }
    return statuspalette::label(s);
}

void FilterBar::setCounts(const std::array<std::uint32_t, 6>& counts)
{
    m_counts = counts;
    m_haveCounts = true;
    updateButtons();
    if (isVisible())
        fitToWidth(width()); // longer counts may not fit any more
}

QToolButton* FilterBar::statusButton(Status s) const
{
    for (std::size_t i = 0; i < kStatuses.size(); ++i) {
        if (kStatuses[i] == s)
            return m_buttons[i];
    }
    return nullptr;
}

void FilterBar::updateButtons()
{
    // A shown status is a coloured chip with a solid frame; a hidden one is a struck-out grey chip with a
    // dashed frame and dimmed text. The style's own "checked" look (a sunken grey button beside a flat white one)
    // read the wrong way round.
    const bool dark = statuspalette::isDark(palette());
    for (std::size_t i = 0; i < kStatuses.size(); ++i) {
        const Status s = kStatuses[i];
        QToolButton* b = m_buttons[i];
        const bool shown = b->isChecked();
        // A finite node of one run is no "pass": its chip is the neutral one.
        const QPixmap chip = statuspalette::chip(m_runMode && s == Status::Pass ? Status::NoData : s, dark, 16);
        b->setIcon(QIcon(shown ? chip : hiddenChip(chip)));
        b->setVisible(!(m_runMode && s == Status::Unmatched)); // one run has no bench to be unmatched against
        const QString name = statusName(s);
        const QString count = m_haveCounts ? QString::number(m_counts[static_cast<std::size_t>(s)]) : QString();
        const QString text = m_haveCounts ? tr("%1 (%2)").arg(name, count) : name;
        // Compact: the colour and the count; the name is in the tooltip.
        b->setText(m_compact ? count : text);
        b->setIconSize(m_compact ? QSize(16, 16) : QSize(30, 16));
        b->setToolButtonStyle(m_compact && count.isEmpty() ? Qt::ToolButtonIconOnly : Qt::ToolButtonTextBesideIcon);
        b->setToolTip((m_compact ? text + QStringLiteral(": ") : QString())
                      + (shown ? tr("%1 nodes are shown; click to hide them").arg(name)
                               : tr("%1 nodes are hidden; click to show them").arg(name)));
        b->setAccessibleDescription(shown ? tr("shown") : tr("hidden"));
        b->setStyleSheet(shown ? QStringLiteral("QToolButton { border: 1px solid palette(highlight); border-radius: 4px;"
                                                " background: palette(base); padding: 1px 4px; }")
                               : QStringLiteral("QToolButton { border: 1px dashed palette(mid); border-radius: 4px;"
                                                " background: transparent; color: palette(mid); padding: 1px 4px;"
                                                " text-decoration: line-through; }"));
    }
}

QPixmap FilterBar::hiddenChip(const QPixmap& chip)
{
    QImage grey = chip.toImage().convertToFormat(QImage::Format_ARGB32);
    for (int y = 0; y < grey.height(); ++y) {
        auto* line = reinterpret_cast<QRgb*>(grey.scanLine(y));
        for (int x = 0; x < grey.width(); ++x) {
            const int g = qGray(line[x]);
            line[x] = qRgba(g, g, g, qAlpha(line[x]) / 3);
        }
    }
    return QPixmap::fromImage(grey);
}

QSize FilterBar::minimumSizeHint() const
{
    // The compact form's width: the layout's minimum now, less what the captions and the chips' names take while
    // they are shown.
    QSize size = QWidget::minimumSizeHint();
    if (m_compact)
        return size;
    const QFontMetrics fm(font());
    int width = size.width();
    for (const QLabel* l : { m_showLabel, m_directionLabel, m_kindLabel })
        width -= l->minimumSizeHint().width() + layout()->spacing();
    for (std::size_t i = 0; i < kStatuses.size(); ++i) {
        const QString count = m_haveCounts ? QString::number(m_counts[static_cast<std::size_t>(kStatuses[i])]) : QString();
        width -= fm.horizontalAdvance(m_buttons[i]->text()) - fm.horizontalAdvance(count);
    }
    size.setWidth(std::max(width, 100));
    return size;
}

void FilterBar::resizeEvent(QResizeEvent* event)
{
    QWidget::resizeEvent(event);
    fitToWidth(event->size().width());
}

void FilterBar::fitToWidth(int width)
{
    const bool compact = width < fullWidth();
    if (compact == m_compact)
        return;
    m_compact = compact;
    for (QLabel* l : { m_showLabel, m_directionLabel, m_kindLabel })
        l->setVisible(!compact);
    // The combo boxes elide their texts too (the captions are gone; the choices are in the tooltips of the lists).
    for (QComboBox* c : { m_direction, m_kind }) {
        c->setMinimumContentsLength(compact ? 4 : 0);
        c->setSizeAdjustPolicy(compact ? QComboBox::AdjustToMinimumContentsLengthWithIcon : QComboBox::AdjustToContentsOnFirstShow);
    }
    updateButtons();
}

int FilterBar::fullWidth() const
{
    if (!m_compact)
        return layout()->sizeHint().width();
    // In the compact form: what the captions and the chips' names would add to it.
    const QFontMetrics fm(font());
    int width = layout()->sizeHint().width();
    for (const QLabel* l : { m_showLabel, m_directionLabel, m_kindLabel })
        width += fm.horizontalAdvance(l->text()) + 8;
    for (std::size_t i = 0; i < kStatuses.size(); ++i) {
        const QString name = statusName(kStatuses[i]);
        width += fm.horizontalAdvance(m_haveCounts ? tr("%1 (%2)").arg(name, QStringLiteral("0000")) : name)
            - fm.horizontalAdvance(m_buttons[i]->text());
    }
    return width;
}

void FilterBar::emitChanged()
{
    if (!m_silent)
        emit filterChanged(spec());
}

void FilterBar::changeEvent(QEvent* event)
{
    if (event->type() == QEvent::PaletteChange)
        updateButtons();
    else if (event->type() == QEvent::LanguageChange) {
        retranslate();
        fitToWidth(width());
    }
    QWidget::changeEvent(event);
}

} // namespace probescope::ui
