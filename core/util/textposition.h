// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/util/diagnostic.h"

#include <cstdint>
#include <string_view>

namespace probescope {

/// Turns a byte offset into a 1-based line/column location (column counted in bytes).
SourceLocation locate(std::string_view text, std::uint64_t offset, std::string file);

} // namespace probescope
