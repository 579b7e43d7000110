// SPDX-License-Identifier: Apache-2.0
// What msprobe's config.json says, after validation. No LibTorch here: tools can read configs cheaply.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace probescope::collect {

enum class Task : std::uint8_t { Statistics, Tensor, OverflowCheck, FreeBenchmark };
enum class Level : std::uint8_t { L0, L1, Mix, Debug };
enum class SummaryMode : std::uint8_t { Statistics, Md5 };

/// msprobe's spelling: "statistics", "tensor", "overflow_check", "free_benchmark"; "L0", "L1", "mix", "debug".
const char* toString(Task task);
const char* toString(Level level);
std::optional<Task> parseTask(std::string_view text);
std::optional<Level> parseLevel(std::string_view text);

/// free_benchmark's perturbations (run-ut-spec §11.3), in msprobe's spelling through toString().
enum class PertMode : std::uint8_t { ImprovePrecision, AddNoise, BitNoise, ChangeValue, NoChange, ToCpu };
const char* toString(PertMode mode);
std::optional<PertMode> parsePertMode(std::string_view text);

/**
 * @brief The "free_benchmark" section of config.json (msprobe's 无标杆比对, run-ut-spec §11.1).
 *
 * fuzz_device "npu" means the device the training runs on (the tensors' own device); "cpu" is to_cpu's.
 */
struct FreeBenchmarkConfig
{
    bool fuzzDeviceCpu = false;                    ///< "fuzz_device": "cpu" (only with pert_mode to_cpu)
    PertMode pertMode = PertMode::ImprovePrecision;
    bool fix = false;                              ///< "handler_type": "fix" (else "check")
    bool backward = false;                         ///< "fuzz_stage": "backward" (else "forward")
    bool ifPreheat = false;
    std::int64_t preheatStep = 15;
    /// msprobe's documented default; its code uses 15 (it reuses the preheat_step default), see free-benchmark.md.
    std::int64_t maxSample = 20;
};

/// The first rule of run-ut-spec §11.1 that `fb` (with `level`, `list` and `scope`) breaks, as
/// {key, message}; nullopt when it is valid. config.json errors and Options go through it.
std::optional<std::pair<std::string, std::string>> freeBenchmarkProblem(const FreeBenchmarkConfig& fb, Level level,
                                                                        bool listEmpty, bool scopeEmpty);

/**
 * @brief The settings of one PrecisionDebugger, as config.json (msprobe 1.2) states them.
 *
 * Only the section of the chosen task is read (statistics, tensor, overflow_check or free_benchmark); sections of other
 * tasks may be present, as in msprobe's template config.json.
 */
struct Config
{
    Task task = Task::Statistics;
    std::string dumpPath;
    std::vector<std::int64_t> ranks; ///< "rank": ranks to dump given as integers; with rankRanges empty = all
    std::vector<std::int64_t> steps; ///< "step": steps to dump given as integers; with stepRanges empty = all
    /// "rank" and "step" items given as "first-last" strings (msprobe's ranges), kept as ranges, never expanded.
    std::vector<std::pair<std::int64_t, std::int64_t>> rankRanges, stepRanges;
    Level level = Level::L1;
    std::int64_t seed = 1234;
    bool isDeterministic = false;
    bool seedConfigured = false; ///< "seed" or "is_deterministic" was given: the debugger calls seedAll()

    std::vector<std::string> scope;                  ///< [first, last] API or module names; empty = no range
    std::vector<std::string> list;                   ///< full entry names or parts of them; empty = all
    std::vector<std::string> dataMode { "all" };     ///< all | any of forward, backward, input, output
    SummaryMode summaryMode = SummaryMode::Statistics;
    std::int64_t overflowNums = 1; ///< overflow_check: stop collecting after this many overflows; -1 = never
    /// free_benchmark: its section. There, `scope` lists full API names (exact matches), not a range.
    FreeBenchmarkConfig freeBenchmark;
    /// "async_queue_bytes" (ProbeScope's own key): bound of the background writer's queue, in bytes of
    /// tensor snapshots; 0 = write in the training thread. Unset: defaultAsyncQueueBytes().
    std::optional<std::uint64_t> asyncQueueBytes;
};

/// The largest step or rank config.json may name (msprobe 1.2's STEP_RANK_MAXIMUM_VALUE).
inline constexpr std::int64_t kMaxStepOrRank = 1000000;

/// Whether `index` is one of `values` or inside one of `ranges` (a "step" or "rank" selection; the caller
/// treats both empty as "all").
bool selects(const std::vector<std::int64_t>& values, const std::vector<std::pair<std::int64_t, std::int64_t>>& ranges,
             std::int64_t index);

/// The background writer's default bound: 1 GiB, but at most 1/8 of the machine's physical memory
/// (docs/collect.md, "Writing while the model computes", says why).
std::uint64_t defaultAsyncQueueBytes();

/// A configuration or usage error. `id()` is stable (e.g. "collect.config"); what() names the file,
/// position and key, as in "config.json:4:13: error [collect.config]: unknown key \"levle\" ...".
class CollectError : public std::runtime_error
{
public:
    CollectError(std::string id, const std::string& message);
    const std::string& id() const { return m_id; }

private:
    std::string m_id;
};

/// Reads and validates config.json. Throws CollectError naming the key for unknown keys, wrong types,
/// bad values and the task (run_ut) or level (L2) this collector does not run.
Config loadConfig(const std::string& path);
/// Same, from text; `fileName` names it in messages.
Config parseConfigText(std::string_view text, const std::string& fileName = "config.json");

/// PrecisionDebugger's arguments, which win over config.json's keys (msprobe 1.2's DebuggerConfig).
struct ConfigOverrides
{
    std::optional<Task> task;
    std::optional<std::string> dumpPath;
    std::optional<Level> level;
    /// "step" as given: integers and "first-last" ranges, checked by config.json's rules.
    std::optional<std::vector<std::variant<std::int64_t, std::string>>> step;
    std::string where = "PrecisionDebugger()"; ///< names the arguments in messages about them
};

/// config.json (`path`; empty = no file, msprobe's defaults) with `overrides` applied before the task's section
/// is chosen and checked: the section read is the one of the task the arguments name, as msprobe reads it.
Config loadConfig(const std::string& path, const ConfigOverrides& overrides);

} // namespace probescope::collect
