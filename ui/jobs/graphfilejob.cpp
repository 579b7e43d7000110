// SPDX-License-Identifier: Apache-2.0
#include "ui/jobs/graphfilejob.h"

#include "core/graph/graphreader.h"

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

GraphFileOutcome openGraphFile(const std::filesystem::path& path, ProgressSink* progress)
{
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
