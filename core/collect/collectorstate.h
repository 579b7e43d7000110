// SPDX-License-Identifier: Apache-2.0
// The LibTorch-free half of the collector: steps and ranks, entry names and call counters, the
// scope/list/data_mode filters, overflow counting and the files. torchcollect.cpp feeds it what
// RecordFunction, autograd and the module marks see.
#pragma once

#include "core/dump/dumpwriter.h"
#include "probescope/collect/config.h"
#include "core/util/diagnostic.h"

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace probescope::collect {

/// Where a call came from: std::source_location's parts, for stack.json.
struct CallSite
{
    std::string file;
    std::uint32_t line = 0;
    std::string function;
};

/// What to do with one entry, decided when its call begins.
struct EntryPlan
{
    bool record = false;         ///< write the entry at all
    bool inputs = false;         ///< data_mode: write input_args/input_kwargs/parameters (forward) or input (backward)
    bool outputs = false;        ///< data_mode: write output
    bool saveTensors = false;    ///< write .pt files (tensor task; overflow_check: only if the entry overflows)
    bool isModule = false;
    bool construct = true;       ///< also a construct.json member (not for parameters_grad; L0 and mix only)
    bool inRange = false;        ///< forward plans: inside the scope range (or no range set)
    std::string key;             ///< "Aten.gelu.0.forward", "Module.fc1.Linear.forward.0", "x.0.debug"
    std::string parent;          ///< construct.json parent; "" = null
    std::vector<std::string> stack; ///< stack.json frames (forward entries)
    std::string backwardKey;     ///< forward plans: the key its backward entry will have
    std::string backwardParent;  ///< forward plans: construct.json parent of that backward entry
    bool backwardRecord = false; ///< forward plans: whether the backward entry passes the filters
};

class Session
{
public:
    /// `rank`: this process's rank, or nullopt when not distributed (folder "rank"). Throws CollectError
    /// when the scope names do not fit the level.
    Session(Config config, std::optional<std::int64_t> rank);
    ~Session();
    Session(const Session&) = delete;
    Session& operator=(const Session&) = delete;

    const Config& config() const { return m_config; }
    std::int64_t currentStep() const { return m_step; }
    std::optional<std::int64_t> rank() const { return m_rank; }
    std::filesystem::path rankDir() const;   ///< dump_path/step{N}/rank{R} (or .../rank)
    std::filesystem::path tensorDir() const; ///< rankDir()/dump_tensor_data

    /// Opens this step's folder (or continues it) unless the step or the rank is filtered out.
    std::optional<Diagnostic> start(const CallSite& site);
    /// Completes the files: valid JSON after every stop().
    std::optional<Diagnostic> stop();
    /// Ends the step: files completed, call counters reset, the step number advanced.
    std::optional<Diagnostic> nextStep();
    void forwardBackwardDumpEnd() { m_forwardEnded = true; }

    bool started() const { return m_started; }
    /// Started, and this step and rank are selected ("step" and "rank" apply to every task).
    bool selected() const;
    /// Calls that begin now are recorded: started, step and rank selected, before
    /// forward_backward_dump_end(), overflow limit not reached.
    bool forwardOn() const;
    /// Backward entries of recorded forward calls are written: started, selected, limit not reached.
    bool backwardOn() const;
    bool overflowLimitReached() const { return m_overflowDone; }
    std::int64_t overflowCount() const { return m_overflows; }

    /// An API call (prefix "Aten", op "gelu"). Counts the call and decides on its entry.
    EntryPlan planApi(std::string_view prefix, std::string_view op);
    /// The API's forward entry was written (or dropped): closes a scope range ending at it.
    void apiDone(const EntryPlan& plan);

    /// A marked module call begins: counts it, pushes it as the parent of what runs inside.
    EntryPlan beginModule(std::string_view path, std::string_view className, const CallSite& site);
    void endModule(const EntryPlan& plan);

    /// The backward entry of a forward plan, with data_mode applied.
    EntryPlan planBackward(const EntryPlan& forward) const;
    /// Module.<path>.<Class>.parameters_grad for a module stem "Module.<path>.<Class>"; `forwardRecorded`:
    /// whether the module's forward entry lay inside the scope range.
    EntryPlan planParametersGrad(std::string_view moduleStem, bool forwardRecorded) const;
    /// debug.json entry "{name}[_grad].{count}.debug" (level debug): counts per name and direction.
    EntryPlan planDebug(std::string_view name, bool grad);
    /// Level debug writes without start(): opens this step's folder if the step and rank are selected.
    std::optional<Diagnostic> openForDebug();

    /// Writes the entry (with its construct.json and stack.json members). In overflow_check only entries
    /// with `overflow` are written, and the limit is counted. admit() then publish().
    std::optional<Diagnostic> write(const EntryPlan& plan, std::string_view valueText, bool overflow, bool forward);

    /// The bookkeeping half of write(), in the calling thread: whether the entry is written (filters,
    /// overflow_check's count, level debug opening its folder). `writer` is where to publish it, or null.
    struct Admission
    {
        dump::DumpWriter* writer = nullptr;
        std::optional<Diagnostic> problem;
    };
    Admission admit(const EntryPlan& plan, bool overflow);
    /// The file half of write(): the dump.json member, then construct.json and stack.json. Any thread,
    /// one at a time per writer; the writer stays valid until stop(), nextStep() or openForDebug() after
    /// a stop() (the background writer is drained before those).
    std::optional<Diagnostic> publish(dump::DumpWriter& writer, const EntryPlan& plan, std::string_view valueText,
                                      bool forward) const;

    /// A write of this step's folder failed in the background writer: nothing more is recorded until
    /// the next step, and stop() leaves dump.json cut after its last complete entry (DumpWriter::abandon).
    void markWriteFailed() { m_writeFailed = true; }
    bool writeFailed() const { return m_writeFailed; }

    /// Name of a tensor file: "{key}.{suffix}.pt" ("{key}.pt" for an empty suffix).
    static std::string dataName(std::string_view key, std::string_view suffix);

private:
    struct Frame
    {
        std::string key;
        CallSite site;
        bool record = false;
    };

    bool stepSelected() const;
    bool rankSelected() const;
    bool listAllows(std::string_view key) const;
    bool directionAllowed(bool forward) const;
    bool partAllowed(bool input) const;
    /// Scope range: whether a call named `key` that begins now lies inside it (and opens it).
    bool enterRange(std::string_view key);
    void leaveRange(std::string_view key);
    bool matchesScope(std::string_view key, const std::string& item) const;
    std::string currentParent() const;
    std::vector<std::string> stackFrames(const std::string& key, const CallSite* own) const;
    void fillForward(EntryPlan& plan, bool inRange);
    std::optional<Diagnostic> openWriter();
    /// finish(), or abandon() after a failed write.
    std::optional<Diagnostic> closeWriter();

    Config m_config;
    std::optional<std::int64_t> m_rank;
    std::int64_t m_step = 0;
    bool m_started = false;
    bool m_forwardEnded = false;
    bool m_overflowDone = false;
    bool m_writeFailed = false;
    std::int64_t m_overflows = 0;
    bool m_inRange = false;
    bool m_rangeDone = false;
    CallSite m_startSite;
    std::map<std::string, std::int64_t, std::less<>> m_apiCounts;
    std::map<std::string, std::int64_t, std::less<>> m_moduleCounts;
    std::map<std::string, std::int64_t, std::less<>> m_debugCounts;
    std::vector<Frame> m_modules; ///< marked module calls in progress, outermost first
    std::unique_ptr<dump::DumpWriter> m_writer;
};

} // namespace probescope::collect
