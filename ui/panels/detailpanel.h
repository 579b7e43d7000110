// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "ui/models/noderowsmodel.h"
#include "ui/models/runanomalymodel.h"
#include "core/session/session.h"

#include <QModelIndexList>
#include <QStringList>
#include <QWidget>

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>

class QAction;
class QLabel;
class QPlainTextEdit;
class QPushButton;
class QSplitter;
class QTabWidget;
class QTableView;
class QTransposeProxyModel;

namespace probescope::ui {

/**
 * @brief Everything about one node: header (key, kind, direction, execution index, statuses), the
 * reasons it fails, its rows NPU beside bench (NodeRowsModel), call stacks and data files.
 *
 * Everything is copyable: the header and texts are selectable, Ctrl+C on the table copies the selected
 * cells as TSV, "Copy details" copies a plain-text report. The panel follows the palette (light/dark)
 * by itself. Double-clicking (or Enter on) a row emits rowActivated with the CompareTable row.
 */
class DetailPanel : public QWidget
{
    Q_OBJECT
public:
    explicit DetailPanel(QWidget* parent = nullptr);

    /// Shows node `nodeId` (a tree::NodeId value) of a finished analysis.
    void setNode(std::shared_ptr<const session::PairAnalysis> analysis, quint32 nodeId);
    void clear();
    /// One run on its own (issue 34): one side only, the NPU side's fields (no verdict, bench or difference rows), no
    /// bench stack, and where a pair says its verdict, the node's state in the run as `stateOf` gives it (with how many
    /// nodes below hold a NaN/Inf, `withNanBelow`). Empty functions: a pair again.
    void setSingleRun(std::function<std::optional<RunNodeState>(quint32)> stateOf,
                      std::function<std::uint32_t(quint32)> withNanBelow = {});
    bool isSingleRun() const { return static_cast<bool>(m_runStateOf); }

    bool hasNode() const { return m_analysis != nullptr; }
    quint32 nodeId() const { return m_node; }
    NodeRowsModel* rowsModel() const { return m_model; }
    QTableView* rowsView() const { return m_view; }
    /// The view column (a leaf: input.0, output.0, …) the node fails on first, -1 when none fails.
    int failingColumn() const;
    /// The compare-table row a view column shows (PairAnalysis::table), none for a column that does not exist.
    std::optional<std::size_t> tableRowOfColumn(int column) const;
    /// The reasons shown under the header, one per line (leaf: message).
    QStringList reasons() const { return m_reasons; }
    QString npuStackText() const;
    QString benchStackText() const;
    /// The plain-text report "Copy details" puts on the clipboard.
    QString detailsText() const;
    /// The selected cells of the rows table as TSV (rectangle of the selection; one line per row).
    QString selectionTsv() const;

    /// TSV of `indexes` of a model: rows/columns of their bounding box, cells not selected left empty;
    /// tabs and line breaks inside a cell become spaces so the TSV stays one line per row.
    static QString indexesToTsv(const QModelIndexList& indexes);

public slots:
    void copySelection();
    void copyDetails();

signals:
    /// A row was double-clicked or Enter was pressed on it; `tableRow` indexes PairAnalysis::table.
    void rowActivated(std::size_t tableRow);

protected:
    void changeEvent(QEvent* event) override;
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    void retranslate();
    void updateHeader();
    void updateReasons();
    void updateStacks();
    void updateDataFiles();
    void fitTableHeight();
    /// Scrolls the failing leaf's column into view (from the left edge), narrowing it if it is wider than the table.
    void showFailingColumn();
    QString benchKey() const;

    std::shared_ptr<const session::PairAnalysis> m_analysis;
    quint32 m_node = 0;
    QStringList m_reasons;

    QLabel* m_key = nullptr;
    QLabel* m_facts = nullptr;
    QLabel* m_statusIcon = nullptr;
    QLabel* m_status = nullptr;
    QLabel* m_reasonsLabel = nullptr;
    QLabel* m_placeholder = nullptr;
    QWidget* m_body = nullptr;
    NodeRowsModel* m_model = nullptr;
    QTransposeProxyModel* m_fields = nullptr; ///< m_model with fields down, rows across (what m_view shows)
    QTableView* m_view = nullptr;
    QSplitter* m_splitter = nullptr;
    bool m_userSizedSplitter = false;
    QTabWidget* m_tabs = nullptr;
    QAction* m_copyAction = nullptr;
    QPlainTextEdit* m_npuStack = nullptr;
    QPlainTextEdit* m_benchStack = nullptr;
    QPlainTextEdit* m_dataFiles = nullptr;
    QPushButton* m_copyDetails = nullptr;
    std::function<std::optional<RunNodeState>(quint32)> m_runStateOf; ///< set: one run on its own
    std::function<std::uint32_t(quint32)> m_runNanBelow;
};

} // namespace probescope::ui
