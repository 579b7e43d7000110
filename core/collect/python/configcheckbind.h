// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <pybind11/pybind11.h>

namespace probescope::collect {

/// Adds config_check_append and config_check_hyperparameters to the module `_C` (probescope/_configcheck.py).
void registerConfigCheck(pybind11::module_& m);

} // namespace probescope::collect
