// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/compare/pipeline/comparerun.h"
#include "core/compare/ptdbg/ptdbgcompare.h"

#include <filesystem>
#include <string>
#include <vector>

/// ptdbg_ascend 6.0's job (the `ptdbg` profile's own loop over rank pairs): compare, write, find the first failure.
namespace probescope::compare::ptdbg {

struct PtdbgJobOptions
{
    PtdbgOptions compare;
    bool advisor = true;   ///< advisor_{ts}.txt (ptdbg's auto_analyze; -c turns it off)
    bool xlsx = false;     ///< compare_result_{ts}.xlsx with ptdbg's fills (ptdbg writes only this)
    std::string timestamp; ///< YYYYmmddHHMMSS for the names; now when empty
    /// --salvage: compare a pair whose .pkl has errors (rows that are not rows are left out and said); without it
    /// such a pair is not compared (PairResult::refused), as the msprobe profiles refuse a damaged dump.json.
    bool salvage = false;
};

/**
 * @brief Compares every pair and writes `compare_result{suffix}_{ts}.csv` (the cells of ptdbg's xlsx),
 * optionally the `.xlsx`, and `advisor{suffix}_{ts}.txt` into `outDir`.
 *
 * ptdbg names every advisor file `advisor_{ts}.txt`, so two ranks finishing in the same second overwrite
 * each other's; here the rank suffix is part of the name and no existing file is ever replaced (a taken
 * name gets "_1", "_2", ...). Each result also names the first failing node in execution order.
 *
 * Both .pkl files go through the load step first (core/dump's reader and dump::loadReport, as the msprobe dumps
 * do): a cut file, invalid UTF-8 or a mistyped row is an error in PairResult::inputDiagnostics with file:line:col,
 * and the pair is `refused` unless options.salvage (then PairResult::salvaged says what was lost). Unreadable
 * .npy files are errors there too. A refused pair writes nothing; the other pairs still run.
 */
Result<std::vector<PairResult>> runPtdbgJob(const std::vector<RankPair>& pairs, const std::filesystem::path& outDir,
                                            const PtdbgJobOptions& options, ProgressSink* progress = nullptr);

} // namespace probescope::compare::ptdbg
