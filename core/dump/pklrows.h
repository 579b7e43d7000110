// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/dump/jsondocument.h"
#include "core/util/diagnostic.h"

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace probescope::dump {

/// One line of a ptdbg_ascend .pkl, as the format's one grammar splits the file.
struct PklLine
{
    std::string_view text;    ///< the line without its line break (and without a '\r' before it)
    std::uint32_t number = 0; ///< 1-based
    std::uint64_t start = 0;  ///< byte offset of the line in the file
    bool last = false;        ///< no line break follows: the end of the file
};

/// Whether a visit goes on.
enum class PklVisit : std::uint8_t { Continue, Stop };

/// What the grammar found wrong with a line (`pkl.row`, `pkl.syntax`, `pkl.utf8`), or that the last line was cut.
struct PklLineProblem
{
    Diagnostic diagnostic; ///< an error at file:line:col (offset set)
    bool cut = false;      ///< the last line ends inside its row (the file was cut short)
    bool rowKept = false;  ///< the row is still given to the row visitor after this (`pkl.utf8`)
};

using PklRowVisitor = std::function<PklVisit(JsonValue row, const PklLine& line)>;
using PklProblemVisitor = std::function<PklVisit(const PklLineProblem& problem, const PklLine& line)>;

/**
 * @brief The one grammar of a .pkl's lines (docs/legacy-pkl.md), shared by the load step (readLegacyPkl) and the
 * ptdbg profile's compare and `parse`, so that no reader takes a line another refuses.
 *
 * Lines end at '\n' (a '\r' before it is dropped); blank lines are skipped; every other line is one JSON array,
 * at most 64 levels deep, whose first element is a non-empty string (the row's name). `row` gets each row (its
 * document lives for the call), in file order; `problem` gets each line that is not a row (`pkl.row`,
 * `pkl.syntax`), the last line when it ends inside its row (`cut`) and invalid UTF-8 inside a row (`pkl.utf8`,
 * then the row itself). Either visitor stops the walk by returning PklVisit::Stop. Linear in the text.
 */
void forEachPklLine(std::string_view text, const std::string& file, const PklRowVisitor& row,
                    const PklProblemVisitor& problem);

/// The rows' maximum JSON nesting (a row is a flat list of a few levels; this bounds a hostile one).
inline constexpr std::uint32_t kMaxPklRowDepth = 64;

} // namespace probescope::dump
