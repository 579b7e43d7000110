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
};

/// Exit status: 0, 1 (bad input), 2 (usage).
int runPtdbgCompare(const PtdbgCompareArgs& args);

/// `probescope-cli parse PKL API_PREFIX` (ptdbg's parse(pkl_path, module_name_prefix)).
int runParse(int argc, char** argv);

} // namespace probescope::cli
