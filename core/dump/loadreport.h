// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/dump/rankdump.h"

#include <cstdint>
#include <string>

namespace probescope::dump {

/**
 * @brief What the load step found in one rank's dump: the one validation that info, compare, run-ut and
 * the desktop application share (issue 20).
 *
 * `clean()` is false when any diagnostic is an error (a cut file, wrong types, invalid UTF-8, ...): compare
 * refuses such a dump unless salvage is asked for, and the GUI shows a banner with salvageText().
 */
struct LoadReport
{
    std::filesystem::path file;
    bool truncated = false;       ///< the file was cut short; only complete entries were read
    std::uint64_t fileBytes = 0;  ///< bytes read (where a truncated file ends)
    std::size_t entriesRead = 0;  ///< entries kept
    std::size_t errors = 0;
    std::size_t warnings = 0;
    Diagnostics diagnostics;      ///< the rank's diagnostics (dump file, construct.json, stack.json)

    bool clean() const { return errors == 0; }
    /// "NAME: cut after N bytes; K entries read" / "NAME: K entries read despite E errors" / "" when clean.
    std::string salvageText() const;
};

LoadReport loadReport(const RankDump& rank);

} // namespace probescope::dump
