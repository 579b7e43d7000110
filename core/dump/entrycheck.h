// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/dump/dumpfile.h"

#include <string_view>

namespace probescope::dump {

/**
 * @brief Checks what the tensor-leaf check does not see: each entry's value is an object; API and module
 * entries hold only the keys msprobe writes (a renamed key such as "jutput" would silently drop data);
 * input_args and output are lists, input_kwargs an object; every "type" of a leaf is a string.
 *
 * Wrong types are errors (dump.entry-type, dump.leaf-type); unknown keys warnings (dump.unknown-key),
 * because a future msprobe may add keys. At most `maxReports` diagnostics, then one that counts the rest.
 */
void checkEntryStructure(const DumpFile& dump, std::string_view text, Diagnostics& out, std::size_t maxReports = 50);

} // namespace probescope::dump
