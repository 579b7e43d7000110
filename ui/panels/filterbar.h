// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/dump/entryname.h"
#include "core/session/nodestatus.h"

#include <QMetaType>
#include <QSet>
#include <QPixmap>
#include <QWidget>

#include <array>
#include <cstdint>

class QComboBox;
class QLabel;
class QToolButton;

namespace probescope::ui {

/// What the node filter lets through. A plain value: the filter proxy reads it, the bar emits it.
struct FilterSpec
{
    enum Direction { AnyDirection = 0, Forward = 1, Backward = 2 };
    enum Kind { AnyKind = 0, Module = 1, Api = 2 };

    /// session::Status values shown; empty = no status filter (every status, pending and no data too).
    QSet<int> statuses;
    int direction = AnyDirection;
    int kind = AnyKind;

    bool acceptsStatus(session::Status s) const { return statuses.isEmpty() || statuses.contains(static_cast<int>(s)); }
    /// Direction and kind test of an entry name (modules include parameters_grad; APIs include
    /// ptdbg_ascend names; debug values and unknown names pass only "all").
    bool acceptsName(const dump::EntryName& name) const;
    bool isDefault() const { return statuses.isEmpty() && direction == AnyDirection && kind == AnyKind; }
    friend bool operator==(const FilterSpec&, const FilterSpec&) = default;
};

/**
 * @brief Status toggles (error, warning, pass, unmatched, each with its icon and colour chip and an
 * optional count), direction (all / forward / backward) and kind (all / module / API) of the node filter.
 *
 * filterChanged is emitted on every change. All four status toggles on (or all off, which would show
 * nothing) means "no status filter".
 */
class FilterBar : public QWidget
{
    Q_OBJECT
public:
    explicit FilterBar(QWidget* parent = nullptr);

    FilterSpec spec() const;
    void setSpec(const FilterSpec& spec);
    /// Node counts per session::Status (PairSummary::counts / NodeStatusTable::counts) shown on the toggles.
    void setCounts(const std::array<std::uint32_t, 6>& counts);
    QToolButton* statusButton(session::Status s) const;
    /// One run on its own (issue 34): the toggles name the run's states (CompareTreeModel::setRunMode's classes):
    /// "NaN/Inf output" (error), "NaN/Inf input" (warning), "Finite" (pass, a neutral chip); no unmatched toggle.
    void setRunMode(bool on);
    bool isRunMode() const { return m_runMode; }
    /// The name a status toggle shows (the run's state in run mode).
    QString statusName(session::Status s) const;

public slots:
    void reset();

signals:
    void filterChanged(const probescope::ui::FilterSpec& spec);

public:
    /// As narrow as the compact form (chips with their counts alone, no captions): the bar never sets the window's
    /// width (issue 36 item 1).
    QSize minimumSizeHint() const override;
    /// The chips show counts alone and the captions go, the names staying in the tooltips (set by the width).
    bool isCompact() const { return m_compact; }

protected:
    void changeEvent(QEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;

private:
    /// Compact when narrower than the full form needs.
    void fitToWidth(int width);
    /// The width the full form asks for (estimated from the compact form while compact).
    int fullWidth() const;
    /// A status chip as it looks when its nodes are hidden: grey and faint.
    static QPixmap hiddenChip(const QPixmap& chip);
    void updateButtons();
    void retranslate();
    void emitChanged();

    static constexpr std::array<session::Status, 4> kStatuses = { session::Status::Error, session::Status::Warning,
                                                                  session::Status::Pass, session::Status::Unmatched };
    std::array<QToolButton*, 4> m_buttons {};
    std::array<std::uint32_t, 6> m_counts {};
    bool m_haveCounts = false;
    bool m_runMode = false;
    bool m_compact = false;
    QComboBox* m_direction = nullptr;
    QComboBox* m_kind = nullptr;
    bool m_silent = false;
    QLabel* m_showLabel = nullptr;
    QLabel* m_directionLabel = nullptr;
    QLabel* m_kindLabel = nullptr;
};

} // namespace probescope::ui

Q_DECLARE_METATYPE(probescope::ui::FilterSpec)
