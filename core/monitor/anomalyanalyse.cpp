// SPDX-License-Identifier: Apache-2.0
// msprobe 26 core/monitor/anomaly_processor.py: AnomalyDataLoader, GradAnomalyData's order, AnomalyAnalyse's top k.
#include "core/monitor/anomalyanalyse.h"

#include "core/compare/msprobe26/pyjsonwriter.h"
#include "core/compare/table/pytext.h"
#include "core/dump/jsondocument.h"
#include "core/util/fileio.h"
#include "core/util/folderlist.h"
#include "core/util/textposition.h"

#include <algorithm>
#include <array>
#include <memory>
#include <unordered_map>

namespace probescope::monitor {

namespace {

namespace fs = std::filesystem;
using dump::JsonType;
using dump::JsonValue;

/// GradAnomalyData's fields in declaration order (its __dict__ order).
constexpr std::array<const char*, 9> kFields = { "rank",    "step",     "micro_step", "pp_stage",   "vpp_stage",
                                                 "call_id", "tag_name", "message",    "group_mates" };
enum Field { Rank, Step, MicroStep, PpStage, VppStage, CallId, TagName, Message, GroupMates };

struct Anomaly
{
    std::array<std::optional<JsonValue>, 9> values; ///< as loaded; nullopt = the dataclass default
    std::array<double, 6> numbers {};               ///< rank .. call_id as numbers (defaults 0)
    int stage = -1;                                 ///< get_train_stage(tag_name)
};

/// MonitorConst.TRAIN_STAGE of a tag's last '/' part.
int trainStage(std::string_view tag)
{
    const auto slash = tag.rfind('/');
    const std::string_view key = slash == std::string_view::npos ? tag : tag.substr(slash + 1);
    if (key == "actv")
        return 0;
    if (key == "actv_grad" || key == "pre_grad" || key == "post_grad" || key == "acc_grad")
        return 1;
    if (key == "exp_avg" || key == "exp_avg_sq")
        return 2;
    return -1;
}

/// GradAnomalyData.__lt__: [step, micro_step, stage, vpp, pp, call_id] with vpp/pp negated unless *this* one is in
/// the forward stage.
bool lessThan(const Anomaly& a, const Anomaly& b)
{
    const double sign = a.stage == 0 ? 1.0 : -1.0;
    const std::array<double, 6> x { a.numbers[Step], a.numbers[MicroStep], double(a.stage), sign * a.numbers[VppStage],
                                    sign * a.numbers[PpStage], a.numbers[CallId] };
    const std::array<double, 6> y { b.numbers[Step], b.numbers[MicroStep], double(b.stage), sign * b.numbers[VppStage],
                                    sign * b.numbers[PpStage], b.numbers[CallId] };
    for (std::size_t i = 0; i < x.size(); ++i) {
        if (x[i] != y[i])
            return x[i] < y[i];
    }
    return false;
}

/// The dataclass __eq__: rank, step, micro_step, pp_stage, vpp_stage, call_id (tag, message, mates excluded).
bool equal(const Anomaly& a, const Anomaly& b)
{
    for (std::size_t i = 0; i < 6; ++i) {
        if (a.numbers[i] != b.numbers[i])
            return false;
    }
    return true;
}

/// heapq.nsmallest's (elem, order) pairs compare as tuples: == on the elements first, then their own order.
struct Entry
{
    const Anomaly* anomaly;
    std::size_t order;
};

bool tupleLess(const Entry& a, const Entry& b)
{
    if (equal(*a.anomaly, *b.anomaly))
        return a.order < b.order;
    return lessThan(*a.anomaly, *b.anomaly);
}

// heapq's max-heap helpers (_siftdown_max, _siftup_max, _heapify_max, _heapreplace_max), as CPython runs them.
void siftDownMax(std::vector<Entry>& heap, std::size_t start, std::size_t pos)
{
    const Entry item = heap[pos];
    while (pos > start) {
        const std::size_t parent = (pos - 1) >> 1;
        if (!tupleLess(heap[parent], item))
            break;
        heap[pos] = heap[parent];
        pos = parent;
    }
    heap[pos] = item;
}

void siftUpMax(std::vector<Entry>& heap, std::size_t pos)
{
    const std::size_t end = heap.size();
    const std::size_t start = pos;
    const Entry item = heap[pos];
    std::size_t child = 2 * pos + 1;
    while (child < end) {
        const std::size_t right = child + 1;
        if (right < end && !tupleLess(heap[right], heap[child]))
            child = right;
        heap[pos] = heap[child];
        pos = child;
        child = 2 * pos + 1;
    }
    heap[pos] = item;
    siftDownMax(heap, start, pos);
}

/// CPython's list.sort on (elem, order) tuples: a run at the start (reversed when strictly descending), then
/// binary insertion: what timsort does below 64 items. (These pairs are not always a strict weak order, so the
/// algorithm decides ties; K >= 64 is sorted the same way, which timsort's merges could order differently.)
void cpythonSort(std::vector<Entry>& a)
{
    const std::size_t n = a.size();
    if (n < 2)
        return;
    std::size_t run = 2;
    if (tupleLess(a[1], a[0])) {
        while (run < n && tupleLess(a[run], a[run - 1]))
            ++run;
        std::reverse(a.begin(), a.begin() + static_cast<std::ptrdiff_t>(run));
    } else {
        while (run < n && !tupleLess(a[run], a[run - 1]))
            ++run;
    }
    for (std::size_t start = run; start < n; ++start) {
        const Entry pivot = a[start];
        std::size_t l = 0;
        std::size_t r = start;
        do {
            const std::size_t p = l + ((r - l) >> 1);
            if (tupleLess(pivot, a[p]))
                r = p;
            else
                l = p + 1;
        } while (l < r);
        for (std::size_t p = start; p > l; --p)
            a[p] = a[p - 1];
        a[l] = pivot;
    }
}

/// AnomalyAnalyse.get_range_top_k's selection over the load order.
std::vector<const Anomaly*> topK(const std::vector<const Anomaly*>& list, std::size_t k)
{
    if (k >= list.size()) {
        std::vector<const Anomaly*> out = list; // sorted(): __lt__ alone is a strict weak order, so stable
        std::stable_sort(out.begin(), out.end(), [](const Anomaly* a, const Anomaly* b) { return lessThan(*a, *b); });
        return out;
    }
    if (k == 1) { // nsmallest(1) is min(): the first of the smallest
        const Anomaly* best = list.front();
        for (const Anomaly* a : list) {
            if (lessThan(*a, *best))
                best = a;
        }
        return { best };
    }
    std::vector<Entry> heap;
    for (std::size_t i = 0; i < k; ++i)
        heap.push_back(Entry { list[i], i });
    for (std::size_t i = heap.size() / 2; i-- > 0;)
        siftUpMax(heap, i);
    const Anomaly* top = heap.front().anomaly;
    std::size_t order = k;
    for (std::size_t i = k; i < list.size(); ++i) {
        if (lessThan(*list[i], *top)) {
            heap.front() = Entry { list[i], order };
            siftUpMax(heap, 0);
            top = heap.front().anomaly;
            ++order;
        }
    }
    cpythonSort(heap);
    std::vector<const Anomaly*> out;
    for (const Entry& e : heap)
        out.push_back(e.anomaly);
    return out;
}

} // namespace

std::optional<std::vector<long long>> parseStepList(const std::string& text, std::string& error)
{
    // ast.literal_eval of a list of ints: "[]", "[1, 2]", "[ 3 ]" (spaces anywhere between tokens).
    std::vector<long long> out;
    std::size_t i = 0;
    const auto skip = [&] {
        while (i < text.size() && (text[i] == ' ' || text[i] == '\t'))
            ++i;
    };
    skip();
    if (i >= text.size() || text[i] != '[') {
        error = "The step list must be a resolvable list type: " + text;
        return std::nullopt;
    }
    ++i;
    skip();
    bool expectValue = true;
    while (i < text.size() && text[i] != ']') {
        if (!expectValue) {
            if (text[i] != ',') {
                error = "The step list must be a resolvable list type: " + text;
                return std::nullopt;
            }
            ++i;
            skip();
            expectValue = true;
            continue;
        }
        std::size_t j = i;
        if (j < text.size() && (text[j] == '-' || text[j] == '+'))
            ++j;
        const std::size_t digits = j;
        while (j < text.size() && text[j] >= '0' && text[j] <= '9')
            ++j;
        if (j == digits || j - digits > 18) {
            error = "The step list must be a list of whole numbers: " + text;
            return std::nullopt;
        }
        out.push_back(std::stoll(text.substr(i, j - i)));
        i = j;
        skip();
        expectValue = false;
    }
    if (i >= text.size()) {
        error = "The step list must be a resolvable list type: " + text;
        return std::nullopt;
    }
    ++i;
    skip();
    if (i != text.size()) {
        error = "The step list must be a resolvable list type: " + text;
        return std::nullopt;
    }
    return out;
}

Result<AnomalyAnalyseResult> analyseAnomalies(const fs::path& dir, const AnomalyAnalyseOptions& options)
{
    if (options.topK == 0)
        return makeError("monitor.option", fileLocation(dir), "The top k number must be greater than 0.");
    auto listing = listFolder(dir, 10000000, FolderOrder::ByName);
    if (!listing)
        return listing.error();
    std::vector<std::string> folders;
    if (options.loadOrder.empty()) {
        for (const FolderEntry& e : *listing) {
            if (e.isFolder)
                folders.push_back(e.name);
        }
    } else {
        for (const std::string& name : options.loadOrder) {
            const auto it = std::find_if(listing->begin(), listing->end(), [&](const FolderEntry& e) { return e.name == name; });
            if (it != listing->end() && it->isFolder)
                folders.push_back(name);
        }
    }

    AnomalyAnalyseResult result;
    std::vector<std::shared_ptr<const dump::JsonDocument>> documents;
    std::vector<std::unique_ptr<Anomaly>> anomalies;
    for (const std::string& folder : folders) {
        const fs::path file = dir / folder / "anomaly.json";
        std::error_code ec;
        if (!fs::exists(file, ec))
            continue;
        auto text = readTextFile(file);
        if (!text)
            return text.error();
        auto parsed = dump::JsonDocument::parse(*text, file.string());
        for (const Diagnostic& d : parsed.diagnostics) {
            if (d.severity == Severity::Error)
                return d;
        }
        if (!parsed.document)
            return makeError("monitor.anomaly-json", fileLocation(file), "not JSON");
        const JsonValue root = parsed.document->root();
        if (!root.isObject())
            return makeError("monitor.anomaly-json", locate(*text, root.offset(), file.string()),
                             "anomaly.json holds an object of anomalies (AnomalyDataWriter's layout); this is not one");
        // json.load collapses a repeated key: the last value in the first place.
        // (An index, not a search of the list per key: a file of many keys stays linear.)
        std::vector<std::pair<std::string_view, JsonValue>> records;
        std::unordered_map<std::string_view, std::size_t> recordIndex;
        for (std::uint32_t i = 0; i < root.size(); ++i) {
            const auto [it, fresh] = recordIndex.try_emplace(root.keyAt(i), records.size());
            if (fresh)
                records.emplace_back(root.keyAt(i), root.at(i));
            else
                records[it->second].second = root.at(i);
        }
        for (const auto& [key, record] : records) {
            const SourceLocation where = locate(*text, record.offset(), file.string());
            if (!record.isObject()) {
                // GradAnomalyData(**values) of a non-mapping: msprobe warns and skips it.
                result.warnings.push_back(makeWarning("monitor.anomaly-skipped", where,
                                                      "\"" + std::string(key) + "\" is not an anomaly object: skipped"));
                continue;
            }
            auto a = std::make_unique<Anomaly>();
            bool skip = false;
            for (std::uint32_t i = 0; i < record.size() && !skip; ++i) {
                // (The field name outside the lambda: clang 14 cannot capture a structured binding.)
                const std::string_view field = record.keyAt(i);
                const auto f = std::find_if(kFields.begin(), kFields.end(), [&](const char* n) { return field == n; });
                if (f == kFields.end()) {
                    result.warnings.push_back(makeWarning("monitor.anomaly-skipped", where,
                                                          "\"" + std::string(key) + "\" has the unknown field \""
                                                              + std::string(record.keyAt(i)) + "\": skipped (as msprobe does)"));
                    skip = true;
                    break;
                }
                a->values[static_cast<std::size_t>(f - kFields.begin())] = record.at(i);
            }
            if (skip)
                continue;
            for (std::size_t i = 0; i < 6; ++i) {
                const auto& v = a->values[i];
                if (!v)
                    continue;
                if (v->isInt() || v->type() == JsonType::Double || v->isBool()) {
                    a->numbers[i] = v->isBool() ? (v->asBool() ? 1 : 0) : v->asDouble();
                } else {
                    return makeError("monitor.anomaly-field", locate(*text, v->offset(), file.string()),
                                     std::string("\"") + kFields[i] + "\" of \"" + std::string(key)
                                         + "\" is not a number (msprobe fails comparing anomalies with it)");
                }
            }
            const auto& tag = a->values[TagName];
            a->stage = tag && tag->isString() ? trainStage(tag->asString()) : -1;
            anomalies.push_back(std::move(a));
        }
        documents.push_back(parsed.document);
    }

    std::vector<const Anomaly*> filtered;
    for (const auto& a : anomalies) {
        if (options.steps && !options.steps->empty()) {
            const double step = a->numbers[Step];
            if (std::none_of(options.steps->begin(), options.steps->end(), [&](long long s) { return double(s) == step; }))
                continue;
        }
        filtered.push_back(a.get());
    }
    const auto selected = topK(filtered, options.topK);

    // get_anomaly_dict: {tag_name + "_step_" + str(step) + "_call_" + str(call_id): __dict__}, a repeated key
    // keeping its first place with the last value.
    const auto str = [](const std::optional<JsonValue>& v, const char* none) {
        return v ? compare::pyStr(*v) : std::string(none);
    };
    std::vector<std::pair<std::string, const Anomaly*>> out;
    for (const Anomaly* a : selected) {
        std::string key = str(a->values[TagName], "None") + "_step_" + str(a->values[Step], "0") + "_call_"
            + str(a->values[CallId], "0");
        auto it = std::find_if(out.begin(), out.end(), [&](const auto& o) { return o.first == key; });
        if (it != out.end())
            it->second = a;
        else
            out.emplace_back(std::move(key), a);
        const auto& message = a->values[Message];
        result.messages.push_back(message ? compare::pyStr(*message) : std::string());
    }
    compare::msprobe26::PyJsonWriter w(1);
    std::string& text = w.text();
    if (out.empty()) {
        text = "{}";
    } else {
        text += '{';
        for (std::size_t i = 0; i < out.size(); ++i) {
            if (i)
                text += ',';
            w.newline(1);
            w.string(out[i].first);
            text += ": {";
            for (std::size_t f = 0; f < kFields.size(); ++f) {
                if (f)
                    text += ',';
                w.newline(2);
                w.string(kFields[f]);
                text += ": ";
                const auto& v = out[i].second->values[f];
                if (v)
                    w.value(v, 2);
                else if (f == Message)
                    text += "\"\"";
                else if (f == TagName || f == GroupMates)
                    text += "null";
                else
                    text += "0";
            }
            w.newline(1);
            text += '}';
        }
        w.newline(0);
        text += '}';
    }
    result.json = std::move(text);
    return result;
}

} // namespace probescope::monitor
