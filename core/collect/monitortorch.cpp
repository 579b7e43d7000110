// SPDX-License-Identifier: Apache-2.0
// The monitor's LibTorch half: a tensor's statistics as msprobe 26's registered metrics compute them
// (pytorch/monitor/features.py: min/max in the tensor's dtype, norm and mean in float64, zeros as a float32
// fraction of |x| < eps, nans as a count), and TrainerMon for LibTorch programs (trainermon.h).
#include "core/collect/monitortorch.h"

#include "core/collect/monitorsession.h"
#include "probescope/collect/config.h"
#include "probescope/collect/trainermon.h"

#include <ATen/ATen.h>
#include <torch/nn/module.h>
#include <torch/optim/adam.h>
#include <torch/optim/adamw.h>
#include <torch/optim/optimizer.h>

#include <cmath>
#include <cstdlib>
#include <limits>
#include <unordered_map>

namespace probescope::collect {

namespace monitor {

namespace {

Cell floatCell(double v)
{
    Cell c;
    c.kind = Cell::Kind::Float;
    c.f = v;
    return c;
}

Cell intCell(std::int64_t v)
{
    Cell c;
    c.kind = Cell::Kind::Int;
    c.i = v;
    return c;
}

Cell textCell(std::string text)
{
    Cell c;
    c.kind = Cell::Kind::Text;
    c.text = std::move(text);
    return c;
}

/// .item() as Python sees it: a float for floating tensors, an int otherwise.
Cell scalarCell(const at::Tensor& value)
{
    if (at::isFloatingType(value.scalar_type()))
        return floatCell(value.item<double>());
    return intCell(value.item<std::int64_t>());
}

const char* torchDtypeName(c10::ScalarType t)
{
    switch (t) {
    case c10::ScalarType::Float: return "torch.float32";
    case c10::ScalarType::Double: return "torch.float64";
    case c10::ScalarType::Half: return "torch.float16";
    case c10::ScalarType::BFloat16: return "torch.bfloat16";
    case c10::ScalarType::Long: return "torch.int64";
    case c10::ScalarType::Int: return "torch.int32";
    case c10::ScalarType::Short: return "torch.int16";
    case c10::ScalarType::Char: return "torch.int8";
    case c10::ScalarType::Byte: return "torch.uint8";
    case c10::ScalarType::Bool: return "torch.bool";
    case c10::ScalarType::ComplexFloat: return "torch.complex64";
    case c10::ScalarType::ComplexDouble: return "torch.complex128";
    default: return "torch.unknown";
    }
}

} // namespace

Row stats(const at::Tensor& tensor, const std::vector<std::string>& ops, double eps)
{
    const at::Tensor t = tensor.detach();
    Row row;
    row.reserve(ops.size());
    at::Tensor asDouble;
    const auto inDouble = [&]() -> const at::Tensor& {
        if (!asDouble.defined())
            asDouble = t.to(at::kDouble);
        return asDouble;
    };
    for (const std::string& op : ops) {
        // Metric.get_metric: a RuntimeError (min of an empty tensor) gives NaN.
        try {
            if (op == "min")
                row.push_back(t.numel() == 0 ? floatCell(std::nan("")) : scalarCell(at::min(t)));
            else if (op == "max")
                row.push_back(t.numel() == 0 ? floatCell(std::nan("")) : scalarCell(at::max(t)));
            else if (op == "norm")
                row.push_back(floatCell(at::linalg_vector_norm(inDouble(), 2).item<double>()));
            else if (op == "mean")
                row.push_back(floatCell(inDouble().mean().item<double>()));
            else if (op == "zeros") {
                if (t.numel() == 0) {
                    row.push_back(floatCell(std::nan("")));
                } else {
                    // torch.sum(bool) / numel: int64 / int in the default float dtype (float32).
                    const auto count = at::lt(at::abs(t), eps).sum().item<std::int64_t>();
                    row.push_back(floatCell(static_cast<double>(static_cast<float>(count)
                                                                / static_cast<float>(t.numel()))));
                }
            } else if (op == "nans")
                row.push_back(intCell(at::isnan(t).sum().item<std::int64_t>()));
            else if (op == "id")
                row.push_back(t.dim() == 0 ? scalarCell(t) : Cell {});
            else if (op == "shape") {
                std::string text = "[";
                for (std::int64_t d = 0; d < t.dim(); ++d)
                    text += (d ? ", " : "") + std::to_string(t.size(d));
                row.push_back(textCell(text + "]"));
            } else if (op == "dtype")
                row.push_back(textCell(torchDtypeName(t.scalar_type())));
            else
                row.emplace_back();
        } catch (const c10::Error&) {
            row.push_back(floatCell(std::nan("")));
        }
    }
    return row;
}

Row missingRow(std::size_t ops)
{
    return Row(ops);
}

RunInfo runInfoFrom(const MonitorOptions& options)
{
    RunInfo info;
    if (options.rank) {
        info.rank = *options.rank;
    } else if (const char* env = std::getenv("RANK"); env && *env) {
        char* end = nullptr;
        const long long v = std::strtoll(env, &end, 10);
        if (end && *end == '\0' && v >= 0)
            info.rank = v;
    }
    if (options.outputDir) {
        info.outputDir = *options.outputDir;
    } else if (const char* env = std::getenv("MONITOR_OUTPUT_DIR"); env && *env) {
        info.outputDir = env;
    } else {
        info.outputDir = "./monitor_output";
    }
    info.ppStage = options.ppStage;
    info.groupMates = options.groupMates;
    return info;
}

bool rankMonitored(const MonitorConfig& config, std::int64_t rank)
{
    if (config.moduleRanks.empty())
        return true;
    for (const auto r : config.moduleRanks) {
        if (r == rank)
            return true;
    }
    return false;
}

} // namespace monitor

using monitor::Session;

struct TrainerMon::Impl
{
    struct ModuleContext
    {
        std::string name;
        std::int64_t microStep = 0;
    };

    MonitorConfig config;
    monitor::RunInfo info;
    std::unique_ptr<Session> session;       ///< none on a rank module_ranks leaves out
    torch::optim::Optimizer* optimizer = nullptr;
    std::int64_t gradAccSteps = 1;
    std::int64_t step = 0;
    std::int64_t collected = 0;
    bool monitoring = true;
    std::vector<std::pair<std::string, at::Tensor>> params; ///< param2name's order
    std::unordered_map<const torch::nn::Module*, ModuleContext> modules;

    bool stepSelected() const
    {
        return step >= config.startStep && (step - config.startStep) % config.stepInterval == 0;
    }
    bool collecting() const { return monitoring && session && stepSelected(); }
    std::string tag(const std::string& name, const char* kind) const
    {
        return monitor::tagName(name, info.rank, kind);
    }
    /// generate_param_metrics: the parameters themselves (param_origin before the step, param_updated after).
    void putParams(const char* kind)
    {
        if (!config.paramDistribution)
            return;
        for (const auto& [name, p] : params) {
            if (p.numel() != 0)
                put(kind, tag(name, kind), p);
        }
    }
    void put(const std::string& bucket, const std::string& tagName, const at::Tensor& t)
    {
        session->bucket(bucket).put(tagName, t.defined() ? monitor::stats(t, config.ops, config.eps)
                                                         : monitor::missingRow(config.ops.size()));
    }
};

TrainerMon::TrainerMon(const std::string& configPath, MonitorOptions options)
    : m_impl(std::make_unique<Impl>())
{
    m_impl->config = loadMonitorConfig(configPath);
    m_impl->info = monitor::runInfoFrom(options);
    m_impl->monitoring = m_impl->config.collectTimes > 0;
    if (monitor::rankMonitored(m_impl->config, m_impl->info.rank))
        m_impl->session = std::make_unique<Session>(m_impl->config, m_impl->info);
}

TrainerMon::~TrainerMon() = default;

const MonitorConfig& TrainerMon::config() const
{
    return m_impl->config;
}

std::filesystem::path TrainerMon::runDir() const
{
    return m_impl->session ? m_impl->session->runDir() : std::filesystem::path();
}

void TrainerMon::setMonitor(std::vector<std::shared_ptr<torch::nn::Module>> chunks, torch::optim::Optimizer& optimizer,
                            std::int64_t gradAccSteps, std::int64_t startIteration)
{
    Impl& d = *m_impl;
    d.optimizer = &optimizer;
    d.gradAccSteps = gradAccSteps > 0 ? gradAccSteps : 1;
    d.step = startIteration >= 0 ? startIteration : 0;
    const auto& targets = d.config.targets;
    // _register_chunk: the target parameters, named "<vpp>:<name>" (squashed when asked).
    for (std::size_t vpp = 0; vpp < chunks.size(); ++vpp) {
        const std::string prefix = std::to_string(vpp) + ":";
        for (const auto& item : chunks[vpp]->named_parameters(/*recurse=*/true)) {
            const at::Tensor& p = item.value();
            if (!p.requires_grad())
                continue;
            const std::string& key = item.key();
            const std::string squashed = prefix + (d.config.squashName ? squashParamName(key) : key);
            bool target = false;
            for (const auto& t : targets)
                target = target || key.starts_with(t) || squashed.starts_with(t) || (prefix + key).starts_with(t);
            if (!target)
                continue;
            std::string name = squashed;
            for (const auto& known : d.params) {
                if (known.first == name)
                    name = prefix + key;
            }
            d.params.emplace_back(name, p);
        }
    }
    if (!d.config.xyDistribution || !d.session)
        return;
    // hook_modules: a target without "<vpp>:" applies to every chunk.
    std::vector<std::string> expanded;
    for (const auto& t : targets) {
        if (t.find(':') == std::string::npos) {
            for (std::size_t vpp = 0; vpp < chunks.size(); ++vpp)
                expanded.push_back(std::to_string(vpp) + ":" + t);
        } else {
            expanded.push_back(t);
        }
    }
    for (std::size_t vpp = 0; vpp < chunks.size(); ++vpp) {
        const std::string prefix = std::to_string(vpp) + ":";
        for (const auto& item : chunks[vpp]->named_modules(/*name_prefix=*/"", /*include_self=*/true)) {
            const std::string squashed = prefix + (d.config.squashName ? squashParamName(item.key()) : item.key());
            std::string name;
            if (d.config.allXy) {
                name = squashed;
            } else {
                for (const auto& candidate : { squashed, prefix + item.key() }) {
                    for (const auto& t : expanded) {
                        if (name.empty() && t == candidate)
                            name = candidate;
                    }
                }
            }
            if (!name.empty())
                d.modules.emplace(item.value().get(), Impl::ModuleContext { name, 0 });
        }
    }
}

at::Tensor TrainerMon::forward(const torch::nn::Module& module, const std::vector<at::Tensor>& inputs,
                               const at::Tensor& output)
{
    Impl& d = *m_impl;
    const auto found = d.modules.find(&module);
    if (found == d.modules.end() || !d.monitoring || !d.session || !module.is_training())
        return output;
    Impl::ModuleContext& context = found->second;
    const std::string micro = ":" + std::to_string(context.microStep);
    context.microStep = (context.microStep + 1) % d.gradAccSteps;
    const auto keyOf = [&](const char* part, std::size_t i, std::size_t count) {
        return context.name + "." + part + (count == 1 ? "" : "_" + std::to_string(i)) + micro;
    };
    const bool collect = d.collecting();
    if (!d.config.backwardOnly) {
        // build_tbtag_tensor_map registers every key's call id; statistics only on a step that is written.
        const std::string bucket = "actv:" + context.name;
        for (std::size_t i = 0; i < inputs.size(); ++i) {
            const std::string key = d.tag(keyOf("input", i, inputs.size()), "actv");
            d.session->registerCallId(key);
            if (collect)
                d.put(bucket, key, inputs[i]);
        }
        const std::string key = d.tag(keyOf("output", 0, 1), "actv");
        d.session->registerCallId(key);
        if (collect)
            d.put(bucket, key, output);
    }
    if (d.config.forwardOnly || !collect || !output.requires_grad())
        return output;
    // actv_grad through tensor hooks: the output's gradient, then each input's that requires grad.
    Session* session = d.session.get();
    const MonitorConfig* cfg = &d.config;
    const std::string outKey = d.tag(keyOf("output", 0, 1), "actv_grad");
    std::vector<std::string> inKeys;
    for (std::size_t i = 0; i < inputs.size(); ++i)
        inKeys.push_back(d.tag(keyOf("input", i, inputs.size()), "actv_grad"));
    at::Tensor hooked = output;
    hooked.register_hook([session, cfg, outKey, inKeys, inputs](const at::Tensor& grad) {
        for (std::size_t i = 0; i < inKeys.size(); ++i) {
            session->registerCallId(inKeys[i]);
            if (!inputs[i].requires_grad())
                session->bucket("actv_grad").put(inKeys[i], monitor::missingRow(cfg->ops.size()));
        }
        session->registerCallId(outKey);
        session->bucket("actv_grad").put(outKey, monitor::stats(grad, cfg->ops, cfg->eps));
    });
    for (std::size_t i = 0; i < inputs.size(); ++i) {
        if (!inputs[i].requires_grad())
            continue;
        at::Tensor in = inputs[i];
        in.register_hook([session, cfg, key = inKeys[i]](const at::Tensor& grad) {
            session->bucket("actv_grad").put(key, monitor::stats(grad, cfg->ops, cfg->eps));
        });
    }
    return hooked;
}

void TrainerMon::step()
{
    Impl& d = *m_impl;
    if (!d.optimizer)
        throw CollectError("collect.monitor", "TrainerMon::step() before setMonitor(): no optimizer to step");
    const bool collect = d.collecting();
    if (collect) {
        Session& s = *d.session;
        if (d.config.wgDistribution) {
            // LibTorch has no gradient bucket sync: the accumulated gradient is both grad_unreduced and grad_reduced.
            for (const auto& [bucket, kind] : { std::pair { "grad_unreduced", "acc_grad" },
                                                std::pair { "grad_reduced", "post_grad" } }) {
                for (const auto& [name, p] : d.params) {
                    const at::Tensor grad = p.grad();
                    if (!grad.defined())
                        continue;
                    const std::string key = d.tag(name, kind);
                    s.registerCallId(key);
                    d.put(bucket, key, grad);
                }
            }
        }
        if (d.config.mvDistribution) {
            s.bucket("exp_avg").clear();
            s.bucket("exp_avg_sq").clear();
            auto& state = d.optimizer->state();
            for (const char* kind : { "exp_avg", "exp_avg_sq" }) {
                const bool first = std::string_view(kind) == "exp_avg";
                for (const auto& [name, p] : d.params) {
                    const std::string key = d.tag(name, kind);
                    s.registerCallId(key);
                    const auto it = state.find(c10::guts::to_string(p.unsafeGetTensorImpl()));
                    if (it == state.end())
                        continue;
                    at::Tensor moment;
                    if (auto* adam = dynamic_cast<torch::optim::AdamParamState*>(it->second.get()))
                        moment = first ? adam->exp_avg() : adam->exp_avg_sq();
                    else if (auto* adamw = dynamic_cast<torch::optim::AdamWParamState*>(it->second.get()))
                        moment = first ? adamw->exp_avg() : adamw->exp_avg_sq();
                    if (moment.defined())
                        d.put(kind, key, moment);
                }
            }
        }
        d.putParams("param_origin");
    }
    d.optimizer->step();
    if (collect) {
        d.putParams("param_updated");
        d.session->writeStep(d.step);
        if (++d.collected >= d.config.collectTimes)
            d.monitoring = false;
    }
    ++d.step;
}

} // namespace probescope::collect
