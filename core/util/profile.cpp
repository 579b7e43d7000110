// SPDX-License-Identifier: Apache-2.0
#include "core/util/profile.h"

#include <array>
#include <utility>

namespace probescope {

std::string_view profileName(Profile profile)
{
    switch (profile) {
    case Profile::Msprobe12:
        return "msprobe-1.2";
    case Profile::Msprobe26:
        return "msprobe-26";
    case Profile::Ptdbg:
        return "ptdbg";
    }
    return "msprobe-1.2";
}

std::optional<Profile> parseProfile(std::string_view word)
{
    // Canonical spellings first; the rest are the spellings earlier releases printed or accepted.
    static constexpr std::array<std::pair<std::string_view, Profile>, 10> names { {
        { "msprobe-1.2", Profile::Msprobe12 },
        { "msprobe-26", Profile::Msprobe26 },
        { "ptdbg", Profile::Ptdbg },
        { "msprobe12", Profile::Msprobe12 },
        { "msprobe1.2", Profile::Msprobe12 },
        { "1.2", Profile::Msprobe12 },
        { "msprobe26", Profile::Msprobe26 },
        { "26", Profile::Msprobe26 },
        { "ptdbg_ascend", Profile::Ptdbg },
        { "ptdbg-ascend", Profile::Ptdbg },
    } };
    for (const auto& [name, profile] : names) {
        if (word == name)
            return profile;
    }
    return std::nullopt;
}

std::string_view profileChoices()
{
    return "msprobe-1.2, msprobe-26 or ptdbg";
}

} // namespace probescope
