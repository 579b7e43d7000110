// SPDX-License-Identifier: Apache-2.0
// probescope._C's free benchmark functions (freebenchpy.cpp): the C++ library's engine driven from Python.
#pragma once

#include <pybind11/pybind11.h>

/// Adds free_benchmark_open/start/stop/next_step to the module.
void defineFreeBenchmark(pybind11::module_& m);
