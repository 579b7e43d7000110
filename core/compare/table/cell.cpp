// SPDX-License-Identifier: Apache-2.0
#include "core/compare/table/cell.h"

#include <limits>

namespace probescope::compare {

double Cell::asDouble() const
{
    if (const auto* d = std::get_if<double>(&value))
        return *d;
    if (const auto* i = std::get_if<std::int64_t>(&value))
        return static_cast<double>(*i);
    if (const auto* b = std::get_if<bool>(&value))
        return *b ? 1.0 : 0.0;
    // Callers test isNumeric() first; a NaN keeps a mistaken use from looking like a real value.
    return std::numeric_limits<double>::quiet_NaN();
}

} // namespace probescope::compare
