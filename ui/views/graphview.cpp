// SPDX-License-Identifier: Apache-2.0
#include "ui/views/graphview.h"

#include "ui/models/statuspalette.h"

#include <QAction>
#include <QCheckBox>
#include <QContextMenuEvent>
#include <QEvent>
#include <QHelpEvent>
#include <QHBoxLayout>
#include <QKeyEvent>
#include <QLabel>
#include <QMenu>
#include <QMouseEvent>
#include <QPainter>
#include <QPainterPath>
#include <QScrollBar>
#include <QSplitter>
#include <QToolTip>
#include <QVBoxLayout>

#include <algorithm>
#include <array>
#include <set>
#include <string>

namespace probescope::ui {

using session::Status;

namespace {

constexpr int kMargin = 6;
constexpr int kRightInset = 2; ///< a nested box ends this much left of its parent's right edge, per level
constexpr int kMaxDepthIndent = 40; ///< deeper levels keep the 40th level's indent (the text stays readable)

int indentLevel(std::uint32_t depth) { return static_cast<int>(std::min<std::uint32_t>(depth, kMaxDepthIndent)); }

} // namespace

// ----- GraphPane -------------------------------------------------------------------------------

GraphPane::GraphPane(GraphSideId side, QWidget* parent)
    : QAbstractScrollArea(parent)
    , m_side(side)
{
    setObjectName(side == GraphSideId::Npu ? "graphNpu" : "graphBench");
    setFocusPolicy(Qt::StrongFocus);
    setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    m_rowHeight = fontMetrics().height() + 10;
    m_dark = statuspalette::isDark(palette());
    viewport()->setAutoFillBackground(true);
}

void GraphPane::setSides(std::shared_ptr<const GraphSides> sides)
{
    m_sides = std::move(sides);
    m_data = m_sides ? &m_sides->side(m_side) : nullptr;
    m_expanded.assign(m_data ? m_data->size() : 0, 0);
    m_rows.clear();
    m_current.reset();
    m_echo.reset();
    m_hits.clear();
    if (m_data)
        m_rows.assign(m_data->roots.begin(), m_data->roots.end());
    m_display.clear();
    updateScrollRange();
    verticalScrollBar()->setValue(0);
    emit rowsChanged();
    viewport()->update();
}

void GraphPane::rowsWereChanged()
{
    m_display.clear();
    updateScrollRange();
    emit rowsChanged();
    viewport()->update();
}

void GraphPane::setDisplayRows(std::vector<std::uint32_t> display, std::size_t count)
{
    if (display.size() != m_rows.size())
        display.clear(); // a placement for other rows: ignored
    m_display = std::move(display);
    m_displayCount = m_display.empty() ? m_rows.size() : std::max(count, m_rows.size());
    updateScrollRange();
    viewport()->update();
}

std::size_t GraphPane::rowAtOrAfter(std::size_t d) const
{
    if (m_display.empty())
        return std::min(d, m_rows.size());
    return static_cast<std::size_t>(std::lower_bound(m_display.begin(), m_display.end(), d) - m_display.begin());
}

void GraphPane::appendVisibleBelow(std::uint32_t node, std::vector<std::uint32_t>& out) const
{
    // Pre-order of the expanded part below `node`: an explicit stack (hierarchies run deep).
    std::vector<std::uint32_t> stack;
    const auto kids = m_data->childrenOf(node);
    stack.assign(kids.rbegin(), kids.rend());
    while (!stack.empty()) {
        const std::uint32_t n = stack.back();
        stack.pop_back();
        out.push_back(n);
        if (m_expanded[n]) {
            const auto c = m_data->childrenOf(n);
            stack.insert(stack.end(), c.rbegin(), c.rend());
        }
    }
}

std::size_t GraphPane::rowsBelow(std::size_t row) const
{
    const std::uint32_t depth = m_data->nodes[m_rows[row]].depth;
    std::size_t k = row + 1;
    while (k < m_rows.size() && m_data->nodes[m_rows[k]].depth > depth)
        ++k;
    return k - row - 1;
}

int GraphPane::rowOf(std::uint32_t node) const
{
    // A linear scan of the rows (0.1 ms at 200,000 rows) instead of a node -> row map every expand would rebuild.
    const auto it = std::find(m_rows.begin(), m_rows.end(), node);
    return it == m_rows.end() ? -1 : static_cast<int>(it - m_rows.begin());
}

bool GraphPane::setExpanded(std::uint32_t node, bool expanded)
{
    if (!m_data || node >= m_data->size() || m_data->nodes[node].childCount == 0 || bool(m_expanded[node]) == expanded)
        return false;
    m_expanded[node] = expanded ? 1 : 0;
    const int row = rowOf(node);
    if (row >= 0) {
        const auto at = static_cast<std::size_t>(row);
        if (expanded) {
            std::vector<std::uint32_t> below;
            appendVisibleBelow(node, below);
            m_rows.insert(m_rows.begin() + static_cast<std::ptrdiff_t>(at + 1), below.begin(), below.end());
        } else {
            const std::size_t k = rowsBelow(at);
            m_rows.erase(m_rows.begin() + static_cast<std::ptrdiff_t>(at + 1),
                         m_rows.begin() + static_cast<std::ptrdiff_t>(at + 1 + k));
            if (m_current && rowOf(*m_current) < 0)
                m_current = node; // the current node went into the collapsed box: the box is current now
        }
        rowsWereChanged();
    }
    return true;
}

void GraphPane::reveal(std::uint32_t node)
{
    if (!m_data || node >= m_data->size())
        return;
    // The ancestors open from the root down to the first closed one already; that one has a row. All closed ones are
    // marked open and the rows below the first are made once: linear in the depth and the rows shown (an expansion
    // per ancestor looked up and shifted the rows each time: quadratic in a hierarchy thousands of levels deep).
    const std::vector<std::uint32_t> chain = m_data->ancestorsOf(node);
    const auto firstClosed = std::find_if(chain.begin(), chain.end(), [this](std::uint32_t a) { return !m_expanded[a]; });
    if (firstClosed == chain.end())
        return;
    const int row = rowOf(*firstClosed);
    for (auto it = firstClosed; it != chain.end(); ++it)
        m_expanded[*it] = 1;
    if (row < 0)
        return; // not shown (cannot happen while the chain above it is open): expanded when it gets a row
    std::vector<std::uint32_t> below;
    appendVisibleBelow(*firstClosed, below);
    m_rows.insert(m_rows.begin() + row + 1, below.begin(), below.end());
    rowsWereChanged();
}

void GraphPane::expandMany(const std::vector<std::uint32_t>& nodes)
{
    if (!m_data)
        return;
    bool changed = false;
    for (const std::uint32_t n : nodes) {
        if (n < m_data->size() && m_data->nodes[n].childCount > 0 && !m_expanded[n]) {
            m_expanded[n] = 1;
            changed = true;
        }
    }
    if (!changed)
        return;
    m_rows.clear();
    for (const std::uint32_t r : m_data->roots) {
        m_rows.push_back(r);
        if (m_expanded[r])
            appendVisibleBelow(r, m_rows);
    }
    rowsWereChanged();
}

void GraphPane::setCurrent(std::optional<std::uint32_t> node)
{
    if (node && (!m_data || *node >= m_data->size()))
        node.reset();
    if (m_current == node)
        return;
    m_current = node;
    viewport()->update();
}

void GraphPane::setEcho(std::optional<std::uint32_t> node)
{
    if (m_echo == node)
        return;
    m_echo = node;
    viewport()->update();
}

void GraphPane::setShown(std::function<bool(std::uint32_t)> shown)
{
    m_shown = std::move(shown);
    viewport()->update();
}

void GraphPane::setHits(std::vector<std::uint8_t> hits)
{
    m_hits = std::move(hits);
    viewport()->update();
}

std::optional<int> GraphPane::viewportYOf(std::uint32_t node) const
{
    const int row = rowOf(node);
    if (row < 0)
        return std::nullopt;
    return rowTop(static_cast<std::size_t>(row)) - verticalScrollBar()->value();
}

void GraphPane::scrollToNode(std::uint32_t node, int y)
{
    const int row = rowOf(node);
    if (row < 0)
        return;
    if (y < 0)
        y = (viewport()->height() - m_rowHeight) / 2;
    verticalScrollBar()->setValue(rowTop(static_cast<std::size_t>(row)) - y);
}

std::optional<std::uint32_t> GraphPane::nodeAt(QPoint pos) const
{
    if (!m_data)
        return std::nullopt;
    const int d = (pos.y() + verticalScrollBar()->value()) / m_rowHeight;
    if (pos.y() < 0 || d < 0)
        return std::nullopt;
    const std::size_t row = rowAtOrAfter(static_cast<std::size_t>(d));
    if (row >= m_rows.size() || displayRowOf(row) != static_cast<std::size_t>(d))
        return std::nullopt; // past the last row, or a placeholder facing the other side's extra node
    return m_rows[row];
}

void GraphPane::updateScrollRange()
{
    const int total = static_cast<int>(std::min<std::size_t>(displayRowCount(), 50'000'000)) * m_rowHeight;
    verticalScrollBar()->setRange(0, std::max(0, total - viewport()->height() + m_rowHeight));
    verticalScrollBar()->setPageStep(viewport()->height());
    verticalScrollBar()->setSingleStep(m_rowHeight);
}

QRect GraphPane::boxRect(std::uint32_t node, int y) const
{
    const int level = indentLevel(m_data->nodes[node].depth);
    const int left = kMargin + level * m_indent;
    const int right = viewport()->width() - kMargin - level * kRightInset;
    return QRect(left, y + 2, std::max(40, right - left), m_rowHeight - 4);
}

Status GraphPane::paintedStatus(std::uint32_t node) const
{
    // A collapsed box shows the worst inside it (an error three levels down is seen from the top); an open box its
    // own verdict, its contents show theirs.
    const GraphNode& n = m_data->nodes[node];
    return n.childCount > 0 && !m_expanded[node] ? n.subtree : n.own;
}

std::vector<Status> GraphPane::overview(int lines) const
{
    std::vector<Status> out(static_cast<std::size_t>(std::max(lines, 0)), Status::NoData);
    if (!m_data || m_rows.empty() || lines <= 0)
        return out;
    // Over the drawn rows: a placeholder facing the other side's extra node is a line without data.
    const std::size_t n = displayRowCount();
    for (std::size_t r = 0; r < m_rows.size(); ++r) {
        const std::size_t line = displayRowOf(r) * static_cast<std::size_t>(lines) / n;
        out[line] = session::worse(out[line], paintedStatus(m_rows[r]));
    }
    // A line over fewer rows than one pixel each: fill the gaps so short graphs read as bars, not dots.
    if (n < static_cast<std::size_t>(lines)) {
        for (std::size_t line = 0; line < out.size(); ++line) {
            const std::size_t d = line * n / out.size();
            const std::size_t r = rowAtOrAfter(d);
            out[line] = r < m_rows.size() && displayRowOf(r) == d ? paintedStatus(m_rows[r]) : Status::NoData;
        }
    }
    return out;
}

void GraphPane::paintEvent(QPaintEvent*)
{
    QPainter p(viewport());
    p.setRenderHint(QPainter::Antialiasing, false);
    const QPalette& pal = palette();
    if (!m_data || m_rows.empty()) {
        p.setPen(pal.color(QPalette::PlaceholderText));
        p.drawText(viewport()->rect(), Qt::AlignCenter,
                   m_data ? tr("No nodes on this side") : tr("The graph appears when the compare has finished"));
        return;
    }
    const int top = verticalScrollBar()->value();
    const int height = viewport()->height();
    const std::size_t first = rowAtOrAfter(static_cast<std::size_t>(std::max(0, top / m_rowHeight)));
    const std::size_t last = rowAtOrAfter(static_cast<std::size_t>(std::max(0, (top + height) / m_rowHeight + 1)));
    if (first >= last)
        return;

    // The frames of open boxes around the visible rows: the first row's ancestors (open, or it would have no row)
    // and every open box whose row is visible. Each frame ends after its last descendant's row; one that does not
    // end within the viewport runs past its bottom, so no row outside the viewport is ever looked at.
    struct Frame
    {
        std::uint32_t node;
        int y;
        std::size_t next; ///< the first row that may end the frame
    };
    std::vector<Frame> frames;
    for (const std::uint32_t a : m_data->ancestorsOf(m_rows[first]))
        frames.push_back({ a, -m_rowHeight, first }); // starts above the viewport
    for (std::size_t r = first; r < last; ++r) {
        const std::uint32_t n = m_rows[r];
        if (m_expanded[n])
            frames.push_back({ n, rowTop(r) - top, r + 1 });
    }
    for (const Frame& f : frames) {
        const std::uint32_t depth = m_data->nodes[f.node].depth;
        int bottom = height + m_rowHeight;
        for (std::size_t r = f.next; r < last; ++r) {
            if (m_data->nodes[m_rows[r]].depth <= depth) {
                bottom = rowTop(r) - top;
                break;
            }
        }
        QRect box = boxRect(f.node, f.y);
        box.setBottom(bottom - 2);
        const Status s = m_data->nodes[f.node].own;
        QColor fill = statuspalette::fill(s, m_dark);
        fill.setAlpha(40);
        p.setPen(QPen(statuspalette::outline(s, m_dark), 1));
        p.setBrush(fill);
        p.drawRect(box.adjusted(-3, 0, 3, 0));
    }

    const QFontMetrics fm = fontMetrics();
    QFont bold = font();
    bold.setBold(true);
    const QFontMetrics boldMetrics(bold);
    for (std::size_t r = first; r < last; ++r) {
        const std::uint32_t n = m_rows[r];
        const GraphNode& node = m_data->nodes[n];
        const int y = rowTop(r) - top;
        const QRect box = boxRect(n, y);
        const Status s = paintedStatus(n);
        const bool faded = m_shown && !m_shown(n);
        p.setOpacity(faded ? 0.3 : 1.0);
        p.setPen(QPen(statuspalette::outline(s, m_dark), 1));
        p.setBrush(statuspalette::fill(s, m_dark));
        p.setRenderHint(QPainter::Antialiasing, true);
        const qreal radius = node.module ? 2.0 : 7.0; // modules square, calls rounded (msprobe's shapes)
        p.drawRoundedRect(QRectF(box).adjusted(0.5, 0.5, -0.5, -0.5), radius, radius);
        p.setRenderHint(QPainter::Antialiasing, false);
        int x = box.left() + 4;
        if (node.childCount > 0) {
            // The expander: a triangle pointing right (closed) or down (open).
            const int cy = box.center().y();
            QPolygon tri;
            if (m_expanded[n])
                tri << QPoint(x, cy - 3) << QPoint(x + 8, cy - 3) << QPoint(x + 4, cy + 3);
            else
                tri << QPoint(x + 2, cy - 5) << QPoint(x + 7, cy) << QPoint(x + 2, cy + 5);
            p.setPen(Qt::NoPen);
            p.setBrush(statuspalette::text(s, m_dark));
            p.drawPolygon(tri);
        }
        x += 12;
        QPixmap& icon = m_icons[static_cast<std::size_t>(s)];
        if (icon.isNull())
            icon = statuspalette::pixmapOf(s, 12);
        p.drawPixmap(x, box.center().y() - 6, icon);
        x += 16;
        QString badge;
        // The first failing node in execution order (and its partner): where the tree's F goes.
        const bool firstFailing = m_sides->firstFailing
            && (m_side == GraphSideId::Npu ? *m_sides->firstFailing == n
                                           : node.partner == static_cast<std::int32_t>(*m_sides->firstFailing));
        if (firstFailing)
            badge = QStringLiteral("★");
        if (node.manual)
            badge += (badge.isEmpty() ? QString() : QStringLiteral(" ")) + QStringLiteral("⇄");
        if (node.childCount > 0 && !m_expanded[n])
            badge += (badge.isEmpty() ? QString() : QStringLiteral(" ")) + QString::number(node.childCount);
        const int badgeWidth = badge.isEmpty() ? 0 : fm.horizontalAdvance(badge) + 8;
        p.setPen(statuspalette::text(s, m_dark));
        p.setFont(node.module ? bold : font());
        // The part of the name that tells the node from its siblings (boxLabel: no "Module.", no path shared with
        // the parent), elided on the left: the op or class, the direction and the call index stay (issue 36 item 2).
        const std::string_view parentName
            = node.parent >= 0 ? m_data->nodes[static_cast<std::uint32_t>(node.parent)].name : std::string_view();
        const std::string shownName = boxLabel(node.name, parentName, node.module);
        const QString name = QString::fromStdString(shownName);
        const QRect textRect(x, box.top(), box.right() - x - badgeWidth - 4, box.height());
        p.drawText(textRect, Qt::AlignVCenter | Qt::AlignLeft,
                   (node.module ? boldMetrics : fm).elidedText(name, Qt::ElideLeft, textRect.width()));
        p.setFont(font());
        if (!badge.isEmpty())
            p.drawText(QRect(box.right() - badgeWidth, box.top(), badgeWidth - 4, box.height()), Qt::AlignVCenter | Qt::AlignRight,
                       badge);
        p.setOpacity(1.0);
        const bool hit = n < m_hits.size() && m_hits[n];
        if (hit || m_current == n || m_echo == n) {
            p.setBrush(Qt::NoBrush);
            QColor ring = pal.color(QPalette::Highlight);
            if (hit && m_current != n && m_echo != n)
                ring = QColor(0x1E, 0x88, 0xE5); // a search hit: blue, thinner
            p.setPen(QPen(ring, m_current == n ? 3 : 2, m_echo == n && m_current != n ? Qt::DashLine : Qt::SolidLine));
            p.drawRect(box.adjusted(-1, -1, 0, 0));
        }
    }
}

void GraphPane::resizeEvent(QResizeEvent* event)
{
    QAbstractScrollArea::resizeEvent(event);
    updateScrollRange();
}

void GraphPane::changeEvent(QEvent* event)
{
    if (event->type() == QEvent::PaletteChange) {
        m_dark = statuspalette::isDark(palette());
        viewport()->update();
    }
    if (event->type() == QEvent::FontChange) {
        m_rowHeight = fontMetrics().height() + 10;
        updateScrollRange();
    }
    QAbstractScrollArea::changeEvent(event);
}

bool GraphPane::viewportEvent(QEvent* event)
{
    if (event->type() == QEvent::ToolTip && m_data) {
        // The whole name (boxes elide it), the verdict and the partner.
        auto* help = static_cast<QHelpEvent*>(event);
        const auto node = nodeAt(help->pos());
        if (!node) {
            QToolTip::hideText();
            return true;
        }
        const GraphNode& n = m_data->nodes[*node];
        QString text = QString::fromUtf8(n.name.data(), static_cast<qsizetype>(n.name.size())) + QStringLiteral("\n")
            + statuspalette::label(n.own);
        if (n.partner >= 0) {
            const GraphNode& p = m_sides->side(otherSide(m_side)).nodes[static_cast<std::uint32_t>(n.partner)];
            text += QStringLiteral(" · ") + (n.manual ? tr("matched by hand with %1") : tr("matched with %1"))
                                                 .arg(QString::fromUtf8(p.name.data(), static_cast<qsizetype>(p.name.size())));
        }
        QToolTip::showText(help->globalPos(), text, viewport());
        return true;
    }
    return QAbstractScrollArea::viewportEvent(event);
}

void GraphPane::mousePressEvent(QMouseEvent* event)
{
    const auto node = nodeAt(event->position().toPoint());
    if (!node)
        return;
    const QRect box = boxRect(*node, viewportYOf(*node).value_or(0));
    // The expander toggles; anywhere else picks.
    if (event->button() == Qt::LeftButton && m_data->nodes[*node].childCount > 0 && event->position().x() < box.left() + 16) {
        emit expansionToggled(*node, !m_expanded[*node]);
        return;
    }
    if (event->button() == Qt::LeftButton || event->button() == Qt::RightButton) {
        setCurrent(*node);
        emit currentPicked(*node, !(event->modifiers() & Qt::ControlModifier));
    }
}

void GraphPane::mouseDoubleClickEvent(QMouseEvent* event)
{
    const auto node = nodeAt(event->position().toPoint());
    if (node && m_data->nodes[*node].childCount > 0)
        emit expansionToggled(*node, !m_expanded[*node]);
}

void GraphPane::moveCurrent(int rowDelta)
{
    if (m_rows.empty())
        return;
    int row = m_current ? rowOf(*m_current) : -1;
    row = std::clamp(row < 0 ? 0 : row + rowDelta, 0, static_cast<int>(m_rows.size()) - 1);
    const std::uint32_t node = m_rows[static_cast<std::size_t>(row)];
    setCurrent(node);
    const auto y = viewportYOf(node);
    if (y && (*y < 0 || *y + m_rowHeight > viewport()->height()))
        scrollToNode(node, *y < 0 ? 0 : viewport()->height() - m_rowHeight);
    emit currentPicked(node, true);
}

void GraphPane::keyPressEvent(QKeyEvent* event)
{
    if (!m_data) {
        QAbstractScrollArea::keyPressEvent(event);
        return;
    }
    const int page = std::max(1, viewport()->height() / m_rowHeight - 1);
    switch (event->key()) {
    case Qt::Key_Down:
        moveCurrent(1);
        return;
    case Qt::Key_Up:
        moveCurrent(-1);
        return;
    case Qt::Key_PageDown:
        moveCurrent(page);
        return;
    case Qt::Key_PageUp:
        moveCurrent(-page);
        return;
    case Qt::Key_Home:
        moveCurrent(-static_cast<int>(m_rows.size()));
        return;
    case Qt::Key_End:
        moveCurrent(static_cast<int>(m_rows.size()));
        return;
    case Qt::Key_Right:
        if (m_current && m_data->nodes[*m_current].childCount > 0 && !m_expanded[*m_current]) {
            emit expansionToggled(*m_current, true);
            return;
        }
        moveCurrent(1);
        return;
    case Qt::Key_Left:
        if (m_current && m_expanded[*m_current]) {
            emit expansionToggled(*m_current, false);
            return;
        }
        if (m_current && m_data->nodes[*m_current].parent >= 0) {
            const auto parent = static_cast<std::uint32_t>(m_data->nodes[*m_current].parent);
            setCurrent(parent);
            emit currentPicked(parent, true);
        }
        return;
    case Qt::Key_Space:
    case Qt::Key_Return:
    case Qt::Key_Enter:
        if (m_current && m_data->nodes[*m_current].childCount > 0)
            emit expansionToggled(*m_current, !m_expanded[*m_current]);
        return;
    case Qt::Key_Menu:
        if (m_current) {
            const auto y = viewportYOf(*m_current).value_or(0);
            emit contextMenuAt(*m_current, viewport()->mapToGlobal(QPoint(boxRect(*m_current, y).left() + 20, y + m_rowHeight)));
        }
        return;
    default:
        QAbstractScrollArea::keyPressEvent(event);
    }
}

void GraphPane::contextMenuEvent(QContextMenuEvent* event)
{
    const auto node = event->reason() == QContextMenuEvent::Mouse ? nodeAt(viewport()->mapFromGlobal(event->globalPos())) : m_current;
    if (node)
        emit contextMenuAt(*node, event->globalPos());
}

// ----- GraphMinimap ----------------------------------------------------------------------------

GraphMinimap::GraphMinimap(GraphPane* pane, QWidget* parent)
    : QWidget(parent)
    , m_pane(pane)
{
    setObjectName(pane->objectName() + "Minimap");
    setMinimumWidth(16);
    setMaximumWidth(28);
    setSizePolicy(QSizePolicy::Fixed, QSizePolicy::Expanding);
    connect(pane, &GraphPane::rowsChanged, this, &GraphMinimap::invalidate);
    connect(pane->verticalScrollBar(), &QScrollBar::valueChanged, this, qOverload<>(&QWidget::update));
    connect(pane->verticalScrollBar(), &QScrollBar::rangeChanged, this, qOverload<>(&QWidget::update));
}

void GraphMinimap::invalidate()
{
    m_dirty = true;
    update();
}

void GraphMinimap::resizeEvent(QResizeEvent*) { invalidate(); }

void GraphMinimap::changeEvent(QEvent* event)
{
    // The image is drawn in the theme's colours: a theme change draws it again (it stayed white, issue 36 item 5).
    if (event->type() == QEvent::PaletteChange)
        invalidate();
    QWidget::changeEvent(event);
}

void GraphMinimap::paintEvent(QPaintEvent*)
{
    QPainter p(this);
    const bool dark = statuspalette::isDark(palette());
    if (m_dirty || m_image.size() != size()) {
        // One line per pixel row, each the worst status of the rows it covers: built once per expand or collapse.
        m_image = QImage(size(), QImage::Format_RGB32);
        m_image.fill(palette().color(QPalette::Base));
        const std::vector<Status> lines = m_pane->overview(height());
        const std::size_t rows = m_pane->displayRowCount();
        const int used = rows == 0 ? 0 : static_cast<int>(std::min<std::size_t>(lines.size(), rows * 4));
        for (int y = 0; y < used; ++y) {
            const std::size_t line = static_cast<std::size_t>(y) * lines.size() / static_cast<std::size_t>(std::max(used, 1));
            const QRgb c = statuspalette::fill(lines[line], dark).rgb();
            auto* scan = reinterpret_cast<QRgb*>(m_image.scanLine(y));
            for (int x = 3; x < m_image.width() - 3; ++x)
                scan[x] = c;
        }
        m_dirty = false;
    }
    p.drawImage(0, 0, m_image);
    // The viewport's share of the rows, as a frame.
    const std::size_t rows = m_pane->displayRowCount();
    if (rows == 0)
        return;
    const int used = static_cast<int>(std::min<std::size_t>(static_cast<std::size_t>(height()), rows * 4));
    const double total = static_cast<double>(rows) * m_pane->rowHeight();
    const double top = m_pane->verticalScrollBar()->value() / total * used;
    const double extent = std::max(4.0, m_pane->viewport()->height() / total * used);
    p.setPen(QPen(palette().color(QPalette::Highlight), 2));
    p.setBrush(Qt::NoBrush);
    p.drawRect(QRectF(1, top, width() - 2, std::min(extent, used - top)));
}

void GraphMinimap::scrollTo(int y)
{
    const std::size_t rows = m_pane->displayRowCount();
    if (rows == 0)
        return;
    const int used = static_cast<int>(std::min<std::size_t>(static_cast<std::size_t>(height()), rows * 4));
    const double fraction = std::clamp(static_cast<double>(y) / std::max(used, 1), 0.0, 1.0);
    const double total = static_cast<double>(rows) * m_pane->rowHeight();
    m_pane->verticalScrollBar()->setValue(static_cast<int>(fraction * total - m_pane->viewport()->height() / 2.0));
}

void GraphMinimap::mousePressEvent(QMouseEvent* event) { scrollTo(static_cast<int>(event->position().y())); }

void GraphMinimap::mouseMoveEvent(QMouseEvent* event)
{
    if (event->buttons() & Qt::LeftButton)
        scrollTo(static_cast<int>(event->position().y()));
}

// ----- GraphView -------------------------------------------------------------------------------

GraphView::GraphView(QWidget* parent)
    : QWidget(parent)
{
    setObjectName("graphView");
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(2);
    auto* header = new QHBoxLayout;
    // How to use it, one line (whole in the tooltip): the graph's height is for the graph.
    m_hint = new QLabel(this);
    m_hint->setObjectName("graphHint");
    // Wrapped rather than cut (issue 36 item 12); it never sets the view's width.
    m_hint->setWordWrap(true);
    m_hint->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    m_hint->setForegroundRole(QPalette::PlaceholderText);
    m_together = new QCheckBox(this);
    m_together->setChecked(true);
    header->addWidget(m_hint, 1);
    header->addWidget(m_together);
    layout->addLayout(header);
    setMinimumWidth(280); // two narrow sides still read; the window fits 1366 px with the tree and tabs beside it

    auto* split = new QSplitter(Qt::Horizontal, this);
    split->setChildrenCollapsible(false);
    for (const GraphSideId side : { GraphSideId::Npu, GraphSideId::Bench }) {
        auto* column = new QWidget(split);
        auto* v = new QVBoxLayout(column);
        v->setContentsMargins(0, 0, 0, 0);
        v->setSpacing(2);
        auto* title = new QLabel(column);
        QFont f = title->font();
        f.setBold(true);
        title->setFont(f);
        auto* pane = new GraphPane(side, column);
        auto* map = new GraphMinimap(pane, column);
        auto* row = new QHBoxLayout;
        row->setSpacing(2);
        row->addWidget(pane, 1);
        row->addWidget(map);
        v->addWidget(title);
        v->addLayout(row, 1);
        split->addWidget(column);
        (side == GraphSideId::Npu ? m_npu : m_bench) = pane;
        (side == GraphSideId::Npu ? m_npuMap : m_benchMap) = map;
        (side == GraphSideId::Npu ? m_npuTitle : m_benchTitle) = title;
        connect(pane, &GraphPane::currentPicked, this, [this, side](std::uint32_t n, bool sync) { onPicked(side, n, sync); });
        connect(pane, &GraphPane::expansionToggled, this, [this, side](std::uint32_t n, bool on) { onToggled(side, n, on); });
        connect(pane->verticalScrollBar(), &QScrollBar::valueChanged, this, [this, side](int value) { onScrolled(side, value); });
        connect(pane, &GraphPane::rowsChanged, this, &GraphView::alignRows);
        connect(pane, &GraphPane::contextMenuAt, this,
                [this, side](std::uint32_t n, QPoint at) { showContextMenu(side, n, at); });
    }
    layout->addWidget(split, 1);

    m_match = new QAction(this);
    m_match->setObjectName("matchNodes");
    m_match->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_M));
    m_matchChildren = new QAction(this);
    m_matchChildren->setObjectName("matchNodesWithChildren");
    m_matchChildren->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_M));
    m_unmatch = new QAction(this);
    m_unmatch->setObjectName("unmatchNode");
    m_unmatch->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_U));
    m_unmatchChildren = new QAction(this);
    m_unmatchChildren->setObjectName("unmatchNodeWithChildren");
    m_unmatchChildren->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_U));
    const auto emitMatch = [this](bool children) {
        const auto a = m_npu->current();
        const auto b = m_bench->current();
        if (a && b)
            emit matchRequested(*a, *b, children);
    };
    const auto emitUnmatch = [this](bool children) {
        if (const auto a = m_npu->current())
            emit unmatchRequested(*a, children);
    };
    connect(m_match, &QAction::triggered, this, [emitMatch] { emitMatch(false); });
    connect(m_matchChildren, &QAction::triggered, this, [emitMatch] { emitMatch(true); });
    connect(m_unmatch, &QAction::triggered, this, [emitUnmatch] { emitUnmatch(false); });
    connect(m_unmatchChildren, &QAction::triggered, this, [emitUnmatch] { emitUnmatch(true); });
    retranslate();
    updateActions();
}

void GraphView::retranslate()
{
    m_together->setText(tr("Scroll together"));
    m_together->setToolTip(tr("Scroll both sides by the same amount."));
    m_hint->setText(tr("Click a node to select it and its match; Ctrl+click selects on one side only. To match by hand, "
                       "select an NPU node and a bench node, then Ctrl+M (Ctrl+Shift+M with their children)."));
    m_hint->setToolTip(m_hint->text());
    m_match->setText(tr("&Match selected nodes"));
    m_match->setStatusTip(tr("Match the NPU node selected in the graph with the bench node selected there, and compare them."));
    m_matchChildren->setText(tr("Match selected nodes with their &children"));
    m_matchChildren->setStatusTip(tr("Match the two nodes and their calls, paired in execution order by name, and compare them."));
    m_unmatch->setText(tr("&Unmatch"));
    m_unmatch->setStatusTip(tr("Undo the manual match of the selected NPU node (forward and backward)."));
    m_unmatchChildren->setText(tr("Unmatch with children"));
    m_unmatchChildren->setStatusTip(tr("Undo the manual matches of the selected NPU node and of everything inside it."));
    // The side's name in the language in force, then where its dump is (folder names, as the rank selector says).
    const auto title = [this](GraphSideId side) {
        const QString name = side == GraphSideId::Npu ? tr("NPU") : tr("Bench");
        const std::string where = m_sides ? m_sides->side(side).where : std::string();
        return where.empty() ? name : name + QStringLiteral(" · ") + QString::fromStdString(where);
    };
    m_npuTitle->setText(title(GraphSideId::Npu));
    m_benchTitle->setText(title(GraphSideId::Bench));
    // One height for both titles, so the panes below them start at one height and aligned rows meet: "标杆" is a few
    // pixels taller than "NPU" in most fonts, which put every bench row below its NPU partner.
    m_npuTitle->setMinimumHeight(0);
    m_benchTitle->setMinimumHeight(0);
    const int height = std::max(m_npuTitle->sizeHint().height(), m_benchTitle->sizeHint().height());
    m_npuTitle->setMinimumHeight(height);
    m_benchTitle->setMinimumHeight(height);
}

void GraphView::changeEvent(QEvent* event)
{
    if (event->type() == QEvent::LanguageChange)
        retranslate();
    QWidget::changeEvent(event);
}

void GraphView::clear() { setSides(nullptr); }

void GraphView::setSides(std::shared_ptr<const GraphSides> sides)
{
    // What was open and selected stays so by name (a recompare after a manual match gives new sides of the same
    // dumps: the user's place is kept).
    std::array<std::vector<std::string>, 2> expanded;
    std::array<std::optional<std::string>, 2> currentName;
    int scroll[2] = { 0, 0 };
    if (m_sides) {
        for (const GraphSideId s : { GraphSideId::Npu, GraphSideId::Bench }) {
            const auto i = static_cast<std::size_t>(s);
            const GraphSide& old = m_sides->side(s);
            for (const std::uint32_t n : pane(s)->rows()) {
                if (pane(s)->isExpanded(n))
                    expanded[i].emplace_back(old.nodes[n].name);
            }
            if (const auto c = pane(s)->current())
                currentName[i] = std::string(old.nodes[*c].name);
            scroll[i] = pane(s)->verticalScrollBar()->value();
        }
    }
    m_syncing = true;
    m_aligning = true; // the panes change one after the other: aligned once both show the new sides
    m_sides = std::move(sides);
    for (const GraphSideId s : { GraphSideId::Npu, GraphSideId::Bench }) {
        const auto i = static_cast<std::size_t>(s);
        GraphPane* p = pane(s);
        p->setSides(m_sides);
        if (!m_sides)
            continue;
        const GraphSide& side = m_sides->side(s);
        if (expanded[i].empty()) {
            // First sight: the top level open, so the structure shows at once.
            p->expandMany(side.roots);
        } else {
            std::vector<std::uint32_t> open;
            for (const std::string& name : expanded[i]) {
                if (const auto n = side.find(name))
                    open.push_back(*n);
            }
            p->expandMany(open);
        }
        if (currentName[i])
            if (const auto n = side.find(*currentName[i]))
                p->setCurrent(*n);
    }
    m_aligning = false;
    alignRows();
    for (const GraphSideId s : { GraphSideId::Npu, GraphSideId::Bench }) {
        const auto i = static_cast<std::size_t>(s);
        pane(s)->verticalScrollBar()->setValue(scroll[i]);
        m_lastScroll[i] = pane(s)->verticalScrollBar()->value();
    }
    m_syncing = false;
    retranslate();
    updateEchoes();
    updateActions();
}

void GraphView::selectNode(GraphSideId side, std::uint32_t node, bool sync)
{
    if (!m_sides || node >= m_sides->side(side).size())
        return;
    GraphPane* p = pane(side);
    m_syncing = true;
    p->reveal(node);
    p->setCurrent(node);
    const auto y = p->viewportYOf(node);
    if (!y || *y < 0 || *y + p->rowHeight() > p->viewport()->height())
        p->scrollToNode(node);
    m_lastScroll[static_cast<std::size_t>(side)] = p->verticalScrollBar()->value();
    m_syncing = false;
    onPicked(side, node, sync);
}

void GraphView::onPicked(GraphSideId side, std::uint32_t node, bool sync)
{
    if (!m_sides)
        return;
    const std::int32_t partner = m_sides->partnerOf(side, node);
    if (sync && partner >= 0) {
        // The partner current on the other side, at the same height as the picked node.
        GraphPane* other = pane(otherSide(side));
        const auto b = static_cast<std::uint32_t>(partner);
        m_syncing = true;
        other->reveal(b);
        other->setCurrent(b);
        if (const auto y = pane(side)->viewportYOf(node))
            other->scrollToNode(b, *y);
        m_lastScroll[static_cast<std::size_t>(otherSide(side))] = other->verticalScrollBar()->value();
        m_syncing = false;
    }
    updateEchoes();
    updateActions();
    if (side == GraphSideId::Npu)
        emit npuNodePicked(node);
    else if (sync && partner >= 0)
        emit npuNodePicked(static_cast<std::uint32_t>(partner));
}

void GraphView::onToggled(GraphSideId side, std::uint32_t node, bool expanded)
{
    setExpanded(side, node, expanded);
}

void GraphView::setExpanded(GraphSideId side, std::uint32_t node, bool expanded)
{
    if (!m_sides)
        return;
    m_syncing = true;
    pane(side)->setExpanded(node, expanded);
    const std::int32_t partner = m_sides->partnerOf(side, node);
    if (partner >= 0) {
        GraphPane* other = pane(otherSide(side));
        if (expanded)
            other->reveal(static_cast<std::uint32_t>(partner));
        other->setExpanded(static_cast<std::uint32_t>(partner), expanded);
    }
    for (const GraphSideId s : { GraphSideId::Npu, GraphSideId::Bench })
        m_lastScroll[static_cast<std::size_t>(s)] = pane(s)->verticalScrollBar()->value();
    m_syncing = false;
}

void GraphView::onScrolled(GraphSideId side, int value)
{
    const auto i = static_cast<std::size_t>(side);
    const int delta = value - m_lastScroll[i];
    m_lastScroll[i] = value;
    if (m_syncing || !m_together->isChecked() || delta == 0)
        return;
    m_syncing = true;
    GraphPane* other = pane(otherSide(side));
    other->verticalScrollBar()->setValue(other->verticalScrollBar()->value() + delta);
    m_lastScroll[static_cast<std::size_t>(otherSide(side))] = other->verticalScrollBar()->value();
    m_syncing = false;
}

RowAlignment alignSides(const GraphSides& sides, const std::vector<std::uint32_t>& npu, const std::vector<std::uint32_t>& bench)
{
    RowAlignment out;
    out.npu.resize(npu.size());
    out.bench.resize(bench.size());
    // Each node's row on its side (-1: not shown), so a partner's place is one lookup.
    std::vector<std::int32_t> npuRow(sides.npu().size(), -1);
    std::vector<std::int32_t> benchRow(sides.bench().size(), -1);
    for (std::size_t i = 0; i < npu.size(); ++i)
        if (npu[i] < npuRow.size())
            npuRow[npu[i]] = static_cast<std::int32_t>(i);
    for (std::size_t j = 0; j < bench.size(); ++j)
        if (bench[j] < benchRow.size())
            benchRow[bench[j]] = static_cast<std::int32_t>(j);
    const auto rowOfPartner = [&](GraphSideId s, std::uint32_t node) -> std::int64_t {
        const std::int32_t p = sides.partnerOf(s, node);
        if (p < 0)
            return -1;
        const auto& rows = s == GraphSideId::Npu ? benchRow : npuRow;
        return static_cast<std::size_t>(p) < rows.size() ? rows[static_cast<std::size_t>(p)] : -1;
    };
    // A merge of the two row lists (each step places at least one row): a pair shares a row; a row whose partner is
    // not shown or already placed stands alone; when both partners lie ahead (crossing pairs), the side whose partner
    // is nearer waits, so the other's rows up to it are placed alone first.
    std::size_t i = 0;
    std::size_t j = 0;
    std::size_t d = 0;
    while (i < npu.size() || j < bench.size()) {
        if (i == npu.size()) {
            out.bench[j++] = static_cast<std::uint32_t>(d++);
            continue;
        }
        if (j == bench.size()) {
            out.npu[i++] = static_cast<std::uint32_t>(d++);
            continue;
        }
        const std::int64_t pa = rowOfPartner(GraphSideId::Npu, npu[i]);
        const std::int64_t pb = rowOfPartner(GraphSideId::Bench, bench[j]);
        const auto ii = static_cast<std::int64_t>(i);
        const auto jj = static_cast<std::int64_t>(j);
        if (pa == jj) {
            out.npu[i++] = static_cast<std::uint32_t>(d);
            out.bench[j++] = static_cast<std::uint32_t>(d++);
        } else if (pa < jj) {
            out.npu[i++] = static_cast<std::uint32_t>(d++);
        } else if (pb < ii) {
            out.bench[j++] = static_cast<std::uint32_t>(d++);
        } else if (pa - jj <= pb - ii) {
            out.bench[j++] = static_cast<std::uint32_t>(d++);
        } else {
            out.npu[i++] = static_cast<std::uint32_t>(d++);
        }
    }
    out.count = d;
    return out;
}

void GraphView::alignRows()
{
    if (m_aligning)
        return;
    const bool wasSyncing = m_syncing;
    m_syncing = true; // a scroll range clamped by the new placement is no user scroll
    if (m_sides) {
        RowAlignment a = alignSides(*m_sides, m_npu->rows(), m_bench->rows());
        m_npu->setDisplayRows(std::move(a.npu), a.count);
        m_bench->setDisplayRows(std::move(a.bench), a.count);
    } else {
        m_npu->setDisplayRows({}, 0);
        m_bench->setDisplayRows({}, 0);
    }
    for (const GraphSideId s : { GraphSideId::Npu, GraphSideId::Bench }) {
        m_lastScroll[static_cast<std::size_t>(s)] = pane(s)->verticalScrollBar()->value();
        minimap(s)->invalidate();
    }
    m_syncing = wasSyncing;
}

void GraphView::updateEchoes()
{
    for (const GraphSideId s : { GraphSideId::Npu, GraphSideId::Bench }) {
        std::optional<std::uint32_t> echo;
        if (m_sides) {
            if (const auto c = pane(otherSide(s))->current()) {
                const std::int32_t partner = m_sides->partnerOf(otherSide(s), *c);
                if (partner >= 0)
                    echo = static_cast<std::uint32_t>(partner);
            }
        }
        pane(s)->setEcho(echo);
    }
}

void GraphView::setShown(std::function<bool(GraphSideId, std::uint32_t)> shown)
{
    if (!shown) {
        m_npu->setShown({});
        m_bench->setShown({});
        return;
    }
    m_npu->setShown([shown](std::uint32_t n) { return shown(GraphSideId::Npu, n); });
    m_bench->setShown([shown](std::uint32_t n) { return shown(GraphSideId::Bench, n); });
}

void GraphView::setHits(const std::vector<std::uint32_t>& npuNodes)
{
    if (!m_sides)
        return;
    std::vector<std::uint8_t> npu(npuNodes.empty() ? 0 : m_sides->npu().size());
    std::vector<std::uint8_t> bench(npuNodes.empty() ? 0 : m_sides->bench().size());
    for (const std::uint32_t n : npuNodes) {
        if (n >= npu.size())
            continue;
        npu[n] = 1;
        const std::int32_t b = m_sides->partnerOf(GraphSideId::Npu, n);
        if (b >= 0)
            bench[static_cast<std::size_t>(b)] = 1;
    }
    m_npu->setHits(std::move(npu));
    m_bench->setHits(std::move(bench));
}

void GraphView::refresh()
{
    for (const GraphSideId s : { GraphSideId::Npu, GraphSideId::Bench }) {
        pane(s)->viewport()->update();
        minimap(s)->invalidate();
    }
}

void GraphView::updateActions()
{
    const auto a = m_npu->current();
    const auto b = m_bench->current();
    const bool both = m_sides && !m_sides->fromGraphFile && a && b;
    // Already the pair: nothing to match.
    const bool paired = both && m_sides->partnerOf(GraphSideId::Npu, *a) == static_cast<std::int32_t>(*b);
    m_match->setEnabled(both && !paired);
    m_matchChildren->setEnabled(both && m_sides->npu().nodes[*a].childCount > 0);
    const bool manual = m_sides && !m_sides->fromGraphFile && a && m_sides->npu().nodes[*a].manual;
    m_unmatch->setEnabled(manual);
    m_unmatchChildren->setEnabled(m_sides && !m_sides->fromGraphFile && a && !m_sides->manual.empty());
}

void GraphView::showContextMenu(GraphSideId side, std::uint32_t node, QPoint globalPos)
{
    if (!m_sides)
        return;
    QMenu menu(this);
    const GraphNode& n = m_sides->side(side).nodes[node];
    if (n.childCount > 0) {
        const bool open = pane(side)->isExpanded(node);
        menu.addAction(open ? tr("Collapse") : tr("Expand"), this, [this, side, node, open] { setExpanded(side, node, !open); });
        menu.addSeparator();
    }
    menu.addActions({ m_match, m_matchChildren, m_unmatch, m_unmatchChildren });
    menu.exec(globalPos);
}

} // namespace probescope::ui
