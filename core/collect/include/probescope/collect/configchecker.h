// SPDX-License-Identifier: Apache-2.0
// msprobe 26's dynamic config_check pack for LibTorch training programs (docs/config-check.md, "The dynamic pack"):
// the same zip layout as msprobe's ConfigChecker and ProbeScope's Python probescope.ConfigChecker, so
// `probescope-cli config_check -c` and msprobe's `config_check -c` compare its packs with either tool's.
#pragma once

#include <ATen/core/ivalue.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace torch::nn {
class Module;
}

namespace probescope::collect {

/**
 * @brief msprobe's ConfigChecker(model, output_zip_path): packs this process's run into a zip.
 *
 * Rank 0 (or a program that is not distributed) writes `env` (the environment as json.dumps(os.environ) spells
 * it) at construction; every rank then adds, at each beforeForward(), dataset/step{S}/rank{R}/dataset.json (the
 * max/min/mean/norm of every tensor argument) and weights/step{S}/rank{R}/weight.json (of every parameter, in
 * float32), and rank 0 adds random/rank0.json (the random ops counted since applyPatches()) once, at the first
 * step. A LibTorch module has no pre-forward hook: call beforeForward() with the arguments just before each
 * forward of the model. `pip` and `hyperparameters/` describe a Python environment and launch script: pack them
 * with `probescope-cli config_check -d`. The rank is the RANK environment variable (torchrun), else 0 and not
 * distributed. Errors throw CollectError naming the zip: rank 0 refuses an existing zip (msprobe would append to
 * it), and no rank replaces an entry the zip already holds.
 */
class ConfigChecker
{
public:
    explicit ConfigChecker(std::shared_ptr<torch::nn::Module> model,
                           std::string outputZipPath = "./config_check_pack.zip",
                           std::optional<std::int64_t> rank = std::nullopt);
    ~ConfigChecker();
    ConfigChecker(const ConfigChecker&) = delete;
    ConfigChecker& operator=(const ConfigChecker&) = delete;

    /// msprobe's ConfigChecker.apply_patches(): from now on, this process counts the calls of the random ops
    /// torch.rand, randint, randn, rand_like, randint_like, randn_like and Tensor.exponential_, geometric_,
    /// log_normal_, cauchy_ (outermost calls, every thread; through at::RecordFunction). C++ has no Python stack:
    /// each op's calls are one entry with an empty stack, so a C++ pack's counts compare with another C++ pack's.
    static void applyPatches();

    /// What msprobe's pre-forward hook records for one step; the step counts this checker's calls from 0 (msprobe
    /// counts in a class attribute shared by all checkers of the process; one checker per process sees no
    /// difference). `kwargs` in the order of the call.
    void beforeForward(const std::vector<c10::IValue>& args,
                       const std::vector<std::pair<std::string, c10::IValue>>& kwargs = {});

    const std::string& outputZipPath() const { return m_zip; }
    std::int64_t rank() const { return m_rank; }

private:
    void add(const std::string& name, const std::string& content);
    std::shared_ptr<torch::nn::Module> m_model;
    std::string m_zip;
    std::int64_t m_rank = 0;
    bool m_rankZero = true;
    bool m_randomWritten = false;
    std::int64_t m_step = 0;
};

} // namespace probescope::collect
