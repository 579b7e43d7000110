// SPDX-License-Identifier: Apache-2.0
#include "core/compare/table/comparetable.h"
#include "core/compare/match/mappingutil.h"

namespace probescope::compare {

Result<DataMapping> readDataMapping(const std::filesystem::path& path)
{
    auto root = loadYamlFile(path, "data mapping");
    if (!root)
        return root.error();
    if (!root->IsMap())
        return makeError("compare.mapping", SourceLocation { path.string(), std::nullopt, 1, 1 },
                         "a data mapping must be a YAML mapping of NPU row name: bench row name");
    DataMapping mapping;
    mapping.path = path;
    for (const auto& item : *root) {
        if (!item.first.IsScalar() || !item.second.IsScalar())
            return yamlError(path, item.first, "every item must map one row name to one row name");
        mapping.pairs.emplace_back(item.first.Scalar(), item.second.Scalar());
    }
    return mapping;
}

} // namespace probescope::compare
