// SPDX-License-Identifier: Apache-2.0
#pragma once
// dump.json -> the forward API calls run_ut replays, in msprobe's order and with msprobe's rules:
// splitting into forward/backward maps (run-ut-spec §2.1), name parsing (§2.2), the -f filter (§3.3)
// and the black/white list with the hard-coded unsupported APIs (§3.2).

#include "core/runut/replayer.h"
#include "core/util/diagnostic.h"

#include <cstddef>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace probescope::runut {

/// The forward calls of one dump.json in file order (Python dict order: first position, last value).
struct ApiCallList
{
    std::shared_ptr<const dump::DumpFile> dump;
    std::vector<ApiCall> calls;
    std::size_t filteredOut = 0; ///< calls dropped by -f as duplicates of an earlier call
    Diagnostics diagnostics;     ///< the reader's (e.g. a salvaged truncated file), and ours
    /// Calls that are not replayed, by fullName, with the SKIP message their row gets: tensors larger than
    /// maxReplayBytes() (each also an error `runut.too-large` in `diagnostics`, at the entry's line).
    std::unordered_map<std::string, std::string> refused;
};

/// The most bytes the tensors of one API call (its forward and backward entries' tensor leaves, in their
/// dumped dtypes) may hold for run_ut to build them: 1 GiB, or PROBESCOPE_RUNUT_MAX_BYTES (issue 25: a shape
/// the statistics name is built as given, so a damaged or hostile one must not exhaust memory).
std::uint64_t maxReplayBytes();

/**
 * @brief Splits a parsed dump into forward calls with their backward entries (§2.1) and parses the
 * names (§2.2).
 *
 * Entries whose key contains "Module" are ignored; a key containing "forward" ("backward") must end in
 * ".forward" (".backward"); any other key is the error `runut.entry-name` at its line, as msprobe
 * refuses the whole file. A forward name with other than 3 or 4 dot-separated parts keeps an empty
 * apiName (the runner writes msprobe's "not support for run ut" SKIP row for it).
 * With `filterApi` (-f) the calls that repeat an earlier call of the same API are dropped (§3.3).
 */
Result<ApiCallList> collectApiCalls(std::shared_ptr<const dump::DumpFile> dump, bool filterApi);

/// readDumpJson + collectApiCalls. Errors: those of the reader, `runut.entry-name`, and
/// `runut.dump-kind` for a file that is not a dump.json (debug.json, legacy .pkl).
Result<ApiCallList> loadApiCalls(const std::filesystem::path& dumpJson, bool filterApi);

/// What extract_basic_api_segments gives: (prefix, apiName), apiName empty when the name has other
/// than 3 or 4 parts. "Torch.linalg.inv.0" -> ("Torch", "linalg.inv").
struct ApiNameParts
{
    std::string prefix;
    std::string apiName;
    std::int64_t callIndex = -1; ///< -1 when the last part is not a non-negative integer
};
ApiNameParts parseApiName(std::string_view fullName);

/// Distributed.* and MindSpeed.* calls are never replayed (§4 step 2).
bool isUnsupportedPrefix(std::string_view prefix);

/// The APIs msprobe appends to every black list (§3.2): to, empty, empty_like, ...
const std::vector<std::string>& hardCodedUnsupportedApis();

/**
 * @brief The black/white-list decision of §3.2: true when the API is skipped.
 *
 * The black list (plus the hard-coded list) wins over the white list; an empty white list admits all.
 */
bool isFilteredByLists(std::string_view apiName, const std::vector<std::string>& whiteList,
                       const std::vector<std::string>& blackList);

} // namespace probescope::runut
