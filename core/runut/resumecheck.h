// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/util/diagnostic.h"

#include <cstddef>
#include <filesystem>
#include <optional>

namespace probescope::runut {

/**
 * @brief Checks that a result or details CSV that -csv_path resumes can be appended to (issue 20).
 *
 * Every line ProbeScope and msprobe write ends in a line break, so a file whose last line has none was
 * cut (a killed run, a full disk): appending would glue the next record to the cut one. Rows with fewer
 * than `minCells` cells are malformed too. The error runut.resume-malformed names the file, line and
 * column; the file is left as it is.
 */
std::optional<Diagnostic> checkResumableCsv(const std::filesystem::path& path, std::size_t minCells);

} // namespace probescope::runut
