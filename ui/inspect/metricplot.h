// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/session/nodestatus.h"
#include "core/session/session.h"

#include <QPoint>
#include <QWidget>

#include <memory>
#include <optional>
#include <vector>

class QCheckBox;
class QComboBox;
class QLabel;
class QPushButton;
class QCustomPlot;
class QCPGraph;
class QCPItemStraightLine;
class QCPItemText;
class QCPTextElement;
class QMouseEvent;

namespace probescope::ui {

/**
 * @brief One metric of every node of a compared pair, along execution order.
 *
 * x is the node's execution index (tree::TreeNode::executionIndex), y its value of the chosen
 * session::Metric; nodes without a value (NaN: the mode lacks the metric, or the node has no rows)
 * are left out. Points are coloured by the node's own status; the first failing node gets a vertical
 * line and a label. A click picks the nearest point within a few pixels and emits nodeClicked().
 * The metric combo and the log-scale switch are part of the widget. Mouse wheel zooms and dragging
 * pans the x axis; a double click shows everything again.
 */
class MetricPlot : public QWidget
{
    Q_OBJECT
public:
    struct Point
    {
        quint32 node = 0;
        double x = 0;
        double y = 0;
        session::Status status = session::Status::NoData;
    };

    explicit MetricPlot(QWidget* parent = nullptr);
    ~MetricPlot() override;

    void setAnalysis(std::shared_ptr<const session::PairAnalysis> analysis);
    std::shared_ptr<const session::PairAnalysis> analysis() const { return m_analysis; }

    void setMetric(session::Metric metric); ///< also sets the log scale to the metric's default
    session::Metric metric() const { return m_metric; }
    void setLogScale(bool on);
    bool logScale() const { return m_log; }
    /// Whether some node of the analysis has a finite value of `metric` (the plot opens on one that has).
    bool hasValues(session::Metric metric) const;

    /// The plotted points, in execution order (on a log scale only values > 0 are plotted).
    const std::vector<Point>& points() const { return m_points; }
    /// x of the first-failure marker, when one is drawn.
    std::optional<double> firstFailureX() const { return m_failureX; }
    /// The message drawn over an empty plot ("" when there are points).
    QString message() const { return m_message; }
    std::optional<quint32> selectedNode() const { return m_selected; }
    QCustomPlot* plot() const { return m_plot; }

    /// The plot as a PNG (0 = the widget's current size). False when the file cannot be written.
    bool savePng(const QString& path, int width = 0, int height = 0);

    /// Error metrics span decades, so they default to a log scale; cosine and ratios do not.
    static bool defaultLogScale(session::Metric metric);

public slots:
    /// Highlights the node's point (a ring); a node without a point clears the highlight.
    void setSelectedNode(quint32 nodeId);
    void clearSelection();

signals:
    void nodeClicked(quint32 nodeId);
    void metricChanged(int metric); ///< static_cast<int>(session::Metric)

protected:
    void changeEvent(QEvent* event) override;

private:
    /// Every text again in the language in force: the bar, the metric names, the legend, the axes, the title.
    void retranslate();
    void rebuild();
    void updateSelectionGraph();
    /// Index into m_points of the point nearest to `pos` (widget pixels of m_plot), within `radius` pixels.
    std::optional<std::size_t> pointNear(const QPoint& pos, double radius) const;
    void onPress(QMouseEvent* event);
    void onRelease(QMouseEvent* event);
    void onMove(QMouseEvent* event);

    std::shared_ptr<const session::PairAnalysis> m_analysis;
    session::Metric m_metric = session::Metric::Cosine;
    bool m_log = false;
    std::vector<Point> m_points;
    std::optional<double> m_failureX;
    std::optional<quint32> m_selected;
    QString m_message;
    QPoint m_pressPos;
    bool m_pressed = false;

    QLabel* m_metricLabel = nullptr;
    QPushButton* m_save = nullptr;
    QComboBox* m_metricBox = nullptr;
    QCheckBox* m_logBox = nullptr;
    QCustomPlot* m_plot = nullptr;
    QCPTextElement* m_title = nullptr;
    QCPGraph* m_trend = nullptr;
    std::vector<QCPGraph*> m_statusGraphs; ///< one per session::Status
    QCPGraph* m_selection = nullptr;
    QCPItemStraightLine* m_failureLine = nullptr;
    QCPItemText* m_failureLabel = nullptr;
    QCPItemText* m_messageItem = nullptr;
};

} // namespace probescope::ui
