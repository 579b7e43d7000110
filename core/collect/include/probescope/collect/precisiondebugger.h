// SPDX-License-Identifier: Apache-2.0
// ProbeScope's collection library: msprobe's PrecisionDebugger for LibTorch training programs.
// See docs/collect.md. Mapping to msprobe's Python names: start/stop/step, forward_backward_dump_end ->
// forwardBackwardDumpEnd, save, seed_all -> seedAll.
#pragma once

#include "probescope/collect/config.h"

#include <ATen/core/Tensor.h>
#include <ATen/core/ivalue.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <source_location>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace torch::nn {
class Module;
}

namespace probescope::collect {

/// PrecisionDebugger's keyword arguments (msprobe: config_path, task, dump_path, level, model, step).
/// Set ones take precedence over config.json.
struct Options
{
    std::string configPath;                  ///< "" = no config file: defaults plus the fields below
    std::optional<Task> task;
    std::optional<std::string> dumpPath;
    std::optional<Level> level;
    std::optional<std::vector<std::int64_t>> step;
    std::shared_ptr<torch::nn::Module> model; ///< required for L0 and mix: module names come from named_modules()
    /// This process's rank. Default: the RANK environment variable (torchrun), else not distributed
    /// (folder "rank"). Pass process_group->getRank() when ranks come from elsewhere.
    std::optional<std::int64_t> rank;
    /// task free_benchmark: its settings (replace config.json's "free_benchmark" section when set).
    std::optional<FreeBenchmarkConfig> freeBenchmark;
    /// Where free_benchmark's log lines go ("[msprobe] Free benchmark: ..."); default: stderr.
    std::function<void(const std::string&)> log;
    /// Bound of the background writer's queue in bytes of tensor snapshots; 0 = statistics and files are
    /// computed and written in the training thread. Default: config.json's "async_queue_bytes", else
    /// defaultAsyncQueueBytes() (1 GiB, at most 1/8 of physical memory).
    std::optional<std::uint64_t> asyncQueueBytes;
};

/// What the background writer did so far (PrecisionDebugger::writerStats()); all 0 without one.
struct WriterStats
{
    std::uint64_t boundBytes = 0;      ///< the queue's bound; 0 = no background writer (task, or set so)
    std::uint64_t queuedBytes = 0;     ///< snapshots queued or being written now
    std::uint64_t peakQueuedBytes = 0; ///< the most held at once (at most the bound, or one larger entry)
    std::uint64_t entriesWritten = 0;
    std::uint64_t entriesDropped = 0;  ///< not written: a write of the same step failed first
    double waitSeconds = 0;            ///< time the training threads waited for room in the queue
};

/**
 * @brief Collects msprobe-format dumps from a LibTorch program (one instance per process).
 *
 * Task free_benchmark re-executes the in-scope aten ops of the thread that calls start() with perturbed
 * inputs and writes free_benchmark.csv (docs/free-benchmark.md); the other tasks dump:
 * L1 records every top-level aten op between start() and stop() through at::RecordFunction, and its
 * backward through autograd hooks; L0 records the module calls marked with probescope::collect::call();
 * mix does both. Output: dump_path/step{N}/rank{R}/ (dump.json, construct.json, stack.json,
 * dump_tensor_data/), readable by ProbeScope and msprobe's compare. Errors throw CollectError.
 */
class PrecisionDebugger
{
public:
    explicit PrecisionDebugger(const std::string& configPath, std::shared_ptr<torch::nn::Module> model = nullptr);
    explicit PrecisionDebugger(Options options);
    ~PrecisionDebugger(); ///< completes the files of the current step
    PrecisionDebugger(const PrecisionDebugger&) = delete;
    PrecisionDebugger& operator=(const PrecisionDebugger&) = delete;

    /// Starts collecting (msprobe: debugger.start()). The call site is recorded in stack.json.
    void start(std::source_location where = std::source_location::current());
    /// Stops collecting; the files are complete, valid JSON afterwards. Call it after loss.backward().
    void stop();
    /// Ends the step: files completed, call counters reset, the next step's folder used from then on.
    void step();
    /// Forward calls after this point are not recorded; backward of the ones before still is, until stop().
    void forwardBackwardDumpEnd();
    /// Waits until the background writer has written everything queued; throws its error, if any
    /// (stop(), step() and the destructor flush too). The files stay open until stop().
    void flush();
    /// The background writer's figures (bound, queued and peak bytes, waits, entries written and dropped).
    WriterStats writerStats() const;
    /// Level debug: writes `value` (a tensor or a structure of them) to debug.json as "{name}.{n}.debug";
    /// with saveBackward, a tensor's gradient follows as "{name}_grad.{n}.debug".
    void save(const c10::IValue& value, const std::string& name, bool saveBackward = true);

    const Config& config() const;
    std::int64_t currentStep() const;
    /// Folder of the current step: dump_path/step{N}/rank{R}.
    std::filesystem::path rankDir() const;
    /// overflow_check: overflow_nums overflows were found and collection stopped (msprobe stops training).
    bool overflowLimitReached() const;

    /// The debugger of this process, or nullptr (msprobe: PrecisionDebugger.save is a class method).
    static PrecisionDebugger* instance();

    struct Impl;

private:
    std::unique_ptr<Impl> m_impl;
};

/// Fixes the random state as msprobe's seed_all does for the parts LibTorch has: torch::manual_seed,
/// std::srand, deterministic algorithms on or off (and cuDNN's determinism flags, no-ops on CPU builds).
void seedAll(std::int64_t seed = 1234, bool deterministic = false);

// ------------------------------------------------------------------------------------------------
// L0: marking module calls. The one-line change per call:  y = fc1(x);  ->  y = collect::call(fc1)(x);

namespace detail {

/// True while a debugger records module calls: call() costs one load otherwise.
bool moduleCallsRecorded() noexcept;

/// One marked module call in progress (see call()). Non-template part, implemented in the library.
class ModuleCall
{
public:
    ModuleCall(const torch::nn::Module& module, std::source_location where);
    ~ModuleCall();
    ModuleCall(const ModuleCall&) = delete;
    ModuleCall& operator=(const ModuleCall&) = delete;

    bool active() const { return m_state != nullptr; }
    /// Positional arguments in order (before begin()); non-convertible ones as None.
    void addInput(c10::IValue value);
    /// Records the inputs and the module's parameters; tensors get their backward hook.
    void begin();
    /// The tensor to hand to forward() in place of argument `index` (hooked for the module's backward).
    at::Tensor passTensor(std::size_t index, const at::Tensor& original);
    /// Records the outputs; returns them with tensors replaced by hooked ones.
    c10::IValue end(c10::IValue output);

private:
    struct State;
    State* m_state = nullptr;
};

template<typename T>
c10::IValue toIValue(const T& value)
{
    using D = std::decay_t<T>;
    if constexpr (std::is_constructible_v<c10::IValue, const D&>)
        return c10::IValue(value);
    else
        return c10::IValue();
}

template<typename T>
decltype(auto) passArgument(ModuleCall& call, std::size_t index, T&& value)
{
    if constexpr (std::is_same_v<std::decay_t<T>, at::Tensor>)
        return call.passTensor(index, value);
    else
        return std::forward<T>(value);
}

template<typename M>
const torch::nn::Module& moduleOf(const M& module)
{
    if constexpr (requires { module.ptr(); })
        return *module.ptr(); // torch::nn::ModuleHolder (TORCH_MODULE)
    else if constexpr (requires { *module; })
        return *module; // std::shared_ptr<SomeModule>
    else
        return module;
}

template<typename M, typename... Args>
decltype(auto) invoke(M& module, Args&&... args)
{
    if constexpr (requires { module(std::forward<Args>(args)...); })
        return module(std::forward<Args>(args)...);
    else if constexpr (requires { module->forward(std::forward<Args>(args)...); })
        return module->forward(std::forward<Args>(args)...);
    else
        return module.forward(std::forward<Args>(args)...);
}

template<typename M, typename Tuple, std::size_t... I>
decltype(auto) invokeRecorded(M& module, ModuleCall& call, Tuple&& args, std::index_sequence<I...>)
{
    return invoke(module, passArgument(call, I, std::get<I>(std::forward<Tuple>(args)))...);
}

} // namespace detail

/// A marked module, ready to be called: what call() returns (see there).
template<typename M>
class ModuleCallable
{
public:
    ModuleCallable(M& module, std::source_location where)
        : m_module(module)
        , m_where(where)
    {
    }

    template<typename... Args>
    decltype(auto) operator()(Args&&... args) const
    {
        using Result = decltype(detail::invoke(m_module, std::forward<Args>(args)...));
        if (!detail::moduleCallsRecorded())
            return detail::invoke(m_module, std::forward<Args>(args)...);
        detail::ModuleCall record(detail::moduleOf(m_module), m_where);
        if (!record.active())
            return detail::invoke(m_module, std::forward<Args>(args)...);
        (record.addInput(detail::toIValue(args)), ...);
        record.begin();
        if constexpr (std::is_void_v<Result>) {
            detail::invokeRecorded(m_module, record, std::forward_as_tuple(std::forward<Args>(args)...),
                                   std::index_sequence_for<Args...> {});
            record.end(c10::IValue());
        } else if constexpr (std::is_reference_v<Result> || !std::is_constructible_v<c10::IValue, const Result&>) {
            decltype(auto) out = detail::invokeRecorded(m_module, record,
                                                        std::forward_as_tuple(std::forward<Args>(args)...),
                                                        std::index_sequence_for<Args...> {});
            record.end(detail::toIValue(out));
            return out;
        } else {
            Result out = detail::invokeRecorded(m_module, record, std::forward_as_tuple(std::forward<Args>(args)...),
                                                std::index_sequence_for<Args...> {});
            c10::IValue hooked = record.end(c10::IValue(out));
            return hooked.isNone() ? out : std::move(hooked).template to<Result>();
        }
    }

private:
    M& m_module;
    std::source_location m_where;
};

/**
 * @brief Marks one module call for levels L0 and mix: `y = fc1(x);` becomes `y = collect::call(fc1)(x);`.
 *
 * The call is recorded as Module.<path>.<Class>.forward.<n> (with its backward, parameters and
 * parameters_grad) when a debugger runs at level L0 or mix; otherwise it is only a call. `module` is a
 * TORCH_MODULE holder, a std::shared_ptr to a module or a module; <path> is its name in named_modules()
 * of the debugger's model and <Class> its C++ class name without namespace and "Impl" suffix. Tensor
 * arguments and outputs (also tuples and vectors of tensors) get backward hooks; other values are
 * recorded as far as c10::IValue holds them. The call site goes to stack.json.
 */
template<typename M>
ModuleCallable<M> call(M& module, std::source_location where = std::source_location::current())
{
    return ModuleCallable<M>(module, where);
}

} // namespace probescope::collect
