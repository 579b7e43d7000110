// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/compare/msprobe12/compare.h"
#include "core/compare/msprobe26/msprobe26.h"
#include "core/compare/ptdbg/ptdbgcompare.h"
#include "core/compare/seam/profilerules.h"

namespace probescope::compare {

/// The registry of the profiles built into ProbeScope (each declares its own rules(): msprobe12/compare.h,
/// msprobe26/msprobe26.h, ptdbg/ptdbgcompare.h).
/// The rules of a profile. Profiles whose rules are not built into this binary are an error naming the profile.
Result<const ProfileRules*> rulesOf(Profile profile);

} // namespace probescope::compare
