// SPDX-License-Identifier: Apache-2.0
#pragma once
// The window's page for an opened msprobe graph file (.vis / .vis.db): which graph, its node hierarchy with
// msprobe's verdict colours, and the selected node's details (docs/graph.md, "The GUI").

#include "core/graph/graphmodel.h"

#include <QString>
#include <QStringList>
#include <QWidget>

#include <memory>
#include <optional>
#include <vector>

class QComboBox;
class QLabel;
class QSplitter;
class QTextBrowser;
class QTreeView;
class QUrl;

namespace probescope::ui {

class GraphFileModel;
class SearchBar;

/**
 * @brief A graph file's graphs (step, rank, NPU/bench; micro step), the chosen graph as a tree coloured as
 * tb_graph_ascend colours it for the file's msprobe version, a name search (the window's SearchBar) and the
 * selected node's details: precision_index and verdict, matched node (a link to it in the other side's graph),
 * input_data / output_data as a table, stack frames.
 *
 * A .vis.db is shown as read without its node data (GraphFileJob); a selected node's input_data and output_data are
 * read then, by the row's primary key (one indexed SQLite lookup).
 */
class GraphFilePanel : public QWidget
{
    Q_OBJECT
public:
    explicit GraphFilePanel(QWidget* parent = nullptr);
    ~GraphFilePanel() override;

    /// Shows a file read by GraphFileJob (summaries: one per graph, in the file's order); its first graph is shown.
    void setFile(std::shared_ptr<const graph::GraphFile> file, std::vector<graph::GraphSummary> summaries);
    void clear();
    const graph::GraphFile* file() const { return m_file.get(); }
    const std::vector<graph::GraphSummary>& summaries() const { return m_summaries; }

    /// Shows graph `graphIndex` (all micro steps); false when there is no such graph.
    bool showGraph(int graphIndex);
    int currentGraph() const;
    /// Keeps the top-level nodes of one micro step (nullopt: all).
    void setMicroStep(std::optional<std::int64_t> microStep);

    /// Selects, expands to and scrolls to a node of the shown graph by its name; false if it has none.
    bool selectNode(const QString& name);
    /// The shown graph's first failing node by execution order (node_order), or, on a bench graph, the NPU graph's
    /// of the same step and rank shown first; without a failing node its first warning; false when there is neither.
    bool selectFirstFailure();
    /// The first node (node_order) of graph `graphIndex`, an NPU graph of a compare, whose verdict is a warning.
    std::optional<std::uint32_t> firstWarning(int graphIndex) const;
    QString selectedNodeName() const;
    /// "first failing node: NAME (node_order N)" for the shown graph's NPU side, or that there is none.
    QString firstFailureLine() const;
    /// One line per graph (id, step, rank, side, nodes, verdict counts, first failing node): what the scripted mode
    /// prints.
    QStringList report() const;

    GraphFileModel* model() const { return m_model; }
    QTreeView* tree() const { return m_tree; }
    QComboBox* graphBox() const { return m_graphBox; }
    QComboBox* microStepBox() const { return m_microBox; }
    QTextBrowser* details() const { return m_details; }
    SearchBar* searchBar() const { return m_search; }
    QString detailsText() const;

signals:
    void nodeSelected(const QString& name);

protected:
    void changeEvent(QEvent* event) override;

private:
    void retranslate();
    void fillGraphBox();
    void fillMicroBox();
    void onGraphChosen(int comboIndex);
    void onMicroChosen(int comboIndex);
    void onCurrentChanged();
    void showDetails(std::optional<std::uint32_t> node);
    void onLink(const QUrl& url);
    void onSearch(const QString& pattern, bool regex, bool caseSensitive);
    void stepSearch(int delta);
    void selectIndex(std::uint32_t node);

    std::shared_ptr<const graph::GraphFile> m_file;
    std::vector<graph::GraphSummary> m_summaries;
    GraphFileModel* m_model = nullptr;
    QLabel* m_header = nullptr;
    QLabel* m_graphLabel = nullptr;
    QLabel* m_microLabel = nullptr;
    QLabel* m_depthNote = nullptr; ///< shown while the tree is rooted at an ancestor of a deep node (selectIndex)
    QComboBox* m_graphBox = nullptr;
    QComboBox* m_microBox = nullptr;
    SearchBar* m_search = nullptr;
    QSplitter* m_splitter = nullptr;
    QTreeView* m_tree = nullptr;
    QTextBrowser* m_details = nullptr;
    std::vector<std::uint32_t> m_hits;
    int m_hitIndex = -1;
    bool m_filling = false;
};

} // namespace probescope::ui
