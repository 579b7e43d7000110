// SPDX-License-Identifier: Apache-2.0
// msprobe 26's monitor writer (pytorch/monitor/data_writers.py CSVWriterWithAD, core/monitor/anomaly_processor.py),
// byte for byte where a reader can see it: the CSV cells are pandas' (DataFrame.round(ndigits), fillna("nan"),
// to_csv's repr of floats), the alert messages and anomaly.json are Python's (json.dump indent=1).
#include "core/collect/monitorsession.h"

#include "core/collect/dumpfolder.h"
#include "core/util/outputfile.h"
#include "core/util/pytext.h"
#include "probescope/collect/config.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstddef>
#include <stdexcept>
#include <cmath>
#include <ctime>
#include <random>

namespace fs = std::filesystem;

namespace probescope::collect::monitor {

void Bucket::put(const std::string& tag, Row row)
{
    auto [it, inserted] = m_index.try_emplace(tag, m_tags.size());
    if (inserted) {
        m_tags.push_back(tag);
        m_rows.push_back(std::move(row));
    } else {
        m_rows[it->second] = std::move(row);
    }
}

void Bucket::clear()
{
    m_tags.clear();
    m_rows.clear();
    m_index.clear();
}

std::string tagName(const std::string& name, std::int64_t rank, const std::string& kind)
{
    return name + "/rank" + std::to_string(rank) + "/" + kind;
}

namespace {

[[noreturn]] void ioError(const fs::path& path, const std::string& message)
{
    throw CollectError("collect.monitor-io", path.string() + ": error [collect.monitor-io]: " + message);
}

/// msprobe's folder time: datetime.now(Asia/Shanghai).strftime('%b%d_%H-%M-%S') (UTC+8, no summer time).
std::string shanghaiTimeTag()
{
    const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now()) + 8 * 3600;
    std::tm tm {};
    ::gmtime_r(&now, &tm);
    char text[32];
    std::strftime(text, sizeof text, "%b%d_%H-%M-%S", &tm);
    return text;
}

std::string randomUid()
{
    std::random_device device;
    std::mt19937_64 engine((static_cast<std::uint64_t>(device()) << 32) ^ device());
    static constexpr char kHex[] = "0123456789abcdef";
    std::string uid(8, '0');
    for (char& c : uid)
        c = kHex[engine() % 16];
    return uid;
}

/// numpy.round(x, ndigits) (what DataFrame.round does to a float column): rint(x * 10^n) / 10^n.
double roundLikeNumpy(double x, int ndigits)
{
    const double scale = std::pow(10.0, ndigits);
    return std::nearbyint(x * scale) / scale;
}

std::string pyInt(std::int64_t v)
{
    return std::to_string(v);
}

/// Python's repr of the value handed to add_scalar (an int stays an int).
std::string pyValue(const Cell& cell)
{
    if (cell.kind == Cell::Kind::Int)
        return pyInt(cell.i);
    return pyFloatRepr(cell.kind == Cell::Kind::Float ? cell.f : std::nan(""));
}

/// repr of a str: single quotes unless the text holds one and no double quote.
std::string pyStrRepr(const std::string& s)
{
    const bool useDouble = s.find('\'') != std::string::npos && s.find('"') == std::string::npos;
    const char q = useDouble ? '"' : '\'';
    std::string out(1, q);
    for (const unsigned char c : s) {
        if (c == '\\')
            out += "\\\\";
        else if (c == static_cast<unsigned char>(q))
            out += std::string("\\") + q;
        else if (c == '\n')
            out += "\\n";
        else if (c == '\r')
            out += "\\r";
        else if (c == '\t')
            out += "\\t";
        else if (c < 0x20 || c == 0x7f) {
            static constexpr char kHex[] = "0123456789abcdef";
            out += "\\x";
            out += kHex[c >> 4];
            out += kHex[c & 15];
        } else
            out += static_cast<char>(c);
    }
    out += q;
    return out;
}

std::vector<std::string> split(const std::string& s, char sep)
{
    std::vector<std::string> parts;
    std::size_t start = 0;
    for (;;) {
        const std::size_t p = s.find(sep, start);
        parts.push_back(s.substr(start, p == std::string::npos ? std::string::npos : p - start));
        if (p == std::string::npos)
            return parts;
        start = p + 1;
    }
}

/// A CSV field as Python's csv module writes it (QUOTE_MINIMAL).
void appendCsvField(std::string& out, const std::string& field)
{
    if (field.find_first_of(",\"\r\n") == std::string::npos) {
        out += field;
        return;
    }
    out += '"';
    for (const char c : field) {
        if (c == '"')
            out += '"';
        out += c;
    }
    out += '"';
}

} // namespace

Session::Session(MonitorConfig config, RunInfo info)
    : m_config(std::move(config))
    , m_info(std::move(info))
{
    if (m_info.groupMates.empty())
        m_info.groupMates.push_back(m_info.rank);
    const std::string timeTag = m_info.timeTag.empty() ? shanghaiTimeTag() : m_info.timeTag;
    const std::string uid = m_info.uid.empty() ? randomUid() : m_info.uid;
    const std::string folder = timeTag + "-rank" + std::to_string(m_info.rank) + "-" + uid;
    if (auto problem = claimRankFolder(m_info.outputDir, "", folder, false))
        throw CollectError("collect.monitor-io", problem->format());
    m_runDir = m_info.outputDir / folder;
    if (m_config.alertDump) {
        const std::string rankFolder = "rank" + std::to_string(m_info.rank);
        if (auto problem = claimRankFolder(m_info.outputDir, "anomaly_detected", rankFolder, false))
            throw CollectError("collect.monitor-io", problem->format());
        m_anomalyJson = m_info.outputDir / "anomaly_detected" / rankFolder / "anomaly.json";
        if (auto failure = writeFileAtomically(m_anomalyJson, "{}", ReplaceMode::Never))
            ioError(m_anomalyJson, failure->message);
    }
}

Bucket& Session::bucket(const std::string& name)
{
    if (name.starts_with("actv:")) {
        auto [it, fresh] = m_actvIndex.try_emplace(name, m_actv.size());
        if (fresh)
            m_actv.emplace_back(name, Bucket());
        return m_actv[it->second].second;
    }
    static constexpr std::array<std::string_view, 7> kFixed { "actv_grad", "grad_unreduced", "grad_reduced", "exp_avg",
                                                             "exp_avg_sq", "param_origin", "param_updated" };
    for (const auto k : kFixed) {
        if (name == k)
            return m_fixed[name];
    }
    throw std::out_of_range("no monitor bucket " + name);
}

void Session::writeStep(std::int64_t step)
{
    for (auto& entry : m_actv) {
        writeMetrics(entry.second, "actv", step, true);
        entry.second.clear();
    }
    writeMetrics(bucket("actv_grad"), "actv_grad", step, true);
    writeMetrics(bucket("grad_unreduced"), "grad_unreduced", step, m_config.monitorMbsGrad);
    writeMetrics(bucket("grad_reduced"), "grad_reduced", step, false);
    for (const char* name : { "exp_avg", "exp_avg_sq", "param_origin", "param_updated" })
        writeMetrics(bucket(name), name, step, false);
    finishStep();
}

void Session::registerCallId(const std::string& tag)
{
    m_callIds[tag] = m_nextCallId++;
}

void Session::scan(const std::string& tag, const std::string& op, const Cell& cell, std::int64_t step)
{
    // BaseWriterWithAD.add_scalar: running mean of |value| per (tag, op), the rules against the mean before.
    if (m_config.alertRules.empty() || op == "shape" || op == "dtype" || cell.kind == Cell::Kind::Text)
        return;
    const bool isInt = cell.kind == Cell::Kind::Int;
    const double value = isInt ? static_cast<double>(cell.i) : cell.kind == Cell::Kind::Float ? cell.f : std::nan("");
    const double magnitude = std::fabs(value);
    auto [it, fresh] = m_history.try_emplace({ tag, op });
    if (fresh) {
        it->second.avg = magnitude;
        it->second.avgIsInt = isInt;
    }
    const History before = it->second;
    constexpr double kBeta = 0.99;
    it->second.avg = kBeta * before.avg + (1 - kBeta) * magnitude;
    it->second.avgIsInt = false;

    const char* fired = nullptr;
    for (const MonitorAlertRule& rule : m_config.alertRules) {
        bool hit = false;
        if (rule.kind == MonitorAlertRule::Kind::Turbulence)
            hit = magnitude > before.avg * (1 + *rule.threshold);
        else
            hit = std::isnan(value) || (rule.threshold && magnitude > *rule.threshold);
        if (hit) {
            fired = rule.kind == MonitorAlertRule::Kind::Turbulence ? "AnomalyTurbulence" : "AnomalyNan";
            break;
        }
    }
    // The first rule that fires decides; AnomalyTurbulence counts for norm and mean only.
    if (!fired || (std::string_view(fired) == "AnomalyTurbulence" && op != "norm" && op != "mean"))
        return;
    const std::string history = before.avgIsInt ? pyInt(static_cast<std::int64_t>(before.avg)) : pyFloatRepr(before.avg);
    std::string message = std::string("Rule ") + fired + " reports anomaly signal in (" + pyStrRepr(tag) + ", "
                          + pyStrRepr(op) + ") at step " + std::to_string(step) + ", current value " + pyValue(cell)
                          + ", history mean " + history + ".";
    m_messages.push_back(message);
    if (m_anomalyJson.empty())
        return;
    // AnomalyDataFactory.create: vpp_stage from the "<vpp>:" prefix of the name, call id -1 when unregistered.
    const std::string name = tag.substr(0, tag.find('/'));
    std::int64_t vpp = 0;
    if (const auto colon = name.find(':'); colon != std::string::npos) {
        vpp = 0;
        try {
            vpp = std::stoll(name.substr(0, colon));
        } catch (const std::exception&) {
            vpp = 0;
        }
    }
    const auto call = m_callIds.find(tag);
    const std::int64_t callId = call == m_callIds.end() ? -1 : call->second;
    std::string json = "{\n  \"rank\": " + pyInt(m_info.rank) + ",\n  \"step\": " + pyInt(step)
                       + ",\n  \"micro_step\": 0,\n  \"pp_stage\": " + pyInt(m_info.ppStage)
                       + ",\n  \"vpp_stage\": " + pyInt(vpp) + ",\n  \"call_id\": " + pyInt(callId)
                       + ",\n  \"tag_name\": ";
    appendPyJsonString(json, tag);
    json += ",\n  \"message\": ";
    appendPyJsonString(json, message);
    json += ",\n  \"group_mates\": [";
    for (std::size_t i = 0; i < m_info.groupMates.size(); ++i)
        json += (i ? ",\n   " : "\n   ") + pyInt(m_info.groupMates[i]);
    json += m_info.groupMates.empty() ? "]\n }" : "\n  ]\n }";
    m_stepAnomalies.push_back({ tag + "_step_" + std::to_string(step) + "_call_" + std::to_string(callId), json });
}

std::string Session::csvLine(const std::vector<std::string>& cells) const
{
    std::string line;
    for (std::size_t i = 0; i < cells.size(); ++i) {
        if (i)
            line += ',';
        appendCsvField(line, cells[i]);
    }
    line += '\n';
    return line;
}

void Session::writeMetrics(const Bucket& bucket, const std::string& prefix, std::int64_t step, bool microStepColumn)
{
    if (bucket.empty())
        return;
    const auto& ops = m_config.ops;
    for (std::size_t r = 0; r < bucket.tags().size(); ++r) {
        const Row& row = bucket.row(r);
        for (std::size_t j = 0; j < ops.size() && j < row.size(); ++j)
            scan(bucket.tags()[r], ops[j], row[j], step);
    }
    // pandas types each column over the rows of this write: all ints stay ints, ints among floats (or NaN)
    // become floats; float columns are rounded, text columns are not.
    std::vector<bool> hasFloat(ops.size(), false), hasText(ops.size(), false);
    for (std::size_t r = 0; r < bucket.tags().size(); ++r) {
        const Row& row = bucket.row(r);
        for (std::size_t j = 0; j < ops.size() && j < row.size(); ++j) {
            hasFloat[j] = hasFloat[j] || row[j].kind == Cell::Kind::Float || row[j].kind == Cell::Kind::Missing;
            hasText[j] = hasText[j] || row[j].kind == Cell::Kind::Text;
        }
    }
    std::string text;
    std::vector<std::string> fields;
    for (std::size_t r = 0; r < bucket.tags().size(); ++r) {
        const std::string& tag = bucket.tags()[r];
        fields = split(tag.substr(0, tag.find('/')), ':');
        fields.insert(fields.begin() + static_cast<std::ptrdiff_t>(std::min<std::size_t>(2, fields.size())),
                      std::to_string(step));
        const Row& row = bucket.row(r);
        for (std::size_t j = 0; j < ops.size(); ++j) {
            const Cell missing;
            const Cell& c = j < row.size() ? row[j] : missing;
            const bool rounded = !hasText[j];
            switch (c.kind) {
            case Cell::Kind::Int:
                fields.push_back(hasFloat[j] && rounded ? pyFloatRepr(static_cast<double>(c.i)) : pyInt(c.i));
                break;
            case Cell::Kind::Float:
                fields.push_back(std::isnan(c.f) ? std::string("nan")
                                                 : pyFloatRepr(rounded ? roundLikeNumpy(c.f, m_config.ndigits) : c.f));
                break;
            case Cell::Kind::Text: fields.push_back(c.text); break;
            case Cell::Kind::Missing: fields.emplace_back("nan"); break;
            }
        }
        text += csvLine(fields);
    }
    const std::int64_t first = step / m_config.stepCountPerRecord * m_config.stepCountPerRecord;
    const fs::path path = m_runDir
                          / (prefix + "_" + std::to_string(first) + "-"
                             + std::to_string(first + m_config.stepCountPerRecord - 1) + ".csv");
    if (m_createdFiles.insert(path.string()).second) {
        std::vector<std::string> header { "vpp_stage", "name", "step" };
        if (microStepColumn)
            header.emplace_back("micro_step");
        header.insert(header.end(), ops.begin(), ops.end());
        if (auto failure = writeFileAtomically(path, csvLine(header), ReplaceMode::Never))
            ioError(path, failure->message);
    }
    if (auto failure = appendToOutput(path, text))
        ioError(path, *failure);
}

void Session::finishStep()
{
    m_callIds.clear();
    m_nextCallId = 0;
    if (m_stepAnomalies.empty() || m_anomalyJson.empty()) {
        m_stepAnomalies.clear();
        return;
    }
    // write_detected_json: the file's records updated with this step's (a key seen before keeps its place).
    for (Anomaly& a : m_stepAnomalies) {
        auto [it, fresh] = m_writtenIndex.try_emplace(a.key, m_written.size());
        if (fresh)
            m_written.push_back(std::move(a));
        else
            m_written[it->second].json = std::move(a.json);
    }
    m_stepAnomalies.clear();
    std::string text = "{";
    for (std::size_t i = 0; i < m_written.size(); ++i) {
        text += i ? ",\n " : "\n ";
        appendPyJsonString(text, m_written[i].key);
        text += ": " + m_written[i].json;
    }
    text += "\n}";
    // The file this session created at start (ReplaceMode::Allowed: only our own file is rewritten).
    if (auto failure = writeFileAtomically(m_anomalyJson, text, ReplaceMode::Allowed))
        ioError(m_anomalyJson, failure->message);
}

} // namespace probescope::collect::monitor
