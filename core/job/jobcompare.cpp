// SPDX-License-Identifier: Apache-2.0
#include "core/job/jobcompare.h"
#include "core/job/journal.h"
#include "core/job/jobsummary.h"

#include "core/compare/output/csvwriter.h"
#include "core/compare/pipeline/comparerun.h"
#include "core/compare/table/pytext.h"
#include "core/compare/verdict/firstfailure.h"
#include "core/util/fileio.h"
#include "core/util/outputfile.h"
#include "core/util/utf8text.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <map>
#include <mutex>
#include <cmath>
#include <cstdlib>

#include <sys/stat.h>
#include <unistd.h>

namespace probescope::job {

namespace fs = std::filesystem;
using nlohmann::json;
using namespace detail;

namespace {

/// A relative error cell as a number: msprobe writes "12.5%" strings or floats, "N/A" when it has none.
std::optional<double> metricValue(const compare::Cell& c)
{
    if (c.isNumber())
        return c.asDouble();
    if (!c.isString())
        return std::nullopt;
    std::string s = c.asString();
    if (!s.empty() && s.back() == '%')
        s.pop_back();
    char* end = nullptr;
    const double v = std::strtod(s.c_str(), &end);
    if (s.empty() || end != s.c_str() + s.size())
        return std::nullopt;
    return v;
}

/// The worst value of the metric that decides the verdict of the mode: the lowest cosine (tensor), the largest
/// relative error of any statistic (statistics), the first "Different" (md5). NaN counts as worst.
void findWorst(const compare::CompareTable& table, PairSummary& s)
{
    if (table.mode == compare::CompareMode::Md5) {
        const int col = table.column("Result");
        for (std::size_t r = 0; col >= 0 && r < table.rows.size(); ++r) {
            const auto& c = table.rows[r][col];
            if (c.isString() && c.asString() == "Different") {
                s.worstMetric = "Result";
                s.worstValue = "Different";
                s.worstNode = table.rows[r][0].isString() ? table.rows[r][0].asString() : "";
                return;
            }
        }
        return;
    }
    std::vector<int> cols;
    bool lowerIsWorse = false;
    if (table.mode == compare::CompareMode::RealData) {
        cols.push_back(table.column("Cosine"));
        lowerIsWorse = true;
    } else {
        for (std::size_t i = 0; i < table.header.size(); ++i) {
            if (table.header[i].find("RelativeErr") != std::string::npos)
                cols.push_back(static_cast<int>(i));
        }
    }
    std::optional<double> worst;
    for (int col : cols) {
        for (std::size_t r = 0; col >= 0 && r < table.rows.size(); ++r) {
            const auto v = metricValue(table.rows[r][col]);
            if (!v)
                continue;
            // Badness grows with the key: -cosine, or |relative error|; NaN is worse than any number.
            const double key = std::isnan(*v) ? INFINITY : lowerIsWorse ? -*v : std::fabs(*v);
            if (!worst || key > *worst) {
                worst = key;
                s.worstMetric = table.header[col];
                s.worstValue = excelText(table.rows[r][col]);
                s.worstNode = table.rows[r][0].isString() ? table.rows[r][0].asString() : "";
            }
        }
    }
}

/// What a file looked like when a pair read it: size, mtime and ctime in ns (ctime too, because `touch -d` or
/// `cp -p` can set an mtime back, but not a ctime). Followed through symlinks: the content is what was read.
json fileState(const fs::path& p)
{
    json j = { { "path", text(p.string()) } };
    struct stat st {};
    if (::stat(p.c_str(), &st) != 0) {
        j["absent"] = true;
        return j;
    }
    j["size"] = static_cast<std::int64_t>(st.st_size);
    j["mtime_ns"] = static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
    j["ctime_ns"] = static_cast<std::int64_t>(st.st_ctim.tv_sec) * 1000000000 + st.st_ctim.tv_nsec;
    return j;
}

/// The files one side of a pair is read from: its dump file, and beside a dump.json the construct.json and
/// stack.json loadRank reads; its tensor folder as a folder (files added, removed or renamed change its times; a
/// tensor file rewritten in place under its own name does not: docs/scale-out.md).
json sideState(const dump::RankLocation& r)
{
    json j = { { "dump", fileState(r.dumpFile) } };
    if (r.format == dump::DumpFormat::LegacyPkl) {
        j["tensors"] = fileState(fs::path(r.dumpFile).replace_extension());
        return j;
    }
    j["construct"] = fileState(r.dir / "construct.json");
    j["stack"] = fileState(r.dir / "stack.json");
    j["tensors"] = fileState(r.dir / "dump_tensor_data");
    return j;
}

/// Everything a pair's outputs depend on besides the program: the inputs' states and the options that change what
/// is written. An entry (journal.h) whose inputs differ from these is not trusted.
json pairInputs(const compare::PlannedPair& pair, const compare::JobOptions& options)
{
    json j = { { "npu", sideState(pair.npu) }, { "bench", sideState(pair.bench) } };
    if (pair.stackFile)
        j["stack_file"] = fileState(*pair.stackFile);
    json mappings = json::object();
    for (const auto& [name, file] : { std::pair { "data_mapping", &options.dataMapping },
                                      std::pair { "cell_mapping", &options.cellMapping },
                                      std::pair { "api_mapping", &options.apiMapping },
                                      std::pair { "layer_mapping", &options.layerMapping } }) {
        if (*file)
            mappings[name] = (*file)->empty() ? json("given without a file") : fileState(**file);
    }
    j["options"] = { { "profile", static_cast<int>(options.profile) },
                     { "stack_flag", options.stackFlag },
                     { "stack_mode", pair.stackMode },
                     { "fuzzy", options.fuzzy },
                     { "advisor", options.advisor },
                     { "xlsx", options.xlsx },
                     { "salvage", options.salvage },
                     { "mappings", mappings } };
    return j;
}

// How often a running job makes its outputs durable (one syncfs) and journals the pairs done since (or
// sooner, when the loop's window of results held back fills).
constexpr std::chrono::seconds kBarrierInterval { 5 };

/// Whether `name` is one of this pair's outputs: (compare_result|advisor){suffix}_{14 digits}[_{digits}].(csv|xlsx|txt).
/// Read in one pass, never as a regular expression built from the pair's text (issue 33).
bool isOutputOfPair(std::string_view name, std::string_view suffix)
{
    const auto digits = [&](std::size_t& at, std::size_t min, std::size_t max) {
        std::size_t n = 0;
        while (at + n < name.size() && n < max && name[at + n] >= '0' && name[at + n] <= '9')
            ++n;
        at += n;
        return n >= min;
    };
    std::size_t at = 0;
    if (name.substr(0, 14) == "compare_result")
        at = 14;
    else if (name.substr(0, 7) == "advisor")
        at = 7;
    else
        return false;
    if (name.substr(at, suffix.size()) != suffix)
        return false;
    at += suffix.size();
    if (name.substr(at, 1) != "_")
        return false;
    ++at;
    if (!digits(at, 14, 14))
        return false;
    if (name.substr(at, 1) == "_") {
        ++at;
        if (!digits(at, 1, name.size()))
            return false;
    }
    const std::string_view extension = name.substr(at);
    return extension == ".csv" || extension == ".xlsx" || extension == ".txt";
}

/// The regular files of OUT's step folders as --resume found them, listed once per folder and sorted: a job of
/// 10,000 ranks has 10,000 tables in one folder, and listing it again for every pair was quadratic (issue 37).
class EarlierOutputs
{
public:
    /// The outputs an earlier run wrote for this pair (its names with any timestamp); only names this pair's
    /// compare writes match. The folder is OUT's own step folder, where this job writes.
    std::vector<fs::path> of(const fs::path& dir, const compare::PlannedPair& pair)
    {
        const std::vector<std::string>& names = listing(dir);
        std::vector<fs::path> found;
        for (const std::string& prefix : { "advisor" + pair.suffix + "_", "compare_result" + pair.suffix + "_" }) {
            for (auto it = std::lower_bound(names.begin(), names.end(), prefix);
                 it != names.end() && it->compare(0, prefix.size(), prefix) == 0; ++it) {
                if (isOutputOfPair(*it, pair.suffix))
                    found.push_back(dir / *it);
            }
        }
        return found;
    }

private:
    const std::vector<std::string>& listing(const fs::path& dir)
    {
        const std::lock_guard lock(m_mutex);
        auto [it, fresh] = m_folders.try_emplace(dir.string());
        if (fresh) {
            std::error_code ec;
            for (const auto& e : fs::directory_iterator(dir, ec)) {
                if (e.is_regular_file(ec) && !e.is_symlink(ec))
                    it->second.push_back(e.path().filename().string());
            }
            std::sort(it->second.begin(), it->second.end());
        }
        return it->second; // std::map: a reference stays valid while other folders are added
    }

    std::mutex m_mutex;
    std::map<std::string, std::vector<std::string>> m_folders;
};

/**
 * --resume redoes a pair (its inputs changed, or an earlier run was cut before its entry): the earlier run's outputs
 * of the pair move to `.probescope/superseded/` in its step folder first, so the new ones take the names a fresh run
 * gives and the folder reads as a fresh run's; nothing a user had is deleted or replaced (a taken name there gets
 * _1, ...). Returns where each went, so that a redo that fails (the dump is now damaged, say) puts them back.
 */
std::vector<std::pair<fs::path, fs::path>> supersede(const std::vector<fs::path>& earlier, const fs::path& dir)
{
    std::vector<std::pair<fs::path, fs::path>> moved;
    if (earlier.empty())
        return moved;
    const fs::path aside = dir / ".probescope" / "superseded";
    std::error_code ec;
    fs::create_directories(aside, ec);
    for (const fs::path& f : earlier) {
        const std::string stem = f.stem().string();
        const std::string ext = f.extension().string();
        for (int n = 0; n < 1000; ++n) {
            const fs::path to = aside / (n == 0 ? f.filename().string() : stem + "_" + std::to_string(n) + ext);
            if (!renameNoReplace(f, to)) {
                moved.emplace_back(f, to);
                break;
            }
            if (fs::symlink_status(f, ec).type() == fs::file_type::not_found)
                break; // the source vanished meanwhile: nothing to keep
        }
    }
    return moved;
}

/// A redo that failed: the earlier outputs go back where they were (a name taken meanwhile keeps it aside).
void restore(const std::vector<std::pair<fs::path, fs::path>>& moved)
{
    for (const auto& [from, to] : moved)
        (void)renameNoReplace(to, from);
}

PairSummary plannedSummary(const compare::PlannedPair& pair)
{
    PairSummary s;
    s.step = pair.step;
    s.outSubdir = pair.outSubdir;
    s.npuRank = pair.npu.rankLabel;
    s.benchRank = pair.bench.rankLabel;
    s.rank = pair.npu.rank.value_or(-1);
    s.npuDump = pair.npu.dumpFile.string();
    s.benchDump = pair.bench.dumpFile.string();
    s.failure.step = s.step;
    s.failure.rank = s.rank;
    s.failure.rankLabel = s.npuRank;
    return s;
}

PairSummary comparePlanned(const compare::PlannedPair& pair, const compare::MappingFiles& mappings,
                           const compare::JobOptions& options, const fs::path& outDir, const std::string& stamp)
{
    PairSummary s = plannedSummary(pair);
    auto failed = [&](const Diagnostic& d) {
        s.compared = false;
        s.errorId = d.id;
        s.error = d.format();
        return s;
    };
    auto outcome = compare::comparePair(pair, mappings, options);
    if (!outcome)
        return failed(outcome.error());
    // A damaged dump (issue 20) is refused unless --salvage: the pair failed to compare, named by its first error.
    if (outcome->refused) {
        for (const Diagnostic& d : outcome->inputDiagnostics) {
            if (d.severity == Severity::Error)
                return failed(d);
        }
    }
    const compare::CompareTable& table = *outcome->table;
    s.compared = true;
    s.rows = table.rows.size();
    const compare::NonFiniteStatistics nonFinite(table);
    for (std::size_t r = 0; r < table.rows.size(); ++r)
        s.failingRows += compare::rowFails(table, r, nonFinite);
    const compare::FirstFailure& ff = outcome->firstFailure;
    RankFailure& f = s.failure;
    f.failed = s.failingRows > 0 && !ff.key.empty();
    if (f.failed) {
        locateFailure(f, ff, outcome->loaded ? outcome->loaded->tree.get() : nullptr);
        s.firstFailureSummary = ff.summary;
    }
    findWorst(table, s);
    if (table.rows.empty())
        return s; // msprobe writes nothing when no op matched
    const fs::path pairDir = pair.outSubdir.empty() ? outDir : outDir / pair.outSubdir;
    auto written = compare::writePairOutputs(*outcome, pairDir, stamp, options);
    if (!written)
        return failed(written.error());
    for (const fs::path* p : { &written->csvFile, &written->xlsxFile, &written->advisorFile, &written->mappingFile }) {
        if (!p->empty())
            s.files.push_back(p->lexically_relative(outDir).generic_string());
    }
    return s;
}

bool selected(const std::vector<std::int64_t>& list, std::optional<std::int64_t> v)
{
    return list.empty() || (v && std::find(list.begin(), list.end(), *v) != list.end());
}

} // namespace

fs::path pairMarkerPath(const fs::path& outDir, const compare::PlannedPair& pair)
{
    const fs::path dir = pair.outSubdir.empty() ? outDir : outDir / pair.outSubdir;
    return dir / ".probescope" / ("pair_" + pairName(pair) + ".json");
}

Result<JobResult> runWholeJob(const compare::CompareInput& input, const fs::path& outDir,
                              const compare::JobOptions& options, const WholeJobOptions& jobOptions)
{
    compare::PlanOptions planOptions;
    planOptions.profile = options.profile;
    planOptions.stackFlag = options.stackFlag;
    planOptions.progress = jobOptions.progress; // a cancel stops the folder walk too, not only the pairs
    // The plan kept small (compare::CompactPlan: about 100 bytes a pair with both sides' ranks), each pair made when
    // the job gets to it, so that the job's memory does not grow with its ranks (issue 37).
    auto plan = compare::planPairsCompact(input, planOptions);
    if (!plan)
        return plan.error();
    // The selected pairs and places on one side only, as places in the plan, by step. The summary lists the pairs by
    // step (then as planned) with the one-sided places of a step after them: the pairs run in that order, so that
    // each can be written as it comes (a no-op: the plan is in step order).
    const auto selectPlaces = [&](std::size_t count, const auto& stepOf, const auto& rankOf) {
        std::vector<std::uint32_t> kept;
        for (std::size_t i = 0; i < count; ++i) {
            const std::int64_t step = stepOf(i);
            if (selected(jobOptions.steps, step >= 0 ? std::optional(step) : std::nullopt)
                && selected(jobOptions.ranks, rankOf(i)))
                kept.push_back(static_cast<std::uint32_t>(i));
        }
        kept.shrink_to_fit();
        std::stable_sort(kept.begin(), kept.end(),
                         [&](std::uint32_t a, std::uint32_t b) { return stepOf(a) < stepOf(b); });
        return kept;
    };
    const std::vector<std::uint32_t> order = selectPlaces(
        plan->size(), [&](std::size_t i) { return plan->step(i); }, [&](std::size_t i) { return plan->npuRank(i); });
    const auto pairAt = [&](std::size_t i) { return plan->pair(order[i]); };
    // Places on one side only, as the selection keeps them: listed as not compared, never skipped in silence.
    const std::vector<std::uint32_t> oneSided = selectPlaces(
        plan->unpairedCount(), [&](std::size_t i) { return plan->unpairedStep(i); },
        [&](std::size_t i) { return plan->unpairedRank(i); });
    const auto oneSidedSummary = [&](std::size_t i) {
        const compare::UnpairedPlace u = plan->unpaired(oneSided[i]);
        PairSummary s;
        s.step = u.step;
        s.outSubdir = u.outSubdir;
        s.rank = u.location.rank.value_or(-1);
        (u.npuSide ? s.npuRank : s.benchRank) = u.location.rankLabel;
        (u.npuSide ? s.npuDump : s.benchDump) = u.location.dumpFile.string();
        s.onlyIn = u.npuSide ? "npu" : "bench";
        s.errorId = u.diagnostic.id;
        s.error = u.diagnostic.format();
        return s;
    };
    if (order.empty() && oneSided.empty())
        return makeError("job.empty", fileLocation(input.npuPath),
                         jobOptions.steps.empty() && jobOptions.ranks.empty()
                             ? "no (step, rank) pair to compare"
                             : "no (step, rank) pair matches the --step/--rank selection");
    auto mappings = compare::readMappingFiles(options);
    if (!mappings)
        return mappings.error();
    std::error_code ec;
    fs::create_directories(outDir, ec);
    if (ec)
        return makeError("compare.output", fileLocation(outDir), "cannot create the output folder: " + ec.message());
    LocalThreadScheduler oneThread(1);
    PairScheduler& scheduler = jobOptions.scheduler ? *jobOptions.scheduler : oneThread;
    const std::string stamp
        = scheduler.shareFromCoordinator(options.timestamp.empty() ? localTimestamp() : options.timestamp);

    // Durability (docs/scale-out.md, "Durability"): outputs are renamed into place without an fsync each; one
    // syncfs of OUT's file system per batch of done pairs (the loop's settle step, on the process that compared
    // them) makes them durable, and only then is the batch's journal written (its entries vouch for their pairs'
    // outputs): one file a batch, not a marker a pair (journal.h). The last barrier runs before the summary, which
    // vouches for all.
    std::optional<DeferredSync> durable(std::in_place, outDir);
    EarlierOutputs earlier;
    // What earlier runs left, read once (every process of a cluster run reads it for the pairs it is given).
    const std::optional<ResumeRecord> record
        = jobOptions.resume ? std::optional(ResumeRecord::read(outDir)) : std::nullopt;
    JournalWriter journal(outDir);
    std::mutex pendingMutex; // guards pending (pairs run on the schedule's threads)
    std::map<std::size_t, std::string> pending; // the journal lines of compared pairs not yet settled

    compare::PairLoop loop;
    loop.count = order.size();
    loop.scheduler = &scheduler;
    loop.task.settleEvery = kBarrierInterval;
    loop.task.window = 2048; // a barrier at the latest every 1,024 pairs; about 2 KB a pair (summary, entry) held back
    loop.task.work = [&](std::size_t i) -> std::string {
        const compare::PlannedPair pair = pairAt(i);
        const json inputs = pairInputs(pair, options); // taken before the compare reads them
        if (record) {
            if (auto done = record->completed(pair, outDir, plannedSummary(pair), inputs)) {
                json j = toJson(*done);
                j["resumed"] = true;
                return dumpJson(j);
            }
        }
        const fs::path pairDir = pair.outSubdir.empty() ? outDir : outDir / pair.outSubdir;
        const auto moved = jobOptions.resume ? supersede(earlier.of(pairDir, pair), pairDir)
                                             : std::vector<std::pair<fs::path, fs::path>> {};
        PairSummary s = comparePlanned(pair, *mappings, options, outDir, stamp);
        if (!s.compared)
            restore(moved);
        if (s.compared) {
            // Journaled when its batch settles: its entry means every output of the pair is complete and durable.
            const std::lock_guard lock(pendingMutex);
            pending.insert_or_assign(i, entryLine(pair, s, outDir, inputs));
        }
        return dumpJson(toJson(s));
    };
    loop.task.settle = [&](std::vector<compare::PairDone>& batch) {
        // By place in the plan: a journal's text does not depend on which thread finished first.
        std::map<std::size_t, std::string> entries;
        {
            const std::lock_guard lock(pendingMutex);
            for (const compare::PairDone& done : batch) {
                if (auto node = pending.extract(done.index))
                    entries.insert(std::move(node));
            }
        }
        if (entries.empty())
            return;
        std::optional<Diagnostic> d;
        if (const std::optional<std::string> notDurable = durable->barrier())
            d = makeError("job.output", fileLocation(outDir), *notDurable);
        else if (auto written = journal.write(entries); !written)
            d = written.error();
        for (compare::PairDone& done : batch) {
            if (d && entries.count(done.index)) {
                // Its entry could not be written: not complete for --resume, so not reported as compared.
                PairSummary s = plannedSummary(pairAt(done.index));
                s.errorId = d->id;
                s.error = d->format();
                done.text = dumpJson(toJson(s));
            }
        }
    };
    if (jobOptions.progress)
        loop.task.cancelled = [&] { return jobOptions.progress->isCancelled(); };

    // The coordinator's side: each pair as it comes in plan order goes into the summary files and to the caller;
    // kept of it are the counts and the failures of the earliest failing step (what the origin needs).
    JobResult result;
    result.diagnostics = plan->diagnostics();
    result.coordinator = scheduler.isCoordinator();
    std::optional<SummaryWriter> writer;
    if (result.coordinator)
        writer.emplace(outDir);
    std::vector<RankFailure> failures;
    std::size_t nextOneSided = 0;
    auto emit = [&](PairSummary&& s) {
        ++result.counts.places;
        result.counts.oneSided += !s.onlyIn.empty();
        result.counts.failed += !s.compared && s.onlyIn.empty();
        result.counts.failing += s.compared && s.failingRows > 0;
        if (s.compared && s.failure.failed && !s.failure.key.empty()
            && (failures.empty() || s.failure.step <= failures.front().step)) {
            if (!failures.empty() && s.failure.step < failures.front().step)
                failures.clear();
            failures.push_back(s.failure);
        }
        writer->add(s);
        if (jobOptions.onPair)
            jobOptions.onPair(s);
        else
            result.pairs.push_back(std::move(s));
    };
    auto oneSidedUpTo = [&](std::optional<std::int64_t> step) {
        while (nextOneSided < oneSided.size() && (!step || plan->unpairedStep(oneSided[nextOneSided]) < *step))
            emit(oneSidedSummary(nextOneSided++));
    };
    loop.consume = [&](std::size_t i, std::string&& text) {
        const json j = json::parse(text, nullptr, false);
        std::string().swap(text);
        std::optional<PairSummary> parsed;
        if (!j.is_discarded()) {
            try {
                parsed = fromJson(j);
            } catch (const json::exception&) {
            }
        }
        const compare::PlannedPair pair = pairAt(i);
        PairSummary s = parsed ? *parsed : plannedSummary(pair);
        if (!parsed) {
            s.errorId = "job.lost";
            s.error = "the worker that compared this pair returned no summary";
        }
        // The paths as planned (an entry holds them escaped): a resumed pair reads as a fresh one.
        s.npuDump = pair.npu.dumpFile.string();
        s.benchDump = pair.bench.dumpFile.string();
        s.outSubdir = pair.outSubdir;
        s.resumed = parsed && j.contains("resumed");
        oneSidedUpTo(s.step);
        emit(std::move(s));
        return true;
    };
    if (result.coordinator && jobOptions.progress) {
        jobOptions.progress->setRange(order.size());
        scheduler.onPairDone = [&, done = std::size_t { 0 }]() mutable { jobOptions.progress->advance(++done); };
    }
    if (result.coordinator && jobOptions.onPlanned)
        jobOptions.onPlanned(result.diagnostics);
    const compare::PairLoopEnd end = compare::runPairs(loop);
    scheduler.onPairDone = nullptr;
    std::string notDurable;
    if (auto failure = durable->barrier()) // the journal of the last batch
        notDurable = *failure;
    durable.reset();
    const std::vector<std::string> reports = scheduler.gatherAtEnd(json { { "durable", notDurable } }.dump());
    if (end == compare::PairLoopEnd::Cancelled)
        return makeError("compare.cancelled", fileLocation(outDir),
                         "the job was cancelled; the pairs compared are complete");
    if (!result.coordinator)
        return result;
    oneSidedUpTo(std::nullopt); // the one-sided places after the last pair's step
    std::string durableError;
    for (const std::string& report : reports) {
        const json r = json::parse(report, nullptr, false);
        if (r.is_discarded() || !r.is_object())
            continue;
        if (const auto it = r.find("durable"); it != r.end() && it->is_string() && !it->get<std::string>().empty()
            && durableError.empty())
            durableError = it->get<std::string>();
    }
    result.origin = findJobOrigin(failures);
    if (!durableError.empty()) {
        // The summary vouches for every output: not written when they could not be made durable.
        result.summaryError = makeError("job.output", fileLocation(outDir), durableError);
        return result;
    }
    auto written = writer->finish(result.origin);
    if (written) {
        result.summaryCsv = written->first;
        result.summaryJson = written->second;
    } else {
        result.summaryError = written.error();
    }
    return result;
}

} // namespace probescope::job
