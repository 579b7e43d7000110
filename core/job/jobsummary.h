// SPDX-License-Identifier: Apache-2.0
#pragma once

// The job summary's texts (core/job's own header, not for other folders): a pair's summary as JSON (the summary, the
// markers and what a cluster worker sends to rank 0), job_summary.csv/.json, and the writer that streams them as the
// pairs come (issue 37: the job's memory does not grow with its ranks).
#include "core/job/jobcompare.h"
#include "core/util/outputfile.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <utility>

namespace probescope::job::detail {

/// Every string core/job puts into JSON: a dump path may hold bytes that are not UTF-8 (nlohmann::json throws on
/// them when dumping). They are written as `\xNN`, as Python's decode(errors="backslashreplace") does
/// (util/utf8text.h); valid UTF-8 is unchanged.
nlohmann::json text(const std::string& s);
/// json::dump that cannot throw: every string went through text(); `replace` only guards against a slip.
std::string dumpJson(const nlohmann::json& j, int indent = -1);
/// A pair's summary as the summary, its marker and a worker's message hold it.
nlohmann::json toJson(const PairSummary& s);
/// A pair's summary read back (a marker, a worker's message); throws nlohmann::json::exception when it is not one.
PairSummary fromJson(const nlohmann::json& j);
/// "cannot write FINAL: reason": the writer's own messages may name its temporary file, which the user never sees.
Diagnostic writeError(const std::filesystem::path& final, const WriteFailure& failure);

class SummaryLists;

/**
 * job_summary.csv and .json written as the pairs come, in plan order: the CSV straight into its pending file; the
 * JSON's pairs into a spool beside it, because the document begins with the lists and the origin, known only at the
 * end. finish() writes the JSON (its head, the spool, its tail) and claims both files under the first tag N free for
 * both (util/outputfile: complete or absent, never replacing); an unfinished writer leaves nothing behind.
 */
class SummaryWriter
{
public:
    explicit SummaryWriter(const std::filesystem::path& outDir);
    ~SummaryWriter();
    SummaryWriter(const SummaryWriter&) = delete;
    SummaryWriter& operator=(const SummaryWriter&) = delete;

    void add(const PairSummary& s);
    Result<std::pair<std::filesystem::path, std::filesystem::path>> finish(const JobOrigin& origin);

private:
    void flush();
    Result<std::pair<std::filesystem::path, std::filesystem::path>> claim(PendingFile& jsonFile);

    std::filesystem::path m_outDir;
    std::optional<PendingFile> m_csv;
    std::filesystem::path m_spool;
    std::optional<Diagnostic> m_error;
    std::unique_ptr<SummaryLists> m_lists;
    std::string m_csvText;
    std::string m_pairsText;
    bool m_anyPair = false;
};

} // namespace probescope::job::detail
