// SPDX-License-Identifier: Apache-2.0
// probescope-example-train: a small LibTorch training run that dumps itself with ProbeScope's
// collection library. Two runs, one with --perturb gelu, form an NPU/bench pair for the compare.
#include "model.h"

#include <probescope/collect/precisiondebugger.h>

#include <torch/library.h>

#include <charconv>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>
#include <string_view>

#include <fcntl.h>
#include <unistd.h>

namespace {

namespace collect = probescope::collect;
namespace example = probescope::example;

const char* const kUsage = R"(probescope-example-train - a LibTorch training run dumped as msprobe dumps

usage:
  probescope-example-train --dump-path DIR [--config FILE]
                           [--task statistics|tensor|overflow_check|free_benchmark]
                           [--level L0|L1|mix] [--steps N] [--perturb gelu|gelu-inf]
                           [--optimizer sgd|adam] [--summary-mode md5] [--no-debugger]
                           [--batch N] [--image N] [--width N] [--hidden N] [--threads N]
                           [--unstable-op] [--async-queue-bytes N]

  Trains conv + attention + MLP on fixed data for N steps (default 2) and dumps each step with
  PrecisionDebugger to DIR/step{N}/rank/ (rank{R} when RANK is set). --config takes an msprobe
  config.json; the other options override it. --perturb gelu makes aten::gelu a buggy kernel that
  adds noise to its output (gelu-inf: writes inf into one element), so a run with and one without it
  form an NPU/bench pair whose first failing node is the GELU. --no-debugger trains without dumping.
  --batch, --image, --width, --hidden size the model and its data (default 4, 8, 16, 32).
  --threads sets LibTorch's intra-op threads (default 1, so that two runs are bit-identical).
  --unstable-op adds an ill-conditioned float32 sum (large terms that cancel) and a bfloat16 layer_norm
  for the free benchmark (task free_benchmark in --config, or --task free_benchmark with its defaults)
  to flag; it prints the free benchmark's log lines to stderr.
  --async-queue-bytes N bounds the background writer's queue (0: write in the training thread;
  default: config.json's async_queue_bytes, else 1 GiB or 1/8 of the memory, the smaller).
)";

struct Args
{
    collect::Options options;
    example::ModelSize size;
    std::int64_t threads = 1;
    std::int64_t steps = 2;
    std::string perturb;
    std::string optimizer = "sgd";
    bool md5 = false;
    bool debugger = true;
};

std::optional<std::int64_t> parseCount(std::string_view s)
{
    std::int64_t v = 0;
    const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || ptr != s.data() + s.size() || v < 0)
        return std::nullopt;
    return v;
}

int usage(const std::string& message)
{
    std::cerr << "probescope-example-train: " << message << "\n(run with --help for usage)\n";
    return 2;
}

std::optional<int> parseArgs(int argc, char** argv, Args& args)
{
    for (int i = 1; i < argc; ++i) {
        const std::string_view a = argv[i];
        if (a == "--help" || a == "-h") {
            std::cout << kUsage;
            return 0;
        }
        if (a == "--no-debugger") {
            args.debugger = false;
            continue;
        }
        if (a == "--unstable-op") {
            args.size.unstable = true;
            continue;
        }
        if (i + 1 >= argc)
            return usage(std::string(a) + " needs a value");
        const std::string_view v = argv[++i];
        if (a == "--dump-path") {
            args.options.dumpPath = std::string(v);
        } else if (a == "--config") {
            args.options.configPath = std::string(v);
        } else if (a == "--task") {
            args.options.task = collect::parseTask(v);
            if (!args.options.task)
                return usage("--task is statistics, tensor, overflow_check or free_benchmark");
        } else if (a == "--level") {
            args.options.level = collect::parseLevel(v);
            if (!args.options.level || *args.options.level == collect::Level::Debug)
                return usage("--level is L0, L1 or mix");
        } else if (a == "--steps") {
            const auto n = parseCount(v);
            if (!n || *n == 0)
                return usage("--steps needs a number of steps >= 1");
            args.steps = *n;
        } else if (a == "--perturb") {
            if (v != "gelu" && v != "gelu-inf")
                return usage("--perturb is gelu or gelu-inf");
            args.perturb = std::string(v);
        } else if (a == "--optimizer") {
            if (v != "sgd" && v != "adam")
                return usage("--optimizer is sgd or adam");
            args.optimizer = std::string(v);
        } else if (a == "--threads") {
            const auto n = parseCount(v);
            if (!n || *n == 0)
                return usage("--threads needs a number >= 1");
            args.threads = *n;
        } else if (a == "--batch" || a == "--image" || a == "--width" || a == "--hidden") {
            const auto n = parseCount(v);
            if (!n || *n == 0 || (a == "--image" && *n % 2 != 0))
                return usage(std::string(a) + " needs a number >= 1 (--image: even)");
            std::int64_t& field = a == "--batch" ? args.size.batch
                : a == "--image"                 ? args.size.image
                : a == "--width"                 ? args.size.width
                                                 : args.size.hidden;
            field = *n;
        } else if (a == "--async-queue-bytes") {
            const auto n = parseCount(v);
            if (!n)
                return usage("--async-queue-bytes needs a number of bytes >= 0");
            args.options.asyncQueueBytes = static_cast<std::uint64_t>(*n);
        } else if (a == "--summary-mode") {
            if (v != "md5" && v != "statistics")
                return usage("--summary-mode is statistics or md5");
            args.md5 = v == "md5";
        } else {
            return usage("unknown option " + std::string(a));
        }
    }
    if (args.debugger && !args.options.dumpPath && args.options.configPath.empty())
        return usage("--dump-path DIR (or --config FILE with a dump_path) is required");
    return std::nullopt;
}

int run(Args& args)
{
    at::set_num_threads(static_cast<int>(args.threads)); // 1: bit-identical runs, the pair differs only by the bug
    collect::seedAll(2024, false);
    const example::ModelSize size = args.size;
    example::ExampleNet model(size);

    std::unique_ptr<torch::Library> bug;
    if (!args.perturb.empty())
        bug = example::installBuggyGelu(args.perturb == "gelu-inf" ? 0 : 7, args.perturb == "gelu-inf");

    std::unique_ptr<collect::PrecisionDebugger> debugger;
    if (args.debugger) {
        args.options.model = model.ptr();
        if (args.md5 && !args.options.configPath.empty())
            return usage("--summary-mode applies without --config only (set summary_mode in the file)");
        std::filesystem::path md5Config;
        if (args.md5) {
            // summary_mode lives in the statistics section of config.json: a small one, read at once.
            md5Config = std::filesystem::temp_directory_path()
                / ("probescope-example-train-" + std::to_string(::getpid()) + ".json");
            // A fresh file (O_EXCL: a name planted in the shared temp folder, even a symlink, is refused, never
            // followed), written whole or reported.
            const int fd = ::open(md5Config.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
            static constexpr std::string_view kMd5Config =
                "{\"task\": \"statistics\", \"statistics\": {\"summary_mode\": \"md5\"}}\n";
            const bool written = fd >= 0 && ::write(fd, kMd5Config.data(), kMd5Config.size())
                                                == static_cast<ssize_t>(kMd5Config.size());
            if (fd >= 0 && (::close(fd) != 0 || !written))
                std::filesystem::remove(md5Config);
            if (fd < 0 || !written || !std::filesystem::exists(md5Config))
                return usage("cannot write " + md5Config.string());
            args.options.configPath = md5Config.string();
        }
        debugger = std::make_unique<collect::PrecisionDebugger>(args.options);
        if (!md5Config.empty())
            std::filesystem::remove(md5Config);
    }

    std::unique_ptr<torch::optim::Optimizer> optimizer;
    if (args.optimizer == "adam")
        optimizer = std::make_unique<torch::optim::Adam>(model->parameters(), torch::optim::AdamOptions(1e-3));
    else
        optimizer = std::make_unique<torch::optim::SGD>(model->parameters(),
                                                         torch::optim::SGDOptions(0.1).momentum(0.9));

    for (std::int64_t step = 0; step < args.steps; ++step) {
        const example::Batch batch = example::makeBatch(step, size);
        if (debugger)
            debugger->start();
        const torch::Tensor logits = collect::call(model)(batch.images);
        const torch::Tensor loss = torch::nn::functional::cross_entropy(logits, batch.labels);
        loss.backward();
        if (debugger)
            debugger->stop();
        optimizer->step();
        optimizer->zero_grad();
        if (debugger)
            debugger->step();
        std::printf("step %lld: loss %.6f\n", static_cast<long long>(step), loss.item<double>());
        std::fflush(stdout);
    }
    if (debugger)
        std::printf("dump: %s\n", debugger->config().dumpPath.c_str());
    return 0;
}

} // namespace

int main(int argc, char** argv)
{
    Args args;
    if (const auto rc = parseArgs(argc, argv, args))
        return *rc;
    try {
        return run(args);
    } catch (const collect::CollectError& e) {
        std::cerr << "probescope-example-train: " << e.what() << "\n";
        return 1;
    } catch (const std::exception& e) {
        std::cerr << "probescope-example-train: " << e.what() << "\n";
        return 1;
    }
}
