// SPDX-License-Identifier: Apache-2.0
#pragma once
// Opening an msprobe graph file (.vis, .vis.db, .trend.db; docs/graph.md) on the thread pool.

#include "core/graph/graphmodel.h"
#include "core/graph/trend.h"
#include "ui/jobs/backgroundtask.h"

#include <QObject>
#include <QString>

#include <filesystem>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

namespace probescope::ui {

/// One of a monitor run's anomalies (its anomaly_detected/ folder, in anomaly_processor's order), placed in the
/// trend table: the target and metric it names.
struct TrendAnomaly
{
    std::int64_t rank = 0;
    std::int64_t step = 0;
    std::int64_t microStep = 0;
    std::int64_t vppStage = 0;
    std::string target; ///< "layers.0.self_attention.input" (its tag_name without vpp, call and rank)
    std::string metric; ///< "actv"
    std::string message;
};

/// What opening a graph file gave: a graph file (with each graph's summary), a trend table, or the error.
struct GraphFileOutcome
{
    std::filesystem::path path;
    std::shared_ptr<const graph::GraphFile> graphs;
    std::vector<graph::GraphSummary> summaries; ///< one per graphs->graphs entry
    std::shared_ptr<const graph::TrendTable> trend;
    /// A monitor folder opened directly: its anomalies (empty without anomaly_detected/) and what converting it
    /// warned about.
    std::vector<TrendAnomaly> anomalies;
    Diagnostics warnings;
    std::optional<Diagnostic> error; ///< set when neither could be read (or the open was cancelled)
    bool cancelled = false;
};

/// True for the names the window opens as graph files (.vis.db, .vis, .trend.db).
bool isGraphFilePath(const QString& path);
/// True for a monitor output folder (monitor::isMonitorOutput): the window opens it as its trends.
bool isMonitorFolder(const QString& path);

/**
 * @brief A monitor output folder as a trend table, with no conversion step for the user: msprobe's data2db
 * (monitor::monitorToDb, steps as trained, --micro_step false, so a step is the dump's step) into a private
 * temporary folder that is removed at once, read back by graph::readTrendDb; its anomaly_detected/ files in
 * anomaly_processor's order (monitor::analyseAnomalies). The table's path names the folder.
 */
GraphFileOutcome openMonitorFolder(const std::filesystem::path& dir);

/// anomaly_analyse.json's text (monitor::analyseAnomalies) as TrendAnomaly rows, in its order.
std::vector<TrendAnomaly> trendAnomaliesOf(const std::string& analyseJson);
bool isTrendDbPath(const QString& path);

/// Reads the file to the end (blocking; GraphFileJob calls it on a worker thread). A .vis.db is read without its
/// input_data/output_data (graph::ReadOptions::nodeData off: a million-node db opens without its GBs of JSON); the
/// viewer fetches one node's with graph::readNodeData when it is selected.
GraphFileOutcome openGraphFile(const std::filesystem::path& path, ProgressSink* progress);

/**
 * @brief openGraphFile on the thread pool with progress and Cancel. Opening another file while one is being read
 * cancels that read; the new one starts when it has stopped, and only the last file's outcome is reported.
 */
class GraphFileJob : public QObject
{
    Q_OBJECT
public:
    explicit GraphFileJob(QObject* parent = nullptr);
    ~GraphFileJob() override;

    void open(const std::filesystem::path& path);
    void cancel();
    bool isRunning() const { return m_task.isRunning() || m_pending.has_value(); }
    void waitForFinished() { m_task.waitForFinished(); }
    BackgroundTask& task() { return m_task; }
    /// The outcome of the last finished open.
    const GraphFileOutcome& outcome() const { return m_outcome; }
    /// The same, moved out: the window keeps the only reference to a large file, so that it can free it off its
    /// own thread (GraphFilePanel).
    GraphFileOutcome takeOutcome() { return std::exchange(m_outcome, GraphFileOutcome {}); }

signals:
    void progressChanged(qint64 done, qint64 total);
    void finished();

private:
    void startNow(const std::filesystem::path& path);

    BackgroundTask m_task;
    std::shared_ptr<GraphFileOutcome> m_running;
    std::optional<std::filesystem::path> m_pending;
    GraphFileOutcome m_outcome;
};

} // namespace probescope::ui
