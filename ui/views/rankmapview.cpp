// SPDX-License-Identifier: Apache-2.0
#include "ui/views/rankmapview.h"

#include "ui/models/rankoverviewmodel.h"
#include "ui/models/statuspalette.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QStyle>
#include <QHelpEvent>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QMouseEvent>
#include <QPainter>
#include <QPainterPath>
#include <QScrollBar>
#include <QSet>
#include <QSplitter>
#include <QTableView>
#include <QToolButton>
#include <QToolTip>
#include <QVBoxLayout>

#include <algorithm>

namespace probescope::ui {

using session::Status;
using State = RankOverviewModel::State;

namespace {

// A batch touching more rows than this repaints the viewport once instead of cell by cell.
constexpr int kCellUpdateLimit = 64;

} // namespace

RankMapView::RankMapView(QWidget* parent)
    : QAbstractScrollArea(parent)
{
    setObjectName("rankMap");
    setFocusPolicy(Qt::StrongFocus);
    viewport()->setMouseTracking(false);
    viewport()->setAttribute(Qt::WA_OpaquePaintEvent);
    relayout();
}

void RankMapView::setModel(RankOverviewModel* model)
{
    if (m_model)
        disconnect(m_model, nullptr, this, nullptr);
    m_model = model;
    if (m_model) {
        connect(m_model, &QAbstractItemModel::dataChanged, this,
                [this](const QModelIndex& from, const QModelIndex& to) { onDataChanged(from.row(), to.row()); });
        connect(m_model, &QAbstractItemModel::modelReset, this, [this] {
            m_shown.clear();
            m_shownOf.clear();
            m_current = m_model->gridRows() && m_model->gridColumns() ? QPoint(0, 0) : QPoint(-1, -1);
            relayout();
        });
    }
    m_shown.clear();
    m_shownOf.clear();
    m_current = m_model && m_model->gridRows() && m_model->gridColumns() ? QPoint(0, 0) : QPoint(-1, -1);
    relayout();
}

int RankMapView::shownRows() const
{
    return m_shown.empty() ? (m_model ? m_model->gridRows() : 0) : static_cast<int>(m_shown.size());
}

int RankMapView::shownOfGridRow(int gridRow) const
{
    if (m_shown.empty())
        return gridRow;
    return gridRow >= 0 && std::size_t(gridRow) < m_shownOf.size() ? m_shownOf[std::size_t(gridRow)] : -1;
}

void RankMapView::setRowFilter(std::vector<int> gridRows)
{
    const int rows = m_model ? m_model->gridRows() : 0;
    std::sort(gridRows.begin(), gridRows.end());
    gridRows.erase(std::unique(gridRows.begin(), gridRows.end()), gridRows.end());
    gridRows.erase(std::remove_if(gridRows.begin(), gridRows.end(), [rows](int r) { return r < 0 || r >= rows; }),
                   gridRows.end());
    m_shown = std::move(gridRows);
    m_shownOf.assign(m_shown.empty() ? 0 : std::size_t(rows), -1);
    for (std::size_t i = 0; i < m_shown.size(); ++i)
        m_shownOf[std::size_t(m_shown[i])] = static_cast<int>(i);
    if (!m_shown.empty() && m_current.y() >= 0 && shownOfGridRow(m_current.y()) < 0)
        m_current.setY(m_shown.front());
    verticalScrollBar()->setValue(0);
    updateScrollRanges(); // the names and fonts are as they were: only the rows shown changed
    if (m_current.y() >= 0)
        ensureVisible(m_current.y(), m_current.x());
}

bool RankMapView::setRankFilter(const QString& ranks)
{
    if (!m_model)
        return false;
    const QString text = ranks.trimmed();
    if (text.isEmpty()) {
        setRowFilter({});
        return true;
    }
    // Rank number -> grid row, from the rank folder names ("rank12" -> 12); one pass over the ranks.
    std::vector<std::pair<long long, int>> byNumber;
    const QStringList& names = m_model->rankNames();
    for (int row = 0; row < names.size(); ++row) {
        const QString& name = names[row];
        int digits = int(name.size());
        while (digits > 0 && name[digits - 1].isDigit())
            --digits;
        bool ok = false;
        const long long number = name.mid(digits).toLongLong(&ok);
        if (ok)
            byNumber.emplace_back(number, row);
    }
    std::sort(byNumber.begin(), byNumber.end());
    std::vector<int> rows;
    for (const QString& part : text.split(QLatin1Char(','), Qt::SkipEmptyParts)) {
        const QStringList ends = part.trimmed().split(QLatin1Char('-'));
        bool okFirst = false, okLast = false;
        if (ends.size() > 2)
            return false;
        const long long first = ends.front().trimmed().toLongLong(&okFirst);
        const long long last = ends.size() == 2 ? ends.back().trimmed().toLongLong(&okLast) : first;
        if (!okFirst || (ends.size() == 2 && !okLast) || first < 0 || last < first)
            return false;
        auto it = std::lower_bound(byNumber.begin(), byNumber.end(), std::pair<long long, int>(first, -1));
        for (; it != byNumber.end() && it->first <= last; ++it)
            rows.push_back(it->second);
    }
    if (rows.empty())
        return false; // no such rank: keep what is shown rather than an empty map
    setRowFilter(std::move(rows));
    return true;
}

void RankMapView::relayout()
{
    const QFontMetrics fm(font());
    // Wide enough for "▶ 99999" (an execution index of a large model) and its frame.
    m_cellWidth = fm.horizontalAdvance(QStringLiteral("\u25b6 99999")) + 10;
    m_cellHeight = fm.height() + 6;
    m_columnHeaderHeight = fm.height() + 6;
    int names = fm.horizontalAdvance(tr("rank \\ step"));
    if (m_model) {
        // Measured by shape, not name by name: "rank1234" and "rank5678" are one shape with every digit as the
        // widest digit, so 10,000 ranks cost a handful of measurements (each name measured took 80 ms, issue 37).
        QChar widest = QLatin1Char('0');
        for (char d = '1'; d <= '9'; ++d) {
            if (fm.horizontalAdvance(QLatin1Char(d)) > fm.horizontalAdvance(widest))
                widest = QLatin1Char(d);
        }
        QSet<QString> shapes;
        for (QString name : m_model->rankNames()) {
            for (QChar& c : name) {
                if (c.isDigit())
                    c = widest;
            }
            shapes.insert(name);
        }
        for (const QString& shape : shapes)
            names = std::max(names, fm.horizontalAdvance(shape));
        for (const std::int64_t step : m_model->steps())
            m_cellWidth = std::max(m_cellWidth, fm.horizontalAdvance(tr("step %1").arg(step)) + 10);
    }
    m_rowHeaderWidth = names + 12;
    updateScrollRanges();
}

void RankMapView::updateScrollRanges()
{
    const int rows = shownRows();
    const int columns = m_model ? m_model->gridColumns() : 0;
    const QSize area = viewport()->size() - QSize(m_rowHeaderWidth, m_columnHeaderHeight);
    verticalScrollBar()->setSingleStep(m_cellHeight);
    verticalScrollBar()->setPageStep(std::max(m_cellHeight, area.height()));
    verticalScrollBar()->setRange(0, std::max(0, rows * m_cellHeight - area.height()));
    horizontalScrollBar()->setSingleStep(m_cellWidth);
    horizontalScrollBar()->setPageStep(std::max(m_cellWidth, area.width()));
    horizontalScrollBar()->setRange(0, std::max(0, columns * m_cellWidth - area.width()));
    viewport()->update();
}

QRect RankMapView::cellRect(int gridRow, int gridColumn) const
{
    const int shown = shownOfGridRow(gridRow);
    if (shown < 0)
        return { -m_cellWidth - 100000, -m_cellHeight - 100000, m_cellWidth, m_cellHeight }; // filtered out
    return { m_rowHeaderWidth + gridColumn * m_cellWidth - horizontalScrollBar()->value(),
             m_columnHeaderHeight + shown * m_cellHeight - verticalScrollBar()->value(), m_cellWidth, m_cellHeight };
}

QPoint RankMapView::cellAt(const QPoint& pos) const
{
    if (!m_model || pos.x() < m_rowHeaderWidth || pos.y() < m_columnHeaderHeight)
        return { -1, -1 };
    const int column = (pos.x() - m_rowHeaderWidth + horizontalScrollBar()->value()) / m_cellWidth;
    const int row = (pos.y() - m_columnHeaderHeight + verticalScrollBar()->value()) / m_cellHeight;
    if (row >= shownRows() || column >= m_model->gridColumns())
        return { -1, -1 };
    return { column, gridRowOfShown(row) };
}

void RankMapView::setCurrentCell(int gridRow, int gridColumn)
{
    if (!m_model || gridRow < 0 || gridColumn < 0 || gridRow >= m_model->gridRows()
        || gridColumn >= m_model->gridColumns())
        return;
    if (shownOfGridRow(gridRow) < 0)
        setRowFilter({}); // a jump to a rank the filter hides shows every rank again
    const QPoint before = m_current;
    m_current = QPoint(gridColumn, gridRow);
    if (before.x() >= 0)
        viewport()->update(cellRect(before.y(), before.x()));
    ensureVisible(gridRow, gridColumn);
    viewport()->update(cellRect(gridRow, gridColumn));
}

void RankMapView::setCurrentPair(int pairIndex)
{
    if (!m_model || pairIndex < 0)
        return;
    setCurrentCell(m_model->gridRowOf(std::size_t(pairIndex)), m_model->gridColumnOf(std::size_t(pairIndex)));
}

void RankMapView::ensureVisible(int gridRow, int gridColumn)
{
    const int shown = shownOfGridRow(gridRow);
    if (shown < 0)
        return;
    const int top = shown * m_cellHeight;
    const int height = viewport()->height() - m_columnHeaderHeight;
    QScrollBar* v = verticalScrollBar();
    if (top < v->value())
        v->setValue(top);
    else if (top + m_cellHeight > v->value() + height)
        v->setValue(top + m_cellHeight - height);
    const int left = gridColumn * m_cellWidth;
    const int width = viewport()->width() - m_rowHeaderWidth;
    QScrollBar* h = horizontalScrollBar();
    if (left < h->value())
        h->setValue(left);
    else if (left + m_cellWidth > h->value() + width)
        h->setValue(left + m_cellWidth - width);
}

void RankMapView::onDataChanged(int firstRow, int lastRow)
{
    if (!m_model)
        return;
    if (lastRow - firstRow >= kCellUpdateLimit) {
        viewport()->update();
        return;
    }
    const QRect visible = viewport()->rect();
    for (int pair = firstRow; pair <= lastRow; ++pair) {
        const QRect r = cellRect(m_model->gridRowOf(std::size_t(pair)), m_model->gridColumnOf(std::size_t(pair)));
        if (r.intersects(visible))
            viewport()->update(r);
    }
}

QString RankMapView::cellText(int pairIndex) const
{
    if (!m_model || pairIndex < 0)
        return {};
    const auto pair = static_cast<std::size_t>(pairIndex);
    if (m_model->isRunMode())
        return m_model->runCellText(pair);
    switch (m_model->state(pair)) {
    case State::Pending: return QStringLiteral("\u00b7");
    case State::Running: return QStringLiteral("\u2026");
    case State::Failed: return QStringLiteral("\u00d7");
    case State::Done: break;
    }
    const session::PairSummary* s = m_model->summary(pair);
    QString text = s->firstFailure.key.empty() ? QStringLiteral("\u2713") : QString::number(s->firstFailure.executionIndex);
    if (pairIndex == m_model->originRow())
        text = QStringLiteral("\u25b6 ") + text;
    return text;
}

void RankMapView::paintEvent(QPaintEvent* event)
{
    QPainter p(viewport());
    const QPalette& pal = palette();
    const bool dark = statuspalette::isDark(pal);
    p.fillRect(event->rect(), pal.color(QPalette::Base));
    m_lastPainted = 0;
    if (!m_model || !m_model->gridRows()) {
        p.setPen(pal.color(QPalette::PlaceholderText));
        p.drawText(viewport()->rect(), Qt::AlignCenter, tr("Open a job with several steps or ranks to see the map."));
        return;
    }
    const int dx = horizontalScrollBar()->value();
    const int dy = verticalScrollBar()->value();
    const QRect cells = event->rect().intersected(
        QRect(m_rowHeaderWidth, m_columnHeaderHeight, viewport()->width(), viewport()->height()));
    // Only the rows and columns the damaged rectangle touches.
    const int c0 = std::max(0, (cells.left() - m_rowHeaderWidth + dx) / m_cellWidth);
    const int c1 = std::min(m_model->gridColumns() - 1, (cells.right() - m_rowHeaderWidth + dx) / m_cellWidth);
    const int r0 = std::max(0, (cells.top() - m_columnHeaderHeight + dy) / m_cellHeight);
    const int r1 = std::min(shownRows() - 1, (cells.bottom() - m_columnHeaderHeight + dy) / m_cellHeight);
    const QColor frame = pal.color(QPalette::Mid);
    const QColor ink = pal.color(QPalette::Text);
    const int origin = m_model->originRow();
    p.setClipRect(cells);
    for (int shown = r0; shown <= r1 && !cells.isEmpty(); ++shown) {
        const int r = gridRowOfShown(shown);
        for (int c = c0; c <= c1; ++c) {
            const QRect rect = cellRect(r, c).adjusted(1, 1, -1, -1);
            const int pair = m_model->pairAt(r, c);
            ++m_lastPainted;
            if (pair < 0) {
                p.fillRect(rect, pal.color(QPalette::AlternateBase));
                continue;
            }
            const State state = m_model->state(std::size_t(pair));
            const Status worst = m_model->worstStatus(std::size_t(pair));
            QColor fill = pal.color(QPalette::Base);
            QColor text = pal.color(QPalette::PlaceholderText);
            Qt::PenStyle border = Qt::SolidLine;
            Qt::BrushStyle hatch = Qt::NoBrush;
            switch (state) {
            case State::Pending: border = Qt::DotLine; break;
            case State::Running:
                fill = statuspalette::fill(Status::Pending, dark);
                text = statuspalette::text(Status::Pending, dark);
                hatch = Qt::BDiagPattern;
                break;
            case State::Failed:
                fill = statuspalette::fill(Status::NoData, dark);
                text = ink;
                hatch = Qt::DiagCrossPattern;
                break;
            case State::Done:
                fill = statuspalette::fill(worst, dark);
                text = statuspalette::text(worst, dark);
                break;
            }
            p.fillRect(rect, fill);
            if (hatch != Qt::NoBrush) {
                QColor h = text;
                h.setAlpha(70);
                p.fillRect(rect, QBrush(h, hatch));
            }
            const session::PairSummary* s = m_model->summary(std::size_t(pair));
            const bool salvaged = s && !s->salvaged.empty();
            if (salvaged)
                border = Qt::DashLine;
            p.setPen(QPen(state == State::Done && !salvaged ? statuspalette::outline(worst, dark) : frame, 1, border));
            p.drawRect(rect.adjusted(0, 0, -1, -1));
            if (pair == origin) {
                p.setPen(QPen(ink, 3));
                p.drawRect(rect.adjusted(1, 1, -2, -2));
            }
            if (salvaged) {
                // A notch in the top-left corner and a dashed frame: the pair was read from a damaged dump. Drawn
                // after the origin's heavy frame, inside it and edged in the fill colour, so the frame never
                // hides it (issue 28).
                const int inset = pair == origin ? 3 : 0;
                const int n = std::max(7, m_cellHeight / 2);
                const QPoint corner = rect.topLeft() + QPoint(inset, inset);
                QPainterPath notch;
                notch.moveTo(corner);
                notch.lineTo(corner + QPoint(n, 0));
                notch.lineTo(corner + QPoint(0, n));
                notch.closeSubpath();
                p.fillPath(notch, ink);
                if (pair == origin) {
                    p.setPen(QPen(fill, 1));
                    p.drawLine(corner + QPoint(n + 1, 0), corner + QPoint(0, n + 1));
                }
            }
            if (m_current == QPoint(c, r) && hasFocus()) {
                p.setPen(QPen(pal.color(QPalette::Highlight), 2));
                p.drawRect(rect.adjusted(3, 3, -4, -4));
            }
            QFont f = font();
            f.setBold(pair == origin);
            p.setFont(f);
            p.setPen(text);
            p.drawText(rect, Qt::AlignCenter, cellText(pair));
        }
    }
    p.setClipping(false);
    p.setFont(font());
    // Headers stay in place while the cells scroll under them.
    const QColor headerFill = pal.color(QPalette::Button);
    const QColor headerText = pal.color(QPalette::ButtonText);
    p.fillRect(QRect(0, 0, viewport()->width(), m_columnHeaderHeight), headerFill);
    p.fillRect(QRect(0, 0, m_rowHeaderWidth, viewport()->height()), headerFill);
    p.setPen(headerText);
    p.setClipRect(QRect(m_rowHeaderWidth, 0, viewport()->width(), m_columnHeaderHeight));
    for (int c = std::max(0, dx / m_cellWidth); c < m_model->gridColumns(); ++c) {
        const QRect r = cellRect(0, c);
        if (r.left() > viewport()->width())
            break;
        p.drawText(QRect(r.left(), 0, r.width(), m_columnHeaderHeight), Qt::AlignCenter,
                   tr("step %1").arg(m_model->steps()[std::size_t(c)]));
    }
    p.setClipRect(QRect(0, m_columnHeaderHeight, m_rowHeaderWidth, viewport()->height()));
    for (int shown = std::max(0, dy / m_cellHeight); shown < shownRows(); ++shown) {
        const int r = gridRowOfShown(shown);
        const QRect cell = cellRect(r, 0);
        if (cell.top() > viewport()->height())
            break;
        p.drawText(QRect(6, cell.top(), m_rowHeaderWidth - 10, m_cellHeight), Qt::AlignVCenter | Qt::AlignRight,
                   m_model->rankNames()[r]);
    }
    p.setClipping(false);
    p.drawText(QRect(4, 0, m_rowHeaderWidth - 4, m_columnHeaderHeight), Qt::AlignVCenter | Qt::AlignLeft,
               tr("rank \\ step"));
}

void RankMapView::resizeEvent(QResizeEvent* event)
{
    QAbstractScrollArea::resizeEvent(event);
    updateScrollRanges();
}

bool RankMapView::viewportEvent(QEvent* event)
{
    if (event->type() == QEvent::ToolTip && m_model) {
        auto* help = static_cast<QHelpEvent*>(event);
        const QPoint cell = cellAt(help->pos());
        const int pair = m_model->pairAt(cell.y(), cell.x());
        if (pair < 0) {
            QToolTip::hideText();
            event->ignore();
            return true;
        }
        // The cell as the tip's rectangle: moving within it keeps the tip, leaving it hides it. QToolTip
        // keeps the tip on the screen; the text wraps (wrappingToolTip), so it never runs off the side.
        QToolTip::showText(help->globalPos(), m_model->data(m_model->index(pair, 0), Qt::ToolTipRole).toString(),
                           viewport(), cellRect(cell.y(), cell.x()));
        return true;
    }
    return QAbstractScrollArea::viewportEvent(event);
}

void RankMapView::mousePressEvent(QMouseEvent* event)
{
    m_pressed = event->button() == Qt::LeftButton ? cellAt(event->position().toPoint()) : QPoint(-1, -1);
    if (m_pressed.x() >= 0)
        setCurrentCell(m_pressed.y(), m_pressed.x());
    QAbstractScrollArea::mousePressEvent(event);
}

void RankMapView::mouseReleaseEvent(QMouseEvent* event)
{
    const QPoint cell = cellAt(event->position().toPoint());
    if (event->button() == Qt::LeftButton && cell.x() >= 0 && cell == m_pressed) {
        if (const int pair = m_model->pairAt(cell.y(), cell.x()); pair >= 0)
            emit pairActivated(pair);
    }
    m_pressed = QPoint(-1, -1);
    QAbstractScrollArea::mouseReleaseEvent(event);
}

void RankMapView::keyPressEvent(QKeyEvent* event)
{
    if (!m_model || m_current.x() < 0) {
        QAbstractScrollArea::keyPressEvent(event);
        return;
    }
    const int page = std::max(1, (viewport()->height() - m_columnHeaderHeight) / m_cellHeight - 1);
    int row = std::max(0, shownOfGridRow(m_current.y())); // moves go over the rows shown
    int column = m_current.x();
    switch (event->key()) {
    case Qt::Key_Up: --row; break;
    case Qt::Key_Down: ++row; break;
    case Qt::Key_Left: --column; break;
    case Qt::Key_Right: ++column; break;
    case Qt::Key_PageUp: row -= page; break;
    case Qt::Key_PageDown: row += page; break;
    case Qt::Key_Home: row = 0; break;
    case Qt::Key_End: row = shownRows() - 1; break;
    case Qt::Key_Return:
    case Qt::Key_Enter:
        if (const int pair = m_model->pairAt(gridRowOfShown(row), column); pair >= 0)
            emit pairActivated(pair);
        return;
    default: QAbstractScrollArea::keyPressEvent(event); return;
    }
    if (shownRows() > 0)
        setCurrentCell(gridRowOfShown(std::clamp(row, 0, shownRows() - 1)),
                       std::clamp(column, 0, m_model->gridColumns() - 1));
}

void RankMapView::changeEvent(QEvent* event)
{
    if (event->type() == QEvent::FontChange || event->type() == QEvent::LanguageChange)
        relayout();
    QAbstractScrollArea::changeEvent(event);
}

// ----- the tab ---------------------------------------------------------------------------------

RankOverviewPanel::RankOverviewPanel(RankOverviewModel* model, QWidget* parent)
    : QWidget(parent)
    , m_model(model)
{
    setObjectName("rankOverviewPanel");
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    auto* header = new QHBoxLayout;
    m_origin = new QLabel(this);
    m_origin->setObjectName("rankOrigin");
    m_origin->setWordWrap(true);
    m_origin->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_toOrigin = new QToolButton(this);
    m_toOrigin->setObjectName("goToOrigin");
    header->addWidget(m_origin, 1);
    header->addWidget(m_toOrigin, 0, Qt::AlignTop);
    m_legend = new QLabel(this);
    m_legend->setWordWrap(true);
    // Filter by group (issue 37): a rank list, e.g. one communication group of a 10,000-rank job.
    m_filter = new QLineEdit(this);
    m_filter->setObjectName("rankFilter");
    m_filter->setClearButtonEnabled(true);
    m_map = new RankMapView(this);
    m_map->setModel(model);
    m_table = new QTableView(this);
    m_table->setObjectName("rankOverview");
    m_table->setModel(model);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->verticalHeader()->hide();
    m_table->verticalHeader()->setDefaultSectionSize(m_table->fontMetrics().height() + 6);
    // The node key is the column that matters and the longest: it takes the room left, is elided in its
    // middle (the op name and its .forward/.backward stay), and the wrapped tooltip has it whole.
    m_table->setTextElideMode(Qt::ElideMiddle);
    m_table->setWordWrap(false);
    QHeaderView* h = m_table->horizontalHeader();
    h->setSectionResizeMode(QHeaderView::Interactive);
    h->setStretchLastSection(true);
    h->setMinimumSectionSize(40);
    auto* splitter = new QSplitter(Qt::Vertical, this);
    splitter->addWidget(m_map);
    splitter->addWidget(m_table);
    splitter->setStretchFactor(0, 3);
    splitter->setStretchFactor(1, 2);
    layout->addLayout(header);
    layout->addWidget(m_legend);
    layout->addWidget(m_filter);
    layout->addWidget(splitter, 1);
    connect(m_map, &RankMapView::pairActivated, this, &RankOverviewPanel::pairActivated);
    connect(m_table, &QTableView::activated, this, [this](const QModelIndex& index) {
        emit pairActivated(index.data(RankOverviewModel::PairIndexRole).toInt());
    });
    connect(m_toOrigin, &QToolButton::clicked, this, &RankOverviewPanel::originRequested);
    connect(m_filter, &QLineEdit::textEdited, this, [this](const QString& text) {
        // A list being typed ("0-") is not yet a list: the map keeps what it shows, the field says so.
        const bool ok = m_map->setRankFilter(text);
        m_filter->setToolTip(ok ? QString() : tr("Not a list of ranks the job has (yet): the map is unchanged."));
    });
    connect(model, &QAbstractItemModel::dataChanged, this, &RankOverviewPanel::updateOrigin);
    connect(model, &QAbstractItemModel::modelReset, this, &RankOverviewPanel::updateOrigin);
    retranslate();
}

void RankOverviewPanel::updateOrigin()
{
    m_origin->setText(m_model->originText());
    updateLegend();
    // The evidence core found (as the CLI's "via"): the communication nodes that carried the divergence.
    QStringList chain;
    for (const job::CommLink& link : m_model->origin().chain)
        chain << tr("%1: %2 (#%3), %4")
                     .arg(QString::fromStdString(link.rankLabel.empty() ? std::string("rank") : link.rankLabel),
                          QString::fromStdString(link.key))
                     .arg(link.executionIndex)
                     .arg(link.role == "sent" ? tr("sent") : link.role == "received" ? tr("received")
                                                                                     : QString::fromStdString(link.role));
    if (!chain.isEmpty())
        chain.prepend(tr("Carried on by communication:"));
    m_origin->setToolTip(chain.isEmpty() ? QString() : wrappingToolTip(chain));
    m_toOrigin->setEnabled(m_model->originRow() >= 0);
}

void RankOverviewPanel::changeEvent(QEvent* event)
{
    if ((event->type() == QEvent::FontChange || event->type() == QEvent::StyleChange) && m_table)
        retranslate();
    QWidget::changeEvent(event);
}

void RankOverviewPanel::retranslate()
{
    m_toOrigin->setText(tr("Go to origin"));
    m_filter->setPlaceholderText(tr("Show ranks, e.g. a communication group: 0-7, 1234"));
    updateLegend();
    QHeaderView* h = m_table->horizontalHeader();
    // The model's titles are made when asked: the header asks again (in the language in force).
    emit m_model->headerDataChanged(Qt::Horizontal, 0, RankOverviewModel::ColumnCount - 1);
    const QFontMetrics fm(m_table->font());
    // Titles are measured in the header's own font (often bold) with room for the style's margins and the sort
    // arrow: "Exec. index" was cut to "Exec. in…" (issue 28).
    const QFontMetrics titleMetrics(h->font());
    const int titleMargin = 2 * h->style()->pixelMetric(QStyle::PM_HeaderMargin, nullptr, h)
        + h->style()->pixelMetric(QStyle::PM_HeaderMarkSize, nullptr, h) + 12;
    // The key gets room for a typical "Module.layers.0.mlp.Linear.forward.0" whatever the tab's width (a
    // stretched column shrank to nothing in the narrow tab); the counts scroll in from the right.
    h->resizeSection(RankOverviewModel::FirstFailureColumn, fm.horizontalAdvance(QString(40, QLatin1Char('m'))) * 3 / 4);
    for (int c = 0; c < RankOverviewModel::ColumnCount; ++c) {
        if (c == RankOverviewModel::FirstFailureColumn)
            continue;
        const QString title = m_model->headerData(c, Qt::Horizontal).toString();
        const int content = c == RankOverviewModel::RanksColumn   ? fm.horizontalAdvance(QStringLiteral("rank1023 \u2194 rank1023"))
                          : c == RankOverviewModel::StateColumn ? fm.horizontalAdvance(RankOverviewModel::tr("done (salvaged)"))
                                                                : fm.horizontalAdvance(QStringLiteral("999999"));
        h->resizeSection(c, std::max(titleMetrics.horizontalAdvance(title) + titleMargin, content + 16));
    }
    updateOrigin();
}

void RankOverviewPanel::updateLegend()
{
    // One run compared nothing: no execution index of a failure, no verdict counts.
    for (int c = RankOverviewModel::ExecutionIndexColumn; c <= RankOverviewModel::PassColumn; ++c)
        m_table->setColumnHidden(c, m_model->isRunMode());
    if (m_model->isRunMode()) {
        m_legend->setText(tr("One run: red, where its first NaN/Inf is (\u25b6 heavy frame: the first NaN/Inf) or "
                             "reached; \u2013 no NaN/Inf origin; \u00b7 a step after the first NaN/Inf's (not "
                             "searched)."));
        return;
    }
    m_legend->setText(tr("Colour: worst verdict of the pair. Number: execution index of its first failure "
                         "(\u2713 none). \u25b6 heavy frame: the job's origin. \u00b7 pending, \u2026 running, "
                         "\u00d7 failed to compare, corner notch and dashed frame: salvaged from a damaged dump."));
}

} // namespace probescope::ui
