// SPDX-License-Identifier: Apache-2.0
#include "core/dump/loadreport.h"

namespace probescope::dump {

std::string LoadReport::salvageText() const
{
    if (clean())
        return {};
    std::string text = file.string() + ": ";
    if (truncated)
        text += "cut after " + std::to_string(fileBytes) + " bytes; " + std::to_string(entriesRead)
            + " entries read, the rest of the file is lost";
    else
        text += std::to_string(entriesRead) + " entries read";
    const std::size_t others = errors - (truncated ? 1 : 0);
    if (others > 0)
        text += (truncated ? "; " : " despite ") + std::to_string(others) + " error"
            + (others == 1 ? "" : "s") + " (the entries named may hold wrong or missing values)";
    return text;
}

LoadReport loadReport(const RankDump& rank)
{
    LoadReport report;
    report.file = rank.dump ? rank.dump->path : rank.location.dumpFile.path();
    if (rank.dump) {
        report.truncated = rank.dump->truncated;
        report.fileBytes = rank.dump->fileBytes;
        report.entriesRead = rank.dump->entries.size();
    }
    report.diagnostics = rank.diagnostics;
    for (const Diagnostic& d : rank.diagnostics) {
        report.errors += d.severity == Severity::Error;
        report.warnings += d.severity == Severity::Warning;
    }
    return report;
}

} // namespace probescope::dump
