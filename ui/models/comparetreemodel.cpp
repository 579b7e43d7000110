// SPDX-License-Identifier: Apache-2.0
#include "ui/models/comparetreemodel.h"

#include "core/compare/table/comparetable.h"
#include "ui/models/nodesearch.h"

#include <QAbstractItemView>
#include <QtGlobal>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <utility>

namespace probescope::ui {

using session::Status;
using tree::NodeId;

namespace {

bool sameNumber(double a, double b)
{
    return a == b || (std::isnan(a) && std::isnan(b));
}

bool sameMetrics(const session::NodeMetrics& a, const session::NodeMetrics& b)
{
    return sameNumber(a.cosine, b.cosine) && sameNumber(a.maxAbsErr, b.maxAbsErr)
        && sameNumber(a.maxRelErr, b.maxRelErr) && sameNumber(a.oneThousandth, b.oneThousandth)
        && sameNumber(a.normRelErr, b.normRelErr) && sameNumber(a.index, b.index);
}

QString keyText(std::string_view key)
{
    return QString::fromUtf8(key.data(), static_cast<qsizetype>(key.size()));
}

const session::NodeMetrics kNoMetrics {};

} // namespace

CompareTreeModel::CompareTreeModel(QObject* parent)
    : QAbstractItemModel(parent)
{
}

CompareTreeModel::~CompareTreeModel() = default;

bool CompareTreeModel::columnApplies(int column, compare::CompareMode mode)
{
    switch (column) {
    case NameColumn:
    case StatusColumn:
    case FailingBelowColumn: return true;
    case CosineColumn: return mode == compare::CompareMode::RealData;
    case MaxAbsErrColumn:
    case MaxRelErrColumn: return mode != compare::CompareMode::Md5;
    case NormRelErrColumn: return mode == compare::CompareMode::Summary;
    default: return false;
    }
}

QList<int> CompareTreeModel::columnsFor(compare::CompareMode mode)
{
    QList<int> out;
    for (int c = 0; c < ColumnCount; ++c) {
        if (columnApplies(c, mode))
            out.push_back(c);
    }
    return out;
}

CompareTreeModel::NodeKind CompareTreeModel::kindOf(const dump::EntryName& name)
{
    // A module's parameter gradients belong to the module, for display and for the kind filter.
    if (name.isModuleLike())
        return NodeKind::Module;
    return name.kind == dump::EntryKind::Api ? NodeKind::Api : NodeKind::Other;
}

void CompareTreeModel::setSkeleton(std::shared_ptr<const session::PairSkeleton> skeleton,
                                   std::optional<compare::CompareMode> mode)
{
    beginResetModel();
    m_skeleton = std::move(skeleton);
    m_tree = m_skeleton && m_skeleton->tree ? m_skeleton->tree.get() : nullptr;
    m_statusTable.reset();
    m_runStates.clear();
    m_mode = m_tree ? mode : std::nullopt;
    m_preorder.clear();
    m_preorderPos.clear();
    if (m_tree) {
        if (!m_mode)
            m_mode = m_skeleton->mode; // a skeleton from the reopen cache knows it without its dumps
        if (!m_mode && m_skeleton->npu && m_skeleton->bench && m_skeleton->npu->dump && m_skeleton->bench->dump) {
            if (auto detected = compare::detectMode(*m_skeleton->npu->dump, *m_skeleton->bench->dump))
                m_mode = *detected;
        }
        m_preorder = displayOrderOf(*m_tree);
        m_preorderPos.assign(m_tree->size(), 0);
        for (std::size_t i = 0; i < m_preorder.size(); ++i)
            m_preorderPos[m_preorder[i].value] = static_cast<std::uint32_t>(i);
    }
    resetStatusVectors();
    endResetModel();
}

void CompareTreeModel::clear()
{
    setSkeleton(nullptr);
}

void CompareTreeModel::resetStatusVectors()
{
    m_live.reset(m_tree);
}

void CompareTreeModel::setRunMode(bool on)
{
    if (on == m_runMode)
        return;
    beginResetModel();
    m_runMode = on;
    m_runStates.clear();
    resetStatusVectors();
    endResetModel();
}

void CompareTreeModel::setRunStates(std::vector<RunNodeState> states)
{
    if (!m_runMode || !m_tree || states.size() != m_tree->size())
        return;
    m_runStates = std::move(states);
    std::vector<std::uint32_t> nodes(m_runStates.size());
    std::vector<Status> classes(m_runStates.size());
    for (std::uint32_t i = 0; i < nodes.size(); ++i) {
        nodes[i] = i;
        classes[i] = runStateClass(m_runStates[i]);
    }
    // Core folds the subtree classes and the counts (as for streamed verdicts); every row says something new.
    m_live.reset(m_tree);
    m_live.apply(nodes, classes);
    emit ownStatusesChanged(nodes);
    emitAppearanceChanged({});
    emit statusesChanged();
}

std::optional<RunNodeState> CompareTreeModel::runState(NodeId node) const
{
    if (!m_runMode || node.value >= m_runStates.size())
        return std::nullopt;
    return m_runStates[node.value];
}

void CompareTreeModel::setStatus(std::shared_ptr<const session::NodeStatusTable> status)
{
    if (!m_tree)
        return;
    const std::size_t n = m_tree->size();
    if (status
        && (status->own.size() != n || status->subtree.size() != n || status->failingBelow.size() != n
            || status->metrics.size() != n)) {
        qWarning("CompareTreeModel::setStatus: a status table of %zu nodes for a tree of %zu; ignored",
                 status->own.size(), n);
        return;
    }
    if (m_runMode) {
        // The run against itself passes everywhere: its rows are kept (Details reads them), never its verdicts.
        m_statusTable = std::move(status);
        return;
    }
    std::vector<std::uint8_t> changed(n, 0);
    std::vector<std::uint32_t> ownChanged;
    const bool metricsMayDiffer = status != m_statusTable;
    for (std::size_t i = 0; i < n; ++i) {
        const Status own = status ? status->own[i] : Status::Pending;
        if (own != m_live.own()[i])
            ownChanged.push_back(static_cast<std::uint32_t>(i));
        const Status subtree = status ? status->subtree[i] : Status::Pending;
        const std::uint32_t below = status ? status->failingBelow[i] : 0;
        bool differs =
            own != m_live.own()[i] || subtree != m_live.subtree()[i] || below != m_live.failingBelow()[i];
        if (!differs && metricsMayDiffer) {
            const session::NodeMetrics& before = m_statusTable ? m_statusTable->metrics[i] : kNoMetrics;
            const session::NodeMetrics& after = status ? status->metrics[i] : kNoMetrics;
            differs = !sameMetrics(before, after);
        }
        changed[i] = differs ? 1 : 0;
    }
    m_statusTable = std::move(status);
    if (m_statusTable)
        m_live.assign(*m_statusTable);
    else
        m_live.reset(m_tree);
    if (!ownChanged.empty())
        emit ownStatusesChanged(ownChanged);
    const std::size_t count = std::size_t(std::count(changed.begin(), changed.end(), std::uint8_t(1)));
    if (count > m_bulkThreshold)
        emitAppearanceChanged({});
    else
        emitChanged(changed, {});
    emit statusesChanged();
}

void CompareTreeModel::applyUpdate(const session::StatusUpdate& update)
{
    if (!m_tree || m_runMode)
        return;
    // Core folds the ancestors (session::LiveNodeStatus); the model only says which rows changed.
    session::LiveNodeStatus::Changes changes = m_live.apply(update.nodes, update.own);
    if (changes.any.empty())
        return;
    emit ownStatusesChanged(changes.own);
    if (changes.any.size() > m_bulkThreshold)
        emitAppearanceChanged({});
    else
        emitChangedNodes(std::move(changes.any), {});
    emit statusesChanged();
}

void CompareTreeModel::setBands(const session::ColorBands& bands)
{
    if (bands.scheme == m_bands.scheme && bands.warningFrom == m_bands.warningFrom
        && bands.errorFrom == m_bands.errorFrom)
        return;
    const session::ColorBands before = m_bands;
    m_bands = bands;
    if (!m_tree)
        return;
    const std::size_t n = m_live.own().size();
    bool any = false;
    for (std::size_t i = 0; i < n && !any; ++i) {
        const session::NodeMetrics& m = m_statusTable ? m_statusTable->metrics[i] : kNoMetrics;
        any = session::bandOf(m_live.own()[i], m, before) != session::bandOf(m_live.own()[i], m, m_bands);
    }
    if (any)
        emitAppearanceChanged({ Qt::BackgroundRole, Qt::ForegroundRole, BandRole });
}

void CompareTreeModel::setDarkPalette(bool dark)
{
    if (dark == m_dark)
        return;
    m_dark = dark;
    if (!m_tree)
        return;
    emitAppearanceChanged({ Qt::BackgroundRole, Qt::ForegroundRole, Qt::DecorationRole });
}

void CompareTreeModel::emitAppearanceChanged(const QList<int>& roles)
{
    // Signalling every run of changed rows costs QTreeView about 8 us per range (0.5-0.9 s at 200k
    // nodes), and QTreeView repaints only the rectangle a range spans, so no cheap set of ranges
    // repaints nested rows. For changes that touch most of the tree, views repaint on
    // appearanceChanged() (repaintOnAppearanceChange) and TreeFilterProxy re-filters on
    // ownStatusesChanged(); the top-level rows are still signalled for other observers.
    const auto roots = m_tree->roots();
    for (std::size_t r = 0; r < roots.size(); ++r)
        emit dataChanged(createIndex(int(r), 0, quintptr(roots[r].value)),
                         createIndex(int(r), ColumnCount - 1, quintptr(roots[r].value)), roles);
    emit appearanceChanged();
}

void CompareTreeModel::emitChanged(const std::vector<std::uint8_t>& changed, const QList<int>& roles)
{
    std::vector<std::uint32_t> nodes;
    for (const NodeId id : m_preorder) {
        if (changed[id.value])
            nodes.push_back(id.value);
    }
    emitRuns(nodes, roles);
}

void CompareTreeModel::emitChangedNodes(std::vector<std::uint32_t> nodes, const QList<int>& roles)
{
    std::sort(nodes.begin(), nodes.end(),
              [&](std::uint32_t a, std::uint32_t b) { return m_preorderPos[a] < m_preorderPos[b]; });
    emitRuns(nodes, roles);
}

void CompareTreeModel::emitRuns(const std::vector<std::uint32_t>& nodes, const QList<int>& roles)
{
    // A range may only cover rows that are also adjacent in a tree view, so siblings are joined only
    // after a leaf: QTreeView walks every visible row between the ends of a range, and a range that
    // spans an expanded module would make it walk that module's whole subtree. Emitting the runs in
    // display order keeps the view's row lookups local.
    std::size_t i = 0;
    while (i < nodes.size()) {
        std::size_t j = i;
        while (j + 1 < nodes.size()) {
            const tree::TreeNode& last = m_tree->node(NodeId { nodes[j] });
            const tree::TreeNode& next = m_tree->node(NodeId { nodes[j + 1] });
            if (last.childCount != 0 || next.parent != last.parent || next.row != last.row + 1)
                break;
            ++j;
        }
        emit dataChanged(createIndex(int(m_tree->node(NodeId { nodes[i] }).row), 0, quintptr(nodes[i])),
                         createIndex(int(m_tree->node(NodeId { nodes[j] }).row), ColumnCount - 1, quintptr(nodes[j])),
                         roles);
        i = j + 1;
    }
}

Status CompareTreeModel::band(NodeId node) const
{
    if (m_runMode) {
        // Only a NaN/Inf is coloured: a finite node is no "pass", it has no fill.
        const Status own = m_live.own()[node.value];
        return session::isFailing(own) ? own : Status::NoData;
    }
    const session::NodeMetrics* m = metrics(node);
    return session::bandOf(m_live.own()[node.value], m ? *m : kNoMetrics, m_bands);
}

const session::NodeMetrics* CompareTreeModel::metrics(NodeId node) const
{
    if (!m_statusTable || node.value >= m_statusTable->metrics.size())
        return nullptr;
    return &m_statusTable->metrics[node.value];
}

QModelIndex CompareTreeModel::indexOf(NodeId node, int column) const
{
    if (!m_tree || !node.valid() || node.value >= m_tree->size() || column < 0 || column >= ColumnCount)
        return {};
    return createIndex(int(m_tree->node(node).row), column, quintptr(node.value));
}

NodeId CompareTreeModel::nodeAt(const QModelIndex& index) const
{
    if (!m_tree || !index.isValid() || index.model() != this)
        return {};
    return NodeId { static_cast<std::uint32_t>(index.internalId()) };
}

std::vector<NodeId> CompareTreeModel::failingNodesInDisplayOrder() const
{
    std::vector<NodeId> out;
    for (const NodeId id : m_preorder) {
        if (session::isFailing(m_live.own()[id.value]))
            out.push_back(id);
    }
    return out;
}

NodeId CompareTreeModel::nextFailing(NodeId from, bool wrap) const
{
    const std::size_t n = m_preorder.size();
    if (n == 0)
        return {};
    const bool fromValid = from.valid() && from.value < n;
    const std::size_t start = fromValid ? m_preorderPos[from.value] + 1 : 0;
    const std::size_t steps = fromValid ? (wrap ? n : n - start) : n;
    for (std::size_t k = 0; k < steps; ++k) {
        const NodeId id = m_preorder[(start + k) % n];
        if (session::isFailing(m_live.own()[id.value]))
            return id;
    }
    return {};
}

NodeId CompareTreeModel::previousFailing(NodeId from, bool wrap) const
{
    const std::size_t n = m_preorder.size();
    if (n == 0)
        return {};
    const bool fromValid = from.valid() && from.value < n;
    // Positions counted backwards from `from` (exclusive), or from the end.
    const std::size_t start = fromValid ? m_preorderPos[from.value] : n;
    const std::size_t steps = fromValid ? (wrap ? n : start) : n;
    for (std::size_t k = 1; k <= steps; ++k) {
        const NodeId id = m_preorder[(start + n - k) % n];
        if (session::isFailing(m_live.own()[id.value]))
            return id;
    }
    return {};
}

QModelIndex CompareTreeModel::index(int row, int column, const QModelIndex& parent) const
{
    if (!m_tree || row < 0 || column < 0 || column >= ColumnCount)
        return {};
    std::span<const NodeId> siblings;
    if (parent.isValid()) {
        if (parent.column() != 0 || parent.model() != this)
            return {};
        siblings = m_tree->children(NodeId { static_cast<std::uint32_t>(parent.internalId()) });
    } else {
        siblings = m_tree->roots();
    }
    if (static_cast<std::size_t>(row) >= siblings.size())
        return {};
    return createIndex(row, column, quintptr(siblings[static_cast<std::size_t>(row)].value));
}

QModelIndex CompareTreeModel::parent(const QModelIndex& child) const
{
    if (!m_tree || !child.isValid())
        return {};
    const NodeId p = m_tree->node(NodeId { static_cast<std::uint32_t>(child.internalId()) }).parent;
    if (!p.valid())
        return {};
    return createIndex(int(m_tree->node(p).row), 0, quintptr(p.value));
}

QModelIndex CompareTreeModel::sibling(int row, int column, const QModelIndex& idx) const
{
    // Same row, other column: no lookup of the parent's children needed.
    if (idx.isValid() && row == idx.row() && column >= 0 && column < ColumnCount)
        return createIndex(row, column, idx.internalId());
    return QAbstractItemModel::sibling(row, column, idx);
}

int CompareTreeModel::rowCount(const QModelIndex& parent) const
{
    if (!m_tree)
        return 0;
    if (!parent.isValid())
        return static_cast<int>(m_tree->roots().size());
    if (parent.column() != 0)
        return 0;
    return static_cast<int>(m_tree->node(NodeId { static_cast<std::uint32_t>(parent.internalId()) }).childCount);
}

int CompareTreeModel::columnCount(const QModelIndex&) const
{
    return ColumnCount;
}

bool CompareTreeModel::hasChildren(const QModelIndex& parent) const
{
    return rowCount(parent) > 0;
}

Qt::ItemFlags CompareTreeModel::flags(const QModelIndex& index) const
{
    if (!index.isValid())
        return Qt::NoItemFlags;
    Qt::ItemFlags f = Qt::ItemIsEnabled | Qt::ItemIsSelectable;
    // Lets a tree view skip asking whether a leaf has children.
    if (m_tree->node(NodeId { static_cast<std::uint32_t>(index.internalId()) }).childCount == 0)
        f |= Qt::ItemNeverHasChildren;
    return f;
}

QString CompareTreeModel::statusText(NodeId node) const
{
    if (m_runMode) {
        const auto state = runState(node);
        const QString own = state ? runStateLabel(*state) : statuspalette::label(m_live.own()[node.value]);
        if (m_tree->node(node).childCount && m_live.failingBelow()[node.value])
            return tr("%1 \u00b7 %n with NaN/Inf below", nullptr, int(m_live.failingBelow()[node.value])).arg(own);
        return own;
    }
    const QString own = statuspalette::label(m_live.own()[node.value]);
    if (m_tree->node(node).childCount && m_live.failingBelow()[node.value])
        return tr("%1 \u00b7 %2 failing below").arg(own).arg(m_live.failingBelow()[node.value]);
    return own;
}

QVariant CompareTreeModel::metricValue(NodeId node, int column) const
{
    const session::NodeMetrics* m = metrics(node);
    if (!m || !m_mode || !columnApplies(column, *m_mode))
        return {};
    double v = NAN;
    switch (column) {
    case CosineColumn: v = m->cosine; break;
    case MaxAbsErrColumn: v = m->maxAbsErr; break;
    case MaxRelErrColumn: v = m->maxRelErr; break;
    case NormRelErrColumn: v = m->normRelErr; break;
    default: return {};
    }
    if (std::isnan(v))
        return {};
    // Statistics relative errors are fractions in core; msprobe shows them as percentages.
    if (*m_mode == compare::CompareMode::Summary && (column == MaxRelErrColumn || column == NormRelErrColumn))
        return QString::number(v * 100.0, 'g', 6) + QLatin1Char('%');
    if (column == CosineColumn)
        return QString::number(v, 'f', 6);
    return QString::number(v, 'g', 6);
}

QVariant CompareTreeModel::sortValue(NodeId node, int column) const
{
    switch (column) {
    case NameColumn: return keyText(m_tree->node(node).key);
    case StatusColumn: return int(m_live.own()[node.value]);
    case FailingBelowColumn: return m_live.failingBelow()[node.value];
    default: break;
    }
    const session::NodeMetrics* m = metrics(node);
    if (!m)
        return {};
    switch (column) {
    case CosineColumn: return m->cosine;
    case MaxAbsErrColumn: return m->maxAbsErr;
    case MaxRelErrColumn: return m->maxRelErr;
    case NormRelErrColumn: return m->normRelErr;
    default: return {};
    }
}

QString CompareTreeModel::toolTip(NodeId node) const
{
    const tree::TreeNode& t = m_tree->node(node);
    QString tip = keyText(t.key);
    if (m_runMode) {
        if (const auto state = runState(node))
            tip += QLatin1Char('\n') + tr("Status: %1").arg(runStateLabel(*state)) + QLatin1Char('\n')
                + runStateExplanation(*state);
        if (t.childCount)
            tip += QLatin1Char('\n') + tr("With NaN/Inf below: %1").arg(m_live.failingBelow()[node.value]);
        tip += QLatin1Char('\n') + tr("Execution index: %1").arg(t.executionIndex);
        return tip;
    }
    tip += QLatin1Char('\n') + tr("Status: %1").arg(statuspalette::label(m_live.own()[node.value]));
    if (t.childCount) {
        tip += QLatin1Char('\n') + tr("Worst below: %1").arg(statuspalette::label(m_live.subtree()[node.value]));
        tip += QLatin1Char('\n') + tr("Failing below: %1").arg(m_live.failingBelow()[node.value]);
    }
    const Status b = band(node);
    if (b != m_live.own()[node.value])
        tip += QLatin1Char('\n') + tr("Colour band: %1").arg(statuspalette::label(b));
    tip += QLatin1Char('\n') + tr("Execution index: %1").arg(t.executionIndex);
    if (t.parentSource == tree::ParentSource::Inferred)
        tip += QLatin1Char('\n') + tr("(parent inferred)");
    if (const session::NodeMetrics* m = metrics(node); m && m_mode) {
        for (const int c : { int(CosineColumn), int(MaxAbsErrColumn), int(MaxRelErrColumn), int(NormRelErrColumn) }) {
            const QVariant v = metricValue(node, c);
            if (v.isValid())
                tip += QLatin1Char('\n') + tr("%1: %2").arg(headerData(c, Qt::Horizontal).toString(), v.toString());
        }
    }
    return tip;
}

QVariant CompareTreeModel::data(const QModelIndex& index, int role) const
{
    if (!m_tree || !index.isValid() || index.model() != this)
        return {};
    const NodeId node { static_cast<std::uint32_t>(index.internalId()) };
    if (node.value >= m_tree->size())
        return {};
    const int column = index.column();
    switch (role) {
    case Qt::DisplayRole:
        switch (column) {
        case NameColumn: return keyText(m_tree->node(node).key);
        case StatusColumn: return statusText(node);
        case FailingBelowColumn:
            return m_tree->node(node).childCount ? QVariant(m_live.failingBelow()[node.value]) : QVariant();
        default: return metricValue(node, column);
        }
    case Qt::DecorationRole: {
        if (column != NameColumn)
            return {};
        const Status own = m_live.own()[node.value];
        const Status shown = session::worse(own, m_live.subtree()[node.value]);
        if (m_runMode && !session::isFailing(shown))
            return {}; // a finite run node has no mark: a check would read as a verdict
        return m_icons.icon(shown, shown != own, m_dark);
    }
    case Qt::BackgroundRole: return statuspalette::fill(band(node), m_dark);
    case Qt::ForegroundRole: return statuspalette::text(band(node), m_dark);
    case Qt::ToolTipRole: return toolTip(node);
    case Qt::TextAlignmentRole:
        if (column >= FailingBelowColumn)
            return QVariant::fromValue(Qt::Alignment(Qt::AlignRight | Qt::AlignVCenter));
        return {};
    case NodeIdRole: return node.value;
    case OwnStatusRole: return int(m_live.own()[node.value]);
    case SubtreeStatusRole: return int(m_live.subtree()[node.value]);
    case BandRole: return int(band(node));
    case FailingBelowRole: return m_live.failingBelow()[node.value];
    case KindRole: return int(kindOf(m_tree->node(node).name));
    case DirectionRole: return int(m_tree->node(node).name.direction);
    case KeyRole: return keyText(m_tree->node(node).key);
    case ExecutionIndexRole: return m_tree->node(node).executionIndex;
    case SortRole: return sortValue(node, column);
    default: return {};
    }
}

QVariant CompareTreeModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || section < 0 || section >= ColumnCount)
        return QAbstractItemModel::headerData(section, orientation, role);
    if (role == Qt::DisplayRole) {
        switch (section) {
        case NameColumn: return tr("Name");
        case StatusColumn: return tr("Status");
        case FailingBelowColumn: return tr("Failing below");
        case CosineColumn: return tr("Cosine");
        case MaxAbsErrColumn:
            return m_mode == compare::CompareMode::Summary ? tr("Max diff") : tr("MaxAbsErr");
        case MaxRelErrColumn: return tr("MaxRelErr");
        case NormRelErrColumn: return tr("NormRelErr");
        default: return {};
        }
    }
    if (role == Qt::ToolTipRole && section == StatusColumn && m_runMode)
        return tr("The node's own state in this run: whether its dumped inputs or outputs hold a NaN/Inf, and how "
                  "many nodes below it do");
    if (role == Qt::ToolTipRole && section == StatusColumn)
        return tr("The node's own verdict (its inputs and outputs), and how many nodes below it fail");
    return {};
}

QHash<int, QByteArray> CompareTreeModel::roleNames() const
{
    QHash<int, QByteArray> names = QAbstractItemModel::roleNames();
    names.insert(NodeIdRole, "nodeId");
    names.insert(OwnStatusRole, "ownStatus");
    names.insert(SubtreeStatusRole, "subtreeStatus");
    names.insert(BandRole, "band");
    names.insert(FailingBelowRole, "failingBelow");
    names.insert(KindRole, "kind");
    names.insert(DirectionRole, "direction");
    names.insert(KeyRole, "key");
    names.insert(ExecutionIndexRole, "executionIndex");
    names.insert(SortRole, "sortValue");
    return names;
}

void repaintOnAppearanceChange(const CompareTreeModel* model, QAbstractItemView* view)
{
    QObject::connect(model, &CompareTreeModel::appearanceChanged, view->viewport(), [viewport = view->viewport()] {
        viewport->update();
    });
}

} // namespace probescope::ui
