// SPDX-License-Identifier: Apache-2.0
#include "compare/profile.h"

namespace probescope::compare {

Result<const ProfileRules*> rulesOf(Profile profile)
{
    switch (profile) {
    case Profile::Msprobe12:
        return &msprobe12::rules();
    case Profile::Msprobe26:
        return &msprobe26::rules();
    case Profile::Ptdbg:
        break;
    }
    return makeError("compare.profile", {}, "the " + std::string(profileName(profile)) + " profile is not available in this build");
}

} // namespace probescope::compare
