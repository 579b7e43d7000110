// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "ui/jobs/comparecontroller.h"
#include "ui/models/nodebadges.h"
#include "ui/models/rankoverviewmodel.h"
#include "ui/panels/filterbar.h"
#include "ui/panels/settings.h"
#include "ui/panels/shortcutsdialog.h"
#include "core/session/session.h"

#include <QElapsedTimer>
#include <QMainWindow>
#include <QPointer>
#include <QString>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <vector>

class QAction;
class QComboBox;
class QLabel;
class QListWidget;
class QStackedWidget;
class QMenu;
class QProgressBar;
class QPushButton;
class QTableView;
class QTabWidget;

namespace probescope::graph {
struct GraphFile;
}
namespace probescope::overflow {
struct FirstAnomaly;
}

namespace probescope::ui {

class ElidedLabel;

class CompareController;
class CompareTreeModel;
class DiagnosticsModel;
class LoadProblemBanner;
class PlaceholderTableView;
class DetailPanel;
class FreeBenchmarkPanel;
class NodeBadgeDelegate;
class FilterBar;
class LegendWidget;
class MetricPlot;
class NodeTrendPlot;
class OverviewJob;
class PlanJob;
class RankOverviewModel;
class RankOverviewPanel;
class CommMergePanel;
class SetupCheckPage;
class SearchBar;
class TensorInspector;
class TreeRowsModel;
class CompareTreeView;
class NodeSearch;
class RunUtBackend;
class RunUtDialog;
class GraphFileJob;
class GraphFilePanel;
class TrendView;
class GraphView;
class AnomalyChainModel;
class BackgroundTask;

/**
 * @brief The ProbeScope main window: open an NPU and a bench dump, browse the construct tree coloured
 * by accuracy while the compare streams in, land on the first failing node.
 *
 * All work runs in CompareController / OverviewJob threads; this class only reacts to their queued
 * signals. Opening another pair or closing the window cancels the run in flight (its late results are
 * dropped by the controller's generation check).
 *
 * One class, one file per part of its state: mainwindow.cpp (the frame and the shown pair), mainwindowopen.cpp (the
 * ways in: dialogs, recent pairs, drops), mainwindowjob.cpp (a job's steps and ranks, its overview and origin),
 * mainwindowtools.cpp (free benchmark, run_ut, export), mainwindowrun.cpp (one run), mainwindowgraph.cpp (graph and
 * trend files), mainwindowmatching.cpp (the graph view and manual matches).
 */
class MainWindow : public QMainWindow
{
    Q_OBJECT
public:
    explicit MainWindow(QWidget* parent = nullptr);
    ~MainWindow() override;

    /// Opens two inputs at any level (dump root, step, rank folder, dump.json), or a compare.json alone.
    /// Shows pair `pairIndex` of the plan first. Errors go to a message in the status bar and a dialog.
    /// A job's discovery and plan run on the worker pool (issue 37, mainwindowplan.cpp): when they take longer than
    /// an instant, this returns true at once, the status bar shows progress and Cancel, and the job opens (or its
    /// error is said, as here) when its plan arrives.
    bool openInputs(const QString& npu, const QString& bench, int pairIndex = 0);
    /// True while what was opened is still being planned (its folders listed) off the GUI thread.
    bool isPlanning() const;
    /// How long openInputs() waits for the plan on the spot before it shows progress (100 ms; tests set 0).
    void setPlanWait(int ms) { m_planWaitMs = ms; }
    void openDemo();
    /// The "Check setup" page (its own window), with two inputs to check at once when given (issue 35).
    SetupCheckPage* openSetupCheck(const QString& first = {}, const QString& second = {});
    /// The bundled demo pair: resources/demo in the source tree, or share/probescope/demo when installed.
    static QString demoDir();

    /// Selects, expands to and scrolls to a node by its full dump.json key; false if absent.
    bool selectNodeByKey(const QString& key);
    bool selectFirstFailure();
    /// Opens the job origin's pair (the rank overview's) and selects its node; false while none is known.
    bool jumpToOrigin();
    /// On a communication node (Distributed.*): opens the next rank's pair of the same step (cyclically) and
    /// selects the node of the same key there; false elsewhere.
    bool jumpToPeerRank();
    QString selectedNodeKey() const;
    std::shared_ptr<const session::PairAnalysis> analysis() const { return m_analysis; }
    bool isComparing() const;
    /// The rank overview is analysing the job's other pairs (it may then open the job's origin).
    bool isOverviewRunning() const;
    const session::SessionPlan* plan() const { return m_plan ? &*m_plan : nullptr; }
    int currentPair() const { return m_pairIndex; }

    // For tests: the parts of the window.
    CompareTreeView* treeView() const { return m_tree; }
    CompareTreeModel* treeModel() const { return m_model; }
    TreeRowsModel* treeRows() const { return m_rows; }
    DetailPanel* detailPanel() const { return m_detail; }
    TensorInspector* tensorInspector() const { return m_inspector; }
    QTabWidget* tabs() const { return m_tabs; }
    SearchBar* searchBar() const { return m_search; }
    RankOverviewModel* rankOverview() const { return m_overviewModel; }
    RankOverviewPanel* rankOverviewPanel() const { return m_rankPanel; }
    CommMergePanel* commMergePanel() const { return m_commPanel; }
    FreeBenchmarkPanel* freeBenchmarkPanel() const { return m_freeBench; }
    NodeBadgeDelegate* nodeBadges() const { return m_badges; }
    /// The shown pair's load problems: the strip above the tree and the Diagnostics tab's rows.
    LoadProblemBanner* loadProblemBanner() const { return m_banner; }
    LegendWidget* legend() const { return m_legend; }
    FilterBar* filterBar() const { return m_filter; }
    /// What the window shows before anything is opened: Open pair…, Open demo, the recent pairs.
    QWidget* emptyState() const { return m_emptyState; }
    /// Every action with a shortcut, as F1's table lists them.
    QList<QAction*> shortcutActions() const { return actions(); }
    /// What F1 lists: every action with a shortcut, then the keys the tree and the panels handle themselves.
    QList<ShortcutEntry> shortcutList() const;
    DiagnosticsModel* diagnosticsModel() const { return m_diagnostics; }
    /// Brings the Diagnostics tab to the front.
    void showDiagnostics();
    /// Whether the Free benchmark tab is shown (the opened NPU dump holds free_benchmark.csv files).
    bool isFreeBenchmarkShown() const;
    QString statusLine() const;
    /// The "Compare again" button of the status bar (visible after a cancel or a failure).
    QPushButton* retryButton() const { return m_retry; }
    /// Tools → Run run_ut…'s dialog, wired to the tree (badges, double-click selects the API), not yet shown.
    /// Without a backend, loadRunUtBackend(): the LibTorch replay from the run_ut plugin when it loads.
    std::unique_ptr<RunUtDialog> createRunUtDialog(std::unique_ptr<RunUtBackend> backend = nullptr);
    /// run_ut's verdicts on the APIs of `dumpJson`: badges on the tree whenever the shown pair's NPU side is
    /// that dump.
    void applyRunUtVerdicts(const QString& dumpJson, const QList<RunUtVerdict>& verdicts);
    /// No modal dialogs (scripted runs and tests): problems go to the status line and analysisFinished only.
    void setQuiet(bool quiet) { m_quiet = quiet; }

    // ---- msprobe graph files (issue 27; mainwindowgraph.cpp): .vis, .vis.db, .trend.db ----
    /// Opens a graph file in the background (progress and Cancel in the status bar); analysisFinished follows.
    /// openInputs() and a drop come here for those names.
    bool openGraphFile(const QString& path);
    /// Whether the graph file page is shown (instead of a dump pair's tree).
    bool isGraphFileShown() const;
    bool isGraphFileLoading() const;
    GraphFilePanel* graphFilePanel() const { return m_graphPanel; }
    TrendView* trendView() const { return m_trendView; }
    /// What the scripted mode prints for an opened graph or trend file (one line per graph); empty otherwise.
    QStringList graphFileReport() const;
    // ---- One run on its own (issue 34; mainwindowrun.cpp) ----
    /// Opens one run without a bench (a dump root, step, rank folder or dump.json, any version): its tree with each
    /// node's statistics (the run against itself, so every view of a pair works), NaN/Inf nodes badged, the
    /// step x rank map, landing on the run's first NaN/Inf (core/overflow: the first step with one) with its chain
    /// across ranks (O: the origin, P: the chain's next rank). openInputs() comes here for one dump folder.
    bool openRun(const QString& path);
    bool isRunShown() const { return m_runMode; }
    /// The run's first NaN/Inf and its chain; nullptr while searching or when the run has none.
    const overflow::FirstAnomaly* runAnomaly() const { return m_runAnomaly.get(); }
    AnomalyChainModel* anomalyChain() const { return m_chainModel; }
    QTableView* anomalyChainView() const { return m_chainView; }
    bool isRunSearching() const;
    /// The trend view's bench run (NPU run against bench run): a monitor folder or a .trend.db, read in the
    /// background; trendBenchLoaded follows.
    void openTrendBench(const QString& path);

    // The graph view and manual matching (issue 27; mainwindowmatching.cpp).
    GraphView* graphView() const { return m_graph; }
    /// View → Graph view: the NPU and bench graphs beside the tree.
    void setGraphViewShown(bool shown);
    /// The graph view shows the finished analysis (its sides are made on a worker after the compare), or is hidden.
    bool isGraphViewReady() const;
    /// The manual matches of the shown pair (NPU node -> bench node, the order they were made in).
    std::vector<graph::NodeMatch> manualMatches() const;
    /// Replaces the shown pair's manual matches and compares it again with them (analysisFinished follows).
    void setManualMatches(std::vector<graph::NodeMatch> matches);
    /// Matches -> Save: writes {folder}/compare_{step}_{rank}.vis.config (never replacing a file); the path or
    /// an empty string with the reason in the status line.
    QString saveManualMatches(const QString& folder);
    /// Matches -> Load: reads a .vis.config, resolves it against the shown pair's dumps, compares again; false
    /// (the reason in the status line) when it cannot be read.
    bool loadManualMatches(const QString& file);

public slots:
    void showPair(int pairIndex);
    void cancelCompare();
    void nextFailing();
    void previousFailing();

signals:
    /// The compare of the shown pair ended: ok, or failed/cancelled with a message. A folder opened for its
    /// free benchmark results alone (no bench) reports ok once its free_benchmark.csv files are read.
    void analysisFinished(bool ok, const QString& error);
    /// The rank overview finished analysing every pair of the plan.
    void overviewFinished();
    /// The graph view's sides were made for what is shown (isGraphViewReady() is true now).
    void graphViewUpdated();
    /// openTrendBench() ended: the bench run is overlaid (ok) or could not be read (the status line says why).
    void trendBenchLoaded(bool ok);

protected:
    void closeEvent(QCloseEvent* event) override;
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;
    void changeEvent(QEvent* event) override;
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    /// Takes down whatever input is shown (pair, job, graph or trend file): the next one replaces it (issue 36 item 4).
    void closeShownInput();
    /// The shown pair's analysis, tree, Details, plots, Tensors, banner and diagnostics (showPair, closeShownInput).
    void clearShownPair();
    /// Enables the actions that apply to what is shown (a pair's, a job's, a graph file's).
    void updateInputActions();
    void buildActions();
    void buildMenus();
    void buildCentral();
    void buildStatusBar();
    void applySettings();
    void retranslate();
    /// retranslate() and the texts made from data (model headers, badges, step names): on a language change.
    void retranslateData();

    /// File → Open pair… (and Open bench dump…): both sides in one dialog, starting at `benchFirst`'s field.
    void openPairDialog(bool benchFirst);
    void chooseCompareJson();
    void rememberPair(const QString& npu, const QString& bench);
    /// Where the file dialogs start: the folder of the last file or folder chosen in one (empty: Qt's default).
    static QString lastDialogFolder();
    static void rememberDialogFolder(const QString& chosen);
    void rebuildRecentMenu();
    void populateSelectors();
    void onStepChosen(int comboIndex);
    void onRankChosen(int comboIndex);

    /// The banner and the Diagnostics tab for what loading the shown pair found.
    void showLoadProblems(const session::PairSkeleton& skeleton);
    /// Message at least half the width, location at most a quarter; `viewWidth` 0: the view's width now.
    void fitDiagnosticsColumns(int viewWidth = 0);
    void onSkeleton(std::shared_ptr<const session::PairSkeleton> skeleton);
    void onLayout(std::shared_ptr<const session::NodeStatusTable> status);
    void onFinished(std::shared_ptr<const session::PairAnalysis> analysis);
    void onFailed(const QString& message);
    void onCancelled();
    void onProgress(const QString& stage, double fraction, double elapsed, double remaining);
    void onCurrentChanged(const QModelIndex& current);
    void onSearch(const QString& pattern, bool regex, bool caseSensitive);
    void stepSearch(int delta);
    void startOverview();
    void onOverviewFinished();
    /// The status line after a compare: this pair's first failing node, and for a job its origin (O).
    QString firstFailureLine() const;
    /// Sets the status line from a text made in the language in force (made again on a language change).
    void say(std::function<QString()> text);
    /// Some step of the plan has more than one rank pair: a job (its origin, its communication).
    bool isMultiRank() const;
    void selectNode(tree::NodeId node);
    /// Shows pair `pairIndex` with the node `key` selected (at once, or when that pair's compare ends).
    void showNodeInPair(int pairIndex, const QString& key);
    void applyFilter(const FilterSpec& spec);
    CompareSettings compareSettings() const;
    void setBusy(bool busy);
    // Issue 37 (mainwindowplan.cpp): the plan of what is opened, off the GUI thread.
    void buildPlanJob();
    /// The plan of (npu, bench), or nothing while it is still being made on the pool (openInputs is then called
    /// again with the same arguments when it arrives).
    std::optional<Result<session::SessionPlan>> takePlan(const QString& npu, const QString& bench, int pairIndex);
    void exportCsv();
    void runRunUt();
    void showSettings();
    void showShortcuts();
    void showAbout();
    void openTensorInspector(std::size_t tableRow);
    /// The Tensors tab follows the selected node: its first failing leaf.
    void showTensorsOfSelection();
    /// Alt+1…: the tab on the right and the keyboard focus into it.
    void showSideTab(int index);
    // Free benchmark (issue 7): the panel's rows, badges on the shown pair's tree, row -> tree node.
    bool openFreeBenchmarkOnly(const QString& folder);
    void loadFreeBenchmark(const QStringList& inputs);
    void onFreeBenchmarkLoaded(int files, int rows);
    void updateFreeBenchmarkBadges();
    void onFreeBenchmarkApi(const QString& apiName, qint64 step, qint64 rank);
    void updateRunUtBadges();
    // Graph files (mainwindowgraph.cpp).
    void buildGraphFileViews();
    void chooseGraphFile();
    void onGraphFileLoaded();
    void cancelGraphFile();
    void retranslateGraphFile();
    // The graph view and manual matching (mainwindowmatching.cpp).
    void buildGraphView();
    /// Tab goes as the window reads: the selectors, the left page, the graph view, the tabs, the status bar.
    void setFocusChain();
    void updateGraphView();
    void onGraphPairShown(int pairIndex);
    void onGraphNodePicked(std::uint32_t node);
    void syncGraphToTree(tree::NodeId node);
    /// The graph view follows a graph file page's selected node (the page's tree, F, search, a link).
    void syncGraphToGraphFile();
    void matchInGraph(std::uint32_t npu, std::uint32_t bench, bool withChildren);
    void unmatchInGraph(std::uint32_t npu, bool withChildren);
    void retranslateGraph();
    // One run (mainwindowrun.cpp).
    void buildRunViews();
    void retranslateRun();
    void onRunSearched();
    /// The NaN/Inf badges and the tree's run states (its Status column, filter counts) of the shown pair's NPU side.
    void updateRunBadges();
    /// The tree, filter, Details and rank map in one-run mode (states of the run, no verdicts) or back to a pair's.
    void setRunViews(bool on);
    /// Every pair's state in the NaN/Inf search, for the rank map.
    std::vector<RankOverviewModel::RunRank> runRanks() const;
    /// Shows the chain's row `row` (its rank's pair, its node); false when there is none.
    bool showChainRow(int row);
    bool jumpToRunOrigin();
    /// P on a node of the chain: the chain's next rank (cyclically); false when the selection is not on it.
    bool jumpToRunPeer();
    QString runLine() const;
    /// `settings` with pair `pairIndex`'s manual matches (CompareSettings::manualMatches), if it has any.
    CompareSettings withManualMatches(CompareSettings settings, int pairIndex) const;

    Settings m_settings;
    std::optional<session::SessionPlan> m_plan;
    int m_pairIndex = -1;
    bool m_quiet = false;
    QString m_shownFile; ///< the graph or trend file shown (the title names it); empty for a pair
    QString m_npuInput;
    QString m_benchInput;
    std::shared_ptr<const session::PairAnalysis> m_analysis;
    std::vector<tree::NodeId> m_hits;
    int m_hitIndex = -1;

    CompareController* m_controller = nullptr;
    OverviewJob* m_overview = nullptr;
    PlanJob* m_planJob = nullptr;
    int m_planWaitMs = 100; ///< a pair or a job of a few hundred ranks is planned within it and opens in one go
    struct PlanKey
    {
        QString npu;
        QString bench;
        int pairIndex = 0;
    } m_planKey; ///< what the plan under way (or just delivered) is for
    CompareTreeModel* m_model = nullptr;
    TreeRowsModel* m_rows = nullptr;
    RankOverviewModel* m_overviewModel = nullptr;
    DiagnosticsModel* m_diagnostics = nullptr;

    CompareTreeView* m_tree = nullptr;
    SearchBar* m_search = nullptr;
    FilterBar* m_filter = nullptr;
    LegendWidget* m_legend = nullptr;
    QTabWidget* m_tabs = nullptr;
    QStackedWidget* m_leftStack = nullptr; ///< the empty state until something is open, then the tree
    QWidget* m_emptyState = nullptr;
    QLabel* m_emptyTitle = nullptr;
    QLabel* m_emptyText = nullptr;
    QPushButton* m_emptyOpen = nullptr;
    QPushButton* m_emptyDemo = nullptr;
    QLabel* m_emptyRecentLabel = nullptr;
    QListWidget* m_emptyRecent = nullptr;
    DetailPanel* m_detail = nullptr;
    MetricPlot* m_plot = nullptr;
    NodeTrendPlot* m_trend = nullptr;
    TensorInspector* m_inspector = nullptr;
    RankOverviewPanel* m_rankPanel = nullptr;
    CommMergePanel* m_commPanel = nullptr;  ///< the job's communication ops × ranks (merge_result's table)
    SetupCheckPage* m_setupPage = nullptr;  ///< made on first use
    PlaceholderTableView* m_diagnosticsView = nullptr;
    LoadProblemBanner* m_banner = nullptr;
    /// What the trend plot's last load found in the dumps of every step and rank (shown with the pair's own).
    Diagnostics m_trendProblems;
    FreeBenchmarkPanel* m_freeBench = nullptr;
    NodeBadgeDelegate* m_badges = nullptr;
    std::optional<quint32> m_inspectorNode; ///< the node whose tensor the Tensors tab shows
    QString m_pendingSelection; ///< a node to select once the pair being loaded is compared
    QString m_runUtDump;        ///< the dump.json run_ut's verdicts are about
    QList<RunUtVerdict> m_runUtVerdicts;
    QComboBox* m_stepBox = nullptr;
    QComboBox* m_rankBox = nullptr;
    ElidedLabel* m_pairLabel = nullptr;
    QLabel* m_stepLabel = nullptr;
    QLabel* m_rankLabel = nullptr;

    ElidedLabel* m_message = nullptr;
    std::function<QString()> m_say; ///< what the status line says, in the language in force
    /// What led to the compare in flight (P, a manual match, loaded matches): said before its result.
    std::function<QString()> m_nextNote;
    bool m_followOrigin = false;    ///< a job was opened: go to its origin when the overview finds it
    int m_autoPair = -1;            ///< the pair and node the window chose by itself after opening
    QString m_autoKey;
    QProgressBar* m_progress = nullptr;
    QLabel* m_timeLabel = nullptr;
    QPushButton* m_cancel = nullptr;
    QPushButton* m_retry = nullptr; ///< "Compare again", shown after a cancelled or failed compare
    /// Finished analyses of this plan's pairs under the current compare settings: going back to a step
    /// already compared shows it again without recomputing. Cleared when the plan or the settings change.
    std::map<int, std::shared_ptr<const session::PairAnalysis>> m_finished;
    bool m_replaying = false; ///< showing a finished analysis again (no overview restart)

    QMenu* m_fileMenu = nullptr;
    QMenu* m_recentMenu = nullptr;
    QMenu* m_viewMenu = nullptr;
    QMenu* m_goMenu = nullptr;
    QMenu* m_toolsMenu = nullptr;
    QMenu* m_helpMenu = nullptr;
    QAction* m_openNpu = nullptr;
    QAction* m_openBench = nullptr;
    QAction* m_openCompareJson = nullptr;
    QAction* m_checkSetup = nullptr;
    QAction* m_export = nullptr;
    QAction* m_quit = nullptr;
    QAction* m_expandAll = nullptr;
    QAction* m_collapseAll = nullptr;
    QAction* m_showLegend = nullptr;
    QAction* m_firstFailure = nullptr;
    QAction* m_next = nullptr;
    QAction* m_previous = nullptr;
    QAction* m_toOrigin = nullptr;
    QAction* m_toPeer = nullptr;
    QAction* m_find = nullptr;
    QAction* m_cancelAction = nullptr;
    QAction* m_runUt = nullptr;
    QAction* m_settingsAction = nullptr;
    QAction* m_demo = nullptr;
    QAction* m_shortcuts = nullptr;
    QAction* m_about = nullptr;
    QAction* m_focusTree = nullptr;
    QList<QAction*> m_tabActions;
    // Graph files (mainwindowgraph.cpp).
    GraphFileJob* m_graphJob = nullptr;
    GraphFilePanel* m_graphPanel = nullptr;
    TrendView* m_trendView = nullptr;
    QAction* m_openGraph = nullptr;

    // The graph view and manual matching (mainwindowmatching.cpp).
    GraphView* m_graph = nullptr;
    QMenu* m_matchMenu = nullptr;
    QAction* m_showGraph = nullptr;
    QAction* m_saveMatches = nullptr;
    QAction* m_loadMatches = nullptr;
    std::map<int, std::vector<graph::NodeMatch>> m_manualMatches; ///< per pair of the plan
    int m_graphPair = -1;         ///< the pair the graph view shows
    bool m_rematching = false;    ///< a compare again with changed manual matches is running
    bool m_graphSyncing = false;  ///< the tree follows the graph (or back): no echo
    std::shared_ptr<const session::PairAnalysis> m_graphAnalysis; ///< what the graph view's sides were made of
    std::shared_ptr<const session::PairAnalysis> m_graphPending;  ///< sides being made of it on a worker
    // An opened graph file in the graph view (mainwindowmatching.cpp): the file and the NPU graph its sides show.
    std::shared_ptr<const graph::GraphFile> m_graphFileShown;
    int m_graphFileSides = -1; ///< the NPU graph index whose sides are shown or being made; -1 none
    QSize m_sizeBeforeGraph; ///< the window's size before the graph view was turned on
    QSize m_sizeWithGraph;   ///< and right after (a window resized since is not shrunk back)
    void updateGraphViewFromFile();

    // One run (mainwindowrun.cpp).
    bool m_runMode = false;
    QString m_runPath;
    QString m_runSearchError;
    std::shared_ptr<const overflow::FirstAnomaly> m_runAnomaly;
    std::shared_ptr<const overflow::FirstAnomaly> m_runFound; ///< the search's answer, taken by onRunSearched
    bool m_runRefused = false;
    AnomalyChainModel* m_chainModel = nullptr;
    QTableView* m_chainView = nullptr;
    BackgroundTask* m_runTask = nullptr;
    bool m_keepTrend = false; ///< closeShownInput leaves the Trend tab (a step's dump opened from it)
    std::optional<std::pair<std::int64_t, std::int64_t>> m_runPendingCell; ///< (step, rank) to show once open
    void showTrendStepDump(qint64 step, qint64 rank);
    void chooseTrendBench();
};

} // namespace probescope::ui
