// SPDX-License-Identifier: Apache-2.0
#pragma once
// msprobe 26's `merge_result -i DIR -o OUT -config merge.yaml` (core/compare/merge_result): the per-rank compare
// workbooks `compare_result_rank{N}_{ts}.xlsx` of a job merged into one workbook, one sheet per compare index, a row
// per communication API entry (the `api` list of the config) and a column per rank. The rules and the decisions
// where msprobe's behaviour depends on the machine are in docs/config-check.md ("merge_result").

#include "core/compare/output/xlsxwriter.h"
#include "core/util/diagnostic.h"

#include <filesystem>
#include <string>
#include <vector>

namespace probescope::compare::msprobe26 {

struct MergeConfig
{
    std::vector<std::string> apis;         ///< `api`: names such as all_reduce (matched as "<api>." inside NPU Name)
    std::vector<std::string> indexes;      ///< `compare_index`: empty = every index of the dump mode
};

/// merge_result's compare indexes of a real-data ("all") compare and of a statistics ("summary") compare, in msprobe's
/// order (without Requires_grad Consistent, which both add).
const std::vector<std::string>& tensorMergeIndexes();
const std::vector<std::string>& statisticsMergeIndexes();

/// Reads and checks merge.yaml as check_config does (id `merge.config`).
Result<MergeConfig> loadMergeConfig(const std::filesystem::path& path);

struct MergeOutcome
{
    std::vector<std::filesystem::path> files; ///< the workbook, then one CSV per sheet
    std::vector<std::string> notes;           ///< msprobe's warnings ("all_gather not found in rank2 compare result.")
};

/// The merged sheets of the compare workbooks in `inputDir` (ids `merge.*`; errors name the file).
Result<std::vector<XlsxSheet>> mergeCompareResults(const std::filesystem::path& inputDir, const MergeConfig& config,
                                                   std::vector<std::string>& notes);

/// The whole command: `outDir` is created when missing; `multi_ranks_compare_merge_{timestamp}.xlsx` (a taken name
/// gets `_1`, `_2`, ...: nothing is replaced) and its sheet CSVs are written there.
Result<MergeOutcome> mergeResult(const std::filesystem::path& inputDir, const std::filesystem::path& outDir,
                                 const std::filesystem::path& configPath);

} // namespace probescope::compare::msprobe26
