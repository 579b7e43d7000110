// SPDX-License-Identifier: Apache-2.0
#include "ui/models/trendgridmodel.h"

#include <QColor>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <tuple>

namespace probescope::ui {

namespace {

const std::vector<std::uint32_t> kNoRows;

QString number(double x)
{
    return QString::number(x, 'g', 6);
}

} // namespace

TrendGridModel::TrendGridModel(QObject* parent)
    : QAbstractTableModel(parent)
{
}

TrendGridModel::Index TrendGridModel::indexOf(const graph::TrendTable& table)
{
    Index index;
    index.rows.resize(table.targets.size() * table.metrics.size());
    for (std::size_t i = 0; i < table.values.size(); ++i) {
        const graph::TrendValue& v = table.values[i];
        if (v.target < table.targets.size() && v.metric < table.metrics.size())
            index.rows[std::size_t(v.target) * table.metrics.size() + v.metric].push_back(static_cast<std::uint32_t>(i));
    }
    return index;
}

void TrendGridModel::setTables(std::shared_ptr<const graph::TrendTable> npu, std::shared_ptr<const graph::TrendTable> bench)
{
    beginResetModel();
    m_npu = std::move(npu);
    m_npuIndex = m_npu ? indexOf(*m_npu) : Index {};
    m_bench = std::move(bench);
    m_benchIndex = m_bench ? indexOf(*m_bench) : Index {};
    m_sliced = false;
    m_cells.clear();
    m_benchCells.clear();
    m_present.clear();
    endResetModel();
}

void TrendGridModel::setBench(std::shared_ptr<const graph::TrendTable> bench)
{
    m_bench = std::move(bench);
    m_benchIndex = m_bench ? indexOf(*m_bench) : Index {};
    fill();
    if (rowCount() > 0 && columnCount() > 0)
        emit dataChanged(index(0, 0), index(rowCount() - 1, columnCount() - 1));
}

bool TrendGridModel::setSlice(std::uint32_t target, std::uint32_t metric, std::size_t statistic)
{
    const bool ok = m_npu && target < m_npu->targets.size() && metric < m_npu->metrics.size()
        && statistic < m_npu->statistics.size();
    m_target = target;
    m_metric = metric;
    m_statistic = statistic;
    m_sliced = ok;
    fill();
    // Rows and columns are the table's steps and ranks whatever the slice: the cells change, never the shape.
    if (rowCount() > 0 && columnCount() > 0)
        emit dataChanged(index(0, 0), index(rowCount() - 1, columnCount() - 1));
    return ok;
}

void TrendGridModel::fill()
{
    const std::size_t rows = m_npu ? m_npu->steps.size() : 0;
    const std::size_t columns = m_npu ? m_npu->ranks.size() : 0;
    m_cells.assign(rows * columns, std::nullopt);
    m_benchCells.assign(rows * columns, std::nullopt);
    m_present.assign(rows * columns, false);
    m_lo = std::numeric_limits<double>::infinity();
    m_hi = -m_lo;
    if (!m_sliced)
        return;
    const auto place = [&](const graph::TrendTable& table, const graph::TrendValue& v) -> std::optional<std::size_t> {
        (void)table;
        const int r = rowOfStep(v.step);
        const int c = columnOfRank(v.rank);
        if (r < 0 || c < 0)
            return std::nullopt;
        return std::size_t(r) * columns + std::size_t(c);
    };
    for (const std::uint32_t i : rowsOf(m_target, m_metric)) {
        const graph::TrendValue& v = m_npu->values[i];
        const auto at = place(*m_npu, v);
        if (!at)
            continue;
        m_present[*at] = true;
        m_cells[*at] = m_npu->stat(i, m_statistic);
        if (m_cells[*at] && std::isfinite(*m_cells[*at])) {
            m_lo = std::min(m_lo, *m_cells[*at]);
            m_hi = std::max(m_hi, *m_cells[*at]);
        }
    }
    if (!m_bench)
        return;
    // The bench run's slot of the same names.
    const graph::TrendTarget& t = m_npu->targets[m_target];
    std::optional<std::uint32_t> target;
    for (std::size_t i = 0; i < m_bench->targets.size() && !target; ++i) {
        const graph::TrendTarget& b = m_bench->targets[i];
        if (b.name == t.name && b.vppStage == t.vppStage && b.microStep == t.microStep)
            target = static_cast<std::uint32_t>(i);
    }
    const auto metric = std::find(m_bench->metrics.begin(), m_bench->metrics.end(), m_npu->metrics[m_metric]);
    const auto statistic = m_bench->statisticIndex(m_npu->statistics[m_statistic]);
    if (!target || metric == m_bench->metrics.end() || !statistic)
        return;
    const auto metricIndex = static_cast<std::size_t>(metric - m_bench->metrics.begin());
    for (const std::uint32_t i : m_benchIndex.rows[std::size_t(*target) * m_bench->metrics.size() + metricIndex]) {
        if (const auto at = place(*m_bench, m_bench->values[i]))
            m_benchCells[*at] = m_bench->stat(i, *statistic);
    }
}

const std::vector<std::uint32_t>& TrendGridModel::rowsOf(std::uint32_t target, std::uint32_t metric) const
{
    if (!m_npu || target >= m_npu->targets.size() || metric >= m_npu->metrics.size())
        return kNoRows;
    return m_npuIndex.rows[std::size_t(target) * m_npu->metrics.size() + metric];
}

int TrendGridModel::rowOfStep(std::int64_t step) const
{
    if (!m_npu)
        return -1;
    const auto it = std::lower_bound(m_npu->steps.begin(), m_npu->steps.end(), step);
    return it != m_npu->steps.end() && *it == step ? static_cast<int>(it - m_npu->steps.begin()) : -1;
}

int TrendGridModel::columnOfRank(std::int64_t rank) const
{
    if (!m_npu)
        return -1;
    const auto it = std::lower_bound(m_npu->ranks.begin(), m_npu->ranks.end(), rank);
    return it != m_npu->ranks.end() && *it == rank ? static_cast<int>(it - m_npu->ranks.begin()) : -1;
}

std::optional<double> TrendGridModel::value(int row, int column) const
{
    if (row < 0 || column < 0 || row >= rowCount() || column >= columnCount())
        return std::nullopt;
    return m_cells[std::size_t(row) * std::size_t(columnCount()) + std::size_t(column)];
}

std::optional<double> TrendGridModel::benchValue(int row, int column) const
{
    if (row < 0 || column < 0 || row >= rowCount() || column >= columnCount())
        return std::nullopt;
    return m_benchCells[std::size_t(row) * std::size_t(columnCount()) + std::size_t(column)];
}

std::vector<std::optional<double>> TrendGridModel::column(int column, bool bench) const
{
    std::vector<std::optional<double>> out;
    if (column < 0 || column >= columnCount())
        return out;
    out.reserve(std::size_t(rowCount()));
    for (int r = 0; r < rowCount(); ++r)
        out.push_back(bench ? benchValue(r, column) : value(r, column));
    return out;
}

int TrendGridModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() || !m_npu ? 0 : static_cast<int>(m_npu->steps.size());
}

int TrendGridModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() || !m_npu ? 0 : static_cast<int>(m_npu->ranks.size());
}

QVariant TrendGridModel::data(const QModelIndex& index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const std::size_t at = std::size_t(index.row()) * std::size_t(columnCount()) + std::size_t(index.column());
    const bool present = at < m_present.size() && m_present[at];
    // Plain values beside the flags: GCC 12 takes optional<double> reads below for uninitialised.
    const bool hasX = present && m_cells[at].has_value();
    const double xv = hasX ? *m_cells[at] : 0.0;
    const bool hasB = at < m_benchCells.size() && m_benchCells[at].has_value();
    const double bv = hasB ? *m_benchCells[at] : 0.0;
    switch (role) {
    case Qt::DisplayRole:
        if (!present)
            return QString();
        return hasX ? number(xv) : tr("None");
    case Qt::TextAlignmentRole:
        return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
    case ValueRole:
        return hasX ? QVariant(xv) : QVariant();
    case BenchValueRole:
        return hasB ? QVariant(bv) : QVariant();
    case PresentRole:
        return present;
    case Qt::ForegroundRole:
        return present ? QVariant(QColor(Qt::black)) : QVariant();
    case Qt::BackgroundRole: {
        if (!hasX)
            return {};
        if (!std::isfinite(xv))
            return QColor(0xFF, 0x70, 0x4D); // msprobe's error colour for a non-finite value
        double f = 0;
        if (m_bench) {
            // Against the bench run: the relative difference, full orange from 1 % on; no bench value: white.
            if (!hasB)
                return {};
            if (!std::isfinite(bv))
                return QColor(0xFF, 0x70, 0x4D);
            const double scale = std::max(std::fabs(bv), 1e-12);
            f = std::min(1.0, std::fabs(xv - bv) / scale / 0.01);
        } else {
            // White to msprobe's warning orange: the largest value of the slot stands out.
            f = m_hi > m_lo ? (xv - m_lo) / (m_hi - m_lo) : 0.0;
        }
        return QColor::fromRgbF(1.0f, static_cast<float>(1.0 - 0.25 * f), static_cast<float>(1.0 - 0.6 * f));
    }
    case Qt::ToolTipRole: {
        if (!present)
            return tr("not in the db for this step and rank");
        QString text = tr("step %1, rank %2: %3")
                           .arg(m_npu->steps[std::size_t(index.row())])
                           .arg(m_npu->ranks[std::size_t(index.column())])
                           .arg(hasX ? number(xv) : tr("None"));
        if (m_bench) {
            text += QLatin1Char('\n') + tr("bench run: %1").arg(hasB ? number(bv) : tr("none"));
            if (hasX && hasB && std::isfinite(xv) && std::isfinite(bv) && bv != 0)
                text += QLatin1Char('\n') + tr("relative difference: %1").arg(number((xv - bv) / std::fabs(bv)));
        }
        return text;
    }
    default:
        return {};
    }
}

QVariant TrendGridModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (role != Qt::DisplayRole || !m_npu || section < 0)
        return QAbstractTableModel::headerData(section, orientation, role);
    if (orientation == Qt::Vertical && std::size_t(section) < m_npu->steps.size())
        return tr("step %1").arg(m_npu->steps[std::size_t(section)]);
    if (orientation == Qt::Horizontal && std::size_t(section) < m_npu->ranks.size())
        return tr("rank %1").arg(m_npu->ranks[std::size_t(section)]);
    return {};
}

void TrendGridModel::retranslate()
{
    if (rowCount() > 0)
        emit headerDataChanged(Qt::Vertical, 0, rowCount() - 1);
    if (columnCount() > 0)
        emit headerDataChanged(Qt::Horizontal, 0, columnCount() - 1);
}

} // namespace probescope::ui
