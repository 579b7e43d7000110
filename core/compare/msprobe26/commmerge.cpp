// SPDX-License-Identifier: Apache-2.0
#include "core/compare/msprobe26/commmerge.h"

#include "core/compare/msprobe26/mergeresult.h"
#include "core/compare/table/pytext.h"

#include <algorithm>
#include <map>

namespace probescope::compare::msprobe26 {

namespace {

constexpr std::string_view kRequiresGrad = "Requires_grad Consistent";
constexpr std::string_view kDistributed = "Distributed.";

/// str() of a cell as msprobe's replacement text `NPU:{str(npu_max)}` shows it.
std::string pyStrOf(const Cell& cell)
{
    if (cell.isNone())
        return "None";
    if (cell.isBool())
        return std::get<bool>(cell.value) ? "True" : "False";
    if (cell.isInt())
        return std::to_string(std::get<std::int64_t>(cell.value));
    if (cell.isFloat())
        return pyFloatRepr(std::get<double>(cell.value));
    if (cell.isString())
        return cell.asString();
    return std::get<Cell::PyText>(cell.value).text;
}

XlsxSheetCell sheetCell(const Cell& cell)
{
    if (cell.isBool())
        return XlsxSheetCell::ofBool(std::get<bool>(cell.value));
    const XlsxCell x = xlsxCell(cell);
    if (x.numeric)
        return XlsxSheetCell::ofNumber(x.number);
    if (x.text.empty())
        return {};
    return XlsxSheetCell::ofText(x.text);
}

std::string apiOf(const std::string& name)
{
    const std::size_t start = kDistributed.size();
    const std::size_t dot = name.find('.', start);
    return name.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
}

} // namespace

XlsxSheetCell RankCommRows::value(std::size_t row, std::size_t index) const
{
    const std::size_t at = row * indexes.size() + index;
    if (at >= m_kinds.size())
        return {};
    switch (m_kinds[at]) {
    case XlsxSheetCell::Kind::Number:
        return XlsxSheetCell::ofNumber(m_numbers[at]);
    case XlsxSheetCell::Kind::Bool:
        return XlsxSheetCell::ofBool(m_numbers[at] != 0.0);
    case XlsxSheetCell::Kind::Text: {
        const auto it = std::lower_bound(m_texts.begin(), m_texts.end(), at,
                                         [](const auto& entry, std::size_t pos) { return entry.first < pos; });
        return it != m_texts.end() && it->first == at ? XlsxSheetCell::ofText(it->second) : XlsxSheetCell {};
    }
    case XlsxSheetCell::Kind::Empty:
        break;
    }
    return {};
}

void RankCommRows::append(const XlsxSheetCell& cell)
{
    if (cell.kind == XlsxSheetCell::Kind::Text)
        m_texts.emplace_back(m_kinds.size(), cell.text);
    m_kinds.push_back(cell.kind);
    m_numbers.push_back(cell.kind == XlsxSheetCell::Kind::Bool ? (cell.boolean ? 1.0 : 0.0) : cell.number);
}

std::shared_ptr<const RankCommRows> extractCommRows(const CompareTable& table)
{
    auto out = std::make_shared<RankCommRows>();
    if (table.mode == CompareMode::Md5) {
        out->unsupported = "an md5 compare does not support merging";
        return out;
    }
    const auto& wanted = table.mode == CompareMode::RealData ? tensorMergeIndexes() : statisticsMergeIndexes();
    std::vector<int> columns;
    for (const auto& index : wanted) {
        if (const int c = table.column(index); c >= 0) {
            out->indexes.push_back(index);
            columns.push_back(c);
        }
    }
    if (const int c = table.column(kRequiresGrad); c >= 0) {
        out->indexes.emplace_back(kRequiresGrad);
        columns.push_back(c);
    }
    const int nameColumn = table.column("NPU Name");
    const int npuMax = table.column("NPU max");
    const int benchMax = table.column("Bench max");
    if (nameColumn < 0)
        return out;
    std::map<std::string, bool, std::less<>> seen;
    for (std::size_t r = 0; r < table.rows.size(); ++r) {
        const Cell nameCell = table.rows.cell(r, static_cast<std::size_t>(nameColumn));
        if (!nameCell.isString() || nameCell.asString().rfind(kDistributed, 0) != 0)
            continue;
        // The first row of a name gives its values (merge_result reads result_df.index[...][0]).
        if (!seen.emplace(nameCell.asString(), true).second)
            continue;
        for (const int c : columns) {
            const Cell v = table.rows.cell(r, static_cast<std::size_t>(c));
            // replace_compare_index_dict: N/A, unsupported and Nan become the two maxima.
            if (v.isString() && (v.asString() == "N/A" || v.asString() == "unsupported" || v.asString() == "Nan")
                && npuMax >= 0 && benchMax >= 0) {
                out->append(XlsxSheetCell::ofText(
                    "NPU:" + pyStrOf(table.rows.cell(r, static_cast<std::size_t>(npuMax)))
                    + "  Bench:" + pyStrOf(table.rows.cell(r, static_cast<std::size_t>(benchMax)))));
            } else {
                out->append(sheetCell(v));
            }
        }
        out->names.push_back(nameCell.asString());
    }
    return out;
}

std::vector<std::string> commApis(const RankCommRows& rows)
{
    std::vector<std::string> apis;
    for (const auto& name : rows.names) {
        std::string api = apiOf(name);
        if (std::find(apis.begin(), apis.end(), api) == apis.end())
            apis.push_back(std::move(api));
    }
    return apis;
}

std::vector<XlsxSheet> mergeCommRows(const std::vector<RankCommInput>& ranks, const MergeConfig& config,
                                     std::vector<std::string>& notes)
{
    std::vector<std::string> apis = config.apis;
    if (apis.empty()) {
        for (const auto& input : ranks) {
            if (!input.rows)
                continue;
            for (auto& api : commApis(*input.rows)) {
                if (std::find(apis.begin(), apis.end(), api) == apis.end())
                    apis.push_back(std::move(api));
            }
        }
    }
    std::vector<std::string> indexes = config.indexes;
    struct Column
    {
        long long rank;
        const RankCommRows* rows;
        std::vector<std::size_t> order;    ///< rows of the wanted APIs, API by API
        std::vector<int> indexColumn;      ///< per sheet index: the rank's column, -1 absent
    };
    std::vector<Column> columns;
    for (const auto& input : ranks) {
        const std::string rankName = "rank" + std::to_string(input.rank);
        if (!input.rows || !input.rows->unsupported.empty()) {
            notes.push_back(rankName + ": " + (input.rows ? input.rows->unsupported : std::string("no compare result"))
                            + "; not shown");
            continue;
        }
        if (indexes.empty())
            indexes = input.rows->indexes;
        Column column { input.rank, input.rows.get(), {}, {} };
        for (const auto& index : indexes) {
            const auto it = std::find(input.rows->indexes.begin(), input.rows->indexes.end(), index);
            column.indexColumn.push_back(it == input.rows->indexes.end()
                                             ? -1
                                             : static_cast<int>(it - input.rows->indexes.begin()));
        }
        for (const auto& api : apis) {
            const std::string needle = api + ".";
            const std::size_t before = column.order.size();
            for (std::size_t r = 0; r < input.rows->names.size(); ++r) {
                if (input.rows->names[r].find(needle) != std::string::npos)
                    column.order.push_back(r);
            }
            if (column.order.size() == before)
                notes.push_back(api + " not found in " + rankName + " compare result.");
        }
        columns.push_back(std::move(column));
    }
    std::vector<XlsxSheet> sheets;
    for (std::size_t k = 0; k < indexes.size(); ++k) {
        XlsxSheet sheet { indexes[k], { "NPU Name" }, {} };
        std::vector<std::string> names;
        std::map<std::string, std::size_t, std::less<>> rowOf;
        for (const auto& column : columns) {
            sheet.header.push_back("rank" + std::to_string(column.rank));
            for (const std::size_t r : column.order) {
                if (rowOf.emplace(column.rows->names[r], names.size()).second)
                    names.push_back(column.rows->names[r]);
            }
        }
        sheet.rows.assign(names.size(), std::vector<XlsxSheetCell>(columns.size() + 1));
        for (std::size_t r = 0; r < names.size(); ++r)
            sheet.rows[r][0] = XlsxSheetCell::ofText(names[r]);
        for (std::size_t c = 0; c < columns.size(); ++c) {
            const int at = columns[c].indexColumn[k];
            if (at < 0)
                continue;
            for (const std::size_t r : columns[c].order)
                sheet.rows[rowOf[columns[c].rows->names[r]]][c + 1] = columns[c].rows->value(r, static_cast<std::size_t>(at));
        }
        sheets.push_back(std::move(sheet));
    }
    return sheets;
}

} // namespace probescope::compare::msprobe26
