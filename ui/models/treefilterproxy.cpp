// SPDX-License-Identifier: Apache-2.0
#include "ui/models/treefilterproxy.h"

#include "ui/models/comparetreemodel.h"

#include <span>

namespace probescope::ui {

using tree::NodeId;

TreeFilterProxy::TreeFilterProxy(QObject* parent)
    : QSortFilterProxyModel(parent)
{
    setSortRole(CompareTreeModel::SortRole);
}

void TreeFilterProxy::setSourceModel(QAbstractItemModel* model)
{
    if (m_model)
        disconnect(m_model, nullptr, this, nullptr);
    m_model = qobject_cast<CompareTreeModel*>(model);
    m_stateValid = false;
    if (m_model) {
        // Connected before the base class connects its own slots, so these run first.
        connect(m_model, &QAbstractItemModel::modelAboutToBeReset, this, [this] { m_stateValid = false; });
        connect(m_model, &CompareTreeModel::ownStatusesChanged, this, &TreeFilterProxy::onOwnStatusesChanged);
        connect(m_model, &CompareTreeModel::statusesChanged, this, &TreeFilterProxy::onStatusesChanged);
    }
    QSortFilterProxyModel::setSourceModel(model);
}

void TreeFilterProxy::ensureState() const
{
    if (m_stateValid)
        return;
    const std::size_t n = m_model && m_model->tree() ? m_model->nodeCount() : 0;
    m_self.assign(n, 0);
    m_shownChildren.assign(n, 0);
    for (std::uint32_t i = 0; i < n; ++i)
        m_self[i] = acceptsNode(NodeId { i }) ? 1 : 0;
    // Children before parents: the display order backwards.
    const auto order = m_model ? m_model->displayOrder() : std::span<const NodeId> {};
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
        const NodeId parent = m_model->tree()->node(*it).parent;
        if (parent.valid() && shown(it->value))
            ++m_shownChildren[parent.value];
    }
    m_stateValid = true;
}

void TreeFilterProxy::onOwnStatusesChanged(const std::vector<std::uint32_t>& nodes)
{
    if (!m_stateValid || m_statusMask == kAllStatuses)
        return; // nothing cached, or nothing that depends on statuses
    const tree::ConstructTree& t = *m_model->tree();
    if (nodes.size() > m_self.size() / 8 || nodes.size() > m_model->bulkThreshold()) {
        // Most of the tree: recompute, and re-filter everything once the change is signalled (a bulk
        // change signals only the top-level rows).
        m_stateValid = false;
        ensureState();
        m_relayout = true;
        return;
    }
    std::vector<std::uint8_t> touched;
    for (const std::uint32_t node : nodes) {
        if (node >= m_self.size())
            continue;
        const bool before = shown(node);
        m_self[node] = acceptsNode(NodeId { node }) ? 1 : 0;
        bool change = before != shown(node);
        bool nowShown = shown(node);
        for (NodeId p = t.node(NodeId { node }).parent; change && p.valid(); p = t.node(p).parent) {
            const bool parentBefore = shown(p.value);
            m_shownChildren[p.value] += nowShown ? 1u : std::uint32_t(-1);
            nowShown = shown(p.value);
            change = parentBefore != nowShown;
            // An ancestor's own status did not change, so the model may not signal its row.
            m_refilterRows = m_refilterRows || change;
        }
    }
}

void TreeFilterProxy::onStatusesChanged()
{
    if (m_relayout) {
        m_relayout = false;
        m_refilterRows = false;
        invalidate(); // one layout change: no per-row removals (see refilter())
        return;
    }
    if (!m_refilterRows)
        return;
    m_refilterRows = false;
    invalidateRowsFilter();
}

void TreeFilterProxy::setStatusMask(std::uint32_t mask)
{
    mask &= kAllStatuses;
    if (mask == m_statusMask)
        return;
    m_statusMask = mask;
    refilter();
}

void TreeFilterProxy::setStatusVisible(session::Status status, bool visible)
{
    setStatusMask(visible ? (m_statusMask | statusBit(status)) : (m_statusMask & ~statusBit(status)));
}

void TreeFilterProxy::setDirectionFilter(DirectionFilter direction)
{
    if (direction == m_direction)
        return;
    m_direction = direction;
    refilter();
}

void TreeFilterProxy::setKindFilter(KindFilter kind)
{
    if (kind == m_kind)
        return;
    m_kind = kind;
    refilter();
}

void TreeFilterProxy::setNameFilter(const QString& text, bool regex, Qt::CaseSensitivity sensitivity)
{
    if (text == m_nameText && regex == m_nameRegex && sensitivity == m_nameCase)
        return;
    m_nameText = text;
    m_nameRegex = regex;
    m_nameCase = sensitivity;
    m_name = NameMatcher(text, regex, sensitivity);
    refilter();
}

void TreeFilterProxy::clearFilters()
{
    m_statusMask = kAllStatuses;
    m_direction = DirectionFilter::All;
    m_kind = KindFilter::All;
    m_nameText.clear();
    m_nameRegex = false;
    m_name = NameMatcher();
    refilter();
}

bool TreeFilterProxy::isFiltering() const
{
    return m_statusMask != kAllStatuses || m_direction != DirectionFilter::All || m_kind != KindFilter::All
        || !m_nameText.isEmpty();
}

void TreeFilterProxy::refilter()
{
    m_stateValid = false;
    m_relayout = false;
    m_refilterRows = false;
    // One layout change instead of invalidateFilter()'s row removals and insertions: each removal walks
    // every persistent index, and a tree view keeps one per expanded row (minutes at 200k nodes).
    invalidate();
}

bool TreeFilterProxy::acceptsNode(NodeId node) const
{
    if (!m_model || !m_model->tree() || !node.valid() || node.value >= m_model->nodeCount())
        return true;
    if (!(m_statusMask & statusBit(m_model->ownStatus(node))))
        return false;
    const tree::TreeNode& t = m_model->tree()->node(node);
    if (m_direction != DirectionFilter::All) {
        dump::Direction d = t.name.direction;
        // Parameter gradients carry no direction in their key but are computed in backward.
        if (d == dump::Direction::None && t.name.kind == dump::EntryKind::ParametersGrad)
            d = dump::Direction::Backward;
        if (d != (m_direction == DirectionFilter::Forward ? dump::Direction::Forward : dump::Direction::Backward))
            return false;
    }
    if (m_kind == KindFilter::Module && !t.name.isModuleLike())
        return false;
    if (m_kind == KindFilter::Api && t.name.kind != dump::EntryKind::Api)
        return false;
    return m_name.matches(t.key);
}

bool TreeFilterProxy::filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const
{
    if (!isFiltering() || !m_model || !m_model->tree())
        return true;
    const NodeId node = m_model->nodeAt(m_model->index(sourceRow, 0, sourceParent));
    if (!node.valid())
        return false;
    ensureState();
    return node.value < m_self.size() && shown(node.value);
}

QModelIndex TreeFilterProxy::mapFromNode(NodeId node, int column) const
{
    if (!m_model)
        return {};
    return mapFromSource(m_model->indexOf(node, column));
}

} // namespace probescope::ui
