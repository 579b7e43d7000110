// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/compare/table/cell.h"
#include "core/compare/table/comparetable.h"
#include "core/compare/output/csvwriter.h"
#include "core/dump/dumpfile.h"
#include "core/tensor/tensor.h"
#include "core/util/diagnostic.h"
#include "core/util/workgroup.h"

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

/**
 * The msprobe 26.0.0 ("Era C") output profile: the CSV `msprobe compare -tp … -gp …` writes,
 * cell for cell (compare-spec main text; docs/msprobe26-profile.md lists every decision).
 */
namespace probescope::tensor {
class TensorResolver;
}

namespace probescope::compare {
class ProfileRules; // compare/seam/profilerules.h
}

namespace probescope::compare::msprobe26 {

/// Column names of an Era C table (compare-spec §4.1).
std::vector<std::string> headerFor(CompareMode mode, bool stackMode);

/// Era C mode detection (§2.6): md5 is looked for only one level below each entry field.
Result<CompareMode> detectMode(const dump::DumpFile& npu, const dump::DumpFile& bench);

/**
 * @brief Compares two dump files the way msprobe 26.0.0 does.
 *
 * options.fuzzy selects the -fm queue matching; options.stackMode/options.stack add NPU_Stack_Info
 * (msprobe 26 turns it on whenever the NPU folder holds a stack.json: the caller decides). options.mappings
 * gives the -am/-cm/-dm keys of the NPU rows (§3.6); a data mapping also turns the dtype test off.
 * Colors are all None (Era C never highlights). npuEntry holds the NPU entry index of each row, which
 * is also the group the indicator checkers work on.
 */
Result<std::shared_ptr<const CompareTable>> compareDumps(const dump::DumpFile& npu, const dump::DumpFile& bench,
                                                           const CompareOptions& options,
                                                           ProgressSink* progress = nullptr);

/// What msprobe 26's -da table holds per row beyond the CSV columns (diff-analyze spec §3.1).
struct DaRow
{
    std::string state;     ///< input / output / parameters / parameters_grad (kwargs are input)
    std::string apiOrigin; ///< the dump.json key of the row's entry (api_origin_name)
    std::optional<std::vector<std::string>> stack; ///< the entry's stack.json frames, on its first row only
    Cell npuP2pOp;    ///< a P2POp leaf's op/peer, else the text "None"
    Cell benchP2pOp;  ///< positionally misaligned as in msprobe: bench parse row i, NaN past the end
    Cell npuP2pPeer;
    Cell benchP2pPeer;
};

/// The table -da writes per rank: the statistics or md5 table (tensor dumps compared as statistics) with
/// -da's Result/Err_message rules, and rows[i] beside table->rows[i].
struct DaTable
{
    std::shared_ptr<const CompareTable> table;
    std::vector<msprobe26::DaRow> rows;
};

/// msprobe 26's compare with first_diff_analyze=True (no checkers; see docs/msprobe26-da.md).
Result<DaTable> compareDumpsForDiffAnalyze(const dump::DumpFile& npu, const dump::DumpFile& bench,
                                               const CompareOptions& options);

/// The row names msprobe 26 makes of one entry, in its order (inputs, parameters, outputs, parameters_grad);
/// empty when the entry cannot be flattened. layer_mapping pairs rows by these names.
std::vector<std::string> rowNames(const dump::Entry& entry);

/// The six real-data metric cells of Era C (Cosine, EucDist, MaxAbsErr, MaxRelativeErr, the two ratios).
struct RealDataMetrics
{
    Cell cosine;
    Cell eucDist;
    Cell maxAbsErr;
    Cell maxRelativeErr;
    Cell oneThousandthErrRatio;
    Cell fiveThousandthsErrRatio;
};

/// Era C validation chain + metrics (§5.2-5.4) on two loaded tensors (squeezed inside).
RealDataMetrics compareTensors(const tensor::Tensor& npu, const tensor::Tensor& bench);
/// compareTensors with the metric kernels' work spread by `splitter` (same result for any thread count).
RealDataMetrics compareTensors(const tensor::Tensor& npu, const tensor::Tensor& bench, Splitter& splitter);

/// What one row's tensor pair gives: its six cells, and when a file is there but cannot be read, the row's
/// Err_message ("Dump file: NAME unreadable: REASON"; the run then fails).
struct TensorFilesOutcome
{
    RealDataMetrics metrics;
    std::string unreadable;
};

/**
 * @brief compareTensors on the two files a row names, read through each side's resolver: .pt files are
 * streamed (small ones read whole into per-thread buffers, large ones a chunk at a time with pread, never
 * loaded as Tensors); other formats (.npy) are loaded. A missing file leaves the six cells `unsupported`.
 * `readAhead` (if set) is called before a streamed (large) pair is computed, so that the caller can start
 * reading the files of the pair it will take next; small pairs skip it (it would cost more calls than it saves).
 */
TensorFilesOutcome compareTensorFiles(const tensor::TensorResolver& npuTensors, const std::string& npuName,
                                      const tensor::TensorResolver& benchTensors, const std::string& benchName,
                                      Splitter& splitter, const std::function<void()>& readAhead = {});

/// pd.to_numeric of one numeric text, bit for bit: pandas' float parser keeps only the first 17 digits
/// (leading zeros included) and scales by a power of ten, so it can differ from strtod in the last bits.
/// NaN when the text has no digits.
double pandasToFloat(std::string_view text);

/// The statistics-mode diff and relative-error cells of one stat pair (§6.1). The flags say whether the
/// whole NPU / bench column parses as integers (pandas then subtracts ints: "3" instead of "3.0").
std::pair<std::string, std::string> statsDiff(const Cell& npu, const Cell& bench, bool npuIntColumn = false,
                                                bool benchIntColumn = false);

/**
 * @brief Runs the indicator checkers (§8.1) on a finished table and overwrites Result and Err_message.
 *
 * Rows are grouped by table.npuEntry. Used by msprobe26::compareDumps; public so that tests can feed hand-made rows.
 */
void applyCheckers(CompareTable& table);

/// json.dumps of a list of strings (ASCII, ", " separators): ["a", "b"], [] when empty.
std::string jsonStringList(const std::vector<std::string>& items);

/// The text pandas' to_csv writes for a cell: floats as repr, NaN as "", ±inf as " inf"/" -inf" (msprobe
/// replaces them before writing), None as "", bools True/False.
std::string cellText(const Cell& cell);

/// The CSV file msprobe 26.0.0 writes for a table (header, no index, minimal quoting).
std::string tableCsv(const CompareTable& table);
/// tableCsv streamed to a sink; false if the sink failed.
bool writeTableCsv(const CompareTable& table, const TextSink& sink);

/// msprobe 26.0.0 behind the profile seam (msprobe26/profile.cpp); compare/pipeline/profiles.h's rulesOf gives it.
const ProfileRules& rules();

} // namespace probescope::compare::msprobe26
