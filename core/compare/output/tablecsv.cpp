// SPDX-License-Identifier: Apache-2.0
// msprobe 1.2.2's CSV of a table (its xlsx's cells as a CSV; docs/compare.md): the msprobe 1.2 and ptdbg profiles
// write it.
#include "core/compare/output/tablecsv.h"

#include "core/compare/table/pytext.h"
#include "core/util/csv.h"

#include <algorithm>
#include <array>

namespace probescope::compare {

namespace {

/// A text cell as appendExcelText + formulaGuard (String only) + appendCsvField write it, without a copy.
void appendTextCell(std::string& out, std::string_view text, bool guarded)
{
    if (text.size() <= 4 && isPyNonFiniteText(text)) {
        // "inf", "-inf", "nan" get a TAB (appendExcelText); "-inf\t" is then guarded as a formula.
        std::array<char, 8> tabbed {};
        std::copy(text.begin(), text.end(), tabbed.begin());
        tabbed[text.size()] = '\t';
        const std::string_view cell(tabbed.data(), text.size() + 1);
        if (guarded)
            out += formulaGuard(cell);
        out += cell;
        return;
    }
    const unsigned scan = csvScan(text);
    std::string_view guard;
    if (guarded && ((scan & kCsvSemicolon) || (!text.empty() && formulaTriggerLead(text.front()))))
        guard = formulaGuard(text);
    if (scan & kCsvNeedsQuotes) {
        appendCsvQuoted(out, guard, text);
    } else {
        out += guard;
        out += text;
    }
}

} // namespace

bool writeTableCsv(const CompareTable& table, const TextSink& sink)
{
    return streamCsvBlocks(table.header, table.rows.size(), sink,
                           [&table](CsvStream& csv, std::size_t begin, std::size_t end) {
                               for (std::size_t r = begin; r < end; ++r) {
                                   const std::size_t n = table.rows.rowSize(r);
                                   for (std::size_t c = 0; c < n; ++c) {
                                       const CellView cell = table.rows.view(r, c);
                                       std::string& out = csv.rawField();
                                       if (cell.kind == CellKind::String || cell.kind == CellKind::PyText)
                                           appendTextCell(out, cell.text, cell.kind == CellKind::String);
                                       else
                                           appendExcelText(out, cell); // None, True/False, numbers: never quoted
                                   }
                                   csv.endRecord();
                               }
                           });
}

std::string tableCsv(const CompareTable& table)
{
    return collectText([&](const TextSink& sink) { return writeTableCsv(table, sink); });
}

} // namespace probescope::compare
