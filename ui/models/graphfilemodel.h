// SPDX-License-Identifier: Apache-2.0
#pragma once
// The node hierarchy of one graph of an msprobe graph file (.vis / .vis.db, docs/graph.md) as a Qt tree model.

#include "core/graph/graphmodel.h"

#include <QAbstractItemModel>
#include <QColor>

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

namespace probescope::ui {

/**
 * @brief One graph (a step, rank and side) of an immutable graph::GraphFile as a tree: each node under the node
 * that holds it, children in msprobe's sub_nodes order, coloured as tb_graph_ascend colours it for the file's own
 * msprobe version (graph::Status: the file's node_colors bands, grey for unmatched, the bench colour).
 *
 * The model indexes the core graph without copying it: an index's internal id is the node's index in
 * graph::Graph::nodes, and one array of row numbers answers parent() in O(1), so a graph of a million nodes is
 * shown as soon as that array is filled. An optional micro step keeps only the top-level nodes of that micro step
 * (msprobe pages the level below the root by micro step; the rest of the hierarchy follows its top-level node).
 */
class GraphFileModel : public QAbstractItemModel
{
    Q_OBJECT
public:
    enum Column { NameColumn, TypeColumn, PrecisionColumn, VerdictColumn, ColumnCount };
    enum Role {
        NodeIndexRole = Qt::UserRole + 1, ///< quint32: index into graph::Graph::nodes
        StatusRole,                       ///< int: graph::Status
        ColourRole,                       ///< QColor: the verdict colour (also the name cell's background)
    };

    explicit GraphFileModel(QObject* parent = nullptr);

    /// Shows graph `graphIndex` of `file` (nothing for a null file or an index out of range); `microStep` keeps the
    /// top-level nodes of one micro step only.
    void setGraph(std::shared_ptr<const graph::GraphFile> file, int graphIndex,
                  std::optional<std::int64_t> microStep = std::nullopt);
    void clear();

    const graph::GraphFile* file() const { return m_file.get(); }
    std::shared_ptr<const graph::GraphFile> fileShared() const { return m_file; }
    /// The graph shown, or null.
    const graph::Graph* graph() const { return m_graph; }
    int graphIndex() const { return m_graphIndex; }
    std::optional<std::int64_t> microStep() const { return m_microStep; }

    /// The index of node `node` (column 0); invalid when the node is not shown (another micro step) or unknown.
    QModelIndex indexOfNode(std::uint32_t node) const;
    /// The node of an index; nullopt for an invalid one.
    std::optional<std::uint32_t> nodeOf(const QModelIndex& index) const;

    /// The colour a node is drawn with (tb_graph_ascend's rule on the file's bands).
    static QColor colourOf(const graph::GraphFile& file, const graph::Node& node);
    /// The words for a node's verdict: the palette's word and the band's range ("warning [0.3, 0.6]"), "unmatched",
    /// "bench", or empty.
    static QString verdictOf(const graph::GraphFile& file, const graph::Node& node);
    /// msprobe's own text of the node's band (8.x's legend sentence, 26.x's accuracy_level and description): the
    /// tooltip says it beside verdictOf()'s palette word; empty without a band.
    static QString bandText(const graph::GraphFile& file, const graph::Node& node);
    /// "module", "API", "API collection" or the stored number.
    static QString typeName(std::uint8_t type);

    QModelIndex index(int row, int column, const QModelIndex& parent = {}) const override;
    QModelIndex parent(const QModelIndex& child) const override;
    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    bool hasChildren(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;
    Qt::ItemFlags flags(const QModelIndex& index) const override;

private:
    /// The children shown under `node` (the filtered list for a root when a micro step is chosen).
    const std::vector<std::uint32_t>& childrenOf(std::uint32_t node) const;
    bool isShown(std::uint32_t node) const;

    std::shared_ptr<const graph::GraphFile> m_file;
    const graph::Graph* m_graph = nullptr;
    int m_graphIndex = -1;
    std::optional<std::int64_t> m_microStep;
    std::vector<std::uint32_t> m_row; ///< each node's row under its parent (or among the roots)
    /// With a micro step: each root's children of that micro step (one in msprobe's files; a damaged file may have a million).
    std::vector<std::pair<std::uint32_t, std::vector<std::uint32_t>>> m_filteredRootChildren;
    std::vector<std::int32_t> m_filteredSlot; ///< with a micro step: each root's index in m_filteredRootChildren, else -1
    std::vector<std::uint8_t> m_hidden; ///< with a micro step: 1 for a top-level node of another micro step
};

} // namespace probescope::ui
