// SPDX-License-Identifier: Apache-2.0
#include "ui/jobs/graphfilejob.h"

#include "core/graph/graphreader.h"
#include "core/monitor/anomalyanalyse.h"
#include "core/monitor/monitordb.h"

#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>

namespace probescope::ui {

namespace {

bool endsWith(const QString& path, const char* tail)
{
    return path.endsWith(QLatin1String(tail), Qt::CaseSensitive);
}

} // namespace

bool isTrendDbPath(const QString& path)
{
    return endsWith(path, ".trend.db");
}

bool isGraphFilePath(const QString& path)
{
    // The names core's readers take (graph::isGraphFileName), spelled as msprobe writes them.
    return endsWith(path, ".vis.db") || endsWith(path, ".vis") || isTrendDbPath(path);
}

bool isMonitorFolder(const QString& path)
{
    return monitor::isMonitorOutput(std::filesystem::path(path.toStdString()));
}

std::vector<TrendAnomaly> trendAnomaliesOf(const std::string& analyseJson)
{
    std::vector<TrendAnomaly> out;
    const QJsonDocument doc = QJsonDocument::fromJson(QByteArray::fromStdString(analyseJson));
    if (!doc.isObject())
        return out;
    // anomaly_analyse.json keeps its order (the top k, earliest first); QJsonObject sorts its keys, so the
    // text's own order is taken from the positions of the keys.
    const QJsonObject object = doc.object();
    std::vector<std::pair<std::size_t, QString>> keys;
    for (auto it = object.begin(); it != object.end(); ++it) {
        // Names are plain text ("0:layers.0.mlp.input:0/rank1/actv_step_1_call_2"); one that JSON escapes sorts last.
        keys.emplace_back(analyseJson.find("\"" + it.key().toStdString() + "\": {"), it.key());
    }
    std::sort(keys.begin(), keys.end());
    for (const auto& [position, key] : keys) {
        const QJsonObject a = object.value(key).toObject();
        TrendAnomaly t;
        t.rank = a.value("rank").toInteger();
        t.step = a.value("step").toInteger();
        t.microStep = a.value("micro_step").toInteger();
        t.vppStage = a.value("vpp_stage").toInteger();
        t.message = a.value("message").toString().toStdString();
        // tag_name "<vpp>:<target>:<call>/rank<R>/<metric>" (msprobe's monitor names it so).
        const std::string tag = a.value("tag_name").toString().toStdString();
        const std::size_t slash = tag.find("/rank");
        const std::size_t last = tag.rfind('/');
        std::string head = tag.substr(0, slash);
        if (const std::size_t colon = head.find(':'); colon != std::string::npos)
            head = head.substr(colon + 1);
        if (const std::size_t colon = head.rfind(':'); colon != std::string::npos)
            head = head.substr(0, colon);
        t.target = head;
        t.metric = last == std::string::npos ? std::string() : tag.substr(last + 1);
        out.push_back(std::move(t));
    }
    return out;
}

GraphFileOutcome openMonitorFolder(const std::filesystem::path& dir)
{
    GraphFileOutcome out;
    out.path = dir;
    QTemporaryDir scratch;
    if (!scratch.isValid()) {
        out.error = makeError("monitor.write", fileLocation(dir),
                              "cannot make a temporary folder for the trend table: " + scratch.errorString().toStdString());
        return out;
    }
    monitor::Data2DbOptions options;
    options.microStep = false;
    const std::filesystem::path dbDir = std::filesystem::path(scratch.path().toStdString()) / "db";
    auto converted = monitor::monitorToDb(dir, dbDir, options);
    if (!converted) {
        out.error = converted.error();
        return out;
    }
    out.warnings = converted->warnings;
    auto table = graph::readTrendDb(converted->db);
    if (!table) {
        out.error = table.error();
        return out;
    }
    auto named = std::make_shared<graph::TrendTable>(**table);
    named->path = dir.string();
    out.trend = std::move(named);
    const std::filesystem::path anomalies = dir / "anomaly_detected";
    if (QFileInfo(QString::fromStdString(anomalies.string())).isDir()) {
        monitor::AnomalyAnalyseOptions analyse;
        analyse.topK = 1000000;
        auto found = monitor::analyseAnomalies(anomalies, analyse);
        if (found)
            out.anomalies = trendAnomaliesOf(found->json);
        else
            out.warnings.push_back(found.error());
    }
    return out;
}

GraphFileOutcome openGraphFile(const std::filesystem::path& path, ProgressSink* progress)
{
    if (isMonitorFolder(QString::fromStdString(path.string())))
        return openMonitorFolder(path);
    GraphFileOutcome out;
    out.path = path;
    if (isTrendDbPath(QString::fromStdString(path.string()))) {
        auto table = graph::readTrendDb(path);
        if (!table)
            out.error = table.error();
        else
            out.trend = *table;
        return out;
    }
    graph::ReadOptions options;
    options.nodeData = false;
    options.progress = progress;
    auto file = graph::readGraphFile(path, options);
    if (!file) {
        out.cancelled = file.error().id == "graph.cancelled";
        out.error = file.error();
        return out;
    }
    out.graphs = *file;
    out.summaries.reserve(out.graphs->graphs.size());
    for (const graph::Graph& g : out.graphs->graphs)
        out.summaries.push_back(graph::summarize(*out.graphs, g));
    return out;
}

GraphFileJob::GraphFileJob(QObject* parent)
    : QObject(parent)
{
    connect(&m_task, &BackgroundTask::progressChanged, this, &GraphFileJob::progressChanged);
    connect(&m_task, &BackgroundTask::finished, this, [this] {
        std::shared_ptr<GraphFileOutcome> done = std::move(m_running);
        if (m_pending) {
            // A newer file was asked for while this one was read: its outcome is the one the window wants.
            const std::filesystem::path next = *m_pending;
            m_pending.reset();
            startNow(next);
            return;
        }
        m_outcome = done ? std::move(*done) : GraphFileOutcome {};
        emit finished();
    });
}

GraphFileJob::~GraphFileJob()
{
    m_pending.reset();
    m_task.cancel();
    m_task.waitForFinished();
}

void GraphFileJob::open(const std::filesystem::path& path)
{
    if (m_task.isRunning()) {
        m_pending = path;
        m_task.cancel();
        return;
    }
    startNow(path);
}

void GraphFileJob::cancel()
{
    m_pending.reset();
    m_task.cancel();
}

void GraphFileJob::startNow(const std::filesystem::path& path)
{
    auto outcome = std::make_shared<GraphFileOutcome>();
    m_running = outcome;
    // The worker owns its copies of the path and of the outcome's shared state; nothing of the window.
    m_task.start([path, outcome](ProgressSink& progress) { *outcome = openGraphFile(path, &progress); });
}

} // namespace probescope::ui
