// SPDX-License-Identifier: Apache-2.0
// The C++ API's collector over LibTorch: RecordFunction callbacks (L1), autograd hooks (backward,
// parameters_grad), the module marks (L0), the entries' JSON (LeafWriter) and their hand-over to the
// background writer, save() and seedAll(). The tensor leaves themselves (statistics, md5, .pt files, the
// leaf's JSON) are leafstats.cpp's, shared with the Python module.
//
// Built with NDEBUG in every configuration (see CMakeLists.txt): at::RecordFunction has a member that
// exists only without NDEBUG, and LibTorch itself is built with NDEBUG, so a debug build of this file
// would read RecordFunction::inputs() at the wrong offset.
#include "torchdebugger.h"

#include "ptwriter.h"
#include "torchtypes.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <ATen/record_function.h>
#include <c10/util/Exception.h>
#include <torch/csrc/autograd/custom_function.h>
#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/function_hook.h>
#include <torch/nn/module.h>
#include <torch/utils.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <mutex>
#include <tuple>
#include <unordered_map>

#include <unistd.h>

namespace probescope::collect {

using dump::PyJsonWriter;
using torch::autograd::variable_list;
using namespace entries;

// ------------------------------------------------------------------------------------------------
// Process-wide state. RecordFunction callbacks are plain function pointers, so the active debugger is
// global; hooks that outlive their debugger find it gone through the generation number.

namespace {

std::mutex gMutex; // guards gActive and everything reachable from it
PrecisionDebugger::Impl* gActive = nullptr;
PrecisionDebugger* gInstance = nullptr;
std::atomic<bool> gModuleCalls { false };
std::atomic<std::uint64_t> gGeneration { 0 };
/// The process that made the debugger. A child made by fork() checks it before taking any lock: a lock
/// (ours, or ATen's RecordFunction registry) held by another parent thread at the fork stays held forever.
std::atomic<pid_t> gOwnerPid { 0 };
thread_local int tDepth = 0; // RecordFunction nesting on this thread: only depth 0 is a user's call

CallSite toCallSite(const std::source_location& where)
{
    return { where.file_name(), static_cast<std::uint32_t>(where.line()), where.function_name() };
}

} // namespace

PrecisionDebugger::Impl::Impl(Config config, Options options, std::optional<std::int64_t> rank)
    : session(std::move(config), rank)
    , model(std::move(options.model))
    , generation(++gGeneration)
{
}

namespace {

/// Whether hooks registered by the debugger of `generation` may still write (call with gMutex held).
PrecisionDebugger::Impl* liveDebugger(std::uint64_t generation)
{
    return gActive && gActive->generation == generation ? gActive : nullptr;
}


} // namespace

// ------------------------------------------------------------------------------------------------
// L1: top-level aten ops through RecordFunction, backward through a post hook on their grad_fn

namespace {

/// The backward entry of one API call: the node's incoming gradients (grads of the op's outputs,
/// picked by output_nr) are its "input", the gradients it produces (for the op's inputs) its "output".
class ApiBackwardHook final : public torch::autograd::FunctionPostHook
{
public:
    ApiBackwardHook(std::uint64_t generation, EntryPlan plan, std::vector<int> outputNrs)
        : m_generation(generation)
        , m_plan(std::move(plan))
        , m_outputNrs(std::move(outputNrs))
    {
    }

    variable_list operator()(const variable_list& gradInputs, const variable_list& gradOutputs) override
    {
        at::DisableRecordFunctionGuard notUserOps;
        const std::lock_guard lock(gMutex);
        PrecisionDebugger::Impl* impl = liveDebugger(m_generation);
        if (!impl || !impl->session.backwardOn())
            return gradInputs;
        variable_list ofOutputs(m_outputNrs.size());
        for (std::size_t i = 0; i < m_outputNrs.size(); ++i) {
            const int nr = m_outputNrs[i];
            if (nr >= 0 && static_cast<std::size_t>(nr) < gradOutputs.size())
                ofOutputs[i] = gradOutputs[static_cast<std::size_t>(nr)];
        }
        writeBackward(*impl, m_plan, ofOutputs, gradInputs);
        return gradInputs;
    }

private:
    std::uint64_t m_generation;
    EntryPlan m_plan;
    std::vector<int> m_outputNrs;
};

/// One API call between its start and end callbacks.
struct ApiCall final : at::ObserverContext
{
    ApiCall()
        : json(text, 2)
    {
    }
    EntryPlan plan;
    std::string text;
    PyJsonWriter json;
    std::unique_ptr<LeafWriter> leaves;
};

/// Ops whose outputs hold no values (uninitialized memory): recording them would only add noise.
bool carriesNoData(std::string_view op)
{
    return op == "empty" || op == "empty_like" || op == "empty_strided" || op == "resize_";
}

std::unique_ptr<at::ObserverContext> onOpStart(const at::RecordFunction& fn)
{
    const int depth = tDepth++;
    // Ops a kernel runs on intra-op worker threads start at depth 0 there, but are no user's call.
    if (depth > 0 || fn.scope() != at::RecordScope::FUNCTION || at::in_parallel_region())
        return nullptr;
    const std::string_view name = fn.name();
    if (!name.starts_with("aten::"))
        return nullptr; // autograd's evaluate_function ranges, user scopes
    const std::string_view op = name.substr(6);
    if (carriesNoData(op))
        return nullptr;
    at::DisableRecordFunctionGuard notUserOps;
    const std::lock_guard lock(gMutex);
    PrecisionDebugger::Impl* impl = gActive;
    if (!impl || !impl->session.forwardOn())
        return nullptr;
    auto call = std::make_unique<ApiCall>();
    call->plan = impl->session.planApi("Aten", op);
    if (!call->plan.record && !call->plan.backwardRecord) {
        impl->session.apiDone(call->plan);
        return nullptr;
    }
    call->leaves = std::make_unique<LeafWriter>(*impl, call->plan, call->text, call->json, deferFiles(*impl));
    call->leaves->cloneDeferred = op.ends_with('_'); // an in-place op changes its inputs before the end
    call->json.beginObject();
    if (call->plan.record && call->plan.inputs) {
        // Inputs are read now: in-place ops change them before the end callback.
        call->json.key("input_args");
        call->json.beginArray();
        const auto inputs = fn.inputs();
        for (std::size_t i = 0; i < inputs.size(); ++i)
            call->leaves->value(inputs[i], "input." + std::to_string(i));
        call->json.endArray();
        call->json.key("input_kwargs"); // aten ops take every argument by position
        call->json.beginObject();
        call->json.endObject();
    }
    return call;
}

/// The tensors an op returned, flattened as msprobe lists them ("output": [t0, t1, ...]).
std::vector<c10::IValue> flatOutputs(const std::vector<c10::IValue>& outputs)
{
    if (outputs.size() == 1 && outputs.front().isList()) {
        std::vector<c10::IValue> flat;
        for (const c10::IValue& v : outputs.front().toList())
            flat.push_back(v);
        return flat;
    }
    return outputs;
}

void hookApiBackward(PrecisionDebugger::Impl& impl, const EntryPlan& plan, const std::vector<c10::IValue>& outputs)
{
    if (!plan.backwardRecord)
        return;
    std::shared_ptr<torch::autograd::Node> node;
    std::vector<int> outputNrs;
    for (const c10::IValue& v : outputs) {
        int nr = -1;
        if (v.isTensor()) {
            const at::Tensor& t = v.toTensor();
            if (t.defined() && t.requires_grad() && t.grad_fn()) {
                if (!node)
                    node = t.grad_fn();
                if (t.grad_fn() == node)
                    nr = static_cast<int>(t.output_nr());
            }
        }
        outputNrs.push_back(nr);
    }
    if (!node)
        return;
    node->add_post_hook(
        std::make_unique<ApiBackwardHook>(impl.generation, impl.session.planBackward(plan), std::move(outputNrs)));
}

void onOpEnd(const at::RecordFunction& fn, at::ObserverContext* context)
{
    --tDepth;
    if (!context)
        return;
    auto& call = static_cast<ApiCall&>(*context);
    at::DisableRecordFunctionGuard notUserOps;
    const std::lock_guard lock(gMutex);
    PrecisionDebugger::Impl* impl = gActive;
    if (!impl)
        return;
    const std::vector<c10::IValue> outputs = flatOutputs(fn.outputs());
    if (call.plan.record) {
        if (call.plan.outputs) {
            call.json.key("is_recompute");
            call.json.boolean(false);
            call.json.key("output");
            call.json.beginArray();
            for (std::size_t i = 0; i < outputs.size(); ++i)
                call.leaves->value(outputs[i], "output." + std::to_string(i));
            call.json.endArray();
        } else {
            call.json.key("is_recompute");
            call.json.boolean(false);
        }
        call.json.endObject();
        if (impl->session.forwardOn() || impl->session.backwardOn())
            commit(*impl, call.plan, call.text, *call.leaves, true);
    }
    impl->session.apiDone(call.plan);
    hookApiBackward(*impl, call.plan, outputs);
}

} // namespace

void PrecisionDebugger::Impl::setCallback(bool on)
{
    if (!recordsApis() || (!on && !callback))
        return;
    if (!callback) {
        callback = at::addGlobalCallback(at::RecordFunctionCallback(onOpStart, onOpEnd)
                                             .needsInputs(true)
                                             .needsOutputs(true)
                                             .scopes({ at::RecordScope::FUNCTION, at::RecordScope::BACKWARD_FUNCTION }));
        callbackOn = true;
    }
    if (on && !callbackOn)
        at::reenableCallback(*callback);
    else if (!on && callbackOn)
        at::disableCallback(*callback);
    callbackOn = on;
}

// ------------------------------------------------------------------------------------------------
// L0: module calls

/// Shared by a module call's input hook and the output tensor hooks: its backward entry.
struct ModuleBackwardState
{
    std::uint64_t generation = 0;
    EntryPlan plan;
    std::vector<at::Tensor> outputGrads; ///< per output tensor, undefined until its hook ran
    std::size_t outputsWaiting = 0;      ///< output hooks still to run
    std::size_t outputsReceived = 0;     ///< output hooks that ran
    std::size_t tensorInputs = 0;        ///< tensor arguments (the entry's "output" list)
    std::vector<int> hookedSlot;         ///< per tensor argument: its place among the hooked inputs, or -1
    bool inputsHooked = false;
    bool written = false;

    /// Writes the entry (gMutex held). `inputGrads`: grads of the hooked inputs, or empty.
    void write(PrecisionDebugger::Impl& impl, const variable_list& inputGrads)
    {
        if (written || !impl.session.backwardOn())
            return;
        written = true;
        variable_list ofInputs(tensorInputs); // per tensor argument; those without a gradient stay null
        for (std::size_t i = 0; i < tensorInputs && i < hookedSlot.size(); ++i) {
            const int slot = hookedSlot[i];
            if (slot >= 0 && static_cast<std::size_t>(slot) < inputGrads.size())
                ofInputs[i] = inputGrads[static_cast<std::size_t>(slot)];
        }
        writeBackward(impl, plan, outputGrads, ofInputs);
    }
};

namespace {

/// Holds a ModuleBackwardState in an autograd context (saved_data takes IValues only).
struct StateCapsule final : torch::CustomClassHolder
{
    std::shared_ptr<ModuleBackwardState> state;
};

/// Identity on a marked module's tensor inputs: its backward sees the gradients of exactly those inputs
/// (what PyTorch's full backward hooks do with BackwardHookFunction). The outputs are views of the
/// inputs, so a module must not modify its inputs in place, as with PyTorch's hooks.
struct InputHookFunction : torch::autograd::Function<InputHookFunction>
{
    // TensorList, not variable_list: LibTorch 1.13 counts the tensors of an ArrayRef argument as inputs
    // but takes a std::vector argument for a non-tensor one (its outputs would then not require grad).
    static variable_list forward(torch::autograd::AutogradContext* ctx, at::TensorList inputs,
                                 c10::intrusive_ptr<StateCapsule> capsule)
    {
        ctx->saved_data["state"] =
            c10::IValue::make_capsule(c10::static_intrusive_pointer_cast<torch::CustomClassHolder>(capsule));
        return inputs.vec();
    }

    static variable_list backward(torch::autograd::AutogradContext* ctx, variable_list grads)
    {
        auto capsule = c10::static_intrusive_pointer_cast<StateCapsule>(ctx->saved_data["state"].toCapsule());
        {
            at::DisableRecordFunctionGuard notUserOps;
            const std::lock_guard lock(gMutex);
            if (PrecisionDebugger::Impl* impl = liveDebugger(capsule->state->generation))
                capsule->state->write(*impl, grads);
        }
        grads.emplace_back(); // no gradient for the capsule argument
        return grads;
    }
};

} // namespace

/// parameters_grad of one module this step: filled by hooks on its parameters.
struct ParamGradState
{
    EntryPlan plan;
    std::vector<std::string> names;
    std::vector<at::Tensor> grads;
    std::size_t waiting = 0;
    bool written = false;

    void write(PrecisionDebugger::Impl& impl)
    {
        if (written || !impl.session.backwardOn())
            return;
        written = true;
        std::string text;
        PyJsonWriter json(text, 2);
        LeafWriter leaves(impl, plan, text, json, deferFiles(impl));
        json.beginObject();
        for (std::size_t i = 0; i < names.size(); ++i) {
            if (!grads[i].defined())
                continue;
            json.key(names[i]);
            json.beginArray(); // msprobe writes each gradient as a one-element list
            leaves.tensor(grads[i], names[i]);
            json.endArray();
        }
        json.endObject();
        commit(impl, plan, text, leaves, false);
    }
};

namespace {

/// msprobe shows Python class names: torch::nn::LinearImpl -> Linear, (anonymous namespace)::BlockImpl -> Block.
std::string className(const torch::nn::Module& module)
{
    std::string name = module.name();
    if (const auto lt = name.find('<'); lt != std::string::npos)
        name.resize(lt);
    if (const auto colon = name.rfind("::"); colon != std::string::npos)
        name.erase(0, colon + 2);
    if (name.size() > 4 && name.ends_with("Impl"))
        name.resize(name.size() - 4);
    return name;
}

void registerParamHooks(PrecisionDebugger::Impl& impl, const torch::nn::Module& module, const std::string& stem,
                        bool forwardRecorded)
{
    if (impl.paramGrads.count(stem))
        return; // once per module and step: a leaf hook sees the gradient summed over all calls
    auto state = std::make_shared<ParamGradState>();
    state->plan = impl.session.planParametersGrad(stem, forwardRecorded);
    impl.paramGrads.emplace(stem, state);
    if (!state->plan.record || !at::GradMode::is_enabled())
        return;
    for (const auto& item : module.named_parameters(/*recurse=*/false)) {
        const at::Tensor& p = item.value();
        if (!p.requires_grad())
            continue;
        const std::size_t slot = state->names.size();
        state->names.push_back(item.key());
        state->grads.emplace_back();
        ++state->waiting;
        const std::uint64_t generation = impl.generation;
        const std::weak_ptr<ParamGradState> weak = state;
        const unsigned handle = p.register_hook([generation, weak, slot](const at::Tensor& grad) {
            at::DisableRecordFunctionGuard notUserOps;
            const std::lock_guard lock(gMutex);
            PrecisionDebugger::Impl* live = liveDebugger(generation);
            const auto s = weak.lock();
            if (!live || !s || s->written)
                return;
            s->grads[slot] = grad;
            if (--s->waiting == 0)
                s->write(*live);
        });
        impl.paramHooks.emplace_back(p, handle);
    }
}

} // namespace

void PrecisionDebugger::Impl::pause()
{
    setCallback(false);
    gModuleCalls = false;
    flushPending();
    removeParamHooks();
    if (background)
        background->drain(); // after stop() and step() the files are complete
}

std::optional<Diagnostic> PrecisionDebugger::Impl::backgroundFailure()
{
    if (!background || !background->failed())
        return std::nullopt;
    session.markWriteFailed();
    return background->takeFailure();
}

void PrecisionDebugger::Impl::removeParamHooks()
{
    for (auto& [tensor, handle] : paramHooks)
        tensor.remove_hook(handle);
    paramHooks.clear();
}

void PrecisionDebugger::Impl::flushPending()
{
    // Gradients that never all arrived (unused outputs or parameters): write what came.
    for (auto& [stem, state] : paramGrads) {
        if (!state->written && state->waiting < state->names.size())
            state->write(*this);
    }
    for (const auto& weak : openModuleBackward) {
        if (const auto state = weak.lock(); state && !state->written && state->outputsReceived > 0)
            state->write(*this, {});
    }
    openModuleBackward.clear();
}

void PrecisionDebugger::Impl::refreshModuleNames()
{
    moduleNames.clear();
    if (!model)
        return;
    // msprobe skips the model itself ("" in named_modules()).
    for (const auto& item : model->named_modules(/*name_prefix=*/"", /*include_self=*/true)) {
        if (!item.key().empty())
            moduleNames.emplace(item.value().get(), item.key());
    }
}

struct detail::ModuleCall::State
{
    std::uint64_t generation = 0;
    const torch::nn::Module* module = nullptr;
    std::string stem;
    EntryPlan plan;
    std::vector<c10::IValue> inputs;
    variable_list hookedInputs; ///< views to pass instead of the arguments (see InputHookFunction)
    std::vector<int> hookedSlot;
    std::shared_ptr<ModuleBackwardState> backward;
    bool ended = false;
};

bool detail::moduleCallsRecorded() noexcept { return gModuleCalls.load(std::memory_order_relaxed); }

detail::ModuleCall::ModuleCall(const torch::nn::Module& module, std::source_location where)
{
    at::DisableRecordFunctionGuard notUserOps;
    const std::lock_guard lock(gMutex);
    PrecisionDebugger::Impl* impl = gActive;
    if (!impl || !impl->recordsModules() || !impl->session.forwardOn())
        return;
    auto it = impl->moduleNames.find(&module);
    if (it == impl->moduleNames.end() && !impl->moduleNamesRefreshed) {
        impl->refreshModuleNames(); // modules added after the debugger was made
        impl->moduleNamesRefreshed = true;
        it = impl->moduleNames.find(&module);
    }
    if (it == impl->moduleNames.end())
        return; // not part of the model (or the model itself): not recorded, as in msprobe
    m_state = new State;
    m_state->generation = impl->generation;
    m_state->module = &module;
    m_state->stem = "Module." + it->second + "." + className(module);
    m_state->plan = impl->session.beginModule(it->second, className(module), toCallSite(where));
}

detail::ModuleCall::~ModuleCall()
{
    if (!m_state)
        return;
    if (!m_state->ended) {
        // Left by an exception: the module is no longer a parent of what runs next.
        const std::lock_guard lock(gMutex);
        if (PrecisionDebugger::Impl* impl = liveDebugger(m_state->generation))
            impl->session.endModule(m_state->plan);
    }
    delete m_state;
}

void detail::ModuleCall::addInput(c10::IValue value)
{
    if (m_state)
        m_state->inputs.push_back(std::move(value));
}

void detail::ModuleCall::begin()
{
    if (!m_state)
        return;
    at::DisableRecordFunctionGuard notUserOps;
    const std::lock_guard lock(gMutex);
    PrecisionDebugger::Impl* impl = liveDebugger(m_state->generation);
    if (!impl)
        return;
    const EntryPlan& plan = m_state->plan;
    if (!plan.backwardRecord || !at::GradMode::is_enabled())
        return;
    auto state = std::make_shared<ModuleBackwardState>();
    state->generation = m_state->generation;
    state->plan = impl->session.planBackward(plan);
    variable_list toHook;
    for (const c10::IValue& v : m_state->inputs) {
        if (!v.isTensor())
            continue;
        const at::Tensor& t = v.toTensor();
        int slot = -1;
        if (t.defined() && t.requires_grad()) {
            slot = static_cast<int>(toHook.size());
            toHook.push_back(t);
        }
        state->hookedSlot.push_back(slot);
        m_state->hookedSlot.push_back(slot);
    }
    state->tensorInputs = state->hookedSlot.size();
    if (!toHook.empty()) {
        auto capsule = c10::make_intrusive<StateCapsule>();
        capsule->state = state;
        m_state->hookedInputs = InputHookFunction::apply(at::TensorList(toHook), capsule);
        state->inputsHooked = true;
    }
    m_state->backward = state;
}

at::Tensor detail::ModuleCall::passTensor(std::size_t index, const at::Tensor& original)
{
    if (!m_state || m_state->hookedInputs.empty())
        return original;
    // `index` counts all arguments; hookedSlot counts tensor arguments only.
    std::size_t tensorIndex = 0;
    for (std::size_t i = 0; i < index && i < m_state->inputs.size(); ++i)
        tensorIndex += m_state->inputs[i].isTensor() ? 1 : 0;
    if (tensorIndex >= m_state->hookedSlot.size() || m_state->hookedSlot[tensorIndex] < 0)
        return original;
    return m_state->hookedInputs[static_cast<std::size_t>(m_state->hookedSlot[tensorIndex])];
}

namespace {

/// Collects the tensors of a module's output (a tensor, a tuple or a list of them).
void outputTensors(const c10::IValue& v, std::vector<at::Tensor>& out)
{
    if (v.isTensor())
        out.push_back(v.toTensor());
    else if (v.isTuple())
        for (const c10::IValue& e : v.toTupleRef().elements())
            outputTensors(e, out);
    else if (v.isList())
        for (const c10::IValue& e : v.toList())
            outputTensors(e, out);
}

/// The outputs as msprobe lists them: a tuple or list is spread, a single value is one element.
std::vector<c10::IValue> outputList(const c10::IValue& v)
{
    if (v.isTuple())
        return v.toTupleRef().elements().vec();
    if (v.isList())
        return v.toList().vec();
    return { v };
}

} // namespace

c10::IValue detail::ModuleCall::end(c10::IValue output)
{
    if (!m_state)
        return c10::IValue();
    m_state->ended = true;
    at::DisableRecordFunctionGuard notUserOps;
    const std::lock_guard lock(gMutex);
    PrecisionDebugger::Impl* impl = liveDebugger(m_state->generation);
    if (!impl)
        return c10::IValue();
    const EntryPlan& plan = m_state->plan;
    if (plan.record && impl->session.forwardOn()) {
        std::string text;
        PyJsonWriter json(text, 2);
        LeafWriter leaves(*impl, plan, text, json, deferFiles(*impl));
        json.beginObject();
        if (plan.inputs) {
            json.key("input_args");
            json.beginArray();
            for (std::size_t i = 0; i < m_state->inputs.size(); ++i)
                leaves.value(m_state->inputs[i], "input." + std::to_string(i));
            json.endArray();
            json.key("input_kwargs");
            json.beginObject();
            json.endObject();
        }
        if (plan.outputs) {
            json.key("output");
            json.beginArray();
            const std::vector<c10::IValue> outs = outputList(output);
            for (std::size_t i = 0; i < outs.size(); ++i)
                leaves.value(outs[i], "output." + std::to_string(i));
            json.endArray();
        }
        if (plan.inputs) {
            json.key("parameters");
            json.beginObject();
            for (const auto& item : m_state->module->named_parameters(/*recurse=*/false)) {
                json.key(item.key());
                leaves.tensor(item.value(), "parameters." + item.key());
            }
            json.endObject();
        }
        json.key("is_recompute");
        json.boolean(false);
        json.endObject();
        commit(*impl, plan, text, leaves, true);
    }
    impl->session.endModule(plan);
    registerParamHooks(*impl, *m_state->module, m_state->stem, plan.inRange);

    // Gradients of the outputs: a hook per output tensor (no graph change, so in-place use of the
    // outputs stays allowed). Without hooked inputs the entry is written when the last one arrives.
    const auto& state = m_state->backward;
    if (!state)
        return c10::IValue();
    std::vector<at::Tensor> outs;
    outputTensors(output, outs);
    state->outputGrads.resize(outs.size());
    for (std::size_t i = 0; i < outs.size(); ++i) {
        const at::Tensor& t = outs[i];
        if (!t.defined() || !t.requires_grad())
            continue;
        ++state->outputsWaiting;
        // The hook owns the state: it lives as long as the output's graph does.
        t.register_hook([s = state, i](const at::Tensor& grad) {
            at::DisableRecordFunctionGuard hookGuard;
            const std::lock_guard hookLock(gMutex);
            PrecisionDebugger::Impl* live = liveDebugger(s->generation);
            if (!live)
                return;
            s->outputGrads[i] = grad;
            ++s->outputsReceived;
            if (--s->outputsWaiting == 0 && !s->inputsHooked)
                s->write(*live, {});
        });
    }
    if (state->outputsWaiting > 0 || state->inputsHooked)
        impl->openModuleBackward.push_back(state);
    return c10::IValue(); // the outputs themselves are unchanged
}

// ------------------------------------------------------------------------------------------------
// PrecisionDebugger

namespace {

std::optional<std::int64_t> rankFromEnvironment()
{
    for (const char* name : { "RANK", "LOCAL_RANK" }) {
        const char* value = std::getenv(name);
        if (!value || !*value)
            continue;
        char* end = nullptr;
        const long long r = std::strtoll(value, &end, 10);
        if (*end == '\0' && r >= 0)
            return r;
        throw CollectError("collect.rank", std::string("environment variable ") + name + "=\"" + value
                                               + "\" is not a rank (a whole number >= 0)");
    }
    return std::nullopt;
}

Config configFor(const Options& options)
{
    // The Options win over config.json's keys before the task's section is chosen (loadConfig with overrides,
    // the Python module's path too): the section read is the one of the task the Options name.
    ConfigOverrides overrides;
    overrides.where = "PrecisionDebugger(Options)";
    overrides.task = options.task;
    overrides.level = options.level;
    Config config = options.configPath.empty() && !options.task && !options.level
        ? Config {}
        : loadConfig(options.configPath, overrides);
    if (options.dumpPath)
        config.dumpPath = *options.dumpPath;
    if (options.step) {
        config.steps = *options.step;
        config.stepRanges.clear();
    }
    if (options.freeBenchmark)
        config.freeBenchmark = *options.freeBenchmark;
    if (options.asyncQueueBytes)
        config.asyncQueueBytes = *options.asyncQueueBytes;
    if (config.task == Task::FreeBenchmark) {
        if (const auto problem = freeBenchmarkProblem(config.freeBenchmark, config.level, config.list.empty(),
                                                      config.scope.empty()))
            throw CollectError("collect.config", "free_benchmark option \"" + problem->first + "\": " + problem->second);
    }
    if (config.dumpPath.empty())
        throw CollectError("collect.config", "no dump_path: set it in config.json or in Options::dumpPath");
    if ((config.level == Level::L0 || config.level == Level::Mix) && !options.model)
        throw CollectError("collect.config", std::string("level ") + toString(config.level)
                                                 + " needs the model (Options::model or the constructor's "
                                                   "model argument): module names come from named_modules()");
    return config;
}

std::unique_ptr<PrecisionDebugger::Impl> makeImpl(Options options)
{
    Config config = configFor(options);
    const std::optional<std::int64_t> rank = options.rank ? options.rank : rankFromEnvironment();
    if (config.seedConfigured)
        seedAll(config.seed, config.isDeterministic);
    auto log = options.log;
    if (config.task == Task::FreeBenchmark)
        log = log ? log : [](const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); };
    auto impl = std::make_unique<PrecisionDebugger::Impl>(config, std::move(options), rank);
    impl->refreshModuleNames();
    if (config.task == Task::FreeBenchmark)
        impl->freeBenchmark = std::make_unique<freebench::Engine>(config, rank, std::move(log));
    // overflow_check stays in the training thread: whether an entry is written depends on its values,
    // and reaching overflow_nums stops collection at once.
    const std::uint64_t bound = config.asyncQueueBytes.value_or(defaultAsyncQueueBytes());
    if ((config.task == Task::Statistics || config.task == Task::Tensor) && bound > 0)
        impl->background = std::make_unique<BackgroundWriter>(bound);
    return impl;
}

void throwIf(const std::optional<Diagnostic>& d)
{
    if (d)
        throw CollectError(d->id, d->format());
}

/// Process end (exit() with a debugger still alive, e.g. one never deleted): what is queued is written
/// and the files are completed, as the destructor would.
void completeAtExit()
{
    if (gOwnerPid.load() != ::getpid())
        return; // a forked child: the parent's files, and maybe the parent's locks
    at::DisableRecordFunctionGuard notUserOps;
    const std::lock_guard lock(gMutex);
    PrecisionDebugger::Impl* impl = gActive;
    if (!impl || impl->pid != ::getpid())
        return;
    impl->pause();
    impl->report(impl->backgroundFailure());
    impl->report(impl->session.nextStep()); // completes the files, also level debug's without start()
}

} // namespace

PrecisionDebugger::PrecisionDebugger(const std::string& configPath, std::shared_ptr<torch::nn::Module> model)
    : PrecisionDebugger([&] {
        Options o;
        o.configPath = configPath;
        o.model = std::move(model);
        return o;
    }())
{
}

PrecisionDebugger::PrecisionDebugger(Options options)
{
    auto impl = makeImpl(std::move(options));
    const std::lock_guard lock(gMutex);
    if (gActive)
        throw CollectError("collect.duplicate", "a PrecisionDebugger already exists in this process");
    m_impl = std::move(impl);
    gActive = m_impl.get();
    gInstance = this;
    gOwnerPid = ::getpid();
    static std::once_flag atExit;
    std::call_once(atExit, [] { std::atexit(completeAtExit); });
}

PrecisionDebugger::~PrecisionDebugger()
{
    if (m_impl->pid != ::getpid()) {
        // A forked child: the files and the writer are the parent's, and a lock another parent thread held
        // at the fork would never be released; the copy is left as it is.
        static_cast<void>(m_impl.release());
        return;
    }
    at::DisableRecordFunctionGuard notUserOps;
    std::unique_lock lock(gMutex);
    m_impl->pause();
    m_impl->report(m_impl->backgroundFailure()); // a destructor cannot throw: stderr, and dump.json left cut
    m_impl->freeBenchmark.reset();
    if (m_impl->callback) {
        at::removeCallback(*m_impl->callback);
        m_impl->callback.reset();
    }
    m_impl->report(m_impl->session.nextStep()); // completes the files
    gActive = nullptr;
    gInstance = nullptr;
}

void PrecisionDebugger::start(std::source_location where)
{
    at::DisableRecordFunctionGuard notUserOps;
    const std::lock_guard lock(gMutex);
    throwIf(m_impl->backgroundFailure());
    throwIf(m_impl->session.start(toCallSite(where)));
    if (m_impl->freeBenchmark && m_impl->session.selected())
        m_impl->freeBenchmark->start(m_impl->session.rankDir(), m_impl->session.currentStep());
    const bool on = m_impl->session.forwardOn();
    m_impl->setCallback(on);
    gModuleCalls = on && m_impl->recordsModules();
}

void PrecisionDebugger::stop()
{
    at::DisableRecordFunctionGuard notUserOps;
    const std::lock_guard lock(gMutex);
    m_impl->pause();
    if (m_impl->freeBenchmark) {
        m_impl->freeBenchmark->stop();
        m_impl->report(m_impl->freeBenchmark->takeProblem());
    }
    const std::optional<Diagnostic> failure = m_impl->backgroundFailure(); // before stop(): it leaves dump.json cut
    m_impl->report(m_impl->session.stop());
    throwIf(failure);
    if (m_impl->problem) {
        const Diagnostic d = *m_impl->problem;
        m_impl->problem.reset();
        throw CollectError(d.id, d.format());
    }
}

void PrecisionDebugger::step()
{
    at::DisableRecordFunctionGuard notUserOps;
    const std::lock_guard lock(gMutex);
    m_impl->pause();
    m_impl->paramGrads.clear();
    m_impl->moduleNamesRefreshed = false;
    if (m_impl->freeBenchmark)
        m_impl->freeBenchmark->nextStep();
    const std::optional<Diagnostic> failure = m_impl->backgroundFailure();
    const std::optional<Diagnostic> problem = m_impl->session.nextStep();
    if (m_impl->background)
        m_impl->background->clearFailure(); // a new folder: written again
    throwIf(failure);
    throwIf(problem);
}

void PrecisionDebugger::flush()
{
    at::DisableRecordFunctionGuard notUserOps;
    const std::lock_guard lock(gMutex);
    if (m_impl->background)
        m_impl->background->drain();
    throwIf(m_impl->backgroundFailure());
}

WriterStats PrecisionDebugger::writerStats() const
{
    WriterStats stats;
    if (!m_impl->background)
        return stats;
    const BackgroundWriterCounts c = m_impl->background->counts();
    stats.boundBytes = c.boundBytes;
    stats.queuedBytes = c.queuedBytes;
    stats.peakQueuedBytes = c.peakQueuedBytes;
    stats.entriesWritten = c.jobsDone;
    stats.entriesDropped = c.jobsDropped;
    stats.waitSeconds = c.waitSeconds;
    return stats;
}

void PrecisionDebugger::forwardBackwardDumpEnd()
{
    const std::lock_guard lock(gMutex);
    m_impl->session.forwardBackwardDumpEnd();
    m_impl->setCallback(false);
    gModuleCalls = false;
}

void PrecisionDebugger::save(const c10::IValue& value, const std::string& name, bool saveBackward)
{
    at::DisableRecordFunctionGuard notUserOps;
    const std::lock_guard lock(gMutex);
    Impl& impl = *m_impl;
    throwIf(impl.backgroundFailure());
    if (impl.session.config().level != Level::Debug)
        throw CollectError("collect.level", "save() writes debug.json and needs level \"debug\" (this debugger runs "
                                                + std::string(toString(impl.session.config().level)) + ")");
    throwIf(impl.session.openForDebug()); // the tensor folder must exist before the first file
    const EntryPlan plan = impl.session.planDebug(name, false);
    std::string text;
    PyJsonWriter json(text, 2);
    LeafWriter leaves(impl, plan, text, json, false);
    leaves.value(value, "");
    throwIf(submit(impl, plan, text, leaves, true));
    if (!saveBackward || !value.isTensor() || !value.toTensor().requires_grad())
        return;
    // The gradient entry takes its number now, so that it matches this call's number.
    auto gradPlan = std::make_shared<EntryPlan>(impl.session.planDebug(name, true));
    const std::uint64_t generation = impl.generation;
    value.toTensor().register_hook([generation, gradPlan](const at::Tensor& grad) {
        at::DisableRecordFunctionGuard guard;
        const std::lock_guard hookLock(gMutex);
        PrecisionDebugger::Impl* live = liveDebugger(generation);
        if (!live)
            return;
        std::string gradText;
        PyJsonWriter gradJson(gradText, 2);
        LeafWriter gradLeaves(*live, *gradPlan, gradText, gradJson, false);
        gradLeaves.tensor(grad, "");
        live->report(submit(*live, *gradPlan, gradText, gradLeaves, true));
    });
}

const Config& PrecisionDebugger::config() const { return m_impl->session.config(); }
std::int64_t PrecisionDebugger::currentStep() const { return m_impl->session.currentStep(); }
std::filesystem::path PrecisionDebugger::rankDir() const { return m_impl->session.rankDir(); }
bool PrecisionDebugger::overflowLimitReached() const
{
    const std::lock_guard lock(gMutex);
    return m_impl->session.overflowLimitReached();
}

PrecisionDebugger* PrecisionDebugger::instance()
{
    const std::lock_guard lock(gMutex);
    return gInstance;
}

void seedAll(std::int64_t seed, bool deterministic)
{
    torch::manual_seed(static_cast<std::uint64_t>(seed));
    std::srand(static_cast<unsigned>(seed));
    auto& context = at::globalContext();
    context.setDeterministicAlgorithms(deterministic, /*warn_only=*/false);
    // msprobe's seed_all also pins cuDNN; these are no-ops in CPU builds of LibTorch.
    context.setDeterministicCuDNN(true);
    context.setBenchmarkCuDNN(false);
}

} // namespace probescope::collect
