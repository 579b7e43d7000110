// SPDX-License-Identifier: Apache-2.0
// msprobe 26 compare, the output side: cells as pandas prints them and the table as msprobe's CSV text.
#include "core/compare/msprobe26/msprobe26.h"

#include "core/compare/output/csvwriter.h"
#include "core/compare/table/pytext.h"
#include "core/util/pytext.h"

#include <array>
#include <charconv>
#include <cmath>

namespace probescope::compare::msprobe26 {

std::string jsonStringList(const std::vector<std::string>& items)
{
    // json.dumps(list): ", " between items, each str as Python spells it.
    std::string out = "[";
    for (std::size_t i = 0; i < items.size(); ++i) {
        if (i)
            out += ", ";
        appendPyJsonString(out, items[i]);
    }
    out += ']';
    return out;
}

void appendCellText(std::string& out, const CellView& cell)
{
    switch (cell.kind) {
    case CellKind::None: return;
    case CellKind::Bool: out += cell.boolean ? "True" : "False"; return;
    case CellKind::Int: {
        std::array<char, 24> digits {};
        out.append(digits.data(), std::to_chars(digits.data(), digits.data() + digits.size(), cell.integer).ptr);
        return;
    }
    case CellKind::Float:
        if (std::isnan(cell.number))
            return;
        if (std::isinf(cell.number))
            out += cell.number > 0 ? " inf" : " -inf";
        else
            appendPyFloatRepr(out, cell.number);
        return;
    case CellKind::String:
    case CellKind::PyText: out += cell.text; return;
    }
}

std::string cellText(const Cell& cell)
{
    std::string out;
    appendCellText(out, viewOf(cell));
    return out;
}

bool writeTableCsv(const CompareTable& table, const TextSink& sink)
{
    return streamCsvRows(table.header, table.rows.size(), sink, [&table](CsvStream& csv, std::size_t r) {
        const std::size_t n = table.rows.rowSize(r);
        for (std::size_t c = 0; c < n; ++c) {
            const CellView cell = table.rows.view(r, c);
            if (cell.kind == CellKind::String || cell.kind == CellKind::PyText)
                csv.field(cell.text);
            else
                appendCellText(csv.rawField(), cell); // numbers, bools, None: never quoted
        }
        csv.endRecord();
    });
}

std::string tableCsv(const CompareTable& table)
{
    return collectText([&](const TextSink& sink) { return writeTableCsv(table, sink); });
}

} // namespace probescope::compare::msprobe26
