// SPDX-License-Identifier: Apache-2.0
// ptdbg's parse(): one API's rows of a .pkl, printed as ptdbg printed them.
#include "core/compare/ptdbg/ptdbgcompare.h"

#include "core/compare/table/pytext.h"
#include "core/dump/jsondocument.h"
#include "core/dump/pklrows.h"
#include "core/util/fileio.h"

namespace probescope::compare::ptdbg {

namespace {

SourceLocation lineAt(const std::filesystem::path& file, std::uint32_t line, std::uint32_t column = 1)
{
    return SourceLocation { file.string(), std::nullopt, line, column };
}

/// str.format's "{}" of an element: Python's str().
std::string str(std::optional<dump::JsonValue> v)
{
    return v ? pyStr(*v) : std::string("None");
}

} // namespace

Result<std::string> parsePkl(const std::filesystem::path& pkl, std::string_view prefix)
{
    auto file = MappedFile::open(pkl, maxJsonFileBytes());
    if (!file)
        return makeError("ptdbg.input", fileLocation(pkl),
                         "cannot read the .pkl: " + file.error().message);
    std::string out;
    bool titlePrinted = false;
    std::optional<Diagnostic> failure;
    const auto fail = [&](Diagnostic d) {
        d.id = "ptdbg.row";
        failure = std::move(d);
        return dump::PklVisit::Stop;
    };
    // The load step's grammar of the lines (dump::forEachPklLine), as the ptdbg compare reads them (issue 33).
    dump::forEachPklLine(
        (*file)->text(), pkl.string(),
        [&](dump::JsonValue row, const dump::PklLine& line) {
            const std::uint32_t lineNumber = line.number;
            const std::string_view name = row.at(0).asString();
            if (name.substr(0, prefix.size()) != prefix)
                return dump::PklVisit::Continue;
            if (name.find("stack_info") != std::string_view::npos) {
                out += "\nTrace back(" + std::string(name) + "):\n";
                if (row.size() < 2 || !row.at(1).isArray())
                    return fail(makeError("ptdbg.row", lineAt(pkl, lineNumber), "a stack row must be [name, [frames]]"));
                const dump::JsonValue frames = row.at(1);
                for (std::uint32_t i = frames.size(); i-- > 0;) {
                    const dump::JsonValue f = frames.at(i);
                    auto part = [&](std::uint32_t k) -> std::optional<dump::JsonValue> {
                        if (f.isArray() && k < f.size())
                            return f.at(k);
                        return std::nullopt;
                    };
                    out += "  File \"" + str(part(0)) + "\", line " + str(part(1)) + ", in " + str(part(2)) + "\n";
                    out += "    " + str(part(3)) + "\n";
                }
                return dump::PklVisit::Continue;
            }
            if (row.size() > 5) {
                const dump::JsonValue s = row.at(5);
                auto stat = [&](std::uint32_t k) -> std::optional<dump::JsonValue> {
                    if (s.isArray() && k < s.size())
                        return s.at(k);
                    return std::nullopt;
                };
                std::string info = "  [" + std::string(name) + "][dtype: " + pyStr(row.at(3)) + "][shape: " + pyStr(row.at(4))
                    + "]";
                if (!stat(0) && row.at(2).isString() && !row.at(2).asString().empty())
                    info += "[md5: " + std::string(row.at(2).asString()) + "]";
                else
                    info += "[max: " + str(stat(0)) + "][min: " + str(stat(1)) + "][mean: " + str(stat(2)) + "]";
                if (!titlePrinted) {
                    out += "\nStatistic Info:\n";
                    titlePrinted = true;
                }
                out += info + "\n";
            }
            return dump::PklVisit::Continue;
        },
        [&](const dump::PklLineProblem& found, const dump::PklLine&) {
            return found.rowKept ? dump::PklVisit::Continue : fail(found.diagnostic);
        });
    if (failure)
        return *failure;
    return out;
}

} // namespace probescope::compare::ptdbg
