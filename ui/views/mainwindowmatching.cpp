// SPDX-License-Identifier: Apache-2.0
// The main window's graph view and manual matching (issue 27 items 3 and 4), kept apart from mainwindow.cpp: the
// view beside the tree, kept in step with it (selection, search, filters), and matching by hand, which compares the
// shown pair again through the one compare pipeline with the matches as --match-file gives them.
#include "ui/views/mainwindow.h"

#include "core/dump/entryname.h"
#include "core/graph/graphmodel.h"
#include "core/visconfig/visconfig.h"
#include "ui/views/graphfilepanel.h"
#include "ui/models/graphfilemodel.h"
#include "ui/models/comparetreemodel.h"
#include "ui/models/graphsides.h"
#include "ui/models/treerowsmodel.h"
#include "ui/panels/elidedlabel.h"
#include "ui/views/comparetreeview.h"
#include "ui/views/graphview.h"

#include <QAction>
#include <QCoreApplication>
#include <QApplication>
#include <QFileDialog>
#include <QFutureWatcher>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QPromise>
#include <QSettings>
#include <QSplitter>
#include <QThreadPool>
#include <QLayout>
#include <QTreeView>

#include <set>

namespace probescope::ui {

namespace {

QString toQ(std::string_view s) { return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size())); }

/// The texts of this file in a context of their own (resources/translations: one block, apart from MainWindow's).
class GraphMatchingText
{
    Q_DECLARE_TR_FUNCTIONS(probescope::ui::GraphMatching)
};

} // namespace

void MainWindow::buildGraphView()
{
    m_graph = new GraphView(this);
    m_graph->setVisible(false);
    if (auto* outer = findChild<QSplitter*>("mainSplitter")) {
        // Beside the tree: the tree and the graph share the main splitter's first place (the tabs keep the second).
        auto* inner = new QSplitter(Qt::Horizontal); // no parent yet: a child of a splitter joins it at once
        inner->setObjectName("treeGraphSplitter");
        inner->setChildrenCollapsible(false);
        QWidget* tree = outer->replaceWidget(0, inner);
        if (tree)
            inner->addWidget(tree);
        inner->addWidget(m_graph);
        inner->setStretchFactor(0, 2);
        inner->setStretchFactor(1, 3);
    }
    m_showGraph = new QAction(this);
    m_showGraph->setObjectName("showGraphView");
    m_showGraph->setCheckable(true);
    m_showGraph->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_G));
    connect(m_showGraph, &QAction::toggled, this, [this](bool on) {
        setGraphViewShown(on);
        if (!m_quiet) // a scripted run's --view is for that run
            QSettings().setValue("window/showGraph", on);
    });
    addAction(m_showGraph);
    m_viewMenu->addSeparator();
    m_viewMenu->addAction(m_showGraph);

    m_saveMatches = new QAction(this);
    m_saveMatches->setObjectName("saveMatches");
    m_loadMatches = new QAction(this);
    m_loadMatches->setObjectName("loadMatches");
    connect(m_saveMatches, &QAction::triggered, this, [this] {
        const QString start = lastDialogFolder().isEmpty() ? m_settings.exportFolder : lastDialogFolder();
        const QString folder = QFileDialog::getExistingDirectory(this, GraphMatchingText::tr("Save the manual matches into"), start);
        rememberDialogFolder(folder);
        if (!folder.isEmpty())
            saveManualMatches(folder);
    });
    connect(m_loadMatches, &QAction::triggered, this, [this] {
        const QString start = lastDialogFolder().isEmpty() ? m_settings.exportFolder : lastDialogFolder();
        const QString file = QFileDialog::getOpenFileName(this, GraphMatchingText::tr("Load manual matches"), start,
                                                          GraphMatchingText::tr("Manual matches (*.vis.config);;All files (*)"));
        rememberDialogFolder(file);
        if (!file.isEmpty())
            loadManualMatches(file);
    });
    m_matchMenu = new QMenu(this);
    m_matchMenu->addActions({ m_graph->matchAction(), m_graph->matchChildrenAction(), m_graph->unmatchAction(),
                              m_graph->unmatchChildrenAction() });
    m_matchMenu->addSeparator();
    m_matchMenu->addActions({ m_loadMatches, m_saveMatches });
    // Under Tools, beside run_ut: the menu bar keeps its five menus.
    m_toolsMenu->insertMenu(m_settingsAction, m_matchMenu);
    // Window-wide shortcuts: the graph's actions fire wherever the focus is (the tree or the graph).
    addActions({ m_graph->matchAction(), m_graph->matchChildrenAction(), m_graph->unmatchAction(),
                 m_graph->unmatchChildrenAction() });

    connect(m_graph, &GraphView::npuNodePicked, this, &MainWindow::onGraphNodePicked);
    connect(m_graphPanel, &GraphFilePanel::nodeSelected, this, [this] { syncGraphToGraphFile(); });
    connect(m_graph, &GraphView::matchRequested, this, &MainWindow::matchInGraph);
    connect(m_graph, &GraphView::unmatchRequested, this, &MainWindow::unmatchInGraph);
    // The tree's filters, drawn as faded nodes: NPU nodes as the tree shows them, bench nodes with their partner
    // (an unpaired one as an unmatched node of its name).
    m_graph->setShown([this](GraphSideId side, std::uint32_t node) {
        const auto sides = m_graph->sides();
        if (!sides || !m_graphAnalysis || m_model->tree() != m_graphAnalysis->skeleton->tree.get())
            return true;
        std::int32_t npu = side == GraphSideId::Npu ? static_cast<std::int32_t>(node) : sides->partnerOf(side, node);
        if (npu >= 0)
            return m_rows->isShown(tree::NodeId { static_cast<std::uint32_t>(npu) });
        const FilterSpec spec = m_filter->spec();
        return spec.acceptsStatus(session::Status::Unmatched)
            && spec.acceptsName(dump::parseEntryName(sides->side(side).nodes[node].name));
    });
    m_showGraph->setChecked(QSettings().value("window/showGraph", false).toBool());
    retranslateGraph();
}

void MainWindow::retranslateGraph()
{
    m_graph->retranslate();
    m_showGraph->setText(GraphMatchingText::tr("&Graph view"));
    m_showGraph->setStatusTip(GraphMatchingText::tr("Show the NPU and bench graphs side by side beside the tree."));
    m_matchMenu->setTitle(GraphMatchingText::tr("&Manual matching"));
    m_saveMatches->setText(GraphMatchingText::tr("&Save matches…"));
    m_saveMatches->setStatusTip(GraphMatchingText::tr("Write the manual matches of the shown pair as a tb_graph_ascend .vis.config."));
    m_loadMatches->setText(GraphMatchingText::tr("&Load matches…"));
    m_loadMatches->setStatusTip(GraphMatchingText::tr("Read a .vis.config (tb_graph_ascend's manual matches) and compare the shown pair with them."));
    const bool pair = m_plan && m_pairIndex >= 0;
    m_loadMatches->setEnabled(pair);
    m_saveMatches->setEnabled(pair && !manualMatches().empty());
}

void MainWindow::setGraphViewShown(bool shown)
{
    if (m_showGraph->isChecked() != shown)
        m_showGraph->setChecked(shown); // comes back here through toggled
    // Turning the view off gives back the width it took: a window the view made wider shrinks to its size before
    // (issue 36 item 1). A window the user resized meanwhile, or maximised, is left alone.
    if (shown && !m_graph->isVisible() && isVisible())
        m_sizeBeforeGraph = size();
    const QSize withGraph = size();
    m_graph->setVisible(shown);
    if (shown) {
        m_sizeWithGraph = QSize();
        if (isVisible()) {
            layout()->activate();
            m_sizeWithGraph = size();
        }
        updateGraphView();
        syncGraphToGraphFile();
    } else if (m_sizeBeforeGraph.isValid() && withGraph == m_sizeWithGraph && !isMaximized() && !isFullScreen()
               && withGraph.width() > m_sizeBeforeGraph.width()) {
        layout()->activate();
        resize(m_sizeBeforeGraph.expandedTo(minimumSizeHint()));
    }
}

void MainWindow::onGraphPairShown(int pairIndex)
{
    m_rematching = false;
    if (pairIndex != m_graphPair) {
        m_graph->clear();
        m_graphAnalysis.reset();
        m_graphPending.reset();
    }
    m_graphPair = pairIndex;
    m_graph->updateActions();
    retranslateGraph();
}

void MainWindow::updateGraphView()
{
    if (!m_graph || !m_graph->isVisible())
        return;
    auto* outer = findChild<QSplitter*>("mainSplitter");
    auto* inner = findChild<QSplitter*>("treeGraphSplitter");
    if (outer && inner && isVisible() && !m_graph->property("widthGiven").toBool() && outer->width() > 0) {
        // Once, when first shown in a laid-out window: the graph takes the larger share (two sides of boxes need
        // the width more than the tree and the tabs); the user's splitter moves are kept after that.
        const int total = outer->width();
        outer->setSizes({ total * 3 / 4, total - total * 3 / 4 });
        inner->setSizes({ total * 3 / 10, total * 45 / 100 });
        m_graph->setProperty("widthGiven", true);
    }
    if (isGraphFileShown()) {
        updateGraphViewFromFile(); // the opened file's graphs, not a pair's
    } else if (m_analysis && m_analysis != m_graphAnalysis && m_analysis != m_graphPending) {
        m_graphFileSides = -1;
        // Made on a worker (the bench's construct.json is read and its tree built, every row's bench entry looked
        // up: 0.3 s of CPU at 200,000 nodes, probescope-benchgraphview --pair), shown when ready if the analysis is
        // still the shown one. The inputs
        // are immutable and shared, so nothing is torn down under the worker.
        m_graphPending = m_analysis;
        auto promise = std::make_shared<QPromise<std::shared_ptr<const GraphSides>>>();
        auto* watcher = new QFutureWatcher<std::shared_ptr<const GraphSides>>(this);
        connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher, analysis = m_analysis] {
            watcher->deleteLater();
            if (analysis != m_analysis || watcher->future().resultCount() == 0)
                return;
            m_graphPending.reset();
            m_graphAnalysis = analysis;
            m_graph->setSides(watcher->future().result());
            const tree::NodeId current = m_tree->currentNode();
            if (current.valid())
                syncGraphToTree(current);
            updateGraphView(); // the hits
            emit graphViewUpdated();
        });
        watcher->setFuture(promise->future());
        QThreadPool::globalInstance()->start([promise, analysis = m_analysis] {
            promise->start();
            promise->addResult(graphSidesFromAnalysis(*analysis, benchTreeOf(*analysis)));
            promise->finish();
        });
    }
    std::vector<std::uint32_t> hits;
    hits.reserve(m_hits.size());
    for (const tree::NodeId n : m_hits)
        hits.push_back(n.value);
    m_graph->setHits(hits);
    retranslateGraph();
}

void MainWindow::updateGraphViewFromFile()
{
    const graph::GraphFile* file = m_graphFileShown.get();
    const int shown = graphFilePanel() ? graphFilePanel()->currentGraph() : -1;
    if (!file || shown < 0 || static_cast<std::size_t>(shown) >= file->graphs.size())
        return;
    // The sides are made of an NPU graph and its bench graph: a bench graph chosen in the page shows its NPU's.
    int npu = shown;
    const graph::Graph& chosen = file->graphs[static_cast<std::size_t>(shown)];
    if (chosen.side == graph::Side::Bench) {
        for (std::size_t i = 0; i < file->graphs.size(); ++i) {
            const graph::Graph& g = file->graphs[i];
            if (g.side == graph::Side::Npu && g.step == chosen.step && g.rank == chosen.rank)
                npu = static_cast<int>(i);
        }
    }
    if (npu == m_graphFileSides)
        return;
    m_graphFileSides = npu;
    // No pair behind these sides: the pair's sync with the tree and manual matching stay off (a db has no rows).
    m_graphAnalysis.reset();
    m_graphPending.reset();
    m_graph->clear();
    // 250-400 ms at 200,000 nodes (docs/graph.md): on a worker, shown if the file and graph are still the shown ones.
    auto promise = std::make_shared<QPromise<std::shared_ptr<const GraphSides>>>();
    auto* watcher = new QFutureWatcher<std::shared_ptr<const GraphSides>>(this);
    connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher, fileShown = m_graphFileShown, npu] {
        watcher->deleteLater();
        if (fileShown != m_graphFileShown || npu != m_graphFileSides || !isGraphFileShown()
            || watcher->future().resultCount() == 0)
            return;
        m_graph->setSides(watcher->future().result());
        syncGraphToGraphFile(); // the node the page shows, as a pair's tree does (issue 36 item 3)
        emit graphViewUpdated();
    });
    watcher->setFuture(promise->future());
    QThreadPool::globalInstance()->start([promise, fileShown = m_graphFileShown, npu] {
        promise->start();
        promise->addResult(graphSidesFromGraphFile(fileShown, static_cast<std::size_t>(npu)));
        promise->finish();
    });
}

void MainWindow::syncGraphToTree(tree::NodeId node)
{
    if (m_graphSyncing || !m_graph->isVisible() || !m_graph->sides() || !m_graphAnalysis
        || m_model->tree() != m_graphAnalysis->skeleton->tree.get())
        return;
    // Already current there (the graph made the tree follow it): the bench side keeps what the user picked.
    if (m_graph->current(GraphSideId::Npu) == node.value)
        return;
    m_graphSyncing = true;
    m_graph->selectNode(GraphSideId::Npu, node.value);
    m_graphSyncing = false;
}

void MainWindow::syncGraphToGraphFile()
{
    const auto sides = m_graph->sides();
    if (m_graphSyncing || !m_graph->isVisible() || !sides || !sides->fromGraphFile || !isGraphFileShown()
        || !m_graphFileShown)
        return;
    const auto node = m_graphPanel->model()->nodeOf(m_graphPanel->tree()->currentIndex());
    const int shown = m_graphPanel->currentGraph();
    if (!node || shown < 0 || static_cast<std::size_t>(shown) >= m_graphFileShown->graphs.size())
        return;
    // The page shows the NPU graph of the sides, or its bench graph (the same step and rank): the node's side.
    const GraphSideId side = shown == m_graphFileSides ? GraphSideId::Npu : GraphSideId::Bench;
    if (*node >= sides->side(side).size() || m_graph->current(side) == *node)
        return;
    m_graphSyncing = true;
    m_graph->selectNode(side, *node);
    m_graphSyncing = false;
}

void MainWindow::onGraphNodePicked(std::uint32_t node)
{
    if (const auto sides = m_graph->sides(); sides && sides->fromGraphFile) {
        // A graph file's page follows the graph as a pair's tree does: its tree, its Details.
        if (m_graphSyncing || !isGraphFileShown() || node >= sides->npu().size() || m_graphFileSides < 0)
            return;
        m_graphSyncing = true;
        if (m_graphPanel->currentGraph() != m_graphFileSides)
            m_graphPanel->showGraph(m_graphFileSides);
        m_graphPanel->selectNode(QString::fromUtf8(sides->npu().nodes[node].name.data(),
                                                   static_cast<qsizetype>(sides->npu().nodes[node].name.size())));
        m_graphSyncing = false;
        return;
    }
    if (m_graphSyncing || !m_graphAnalysis || m_model->tree() != m_graphAnalysis->skeleton->tree.get())
        return;
    m_graphSyncing = true;
    selectNode(tree::NodeId { node });
    m_graphSyncing = false;
}

CompareSettings MainWindow::withManualMatches(CompareSettings settings, int pairIndex) const
{
    const auto manual = m_manualMatches.find(pairIndex);
    if (manual == m_manualMatches.end() || manual->second.empty())
        return settings;
    // The entries --match-file would read from a file, NPU name -> bench name, in the order they were made.
    graph::VisConfig config { "(manual matches)", {} };
    for (const graph::NodeMatch& m : manual->second)
        config.entries.push_back({ m.npu, m.bench });
    settings.manualMatches = std::move(config);
    return settings;
}

bool MainWindow::isGraphViewReady() const
{
    if (!m_graph->isVisible())
        return true;
    if (isGraphFileShown())
        return m_graph->sides() && m_graph->sides()->fromGraphFile && m_graphFileSides >= 0;
    return !m_analysis || (m_graphAnalysis == m_analysis && m_graph->sides());
}

std::vector<graph::NodeMatch> MainWindow::manualMatches() const
{
    const auto it = m_manualMatches.find(m_pairIndex);
    return it == m_manualMatches.end() ? std::vector<graph::NodeMatch> {} : it->second;
}

void MainWindow::setManualMatches(std::vector<graph::NodeMatch> matches)
{
    if (!m_plan || m_pairIndex < 0)
        return;
    m_manualMatches[m_pairIndex] = std::move(matches);
    // Compared again through the one pipeline (the compare runs in the background as any compare does): the table,
    // the verdicts, the first failing node, the tree, the graph and every export follow.
    const int pair = m_pairIndex;
    const QString selected = selectedNodeKey();
    m_finished.erase(pair);
    showPair(pair);
    m_rematching = true;
    m_pendingSelection = selected;
}

void MainWindow::matchInGraph(std::uint32_t npu, std::uint32_t bench, bool withChildren)
{
    const auto sides = m_graph->sides();
    if (!sides || sides->fromGraphFile)
        return;
    if (isComparing()) {
        say([] { return GraphMatchingText::tr("Wait for the compare to finish before matching."); });
        return;
    }
    // ptdbg's .pkl dumps have no graph nodes to name (compare --match-file refuses them too).
    if (m_plan && m_pairIndex >= 0
        && m_plan->pairs[static_cast<std::size_t>(m_pairIndex)].npu.format == dump::DumpFormat::LegacyPkl) {
        say([] { return GraphMatchingText::tr("Manual matching pairs msprobe dump entries; a ptdbg .pkl pair has none."); });
        return;
    }
    const std::string npuName(sides->npu().nodes[npu].name);
    const std::string benchName(sides->bench().nodes[bench].name);
    const auto matches = addManualMatch(*sides, manualMatches(), npu, bench, withChildren);
    setManualMatches(matches);
    const std::size_t count = matches.size();
    say([=, this] {
        return GraphMatchingText::tr("Matched %1 with %2 (%3 manual matches in force); comparing again…")
            .arg(toQ(npuName), toQ(benchName))
            .arg(count);
    });
    // The status line keeps saying it once the compare has ended (issue 36 item 8).
    m_nextNote = [=] {
        return GraphMatchingText::tr("Matched %1 with %2 (%3 manual matches in force).").arg(toQ(npuName), toQ(benchName)).arg(count);
    };
}

void MainWindow::unmatchInGraph(std::uint32_t npu, bool withChildren)
{
    const auto sides = m_graph->sides();
    if (!sides || sides->fromGraphFile)
        return;
    if (isComparing()) {
        say([] { return GraphMatchingText::tr("Wait for the compare to finish before matching."); });
        return;
    }
    const auto before = manualMatches();
    const auto after = removeManualMatch(*sides, before, npu, withChildren);
    const std::string name(sides->npu().nodes[npu].name);
    if (after.size() == before.size()) {
        say([=, this] { return GraphMatchingText::tr("%1 has no manual match to undo.").arg(toQ(name)); });
        return;
    }
    setManualMatches(after);
    const std::size_t undone = before.size() - after.size();
    const std::size_t left = after.size();
    say([=, this] { return GraphMatchingText::tr("Unmatched %1; comparing again…").arg(toQ(name)); });
    m_nextNote = [=] {
        return GraphMatchingText::tr("Unmatched %1 (%2 manual matches undone, %3 in force).").arg(toQ(name)).arg(undone).arg(left);
    };
}

QString MainWindow::saveManualMatches(const QString& folder)
{
    if (!m_plan || m_pairIndex < 0)
        return {};
    const session::RankPair& pair = m_plan->pairs[static_cast<std::size_t>(m_pairIndex)];
    // tb_graph_ascend's name, {tag}_{step}_{rank}.vis.config; a dump pair has no db to take the tag from.
    auto written = graph::writeVisConfig(folder.toStdString(), "compare", std::max<std::int64_t>(pair.step, 0),
                                         pair.npu.rank.value_or(0), manualMatches());
    if (!written) {
        const QString error = QString::fromStdString(written.error().format());
        say([=, this] { return GraphMatchingText::tr("Matches not saved: %1").arg(error); });
        if (!m_quiet && isVisible() && !QApplication::platformName().contains("offscreen"))
            QMessageBox::warning(this, GraphMatchingText::tr("Save matches"), error);
        return {};
    }
    const QString path = QString::fromStdString(written->string());
    say([=, this] { return GraphMatchingText::tr("Manual matches saved to %1").arg(path); });
    return path;
}

bool MainWindow::loadManualMatches(const QString& file)
{
    if (!m_plan || m_pairIndex < 0)
        return false;
    auto config = graph::readVisConfig(file.toStdString());
    if (!config) {
        const QString error = QString::fromStdString(config.error().format());
        say([=, this] { return GraphMatchingText::tr("Matches not loaded: %1").arg(error); });
        if (!m_quiet && isVisible() && !QApplication::platformName().contains("offscreen"))
            QMessageBox::warning(this, GraphMatchingText::tr("Load matches"), error);
        return false;
    }
    // Resolved against the shown pair's own dumps (the collision rule of docs/graph.md), as the compare will.
    const auto skeleton = m_analysis ? m_analysis->skeleton : nullptr;
    if (!skeleton || !skeleton->npu || !skeleton->bench) {
        say([=, this] { return GraphMatchingText::tr("Wait for the compare to finish before loading matches."); });
        return false;
    }
    const auto inNpu = [&](std::string_view n) { return skeleton->npu->dump->find(n) != nullptr; };
    const auto inBench = [&](std::string_view n) { return skeleton->bench->dump->find(n) != nullptr; };
    const graph::ResolvedMatches resolved = graph::resolveMatches(*config, inNpu, inBench);
    const std::size_t dropped = resolved.notes.size();
    const QString first = dropped ? QString::fromStdString(resolved.notes.front()) : QString();
    const std::size_t before = manualMatches().size();
    const std::size_t count = resolved.matches.size();
    if (count == 0) {
        // A file for another pair (or another model) matches nothing here: the matches in force stay (issue 36
        // item 8; they were silently dropped).
        say([=, this] {
            QString line = GraphMatchingText::tr("Nothing in %1 names nodes of this pair; the %2 manual matches in force stay.")
                               .arg(file)
                               .arg(before);
            if (dropped)
                line += QLatin1Char(' ') + GraphMatchingText::tr("%1 entries left out, the first: %2").arg(dropped).arg(first);
            return line;
        });
        return true;
    }
    setManualMatches(resolved.matches);
    const auto line = [=] {
        QString text = GraphMatchingText::tr("%1 manual matches loaded from %2").arg(count).arg(file);
        text += before ? GraphMatchingText::tr(", replacing the %1 in force.").arg(before) : QStringLiteral(".");
        if (dropped)
            text += QLatin1Char(' ') + GraphMatchingText::tr("%1 entries left out, the first: %2").arg(dropped).arg(first);
        return text;
    };
    say([=, this] { return line() + QLatin1Char(' ') + GraphMatchingText::tr("Comparing again…"); });
    m_nextNote = line;
    return true;
}

} // namespace probescope::ui
