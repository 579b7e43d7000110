// SPDX-License-Identifier: Apache-2.0
#include "core/runut/runner.h"
#include "core/runut/resumecheck.h"
#include "core/util/fileio.h"

#include "core/dump/leaf.h"
#include "core/runut/csvio.h"
#include "core/runut/runutconfig.h"
#include "core/tensor/resolver.h"
#include "core/tensor/tensor.h"
#include "core/util/parallel.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <exception>
#include <mutex>
#include <unordered_set>

namespace probescope::runut {

namespace fs = std::filesystem;
using dump::JsonValue;

namespace {

constexpr std::string_view kResultPrefix = "accuracy_checking_result_";
constexpr std::string_view kDetailsPrefix = "accuracy_checking_details_";
constexpr std::string_view kDumpedResultPrefix = "dumped_output_checking_result_";
constexpr std::string_view kDumpedDetailsPrefix = "dumped_output_checking_details_";

std::string fileName(std::string_view prefix, const std::string& stamp)
{
    std::string name(prefix);
    name += stamp;
    name += ".csv";
    return name;
}

bool isStamp(std::string_view s)
{
    return s.size() == 14 && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// One second later: the next name that still matches accuracy_checking_result_<14 digits>.csv, so a
// run that finds its files taken stays resumable.
std::string nextStamp(const std::string& stamp)
{
    std::tm tm {};
    tm.tm_year = std::stoi(stamp.substr(0, 4)) - 1900;
    tm.tm_mon = std::stoi(stamp.substr(4, 2)) - 1;
    tm.tm_mday = std::stoi(stamp.substr(6, 2));
    tm.tm_hour = std::stoi(stamp.substr(8, 2));
    tm.tm_min = std::stoi(stamp.substr(10, 2));
    tm.tm_sec = std::stoi(stamp.substr(12, 2)) + 1;
    tm.tm_isdst = -1;
    return localTimestamp(std::mktime(&tm));
}

Diagnostic optionError(std::string message)
{
    return makeError("runut.option", {}, std::move(message));
}

int rank(std::string_view status)
{
    if (status == "error")
        return 3;
    if (status == "warning")
        return 2;
    if (status == "pass")
        return 1;
    return 0; // SKIP, SPACE
}

ApiVerdict skipVerdict(const std::string& fullName, const std::string& message)
{
    ApiVerdict v;
    v.forwardStatus = "SKIP";
    v.backwardStatus = "SKIP";
    v.message = message;
    v.rows.push_back(skipRow(fullName + ".forward.output.0", message));
    return v;
}

// §6.1: the Message cell is the first forward row's message when forward is SKIP, else the first
// backward row's message when backward is SKIP.
void fillMessage(ApiVerdict& v, std::size_t backwardFirst)
{
    v.message.clear();
    if (v.forwardStatus == "SKIP") {
        if (backwardFirst > 0)
            v.message = v.rows.front().message;
    } else if (v.backwardStatus == "SKIP") {
        if (backwardFirst < v.rows.size())
            v.message = v.rows[backwardFirst].message;
    }
}

bool isExecutedPrefix(std::string_view prefix)
{
    return prefix == "Functional" || prefix == "Tensor" || prefix == "Torch" || prefix == "Aten" || prefix == "NPU";
}

// ---- the device outputs a tensor dump recorded ----

struct DumpedValue
{
    Value value;
    std::string problem; ///< why the value cannot be judged ("" = fine)
    std::optional<Diagnostic> inputError; ///< set with `problem` when the resolver refused the tensor file
};

Value scalarValue(JsonValue leaf)
{
    Value v;
    const auto type = leaf.find("type");
    const auto value = leaf.find("value");
    const std::string_view t = type && type->isString() ? type->asString() : std::string_view();
    if (!value || value->isNull())
        return v;
    if (t == "bool" || value->isBool()) {
        v.kind = Value::Kind::Bool;
        v.boolValue = value->isBool() ? value->asBool() : value->asDouble() != 0;
    } else if (value->isInt() && t != "float") {
        v.kind = Value::Kind::Int;
        v.intValue = value->asInt();
    } else if (value->isNumber()) {
        v.kind = Value::Kind::Float;
        v.floatValue = value->asDouble();
    } else if (value->isString()) {
        v.kind = Value::Kind::Str;
        v.text = std::string(value->asString());
    }
    return v;
}

void readDumped(JsonValue v, const dump::DumpFile& file, DumpedValue& out, Value& into, int depth = 0)
{
    if (depth > 32) {
        out.problem = "the recorded output is nested too deeply";
        return;
    }
    if (v.isNull())
        return; // Kind::None
    const auto kind = dump::classifyLeaf(v);
    if (!kind) {
        if (v.isArray()) {
            into.kind = Value::Kind::List;
            into.items.resize(v.size());
            for (std::uint32_t i = 0; i < v.size() && out.problem.empty(); ++i)
                readDumped(v.at(i), file, out, into.items[i], depth + 1);
        } else if (v.isObject()) {
            into.kind = Value::Kind::Dict;
            into.items.resize(v.size());
            for (std::uint32_t i = 0; i < v.size() && out.problem.empty(); ++i) {
                into.keys.emplace_back(v.keyAt(i));
                readDumped(v.at(i), file, out, into.items[i], depth + 1);
            }
        }
        return;
    }
    switch (*kind) {
    case dump::LeafKind::Tensor: {
        std::string why;
        const auto leaf = dump::readTensorLeaf(v, &why);
        if (!leaf) {
            out.problem = "a recorded output tensor is malformed: " + why;
            return;
        }
        if (leaf->dataName.empty()) {
            out.problem = "the dump holds no data file for a recorded output tensor";
            return;
        }
        // Through the dump's one resolver (tensor/resolver.h): the name and the tensor folder stay inside the dump.
        auto t = tensor::makeTensorResolver(file.path.parent_path(), file.tensorDir)->load(leaf->dataName);
        if (!t) {
            out.problem = t.error().format();
            out.inputError = t.error();
            return;
        }
        const Diagnostics check = tensor::checkAgainstMetadata(*t, leaf->dtype, leaf->shape, std::string(leaf->dataName));
        if (hasErrors(check)) {
            out.problem = check.front().format();
            return;
        }
        into.kind = Value::Kind::Tensor;
        into.tensor = std::move(*t);
        return;
    }
    case dump::LeafKind::Scalar:
        into = scalarValue(v);
        return;
    case dump::LeafKind::Null:
        return;
    default:
        out.problem = "a recorded output is neither a tensor nor a number";
        return;
    }
}

/// The recorded `output` list of an entry, one Value per element (Kind::None for a null element).
std::optional<std::vector<Value>> dumpedOutputs(const dump::Entry* entry, const dump::DumpFile& file, std::string& problem,
                                                std::optional<Diagnostic>* inputError = nullptr)
{
    if (!entry)
        return std::nullopt;
    const auto output = entry->value.find("output");
    if (!output || !output->isArray()) {
        problem = "the dump entry has no output list";
        return std::nullopt;
    }
    std::vector<Value> values(output->size());
    for (std::uint32_t i = 0; i < output->size(); ++i) {
        DumpedValue d;
        readDumped(output->at(i), file, d, values[i]);
        if (!d.problem.empty()) {
            problem = d.problem;
            if (inputError)
                *inputError = d.inputError;
            return std::nullopt;
        }
    }
    return values;
}

/// True when some API output or gradient of the dump names a data file (task tensor).
bool dumpHoldsOutputData(const ApiCallList& list)
{
    for (const ApiCall& call : list.calls) {
        for (const dump::Entry* e : { call.forward, call.backward }) {
            if (!e)
                continue;
            const auto output = e->value.find("output");
            if (!output)
                continue;
            bool found = false;
            dump::forEachLeaf(*output, [&](const dump::LeafPath&, JsonValue leaf, dump::LeafKind kind) {
                if (kind == dump::LeafKind::Tensor && leaf.find("data_name"))
                    found = true;
                return !found;
            });
            if (found)
                return true;
        }
    }
    return false;
}

std::string shapeText(const std::vector<std::int64_t>& shape)
{
    std::string s = "(";
    for (std::size_t i = 0; i < shape.size(); ++i) {
        if (i)
            s += ", ";
        s += std::to_string(shape[i]);
    }
    s += shape.size() == 1 ? ",)" : ")";
    return s;
}

Value listOf(std::vector<Value> items)
{
    Value v;
    v.kind = Value::Kind::List;
    v.items = std::move(items);
    return v;
}

// ---- one API ----

struct Judge
{
    const RunUtOptions& options;
    const std::vector<std::string>& whiteList;
    const std::vector<std::string>& blackList;
    bool judgeDumped;
    const std::unordered_map<std::string, std::string>& refused; ///< ApiCallList::refused

    ApiOutcome run(const ApiCall& call, Replayer& replayer) const
    {
        ApiOutcome out;
        out.fullName = call.fullName;
        try {
            judge(call, replayer, out);
        } catch (const std::exception& e) {
            // msprobe's step 6: any exception becomes a SKIP row carrying its text.
            out.replay = skipVerdict(call.fullName, e.what());
            if (judgeDumped)
                out.dumped = out.replay;
        }
        return out;
    }

    void judge(const ApiCall& call, Replayer& replayer, ApiOutcome& out) const
    {
        const std::string& full = call.fullName;
        auto skip = [&](const std::string& message) {
            out.replay = skipVerdict(full, message);
            if (judgeDumped)
                out.dumped = out.replay;
        };
        if (isUnsupportedPrefix(call.prefix) || call.apiName.empty())
            return skip("API " + full + " not support for run ut. SKIP.");
        if (isFilteredByLists(call.apiName, whiteList, blackList))
            return skip("API " + call.apiName + " in black list or not in white list. SKIP.");

        CompareContext ctx;
        ctx.apiName = call.apiName;
        ctx.fullName = full;
        ctx.profile = options.profile;
        const std::string forwardPrefix = full + ".forward.output";
        const std::string backwardPrefix = full + ".backward.output";

        // exec_api returns None for other prefixes (VF, ...). msprobe then writes "pass" with a SKIP
        // details row; ProbeScope says SKIP in the result row too, since nothing was checked.
        if (!isExecutedPrefix(call.prefix))
            return skip("Bench output is None, skip this test.");
        if (!replayer.supports(call.prefix, call.apiName))
            return skip("API " + full + " has no LibTorch replay in ProbeScope. SKIP.");
        if (const auto it = refused.find(full); it != refused.end())
            return skip(it->second); // tensors past maxReplayBytes(): never built

        const ReplayResult r = replayer.replay(call);
        if (!r.skipMessage.empty()) {
            skip(r.skipMessage);
            out.replay.inputError = r.inputError;
            if (judgeDumped)
                out.dumped = out.replay;
            return;
        }
        ctx.inputWasFp8 = r.inputWasFp8;

        // Forward, then backward (§5.1).
        const CompareOutcome fwd = compareOutput(r.benchForward, r.deviceForward, ctx, forwardPrefix);
        out.replay.forwardStatus = fwd.status;
        out.replay.rows = fwd.rows;
        const std::size_t backwardFirst = out.replay.rows.size();
        appendBackward(out.replay, r, ctx, backwardPrefix, listOf(r.deviceGrads));
        fillMessage(out.replay, backwardFirst);

        if (judgeDumped)
            out.dumped = judgeDumpedOutputs(call, r, ctx, forwardPrefix, backwardPrefix);
    }

    static void appendBackward(ApiVerdict& v, const ReplayResult& r, const CompareContext& ctx,
                               const std::string& backwardPrefix, const Value& deviceGrads)
    {
        if (!r.backwardMessage.empty()) {
            v.backwardStatus = "SKIP";
            v.rows.push_back(skipRow(backwardPrefix + ".0", r.backwardMessage));
            return;
        }
        if (r.benchGrads.empty() || deviceGrads.items.empty()) {
            v.backwardStatus.clear();
            return;
        }
        CompareOutcome bwd = compareOutput(listOf(r.benchGrads), deviceGrads, ctx, backwardPrefix);
        v.backwardStatus = bwd.status;
        for (auto& row : bwd.rows)
            v.rows.push_back(std::move(row));
    }

    // Issue §4: the device outputs the dump recorded, judged against the replay's CPU bench with the
    // same rules. Forward `output` holds what the API returned; the backward entry's `output` holds
    // the gradients of the inputs, in the order of the positional arguments (null where none).
    ApiVerdict judgeDumpedOutputs(const ApiCall& call, const ReplayResult& r, const CompareContext& ctx,
                                  const std::string& forwardPrefix, const std::string& backwardPrefix) const
    {
        const std::string& full = call.fullName;
        const dump::DumpFile& file = *call.dump;
        ApiVerdict v;
        std::string problem;
        std::optional<Diagnostic> inputError;
        const auto forward = dumpedOutputs(call.forward, file, problem, &inputError);
        if (!forward) {
            v = skipVerdict(full, "The dumped output cannot be judged: " + problem);
            v.inputError = inputError;
            return v;
        }
        Value device;
        if (r.benchForward.kind == Value::Kind::List)
            device = listOf(*forward);
        else if (!forward->empty())
            device = forward->front(); // a single returned value is recorded as a one-element list
        const CompareOutcome fwd = compareOutput(r.benchForward, device, ctx, forwardPrefix);
        v.forwardStatus = fwd.status;
        v.rows = fwd.rows;
        const std::size_t backwardFirst = v.rows.size();

        if (!r.backwardMessage.empty() || r.benchGrads.empty()) {
            appendBackward(v, r, ctx, backwardPrefix, Value {});
        } else if (!call.backward) {
            v.backwardStatus.clear();
        } else {
            std::string bproblem;
            const auto grads = dumpedOutputs(call.backward, file, bproblem);
            if (!grads) {
                v.backwardStatus = "SKIP";
                v.rows.push_back(skipRow(backwardPrefix + ".0", "The dumped gradients cannot be judged: " + bproblem));
            } else {
                judgeDumpedGradients(v, r, *grads, ctx, backwardPrefix);
            }
        }
        fillMessage(v, backwardFirst);
        return v;
    }

    // The recorded gradients are compared where they can be the gradient of that input. Elsewhere the
    // row is SKIP with the reason: the dump has none (msprobe records grads only of inputs that required
    // one), the input has none (the judge would call that a type mismatch), or the recorded gradient has
    // another shape. The last happens when the dumper saw the API's last autograd node rather than the
    // API (msprobe's non-full backward hooks on torch < 2.0; composite aten ops such as matmul recorded at
    // the dispatcher): addmm's gradients for linear, bmm's for matmul, not the API's inputs'.
    static void judgeDumpedGradients(ApiVerdict& v, const ReplayResult& r, const std::vector<Value>& recorded,
                                     const CompareContext& ctx, const std::string& backwardPrefix)
    {
        const std::size_t first = v.rows.size();
        ReplayResult shown = r;
        std::vector<Value> device(r.benchGrads.size());
        std::vector<std::pair<std::size_t, std::string>> reasons;
        for (std::size_t i = 0; i < r.benchGrads.size(); ++i) {
            const Value& bench = r.benchGrads[i];
            if (i < recorded.size())
                device[i] = recorded[i];
            if (bench.kind == Value::Kind::None) {
                device[i] = Value {};
                continue;
            }
            std::string reason;
            if (device[i].kind != Value::Kind::Tensor)
                reason = "The dump holds no gradient for this input, skip this test.";
            else if (bench.kind == Value::Kind::Tensor && device[i].tensor.shape != bench.tensor.shape)
                reason = "The dump recorded a gradient of shape " + shapeText(device[i].tensor.shape)
                    + " here, not one of this input's shape " + shapeText(bench.tensor.shape)
                    + " (a dumper that hooks the API's last autograd node records that node's gradients), skip this test.";
            if (!reason.empty()) {
                shown.benchGrads[i] = Value {};
                device[i] = Value {};
                reasons.emplace_back(i, std::move(reason));
            }
        }
        appendBackward(v, shown, ctx, backwardPrefix, listOf(device));
        for (const auto& [i, reason] : reasons) {
            if (first + i < v.rows.size() && v.rows[first + i].status == "SKIP")
                v.rows[first + i].message = reason;
        }
        // Nothing compared at all: say SKIP, not msprobe's "pass" of an all-SKIP list.
        if (first < v.rows.size()
            && std::all_of(v.rows.begin() + static_cast<std::ptrdiff_t>(first), v.rows.end(),
                           [](const DetailRow& row) { return row.status == "SKIP"; }))
            v.backwardStatus = "SKIP";
    }
};


struct Files
{
    fs::path result, details;
    std::optional<fs::path> dumpedResult, dumpedDetails;
};

std::optional<Diagnostic> appendVerdict(const fs::path& result, const fs::path& details, const std::string& fullName,
                                        const ApiVerdict& v, int precision)
{
    std::string rows;
    for (const DetailRow& row : v.rows)
        rows += csvLine(detailCells(row, precision));
    // Details first: a crash between the two leaves the API out of the result file, and -csv_path
    // replays it (its details rows then appear twice, which api_precision_compare tolerates less badly
    // than a result row without details).
    if (auto e = appendCsv(details, rows))
        return e;
    return appendCsv(result, csvLine(resultCells(fullName, v)));
}

/// Counts by overall verdict and remembers the first failures. The forward pass runs in dump order
/// and a wrong output upsets everything after it, so the first API whose forward fails is named before
/// any whose only failure is backward (backward entries run in reverse, often downstream of the cause).
struct Tally
{
    std::size_t passed = 0, warnings = 0, errors = 0, skipped = 0;
    std::string forwardError, anyError, forwardWarning, anyWarning;
    /// APIs skipped because a tensor file of the dump was refused (a data name leaving the dump, a damaged file):
    /// a damaged input, never a quiet SKIP row (issue 25). One diagnostic each, at most kMaxInputErrors.
    Diagnostics inputErrors;
    static constexpr std::size_t kMaxInputErrors = 20;

    void add(const ApiVerdict& v, const std::string& name)
    {
        const std::string o = v.overall();
        if (o == "SKIP") {
            ++skipped;
            // A tensor file the resolver refused is a damaged input: told by the verdict's diagnostic (issue 33).
            if (v.inputError && inputErrors.size() < kMaxInputErrors)
                inputErrors.push_back(makeError("runut.tensor-input", SourceLocation {}, name + " was not replayed: "
                                                + v.message));
            return;
        }
        if (o == "error")
            ++errors;
        else if (o == "warning")
            ++warnings;
        else
            ++passed;
        auto note = [&](std::string& slot, bool when) {
            if (when && slot.empty())
                slot = name;
        };
        note(forwardError, v.forwardStatus == "error");
        note(anyError, o == "error");
        note(forwardWarning, v.forwardStatus == "warning");
        note(anyWarning, o == "warning");
    }

    std::string firstFailing() const
    {
        for (const std::string* s : { &forwardError, &anyError, &forwardWarning, &anyWarning }) {
            if (!s->empty())
                return *s;
        }
        return {};
    }
};

} // namespace

std::string ApiVerdict::overall() const
{
    if (forwardStatus == "SKIP")
        return "SKIP";
    const int worst = std::max(rank(forwardStatus), rank(backwardStatus));
    return worst == 3 ? "error" : worst == 2 ? "warning" : worst == 1 ? "pass" : "SKIP";
}

const std::vector<std::string>& resultHeader()
{
    static const std::vector<std::string> header { "API name", "Forward Test Success", "Backward Test Success",
                                                   "Message" };
    return header;
}

std::vector<std::string> resultCells(const std::string& fullName, const ApiVerdict& verdict)
{
    std::vector<std::string> cells { fullName, verdict.forwardStatus.empty() ? std::string(kSpace) : verdict.forwardStatus,
                                     verdict.backwardStatus.empty() ? std::string(kSpace) : verdict.backwardStatus };
    if (verdict.forwardStatus == "SKIP" || verdict.backwardStatus == "SKIP")
        cells.push_back(verdict.message);
    return cells;
}

bool isResultCsvName(const std::string& name)
{
    return name.size() == kResultPrefix.size() + 14 + 4 && name.compare(0, kResultPrefix.size(), kResultPrefix) == 0
        && isStamp(std::string_view(name).substr(kResultPrefix.size(), 14)) && name.substr(name.size() - 4) == ".csv";
}

namespace {

// ---- the plan: the options, the lists, the dump's calls, the output files and the APIs left to judge ----

std::optional<Diagnostic> checkOptions(const RunUtOptions& options, const ReplayerFactory& factory)
{
    if (options.workers < 1 || options.workers > 64)
        return optionError("the number of workers must be 1 to 64 (got " + std::to_string(options.workers) + ")");
    if (options.precision < 0 || options.precision > 20)
        return optionError("precision must be 0 to 20 (got " + std::to_string(options.precision) + ")");
    if (!options.timestamp.empty() && !isStamp(options.timestamp))
        return optionError("the timestamp must be 14 digits, YYYYmmddHHMMSS (got \"" + options.timestamp + "\")");
    if (!factory)
        return optionError("no replayer");
    return std::nullopt;
}

struct ApiLists
{
    std::vector<std::string> whiteList, blackList;
};

/// The lists: the config's (msprobe: -config replaces config.yaml's empty defaults) plus the options'.
Result<ApiLists> readLists(const RunUtOptions& options, const ReplayerFactory& factory, RunUtSummary& summary)
{
    ApiLists lists { options.whiteList, options.blackList };
    std::vector<std::string>& whiteList = lists.whiteList;
    std::vector<std::string>& blackList = lists.blackList;
    if (options.config) {
        auto config = readRunUtConfig(*options.config);
        if (!config)
            return config.error();
        for (const auto& n : config->whiteList)
            whiteList.push_back(n.name);
        for (const auto& n : config->blackList)
            blackList.push_back(n.name);
        summary.diagnostics = config->warnings;
        // msprobe refuses names that are not in support_wrap_ops.yaml; ProbeScope has no copy of it, so
        // a name no replay knows under any prefix is reported (a typo would otherwise skip everything).
        std::unique_ptr<Replayer> probe;
        try {
            probe = factory();
        } catch (const std::exception&) {
            // reported by the workers, which need a replayer too
        }
        if (probe) {
            for (const auto* list : { &config->whiteList, &config->blackList }) {
                for (const ConfigName& n : *list) {
                    bool known = false;
                    for (const char* prefix : { "Functional", "Tensor", "Torch", "NPU" })
                        known = known || probe->supports(prefix, n.name);
                    if (!known)
                        summary.diagnostics.push_back(makeWarning(
                            "runut.config-unknown-api", n.where,
                            "\"" + n.name + "\" is not an API the replay knows (Functional, Tensor, Torch or NPU)"));
                }
            }
        }
    }
    return lists;
}

/// -csv_path: the resumed run's files, checked resumable, and the APIs its result file holds already.
std::optional<Diagnostic> resumeFiles(const fs::path& csv, bool dumpedData, Files& files,
                                      std::unordered_set<std::string>& done, RunUtSummary& summary)
{
    std::error_code ec;
    const std::string name = csv.filename().string();
    if (!isResultCsvName(name))
        return makeError("runut.resume", fileLocation(csv),
                         "-csv_path must name an accuracy_checking_result_<14 digits>.csv file");
    if (!fs::is_regular_file(csv, ec))
        return makeError("runut.resume", fileLocation(csv), "no such result file");
    summary.timestamp = name.substr(kResultPrefix.size(), 14);
    files.result = csv;
    files.details = csv.parent_path() / fileName(kDetailsPrefix, summary.timestamp);
    if (!fs::is_regular_file(files.details, ec))
        return makeError("runut.resume", fileLocation(files.details),
                         "the details file of the resumed result file does not exist");
    auto table = readCsv(csv);
    if (!table)
        return table.error();
    if (table->header != resultHeader())
        return makeError("runut.resume", SourceLocation { csv.string(), std::nullopt, 1, 1 },
                         "not a run_ut result file: the header is not API name, Forward Test Success, "
                         "Backward Test Success, Message");
    // A file cut mid-line is named and left alone; appending would glue rows together (issue 20).
    if (auto bad = checkResumableCsv(csv, 3))
        return *bad;
    if (auto bad = checkResumableCsv(files.details, 1))
        return *bad;
    for (const CsvRow& row : table->rows) {
        if (!row.cells.empty())
            done.insert(row.cells.front());
    }
    if (dumpedData) {
        const fs::path dr = csv.parent_path() / fileName(kDumpedResultPrefix, summary.timestamp);
        const fs::path dd = csv.parent_path() / fileName(kDumpedDetailsPrefix, summary.timestamp);
        const bool hasR = fs::exists(dr, ec);
        const bool hasD = fs::exists(dd, ec);
        if (hasR != hasD)
            return makeError("runut.resume", fileLocation(hasR ? dd : dr),
                             "this dumped-output file is missing while its companion exists");
        if (hasR) {
            if (auto bad = checkResumableCsv(dr, 3))
                return *bad;
            if (auto bad = checkResumableCsv(dd, 1))
                return *bad;
        }
        if (!hasR) {
            if (auto e = createCsv(dr, resultHeader()))
                return *e;
            if (auto e = createCsv(dd, detailsHeader()))
                return *e;
            if (!done.empty())
                summary.diagnostics.push_back(makeWarning(
                    "runut.resume-dumped", fileLocation(dr),
                    "the resumed run wrote no dumped-output files; the new ones hold only the APIs judged now"));
        }
        files.dumpedResult = dr;
        files.dumpedDetails = dd;
    }
    return std::nullopt;
}

/// A new run: its output files claimed under one free timestamp.
std::optional<Diagnostic> claimFiles(const RunUtOptions& options, bool dumpedData, Files& files, RunUtSummary& summary)
{
    std::error_code ec;
    fs::create_directories(options.outDir, ec);
    if (!fs::is_directory(options.outDir, ec))
        return makeError("io.write", fileLocation(options.outDir), "cannot create the output folder");
    // Never replace a file: a taken timestamp moves on by a second, which keeps the name resumable.
    // The result file is claimed first and atomically (O_EXCL), so two runs started in the same
    // second into one folder (parallel tests, two GUI jobs) end up with different timestamps.
    std::string stamp = options.timestamp.empty() ? localTimestamp() : options.timestamp;
    std::vector<std::pair<std::string_view, const std::vector<std::string>*>> outputs {
        { kResultPrefix, &resultHeader() }, { kDetailsPrefix, &detailsHeader() } };
    if (dumpedData) {
        outputs.emplace_back(kDumpedResultPrefix, &resultHeader());
        outputs.emplace_back(kDumpedDetailsPrefix, &detailsHeader());
    }
    for (int tries = 0;; ++tries) {
        if (tries > 1000)
            return makeError("csv.exists", fileLocation(options.outDir), "no free timestamp for the output files");
        bool free = true;
        for (const auto& o : outputs)
            free = free && !fs::exists(options.outDir / fileName(o.first, stamp), ec);
        std::vector<fs::path> created;
        std::optional<Diagnostic> problem;
        for (std::size_t i = 0; free && i < outputs.size(); ++i) {
            const fs::path p = options.outDir / fileName(outputs[i].first, stamp);
            problem = createCsv(p, *outputs[i].second);
            if (problem)
                break;
            created.push_back(p);
        }
        if (free && !problem)
            break;
        if (problem && problem->id != "csv.exists")
            return *problem;
        // Lost a race for this second: give back what this run created and take the next one.
        for (const fs::path& p : created)
            fs::remove(p, ec);
        stamp = nextStamp(stamp);
    }
    summary.timestamp = stamp;
    files.result = options.outDir / fileName(kResultPrefix, stamp);
    files.details = options.outDir / fileName(kDetailsPrefix, stamp);
    if (dumpedData) {
        files.dumpedResult = options.outDir / fileName(kDumpedResultPrefix, stamp);
        files.dumpedDetails = options.outDir / fileName(kDumpedDetailsPrefix, stamp);
    }
    return std::nullopt;
}

struct RunPlan
{
    ApiLists lists;
    ApiCallList list;
    bool dumpedData = false;
    Files files;
    std::vector<std::size_t> work; ///< the calls to judge (indices into list.calls), in dump order
};

Result<RunPlan> planRun(const RunUtOptions& options, const ReplayerFactory& factory, RunUtSummary& summary)
{
    if (auto bad = checkOptions(options, factory))
        return *bad;
    auto lists = readLists(options, factory, summary);
    if (!lists)
        return lists.error();

    auto loaded = loadApiCalls(options.apiInfo, options.filterApi);
    if (!loaded)
        return loaded.error();
    RunPlan plan { std::move(*lists), std::move(*loaded), false, {}, {} };
    ApiCallList& list = plan.list;
    summary.filteredOut = list.filteredOut;
    for (const Diagnostic& d : list.diagnostics)
        summary.diagnostics.push_back(d);

    if (list.calls.empty())
        summary.diagnostics.push_back(makeWarning("runut.no-apis", fileLocation(options.apiInfo),
                                                  "the dump holds no API calls (run_ut needs level L1 or mix, this "
                                                  "one is level " + (list.dump->header.level.empty() ? std::string("?") : list.dump->header.level) + ")"));
    const bool dumpedData = options.judgeDumpedOutputs && dumpHoldsOutputData(list);
    if (options.judgeDumpedOutputs && !dumpedData)
        summary.diagnostics.push_back(makeWarning(
            "runut.no-dumped-data", fileLocation(options.apiInfo),
            "the dump holds no output data files (task " + (list.dump->header.task.empty() ? std::string("?") : list.dump->header.task)
                + "), so there are no dumped outputs to judge; only the replay is checked"));
    plan.dumpedData = dumpedData;

    // Output files (§6, §7.2).
    std::unordered_set<std::string> done;
    if (options.resumeCsv) {
        if (auto bad = resumeFiles(*options.resumeCsv, dumpedData, plan.files, done, summary))
            return *bad;
    } else if (auto bad = claimFiles(options, dumpedData, plan.files, summary)) {
        return *bad;
    }
    summary.resultCsv = plan.files.result;
    summary.detailsCsv = plan.files.details;
    summary.dumpedResultCsv = plan.files.dumpedResult;
    summary.dumpedDetailsCsv = plan.files.dumpedDetails;

    // §4 step 1: APIs already in column 0 of the resumed result file are skipped silently.
    plan.work.reserve(list.calls.size());
    for (std::size_t i = 0; i < list.calls.size(); ++i) {
        if (done.count(list.calls[i].fullName))
            ++summary.resumedSkipped;
        else
            plan.work.push_back(i);
    }
    return plan;
}

// ---- the replay: the planned APIs judged by the workers, their rows written in dump order ----

struct Tallies
{
    Tally replay, dumped;
    bool cancelled = false;
};

Result<Tallies> replayAll(const RunPlan& plan, const RunUtOptions& options, const ReplayerFactory& factory,
                          ProgressSink* progress, const std::function<void(const ApiOutcome&)>& onApi,
                          RunUtSummary& summary)
{
    const std::vector<std::size_t>& work = plan.work;
    const ApiCallList& list = plan.list;
    const Files& files = plan.files;
    if (progress)
        progress->setRange(work.size());

    const Judge judge { options, plan.lists.whiteList, plan.lists.blackList, plan.dumpedData, list.refused };
    std::mutex mutex;
    std::vector<std::optional<ApiOutcome>> slots(work.size());
    std::size_t nextWrite = 0;
    std::optional<Diagnostic> failure;
    std::atomic<std::size_t> next { 0 };
    std::atomic<bool> stop { false };
    std::atomic<bool> cancelled { false };
    Tallies tallies;
    Tally& replayTally = tallies.replay;
    Tally& dumpedTally = tallies.dumped;

    // Rows are written in dump order: whoever completes the next API in line writes it and every
    // finished one after it, so the files do not depend on the number of workers.
    auto flushReady = [&] {
        while (nextWrite < slots.size() && slots[nextWrite]) {
            ApiOutcome& o = *slots[nextWrite];
            if (!failure) {
                failure = appendVerdict(files.result, files.details, o.fullName, o.replay, options.precision);
                if (!failure && files.dumpedResult && o.dumped)
                    failure = appendVerdict(*files.dumpedResult, *files.dumpedDetails, o.fullName, *o.dumped,
                                            options.precision);
                if (failure) {
                    stop = true;
                    return;
                }
            }
            ++summary.apis;
            replayTally.add(o.replay, o.fullName);
            if (o.dumped)
                dumpedTally.add(*o.dumped, o.fullName);
            if (onApi)
                onApi(o);
            slots[nextWrite].reset();
            ++nextWrite;
            if (progress)
                progress->advance(nextWrite);
        }
    };

    auto worker = [&] {
        std::unique_ptr<Replayer> replayer;
        try {
            replayer = factory();
        } catch (const std::exception& e) {
            std::lock_guard lock(mutex);
            if (!failure)
                failure = optionError(std::string("the replayer could not be created: ") + e.what());
            stop = true;
            return;
        }
        if (!replayer) {
            std::lock_guard lock(mutex);
            if (!failure)
                failure = optionError("the replayer factory returned no replayer");
            stop = true;
            return;
        }
        while (!stop.load()) {
            if (progress && progress->isCancelled()) {
                cancelled = true;
                stop = true;
                break;
            }
            const std::size_t slot = next.fetch_add(1);
            if (slot >= work.size())
                break;
            ApiOutcome outcome = judge.run(list.calls[work[slot]], *replayer);
            outcome.index = work[slot];
            std::lock_guard lock(mutex);
            slots[slot] = std::move(outcome);
            flushReady();
        }
    };

    // The threads come from util/parallel (the one pool). Each takes one worker loop, not one API: a worker owns
    // its replayer (created once per thread) and takes APIs in order from `next`; progress and cancellation are the
    // loop's own (rows are counted as they are written, in dump order).
    const auto threads = static_cast<unsigned>(std::max<std::size_t>(
        1, std::min<std::size_t>(static_cast<std::size_t>(std::max(options.workers, 1)), std::max<std::size_t>(work.size(), 1))));
    parallelFor(threads, threads, [&](std::size_t) { worker(); });
    {
        std::lock_guard lock(mutex);
        flushReady();
    }
    if (failure)
        return *failure;
    tallies.cancelled = cancelled.load();
    return tallies;
}

// ---- the report: the summary's counts and first failures ----

void report(const Tallies& tallies, const RunUtOptions& options, RunUtSummary& summary)
{
    const Tally& replayTally = tallies.replay;
    const Tally& dumpedTally = tallies.dumped;
    summary.passed = replayTally.passed;
    summary.warnings = replayTally.warnings;
    summary.errors = replayTally.errors;
    summary.skipped = replayTally.skipped;
    for (Diagnostic d : replayTally.inputErrors) {
        d.location.file = options.apiInfo.string(); // the dump whose tensor was refused
        summary.diagnostics.push_back(std::move(d));
    }
    summary.firstFailing = replayTally.firstFailing();
    summary.dumpedPassed = dumpedTally.passed;
    summary.dumpedWarnings = dumpedTally.warnings;
    summary.dumpedErrors = dumpedTally.errors;
    summary.dumpedSkipped = dumpedTally.skipped;
    summary.firstDumpedFailing = dumpedTally.firstFailing();
    summary.cancelled = tallies.cancelled;
}

} // namespace

Result<RunUtSummary> runUt(const RunUtOptions& options, const ReplayerFactory& factory, ProgressSink* progress,
                           std::function<void(const ApiOutcome&)> onApi)
{
    const auto started = std::chrono::steady_clock::now();
    RunUtSummary summary;
    auto plan = planRun(options, factory, summary);
    if (!plan)
        return plan.error();
    auto tallies = replayAll(*plan, options, factory, progress, onApi, summary);
    if (!tallies)
        return tallies.error();
    report(*tallies, options, summary);
    summary.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    return summary;
}

} // namespace probescope::runut
