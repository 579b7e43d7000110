// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string_view>

namespace probescope::setupcheck {

/**
 * @brief difflib.SequenceMatcher(None, a, b).ratio() of Python 3.11, ported exactly: the strings are compared as
 * sequences of code points (UTF-8 decoded; an invalid byte is one element of its own), `b`'s elements that occur
 * more than len(b) // 100 + 1 times are "popular" and left out of the index when len(b) >= 200 (autojunk), the
 * longest matching block is found and extended as find_longest_match does, and the ratio is 2 * M / (len(a) +
 * len(b)), 1.0 for two empty strings. Not symmetric in general, as Python's is not.
 *
 * Its cost is quadratic in the lengths; texts longer than kMaxSequenceMatcherLength code points are compared for
 * equality only (1.0 or 0.0), a documented bound (docs/config-check.md).
 */
double sequenceMatcherRatio(std::string_view a, std::string_view b);

inline constexpr std::size_t kMaxSequenceMatcherLength = 20000;

} // namespace probescope::setupcheck
