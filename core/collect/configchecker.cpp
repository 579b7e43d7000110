// SPDX-License-Identifier: Apache-2.0
// ConfigChecker for LibTorch programs: msprobe 26's dynamic config_check pack (weight.json, dataset.json,
// random/rank{R}.json), its JSON spelled as Python's json.dumps(..., indent=4) spells it, added to the zip through
// the gate's zip writer (core/util/ziparchive.h's appendToZip).
#include "probescope/collect/configchecker.h"

#include "probescope/collect/config.h"
#include "core/util/pytext.h"
#include "core/util/ziparchive.h"

#include <ATen/ATen.h>
#include <ATen/record_function.h>
#include <torch/nn/module.h>

#include <array>
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <mutex>
#include <string_view>
#include <sys/stat.h>
#include <unordered_map>

extern char** environ; // NOLINT: POSIX's environment, what os.environ holds

namespace probescope::collect {

namespace {

constexpr int kMaxDepth = 100; // msprobe's recursion_depth_decorator bound

void appendIndent(std::string& out, int level)
{
    out += '\n';
    out.append(static_cast<std::size_t>(level) * 4, ' ');
}

/// msprobe's get_tensor_features through FmkAdp.process_tensor: float(x.max()) etc., non-float and float64
/// tensors in float32 first.
void appendFeatures(std::string& out, at::Tensor tensor, int level)
{
    if (!tensor.is_floating_point() || tensor.scalar_type() == at::kDouble)
        tensor = tensor.to(at::kFloat);
    const std::array<std::pair<const char*, at::Tensor>, 4> features { {
        { "max", tensor.max() },
        { "min", tensor.min() },
        { "mean", tensor.mean() },
        { "norm", tensor.norm() },
    } };
    out += '{';
    bool first = true;
    for (const auto& [name, value] : features) {
        if (!first)
            out += ',';
        first = false;
        appendIndent(out, level + 1);
        out += '"';
        out += name;
        out += "\": ";
        appendPyJsonFloat(out, value.item<double>());
    }
    appendIndent(out, level);
    out += '}';
}

/// The key of a dict entry as json.dumps writes it (str keys as they are; int, float, bool, None as Python
/// converts them).
std::string keyText(const c10::IValue& key)
{
    if (key.isString())
        return key.toStringRef();
    if (key.isInt())
        return std::to_string(key.toInt());
    if (key.isBool())
        return key.toBool() ? "true" : "false";
    if (key.isDouble()) {
        std::string text;
        appendPyJsonFloat(text, key.toDouble());
        return text;
    }
    if (key.isNone())
        return "null";
    return key.tagKind();
}

/// msprobe's process_obj: tensors become their features, tuples and lists {index: ...}, dicts {key: ...}, anything
/// else "".
void appendObject(std::string& out, const c10::IValue& value, int level);

void appendMembers(std::string& out, const std::vector<std::pair<std::string, const c10::IValue*>>& members,
                   int level)
{
    if (members.empty()) {
        out += "{}";
        return;
    }
    out += '{';
    bool first = true;
    for (const auto& [key, member] : members) {
        if (!first)
            out += ',';
        first = false;
        appendIndent(out, level + 1);
        appendPyJsonString(out, key);
        out += ": ";
        appendObject(out, *member, level + 1);
    }
    appendIndent(out, level);
    out += '}';
}

void appendObject(std::string& out, const c10::IValue& value, int level)
{
    if (level > kMaxDepth)
        throw CollectError("config-check.depth", "ConfigChecker: the forward's arguments are nested deeper than "
                                                     + std::to_string(kMaxDepth) + " levels");
    if (value.isTensor() && value.toTensor().defined()) {
        appendFeatures(out, value.toTensor(), level);
        return;
    }
    std::vector<std::pair<std::string, const c10::IValue*>> members;
    std::vector<c10::IValue> holder; // elements of a typed list, boxed
    if (value.isTuple()) {
        const auto& elements = value.toTupleRef().elements();
        for (std::size_t i = 0; i < elements.size(); ++i)
            members.emplace_back(std::to_string(i), &elements[i]);
    } else if (value.isList()) {
        const c10::List<c10::IValue> list = value.toList();
        holder.reserve(list.size());
        for (std::size_t i = 0; i < list.size(); ++i)
            holder.push_back(list.get(i));
        for (std::size_t i = 0; i < holder.size(); ++i)
            members.emplace_back(std::to_string(i), &holder[i]);
    } else if (value.isGenericDict()) {
        const c10::Dict<c10::IValue, c10::IValue> dict = value.toGenericDict();
        holder.reserve(2 * dict.size());
        for (const auto& item : dict)
            holder.push_back(item.value());
        std::size_t i = 0;
        for (const auto& item : dict)
            members.emplace_back(keyText(item.key()), &holder[i++]);
    } else {
        out += "\"\"";
        return;
    }
    appendMembers(out, members, level);
}

/// json.dumps(os.environ, indent=4): the environment in its order (a repeated name keeps its first place and
/// its last value, as a dict does).
std::string environmentJson()
{
    std::vector<std::pair<std::string, std::string>> variables;
    std::unordered_map<std::string, std::size_t> where;
    for (char** entry = environ; entry && *entry; ++entry) {
        const std::string_view text(*entry);
        const std::size_t eq = text.find('=');
        if (eq == std::string_view::npos || eq == 0)
            continue;
        std::string name(text.substr(0, eq));
        std::string value(text.substr(eq + 1));
        if (auto it = where.find(name); it != where.end()) {
            variables[it->second].second = std::move(value);
        } else {
            where.emplace(name, variables.size());
            variables.emplace_back(std::move(name), std::move(value));
        }
    }
    if (variables.empty())
        return "{}";
    std::string out = "{";
    for (std::size_t i = 0; i < variables.size(); ++i) {
        if (i)
            out += ',';
        appendIndent(out, 1);
        appendPyJsonString(out, variables[i].first);
        out += ": ";
        appendPyJsonString(out, variables[i].second);
    }
    out += "\n}";
    return out;
}

// ---- random ops (applyPatches) ---------------------------------------------------------------------------------

/// The aten ops msprobe's RandomChecker patches, under msprobe's names.
constexpr std::array<std::pair<std::string_view, std::string_view>, 10> kRandomOps { {
    { "aten::rand", "torch.rand" },
    { "aten::randint", "torch.randint" },
    { "aten::randn", "torch.randn" },
    { "aten::rand_like", "torch.rand_like" },
    { "aten::randint_like", "torch.randint_like" },
    { "aten::randn_like", "torch.randn_like" },
    { "aten::exponential_", "torch.Tensor.exponential_" },
    { "aten::geometric_", "torch.Tensor.geometric_" },
    { "aten::log_normal_", "torch.Tensor.log_normal_" },
    { "aten::cauchy_", "torch.Tensor.cauchy_" },
} };

struct RandomCounts
{
    std::mutex mutex;
    std::vector<std::pair<std::string, std::uint64_t>> counts; ///< in the order of first call
    std::optional<at::CallbackHandle> callback;
};

RandomCounts& randomCounts()
{
    static auto* counts = new RandomCounts; // never destroyed: the callback may run while the process exits
    return *counts;
}

thread_local int tInsideRandom = 0; // depth of counted random ops on this thread (only outermost calls count)

struct RandomContext : at::ObserverContext
{
    bool counted = false;
};

std::unique_ptr<at::ObserverContext> onRandomStart(const at::RecordFunction& fn)
{
    const std::string_view name = fn.name();
    for (const auto& [op, python] : kRandomOps) {
        if (name != op)
            continue;
        auto context = std::make_unique<RandomContext>();
        if (tInsideRandom++ == 0) {
            context->counted = true;
            RandomCounts& state = randomCounts();
            const std::lock_guard lock(state.mutex);
            auto it = std::find_if(state.counts.begin(), state.counts.end(),
                                   [&](const auto& entry) { return entry.first == python; });
            if (it == state.counts.end())
                state.counts.emplace_back(std::string(python), 1);
            else
                ++it->second;
        }
        return context;
    }
    return nullptr;
}

void onRandomEnd(const at::RecordFunction& /*fn*/, at::ObserverContext* context)
{
    if (context)
        --tInsideRandom;
}

std::string randomJson()
{
    RandomCounts& state = randomCounts();
    const std::lock_guard lock(state.mutex);
    if (state.counts.empty())
        return "{}";
    std::string out = "{";
    for (std::size_t i = 0; i < state.counts.size(); ++i) {
        if (i)
            out += ',';
        appendIndent(out, 1);
        appendPyJsonString(out, state.counts[i].first);
        out += ": [";
        appendIndent(out, 2);
        out += '{';
        appendIndent(out, 3);
        out += "\"count\": " + std::to_string(state.counts[i].second) + ',';
        appendIndent(out, 3);
        out += "\"stack\": []";
        appendIndent(out, 2);
        out += '}';
        appendIndent(out, 1);
        out += ']';
    }
    out += "\n}";
    return out;
}

std::int64_t rankOf(std::optional<std::int64_t> rank, bool& distributed)
{
    distributed = true;
    if (rank) {
        if (*rank < 0)
            throw CollectError("collect.rank", "ConfigChecker: rank " + std::to_string(*rank) + " is not >= 0");
        return *rank;
    }
    const char* value = std::getenv("RANK");
    if (!value || !*value) {
        distributed = false;
        return 0;
    }
    char* end = nullptr;
    const long long r = std::strtoll(value, &end, 10);
    if (*end != '\0' || r < 0)
        throw CollectError("collect.rank", std::string("environment variable RANK=\"") + value
                                               + "\" is not a rank (a whole number >= 0)");
    return r;
}

} // namespace

ConfigChecker::ConfigChecker(std::shared_ptr<torch::nn::Module> model, std::string outputZipPath,
                             std::optional<std::int64_t> rank)
    : m_model(std::move(model)), m_zip(std::move(outputZipPath))
{
    if (m_zip.size() < 4 || m_zip.compare(m_zip.size() - 4, 4, ".zip") != 0)
        throw CollectError("config-check.output", "ConfigChecker: output zip path \"" + m_zip + "\" must end with '.zip'");
    bool distributed = false;
    m_rank = rankOf(rank, distributed);
    m_rankZero = !distributed || m_rank == 0;
    struct stat st {};
    // A new run never adds to a pack left by another one (msprobe appends to it): rank 0 claims the name.
    if (m_rankZero && ::lstat(m_zip.c_str(), &st) == 0)
        throw CollectError("config-check.output", m_zip + ": the pack already exists (nothing is replaced or added "
                                                          "to); choose another output zip path");
    if (m_rankZero)
        add("env", environmentJson());
}

ConfigChecker::~ConfigChecker() = default;

void ConfigChecker::applyPatches()
{
    RandomCounts& state = randomCounts();
    const std::lock_guard lock(state.mutex);
    if (state.callback)
        return;
    state.callback = at::addGlobalCallback(
        at::RecordFunctionCallback(onRandomStart, onRandomEnd).scopes({ at::RecordScope::FUNCTION }));
}

void ConfigChecker::add(const std::string& name, const std::string& content)
{
    auto written = appendToZip(m_zip, { { name, content } });
    if (!written)
        throw CollectError(written.error().id, written.error().message);
}

void ConfigChecker::beforeForward(const std::vector<c10::IValue>& args,
                                  const std::vector<std::pair<std::string, c10::IValue>>& kwargs)
{
    const std::int64_t step = m_step++;
    const std::string where = "step" + std::to_string(step) + "/rank" + std::to_string(m_rank);
    const at::NoGradGuard noGrad;
    if (m_model) {
        // msprobe's order: dataset, then weights, then (once) random.
        std::string dataset = "{";
        appendIndent(dataset, 1);
        dataset += "\"args\": ";
        std::vector<std::pair<std::string, const c10::IValue*>> members;
        for (std::size_t i = 0; i < args.size(); ++i)
            members.emplace_back(std::to_string(i), &args[i]);
        appendMembers(dataset, members, 1);
        dataset += ',';
        appendIndent(dataset, 1);
        dataset += "\"kwargs\": ";
        members.clear();
        for (const auto& [key, value] : kwargs)
            members.emplace_back(key, &value);
        appendMembers(dataset, members, 1);
        dataset += "\n}";
        add("dataset/" + where + "/dataset.json", dataset);

        std::string weights;
        const auto parameters = m_model->named_parameters(true);
        if (parameters.is_empty()) {
            weights = "{}";
        } else {
            weights = "{";
            bool first = true;
            for (const auto& item : parameters) {
                if (!first)
                    weights += ',';
                first = false;
                appendIndent(weights, 1);
                appendPyJsonString(weights, item.key());
                weights += ": ";
                at::Tensor value = item.value();
                if (value.scalar_type() != at::kFloat)
                    value = value.to(at::kFloat);
                appendFeatures(weights, value, 1);
            }
            weights += "\n}";
        }
        add("weights/" + where + "/weight.json", weights);

        if (m_rankZero && !m_randomWritten) {
            add("random/rank" + std::to_string(m_rank) + ".json", randomJson());
            m_randomWritten = true;
        }
    }
}

} // namespace probescope::collect
