// SPDX-License-Identifier: Apache-2.0
#pragma once
// What probescope-cli prints about a compared table, the same for every profile's compare command.

#include "core/compare/pipeline/comparerun.h"
#include "core/compare/table/comparetable.h"

#include <cstddef>
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

namespace probescope::cli {

/// "rows: N (U without bench data), highlighted: R red, Y yellow".
inline std::string rowSummary(const compare::CompareTable& table)
{
    std::size_t red = 0;
    std::size_t yellow = 0;
    std::size_t unmatched = 0;
    for (std::size_t i = 0; i < table.rows.size(); ++i) {
        red += table.colors[i] == compare::RowColor::Red;
        yellow += table.colors[i] == compare::RowColor::Yellow;
        unmatched += !table.matched[i];
    }
    return "rows: " + std::to_string(table.rows.size()) + " (" + std::to_string(unmatched)
        + " without bench data), highlighted: " + std::to_string(red) + " red, " + std::to_string(yellow) + " yellow";
}

/**
 * @brief The load step's findings of one compared pair, the same for every profile (issue 20, 25): the diagnostics
 * on stderr; "not compared: …" when the pair was refused (then returns true: nothing more to print), else one
 * "SALVAGED, the result is partial: …" line per loss. `refusedText` says what was damaged and how to go on.
 * `Pair` is a pipeline or ptdbg pair result (inputDiagnostics, refused, salvaged).
 */
template<typename Pair>
bool printLoadFindings(const Pair& pair, std::string_view refusedText)
{
    for (const Diagnostic& d : pair.inputDiagnostics)
        std::cerr << d.format() << "\n";
    if (pair.refused) {
        std::cout << "  not compared: " << refusedText << "\n";
        return true;
    }
    for (const std::string& loss : pair.salvaged)
        std::cout << "  SALVAGED, the result is partial: " << loss << "\n";
    return false;
}

/// "first diverging rank pair: rankN-rankM (key)" after the pairs of a directory run, every profile: the pair whose
/// culprit ran earliest in its own rank (compare::firstDivergingPair); nothing for one pair or when none fails.
inline void printFirstDivergingPair(const std::vector<compare::PairResult>& results)
{
    if (results.size() <= 1)
        return;
    const long pair = compare::firstDivergingPair(results);
    if (pair >= 0)
        std::cout << "first diverging rank pair: " << results[pair].suffix.substr(1) << " ("
                  << results[pair].firstFailure.key << ")\n";
}

} // namespace probescope::cli
