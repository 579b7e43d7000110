// SPDX-License-Identifier: Apache-2.0
#pragma once
// merge_result without a file step (issue 35 item 4): the whole-job view's table of communication ops × ranks, per
// metric, made from the compare tables the job already holds in memory instead of from the per-rank workbooks. Each
// rank's table is reduced to its communication rows as soon as it is compared (extractCommRows: a few hundred
// cells), so the job keeps no compare table alive; mergeCommRows then lays the ranks side by side as
// mergeCompareResults does (docs/config-check.md, "merge_result in the job view").

#include "core/compare/table/comparetable.h"
#include "core/compare/output/xlsxwriter.h"

#include <memory>
#include <string>
#include <vector>

namespace probescope::compare::msprobe26 {

struct MergeConfig;

/// One rank's communication rows, reduced from its compare table. Immutable once made. Kept compact (9 bytes a
/// cell, texts apart), since the overview holds one per pair of a job.
struct RankCommRows
{
    std::vector<std::string> indexes; ///< merge_result's indexes the table has, in msprobe's order
    std::vector<std::string> names;   ///< NPU Name of each `Distributed.*` row (first row of a name)
    std::string unsupported;          ///< why this rank cannot be merged (md5 mode), else empty

    /// The value at a row and an index (N/A cells as "NPU:<max>  Bench:<max>").
    XlsxSheetCell value(std::size_t row, std::size_t index) const;
    /// Appends the next value, row by row, index by index.
    void append(const XlsxSheetCell& cell);

private:
    std::vector<double> m_numbers;                           ///< Number; Bool as 0/1
    std::vector<XlsxSheetCell::Kind> m_kinds;
    std::vector<std::pair<std::size_t, std::string>> m_texts; ///< (flat position, text) of the Text cells, in order
};

/// The communication rows of `table` (NPU Name starting with "Distributed."), with merge_result's indexes of the
/// table's mode: Cosine ... Five Thousandths Err Ratio for tensors, Max diff ... NormRelativeErr for statistics
/// (those the header has), then Requires_grad Consistent when present. An md5 table is not merged (as msprobe).
std::shared_ptr<const RankCommRows> extractCommRows(const CompareTable& table);

/// The communication APIs of the rows ("all_reduce" of "Distributed.all_reduce.0.forward.input.0"), in the order
/// they first appear.
std::vector<std::string> commApis(const RankCommRows& rows);

struct RankCommInput
{
    long long rank = 0;
    std::shared_ptr<const RankCommRows> rows;
};

/**
 * @brief One sheet per index (header "NPU Name", "rank<N>"...): the rows of `config.apis` (every API found when
 * empty), API by API, each rank's rows in its own order and a later rank's new names appended, as merge_result lays
 * them out. `config.indexes` empty = every index of the first mergeable rank. Ranks are taken in the order given.
 */
std::vector<XlsxSheet> mergeCommRows(const std::vector<RankCommInput>& ranks, const MergeConfig& config,
                                     std::vector<std::string>& notes);

} // namespace probescope::compare::msprobe26
