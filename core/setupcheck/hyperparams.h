// SPDX-License-Identifier: Apache-2.0
#pragma once
// msprobe 26's hyperparameter extraction for config_check packs (utils/hyperparameter_parser.py): ShellParser's
// regular expressions ported as hand-written scanners (no std::regex on input text, linear except where a pattern
// itself backtracks over a bounded name), YamlParser with PyYAML's YAML 1.1 typing of plain scalars.

#include "core/setupcheck/pyjson.h"

#include <string>
#include <string_view>

namespace probescope::setupcheck {

/// ShellParser.parse of a launch script's text: the arguments of the first msrun/torchrun/torch.distributed.launch
/// command, with `*_ARGS="..."` blocks substituted and `$VAR` values looked up in the script. Keys in first-seen
/// order, a repeated key keeping its last value; a flag without value is true.
PyJson parseShellHyperparameters(std::string_view script);

/// YamlParser.recursive_parse_parameters of a YAML document: dotted keys ("model.lr") to scalars, lists of scalars
/// kept whole, other lists by index, None values dropped. `into` accumulates (msprobe keeps one class-level dict
/// for every YAML file of a pack; the caller passes the same object for each file). Errors (id
/// `config-check.yaml`) name `file`.
std::optional<Diagnostic> parseYamlHyperparameters(std::string_view text, const std::string& file, PyJson& into);

/// PyYAML's value of a plain (unquoted) scalar: bool, int, float, None or str, by the YAML 1.1 resolvers.
PyJson resolvePlainScalar(std::string_view text);

/// update_dict: a key already present with another value becomes {"description": "duplicate_value", "values": [old,
/// new]}.
void updateHyperparameters(PyJson& into, const PyJson& add);

} // namespace probescope::setupcheck
