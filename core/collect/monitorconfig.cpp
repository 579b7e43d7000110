// SPDX-License-Identifier: Apache-2.0
// The monitor's config.json, read as msprobe 26 reads it (core/monitor/utils.py validate_config, TrainerMon's
// set_config, AnomalyScanner.load_rules): what msprobe refuses is an error naming the file and position, what it
// logs and goes on from is a warning. LibTorch-free (fuzz_monitorconfig compiles it alone).
#include "probescope/collect/config.h"
#include "probescope/collect/monitorconfig.h"

#include "core/dump/jsondocument.h"
#include "core/util/fileio.h"
#include "core/util/textposition.h"

#include <array>
#include <cmath>

namespace probescope::collect {

using dump::JsonType;
using dump::JsonValue;

namespace {

/// msprobe's MonitorConst.OP_LIST.
constexpr std::array<std::string_view, 9> kOps { "norm", "min", "max", "zeros", "nans", "id", "mean", "shape", "dtype" };

class MonitorConfigReader
{
public:
    MonitorConfigReader(std::string_view text, std::string fileName)
        : m_text(text)
        , m_file(std::move(fileName))
    {
    }

    MonitorConfig read()
    {
        auto parsed = dump::JsonDocument::parse(m_text, m_file);
        if (!parsed.document) {
            Diagnostic copy = parsed.diagnostics.front();
            copy.id = kId;
            copy.message = "not valid JSON: " + copy.message;
            throw CollectError(kId, copy.format());
        }
        const JsonValue root = parsed.document->root();
        if (!root.isObject())
            fail(root, "the monitor configuration must be a JSON object");
        MonitorConfig c;
        readOps(c, root.find("ops"));
        if (auto v = root.find("ndigits"); v && !isFalsy(*v)) {
            if (!v->isInt() || v->asInt() <= 0)
                fail(*v, "\"ndigits\" must be a positive integer");
            if (v->asInt() > 20)
                fail(*v, "\"ndigits\" is at most 20");
            c.ndigits = static_cast<int>(v->asInt());
        } else if (v && v->isInt()) {
            c.ndigits = 0; // 0: msprobe rounds to whole numbers
        }
        if (auto v = root.find("eps")) {
            if (v->type() != JsonType::Double)
                fail(*v, "\"eps\" must be a float (e.g. 1e-8)");
            c.eps = v->asDouble();
        }
        if (auto v = root.find("module_ranks")) {
            if (!v->isArray())
                fail(*v, "\"module_ranks\" must be a list of integers");
            for (std::uint32_t i = 0; i < v->size(); ++i) {
                if (!v->at(i).isInt())
                    fail(v->at(i), "\"module_ranks\" must hold integers");
                c.moduleRanks.push_back(v->at(i).asInt());
            }
        }
        if (auto v = root.find("targets")) {
            if (!v->isObject())
                fail(*v, "\"targets\" must be an object of module name -> {} (e.g. {\"layers.0.mlp\": {}})");
            for (std::uint32_t i = 0; i < v->size(); ++i) {
                if (!v->at(i).isObject())
                    fail(v->at(i), "each value of \"targets\" must be an object (e.g. {\"input\": \"tensor\"})");
                c.targets.emplace_back(v->keyAt(i));
            }
        }
        c.xyDistribution = flag(root, "xy_distribution");
        c.allXy = flag(root, "all_xy");
        c.forwardOnly = flag(root, "forward_only");
        c.backwardOnly = flag(root, "backward_only");
        c.wgDistribution = flag(root, "wg_distribution");
        c.mvDistribution = flag(root, "mv_distribution");
        c.paramDistribution = flag(root, "param_distribution");
        c.squashName = flag(root, "squash_name");
        if (auto v = root.find("monitor_mbs_grad")) {
            if (v->isBool())
                c.monitorMbsGrad = v->asBool();
            else
                c.warnings.push_back("monitor_mbs_grad should be a bool; false is used");
        }
        for (const char* key : { "ur_distribution", "mg_direction", "print_struct", "stack_info", "dynamic_on",
                                 "recording_l2_features" }) {
            if (flag(root, key))
                c.warnings.push_back(std::string("\"") + key + "\" is not collected by ProbeScope's monitor; ignored");
        }
        if (auto v = root.find("cc_distribution"); v && v->isObject()) {
            if (auto e = v->find("enable"); e && e->isBool() && e->asBool())
                c.warnings.push_back("\"cc_distribution\" is not collected by ProbeScope's monitor; ignored");
        } else if (v) {
            fail(*v, "\"cc_distribution\" must be an object");
        }
        if (auto v = root.find("append_output")) {
            if (!v->isArray() || (v->size() != 0 && v->size() != 2))
                fail(*v, "\"append_output\" must be a list of 0 or 2 time stamps");
            if (v->size() == 2)
                c.warnings.push_back("\"append_output\" is not supported by ProbeScope's monitor; a new run folder "
                                     "is written");
        }
        if (auto v = root.find("format"); v && !(v->isString() && v->asString() == "csv"))
            c.warnings.push_back("only the csv format is written; \"format\" ignored");
        readAlert(c, root.find("alert"));
        if (auto v = root.find("step_count_per_record")) {
            if (!v->isInt())
                fail(*v, "\"step_count_per_record\" must be an integer");
            if (v->asInt() < 1 || v->asInt() > 1000000)
                fail(*v, "\"step_count_per_record\" must be from 1 to 1000000");
            c.stepCountPerRecord = v->asInt();
        }
        c.startStep = intArg(c, root, "start_step", 0, 0);
        c.collectTimes = intArg(c, root, "collect_times", 0, 100000000);
        c.stepInterval = intArg(c, root, "step_interval", 1, 1);
        if (c.targets.empty()) {
            if (c.xyDistribution)
                c.allXy = true;
            c.targets.emplace_back();
        }
        return c;
    }

private:
    static constexpr const char* kId = "collect.monitor-config";

    [[noreturn]] void fail(const JsonValue& at, const std::string& message) const
    {
        const Diagnostic d = makeError(kId, locate(m_text, at.offset(), m_file), message);
        throw CollectError(kId, d.format());
    }

    static bool isFalsy(const JsonValue& v)
    {
        return v.isNull() || (v.isInt() && v.asInt() == 0) || (v.isBool() && !v.asBool());
    }

    bool flag(const JsonValue& root, const char* key) const
    {
        auto v = root.find(key);
        if (!v)
            return false;
        if (!v->isBool())
            fail(*v, std::string("\"") + key + "\" must be true or false");
        return v->asBool();
    }

    void readOps(MonitorConfig& c, std::optional<JsonValue> ops) const
    {
        if (ops) {
            if (!ops->isArray())
                fail(*ops, "\"ops\" must be a list");
            for (std::uint32_t i = 0; i < ops->size(); ++i) {
                const JsonValue op = ops->at(i);
                const std::string_view name = op.isString() ? op.asString() : std::string_view();
                bool known = false;
                for (const auto k : kOps)
                    known = known || (op.isString() && name == k);
                if (!known) {
                    c.warnings.push_back("op " + std::string(op.isString() ? name : "(not a string)")
                                         + " is not supported; optional ops: norm, min, max, zeros, nans, id, mean, "
                                           "shape, dtype");
                    continue;
                }
                c.ops.emplace_back(name);
            }
        }
        if (c.ops.empty()) {
            c.ops.emplace_back("norm");
            c.warnings.push_back("there is no valid op; the default op norm is used");
        }
        for (const char* extra : { "shape", "dtype" }) {
            bool present = false;
            for (const auto& op : c.ops)
                present = present || op == extra;
            if (!present)
                c.ops.emplace_back(extra);
        }
    }

    void readAlert(MonitorConfig& c, std::optional<JsonValue> alert) const
    {
        if (!alert)
            return;
        if (!alert->isObject())
            fail(*alert, "\"alert\" must be an object");
        if (auto dump = alert->find("dump")) {
            if (!dump->isBool() && !isFalsy(*dump))
                fail(*dump, "\"alert\": \"dump\" must be true or false");
            c.alertDump = dump->isBool() && dump->asBool();
        }
        auto rules = alert->find("rules");
        if (!rules || isFalsy(*rules))
            return;
        if (!rules->isArray())
            fail(*rules, "\"alert\": \"rules\" must be a list");
        for (std::uint32_t i = 0; i < rules->size(); ++i) {
            const JsonValue rule = rules->at(i);
            if (!rule.isObject())
                fail(rule, "an alert rule must be an object {\"rule_name\": ..., \"args\": {...}}");
            auto name = rule.find("rule_name");
            if (!name || name->isNull()) {
                c.warnings.push_back("an alert rule without \"rule_name\" is skipped");
                continue;
            }
            if (!name->isString() || (name->asString() != "AnomalyTurbulence" && name->asString() != "AnomalyNan"))
                fail(*name, "\"rule_name\" must be AnomalyTurbulence or AnomalyNan");
            MonitorAlertRule r;
            r.kind = name->asString() == "AnomalyNan" ? MonitorAlertRule::Kind::Nan : MonitorAlertRule::Kind::Turbulence;
            auto args = rule.find("args");
            if (args && !args->isNull()) {
                if (!args->isObject())
                    fail(*args, "an alert rule's \"args\" must be an object");
                for (std::uint32_t k = 0; k < args->size(); ++k) {
                    if (args->keyAt(k) != "threshold")
                        fail(args->at(k), "an alert rule takes the argument \"threshold\" only");
                }
                if (auto t = args->find("threshold")) {
                    if (!t->isNumber() || t->asDouble() < 0 || std::isnan(t->asDouble()))
                        fail(*t, "\"threshold\" must be a number not less than 0");
                    r.threshold = t->asDouble();
                }
            }
            if (r.kind == MonitorAlertRule::Kind::Turbulence && !r.threshold) {
                c.warnings.push_back("AnomalyTurbulence needs \"args\": {\"threshold\": ...}; the rule is skipped");
                continue;
            }
            c.alertRules.push_back(r);
        }
    }

    /// validate_int_arg: a missing value is the default; one that is not an integer or is below `minimum` is
    /// replaced by the default with a warning.
    static std::int64_t intArg(MonitorConfig& c, const JsonValue& root, const char* key, std::int64_t minimum,
                               std::int64_t fallback)
    {
        auto v = root.find(key);
        if (!v || v->isNull())
            return fallback;
        if (!v->isInt() || v->asInt() < minimum) {
            c.warnings.push_back(std::string("validate ") + key + " failed (an integer >= " + std::to_string(minimum)
                                 + "); replaced with the default value " + std::to_string(fallback));
            return fallback;
        }
        return v->asInt();
    }

    std::string_view m_text;
    std::string m_file;
};

} // namespace

MonitorConfig parseMonitorConfigText(std::string_view text, const std::string& fileName)
{
    return MonitorConfigReader(text, fileName).read();
}

MonitorConfig loadMonitorConfig(const std::string& path)
{
    auto text = readTextFile(path);
    if (!text)
        throw CollectError("collect.monitor-config", text.error().format());
    return parseMonitorConfigText(*text, path);
}

std::string squashParamName(const std::string& name)
{
    // r'^.*\.(layers?\..*)' and the others: the greedy ".*" takes the last "." the rest can follow.
    const auto lastAfterDot = [&](auto&& matchesAt) -> std::optional<std::string> {
        for (std::size_t p = name.size(); p-- > 0;) {
            if (name[p] == '.' && matchesAt(p + 1))
                return name.substr(p + 1);
        }
        return std::nullopt;
    };
    const auto startsAt = [&](std::size_t p, std::string_view s) { return name.compare(p, s.size(), s) == 0; };
    const auto pluralDot = [&](std::string_view stem) {
        return [&, stem](std::size_t p) {
            return startsAt(p, std::string(stem) + ".") || startsAt(p, std::string(stem) + "s.");
        };
    };
    for (auto r : { lastAfterDot(pluralDot("layer")), lastAfterDot(pluralDot("embedding")),
                    lastAfterDot([&](std::size_t p) { return startsAt(p, "final"); }),
                    lastAfterDot([&](std::size_t p) { return startsAt(p, "output"); }),
                    lastAfterDot([&](std::size_t p) { return startsAt(p, "norm"); }) }) {
        if (r)
            return *r;
    }
    return name;
}

} // namespace probescope::collect
