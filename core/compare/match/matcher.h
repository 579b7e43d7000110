// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/compare/table/flatten.h"

#include <cstdint>
#include <string>
#include <vector>

namespace probescope::compare {

/// One step of the match result, in output order: an NPU op alone (unmatched) or paired with a bench op.
struct MatchStep
{
    std::uint32_t npu = 0;   ///< index into the NPU op list
    std::int64_t bench = -1; ///< index into the bench op list, -1 = unmatched
};

struct MatchOutcome
{
    std::vector<MatchStep> steps;
    bool stoppedEarly = false;      ///< msprobe's loop stopped with one queue empty; later NPU ops are lost
    std::uint32_t npuOpsLost = 0;   ///< NPU ops never emitted because of that stop
};

/// msprobe 1.2.2 fuzzy reduction of a row name (compare-spec §3.3 [A] rename_api).
std::string fuzzyReduce(std::string_view name, std::string_view word);
bool fuzzyEqual(std::string_view a, std::string_view b);

/// Whether two ops match (A.4: names exact or fuzzy, and structs; `md5`: md5 mode, where the md5 is part of them).
bool opsMatch(const Op& npu, const Op& bench, bool fuzzy, bool md5);

/// --match-file's pairs for the walk (indices into the op lists, -1 = none): a manually matched op matches its
/// partner and nothing else, whatever names and structs say.
struct ManualPairing
{
    std::vector<std::int64_t> benchOf; ///< per NPU op
    std::vector<std::int64_t> npuOf;   ///< per bench op
};

/**
 * @brief Pairs NPU and bench ops as msprobe 1.2.2 does: both lists walked by position into two queues,
 * match points searched newest-first (compare-spec Appendix A.4). `npu`/`bench` hold one op per entry in
 * file order; entries without rows are given as std::nullopt so the walk stays in lock-step. `manual` changes which
 * ops match, never how the walk goes, so the ops around a manual pair are matched as msprobe matches them.
 */
MatchOutcome matchOps(const std::vector<const Op*>& npu, const std::vector<const Op*>& bench, bool fuzzy, bool md5,
                      const ManualPairing* manual = nullptr);

} // namespace probescope::compare
