// SPDX-License-Identifier: Apache-2.0
// config.json is read with ProbeScope's own JSON reader: it keeps byte offsets, so every error can
// point at the line and column of the key it is about.
#include "probescope/collect/config.h"

#include "core/dump/jsondocument.h"
#include "core/util/fileio.h"
#include "core/util/textposition.h"

#include <algorithm>
#include <array>
#include <initializer_list>
#include <utility>

#include <unistd.h>

namespace probescope::collect {

using dump::JsonType;
using dump::JsonValue;

CollectError::CollectError(std::string id, const std::string& message)
    : std::runtime_error(message)
    , m_id(std::move(id))
{
}

const char* toString(Task task)
{
    switch (task) {
    case Task::Statistics: return "statistics";
    case Task::Tensor: return "tensor";
    case Task::OverflowCheck: return "overflow_check";
    case Task::FreeBenchmark: return "free_benchmark";
    }
    return "?";
}

const char* toString(Level level)
{
    switch (level) {
    case Level::L0: return "L0";
    case Level::L1: return "L1";
    case Level::Mix: return "mix";
    case Level::Debug: return "debug";
    }
    return "?";
}

std::optional<Task> parseTask(std::string_view text)
{
    for (const Task t : { Task::Statistics, Task::Tensor, Task::OverflowCheck, Task::FreeBenchmark }) {
        if (text == toString(t))
            return t;
    }
    return std::nullopt;
}

std::optional<Level> parseLevel(std::string_view text)
{
    for (const Level l : { Level::L0, Level::L1, Level::Mix, Level::Debug }) {
        if (text == toString(l))
            return l;
    }
    return std::nullopt;
}

const char* toString(PertMode mode)
{
    switch (mode) {
    case PertMode::ImprovePrecision: return "improve_precision";
    case PertMode::AddNoise: return "add_noise";
    case PertMode::BitNoise: return "bit_noise";
    case PertMode::ChangeValue: return "change_value";
    case PertMode::NoChange: return "no_change";
    case PertMode::ToCpu: return "to_cpu";
    }
    return "?";
}

std::optional<PertMode> parsePertMode(std::string_view text)
{
    for (const PertMode m : { PertMode::ImprovePrecision, PertMode::AddNoise, PertMode::BitNoise,
                              PertMode::ChangeValue, PertMode::NoChange, PertMode::ToCpu }) {
        if (text == toString(m))
            return m;
    }
    return std::nullopt;
}

std::optional<std::pair<std::string, std::string>> freeBenchmarkProblem(const FreeBenchmarkConfig& fb, Level level,
                                                                        bool listEmpty, bool scopeEmpty)
{
    using Problem = std::pair<std::string, std::string>;
    // msprobe checks these when the config is loaded (run-ut-spec §11.1); the order decides which key a
    // config with several problems is told about first.
    if (level != Level::L1)
        return Problem { "level", std::string("free_benchmark runs at level \"L1\" only (got \"") + toString(level)
                                      + "\")" };
    if (!listEmpty && !scopeEmpty)
        return Problem { "scope", "\"scope\" and \"list\" cannot both be set in the \"free_benchmark\" section" };
    if (fb.fuzzDeviceCpu != (fb.pertMode == PertMode::ToCpu))
        return Problem { fb.fuzzDeviceCpu ? "fuzz_device" : "pert_mode",
                         "\"fuzz_device\": \"cpu\" goes with \"pert_mode\": \"to_cpu\" and only with it (got fuzz_device \""
                             + std::string(fb.fuzzDeviceCpu ? "cpu" : "npu") + "\", pert_mode \"" + toString(fb.pertMode)
                             + "\")" };
    if (fb.backward && listEmpty)
        return Problem { "fuzz_stage", "\"fuzz_stage\": \"backward\" needs a non-empty \"list\" of APIs" };
    if (fb.fix && fb.backward)
        return Problem { "handler_type", "\"handler_type\": \"fix\" works in \"fuzz_stage\": \"forward\" only" };
    if (fb.fix && fb.pertMode != PertMode::ImprovePrecision && fb.pertMode != PertMode::ToCpu)
        return Problem { "handler_type", std::string("\"handler_type\": \"fix\" needs \"pert_mode\" improve_precision or "
                                                     "to_cpu (got \"")
                                             + toString(fb.pertMode) + "\")" };
    if (fb.fix && fb.ifPreheat)
        return Problem { "handler_type", "\"handler_type\": \"fix\" cannot be combined with \"if_preheat\": true" };
    if (fb.preheatStep <= 0)
        return Problem { "preheat_step", "\"preheat_step\" must be an integer > 0" };
    if (fb.maxSample <= 0)
        return Problem { "max_sample", "\"max_sample\" must be an integer > 0" };
    return std::nullopt;
}

namespace {

/// A "first-last" step or rank range (msprobe's): 0 <= first <= last <= kMaxStepOrRank, each at most 7 digits
/// (spaces around them allowed), so a range costs what its text costs and is never expanded.
std::optional<std::pair<std::int64_t, std::int64_t>> indexRange(std::string_view text)
{
    const auto dash = text.find('-');
    if (dash == std::string_view::npos)
        return std::nullopt;
    std::int64_t ends[2] = { -1, -1 };
    const std::string_view parts[2] = { text.substr(0, dash), text.substr(dash + 1) };
    for (int p = 0; p < 2; ++p) {
        std::string_view digits = parts[p];
        while (!digits.empty() && digits.front() == ' ')
            digits.remove_prefix(1);
        while (!digits.empty() && digits.back() == ' ')
            digits.remove_suffix(1);
        if (digits.empty() || digits.size() > 7 || digits.find_first_not_of("0123456789") != std::string_view::npos)
            return std::nullopt;
        ends[p] = std::stoll(std::string(digits));
    }
    if (ends[0] > ends[1] || ends[1] > kMaxStepOrRank)
        return std::nullopt;
    return std::pair { ends[0], ends[1] };
}

std::string rangeProblem(const std::string& key, std::string_view text)
{
    return "\"" + key + "\": \"" + std::string(text) + "\" is no \"first-last\" range with 0 <= first <= last <= "
           + std::to_string(kMaxStepOrRank);
}

/// Reads one config document, throwing CollectError("collect.config") at the first problem.
class ConfigReader
{
public:
    ConfigReader(std::string_view text, std::string fileName, const ConfigOverrides* overrides = nullptr)
        : m_text(text)
        , m_file(std::move(fileName))
        , m_overrides(overrides)
    {
    }

    Config read()
    {
        auto parsed = dump::JsonDocument::parse(m_text, m_file);
        if (!parsed.document) {
            const Diagnostic& d = parsed.diagnostics.front();
            Diagnostic copy = d;
            copy.id = "collect.config";
            copy.message = "not valid JSON: " + d.message;
            throw CollectError("collect.config", copy.format());
        }
        const JsonValue root = parsed.document->root();
        if (!root.isObject())
            fail(root, "the configuration must be a JSON object");

        Config config;
        std::optional<JsonValue> taskSection;
        for (std::uint32_t i = 0; i < root.size(); ++i) {
            const std::string_view key = root.keyAt(i);
            const JsonValue v = root.at(i);
            if (key == "task") {
                m_taskValue = v;
                const std::string_view t = string(v, key);
                if (t == "run_ut")
                    fail(v, "task \"" + std::string(t)
                                + "\" is recognised but not supported by the LibTorch collector yet "
                                  "(it runs statistics, tensor, overflow_check and free_benchmark)");
                const auto task = parseTask(t);
                if (!task)
                    fail(v, "\"task\" must be one of statistics, tensor, overflow_check, free_benchmark, run_ut "
                            "(got \"" + std::string(t) + "\")");
                config.task = *task;
            } else if (key == "dump_path") {
                config.dumpPath = std::string(string(v, key));
                if (config.dumpPath.empty())
                    fail(v, "\"dump_path\" must not be empty");
            } else if (key == "rank") {
                indexList(v, key, config.ranks, config.rankRanges);
            } else if (key == "step") {
                indexList(v, key, config.steps, config.stepRanges);
            } else if (key == "level") {
                m_levelValue = v;
                const std::string_view l = string(v, key);
                if (l == "L2")
                    fail(v, "level \"L2\" (kernel dump through acl_config) is not supported by the LibTorch "
                            "collector; use L0, L1, mix or debug");
                const auto level = parseLevel(l);
                if (!level)
                    fail(v, "\"level\" must be one of L0, L1, L2, mix, debug (got \"" + std::string(l) + "\")");
                config.level = *level;
            } else if (key == "seed") {
                if (!v.isInt() || v.asInt() < 0 || v.asInt() > 0xFFFFFFFFll)
                    fail(v, "\"seed\" must be an integer from 0 to 4294967295");
                config.seed = v.asInt();
                config.seedConfigured = true;
            } else if (key == "is_deterministic") {
                config.isDeterministic = boolean(v, key);
                config.seedConfigured = true;
            } else if (key == "enable_dataloader") {
                if (boolean(v, key))
                    fail(v, "\"enable_dataloader\": true needs Python's DataLoader; call start(), stop() and "
                            "step() instead");
            } else if (key == "async_queue_bytes") {
                if (!v.isInt() || v.asInt() < 0)
                    fail(v, "\"async_queue_bytes\" must be an integer >= 0 (bytes of tensor snapshots the background "
                            "writer may hold; 0 = write in the training thread)");
                config.asyncQueueBytes = static_cast<std::uint64_t>(v.asInt());
            } else if (key == "acl_config") {
                string(v, key); // only used by level L2, which is refused above
            } else if (key == "statistics" || key == "tensor" || key == "overflow_check" || key == "free_benchmark"
                       || key == "run_ut" || key == "grad_probe" || key == "structure") {
                if (!v.isObject())
                    fail(v, "\"" + std::string(key) + "\" must be an object");
                m_sections.emplace_back(key, v);
            } else {
                fail(v, "unknown key \"" + std::string(key)
                            + "\" (known: task, dump_path, rank, step, level, seed, is_deterministic, "
                              "enable_dataloader, acl_config, async_queue_bytes and the task sections)");
            }
        }
        if (m_overrides)
            applyOverrides(config, *m_overrides);
        for (const auto& [name, section] : m_sections) {
            if (name == toString(config.task))
                taskSection = section;
        }
        if (config.task == Task::FreeBenchmark)
            readFreeBenchmark(config, taskSection, root);
        else if (taskSection)
            readTaskSection(config, *taskSection);
        return config;
    }

private:
    /// PrecisionDebugger's arguments win over the file's keys (msprobe's DebuggerConfig), before the task's
    /// section is chosen: the section read is the one of the task the arguments name, as msprobe reads it.
    void applyOverrides(Config& config, const ConfigOverrides& o) const
    {
        const auto failArgument = [&](const std::string& message) {
            throw CollectError("collect.config", o.where + ": error [collect.config]: " + message);
        };
        if (o.task)
            config.task = *o.task;
        if (o.level)
            config.level = *o.level;
        if (o.dumpPath) {
            if (o.dumpPath->empty())
                failArgument("\"dump_path\" must not be empty");
            config.dumpPath = *o.dumpPath;
        }
        if (o.step) {
            config.steps.clear();
            config.stepRanges.clear();
            for (const auto& item : *o.step) {
                if (const auto* n = std::get_if<std::int64_t>(&item)) {
                    if (*n < 0 || *n > kMaxStepOrRank)
                        failArgument("\"step\" must hold integers from 0 to " + std::to_string(kMaxStepOrRank)
                                     + " (got " + std::to_string(*n) + ")");
                    config.steps.push_back(*n);
                } else {
                    const std::string& text = std::get<std::string>(item);
                    const auto range = indexRange(text);
                    if (!range)
                        failArgument(rangeProblem("step", text));
                    config.stepRanges.push_back(*range);
                }
            }
        }
    }

    [[noreturn]] void fail(const JsonValue& at, const std::string& message) const
    {
        const Diagnostic d = makeError("collect.config", locate(m_text, at.offset(), m_file), message);
        throw CollectError("collect.config", d.format());
    }

    std::string_view string(const JsonValue& v, std::string_view key) const
    {
        if (!v.isString())
            fail(v, "\"" + std::string(key) + "\" must be a string");
        return v.asString();
    }

    bool boolean(const JsonValue& v, std::string_view key) const
    {
        if (!v.isBool())
            fail(v, "\"" + std::string(key) + "\" must be true or false");
        return v.asBool();
    }

    /// msprobe's step and rank lists: integers and "first-last" ranges, each from 0 to kMaxStepOrRank (its
    /// STEP_RANK_MAXIMUM_VALUE). Ranges stay ranges: ["0-99999999999"] costs what its text costs.
    void indexList(const JsonValue& v, std::string_view key, std::vector<std::int64_t>& values,
                   std::vector<std::pair<std::int64_t, std::int64_t>>& ranges) const
    {
        const std::string k(key);
        if (!v.isArray())
            fail(v, "\"" + k + "\" must be a list of integers or \"first-last\" ranges, e.g. [0, \"2-4\"]");
        const std::string bound = std::to_string(kMaxStepOrRank);
        for (std::uint32_t i = 0; i < v.size(); ++i) {
            const JsonValue e = v.at(i);
            if (e.isInt()) {
                if (e.asInt() < 0)
                    fail(e, "\"" + k + "\" must hold integers >= 0 (element " + std::to_string(i) + " does not)");
                if (e.asInt() > kMaxStepOrRank)
                    fail(e, "\"" + k + "\" must hold integers from 0 to " + bound + " (element " + std::to_string(i)
                                + " does not)");
                values.push_back(e.asInt());
                continue;
            }
            if (!e.isString())
                fail(e, "\"" + k + "\": element " + std::to_string(i)
                            + " must be an integer or a \"first-last\" range");
            const std::string_view text = e.asString();
            const auto range = indexRange(text);
            if (!range)
                fail(e, rangeProblem(k, text));
            ranges.push_back(*range);
        }
    }

    std::vector<std::string> strings(const JsonValue& v, std::string_view key) const
    {
        if (!v.isArray())
            fail(v, "\"" + std::string(key) + "\" must be a list of strings");
        std::vector<std::string> out;
        for (std::uint32_t i = 0; i < v.size(); ++i) {
            const JsonValue e = v.at(i);
            if (!e.isString())
                fail(e, "\"" + std::string(key) + "\" must hold strings (element " + std::to_string(i)
                            + " is not one)");
            out.emplace_back(e.asString());
        }
        return out;
    }

    void readScope(Config& config, const JsonValue& v, std::string_view key) const
    {
        config.scope = strings(v, key);
        if (!config.scope.empty() && config.scope.size() != 2)
            fail(v, "\"scope\" must be empty or name two APIs or modules: the first and the last of the range");
    }

    void readDataMode(Config& config, const JsonValue& v) const
    {
        config.dataMode = strings(v, "data_mode");
        static constexpr std::array<std::string_view, 5> kModes = { "all", "forward", "backward", "input", "output" };
        if (config.dataMode.empty())
            fail(v, "\"data_mode\" must not be empty (use [\"all\"])");
        for (std::uint32_t i = 0; i < config.dataMode.size(); ++i) {
            const std::string& m = config.dataMode[i];
            if (std::find(kModes.begin(), kModes.end(), m) == kModes.end())
                fail(v.at(i), "\"data_mode\" values are all, forward, backward, input, output (got \"" + m + "\")");
            if (m == "all" && config.dataMode.size() > 1)
                fail(v.at(i), "\"data_mode\": \"all\" must stand alone");
        }
    }

    void readTaskSection(Config& config, const JsonValue& section) const
    {
        const std::string task = toString(config.task);
        for (std::uint32_t i = 0; i < section.size(); ++i) {
            const std::string_view key = section.keyAt(i);
            const JsonValue v = section.at(i);
            const bool rangeTask = config.task != Task::OverflowCheck;
            if (rangeTask && key == "scope") {
                readScope(config, v, key);
            } else if (rangeTask && key == "list") {
                config.list = strings(v, key);
            } else if (rangeTask && key == "data_mode") {
                readDataMode(config, v);
            } else if (config.task == Task::Statistics && key == "summary_mode") {
                const std::string_view m = string(v, key);
                if (m == "statistics")
                    config.summaryMode = SummaryMode::Statistics;
                else if (m == "md5")
                    config.summaryMode = SummaryMode::Md5;
                else
                    fail(v, "\"summary_mode\" must be \"statistics\" or \"md5\" (got \"" + std::string(m) + "\")");
            } else if (config.task == Task::Tensor && key == "backward_input") {
                // Only used by level L2's kernel dump, which is refused; a string or a list of strings.
                if (!v.isString())
                    strings(v, key);
            } else if (config.task == Task::Tensor && key == "file_format") {
                const std::string_view f = string(v, key);
                if (f != "npy" && f != "bin")
                    fail(v, "\"file_format\" must be \"npy\" or \"bin\" (MindSpore only; PyTorch dumps .pt)");
            } else if (config.task == Task::Tensor && key == "online_run_ut") {
                if (boolean(v, key))
                    fail(v, "\"online_run_ut\" is not supported by the LibTorch collector");
            } else if (config.task == Task::Tensor && (key == "nfs_path" || key == "host")) {
                string(v, key);
            } else if (config.task == Task::Tensor && key == "port") {
                if (!v.isInt())
                    fail(v, "\"port\" must be an integer");
            } else if (config.task == Task::OverflowCheck && key == "overflow_nums") {
                if (!v.isInt() || v.asInt() == 0 || v.asInt() < -1)
                    fail(v, "\"overflow_nums\" must be a positive integer, or -1 for no limit");
                config.overflowNums = v.asInt();
            } else if (config.task == Task::OverflowCheck && key == "check_mode") {
                const std::string_view m = string(v, key);
                if (m != "all" && m != "aicore" && m != "atomic")
                    fail(v, "\"check_mode\" must be all, aicore or atomic");
            } else {
                fail(v, "unknown key \"" + std::string(key) + "\" in the \"" + task + "\" section");
            }
        }
        if (!config.scope.empty() && !config.list.empty())
            fail(section, "\"scope\" and \"list\" cannot both be set in the \"" + task + "\" section");
    }

    void readFreeBenchmark(Config& config, const std::optional<JsonValue>& section, const JsonValue& root)
    {
        FreeBenchmarkConfig& fb = config.freeBenchmark;
        std::vector<std::pair<std::string_view, JsonValue>> seen;
        const auto oneOf = [&](const JsonValue& v, std::string_view key, std::initializer_list<std::string_view> values) {
            const std::string_view s = string(v, key);
            std::string known;
            for (const std::string_view value : values) {
                if (s == value)
                    return s;
                known += known.empty() ? "" : ", ";
                known += value;
            }
            fail(v, "\"" + std::string(key) + "\" must be one of " + known + " (got \"" + std::string(s) + "\")");
        };
        const auto positive = [&](const JsonValue& v, std::string_view key) {
            if (!v.isInt() || v.asInt() <= 0)
                fail(v, "\"" + std::string(key) + "\" must be an integer > 0");
            return v.asInt();
        };
        for (std::uint32_t i = 0; section && i < section->size(); ++i) {
            const std::string_view key = section->keyAt(i);
            const JsonValue v = section->at(i);
            seen.emplace_back(key, v);
            if (key == "scope") {
                config.scope = strings(v, key); // full API names, not a [first, last] range here
            } else if (key == "list") {
                config.list = strings(v, key);
            } else if (key == "fuzz_device") {
                fb.fuzzDeviceCpu = oneOf(v, key, { "npu", "cpu" }) == "cpu";
            } else if (key == "pert_mode") {
                fb.pertMode = *parsePertMode(oneOf(v, key, { "improve_precision", "add_noise", "bit_noise",
                                                            "change_value", "no_change", "to_cpu" }));
            } else if (key == "handler_type") {
                fb.fix = oneOf(v, key, { "check", "fix" }) == "fix";
            } else if (key == "fuzz_level") {
                oneOf(v, key, { "L1" });
            } else if (key == "fuzz_stage") {
                fb.backward = oneOf(v, key, { "forward", "backward" }) == "backward";
            } else if (key == "if_preheat") {
                fb.ifPreheat = boolean(v, key); // msprobe insists on a real bool, not 0/1 or "true"
            } else if (key == "preheat_step") {
                fb.preheatStep = positive(v, key);
            } else if (key == "max_sample") {
                fb.maxSample = positive(v, key);
            } else {
                fail(v, "unknown key \"" + std::string(key)
                            + "\" in the \"free_benchmark\" section (known: scope, list, fuzz_device, pert_mode, "
                              "handler_type, fuzz_level, fuzz_stage, if_preheat, preheat_step, max_sample)");
            }
        }
        if (const auto problem = freeBenchmarkProblem(fb, config.level, config.list.empty(), config.scope.empty())) {
            // Point at the key the rule names, else at whatever decided it (the section, level or task).
            JsonValue at = section ? *section : m_taskValue.value_or(root);
            if (problem->first == "level" && m_levelValue)
                at = *m_levelValue;
            for (const auto& [key, value] : seen) {
                if (key == problem->first)
                    at = value;
            }
            fail(at, problem->second);
        }
    }

    std::string_view m_text;
    std::string m_file;
    const ConfigOverrides* m_overrides = nullptr;
    std::optional<JsonValue> m_taskValue;
    std::optional<JsonValue> m_levelValue;
    std::vector<std::pair<std::string_view, JsonValue>> m_sections;
};

} // namespace

bool selects(const std::vector<std::int64_t>& values, const std::vector<std::pair<std::int64_t, std::int64_t>>& ranges,
             std::int64_t index)
{
    if (std::find(values.begin(), values.end(), index) != values.end())
        return true;
    return std::any_of(ranges.begin(), ranges.end(),
                       [&](const auto& r) { return r.first <= index && index <= r.second; });
}

std::uint64_t defaultAsyncQueueBytes()
{
    constexpr std::uint64_t kGiB = std::uint64_t(1) << 30;
    const long pages = ::sysconf(_SC_PHYS_PAGES);
    const long pageSize = ::sysconf(_SC_PAGESIZE);
    if (pages <= 0 || pageSize <= 0)
        return kGiB;
    const std::uint64_t eighth = static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(pageSize) / 8;
    return std::min(kGiB, eighth);
}

Config parseConfigText(std::string_view text, const std::string& fileName)
{
    return ConfigReader(text, fileName).read();
}

Config loadConfig(const std::string& path)
{
    auto text = readTextFile(path);
    if (!text)
        throw CollectError("collect.config", text.error().format());
    return parseConfigText(*text, path);
}

Config loadConfig(const std::string& path, const ConfigOverrides& overrides)
{
    if (path.empty()) // no file: msprobe's defaults, then the arguments (and their task's rules, e.g. free_benchmark's)
        return ConfigReader("{}", overrides.where, &overrides).read();
    auto text = readTextFile(path);
    if (!text)
        throw CollectError("collect.config", text.error().format());
    return ConfigReader(*text, path, &overrides).read();
}

} // namespace probescope::collect
