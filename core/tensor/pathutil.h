// SPDX-License-Identifier: Apache-2.0
#pragma once
// Path rules that the tensor folder (tensorfile.cpp) and the resolver (resolver.cpp) share: one containment test,
// one extension spelling.

#include <algorithm>
#include <filesystem>
#include <string>

namespace probescope::tensor {

/// Whether `child` lies in `parent` (or is it), element by element: both must be canonical or both lexical.
inline bool isInside(const std::filesystem::path& child, const std::filesystem::path& parent)
{
    auto c = child.begin();
    for (auto p = parent.begin(); p != parent.end(); ++p, ++c) {
        if (c == child.end() || *c != *p)
            return false;
    }
    return true;
}

/// The extension in lower case (".pt", ".npy"), ASCII only: the locale never changes which reader opens a file.
inline std::string lowerExtension(const std::filesystem::path& path)
{
    std::string ext = path.extension().string();
    std::transform(ext.begin(), ext.end(), ext.begin(),
                   [](char ch) { return ch >= 'A' && ch <= 'Z' ? static_cast<char>(ch - 'A' + 'a') : ch; });
    return ext;
}

} // namespace probescope::tensor
