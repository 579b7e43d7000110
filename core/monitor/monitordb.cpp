// SPDX-License-Identifier: Apache-2.0
// msprobe 26 data2db --format monitor (core/monitor/csv2db.py, db_utils.py, common/db_manager.py TrendSql).
#include "core/monitor/monitordb.h"

#include "core/dump/jsondocument.h"
#include "core/graph/sqlitewriter.h"
#include "core/util/csv.h"
#include "core/util/fileio.h"
#include "core/util/folderlist.h"
#include "core/util/textposition.h"

#include <sqlite3.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <map>
#include <set>
#include <unordered_map>

namespace probescope::monitor {

namespace {

namespace fs = std::filesystem;
using graph::detail::Insert;
using graph::detail::WritableDb;

/// Data2DBConst.METRICS_TRENDVIS_SUPPORTED, in its order (the order metrics get their ids).
const std::array<std::string_view, 9> kMetrics = { "actv",           "actv_grad",    "exp_avg",       "exp_avg_sq", "grad_unreduced",
                                                   "grad_reduced",   "param_origin", "param_updated", "other" };
/// Data2DBConst.OP_TRENDVIS_SUPPORTED, in its order (the order of trend_data's statistic columns).
const std::array<std::string_view, 14> kStats = { "norm", "min",         "max",   "zeros",       "nans",   "mean",   "entropy",
                                                  "softmax_max", "sr", "kernel_norm", "std_x", "jacobian", "proxy", "token_similarity" };

bool isMetric(std::string_view m)
{
    return std::find(kMetrics.begin(), kMetrics.end(), m) != kMetrics.end();
}

std::size_t statIndex(std::string_view s)
{
    return static_cast<std::size_t>(std::find(kStats.begin(), kStats.end(), s) - kStats.begin());
}

bool allDigits(std::string_view s)
{
    return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

/// `<digits>-<digits>.csv` at the start of `s` (re.match, so anything may follow in v1).
bool stepRangeCsv(std::string_view s, bool whole)
{
    std::size_t i = 0;
    const auto digits = [&] {
        const std::size_t start = i;
        while (i < s.size() && s[i] >= '0' && s[i] <= '9')
            ++i;
        return i > start;
    };
    if (!digits() || i >= s.size() || s[i] != '-')
        return false;
    ++i;
    if (!digits() || s.substr(i, 4) != ".csv")
        return false;
    return !whole || i + 4 == s.size();
}

/// get_metric_name_from_filename (v1: `<metric>_<a>-<b>.csv`), or the v2 writer's `<metric>_step<a>-<b>.csv`.
std::string metricOfFile(const std::string& name, bool v2)
{
    const auto lastUnderscore = name.rfind('_');
    if (lastUnderscore == std::string::npos)
        return "";
    const std::string candidate = name.substr(0, lastUnderscore);
    if (!isMetric(candidate))
        return "";
    std::string_view rest = std::string_view(name).substr(lastUnderscore + 1);
    if (v2) {
        if (!rest.starts_with("step"))
            return "";
        return stepRangeCsv(rest.substr(4), true) ? candidate : "";
    }
    return stepRangeCsv(rest, false) ? candidate : "";
}

/// pandas' default NA strings: a cell holding one is NaN (NULL in the db).
bool isNaText(std::string_view s)
{
    static const std::set<std::string_view> na = { "",     "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND",
                                                   "1.#QNAN", "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null" };
    return na.count(s) != 0;
}

std::string_view strip(std::string_view s)
{
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())))
        s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())))
        s.remove_suffix(1);
    return s;
}

/// Python float() of a text: decimal or exponent numbers, inf/infinity/nan with a sign; nullopt where it raises.
std::optional<double> pyFloat(std::string_view text)
{
    std::string_view s = strip(text);
    if (s.empty())
        return std::nullopt;
    std::string lower(s);
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    std::string_view body = lower;
    double sign = 1;
    if (body.front() == '+' || body.front() == '-') {
        sign = body.front() == '-' ? -1 : 1;
        body.remove_prefix(1);
    }
    if (body == "inf" || body == "infinity")
        return sign * HUGE_VAL;
    if (body == "nan")
        return std::nan("");
    if (body.empty() || body.front() == '+' || body.front() == '-')
        return std::nullopt;
    for (const char c : body) {
        if (!((c >= '0' && c <= '9') || c == '.' || c == 'e' || c == '+' || c == '-'))
            return std::nullopt;
    }
    double v = 0;
    const auto [ptr, ec] = std::from_chars(body.data(), body.data() + body.size(), v);
    if (ptr != body.data() + body.size() || (ec != std::errc() && ec != std::errc::result_out_of_range))
        return std::nullopt;
    if (ec == std::errc::result_out_of_range)
        v = std::strtod(std::string(body).c_str(), nullptr);
    return sign * v;
}

/// process_tensor_value of a cell as pandas read it: NA text and NaN -> NULL, inf -> 1e9 + 1, -inf -> -1e9 - 1, and
/// values clamped to [-1e9, 1e9].
std::optional<double> statValue(std::string_view cell)
{
    if (isNaText(cell))
        return std::nullopt;
    const auto v = pyFloat(cell);
    if (!v || std::isnan(*v))
        return std::nullopt;
    if (std::isinf(*v))
        return *v > 0 ? 1e9 + 1 : -1e9 - 1;
    return std::clamp(*v, -1e9, 1e9);
}

/// int() of a cell (an int column, or a float column holding a whole number); nullopt where msprobe skips the row.
std::optional<long long> intValue(std::string_view cell)
{
    const std::string_view s = strip(cell);
    long long v = 0;
    const auto [ptr, ec] = std::from_chars(s.data() + (s.starts_with('+') ? 1 : 0), s.data() + s.size(), v);
    if (ec == std::errc() && ptr == s.data() + s.size() && !s.empty())
        return v;
    const auto d = isNaText(cell) ? std::nullopt : pyFloat(s);
    if (d && std::isfinite(*d) && std::trunc(*d) == *d && std::fabs(*d) < 9e18)
        return static_cast<long long>(*d);
    return std::nullopt;
}

struct CsvFile
{
    fs::path path;
    std::string metric;
};

struct RankFolder
{
    std::string rank; ///< as the folder name gives it (msprobe keeps the text; SQLite stores it as an integer)
    long long rankNumber = 0;
    fs::path dir;
    std::vector<CsvFile> files;
};

/// One CSV as its rows are read: header positions and the records.
struct ParsedCsv
{
    std::vector<CsvRecord> records;
    int name = -1, vpp = -1, step = -1, micro = -1;
    std::vector<std::pair<std::size_t, int>> stats; ///< (kStats index, column)
};

Result<ParsedCsv> parseCsv(const fs::path& path)
{
    auto text = readTextFile(path);
    if (!text)
        return text.error();
    ParsedCsv out;
    out.records = splitCsvRecords(*text, false);
    if (out.records.empty())
        return out; // pandas: EmptyDataError; msprobe's batch fails. Nothing to read here.
    // A quoted field that runs to the end of the file (a file cut short): pandas refuses the whole file ("EOF inside
    // string") and msprobe loses its rank's batch with one log line, exit 0. ProbeScope says which file, exit 1,
    // rather than a db silently without that rank's rows (docs/monitor.md).
    if (out.records.back().unclosedQuote)
        return makeError("monitor.csv-cut", SourceLocation { path.string(), std::nullopt, out.records.back().line, 0 },
                         "a quoted field runs from this line to the end of the file (cut short?); nothing is written");
    const auto& header = out.records.front().fields;
    for (std::size_t c = 0; c < header.size(); ++c) {
        const std::string& h = header[c];
        const int col = static_cast<int>(c);
        if (h == "name" && out.name < 0)
            out.name = col;
        else if (h == "vpp_stage" && out.vpp < 0)
            out.vpp = col;
        else if (h == "step" && out.step < 0)
            out.step = col;
        else if (h == "micro_step" && out.micro < 0)
            out.micro = col;
        else if (statIndex(h) < kStats.size())
            out.stats.emplace_back(statIndex(h), col);
    }
    return out;
}

struct RowKey
{
    std::string name;
    long long vpp = 0, step = 0, micro = 0;
};

/// The target fields of a row, as msprobe reads them (str(name), int(vpp_stage), int(step) default 0,
/// int(micro_step) default 0, then the mapping); nullopt with `why` for a row msprobe skips.
std::optional<RowKey> rowKey(const ParsedCsv& csv, const CsvRecord& r, const Data2DbOptions& options, std::string& why)
{
    const auto cell = [&](int c) -> std::optional<std::string_view> {
        if (c < 0 || static_cast<std::size_t>(c) >= r.fields.size())
            return std::nullopt;
        return std::string_view(r.fields[static_cast<std::size_t>(c)]);
    };
    RowKey k;
    if (csv.name < 0) {
        why = "KeyError: 'name'";
        return std::nullopt;
    }
    const auto name = cell(csv.name);
    k.name = name && !isNaText(*name) ? std::string(*name) : std::string("nan");
    if (csv.vpp < 0) {
        why = "KeyError: 'vpp_stage'";
        return std::nullopt;
    }
    for (const auto& [column, target] : { std::pair { csv.vpp, &k.vpp }, std::pair { csv.step, &k.step }, std::pair { csv.micro, &k.micro } }) {
        if (column < 0)
            continue; // row.get(..., 0)
        const auto v = cell(column);
        const auto n = v ? intValue(*v) : std::nullopt;
        if (!n) {
            why = "ValueError: invalid literal for int(): '" + std::string(v.value_or("nan")) + "'";
            return std::nullopt;
        }
        *target = *n;
    }
    for (const auto& [from, to] : options.mapping) {
        if (from.empty())
            continue;
        std::string replaced;
        std::size_t at = 0;
        for (std::size_t hit; (hit = k.name.find(from, at)) != std::string::npos; at = hit + from.size())
            replaced.append(k.name, at, hit - at).append(to);
        replaced.append(k.name, at, std::string::npos);
        k.name = std::move(replaced);
    }
    return k;
}

std::string joinStats(const std::set<std::size_t>& stats)
{
    std::string out;
    for (const std::size_t s : stats)
        out += (out.empty() ? "" : ",") + std::string(kStats[s]);
    return out;
}

using TargetKey = std::tuple<std::string, long long, long long>;

// ---- stage 1: the folder ----

/// The rank folders of `dataDir` (v1 and v2 names) with their CSVs of a known metric; a rank without one is a warning.
Result<std::vector<RankFolder>> findRankFolders(const fs::path& dataDir, Data2DbResult& result)
{
    auto listing = listFolder(dataDir, 10000000, FolderOrder::ByName);
    if (!listing)
        return listing.error();
    std::vector<RankFolder> ranks;
    std::map<std::string, fs::path> seenRanks;
    for (const FolderEntry& e : *listing) {
        if (!e.isFolder)
            continue;
        std::optional<std::string> rank = monitorFolderRank(e.name);
        const bool v2 = !rank && e.name.starts_with("rank_") && allDigits(std::string_view(e.name).substr(5));
        if (v2)
            rank = e.name.substr(5);
        if (!rank)
            continue;
        if (const auto [it, fresh] = seenRanks.emplace(*rank, dataDir / e.name); !fresh)
            return makeError("monitor.duplicate-rank", fileLocation(dataDir / e.name),
                             "this folder and " + it->second.string() + " are both rank " + *rank
                                 + " (msprobe 26 would take one of them, whichever the file system lists last)");
        RankFolder folder { *rank, std::stoll(*rank), dataDir / e.name, {} };
        auto files = listFolder(folder.dir, 10000000, FolderOrder::ByName);
        if (!files)
            return files.error();
        for (const FolderEntry& f : *files) {
            const std::string metric = metricOfFile(f.name, v2);
            if (!metric.empty() && !f.isFolder)
                folder.files.push_back(CsvFile { folder.dir / f.name, metric });
        }
        if (folder.files.empty()) {
            result.warnings.push_back(makeWarning("monitor.empty-rank", fileLocation(folder.dir),
                                                  "Rank " + *rank + " has no files, skipped"));
            continue;
        }
        ranks.push_back(std::move(folder));
    }
    if (ranks.empty())
        return makeError("monitor.no-data", fileLocation(dataDir),
                         "No valid monitor CSV files here: data2db --format monitor reads <time>-rank<R>-<uid>/<metric>_<a>-<b>.csv "
                         "(or monitor_v2's rank_<R>/<metric>_step<a>-<b>.csv)");
    return ranks;
}

// ---- stage 2: the CSVs ----

/// What every CSV holds, read once before anything is written.
struct PreScan
{
    std::vector<std::string> metricOrder;                  // metrics with targets, first seen
    std::map<std::string, std::vector<TargetKey>> targets; // per metric, first-seen order
    std::vector<std::string> statMetricOrder;              // metric_stats_agg's keys, first seen
    std::map<std::string, std::set<std::size_t>> metricStats;
    std::map<long long, long long> prefix; // step -> its first global micro step (--micro_step)
    long long globalMin = 0;
    long long globalMax = 0;
    long long maxRank = 0;
    std::vector<std::string> metrics;     // insert_dimensions' order
    std::vector<std::size_t> statColumns; // kStats order
};

/// msprobe's _pre_scan (targets per metric in first-seen order, statistic columns per metric, the step range) and
/// _build_global_micro_step_mapping; skipped rows are warnings (the first 20, then a count).
Result<PreScan> preScan(const std::vector<RankFolder>& ranks, const fs::path& dataDir, const Data2DbOptions& options,
                        Data2DbResult& result)
{
    std::vector<std::string> metricOrder;                  // metrics with targets, first seen
    std::map<std::string, std::vector<TargetKey>> targets; // per metric, first-seen order
    std::map<std::string, std::set<TargetKey>> targetSeen;
    std::vector<std::string> statMetricOrder; // metric_stats_agg's keys, first seen
    std::map<std::string, std::set<std::size_t>> metricStats;
    std::set<std::size_t> allStats;
    std::optional<long long> minStep;
    long long maxStep = 0;
    std::map<long long, long long> microCount; // step -> micro steps (the most of any rank)
    std::size_t warned = 0;
    const auto skipRow = [&](const fs::path& file, std::uint32_t line, const std::string& why) {
        if (++warned <= 20)
            result.warnings.push_back(makeWarning("monitor.row-skipped", SourceLocation { file.string(), std::nullopt, line, 0 },
                                                  "Skip invalid row: " + why));
    };
    for (const RankFolder& rank : ranks) {
        for (const CsvFile& file : rank.files) {
            auto csv = parseCsv(file.path);
            if (!csv)
                return csv.error();
            ++result.files;
            if (!metricStats.count(file.metric))
                statMetricOrder.push_back(file.metric);
            auto& stats = metricStats[file.metric];
            for (const auto& [s, column] : csv->stats) {
                stats.insert(s);
                allStats.insert(s);
            }
            for (std::size_t r = 1; r < csv->records.size(); ++r) {
                std::string why;
                auto key = rowKey(*csv, csv->records[r], options, why);
                if (!key) {
                    skipRow(file.path, csv->records[r].line, why);
                    continue;
                }
                if (options.microStep) {
                    auto& count = microCount[key->step];
                    count = std::max(count, key->micro + 1);
                    key->micro = 0;
                } else {
                    minStep = minStep ? std::min(*minStep, key->step) : key->step;
                    maxStep = std::max(maxStep, key->step);
                }
                TargetKey t { key->name, key->vpp, key->micro };
                if (!targets.count(file.metric))
                    metricOrder.push_back(file.metric);
                if (targetSeen[file.metric].insert(t).second)
                    targets[file.metric].push_back(std::move(t));
            }
        }
    }
    if (warned > 20)
        result.warnings.push_back(makeWarning("monitor.row-skipped", fileLocation(dataDir),
                                              "and " + std::to_string(warned - 20) + " more rows skipped (" + std::to_string(warned) + " in all)"));
    if (allStats.empty())
        return makeError("monitor.no-stats", fileLocation(dataDir),
                         "the monitor CSVs have no statistic column (norm, min, max, zeros, nans, mean, ...): msprobe 26 fails "
                         "creating trend_data here");
    // _build_global_micro_step_mapping
    std::map<long long, long long> prefix;
    long long globalMin = minStep.value_or(0);
    long long globalMax = maxStep;
    if (options.microStep) {
        long long sum = 0;
        for (const auto& [step, count] : microCount) {
            prefix[step] = sum;
            sum += count;
        }
        globalMin = 0;
        globalMax = microCount.empty() ? 0 : sum - 1;
    }
    long long maxRank = 0;
    for (const RankFolder& r : ranks)
        maxRank = std::max(maxRank, r.rankNumber);
    std::vector<std::string> metrics; // insert_dimensions' order
    for (const std::string_view m : kMetrics) {
        if (targets.count(std::string(m)))
            metrics.emplace_back(m);
    }
    std::vector<std::size_t> statColumns(allStats.begin(), allStats.end()); // kStats order
    return PreScan { std::move(metricOrder), std::move(targets),    std::move(statMetricOrder), std::move(metricStats),
                     std::move(prefix),      globalMin,             globalMax,                  maxRank,
                     std::move(metrics),     std::move(statColumns) };
}

// ---- stage 3: the tables ----

/// TrendSql's texts, so that sqlite_master holds msprobe's CREATE statements.
std::optional<std::string> createDimensionTables(WritableDb& db)
{
    const char* tables[] = {
        "\n        CREATE TABLE IF NOT EXISTS monitoring_targets (\n            target_id INTEGER PRIMARY KEY AUTOINCREMENT,\n"
        "            target_name TEXT NOT NULL,\n            vpp_stage INTEGER NOT NULL,\n"
        "            micro_step INTEGER NOT NULL DEFAULT 0,\n            UNIQUE(target_name, vpp_stage, micro_step)\n        )",
        "\n        CREATE TABLE IF NOT EXISTS monitoring_metrics (\n            metric_id INTEGER PRIMARY KEY AUTOINCREMENT,\n"
        "            metric_name TEXT UNIQUE NOT NULL\n        )",
        "\n        CREATE TABLE IF NOT EXISTS monitoring_tags (\n            tag_id INTEGER PRIMARY KEY AUTOINCREMENT,\n"
        "            tag_name TEXT NOT NULL,\n            category TEXT NOT NULL,\n            metric_id INTEGER NOT NULL,\n"
        "            UNIQUE(tag_name, category, metric_id),\n"
        "            FOREIGN KEY (metric_id) REFERENCES monitoring_metrics(metric_id)\n        )",
        "\n        CREATE TABLE IF NOT EXISTS tag_target_mapping (\n            tag_id INTEGER NOT NULL,\n"
        "            target_id INTEGER NOT NULL,\n            PRIMARY KEY (tag_id, target_id),\n"
        "            FOREIGN KEY (tag_id) REFERENCES monitoring_tags(tag_id),\n"
        "            FOREIGN KEY (target_id) REFERENCES monitoring_target(target_id)\n        )",
    };
    for (const char* sql : tables) {
        if (auto e = db.exec(sql))
            return e;
    }
    return std::nullopt;
}

/// insert_dimensions (targets, metrics), global_stats and trend_data's table.
std::optional<std::string> writeDimensions(WritableDb& db, PreScan& plan)
{
    auto& targets = plan.targets;
    auto& metricStats = plan.metricStats;
    const auto& metrics = plan.metrics;
    const auto& statMetricOrder = plan.statMetricOrder;
    const auto& statColumns = plan.statColumns;
    {
        Insert target(db.handle(), "INSERT OR IGNORE INTO monitoring_targets (target_name, vpp_stage, micro_step) VALUES (?, ?, ?)");
        for (const std::string& m : metrics) {
            for (const auto& [name, vpp, micro] : targets[m]) {
                target.text(1, name);
                target.integer(2, vpp);
                target.integer(3, micro);
                if (!target.run())
                    return std::string("cannot insert a target: ") + sqlite3_errmsg(db.handle());
            }
        }
        Insert metric(db.handle(), "INSERT OR IGNORE INTO monitoring_metrics (metric_name) VALUES (?)");
        for (const std::string& m : metrics) {
            metric.text(1, m);
            if (!metric.run())
                return std::string("cannot insert a metric: ") + sqlite3_errmsg(db.handle());
        }
    }
    // global_stats: min_step, max_step, max_rank, then one column per metric with its statistics.
    std::string columns = "min_step INTEGER DEFAULT 0, max_step INTEGER DEFAULT 0, max_rank INTEGER DEFAULT 0";
    for (const std::string& m : statMetricOrder)
        columns += ", " + m + " TEXT DEFAULT NULL";
    if (auto e = db.exec("\n        CREATE TABLE IF NOT EXISTS global_stats (\n            " + columns + "\n        )"))
        return e;
    {
        std::string sql = "INSERT OR IGNORE INTO global_stats VALUES (?, ?, ?";
        for (std::size_t i = 0; i < statMetricOrder.size(); ++i)
            sql += ", ?";
        Insert row(db.handle(), sql + ")");
        row.integer(1, plan.globalMin);
        row.integer(2, plan.globalMax);
        row.integer(3, plan.maxRank);
        for (std::size_t i = 0; i < statMetricOrder.size(); ++i)
            row.text(static_cast<int>(4 + i), joinStats(metricStats[statMetricOrder[i]]));
        if (!row.run())
            return std::string("cannot insert global_stats: ") + sqlite3_errmsg(db.handle());
    }
    std::string statSql;
    for (const std::size_t s : statColumns)
        statSql += (statSql.empty() ? "" : ", ") + std::string(kStats[s]) + " REAL DEFAULT NULL";
    if (auto e = db.exec("\n        CREATE TABLE IF NOT EXISTS trend_data (\n            rank INTEGER NOT NULL,\n"
                         "            step INTEGER NOT NULL,\n            target_id INTEGER NOT NULL,\n"
                         "            metric_id INTEGER NOT NULL,\n            "
                         + statSql
                         + ",\n            PRIMARY KEY (rank, step, target_id, metric_id),\n"
                           "            FOREIGN KEY (target_id) REFERENCES monitoring_targets(target_id),\n"
                           "            FOREIGN KEY (metric_id) REFERENCES monitoring_metrics(metric_id)\n"
                           "        ) WITHOUT ROWID"))
        return e;
    return std::nullopt;
}

/// The ids SQLite gave the metrics and targets.
struct DimensionIds
{
    std::map<std::string, std::int64_t> metricIds;
    std::map<TargetKey, std::int64_t> targetIds;
};

DimensionIds readDimensionIds(WritableDb& db)
{
    DimensionIds ids;
    std::map<std::string, std::int64_t>& metricIds = ids.metricIds;
    {
        Insert select(db.handle(), "SELECT metric_id, metric_name FROM monitoring_metrics");
        while (select.row())
            metricIds[select.columnText(1)] = select.columnInteger(0);
    }
    std::map<TargetKey, std::int64_t>& targetIds = ids.targetIds;
    {
        Insert select(db.handle(), "SELECT target_id, target_name, vpp_stage, micro_step FROM monitoring_targets");
        while (select.row())
            targetIds[TargetKey { select.columnText(1), select.columnInteger(2), select.columnInteger(3) }] = select.columnInteger(0);
    }
    return ids;
}

/// extract_tags_from_processed_targets: per metric its tags, then each target's (target, tag) pairs.
std::optional<std::string> writeTags(WritableDb& db, PreScan& plan, DimensionIds& ids)
{
    auto& targets = plan.targets;
    const auto& metricOrder = plan.metricOrder;
    auto& metricIds = ids.metricIds;
    auto& targetIds = ids.targetIds;
    Insert tag(db.handle(), "INSERT OR IGNORE INTO monitoring_tags (tag_name, category, metric_id) VALUES (?, ?, ?)");
    Insert mapping(db.handle(), "INSERT OR IGNORE INTO tag_target_mapping (target_id, tag_id) VALUES (?, ?)");
    Insert select(db.handle(), "SELECT tag_id, tag_name, category, metric_id FROM monitoring_tags");
    for (const std::string& m : metricOrder) {
        const std::int64_t metricId = metricIds.count(m) ? metricIds[m] : 0;
        std::set<std::pair<std::string, std::string>> all;
        std::vector<std::pair<std::int64_t, std::vector<std::pair<std::string, std::string>>>> perTarget;
        for (const TargetKey& t : targets[m]) {
            auto tags = tagsOfTarget(std::get<0>(t));
            all.insert(tags.begin(), tags.end());
            perTarget.emplace_back(targetIds[t], std::move(tags));
        }
        if (all.empty())
            continue;
        for (const auto& [name, category] : all) {
            tag.text(1, name);
            tag.text(2, category);
            tag.integer(3, metricId);
            if (!tag.run())
                return std::string("cannot insert a tag: ") + sqlite3_errmsg(db.handle());
        }
        std::map<std::pair<std::string, std::string>, std::int64_t> tagIds;
        while (select.row()) {
            if (select.columnInteger(3) == metricId)
                tagIds[{ select.columnText(1), select.columnText(2) }] = select.columnInteger(0);
        }
        select.reset();
        for (const auto& [targetId, tags] : perTarget) {
            for (const auto& t : tags) {
                const auto it = tagIds.find(t);
                if (it == tagIds.end())
                    continue;
                mapping.integer(1, targetId);
                mapping.integer(2, it->second);
                if (!mapping.run())
                    return std::string("cannot insert a tag mapping: ") + sqlite3_errmsg(db.handle());
            }
        }
    }
    return std::nullopt;
}

/// process_single_rank: every row of every CSV, its statistics in trend_data's column order.
std::optional<std::string> writeTrendRows(WritableDb& db, const std::vector<RankFolder>& ranks, const PreScan& plan,
                                          const DimensionIds& ids, const Data2DbOptions& options, Data2DbResult& result)
{
    const auto& statColumns = plan.statColumns;
    const auto& prefix = plan.prefix;
    const auto& metricIds = ids.metricIds;
    const auto& targetIds = ids.targetIds;
    std::string insertSql = "INSERT OR IGNORE INTO trend_data VALUES (?, ?, ?, ?";
    for (std::size_t i = 0; i < statColumns.size(); ++i)
        insertSql += ", ?";
    Insert row(db.handle(), insertSql + ")");
    if (!row.valid())
        return std::string("cannot prepare the trend_data insert: ") + sqlite3_errmsg(db.handle());
    for (const RankFolder& rank : ranks) {
        std::size_t inserted = 0;
        for (const CsvFile& file : rank.files) {
            const auto metricIt = metricIds.find(file.metric);
            if (metricIt == metricIds.end())
                continue;
            auto csv = parseCsv(file.path);
            if (!csv)
                return csv.error().format();
            std::vector<int> columnOf(kStats.size(), -1);
            for (const auto& [s, column] : csv->stats) {
                if (columnOf[s] < 0)
                    columnOf[s] = column;
            }
            for (std::size_t r = 1; r < csv->records.size(); ++r) {
                const CsvRecord& record = csv->records[r];
                std::string why;
                const auto key = rowKey(*csv, record, options, why);
                if (!key)
                    continue;
                long long step = key->step;
                long long micro = key->micro;
                if (options.microStep) {
                    const auto p = prefix.find(key->step);
                    step = (p == prefix.end() ? 0 : p->second) + key->micro;
                    micro = 0;
                }
                const auto target = targetIds.find(TargetKey { key->name, key->vpp, micro });
                if (target == targetIds.end())
                    continue;
                row.integer(1, rank.rankNumber);
                row.integer(2, step);
                row.integer(3, target->second);
                row.integer(4, metricIt->second);
                for (std::size_t i = 0; i < statColumns.size(); ++i) {
                    const int column = columnOf[statColumns[i]];
                    const auto v = column >= 0 && static_cast<std::size_t>(column) < record.fields.size()
                        ? statValue(record.fields[static_cast<std::size_t>(column)])
                        : std::nullopt;
                    if (v)
                        row.real(static_cast<int>(5 + i), *v);
                    else
                        row.null(static_cast<int>(5 + i));
                }
                if (!row.run())
                    return std::string("cannot insert a trend row: ") + sqlite3_errmsg(db.handle());
                inserted += static_cast<std::size_t>(sqlite3_changes(db.handle()));
            }
        }
        result.rows += inserted;
        result.log.push_back("Rank " + rank.rank + " inserted " + std::to_string(inserted) + " rows");
    }
    return std::nullopt;
}

} // namespace

std::optional<std::string> monitorFolderRank(const std::string& name)
{
    const auto wordOrDash = [](unsigned char c) { return std::isalnum(c) || c == '_' || c == '-' || c >= 0x80; };
    // ([\w-]{0,20}) is greedy and backtracks: the longest prefix first.
    std::size_t maxPrefix = 0;
    while (maxPrefix < name.size() && maxPrefix < 20 && wordOrDash(static_cast<unsigned char>(name[maxPrefix])))
        ++maxPrefix;
    for (std::size_t len = maxPrefix + 1; len-- > 0;) {
        if (name.compare(len, 5, "-rank") != 0)
            continue;
        const std::size_t p = len + 5;
        std::size_t k = 0;
        while (k < 5 && p + k < name.size() && name[p + k] >= '0' && name[p + k] <= '9')
            ++k;
        for (std::size_t d = k; d >= 1; --d) {
            if (p + d < name.size() && name[p + d] == '-')
                return name.substr(p, d);
        }
    }
    return std::nullopt;
}

std::vector<std::pair<std::string, std::string>> tagsOfTarget(const std::string& name)
{
    std::vector<std::string> parts;
    std::size_t start = 0;
    for (;;) {
        const std::size_t dot = name.find('.', start);
        parts.push_back(name.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
        if (dot == std::string::npos)
            break;
        start = dot + 1;
    }
    std::reverse(parts.begin(), parts.end());
    std::set<std::pair<std::string, std::string>> tags;
    for (std::size_t i = 0; i < parts.size(); ++i) {
        if (!allDigits(parts[i])) {
            tags.emplace(parts[i], "module");
            continue;
        }
        if (i + 1 == parts.size() || allDigits(parts[i + 1]))
            continue;
        tags.emplace(parts[i + 1] + "." + parts[i], "layer");
    }
    return { tags.begin(), tags.end() };
}

Result<std::vector<std::pair<std::string, std::string>>> readNameMapping(const fs::path& path)
{
    auto text = readTextFile(path);
    if (!text)
        return text.error();
    auto parsed = dump::JsonDocument::parse(*text, path.string());
    for (const Diagnostic& d : parsed.diagnostics) {
        if (d.severity == Severity::Error)
            return d;
    }
    if (!parsed.document || !parsed.document->root().isObject())
        return makeError("monitor.mapping", fileLocation(path), "--mapping needs a JSON object of names to names");
    const auto root = parsed.document->root();
    std::vector<std::pair<std::string, std::string>> out;
    for (std::uint32_t i = 0; i < root.size(); ++i) {
        const auto v = root.at(i);
        if (!v.isString())
            return makeError("monitor.mapping", locate(*text, v.offset(), path.string()),
                             "the mapping of \"" + std::string(root.keyAt(i)) + "\" is not a text");
        const std::string key(root.keyAt(i));
        auto it = std::find_if(out.begin(), out.end(), [&](const auto& p) { return p.first == key; });
        if (it != out.end())
            it->second = std::string(v.asString()); // json.load: the last value, the first place
        else
            out.emplace_back(key, std::string(v.asString()));
    }
    return out;
}

bool isMonitorOutput(const fs::path& dir)
{
    auto listing = listFolder(dir, 100000, FolderOrder::ByName);
    if (!listing)
        return false;
    for (const FolderEntry& e : *listing) {
        if (e.isFolder && (monitorFolderRank(e.name) || (e.name.starts_with("rank_") && e.name.size() > 5 && allDigits(std::string_view(e.name).substr(5)))))
            return true;
    }
    return false;
}

Result<Data2DbResult> monitorToDb(const fs::path& dataDir, const fs::path& outDir, const Data2DbOptions& options)
{
    Data2DbResult result;
    auto ranks = findRankFolders(dataDir, result);
    if (!ranks)
        return ranks.error();
    auto plan = preScan(*ranks, dataDir, options, result);
    if (!plan)
        return plan.error();

    std::error_code ec;
    fs::create_directories(outDir, ec);
    if (ec)
        return makeError("monitor.write", fileLocation(outDir), "cannot create the db folder: " + ec.message());
    const fs::path dbPath = outDir / "monitor_data.trend.db";
    if (fs::symlink_status(dbPath, ec).type() != fs::file_type::not_found)
        return makeError("monitor.db-exists", fileLocation(dbPath),
                         "exists already: ProbeScope never replaces a file (msprobe deletes it); remove it or choose another --db");

    auto written = graph::detail::writeNewDb(
        outDir, "monitor_data", ".trend.db", graph::detail::DbName::Exact,
        [&](WritableDb& db) -> std::optional<std::string> {
            if (auto e = createDimensionTables(db))
                return e;
            if (auto e = db.exec("BEGIN"))
                return e;
            if (auto e = writeDimensions(db, *plan))
                return e;
            DimensionIds ids = readDimensionIds(db);
            if (auto e = writeTags(db, *plan, ids))
                return e;
            if (auto e = writeTrendRows(db, *ranks, *plan, ids, options, result))
                return e;
            if (auto e = db.exec("COMMIT"))
                return e;
            return std::nullopt;
        },
        "monitor.write");
    if (!written)
        return written.error();
    result.db = *written;
    result.ranks = ranks->size();
    return result;
}

} // namespace probescope::monitor
