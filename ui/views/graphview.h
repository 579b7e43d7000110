// SPDX-License-Identifier: Apache-2.0
#pragma once
// The graph view (issue 27 item 3): the NPU and the bench hierarchy side by side as nested boxes, in step with each
// other through matched nodes, with a minimap, the tree's status colours and its search and filters; the place where
// nodes are matched by hand (item 4). See docs/graph.md, "The graph view".

#include "ui/models/graphsides.h"

#include <QAbstractScrollArea>
#include <QImage>
#include <QPixmap>
#include <QWidget>

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

class QAction;
class QCheckBox;
class QLabel;

namespace probescope::ui {

/**
 * @brief One side of the graph view: a custom-painted scroll area of nested boxes.
 *
 * Lazy by construction: only the rows of expanded modules exist (a flat list of node indices in display order,
 * changed in place by an expand or a collapse), and painting walks the rows in the viewport alone, so an
 * interaction costs what is visible plus what was expanded, never the side's size (docs/graph.md).
 */
class GraphPane : public QAbstractScrollArea
{
    Q_OBJECT
public:
    explicit GraphPane(GraphSideId side, QWidget* parent = nullptr);

    void setSides(std::shared_ptr<const GraphSides> sides);
    GraphSideId sideId() const { return m_side; }

    bool isExpanded(std::uint32_t node) const { return node < m_expanded.size() && m_expanded[node]; }
    /// Expands or collapses one box (a node without children is left alone); false when nothing changed.
    bool setExpanded(std::uint32_t node, bool expanded);
    /// Expands every ancestor of `node` so that it has a row.
    void reveal(std::uint32_t node);
    /// Expands all of `nodes` (those without children are left alone) and makes the rows once: linear in the rows
    /// shown, where an expansion each would shift the rows once per node.
    void expandMany(const std::vector<std::uint32_t>& nodes);
    /// The node's row in display order, -1 when it has none (an ancestor is collapsed).
    int rowOf(std::uint32_t node) const;
    const std::vector<std::uint32_t>& rows() const { return m_rows; }
    /// Where each row is drawn, in rows from the top: the row's index unless the view aligned the two sides, then
    /// the other side's extra rows are blank placeholders between this side's rows (issue 36 item 12).
    std::size_t displayRowOf(std::size_t row) const { return m_display.empty() ? row : m_display[row]; }
    /// The drawn rows, placeholders included.
    std::size_t displayRowCount() const { return m_display.empty() ? m_rows.size() : m_displayCount; }
    /// Places the rows at `display` (one increasing entry per row) among `count` drawn rows; empty: one after another.
    /// Reset whenever the rows change (the view aligns again on rowsChanged).
    void setDisplayRows(std::vector<std::uint32_t> display, std::size_t count);

    std::optional<std::uint32_t> current() const { return m_current; }
    void setCurrent(std::optional<std::uint32_t> node);
    /// Scrolls so that `node`'s row is `y` pixels below the viewport's top (-1: centred).
    void scrollToNode(std::uint32_t node, int y = -1);
    /// Where `node`'s row is in the viewport (may be outside it), or nullopt without a row.
    std::optional<int> viewportYOf(std::uint32_t node) const;
    std::optional<std::uint32_t> nodeAt(QPoint viewportPos) const;

    /// The partner of the other side's current node: drawn selected too, so the pair reads at a glance.
    void setEcho(std::optional<std::uint32_t> node);
    /// Nodes drawn faded (the tree's filters hide them); null = every node shown.
    void setShown(std::function<bool(std::uint32_t)> shown);
    /// Nodes drawn with the search outline.
    void setHits(std::vector<std::uint8_t> hits);
    int rowHeight() const { return m_rowHeight; }
    bool isHit(std::uint32_t node) const { return node < m_hits.size() && m_hits[node]; }
    /// Drawn in full (not faded by the filters).
    bool isShownNode(std::uint32_t node) const { return !m_shown || m_shown(node); }
    /// The worst painted status per minimap line (`lines` lines over every row).
    std::vector<session::Status> overview(int lines) const;

signals:
    /// The user made `node` current; `sync` is false for a Ctrl+click (pick without moving the other side).
    void currentPicked(std::uint32_t node, bool sync);
    void expansionToggled(std::uint32_t node, bool expanded);
    void rowsChanged();
    void contextMenuAt(std::uint32_t node, QPoint globalPos);

protected:
    void paintEvent(QPaintEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void mouseDoubleClickEvent(QMouseEvent* event) override;
    void keyPressEvent(QKeyEvent* event) override;
    void contextMenuEvent(QContextMenuEvent* event) override;
    void changeEvent(QEvent* event) override;
    bool viewportEvent(QEvent* event) override;

private:
    void updateScrollRange();
    /// The visible rows under `node` (itself excluded) in display order, appended to `out`.
    void appendVisibleBelow(std::uint32_t node, std::vector<std::uint32_t>& out) const;
    /// The number of rows after `row` that are below its node (deeper).
    std::size_t rowsBelow(std::size_t row) const;
    QRect boxRect(std::uint32_t node, int y) const;
    /// The index into m_rows of the first row drawn at or below display row `d` (m_rows.size() when none).
    std::size_t rowAtOrAfter(std::size_t d) const;
    int rowTop(std::size_t row) const { return static_cast<int>(displayRowOf(row)) * m_rowHeight; }
    /// Drops the alignment (the rows changed) and tells the view.
    void rowsWereChanged();
    session::Status paintedStatus(std::uint32_t node) const;
    void moveCurrent(int rowDelta);

    GraphSideId m_side;
    std::shared_ptr<const GraphSides> m_sides;
    const GraphSide* m_data = nullptr;
    std::vector<std::uint8_t> m_expanded;
    std::vector<std::uint32_t> m_rows;
    std::vector<std::uint32_t> m_display; ///< displayRowOf per row; empty: the identity
    std::size_t m_displayCount = 0;
    std::optional<std::uint32_t> m_current;
    std::optional<std::uint32_t> m_echo;
    std::function<bool(std::uint32_t)> m_shown;
    std::vector<std::uint8_t> m_hits;
    std::array<QPixmap, 6> m_icons; ///< statuspalette::pixmapOf per status, made once (a paint needs dozens)
    int m_rowHeight = 24;
    int m_indent = 10;
    bool m_dark = false;
};

/// A strip beside a pane: every row's colour in miniature and the viewport as a frame; a click or a drag scrolls.
class GraphMinimap : public QWidget
{
    Q_OBJECT
public:
    explicit GraphMinimap(GraphPane* pane, QWidget* parent = nullptr);
    QSize sizeHint() const override { return { 24, 200 }; }
    void invalidate();

protected:
    void changeEvent(QEvent* event) override;
    void paintEvent(QPaintEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;

private:
    void scrollTo(int y);
    GraphPane* m_pane;
    QImage m_image;
    bool m_dirty = true;
};

/**
 * @brief Both panes, kept in step: expanding a box expands its partner, making a node current makes its partner
 * current on the other side at the same height, and scrolling one side scrolls the other by as much (unless
 * "Scroll together" is off). Holds the match actions (menus and the panes' context menu show them).
 */
class GraphView : public QWidget
{
    Q_OBJECT
public:
    explicit GraphView(QWidget* parent = nullptr);

    /// Shows `sides`; expansion and current nodes carry over by name from what was shown.
    void setSides(std::shared_ptr<const GraphSides> sides);
    std::shared_ptr<const GraphSides> sides() const { return m_sides; }
    void clear();

    GraphPane* pane(GraphSideId side) const { return side == GraphSideId::Npu ? m_npu : m_bench; }
    GraphMinimap* minimap(GraphSideId side) const { return side == GraphSideId::Npu ? m_npuMap : m_benchMap; }
    std::optional<std::uint32_t> current(GraphSideId side) const { return pane(side)->current(); }
    /// Makes `node` current on `side` (revealed and scrolled to), and its partner on the other side when `sync`.
    void selectNode(GraphSideId side, std::uint32_t node, bool sync = true);
    /// Expands or collapses on `side` and the partner's box on the other.
    void setExpanded(GraphSideId side, std::uint32_t node, bool expanded);
    void setShown(std::function<bool(GraphSideId, std::uint32_t)> shown);
    /// The search hits (NPU nodes, the tree's search): outlined; their bench partners too.
    void setHits(const std::vector<std::uint32_t>& npuNodes);
    /// Paints both sides again (the filters changed what setShown's function answers).
    void refresh();

    QAction* matchAction() const { return m_match; }
    QAction* matchChildrenAction() const { return m_matchChildren; }
    QAction* unmatchAction() const { return m_unmatch; }
    QAction* unmatchChildrenAction() const { return m_unmatchChildren; }
    /// Enables the match actions for the current nodes (called whenever they or the sides change).
    void updateActions();
    void retranslate();

signals:
    /// The user made an NPU node current here (the tree follows).
    void npuNodePicked(std::uint32_t node);
    void matchRequested(std::uint32_t npu, std::uint32_t bench, bool withChildren);
    void unmatchRequested(std::uint32_t npu, bool withChildren);

protected:
    void changeEvent(QEvent* event) override;

private:
    void onPicked(GraphSideId side, std::uint32_t node, bool sync);
    void onToggled(GraphSideId side, std::uint32_t node, bool expanded);
    void onScrolled(GraphSideId side, int value);
    void showContextMenu(GraphSideId side, std::uint32_t node, QPoint globalPos);
    void updateEchoes();
    /// Places both sides' rows so that matched nodes share a row and a node without a partner shown faces a blank
    /// placeholder: linear in the rows shown.
    void alignRows();

    std::shared_ptr<const GraphSides> m_sides;
    GraphPane* m_npu = nullptr;
    GraphPane* m_bench = nullptr;
    GraphMinimap* m_npuMap = nullptr;
    GraphMinimap* m_benchMap = nullptr;
    QLabel* m_npuTitle = nullptr;
    QLabel* m_benchTitle = nullptr;
    QLabel* m_hint = nullptr;
    QCheckBox* m_together = nullptr;
    QAction* m_match = nullptr;
    QAction* m_matchChildren = nullptr;
    QAction* m_unmatch = nullptr;
    QAction* m_unmatchChildren = nullptr;
    int m_lastScroll[2] = { 0, 0 };
    bool m_syncing = false;
    bool m_aligning = false;
};

/// Where the rows `npu` and `bench` (node indices of `sides`, in display order) are drawn so that a node and its
/// partner share a row where the order allows; a row whose partner is not shown, or whose pair crosses another, faces a
/// blank placeholder. Linear in the rows and the sides' sizes.
struct RowAlignment
{
    std::vector<std::uint32_t> npu;
    std::vector<std::uint32_t> bench;
    std::size_t count = 0; ///< drawn rows, placeholders included
};
RowAlignment alignSides(const GraphSides& sides, const std::vector<std::uint32_t>& npu, const std::vector<std::uint32_t>& bench);

} // namespace probescope::ui
