// SPDX-License-Identifier: Apache-2.0
#include "ui/panels/filterbar.h"

#include "ui/models/statuspalette.h"

#include <QComboBox>
#include <QEvent>
#include <QHBoxLayout>
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
    layout->addWidget(new QLabel(tr("Show:"), this));
    for (std::size_t i = 0; i < kStatuses.size(); ++i) {
        auto* b = new QToolButton(this);
        b->setCheckable(true);
        b->setChecked(true);
        b->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
        b->setIconSize(QSize(30, 16));
        b->setToolTip(tr("Show nodes whose status is %1").arg(statuspalette::label(kStatuses[i])));
        connect(b, &QToolButton::toggled, this, [this, b](bool on) {
            // Hiding every status would show an empty tree; keep the last toggle on instead.
            if (!on && std::none_of(m_buttons.begin(), m_buttons.end(), [](QToolButton* x) { return x->isChecked(); })) {
                const bool wasSilent = m_silent;
                m_silent = true;
                b->setChecked(true);
                m_silent = wasSilent;
                return;
            }
            emitChanged();
        });
        m_buttons[i] = b;
        layout->addWidget(b);
    }
    layout->addSpacing(8);
    layout->addWidget(new QLabel(tr("Direction:"), this));
    m_direction = new QComboBox(this);
    m_direction->addItem(tr("All"), FilterSpec::AnyDirection);
    m_direction->addItem(tr("Forward"), FilterSpec::Forward);
    m_direction->addItem(tr("Backward"), FilterSpec::Backward);
    layout->addWidget(m_direction);
    layout->addWidget(new QLabel(tr("Kind:"), this));
    m_kind = new QComboBox(this);
    m_kind->addItem(tr("All"), FilterSpec::AnyKind);
    m_kind->addItem(tr("Modules"), FilterSpec::Module);
    m_kind->addItem(tr("APIs"), FilterSpec::Api);
    layout->addWidget(m_kind);
    layout->addStretch(1);
    connect(m_direction, &QComboBox::currentIndexChanged, this, &FilterBar::emitChanged);
    connect(m_kind, &QComboBox::currentIndexChanged, this, &FilterBar::emitChanged);
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

void FilterBar::setCounts(const std::array<std::uint32_t, 6>& counts)
{
    m_counts = counts;
    m_haveCounts = true;
    updateButtons();
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
    const bool dark = statuspalette::isDark(palette());
    for (std::size_t i = 0; i < kStatuses.size(); ++i) {
        const Status s = kStatuses[i];
        m_buttons[i]->setIcon(QIcon(statuspalette::chip(s, dark, 16)));
        const QString name = statuspalette::label(s);
        m_buttons[i]->setText(m_haveCounts ? tr("%1 (%2)").arg(name).arg(m_counts[static_cast<std::size_t>(s)]) : name);
    }
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
    QWidget::changeEvent(event);
}

} // namespace probescope::ui
