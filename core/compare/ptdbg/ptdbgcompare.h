// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/compare/table/cell.h"
#include "core/compare/table/comparetable.h"
#include "core/tensor/resolver.h"
#include "core/tensor/tensor.h"
#include "core/util/diagnostic.h"

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

/// ptdbg_ascend 6.0's compare (the `ptdbg` profile), read from its source: see docs/ptdbg-compare.md.
/// It works on the .pkl rows themselves, as ptdbg did, not on the dump.json-shaped view of core/dump:
/// ptdbg's table order, matching and placeholders follow the lines of the file.
namespace probescope::compare {
class ProfileRules; // compare/seam/profilerules.h
}

namespace probescope::compare::ptdbg {

/// ptdbg's `input_param`: without both data folders the compare is statistics-only (or md5).
struct PtdbgInput
{
    std::filesystem::path npuPkl;
    std::filesystem::path benchPkl;
    std::filesystem::path npuDataDir;   ///< empty = not given
    std::filesystem::path benchDataDir; ///< empty = not given
};

struct PtdbgOptions
{
    bool stackMode = false; ///< -s: an API ends at its stack_info row, NPU_Stack_Info column
    bool fuzzy = false;     ///< -f: names match without their call index
    unsigned threads = 0;   ///< -j: rows whose .npy pairs are compared at once (0 = one per CPU); never changes results
    /// --salvage: a row that is not valid JSON or not a row is left out (with a ptdbg.row-skipped warning naming
    /// file:line) instead of refusing the pair. The compare of such a pair is partial; the CLI still exits 1.
    bool salvage = false;
    /// Each side's .npy files (tensor/resolver.h), the only way rows reach them. When null, comparePkl binds each
    /// data folder to the folder of its .pkl when it lies beside it (the usual layout), else to itself.
    std::shared_ptr<const tensor::TensorResolver> npuTensors;
    std::shared_ptr<const tensor::TensorResolver> benchTensors;
};

/// Reads ptdbg's input_param from a compare.json ({"npu_pkl_path": …, "bench_pkl_path": …, optional
/// "npu_dump_data_dir", "bench_dump_data_dir", "is_print_compare_log"}); relative paths are taken from the
/// current folder as ptdbg took them. Error ids: compare.json, compare.input.
Result<PtdbgInput> readPtdbgCompareJson(const std::filesystem::path& path);

/// Whether an input is ptdbg's (holds npu_pkl_path) rather than msprobe's compare.json.
bool isPtdbgCompareJson(const std::filesystem::path& path);

/**
 * @brief ptdbg 6.0's compare_core of one pkl pair: the table ptdbg writes to compare_result_{ts}.xlsx.
 *
 * Mode as ptdbg decides it: md5 when the NPU pkl's first row has an md5, else real data with both data
 * folders, else statistics ("summary"). Real-data rows read `{name}.npy` through each side's resolver
 * (PtdbgOptions::npuTensors): a missing file keeps ptdbg's "Dump file: PATH not found."; a file that is there
 * but damaged, or a name leaving the data folder, gives "Dump file: PATH unreadable: REASON" on its row and an
 * error diagnostic (compare.tensor-unreadable or tensor.path-escape) in CompareTable::diagnostics, which also
 * say where ProbeScope did not follow a ptdbg crash. Table colours are ptdbg's red/yellow fills.
 * Error ids: ptdbg.input (missing file), ptdbg.row (a row ptdbg rejects, with file:line), tensor.path-escape (a
 * data folder that is a link leaving the folder of its .pkl).
 */
Result<std::shared_ptr<const CompareTable>> comparePkl(const PtdbgInput& input, const PtdbgOptions& options,
                                                       ProgressSink* progress = nullptr);

/// The six cells compare_by_op gives one row (Cosine … Five Thousandths Err Ratio) and its Err_message.
struct PtdbgMetrics
{
    Cell cosine;
    Cell maxAbsErr;
    Cell maxRelativeErr;
    Cell oneThousandthErrRatio;
    Cell fiveThousandthsErrRatio;
    std::string message;
};

/// compare_by_op on two loaded .npy tensors (numpy's float32/float16 arithmetic where ptdbg had it);
/// `fuzzyNames` = the NPU and bench row names differ (adds ptdbg's fuzzy note).
PtdbgMetrics compareArrays(const tensor::Tensor& npu, const tensor::Tensor& bench, bool fuzzyNames);

/// ptdbg's check_accuracy: "Yes", "No", "Unmatched" or "Nan".
std::string checkAccuracy(const Cell& cosine, const Cell& maxAbsErr);

/// Row of the advisor's first failing line (Accuracy "No", Result "Warning" or "Different"), or -1.
long firstFailingRow(const CompareTable& table);

/// The advisor_{ts}.txt text ptdbg's Advisor writes for the table.
std::string advisorText(const CompareTable& table);

/// The NPU dump entry of each row (CompareTable::npuEntry), so the first failing node can be found on the call
/// order core/dump's legacy reader gives the pkl: the longest entry key the row name starts with, then '.' or '_'.
void placeRows(CompareTable& table, const dump::DumpFile& npu);

/// compare_distributed: the rank pairs of two step folders (rank folders sorted by name, paired in
/// order; a pkl and its .npy folder in each). `suffix` is "_rank0-rank0" as ptdbg names the results.
struct RankPair
{
    std::string suffix;
    PtdbgInput input;
};
Result<std::vector<RankPair>> distributedPairs(const std::filesystem::path& npuStepDir,
                                               const std::filesystem::path& benchStepDir);

/**
 * @brief ptdbg's parse(pkl_path, module_name_prefix): the text it prints for the rows whose name starts with
 * `prefix` — "Trace back(…)" with the frames outermost first for stack rows, "Statistic Info:" then
 * `[name][dtype: …][shape: …][max: …][min: …][mean: …]` per tensor row.
 *
 * Where ptdbg crashes on an md5 row (no statistics) the line shows `[md5: …]` instead. Error ids:
 * ptdbg.input, ptdbg.row (with file:line).
 */
Result<std::string> parsePkl(const std::filesystem::path& pkl, std::string_view prefix);

/// ptdbg_ascend 6.0 behind the profile seam (ptdbg/profile.cpp); compare/pipeline/profiles.h's rulesOf gives it.
const ProfileRules& rules();

} // namespace probescope::compare::ptdbg
