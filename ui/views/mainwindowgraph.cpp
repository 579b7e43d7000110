// SPDX-License-Identifier: Apache-2.0
// The main window's part for msprobe's graph files (issue 27, docs/graph.md "The GUI"): opening a .vis, .vis.db or
// .trend.db in the background, the graph page (GraphFilePanel) in place of the pair's tree, the trend view beside the
// rank map. Kept apart from mainwindow.cpp, which only calls in here.
#include "ui/views/mainwindow.h"

#include "ui/jobs/graphfilejob.h"
#include "ui/views/graphfilepanel.h"
#include "ui/views/rankmapview.h"
#include "ui/views/trendview.h"
#include "ui/panels/elidedlabel.h"

#include <QAction>
#include <QApplication>
#include <QComboBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QMenu>
#include <QMessageBox>
#include <QProgressBar>
#include <QSplitter>
#include <QStackedWidget>
#include <QTabWidget>

namespace probescope::ui {

namespace {

QString toQ(const std::string& s)
{
    return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size()));
}

} // namespace

void MainWindow::buildGraphFileViews()
{
    m_graphJob = new GraphFileJob(this);
    m_graphPanel = new GraphFilePanel(m_leftStack);
    m_leftStack->addWidget(m_graphPanel);
    m_trendView = new TrendView(this);
    m_trendView->hide(); // a tab once a .trend.db is open
    // The tabs on the right belong to a dump pair; the graph page has its own details beside its tree. They come
    // back with a pair, or with a trend view to show.
    connect(m_leftStack, &QStackedWidget::currentChanged, this, [this] {
        m_tabs->setVisible(!isGraphFileShown() || m_tabs->indexOf(m_trendView) >= 0);
    });
    connect(m_graphJob, &GraphFileJob::progressChanged, this, [this](qint64 done, qint64 total) {
        if (total > 0)
            m_progress->setValue(static_cast<int>(1000 * std::min(done, total) / total));
    });
    connect(m_graphJob, &GraphFileJob::finished, this, &MainWindow::onGraphFileLoaded);
    connect(m_graphPanel->graphBox(), &QComboBox::currentIndexChanged, this, [this] { updateGraphView(); });

    m_openGraph = new QAction(this);
    m_openGraph->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_G));
    connect(m_openGraph, &QAction::triggered, this, &MainWindow::chooseGraphFile);
    addAction(m_openGraph);
    m_fileMenu->insertAction(m_recentMenu->menuAction(), m_openGraph);
}

void MainWindow::retranslateGraphFile()
{
    if (!m_openGraph)
        return;
    m_openGraph->setText(tr("Open &graph file (.vis.db, .vis, .trend.db)…"));
    m_openGraph->setStatusTip(tr("Open a graph file of msprobe: a .vis.db (8.x or 26.x), a .vis (1.2) or a .trend.db (data2db)."));
    if (const int at = m_tabs->indexOf(m_trendView); at >= 0)
        m_tabs->setTabText(at, tr("Trend (.trend.db)"));
}

void MainWindow::chooseGraphFile()
{
    const QString file = QFileDialog::getOpenFileName(
        this, tr("Open an msprobe graph file"), lastDialogFolder(),
        tr("msprobe graph files (*.vis.db *.vis *.trend.db);;All files (*)"));
    rememberDialogFolder(file);
    if (!file.isEmpty())
        openGraphFile(file);
}

bool MainWindow::openGraphFile(const QString& path)
{
    // Read on the thread pool: a million-node db takes seconds, the window stays live and Escape cancels.
    m_graphJob->open(std::filesystem::path(path.toStdString()));
    setBusy(true);
    m_progress->setValue(0);
    say([=, this] { return tr("Opening %1…").arg(path); });
    return true;
}

bool MainWindow::isGraphFileShown() const
{
    return m_graphPanel && m_leftStack->currentWidget() == m_graphPanel;
}

bool MainWindow::isGraphFileLoading() const
{
    return m_graphJob && m_graphJob->isRunning();
}

void MainWindow::cancelGraphFile()
{
    if (isGraphFileLoading())
        m_graphJob->cancel();
}

QStringList MainWindow::graphFileReport() const
{
    QStringList lines;
    if (isGraphFileShown())
        lines << m_graphPanel->report();
    if (m_tabs->indexOf(m_trendView) >= 0)
        lines << m_trendView->report();
    return lines;
}

void MainWindow::onGraphFileLoaded()
{
    setBusy(isComparing());
    const GraphFileOutcome o = m_graphJob->takeOutcome();
    const QString path = toQ(o.path.string());
    if (o.cancelled) {
        const QString message = tr("Opening %1 was cancelled.").arg(path);
        say([=] { return message; });
        emit analysisFinished(false, message);
        return;
    }
    if (o.error) {
        // The reader's diagnostic names the file and what is wrong with it (damaged, not SQLite, a missing table).
        const QString error = toQ(o.error->format());
        say([=, this] { return tr("Cannot open: %1").arg(error); });
        emit analysisFinished(false, error);
        if (!m_quiet && isVisible() && !QApplication::platformName().contains("offscreen"))
            QMessageBox::warning(this, tr("Cannot open the graph file"), error);
        return;
    }
    // Read: it replaces whatever was shown (issue 36 item 4), a failed or cancelled open leaves that as it was.
    closeShownInput();
    m_shownFile = path;
    rememberPair(path, QString()); // File → Recent opens it again (graph files were missing there)
    if (o.trend) {
        m_trendView->setTable(o.trend);
        m_trendView->setAnomalies(o.anomalies); // a monitor folder's anomaly_detected/ (issue 34)
        if (m_tabs->indexOf(m_trendView) < 0)
            m_tabs->insertTab(m_tabs->indexOf(m_rankPanel) + 1, m_trendView, QString());
        retranslate();
        m_tabs->setVisible(true);
        m_tabs->setCurrentWidget(m_trendView);
        // Nothing else open: the trend table gets most of the width rather than the empty state's hints.
        if (auto* splitter = qobject_cast<QSplitter*>(centralWidget()); splitter && m_leftStack->currentWidget() == m_emptyState) {
            const int width = std::max(splitter->width(), 900);
            splitter->setSizes({ width / 3, width - width / 3 });
        }
        const auto table = o.trend;
        say([=, this] {
            return tr("%1: %2 steps × %3 ranks × %4 modules")
                .arg(QFileInfo(path).fileName())
                .arg(table->steps.size())
                .arg(table->ranks.size())
                .arg(table->modules.size());
        });
        emit analysisFinished(true, {});
        return;
    }
    m_graphPanel->setFile(o.graphs, o.summaries);
    m_leftStack->setCurrentWidget(m_graphPanel);
    // The graph view beside the page shows the file's NPU and bench graphs (mainwindowmatching.cpp).
    m_graphFileShown = o.graphs;
    m_graphFileSides = -1;
    updateGraphView();
    retranslate(); // the title names the file; the pair's actions are off
    // As for a pair: the first failing node by execution order is where the window lands.
    m_graphPanel->selectFirstFailure();
    const std::size_t warnings = o.graphs->warnings.size();
    // Made again on a language change (it kept the old language, issue 36 item 5).
    say([=, this] {
        const QString line = m_graphPanel->firstFailureLine();
        return warnings == 0 ? line : tr("%1 The file has %2 inconsistencies (probescope-cli info lists them).").arg(line).arg(warnings);
    });
    emit analysisFinished(true, {});
}

} // namespace probescope::ui
