// SPDX-License-Identifier: Apache-2.0
#include "core/setupcheck/pytextutil.h"

#include <sys/stat.h>

namespace probescope::setupcheck {

std::vector<std::string> pySplit(std::string_view s, char sep)
{
    std::vector<std::string> out;
    std::size_t from = 0;
    for (std::size_t at = s.find(sep); at != std::string_view::npos; at = s.find(sep, from)) {
        out.emplace_back(s.substr(from, at - from));
        from = at + 1;
    }
    out.emplace_back(s.substr(from));
    return out;
}

bool isRegularFile(const std::filesystem::path& p)
{
    struct stat st {};
    return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

bool isFolder(const std::filesystem::path& p)
{
    struct stat st {};
    return ::stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

} // namespace probescope::setupcheck
