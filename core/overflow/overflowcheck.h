// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/dump/rankdump.h"
#include "core/util/diagnostic.h"

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

/**
 * msprobe 26's `overflow_check` (called `nan_analyze` in 8.x): the first node of a run that produced a NaN/Inf,
 * across ranks, from one run's dump alone (docs/overflow-check.md; msprobe's rules in
 * ../shared/docs/msprobe26-diff-analyze-spec.md §9).
 *
 * A node is anomalous when its inputs hold no NaN/Inf and its output does (`Max`/`Min` of the top-level items);
 * `Torch.empty`/`Torch.fill` never are. Three passes: before each rank's first communication op, then through the
 * communication ops paired across ranks (the graph `compare -da` builds: core/compare/msprobe26/commgraph.h), then
 * after each rank's last one.
 */
namespace probescope::overflow {

/// One step's ranks as loaded by the load step (dump::loadRank), keyed by rank number.
using StepRanks = std::map<int, std::shared_ptr<const dump::RankDump>>;

/**
 * @brief The analysis of one step: the anomaly_analyze JSON text (json.dump indent 2, NaN/Infinity tokens, the
 * values copied from the dump as msprobe copies them), or nullopt when no node is anomalous.
 *
 * `log` receives msprobe's lines ("Start searching anomaly node before communication." ...). Errors where msprobe
 * stops: a communication op name with fewer than 4 dot parts (overflow.op-name).
 */
Result<std::optional<std::string>> analyzeStep(const StepRanks& ranks, std::vector<std::string>* log = nullptr);

struct OverflowCheckResult
{
    std::optional<std::filesystem::path> analyzeFile; ///< anomaly_analyze_<ns>.json, when a node is anomalous
    std::optional<std::int64_t> step;  ///< the step it is in (none: a step folder without a number)
    std::vector<std::string> steps;    ///< the step folders searched, in order
    std::vector<std::string> log;      ///< msprobe's log lines, in its order
    /// The load step's findings (dump::loadReport): any error refuses the run (`refused`, nothing written).
    Diagnostics inputDiagnostics;
    bool refused = false;
};

/**
 * @brief `overflow_check -i INPUT -o OUT`.
 *
 * INPUT is a step folder (msprobe's input: its rank folders rank, rank<N>, or a lone proc<pid>), a rank folder, or
 * a whole dump root: then every step is searched in ascending order and the first step with an anomaly answers.
 * Dumps are found by dump::discoverDump and loaded by dump::loadRank + dump::loadReport; a damaged dump refuses the
 * run. The result goes to OUT/anomaly_analyze_<ns>.json through the one output writer (OUT is created only then;
 * a taken name takes the next nanosecond). Errors: no dump below INPUT, two dumps of one rank in a step.
 */
Result<OverflowCheckResult> runOverflowCheck(const std::filesystem::path& input, const std::filesystem::path& outDir);

/// Whether an op's dumped inputs and outputs hold a NaN/Inf (`Max`/`Min` of the top-level items, as overflow_check
/// reads them): what a viewer marks on a run's tree.
struct NanInfFlags
{
    bool input = false;
    bool output = false;
};
NanInfFlags nanInfOf(const dump::Entry& entry);

/// One node of the first anomaly's chain across ranks (FirstAnomaly::chain).
struct AnomalyNode
{
    int rank = 0;
    std::string op;      ///< the dump.json key ("Torch.sqrt.0.forward")
    bool origin = false; ///< the node overflow_check reports; the others are where the NaN/Inf reached each rank
};

/**
 * @brief Where a run first went wrong, for a viewer (the GUI's one-run mode): the node overflow_check reports for the
 * first step with an anomaly, and its chain across ranks.
 *
 * The chain is the origin, then for every other rank of that step the first op (in dump order) whose output holds a
 * NaN/Inf: where the anomaly arrived there (through a communication op, usually). Ranks the NaN/Inf never reached
 * are not in it. Steps are searched as runOverflowCheck searches them; nothing is written.
 */
struct FirstAnomaly
{
    std::optional<std::int64_t> step; ///< none: a step folder without a number
    std::vector<AnomalyNode> chain;   ///< origin first, then the other ranks in ascending order
    const AnomalyNode& origin() const { return chain.front(); }
};

/// The chain of `ranks` (one step) given the origin analyzeStep found; the origin first.
std::vector<AnomalyNode> anomalyChain(const StepRanks& ranks, int originRank, const std::string& originOp);

/// findFirstAnomaly's answer: the anomaly (none when the run has none) and the load step's findings.
struct FirstAnomalyResult
{
    std::optional<FirstAnomaly> anomaly;
    Diagnostics inputDiagnostics; ///< errors among them: the run was refused (`refused`)
    bool refused = false;
};

/// The first anomaly of INPUT (step folder, rank folder or dump root), as runOverflowCheck finds it.
Result<FirstAnomalyResult> findFirstAnomaly(const std::filesystem::path& input);

} // namespace probescope::overflow
