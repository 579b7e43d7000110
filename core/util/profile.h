// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace probescope {

/**
 * @brief Which tool's behaviour an output reproduces: the one profile type of the compare, run_ut and the GUI.
 *
 * Spelled `msprobe-1.2` (default), `msprobe-26` and `ptdbg` on the command line; the older spellings
 * `msprobe12`, `msprobe26`, `1.2`, `26` (and `ptdbg_ascend`) stay accepted as aliases.
 */
enum class Profile : std::uint8_t {
    Msprobe12, ///< msprobe 1.2.2 (the version of the seed documents); run_ut: per-API precision standard lists
    Msprobe26, ///< msprobe 26.0.0; run_ut: benchmark standard for every float dtype
    Ptdbg,     ///< ptdbg_ascend 6.0, msprobe's predecessor (compare only)
};

/// The canonical spelling ("msprobe-1.2", "msprobe-26", "ptdbg").
std::string_view profileName(Profile profile);

/// The profile a command-line word names (canonical spelling or an alias), or none.
std::optional<Profile> parseProfile(std::string_view word);

/// "msprobe-1.2, msprobe-26 or ptdbg": for usage messages.
std::string_view profileChoices();

} // namespace probescope
