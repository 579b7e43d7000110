// SPDX-License-Identifier: Apache-2.0
#pragma once
// `probescope-cli graph`: msprobe's graph_visualize (26.x) / graph (8.x) written as a .vis.db (docs/graph.md).

#include "core/graph/msgraph.h"
#include "core/visconfig/visconfig.h"
#include "core/util/diagnostic.h"

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace probescope::graph {

struct GraphWriteOptions
{
    WriteFormat format = WriteFormat::V26;
    bool fuzzy = false;         ///< --fuzzy_match: modules by name, their APIs by name and order within the module
    bool overflowCheck = false; ///< --overflow_check: only tb_config.overflow_check (no overflow levels computed)
    std::string timestamp;      ///< the {ts} of the file name; empty = now (local time, msprobe's format)
    unsigned threads = 0;       ///< tensor pairs compared at once (never changes the result)
    const VisConfig* matches = nullptr; ///< --match-file: NPU/bench nodes paired by hand (docs/graph.md)
    /// Where the compare pipeline's findings on the dumps go (compare::PairOutcome::inputDiagnostics of every pair,
    /// warnings too), for a front end to list as compare does; may be null.
    Diagnostics* findings = nullptr;
};

struct GraphWriteResult
{
    std::filesystem::path written; ///< OUT/build_{ts}.vis.db or OUT/compare_{ts}.vis.db (or _1, _2 ... when taken)
    std::size_t graphs = 0;        ///< graphs written (NPU and bench counted apart)
    std::vector<std::string> notes; ///< what differs from msprobe's run (L1 dumps, skipped ranks, ...)
    /// (step, rank) places one side has and the other lacks, left out of a compare (each has a note). The CLI then
    /// exits 1, as the compare job does for one-sided places (docs/reliability.md section 6).
    std::size_t notCompared = 0;
};

/// msprobe 8.x's `graph -i graph.json`: {"npu_path": ..., "bench_path": ...} (bench_path optional; relative paths
/// are taken from the current folder, as msprobe does). Errors (id graph.input) name the file.
struct GraphInput
{
    std::filesystem::path npu;
    std::optional<std::filesystem::path> bench;
};
Result<GraphInput> readGraphInputJson(const std::filesystem::path& path);

/**
 * @brief Builds the graphs of `npu` (and `bench`) and writes them into one new .vis.db in `outDir`.
 *
 * The inputs are a rank folder ("files": step 0, rank 0, as msprobe), a step folder of rank folders or a root
 * of step folders, both sides alike. The db is written to a temporary file in `outDir` and claimed under its
 * name with the no-replace rename: an existing file is never replaced. Errors name the input or the output.
 */
Result<GraphWriteResult> writeGraphDb(const std::filesystem::path& npu, const std::optional<std::filesystem::path>& bench,
                                      const std::filesystem::path& outDir, const GraphWriteOptions& options);

} // namespace probescope::graph
