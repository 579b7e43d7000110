// SPDX-License-Identifier: Apache-2.0
#include "core/compare/pipeline/profiles.h"

namespace probescope::compare {

Result<const ProfileRules*> rulesOf(Profile profile)
{
    switch (profile) {
    case Profile::Msprobe12:
        return &msprobe12::rules();
    case Profile::Msprobe26:
        return &msprobe26::rules();
    case Profile::Ptdbg:
        return &ptdbg::rules();
    }
    return makeError("compare.profile", {}, "unknown profile " + std::to_string(static_cast<int>(profile)));
}

} // namespace probescope::compare
