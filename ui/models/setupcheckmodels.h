// SPDX-License-Identifier: Apache-2.0
#pragma once
// Models of the "Check setup" page (issue 35, docs/config-check.md "In the GUI"), each over an immutable core
// result: the summary of a config_check compare (one row per checker, likely cause first), one sheet's rows
// (problem rows first), and a checkpoint compare's parameters (sortable by cos and l2).

#include "core/ckpt/ckptcompare.h"
#include "core/compare/output/xlsxwriter.h"
#include "core/session/nodestatus.h"
#include "ui/models/statuspalette.h"

#include <QAbstractTableModel>
#include <QString>

#include <memory>
#include <vector>

namespace probescope::ui {

/// The roles the page's models share.
enum SetupRole : int {
    SetupStatusRole = Qt::UserRole + 1, ///< int (session::Status): Pass, Warning or Error; NoData when unjudged
    SetupSortRole,                      ///< numbers as numbers, text as text, for QSortFilterProxyModel
    SetupSheetRole,                     ///< summary: index of the checker's sheet in the outcome's sheets
};

/// A row's verdict in a config_check sheet: its `level` (pass/warning/error), or a False in `equal` /
/// `check_result` (an error); NoData when the sheet has neither column.
session::Status setupRowStatus(const compare::XlsxSheet& sheet, std::size_t row);

/// The rank of a checker as a likely cause, 0 first: hyperparameters, weights, dataset, random, env, pip.
int likelyCauseRank(const std::string& checker);

/// What a cell shows (numbers to 10 significant digits, bools True/False as pandas' CSVs have them).
QString setupCellText(const compare::XlsxSheetCell& cell);

/**
 * @brief The summary sheet as rows: checker, result, rows flagged, what it compares. Sorted worst result first
 * (error, warning, pass), then by likelyCauseRank within a result (docs/config-check.md, "In the GUI").
 */
class SetupSummaryModel : public QAbstractTableModel
{
    Q_OBJECT
public:
    enum Column : int { CheckColumn, ResultColumn, FlaggedColumn, ComparesColumn, ColumnCount };

    explicit SetupSummaryModel(QObject* parent = nullptr);
    /// `sheets` as comparePackZips gives them (summary first); empty clears.
    void setSheets(std::shared_ptr<const std::vector<compare::XlsxSheet>> sheets);
    /// Sheet index (into the sheets) of a row, -1 when none.
    int sheetOfRow(int row) const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    struct Row
    {
        QString checker;
        session::Status status = session::Status::NoData;
        int sheet = -1;
        int flagged = 0;
        int rows = 0;
    };
    std::shared_ptr<const std::vector<compare::XlsxSheet>> m_sheets;
    std::vector<Row> m_rows;
    StatusIcons m_icons;
};

/// One sheet of the compare (env, pip, hyperparameters, dataset, weights, random): its header and rows, the rows
/// with an error first, then warnings, then the rest, each group in the sheet's order.
class SetupSheetModel : public QAbstractTableModel
{
    Q_OBJECT
public:
    explicit SetupSheetModel(QObject* parent = nullptr);
    /// The sheet `index` of `sheets` (kept alive by the model); a bad index clears.
    void setSheet(std::shared_ptr<const std::vector<compare::XlsxSheet>> sheets, int index);
    QString sheetName() const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    std::shared_ptr<const std::vector<compare::XlsxSheet>> m_sheets;
    const compare::XlsxSheet* m_sheet = nullptr;
    std::vector<std::size_t> m_order; ///< displayed row -> sheet row
    std::vector<session::Status> m_status;
    StatusIcons m_icons;
};

/**
 * @brief A checkpoint compare: one row per parameter both hold (name, cos, l2, numel, shape), then the ones only one
 * holds. SetupSortRole gives cos and l2 as numbers; a parameter without a value (shapes differ, one side only) counts
 * as the worst, below every cos and above every l2, so it is on top sorting by cos ascending or by l2 descending.
 * Status: error when the shapes differ or one side lacks it, warning when l2 > 0 (the values differ), else pass (a
 * cos of 0.9999999 with l2 0 is float32 rounding of equal tensors).
 */
class CheckpointModel : public QAbstractTableModel
{
    Q_OBJECT
public:
    enum Column : int { NameColumn, CosColumn, L2Column, NumelColumn, ShapeColumn, ColumnCount };

    explicit CheckpointModel(QObject* parent = nullptr);
    void setComparison(std::shared_ptr<const ckpt::CheckpointComparison> comparison);
    const ckpt::CheckpointComparison* comparison() const { return m_comparison.get(); }

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    session::Status statusOf(int row) const;

    std::shared_ptr<const ckpt::CheckpointComparison> m_comparison;
    StatusIcons m_icons;
};

} // namespace probescope::ui
