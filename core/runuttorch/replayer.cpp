// SPDX-License-Identifier: Apache-2.0
// The per-call pipeline of run_ut (run-ut-spec §4): inputs, backward flags, device and bench copies
// with msprobe's upcasting (§4.3), the bench call on the CPU, the device call (with autocast when it
// applies), backward (§4.4), and the conversion of everything to the seam's Values.
#include "core/runuttorch/torchreplayer.h"

#include "core/runuttorch/replaydetail.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Parallel.h>
#include <ATen/autocast_mode.h>
#include <c10/util/Exception.h>

#include <algorithm>
#include <functional>
#include <set>

namespace probescope::runuttorch {

using namespace detail;

namespace {

const char* const kUnsupportBackward
    = "function with out=... arguments don't support automatic differentiation, skip backward.";
const char* const kNoBackwardResult = "This API does not have backward input data, skip backward.";
const char* const kUnsupportApi = "This API does not support backward ut, skip backward.";
const char* const kMultipleBackward = "Multiple backward is not supported.";

bool contains(std::initializer_list<std::string_view> list, std::string_view name)
{
    return std::find(list.begin(), list.end(), name) != list.end();
}

void forEachTensor(PyValue& v, const std::function<void(at::Tensor&)>& fn)
{
    if (v.kind == PyValue::Kind::Tensor)
        fn(v.tensor);
    else if (v.kind == PyValue::Kind::List)
        for (PyValue& e : v.items)
            forEachTensor(e, fn);
}

void forEachTensor(const PyValue& v, const std::function<void(const at::Tensor&)>& fn)
{
    if (v.kind == PyValue::Kind::Tensor)
        fn(v.tensor);
    else if (v.kind == PyValue::Kind::List)
        for (const PyValue& e : v.items)
            forEachTensor(e, fn);
}

/// PRECISION_MAPPING of §4.3.
std::optional<at::ScalarType> raised(at::ScalarType t)
{
    if (t == at::kHalf || t == at::kBFloat16)
        return at::kFloat;
    if (t == at::kFloat)
        return at::kDouble;
    return std::nullopt;
}

bool isLowFloat(at::ScalarType t)
{
    return t == at::kHalf || t == at::kBFloat16 || t == at::kFloat;
}

/// How one side's copies are made.
struct CopyRule
{
    bool bench = false;
    std::optional<at::ScalarType> raiseTo; ///< bench only: the upcast dtype for fp16/bf16/fp32 tensors
    bool keepFp32 = false;                 ///< bench of conv1d/conv2d: HF32-rounded fp32 stays fp32
    bool detach = true;
    bool needBackward = false;
    c10::Device device = c10::Device(c10::kCPU);
};

at::Tensor copyTensor(const at::Tensor& source, const CopyRule& rule, bool detach)
{
    at::Tensor t = source;
    if (rule.bench && rule.raiseTo && isLowFloat(t.scalar_type()) && !(rule.keepFp32 && t.scalar_type() == at::kFloat))
        t = t.to(*rule.raiseTo);
    t = t.clone();
    if (detach)
        t = t.detach();
    t = t.to(rule.device);
    if (rule.needBackward && source.requires_grad()) {
        t.requires_grad_(true);
        t = t.mul(1).type_as(t);
        t.retain_grad();
    }
    return t;
}

PyValue copyValue(const PyValue& v, const CopyRule& rule, bool detach)
{
    PyValue out = v;
    forEachTensor(out, [&](at::Tensor& t) { t = copyTensor(t, rule, detach); });
    return out;
}

/// Sets LibTorch's autocast state for the device call and restores it, also when the call throws.
class AutocastGuard
{
public:
    AutocastGuard(bool cuda, at::ScalarType dtype)
        : m_cuda(cuda)
    {
        if (m_cuda) {
            m_wasEnabled = at::autocast::is_enabled();
            m_oldDtype = at::autocast::get_autocast_gpu_dtype();
            at::autocast::set_enabled(true);
            at::autocast::set_autocast_gpu_dtype(dtype);
        } else {
            m_wasEnabled = at::autocast::is_cpu_enabled();
            m_oldDtype = at::autocast::get_autocast_cpu_dtype();
            at::autocast::set_cpu_enabled(true);
            at::autocast::set_autocast_cpu_dtype(dtype);
        }
        at::autocast::increment_nesting();
    }
    ~AutocastGuard()
    {
        if (at::autocast::decrement_nesting() == 0)
            at::autocast::clear_cache();
        if (m_cuda) {
            at::autocast::set_enabled(m_wasEnabled);
            at::autocast::set_autocast_gpu_dtype(m_oldDtype);
        } else {
            at::autocast::set_cpu_enabled(m_wasEnabled);
            at::autocast::set_autocast_cpu_dtype(m_oldDtype);
        }
    }
    AutocastGuard(const AutocastGuard&) = delete;
    AutocastGuard& operator=(const AutocastGuard&) = delete;

private:
    bool m_cuda = false;
    bool m_wasEnabled = false;
    at::ScalarType m_oldDtype = at::kBFloat16;
};

std::optional<at::ScalarType> outputDtypeHint(const dump::Entry& forward)
{
    const auto output = forward.value.find("output");
    if (!output || !output->isArray() || output->size() == 0)
        return std::nullopt;
    const dump::JsonValue first = output->at(0);
    if (!first.isObject())
        return std::nullopt;
    const auto dtype = first.find("dtype");
    if (!dtype || !dtype->isString())
        return std::nullopt;
    const std::string_view d = dtype->asString();
    if (d == "torch.bfloat16")
        return at::kBFloat16;
    if (d == "torch.float16")
        return at::kHalf;
    if (d == "torch.float32")
        return at::kFloat;
    if (d == "torch.float64")
        return at::kDouble;
    return std::nullopt;
}

void collectGrads(const PyValue& v, std::vector<runut::Value>& out)
{
    if (v.kind == PyValue::Kind::Tensor) {
        out.push_back(v.tensor.grad().defined() ? tensorValue(v.tensor.grad()) : runut::Value {});
    } else if (v.kind == PyValue::Kind::List) {
        for (const PyValue& e : v.items)
            collectGrads(e, out);
    }
}

std::vector<runut::Value> positionalGrads(const PyArgs& args)
{
    std::vector<runut::Value> grads;
    for (const PyValue& a : args)
        collectGrads(a, grads);
    return grads;
}

class TorchReplayer final : public runut::Replayer
{
public:
    explicit TorchReplayer(const runut::ReplayOptions& options)
        : m_options(options)
    {
    }

    runut::ReplayResult replay(const runut::ApiCall& call) override
    {
        runut::ReplayResult result;
        try {
            replayInto(call, result);
        } catch (const detail::TensorInputError& e) {
            result = {};
            result.skipMessage = e.what();
            result.inputError = e.diagnostic();
        } catch (const c10::Error& e) {
            result = {};
            result.skipMessage = e.what_without_backtrace();
        } catch (const std::bad_alloc&) {
            result = {};
            result.skipMessage = "out of memory while replaying " + call.fullName;
        } catch (const std::exception& e) {
            result = {};
            result.skipMessage = e.what();
        } catch (...) {
            result = {};
            result.skipMessage = "unknown error while replaying " + call.fullName;
        }
        return result;
    }

    bool supports(const std::string& prefix, const std::string& apiName) const override
    {
        try {
            return resolveApi(prefix, apiName).callable != nullptr;
        } catch (...) {
            return false;
        }
    }

private:
    runut::ReplayOptions m_options;

    c10::Device targetDevice() const
    {
        const std::string& d = m_options.device;
        if (d == "cpu")
            return c10::Device(c10::kCPU);
        if (d.rfind("cuda", 0) == 0) {
            if (!cudaAvailable())
                throw ReplayError("device " + d + " was asked for, but this LibTorch build has no CUDA");
            return c10::Device(d);
        }
        throw ReplayError("unsupported replay device \"" + d + "\" (cpu or cuda[:N])");
    }

    void replayInto(const runut::ApiCall& call, runut::ReplayResult& result)
    {
        if (call.prefix == "Distributed" || call.prefix == "MindSpeed" || call.apiName.empty()) {
            result.skipMessage = "API " + call.fullName + " not support for run ut. SKIP.";
            return;
        }
        if (!contains({ "Functional", "Tensor", "Torch", "Aten", "NPU" }, call.prefix)) {
            result.skipMessage = "Bench output is None";
            return;
        }
        if (!call.forward) {
            result.skipMessage = "API " + call.fullName + " has no forward entry";
            return;
        }
        const Resolved resolved = resolveApi(call.prefix, call.apiName);
        if (!resolved.callable) {
            result.skipMessage = resolved.problem;
            return;
        }
        const c10::Device device = targetDevice();
        // The intra-op thread count is per thread with OpenMP, so it is set on the worker's own thread.
        if (m_options.intraOpThreads > 0 && at::get_num_threads() != m_options.intraOpThreads)
            at::set_num_threads(m_options.intraOpThreads);

        // §4.2: inputs.
        const dump::JsonValue entry = call.forward->value;
        if (!entry.isObject())
            throw ReplayError(call.fullName + ".forward is not an object");
        InputContext ctx;
        ctx.generator = at::detail::createCPUGenerator(callSeed(m_options.seed, call.fullName));
        ctx.dump = call.dump.get();
        ctx.apiName = call.apiName;
        ctx.prefix = call.prefix;
        const auto kwargsJson = entry.find("input_kwargs");
        const bool hasOut = kwargsJson && kwargsJson->isObject() && kwargsJson->find("out").has_value();
        bool needGrad = !hasOut;
        PyKwargs kwargs = genKwargs(kwargsJson ? *kwargsJson : dump::JsonValue(), ctx);
        const auto argsJson = entry.find("input_args");
        PyArgs args = genArgs(argsJson ? *argsJson : dump::JsonValue(), ctx, needGrad);
        const std::optional<at::ScalarType> outputDtype = outputDtypeHint(*call.forward);

        // §4.4: backward flags.
        std::string backwardMessage;
        if (!needGrad)
            backwardMessage += kUnsupportBackward;
        if (call.apiName == "repeat_interleave") {
            needGrad = false;
            backwardMessage += kNoBackwardResult;
        }
        if (call.apiName == "masked_select") {
            needGrad = false;
            backwardMessage += kUnsupportApi;
        }
        const bool needBackward = call.backward != nullptr && needGrad;

        // §4.3: which dtype the bench raises to, and whether the device call is autocast.
        std::set<at::ScalarType> lowFloats;
        auto noteDtype = [&](const at::Tensor& t) {
            if (isLowFloat(t.scalar_type()))
                lowFloats.insert(t.scalar_type());
        };
        for (const PyValue& a : args)
            forEachTensor(a, noteDtype);
        for (const auto& kv : kwargs)
            forEachTensor(kv.second, noteDtype);
        std::optional<at::ScalarType> raiseTo;
        std::optional<at::ScalarType> autocastDtype;
        bool isAutocast = false;
        if (lowFloats.size() == 1) {
            raiseTo = raised(*lowFloats.begin());
            autocastDtype = *lowFloats.begin();
        } else if (lowFloats.size() >= 2) {
            raiseTo = at::kFloat;
            isAutocast = true;
            // msprobe pops any non-fp32 element of a Python set; bf16 is preferred here because it is
            // the one LibTorch's CPU autocast supports (see docs/run-ut-replay.md).
            autocastDtype = lowFloats.count(at::kBFloat16) ? at::kBFloat16 : at::kHalf;
        }
        if (call.apiName == "type_as")
            raiseTo.reset();
        if (!isAutocast && outputDtype) {
            isAutocast = autocastDtype != outputDtype;
            autocastDtype = outputDtype;
        }

        const bool noDetach = contains({ "resize_", "resize_as_", "set_", "transpose_", "t_", "squeeze_", "unsqueeze_" },
                                       call.apiName);
        CopyRule deviceRule;
        deviceRule.device = device;
        deviceRule.needBackward = needBackward;
        CopyRule benchRule;
        benchRule.bench = true;
        benchRule.raiseTo = raiseTo;
        benchRule.keepFp32 = call.apiName == "conv1d" || call.apiName == "conv2d";
        benchRule.needBackward = needBackward;

        PyArgs deviceArgs, benchArgs;
        for (const PyValue& a : args) {
            deviceArgs.push_back(copyValue(a, deviceRule, !noDetach));
            benchArgs.push_back(copyValue(a, benchRule, !noDetach));
        }
        PyKwargs deviceKwargs, benchKwargs;
        for (const auto& [key, value] : kwargs) {
            const bool detach = !noDetach && key != "out";
            if (key == "device" && value.kind == PyValue::Kind::Device && !value.text.empty()) {
                // The device call creates on the replay device; the CPU call loses the argument.
                PyValue d = value;
                d.text = device.str();
                deviceKwargs.emplace_back(key, d);
                continue;
            }
            deviceKwargs.emplace_back(key, copyValue(value, deviceRule, detach));
            benchKwargs.emplace_back(key, copyValue(value, benchRule, detach));
        }

        // Execution: bench on the CPU first, as msprobe does, then the device.
        const c10::IValue benchOut = invoke(*resolved.callable, benchArgs, benchKwargs);
        c10::IValue deviceOut;
        // LibTorch 1.13's CPU autocast knows bfloat16 only; torch itself warns and runs without
        // autocast for any other dtype, and so does the replay.
        const bool autocastApplies = isAutocast && autocastDtype
            && (device.is_cuda() ? (*autocastDtype == at::kHalf || *autocastDtype == at::kBFloat16)
                                 : *autocastDtype == at::kBFloat16);
        if (autocastApplies) {
            AutocastGuard guard(device.is_cuda(), *autocastDtype);
            deviceOut = invoke(*resolved.callable, deviceArgs, deviceKwargs);
            result.autocastDtype = *autocastDtype == at::kHalf ? tensor::DType::Float16 : tensor::DType::BFloat16;
        } else {
            deviceOut = invoke(*resolved.callable, deviceArgs, deviceKwargs);
        }

        // §4.4: backward.
        if (needBackward && !benchOut.isNone()) {
            std::optional<std::size_t> gradIndex;
            if (call.apiName == "topk" || call.apiName == "npu_fusion_attention")
                gradIndex = 0;
            const bool multiple = benchOut.isTuple() || benchOut.isList() || benchOut.isTensorList();
            if (multiple && !gradIndex) {
                backwardMessage += kMultipleBackward;
            } else {
                runBackward(call, ctx, benchOut, deviceOut, gradIndex, benchRule, device);
                result.benchGrads = positionalGrads(benchArgs);
                result.deviceGrads = positionalGrads(deviceArgs);
            }
        }

        result.benchForward = toValue(benchOut);
        result.deviceForward = toValue(deviceOut);
        result.backwardMessage = backwardMessage;
    }

    static at::Tensor pick(const c10::IValue& out, std::optional<std::size_t> index, const char* side)
    {
        c10::IValue v = out;
        if (index) {
            if (out.isTuple())
                v = out.toTupleRef().elements().at(*index);
            else if (out.isTensorList())
                v = out.toTensorVector().at(*index);
            else if (out.isList())
                v = out.toListRef().at(*index);
        }
        if (!v.isTensor())
            throw ReplayError(std::string("the ") + side + " output to run backward from is not a tensor");
        return v.toTensor();
    }

    void runBackward(const runut::ApiCall& call, InputContext& ctx, const c10::IValue& benchOut,
                     const c10::IValue& deviceOut, std::optional<std::size_t> gradIndex, CopyRule benchRule,
                     c10::Device device)
    {
        const auto input = call.backward->value.find("input");
        if (!input || !input->isArray() || input->size() == 0)
            throw ReplayError(call.fullName + ".backward has no input gradient");
        const PyValue grad = genValue(input->at(0), ctx, false, "backward input[0]");
        if (grad.kind != PyValue::Kind::Tensor)
            throw ReplayError(call.fullName + ".backward input[0] is not a tensor");
        // The bench gradient is raised by its own dtype (one tensor: fp16/bf16 -> fp32, fp32 -> fp64).
        benchRule.raiseTo = raised(grad.tensor.scalar_type());
        benchRule.needBackward = false;
        const at::Tensor benchGrad = copyTensor(grad.tensor, benchRule, true);
        const at::Tensor deviceGrad = grad.tensor.clone().to(device);
        pick(benchOut, gradIndex, "bench").backward(benchGrad);
        pick(deviceOut, gradIndex, "device").backward(deviceGrad);
    }
};

} // namespace

std::unique_ptr<runut::Replayer> makeTorchReplayer(const runut::ReplayOptions& options)
{
    return std::make_unique<TorchReplayer>(options);
}

std::vector<std::string> replayableApis()
{
    return tableApiNames();
}

bool cudaAvailable()
{
    try {
        return at::hasCUDA();
    } catch (...) {
        return false;
    }
}

} // namespace probescope::runuttorch
