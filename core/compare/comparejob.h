// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "compare/comparetable.h"
#include "compare/firstfailure.h"
#include "util/diagnostic.h"

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace probescope::compare {

/// What to compare, as msprobe's compare.json says it (paths relative to the current folder).
struct CompareInput
{
    std::filesystem::path npuPath;   ///< a dump.json or a step folder
    std::filesystem::path benchPath;
    std::optional<std::filesystem::path> stackPath;
};

enum class Profile : std::uint8_t {
    Msprobe12, ///< msprobe 1.2.2 (default; the version of the seed documents)
    Msprobe26, ///< msprobe 26.0.0
};

struct JobOptions
{
    Profile profile = Profile::Msprobe12;
    bool stackFlag = false; ///< -s (only decides when stack_path is given, as in msprobe 1.2)
    bool fuzzy = false;     ///< -f
    bool advisor = true;    ///< write advisor_*.txt (msprobe's -c turns it off)
    std::string timestamp;  ///< YYYYmmddHHMMSS used in file names; now when empty
    unsigned threads = 0;   ///< -j: tensor pairs compared at once (0 = one per hardware thread)
    bool xlsx = false;      ///< --xlsx: also write compare_result*.xlsx with msprobe's fills
    std::optional<std::filesystem::path> dataMapping; ///< -dm mapping.yaml (msprobe 1.2 data-mapping mode)
    /// -cm / -am / -lm (compare-spec §3.6): set = the option is given; an empty path = given without a file.
    /// MindSpore NPU dumps; -cm also PyTorch in the msprobe-26 profile. See docs/compare.md.
    std::optional<std::filesystem::path> cellMapping;
    std::optional<std::filesystem::path> apiMapping;
    std::optional<std::filesystem::path> layerMapping;
    /// --salvage: compare what a truncated or invalid dump holds (PairResult::salvaged says what was lost)
    /// instead of refusing the pair.
    bool salvage = false;
};

/// One compared pair and where its files went.
struct PairResult
{
    std::string suffix; ///< "" for a single pair, "_rank0-rank0" in directory mode
    std::filesystem::path npuDump;
    std::filesystem::path benchDump;
    std::shared_ptr<const CompareTable> table;
    std::filesystem::path csvFile;
    std::filesystem::path xlsxFile;
    std::filesystem::path advisorFile;
    FirstFailure firstFailure; ///< in execution order (docs/tree.md)
    std::filesystem::path mappingFile; ///< data_mapping*.yaml that -lm generated, when it did
    Diagnostics diagnostics;           ///< about the options for this pair (an ignored -lm, a mapping item skipped)
    /// The load step's findings on both dumps (dump::loadReport): a cut file, wrong types, invalid UTF-8,
    /// unknown keys; and compare.empty-dump, compare.tensor-unreadable. Errors here make the run exit 1.
    Diagnostics inputDiagnostics;
    bool refused = false; ///< not compared: a dump has errors and JobOptions::salvage is off (table is empty)
    /// With salvage: for each damaged dump what was read and what was lost (dump::LoadReport::salvageText).
    std::vector<std::string> salvaged;
};

/// Index of the pair whose culprit ran earliest (the rank that diverges first), or -1 if none fails.
/// Ranks run in parallel, so "earliest" compares positions in each rank's own execution order.
long firstDivergingPair(const std::vector<PairResult>& results);

Result<CompareInput> readCompareJson(const std::filesystem::path& path);

/**
 * @brief The pairs msprobe 1.2.2 would compare for an input: one pair of dump.json files, or the
 * rank pairs of two step folders (compare-spec Appendix A.12).
 */
struct PlannedPair
{
    std::string suffix;
    std::filesystem::path npuDump;
    std::filesystem::path benchDump;
    bool stackMode = false;
    std::optional<std::filesystem::path> stackFile;
};
Result<std::vector<PlannedPair>> planPairs(const CompareInput& input, const JobOptions& options);

/// Reads, compares and writes every pair into `outDir` (created if missing). A pair whose dump cannot be
/// read, or has errors while options.salvage is off, is a PairResult with `refused` set; the other pairs
/// still run. Mapping options the dumps do
/// not allow (-cm/-am on PyTorch in msprobe 1.2, -am on PyTorch in msprobe 26) are the error compare.option
/// with msprobe's own message. Existing files are never
/// overwritten: names carry the timestamp, and a name already taken gets "_1", "_2", ... after it.
Result<std::vector<PairResult>> runCompareJob(const CompareInput& input, const std::filesystem::path& outDir,
                                              const JobOptions& options, ProgressSink* progress = nullptr);

/// The CSV text of a table (msprobe's xlsx as a CSV: see docs/compare.md).
std::string tableCsv(const CompareTable& table);

/// A text cell that a spreadsheet would run as a formula (=, +, -, @, % first, or after ';') gets a
/// leading apostrophe; numbers such as "-1" are left alone. See docs/compare.md.
std::string guardFormula(std::string text);

} // namespace probescope::compare
