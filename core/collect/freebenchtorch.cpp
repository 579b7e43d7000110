// SPDX-License-Identifier: Apache-2.0
// Free benchmark, the LibTorch half: the dispatcher interception, the perturbation layers (run-ut-spec
// §11.3), the check, to_cpu and fix handlers (§11.4, §11.5) and the preheat flow (§11.6).
//
// Interception: a boxed fallback registered for a dispatch key that no LibTorch kernel uses and that
// sits above Autograd and Autocast (kKey). start() adds the key to the training thread's TLS "included"
// set, so every aten op the thread calls reaches the fallback first, with the user's arguments, before
// autograd records it. The fallback excludes the key while it runs the original and the perturbed
// calls, so ops run inside them (a composite's parts, kernels' helpers) are not intercepted again:
// only the training code's own calls are APIs, as at level L1. Ops autograd runs in a backward pass
// (the engine restores the TLS captured at backward()) are told apart by the current graph task.
//
// Built with NDEBUG like torchcollect.cpp (LibTorch is, and some of its headers' layouts depend on it).
#include "freebench.h"
#include "freebenchlayers.h"
#include "torchtypes.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/record_function.h>
#include <c10/core/impl/LocalDispatchKeySet.h>
#include <torch/csrc/autograd/autograd.h>
#include <torch/csrc/autograd/graph_task.h>
#include <torch/library.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <mutex>
#include <set>

#include <unistd.h>

namespace probescope::collect::freebench {

using c10::IValue;

namespace {

/// Out-of-core key of torchdistx's deferred init: no kernel or fallback in LibTorch uses it, and it
/// lies above Autograd, Autocast and the functorch keys a C++ program meets. Registering a fallback on
/// it fails (and is reported) if something in the process already did.
constexpr c10::DispatchKey kKey = c10::DispatchKey::DeferredInit;

std::mutex gMutex;                  // guards gState
Engine::State* gState = nullptr;    // the engine whose fallback is registered
/// The process that made the engine. A child forked while it intercepts (a Python DataLoader worker) inherits
/// the thread's dispatch key: its ops are not the training's, and a lock a parent thread held at the fork
/// would never be released, so the child's fallback only calls the op, before taking any lock.
std::atomic<pid_t> gOwnerPid { 0 };

FloatType floatTypeOf(at::ScalarType t)
{
    switch (t) {
    case at::kHalf: return FloatType::Half;
    case at::kBFloat16: return FloatType::BFloat16;
    case at::kFloat: return FloatType::Float;
    case at::kDouble: return FloatType::Double;
    default: return FloatType::Other;
    }
}

bool isFloatTensor(const IValue& v)
{
    if (!v.isTensor())
        return false;
    const at::Tensor& t = v.toTensor();
    return t.defined() && t.is_floating_point() && !t.is_meta();
}

/// Ops whose outputs hold no values (as at level L1): neither counted nor perturbed.
bool carriesNoData(std::string_view op)
{
    return op == "empty" || op == "empty_like" || op == "empty_strided" || op == "resize_";
}

std::string shapeText(const at::Tensor& t)
{
    return torchSizeText(std::vector<std::int64_t>(t.sizes().begin(), t.sizes().end()));
}

/// Applies `fn` to every tensor in `v` (lists, tuples, dicts walked), rebuilding the containers.
template<typename Fn>
IValue mapTensors(const IValue& v, Fn&& fn)
{
    if (v.isTensor())
        return IValue(fn(v.toTensor()));
    if (v.isList()) {
        c10::List<IValue> copy = v.toList().copy();
        for (std::size_t i = 0; i < copy.size(); ++i)
            copy.set(i, mapTensors(copy.get(i), fn));
        return IValue(copy);
    }
    if (v.isTuple()) {
        std::vector<IValue> elements;
        for (const IValue& e : v.toTupleRef().elements())
            elements.push_back(mapTensors(e, fn));
        return IValue(c10::ivalue::Tuple::create(std::move(elements)));
    }
    if (v.isGenericDict()) {
        c10::Dict<IValue, IValue> copy = v.toGenericDict().copy();
        for (auto it = copy.begin(); it != copy.end(); ++it)
            it->setValue(mapTensors(it->value(), fn));
        return IValue(copy);
    }
    return v;
}

} // namespace

// ------------------------------------------------------------------------------------------------
// Perturbation layers (§11.3)

LayerResult addNoise(const at::Tensor& x)
{
    const FloatType type = floatTypeOf(x.scalar_type());
    if (type == FloatType::Other)
        return { std::nullopt, std::string("dtype ") + torchDtypeName(x.scalar_type()) + " is not supported" };
    if (x.numel() == 0)
        return { std::nullopt, "the input tensor is empty" };
    const double eps = absTolerance(type);
    if (x.abs().max().item<double>() < eps)
        return { std::nullopt, "all input abs values are smaller than " + maxRelText(eps + 1) };
    const at::Tensor noise = at::full(x.sizes(), eps, x.options());
    // In x's dtype, as msprobe: where(|x| > sqrt(eps), x + eps, x).
    return { at::where(x.abs() > std::sqrt(eps), x + noise, x), {} };
}

LayerResult bitNoise(const at::Tensor& x)
{
    at::ScalarType intType;
    double smallestNormal;
    switch (x.scalar_type()) {
    case at::kHalf: intType = at::kShort; smallestNormal = 6.103515625e-05; break;
    case at::kBFloat16: intType = at::kShort; smallestNormal = 1.1754943508222875e-38; break;
    case at::kFloat: intType = at::kInt; smallestNormal = 1.1754943508222875e-38; break;
    case at::kDouble: intType = at::kLong; smallestNormal = 2.2250738585072014e-308; break;
    default: return { std::nullopt, std::string("dtype ") + torchDtypeName(x.scalar_type()) + " is not supported" };
    }
    if (x.numel() == 0)
        return { std::nullopt, "the input tensor is empty" };
    if (x.abs().max().item<double>() < absTolerance(floatTypeOf(x.scalar_type())))
        return { std::nullopt, "all input abs values are too small" };
    const at::Tensor c = x.contiguous();
    const at::Tensor bits = c.view(intType);
    const at::Tensor flipped = at::where(c.abs() > smallestNormal, at::bitwise_xor(bits, 1), bits);
    return { flipped.view(x.scalar_type()), {} };
}

LayerResult changeValue(const at::Tensor& x)
{
    const auto dim = x.dim();
    if ((dim <= 1 && (dim == 0 || x.size(0) < 2)) || (dim > 1 && (x.size(1) == 0 || (x.size(1) < 2 && x.size(0) < 2))))
        return { std::nullopt, "the input is too small to swap values" };
    at::Tensor t = x.clone();
    if (dim == 1) {
        const at::Tensor first = t[0].clone();
        const at::Tensor last = t[-1].clone();
        t[0].copy_(last);
        t[-1].copy_(first);
    } else {
        const at::Tensor first = t[0][0].clone();
        const at::Tensor last = t[-1][-1].clone();
        t[0][0].copy_(last);
        t[-1][-1].copy_(first);
    }
    return { t, {} };
}

// ------------------------------------------------------------------------------------------------
// Comparisons

Ratio tensorRatio(const at::Tensor& original, const at::Tensor& perturbed, bool backward)
{
    // The original is cast to the perturbed dtype and device first (that rounding is msprobe's); the
    // arithmetic then runs in float64 in one pass (LibTorch's CPU kernels lack half for clamp and
    // division, and two dozen small tensor ops per call would cost more than the op checked).
    const at::Tensor o = original.to(perturbed.device(), perturbed.scalar_type()).to(at::kCPU, at::kDouble).contiguous();
    const at::Tensor p = perturbed.to(at::kCPU, at::kDouble).contiguous();
    const double tol = backward ? 1e-3 : std::sqrt(absTolerance(floatTypeOf(perturbed.scalar_type())));
    Ratio result;
    const std::int64_t n = o.numel();
    if (n == 0 || n != p.numel())
        return result;
    const double* a = o.data_ptr<double>();
    const double* b = p.data_ptr<double>();
    // torch.chunk's split: chunks of ceil(n / chunks) elements.
    const std::int64_t chunks = ratioChunks(static_cast<std::uint64_t>(original.nbytes()));
    const std::int64_t size = (n + chunks - 1) / chunks;
    for (std::int64_t begin = 0; begin < n; begin += size) {
        const std::int64_t end = std::min(n, begin + size);
        bool nanProduct = false;
        double minProduct = INFINITY, rmax = -INFINITY, rmin = INFINITY;
        for (std::int64_t i = begin; i < end; ++i) {
            const double product = a[i] * b[i];
            if (std::isnan(product))
                nanProduct = true; // torch.min propagates NaN: the sign test is then false
            else
                minProduct = std::min(minProduct, product);
            // clamp(NaN) stays NaN, and NaN ratios count as 1.
            const double oa = std::isnan(a[i]) ? a[i] : std::max(std::abs(a[i]), tol);
            const double pb = std::isnan(b[i]) ? b[i] : std::max(std::abs(b[i]), tol);
            double r = oa / pb;
            if (std::isnan(r))
                r = 1;
            rmax = std::max(rmax, r);
            rmin = std::min(rmin, r);
        }
        if (!nanProduct && minProduct < -tol * tol) {
            result.flip = true;
            return result;
        }
        const double chunkRatio = std::max(rmax, rmin == 0 ? INFINITY : 1 / rmin);
        // msprobe keeps the last chunk's ratio only (a bug for tensors >= 32 MB); the maximum is taken.
        result.value = std::max(result.value, chunkRatio);
    }
    return result;
}

namespace {

/// to_cpu's SingleCompare for one tensor (§11.4): whether the device output agrees with the CPU's.
bool singleCompareTensor(const at::Tensor& actual, const at::Tensor& golden, const LogSink& log, const std::string& api)
{
    double tol = std::ldexp(1.0, -14);
    if (actual.scalar_type() == at::kHalf)
        tol = std::ldexp(1.0, -11);
    else if (actual.scalar_type() == at::kBFloat16)
        tol = std::ldexp(1.0, -8);
    const double smallValue = 1.0, errBalance = 1e-4;
    const at::Tensor g = golden.detach().to(at::kCPU, at::kDouble).reshape(-1);
    if (!at::isfinite(g).all().item<bool>()) {
        log("[msprobe] Free benchmark: For " + api + ", the CPU output holds inf or nan; treated as consistent.");
        return true;
    }
    at::Tensor a = actual.detach().to(at::kCPU, at::kDouble).reshape(-1);
    a = at::where(at::isfinite(a), a, at::ones_like(a));
    if (a.numel() == 0 || a.numel() != g.numel())
        return a.numel() == g.numel();
    const at::Tensor diff = (a - g).abs();
    const at::Tensor small = a.abs() < smallValue;
    const double absErr = at::where(small, diff, at::zeros_like(diff)).max().item<double>();
    const at::Tensor rel = diff / g.abs();
    const double relErr = at::where(small, at::zeros_like(rel), rel).max().item<double>();
    const double eb = ((a - g) / at::where(g.abs() >= smallValue, g.abs(), at::ones_like(g))).mean().item<double>();
    return !(absErr > tol || relErr > tol || eb > errBalance);
}

bool singleCompare(const IValue& actual, const IValue& golden, const LogSink& log, const std::string& api)
{
    if (actual.isTensor() && golden.isTensor()) {
        const at::Tensor& a = actual.toTensor();
        const at::Tensor& g = golden.toTensor();
        if (!a.defined() || !g.defined())
            return a.defined() == g.defined();
        if (!a.is_floating_point())
            return at::equal(a.cpu(), g.cpu().to(a.scalar_type()));
        return singleCompareTensor(a, g, log, api);
    }
    if ((actual.isList() || actual.isTuple()) && (golden.isList() || golden.isTuple())) {
        const auto as = actual.isList() ? actual.toList().vec() : actual.toTupleRef().elements().vec();
        const auto gs = golden.isList() ? golden.toList().vec() : golden.toTupleRef().elements().vec();
        if (as.size() != gs.size())
            return false;
        for (std::size_t i = 0; i < as.size(); ++i) {
            if (!singleCompare(as[i], gs[i], log, api))
                return false;
        }
        return true;
    }
    if (actual.isDouble() && golden.isDouble()) {
        const double x = actual.toDouble(), y = golden.toDouble();
        return std::abs(x - y) <= 1e-9 * std::max(std::abs(x), std::abs(y));
    }
    return actual == golden;
}

} // namespace

// ------------------------------------------------------------------------------------------------
// The engine

struct Engine::State
{
    Config config;
    const FreeBenchmarkConfig& fb() const { return config.freeBenchmark; }
    std::optional<std::int64_t> rank;
    LogSink log;
    std::unique_ptr<torch::Library> library;
    bool on = false;
    std::int64_t step = 0;
    std::int64_t csvStep = -1; ///< the step whose folder csv writes into
    std::optional<CsvFile> csv;
    std::map<std::string, std::int64_t, std::less<>> counts; ///< calls per op this step
    std::set<std::string, std::less<>> warnedInput;          ///< ops told "unsupported input" this step
    std::optional<Preheat> preheat;
    std::optional<Diagnostic> problem;

    bool inScope(const std::string& api) const
    {
        if (!config.scope.empty())
            return std::find(config.scope.begin(), config.scope.end(), api) != config.scope.end();
        if (config.list.empty())
            return true;
        return std::any_of(config.list.begin(), config.list.end(),
                           [&](const std::string& item) { return api.find(item) != std::string::npos; });
    }

    void cancel(const std::string& api, const std::string& reason)
    {
        log("[msprobe] Free benchmark: For " + api + ", " + reason + ". Cancel perturbation.");
    }

    void writeRow(CsvRow row)
    {
        if (!csv)
            return;
        row.rank = rank.value_or(0);
        row.pertMode = toString(fb().pertMode);
        row.step = step;
        if (auto d = csv->append(row); d && !problem) {
            std::fprintf(stderr, "probescope collect: %s\n", d->format().c_str());
            problem = std::move(d);
        }
    }

    void handle(const c10::OperatorHandle& op, torch::jit::Stack* stack);
    std::optional<std::vector<IValue>> perturbArgs(const std::string& api, const std::vector<IValue>& args,
                                                   std::size_t valid, PertMode mode);
    std::optional<std::vector<IValue>> rerun(const c10::OperatorHandle& op, const std::string& api,
                                             std::vector<IValue> args);
    /// The check handler; returns the call's largest numeric ratio (for preheat), if any was computed.
    std::optional<double> check(const c10::OperatorHandle& op, const std::string& api,
                                const std::vector<IValue>& outs, const std::vector<IValue>& perturbed, double threshold);
    void fix(const std::string& api, const std::vector<IValue>& outs, const std::vector<IValue>& perturbed);
    /// fuzz_stage backward (§11.7): hooks the output's gradient; checkBackward() runs in the backward pass.
    void hookBackward(const c10::OperatorHandle& op, const std::string& api, const std::vector<IValue>& args,
                      const std::vector<IValue>& outs);
    void checkBackward(const c10::OperatorHandle& op, const std::string& name, const std::vector<IValue>& saved,
                       const std::vector<std::size_t>& gradIndex, const at::Tensor& gradOutput);
};

namespace {

void fallback(const c10::OperatorHandle& op, c10::DispatchKeySet, torch::jit::Stack* stack)
{
    const c10::impl::ExcludeDispatchKeyGuard notAgain(kKey);
    if (gOwnerPid.load(std::memory_order_relaxed) != ::getpid()) {
        op.callBoxed(stack);
        return;
    }
    Engine::State* state = nullptr;
    {
        const std::lock_guard lock(gMutex);
        state = gState;
    }
    // Autograd's backward pass runs under the TLS captured at backward(): those ops are not API calls.
    if (!state || !state->on || torch::autograd::get_current_graph_task_exec_info() || at::in_parallel_region()) {
        op.callBoxed(stack);
        return;
    }
    state->handle(op, stack);
}

/// Outputs as msprobe's handler sees them: one tensor, or the elements of a tuple/list (indexed).
struct OutputView
{
    std::vector<IValue> elements;
    bool indexed = false;
};

OutputView viewOutputs(const c10::FunctionSchema& schema, const std::vector<IValue>& outs)
{
    OutputView view;
    if (outs.size() == 1) {
        if (outs[0].isList()) {
            view.elements = outs[0].toList().vec();
            view.indexed = true;
        } else {
            view.elements = outs;
        }
        return view;
    }
    const auto& returns = schema.returns();
    // Python's namedtuple (values, indices) of max, topk, sort...: .values only.
    if (returns.size() == 2 && returns[0].name() == "values" && returns[1].name() == "indices") {
        view.elements = { outs[0] };
        return view;
    }
    view.elements = outs;
    view.indexed = true;
    return view;
}

bool holdsFloatTensor(const std::vector<IValue>& values)
{
    return std::any_of(values.begin(), values.end(), isFloatTensor);
}

} // namespace

std::optional<std::vector<IValue>> Engine::State::perturbArgs(const std::string& api, const std::vector<IValue>& args,
                                                              std::size_t valid, PertMode mode)
{
    std::vector<IValue> out = args;
    if (mode == PertMode::NoChange)
        return out;
    if (mode == PertMode::ImprovePrecision || mode == PertMode::ToCpu) {
        bool cast = false;
        const bool cpu = mode == PertMode::ToCpu;
        for (IValue& v : out) {
            v = mapTensors(v, [&](const at::Tensor& t) {
                if (!t.defined())
                    return t;
                const bool low = t.scalar_type() == at::kHalf || t.scalar_type() == at::kBFloat16;
                cast = cast || low;
                at::Tensor r = cpu ? t.detach().to(at::kCPU) : t;
                return low ? r.to(at::kFloat) : r;
            });
        }
        if (!cast && !cpu)
            return std::nullopt; // nothing to improve: msprobe's perturbed result is None, no check
        return out;
    }
    // add_noise, bit_noise, change_value: the first eligible tensor of args[valid] only.
    bool done = false;
    out[valid] = mapTensors(args[valid], [&](const at::Tensor& t) {
        if (done || !t.defined() || !t.is_floating_point())
            return t;
        const LayerResult r = mode == PertMode::AddNoise ? addNoise(t) : mode == PertMode::BitNoise ? bitNoise(t) : changeValue(t);
        if (!r.tensor) {
            cancel(api, r.cancelReason);
            return t;
        }
        done = true;
        return *r.tensor;
    });
    if (!done)
        return std::nullopt;
    return out;
}

std::optional<std::vector<IValue>> Engine::State::rerun(const c10::OperatorHandle& op, const std::string& api,
                                                        std::vector<IValue> args)
{
    // The CPU (to_cpu, preheat) may lack a kernel the device has: logged, never fatal (§11.9).
    try {
        const at::NoGradGuard noGrad;
        const at::DisableRecordFunctionGuard notUserOps; // L1's RecordFunction must not see the rerun
        torch::jit::Stack s(std::make_move_iterator(args.begin()), std::make_move_iterator(args.end()));
        op.callBoxed(&s);
        return std::vector<IValue>(std::make_move_iterator(s.begin()), std::make_move_iterator(s.end()));
    } catch (const std::exception& e) {
        std::string what = e.what();
        if (const auto nl = what.find('\n'); nl != std::string::npos)
            what.resize(nl);
        log("[msprobe] Free benchmark: For " + api + ", the perturbed call failed (" + what + "). Cancel perturbation.");
        return std::nullopt;
    }
}

std::optional<double> Engine::State::check(const c10::OperatorHandle& op, const std::string& api,
                                           const std::vector<IValue>& outs, const std::vector<IValue>& perturbed,
                                           double threshold)
{
    const OutputView o = viewOutputs(op.schema(), outs);
    const OutputView p = viewOutputs(op.schema(), perturbed);
    if (!holdsFloatTensor(p.elements) || o.elements.size() != p.elements.size())
        return std::nullopt;
    std::optional<double> largest;
    for (std::size_t i = 0; i < o.elements.size(); ++i) {
        const IValue& a = o.elements[i];
        const IValue& b = p.elements[i];
        CsvRow row;
        row.apiName = api;
        if (o.indexed)
            row.outputIndex = static_cast<std::int64_t>(i);
        if (a.isTensor() && b.isTensor()) {
            const at::Tensor& ta = a.toTensor();
            const at::Tensor& tb = b.toTensor();
            if (!ta.defined() || !tb.defined() || !ta.is_floating_point() || !tb.is_floating_point())
                continue; // integer outputs (indices, counts) carry no ratio
            const Ratio r = tensorRatio(ta, tb, false);
            if (!r.flip)
                largest = std::max(largest.value_or(1.0), r.value);
            if (!r.flip && 1 / threshold <= r.value && r.value <= threshold)
                continue;
            row.maxRel = r.flip ? "symbol_flipping" : maxRelText(r.value);
            row.dtype = torchDtypeName(ta.scalar_type());
            row.shape = shapeText(ta);
        } else if (a.isInt() && b.isInt()) {
            if (a.toInt() == b.toInt())
                continue;
        } else if (a.isDouble() && b.isDouble()) {
            double x = a.toDouble(), y = b.toDouble();
            if (y == 0) {
                x += 1e-8;
                y += 1e-8;
            }
            if (std::abs(x - y) <= 1e-9 * std::max(std::abs(x), std::abs(y)))
                continue;
            row.maxRel = maxRelText(x / y);
        } else {
            continue; // other values count as consistent (msprobe warns)
        }
        writeRow(std::move(row));
    }
    return largest;
}

void Engine::State::fix(const std::string& api, const std::vector<IValue>& outs, const std::vector<IValue>& perturbed)
{
    std::vector<std::pair<at::Tensor, at::Tensor>> pairs;
    std::function<bool(const IValue&, const IValue&)> collect = [&](const IValue& a, const IValue& b) {
        if (a.isTensor() && b.isTensor()) {
            if (a.toTensor().defined() && b.toTensor().defined())
                pairs.emplace_back(a.toTensor(), b.toTensor());
            return a.toTensor().defined() == b.toTensor().defined();
        }
        if (a.isList() && b.isList()) {
            const auto as = a.toList().vec(), bs = b.toList().vec();
            if (as.size() != bs.size())
                return false;
            for (std::size_t i = 0; i < as.size(); ++i) {
                if (!collect(as[i], bs[i]))
                    return false;
            }
        }
        return true;
    };
    if (outs.size() != perturbed.size()) {
        log("[msprobe] Free benchmark: For " + api + ", the perturbed output does not match the original. Keep the original.");
        return;
    }
    for (std::size_t i = 0; i < outs.size(); ++i) {
        if (!collect(outs[i], perturbed[i])) {
            log("[msprobe] Free benchmark: For " + api + ", the perturbed output does not match the original. Keep the original.");
            return;
        }
    }
    try {
        // origin.data = perturbed.to(origin.dtype).to(origin.device): the output keeps its autograd identity.
        for (auto& [origin, result] : pairs)
            origin.set_data(result.detach().to(origin.device(), origin.scalar_type()));
    } catch (const std::exception& e) {
        log("[msprobe] Free benchmark: For " + api + ", the output could not be replaced: " + std::string(e.what()).substr(0, 200));
    }
}

void Engine::State::hookBackward(const c10::OperatorHandle& op, const std::string& api, const std::vector<IValue>& args,
                                 const std::vector<IValue>& outs)
{
    // One tensor output that autograd tracks: its gradient is the VJP's grad_output.
    if (outs.size() != 1 || !outs[0].isTensor() || !outs[0].toTensor().defined() || !outs[0].toTensor().requires_grad())
        return;
    std::vector<IValue> saved;
    std::vector<std::size_t> gradIndex;
    for (std::size_t i = 0; i < args.size(); ++i) {
        if (!args[i].isTensor() || !args[i].toTensor().defined()) {
            saved.push_back(args[i]);
            continue;
        }
        const at::Tensor& t = args[i].toTensor();
        // A copy: later in-place updates of the input must not change what the backward check replays.
        saved.emplace_back(t.detach().clone());
        if (t.requires_grad() && t.is_floating_point())
            gradIndex.push_back(i);
    }
    if (gradIndex.empty())
        return;
    const std::string name = api.substr(0, api.size() - 8) + ".backward"; // "...forward" -> "...backward"
    State* self = this;
    outs[0].toTensor().register_hook([self, op, name, saved, gradIndex](const at::Tensor& grad) {
        {
            const std::lock_guard lock(gMutex);
            if (gState != self || !self->on)
                return;
        }
        self->checkBackward(op, name, saved, gradIndex, grad);
    });
}

void Engine::State::checkBackward(const c10::OperatorHandle& op, const std::string& name, const std::vector<IValue>& saved,
                                  const std::vector<std::size_t>& gradIndex, const at::Tensor& gradOutput)
{
    const c10::impl::ExcludeDispatchKeyGuard notAgain(kKey);
    // The VJP of the unhooked op at `args` for `grad`: gradients of the grad-requiring arguments.
    const auto vjp = [&](std::vector<IValue> args, const at::Tensor& grad) -> std::optional<std::vector<at::Tensor>> {
        try {
            const at::AutoGradMode gradMode(true);
            const at::DisableRecordFunctionGuard notUserOps;
            std::vector<at::Tensor> leaves;
            for (const std::size_t i : gradIndex) {
                at::Tensor leaf = args[i].toTensor().detach().requires_grad_(true);
                args[i] = leaf;
                leaves.push_back(leaf);
            }
            torch::jit::Stack s(args.begin(), args.end());
            op.callBoxed(&s);
            if (s.size() != 1 || !s[0].isTensor() || !s[0].toTensor().requires_grad())
                return std::nullopt;
            const at::Tensor out = s[0].toTensor();
            return torch::autograd::grad({ out }, leaves, { grad.to(out.scalar_type()) }, /*retain_graph=*/false,
                                         /*create_graph=*/false, /*allow_unused=*/true);
        } catch (const std::exception& e) {
            std::string what = e.what();
            what.resize(std::min(what.find('\n'), what.size()));
            log("[msprobe] Free benchmark: For " + name + ", the backward rerun failed (" + what + "). Cancel perturbation.");
            return std::nullopt;
        }
    };
    const PertMode mode = fb().pertMode;
    std::vector<IValue> perturbedArgs = saved;
    at::Tensor perturbedGrad = gradOutput;
    if (mode == PertMode::ImprovePrecision || mode == PertMode::ToCpu) {
        bool cast = false;
        const auto up = [&](const at::Tensor& t) {
            const bool low = t.defined() && (t.scalar_type() == at::kHalf || t.scalar_type() == at::kBFloat16);
            cast = cast || low;
            const at::Tensor r = mode == PertMode::ToCpu && t.defined() ? t.to(at::kCPU) : t;
            return low ? r.to(at::kFloat) : r;
        };
        for (IValue& v : perturbedArgs) // kwargs are skipped in the backward stage; aten has none
            v = mapTensors(v, up);
        perturbedGrad = up(gradOutput); // improve_precision also casts grad_output
        if (!cast && mode == PertMode::ImprovePrecision)
            return;
    } else if (mode != PertMode::NoChange) {
        // The first valid input is the list of grad-requiring tensors: its first eligible one is perturbed.
        bool done = false;
        for (const std::size_t i : gradIndex) {
            const at::Tensor& t = saved[i].toTensor();
            const LayerResult r = mode == PertMode::AddNoise ? addNoise(t) : mode == PertMode::BitNoise ? bitNoise(t) : changeValue(t);
            if (!r.tensor) {
                cancel(name, r.cancelReason);
                continue;
            }
            perturbedArgs[i] = *r.tensor;
            done = true;
            break;
        }
        if (!done)
            return;
    }
    log(std::string("[msprobe] Free benchmark: Perturbation is ") + toString(mode) + " of " + name + ".");
    const auto original = vjp(saved, gradOutput);
    const auto perturbed = original ? vjp(perturbedArgs, perturbedGrad) : std::nullopt;
    if (!perturbed || perturbed->size() != original->size())
        return;
    for (std::size_t i = 0; i < original->size(); ++i) {
        const at::Tensor& o = (*original)[i];
        const at::Tensor& p = (*perturbed)[i];
        if (!o.defined() || !p.defined() || !o.is_floating_point())
            continue;
        const Ratio r = tensorRatio(o, p, true);
        const double threshold = mode == PertMode::NoChange ? 1.0 : defaultThreshold(floatTypeOf(o.scalar_type()));
        if (!r.flip && 1 / threshold <= r.value && r.value <= threshold)
            continue;
        CsvRow row;
        row.stage = "backward";
        row.apiName = name;
        row.maxRel = r.flip ? "symbol_flipping" : maxRelText(r.value);
        row.dtype = torchDtypeName(o.scalar_type());
        row.shape = shapeText(o);
        row.outputIndex = static_cast<std::int64_t>(i);
        writeRow(std::move(row));
    }
}

void Engine::State::handle(const c10::OperatorHandle& op, torch::jit::Stack* stack)
{
    const c10::FunctionSchema& schema = op.schema();
    const std::string& qualified = schema.name();
    if (!std::string_view(qualified).starts_with("aten::") || carriesNoData(std::string_view(qualified).substr(6))) {
        op.callBoxed(stack);
        return;
    }
    const std::string opName = "Aten." + qualified.substr(6);
    const std::string api = opName + "." + std::to_string(counts[opName]++) + ".forward";
    if (!inScope(api)) {
        op.callBoxed(stack);
        return;
    }
    const std::size_t n = schema.arguments().size();
    const std::vector<IValue> args(stack->end() - static_cast<std::ptrdiff_t>(n), stack->end());

    // Ops that write into their arguments (add_, out=) would be applied twice; random ones would draw
    // from the training's generator: both are left alone (msprobe forces inplace=False instead).
    const bool writes = std::any_of(schema.arguments().begin(), schema.arguments().end(), [](const c10::Argument& a) {
        return a.alias_info() && a.alias_info()->isWrite();
    });
    op.callBoxed(stack);
    const std::size_t r = schema.returns().size();
    const std::vector<IValue> outs(stack->end() - static_cast<std::ptrdiff_t>(r), stack->end());

    const std::size_t valid =
        static_cast<std::size_t>(std::find_if(args.begin(), args.end(), [](const IValue& v) {
                                     return isFloatTensor(v) || v.isList() || v.isTuple() || v.isGenericDict();
                                 }) - args.begin());
    if (valid == args.size()) {
        if (warnedInput.insert(opName).second)
            log("[msprobe] Free benchmark: 无标杆工具不支持当前算子的输入类型 " + api + ".");
        return;
    }
    if (writes) {
        cancel(api, "it writes into its arguments");
        return;
    }
    if (op.hasTag(at::Tag::nondeterministic_seeded)) {
        cancel(api, "its result is random");
        return;
    }

    const FreeBenchmarkConfig& f = fb();
    const std::string pure = pureName(api);
    std::string outDtype;
    FloatType outType = FloatType::Other;
    for (const IValue& v : viewOutputs(schema, outs).elements) {
        if (v.isTensor() && v.toTensor().defined()) {
            outDtype = torchDtypeName(v.toTensor().scalar_type());
            outType = floatTypeOf(v.toTensor().scalar_type());
            break;
        }
    }
    if (f.backward) {
        hookBackward(op, api, args, outs);
        return;
    }
    if (preheat) {
        preheat->enterStep(step);
        if (step == 0) {
            preheat->countTotal(pure); // step 0 only counts (§11.6)
            return;
        }
    }

    const auto perturbedArgs = perturbArgs(api, args, valid, f.pertMode);
    if (!perturbedArgs)
        return;
    log(std::string("[msprobe] Free benchmark: Perturbation is ") + toString(f.pertMode) + " of " + api + ".");
    const auto perturbed = rerun(op, api, *perturbedArgs);
    if (!perturbed)
        return;

    if (f.fix) {
        fix(api, outs, *perturbed);
        return;
    }
    if (f.pertMode == PertMode::ToCpu) {
        const OutputView o = viewOutputs(schema, outs);
        const OutputView p = viewOutputs(schema, *perturbed);
        bool same = o.elements.size() == p.elements.size();
        for (std::size_t i = 0; same && i < o.elements.size(); ++i)
            same = singleCompare(o.elements[i], p.elements[i], log, api);
        if (!same) {
            CsvRow row;
            row.apiName = api;
            for (const IValue& v : o.elements) {
                if (v.isTensor() && v.toTensor().defined()) {
                    row.dtype = torchDtypeName(v.toTensor().scalar_type());
                    row.shape = shapeText(v.toTensor());
                    break;
                }
            }
            writeRow(std::move(row));
        }
        return;
    }

    double threshold = f.pertMode == PertMode::NoChange ? 1.0 : defaultThreshold(outType);
    if (preheat)
        threshold = std::max(preheat->threshold(pure, outDtype), threshold);
    const std::optional<double> ratio = check(op, api, outs, *perturbed, threshold);
    if (!preheat || !ratio)
        return;
    const auto seq = preheat->sample(pure);
    if (!seq)
        return;
    log("[msprobe] Free benchmark: preheat sample in step" + std::to_string(step) + "api_name " + api
        + ", curr_called_seq: " + std::to_string(*seq) + "/" + std::to_string(preheat->total(pure)));
    const auto cpuArgs = perturbArgs(api, args, valid, PertMode::ToCpu);
    const auto cpu = cpuArgs ? rerun(op, api, *cpuArgs) : std::nullopt;
    if (!cpu)
        return;
    const OutputView o = viewOutputs(schema, outs);
    const OutputView c = viewOutputs(schema, *cpu);
    bool consistent = o.elements.size() == c.elements.size();
    for (std::size_t i = 0; consistent && i < o.elements.size(); ++i)
        consistent = singleCompare(o.elements[i], c.elements[i], log, api);
    preheat->addSample(pure, outDtype, outType, *ratio, consistent);
}

// ------------------------------------------------------------------------------------------------

Engine::Engine(const Config& config, std::optional<std::int64_t> rank, LogSink log)
    : m_state(std::make_unique<State>())
{
    State& s = *m_state;
    s.config = config;
    s.rank = rank;
    s.log = log ? std::move(log) : LogSink([](const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); });
    if (config.freeBenchmark.ifPreheat && !config.freeBenchmark.fix && !config.freeBenchmark.backward)
        s.preheat.emplace(config.freeBenchmark.preheatStep, config.freeBenchmark.maxSample);
    const std::lock_guard lock(gMutex);
    if (gState)
        throw CollectError("collect.duplicate", "a PrecisionDebugger already exists in this process");
    try {
        s.library = std::make_unique<torch::Library>(torch::Library::IMPL, "_", kKey, __FILE__, __LINE__);
        s.library->fallback(torch::CppFunction::makeFromBoxedFunction<&fallback>());
    } catch (const std::exception& e) {
        s.library.reset();
        throw CollectError("collect.freebench", "free_benchmark cannot intercept aten ops: registering a fallback for "
                                                "dispatch key DeferredInit failed: "
                                                    + std::string(e.what()).substr(0, 300));
    }
    gState = m_state.get();
    gOwnerPid = ::getpid();
}

Engine::~Engine()
{
    stop();
    const std::lock_guard lock(gMutex);
    m_state->library.reset();
    if (gState == m_state.get())
        gState = nullptr;
}

void Engine::start(const std::filesystem::path& rankDir, std::int64_t step)
{
    State& s = *m_state;
    s.step = step;
    if (s.csvStep != step) {
        s.csvStep = step;
        // rankDir is dump_path/step{N}/rank{R} (Session::rankDir): the CSV claims it as the dump folders are.
        s.csv.emplace(rankDir.parent_path().parent_path(), rankDir.parent_path().filename().string(),
                      rankDir.filename().string());
    }
    s.on = true;
    c10::impl::tls_set_dispatch_key_included(kKey, true);
}

void Engine::stop()
{
    m_state->on = false;
    c10::impl::tls_set_dispatch_key_included(kKey, false);
}

void Engine::nextStep()
{
    stop();
    m_state->counts.clear();
    m_state->warnedInput.clear();
}

std::optional<Diagnostic> Engine::takeProblem()
{
    auto p = std::move(m_state->problem);
    m_state->problem.reset();
    return p;
}

} // namespace probescope::collect::freebench
