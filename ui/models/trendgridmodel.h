// SPDX-License-Identifier: Apache-2.0
#pragma once
// One slot of a trend table (msprobe's .trend.db, or a monitor folder read as one) as a step x rank grid, optionally
// against a second run's table (NPU run against bench run): the model behind the trend view (docs/monitor.md, "The GUI").

#include "core/graph/trend.h"

#include <QAbstractTableModel>

#include <memory>
#include <optional>
#include <vector>

namespace probescope::ui {

/**
 * @brief Rows are the table's steps, columns its ranks; a cell is one statistic of one target and metric.
 *
 * The table is indexed once per setTables() (the rows of each target and metric), so that choosing another slot
 * costs the grid's cells, not the table: 1,000 steps x 8 ranks x 200 targets stays interactive. A bench table is
 * matched by names (target name, VPP stage, micro step; metric; statistic), steps and ranks by number.
 */
class TrendGridModel : public QAbstractTableModel
{
    Q_OBJECT
public:
    enum Role {
        ValueRole = Qt::UserRole + 1, ///< the NPU value (double), invalid when absent or NULL
        BenchValueRole,               ///< the bench run's value, invalid when absent
        PresentRole,                  ///< the db has a row for this step and rank
    };

    explicit TrendGridModel(QObject* parent = nullptr);

    void setTables(std::shared_ptr<const graph::TrendTable> npu, std::shared_ptr<const graph::TrendTable> bench = nullptr);
    /// Keeps the NPU table and its slice; replaces (or clears) the bench table.
    void setBench(std::shared_ptr<const graph::TrendTable> bench);
    const graph::TrendTable* table() const { return m_npu.get(); }
    const graph::TrendTable* bench() const { return m_bench.get(); }
    /// Shows target `target`, metric `metric`, statistic column `statistic` (indices into the NPU table); false (and an
    /// empty grid) when one is out of range.
    bool setSlice(std::uint32_t target, std::uint32_t metric, std::size_t statistic);
    std::uint32_t target() const { return m_target; }
    std::uint32_t metric() const { return m_metric; }
    std::size_t statistic() const { return m_statistic; }

    std::optional<double> value(int row, int column) const;
    std::optional<double> benchValue(int row, int column) const;
    /// The row of `step` and the column of `rank`, or -1.
    int rowOfStep(std::int64_t step) const;
    int columnOfRank(std::int64_t rank) const;
    /// The NPU and bench series of one column (rank), one entry per row (step).
    std::vector<std::optional<double>> column(int column, bool bench) const;
    /// The NPU table's rows of one target and metric (indices into TrendTable::values).
    const std::vector<std::uint32_t>& rowsOf(std::uint32_t target, std::uint32_t metric) const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;
    /// The header texts in the language in force.
    void retranslate();

private:
    struct Index
    {
        std::vector<std::vector<std::uint32_t>> rows; ///< per target * metrics.size() + metric
    };
    static Index indexOf(const graph::TrendTable& table);
    void fill();

    std::shared_ptr<const graph::TrendTable> m_npu;
    std::shared_ptr<const graph::TrendTable> m_bench;
    Index m_npuIndex;
    Index m_benchIndex;
    std::uint32_t m_target = 0;
    std::uint32_t m_metric = 0;
    std::size_t m_statistic = 0;
    bool m_sliced = false;
    std::vector<std::optional<double>> m_cells; ///< rows x columns
    std::vector<std::optional<double>> m_benchCells;
    std::vector<bool> m_present;
    double m_lo = 0;
    double m_hi = 0;
};

} // namespace probescope::ui
