// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/util/diagnostic.h"

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace probescope::dump {

/**
 * @brief The entry keys of a dump.json, in file order, found without parsing the values.
 *
 * What the tree of a pair needs (with construct.json) is the keys; the values are 19 of every 20 bytes of a
 * statistics dump. The viewer shows the tree from these while the dumps are read in full; the full reader is the
 * judge (a file this scan reads differently, a salvaged or malformed one, gives the tree of the full read).
 */
struct DumpKeys
{
    std::shared_ptr<const std::string> text; ///< the keys back to back (unescaped); `keys` view into it
    std::vector<std::string_view> keys;      ///< the members of "data", in file order
    std::string task;                        ///< the header's "task" ("statistics", "tensor", …)
    bool md5Key = false;                     ///< some object inside "data" has a member "md5"
};

/// Scans a dump.json for its entry keys. Errors (not a JSON object, no "data" object, cut short) only say that the
/// scan has nothing to give; readDumpJson() reports the file's problems.
Result<DumpKeys> scanDumpKeys(const std::filesystem::path& path);

/// The same over text in memory (`path` names it in the error).
Result<DumpKeys> scanDumpKeysIn(std::string_view text, const std::filesystem::path& path);

} // namespace probescope::dump
