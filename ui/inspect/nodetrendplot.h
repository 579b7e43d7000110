// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/session/session.h"

#include <QString>
#include <QStringList>
#include <QVector>
#include <QWidget>

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

class QComboBox;
class QCustomPlot;
class QCPTextElement;
class QCPItemText;
class QLabel;
class QTimer;
class QToolButton;
template<typename T>
class QFutureWatcher;

namespace probescope::ui {

namespace trend {

/// One side of one rank pair: the four statistics of every leaf of the node, as dump.json states them.
struct Sample
{
    std::int64_t step = -1;
    std::int64_t rankOrder = -1; ///< rank number (-1 for a "rank" folder without one), for ordering series
    QString rankLabel;          ///< "rank0", "rank", …
    bool bench = false;
    bool present = false;       ///< the node exists in this dump
    QString error;              ///< the dump could not be read
    Diagnostics problems;       ///< the load step's findings on a dump read in part (a cut file, wrong types, ...)
    std::vector<std::pair<std::string, std::array<double, 4>>> leaves; ///< "output.0" -> Max, Min, Mean, Norm
};

struct Data
{
    std::vector<Sample> samples;
    std::vector<std::string> leaves; ///< every leaf seen, in first-seen order
    bool cancelled = false;
};

class DumpCache;

} // namespace trend

class JobProgress;

/**
 * @brief A node's NPU and bench statistics across the steps and ranks of a session.
 *
 * For a node key (an entry of dump.json, e.g. "Functional.gelu.0.forward"), reads every step/rank
 * dump of the SessionPlan on the Qt thread pool and plots the chosen statistic (Max, Min, Mean or
 * Norm, as msprobe wrote it) of the chosen leaf (default output.0) against the step: one series per
 * rank and side, NPU solid, bench dashed, the same colour for a rank's two sides. Nothing blocks the
 * GUI: a new node cancels the running load, and Cancel stops it. Dump files read once are kept
 * (up to 1 GiB of dump.json) so switching nodes is quick; a step or rank without the node leaves a gap.
 */
class NodeTrendPlot : public QWidget
{
    Q_OBJECT
public:
    enum class Statistic : std::uint8_t { Max, Min, Mean, Norm };

    struct Series
    {
        QString name;
        bool bench = false;
        QVector<double> steps;
        QVector<double> values;
    };

    explicit NodeTrendPlot(QWidget* parent = nullptr);
    ~NodeTrendPlot() override;

    void setPlan(std::shared_ptr<const session::SessionPlan> plan);
    /// Starts loading the node's statistics in the background (an empty key clears the plot).
    void setNode(const QString& nodeKey);
    /// Leaf relative to the node ("output.0", "input.1", "weight" for parameters_grad).
    void setLeaf(const QString& leaf);
    void setStatistic(Statistic statistic);

    QString nodeKey() const { return m_key; }
    QString leaf() const { return m_leaf; }
    Statistic statistic() const { return m_statistic; }
    QStringList leaves() const;
    bool isLoading() const;
    const std::vector<Series>& series() const { return m_series; }
    QString message() const { return m_message; }
    /// What the load step found in the dumps of the last load (errors of damaged dumps, each once); their
    /// statistics are plotted only as far as they could be read. Also given by loadProblems().
    const Diagnostics& problems() const { return m_problems; }
    QCustomPlot* plot() const { return m_plot; }
    bool savePng(const QString& path, int width = 0, int height = 0);

    /// "Max", "Min", "Mean", "Norm", translated (msprobe's Chinese documentation keeps them in English).
    static QString statisticName(Statistic statistic);

public slots:
    void cancel();

signals:
    /// A load ended (finished, failed or cancelled); series() is up to date.
    void loadingFinished();
    /// A load found damaged dumps (the main window shows them in its load banner and Diagnostics tab).
    void loadProblems(const probescope::Diagnostics& problems);

protected:
    void changeEvent(QEvent* event) override;

private:
    /// Every text again in the language in force (bar, statistic names, axis, legend, title, status).
    void retranslate();
    void startLoad();
    void onLoaded(const trend::Data& result);
    void rebuild();
    void updateProgress();

    std::shared_ptr<const session::SessionPlan> m_plan;
    std::shared_ptr<trend::DumpCache> m_cache;
    std::shared_ptr<JobProgress> m_state; ///< the current load's cancel flag and count of files read
    QFutureWatcher<trend::Data>* m_watcher = nullptr;
    trend::Data m_data;
    QString m_key;
    QString m_leaf = QStringLiteral("output.0");
    Statistic m_statistic = Statistic::Max;
    std::vector<Series> m_series;
    QString m_message;
    Diagnostics m_problems;

    QLabel* m_leafLabel = nullptr;
    QLabel* m_statLabel = nullptr;
    QToolButton* m_save = nullptr;
    QComboBox* m_leafBox = nullptr;
    QComboBox* m_statBox = nullptr;
    QLabel* m_status = nullptr;
    QToolButton* m_cancel = nullptr;
    QTimer* m_progressTimer = nullptr;
    QCustomPlot* m_plot = nullptr;
    QCPTextElement* m_title = nullptr;
    QCPItemText* m_messageItem = nullptr;
};

} // namespace probescope::ui
