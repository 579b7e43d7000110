// SPDX-License-Identifier: Apache-2.0
#include "panels/noderowsmodel.h"

#include "compare/flatten.h"
#include "compare/pytext.h"
#include "panels/statuspalette.h"

#include <QBrush>
#include <QDir>
#include <QFont>

#include <map>
#include <string>
#include <unordered_map>

namespace probescope::ui {

using session::Status;

namespace {

QString fromStd(std::string_view s)
{
    return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size()));
}

// excelText appends a TAB to inf/-inf/nan (what pandas prints); on screen and in a TSV it would only hurt.
QString cellDisplay(const compare::Cell& cell)
{
    std::string t = compare::excelText(cell);
    while (!t.empty() && t.back() == '\t')
        t.pop_back();
    return fromStd(t);
}

// Row name -> data file name of every leaf of one entry, as msprobe flattens it.
std::unordered_map<std::string, std::string> dataNamesOf(const dump::DumpFile& file, const dump::Entry& entry,
                                                         compare::CompareMode mode)
{
    std::unordered_map<std::string, std::string> names;
    const auto index = static_cast<std::uint32_t>(&entry - file.entries.data());
    auto op = compare::flattenEntry(entry, index, mode);
    if (!op)
        return names;
    for (const compare::FlatRow& r : op->rows) {
        if (!r.dataName.empty() && r.dataName != "-1")
            names.emplace(r.name, r.dataName);
    }
    return names;
}

} // namespace

NodeRowsModel::NodeRowsModel(QObject* parent)
    : QAbstractTableModel(parent)
{
    for (std::size_t i = 0; i < m_icons.size(); ++i)
        m_icons[i] = statuspalette::icon(static_cast<Status>(i));
}

void NodeRowsModel::setNode(std::shared_ptr<const session::PairAnalysis> analysis, quint32 nodeId)
{
    beginResetModel();
    m_analysis = std::move(analysis);
    m_node = nodeId;
    m_columns.clear();
    m_rows.clear();
    if (m_analysis && m_analysis->table && m_analysis->status) {
        buildColumns(*m_analysis->table);
        buildRows();
    }
    endResetModel();
}

void NodeRowsModel::clear()
{
    beginResetModel();
    m_analysis.reset();
    m_node = 0;
    m_columns.clear();
    m_rows.clear();
    endResetModel();
}

void NodeRowsModel::setDarkTheme(bool dark)
{
    if (m_dark == dark)
        return;
    m_dark = dark;
    if (!m_rows.empty() && !m_columns.empty())
        emit dataChanged(index(0, 0), index(rowCount() - 1, columnCount() - 1),
                         { Qt::BackgroundRole, Qt::ForegroundRole });
}

void NodeRowsModel::buildColumns(const compare::CompareTable& table)
{
    auto add = [&](ColumnKind kind, int tableColumn, QString title, QString toolTip = {}) {
        m_columns.push_back({ kind, tableColumn, std::move(title), std::move(toolTip) });
    };
    // A column is shown only when the table has it: the profile (1.2 / 26) and mode decide the set.
    auto addCell = [&](const char* name, QString title, QString toolTip = {}) {
        const int c = table.column(name);
        if (c >= 0)
            add(ColumnKind::TableCell, c, std::move(title), toolTip.isEmpty() ? QString::fromLatin1(name) : toolTip);
    };
    // msprobe's order (dtype, shape, metrics, statistics, verdict, Err_message), except that the verdict
    // comes right after the leaf: the status must be readable without scrolling, never by colour alone.
    add(ColumnKind::Leaf, -1, tr("Leaf"), tr("The input, output or parameter of the node"));
    add(ColumnKind::Verdict, -1, tr("Verdict"), tr("ProbeScope's status of the row"));
    addCell("NPU Dtype", tr("NPU dtype"));
    addCell("Bench Dtype", tr("Bench dtype"));
    addCell("NPU Tensor Shape", tr("NPU shape"));
    addCell("Bench Tensor Shape", tr("Bench shape"));
    addCell("NPU Requires_grad", tr("NPU requires_grad"));
    addCell("Bench Requires_grad", tr("Bench requires_grad"));
    switch (table.mode) {
    case compare::CompareMode::RealData:
        addCell("Cosine", QStringLiteral("Cosine"), tr("Cosine similarity of the two tensors"));
        addCell("EucDist", QStringLiteral("EucDist"), tr("Euclidean distance of the two tensors"));
        addCell("MaxAbsErr", QStringLiteral("MaxAbsErr"), tr("Largest absolute difference"));
        addCell("MaxRelativeErr", QStringLiteral("MaxRelativeErr"), tr("Largest relative difference"));
        addCell("One Thousandth Err Ratio", tr("1‰ ratio"),
                tr("One Thousandth Err Ratio: share of elements whose relative error is below 0.001"));
        addCell("Five Thousandths Err Ratio", tr("5‰ ratio"),
                tr("Five Thousandths Err Ratio: share of elements whose relative error is below 0.005"));
        break;
    case compare::CompareMode::Summary:
        addCell("Max diff", QStringLiteral("Max diff"));
        addCell("Min diff", QStringLiteral("Min diff"));
        addCell("Mean diff", QStringLiteral("Mean diff"));
        addCell("L2norm diff", QStringLiteral("L2norm diff"));
        addCell("MaxRelativeErr", QStringLiteral("MaxRelativeErr"));
        addCell("MinRelativeErr", QStringLiteral("MinRelativeErr"));
        addCell("MeanRelativeErr", QStringLiteral("MeanRelativeErr"));
        addCell("NormRelativeErr", QStringLiteral("NormRelativeErr"));
        break;
    case compare::CompareMode::Md5:
        addCell("NPU MD5", tr("NPU md5"));
        addCell("BENCH MD5", tr("Bench md5"));
        break;
    }
    // Statistics in adjacent NPU/bench pairs, so the two values of one statistic sit next to each other.
    addCell("NPU max", tr("NPU max"));
    addCell("Bench max", tr("Bench max"));
    addCell("NPU min", tr("NPU min"));
    addCell("Bench min", tr("Bench min"));
    addCell("NPU mean", tr("NPU mean"));
    addCell("Bench mean", tr("Bench mean"));
    addCell("NPU l2norm", tr("NPU norm"));
    addCell("Bench l2norm", tr("Bench norm"));
    addCell("Accuracy Reached or Not", tr("Accuracy reached"));
    addCell("Result", tr("Result"), tr("msprobe's Result column"));
    addCell("Requires_grad Consistent", tr("Requires_grad consistent"));
    addCell("Err_message", tr("Err_message"), tr("Why msprobe flagged the row"));
    if (table.mode == compare::CompareMode::RealData) {
        add(ColumnKind::NpuDataFile, -1, tr("NPU data file"), tr("Tensor file of the NPU leaf"));
        add(ColumnKind::BenchDataFile, -1, tr("Bench data file"), tr("Tensor file of the bench leaf"));
    }
}

void NodeRowsModel::buildRows()
{
    const session::PairAnalysis& a = *m_analysis;
    const compare::CompareTable& table = *a.table;
    const session::NodeStatusTable& status = *a.status;
    if (static_cast<std::size_t>(m_node) + 1 >= status.rowOffsets.size())
        return;
    const auto rows = status.rowsOf(tree::NodeId { m_node });
    const session::PairSkeleton* skeleton = a.skeleton.get();
    const dump::DumpFile* npuFile = skeleton && skeleton->npu ? skeleton->npu->dump.get() : nullptr;
    const dump::DumpFile* benchFile = skeleton && skeleton->bench ? skeleton->bench->dump.get() : nullptr;
    QString nodeKey;
    if (skeleton && skeleton->tree && m_node < skeleton->tree->size())
        nodeKey = fromStd(skeleton->tree->node(tree::NodeId { m_node }).key);

    const bool tensorMode = table.mode == compare::CompareMode::RealData;
    const int benchNameColumn = table.column("Bench Name");
    // Data names come from flattening the entries again: the table keeps the NPU one only (1.2) or a
    // list text (26), and never the bench one.
    std::map<std::string, std::unordered_map<std::string, std::string>> benchNames;
    std::unordered_map<std::string, std::string> npuNames;
    if (tensorMode && npuFile && !rows.empty() && table.npuEntry[rows.front()] < npuFile->entries.size())
        npuNames = dataNamesOf(*npuFile, npuFile->entries[table.npuEntry[rows.front()]], table.mode);
    const QString npuDir = npuFile ? QString::fromStdString(npuFile->tensorDir.string()) : QString();
    const QString benchDir = benchFile ? QString::fromStdString(benchFile->tensorDir.string()) : QString();

    m_rows.reserve(rows.size());
    for (std::uint32_t r : rows) {
        Row row;
        row.tableRow = r;
        row.status = session::rowStatus(table, r);
        const std::string& npuName = table.rows[r][0].isString() ? table.rows[r][0].asString() : std::string();
        row.leaf = leafName(QString::fromStdString(npuName), nodeKey);
        if (tensorMode) {
            if (auto it = npuNames.find(npuName); it != npuNames.end())
                row.npuData = QString::fromStdString(it->second);
            const compare::Cell* benchCell = benchNameColumn >= 0 ? &table.rows[r][static_cast<std::size_t>(benchNameColumn)] : nullptr;
            if (benchFile && table.matched[r] && benchCell && benchCell->isString()) {
                const std::string& benchName = benchCell->asString();
                const std::string key = session::entryKeyOfRow(benchName);
                auto cached = benchNames.find(key);
                if (cached == benchNames.end()) {
                    const dump::Entry* e = benchFile->find(key);
                    cached = benchNames.emplace(key, e ? dataNamesOf(*benchFile, *e, table.mode)
                                                       : std::unordered_map<std::string, std::string> {}).first;
                }
                if (auto it = cached->second.find(benchName); it != cached->second.end())
                    row.benchData = QString::fromStdString(it->second);
            }
            row.npuDir = npuDir;
            row.benchDir = benchDir;
        }
        m_rows.push_back(std::move(row));
    }
}

QString NodeRowsModel::leafName(const QString& rowName, const QString& nodeKey)
{
    if (!nodeKey.isEmpty() && rowName.size() > nodeKey.size() + 1 && rowName.startsWith(nodeKey)
        && rowName.at(nodeKey.size()) == QLatin1Char('.'))
        return rowName.mid(nodeKey.size() + 1);
    return rowName;
}

int NodeRowsModel::columnOfTableColumn(const QString& tableColumnName) const
{
    if (!m_analysis || !m_analysis->table)
        return -1;
    const int c = m_analysis->table->column(tableColumnName.toStdString());
    for (std::size_t i = 0; i < m_columns.size(); ++i) {
        if (c >= 0 && m_columns[i].kind == ColumnKind::TableCell && m_columns[i].tableColumn == c)
            return static_cast<int>(i);
    }
    return -1;
}

QString NodeRowsModel::cellText(int row, int column) const
{
    if (row < 0 || column < 0 || row >= rowCount() || column >= columnCount())
        return {};
    const Row& r = m_rows[static_cast<std::size_t>(row)];
    const Column& c = m_columns[static_cast<std::size_t>(column)];
    switch (c.kind) {
    case ColumnKind::Leaf:
        return r.leaf;
    case ColumnKind::Verdict:
        return statuspalette::label(r.status);
    case ColumnKind::NpuDataFile:
        return r.npuData;
    case ColumnKind::BenchDataFile:
        return r.benchData;
    case ColumnKind::TableCell:
        break;
    }
    const auto& cells = m_analysis->table->rows[r.tableRow];
    const auto tc = static_cast<std::size_t>(c.tableColumn);
    return tc < cells.size() ? cellDisplay(cells[tc]) : QString();
}

QString NodeRowsModel::npuDataPath(int row) const
{
    const Row& r = m_rows.at(static_cast<std::size_t>(row));
    return r.npuData.isEmpty() ? QString() : QDir(r.npuDir).filePath(r.npuData);
}

QString NodeRowsModel::benchDataPath(int row) const
{
    const Row& r = m_rows.at(static_cast<std::size_t>(row));
    return r.benchData.isEmpty() ? QString() : QDir(r.benchDir).filePath(r.benchData);
}

int NodeRowsModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(m_rows.size());
}

int NodeRowsModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(m_columns.size());
}

QVariant NodeRowsModel::data(const QModelIndex& index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const Row& r = m_rows[static_cast<std::size_t>(index.row())];
    const Column& c = m_columns[static_cast<std::size_t>(index.column())];
    switch (role) {
    case Qt::DisplayRole:
        return cellText(index.row(), index.column());
    case Qt::ToolTipRole:
        switch (c.kind) {
        case ColumnKind::NpuDataFile:
            return npuDataPath(index.row());
        case ColumnKind::BenchDataFile:
            return benchDataPath(index.row());
        case ColumnKind::Verdict:
            return tr("%1 — %2").arg(statuspalette::label(r.status), c.toolTip);
        default: {
            // Long texts (Err_message, stack) are cut by the view; the tooltip shows them whole.
            const QString t = cellText(index.row(), index.column());
            return t.size() > 24 ? t : QVariant();
        }
        }
    case Qt::DecorationRole:
        if (c.kind == ColumnKind::Verdict)
            return m_icons[static_cast<std::size_t>(r.status) % m_icons.size()];
        return {};
    case Qt::BackgroundRole:
        return QBrush(statuspalette::fill(r.status, m_dark));
    case Qt::ForegroundRole:
        return QBrush(statuspalette::text(r.status, m_dark));
    case Qt::TextAlignmentRole:
        if (c.kind == ColumnKind::TableCell) {
            const auto& cell = m_analysis->table->rows[r.tableRow][static_cast<std::size_t>(c.tableColumn)];
            if (cell.isNumber())
                return QVariant::fromValue(Qt::Alignment(Qt::AlignRight | Qt::AlignVCenter));
        }
        return QVariant::fromValue(Qt::Alignment(Qt::AlignLeft | Qt::AlignVCenter));
    case Qt::FontRole:
        if (c.kind == ColumnKind::Verdict && session::isFailing(r.status)) {
            QFont f;
            f.setBold(true);
            return f;
        }
        return {};
    case TableRowRole:
        return QVariant::fromValue<qulonglong>(r.tableRow);
    case StatusRole:
        return static_cast<int>(r.status);
    case TableColumnRole:
        return c.tableColumn;
    default:
        return {};
    }
}

QVariant NodeRowsModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation == Qt::Horizontal) {
        if (section < 0 || section >= columnCount())
            return {};
        const Column& c = m_columns[static_cast<std::size_t>(section)];
        if (role == Qt::DisplayRole)
            return c.title;
        if (role == Qt::ToolTipRole)
            return c.toolTip;
        return {};
    }
    if (section < 0 || section >= rowCount())
        return {};
    if (role == Qt::DisplayRole)
        return section + 1;
    if (role == Qt::ToolTipRole)
        return tr("Row %1 of the compare table").arg(m_rows[static_cast<std::size_t>(section)].tableRow + 1);
    return {};
}

} // namespace probescope::ui
