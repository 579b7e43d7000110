// SPDX-License-Identifier: Apache-2.0
#include "models/treefilterproxy.h"

#include "models/comparetreemodel.h"

namespace probescope::ui {

using tree::NodeId;

TreeFilterProxy::TreeFilterProxy(QObject* parent)
    : QSortFilterProxyModel(parent)
{
    setRecursiveFilteringEnabled(true);
    setSortRole(CompareTreeModel::SortRole);
}

void TreeFilterProxy::setSourceModel(QAbstractItemModel* model)
{
    m_model = qobject_cast<CompareTreeModel*>(model);
    QSortFilterProxyModel::setSourceModel(model);
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
    invalidateFilter();
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
    if (!isFiltering() || !m_model)
        return true;
    return acceptsNode(m_model->nodeAt(m_model->index(sourceRow, 0, sourceParent)));
}

QModelIndex TreeFilterProxy::mapFromNode(NodeId node, int column) const
{
    if (!m_model)
        return {};
    return mapFromSource(m_model->indexOf(node, column));
}

} // namespace probescope::ui
