// SPDX-License-Identifier: Apache-2.0
#include "core/compare/pipeline/comparerun.h"

#include "core/compare/output/csvwriter.h"
#include "core/compare/table/pytext.h"
#include "core/util/csv.h"
#include "core/util/fileio.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <map>
#include <cstdlib>
#include <ctime>

namespace probescope::compare {

namespace fs = std::filesystem;

namespace {

/// msprobe's planning: strict rank pairing, stack mode by its rule.
PlanOptions planOptionsOf(const JobOptions& options)
{
    PlanOptions planOptions;
    planOptions.profile = options.profile;
    planOptions.stackFlag = options.stackFlag;
    return planOptions;
}

} // namespace

Result<std::vector<PlannedPair>> planPairs(const CompareInput& input, const JobOptions& options)
{
    auto plan = compare::planPairs(input, planOptionsOf(options));
    if (!plan)
        return plan.error();
    return std::move(plan->pairs);
}

PairLoopEnd runPairs(const PairLoop& loop)
{
    // The reorder window: results that came before an earlier pair's wait here (one deliver call at a time).
    std::map<std::size_t, std::string> early;
    std::atomic<std::size_t> frontier { 0 }; // read by the schedule's threads
    bool stopped = false;
    bool cancelled = false;
    PairTask task = loop.task;
    task.deliver = [&](PairDone&& done) {
        if (stopped)
            return false;
        if (done.index < frontier.load() || done.index >= loop.count)
            return true; // a result twice, or out of range: never consumed twice
        early.insert_or_assign(done.index, std::move(done.text));
        while (!early.empty() && early.begin()->first == frontier.load()) {
            auto node = early.extract(early.begin());
            frontier.store(frontier.load() + 1);
            if (!loop.consume(node.key(), std::move(node.mapped()))) {
                stopped = true;
                early.clear();
                return false;
            }
        }
        return true;
    };
    task.frontier = [&] { return frontier.load(); };
    task.cancelled = [&] { return cancelled = cancelled || (loop.task.cancelled && loop.task.cancelled()); };
    LocalThreadScheduler oneThread(1);
    PairScheduler& scheduler = loop.scheduler ? *loop.scheduler : oneThread;
    scheduler.schedule(loop.count, task);
    if (stopped)
        return PairLoopEnd::Stopped;
    if (cancelled)
        return PairLoopEnd::Cancelled;
    if (!scheduler.isCoordinator())
        return PairLoopEnd::Complete; // a cluster worker: its results went to the coordinator, nothing is consumed here
    // Results that never arrived (a worker lost): consumed empty, in order, so the caller can say so.
    for (std::size_t i = frontier.load(); i < loop.count; ++i) {
        const auto it = early.find(i);
        std::string text = it == early.end() ? std::string() : std::move(it->second);
        if (!loop.consume(i, std::move(text)))
            return PairLoopEnd::Stopped;
    }
    return PairLoopEnd::Complete;
}

Result<std::vector<PairResult>> runPairs(std::size_t count, const fs::path& outDir, const std::string& timestamp,
                                         const PairWork& work)
{
    std::error_code ec;
    fs::create_directories(outDir, ec);
    if (ec)
        return makeError("compare.output", fileLocation(outDir), "cannot create the output folder: " + ec.message());
    const std::string stamp = timestamp.empty() ? localTimestamp() : timestamp;
    return runPairsInProcess<PairResult>(count, [&](std::size_t index) { return work(index, stamp); });
}

Result<std::vector<PairResult>> runCompareJob(const CompareInput& input, const fs::path& outDir,
                                              const JobOptions& options, ProgressSink* progress)
{
    // The small plan (issue 37): each pair made when its turn comes, not 10,000 PlannedPairs held to the end.
    auto plan = compare::planPairsCompact(input, planOptionsOf(options));
    if (!plan)
        return plan.error();
    auto files = readMappingFiles(options);
    if (!files)
        return files.error();
    const auto work = [&](std::size_t index, const std::string& stamp) -> Result<PairResult> {
        const PlannedPair pair = plan->pair(index);
        PairResult result;
        result.suffix = pair.suffix;
        result.npuDump = pair.npu.dumpFile;
        result.benchDump = pair.bench.dumpFile;
        result.step = pair.step;
        result.outSubdir = pair.outSubdir;
        if (index == 0)
            result.diagnostics.insert(result.diagnostics.begin(), plan->diagnostics().begin(),
                                      plan->diagnostics().end());
        auto outcome = comparePair(pair, *files, options, {}, progress);
        // A pair whose dump cannot be read, or has errors while salvage is off, is refused (issue 20); in directory
        // mode the other pairs still run. Option errors and a cancel stop the job.
        if (!outcome && (plan->size() == 1 || outcome.error().id == "compare.option"
                         || outcome.error().id == "compare.cancelled"))
            return outcome.error();
        if (!outcome || outcome->refused) {
            result.table = std::make_shared<const CompareTable>();
            result.refused = true;
            if (!outcome)
                result.inputDiagnostics.push_back(outcome.error());
            else
                result.inputDiagnostics = std::move(outcome->inputDiagnostics);
            result.firstFailure.summary = "not compared: the input has errors (see above)";
            return result;
        }
        result.table = outcome->table;
        result.firstFailure = outcome->firstFailure;
        result.diagnostics.insert(result.diagnostics.end(), outcome->notes.begin(), outcome->notes.end());
        result.inputDiagnostics = std::move(outcome->inputDiagnostics);
        result.salvaged = std::move(outcome->salvaged);
        if (outcome->table->rows.empty()) {
            if (progress)
                progress->advance(1000);
            return result; // msprobe writes nothing when no op matched
        }
        auto written = writePairOutputs(*outcome, pair.outSubdir.empty() ? outDir : outDir / pair.outSubdir, stamp, options);
        if (!written)
            return written.error();
        result.csvFile = written->csvFile;
        result.xlsxFile = written->xlsxFile;
        result.advisorFile = written->advisorFile;
        result.mappingFile = written->mappingFile;
        if (progress)
            progress->advance(1000); // comparePair's range: the pair is done once its files are written
        return result;
    };
    return runPairs(plan->size(), outDir, options.timestamp, work);
}

long firstDivergingPair(const std::vector<PairResult>& results)
{
    std::vector<const FirstFailure*> failures;
    for (const PairResult& r : results)
        failures.push_back(&r.firstFailure);
    return earliestFailure(failures);
}

} // namespace probescope::compare
