// SPDX-License-Identifier: Apache-2.0
#include "ui/models/treerowsmodel.h"

#include <algorithm>
#include <climits>

namespace probescope::ui {

using tree::NodeId;

TreeRowsModel::TreeRowsModel(QObject* parent)
    : QAbstractTableModel(parent)
{
}

TreeRowsModel::~TreeRowsModel() = default;

void TreeRowsModel::setSourceModel(CompareTreeModel* model)
{
    if (m_model)
        disconnect(m_model, nullptr, this, nullptr);
    beginResetModel();
    m_model = model;
    if (m_model) {
        connect(m_model, &QAbstractItemModel::modelAboutToBeReset, this, [this] { beginResetModel(); });
        connect(m_model, &QAbstractItemModel::modelReset, this, [this] {
            onSourceReset();
            endResetModel();
        });
        connect(m_model, &QAbstractItemModel::dataChanged, this, &TreeRowsModel::onSourceDataChanged);
        connect(m_model, &CompareTreeModel::ownStatusesChanged, this, &TreeRowsModel::onOwnStatusesChanged);
        connect(m_model, &CompareTreeModel::statusesChanged, this, &TreeRowsModel::onStatusesChanged);
        connect(m_model, &CompareTreeModel::appearanceChanged, this, &TreeRowsModel::onAppearanceChanged);
        connect(m_model, &QObject::destroyed, this, [this] {
            beginResetModel();
            m_model = nullptr;
            onSourceReset();
            endResetModel();
        });
    }
    onSourceReset();
    endResetModel();
}

void TreeRowsModel::onSourceReset()
{
    // A new tree: collapsed (as a QTreeView shows a reset model), the filters kept.
    const tree::ConstructTree* t = m_model ? m_model->tree() : nullptr;
    m_search = {};
    if (t) {
        std::vector<NodeId> preorder(m_model->displayOrder().begin(), m_model->displayOrder().end());
        m_search = std::async(std::launch::async, [tree = m_model->skeleton()->tree, preorder = std::move(preorder)] {
                       return std::make_shared<const NodeSearch>(tree, preorder);
                   }).share();
    }
    const auto order = t ? m_model->displayOrder() : std::span<const NodeId> {};
    const std::size_t n = order.size();
    m_end.assign(n, 1); // subtree sizes first
    m_parent.assign(n, kNone);
    m_traits.assign(n, 0);
    m_expanded.assign(n, 0);
    // Children come after their parent in display order: backwards, every subtree is complete before
    // it is added to its parent.
    for (std::size_t pos = n; pos-- > 0;) {
        const tree::TreeNode& node = t->node(order[pos]);
        dump::Direction d = node.name.direction;
        // Parameter gradients carry no direction in their key but are computed in backward.
        if (d == dump::Direction::None && node.name.kind == dump::EntryKind::ParametersGrad)
            d = dump::Direction::Backward;
        std::uint8_t traits = d == dump::Direction::Forward ? Forward : d == dump::Direction::Backward ? Backward : 0;
        if (node.name.isModuleLike())
            traits |= ModuleLike;
        if (node.name.kind == dump::EntryKind::Api)
            traits |= Api;
        m_traits[pos] = traits;
        if (node.parent.valid()) {
            const std::uint32_t parent = m_model->displayPosition(node.parent);
            m_parent[pos] = parent;
            m_end[parent] += m_end[pos];
        }
    }
    for (std::size_t pos = 0; pos < n; ++pos)
        m_end[pos] += static_cast<std::uint32_t>(pos);
    computeShown();
    m_visibilityChanged = false;
    m_recompute = false;
    m_rows.clear();
    for (std::uint32_t pos = 0; pos < n; pos = m_end[pos]) {
        if (shown(pos))
            m_rows.push_back(pos);
    }
}

const NodeSearch* TreeRowsModel::nodeSearch() const
{
    return m_search.valid() ? m_search.get().get() : nullptr;
}

// ---- filters

void TreeRowsModel::setStatusMask(std::uint32_t mask)
{
    mask &= kAllStatuses;
    if (mask == m_statusMask)
        return;
    m_statusMask = mask;
    refilter();
}

void TreeRowsModel::setStatusVisible(session::Status status, bool visible)
{
    setStatusMask(visible ? (m_statusMask | statusBit(status)) : (m_statusMask & ~statusBit(status)));
}

void TreeRowsModel::setDirectionFilter(DirectionFilter direction)
{
    if (direction == m_direction)
        return;
    m_direction = direction;
    refilter();
}

void TreeRowsModel::setKindFilter(KindFilter kind)
{
    if (kind == m_kind)
        return;
    m_kind = kind;
    refilter();
}

void TreeRowsModel::setNameFilter(const QString& text, bool regex, Qt::CaseSensitivity sensitivity)
{
    if (text == m_nameText && regex == m_nameRegex && sensitivity == m_nameCase)
        return;
    m_nameText = text;
    m_nameRegex = regex;
    m_nameCase = sensitivity;
    refilter();
}

void TreeRowsModel::setFilters(std::uint32_t statusMask, DirectionFilter direction, KindFilter kind)
{
    statusMask &= kAllStatuses;
    if (statusMask == m_statusMask && direction == m_direction && kind == m_kind)
        return;
    m_statusMask = statusMask;
    m_direction = direction;
    m_kind = kind;
    refilter();
}

void TreeRowsModel::clearFilters()
{
    if (!isFiltering())
        return;
    m_statusMask = kAllStatuses;
    m_direction = DirectionFilter::All;
    m_kind = KindFilter::All;
    m_nameText.clear();
    m_nameRegex = false;
    refilter();
}

bool TreeRowsModel::isFiltering() const
{
    return m_statusMask != kAllStatuses || m_direction != DirectionFilter::All || m_kind != KindFilter::All
        || !m_nameText.isEmpty();
}

std::uint32_t TreeRowsModel::positionOf(NodeId node) const
{
    if (!m_model || !node.valid() || node.value >= m_end.size())
        return kNone;
    return m_model->displayPosition(node);
}

bool TreeRowsModel::acceptsNode(NodeId node) const
{
    const std::uint32_t pos = positionOf(node);
    return pos == kNone || acceptsPosition(pos);
}

bool TreeRowsModel::isShown(NodeId node) const
{
    const std::uint32_t pos = positionOf(node);
    return pos != kNone && shown(pos);
}

bool TreeRowsModel::acceptsPosition(std::uint32_t pos) const
{
    if (!(m_statusMask & statusBit(m_model->ownStatus(m_model->displayOrder()[pos]))))
        return false;
    const std::uint8_t traits = m_traits[pos];
    if (m_direction == DirectionFilter::Forward && !(traits & Forward))
        return false;
    if (m_direction == DirectionFilter::Backward && !(traits & Backward))
        return false;
    if (m_kind == KindFilter::Module && !(traits & ModuleLike))
        return false;
    if (m_kind == KindFilter::Api && !(traits & Api))
        return false;
    return m_nameText.isEmpty() || m_nameHit[pos];
}

void TreeRowsModel::computeShown()
{
    m_filtering = isFiltering();
    m_nameError.clear();
    const std::size_t n = m_end.size();
    if (!m_filtering || n == 0) {
        m_nameHit = {};
        m_self = {};
        m_shownChildren = {};
        return;
    }
    m_nameHit.clear();
    if (!m_nameText.isEmpty()) {
        // One scan of the lowered keys (NodeSearch) instead of a match per node.
        const NodeSearch::Hits hits =
            nodeSearch()->find(m_nameText, NodeSearch::Options { m_nameRegex, m_nameCase == Qt::CaseSensitive });
        m_nameError = hits.error;
        m_nameHit.assign(n, 0);
        for (const NodeId id : hits.nodes)
            m_nameHit[m_model->displayPosition(id)] = 1;
    }
    m_self.resize(n);
    for (std::uint32_t pos = 0; pos < n; ++pos)
        m_self[pos] = acceptsPosition(pos) ? 1 : 0;
    m_shownChildren.assign(n, 0);
    for (std::size_t pos = n; pos-- > 0;) {
        if (m_parent[pos] != kNone && shown(static_cast<std::uint32_t>(pos)))
            ++m_shownChildren[m_parent[pos]];
    }
}

void TreeRowsModel::refilter()
{
    m_recompute = false;
    m_visibilityChanged = false;
    computeShown();
    relayout();
}

void TreeRowsModel::onOwnStatusesChanged(const std::vector<std::uint32_t>& nodes)
{
    if (!m_filtering || m_statusMask == kAllStatuses)
        return; // nothing that depends on statuses
    if (nodes.size() > m_end.size() / 8 || nodes.size() > m_model->bulkThreshold()) {
        m_recompute = true; // most of the tree: once, when the change has been signalled
        return;
    }
    for (const std::uint32_t node : nodes) {
        const std::uint32_t pos = positionOf(NodeId { node });
        if (pos == kNone)
            continue;
        bool before = shown(pos);
        m_self[pos] = acceptsPosition(pos) ? 1 : 0;
        bool now = shown(pos);
        // Up the ancestors while their visibility follows.
        for (std::uint32_t p = m_parent[pos]; before != now && p != kNone; p = m_parent[p]) {
            m_visibilityChanged = true;
            before = shown(p);
            m_shownChildren[p] += now ? 1u : std::uint32_t(-1);
            now = shown(p);
        }
        m_visibilityChanged = m_visibilityChanged || before != now;
    }
}

void TreeRowsModel::onStatusesChanged()
{
    if (m_recompute) {
        refilter();
        return;
    }
    if (m_visibilityChanged) {
        m_visibilityChanged = false;
        relayout();
    }
}

// ---- expansion

bool TreeRowsModel::hasShownChildren(std::uint32_t pos) const
{
    return m_filtering ? m_shownChildren[pos] != 0 : m_end[pos] > pos + 1;
}

bool TreeRowsModel::isExpanded(NodeId node) const
{
    const std::uint32_t pos = positionOf(node);
    return pos != kNone && m_expanded[pos];
}

void TreeRowsModel::appendRowsBelow(std::uint32_t pos, std::vector<std::uint32_t>& out) const
{
    for (std::uint32_t p = pos + 1; p < m_end[pos];) {
        if (!shown(p)) {
            p = m_end[p];
            continue;
        }
        out.push_back(p);
        p = m_expanded[p] ? p + 1 : m_end[p];
    }
}

void TreeRowsModel::setExpanded(NodeId node, bool expanded)
{
    const std::uint32_t pos = positionOf(node);
    if (pos == kNone || bool(m_expanded[pos]) == expanded || m_end[pos] == pos + 1)
        return;
    m_expanded[pos] = expanded ? 1 : 0;
    const int row = rowOf(pos);
    if (row < 0)
        return;
    const auto after = m_rows.begin() + row + 1;
    if (expanded) {
        std::vector<std::uint32_t> below;
        appendRowsBelow(pos, below);
        if (!below.empty()) {
            beginInsertRows({}, row + 1, row + int(below.size()));
            m_rows.insert(after, below.begin(), below.end());
            endInsertRows();
        }
    } else {
        const auto last = std::lower_bound(after, m_rows.end(), m_end[pos]);
        if (last != after) {
            beginRemoveRows({}, row + 1, row + int(last - after));
            m_rows.erase(after, last);
            endRemoveRows();
        }
    }
    emitRowChanged(row);
}

void TreeRowsModel::setExpanded(std::span<const NodeId> nodes, bool expanded)
{
    for (const NodeId node : nodes) {
        if (const std::uint32_t pos = positionOf(node); pos != kNone && m_end[pos] > pos + 1)
            m_expanded[pos] = expanded ? 1 : 0;
    }
    relayout();
}

void TreeRowsModel::expandSubtree(NodeId node)
{
    const std::uint32_t pos = positionOf(node);
    if (pos == kNone)
        return;
    for (std::uint32_t p = pos; p < m_end[pos]; ++p)
        m_expanded[p] = m_end[p] > p + 1 ? 1 : 0;
    relayout();
}

void TreeRowsModel::expandAll()
{
    for (std::uint32_t p = 0; p < m_end.size(); ++p)
        m_expanded[p] = m_end[p] > p + 1 ? 1 : 0;
    relayout();
}

void TreeRowsModel::collapseAll()
{
    std::fill(m_expanded.begin(), m_expanded.end(), std::uint8_t(0));
    relayout();
}

QModelIndex TreeRowsModel::reveal(NodeId node, int column)
{
    const std::uint32_t pos = positionOf(node);
    if (pos == kNone)
        return {};
    bool changed = false;
    for (std::uint32_t p = m_parent[pos]; p != kNone; p = m_parent[p]) {
        changed = changed || !m_expanded[p];
        m_expanded[p] = 1;
    }
    if (changed)
        relayout();
    return mapFromNode(node, column);
}

void TreeRowsModel::relayout()
{
    emit layoutAboutToBeChanged();
    // Persistent indexes (a view's current row, its selection) follow their node.
    const QModelIndexList before = persistentIndexList();
    std::vector<std::uint32_t> positions;
    positions.reserve(std::size_t(before.size()));
    for (const QModelIndex& i : before) {
        const bool valid = i.row() >= 0 && std::size_t(i.row()) < m_rows.size();
        positions.push_back(valid ? m_rows[std::size_t(i.row())] : kNone);
    }

    std::vector<std::uint32_t> rows;
    rows.reserve(std::max(m_rows.size(), std::size_t(1024)));
    for (std::uint32_t pos = 0; pos < m_end.size();) {
        if (!shown(pos)) {
            pos = m_end[pos];
            continue;
        }
        rows.push_back(pos);
        pos = m_expanded[pos] ? pos + 1 : m_end[pos];
    }
    m_rows = std::move(rows);

    QModelIndexList after;
    after.reserve(before.size());
    for (qsizetype k = 0; k < before.size(); ++k) {
        const int row = positions[std::size_t(k)] == kNone ? -1 : rowOf(positions[std::size_t(k)]);
        after.push_back(row < 0 ? QModelIndex() : index(row, before[k].column()));
    }
    changePersistentIndexList(before, after);
    emit layoutChanged();
}

// ---- rows and nodes

int TreeRowsModel::rowOf(std::uint32_t pos) const
{
    const auto it = std::lower_bound(m_rows.begin(), m_rows.end(), pos);
    return it != m_rows.end() && *it == pos ? int(it - m_rows.begin()) : -1;
}

QModelIndex TreeRowsModel::mapFromNode(NodeId node, int column) const
{
    const std::uint32_t pos = positionOf(node);
    const int row = pos == kNone ? -1 : rowOf(pos);
    return row < 0 ? QModelIndex() : index(row, column);
}

NodeId TreeRowsModel::nodeAtRow(int row) const
{
    if (row < 0 || std::size_t(row) >= m_rows.size())
        return {};
    return m_model->displayOrder()[m_rows[std::size_t(row)]];
}

NodeId TreeRowsModel::nodeAt(const QModelIndex& index) const
{
    if (!index.isValid() || index.model() != this)
        return {};
    return nodeAtRow(index.row());
}

QModelIndex TreeRowsModel::mapToSource(const QModelIndex& index) const
{
    const NodeId node = nodeAt(index);
    return node.valid() ? m_model->indexOf(node, index.column()) : QModelIndex();
}

QModelIndex TreeRowsModel::mapFromSource(const QModelIndex& source) const
{
    if (!m_model || source.model() != m_model)
        return {};
    return mapFromNode(m_model->nodeAt(source), source.column());
}

int TreeRowsModel::parentRow(int row) const
{
    if (row < 0 || std::size_t(row) >= m_rows.size())
        return -1;
    const std::uint32_t parent = m_parent[m_rows[std::size_t(row)]];
    return parent == kNone ? -1 : rowOf(parent);
}

void TreeRowsModel::emitRowChanged(int row)
{
    emit dataChanged(index(row, 0), index(row, columnCount() - 1), { ExpandedRole });
}

void TreeRowsModel::onSourceDataChanged(const QModelIndex& topLeft, const QModelIndex& bottomRight,
                                        const QList<int>& roles)
{
    // The source signals runs of siblings; their rows need not be adjacent here (expanded subtrees lie
    // between), so the span from the first to the last is signalled: views repaint a rectangle anyway.
    if (m_rows.empty() || !topLeft.isValid())
        return;
    const QModelIndex parent = topLeft.parent();
    int first = INT_MAX;
    int last = -1;
    for (int r = topLeft.row(); r <= bottomRight.row(); ++r) {
        const int row = rowOf(positionOf(m_model->nodeAt(m_model->index(r, 0, parent))));
        if (row >= 0) {
            first = std::min(first, row);
            last = std::max(last, row);
        }
    }
    if (last >= 0)
        emit dataChanged(index(first, topLeft.column()), index(last, bottomRight.column()), roles);
}

void TreeRowsModel::onAppearanceChanged()
{
    // One range over every row: a view repaints its viewport for a range, whatever its size.
    if (!m_rows.empty())
        emit dataChanged(index(0, 0), index(rowCount() - 1, columnCount() - 1));
}

int TreeRowsModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : int(m_rows.size());
}

int TreeRowsModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() || !m_model ? 0 : m_model->columnCount();
}

QVariant TreeRowsModel::data(const QModelIndex& index, int role) const
{
    if (!index.isValid() || index.model() != this || std::size_t(index.row()) >= m_rows.size())
        return {};
    const std::uint32_t pos = m_rows[std::size_t(index.row())];
    const NodeId node = m_model->displayOrder()[pos];
    switch (role) {
    case DepthRole: return int(m_model->tree()->node(node).depth);
    case HasChildrenRole: return hasShownChildren(pos);
    case ExpandedRole: return bool(m_expanded[pos]);
    default: return m_model->data(m_model->indexOf(node, index.column()), role);
    }
}

QVariant TreeRowsModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (m_model && orientation == Qt::Horizontal)
        return m_model->headerData(section, orientation, role);
    return QAbstractTableModel::headerData(section, orientation, role);
}

Qt::ItemFlags TreeRowsModel::flags(const QModelIndex& index) const
{
    if (!index.isValid() || std::size_t(index.row()) >= m_rows.size())
        return Qt::NoItemFlags;
    return Qt::ItemIsEnabled | Qt::ItemIsSelectable | Qt::ItemNeverHasChildren;
}

QHash<int, QByteArray> TreeRowsModel::roleNames() const
{
    QHash<int, QByteArray> names = m_model ? m_model->roleNames() : QAbstractTableModel::roleNames();
    names.insert(DepthRole, "depth");
    names.insert(HasChildrenRole, "hasChildren");
    names.insert(ExpandedRole, "expanded");
    return names;
}

} // namespace probescope::ui
