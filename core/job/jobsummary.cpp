// SPDX-License-Identifier: Apache-2.0
#include "core/job/jobsummary.h"

#include "core/util/fileio.h"
#include "core/util/utf8text.h"

#include <algorithm>

#include <unistd.h>

namespace probescope::job {

namespace fs = std::filesystem;
using nlohmann::json;

namespace detail {

namespace {

json textList(const std::vector<std::string>& list)
{
    json out = json::array();
    for (const std::string& s : list)
        out.push_back(text(s));
    return out;
}

std::string csvField(const std::string& raw)
{
    const std::string s = backslashReplace(raw); // the CSV is UTF-8 too (see text())
    if (s.find_first_of(",\"\n") == std::string::npos)
        return s;
    std::string q = "\"";
    for (char c : s)
        q += c == '"' ? std::string("\"\"") : std::string(1, c);
    return q + "\"";
}

} // namespace

json text(const std::string& s)
{
    return json(backslashReplace(s));
}

std::string dumpJson(const json& j, int indent)
{
    return j.dump(indent, ' ', false, json::error_handler_t::replace);
}

json toJson(const PairSummary& s)
{
    const RankFailure& f = s.failure;
    json j = { { "step", s.step },
               { "npu_rank", text(s.npuRank) },
               { "bench_rank", text(s.benchRank) },
               { "rank", s.rank },
               { "npu_dump", text(s.npuDump) },
               { "bench_dump", text(s.benchDump) },
               { "compared", s.compared } };
    if (!s.onlyIn.empty())
        j["only_in"] = s.onlyIn;
    if (!s.compared) {
        j["error_id"] = text(s.errorId);
        j["error"] = text(s.error);
        return j;
    }
    j["rows"] = s.rows;
    j["failing_rows"] = s.failingRows;
    j["first_failure"] = f.failed ? json { { "node", text(f.key) },
                                           { "execution_index", f.executionIndex },
                                           { "culprit", f.found },
                                           { "communication_before", f.commBefore },
                                           { "next_communication", text(f.nextCommKey) },
                                           { "next_communication_index", f.nextCommIndex },
                                           { "summary", text(s.firstFailureSummary) } }
                                  : json(nullptr);
    j["worst_metric"] = s.worstMetric.empty() ? json(nullptr)
                                              : json { { "metric", text(s.worstMetric) },
                                                       { "value", text(s.worstValue) },
                                                       { "node", text(s.worstNode) } };
    j["files"] = textList(s.files);
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
    if (j.contains("only_in"))
        s.onlyIn = j.at("only_in").get<std::string>();
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

Diagnostic writeError(const fs::path& final, const WriteFailure& failure)
{
    const auto colon = failure.message.rfind(": ");
    const std::string reason = colon == std::string::npos ? failure.message : failure.message.substr(colon + 2);
    return makeError("job.output", fileLocation(final), "cannot write the file: " + reason);
}

constexpr std::size_t kChunk = 256 * 1024; // the summary is written in pieces of about this size
constexpr std::size_t kSpoolWindow = 1024 * 1024; // the spool is copied into job_summary.json this much at a time

// Reruns into one OUT each get a summary of their own; beyond this many the folder wants clearing.
constexpr int kSummaryNames = 1000;

constexpr const char* kCsvHeader = "step,npu_rank,bench_rank,status,rows,failing_rows,first_failing_node,"
                                   "execution_index,culprit,communication_before,worst_metric,worst_value,"
                                   "worst_node,error\n";

std::string csvRow(const PairSummary& s)
{
    const RankFailure& f = s.failure;
    const std::string status = !s.onlyIn.empty() ? s.onlyIn + "-only"
        : !s.compared                            ? "error"
        : s.failingRows > 0                      ? "fail"
                                                 : "pass";
    std::string out = std::to_string(s.step) + "," + csvField(s.npuRank) + "," + csvField(s.benchRank) + "," + status
        + ",";
    out += s.compared ? std::to_string(s.rows) + "," + std::to_string(s.failingRows) : std::string(",");
    out += "," + csvField(f.key) + "," + (f.failed ? std::to_string(f.executionIndex) : "") + ","
        + (f.failed ? (f.found ? "yes" : "no") : "") + "," + (f.failed ? std::to_string(f.commBefore) : "") + ","
        + csvField(s.worstMetric) + "," + csvField(s.worstValue) + "," + csvField(s.worstNode) + ","
        + csvField(s.error) + "\n";
    return out;
}

/// Appends `item` as a member of an array two levels deep in job_summary.json, as dumping the whole document with
/// indent 1 would write it: each of its lines moves in by two spaces (a dumped string holds no raw newline).
void appendMember(std::string& list, const json& item)
{
    list += list.empty() ? "\n  " : ",\n  ";
    for (const char c : dumpJson(item, 1)) {
        list += c;
        if (c == '\n')
            list += "  ";
    }
}

/**
 * The texts of job_summary.json but its pairs. The pairs are dumped one at a time and spliced into the document (a
 * DOM of every pair at once cost a few KB a pair: issue 37, memory flat in the ranks); the lists of failing, failed
 * and one-sided pairs are kept as their text, a few dozen bytes a pair that is in them.
 */
class SummaryLists
{
public:
    void add(const PairSummary& s)
    {
        if (!s.onlyIn.empty())
            appendMember(m_notCompared, json { { "step", s.step }, { "npu_rank", text(s.npuRank) },
                                               { "bench_rank", text(s.benchRank) }, { "only_in", s.onlyIn },
                                               { "error_id", text(s.errorId) }, { "error", text(s.error) } });
        else if (!s.compared)
            appendMember(m_failed, json { { "step", s.step }, { "npu_rank", text(s.npuRank) },
                                          { "bench_rank", text(s.benchRank) }, { "error_id", text(s.errorId) },
                                          { "error", text(s.error) } });
        else if (s.failingRows > 0)
            appendMember(m_failing,
                         json { { "step", s.step }, { "npu_rank", text(s.npuRank) }, { "bench_rank", text(s.benchRank) } });
    }

    /// The document with an empty "pairs" (nlohmann orders the keys: failing_pairs, origin, pairs, ...).
    std::string document(const JobOrigin& o) const
    {
        json origin = nullptr;
        if (o.fails) {
            json chain = json::array();
            for (const CommLink& l : o.chain)
                chain.push_back(json { { "rank", l.rank }, { "rank_folder", text(l.rankLabel) }, { "node", text(l.key) },
                                       { "execution_index", l.executionIndex }, { "role", text(l.role) } });
            origin = { { "step", o.step },         { "rank", o.rank }, { "rank_folder", text(o.rankLabel) },
                       { "node", text(o.key) },    { "execution_index", o.executionIndex },
                       { "culprit", o.found },     { "reason", text(o.reason) }, { "communication_chain", chain } };
        }
        json j = { { "pairs", json::array() },
                   { "failing_pairs", json::array() },
                   { "pairs_failed_to_compare", json::array() },
                   { "pairs_not_compared", json::array() },
                   { "origin", origin } };
        std::string out = dumpJson(j, 1) + "\n";
        splice(out, "failing_pairs", m_failing);
        splice(out, "pairs_failed_to_compare", m_failed);
        splice(out, "pairs_not_compared", m_notCompared);
        return out;
    }

    /// Where the members of "pairs" go in document(): keys at the first level are found as newline, one space, the
    /// quoted key, never inside a string.
    static std::size_t pairsAt(const std::string& document, std::size_t& length)
    {
        const std::string empty = "\n \"pairs\": []";
        length = empty.size();
        return document.find(empty);
    }
    static std::string pairsOpen() { return "\n \"pairs\": ["; }
    static std::string pairsClose() { return "\n ]"; }

private:
    static void splice(std::string& out, const std::string& key, const std::string& members)
    {
        if (members.empty())
            return;
        const std::string empty = "\n \"" + key + "\": []";
        const std::size_t at = out.find(empty);
        out.replace(at, empty.size(), "\n \"" + key + "\": [" + members + "\n ]");
    }

    std::string m_failing;
    std::string m_failed;
    std::string m_notCompared;
};

SummaryWriter::SummaryWriter(const fs::path& outDir)
    : m_outDir(outDir)
    , m_lists(std::make_unique<SummaryLists>())
{
    std::string error;
    if (auto csv = PendingFile::create(outDir / "job_summary.csv", error))
        m_csv.emplace(std::move(*csv));
    if (!m_csv) {
        m_error = makeError("job.output", fileLocation(outDir / "job_summary.csv"), "cannot write the file: " + error);
        return;
    }
    auto spool = createTempBeside(outDir / "job_summary.json", ".pairs", error);
    if (!spool) {
        m_error = makeError("job.output", fileLocation(outDir / "job_summary.json"), "cannot write the file: " + error);
        return;
    }
    m_spool = *spool;
    m_csvText = kCsvHeader;
}

SummaryWriter::~SummaryWriter()
{
    if (!m_spool.empty())
        ::unlink(m_spool.c_str());
}

void SummaryWriter::add(const PairSummary& s)
{
    m_lists->add(s);
    if (m_error)
        return;
    m_csvText += csvRow(s);
    appendMember(m_pairsText, toJson(s));
    m_anyPair = true;
    if (m_csvText.size() + m_pairsText.size() >= kChunk)
        flush();
}

Result<std::pair<fs::path, fs::path>> SummaryWriter::finish(const JobOrigin& origin)
{
    flush();
    if (m_error)
        return *m_error;
    if (auto failure = m_csv->finish())
        return writeError(m_outDir / "job_summary.csv", *failure);
    std::string error;
    auto jsonFile = PendingFile::create(m_outDir / "job_summary.json", error);
    if (!jsonFile)
        return makeError("job.output", fileLocation(m_outDir / "job_summary.json"), "cannot write the file: " + error);
    const std::string document = m_lists->document(origin);
    std::size_t length = 0;
    const std::size_t at = SummaryLists::pairsAt(document, length);
    if (!m_anyPair) {
        jsonFile->write(document);
    } else {
        auto spool = MappedFile::open(m_spool);
        if (!spool)
            return spool.error();
        jsonFile->write(std::string_view(document).substr(0, at));
        jsonFile->write(SummaryLists::pairsOpen());
        // A window at a time, each given back once written: read whole, the spool's pages (10 MB at 10,000 ranks)
        // counted in the process's memory at its end (issue 37, memory flat in the number of ranks).
        const std::string_view pairs = (*spool)->text();
        for (std::size_t from = 0; from < pairs.size(); from += kSpoolWindow) {
            const std::size_t to = std::min(pairs.size(), from + kSpoolWindow);
            jsonFile->write(pairs.substr(from, to - from));
            (*spool)->release(to);
        }
        jsonFile->write(SummaryLists::pairsClose());
        jsonFile->write(std::string_view(document).substr(at + length));
    }
    if (auto failure = jsonFile->finish())
        return writeError(m_outDir / "job_summary.json", *failure);
    return claim(*jsonFile);
}

void SummaryWriter::flush()
{
    if (m_error)
        return;
    if (!m_csvText.empty())
        m_csv->write(m_csvText); // a failure: finish() says why, naming the output
    m_csvText.clear();
    if (!m_pairsText.empty()) {
        if (auto failure = appendToOutput(m_spool, m_pairsText))
            m_error = makeError("job.output", fileLocation(m_outDir / "job_summary.json"), *failure);
    }
    m_pairsText.clear();
}

/// Claims job_summary{,_N}.csv and .json with one tag N, the first free for both: never replaces a file.
Result<std::pair<fs::path, fs::path>> SummaryWriter::claim(PendingFile& jsonFile)
{
    std::optional<fs::path> csvAt; // where the CSV is, once claimed
    for (int n = 0; n < kSummaryNames; ++n) {
        const std::string stem = n == 0 ? std::string("job_summary") : "job_summary_" + std::to_string(n);
        const fs::path csvPath = m_outDir / (stem + ".csv");
        const fs::path jsonPath = m_outDir / (stem + ".json");
        if (auto failure = csvAt ? renameNoReplace(*csvAt, csvPath) : m_csv->claim(csvPath)) {
            if (failure->nameTaken)
                continue;
            if (csvAt)
                ::unlink(csvAt->c_str());
            return writeError(csvPath, *failure);
        }
        csvAt = csvPath;
        if (auto failure = jsonFile.claim(jsonPath)) {
            if (failure->nameTaken)
                continue; // the CSV moves on with the tag: the two go together or not at all
            ::unlink(csvPath.c_str());
            return writeError(jsonPath, *failure);
        }
        return std::pair { csvPath, jsonPath };
    }
    if (csvAt)
        ::unlink(csvAt->c_str());
    return makeError("job.output", fileLocation(m_outDir / "job_summary.csv"),
                     "no free name for the job summary: job_summary.csv to job_summary_"
                         + std::to_string(kSummaryNames - 1) + ".csv (or .json) are all taken; clear the folder");
}

} // namespace detail

using namespace detail;

std::string jobSummaryCsv(const JobResult& result)
{
    std::string out = kCsvHeader;
    for (const PairSummary& s : result.pairs)
        out += csvRow(s);
    return out;
}

std::string jobSummaryJson(const JobResult& result)
{
    SummaryLists lists;
    std::string pairs;
    for (const PairSummary& s : result.pairs) {
        appendMember(pairs, toJson(s));
        lists.add(s);
    }
    std::string out = lists.document(result.origin);
    if (!pairs.empty()) {
        std::size_t length = 0;
        const std::size_t at = SummaryLists::pairsAt(out, length);
        out.replace(at, length, SummaryLists::pairsOpen() + pairs + SummaryLists::pairsClose());
    }
    return out;
}

std::string originLine(const JobResult& result)
{
    const JobOrigin& o = result.origin;
    if (!o.fails) {
        std::string why;
        if (result.failedPairs())
            why = std::to_string(result.failedPairs()) + " pair(s) failed to compare";
        if (result.oneSidedPlaces())
            why += (why.empty() ? "" : ", ") + std::to_string(result.oneSidedPlaces())
                + " place(s) on one side only not compared";
        return why.empty() ? "job origin: nothing fails" : "job origin: no compared pair fails (" + why + ")";
    }
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
