// SPDX-License-Identifier: Apache-2.0
#pragma once
// msprobe 26's static pack, `config_check -d [train.sh] [config.yaml] -o pack.zip` (ConfigChecker(shell_path,
// output_zip_path) without a model): `env` (the environment as json.dumps(os.environ, indent=4)), `pip` (one
// "Name=version" line per installed Python distribution) and hyperparameters/hyperparameters_static.json (from the
// launch scripts and YAML files, when any were found). The zip layout is msprobe's, so either tool reads the other's
// packs.

#include "core/setupcheck/pyjson.h"
#include "core/util/diagnostic.h"

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace probescope::setupcheck {

/// Where the Python packages were looked for, and what was found.
struct PipListing
{
    std::filesystem::path python;             ///< the python3 found on PATH (empty: none)
    std::vector<std::filesystem::path> paths; ///< the site folders read, in sys.path order
    std::string text;                         ///< the `pip` entry: "Name=version\n" per distribution
};

/**
 * @brief The installed distributions of the python3 first on `pathVariable` (PATH), found without running Python:
 * its sys.path site folders (a venv's `pyvenv.cfg` honoured; Debian's dist-packages; the user site first) are listed
 * and every `*.dist-info/METADATA` and `*.egg-info` (PKG-INFO) gives its Name and Version, as
 * importlib.metadata.distributions() does (docs/config-check.md).
 */
PipListing listPythonPackages(const std::string& pathVariable, const std::string& home);

/// json.dumps(os.environ, indent=4) of `environ` (NAME=value strings, in their order; a later repeat replaces).
std::string environmentJson(const std::vector<std::string>& environ);

struct PackInputs
{
    std::vector<std::filesystem::path> scripts; ///< .sh launch scripts and .yaml files, in the order given
    std::vector<std::string> environ;           ///< the environment to record
    std::string pip;                            ///< the `pip` entry
};

struct PackOutcome
{
    std::vector<std::string> entries; ///< the zip's entries, in order
    std::vector<std::string> notes;   ///< msprobe's log lines ("Warning: Script path X is not a file.", ...)
};

/// The hyperparameters of the scripts, merged as msprobe merges them (update_dict). Errors name the script.
Result<PyJson> collectHyperparameters(const std::vector<std::filesystem::path>& scripts,
                                      std::vector<std::string>& notes);

/// Writes the pack at `zipPath` (which must end in .zip and must not exist: nothing is replaced).
Result<PackOutcome> writeStaticPack(const PackInputs& inputs, const std::filesystem::path& zipPath);

} // namespace probescope::setupcheck
