// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <QAbstractScrollArea>
#include <QPoint>
#include <QString>
#include <QRect>
#include <QWidget>

#include <vector>

class QLabel;
class QLineEdit;
class QTableView;
class QToolButton;

namespace probescope::ui {

class RankOverviewModel;

/**
 * @brief The step × rank map of the rank overview: one row per NPU rank, one column per step, a cell per
 * pair coloured by its worst verdict (statuspalette, dark too) and numbered with the execution index of its
 * first failure.
 *
 * Painted directly from RankOverviewModel's grid rather than through a QTableView over a grid model: only the
 * cells inside the viewport are drawn, and a pair's change repaints its cell alone (a batch spanning many rows
 * repaints the viewport once). States are told apart without colour: pending "·" with a dotted frame, running
 * "…" hatched, failed to compare "×" cross-hatched, salvaged a corner notch and dashed frame, no failure "✓",
 * the origin "▶" with a heavy frame. Click or Enter opens the pair; the tooltip is the model's (short, wrapped).
 */
class RankMapView : public QAbstractScrollArea
{
    Q_OBJECT

public:
    explicit RankMapView(QWidget* parent = nullptr);

    void setModel(RankOverviewModel* model);
    RankOverviewModel* model() const { return m_model; }

    /// The keyboard cursor (grid row, grid column); (-1, -1) when the grid is empty.
    QPoint currentCell() const { return m_current; }
    void setCurrentCell(int gridRow, int gridColumn);
    /// Moves the cursor to the pair's cell and scrolls it into view.
    void setCurrentPair(int pairIndex);
    /// The cell's rectangle in viewport coordinates (it may lie outside the viewport).
    QRect cellRect(int gridRow, int gridColumn) const;
    /// Grid cell under a viewport point, (-1, -1) outside the cells.
    QPoint cellAt(const QPoint& viewportPos) const;
    /// The text drawn in a pair's cell (tests and the accessible name use it).
    QString cellText(int pairIndex) const;
    /**
     * @brief Shows only these grid rows (ranks), in grid order; empty shows every rank. A 10,000-rank map is
     * filtered to one communication group this way (issue 37). Moving the cursor to a hidden rank (the origin
     * key, a peer jump) shows every rank again, so a jump always lands.
     */
    void setRowFilter(std::vector<int> gridRows);
    /// The rows by a rank list such as "0-7, 1234" (rank numbers as the folders name them); false when the
    /// text is not such a list (the filter is then unchanged). "" shows every rank.
    bool setRankFilter(const QString& ranks);
    bool isFiltered() const { return !m_shown.empty(); }
    /// Rows shown (all grid rows when not filtered).
    int shownRows() const;
    /// Cells painted by the last paint event (the benchmark checks only visible ones are).
    int lastPaintedCells() const { return m_lastPainted; }
    QSize cellSize() const { return { m_cellWidth, m_cellHeight }; }

signals:
    void pairActivated(int pairIndex);

protected:
    void paintEvent(QPaintEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;
    bool viewportEvent(QEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void mouseReleaseEvent(QMouseEvent* event) override;
    void keyPressEvent(QKeyEvent* event) override;
    void changeEvent(QEvent* event) override;

private:
    void relayout();
    void updateScrollRanges();
    void onDataChanged(int firstRow, int lastRow);
    void ensureVisible(int gridRow, int gridColumn);
    int gridRowOfShown(int shown) const { return m_shown.empty() ? shown : m_shown[std::size_t(shown)]; }
    /// -1 when the row is filtered out.
    int shownOfGridRow(int gridRow) const;

    RankOverviewModel* m_model = nullptr;
    QPoint m_current { -1, -1 };
    QPoint m_pressed { -1, -1 };
    int m_cellWidth = 56;
    int m_cellHeight = 20;
    int m_rowHeaderWidth = 60;
    int m_columnHeaderHeight = 20;
    int m_lastPainted = 0;
    std::vector<int> m_shown;    ///< grid rows shown, ascending; empty = all
    std::vector<int> m_shownOf;  ///< grid row -> position among the shown rows, -1 hidden (when filtered)
};

/**
 * @brief The "Rank overview" tab: the origin line (with a button doing what the origin key does), a legend of
 * the map's marks, the map, and below it the per-pair table as the detail list.
 */
class RankOverviewPanel : public QWidget
{
    Q_OBJECT

public:
    explicit RankOverviewPanel(RankOverviewModel* model, QWidget* parent = nullptr);

    RankMapView* map() const { return m_map; }
    QTableView* table() const { return m_table; }
    QLabel* originLabel() const { return m_origin; }
    QLineEdit* rankFilter() const { return m_filter; }
    void retranslate();

signals:
    void pairActivated(int pairIndex);
    void originRequested();

protected:
    /// The fonts a style or platform theme gives on polish are wider than the ones at construction: the columns
    /// are measured again (the header read "Exec. in…" under Xvfb, issue 28).
    void changeEvent(QEvent* event) override;

private:
    void updateOrigin();
    /// What the colours and marks of the map mean: for a job, or for one run on its own.
    void updateLegend();

    RankOverviewModel* m_model = nullptr;
    QLabel* m_origin = nullptr;
    QToolButton* m_toOrigin = nullptr;
    QLabel* m_legend = nullptr;
    QLineEdit* m_filter = nullptr;
    RankMapView* m_map = nullptr;
    QTableView* m_table = nullptr;
};

} // namespace probescope::ui
