// SPDX-License-Identifier: Apache-2.0
#pragma once
// api_precision_compare (run-ut-spec §8): the final run_ut verdict, judging NPU-vs-CPU error relative to
// GPU-vs-CPU error from the two accuracy_checking_details CSVs. Decisions: docs/run-ut-standards.md.

#include "core/runut/standards.h"
#include "core/util/diagnostic.h"

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace probescope::runut {

struct PrecisionCompareOptions
{
    std::filesystem::path npuCsv, gpuCsv; ///< accuracy_checking_details_*.csv of the NPU and the GPU run
    std::filesystem::path outDir;         ///< created if missing
    Profile profile = Profile::Msprobe12; ///< standard dispatch and benchmark thresholds (§5.3, §8.3)
    int precision = 14;                   ///< decimals of the details floats (0-20)
    std::string timestamp;                ///< YYYYmmddHHMMSS; empty = now (local time, as msprobe)
};

struct PrecisionCompareOutput
{
    std::filesystem::path resultCsv, detailsCsv;
    std::size_t apis = 0; ///< result rows written
    std::size_t rows = 0; ///< details rows written
    /**
     * Warnings: precision.missing-gpu-row (an NPU row msprobe drops silently), precision.cancelled.
     * Error: precision.duplicate-gpu-row: like msprobe, the analysis stops there and the files keep
     * what was written before it (the API being grouped gets no result row).
     */
    Diagnostics diagnostics;
};

/**
 * @brief Runs api_precision_compare and writes api_precision_compare_{result,details}_{ts}.csv.
 *
 * Fatal errors (nothing written, or only the two files with their headers): the readers' csv.* and
 * io.read errors, precision.missing-column (names the file and the column), csv.row-width (a row
 * with more cells than the header, file:line), csv.exists (an output file is already there), io.write.
 * The progress range is the number of NPU rows; cancelling stops after the current row and flushes
 * the API being grouped.
 */
Result<PrecisionCompareOutput> apiPrecisionCompare(const PrecisionCompareOptions& options,
                                                   ProgressSink* progress = nullptr);

const std::vector<std::string>& precisionCompareResultHeader();  ///< 4 columns
const std::vector<std::string>& precisionCompareDetailsHeader(); ///< 28 columns (§8.4)

/// CUR's 算子看护等级 of a base API name: 0, 1 or 2 (§8.3).
int protectionLevel(std::string_view apiName);

/// Benchmark ratio thresholds (§8.3) in the order small value, RMSE, max rel, mean rel, EB.
struct BenchmarkThresholds
{
    double smallValue, rmse, maxRel, meanRel, eb;
};
BenchmarkThresholds benchmarkThresholds(std::string_view apiName, Profile profile);

} // namespace probescope::runut
