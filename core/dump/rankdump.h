// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/dump/dumpfile.h"
#include "core/dump/dumplayout.h"

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace probescope::dump {

/// construct.json: node key -> parent module key ("" or null for a root).
struct ConstructMap
{
    bool present = false;
    std::vector<std::pair<std::string, std::string>> links; ///< file order; parent "" = root
    std::unordered_map<std::string, std::string> parentOf;
    std::optional<std::int64_t> megatronMicroSteps; ///< "megatron_micro_step_number"

    const std::string* parent(std::string_view key) const;
};

/// stack.json in either form, inverted to entry key -> frames.
struct StackMap
{
    bool present = false;
    bool newForm = false; ///< {"0": [[keys...], [frames...]]} (msprobe 8.x and later)
    std::unordered_map<std::string, std::vector<std::string>> framesOf;

    const std::vector<std::string>* frames(std::string_view key) const;
};

Result<ConstructMap> readConstructJson(const std::filesystem::path& path);
Result<StackMap> readStackJson(const std::filesystem::path& path);

/// Everything ProbeScope reads of one rank of one step. Immutable once loaded.
struct RankDump
{
    RankLocation location;
    std::shared_ptr<const DumpFile> dump;
    ConstructMap construct;
    StackMap stack;
    bool stackDeferred = false; ///< stack.json exists but was not read (ReadOptions::stackJson off)
    Diagnostics diagnostics; ///< dump file diagnostics plus construct/stack problems
};

/// The rank's stack: `rank.stack` when it was read with the rank, else stack.json read now.
Result<StackMap> readRankStack(const RankDump& rank);

/// Loads one rank: the dump file (required) and construct.json / stack.json when present.
/// A broken construct.json or stack.json is reported and skipped; a broken dump file is an error.
Result<std::shared_ptr<const RankDump>> loadRank(const RankLocation& location, const ReadOptions& options = {});

} // namespace probescope::dump
