// SPDX-License-Identifier: Apache-2.0
// ProbeScope's collection library: msprobe's monitor (TrainerMon) for LibTorch training programs. Per-step
// statistics of module activations and their gradients, weight gradients, Adam's moments and parameters, with
// msprobe's alert rules, written in msprobe's v1 monitor layout (docs/monitor.md, "Collecting monitor data"):
//   MONITOR_OUTPUT_DIR/<time>-rank<R>-<uid>/<metric>_<a>-<b>.csv and MONITOR_OUTPUT_DIR/anomaly_detected/rank<R>/anomaly.json
// which `msprobe data2db --format monitor` and `probescope-cli data2db --format monitor` read.
#pragma once

#include "probescope/collect/monitorconfig.h"

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace torch::nn {
class Module;
}
namespace torch::optim {
class Optimizer;
}

namespace probescope::collect {

/// Where and as whom a TrainerMon writes.
struct MonitorOptions
{
    /// This process's rank. Default: the RANK environment variable (torchrun), else 0.
    std::optional<std::int64_t> rank;
    /// The output root. Default: the MONITOR_OUTPUT_DIR environment variable, else ./monitor_output.
    std::optional<std::filesystem::path> outputDir;
    std::int64_t ppStage = 0;                 ///< anomaly records' pp_stage (msprobe: rank in the process group)
    std::vector<std::int64_t> groupMates;     ///< anomaly records' group_mates; default: {rank}
};

/**
 * @brief msprobe's TrainerMon for a LibTorch program (one per process).
 *
 *     TrainerMon mon("monitor_config.json");
 *     mon.setMonitor({model}, optimizer, gradAccSteps);
 *     for (...) {                                 // each micro step:
 *         auto h = mon.forward(*model->fc1, {x}, model->fc1->forward(x));  // a target module's call
 *         ... loss.backward();
 *         mon.step();                             // in place of optimizer.step()
 *     }
 *
 * LibTorch modules have no hooks, so a target module's activations are handed over by forward() (its output
 * gradient and, where an input requires grad, the input's gradient follow through tensor hooks). Weight gradients
 * are read at step(): LibTorch has no gradient bucket sync, so grad_unreduced and grad_reduced hold the same
 * accumulated gradient. Errors throw CollectError.
 */
class TrainerMon
{
public:
    explicit TrainerMon(const std::string& configPath, MonitorOptions options = {});
    ~TrainerMon(); ///< only complete steps are written (step() writes each)
    TrainerMon(const TrainerMon&) = delete;
    TrainerMon& operator=(const TrainerMon&) = delete;

    /// msprobe's set_monitor: the model (one entry per VPP chunk), its optimizer (Adam/AdamW for exp_avg), the
    /// micro steps per step and the first step's number.
    void setMonitor(std::vector<std::shared_ptr<torch::nn::Module>> chunks, torch::optim::Optimizer& optimizer,
                    std::int64_t gradAccSteps = 1, std::int64_t startIteration = 0);
    /// A target module's call: records its inputs and output (actv) and hooks the output (and inputs that
    /// require grad) for actv_grad. Returns `output`. A module that is not a target is passed through.
    at::Tensor forward(const torch::nn::Module& module, const std::vector<at::Tensor>& inputs, const at::Tensor& output);
    /// In place of optimizer.step(): weight gradients, moments and parameters before, optimizer.step(), parameters
    /// after, then the step's CSV rows and anomalies are written.
    void step();
    /// The run folder (<output>/<time>-rank<R>-<uid>).
    std::filesystem::path runDir() const;
    const MonitorConfig& config() const;

    struct Impl;

private:
    std::unique_ptr<Impl> m_impl;
};

} // namespace probescope::collect
