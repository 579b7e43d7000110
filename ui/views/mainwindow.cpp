// SPDX-License-Identifier: Apache-2.0
#include "ui/views/mainwindow.h"

#include "ui/views/scriptedrun.h"

#include "core/session/paircache.h"
#include "ui/inspect/freebenchpanel.h"
#include "ui/inspect/metricplot.h"
#include "ui/inspect/nodetrendplot.h"
#include "ui/inspect/tensorinspector.h"
#include "ui/jobs/comparecontroller.h"
#include "ui/jobs/graphfilejob.h"
#include "ui/views/graphfilepanel.h"
#include "ui/jobs/overviewjob.h"
#include "ui/jobs/planjob.h"
#include "ui/models/comparetreemodel.h"
#include "ui/models/diagnosticsmodel.h"
#include "ui/models/nodebadges.h"
#include "ui/models/nodesearch.h"
#include "ui/models/rankoverviewmodel.h"
#include "ui/models/runanomalymodel.h"
#include "ui/models/treerowsmodel.h"
#include "ui/views/comparetreeview.h"
#include "ui/views/graphview.h"
#include "ui/panels/detailpanel.h"
#include "ui/panels/dumppreview.h"
#include "ui/panels/elidedlabel.h"
#include "ui/panels/filterbar.h"
#include "ui/panels/legendwidget.h"
#include "ui/panels/loadproblembanner.h"
#include "ui/panels/placeholdertable.h"
#include "ui/panels/runutdialog.h"
#ifdef PROBESCOPE_HAVE_RUNUT_ENGINE
#endif
#include "ui/panels/searchbar.h"
#include "ui/panels/settingsdialog.h"
#include "ui/panels/shortcutsdialog.h"
#include "ui/views/commmergepanel.h"
#include "ui/views/rankmapview.h"
#include "ui/views/setupcheckpage.h"
#include "ui/views/trendview.h"

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QComboBox>
#include <QCoreApplication>
#include <QDir>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QHeaderView>
#include <QLabel>
#include <QListWidget>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QProgressBar>
#include <QResizeEvent>
#include <QScrollBar>
#include <QPushButton>
#include <QSettings>
#include <QSplitter>
#include <QStackedWidget>
#include <QStatusBar>
#include <QTabBar>
#include <QTabWidget>
#include <QTableView>
#include <QTreeView>
#include <QToolBar>
#include <QVBoxLayout>
#include <QHBoxLayout>

#include <algorithm>
#include <utility>

namespace probescope::ui {

namespace {

/// The same finding (one dump may be reported by the shown pair and by the trend plot).
bool containsDiagnostic(const Diagnostics& list, const Diagnostic& d)
{
    return std::any_of(list.begin(), list.end(), [&](const Diagnostic& e) {
        return e.id == d.id && e.location.file == d.location.file && e.location.offset == d.location.offset
            && e.location.line == d.location.line && e.message == d.message;
    });
}

QString formatSeconds(double s)
{
    if (s < 0 || !std::isfinite(s))
        return QStringLiteral("–");
    if (s < 60)
        return MainWindow::tr("%1 s").arg(s, 0, 'f', 1);
    return QStringLiteral("%1:%2").arg(static_cast<int>(s) / 60).arg(static_cast<int>(s) % 60, 2, 10, QChar('0'));
}

QString toQ(const std::string& s) { return QString::fromStdString(s); }

// The failing row core's summary names ("… its output does not: ROW, Cosine …)") without core's
// English framing, which the window says in the user's language.
QString failingRowOf(const std::string& summary)
{
    const std::size_t colon = summary.rfind(": ");
    QString row = toQ(colon == std::string::npos ? summary : summary.substr(colon + 2));
    if (row.endsWith(')'))
        row.chop(1);
    return row;
}

} // namespace

MainWindow::MainWindow(QWidget* parent)
    : QMainWindow(parent)
    , m_settings(Settings::load())
{
    setObjectName("MainWindow");
    setAcceptDrops(true);
    m_controller = new CompareController(this);
    m_overview = new OverviewJob(this);
    m_model = new CompareTreeModel(this);
    m_rows = new TreeRowsModel(this);
    m_rows->setSourceModel(m_model);
    m_overviewModel = new RankOverviewModel(this);
    m_diagnostics = new DiagnosticsModel(this);

    buildActions();
    buildMenus();
    buildCentral();
    buildStatusBar();
    buildGraphFileViews(); // issue 27: mainwindowgraph.cpp
    buildRunViews();       // issue 34: mainwindowrun.cpp
    buildPlanJob();        // issue 37: mainwindowplan.cpp
    buildGraphView(); // issue 27: the graph beside the tree, manual matching (mainwindowmatching.cpp)
    setFocusChain();
    applySettings();
    retranslate();

    connect(m_controller, &CompareController::skeletonReady, this, &MainWindow::onSkeleton);
    connect(m_controller, &CompareController::layoutReady, this, &MainWindow::onLayout);
    connect(m_controller, &CompareController::statusBatch, this,
            [this](const session::StatusUpdate& update) { m_model->applyUpdate(update); });
    connect(m_controller, &CompareController::progress, this, &MainWindow::onProgress);
    connect(m_controller, &CompareController::finished, this, &MainWindow::onFinished);
    connect(m_controller, &CompareController::failed, this, &MainWindow::onFailed);
    connect(m_controller, &CompareController::cancelled, this, &MainWindow::onCancelled);
    connect(m_overview, &OverviewJob::pairStarted, m_overviewModel, &RankOverviewModel::setRunning);
    connect(m_overview, &OverviewJob::summariesReady, m_overviewModel, &RankOverviewModel::setSummaries);
    connect(m_overview, &OverviewJob::pairFailed, m_overviewModel, &RankOverviewModel::setFailed);
    connect(m_overview, &OverviewJob::finished, this, &MainWindow::onOverviewFinished);

    QSettings store;
    restoreGeometry(store.value("window/geometry").toByteArray());
    restoreState(store.value("window/state").toByteArray());
    if (!store.contains("window/geometry"))
        resize(1400, 860);
}

void MainWindow::setFocusChain()
{
    // Widgets join the focus chain in the order they are made: the graph view, made after the status bar, came after
    // it, so Tab jumped from the tree to the tabs, the status bar and only then the graph beside the tree (issue 36).
    QList<QWidget*> order { m_stepBox, m_rankBox };
    for (QWidget* region : std::initializer_list<QWidget*> { m_leftStack, m_graph, m_tabs, statusBar() }) {
        if (!region)
            continue;
        for (QWidget* w : region->findChildren<QWidget*>()) {
            if ((w->focusPolicy() & Qt::TabFocus) && !w->focusProxy() && w->window() == this) // a combo's popup is a window
                order << w;
        }
    }
    for (qsizetype i = 1; i < order.size(); ++i)
        QWidget::setTabOrder(order[i - 1], order[i]);
}

MainWindow::~MainWindow()
{
    // The controller's destructor cancels and joins; do it before the model it feeds goes away.
    delete m_controller;
    m_controller = nullptr;
    delete m_overview;
    m_overview = nullptr;
}

void MainWindow::buildActions()
{
    auto make = [this](QKeySequence key, auto slot) {
        auto* a = new QAction(this);
        if (!key.isEmpty())
            a->setShortcut(key);
        connect(a, &QAction::triggered, this, slot);
        addAction(a);
        return a;
    };
    m_openNpu = make(QKeySequence::Open, [this] { openPairDialog(false); });
    m_openBench = make(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_O), [this] { openPairDialog(true); });
    m_openCompareJson = make(QKeySequence(Qt::CTRL | Qt::Key_J), &MainWindow::chooseCompareJson);
    m_checkSetup = make(QKeySequence(), [this] { openSetupCheck(); });
    m_export = make(QKeySequence(Qt::CTRL | Qt::Key_E), &MainWindow::exportCsv);
    m_quit = make(QKeySequence::Quit, &QWidget::close);
    // On a graph file's page they act on its tree.
    m_expandAll = make(QKeySequence(Qt::CTRL | Qt::Key_Plus), [this] {
        if (isGraphFileShown())
            m_graphPanel->tree()->expandAll();
        else
            m_tree->expandAll();
    });
    m_collapseAll = make(QKeySequence(Qt::CTRL | Qt::Key_Minus), [this] {
        if (isGraphFileShown())
            m_graphPanel->tree()->collapseAll();
        else
            m_tree->collapseAll();
    });
    // The legend takes ~100 px of the tree's height; once the colours are learnt it can go.
    m_showLegend = make(QKeySequence(Qt::CTRL | Qt::Key_L), [this](bool on) {
        m_legend->setVisible(on && m_model->tree());
        QSettings().setValue("window/showLegend", on);
    });
    m_showLegend->setCheckable(true);
    m_firstFailure = make(QKeySequence(Qt::Key_F), &MainWindow::selectFirstFailure);
    m_next = make(QKeySequence(Qt::Key_N), &MainWindow::nextFailing);
    m_previous = make(QKeySequence(Qt::SHIFT | Qt::Key_N), &MainWindow::previousFailing);
    m_toOrigin = make(QKeySequence(Qt::Key_O), &MainWindow::jumpToOrigin);
    m_toPeer = make(QKeySequence(Qt::Key_P), &MainWindow::jumpToPeerRank);
    m_find = make(QKeySequence::Find, [this] {
        if (isGraphFileShown())
            m_graphPanel->searchBar()->focusSearch(); // a graph file's page has its own search bar
        else
            m_search->focusSearch();
    });
    m_cancelAction = make(QKeySequence(Qt::Key_Escape), &MainWindow::cancelCompare);
    m_runUt = make(QKeySequence(Qt::CTRL | Qt::Key_R), &MainWindow::runRunUt);
    m_settingsAction = make(QKeySequence::Preferences, &MainWindow::showSettings);
    m_demo = make(QKeySequence(), &MainWindow::openDemo);
    m_shortcuts = make(QKeySequence(Qt::Key_F1), &MainWindow::showShortcuts);
    m_about = make(QKeySequence(), &MainWindow::showAbout);
    // Every panel is reachable from the keyboard: Alt+0 the tree, Alt+1… the tabs on the right (issue 28).
    m_focusTree = make(QKeySequence(Qt::ALT | Qt::Key_0), [this] {
        if (m_leftStack->currentIndex() == 1)
            m_tree->setFocus();
        else
            m_emptyOpen->setFocus();
    });
    for (int i = 0; i < 7; ++i)
        m_tabActions << make(QKeySequence(Qt::ALT | (Qt::Key_1 + i)), [this, i] { showSideTab(i); });
    // Single-letter shortcuts must not fire while the user types in the search field.
    for (QAction* a : { m_firstFailure, m_next, m_previous, m_toOrigin, m_toPeer })
        a->setShortcutContext(Qt::WidgetWithChildrenShortcut);
}

void MainWindow::buildMenus()
{
    m_fileMenu = menuBar()->addMenu(QString());
    m_fileMenu->addActions({ m_openNpu, m_openBench, m_openCompareJson, m_checkSetup });
    m_recentMenu = m_fileMenu->addMenu(QString());
    m_fileMenu->addSeparator();
    m_fileMenu->addAction(m_export);
    m_fileMenu->addSeparator();
    m_fileMenu->addAction(m_quit);
    m_viewMenu = menuBar()->addMenu(QString());
    m_viewMenu->addActions({ m_expandAll, m_collapseAll });
    m_viewMenu->addSeparator();
    m_viewMenu->addAction(m_focusTree);
    m_viewMenu->addActions(m_tabActions);
    m_viewMenu->addSeparator();
    m_viewMenu->addAction(m_showLegend);
    m_goMenu = menuBar()->addMenu(QString());
    m_goMenu->addActions({ m_firstFailure, m_next, m_previous, m_toOrigin, m_toPeer, m_find, m_cancelAction });
    m_toolsMenu = menuBar()->addMenu(QString());
    m_toolsMenu->addActions({ m_runUt, m_settingsAction });
    m_helpMenu = menuBar()->addMenu(QString());
    m_helpMenu->addActions({ m_demo, m_shortcuts, m_about });
    rebuildRecentMenu();
}

void MainWindow::buildCentral()
{
    auto* toolbar = addToolBar(QString());
    toolbar->setObjectName("selectors");
    toolbar->setMovable(false);
    m_pairLabel = new ElidedLabel(this);
    m_pairLabel->setObjectName("pairPath");
    m_pairLabel->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Preferred);
    m_stepBox = new QComboBox(this);
    m_stepBox->setObjectName("stepSelector");
    m_rankBox = new QComboBox(this);
    m_rankBox->setObjectName("rankSelector");
    m_rankBox->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    // Labelled, and saying why they are empty before a pair is open.
    m_stepLabel = new QLabel(this);
    m_stepLabel->setBuddy(m_stepBox);
    m_rankLabel = new QLabel(this);
    m_rankLabel->setBuddy(m_rankBox);
    m_stepBox->setEnabled(false);
    m_rankBox->setEnabled(false);
    toolbar->addWidget(m_stepLabel);
    toolbar->addWidget(m_stepBox);
    toolbar->addWidget(m_rankLabel);
    toolbar->addWidget(m_rankBox);
    toolbar->addSeparator();
    toolbar->addWidget(m_pairLabel);
    connect(m_stepBox, &QComboBox::activated, this, &MainWindow::onStepChosen);
    connect(m_rankBox, &QComboBox::activated, this, &MainWindow::onRankChosen);

    auto* left = new QWidget(this);
    auto* leftLayout = new QVBoxLayout(left);
    leftLayout->setContentsMargins(4, 4, 4, 4);
    m_banner = new LoadProblemBanner(left);
    m_search = new SearchBar(left);
    m_filter = new FilterBar(left);
    m_tree = new CompareTreeView(left);
    m_tree->setObjectName("constructTree");
    m_tree->setModel(m_rows);
    // Recolours of many nodes are signalled coarsely (docs/gui-models.md); the view repaints whole.
    repaintOnAppearanceChange(m_model, m_tree);
    m_tree->setAlternatingRowColors(false);
    m_tree->horizontalHeader()->setStretchLastSection(false);
    m_tree->horizontalHeader()->setSectionResizeMode(0, QHeaderView::Interactive);
    m_tree->setColumnWidth(0, 420);
    m_tree->setColumnWidth(1, 170);
    m_legend = new LegendWidget(left);
    leftLayout->addWidget(m_banner);
    leftLayout->addWidget(m_search);
    leftLayout->addWidget(m_filter);
    leftLayout->addWidget(m_tree, 1);
    leftLayout->addWidget(m_legend);
    const bool legendShown = QSettings().value("window/showLegend", true).toBool();
    // The legend explains colours: it appears with them (onSkeleton), not beside an empty tree.
    m_legend->setVisible(false);
    m_showLegend->setChecked(legendShown);
    connect(m_search, &SearchBar::searchRequested, this, &MainWindow::onSearch);
    connect(m_search, &SearchBar::nextRequested, this, [this] { stepSearch(1); });
    connect(m_search, &SearchBar::previousRequested, this, [this] { stepSearch(-1); });
    connect(m_filter, &FilterBar::filterChanged, this, &MainWindow::applyFilter);
    connect(m_tree->selectionModel(), &QItemSelectionModel::currentChanged, this, &MainWindow::onCurrentChanged);

    m_tabs = new QTabWidget(this);
    m_detail = new DetailPanel(m_tabs);
    m_plot = new MetricPlot(m_tabs);
    m_trend = new NodeTrendPlot(m_tabs);
    m_inspector = new TensorInspector(m_tabs);
    m_rankPanel = new RankOverviewPanel(m_overviewModel, m_tabs);
    m_tabs->addTab(m_detail, QString());
    m_tabs->addTab(m_plot, QString());
    m_tabs->addTab(m_trend, QString());
    m_tabs->addTab(m_inspector, QString());
    m_tabs->addTab(m_rankPanel, QString());
    m_diagnosticsView = new PlaceholderTableView(m_tabs);
    m_diagnosticsView->setObjectName("diagnostics");
    m_diagnosticsView->setModel(m_diagnostics);
    m_diagnosticsView->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_diagnosticsView->setWordWrap(true);
    m_diagnosticsView->verticalHeader()->hide();
    m_diagnosticsView->verticalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_diagnosticsView->horizontalHeader()->setStretchLastSection(true);
    // Paths are long and the tab is narrow: the path is elided in its middle (file name and line:col stay),
    // the message wraps.
    m_diagnosticsView->setTextElideMode(Qt::ElideMiddle);
    m_diagnosticsView->installEventFilter(this); // its resizes refit the columns
    m_tabs->addTab(m_diagnosticsView, QString());
    m_commPanel = new CommMergePanel(m_overviewModel, m_tabs);
    m_tabs->addTab(m_commPanel, QString());
    connect(m_banner, &LoadProblemBanner::detailsRequested, this, &MainWindow::showDiagnostics);
    // The trend plot reads every step's and rank's dump through the load step: what it finds goes to the same
    // banner and Diagnostics tab as the shown pair's own problems.
    connect(m_trend, &NodeTrendPlot::loadProblems, this, [this](const Diagnostics& found) {
        Diagnostics shown;
        for (const Diagnostic& d : m_diagnostics->diagnostics()) {
            if (!containsDiagnostic(m_trendProblems, d))
                shown.push_back(d);
        }
        m_trendProblems = found;
        for (const Diagnostic& d : found) {
            if (!containsDiagnostic(shown, d))
                shown.push_back(d);
        }
        m_diagnostics->setDiagnostics(shown);
        m_banner->setDiagnostics(shown);
        retranslate();
    });
    // Free benchmark results: a tab shown only when the opened NPU dump holds free_benchmark.csv files,
    // and badges on the flagged API nodes painted by a delegate the tree model knows nothing of.
    // The tab exists only while there are results (a hidden tab would still be counted and cycled through).
    m_freeBench = new FreeBenchmarkPanel(this);
    m_freeBench->hide();
    m_badges = new NodeBadgeDelegate(this);
    m_tree->setItemDelegateForColumn(CompareTreeModel::NameColumn, m_badges);
    connect(m_badges, &NodeBadgeDelegate::badgesChanged, m_tree->viewport(), qOverload<>(&QWidget::update));
    connect(m_freeBench, &FreeBenchmarkPanel::loaded, this, &MainWindow::onFreeBenchmarkLoaded);
    connect(m_freeBench, &FreeBenchmarkPanel::apiActivated, this, &MainWindow::onFreeBenchmarkApi);
    connect(m_detail, &DetailPanel::rowActivated, this, &MainWindow::openTensorInspector);
    connect(m_tabs, &QTabWidget::currentChanged, this, [this] {
        if (m_tabs->currentWidget() == m_inspector)
            showTensorsOfSelection();
    });
    connect(m_plot, &MetricPlot::nodeClicked, this, [this](quint32 id) { selectNode(tree::NodeId { id }); });
    connect(m_rankPanel, &RankOverviewPanel::pairActivated, this, [this](int pair) {
        if (pair >= 0 && pair != m_pairIndex)
            showPair(pair);
    });
    connect(m_rankPanel, &RankOverviewPanel::originRequested, this, &MainWindow::jumpToOrigin);

    // First impression: what to do, not an empty tree (issue 28). Replaced by the tree once something is open.
    m_leftStack = new QStackedWidget(this);
    m_emptyState = new QWidget(m_leftStack);
    m_emptyState->setObjectName("emptyState");
    auto* emptyLayout = new QVBoxLayout(m_emptyState);
    emptyLayout->setContentsMargins(24, 24, 24, 24);
    m_emptyTitle = new QLabel(m_emptyState);
    m_emptyTitle->setObjectName("emptyTitle");
    m_emptyTitle->setWordWrap(true);
    QFont titleFont = m_emptyTitle->font();
    titleFont.setPointSizeF(titleFont.pointSizeF() * 1.3);
    titleFont.setBold(true);
    m_emptyTitle->setFont(titleFont);
    m_emptyText = new QLabel(m_emptyState);
    m_emptyText->setWordWrap(true);
    auto* emptyButtons = new QHBoxLayout;
    m_emptyOpen = new QPushButton(m_emptyState);
    m_emptyOpen->setObjectName("emptyOpenPair");
    m_emptyDemo = new QPushButton(m_emptyState);
    m_emptyDemo->setObjectName("emptyOpenDemo");
    emptyButtons->addWidget(m_emptyOpen);
    emptyButtons->addWidget(m_emptyDemo);
    emptyButtons->addStretch(1);
    m_emptyRecentLabel = new QLabel(m_emptyState);
    m_emptyRecent = new QListWidget(m_emptyState);
    m_emptyRecent->setObjectName("emptyRecentPairs");
    m_emptyRecentLabel->setBuddy(m_emptyRecent);
    emptyLayout->addWidget(m_emptyTitle);
    emptyLayout->addWidget(m_emptyText);
    emptyLayout->addLayout(emptyButtons);
    emptyLayout->addSpacing(12);
    emptyLayout->addWidget(m_emptyRecentLabel);
    emptyLayout->addWidget(m_emptyRecent, 1);
    connect(m_emptyOpen, &QPushButton::clicked, m_openNpu, &QAction::trigger);
    connect(m_emptyDemo, &QPushButton::clicked, m_demo, &QAction::trigger);
    connect(m_emptyRecent, &QListWidget::itemActivated, this, [this](QListWidgetItem* item) {
        openInputs(item->data(Qt::UserRole).toString(), item->data(Qt::UserRole + 1).toString());
    });
    m_leftStack->addWidget(m_emptyState);
    m_leftStack->addWidget(left);
    rebuildRecentMenu(); // the empty state's list, now that it exists

    auto* splitter = new QSplitter(Qt::Horizontal, this);
    splitter->setObjectName("mainSplitter");
    // Resized, never collapsed to nothing by a drag (a lost pane looked like a missing one); as the tree-graph one.
    splitter->setChildrenCollapsible(false);
    splitter->addWidget(m_leftStack);
    splitter->addWidget(m_tabs);
    splitter->setStretchFactor(0, 3);
    splitter->setStretchFactor(1, 2);
    setCentralWidget(splitter);
}

void MainWindow::buildStatusBar()
{
    // Long messages (pair labels, paths) are elided in the middle, whole in the tooltip: never cut at the end.
    m_message = new ElidedLabel(this);
    m_message->setObjectName("statusLine");
    m_message->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_progress = new QProgressBar(this);
    m_progress->setRange(0, 1000);
    m_progress->setMaximumWidth(220);
    m_timeLabel = new QLabel(this);
    m_cancel = new QPushButton(this);
    connect(m_cancel, &QPushButton::clicked, this, &MainWindow::cancelCompare);
    m_retry = new QPushButton(this);
    m_retry->setObjectName("compareAgain");
    m_retry->hide();
    connect(m_retry, &QPushButton::clicked, this, [this] { showPair(m_pairIndex); });
    statusBar()->addWidget(m_message, 1);
    statusBar()->addPermanentWidget(m_timeLabel);
    statusBar()->addPermanentWidget(m_progress);
    statusBar()->addPermanentWidget(m_cancel);
    statusBar()->addPermanentWidget(m_retry);
    setBusy(false);
}

void MainWindow::retranslate()
{
    // The title names what is shown: the graph or trend file, the pair (its two inputs), compare.json alone.
    if (!m_shownFile.isEmpty())
        setWindowTitle(tr("ProbeScope — %1").arg(QFileInfo(m_shownFile).fileName()));
    else if (m_npuInput.isEmpty())
        setWindowTitle(tr("ProbeScope"));
    else if (m_benchInput.isEmpty())
        setWindowTitle(tr("ProbeScope — %1").arg(QFileInfo(m_npuInput).fileName()));
    else
        setWindowTitle(tr("ProbeScope — %1 ↔ %2").arg(QFileInfo(m_npuInput).fileName(), QFileInfo(m_benchInput).fileName()));
    updateInputActions();
    m_fileMenu->setTitle(tr("&File"));
    m_recentMenu->setTitle(tr("Recent pairs"));
    m_viewMenu->setTitle(tr("&View"));
    m_goMenu->setTitle(tr("&Go"));
    m_toolsMenu->setTitle(tr("&Tools"));
    m_helpMenu->setTitle(tr("&Help"));
    m_openNpu->setText(tr("Open &pair…"));
    m_openBench->setText(tr("Open &bench dump…"));
    m_openCompareJson->setText(tr("Open compare.&json…"));
    m_checkSetup->setText(tr("Check &setup (packs or checkpoints)…"));
    m_export->setText(tr("&Export comparison CSV…"));
    m_quit->setText(tr("&Quit"));
    m_expandAll->setText(tr("&Expand all"));
    m_collapseAll->setText(tr("&Collapse all"));
    m_firstFailure->setText(tr("&First failing node"));
    m_next->setText(tr("&Next failing node"));
    m_previous->setText(tr("&Previous failing node"));
    m_toOrigin->setText(tr("Job &origin"));
    m_toPeer->setText(tr("Same node on the next &rank"));
    m_find->setText(tr("&Find…"));
    m_cancelAction->setText(tr("&Cancel compare"));
    m_runUt->setText(tr("Run &run_ut…"));
    m_settingsAction->setText(tr("&Settings…"));
    m_demo->setText(tr("Open &demo"));
    m_shortcuts->setText(tr("&Keyboard shortcuts"));
    m_about->setText(tr("&About ProbeScope"));
    m_cancel->setText(tr("Cancel"));
    m_retry->setText(tr("Compare again"));
    m_emptyTitle->setText(tr("Compare an NPU dump with its bench"));
    m_emptyText->setText(tr("Open the two dumps of a pair (a dump root, a step or rank folder, a dump.json or a .pkl on each "
                            "side), drop two folders here, or try the bundled demo."));
    m_emptyOpen->setText(tr("Open pair…"));
    m_emptyDemo->setText(tr("Open demo"));
    m_emptyRecentLabel->setText(tr("&Recent pairs:"));
    retranslateGraphFile();
    retranslateRun();
    m_tabs->setTabText(0, tr("Details"));
    m_tabs->setTabText(1, tr("Metric plot"));
    m_tabs->setTabText(2, tr("Across steps/ranks"));
    m_tabs->setTabText(3, tr("Tensors"));
    m_tabs->setTabText(4, tr("Rank overview"));
    m_tabs->setTabText(m_tabs->indexOf(m_commPanel), tr("Communication ops"));
    m_rankPanel->retranslate();
    m_tabs->setTabText(m_tabs->indexOf(m_diagnosticsView),
                       m_diagnostics->rowCount() ? tr("Diagnostics (%1)").arg(m_diagnostics->rowCount()) : tr("Diagnostics"));
    // An empty tab says so, and whether anything was read at all.
    m_diagnosticsView->setPlaceholderText(m_npuInput.isEmpty() && m_shownFile.isEmpty()
                                              ? tr("Problems met while reading an input are listed here.")
                                              : tr("No problems: every file of the shown input was read without an error or "
                                                   "a warning."));
    if (const int freeBenchTab = m_tabs->indexOf(m_freeBench); freeBenchTab >= 0)
        m_tabs->setTabText(freeBenchTab, tr("Free benchmark"));
    m_stepBox->setToolTip(tr("Step"));
    m_rankBox->setToolTip(tr("NPU rank ↔ bench rank"));
    m_stepLabel->setText(tr("&Step:"));
    m_rankLabel->setText(tr("&Rank:"));
    m_stepBox->setPlaceholderText(tr("no pair open"));
    m_rankBox->setPlaceholderText(tr("no pair open"));
    m_showLegend->setText(tr("Show &legend"));
    m_focusTree->setText(tr("Go to the &tree"));
    m_focusTree->setStatusTip(tr("Move the keyboard focus to the tree (or to Open pair… before anything is open)."));
    for (int i = 0; i < m_tabActions.size(); ++i) {
        const QString name = i < m_tabs->count() ? m_tabs->tabText(i) : QString();
        m_tabActions[i]->setText(name.isEmpty() ? tr("Tab %1").arg(i + 1) : tr("Go to %1").arg(QString(name).remove(QLatin1Char('&'))));
        m_tabActions[i]->setStatusTip(tr("Show this tab on the right and move the keyboard focus into it."));
        m_tabActions[i]->setVisible(i < m_tabs->count());
    }
    // What F1's table says in its Description column (and the status bar while a menu item is hovered).
    m_openNpu->setStatusTip(tr("Open an NPU dump and its bench dump together, with the compare options."));
    m_openBench->setStatusTip(tr("Choose another bench dump for the open NPU dump (the Open pair dialog)."));
    m_openCompareJson->setStatusTip(tr("Open msprobe's compare.json, which names both sides."));
    m_export->setStatusTip(tr("Write the comparison of the shown pair as msprobe's CSV (and XLSX)."));
    m_quit->setStatusTip(tr("Close ProbeScope."));
    m_expandAll->setStatusTip(tr("Expand every node of the tree."));
    m_collapseAll->setStatusTip(tr("Collapse the tree to its top level."));
    m_showLegend->setStatusTip(tr("Show or hide the colour legend under the tree."));
    m_firstFailure->setStatusTip(tr("Select the first node, in execution order, whose output fails while its inputs pass."));
    m_next->setStatusTip(tr("Select the next failing node in execution order."));
    m_previous->setStatusTip(tr("Select the previous failing node in execution order."));
    m_toOrigin->setStatusTip(tr("Open the pair where the job began to diverge (the rank overview's origin) and select its node."));
    m_toPeer->setStatusTip(tr("On a communication node (Distributed.*): open the next rank's pair of the same step "
                              "and select the matching node."));
    m_find->setStatusTip(tr("Search node names (plain text or a regular expression)."));
    m_cancelAction->setStatusTip(tr("Stop the compare that is running."));
    m_runUt->setStatusTip(tr("Replay the dumped APIs with LibTorch and judge them (msprobe's run_ut)."));
    m_settingsAction->setStatusTip(tr("Colours, theme, language, threads, matching and mapping options."));
    m_demo->setStatusTip(tr("Open the bundled demo pair."));
    m_shortcuts->setStatusTip(tr("List every keyboard shortcut."));
    m_about->setStatusTip(tr("Version and licence of ProbeScope."));
    // The status line says its sentence again in the language in force.
    if (!m_say)
        m_say = [this] { return tr("Open an NPU and a bench dump (File menu, drag and drop, or Help → Open demo)."); };
    m_message->setText(m_say());
    if (m_graph)
        retranslateGraph();
}

void MainWindow::retranslateData()
{
    retranslate();
    // Texts made from data when asked (tree and diagnostics headers, the Status column, tooltips): the views ask
    // again. Badges and the step names are made once, so they are made again.
    for (QAbstractItemModel* model : std::initializer_list<QAbstractItemModel*> { m_model, m_diagnostics }) {
        if (model->columnCount() > 0)
            emit model->headerDataChanged(Qt::Horizontal, 0, model->columnCount() - 1);
    }
    m_tree->viewport()->update();
    m_diagnosticsView->viewport()->update();
    for (int i = 0; i < m_stepBox->count(); ++i) {
        const qint64 step = m_stepBox->itemData(i).toLongLong();
        m_stepBox->setItemText(i, step < 0 ? tr("(no step)") : tr("step %1").arg(step));
    }
    updateRunUtBadges();
    updateFreeBenchmarkBadges();
}

bool MainWindow::eventFilter(QObject* watched, QEvent* event)
{
    if (watched == m_diagnosticsView && event->type() == QEvent::Resize && m_diagnostics->rowCount() > 0)
        fitDiagnosticsColumns(static_cast<QResizeEvent*>(event)->size().width());
    return QMainWindow::eventFilter(watched, event);
}

void MainWindow::changeEvent(QEvent* event)
{
    if (event->type() == QEvent::LanguageChange)
        retranslateData();
    if (event->type() == QEvent::PaletteChange)
        m_model->setDarkPalette(isDarkTheme(m_settings.theme));
    QMainWindow::changeEvent(event);
}

void MainWindow::applySettings()
{
    m_model->setBands(m_settings.bands);
    m_model->setDarkPalette(isDarkTheme(m_settings.theme));
    m_legend->setColorBands(m_settings.bands);
}

QString MainWindow::statusLine() const { return m_message->fullText(); }

bool MainWindow::isComparing() const { return m_controller && m_controller->isRunning(); }

bool MainWindow::isOverviewRunning() const { return m_overview && m_overview->isRunning(); }

// ----- opening ---------------------------------------------------------------------------------

void MainWindow::closeShownInput()
{
    // One current input (issue 36 item 4): whatever is opened replaces all that was shown, the pair's or job's
    // tree, selectors, Details, plots, rank overview and diagnostics, a graph file's page and a trend tab alike.
    m_controller->cancel();
    m_overview->cancel();
    m_planJob->forget();
    m_finished.clear();
    m_manualMatches.clear(); // they name the nodes of the pairs of the plan they were made on
    m_npuInput.clear();
    m_benchInput.clear();
    m_shownFile.clear();
    m_plan.reset();
    m_pairIndex = -1;
    m_pendingSelection.clear();
    m_nextNote = {};
    m_followOrigin = false;
    m_autoPair = -1;
    m_autoKey.clear();
    clearShownPair();
    m_trend->setPlan(nullptr);
    m_trendProblems.clear();
    m_legend->setVisible(false);
    m_overviewModel->setPlan(session::SessionPlan {});
    m_stepBox->clear();
    m_rankBox->clear();
    m_stepBox->setEnabled(false);
    m_rankBox->setEnabled(false);
    m_pairLabel->setText(QString());
    // A run's dump opened from its trends keeps the trends beside it (mainwindowrun.cpp).
    if (!m_keepTrend) {
        if (const int at = m_tabs->indexOf(m_trendView); at >= 0)
            m_tabs->removeTab(at);
        m_trendView->hide();
    }
    if (const int at = m_tabs->indexOf(m_freeBench); at >= 0)
        m_tabs->removeTab(at);
    m_freeBench->clear();
    m_freeBench->hide();
    // A graph file's page and its sides in the graph view.
    m_graphPanel->clear();
    m_graphFileShown.reset();
    m_graphFileSides = -1;
    m_graphPair = -1;
    m_graphAnalysis.reset();
    m_graphPending.reset();
    m_graph->clear();
    // One run's state (mainwindowrun.cpp): openRun sets it again after opening.
    m_runMode = false;
    setRunViews(false);
    m_runAnomaly.reset();
    m_chainModel->setAnomaly(nullptr);
    if (const int at = m_tabs->indexOf(m_chainView); at >= 0)
        m_tabs->removeTab(at);
    m_chainView->hide();
    m_leftStack->setCurrentWidget(m_emptyState);
    m_tabs->setVisible(true);
    m_tabs->setCurrentWidget(m_detail);
}

void MainWindow::clearShownPair()
{
    m_analysis.reset();
    m_hits.clear();
    m_hitIndex = -1;
    m_model->clear();
    m_badges->clearAll();
    m_detail->clear();
    m_plot->setAnalysis(nullptr);
    m_inspector->clear();
    m_inspectorNode.reset();
    m_banner->clear();
    m_diagnostics->clear();
    m_retry->hide();
    m_filter->setCounts({});
}

void MainWindow::updateInputActions()
{
    // What applies to what is shown: a pair's actions are off on a graph file's page and before anything is open.
    const bool pair = m_plan && m_pairIndex >= 0;
    const bool job = pair && m_plan->pairs.size() > 1;
    const bool graphFile = isGraphFileShown();
    m_export->setEnabled(pair);
    m_next->setEnabled(pair);
    m_previous->setEnabled(pair);
    m_firstFailure->setEnabled(pair || graphFile);
    m_toOrigin->setEnabled(job);
    m_toPeer->setEnabled(job && isMultiRank());
    if (m_runMode) {
        m_toOrigin->setEnabled(pair);
        m_toPeer->setEnabled(pair);
    }
    m_expandAll->setEnabled(pair || graphFile);
    m_collapseAll->setEnabled(pair || graphFile);
}

bool MainWindow::openInputs(const QString& npu, const QString& bench, int pairIndex)
{
    // msprobe's graph files (.vis, .vis.db, .trend.db) open on their own page (mainwindowgraph.cpp).
    if (bench.isEmpty() && isGraphFilePath(npu))
        return openGraphFile(npu);
    // One folder holding free_benchmark.csv (a free benchmark run needs no bench): its results alone.
    if (bench.isEmpty() && openFreeBenchmarkOnly(npu))
        return true;
    // One dump folder alone (issue 34): the run on its own, landing on its first NaN/Inf (mainwindowrun.cpp); a
    // monitor folder opens as its trends (mainwindowgraph.cpp).
    if (bench.isEmpty() && isMonitorFolder(npu))
        return openGraphFile(npu);
    if (bench.isEmpty() && isRunInput(npu) && pairProblem(npu, npu).isEmpty())
        return openRun(npu);
    // Discovery first, as the Open pair dialog shows it: a side it refuses or finds ambiguous (two dumps at one
    // step and rank) is refused here with its reason, whichever way it came (dialog, drop, recent pair,
    // command line), and never reaches the planner.
    auto planned = takePlan(npu, bench, pairIndex);
    if (!planned)
        return true; // planning on the pool; back here when the plan arrives
    auto& plan = *planned;
    if (!plan) {
        const QString error = plan.error().id == "ui.open" ? toQ(plan.error().message) : toQ(plan.error().format());
        say([=, this] { return tr("Cannot open: %1").arg(error); });
        emit analysisFinished(false, error);
        if (!m_quiet && isVisible() && !QApplication::platformName().contains("offscreen"))
            QMessageBox::warning(this, tr("Cannot open the dumps"), error);
        return false;
    }
    closeShownInput();
    m_npuInput = npu;
    m_benchInput = bench;
    m_plan = std::move(*plan);
    m_overviewModel->setPlan(*m_plan);
    m_trend->setPlan(std::make_shared<const session::SessionPlan>(*m_plan));
    m_pendingSelection.clear();
    {
        // The NPU side's free_benchmark.csv files: under the opened folder, or next to each rank's dump.json
        // (a compare.json names the dump.json files, not the run's root).
        QStringList freeBenchInputs;
        if (!QFileInfo(npu).isFile() || QFileInfo(npu).fileName() == QLatin1String("dump.json"))
            freeBenchInputs << npu;
        for (const session::RankPair& p : m_plan->pairs)
            freeBenchInputs << toQ(p.npu.dir.string());
        loadFreeBenchmark(freeBenchInputs);
    }
    m_leftStack->setCurrentWidget(m_leftStack->widget(1));
    // A job opens at its origin once the overview knows it; a pair asked for by number (--pair N) stays.
    m_followOrigin = m_plan->pairs.size() > 1 && pairIndex == 0;
    m_autoPair = -1;
    m_autoKey.clear();
    rememberPair(npu, bench);
    populateSelectors();
    retranslate();
    showPair(std::clamp(pairIndex, 0, static_cast<int>(m_plan->pairs.size()) - 1));
    return true;
}

// ----- the shown pair --------------------------------------------------------------------------

void MainWindow::showPair(int pairIndex)
{
    if (!m_plan || pairIndex < 0 || pairIndex >= static_cast<int>(m_plan->pairs.size()))
        return;
    m_pairIndex = pairIndex;
    const session::RankPair& pair = m_plan->pairs[static_cast<std::size_t>(pairIndex)];
    // Selectors follow the shown pair.
    m_stepBox->setCurrentIndex(m_stepBox->findData(QVariant::fromValue<qint64>(pair.step)));
    m_rankBox->clear();
    for (const std::size_t i : m_plan->pairsOfStep(pair.step)) {
        const auto& p = m_plan->pairs[i];
        m_rankBox->addItem(m_runMode ? ui::runPairLabel(p) : toQ(p.label()), static_cast<int>(i));
    }
    m_rankBox->setCurrentIndex(m_rankBox->findData(pairIndex));
    m_rankBox->setEnabled(m_rankBox->count() > 1);
    // The NPU side's folder, elided in its middle (the toolbar must not set the window's width, issue 36 item 1).
    m_pairLabel->setText(toQ(pair.npu.dir.string()));
    onGraphPairShown(pairIndex);

    // Nothing of the previous pair may stay on screen while this one loads (chips counted another step).
    clearShownPair();
    retranslate();
    // Compared before under the same settings: shown again as it was, without recomputing. Only while no
    // run is in flight, whose late signals (status batches) would otherwise land on the replayed tree.
    if (const auto done = m_finished.find(pairIndex); done != m_finished.end() && !isComparing()) {
        const auto analysis = done->second;
        m_replaying = true;
        onSkeleton(analysis->skeleton);
        onLayout(analysis->status);
        onFinished(analysis);
        m_replaying = false;
        return;
    }
    setBusy(true);
    say([=, this] { return tr("Loading %1…").arg(toQ(pair.label())); });
    m_controller->start(*m_plan, static_cast<std::size_t>(pairIndex), withManualMatches(compareSettings(), pairIndex));
}

void MainWindow::cancelCompare()
{
    m_planJob->cancel();
    cancelGraphFile();
    if (isComparing())
        m_controller->cancel();
}

// ----- compare results -------------------------------------------------------------------------

void MainWindow::setBusy(bool busy)
{
    m_progress->setVisible(busy);
    m_timeLabel->setVisible(busy);
    m_cancel->setVisible(busy);
    m_cancelAction->setEnabled(busy);
    if (busy)
        m_progress->setValue(0);
}

void MainWindow::onSkeleton(std::shared_ptr<const session::PairSkeleton> skeleton)
{
    m_model->setSkeleton(skeleton);
    m_legend->setVisible(m_showLegend->isChecked() && !m_runMode); // its colours are verdicts
    if (m_runMode)
        updateRunBadges(); // the run's own states, from the NPU side's statistics (mainwindowrun.cpp)
    updateFreeBenchmarkBadges();
    updateRunUtBadges();
    for (int c = 0; c < m_model->columnCount(); ++c)
        m_tree->setColumnHidden(c, false);
    // Top-level modules open so the user sees structure at once.
    m_rows->setExpanded(skeleton->tree->roots(), true);
    say([=, this] { return tr("Comparing %1 (%2 nodes)…").arg(toQ(skeleton->pair.label())).arg(skeleton->tree->size()); });

    showLoadProblems(*skeleton);
}

void MainWindow::showLoadProblems(const session::PairSkeleton& skeleton)
{
    // What went wrong while loading (a dump.json cut short and salvaged, an unreadable stack.json, …):
    // the plan's findings, each side's dump and the pair's own, once each.
    Diagnostics problems = m_plan ? m_plan->diagnostics : Diagnostics {};
    for (const auto& side : { skeleton.npu, skeleton.bench }) {
        if (side)
            problems.insert(problems.end(), side->diagnostics.begin(), side->diagnostics.end());
    }
    problems.insert(problems.end(), skeleton.diagnostics.begin(), skeleton.diagnostics.end());
    for (const Diagnostic& d : m_trendProblems) {
        if (!containsDiagnostic(problems, d))
            problems.push_back(d);
    }
    m_diagnostics->setDiagnostics(problems);
    m_diagnosticsView->resizeColumnToContents(DiagnosticsModel::SeverityColumn);
    m_diagnosticsView->resizeColumnToContents(DiagnosticsModel::IdColumn);
    fitDiagnosticsColumns();
    m_banner->setDiagnostics(m_diagnostics->diagnostics());
    retranslate();
}

void MainWindow::fitDiagnosticsColumns(int viewWidth)
{
    // The message is what a user reads: it keeps at least half the width. The location (a long path, elided in
    // its middle) gets at most a quarter; a ~100 px message beside a wide location was unreadable (issue 28).
    // The width the view has (or is about to have, from its resize event: the viewport follows it later).
    const int width = (viewWidth > 0 ? viewWidth : m_diagnosticsView->width()) - 2 * m_diagnosticsView->frameWidth()
        - m_diagnosticsView->verticalScrollBar()->sizeHint().width();
    if (width < 200)
        return; // not laid out yet; its first resize comes back here
    m_diagnosticsView->resizeColumnToContents(DiagnosticsModel::SeverityColumn);
    m_diagnosticsView->resizeColumnToContents(DiagnosticsModel::IdColumn);
    m_diagnosticsView->resizeColumnToContents(DiagnosticsModel::LocationColumn);
    // Half the width for the message; of the other half, what the severity leaves goes 3:2 to location and id.
    const int budget = std::max(80, width / 2 - m_diagnosticsView->columnWidth(DiagnosticsModel::SeverityColumn));
    const int location = std::min({ budget * 3 / 5, width / 4, m_diagnosticsView->columnWidth(DiagnosticsModel::LocationColumn) });
    m_diagnosticsView->setColumnWidth(DiagnosticsModel::LocationColumn, location);
    m_diagnosticsView->setColumnWidth(DiagnosticsModel::IdColumn,
                                      std::min(budget - location, m_diagnosticsView->columnWidth(DiagnosticsModel::IdColumn)));
}

void MainWindow::showDiagnostics() { m_tabs->setCurrentWidget(m_diagnosticsView); }

void MainWindow::onLayout(std::shared_ptr<const session::NodeStatusTable> status)
{
    m_model->setStatus(std::move(status));
    if (const auto mode = m_model->mode()) {
        for (int c = 0; c < m_model->columnCount(); ++c)
            m_tree->setColumnHidden(c, !CompareTreeModel::columnApplies(c, *mode));
        m_legend->setMode(*mode);
    }
    if (m_runMode) // one run: its name and its state; the compare's metrics are of the run against itself
        for (int c = 0; c < m_model->columnCount(); ++c)
            m_tree->setColumnHidden(c, c != CompareTreeModel::NameColumn && c != CompareTreeModel::StatusColumn);
}

void MainWindow::onProgress(const QString& stage, double fraction, double elapsed, double remaining)
{
    // The stage goes beside the bar, which holds the percentage alone ("Comparing 28%" did not fit it,
    // and is longer still in Chinese).
    m_progress->setValue(static_cast<int>(fraction * 1000));
    m_progress->setFormat(QStringLiteral("%p%"));
    m_timeLabel->setText(remaining < 0 ? tr("%1 · %2 elapsed").arg(stage, formatSeconds(elapsed))
                                       : tr("%1 · %2 elapsed, about %3 left").arg(stage, formatSeconds(elapsed), formatSeconds(remaining)));
}

void MainWindow::onFinished(std::shared_ptr<const session::PairAnalysis> analysis)
{
    setBusy(false);
    m_analysis = analysis;
    m_finished[m_pairIndex] = analysis;
    // A pair shown from the reopen cache or from its keys had no dumps yet: what loading them found is known now.
    if (analysis->skeleton && (analysis->skeleton->fromCache || analysis->skeleton->early))
        showLoadProblems(*analysis->skeleton);
    // What the compare itself found on the inputs (an empty dump, a tensor folder leaving its dump, unreadable
    // tensors) joins the load problems: the banner and the Diagnostics tab say it, never a clean-looking tree.
    Diagnostics problems = m_diagnostics->diagnostics();
    bool added = false;
    for (const Diagnostic& d : analysis->inputDiagnostics) {
        if (!containsDiagnostic(problems, d)) {
            problems.push_back(d);
            added = true;
        }
    }
    if (added) {
        m_diagnostics->setDiagnostics(problems);
        fitDiagnosticsColumns();
        m_banner->setDiagnostics(m_diagnostics->diagnostics());
        retranslate();
    }
    m_model->setStatus(analysis->status);
    m_filter->setCounts(m_runMode ? m_model->counts() : analysis->status->counts);
    m_plot->setAnalysis(analysis);
    if (!m_runMode) // one run's map shows the NaN/Inf search, not the run against itself
        m_overviewModel->setSummary(session::summarize(*analysis, static_cast<std::size_t>(m_pairIndex)));
    const compare::FirstFailure& f = analysis->firstFailure;
    const double seconds = analysis->seconds;
    // What led here (P, a manual match, loaded matches) is said before what this pair's compare found.
    const std::function<QString()> note = std::exchange(m_nextNote, {});
    say([this, seconds, note] {
        const QString line = tr("%1  [%2 s]").arg(firstFailureLine()).arg(seconds, 0, 'f', 2);
        return note ? note() + QLatin1Char(' ') + line : line;
    });
    if (!m_pendingSelection.isEmpty())
        selectNodeByKey(std::exchange(m_pendingSelection, QString())); // the user asked for it meanwhile
    else if (!f.key.empty())
        selectFirstFailure();
    if (m_followOrigin && !m_replaying) {
        // What the window chose by itself; the origin replaces it only if the user has not moved since.
        m_autoPair = m_pairIndex;
        m_autoKey = selectedNodeKey();
    }
    updateGraphView();
    // A compare again after a manual match changes this pair alone: the other ranks' overview stands.
    if (!m_replaying && !std::exchange(m_rematching, false))
        startOverview();
    emit analysisFinished(true, QString());
}

QString MainWindow::firstFailureLine() const
{
    if (!m_analysis)
        return {};
    if (m_runMode)
        return runLine();
    const compare::FirstFailure& f = m_analysis->firstFailure;
    QString line;
    if (f.found)
        line = tr("First failing node: %1 (execution #%2): its inputs match, its output does not — %3")
                   .arg(toQ(f.key))
                   .arg(f.executionIndex)
                   .arg(failingRowOf(f.summary));
    else if (!f.key.empty())
        line = tr("Inputs already differ at the first failing node %1: the divergence began before this dump.")
                   .arg(toQ(f.key));
    else
        line = tr("No failing node: every compared row passes.");
    if (!m_plan || m_plan->pairs.size() < 2)
        return line;
    // One rank over several steps is no job (issue 36 item 10): no origin, no communication calls; the step says
    // which of them this is.
    if (!isMultiRank()) {
        const std::int64_t step = m_plan->pairs[static_cast<std::size_t>(std::max(m_pairIndex, 0))].step;
        return tr("%1: %2").arg(step < 0 ? tr("(no step)") : tr("step %1").arg(step), line);
    }
    // A job: its story starts at the origin (the rank overview's, job::findJobOrigin), not at this rank's first
    // failure, which may only have received the bad data (issue 28).
    const int originRow = m_overviewModel->originRow();
    if (originRow < 0)
        return tr("This rank — %1 (the job origin is not known yet: the rank overview is still comparing the other "
                  "ranks)")
            .arg(line);
    const job::JobOrigin& o = m_overviewModel->origin();
    const QString where = tr("step %1 %2")
                              .arg(o.step)
                              .arg(o.rankLabel.empty() ? tr("rank") : toQ(o.rankLabel));
    if (originRow == m_pairIndex && o.key == f.key)
        return tr("Job origin (O): %1, node %2 (execution #%3) — %4").arg(where, toQ(o.key)).arg(o.executionIndex).arg(m_overviewModel->originReason());
    return tr("This rank — %1 · Job origin (O): %2, node %3").arg(line, where, toQ(o.key));
}

void MainWindow::say(std::function<QString()> text)
{
    m_say = std::move(text);
    m_message->setText(m_say ? m_say() : QString());
}

void MainWindow::onFailed(const QString& message)
{
    setBusy(false);
    m_pendingSelection.clear();
    // The tree's statuses are those of an unfinished run: say so and offer the retry.
    m_filter->setCounts({});
    m_retry->show();
    say([=, this] { return tr("Compare failed: %1 — the statuses shown are incomplete.").arg(message); });
    emit analysisFinished(false, message);
}

void MainWindow::onCancelled()
{
    setBusy(false);
    m_pendingSelection.clear();
    m_filter->setCounts({});
    m_retry->show();
    say([=, this] { return tr("Compare cancelled — the statuses shown are incomplete (pending nodes were not compared)."); });
    emit analysisFinished(false, tr("cancelled"));
}

// ----- navigation ------------------------------------------------------------------------------

CompareSettings MainWindow::compareSettings() const
{
    CompareSettings settings;
    settings.threads = m_settings.threads;
    settings.fuzzy = m_settings.fuzzy;
    settings.stackMode = m_settings.stackMode;
    auto path = [](const std::optional<QString>& option) -> std::optional<std::filesystem::path> {
        if (!option)
            return std::nullopt;
        return std::filesystem::path(option->toStdString());
    };
    settings.dataMapping = path(m_settings.dataMapping);
    settings.cellMapping = path(m_settings.cellMapping);
    settings.apiMapping = path(m_settings.apiMapping);
    settings.layerMapping = path(m_settings.layerMapping);
    settings.cacheDir = session::defaultCacheDir();
    return settings;
}

void MainWindow::applyFilter(const FilterSpec& spec)
{
    std::uint32_t mask = 0;
    for (const int status : spec.statuses)
        mask |= 1u << static_cast<unsigned>(status);
    m_rows->setFilters(spec.statuses.isEmpty() ? TreeRowsModel::kAllStatuses : mask,
                       spec.direction == FilterSpec::Forward    ? TreeRowsModel::DirectionFilter::Forward
                           : spec.direction == FilterSpec::Backward ? TreeRowsModel::DirectionFilter::Backward
                                                                    : TreeRowsModel::DirectionFilter::All,
                       spec.kind == FilterSpec::Module ? TreeRowsModel::KindFilter::Module
                           : spec.kind == FilterSpec::Api ? TreeRowsModel::KindFilter::Api
                                                          : TreeRowsModel::KindFilter::All);
    if (m_graph)
        m_graph->refresh(); // nodes the filters hide are drawn faded in the graph
    // The details never describe a node the tree no longer shows.
    if (m_detail->hasNode() && !m_rows->isShown(tree::NodeId { m_detail->nodeId() })) {
        const QString key = toQ(std::string(m_model->tree()->node(tree::NodeId { m_detail->nodeId() }).key));
        m_detail->clear();
        say([=, this] { return tr("%1 is hidden by the filters; its details are closed.").arg(key); });
    }
}

void MainWindow::selectNode(tree::NodeId node)
{
    if (!node.valid() || !m_model->tree() || node.value >= m_model->tree()->size())
        return;
    if (!m_rows->isShown(node)) {
        // Hidden by a filter: show everything rather than refuse the jump, and say so.
        m_filter->reset();
        applyFilter(FilterSpec {});
        say([=, this] { return tr("Filters cleared to show %1, which they hid.")
                               .arg(toQ(std::string(m_model->tree()->node(node).key))); });
    }
    m_tree->showNode(node, QAbstractItemView::PositionAtCenter);
}

bool MainWindow::selectNodeByKey(const QString& key)
{
    if (isGraphFileShown())
        return m_graphPanel->selectNode(key);
    if (!m_model->tree())
        return false;
    const auto id = m_model->tree()->find(key.toStdString());
    if (!id)
        return false;
    selectNode(*id);
    return true;
}

bool MainWindow::selectFirstFailure()
{
    if (isGraphFileShown())
        return m_graphPanel->selectFirstFailure();
    if (m_runMode) // one run: its first NaN/Inf, when this pair shows it
        return m_runAnomaly && jumpToRunOrigin();
    if (!m_analysis || m_analysis->firstFailure.key.empty())
        return false;
    selectNode(m_analysis->firstFailure.node);
    m_tree->setFocus();
    return true;
}

QString MainWindow::selectedNodeKey() const
{
    if (isGraphFileShown())
        return m_graphPanel->selectedNodeName();
    const tree::NodeId node = m_tree->currentNode();
    if (!node.valid() || !m_model->tree())
        return {};
    return toQ(std::string(m_model->tree()->node(node).key));
}

void MainWindow::nextFailing()
{
    selectNode(m_model->nextFailing(m_tree->currentNode()));
}

void MainWindow::previousFailing()
{
    selectNode(m_model->previousFailing(m_tree->currentNode()));
}

void MainWindow::onCurrentChanged(const QModelIndex& current)
{
    const tree::NodeId node = m_rows->nodeAt(current);
    if (!node.valid())
        return;
    if (m_analysis) {
        m_detail->setNode(m_analysis, node.value);
        m_plot->setSelectedNode(node.value);
        if (m_tabs->currentWidget() == m_inspector)
            showTensorsOfSelection();
    }
    m_trend->setNode(toQ(std::string(m_model->tree()->node(node).key)));
    syncGraphToTree(node);
}

void MainWindow::onSearch(const QString& pattern, bool regex, bool caseSensitive)
{
    m_hits.clear();
    m_hitIndex = -1;
    updateGraphView(); // the graph outlines the hits too (none until found)
    if (!m_model->tree() || pattern.isEmpty()) {
        m_search->setHits(0, 0);
        return;
    }
    const NodeSearch* search = m_rows->nodeSearch();
    if (!search)
        return;
    const auto result = search->find(pattern, NodeSearch::Options { regex, caseSensitive });
    m_hits = result.nodes;
    updateGraphView();
    if (m_hits.empty()) {
        m_search->setHits(0, 0);
        return;
    }
    m_hitIndex = 0;
    selectNode(m_hits.front());
    m_search->setHits(1, static_cast<int>(m_hits.size()));
}

void MainWindow::stepSearch(int delta)
{
    if (m_hits.empty())
        return;
    const int n = static_cast<int>(m_hits.size());
    m_hitIndex = ((m_hitIndex + delta) % n + n) % n;
    selectNode(m_hits[static_cast<std::size_t>(m_hitIndex)]);
    m_search->setHits(m_hitIndex + 1, n);
}

void MainWindow::openTensorInspector(std::size_t tableRow)
{
    if (!m_analysis)
        return;
    m_inspector->showRow(m_analysis, tableRow);
    m_inspectorNode = m_detail->hasNode() ? std::optional<quint32>(m_detail->nodeId()) : std::nullopt;
    m_tabs->setCurrentWidget(m_inspector);
}

void MainWindow::showSideTab(int index)
{
    if (index < 0 || index >= m_tabs->count())
        return;
    m_tabs->setCurrentIndex(index);
    // The first control of the tab that takes the keyboard (a table, a combo box, the map), else the tab bar.
    QWidget* page = m_tabs->currentWidget();
    for (QWidget* w : page->findChildren<QWidget*>()) {
        if (w->isVisibleTo(page) && w->isEnabled() && (w->focusPolicy() & Qt::TabFocus)) {
            w->setFocus(Qt::ShortcutFocusReason);
            return;
        }
    }
    if (page->focusPolicy() & Qt::TabFocus)
        page->setFocus(Qt::ShortcutFocusReason);
    else
        m_tabs->tabBar()->setFocus(Qt::ShortcutFocusReason);
}

void MainWindow::showTensorsOfSelection()
{
    // The Tensors tab with a node selected shows that node's first failing leaf (else its first), rather than an
    // empty tab (issue 28); a leaf double-clicked in Details stays until another node is selected.
    if (!m_analysis || !m_detail->hasNode() || m_inspectorNode == m_detail->nodeId())
        return;
    const int failing = m_detail->failingColumn();
    const auto row = m_detail->tableRowOfColumn(failing >= 0 ? failing : 0);
    m_inspectorNode = m_detail->nodeId();
    if (row)
        m_inspector->showRow(m_analysis, *row);
    else
        m_inspector->clear();
}

// ----- settings, shortcuts, about ------------------------------------------------------------

void MainWindow::showSettings()
{
    SettingsDialog dialog(m_settings, this);
    if (dialog.exec() != QDialog::Accepted)
        return;
    const Settings before = m_settings;
    m_settings = dialog.settings();
    m_settings.save();
    applyTheme(*qApp, m_settings.theme);
    // At once, not on the next start: every widget gets a LanguageChange and says itself again.
    if (before.language != m_settings.language)
        switchLanguage(*qApp, languageCode(m_settings.language));
    applySettings();
    // Options that change the table (matching, mappings, the stack column) compare the open pair again.
    const bool compareChanged = before.fuzzy != m_settings.fuzzy || before.stackMode != m_settings.stackMode
        || before.dataMapping != m_settings.dataMapping || before.cellMapping != m_settings.cellMapping
        || before.apiMapping != m_settings.apiMapping || before.layerMapping != m_settings.layerMapping;
    if (compareChanged)
        m_finished.clear();
    if (compareChanged && m_plan && m_pairIndex >= 0) {
        showPair(m_pairIndex);
        startOverview();
    }
}

void MainWindow::showShortcuts()
{
    ShortcutsDialog dialog(shortcutList(), this);
    dialog.exec();
}

QList<ShortcutEntry> MainWindow::shortcutList() const
{
    // The window's actions, then the keys the tree and the panels take themselves (no action holds them).
    QList<ShortcutEntry> entries = shortcutEntries(actions());
    const auto key = [](QKeySequence k) { return QList<QKeySequence> { std::move(k) }; };
    entries.append({ tr("Open or step into"), key(QKeySequence(Qt::Key_Right)),
                     tr("In the tree: open a closed node, or go to the first child of an open one.") });
    entries.append({ tr("Close or step out"), key(QKeySequence(Qt::Key_Left)),
                     tr("In the tree: close an open node, or go to the parent of a closed one.") });
    entries.append({ tr("Open / close"), { QKeySequence(Qt::Key_Plus), QKeySequence(Qt::Key_Minus) },
                     tr("In the tree: open or close the selected node.") });
    entries.append({ tr("Open the whole subtree"), key(QKeySequence(Qt::Key_Asterisk)),
                     tr("In the tree: open the selected node and everything below it.") });
    entries.append({ tr("Next / previous hit"), { QKeySequence(Qt::Key_Return), QKeySequence(Qt::SHIFT | Qt::Key_Return) },
                     tr("In the search field: select the next or the previous node that matches.") });
    entries.append({ tr("Open the tensors"), key(QKeySequence(Qt::Key_Return)),
                     tr("In Details: open the selected column's tensors in the Tensors tab (or double-click it).") });
    entries.append({ tr("Next / previous tab"), { QKeySequence(Qt::CTRL | Qt::Key_Tab), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_Tab) },
                     tr("In the panels on the right: show the next or the previous tab.") });
    return entries;
}

void MainWindow::showAbout()
{
    QMessageBox::about(this, tr("About ProbeScope"),
                       tr("<b>ProbeScope %1</b><p>Inspect and compare msprobe precision dumps: find where an NPU "
                          "run first diverges from its bench.</p>")
                           .arg(QCoreApplication::applicationVersion()));
}

void MainWindow::closeEvent(QCloseEvent* event)
{
    m_controller->cancel();
    m_overview->cancel();
    QSettings store;
    store.setValue("window/geometry", saveGeometry());
    store.setValue("window/state", saveState());
    event->accept();
}

} // namespace probescope::ui
