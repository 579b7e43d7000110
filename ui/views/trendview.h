// SPDX-License-Identifier: Apache-2.0
#pragma once
// msprobe's trend tables (a data2db `.trend.db`, or a monitor folder read as one) as a step x rank grid per target,
// metric and statistic, with the run's anomalies, a second run overlaid and the way to a step's dump
// (docs/graph.md and docs/monitor.md, "The GUI").

#include "core/graph/trend.h"
#include "ui/jobs/graphfilejob.h"

#include <QStringList>
#include <QWidget>

#include <memory>
#include <optional>
#include <vector>

class QComboBox;
class QCustomPlot;
class QCPTextElement;
class QLabel;
class QPushButton;
class QTableView;
class QTreeWidget;

namespace probescope::ui {

class TrendGridModel;

/**
 * @brief The trend view: choose a module (or API), one of its slots (input.0, output.0, ..., per micro step), the
 * metric (actv, grad_reduced, forward, ...) and any statistic the table has (norm, max, min, mean, zeros, nans...);
 * the grid shows that value for every step (rows) and rank (columns), shaded from the smallest to the largest shown,
 * and the plot below draws the chosen rank's column along the steps. With a bench run (setBenchTable) the plot draws
 * both runs and the grid shades each cell by its relative difference to the bench. A monitor folder's anomalies are
 * listed; activating one shows its slot, step and rank. Double-clicking a cell (or "Open the step's dump") asks for
 * that step's dump (stepDumpRequested). It sits beside the rank map in the window's tabs.
 */
class TrendView : public QWidget
{
    Q_OBJECT
public:
    enum class Statistic { Norm, Max, Min, Mean };

    explicit TrendView(QWidget* parent = nullptr);
    ~TrendView() override;

    void setTable(std::shared_ptr<const graph::TrendTable> table);
    const graph::TrendTable* table() const;
    /// The run to compare against (NPU run against bench run), nullptr: none.
    void setBenchTable(std::shared_ptr<const graph::TrendTable> bench);
    const graph::TrendTable* benchTable() const;
    /// A monitor folder's anomalies, listed in their order.
    void setAnomalies(std::vector<TrendAnomaly> anomalies);
    const std::vector<TrendAnomaly>& anomalies() const { return m_anomalies; }
    /// Shows anomaly `i`: its target, metric, step and rank (the plot on its rank); false when it is not in the table.
    bool showAnomaly(int i);
    /// The run's dump (a dump root): where stepDumpRequested's steps are looked for; empty: not chosen.
    void setDumpFolder(const QString& folder);
    QString dumpFolder() const { return m_dumpFolder; }

    /// Chooses what the table shows: a target (TrendTable::targets index; its module is chosen with it), a metric
    /// (TrendTable::metrics index) and the statistic; false when either index is not in the table or the table has
    /// no such statistic.
    bool choose(std::uint32_t target, std::uint32_t metric, Statistic statistic);
    /// The same with a statistic column by name ("nans"); false when the table has none of that name.
    bool choose(std::uint32_t target, std::uint32_t metric, const QString& statistic);
    /// Selects the cell of (step, rank) and draws its rank; false when the table has no such step or rank.
    bool selectCell(std::int64_t step, std::int64_t rank);
    /// The value of the shown cell (step, rank), or nullopt (no such row in the db, or None).
    std::optional<double> value(std::int64_t step, std::int64_t rank) const;
    /// The (step, rank) of the selected cell.
    std::optional<std::pair<std::int64_t, std::int64_t>> selectedCell() const;
    QTableView* grid() const { return m_grid; }
    TrendGridModel* gridModel() const { return m_model; }
    QComboBox* moduleBox() const { return m_module; }
    QComboBox* targetBox() const { return m_target; }
    QComboBox* metricBox() const { return m_metric; }
    QComboBox* statisticBox() const { return m_stat; }
    QTreeWidget* anomalyList() const { return m_anomalyList; }
    QCustomPlot* plot() const { return m_plot; }
    /// The rank whose column the plot draws (a column of the grid).
    int plottedColumn() const { return m_plotColumn; }
    /// What the scripted mode prints: file, steps, ranks, modules, targets, metrics (and anomalies, a bench run).
    QStringList report() const;

signals:
    /// The user asked for the dump of `step` (on `rank`): a double-click on a cell, or the button.
    void stepDumpRequested(qint64 step, qint64 rank);
    /// "Compare with a bench run…": the window asks for the bench run's monitor folder or .trend.db.
    void benchRequested();

protected:
    void changeEvent(QEvent* event) override;

private:
    void retranslate();
    void fillTargets();
    void refresh();
    void replot();
    std::uint32_t currentTarget() const;
    std::uint32_t currentMetric() const;
    std::size_t currentStatistic() const;

    std::shared_ptr<const graph::TrendTable> m_table;
    std::shared_ptr<const graph::TrendTable> m_bench;
    std::vector<TrendAnomaly> m_anomalies;
    QString m_dumpFolder;
    TrendGridModel* m_model = nullptr;
    QLabel* m_header = nullptr;
    QLabel* m_moduleLabel = nullptr;
    QLabel* m_targetLabel = nullptr;
    QLabel* m_metricLabel = nullptr;
    QLabel* m_statLabel = nullptr;
    QLabel* m_anomalyLabel = nullptr;
    QComboBox* m_module = nullptr;
    QComboBox* m_target = nullptr;
    QComboBox* m_metric = nullptr;
    QComboBox* m_stat = nullptr;
    QPushButton* m_benchButton = nullptr;
    QPushButton* m_dumpButton = nullptr;
    QPushButton* m_stepButton = nullptr;
    QTableView* m_grid = nullptr;
    QCustomPlot* m_plot = nullptr;
    QCPTextElement* m_plotTitle = nullptr;
    QTreeWidget* m_anomalyList = nullptr;
    int m_plotColumn = 0;
    bool m_filling = false;
};

} // namespace probescope::ui
