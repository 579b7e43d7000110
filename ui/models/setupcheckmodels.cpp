// SPDX-License-Identifier: Apache-2.0
#include "ui/models/setupcheckmodels.h"

#include <QApplication>
#include <QPalette>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <string_view>

namespace probescope::ui {

namespace {

using compare::XlsxSheet;
using compare::XlsxSheetCell;

int columnOf(const XlsxSheet& sheet, std::string_view name)
{
    for (std::size_t i = 0; i < sheet.header.size(); ++i) {
        if (sheet.header[i] == name)
            return static_cast<int>(i);
    }
    return -1;
}

session::Status statusOfText(std::string_view text)
{
    if (text == "error")
        return session::Status::Error;
    if (text == "warning")
        return session::Status::Warning;
    if (text == "pass")
        return session::Status::Pass;
    return session::Status::NoData;
}

bool darkPalette()
{
    return statuspalette::isDark(QApplication::palette());
}

QVariant statusDecoration(const StatusIcons& icons, session::Status status)
{
    if (status == session::Status::NoData)
        return {};
    return icons.icon(status, false, darkPalette());
}

QVariant statusBackground(session::Status status)
{
    if (status != session::Status::Error && status != session::Status::Warning)
        return {};
    return statuspalette::fill(status, darkPalette());
}

QVariant statusForeground(session::Status status)
{
    if (status != session::Status::Error && status != session::Status::Warning)
        return {};
    return statuspalette::text(status, darkPalette());
}

QString shapeText(const std::vector<std::int64_t>& shape)
{
    return QString::fromStdString(ckpt::pyTupleText(shape));
}

} // namespace

session::Status setupRowStatus(const XlsxSheet& sheet, std::size_t row)
{
    if (row >= sheet.rows.size())
        return session::Status::NoData;
    const auto& cells = sheet.rows[row];
    if (const int level = columnOf(sheet, "level"); level >= 0 && static_cast<std::size_t>(level) < cells.size())
        return statusOfText(cells[static_cast<std::size_t>(level)].text);
    for (const std::string_view name : { "equal", "check_result" }) {
        const int c = columnOf(sheet, name);
        if (c < 0 || static_cast<std::size_t>(c) >= cells.size())
            continue;
        const XlsxSheetCell& cell = cells[static_cast<std::size_t>(c)];
        // process_pass_check's test: a False (or a 0, which numpy's == also finds) fails.
        const bool failed = (cell.kind == XlsxSheetCell::Kind::Bool && !cell.boolean)
            || (cell.kind == XlsxSheetCell::Kind::Number && cell.number == 0.0);
        return failed ? session::Status::Error : session::Status::Pass;
    }
    return session::Status::NoData;
}

int likelyCauseRank(const std::string& checker)
{
    // msprobe's training guide shows many "precision problems" to be a changed learning rate, a differently
    // initialised weight or another data order; environment and packages differ between NPU and GPU machines by
    // design and are the least specific (docs/config-check.md, "In the GUI").
    static constexpr std::array<std::string_view, 6> kOrder { "hyperparameters", "weights", "dataset",
                                                              "random",          "env",     "pip" };
    const auto it = std::find(kOrder.begin(), kOrder.end(), checker);
    return static_cast<int>(it - kOrder.begin());
}

QString setupCellText(const XlsxSheetCell& cell)
{
    switch (cell.kind) {
    case XlsxSheetCell::Kind::Empty:
        return {};
    case XlsxSheetCell::Kind::Number:
        return std::isfinite(cell.number) ? QString::number(cell.number, 'g', 10) : QString();
    case XlsxSheetCell::Kind::Bool:
        return cell.boolean ? QStringLiteral("True") : QStringLiteral("False");
    case XlsxSheetCell::Kind::Text:
        break;
    }
    return QString::fromStdString(cell.text);
}

// ---- SetupSummaryModel -----------------------------------------------------------------------------------------

SetupSummaryModel::SetupSummaryModel(QObject* parent)
    : QAbstractTableModel(parent)
{
}

void SetupSummaryModel::setSheets(std::shared_ptr<const std::vector<XlsxSheet>> sheets)
{
    beginResetModel();
    m_sheets = std::move(sheets);
    m_rows.clear();
    if (m_sheets && !m_sheets->empty()) {
        const XlsxSheet& summary = m_sheets->front();
        for (const auto& cells : summary.rows) {
            if (cells.size() < 2)
                continue;
            Row row;
            row.checker = QString::fromStdString(cells[0].text);
            row.status = statusOfText(cells[1].text);
            for (std::size_t s = 1; s < m_sheets->size(); ++s) {
                if ((*m_sheets)[s].name == cells[0].text) {
                    row.sheet = static_cast<int>(s);
                    const XlsxSheet& sheet = (*m_sheets)[s];
                    row.rows = static_cast<int>(sheet.rows.size());
                    for (std::size_t r = 0; r < sheet.rows.size(); ++r)
                        row.flagged += session::isFailing(setupRowStatus(sheet, r)) ? 1 : 0;
                    break;
                }
            }
            m_rows.push_back(std::move(row));
        }
        std::stable_sort(m_rows.begin(), m_rows.end(), [](const Row& a, const Row& b) {
            if (a.status != b.status)
                return a.status > b.status; // Error > Warning > Pass in session::Status
            return likelyCauseRank(a.checker.toStdString()) < likelyCauseRank(b.checker.toStdString());
        });
    }
    endResetModel();
}

int SetupSummaryModel::sheetOfRow(int row) const
{
    return row >= 0 && row < static_cast<int>(m_rows.size()) ? m_rows[static_cast<std::size_t>(row)].sheet : -1;
}

int SetupSummaryModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(m_rows.size());
}

int SetupSummaryModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant SetupSummaryModel::data(const QModelIndex& index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const Row& row = m_rows[static_cast<std::size_t>(index.row())];
    switch (role) {
    case Qt::DisplayRole:
        switch (index.column()) {
        case CheckColumn:
            return row.checker;
        case ResultColumn:
            return row.status == session::Status::NoData ? tr("unknown") : statuspalette::label(row.status);
        case FlaggedColumn:
            return row.sheet < 0 ? QString() : tr("%1 of %2").arg(row.flagged).arg(row.rows);
        case ComparesColumn: {
            const std::string name = row.checker.toStdString();
            if (name == "env")
                return tr("environment variables (NPU names matched with their GPU counterparts)");
            if (name == "pip")
                return tr("versions of the packages training depends on");
            if (name == "hyperparameters")
                return tr("launch-script and YAML arguments (aliases and similar names matched)");
            if (name == "dataset")
                return tr("each step's and rank's input batches (statistics)");
            if (name == "weights")
                return tr("each step's and rank's weights (statistics)");
            if (name == "random")
                return tr("random calls: where they are made and how often");
            return QString();
        }
        default:
            return {};
        }
    case Qt::DecorationRole:
        return index.column() == ResultColumn ? statusDecoration(m_icons, row.status) : QVariant();
    case Qt::BackgroundRole:
        return index.column() == ResultColumn ? statusBackground(row.status) : QVariant();
    case Qt::ForegroundRole:
        return index.column() == ResultColumn ? statusForeground(row.status) : QVariant();
    case Qt::ToolTipRole:
        return row.sheet < 0 ? QVariant() : QVariant(tr("Open to see the %1 rows").arg(row.checker));
    case SetupStatusRole:
        return static_cast<int>(row.status);
    case SetupSortRole:
        return index.column() == FlaggedColumn ? QVariant(row.flagged) : data(index, Qt::DisplayRole);
    case SetupSheetRole:
        return row.sheet;
    default:
        return {};
    }
}

QVariant SetupSummaryModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, orientation, role);
    switch (section) {
    case CheckColumn:
        return tr("Check");
    case ResultColumn:
        return tr("Result");
    case FlaggedColumn:
        return tr("Rows flagged");
    case ComparesColumn:
        return tr("Compares");
    default:
        return {};
    }
}

// ---- SetupSheetModel -------------------------------------------------------------------------------------------

SetupSheetModel::SetupSheetModel(QObject* parent)
    : QAbstractTableModel(parent)
{
}

void SetupSheetModel::setSheet(std::shared_ptr<const std::vector<XlsxSheet>> sheets, int index)
{
    beginResetModel();
    m_sheets = std::move(sheets);
    m_sheet = m_sheets && index >= 0 && index < static_cast<int>(m_sheets->size())
        ? &(*m_sheets)[static_cast<std::size_t>(index)]
        : nullptr;
    m_order.clear();
    m_status.clear();
    if (m_sheet) {
        for (std::size_t r = 0; r < m_sheet->rows.size(); ++r) {
            m_order.push_back(r);
            m_status.push_back(setupRowStatus(*m_sheet, r));
        }
        const auto rank = [](session::Status s) {
            return s == session::Status::Error ? 0 : s == session::Status::Warning ? 1 : 2;
        };
        std::stable_sort(m_order.begin(), m_order.end(),
                         [&](std::size_t a, std::size_t b) { return rank(m_status[a]) < rank(m_status[b]); });
    } else {
        m_sheets.reset();
    }
    endResetModel();
}

QString SetupSheetModel::sheetName() const
{
    return m_sheet ? QString::fromStdString(m_sheet->name) : QString();
}

int SetupSheetModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(m_order.size());
}

int SetupSheetModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() || !m_sheet ? 0 : static_cast<int>(m_sheet->header.size());
}

QVariant SetupSheetModel::data(const QModelIndex& index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const std::size_t sheetRow = m_order[static_cast<std::size_t>(index.row())];
    const auto& cells = m_sheet->rows[sheetRow];
    const auto column = static_cast<std::size_t>(index.column());
    const session::Status status = m_status[sheetRow];
    static const XlsxSheetCell kEmpty;
    const XlsxSheetCell& cell = column < cells.size() ? cells[column] : kEmpty;
    switch (role) {
    case Qt::DisplayRole:
        return setupCellText(cell);
    case Qt::ToolTipRole:
        return cell.kind == XlsxSheetCell::Kind::Text && cell.text.size() > 40 ? setupCellText(cell) : QVariant();
    case Qt::DecorationRole:
        return index.column() == 0 ? statusDecoration(m_icons, status) : QVariant();
    case Qt::BackgroundRole:
        return statusBackground(status);
    case Qt::ForegroundRole:
        return statusForeground(status);
    case SetupStatusRole:
        return static_cast<int>(status);
    case SetupSortRole:
        if (cell.kind == XlsxSheetCell::Kind::Number)
            return cell.number;
        return setupCellText(cell);
    default:
        return {};
    }
}

QVariant SetupSheetModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation == Qt::Horizontal && role == Qt::DisplayRole && m_sheet && section >= 0
        && section < static_cast<int>(m_sheet->header.size()))
        return QString::fromStdString(m_sheet->header[static_cast<std::size_t>(section)]);
    return QAbstractTableModel::headerData(section, orientation, role);
}

// ---- CheckpointModel -------------------------------------------------------------------------------------------

CheckpointModel::CheckpointModel(QObject* parent)
    : QAbstractTableModel(parent)
{
}

void CheckpointModel::setComparison(std::shared_ptr<const ckpt::CheckpointComparison> comparison)
{
    beginResetModel();
    m_comparison = std::move(comparison);
    endResetModel();
}

int CheckpointModel::rowCount(const QModelIndex& parent) const
{
    if (parent.isValid() || !m_comparison)
        return 0;
    return static_cast<int>(m_comparison->params.size() + m_comparison->onlyInFirst.size()
                            + m_comparison->onlyInSecond.size());
}

int CheckpointModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

session::Status CheckpointModel::statusOf(int row) const
{
    const auto r = static_cast<std::size_t>(row);
    if (r >= m_comparison->params.size())
        return session::Status::Error;
    const ckpt::ParamMetrics& p = m_comparison->params[r];
    if (!p.sameShape || !p.l2)
        return session::Status::Error;
    return *p.l2 > 0 ? session::Status::Warning : session::Status::Pass;
}

QVariant CheckpointModel::data(const QModelIndex& index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const auto r = static_cast<std::size_t>(index.row());
    const auto& params = m_comparison->params;
    const session::Status status = statusOf(index.row());
    switch (role) {
    case SetupStatusRole:
        return static_cast<int>(status);
    case Qt::DecorationRole:
        return index.column() == NameColumn ? statusDecoration(m_icons, status) : QVariant();
    case Qt::BackgroundRole:
        return statusBackground(status);
    case Qt::ForegroundRole:
        return statusForeground(status);
    default:
        break;
    }
    if (r >= params.size()) {
        // A parameter one checkpoint lacks: the name and which side has it.
        const bool first = r - params.size() < m_comparison->onlyInFirst.size();
        const std::string& name = first ? m_comparison->onlyInFirst[r - params.size()]
                                        : m_comparison->onlyInSecond[r - params.size() - m_comparison->onlyInFirst.size()];
        switch (role) {
        case Qt::DisplayRole:
            if (index.column() == NameColumn)
                return QString::fromStdString(name);
            if (index.column() == ShapeColumn)
                return first ? tr("only in the first checkpoint") : tr("only in the second checkpoint");
            return QString();
        case SetupSortRole:
            if (index.column() == NameColumn || index.column() == ShapeColumn)
                return data(index, Qt::DisplayRole);
            // The worst value of each column: below every cos, above every l2.
            return index.column() == L2Column ? std::numeric_limits<double>::infinity()
                                              : -std::numeric_limits<double>::infinity();
        default:
            return {};
        }
    }
    const ckpt::ParamMetrics& p = params[r];
    const auto optionalText = [](const std::optional<double>& v) {
        return v ? QString::number(*v, 'g', 10) : QStringLiteral("None");
    };
    switch (role) {
    case Qt::DisplayRole:
        switch (index.column()) {
        case NameColumn:
            return QString::fromStdString(p.name);
        case CosColumn:
            return optionalText(p.cos);
        case L2Column:
            return optionalText(p.l2);
        case NumelColumn:
            return p.numel1 == p.numel2 ? QString::number(p.numel1)
                                        : QStringLiteral("%1 / %2").arg(p.numel1).arg(p.numel2);
        case ShapeColumn:
            return p.sameShape ? shapeText(p.shape1) : QStringLiteral("%1 / %2").arg(shapeText(p.shape1), shapeText(p.shape2));
        default:
            return {};
        }
    case Qt::TextAlignmentRole:
        return index.column() == NameColumn || index.column() == ShapeColumn
            ? QVariant()
            : QVariant(Qt::AlignRight | Qt::AlignVCenter);
    case SetupSortRole:
        switch (index.column()) {
        case CosColumn:
            return p.cos ? *p.cos : -std::numeric_limits<double>::infinity();
        case L2Column:
            // Missing l2 (shapes differ) is the worst: it sorts where the largest distances are.
            return p.l2 ? *p.l2 : std::numeric_limits<double>::infinity();
        case NumelColumn:
            return static_cast<qlonglong>(p.numel1);
        default:
            return data(index, Qt::DisplayRole);
        }
    default:
        return {};
    }
}

QVariant CheckpointModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, orientation, role);
    switch (section) {
    case NameColumn:
        return tr("Parameter");
    case CosColumn:
        return tr("cos");
    case L2Column:
        return tr("l2");
    case NumelColumn:
        return tr("numel");
    case ShapeColumn:
        return tr("shape");
    default:
        return {};
    }
}

} // namespace probescope::ui
