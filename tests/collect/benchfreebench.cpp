// SPDX-License-Identifier: Apache-2.0
// probescope-bench-freebench: what the free benchmark costs a training step (issue 7 §7). Median step
// time of the example model without a debugger, and with task free_benchmark in check mode restricted
// by a list (the ops the list names are re-executed perturbed; every other op passes the dispatcher
// fallback once), and over every op. Modes take turns, a few steps each, as in bench-collect.
// Run by the bench-freebench target; timing is never a unit test.
#include "model.h"

#include <probescope/collect/precisiondebugger.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include <unistd.h>

namespace fs = std::filesystem;
namespace collect = probescope::collect;
namespace example = probescope::example;

namespace {

using Clock = std::chrono::steady_clock;

struct Mode
{
    const char* name;
    bool debugger = false;
    collect::PertMode pert = collect::PertMode::ImprovePrecision;
    std::vector<std::string> list;
};

void stepTable(const example::ModelSize& size, int rounds, int steps, const fs::path& scratch)
{
    const Mode modes[] = {
        { "none", false, {}, {} },
        { "check list=[gelu] bit_noise", true, collect::PertMode::BitNoise, { "gelu" } },
        { "check list=[addmm,matmul,gelu] bit_noise", true, collect::PertMode::BitNoise, { "addmm", "matmul", "gelu" } },
        { "check all ops bit_noise", true, collect::PertMode::BitNoise, {} },
        { "check all ops improve_precision", true, collect::PertMode::ImprovePrecision, {} },
    };
    constexpr std::size_t kModes = std::size(modes);
    std::vector<double> times[kModes];
    collect::seedAll(2024, false);
    example::ExampleNet model(size);
    torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(0.001));
    const example::Batch batch = example::makeBatch(0, size);
    for (int round = 0; round < rounds; ++round) {
        for (std::size_t m = 0; m < kModes; ++m) {
            std::unique_ptr<collect::PrecisionDebugger> debugger;
            if (modes[m].debugger) {
                collect::Options o;
                o.dumpPath = (scratch / "fb").string();
                o.task = collect::Task::FreeBenchmark;
                o.log = [](const std::string&) {}; // the log lines are not what is measured
                if (modes[m].list.empty()) {
                    collect::FreeBenchmarkConfig f;
                    f.pertMode = modes[m].pert;
                    o.freeBenchmark = f;
                } else {
                    // The list lives in config.json's section (Options carry no list).
                    const fs::path config = scratch / "config.json";
                    std::string list;
                    for (const auto& item : modes[m].list) {
                        list += list.empty() ? "\"" : ", \"";
                        list += item;
                        list += '"';
                    }
                    FILE* file = std::fopen(config.c_str(), "w");
                    if (!file)
                        throw std::runtime_error("cannot write " + config.string());
                    std::fprintf(file,
                                 "{\"task\": \"free_benchmark\", \"free_benchmark\": {\"pert_mode\": \"%s\", \"list\": [%s]}}\n",
                                 collect::toString(modes[m].pert), list.c_str());
                    std::fclose(file);
                    o.configPath = config.string();
                }
                debugger = std::make_unique<collect::PrecisionDebugger>(o);
            }
            for (int i = 0; i <= steps; ++i) { // the first step of a turn warms up
                const auto t0 = Clock::now();
                if (debugger)
                    debugger->start();
                const auto logits = collect::call(model)(batch.images);
                const auto loss = torch::nn::functional::cross_entropy(logits, batch.labels);
                loss.backward();
                if (debugger)
                    debugger->stop();
                optimizer.step();
                optimizer.zero_grad();
                if (debugger)
                    debugger->step();
                if (i > 0)
                    times[m].push_back(std::chrono::duration<double>(Clock::now() - t0).count());
            }
            debugger.reset();
            fs::remove_all(scratch / "fb");
        }
    }
    std::printf("\nbatch %lld, image %lldx%lld, width %lld, hidden %lld; median of %d steps per mode\n",
                static_cast<long long>(size.batch), static_cast<long long>(size.image), static_cast<long long>(size.image),
                static_cast<long long>(size.width), static_cast<long long>(size.hidden), rounds * steps);
    std::printf("  %-42s %12s %8s\n", "mode", "step (ms)", "x none");
    double base = 0;
    for (std::size_t m = 0; m < kModes; ++m) {
        std::sort(times[m].begin(), times[m].end());
        const double median = times[m][times[m].size() / 2];
        if (m == 0)
            base = median;
        std::printf("  %-42s %12.2f %8.2f\n", modes[m].name, median * 1e3, median / base);
    }
    std::fflush(stdout);
}

} // namespace

int main(int argc, char** argv)
{
    bool quick = false;
    fs::path scratch = fs::temp_directory_path() / ("probescope-bench-freebench-" + std::to_string(::getpid()));
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--quick") == 0)
            quick = true;
        else if (std::strcmp(argv[i], "--scratch") == 0 && i + 1 < argc)
            scratch = fs::path(argv[++i]) / ("probescope-bench-freebench-" + std::to_string(::getpid()));
        else {
            std::fprintf(stderr, "usage: probescope-bench-freebench [--quick] [--scratch DIR]\n");
            return 2;
        }
    }
    fs::create_directories(scratch);
    at::set_num_threads(1);
    try {
        stepTable(example::ModelSize {}, quick ? 1 : 8, quick ? 1 : 10, scratch);
        if (!quick) {
            example::ModelSize large;
            large.batch = 32;
            large.image = 32;
            large.width = 64;
            large.hidden = 256;
            stepTable(large, 3, 4, scratch);
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "probescope-bench-freebench: %s\n", e.what());
        fs::remove_all(scratch);
        return 1;
    }
    fs::remove_all(scratch);
    return 0;
}
