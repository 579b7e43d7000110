// SPDX-License-Identifier: Apache-2.0
#include "ui/models/freebenchmodel.h"

#include <cmath>
#include <limits>

namespace probescope::ui {

namespace {

QString toQ(const std::string& s) { return QString::fromStdString(s); }

// Python prints floats with repr; 'g' with 6 digits is what a table needs (the tooltip has the file:line).
QString number(double v)
{
    if (std::isinf(v))
        return v > 0 ? QStringLiteral("inf") : QStringLiteral("-inf");
    if (std::isnan(v))
        return QStringLiteral("nan");
    return QString::number(v, 'g', 6);
}

bool isNumeric(int column)
{
    switch (column) {
    case FreeBenchmarkModel::StepColumn:
    case FreeBenchmarkModel::RankColumn:
    case FreeBenchmarkModel::MaxRelColumn:
    case FreeBenchmarkModel::ThresholdColumn:
    case FreeBenchmarkModel::ExcessColumn:
    case FreeBenchmarkModel::OutputIndexColumn:
        return true;
    default:
        return false;
    }
}

} // namespace

FreeBenchmarkModel::FreeBenchmarkModel(QObject* parent)
    : QAbstractTableModel(parent)
{
}

FreeBenchmarkModel::~FreeBenchmarkModel() = default;

void FreeBenchmarkModel::setTable(std::shared_ptr<const probescope::freebench::FreeBenchTable> table)
{
    beginResetModel();
    m_table = std::move(table);
    endResetModel();
}

void FreeBenchmarkModel::clear() { setTable(nullptr); }

const probescope::freebench::FreeBenchRow* FreeBenchmarkModel::rowAt(int row) const
{
    if (!m_table || row < 0 || static_cast<std::size_t>(row) >= m_table->rows.size())
        return nullptr;
    return &m_table->rows[static_cast<std::size_t>(row)];
}

int FreeBenchmarkModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() || !m_table ? 0 : static_cast<int>(m_table->rows.size());
}

int FreeBenchmarkModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QString FreeBenchmarkModel::maxRelText(const probescope::freebench::FreeBenchRow& row)
{
    switch (row.maxRelKind) {
    case probescope::freebench::MaxRelKind::Number:
        return number(row.maxRel);
    case probescope::freebench::MaxRelKind::SymbolFlipping:
        return QStringLiteral("symbol_flipping");
    case probescope::freebench::MaxRelKind::Empty:
        break;
    }
    return {};
}

QString FreeBenchmarkModel::excessText(const probescope::freebench::FreeBenchRow& row)
{
    if (row.maxRelKind == probescope::freebench::MaxRelKind::SymbolFlipping)
        return tr("sign flip");
    const double e = probescope::freebench::freeBenchExcess(row);
    if (std::isnan(e))
        return {};
    return QStringLiteral("×") + QString::number(e, 'g', 3);
}

double FreeBenchmarkModel::sortKey(const probescope::freebench::FreeBenchRow& row, int column)
{
    switch (column) {
    case StepColumn: return static_cast<double>(row.step);
    case RankColumn: return static_cast<double>(row.rank);
    case MaxRelColumn:
        // Larger is worse: a sign flip above every ratio, rows without max_rel below every one.
        return row.maxRelKind == probescope::freebench::MaxRelKind::Number ? row.maxRel
            : row.maxRelKind == probescope::freebench::MaxRelKind::SymbolFlipping ? std::numeric_limits<double>::infinity()
                                                                                 : -1.0;
    case ThresholdColumn: return probescope::freebench::freeBenchThreshold(row.dtype, row.pertMode);
    case ExcessColumn: {
        const double e = probescope::freebench::freeBenchExcess(row);
        return std::isnan(e) ? -1.0 : e;
    }
    case OutputIndexColumn: return row.outputIndex ? static_cast<double>(*row.outputIndex) : -1.0;
    default: return std::numeric_limits<double>::quiet_NaN(); // not numeric
    }
}

QVariant FreeBenchmarkModel::data(const QModelIndex& index, int role) const
{
    const probescope::freebench::FreeBenchRow* row = index.isValid() ? rowAt(index.row()) : nullptr;
    if (!row || index.column() < 0 || index.column() >= ColumnCount)
        return {};
    const int column = index.column();
    switch (role) {
    case Qt::DisplayRole:
        switch (column) {
        case StepColumn: return QString::number(row->step);
        case RankColumn: return QString::number(row->rank);
        case ApiColumn: return toQ(row->apiName);
        case StageColumn: return toQ(row->stage);
        case PertModeColumn: return toQ(row->pertMode);
        case MaxRelColumn: return maxRelText(*row);
        case ThresholdColumn: return number(probescope::freebench::freeBenchThreshold(row->dtype, row->pertMode));
        case ExcessColumn: return excessText(*row);
        case DtypeColumn: return toQ(row->dtype);
        case ShapeColumn: return toQ(row->shape);
        case OutputIndexColumn: return row->outputIndex ? QString::number(*row->outputIndex) : QString();
        }
        break;
    case SortRole:
        if (isNumeric(column))
            return sortKey(*row, column);
        return data(index, Qt::DisplayRole);
    case Qt::TextAlignmentRole:
        return QVariant::fromValue(isNumeric(column) ? Qt::AlignRight | Qt::AlignVCenter : Qt::AlignLeft | Qt::AlignVCenter);
    case Qt::ToolTipRole: {
        QString tip = tr("%1:%2").arg(toQ(m_table->files[row->file].string())).arg(row->line);
        if (row->maxRelKind == probescope::freebench::MaxRelKind::SymbolFlipping)
            tip += QLatin1Char('\n') + tr("The perturbed output has the opposite sign of the original somewhere.");
        else if (row->maxRelKind == probescope::freebench::MaxRelKind::Empty)
            tip += QLatin1Char('\n') + tr("No max_rel: a to_cpu check or an integer output, judged without a ratio.");
        return tip;
    }
    case RowIndexRole: return index.row();
    case ApiNameRole: return toQ(row->apiName);
    case StepRole: return static_cast<qint64>(row->step);
    case RankRole: return static_cast<qint64>(row->rank);
    default: break;
    }
    return {};
}

QVariant FreeBenchmarkModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal)
        return QAbstractTableModel::headerData(section, orientation, role);
    if (role == Qt::ToolTipRole) {
        switch (section) {
        case MaxRelColumn: return tr("Largest relative change of the output under perturbation (ratio − 1)");
        case ThresholdColumn: return tr("The dtype's relative-error threshold: float16 0.002, bfloat16 0.004, others 0.0002; no_change 0");
        case ExcessColumn: return tr("max_rel divided by the threshold");
        default: return {};
        }
    }
    if (role != Qt::DisplayRole)
        return {};
    switch (section) {
    case StepColumn: return tr("Step");
    case RankColumn: return tr("Rank");
    case ApiColumn: return tr("API");
    case StageColumn: return tr("Stage");
    case PertModeColumn: return tr("Perturbation");
    case MaxRelColumn: return QStringLiteral("max_rel");
    case ThresholdColumn: return tr("Threshold");
    case ExcessColumn: return tr("Over threshold");
    case DtypeColumn: return tr("dtype");
    case ShapeColumn: return tr("Shape");
    case OutputIndexColumn: return tr("Output index");
    }
    return {};
}

QHash<int, QByteArray> FreeBenchmarkModel::roleNames() const
{
    auto names = QAbstractTableModel::roleNames();
    names.insert(SortRole, "sort");
    names.insert(RowIndexRole, "rowIndex");
    names.insert(ApiNameRole, "apiName");
    names.insert(StepRole, "step");
    names.insert(RankRole, "rank");
    return names;
}

} // namespace probescope::ui

namespace probescope::ui {

FreeBenchmarkProxy::FreeBenchmarkProxy(QObject* parent)
    : QSortFilterProxyModel(parent)
{
    setSortRole(FreeBenchmarkModel::SortRole);
    setFilterKeyColumn(FreeBenchmarkModel::ApiColumn);
    setFilterCaseSensitivity(Qt::CaseInsensitive);
}

bool FreeBenchmarkProxy::lessThan(const QModelIndex& left, const QModelIndex& right) const
{
    const auto* model = qobject_cast<const FreeBenchmarkModel*>(sourceModel());
    const probescope::freebench::FreeBenchRow* a = model ? model->rowAt(left.row()) : nullptr;
    const probescope::freebench::FreeBenchRow* b = model ? model->rowAt(right.row()) : nullptr;
    if (!a || !b)
        return QSortFilterProxyModel::lessThan(left, right);
    const int column = left.column();
    switch (column) {
    case FreeBenchmarkModel::ApiColumn: return a->apiName < b->apiName;
    case FreeBenchmarkModel::StageColumn: return a->stage < b->stage;
    case FreeBenchmarkModel::PertModeColumn: return a->pertMode < b->pertMode;
    case FreeBenchmarkModel::DtypeColumn: return a->dtype < b->dtype;
    case FreeBenchmarkModel::ShapeColumn: return a->shape < b->shape;
    default: return FreeBenchmarkModel::sortKey(*a, column) < FreeBenchmarkModel::sortKey(*b, column);
    }
}

} // namespace probescope::ui
