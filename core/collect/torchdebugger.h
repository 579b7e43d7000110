// SPDX-License-Identifier: Apache-2.0
// The C++ API's LibTorch half, inside the library: the debugger's state (PrecisionDebugger::Impl), which the
// hooks (torchcollect.cpp) fill, and the writing of an entry (torchentries.cpp: its JSON, its files, the hand-over
// to the background writer). Internal: included by those two files only, built with NDEBUG like them.
#pragma once

#include "probescope/collect/precisiondebugger.h"

#include "backgroundwriter.h"
#include "collectorstate.h"
#include "freebench.h"
#include "leafstats.h"

#include <ATen/ATen.h>
#include <ATen/record_function.h>
#include <torch/csrc/autograd/function.h>
#include <torch/nn/module.h>

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <unistd.h>

namespace probescope::collect {

struct ModuleBackwardState;
struct ParamGradState;

struct PrecisionDebugger::Impl
{
    Impl(Config config, Options options, std::optional<std::int64_t> rank);

    Session session;
    std::shared_ptr<torch::nn::Module> model;
    std::unordered_map<const torch::nn::Module*, std::string> moduleNames;
    bool moduleNamesRefreshed = false; ///< names rebuilt once this step after a miss
    std::optional<at::CallbackHandle> callback;
    bool callbackOn = false;
    std::uint64_t generation;
    pid_t pid = ::getpid(); ///< a child made by fork() shares the files, but they are not its own to complete
    std::optional<Diagnostic> problem; ///< first write error; reported by stop()
    std::unique_ptr<freebench::Engine> freeBenchmark; ///< task free_benchmark (no dump then)

    // parameters_grad: one state per module stem this step, and the leaf hooks to remove at stop().
    std::unordered_map<std::string, std::shared_ptr<ParamGradState>> paramGrads;
    std::vector<std::pair<at::Tensor, unsigned>> paramHooks;
    std::vector<std::weak_ptr<ModuleBackwardState>> openModuleBackward;

    bool dumps() const { return session.config().task != Task::FreeBenchmark; }
    bool recordsApis() const
    {
        return dumps() && (session.config().level == Level::L1 || session.config().level == Level::Mix);
    }
    bool recordsModules() const
    {
        return dumps() && (session.config().level == Level::L0 || session.config().level == Level::Mix);
    }
    void setCallback(bool on);
    /// Collection off (stop(), step(), the end): callbacks and hooks removed, pending entries written.
    void pause();
    void report(std::optional<Diagnostic> d);
    void flushPending();
    void removeParamHooks();
    void refreshModuleNames();
    /// The background writer's failure, once; marks this step's folder failed (see Session::markWriteFailed).
    std::optional<Diagnostic> backgroundFailure();

    /// Statistics and files computed and written while the model goes on (tasks statistics and tensor,
    /// unless async_queue_bytes is 0). Last member: its thread ends before the session goes.
    std::unique_ptr<BackgroundWriter> background;
};

namespace entries {

struct PendingFile
{
    at::Tensor tensor;
    std::string dataName;
};

/// One tensor leaf of an entry for the background writer: the copy, and where its statistics go.
struct LeafSnapshot
{
    at::Tensor tensor;
    std::array<std::size_t, 4> statsAt {}; ///< offsets of the "null" placeholders of Max, Min, Mean, Norm
    std::size_t md5At = std::string::npos; ///< offset of the "\"\"" placeholder of md5, if any
    std::string dataName;                  ///< its .pt file; empty = none
    std::size_t exceptAt = 0;              ///< where *_except_inf_nan members go (after requires_grad)
    std::size_t indent = 0;                ///< spaces before a member of this leaf's object
    leaf::Stats summary;                       ///< computed in the training thread (see backgroundTensor)
};

/// Writes the JSON of argument values (msprobe's leaves) for one entry; tensors get statistics and,
/// in tensor mode, their .pt file.
class LeafWriter
{
public:
    LeafWriter(PrecisionDebugger::Impl& impl, const EntryPlan& plan, std::string& text, dump::PyJsonWriter& json,
               bool deferFiles)
        : m_impl(impl)
        , m_plan(plan)
        , m_text(text)
        , m_json(json)
        , m_defer(deferFiles)
        , m_background(impl.background != nullptr && !deferFiles)
        , m_md5(impl.session.config().task == Task::Statistics
                && impl.session.config().summaryMode == SummaryMode::Md5)
    {
    }

    bool overflow = false;
    std::vector<PendingFile> pending; ///< files kept until the entry is known to overflow (overflow_check)
    std::vector<LeafSnapshot> snapshots; ///< background writer: the tensors, copied, with their places in the text
    std::uint64_t snapshotBytes = 0;
    bool background() const { return m_background; }
    bool cloneDeferred = false;       ///< in-place ops: keep a copy of inputs, not the tensor itself

    void value(const c10::IValue& v, const std::string& path);

    void tensor(const at::Tensor& t, const std::string& path);

    static std::string join(const std::string& path, const std::string& part)
    {
        return path.empty() ? part : path + "." + part;
    }

private:
    /// msprobe's leaf of a Python scalar: {"type": "int", "value": 3}.
    void scalar(const c10::IValue& v);

    /// tensor() for the background writer: a copy the model cannot change is queued, and the statistics
    /// (and md5) stand as placeholders ("null", "\"\"") that the writer replaces once it has them.
    void backgroundTensor(const at::Tensor& t, const std::string& path);

    PrecisionDebugger::Impl& m_impl;
    const EntryPlan& m_plan;
    std::string& m_text;
    dump::PyJsonWriter& m_json;
    bool m_defer;
    bool m_background;
    bool m_md5;
};


/// overflow_check keeps an entry's .pt files until it is known to overflow.
bool deferFiles(const PrecisionDebugger::Impl& impl);
/// Hands an entry on: to the background writer when its leaves were copied for it, else written now.
std::optional<Diagnostic> submit(PrecisionDebugger::Impl& impl, const EntryPlan& plan, const std::string& text,
                                 LeafWriter& leaves, bool forward);
/// Commits an entry: overflow_check keeps only overflowing ones (and only then writes their files).
void commit(PrecisionDebugger::Impl& impl, const EntryPlan& plan, const std::string& text, LeafWriter& leaves,
            bool forward);
/// A backward entry: "input" = gradients of the forward outputs, "output" = gradients of the forward
/// inputs (undefined ones written as null).
void writeBackward(PrecisionDebugger::Impl& impl, const EntryPlan& plan,
                   const torch::autograd::variable_list& gradsOfOutputs,
                   const torch::autograd::variable_list& gradsOfInputs);

} // namespace entries

} // namespace probescope::collect
