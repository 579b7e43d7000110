// SPDX-License-Identifier: Apache-2.0
// probescope._C's free benchmark: task "free_benchmark" from Python runs the C++ library's engine
// (core/collect/freebench.h), the one the C++ API runs. Python's torch calls reach the same LibTorch dispatcher
// (python3-torch runs on libtorch-dev's shared libraries, docs/collect.md "The Python module"), so the engine's
// dispatcher fallback sees the aten ops the training script's Python calls run, between start() and stop(), on
// the thread that called start(). Config, perturbations, checks, preheat and free_benchmark.csv are the
// library's; nothing of them is restated in Python. docs/free-benchmark.md, "From Python".
#include "core/collect/python/freebenchpy.h"

#include "core/collect/freebench.h"
#include "probescope/collect/config.h"

#include <pybind11/stl.h>

#include <cstdio>
#include <memory>
#include <optional>
#include <string>

namespace py = pybind11;
namespace collect = probescope::collect;

namespace {

/// config.json through the library's parser with PrecisionDebugger's arguments over it (loadConfig with
/// overrides: the free_benchmark section is read even when the file names another task, as msprobe reads it),
/// checked by the rules the C++ API applies (freeBenchmarkProblem). ValueError naming the file and key otherwise.
collect::Config freeBenchmarkConfig(const py::object& configPath, const std::string& dumpPath, const std::string& level)
{
    collect::ConfigOverrides overrides;
    overrides.task = collect::Task::FreeBenchmark;
    overrides.dumpPath = dumpPath;
    overrides.level = collect::parseLevel(level);
    if (!overrides.level)
        throw py::value_error("PrecisionDebugger(): error [collect.config]: unknown level \"" + level + "\"");
    const std::string file = configPath.is_none() ? std::string() : configPath.cast<std::string>();
    try {
        py::gil_scoped_release unlocked;
        return collect::loadConfig(file, overrides);
    } catch (const collect::CollectError& e) {
        throw py::value_error(e.what());
    }
}

/// The process's one engine (one PrecisionDebugger per process). Never destroyed: its torch::Library
/// registration must not be torn down by static destructors after LibTorch's own.
struct FreeBenchmark
{
    collect::Config config;
    std::unique_ptr<collect::freebench::Engine> engine;
};

FreeBenchmark* gFree = nullptr; // used with the GIL held

FreeBenchmark& current()
{
    if (!gFree)
        throw std::runtime_error("free_benchmark: free_benchmark_open() was not called");
    return *gFree;
}

void raiseProblem(collect::freebench::Engine& engine)
{
    if (auto problem = engine.takeProblem())
        throw py::value_error(problem->format());
}

} // namespace

void defineFreeBenchmark(py::module_& m)
{
    m.def(
        "free_benchmark_open",
        [](const py::object& configPath, const std::string& dumpPath, const std::string& level,
           std::optional<std::int64_t> rank) {
            if (gFree && gFree->engine)
                throw std::runtime_error("free_benchmark: the engine is already open (one debugger per process)");
            auto config = freeBenchmarkConfig(configPath, dumpPath, level);
            auto* fb = gFree ? gFree : new FreeBenchmark();
            fb->config = config;
            try {
                fb->engine = std::make_unique<collect::freebench::Engine>(
                    fb->config, rank, [](const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); });
            } catch (const collect::CollectError& e) {
                gFree = fb;
                throw std::runtime_error(e.what());
            }
            gFree = fb;
        },
        py::arg("config_path"), py::arg("dump_path"), py::arg("level"), py::arg("rank"),
        "Makes the process's free benchmark engine (the C++ library's); `rank` None = not distributed.");
    m.def(
        "free_benchmark_start",
        [](const std::string& rankDir, std::int64_t step) { current().engine->start(rankDir, step); },
        py::arg("rank_dir"), py::arg("step"),
        "Intercepts the calling thread's aten ops from now on; free_benchmark.csv goes to rank_dir "
        "(dump_path/step{N}/rank{R}, claimed at its first row as every collector folder).");
    m.def(
        "free_benchmark_stop",
        [] {
            FreeBenchmark& fb = current();
            fb.engine->stop();
            raiseProblem(*fb.engine);
        },
        "Stops intercepting; raises the first write error met since the last call (ValueError naming the file).");
    m.def(
        "free_benchmark_next_step",
        [] {
            if (!gFree || !gFree->engine)
                return;
            gFree->engine->nextStep();
            raiseProblem(*gFree->engine);
        },
        "The step ended: the engine's call counters restart.");
}
