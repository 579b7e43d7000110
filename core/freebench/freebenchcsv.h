// SPDX-License-Identifier: Apache-2.0
#pragma once
// free_benchmark.csv, the output of msprobe's free benchmark (无标杆比对, run-ut-spec §11.8): one row per
// API output whose perturbed result moved more than its dtype's tolerance. Read here for the GUI; Qt-free.

#include "core/util/diagnostic.h"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace probescope::freebench {

/// The column names, in msprobe's order.
inline constexpr std::string_view kFreeBenchColumns[] = { "rank",     "pert_mode", "stage", "step",        "api_name",
                                                          "max_rel",  "dtype",     "shape", "output_index" };

/// What a max_rel cell holds: `ratio - 1`, the literal `symbol_flipping`, or nothing (to_cpu, integer outputs).
enum class MaxRelKind : std::uint8_t { Number, SymbolFlipping, Empty };

struct FreeBenchRow
{
    std::int64_t rank = 0;
    std::string pertMode; ///< improve_precision, add_noise, bit_noise, change_value, no_change, to_cpu
    std::string stage;    ///< forward / backward
    std::int64_t step = 0;
    std::string apiName;  ///< full name, e.g. "Torch.matmul.40.forward"
    MaxRelKind maxRelKind = MaxRelKind::Empty;
    double maxRel = 0;    ///< meaningful for MaxRelKind::Number only (may be inf)
    std::string dtype;    ///< of the original output, e.g. "torch.float16"
    std::string shape;    ///< as Python printed it, e.g. "torch.Size([4096, 4, 192])"
    std::optional<std::int64_t> outputIndex;
    std::uint32_t file = 0; ///< index into FreeBenchTable::files
    std::uint32_t line = 0; ///< 1-based line where the record starts
};

/// The relative threshold a row was judged against (§11.4: threshold − 1): float16 0.002, bfloat16 0.004,
/// float32 and every other dtype 0.0002; no_change 0 (any change is flagged). Preheat may have raised the
/// threshold at run time; the CSV does not say, so this is the documented floor.
double freeBenchThreshold(std::string_view dtype, std::string_view pertMode);

/// max_rel / threshold: how many times over its tolerance a row is. symbol_flipping and a zero threshold with a
/// non-zero max_rel are +inf; empty max_rel is NaN.
double freeBenchExcess(const FreeBenchRow& row);

/**
 * @brief The rows of one or more free_benchmark.csv files.
 *
 * Malformed records are skipped and reported in `diagnostics` (errors naming file:line, id `freebench.row`),
 * so one bad line never hides the rest of a file.
 */
struct FreeBenchTable
{
    std::vector<std::filesystem::path> files;
    std::vector<FreeBenchRow> rows; ///< in file order, files in the order given
    Diagnostics diagnostics;

    void append(FreeBenchTable&& other);
};

/**
 * @brief Parses the text of one free_benchmark.csv as Python's csv writer wrote it.
 *
 * The first record must be msprobe's header (a UTF-8 BOM is skipped); a file without one is read with a
 * warning (`freebench.no-header`). Repeated header lines — a file appended to by several runs — are skipped.
 * A record whose last line has no line break and too few fields is a row cut short by a crash: warning
 * `freebench.truncated`. Error ids: `freebench.header` (another header: the file is not read),
 * `freebench.row` (a malformed record, skipped).
 */
Result<FreeBenchTable> parseFreeBenchmarkCsv(std::string_view text, const std::filesystem::path& file);

/// Reads one file; `io.read` when it cannot be read.
Result<FreeBenchTable> readFreeBenchmarkCsv(const std::filesystem::path& file);

/**
 * @brief The free_benchmark.csv files of an opened dump: `input` may be the file itself, a dump.json (its
 * folder is searched), a rank folder, a step folder (rank{N}) or the dump root (step{N}/rank{N}, and the root
 * itself, where msprobe's docs put the file). Only those levels are looked at — never inside
 * dump_tensor_data. Sorted by step then rank number; empty when there is none or `input` does not exist.
 */
std::vector<std::filesystem::path> findFreeBenchmarkCsvs(const std::filesystem::path& input);

/// Finds and reads every file of every input (duplicates read once). Files that cannot be read or have a
/// foreign header are reported in `diagnostics` and skipped; this never fails.
FreeBenchTable loadFreeBenchmark(const std::vector<std::filesystem::path>& inputs, ProgressSink* progress = nullptr);

/// The worst row per API of one step and rank (step/rank < 0 match any), for badges on tree nodes.
struct FlaggedApi
{
    std::string apiName;
    std::size_t worstRow = 0; ///< index into FreeBenchTable::rows: highest excess, symbol_flipping first
    std::uint32_t rowCount = 0;
};
std::vector<FlaggedApi> flaggedApis(const FreeBenchTable& table, std::int64_t step, std::int64_t rank);

} // namespace probescope::freebench
