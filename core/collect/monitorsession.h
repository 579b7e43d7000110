// SPDX-License-Identifier: Apache-2.0
// The monitor's writer, shared by the C++ TrainerMon (monitortorch.cpp) and the Python module's TrainerMon
// (python/monitorbind.cpp): msprobe 26's CSVWriterWithAD, AnomalyScanner and AnomalyDataWriter. LibTorch-free:
// a tensor's statistics arrive as cells (monitorStats in monitortorch.cpp computes them).
#pragma once

#include "probescope/collect/monitorconfig.h"

#include <cstdint>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

namespace probescope::collect::monitor {

/// One statistic as Python holds it before pandas writes it: an int (nans, integer min/max), a float, a text
/// (shape "[2, 4]", dtype "torch.float32") or missing (msprobe's NaN for a non-tensor value).
struct Cell
{
    enum class Kind : std::uint8_t { Int, Float, Text, Missing };
    Kind kind = Kind::Missing;
    std::int64_t i = 0;
    double f = 0;
    std::string text;
};
using Row = std::vector<Cell>; ///< one cell per config op, in order

/// An insertion-ordered tag -> row map with Python dict semantics: a tag put again keeps its place.
class Bucket
{
public:
    void put(const std::string& tag, Row row);
    void clear();
    bool empty() const { return m_tags.empty(); }
    const std::vector<std::string>& tags() const { return m_tags; }
    const Row& row(std::size_t i) const { return m_rows[i]; }

private:
    std::vector<std::string> m_tags;
    std::vector<Row> m_rows;
    std::unordered_map<std::string, std::size_t> m_index;
};

/// Where a session writes and as whom.
struct RunInfo
{
    std::int64_t rank = 0;
    std::int64_t ppStage = 0;
    std::vector<std::int64_t> groupMates;
    std::filesystem::path outputDir; ///< MONITOR_OUTPUT_DIR
    std::string timeTag;             ///< "%b%d_%H-%M-%S"; empty: now, in msprobe's time zone (UTC+8)
    std::string uid;                 ///< 8 characters; empty: random
};

/// msprobe's tag "<name>/rank<R>/<kind>" (get_summary_writer_tag_name).
std::string tagName(const std::string& name, std::int64_t rank, const std::string& kind);

/**
 * @brief One rank's monitor output: the run folder's CSVs and its anomaly.json.
 *
 * The constructor claims <output>/<time>-rank<R>-<uid> fresh, and with alert dump anomaly_detected/rank<R>, which
 * must not exist yet (msprobe deletes an earlier run's anomaly.json; ProbeScope replaces nothing). A CSV's header is
 * written when the file is first used (claimed under a free name: never replacing), rows are appended whole.
 * Errors throw CollectError naming the file.
 */
class Session
{
public:
    Session(MonitorConfig config, RunInfo info);

    const MonitorConfig& config() const { return m_config; }
    const std::filesystem::path& runDir() const { return m_runDir; }
    std::int64_t rank() const { return m_info.rank; }

    /// register_param_call_id: the next call id for `tag` (a later registration of the same tag wins).
    void registerCallId(const std::string& tag);
    /// write_metrics: the alert rules over every (tag, op) in order, then the rows appended to
    /// <prefix>_<a>-<b>.csv of `step`'s record range. The bucket is not cleared (msprobe keeps some).
    void writeMetrics(const Bucket& bucket, const std::string& prefix, std::int64_t step, bool microStepColumn);
    /// End of a written step: this step's anomalies into anomaly.json (when alert dump is on), call ids reset.
    void finishStep();

    /// The named buckets of TrainerMon's contexts: "actv:<module>" (one per target module, in the order of their
    /// first forward), and actv_grad, grad_unreduced, grad_reduced, exp_avg, exp_avg_sq, param_origin,
    /// param_updated. Unknown names throw std::out_of_range.
    Bucket& bucket(const std::string& name);
    /// step_final_hook's writes in msprobe's order (each module's actv, then actv_grad, grad_unreduced,
    /// grad_reduced, exp_avg, exp_avg_sq, param_origin, param_updated), then finishStep(). The actv buckets are
    /// cleared; the others keep their rows, as msprobe's contexts do.
    void writeStep(std::int64_t step);
    /// Anomaly messages so far (msprobe logs each).
    const std::vector<std::string>& messages() const { return m_messages; }

private:
    struct Anomaly
    {
        std::string key;
        std::string json; ///< the record's value, json.dump(indent=1) at depth 1
    };
    struct History
    {
        double avg = 0;
        bool avgIsInt = false;
    };
    void scan(const std::string& tag, const std::string& op, const Cell& cell, std::int64_t step);
    std::string csvLine(const std::vector<std::string>& cells) const;

    MonitorConfig m_config;
    RunInfo m_info;
    std::filesystem::path m_runDir;
    std::filesystem::path m_anomalyJson;
    std::set<std::string> m_createdFiles;
    std::map<std::pair<std::string, std::string>, History> m_history;
    std::unordered_map<std::string, std::int64_t> m_callIds;
    std::int64_t m_nextCallId = 0;
    std::vector<Anomaly> m_stepAnomalies;
    std::vector<Anomaly> m_written; ///< anomaly.json's records in order
    std::unordered_map<std::string, std::size_t> m_writtenIndex;
    std::vector<std::string> m_messages;
    std::vector<std::pair<std::string, Bucket>> m_actv;
    std::unordered_map<std::string, std::size_t> m_actvIndex;
    std::map<std::string, Bucket, std::less<>> m_fixed;
};

} // namespace probescope::collect::monitor
