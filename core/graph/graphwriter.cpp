// SPDX-License-Identifier: Apache-2.0
// msprobe's graph service (26.0.0 visualization/graph_service.py, compare/graph_comparator.py, db_utils.py) on
// ProbeScope's dump reading (core/dump) and compare (core/compare msprobe26).
#include "core/compare/msprobe12/compare.h"
#include "core/graph/graphwriter.h"

#include "core/compare/table/comparetable.h"
#include "core/compare/pipeline/comparerun.h"
#include "core/compare/pipeline/pipeline.h"
#include "core/compare/metrics/realdata.h"
#include "core/compare/msprobe26/msprobe26.h"
#include "core/dump/dumplayout.h"
#include "core/graph/graphwriterparts.h"
#include "core/graph/sqlitewriter.h"
#include "core/util/fileio.h"
#include "core/util/outputfile.h"
#include "core/util/pytext.h"
#include "core/util/textposition.h"

#include <nlohmann/json.hpp>
#include <sqlite3.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <map>
#include <set>
#include <system_error>
#include <unordered_map>

namespace probescope::graph {

namespace {

namespace fs = std::filesystem;
using compare::CellKind;
using compare::CellView;
using compare::CompareMode;

using Db = detail::WritableDb;
// The parts (graphwriterparts.h): matching, verdicts, the db's tables.
using detail::ConfigRow;
using detail::createNodes;
using detail::indexColumns;
using detail::insertConfig;
using detail::insertGraph;
using detail::judgeCollections;
using detail::judgeNode;
using detail::kCreateConfig;
using detail::kCreateStack;
using detail::matchByFile;
using detail::matchExact;
using detail::matchFuzzy;
using detail::modeTask;
using detail::nodeColorsOf;
using detail::toolTipOf;
using detail::Verdicts;

/// One (step, rank) of the run: the NPU rank folder and, in a compare, the bench one.
struct Job
{
    std::int64_t step = 0;
    std::int64_t rank = 0;
    dump::RankLocation npu;
    std::optional<dump::RankLocation> bench;
};

bool sameDir(const fs::path& a, const fs::path& b)
{
    std::error_code ec;
    return fs::equivalent(a, b, ec);
}

/// msprobe's three input kinds: a folder with the dump files ("files": step 0, rank 0), a folder of rank folders
/// ("ranks": step 0), a folder of step folders ("steps").
struct Plan
{
    std::vector<Job> jobs;
    std::vector<std::int64_t> stepList { 0 };
    std::vector<std::int64_t> rankList { 0 };
    std::vector<std::string> notes;
    std::size_t notCompared = 0; ///< places of one side only
};

Result<Plan> planJobs(const fs::path& npu, const std::optional<fs::path>& bench)
{
    auto layoutN = dump::discoverDump(npu);
    if (!layoutN)
        return layoutN.error();
    std::optional<dump::DumpLayout> layoutB;
    if (bench) {
        auto b = dump::discoverDump(*bench);
        if (!b)
            return b.error();
        layoutB = std::move(*b);
    }
    const SourceLocation where = fileLocation(npu);
    if (layoutN->ranks.empty())
        return makeError("graph.input", where, "no dump (dump.json, construct.json, stack.json) found");
    auto isFiles = [](const dump::DumpLayout& l, const fs::path& input) {
        return l.ranks.size() == 1 && sameDir(l.ranks.front().dir, input);
    };
    auto isSteps = [](const dump::DumpLayout& l) {
        return std::any_of(l.ranks.begin(), l.ranks.end(), [](const dump::RankLocation& r) { return !r.stepLabel.empty(); });
    };
    const bool filesN = isFiles(*layoutN, npu);
    const bool stepsN = !filesN && isSteps(*layoutN);
    if (layoutB) {
        if (layoutB->ranks.empty())
            return makeError("graph.input", fileLocation(*bench), "no dump found");
        const bool filesB = isFiles(*layoutB, *bench);
        const bool stepsB = !filesB && isSteps(*layoutB);
        if (filesN != filesB || stepsN != stepsB)
            return makeError("graph.input", where,
                             "the folder structures of the NPU and bench paths differ (msprobe: \"The directory "
                             "structures of npu_path and bench_path are inconsistent\")");
    }
    Plan plan;
    auto stepOf = [&](const dump::RankLocation& r) { return stepsN ? r.step.value_or(0) : 0; };
    auto rankOf = [&](const dump::RankLocation& r) { return filesN ? 0 : r.rank.value_or(0); };
    // The bench place of each (step, rank) label pair, looked up once per NPU place (linear in the places).
    std::map<std::pair<std::string, std::string>, const dump::RankLocation*> benchPlaces;
    if (layoutB)
        for (const dump::RankLocation& b : layoutB->ranks)
            benchPlaces[{ b.stepLabel, b.rankLabel }] = &b;
    for (const dump::RankLocation& r : layoutN->ranks) {
        Job job;
        job.step = stepOf(r);
        job.rank = rankOf(r);
        job.npu = r;
        if (layoutB) {
            const dump::RankLocation* match = nullptr;
            if (filesN) {
                match = &layoutB->ranks.back();
            } else if (const auto it = benchPlaces.find({ r.stepLabel, r.rankLabel }); it != benchPlaces.end()) {
                match = it->second;
            }
            if (!match) {
                plan.notes.push_back("NPU " + r.dir.string() + " has no bench counterpart; msprobe compares only the "
                                     "steps and ranks both sides have, so it is left out");
                ++plan.notCompared;
                continue;
            }
            job.bench = *match;
        }
        plan.jobs.push_back(std::move(job));
    }
    // And the other way: a bench place without an NPU counterpart is left out as well, never silently.
    if (layoutB && !filesN) {
        std::set<std::pair<std::string, std::string>> npuPlaces;
        for (const dump::RankLocation& r : layoutN->ranks)
            npuPlaces.emplace(r.stepLabel, r.rankLabel);
        for (const dump::RankLocation& b : layoutB->ranks)
            if (!npuPlaces.count({ b.stepLabel, b.rankLabel })) {
                plan.notes.push_back("bench " + b.dir.string() + " has no NPU counterpart; msprobe compares only the "
                                     "steps and ranks both sides have, so it is left out");
                ++plan.notCompared;
            }
    }
    if (plan.jobs.empty())
        return makeError("graph.input", where, "the NPU and bench paths have no step and rank in common");
    std::set<std::int64_t> steps;
    for (const Job& j : plan.jobs)
        steps.insert(j.step);
    if (stepsN)
        plan.stepList.assign(steps.begin(), steps.end());
    // rank_list: the ranks of the first step (tb_config keeps the first graph's row: INSERT OR IGNORE).
    plan.rankList.clear();
    for (const Job& j : plan.jobs)
        if (j.step == plan.jobs.front().step)
            plan.rankList.push_back(j.rank);
    std::sort(plan.rankList.begin(), plan.rankList.end());
    return plan;
}


/// graph.data_path: 8.x the dump's dump_data_dir verbatim; 26.x the folder beside construct.json when the recorded
/// one lies elsewhere. NULL when the dump has none (statistics, md5).
std::optional<std::string> dataPathOf(const dump::RankDump& rank, WriteFormat format)
{
    const dump::DumpHeader& h = rank.dump->header;
    if (!h.dumpDataDir)
        return std::nullopt;
    if (format == WriteFormat::V83 || h.dumpDataDir->empty())
        return h.dumpDataDir;
    const std::string base = rank.location.dir.string();
    if (fs::path(*h.dumpDataDir).parent_path().string() == base)
        return h.dumpDataDir;
    return (rank.location.dir / "dump_tensor_data").string();
}

/// Names per matched node beyond which matched_node_link is written short. Real models nest a few dozen levels;
/// msprobe's full chains make the db grow as nodes x depth (3,000 nested modules: a 970 MB db, 20,000: about 24 GB).
constexpr std::uint64_t kMaxLinkNamesPerNode = 64;
constexpr std::uint64_t kLinkNamesAlwaysFull = 1'000'000;

/// Whether the full matched_node_link lists of a compared pair would hold more than kMaxLinkNamesPerNode names per node
/// (and more than kLinkNamesAlwaysFull in all): then every link of the pair is written as [parent, name], the form
/// tb_graph_ascend 26 writes for a manual match (its readers take the last name), and the run says so. Linear.
bool linkBudgetExceeded(const MsGraph& n, const MsGraph& b)
{
    const auto depthN = n.depths();
    const auto depthB = b.depths();
    std::uint64_t names = 0;
    for (const MsNode& x : n.nodes)
        if (x.partner >= 0)
            names += depthB[static_cast<std::size_t>(x.partner)] + 1;
    for (const MsNode& y : b.nodes)
        if (y.partner >= 0)
            names += depthN[static_cast<std::size_t>(y.partner)] + 1;
    const std::uint64_t nodes = n.nodes.size() + b.nodes.size();
    return names > std::max(kLinkNamesAlwaysFull, kMaxLinkNamesPerNode * nodes);
}

/// What the compare pipeline gives one (step, rank) of the graph.
struct ComparedPair
{
    std::shared_ptr<const compare::CompareTable> table;
    std::shared_ptr<const compare::CompareTable> table12; ///< 8.3 real data: msprobe 1.2's table (MaxRelativeErr)
};

/**
 * @brief The compare of one pair through the one pipeline (compare::comparePair: the load step, the tensor
 * resolver and their refusals), never a compare of the graph's own.
 *
 * The nodes the graph linked under other names (a fuzzy match of a shifted call, a match file) are given to it as
 * manual matches, so each row compares what msprobe's graph compares: a node with the node it is linked to. A pair
 * the compare refuses (a cut .pt, a data_name leaving the dump, a tensor folder linked elsewhere) refuses the graph:
 * its first error is the error, every finding goes to options.findings.
 */
Result<ComparedPair> comparePairOf(const Job& job, const MsGraph& n, const MsGraph& b,
                                   const std::map<std::uint32_t, std::uint32_t>& pairs, const GraphWriteOptions& options)
{
    compare::PlannedPair planned;
    planned.npu = job.npu;
    planned.bench = *job.bench;
    compare::MappingFiles files;
    VisConfig linked;
    linked.path = "the graph's node matching";
    for (const auto& [i, j] : pairs)
        if (n.nodes[i].id != b.nodes[j].id)
            linked.entries.push_back({ n.nodes[i].id, b.nodes[j].id });
    if (!linked.entries.empty())
        files.matches = linked;
    compare::JobOptions jobOptions;
    jobOptions.profile = Profile::Msprobe26;
    jobOptions.threads = options.threads;
    auto outcome = compare::comparePair(planned, files, jobOptions);
    if (!outcome)
        return outcome.error();
    if (options.findings)
        options.findings->insert(options.findings->end(), outcome->inputDiagnostics.begin(),
                                 outcome->inputDiagnostics.end());
    for (const Diagnostic& d : outcome->inputDiagnostics)
        if (d.severity == Severity::Error)
            return d;
    if (outcome->refused || !outcome->table)
        return makeError("graph.input", fileLocation(job.npu.dumpFile),
                         "the compare refuses this pair");
    ComparedPair out;
    out.table = outcome->table;
    if (options.format == WriteFormat::V83 && out.table->mode == CompareMode::RealData) {
        const dump::DumpFile& npuDump = *outcome->loaded->npu->dump;
        const dump::DumpFile& benchDump = *outcome->loaded->bench->dump;
        compare::NameMappings mappings;
        compare::ManualMatches manual;
        manual.path = linked.path;
        for (const MatchEntry& e : linked.entries)
            if (npuDump.find(e.key) && benchDump.find(e.value))
                manual.pairs.emplace_back(e.key, e.value);
        if (!manual.pairs.empty())
            mappings.manual = std::move(manual);
        compare::CompareOptions co;
        co.threads = options.threads;
        co.mappings = &mappings;
        co.npuTensors = compare::tensorResolverOf(npuDump);
        co.benchTensors = compare::tensorResolverOf(benchDump);
        auto table12 = compare::compareDumps(npuDump, benchDump, co);
        if (!table12)
            return table12.error();
        out.table12 = *table12;
    }
    return out;
}

} // namespace

Result<GraphInput> readGraphInputJson(const fs::path& path)
{
    const SourceLocation where = fileLocation(path);
    auto text = readTextFile(path);
    if (!text)
        return text.error();
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(*text);
    } catch (const nlohmann::json::parse_error& e) {
        std::string message = e.what();
        if (const auto colon = message.rfind(": "); colon != std::string::npos)
            message = message.substr(colon + 2);
        return makeError("graph.input", locate(*text, e.byte > 1 ? e.byte - 1 : 0, path.string()), "not valid JSON: " + message);
    } catch (const nlohmann::json::exception& e) { // a number out of range (1e99999), ...
        return makeError("graph.input", where, std::string("not valid JSON: ") + e.what());
    }
    if (!j.is_object())
        return makeError("graph.input", where, "not a JSON object (msprobe's graph input: {\"npu_path\": ..., \"bench_path\": ...})");
    const auto npu = j.find("npu_path");
    if (npu == j.end() || !npu->is_string())
        return makeError("graph.input", where, "\"npu_path\" (a path) is required");
    GraphInput input;
    input.npu = npu->get<std::string>();
    if (const auto bench = j.find("bench_path"); bench != j.end() && !bench->is_null()) {
        if (!bench->is_string())
            return makeError("graph.input", where, "\"bench_path\" must be a path");
        input.bench = fs::path(bench->get<std::string>());
    }
    return input;
}

Result<GraphWriteResult> writeGraphDb(const fs::path& npu, const std::optional<fs::path>& bench, const fs::path& outDir,
                                      const GraphWriteOptions& options)
{
    auto plan = planJobs(npu, bench);
    if (!plan)
        return plan.error();
    GraphWriteResult result;
    result.notes = plan->notes;
    result.notCompared = plan->notCompared;

    struct Built
    {
        MsGraph npu;
        std::optional<MsGraph> bench;
        std::int64_t microSteps = 1;
        std::optional<CompareMode> mode;
        bool fullLinks = true;
    };
    // Each job (a rank, or a pair of ranks) on the one loop over pairs (compare/pipeline/comparerun.h), in plan order.
    const auto buildJob = [&](std::size_t index) -> Result<Built> {
        const Job& job = plan->jobs[index];
        auto rankN = dump::loadRank(job.npu);
        if (!rankN)
            return rankN.error();
        for (const Diagnostic& d : (*rankN)->diagnostics)
            if (d.severity == Severity::Error)
                return d;
        std::shared_ptr<const dump::RankDump> rankB;
        std::optional<CompareMode> mode;
        if (job.bench) {
            auto loaded = dump::loadRank(*job.bench);
            if (!loaded)
                return loaded.error();
            for (const Diagnostic& d : (*loaded)->diagnostics)
                if (d.severity == Severity::Error)
                    return d;
            rankB = *loaded;
            auto detected = compare::msprobe26::detectMode(*(*rankN)->dump, *rankB->dump);
            if (!detected)
                return detected.error();
            mode = *detected;
        }
        BuildOptions bo;
        bo.format = options.format;
        bo.md5Mode = mode == CompareMode::Md5;
        bo.flatWithoutConstruct = true;
        auto gn = buildMsGraph(**rankN, bo);
        if (!gn)
            return gn.error();
        Built b;
        b.npu = std::move(*gn);
        b.npu.side = Side::Npu;
        b.npu.step = job.step;
        b.npu.rank = job.rank;
        b.npu.dataPath = dataPathOf(**rankN, options.format);
        if (b.npu.flat)
            result.notes.push_back(job.npu.dir.string() + ": construct.json is empty (a level L1 dump); msprobe writes "
                                   "no graph for it. Written instead: every dump entry directly under DefaultModel in "
                                   "dump order, consecutive APIs grouped in Apis_Between_Modules.N");
        if (rankB) {
            auto gb = buildMsGraph(*rankB, bo);
            if (!gb)
                return gb.error();
            b.bench = std::move(*gb);
            b.bench->side = Side::Bench;
            b.bench->step = job.step;
            b.bench->rank = job.rank;
            b.bench->dataPath = dataPathOf(*rankB, options.format);
            if (b.bench->flat)
                result.notes.push_back(job.bench->dir.string() + ": construct.json is empty (a level L1 dump); built "
                                       "flat as on the NPU side");
            // The graphs hold what they need of the dumps: the compare pipeline reads the dumps itself.
            rankN->reset();
            rankB.reset();
            auto pairs = options.fuzzy ? matchFuzzy(b.npu, *b.bench, options.format)
                                       : matchExact(b.npu, *b.bench, options.format);
            if (options.matches) {
                auto more = matchByFile(b.npu, *b.bench, *options.matches, result.notes);
                pairs.insert(pairs.end(), more.begin(), more.end());
            }
            // Each NPU node is judged once, with the bench node it is linked to in the end (a match file may have
            // re-paired a node matched by name).
            std::map<std::uint32_t, std::uint32_t> finalPairs;
            for (const auto& [i, j] : pairs)
                if (b.npu.nodes[i].partner == static_cast<std::int32_t>(j))
                    finalPairs[i] = j;
            auto compared = comparePairOf(job, b.npu, *b.bench, finalPairs, options);
            if (!compared)
                return compared.error();
            const std::shared_ptr<const compare::CompareTable> table = compared->table;
            Verdicts v;
            v.table = table;
            for (std::size_t r = 0; r < table->rows.size(); ++r) {
                const CellView name = table->rows.view(r, 0);
                v.rowOf.emplace(std::string(name.text), r);
            }
            v.names = indexColumns(*mode, options.format);
            for (const std::string& c : v.names)
                v.columns.push_back(table->column(c));
            v.result = table->column("Result");
            v.npuMd5 = table->column("NPU MD5");
            v.benchMd5 = table->column("BENCH MD5");
            v.oneThousandth = table->column("One Thousandth Err Ratio");
            if (options.format == WriteFormat::V83 && *mode == CompareMode::RealData) {
                v.table12 = compared->table12;
                for (std::size_t r = 0; r < v.table12->rows.size(); ++r)
                    v.rowOf12.emplace(std::string(v.table12->rows.view(r, 0).text), r);
                for (const std::string& c : v.names)
                    v.columns12.push_back(c == "MaxRelativeErr" || c == "One Thousandth Err Ratio"
                                                  || c == "Five Thousandths Err Ratio"
                                              ? v.table12->column(c)
                                              : -1);
                v.oneThousandth12 = v.table12->column("One Thousandth Err Ratio");
            }
            for (const auto& [i, j] : finalPairs)
                judgeNode(b.npu.nodes[i], b.bench->nodes[j], v, *mode, options.format);
            judgeCollections(b.npu, options.format == WriteFormat::V83 && *mode == CompareMode::Md5);
            b.mode = mode;
            b.microSteps = b.npu.pageByMicroStep(&*b.bench);
            if (linkBudgetExceeded(b.npu, *b.bench)) {
                b.fullLinks = false;
                result.notes.push_back(job.npu.dir.string() + ": the model nests so deep that msprobe's matched_node_link "
                                       "lists (every ancestor of the partner) would hold more than "
                                       + std::to_string(kMaxLinkNamesPerNode) + " names per node; written as [parent, "
                                       "node] instead, the form tb_graph_ascend 26 writes for a manual match");
            }
        } else {
            b.microSteps = b.npu.pageByMicroStep(nullptr);
        }
        return b;
    };
    auto builtJobs = compare::runPairsInProcess<Built>(plan->jobs.size(), buildJob);
    if (!builtJobs)
        return builtJobs.error();
    std::vector<Built> built = std::move(*builtJobs);

    // The db: a fresh temporary file in OUT (util/outputfile's createTempBeside), claimed under build_/compare_{ts}.vis.db
    // (then _1, _2 ...) by util/outputfile's claimFreeName: never replacing a file, a symlink at the name is taken.
    // Every message names the db's final name, never the temporary one.
    const bool compareRun = bench.has_value();
    const std::string stamp = options.timestamp.empty() ? localTimestamp() : options.timestamp;
    const std::string stem = std::string(compareRun ? "compare_" : "build_") + stamp;
    // OUT is made only now: a refused run leaves nothing behind, not even the folder.
    std::error_code ec;
    fs::create_directories(outDir, ec);
    if (!fs::is_directory(outDir))
        return makeError("graph.output", fileLocation(outDir), "cannot create the output folder");
    auto written = detail::writeNewDb(
        outDir, stem, ".vis.db", detail::DbName::FreeName,
        [&](Db& db) -> std::optional<std::string> {
            for (const std::string& sql : { createNodes(options.format), std::string(kCreateStack), std::string(kCreateConfig) })
                if (auto e = db.exec(sql))
                    return e;
            if (auto e = db.exec("BEGIN"))
                return e;
            ConfigRow config;
            config.compare = compareRun;
            config.rankList = plan->rankList;
            config.stepList = plan->stepList;
            config.overflowCheck = options.overflowCheck;
            config.microSteps = built.empty() ? 1 : built.front().microSteps;
            if (!built.empty() && built.front().mode) {
                config.task = modeTask(*built.front().mode);
                config.toolTip = toolTipOf(*built.front().mode);
                config.nodeColors = nodeColorsOf(*built.front().mode, options.format);
            }
            for (const Built& b : built) {
                if (auto e = insertGraph(db, b.npu, b.bench ? &*b.bench : nullptr, b.fullLinks, options.format))
                    return e;
                ++result.graphs;
                if (b.bench) {
                    if (auto e = insertGraph(db, *b.bench, &b.npu, b.fullLinks, options.format))
                        return e;
                    ++result.graphs;
                }
            }
            if (auto e = insertConfig(db, config))
                return e;
            // msprobe's post_process_db indexes.
            std::vector<std::pair<std::string, std::string>> indexes {
                { "index1", "step, rank, data_source, up_node, node_order" },
                { "index2", "step, rank, data_source, node_name" },
                { "index3", "step, rank, data_source, node_order" },
                { "index4", "step, rank, node_order" },
                { "index5", "step, rank, micro_step_id, node_order" },
                { "index6", "step, rank, modified, matched_node_link" },
            };
            if (options.format == WriteFormat::V26)
                indexes.emplace_back("index7", "is_distributed");
            for (const auto& [name, columns] : indexes)
                if (auto e = db.exec("CREATE INDEX IF NOT EXISTS " + name + " ON tb_nodes (" + columns + ");"))
                    return e;
            if (auto e = db.exec("COMMIT"))
                return e;
            // msprobe's files are in WAL mode (header bytes 18/19 = 2); switching here and closing leaves no -wal file.
            if (auto e = db.exec("PRAGMA journal_mode=WAL"))
                return e;
            return std::nullopt;
        },
        "graph.output");
    if (!written)
        return written.error();
    result.written = *written;
    return result;
}

} // namespace probescope::graph
