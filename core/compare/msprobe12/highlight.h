// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/compare/table/comparetable.h"

#include <string>

namespace probescope::compare {

/// msprobe 1.2.2's red/yellow rules (compare-spec Appendix A.9): sets table.colors and appends the
/// messages to Err_message. No effect in md5 mode.
void applyHighlight(CompareTable& table);

/// The advisor file text (A.10): "Line: …\nSuspect Nodes: …\nExpert Advice: …\n".
std::string advisorText(const CompareTable& table);

/// Index of the first failing row as msprobe's advisor finds it, or -1.
long firstFailingRow(const CompareTable& table);

} // namespace probescope::compare
