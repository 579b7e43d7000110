// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/session/session.h"

#include <QAbstractTableModel>
#include <QIcon>
#include <QString>
#include <QStringList>

#include <array>
#include <cstddef>
#include <memory>
#include <vector>

namespace probescope::ui {

/**
 * @brief The compare rows of one node, NPU and bench side by side: one model row per leaf
 * (input.0, output.0, parameters.weight, …) in table order.
 *
 * Columns follow the table's mode and profile, in msprobe's order with the verdict moved forward:
 * leaf | verdict (status icon + label) | NPU/bench dtype | NPU/bench shape | (Requires_grad pair,
 * msprobe 26) | the mode's metrics (real data: Cosine, EucDist, MaxAbsErr, MaxRelativeErr, 1‰, 5‰;
 * statistics: the four diffs and relative errors; md5: both md5) | NPU/bench max, min, mean, l2norm
 * (adjacent pairs) | msprobe's verdict column | Err_message | NPU/bench data file (tensor mode). Cells show what msprobe's xlsx shows
 * (compare::excelText, without the TAB that pandas appends to inf/nan). Rows are painted in the status
 * colour (statuspalette) and always carry the verdict text as well.
 */
class NodeRowsModel : public QAbstractTableModel
{
    Q_OBJECT
public:
    enum Role {
        TableRowRole = Qt::UserRole + 1, ///< qulonglong: the row index in the CompareTable
        StatusRole,                      ///< int: session::Status of the row
        TableColumnRole,                 ///< int: CompareTable column shown (-1 for derived columns)
    };
    enum class ColumnKind { Leaf, TableCell, Verdict, NpuDataFile, BenchDataFile };

    explicit NodeRowsModel(QObject* parent = nullptr);

    void setNode(std::shared_ptr<const session::PairAnalysis> analysis, quint32 nodeId);
    void clear();
    /// Fills for the dark palette (statuspalette::fill(…, true)).
    void setDarkTheme(bool dark);

    std::shared_ptr<const session::PairAnalysis> analysis() const { return m_analysis; }
    quint32 nodeId() const { return m_node; }
    std::size_t tableRow(int row) const { return m_rows.at(static_cast<std::size_t>(row)).tableRow; }
    session::Status rowStatus(int row) const { return m_rows.at(static_cast<std::size_t>(row)).status; }
    ColumnKind columnKind(int column) const { return m_columns.at(static_cast<std::size_t>(column)).kind; }
    /// The model column showing a CompareTable column ("Cosine", "NPU max"…), -1 if not shown.
    int columnOfTableColumn(const QString& tableColumnName) const;
    /// Whether a column is about the NPU side alone (its leaf, an "NPU …" cell, its data file): what one run on its own
    /// shows; the verdict, the bench's cells and the differences are not.
    bool isNpuSideColumn(int column) const;
    /// Plain text of a cell (what DisplayRole shows, full length).
    QString cellText(int row, int column) const;
    /// The leaf part of a row name relative to the node's key ("input.0"), or the whole name.
    static QString leafName(const QString& rowName, const QString& nodeKey);
    /// Full paths of the data files of a model row (empty when the leaf has none).
    QString npuDataPath(int row) const;
    QString benchDataPath(int row) const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    /// msprobe's yes/no or verdict word of a cell ("Yes", "No", "pass", "Warning", "error") in the language in force;
    /// empty for any other text.
    static QString msprobeWord(const QString& cell);
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    struct Column
    {
        ColumnKind kind = ColumnKind::TableCell;
        int tableColumn = -1;
        QString title;
        QString toolTip;
    };
    struct Row
    {
        std::size_t tableRow = 0;
        session::Status status = session::Status::NoData;
        QString leaf;
        QString npuData;   ///< data file name as dump.json gives it ("" when none)
        QString benchData;
        QString npuDir;    ///< tensor folder of each side, for full paths
        QString benchDir;
    };

    void buildColumns(const compare::CompareTable& table);
    void buildRows();

    std::shared_ptr<const session::PairAnalysis> m_analysis;
    quint32 m_node = 0;
    bool m_dark = false;
    std::vector<Column> m_columns;
    std::vector<Row> m_rows;
    std::array<QIcon, 6> m_icons;
};

} // namespace probescope::ui
