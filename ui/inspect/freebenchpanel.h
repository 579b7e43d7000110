// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/freebench/freebenchcsv.h"

#include <QFutureWatcher>
#include <QStringList>
#include <QWidget>

#include <memory>
#include <vector>

class QCheckBox;
class QComboBox;
class QCustomPlot;
class QCPGraph;
class QCPItemStraightLine;
class QCPItemText;
class QCPTextElement;
class QLabel;
class QLineEdit;
class QSortFilterProxyModel;
class QTableView;

namespace probescope::ui {

class FreeBenchmarkModel;

/**
 * @brief The results of msprobe's free benchmark (无标杆比对): the rows of every free_benchmark.csv of an
 * opened dump as a sortable, filterable table, and a plot of one API's max_rel across steps (one series per
 * rank) with its dtype's threshold drawn as a dashed line.
 *
 * load() reads the files on the Qt thread pool (a long training run may append many thousands of rows); a
 * newer load drops an older one. Clicking (or pressing Enter on) a row plots its API and emits
 * apiActivated(), which the main window turns into a selection in the tree.
 */
class FreeBenchmarkPanel : public QWidget
{
    Q_OBJECT
public:
    /// One plotted point: x = step, y = max_rel; sign flips and infinite ratios sit on the top edge.
    struct Point
    {
        double step = 0;
        double y = 0;
        qint64 rank = 0;
        bool offScale = false; ///< symbol_flipping or an infinite max_rel, drawn at the top
        int row = 0;           ///< index into the table's rows
    };

    explicit FreeBenchmarkPanel(QWidget* parent = nullptr);
    ~FreeBenchmarkPanel() override;

    /// Finds and reads the free_benchmark.csv files of `inputs` (dump roots, step or rank folders, files).
    void load(const QStringList& inputs);
    /// Shows an already read table (nullptr clears).
    void setTable(std::shared_ptr<const probescope::freebench::FreeBenchTable> table);
    void clear() { setTable(nullptr); }
    bool isLoading() const { return m_watcher.isRunning(); }
    std::shared_ptr<const probescope::freebench::FreeBenchTable> table() const { return m_table; }

    /// Plots one API (its full name); empty plots nothing.
    void setApi(const QString& apiName);
    QString api() const { return m_api; }
    void setLogScale(bool on);
    bool logScale() const { return m_log; }

    const std::vector<Point>& points() const { return m_points; }
    /// The threshold lines drawn (one per distinct dtype / pert_mode of the API's rows).
    const std::vector<double>& thresholds() const { return m_thresholds; }
    /// The message drawn over the plot or the summary line above the table.
    QString plotMessage() const { return m_plotMessage; }
    QString summary() const;

    FreeBenchmarkModel* model() const { return m_model; }
    QSortFilterProxyModel* proxy() const { return m_proxy; }
    QTableView* tableView() const { return m_view; }
    QCustomPlot* plot() const { return m_plotWidget; }
    bool savePng(const QString& path, int width = 0, int height = 0);

signals:
    /// The files were read: how many, and how many rows they hold.
    void loaded(int files, int rows);
    /// A row was clicked or activated: select this API of this step and rank.
    void apiActivated(const QString& apiName, qint64 step, qint64 rank);

protected:
    void changeEvent(QEvent* event) override;

private:
    /// Every text again in the language in force (bar, table headers, summary, plot).
    void retranslate();
    void onLoaded();
    void rebuildPlot();
    void rowChosen(const QModelIndex& proxyIndex, bool activate);
    void updateSummary();
    /// The API picker: names by how far they exceed their threshold ("(sign flip)" translated), the choice kept.
    void fillApiBox();

    std::shared_ptr<const probescope::freebench::FreeBenchTable> m_table;
    QFutureWatcher<std::shared_ptr<const probescope::freebench::FreeBenchTable>> m_watcher;
    QString m_api;
    bool m_log = true;
    std::vector<Point> m_points;
    std::vector<double> m_thresholds;
    QString m_plotMessage;

    FreeBenchmarkModel* m_model = nullptr;
    QSortFilterProxyModel* m_proxy = nullptr;
    QLabel* m_summary = nullptr;
    QLineEdit* m_filter = nullptr;
    QTableView* m_view = nullptr;
    QLabel* m_apiLabel = nullptr;
    QComboBox* m_apiBox = nullptr;
    QCheckBox* m_logBox = nullptr;
    QCustomPlot* m_plotWidget = nullptr;
    QCPTextElement* m_title = nullptr;
    QCPItemText* m_messageItem = nullptr;
    QCPGraph* m_offScaleGraph = nullptr;
    std::vector<QCPGraph*> m_rankGraphs;
    std::vector<QCPItemStraightLine*> m_thresholdLines;
    std::vector<QCPItemText*> m_thresholdLabels;
};

} // namespace probescope::ui
