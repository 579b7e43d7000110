// SPDX-License-Identifier: Apache-2.0
// The native half of probescope.ConfigChecker (probescope/_configcheck.py, docs/config-check.md "The dynamic
// pack"): the pack's entries go into the zip through core/util/ziparchive.h (the gate's zip writer, one folder lock
// per append, no entry replaced), and the launch scripts' hyperparameters are read by the same parser as
// `probescope-cli config_check -d` (core/setupcheck).
#include "core/collect/python/configcheckbind.h"

#include "core/setupcheck/configpack.h"
#include "core/setupcheck/pyjson.h"
#include "core/util/ziparchive.h"

#include <pybind11/stl.h>

#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace py = pybind11;

namespace probescope::collect {

void registerConfigCheck(py::module_& m)
{
    m.def(
        "config_check_append",
        [](const std::string& zipPath, const std::vector<std::pair<std::string, std::string>>& entries) {
            Result<bool> written = [&] {
                py::gil_scoped_release unlocked;
                return appendToZip(zipPath, entries);
            }();
            if (!written)
                throw py::value_error(written.error().message);
        },
        py::arg("zip_path"), py::arg("entries"),
        "Adds (name, text) entries to the pack zip (created when missing) under a lock of its folder, as msprobe's "
        "create_file_in_zip appends; an entry the zip already holds is a ValueError and nothing changes.");
    m.def(
        "config_check_hyperparameters",
        [](const std::vector<std::string>& scripts) {
            std::vector<std::filesystem::path> paths(scripts.begin(), scripts.end());
            std::vector<std::string> notes;
            auto hyper = setupcheck::collectHyperparameters(paths, notes);
            if (!hyper)
                throw py::value_error(hyper.error().message);
            std::optional<std::string> text;
            if (!hyper->empty())
                text = setupcheck::pyJsonDumps(*hyper);
            return std::make_pair(text, notes);
        },
        py::arg("scripts"),
        "hyperparameters_static.json of the launch scripts (.sh) and YAML files as msprobe 26 parses and merges "
        "them (None when none were found), and msprobe's log lines.");
}

} // namespace probescope::collect
