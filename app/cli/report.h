// SPDX-License-Identifier: Apache-2.0
#pragma once
// What probescope-cli prints about a compared table, the same for every profile's compare command.

#include "core/compare/comparetable.h"

#include <cstddef>
#include <string>

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

} // namespace probescope::cli
