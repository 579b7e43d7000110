// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/compare/table/cell.h"
#include "core/compare/table/comparetable.h"

#include <string_view>
#include <vector>

// ptdbg 6.0's matching and highlight rules, shared by the files of the ptdbg profile (internal header).
namespace probescope::compare::ptdbg {

/// fuzzy_check_name: names match once the call index ("….0.") before forward/backward is removed.
bool fuzzyNameMatch(std::string_view npu, std::string_view bench);

/// find_error_rows over rows [start, start + count): basic rule (overflow) on every row, then output rows
/// against input rows (`inputs` first rows) with the statistics or the real-data rules. Sets colours.
void findErrorRows(const std::vector<std::vector<Cell>>& rows, std::vector<RowColor>& colors, std::size_t start,
                   std::size_t count, std::size_t inputs, bool summaryCompare);

/// find_compare_result_error_rows: groups real-data rows by API as ptdbg does and runs findErrorRows.
void findCompareResultErrorRows(const std::vector<std::vector<Cell>>& rows, std::vector<RowColor>& colors);

} // namespace probescope::compare::ptdbg
