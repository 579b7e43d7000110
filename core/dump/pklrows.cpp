// SPDX-License-Identifier: Apache-2.0
#include "core/dump/pklrows.h"

namespace probescope::dump {

void forEachPklLine(std::string_view text, const std::string& file, const PklRowVisitor& row,
                    const PklProblemVisitor& problem)
{
    PklLine line;
    const auto at = [&](std::uint64_t offset) {
        return SourceLocation { file, offset, line.number, static_cast<std::uint32_t>(offset - line.start + 1) };
    };
    const auto say = [&](std::string id, std::uint64_t offset, std::string message, bool cut = false,
                         bool rowKept = false) {
        return problem(PklLineProblem { makeError(std::move(id), at(offset), std::move(message)), cut, rowKept }, line);
    };
    std::size_t pos = 0;
    while (pos < text.size()) {
        ++line.number;
        line.start = pos;
        const std::size_t newline = text.find('\n', pos);
        line.last = newline == std::string_view::npos;
        line.text = text.substr(pos, line.last ? std::string_view::npos : newline - pos);
        pos = line.last ? text.size() : newline + 1;
        if (!line.text.empty() && line.text.back() == '\r')
            line.text.remove_suffix(1);
        const std::size_t first = line.text.find_first_not_of(" \t");
        if (first == std::string_view::npos)
            continue;
        // Rows are arrays; a line starting like a number is refused before parsing (the JSON parser once recursed
        // without end on a bare number as the root). Other non-arrays are told apart after parsing.
        if (line.text[first] == '-' || (line.text[first] >= '0' && line.text[first] <= '9')) {
            if (say("pkl.row", line.start + first, "expected a JSON array (one row of the dump)") == PklVisit::Stop)
                return;
            continue;
        }
        JsonParseOptions options;
        options.maxDepth = kMaxPklRowDepth;
        auto parsed = JsonDocument::parse(line.text, file, options);
        if (!parsed.document) {
            const Diagnostic& d = parsed.diagnostics.front();
            const std::uint64_t offset = line.start + d.location.offset.value_or(0);
            // A cut only happens at the end of the file; inside the file the same failure is a broken row.
            const bool cut = parsed.truncated && line.last;
            const std::string message = cut ? "the file ends inside this row"
                : parsed.truncated          ? "not a JSON row: the row ends before its closing ']'"
                                            : "not a JSON row: " + d.message;
            if (say(cut ? "pkl.truncated" : "pkl.syntax", cut ? line.start + line.text.size() : offset, message, cut)
                == PklVisit::Stop)
                return;
            continue;
        }
        bool stop = false;
        for (const Diagnostic& d : parsed.diagnostics) {
            if (d.id == "json.utf8" && !stop) // the row is kept; its broken text is named
                stop = say("pkl.utf8", line.start + d.location.offset.value_or(0), d.message, false, true)
                    == PklVisit::Stop;
        }
        if (stop)
            return;
        const JsonValue root = parsed.document->root();
        if (!root.isArray()) {
            if (say("pkl.row", line.start + root.offset(), "expected a JSON array (one row of the dump)")
                == PklVisit::Stop)
                return;
            continue;
        }
        if (root.size() == 0 || !root.at(0).isString() || root.at(0).asString().empty()) {
            if (say("pkl.row", line.start + (root.size() == 0 ? root.offset() : root.at(0).offset()),
                    "a row must start with the tensor or API name")
                == PklVisit::Stop)
                return;
            continue;
        }
        if (row(root, line) == PklVisit::Stop)
            return;
    }
}

} // namespace probescope::dump
