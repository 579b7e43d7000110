// SPDX-License-Identifier: Apache-2.0
#pragma once

// Internal to the compare library: the yaml-cpp plumbing shared by the mapping readers, and the dotted-name
// string helpers the mapping code and the msprobe 26 profile share.
#include "core/util/diagnostic.h"

#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace probescope::compare {

/// A yaml-cpp mark (0-based) as a 1-based source location in `path`.
SourceLocation yamlLocation(const std::filesystem::path& path, const YAML::Mark& mark);

/// Loads a YAML file; a missing file or bad YAML becomes a compare.mapping error naming the file and the
/// position yaml-cpp reports. `what` names the file's role in messages ("data mapping").
Result<YAML::Node> loadYamlFile(const std::filesystem::path& path, std::string_view what);

/// A compare.mapping error at a node.
Diagnostic yamlError(const std::filesystem::path& path, const YAML::Node& at, std::string message);

/// The text of a scalar node; "" for anything else.
std::string scalarText(const YAML::Node& node);

/// Python's name.split('.').
std::vector<std::string> splitDots(std::string_view name);
/// '.'.join(parts[begin:end]) with Python's clamping of the bounds.
std::string joinDots(const std::vector<std::string>& parts, std::size_t begin, std::size_t end);
/// Python's s.replace(from, to): every occurrence, left to right.
std::string replaceAll(std::string s, std::string_view from, std::string_view to);
/// Python's s.replace(from, to, 1).
std::string replaceFirst(std::string s, std::string_view from, std::string_view to);

} // namespace probescope::compare
