// SPDX-License-Identifier: Apache-2.0
#include "core/util/textposition.h"

#include <algorithm>

namespace probescope {

SourceLocation locate(std::string_view text, std::uint64_t offset, std::string file)
{
    const auto end = static_cast<std::size_t>(std::min<std::uint64_t>(offset, text.size()));
    std::uint32_t line = 1;
    std::size_t lineStart = 0;
    // Only done when reporting, so a linear scan is fine.
    for (std::size_t i = 0; i < end; ++i) {
        if (text[i] == '\n') {
            ++line;
            lineStart = i + 1;
        }
    }
    return SourceLocation { std::move(file), offset, line, static_cast<std::uint32_t>(end - lineStart + 1) };
}

} // namespace probescope
