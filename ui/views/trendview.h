// SPDX-License-Identifier: Apache-2.0
#pragma once
// msprobe 26's data2db `.trend.db` as a step x rank table per module slot (docs/graph.md, "The GUI").

#include "core/graph/trend.h"

#include <QStringList>
#include <QWidget>

#include <memory>
#include <optional>
#include <vector>

class QComboBox;
class QLabel;
class QTableWidget;

namespace probescope::ui {

/**
 * @brief The trend view: choose a module (or API), one of its slots (input.0, output.0, ..., per micro step), the
 * metric (forward, backward, ...) and the statistic (norm, max, min, mean); the table shows that value for every step
 * (rows) and rank (columns), shaded from the smallest to the largest shown, so a step or rank where it jumps stands
 * out. It sits beside the rank map (step x rank of a compare) in the window's tabs.
 */
class TrendView : public QWidget
{
    Q_OBJECT
public:
    enum class Statistic { Norm, Max, Min, Mean };

    explicit TrendView(QWidget* parent = nullptr);

    void setTable(std::shared_ptr<const graph::TrendTable> table);
    const graph::TrendTable* table() const { return m_table.get(); }

    /// Chooses what the table shows: a target (TrendTable::targets index; its module is chosen with it), a metric
    /// (TrendTable::metrics index) and the statistic; false when either index is not in the table.
    bool choose(std::uint32_t target, std::uint32_t metric, Statistic statistic);
    /// The value of the shown cell (step, rank), or nullopt (no such row in the db, or None).
    std::optional<double> value(std::int64_t step, std::int64_t rank) const;
    QTableWidget* grid() const { return m_grid; }
    QComboBox* moduleBox() const { return m_module; }
    QComboBox* targetBox() const { return m_target; }
    /// What the scripted mode prints: file, steps, ranks, modules, targets, metrics.
    QStringList report() const;

protected:
    void changeEvent(QEvent* event) override;

private:
    void retranslate();
    void fillTargets();
    void refresh();

    std::shared_ptr<const graph::TrendTable> m_table;
    QLabel* m_header = nullptr;
    QLabel* m_moduleLabel = nullptr;
    QLabel* m_targetLabel = nullptr;
    QLabel* m_metricLabel = nullptr;
    QLabel* m_statLabel = nullptr;
    QComboBox* m_module = nullptr;
    QComboBox* m_target = nullptr;
    QComboBox* m_metric = nullptr;
    QComboBox* m_stat = nullptr;
    QTableWidget* m_grid = nullptr;
    bool m_filling = false;
};

} // namespace probescope::ui
