// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>

// probescope-cli's ptdbg_ascend commands: `compare --profile ptdbg` and `parse`.
namespace probescope::cli {

struct PtdbgCompareArgs
{
    std::string input; ///< -i: ptdbg's input_param as JSON
    std::string npu;   ///< --npu: a step folder (compare_distributed), a rank folder or a .pkl
    std::string bench;
    std::string out;
    bool stack = false;
    bool fuzzy = false;
    bool compareOnly = false; ///< -c: no advisor file (ptdbg's auto_analyze=False)
    bool xlsx = false;
    unsigned threads = 0; ///< -j
    bool salvage = false; ///< --salvage: compare a damaged .pkl in part (exit status still 1)
};

/// Exit status: 0, 1 (bad input, also with --salvage when a .pkl has errors), 2 (usage).
int runPtdbgCompare(const PtdbgCompareArgs& args);

/// Whether `compare` runs ptdbg's compare: --profile ptdbg, or a compare.json holding ptdbg's input_param.
bool isPtdbgCompare(bool ptdbgProfile, const std::string& input);

/**
 * @brief `probescope-cli compare` with the ptdbg profile, parsed with its own option table: every compare option
 * this profile does not implement (--step, --rank, --resume, --pair-threads, -da, -dm/-cm/-am/-lm, and info's or
 * tree's --verify, --exec-order, --no-marks) is a usage error (exit 2) saying why, never silently dropped.
 */
int runPtdbgCompare(int argc, char** argv);

/// `probescope-cli parse PKL API_PREFIX` (ptdbg's parse(pkl_path, module_name_prefix)).
int runParse(int argc, char** argv);

} // namespace probescope::cli
