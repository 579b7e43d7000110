// SPDX-License-Identifier: Apache-2.0
#include "compare/comparetable.h"

#include <yaml-cpp/yaml.h>

namespace probescope::compare {

Result<DataMapping> readDataMapping(const std::filesystem::path& path)
{
    // yaml-cpp reports problems by exception; they stop here.
    try {
        const YAML::Node root = YAML::LoadFile(path.string());
        if (!root.IsMap())
            return makeError("compare.mapping", SourceLocation { path.string(), std::nullopt, 1, 1 },
                             "a data mapping must be a YAML mapping of NPU row name: bench row name");
        DataMapping mapping;
        mapping.path = path;
        for (const auto& item : root) {
            if (!item.first.IsScalar() || !item.second.IsScalar()) {
                const auto mark = item.first.Mark();
                return makeError("compare.mapping",
                                 SourceLocation { path.string(), std::nullopt, static_cast<std::uint32_t>(mark.line + 1),
                                                  static_cast<std::uint32_t>(mark.column + 1) },
                                 "every item must map one row name to one row name");
            }
            mapping.pairs.emplace_back(item.first.as<std::string>(), item.second.as<std::string>());
        }
        return mapping;
    } catch (const YAML::BadFile&) {
        return makeError("compare.mapping", SourceLocation { path.string(), std::nullopt, 0, 0 },
                         "cannot open the data mapping file");
    } catch (const YAML::Exception& e) {
        return makeError("compare.mapping",
                         SourceLocation { path.string(), std::nullopt, static_cast<std::uint32_t>(e.mark.line + 1),
                                          static_cast<std::uint32_t>(e.mark.column + 1) },
                         "not valid YAML: " + e.msg);
    }
}

} // namespace probescope::compare
