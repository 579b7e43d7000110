// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/compare/output/csvwriter.h"
#include "core/compare/table/comparetable.h"

#include <string>

namespace probescope::compare {

/// The CSV text of a table (msprobe's xlsx as a CSV: see docs/compare.md).
std::string tableCsv(const CompareTable& table);
/// tableCsv streamed to a sink (compare/output/csvwriter.h); false if the sink failed.
bool writeTableCsv(const CompareTable& table, const TextSink& sink);

} // namespace probescope::compare
