// SPDX-License-Identifier: Apache-2.0
#pragma once
// Private to the compare target: the small JSON inputs it reads (compare.json in msprobe's and ptdbg's forms).

#include "core/util/diagnostic.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <string_view>

namespace probescope::compare {

/// Reads a small JSON file that must hold an object. Errors (id `compare.input`) name the file, and for a syntax
/// error its line and column; `what` names the object in the message ("compare.json must hold an object{what}").
Result<nlohmann::json> readJsonObjectFile(const std::filesystem::path& path, std::string_view what = {});

} // namespace probescope::compare
