// SPDX-License-Identifier: Apache-2.0
#include "ui/models/graphfilemodel.h"

#include "ui/models/graphsides.h"
#include "ui/models/statuspalette.h"

#include <QString>

namespace probescope::ui {

namespace {

// tb_graph_ascend's fixed colours where the file has no band: the unmatched grey is msprobe's own (#C7C7C7,
// node_colors.py); the bench and base colours are the plugin's front-end constants, which no file stores.
const QColor kUnmatched(0xC7, 0xC7, 0xC7);
const QColor kBench(0xE6, 0xF0, 0xFA);
const QColor kBase(0xFF, 0xFF, 0xFF);

QString toQ(const std::string& s)
{
    return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size()));
}

} // namespace

GraphFileModel::GraphFileModel(QObject* parent)
    : QAbstractItemModel(parent)
{
}

void GraphFileModel::clear()
{
    setGraph(nullptr, -1);
}

void GraphFileModel::setGraph(std::shared_ptr<const graph::GraphFile> file, int graphIndex,
                              std::optional<std::int64_t> microStep)
{
    beginResetModel();
    m_file = std::move(file);
    m_graph = nullptr;
    m_graphIndex = -1;
    m_microStep = microStep;
    m_row.clear();
    m_hidden.clear();
    m_filteredRootChildren.clear();
    m_filteredSlot.clear();
    if (m_file && graphIndex >= 0 && static_cast<std::size_t>(graphIndex) < m_file->graphs.size()) {
        m_graph = &m_file->graphs[static_cast<std::size_t>(graphIndex)];
        m_graphIndex = graphIndex;
        const auto& nodes = m_graph->nodes;
        m_row.assign(nodes.size(), 0);
        for (std::size_t r = 0; r < m_graph->roots.size(); ++r)
            m_row[m_graph->roots[r]] = static_cast<std::uint32_t>(r);
        for (const graph::Node& n : nodes)
            for (std::size_t r = 0; r < n.children.size(); ++r)
                m_row[n.children[r]] = static_cast<std::uint32_t>(r);
        if (m_microStep) {
            m_hidden.assign(nodes.size(), 0);
            m_filteredSlot.assign(nodes.size(), -1);
            for (const std::uint32_t root : m_graph->roots) {
                std::vector<std::uint32_t> kept;
                for (const std::uint32_t c : nodes[root].children) {
                    if (nodes[c].microStep == *m_microStep) {
                        m_row[c] = static_cast<std::uint32_t>(kept.size());
                        kept.push_back(c);
                    } else {
                        m_hidden[c] = 1;
                    }
                }
                m_filteredSlot[root] = static_cast<std::int32_t>(m_filteredRootChildren.size());
                m_filteredRootChildren.emplace_back(root, std::move(kept));
            }
        }
    }
    endResetModel();
}

const std::vector<std::uint32_t>& GraphFileModel::childrenOf(std::uint32_t node) const
{
    // One lookup (a file may hold a million roots: a search of them per call was quadratic in the view's layout).
    if (m_microStep && m_graph->nodes[node].parent < 0 && node < m_filteredSlot.size() && m_filteredSlot[node] >= 0)
        return m_filteredRootChildren[static_cast<std::size_t>(m_filteredSlot[node])].second;
    return m_graph->nodes[node].children;
}

bool GraphFileModel::isShown(std::uint32_t node) const
{
    if (!m_graph || node >= m_graph->nodes.size())
        return false;
    if (m_hidden.empty())
        return true;
    // Shown unless it or one of its ancestors is a top-level node of another micro step.
    for (std::int64_t at = node; at >= 0; at = m_graph->nodes[static_cast<std::size_t>(at)].parent)
        if (m_hidden[static_cast<std::size_t>(at)])
            return false;
    return true;
}

QModelIndex GraphFileModel::indexOfNode(std::uint32_t node) const
{
    if (!isShown(node))
        return {};
    return createIndex(static_cast<int>(m_row[node]), 0, static_cast<quintptr>(node));
}

std::optional<std::uint32_t> GraphFileModel::nodeOf(const QModelIndex& index) const
{
    if (!index.isValid() || !m_graph || index.model() != this)
        return std::nullopt;
    return static_cast<std::uint32_t>(index.internalId());
}

QModelIndex GraphFileModel::index(int row, int column, const QModelIndex& parent) const
{
    if (!m_graph || row < 0 || column < 0 || column >= ColumnCount)
        return {};
    if (!parent.isValid()) {
        if (static_cast<std::size_t>(row) >= m_graph->roots.size())
            return {};
        return createIndex(row, column, static_cast<quintptr>(m_graph->roots[static_cast<std::size_t>(row)]));
    }
    if (parent.column() != 0)
        return {};
    const auto& children = childrenOf(static_cast<std::uint32_t>(parent.internalId()));
    if (static_cast<std::size_t>(row) >= children.size())
        return {};
    return createIndex(row, column, static_cast<quintptr>(children[static_cast<std::size_t>(row)]));
}

QModelIndex GraphFileModel::parent(const QModelIndex& child) const
{
    if (!child.isValid() || !m_graph)
        return {};
    const std::int32_t up = m_graph->nodes[static_cast<std::size_t>(child.internalId())].parent;
    if (up < 0)
        return {};
    return createIndex(static_cast<int>(m_row[static_cast<std::size_t>(up)]), 0, static_cast<quintptr>(up));
}

int GraphFileModel::rowCount(const QModelIndex& parent) const
{
    if (!m_graph)
        return 0;
    if (!parent.isValid())
        return static_cast<int>(m_graph->roots.size());
    if (parent.column() != 0)
        return 0;
    return static_cast<int>(childrenOf(static_cast<std::uint32_t>(parent.internalId())).size());
}

int GraphFileModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() && parent.column() != 0 ? 0 : ColumnCount;
}

bool GraphFileModel::hasChildren(const QModelIndex& parent) const
{
    return rowCount(parent) > 0;
}

QString GraphFileModel::typeName(std::uint8_t type)
{
    switch (type) {
    case static_cast<std::uint8_t>(graph::NodeType::Module): return tr("module");
    case static_cast<std::uint8_t>(graph::NodeType::Api): return tr("API");
    case static_cast<std::uint8_t>(graph::NodeType::ApiCollection): return tr("API collection");
    default: return QString::number(type);
    }
}

QColor GraphFileModel::colourOf(const graph::GraphFile& file, const graph::Node& node)
{
    switch (node.status) {
    case graph::Status::Banded:
        if (node.band >= 0 && static_cast<std::size_t>(node.band) < file.colours.size())
            return QColor(toQ(file.colours[static_cast<std::size_t>(node.band)].colour));
        return kBase;
    case graph::Status::Unmatched:
        // The file's own band without a range (26.x "unmatched node") when it has one.
        for (const graph::ColourBand& b : file.colours)
            if (!b.lo && !b.hi && QColor(toQ(b.colour)).isValid())
                return QColor(toQ(b.colour));
        return kUnmatched;
    case graph::Status::Bench: return kBench;
    case graph::Status::NoValue: break;
    }
    return kBase;
}

QString GraphFileModel::verdictOf(const graph::GraphFile& file, const graph::Node& node)
{
    switch (node.status) {
    case graph::Status::Banded: {
        if (node.band < 0 || static_cast<std::size_t>(node.band) >= file.colours.size())
            return {};
        // The palette's word in the language in force and the band's range, for every version (issue 36 item 6):
        // 8.x's legend sentence (Chinese whatever the language) and 26.x's English level go to the tooltip
        // (bandText()).
        const graph::ColourBand& b = file.colours[static_cast<std::size_t>(node.band)];
        const QString range = QStringLiteral("[%1, %2]").arg(b.lo.value_or(0)).arg(b.hi.value_or(0));
        return statuspalette::label(paletteStatusOf(file, node)).toLower() + ' ' + range;
    }
    case graph::Status::Unmatched: return tr("unmatched");
    case graph::Status::Bench: return tr("bench");
    case graph::Status::NoValue: break;
    }
    return {};
}

QString GraphFileModel::bandText(const graph::GraphFile& file, const graph::Node& node)
{
    if (node.status != graph::Status::Banded || node.band < 0 || static_cast<std::size_t>(node.band) >= file.colours.size())
        return {};
    const graph::ColourBand& b = file.colours[static_cast<std::size_t>(node.band)];
    QString text = toQ(b.description);
    if (!b.level.empty())
        text = text.isEmpty() ? toQ(b.level) : toQ(b.level) + QStringLiteral(": ") + text;
    return text;
}

QVariant GraphFileModel::data(const QModelIndex& index, int role) const
{
    if (!index.isValid() || !m_graph)
        return {};
    const std::uint32_t id = static_cast<std::uint32_t>(index.internalId());
    const graph::Node& n = m_graph->nodes[id];
    switch (role) {
    case Qt::DisplayRole:
        switch (index.column()) {
        case NameColumn: return toQ(n.name);
        case TypeColumn: return typeName(n.type);
        case PrecisionColumn:
            if (!n.precision)
                return {};
            return n.precisionIsInteger ? QString::number(static_cast<qlonglong>(*n.precision))
                                        : QString::number(*n.precision, 'g', 6);
        case VerdictColumn: return verdictOf(*m_file, n);
        default: return {};
        }
    case Qt::BackgroundRole:
        // A node without a verdict (a build graph, a module without values) takes the theme's base rather than
        // white: a dark theme's tree stays dark (issue 36 item 5).
        if ((index.column() == NameColumn || index.column() == VerdictColumn) && n.status != graph::Status::NoValue)
            return colourOf(*m_file, n);
        return {};
    case Qt::ForegroundRole:
        // The bands are light colours on any theme: dark text keeps the name readable on them.
        if ((index.column() == NameColumn || index.column() == VerdictColumn) && n.status != graph::Status::NoValue)
            return QColor(Qt::black);
        return {};
    case Qt::ToolTipRole:
        if (index.column() == NameColumn || index.column() == VerdictColumn) {
            QString tip = toQ(n.name);
            const QString verdict = verdictOf(*m_file, n);
            if (!verdict.isEmpty())
                tip += QStringLiteral("\n") + verdict;
            if (const QString band = bandText(*m_file, n); !band.isEmpty())
                tip += QStringLiteral("\n") + tr("msprobe: %1").arg(band);
            if (!n.matchedLink.empty())
                tip += QStringLiteral("\n↔ ") + toQ(n.matchedLink.back());
            return tip;
        }
        return {};
    case NodeIndexRole: return QVariant::fromValue<quint32>(id);
    case StatusRole: return static_cast<int>(n.status);
    case ColourRole: return colourOf(*m_file, n);
    default: return {};
    }
}

QVariant GraphFileModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case NameColumn: return tr("Node");
    case TypeColumn: return tr("Type");
    case PrecisionColumn: return tr("precision_index");
    case VerdictColumn: return tr("Verdict");
    default: return {};
    }
}

Qt::ItemFlags GraphFileModel::flags(const QModelIndex& index) const
{
    return index.isValid() ? Qt::ItemIsEnabled | Qt::ItemIsSelectable : Qt::NoItemFlags;
}

} // namespace probescope::ui
