// SPDX-License-Identifier: Apache-2.0
#pragma once
// run_ut's run loop (run-ut-spec §4 steps 1-7, §6, §7.2): every forward API call of a dump.json is
// filtered, replayed by a Replayer, judged, and written as msprobe's result and details rows, in dump
// order whatever the number of workers. See docs/run-ut.md.

#include "core/runut/apicalls.h"
#include "core/runut/replayer.h"
#include "core/runut/standards.h"
#include "core/util/diagnostic.h"

#include <cstddef>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace probescope::runut {

struct RunUtOptions
{
    std::filesystem::path apiInfo;                   ///< dump.json (L1 or mix; statistics or tensor)
    std::filesystem::path outDir;                    ///< created if missing; unused when resuming
    std::optional<std::filesystem::path> resumeCsv;  ///< -csv_path: accuracy_checking_result_<14 digits>.csv
    bool filterApi = false;                          ///< -f
    std::optional<std::filesystem::path> config;     ///< -config (its run_ut section)
    std::vector<std::string> whiteList, blackList;   ///< added to the config's lists
    int workers = 1;                                 ///< -j N: threads, each with its own Replayer (1-64)
    Profile profile = Profile::Msprobe12;
    int precision = 14;                              ///< decimals of the details floats (0-20)
    ReplayOptions replay;                            ///< for the caller's factory; reported only
    /// Also judge the device outputs recorded in a tensor dump against the replay's CPU bench, into
    /// dumped_output_checking_{result,details}_{ts}.csv (docs/run-ut.md).
    bool judgeDumpedOutputs = true;
    std::string timestamp;                           ///< YYYYmmddHHMMSS; empty = now
};

/// The verdict of one API: the three or four cells of its result row and its details rows.
struct ApiVerdict
{
    std::string forwardStatus;  ///< pass, warning, error, SKIP
    std::string backwardStatus; ///< pass, warning, error, SKIP, or "" (no backward: a SPACE cell)
    std::string message;        ///< the result row's Message cell (only when a status is SKIP)
    /// A SKIP because the resolver refused a tensor file of the dump (tensor.path-escape, tensor.truncated, ...):
    /// the run counts it as a damaged input by this diagnostic (issue 33), never by the message's text.
    std::optional<Diagnostic> inputError;
    std::vector<DetailRow> rows;

    /// SKIP when forward is SKIP, else the worse of forward and backward (a backward SKIP is ignored).
    std::string overall() const;
};

/// What the GUI shows live for one API, in dump order.
struct ApiOutcome
{
    std::size_t index = 0;  ///< position among the dump's forward calls
    std::string fullName;
    ApiVerdict replay;      ///< the rows of accuracy_checking_*
    std::optional<ApiVerdict> dumped; ///< the rows of dumped_output_checking_*, when those are written
};

struct RunUtSummary
{
    std::filesystem::path resultCsv, detailsCsv;
    std::optional<std::filesystem::path> dumpedResultCsv, dumpedDetailsCsv;
    std::string timestamp;
    std::size_t apis = 0;           ///< APIs judged by this run (resumed ones not included)
    std::size_t passed = 0, warnings = 0, errors = 0, skipped = 0; ///< by ApiVerdict::overall()
    std::size_t resumedSkipped = 0; ///< already in the resumed result CSV
    std::size_t filteredOut = 0;    ///< dropped by -f
    std::size_t dumpedPassed = 0, dumpedWarnings = 0, dumpedErrors = 0, dumpedSkipped = 0;
    std::string firstFailing;       ///< first API (dump order) whose overall is error, else warning
    std::string firstDumpedFailing; ///< the same for the dumped outputs
    bool cancelled = false;
    double seconds = 0;
    Diagnostics diagnostics;        ///< warnings (config, salvaged dump, nothing to judge in the dump)
};

using ReplayerFactory = std::function<std::unique_ptr<Replayer>()>;

/**
 * @brief Runs run_ut on options.apiInfo.
 *
 * Fatal errors (bad options, unreadable dump or config, a resume file that does not fit, an output file
 * that exists or cannot be written) come back as the error; ids `runut.option`, `runut.resume`,
 * `runut.config`, `runut.entry-name`, `csv.exists`, `io.write`, and the dump reader's.
 * `progress` gets setRange(APIs to judge) and advance(done) in dump order; when it reports cancelled,
 * no further API is started, the ones in flight are finished and written, and the files stay valid for
 * -csv_path. `onApi` is called once per judged API in dump order (from a worker thread, serialised).
 */
Result<RunUtSummary> runUt(const RunUtOptions& options, const ReplayerFactory& factory,
                           ProgressSink* progress = nullptr,
                           std::function<void(const ApiOutcome&)> onApi = {});

/// The result-file header: API name, Forward Test Success, Backward Test Success, Message.
const std::vector<std::string>& resultHeader();

/// The result-file row of a verdict: 3 cells, or 4 with the Message when a status is SKIP (§6.1).
std::vector<std::string> resultCells(const std::string& fullName, const ApiVerdict& verdict);

/// True for a file name accuracy_checking_result_<14 digits>.csv (what -csv_path accepts).
bool isResultCsvName(const std::string& fileName);

} // namespace probescope::runut
