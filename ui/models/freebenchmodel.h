// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/freebench/freebenchcsv.h"

#include <QAbstractTableModel>
#include <QSortFilterProxyModel>
#include <QString>

#include <memory>

namespace probescope::ui {

/**
 * @brief The rows of free_benchmark.csv files (msprobe's free benchmark), one model row per CSV row.
 *
 * Read-only over an immutable probescope::freebench::FreeBenchTable. Meant to sit behind a QSortFilterProxyModel with
 * sortRole() = SortRole: numbers sort as numbers, symbol_flipping above every max_rel and empty cells below.
 */
class FreeBenchmarkModel : public QAbstractTableModel
{
    Q_OBJECT
public:
    enum Column : int {
        StepColumn,
        RankColumn,
        ApiColumn,
        StageColumn,
        PertModeColumn,
        MaxRelColumn,
        ThresholdColumn,
        ExcessColumn, ///< max_rel / threshold
        DtypeColumn,
        ShapeColumn,
        OutputIndexColumn,
        ColumnCount
    };

    enum Role : int {
        SortRole = Qt::UserRole + 1, ///< double for numeric columns, QString otherwise
        RowIndexRole,                ///< int: index into FreeBenchTable::rows
        ApiNameRole,                 ///< QString
        StepRole,                    ///< qint64
        RankRole,                    ///< qint64
    };

    explicit FreeBenchmarkModel(QObject* parent = nullptr);
    ~FreeBenchmarkModel() override;

    void setTable(std::shared_ptr<const probescope::freebench::FreeBenchTable> table);
    void clear();
    std::shared_ptr<const probescope::freebench::FreeBenchTable> table() const { return m_table; }
    const probescope::freebench::FreeBenchRow* rowAt(int row) const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;
    QHash<int, QByteArray> roleNames() const override;

    /// The max_rel cell as msprobe wrote it ("0.0153", "symbol_flipping", "").
    static QString maxRelText(const probescope::freebench::FreeBenchRow& row);
    /// "×7.6", "sign flip", "" — how far over its threshold a row is.
    static QString excessText(const probescope::freebench::FreeBenchRow& row);
    /// The value SortRole gives, without a QVariant (the proxy compares hundreds of thousands of rows).
    static double sortKey(const probescope::freebench::FreeBenchRow& row, int column);

private:
    std::shared_ptr<const probescope::freebench::FreeBenchTable> m_table;
};

/**
 * @brief Sorts a FreeBenchmarkModel by SortRole's order straight from the rows (a QVariant per comparison made
 * sorting 200k rows take seconds) and filters on the API column.
 */
class FreeBenchmarkProxy : public QSortFilterProxyModel
{
    Q_OBJECT
public:
    explicit FreeBenchmarkProxy(QObject* parent = nullptr);

protected:
    bool lessThan(const QModelIndex& left, const QModelIndex& right) const override;
};

} // namespace probescope::ui
