// SPDX-License-Identifier: Apache-2.0
#pragma once
// probescope-cli's exit statuses and its usage-error line, the same for every subcommand's file.

#include <iostream>
#include <string>

namespace probescope::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitInputError = 1; ///< bad input: the message names the file and position
inline constexpr int kExitUsage = 2;      ///< a misused option

/// "probescope-cli: MESSAGE" and the hint to --help on stderr; returns kExitUsage.
inline int usageError(const std::string& message)
{
    std::cerr << "probescope-cli: " << message << "\n(run probescope-cli --help for usage)\n";
    return kExitUsage;
}

} // namespace probescope::cli
