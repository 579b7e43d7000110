// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <optional>
#include <string>

// probescope-cli's checkpoint compare: `config_check -c CKPT_A CKPT_B [-o out.json]` (docs/checkpoint-compare.md).
namespace probescope::cli {

struct CheckpointCompareArgs
{
    std::string first;  ///< a Megatron checkpoint folder or one of its iter_* folders
    std::string second;
    std::string out = "./ckpt_similarity.json"; ///< msprobe's default; an existing name is an error, never replaced
};

/// Exit status: 0, 1 (bad input, an existing output), 2 (usage).
int runCheckpointCompare(const CheckpointCompareArgs& args);

/**
 * @brief `config_check -c A B` when A does not end with "zip" (msprobe's own test: a zip pair is the packed-config
 * compare, handled elsewhere). nullopt: not this command; the caller goes on dispatching.
 */
std::optional<int> runCheckpointCommand(int argc, char** argv);

} // namespace probescope::cli
