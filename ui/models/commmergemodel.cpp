// SPDX-License-Identifier: Apache-2.0
#include "ui/models/commmergemodel.h"

#include "core/compare/msprobe26/commmerge.h"
#include "core/compare/msprobe26/mergeresult.h"
#include "ui/models/rankoverviewmodel.h"
#include "ui/models/setupcheckmodels.h"

#include <algorithm>

namespace probescope::ui {

CommMergeModel::CommMergeModel(RankOverviewModel* source, QObject* parent)
    : QAbstractTableModel(parent)
    , m_source(source)
{
    m_timer.setSingleShot(true);
    m_timer.setInterval(kRebuildMs);
    connect(&m_timer, &QTimer::timeout, this, &CommMergeModel::rebuild);
    const auto later = [this] {
        if (!m_timer.isActive())
            m_timer.start();
    };
    connect(source, &QAbstractItemModel::dataChanged, this, later);
    connect(source, &QAbstractItemModel::modelReset, this, [this] {
        m_stepSet = false;
        rebuild();
    });
    rebuild();
}

void CommMergeModel::setStep(std::int64_t step)
{
    m_step = step;
    m_stepSet = true;
    rebuild();
}

void CommMergeModel::setMetric(int index)
{
    if (index == m_metric)
        return;
    beginResetModel();
    m_metric = index;
    endResetModel();
}

QStringList CommMergeModel::metrics() const
{
    QStringList out;
    for (const auto& sheet : m_sheets)
        out << QString::fromStdString(sheet.name);
    return out;
}

void CommMergeModel::rebuild()
{
    m_timer.stop();
    const auto& steps = m_source->steps();
    if (!m_stepSet || std::find(steps.begin(), steps.end(), m_step) == steps.end())
        m_step = steps.empty() ? 0 : steps.front();
    std::vector<compare::msprobe26::RankCommInput> ranks;
    m_ranksDone = 0;
    m_ranksTotal = 0;
    const auto column = std::find(steps.begin(), steps.end(), m_step);
    if (column != steps.end()) {
        const int gridColumn = static_cast<int>(column - steps.begin());
        for (int gridRow = 0; gridRow < m_source->gridRows(); ++gridRow) {
            const int pair = m_source->pairAt(gridRow, gridColumn);
            if (pair < 0)
                continue;
            ++m_ranksTotal;
            const session::PairSummary* summary = m_source->summary(static_cast<std::size_t>(pair));
            if (!summary || !summary->comm)
                continue;
            ++m_ranksDone;
            const long long rank = summary->failure.rank >= 0 ? summary->failure.rank : gridRow;
            ranks.push_back({ rank, summary->comm });
        }
    }
    beginResetModel();
    m_notes.clear();
    m_sheets = compare::msprobe26::mergeCommRows(ranks, compare::msprobe26::MergeConfig {}, m_notes);
    if (m_metric >= static_cast<int>(m_sheets.size()))
        m_metric = 0;
    endResetModel();
    emit rebuilt();
}

int CommMergeModel::rowCount(const QModelIndex& parent) const
{
    if (parent.isValid() || m_metric >= static_cast<int>(m_sheets.size()))
        return 0;
    return static_cast<int>(m_sheets[static_cast<std::size_t>(m_metric)].rows.size());
}

int CommMergeModel::columnCount(const QModelIndex& parent) const
{
    if (parent.isValid() || m_metric >= static_cast<int>(m_sheets.size()))
        return 0;
    return static_cast<int>(m_sheets[static_cast<std::size_t>(m_metric)].header.size());
}

QVariant CommMergeModel::data(const QModelIndex& index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const auto& sheet = m_sheets[static_cast<std::size_t>(m_metric)];
    const auto& row = sheet.rows[static_cast<std::size_t>(index.row())];
    const auto c = static_cast<std::size_t>(index.column());
    static const compare::XlsxSheetCell kEmpty;
    const compare::XlsxSheetCell& cell = c < row.size() ? row[c] : kEmpty;
    // msprobe 26 keeps some statistics diffs as texts of their repr digits: shown and sorted as the numbers they are
    // (10 significant digits, as every table of the window; the tooltip has the text whole).
    bool numericText = false;
    const double textValue = cell.kind == compare::XlsxSheetCell::Kind::Text
        ? QString::fromStdString(cell.text).toDouble(&numericText)
        : 0.0;
    switch (role) {
    case Qt::DisplayRole:
        return numericText ? QString::number(textValue, 'g', 10) : setupCellText(cell);
    case Qt::ToolTipRole:
        return setupCellText(cell);
    case Qt::TextAlignmentRole:
        return index.column() == 0 ? QVariant() : QVariant(Qt::AlignRight | Qt::AlignVCenter);
    case SortRole:
        if (cell.kind == compare::XlsxSheetCell::Kind::Number)
            return cell.number;
        return numericText ? QVariant(textValue) : QVariant(setupCellText(cell));
    default:
        return {};
    }
}

QVariant CommMergeModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation == Qt::Horizontal && role == Qt::DisplayRole && m_metric < static_cast<int>(m_sheets.size())) {
        const auto& header = m_sheets[static_cast<std::size_t>(m_metric)].header;
        if (section >= 0 && section < static_cast<int>(header.size()))
            return section == 0 ? tr("Communication op") : QString::fromStdString(header[static_cast<std::size_t>(section)]);
    }
    return QAbstractTableModel::headerData(section, orientation, role);
}

} // namespace probescope::ui
