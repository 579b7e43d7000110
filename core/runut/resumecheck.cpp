// SPDX-License-Identifier: Apache-2.0
#include "core/runut/resumecheck.h"

#include "core/runut/csvio.h"
#include "core/util/fileio.h"
#include "core/util/textposition.h"

namespace probescope::runut {

std::optional<Diagnostic> checkResumableCsv(const std::filesystem::path& path, std::size_t minCells)
{
    auto text = readTextFile(path);
    if (!text)
        return text.error();
    const std::string& t = *text;
    if (!t.empty() && t.back() != '\n') {
        const std::size_t lineStart = t.rfind('\n') == std::string::npos ? 0 : t.rfind('\n') + 1;
        SourceLocation where = locate(t, lineStart, path.string());
        return makeError("runut.resume-malformed", where,
                         "the last line is cut short (it has no line end): the run that wrote this file stopped "
                         "mid-line. Nothing is appended to it; delete the partial line "
                             + std::to_string(where.line) + " to resume, or start a new run without -csv_path");
    }
    auto table = parseCsvText(t, path.string());
    if (!table)
        return table.error();
    for (const CsvRow& row : table->rows) {
        if (row.cells.size() < minCells)
            return makeError("runut.resume-malformed", SourceLocation { path.string(), std::nullopt, row.line, 1 },
                             "the row has " + std::to_string(row.cells.size()) + " cells, fewer than the "
                                 + std::to_string(minCells) + " a run_ut row has; nothing is appended to this file");
    }
    return std::nullopt;
}

} // namespace probescope::runut
