// SPDX-License-Identifier: Apache-2.0
#include "core/job/jobcompare.h"

#include "core/compare/csvwriter.h"
#include "core/compare/pytext.h"
#include "core/compare/firstfailure.h"
#include "core/util/fileio.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <regex>

#include <unistd.h>

namespace probescope::job {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

SourceLocation at(const fs::path& p)
{
    return SourceLocation { p.string(), std::nullopt, 0, 0 };
}

std::string pairName(const compare::PlannedPair& pair)
{
    return (pair.npu.rankLabel.empty() ? "rank" : pair.npu.rankLabel) + "-"
        + (pair.bench.rankLabel.empty() ? "rank" : pair.bench.rankLabel);
}

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

json toJson(const PairSummary& s)
{
    const RankFailure& f = s.failure;
    json j = { { "step", s.step },
               { "npu_rank", s.npuRank },
               { "bench_rank", s.benchRank },
               { "rank", s.rank },
               { "npu_dump", s.npuDump },
               { "bench_dump", s.benchDump },
               { "compared", s.compared } };
    if (!s.compared) {
        j["error_id"] = s.errorId;
        j["error"] = s.error;
        return j;
    }
    j["rows"] = s.rows;
    j["failing_rows"] = s.failingRows;
    j["first_failure"] = f.failed ? json { { "node", f.key },
                                           { "execution_index", f.executionIndex },
                                           { "culprit", f.found },
                                           { "communication_before", f.commBefore },
                                           { "next_communication", f.nextCommKey },
                                           { "next_communication_index", f.nextCommIndex },
                                           { "summary", s.firstFailureSummary } }
                                  : json(nullptr);
    j["worst_metric"] = s.worstMetric.empty() ? json(nullptr)
                                              : json { { "metric", s.worstMetric },
                                                       { "value", s.worstValue },
                                                       { "node", s.worstNode } };
    j["files"] = s.files;
    return j;
}

PairSummary fromJson(const json& j)
{
    PairSummary s;
    s.step = j.at("step").get<std::int64_t>();
    s.npuRank = j.at("npu_rank").get<std::string>();
    s.benchRank = j.at("bench_rank").get<std::string>();
    s.rank = j.at("rank").get<std::int64_t>();
    s.npuDump = j.at("npu_dump").get<std::string>();
    s.benchDump = j.at("bench_dump").get<std::string>();
    s.compared = j.at("compared").get<bool>();
    s.failure.step = s.step;
    s.failure.rank = s.rank;
    s.failure.rankLabel = s.npuRank;
    if (!s.compared) {
        s.errorId = j.at("error_id").get<std::string>();
        s.error = j.at("error").get<std::string>();
        return s;
    }
    s.rows = j.at("rows").get<std::uint64_t>();
    s.failingRows = j.at("failing_rows").get<std::uint64_t>();
    if (const json& f = j.at("first_failure"); !f.is_null()) {
        s.failure.failed = true;
        s.failure.key = f.at("node").get<std::string>();
        s.failure.executionIndex = f.at("execution_index").get<std::uint32_t>();
        s.failure.found = f.at("culprit").get<bool>();
        s.failure.commBefore = f.at("communication_before").get<std::uint32_t>();
        s.failure.nextCommKey = f.at("next_communication").get<std::string>();
        s.failure.nextCommIndex = f.at("next_communication_index").get<std::uint32_t>();
        s.firstFailureSummary = f.at("summary").get<std::string>();
    }
    if (const json& w = j.at("worst_metric"); !w.is_null()) {
        s.worstMetric = w.at("metric").get<std::string>();
        s.worstValue = w.at("value").get<std::string>();
        s.worstNode = w.at("node").get<std::string>();
    }
    s.files = j.at("files").get<std::vector<std::string>>();
    return s;
}

/// The marker: the pair's summary plus the size of each file, so a file cut short by a killed process is seen.
std::string markerText(const PairSummary& s, const fs::path& outDir)
{
    json j = toJson(s);
    json sizes = json::array();
    for (const std::string& f : s.files) {
        std::error_code ec;
        sizes.push_back(fs::file_size(outDir / f, ec));
    }
    j["file_sizes"] = sizes;
    return j.dump();
}

/// The summary of a pair from a complete earlier run, or nothing (then the pair is compared again).
std::optional<PairSummary> completedPair(const fs::path& marker, const fs::path& outDir, const PairSummary& planned)
{
    std::error_code ec;
    if (!fs::is_regular_file(marker, ec))
        return std::nullopt;
    auto text = readTextFile(marker);
    if (!text)
        return std::nullopt;
    const json j = json::parse(*text, nullptr, false);
    if (j.is_discarded() || !j.is_object() || !j.contains("file_sizes"))
        return std::nullopt;
    try {
        PairSummary s = fromJson(j);
        const auto sizes = j.at("file_sizes").get<std::vector<std::uint64_t>>();
        if (!s.compared || s.npuDump != planned.npuDump || s.benchDump != planned.benchDump
            || sizes.size() != s.files.size())
            return std::nullopt;
        for (std::size_t i = 0; i < s.files.size(); ++i) {
            if (fs::file_size(outDir / s.files[i], ec) != sizes[i] || ec)
                return std::nullopt;
        }
        s.resumed = true;
        return s;
    } catch (const json::exception&) {
        return std::nullopt; // a marker of another version: compare the pair again
    }
}

Result<bool> writeAtomically(const fs::path& path, const std::string& text)
{
    std::error_code ec;
    fs::create_directories(path.parent_path(), ec);
    // A name of its own per process: sharded runs into one OUT write their summaries at the same time.
    const fs::path tmp = path.string() + ".tmp" + std::to_string(::getpid());
    {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        out << text;
        out.close();
        if (!out)
            return makeError("job.output", at(tmp), "cannot write the file");
    }
    fs::rename(tmp, path, ec);
    if (ec)
        return makeError("job.output", at(path), "cannot write the file: " + ec.message());
    return true;
}

/// --resume on a pair that is not complete: the outputs an interrupted run left for it (its names with any
/// timestamp) go, so the rerun leaves one set of files per pair. Only names this pair's compare writes match.
void removeIncompleteOutputs(const fs::path& dir, const compare::PlannedPair& pair)
{
    const std::string suffix = std::regex_replace(pair.suffix, std::regex(R"([.^$|()\[\]{}*+?\\])"), R"(\$&)");
    const std::regex ours("(compare_result|advisor)" + suffix + R"(_[0-9]{14}(_[0-9]+)?\.(csv|xlsx|txt))");
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir, ec)) {
        if (e.is_regular_file(ec) && std::regex_match(e.path().filename().string(), ours))
            fs::remove(e.path(), ec);
    }
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
    for (std::size_t r = 0; r < table.rows.size(); ++r)
        s.failingRows += compare::rowFails(table, r);
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

std::string csvField(const std::string& s)
{
    if (s.find_first_of(",\"\n") == std::string::npos)
        return s;
    std::string q = "\"";
    for (char c : s)
        q += c == '"' ? std::string("\"\"") : std::string(1, c);
    return q + "\"";
}

bool selected(const std::vector<std::int64_t>& list, std::optional<std::int64_t> v)
{
    return list.empty() || (v && std::find(list.begin(), list.end(), *v) != list.end());
}

} // namespace

std::size_t JobResult::failedPairs() const
{
    return static_cast<std::size_t>(std::count_if(pairs.begin(), pairs.end(), [](const PairSummary& p) {
        return !p.compared;
    }));
}

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
    auto plan = compare::planPairs(input, planOptions);
    if (!plan)
        return plan.error();
    std::vector<compare::PlannedPair> pairs;
    for (const compare::PlannedPair& p : plan->pairs) {
        if (selected(jobOptions.steps, p.step >= 0 ? std::optional(p.step) : std::nullopt)
            && selected(jobOptions.ranks, p.npu.rank))
            pairs.push_back(p);
    }
    if (pairs.empty())
        return makeError("job.empty", at(input.npuPath),
                         jobOptions.steps.empty() && jobOptions.ranks.empty()
                             ? "no (step, rank) pair to compare"
                             : "no (step, rank) pair matches the --step/--rank selection");
    auto mappings = compare::readMappingFiles(options);
    if (!mappings)
        return mappings.error();
    std::error_code ec;
    fs::create_directories(outDir, ec);
    if (ec)
        return makeError("compare.output", at(outDir), "cannot create the output folder: " + ec.message());
    LocalThreadScheduler oneThread(1);
    PairScheduler& scheduler = jobOptions.scheduler ? *jobOptions.scheduler : oneThread;
    const std::string stamp
        = scheduler.shareFromCoordinator(options.timestamp.empty() ? localTimestamp() : options.timestamp);

    auto runPair = [&](std::size_t i) -> std::string {
        const compare::PlannedPair& pair = pairs[i];
        const fs::path marker = pairMarkerPath(outDir, pair);
        if (jobOptions.resume) {
            if (auto done = completedPair(marker, outDir, plannedSummary(pair))) {
                json j = toJson(*done);
                j["resumed"] = true;
                return j.dump();
            }
            removeIncompleteOutputs(pair.outSubdir.empty() ? outDir : outDir / pair.outSubdir, pair);
        }
        PairSummary s = comparePlanned(pair, *mappings, options, outDir, stamp);
        if (s.compared) {
            // Written last: its presence means every output of the pair is complete (see --resume).
            if (auto ok = writeAtomically(marker, markerText(s, outDir)); !ok) {
                Diagnostic d = ok.error();
                s = plannedSummary(pair);
                s.errorId = d.id;
                s.error = d.format();
            }
        }
        return toJson(s).dump();
    };
    const std::vector<std::string> texts = scheduler.run(pairs.size(), runPair);

    JobResult result;
    result.diagnostics = plan->diagnostics;
    result.coordinator = scheduler.isCoordinator();
    if (!result.coordinator)
        return result;
    std::vector<RankFailure> failures;
    for (std::size_t i = 0; i < pairs.size(); ++i) {
        const json j = json::parse(texts[i], nullptr, false);
        PairSummary s = j.is_discarded() ? plannedSummary(pairs[i]) : fromJson(j);
        if (j.is_discarded()) {
            s.errorId = "job.lost";
            s.error = "the worker that compared this pair returned no summary";
        }
        s.outSubdir = pairs[i].outSubdir;
        s.resumed = !j.is_discarded() && j.contains("resumed");
        if (s.compared)
            failures.push_back(s.failure);
        result.pairs.push_back(std::move(s));
    }
    result.origin = findJobOrigin(failures);
    if (auto ok = writeAtomically(outDir / "job_summary.csv", jobSummaryCsv(result)); !ok)
        return ok.error();
    if (auto ok = writeAtomically(outDir / "job_summary.json", jobSummaryJson(result)); !ok)
        return ok.error();
    return result;
}

std::string jobSummaryCsv(const JobResult& result)
{
    std::string out = "step,npu_rank,bench_rank,status,rows,failing_rows,first_failing_node,execution_index,"
                      "culprit,communication_before,worst_metric,worst_value,worst_node,error\n";
    for (const PairSummary& s : result.pairs) {
        const RankFailure& f = s.failure;
        const std::string status = !s.compared ? "error" : s.failingRows > 0 ? "fail" : "pass";
        out += std::to_string(s.step) + "," + csvField(s.npuRank) + "," + csvField(s.benchRank) + "," + status + ",";
        out += s.compared ? std::to_string(s.rows) + "," + std::to_string(s.failingRows) : std::string(",");
        out += "," + csvField(f.key) + "," + (f.failed ? std::to_string(f.executionIndex) : "") + ","
            + (f.failed ? (f.found ? "yes" : "no") : "") + "," + (f.failed ? std::to_string(f.commBefore) : "") + ","
            + csvField(s.worstMetric) + "," + csvField(s.worstValue) + "," + csvField(s.worstNode) + ","
            + csvField(s.error) + "\n";
    }
    return out;
}

std::string jobSummaryJson(const JobResult& result)
{
    json pairs = json::array();
    json failing = json::array();
    json failed = json::array();
    for (const PairSummary& s : result.pairs) {
        pairs.push_back(toJson(s));
        const json id = { { "step", s.step }, { "npu_rank", s.npuRank }, { "bench_rank", s.benchRank } };
        if (!s.compared)
            failed.push_back(json { { "step", s.step }, { "npu_rank", s.npuRank }, { "bench_rank", s.benchRank },
                                    { "error_id", s.errorId }, { "error", s.error } });
        else if (s.failingRows > 0)
            failing.push_back(id);
    }
    const JobOrigin& o = result.origin;
    json origin = nullptr;
    if (o.fails) {
        json chain = json::array();
        for (const CommLink& l : o.chain)
            chain.push_back(json { { "rank", l.rank }, { "rank_folder", l.rankLabel }, { "node", l.key },
                                   { "execution_index", l.executionIndex }, { "role", l.role } });
        origin = { { "step", o.step },         { "rank", o.rank }, { "rank_folder", o.rankLabel },
                   { "node", o.key },          { "execution_index", o.executionIndex },
                   { "culprit", o.found },     { "reason", o.reason }, { "communication_chain", chain } };
    }
    json j = { { "pairs", pairs },
               { "failing_pairs", failing },
               { "pairs_failed_to_compare", failed },
               { "origin", origin } };
    return j.dump(1) + "\n";
}

std::string originLine(const JobResult& result)
{
    const JobOrigin& o = result.origin;
    if (!o.fails)
        return result.failedPairs() ? "job origin: no compared pair fails (" + std::to_string(result.failedPairs())
                + " pair(s) failed to compare)"
                                    : "job origin: nothing fails";
    std::string line = "job origin: step " + std::to_string(o.step) + " " + (o.rankLabel.empty() ? "rank" : o.rankLabel)
        + " " + o.key + " (execution index " + std::to_string(o.executionIndex) + ")";
    if (!o.chain.empty()) {
        line += " via";
        for (std::size_t i = 0; i < o.chain.size() && i < 3; ++i)
            line += " " + (o.chain[i].rankLabel.empty() ? "rank" : o.chain[i].rankLabel) + ":" + o.chain[i].key;
        if (o.chain.size() > 3)
            line += " (+" + std::to_string(o.chain.size() - 3) + " more)";
    }
    return line;
}

} // namespace probescope::job
