// SPDX-License-Identifier: Apache-2.0
#include "ui/models/noderowsmodel.h"

#include "core/compare/table/flatten.h"
#include "core/compare/table/pytext.h"
#include "ui/models/statuspalette.h"

#include <QBrush>
#include <QDir>
#include <QFont>

#include <map>
#include <optional>
#include <span>
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
        if (!r.dataName().empty() && r.dataName() != "-1")
            names.emplace(r.nameText(), r.dataName());
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

namespace {

// One table column shown by the model. Titles and tooltips are marked for lupdate here and translated
// when the columns are built; a null title shows msprobe's column name as it is (metric names), a null
// tooltip shows it as the tooltip. Each QT_TRANSLATE_NOOP spells out its context and text: lupdate does not
// run the preprocessor, so a wrapper macro would hide the strings from it.
struct CellColumn
{
    const char* name;
    const char* title;
    const char* toolTip;
};

constexpr CellColumn kDtypeShape[] = {
    { "NPU Dtype", QT_TRANSLATE_NOOP("probescope::ui::NodeRowsModel", "NPU dtype"), nullptr },
    { "Bench Dtype", QT_TRANSLATE_NOOP("probescope::ui::NodeRowsModel", "Bench dtype"), nullptr },
    { "NPU Tensor Shape", QT_TRANSLATE_NOOP("probescope::ui::NodeRowsModel", "NPU shape"), nullptr },
    { "Bench Tensor Shape", QT_TRANSLATE_NOOP("probescope::ui::NodeRowsModel", "Bench shape"), nullptr },
    { "NPU Requires_grad", QT_TRANSLATE_NOOP("probescope::ui::NodeRowsModel", "NPU requires_grad"), nullptr },
    { "Bench Requires_grad", QT_TRANSLATE_NOOP("probescope::ui::NodeRowsModel", "Bench requires_grad"), nullptr },
};
constexpr CellColumn kRealData[] = {
    { "Cosine", nullptr, QT_TRANSLATE_NOOP("probescope::ui::NodeRowsModel", "Cosine similarity of the two tensors") },
    { "EucDist", nullptr, QT_TRANSLATE_NOOP("probescope::ui::NodeRowsModel", "Euclidean distance of the two tensors") },
    { "MaxAbsErr", nullptr, QT_TRANSLATE_NOOP("probescope::ui::NodeRowsModel", "Largest absolute difference") },
    { "MaxRelativeErr", nullptr, QT_TRANSLATE_NOOP("probescope::ui::NodeRowsModel", "Largest relative difference") },
    { "One Thousandth Err Ratio", QT_TRANSLATE_NOOP("probescope::ui::NodeRowsModel", "1‰ ratio"),
        QT_TRANSLATE_NOOP("probescope::ui::NodeRowsModel",
            "One Thousandth Err Ratio: share of elements whose relative error is below 0.001") },
    { "Five Thousandths Err Ratio", QT_TRANSLATE_NOOP("probescope::ui::NodeRowsModel", "5‰ ratio"),
        QT_TRANSLATE_NOOP("probescope::ui::NodeRowsModel",
            "Five Thousandths Err Ratio: share of elements whose relative error is below 0.005") },
};
constexpr CellColumn kStatistics[] = {
    { "Max diff", nullptr, nullptr },       { "Min diff", nullptr, nullptr },
    { "Mean diff", nullptr, nullptr },      { "L2norm diff", nullptr, nullptr },
    { "MaxRelativeErr", nullptr, nullptr }, { "MinRelativeErr", nullptr, nullptr },
    { "MeanRelativeErr", nullptr, nullptr }, { "NormRelativeErr", nullptr, nullptr },
};
constexpr CellColumn kMd5[] = {
    { "NPU MD5", QT_TRANSLATE_NOOP("probescope::ui::NodeRowsModel", "NPU md5"), nullptr },
    { "BENCH MD5", QT_TRANSLATE_NOOP("probescope::ui::NodeRowsModel", "Bench md5"), nullptr },
};
// Adjacent NPU/bench pairs, so the two values of one statistic sit next to each other; then the verdicts.
constexpr CellColumn kTrailing[] = {
    { "NPU max", QT_TRANSLATE_NOOP("probescope::ui::NodeRowsModel", "NPU max"), nullptr },
    { "Bench max", QT_TRANSLATE_NOOP("probescope::ui::NodeRowsModel", "Bench max"), nullptr },
    { "NPU min", QT_TRANSLATE_NOOP("probescope::ui::NodeRowsModel", "NPU min"), nullptr },
    { "Bench min", QT_TRANSLATE_NOOP("probescope::ui::NodeRowsModel", "Bench min"), nullptr },
    { "NPU mean", QT_TRANSLATE_NOOP("probescope::ui::NodeRowsModel", "NPU mean"), nullptr },
    { "Bench mean", QT_TRANSLATE_NOOP("probescope::ui::NodeRowsModel", "Bench mean"), nullptr },
    { "NPU l2norm", QT_TRANSLATE_NOOP("probescope::ui::NodeRowsModel", "NPU norm"), nullptr },
    { "Bench l2norm", QT_TRANSLATE_NOOP("probescope::ui::NodeRowsModel", "Bench norm"), nullptr },
    { "Accuracy Reached or Not", QT_TRANSLATE_NOOP("probescope::ui::NodeRowsModel", "Accuracy reached"), nullptr },
    { "Result", QT_TRANSLATE_NOOP("probescope::ui::NodeRowsModel", "Result"),
        QT_TRANSLATE_NOOP("probescope::ui::NodeRowsModel", "msprobe's Result column") },
    { "Requires_grad Consistent", QT_TRANSLATE_NOOP("probescope::ui::NodeRowsModel", "Requires_grad consistent"),
        nullptr },
    { "Err_message", QT_TRANSLATE_NOOP("probescope::ui::NodeRowsModel", "Err_message"),
        QT_TRANSLATE_NOOP("probescope::ui::NodeRowsModel", "Why msprobe flagged the row") },
};

} // namespace

void NodeRowsModel::buildColumns(const compare::CompareTable& table)
{
    auto add = [&](ColumnKind kind, int tableColumn, QString title, QString toolTip) {
        m_columns.push_back({ kind, tableColumn, std::move(title), std::move(toolTip) });
    };
    // A column is shown only when the table has it: the profile (1.2 / 26) and mode decide the set.
    auto addCells = [&](std::span<const CellColumn> columns) {
        for (const CellColumn& c : columns) {
            const int index = table.column(c.name);
            if (index >= 0)
                add(ColumnKind::TableCell, index, c.title ? tr(c.title) : QString::fromUtf8(c.name),
                    c.toolTip ? tr(c.toolTip) : QString::fromUtf8(c.name));
        }
    };
    // msprobe's order (dtype, shape, metrics, statistics, verdict, Err_message), except that the verdict
    // comes right after the leaf: the status must be readable without scrolling, never by colour alone.
    add(ColumnKind::Leaf, -1, tr("Leaf"), tr("The input, output or parameter of the node"));
    add(ColumnKind::Verdict, -1, tr("Verdict"), tr("ProbeScope's status of the row"));
    addCells(kDtypeShape);
    switch (table.mode) {
    case compare::CompareMode::RealData:
        addCells(kRealData);
        break;
    case compare::CompareMode::Summary:
        addCells(kStatistics);
        break;
    case compare::CompareMode::Md5:
        addCells(kMd5);
        break;
    }
    addCells(kTrailing);
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
        const std::string npuName = table.rows[r][0].isString() ? table.rows[r][0].asString() : std::string();
        row.leaf = leafName(QString::fromStdString(npuName), nodeKey);
        if (tensorMode) {
            if (auto it = npuNames.find(npuName); it != npuNames.end())
                row.npuData = QString::fromStdString(it->second);
            const std::optional<compare::Cell> benchCell = benchNameColumn >= 0
                ? std::optional(table.rows.cell(r, static_cast<std::size_t>(benchNameColumn)))
                : std::nullopt;
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

bool NodeRowsModel::isNpuSideColumn(int column) const
{
    if (column < 0 || static_cast<std::size_t>(column) >= m_columns.size())
        return false;
    const Column& c = m_columns[static_cast<std::size_t>(column)];
    if (c.kind == ColumnKind::Leaf || c.kind == ColumnKind::NpuDataFile)
        return true;
    if (c.kind != ColumnKind::TableCell || !m_analysis || !m_analysis->table || c.tableColumn < 0
        || static_cast<std::size_t>(c.tableColumn) >= m_analysis->table->header.size())
        return false;
    return m_analysis->table->header[static_cast<std::size_t>(c.tableColumn)].starts_with("NPU");
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

QString NodeRowsModel::msprobeWord(const QString& cell)
{
    // The words msprobe writes into "Accuracy Reached or Not" and "Result" (issue 36 item 11: they stayed English in
    // Chinese); anything else is data and shown as it is (empty: not one of them).
    // Matched as msprobe spells them, so an English window shows exactly msprobe's text.
    const QString w = cell.trimmed();
    if (w == QLatin1String("Yes"))
        return tr("Yes");
    if (w == QLatin1String("No"))
        return tr("No");
    if (w == QLatin1String("pass"))
        return tr("pass");
    if (w == QLatin1String("Warning"))
        return tr("Warning");
    if (w == QLatin1String("warning"))
        return tr("warning");
    if (w == QLatin1String("error"))
        return tr("error");
    return {};
}

QVariant NodeRowsModel::data(const QModelIndex& index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const Row& r = m_rows[static_cast<std::size_t>(index.row())];
    const Column& c = m_columns[static_cast<std::size_t>(index.column())];
    switch (role) {
    case Qt::DisplayRole: {
        const QString text = cellText(index.row(), index.column());
        if (c.kind == ColumnKind::TableCell) {
            if (const QString word = msprobeWord(text); !word.isEmpty())
                return word;
        }
        return text;
    }
    case Qt::ToolTipRole:
        if (c.kind == ColumnKind::TableCell) {
            // A translated yes/no or verdict word: msprobe's own word in the tooltip.
            const QString text = cellText(index.row(), index.column());
            if (const QString word = msprobeWord(text); !word.isEmpty() && word != text)
                return tr("msprobe: %1").arg(text);
        }
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
