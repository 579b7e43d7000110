// SPDX-License-Identifier: Apache-2.0
// msprobe 26.0.0 ("Era C") compare: flattening (gen_op_item), row-level matching with backward-call
// renumbering, table layout, statistics diffs, indicator checkers and the pandas CSV text.
#include "core/compare/msprobe26/msprobe26.h"

#include "core/util/pytext.h"

#include "core/compare/output/csvwriter.h"
#include "core/compare/table/flatten.h"
#include "core/compare/match/mapping.h"
#include "core/compare/match/mappingutil.h"
#include "core/compare/table/pytext.h"
#include "core/compare/metrics/realdata.h"
#include "core/dump/leaf.h"
#include "core/dump/rankdump.h"
#include "core/util/workgroup.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <optional>
#include <string_view>
#include <unordered_map>

namespace probescope::compare::msprobe26 {

double pandasToFloat(std::string_view text)
{
    // pandas' precise_xstrtod (pandas/_libs/src/parser/tokenizer.c, used by pd.to_numeric since 1.1), written
    // from its behaviour: at most 17 digits are accumulated in a double, counting leading zeros, the rest
    // are dropped (integer digits raise the exponent); the result is then scaled by one power of ten.
    // "0.003224366344511509" therefore reads as 0.0032243663445115.
    static const auto powers = [] {
        std::array<double, 309> e {};
        for (int i = 0; i <= 308; ++i)
            e[static_cast<std::size_t>(i)] = std::strtod(("1e" + std::to_string(i)).c_str(), nullptr);
        return e;
    }();
    std::size_t i = 0;
    auto at = [&](std::size_t k) { return k < text.size() ? text[k] : '\0'; };
    auto isDigit = [](char ch) { return ch >= '0' && ch <= '9'; };
    while (at(i) == ' ' || at(i) == '\t' || at(i) == '\n' || at(i) == '\r' || at(i) == '\f' || at(i) == '\v')
        ++i;
    bool negative = false;
    if (at(i) == '-' || at(i) == '+') {
        negative = at(i) == '-';
        ++i;
    }
    constexpr int maxDigits = 17;
    double number = 0;
    int exponent = 0;
    int numDigits = 0;
    while (isDigit(at(i))) {
        if (numDigits < maxDigits) {
            number = number * 10. + (at(i) - '0');
            ++numDigits;
        } else {
            ++exponent;
        }
        ++i;
    }
    if (at(i) == '.') {
        ++i;
        int decimals = 0;
        while (numDigits < maxDigits && isDigit(at(i))) {
            number = number * 10. + (at(i) - '0');
            ++numDigits;
            ++decimals;
            ++i;
        }
        while (isDigit(at(i)))
            ++i;
        exponent -= decimals;
    }
    if (numDigits == 0)
        return std::numeric_limits<double>::quiet_NaN();
    if (negative)
        number = -number;
    if (at(i) == 'e' || at(i) == 'E') {
        ++i;
        bool negExp = false;
        if (at(i) == '-' || at(i) == '+') {
            negExp = at(i) == '-';
            ++i;
        }
        int n = 0;
        int expDigits = 0;
        while (expDigits < maxDigits && isDigit(at(i))) {
            n = std::min(n * 10 + (at(i) - '0'), 100000); // beyond ±616 the result no longer changes
            ++expDigits;
            ++i;
        }
        exponent += negExp ? -n : n;
    }
    if (exponent > 308)
        return std::numeric_limits<double>::quiet_NaN(); // ERANGE: to_numeric(errors="coerce") gives NaN
    if (exponent > 0)
        return number * powers[static_cast<std::size_t>(exponent)];
    if (exponent < -308) {
        if (exponent < -616)
            return 0.;
        number /= powers[static_cast<std::size_t>(-308 - exponent)];
        return number / powers[308];
    }
    return number / powers[static_cast<std::size_t>(-exponent)];
}

namespace {

using dump::JsonType;
using dump::JsonValue;

constexpr const char* kNA = "N/A";
constexpr int kMaxDepth = 400;

bool hasSegment(std::string_view name, std::string_view segment)
{
    for (const auto& part : splitDots(name)) {
        if (part == segment)
            return true;
    }
    return false;
}

bool isDigits(std::string_view s)
{
    return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

/// One flattened leaf (a row of msprobe's ParseData frame).
struct Row26
{
    std::string name;
    std::string dtype; ///< astype(str): "None" for a null leaf
    std::string shape;
    std::array<Cell, 4> stats;
    std::string md5;
    std::string dataName = "-1";
    std::optional<std::string> requiresGrad;
    std::string state;
    std::uint32_t entry = 0;
    std::string apiOrigin;
    std::optional<std::string> stack; ///< first row of an entry in stack mode (None → N/A)
    std::string direction;
    std::string callDirection;
    std::string opNoNumber;
    int forwardOrder = 0;
    int backwardOrder = 0;
    std::string suffix;
    std::string key; ///< compare key (renumbered name)
    std::optional<std::vector<std::string>> stackFrames; ///< the same stack as a list (-da writes it as JSON)
    Cell p2pOp = Cell::text("None");   ///< a torch.distributed.P2POp leaf's "op" (-da only)
    Cell p2pPeer = Cell::text("None"); ///< its "peer"
};

Cell strCell(std::optional<JsonValue> v)
{
    return Cell::text(v ? pyStr(*v) : std::string("None"));
}

/// A leaf's stat as gen_op_item leaves it: bools become "True"/"False", a missing stat None.
Cell statOf(JsonValue leaf, const char* key)
{
    const auto v = leaf.find(key);
    if (v && v->isBool())
        return Cell::text(v->asBool() ? "True" : "False");
    return cellFromJson(v);
}

class Flattener26
{
public:
    std::vector<Row26> rows;
    std::optional<std::string> error;

    void parse(JsonValue v, const std::string& name, const std::string& state, int depth)
    {
        if (error)
            return;
        if (depth > kMaxDepth) {
            error = "parse of " + name + " exceeds the recursion limit";
            return;
        }
        if (v.isNull()) {
            rows.push_back(defaultRow(name, state));
            return;
        }
        if ((v.isArray() || v.isObject()) && v.size() == 0)
            return;
        if (v.isArray()) {
            const bool grad = hasSegment(name, "parameters_grad");
            for (std::uint32_t i = 0; i < v.size(); ++i)
                parse(v.at(i), grad ? name : name + "." + std::to_string(i), state, depth + 1);
            return;
        }
        if (!v.isObject())
            return; // bare scalars outside a leaf are not rows
        const auto classType = v.find("class_type");
        if (classType && classType->isString() && classType->asString() == "torch.distributed.P2POp") {
            const auto t = v.find("tensor");
            if (t && t->isObject())
                rows.push_back(leafRow(*t, name, state));
            else
                rows.push_back(defaultRow(name, state));
            rows.back().p2pOp = cellFromJson(v.find("op"));
            rows.back().p2pPeer = cellFromJson(v.find("peer"));
            return;
        }
        const auto type = v.find("type");
        if (type && type->isString()) {
            rows.push_back(leafRow(v, name, state));
            return;
        }
        for (std::uint32_t i = 0; i < v.size(); ++i)
            parse(v.at(i), name + "." + std::string(v.keyAt(i)), state, depth + 1);
    }

private:
    static Row26 defaultRow(const std::string& name, const std::string& state)
    {
        Row26 r;
        r.name = name;
        r.dtype = "None";
        r.shape = "None";
        // The md5 of a null leaf stays Python None, which the fillna("N/A") after matching replaces
        // (dtype and shape are already the text "None" by then).
        r.md5 = kNA;
        r.state = state;
        for (auto& s : r.stats)
            s = Cell::none();
        return r;
    }

    static Row26 leafRow(JsonValue v, const std::string& name, const std::string& state)
    {
        Row26 r;
        r.state = state;
        const auto dataName = v.find("data_name");
        if (dataName && !(dataName->isNull() || (dataName->isString() && dataName->asString().empty())
                          || (dataName->isBool() && !dataName->asBool())))
            r.dataName = dataName->isString() ? std::string(dataName->asString()) : pyStr(*dataName);
        if (r.dataName != "-1") {
            const std::size_t dot = r.dataName.rfind('.');
            r.name = dot == std::string::npos ? r.dataName : r.dataName.substr(0, dot);
        } else {
            r.name = name;
        }
        if (const auto rg = v.find("requires_grad"); rg && !rg->isNull())
            r.requiresGrad = rg->isBool() ? std::string(rg->asBool() ? "True" : "False") : pyStr(*rg);
        static constexpr const char* statKeys[] = { "Max", "Min", "Mean", "Norm" };
        for (int i = 0; i < 4; ++i)
            r.stats[i] = statOf(v, statKeys[i]);
        const auto value = v.find("value");
        const auto dtype = v.find("dtype");
        const std::string type(v.find("type")->asString());
        const bool hasDtype = dtype && !dtype->isNull() && !(dtype->isString() && dtype->asString().empty())
            && !(dtype->isBool() && !dtype->asBool()) && !(dtype->isArray() && dtype->size() == 0);
        std::optional<std::string> md5;
        if (const auto m = v.find("md5"); m && !m->isNull() && !(m->isString() && m->asString().empty()))
            md5 = m->isBool() ? std::string(m->asBool() ? "True" : "False") : pyStr(*m);
        const std::string lastSegment = splitDots(name).back();
        if (hasDtype) {
            r.dtype = dtype->isBool() ? std::string(dtype->asBool() ? "True" : "False") : pyStr(*dtype);
            const auto shape = v.find("shape");
            r.shape = shape ? pyStr(*shape) : "None";
        } else if (type == "torch.Size") {
            r.dtype = type;
            r.shape = value ? pyStr(*value) : "None";
        } else if (type == "slice") {
            r.dtype = type;
            r.shape = numpyShapeText(value);
        } else if (type == "ellipsis") {
            r.dtype = type;
            r.shape = "[]";
            for (auto& s : r.stats)
                s = cellFromJson(value);
        } else if (lastSegment == "src" || lastSegment == "dst" || lastSegment == "group_src"
                   || lastSegment == "group_dst") {
            r.dtype = type;
            r.shape = "[]";
            for (auto& s : r.stats)
                s = strCell(value);
            md5 = value ? pyStr(*value) : "None";
        } else if (type == "torch.ProcessGroup") {
            r.dtype = type;
            r.shape = "[]";
            const auto ranks = v.find("group_ranks");
            for (auto& s : r.stats)
                s = strCell(ranks);
            md5 = ranks ? pyStr(*ranks) : "None";
        } else {
            r.dtype = std::string("<class '") + pyTypeName(value) + "'>";
            r.shape = "[]";
            for (auto& s : r.stats)
                s = cellFromJson(value);
        }
        if (!md5 || md5->empty())
            md5 = crc32Hex(value ? pyStr(*value) : std::string());
        r.md5 = *md5;
        return r;
    }
};

/// Rows of one entry in Era C order, or nullopt when the entry is skipped.
Result<std::vector<Row26>> flattenEntry26(const dump::Entry& entry)
{
    const std::string key(entry.key);
    const auto parts = splitDots(key);
    Flattener26 f;
    const bool isDebug = parts.back() == "debug";
    const bool isGrad = parts.back() == "parameters_grad" || (parts.size() >= 2 && parts[parts.size() - 2] == "parameters_grad");
    if (isDebug) {
        f.parse(entry.value, key, "debug", 0);
    } else if (isGrad) {
        f.parse(entry.value, key, "parameters_grad", 0);
    } else if (entry.value.isObject()) {
        static constexpr std::pair<const char*, const char*> fields[] = {
            { "input_args", ".input" }, { "input_kwargs", ".input" }, { "input", ".input" },
            { "output", ".output" },    { "parameters", ".parameters" },
        };
        for (const auto& [field, suffix] : fields) {
            if (const auto v = entry.value.find(field)) {
                std::string state = field;
                if (state == "input_args" || state == "input_kwargs")
                    state = "input";
                f.parse(*v, key + suffix, state, 0);
            }
        }
    }
    if (f.error)
        return makeError("compare.entry", SourceLocation { {}, entry.offset, entry.line, 0 }, *f.error);
    // inputs (and debug) → parameters → outputs → parameters_grad, stable
    std::vector<Row26> ordered;
    ordered.reserve(f.rows.size());
    for (const char* cat : { "", "parameters", "output", "parameters_grad" }) {
        for (auto& r : f.rows) {
            const bool other = r.state != "parameters" && r.state != "output" && r.state != "parameters_grad";
            if ((*cat == '\0' && other) || r.state == cat)
                ordered.push_back(r);
        }
    }
    return ordered;
}

/// Flattens a whole dump (gen_data_df): derived fields, call counters and the stack of each entry.
Result<std::vector<Row26>> flattenDump26(const dump::DumpFile& file, const CompareOptions& options)
{
    std::vector<Row26> out;
    std::unordered_map<std::string, int> forwardCount;
    std::unordered_map<std::string, int> backwardCount;
    const bool debug = file.format == dump::DumpFormat::DebugJson;
    for (std::uint32_t e = 0; e < file.entries.size(); ++e) {
        const dump::Entry& entry = file.entries[e];
        auto rows = flattenEntry26(entry);
        if (!rows)
            return rows.error();
        if (rows->empty())
            continue;
        const std::string key(entry.key);
        std::string opNoNumber;
        std::string callDirection;
        std::string direction;
        if (debug) {
            opNoNumber = callDirection = direction = key;
        } else {
            const auto parts = splitDots(key);
            const std::string& last = parts.back();
            const std::string secondLast = parts.size() >= 2 ? parts[parts.size() - 2] : std::string();
            if (last == "parameters_grad" || secondLast == "parameters_grad") {
                opNoNumber = parts.size() > 1 ? joinDots(parts, 0, parts.size() - 1) : std::string();
                callDirection = direction = "parameters_grad";
            } else {
                for (const char* d : { "forward", "backward" }) {
                    if (last == d || secondLast == d) {
                        opNoNumber = parts.size() > 2 ? joinDots(parts, 0, parts.size() - 2) : std::string();
                        callDirection = secondLast + "." + last;
                        direction = d;
                        break;
                    }
                }
            }
        }
        if (opNoNumber.empty())
            continue; // msprobe 26 silently skips such entries
        const int fwd = forwardCount[opNoNumber];
        const int bwd = backwardCount[opNoNumber];
        if (direction == "forward")
            ++forwardCount[opNoNumber];
        if (direction == "backward")
            ++backwardCount[opNoNumber];
        std::optional<std::string> stack;
        const std::vector<std::string>* stackFrames = nullptr;
        if (options.stackMode && options.stack) {
            stackFrames = options.stack->frames(key);
            if (stackFrames)
                stack = stackText(*stackFrames);
        }
        for (std::size_t i = 0; i < rows->size(); ++i) {
            Row26& r = (*rows)[i];
            r.entry = e;
            r.apiOrigin = key;
            r.direction = direction;
            r.callDirection = callDirection;
            r.opNoNumber = opNoNumber;
            r.forwardOrder = fwd;
            r.backwardOrder = bwd;
            r.suffix = replaceAll(r.name, key, "");
            r.key = r.name;
            if (i == 0) {
                r.stack = stack;
                if (stackFrames)
                    r.stackFrames = *stackFrames;
            }
            out.push_back(std::move(r));
        }
    }
    return out;
}

/// update_backward_call: the call index of backward rows becomes the per-API backward count.
void renumberBackward(std::vector<Row26>& rows)
{
    for (Row26& r : rows) {
        if (r.direction != "backward")
            continue;
        const std::size_t dot = r.callDirection.rfind('.');
        if (dot == std::string::npos)
            continue;
        std::string head = r.callDirection.substr(0, dot);
        std::string tail = r.callDirection.substr(dot + 1);
        const bool h = isDigits(head);
        const bool t = isDigits(tail);
        if (!h && !t)
            continue;
        if (h)
            head = std::to_string(r.backwardOrder);
        if (t)
            tail = std::to_string(r.backwardOrder);
        r.callDirection = head + "." + tail;
        r.key = r.opNoNumber + "." + r.callDirection + r.suffix;
    }
}

/// Era C fuzzy rename_api: split on the first direction word, keep piece 0 minus its last two dotted parts.
std::string renameApi(const std::string& name)
{
    const char* word = nullptr;
    if (name.find("forward") != std::string::npos)
        word = "forward";
    else if (name.find("backward") != std::string::npos)
        word = "backward";
    else
        return name;
    const std::string w(word);
    const std::size_t first = name.find(w);
    const std::string head = name.substr(0, first);
    const std::size_t second = name.find(w, first + w.size());
    const std::string inOut = name.substr(first + w.size(), second == std::string::npos ? std::string::npos
                                                                                        : second - first - w.size());
    // head.rsplit('.', 2)[0]
    std::string prefix = head;
    for (int k = 0; k < 2; ++k) {
        const std::size_t dot = prefix.rfind('.');
        if (dot == std::string::npos)
            break;
        prefix = prefix.substr(0, dot);
    }
    return prefix + "." + w + inOut;
}

/// §3.2: equal, or both in the fp16/fp32/bf16 group of one spelling; MindSpore NPU vs PyTorch bench compare
/// dtype classes (int, float, bool, complex) instead of names.
bool dtypeCompatible(std::string a, std::string b, bool crossFramework)
{
    if (crossFramework) {
        a = dtypeClass(a);
        b = dtypeClass(b);
    }
    if (a == b)
        return true;
    static const char* ms[] = { "Float16", "Float32", "BFloat16" };
    static const char* pt[] = { "torch.float16", "torch.float32", "torch.bfloat16" };
    auto in = [](const std::string& s, const char* const* set) {
        return std::any_of(set, set + 3, [&](const char* x) { return s == x; });
    };
    return (in(a, ms) && in(b, ms)) || (in(a, pt) && in(b, pt));
}

struct Pair
{
    std::size_t npu;
    std::optional<std::size_t> bench;
};

std::vector<Pair> matchExact(const std::vector<Row26>& npu, const std::vector<Row26>& bench)
{
    std::unordered_map<std::string, std::vector<std::size_t>> byKey;
    for (std::size_t i = 0; i < bench.size(); ++i)
        byKey[bench[i].key].push_back(i);
    std::vector<Pair> out;
    out.reserve(npu.size());
    for (std::size_t i = 0; i < npu.size(); ++i) {
        const auto it = byKey.find(npu[i].key);
        if (it == byKey.end()) {
            out.push_back({ i, std::nullopt });
            continue;
        }
        for (const std::size_t b : it->second)
            out.push_back({ i, b });
    }
    return out;
}

std::vector<Pair> matchFuzzy(const std::vector<Row26>& npu, const std::vector<Row26>& bench, std::uint32_t* lost)
{
    std::vector<std::size_t> nq;
    std::vector<std::size_t> bq;
    std::vector<Pair> out;
    auto ok = [&](std::size_t n, std::size_t b) { return renameApi(npu[n].key) == renameApi(bench[b].key); };
    const std::size_t maxLen = std::max(npu.size(), bench.size());
    std::size_t consumed = 0;
    for (std::size_t i = 0; i < maxLen; ++i) {
        if (i < npu.size()) {
            nq.push_back(i);
            consumed = i + 1;
        }
        if (i < bench.size())
            bq.push_back(i);
        if (nq.empty() != bq.empty())
            break;
        if (nq.empty())
            continue;
        std::optional<std::pair<std::size_t, std::size_t>> point;
        for (std::size_t j = 0; j + 1 < bq.size() && !point; ++j) {
            if (ok(nq.back(), bq[j]))
                point = std::pair { nq.size() - 1, j };
        }
        if (!point && ok(nq.back(), bq.back()))
            point = std::pair { nq.size() - 1, bq.size() - 1 };
        for (std::size_t k = 0; k + 1 < nq.size() && !point; ++k) {
            if (ok(nq[k], bq.back()))
                point = std::pair { k, bq.size() - 1 };
        }
        if (!point)
            continue;
        for (std::size_t k = 0; k < point->first; ++k)
            out.push_back({ nq[k], std::nullopt });
        out.push_back({ nq[point->first], bq[point->second] });
        nq.erase(nq.begin(), nq.begin() + static_cast<std::ptrdiff_t>(point->first + 1));
        bq.erase(bq.begin(), bq.begin() + static_cast<std::ptrdiff_t>(point->second + 1));
    }
    for (const std::size_t n : nq)
        out.push_back({ n, std::nullopt });
    *lost = static_cast<std::uint32_t>(npu.size() - consumed);
    return out;
}

/// --match-file (docs/graph.md): the rows of each manually matched NPU entry pair with the bench entry's row of the
/// same tail below the key (".input.0"), whatever msprobe's matching decided and with no dtype test (the user chose
/// the pair); a bench row of a manually matched entry is taken from any other NPU row msprobe had paired it with.
/// The other rows keep their pairs and the table keeps msprobe's order.
void applyManualMatches(const ManualMatches& manual, const std::vector<Row26>& npu, const std::vector<Row26>& bench,
                        std::vector<Pair>& pairs, std::uint32_t* lost)
{
    std::unordered_map<std::string_view, std::string_view> benchOf; // NPU entry -> bench entry
    std::unordered_map<std::string_view, bool> benchTaken;
    for (const auto& [n, b] : manual.pairs) {
        if (benchOf.emplace(n, b).second)
            benchTaken.emplace(b, true);
    }
    // (bench entry, tail) -> the first bench row of it.
    std::unordered_map<std::string, std::size_t> benchRow;
    for (std::size_t i = 0; i < bench.size(); ++i) {
        if (benchTaken.count(bench[i].apiOrigin))
            benchRow.emplace(bench[i].apiOrigin + '\n' + bench[i].suffix, i);
    }
    std::vector<Pair> out;
    out.reserve(pairs.size());
    std::vector<bool> emitted(npu.size(), false);
    for (const Pair& p : pairs) {
        const Row26& n = npu[p.npu];
        const auto manualEntry = benchOf.find(n.apiOrigin);
        if (manualEntry == benchOf.end()) {
            Pair kept = p;
            if (kept.bench && benchTaken.count(bench[*kept.bench].apiOrigin))
                kept.bench.reset();
            out.push_back(kept);
            continue;
        }
        if (emitted[p.npu])
            continue; // matchExact gave this row several bench rows: the manual pair replaces all of them
        emitted[p.npu] = true;
        const auto b = benchRow.find(std::string(manualEntry->second) + '\n' + n.suffix);
        out.push_back({ p.npu, b == benchRow.end() ? std::nullopt : std::optional<std::size_t>(b->second) });
    }
    // -fm's walk can stop before the end of the NPU rows (msprobe drops the rest): a manually matched row it never
    // reached is still compared, at its NPU place.
    std::vector<Pair> late;
    for (std::size_t i = 0; i < npu.size(); ++i) {
        const auto manualEntry = benchOf.find(npu[i].apiOrigin);
        if (manualEntry == benchOf.end() || emitted[i]) // emitted: the row is in `out` already
            continue;
        const auto b = benchRow.find(std::string(manualEntry->second) + '\n' + npu[i].suffix);
        late.push_back({ i, b == benchRow.end() ? std::nullopt : std::optional<std::size_t>(b->second) });
    }
    if (lost)
        *lost -= static_cast<std::uint32_t>(std::min<std::size_t>(*lost, late.size()));
    if (!late.empty()) {
        std::vector<Pair> merged;
        merged.reserve(out.size() + late.size());
        auto next = late.begin();
        for (const Pair& p : out) {
            for (; next != late.end() && next->npu < p.npu; ++next)
                merged.push_back(*next);
            merged.push_back(p);
        }
        merged.insert(merged.end(), next, late.end());
        out = std::move(merged);
    }
    pairs = std::move(out);
}

ApiPart partOfState(const std::string& state, bool* known)
{
    *known = true;
    if (state == "input")
        return ApiPart::Args;
    if (state == "output")
        return ApiPart::Outputs;
    if (state == "parameters")
        return ApiPart::Parameters;
    if (state == "parameters_grad")
        return ApiPart::ParametersGrad;
    *known = false; // debug.json rows: msprobe stops with an error; here they are simply abandoned
    return ApiPart::Args;
}

/// The NPU compare keys under the mappings (§3.6, precedence api > cell > data). They start from the
/// original name: msprobe 26 renumbers backward calls on the bench side only when a mapping is in force.
void assignMappedKeys(std::vector<Row26>& npu, const std::vector<Row26>& bench, const NameMappings& m)
{
    if (m.api) {
        for (Row26& r : npu)
            r.key = apiPrefixMapped(r.name);
        std::unordered_map<std::string, std::vector<std::size_t>> npuByApi;
        for (std::size_t i = 0; i < npu.size(); ++i)
            npuByApi[apiNameOf(npu[i].name)].push_back(i);
        std::unordered_map<std::string, bool> benchApis;
        for (const Row26& r : bench)
            benchApis[apiNameOf(r.name)] = true;
        for (const ApiMappingRule& rule : m.api->rules) {
            const auto rows = npuByApi.find(rule.msApi);
            if (!rule.usable || rows == npuByApi.end() || !benchApis.count(rule.ptApi))
                continue;
            for (const std::size_t i : rows->second) {
                Row26& r = npu[i];
                const std::string name = replaceFirst(r.name, rule.msApi, rule.ptApi);
                const std::string entry = replaceFirst(r.apiOrigin, rule.msApi, rule.ptApi);
                bool known = false;
                const ApiPart part = partOfState(r.state, &known);
                const auto key = known ? userRuleKey(rule, part, name, entry) : std::nullopt;
                r.key = key ? *key : name + "abandoned"; // never equal to a bench name
            }
        }
    } else if (m.cell) {
        for (Row26& r : npu)
            r.key = cellMappedName(r.name, *m.cell, true);
    } else if (m.data) {
        std::unordered_map<std::string, std::string> target; // a YAML dict: the last duplicate wins
        for (const auto& [from, to] : m.data->pairs)
            target[from] = to;
        for (Row26& r : npu) {
            const auto it = target.find(r.name);
            r.key = it == target.end() ? r.name : it->second;
        }
    }
}

/// set_summary: NaN (float or any-case "nan" text) becomes the marker "Nan"; None the text "None".
Cell summaryCell(const Cell& c)
{
    if (c.isNone())
        return Cell::text("None");
    if (c.isFloat() && std::isnan(std::get<double>(c.value)))
        return Cell::text("Nan");
    if (c.isString()) {
        std::string lower = c.asString();
        for (char& ch : lower)
            ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
        if (lower == "nan")
            return Cell::text("Nan");
    }
    return c;
}

// ---------------------------------------------------------------------------------------------
// statistics-mode value classification (§6.1)

std::string lowerCopy(std::string s)
{
    for (char& ch : s)
        ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    return s;
}

/// pd.to_numeric of a string: decimal/scientific literals with optional sign and surrounding spaces.
std::optional<double> parseNumeric(std::string_view s, bool* integral = nullptr)
{
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
        s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t'))
        s.remove_suffix(1);
    if (s.empty())
        return std::nullopt;
    const std::string text(s);
    const std::string lower = lowerCopy(text);
    std::string_view body = lower;
    if (!body.empty() && (body.front() == '+' || body.front() == '-'))
        body.remove_prefix(1);
    if (body == "inf" || body == "infinity")
        return lower[0] == '-' ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
    if (body == "nan")
        return std::numeric_limits<double>::quiet_NaN();
    // digits [. digits] [e [sign] digits]
    std::size_t i = 0;
    std::size_t digits = 0;
    while (i < body.size() && body[i] >= '0' && body[i] <= '9') {
        ++i;
        ++digits;
    }
    bool isInt = true;
    if (i < body.size() && body[i] == '.') {
        isInt = false;
        ++i;
        while (i < body.size() && body[i] >= '0' && body[i] <= '9') {
            ++i;
            ++digits;
        }
    }
    if (digits == 0)
        return std::nullopt;
    if (i < body.size() && body[i] == 'e') {
        isInt = false;
        ++i;
        if (i < body.size() && (body[i] == '+' || body[i] == '-'))
            ++i;
        std::size_t e = 0;
        while (i < body.size() && body[i] >= '0' && body[i] <= '9') {
            ++i;
            ++e;
        }
        if (e == 0)
            return std::nullopt;
    }
    if (i != body.size())
        return std::nullopt;
    if (integral)
        *integral = isInt;
    return pandasToFloat(text);
}

enum class ValType { Num, Nan, Inf, NegInf, Device, NA, Other };

ValType classify(const Cell& c)
{
    const std::string s = pyStr(c);
    const std::string lower = lowerCopy(s);
    if (c.isNone() || (c.isFloat() && std::isnan(std::get<double>(c.value))) || lower == "nan")
        return ValType::Nan;
    if ((c.isFloat() && std::get<double>(c.value) == std::numeric_limits<double>::infinity()) || lower == "inf")
        return ValType::Inf;
    if ((c.isFloat() && std::get<double>(c.value) == -std::numeric_limits<double>::infinity()) || lower == "-inf")
        return ValType::NegInf;
    const bool boolText = lower == "true" || lower == "false";
    const bool numeric = c.isNumber() || (c.isString() && parseNumeric(c.asString()));
    if (numeric && !boolText)
        return ValType::Num;
    if (lower.find("npu") != std::string::npos || lower.find("cpu") != std::string::npos
        || lower.find("cuda") != std::string::npos)
        return ValType::Device;
    if (s == kNA)
        return ValType::NA;
    return ValType::Other;
}

/// The number pd.to_numeric(str(value)) gives. A float goes through its repr and pandas' parser, which
/// is not correctly rounded (pandasToFloat): msprobe 26 subtracts those parsed values, not the dump's.
double numberOf(const Cell& c)
{
    if (c.isInt())
        return static_cast<double>(std::get<std::int64_t>(c.value));
    if (c.isFloat()) {
        const double d = std::get<double>(c.value);
        return std::isfinite(d) ? pandasToFloat(pyFloatRepr(d)) : d;
    }
    if (c.isBool())
        return std::get<bool>(c.value) ? 1 : 0;
    if (c.isString())
        return parseNumeric(c.asString()).value_or(std::numeric_limits<double>::quiet_NaN());
    return std::numeric_limits<double>::quiet_NaN();
}

/// Whether pd.to_numeric(column.astype(str)) yields int64: every value's text is an integer literal.
bool columnIsInt(const CellRows& rows, int col)
{
    for (const auto& row : rows) {
        bool integral = false;
        const std::string s = pyStr(row[static_cast<std::size_t>(col)]);
        if (!parseNumeric(s, &integral) || !integral)
            return false;
    }
    return !rows.empty();
}

} // namespace

std::pair<std::string, std::string> statsDiff(const Cell& npu, const Cell& bench, bool npuIntColumn, bool benchIntColumn)
{
    if (pyStr(npu) == pyStr(bench))
        return { "0", "0" };
    const ValType a = classify(npu);
    const ValType b = classify(bench);
    using V = ValType;
    auto same = [](const char* s) { return std::pair<std::string, std::string> { s, s }; };
    if (a == V::NA || b == V::NA)
        return same(kNA);
    if (a == V::Num && b == V::Num) {
        const double n = numberOf(npu);
        const double m = numberOf(bench);
        std::string diff;
        double d = 0;
        if (npuIntColumn && benchIntColumn) {
            const auto ni = static_cast<std::int64_t>(n);
            const auto mi = static_cast<std::int64_t>(m);
            diff = std::to_string(ni - mi);
            d = static_cast<double>(ni - mi);
        } else {
            d = n - m;
            diff = pyFloatRepr(d);
        }
        if (m == 0)
            return { diff, "inf" };
        return { diff, pyFloatRepr(std::fabs(d / m * 100)) + "%" };
    }
    const bool nanRange = [&] {
        auto inRange = [](V t) { return t == V::Num || t == V::Nan || t == V::Inf || t == V::NegInf; };
        return (a == V::Nan && inRange(b)) || (b == V::Nan && inRange(a));
    }();
    if (nanRange)
        return same("Nan");
    if (a == V::Inf && (b == V::Num || b == V::NegInf))
        return same("inf");
    if (a == V::NegInf && (b == V::Num || b == V::Inf))
        return same("-inf");
    if (a == V::Num && b == V::Inf)
        return same("-inf");
    if (a == V::Num && b == V::NegInf)
        return same("inf");
    if (a == V::Device && b == V::Device)
        return same(kNA);
    if (a == V::Device || a == V::Other || b == V::Device || b == V::Other)
        return same("Diff");
    return same(kNA);
}

std::vector<std::string> headerFor(CompareMode mode, bool stackMode)
{
    std::vector<std::string> h = { "NPU Name",         "Bench Name",         "NPU Dtype",         "Bench Dtype",
                                   "NPU Tensor Shape", "Bench Tensor Shape", "NPU Requires_grad", "Bench Requires_grad" };
    const std::vector<std::string> stats8 = { "NPU max",   "NPU min",   "NPU mean",   "NPU l2norm",
                                              "Bench max", "Bench min", "Bench mean", "Bench l2norm" };
    switch (mode) {
    case CompareMode::RealData:
        h.insert(h.end(), { "Cosine", "EucDist", "MaxAbsErr", "MaxRelativeErr", "One Thousandth Err Ratio",
                            "Five Thousandths Err Ratio" });
        h.insert(h.end(), stats8.begin(), stats8.end());
        break;
    case CompareMode::Summary:
        h.insert(h.end(), { "Max diff", "Min diff", "Mean diff", "L2norm diff", "MaxRelativeErr", "MinRelativeErr",
                            "MeanRelativeErr", "NormRelativeErr" });
        h.insert(h.end(), stats8.begin(), stats8.end());
        break;
    case CompareMode::Md5:
        h.insert(h.end(), { "NPU MD5", "BENCH MD5" });
        break;
    }
    h.insert(h.end(), { "Requires_grad Consistent", "Result", "Err_message" });
    if (stackMode)
        h.push_back("NPU_Stack_Info");
    if (mode == CompareMode::RealData)
        h.push_back("Data_name");
    return h;
}

Result<CompareMode> detectMode(const dump::DumpFile& npu, const dump::DumpFile& bench)
{
    const SourceLocation where { npu.path.string(), std::nullopt, 0, 0 };
    if (npu.header.task.empty() || bench.header.task.empty())
        return makeError("compare.task", where, "Invalid or missing 'data'/'task' in dump.json");
    if (npu.header.task != bench.header.task)
        return makeError("compare.task", where, "the NPU and bench dumps have different tasks");
    if (npu.header.task == "tensor")
        return CompareMode::RealData;
    if (npu.header.task != "statistics")
        return makeError("compare.task", where, "Compare applies only to task is tensor or statistics");
    auto hasMd5 = [](const dump::DumpFile& f) {
        for (const auto& e : f.entries) {
            if (!e.value.isObject())
                continue;
            for (std::uint32_t i = 0; i < e.value.size(); ++i) {
                const JsonValue field = e.value.at(i);
                if (field.isArray()) {
                    for (std::uint32_t k = 0; k < field.size(); ++k) {
                        if (field.at(k).isObject() && field.at(k).find("md5"))
                            return true;
                    }
                } else if (field.isObject() && field.find("md5")) {
                    return true;
                }
            }
        }
        return false;
    };
    const bool a = hasMd5(npu);
    const bool b = hasMd5(bench);
    if (a != b)
        return makeError("compare.task", where, "one dump has md5 checksums and the other has not");
    return a ? CompareMode::Md5 : CompareMode::Summary;
}

std::vector<std::string> rowNames(const dump::Entry& entry)
{
    auto rows = flattenEntry26(entry);
    std::vector<std::string> names;
    if (rows) {
        for (const Row26& r : *rows)
            names.push_back(r.name);
    }
    return names;
}

namespace {

/// calc_accuracy with first_diff_analyze (acc_compare.py:1614-1628): summary rows get no verdict, only
/// "Requires_grad inconsistent. "; md5 rows pass or are Different and keep a NaN Err_message.
void applyDaVerdicts(CompareTable& table)
{
    const auto result = static_cast<std::size_t>(table.column("Result"));
    const auto message = static_cast<std::size_t>(table.column("Err_message"));
    const auto npuReq = static_cast<std::size_t>(table.column("NPU Requires_grad"));
    const auto benchReq = static_cast<std::size_t>(table.column("Bench Requires_grad"));
    const int npuMd5 = table.column("NPU MD5");
    const int benchMd5 = table.column("BENCH MD5");
    for (std::size_t r = 0; r < table.rows.size(); ++r) {
        auto row = table.rows[r];
        const bool noBench = !table.matched[r];
        if (table.mode == CompareMode::Md5) {
            const bool equal = pyStr(row[static_cast<std::size_t>(npuMd5)]) == pyStr(row[static_cast<std::size_t>(benchMd5)]);
            row[result] = Cell::text(equal ? "pass" : noBench ? kNA : "Different");
            row[message] = noBench ? Cell::text("No bench data matched.")
                                   : Cell::number(std::numeric_limits<double>::quiet_NaN());
            continue;
        }
        std::string text = noBench ? "No bench data matched." : "";
        if (pyStr(row[npuReq]) != pyStr(row[benchReq]))
            text += "Requires_grad inconsistent. ";
        row[result] = Cell::text(noBench ? kNA : "");
        row[message] = Cell::text(text);
    }
}

} // namespace

namespace {

/// compareDumps, or with `da` set the table msprobe 26 builds for -da (first_diff_analyze): tensor dumps
/// compared as statistics, its own Result/Err_message rules instead of the checkers, and the -da columns of
/// each row in *da.
Result<std::shared_ptr<const CompareTable>> compareDumpsImpl(const dump::DumpFile& npuFile,
                                                               const dump::DumpFile& benchFile,
                                                               const CompareOptions& options, ProgressSink* progress,
                                                               std::vector<msprobe26::DaRow>* da)
{
    auto mode = msprobe26::detectMode(npuFile, benchFile);
    if (!mode)
        return mode.error();
    if (da && *mode == CompareMode::RealData)
        mode = CompareMode::Summary; // acc_compare.py:279-280: no tensor is loaded for -da
    auto npuRows = flattenDump26(npuFile, options);
    if (!npuRows)
        return npuRows.error();
    // Only the NPU stack.json exists; bench rows never show a stack.
    CompareOptions benchOptions = options;
    benchOptions.stack = nullptr;
    auto benchRows = flattenDump26(benchFile, benchOptions);
    if (!benchRows)
        return benchRows.error();
    if (npuRows->empty() || benchRows->empty())
        return makeError("compare.empty", SourceLocation { npuFile.path.string(), std::nullopt, 0, 0 },
                         "No valid data found in dump.json");

    auto table = std::make_shared<CompareTable>();
    table->mode = *mode;
    table->stackMode = options.stackMode && options.stack;
    table->header = msprobe26::headerFor(*mode, table->stackMode);

    const NameMappings* mappings = options.mappings && options.mappings->any() ? options.mappings : nullptr;
    // A data mapping decides the matching whatever else is given: a left join on the mapped key, no dtype test.
    const bool dataMapping = mappings && mappings->data;
    if (dataMapping && options.fuzzy)
        table->diagnostics.push_back(makeWarning("compare.mapping-fuzzy",
                                                 SourceLocation { npuFile.path.string(), std::nullopt, 0, 0 },
                                                 "-fm has no effect on the matching with a data mapping (msprobe 26 "
                                                 "matches by the mapping; backward calls are not renumbered)"));
    if (!options.fuzzy && npuFile.format != dump::DumpFormat::DebugJson) {
        renumberBackward(*npuRows);
        renumberBackward(*benchRows);
    }
    if (mappings)
        assignMappedKeys(*npuRows, *benchRows, *mappings);
    std::vector<Pair> pairs = options.fuzzy && !dataMapping ? matchFuzzy(*npuRows, *benchRows, &table->npuOpsLost)
                                                            : matchExact(*npuRows, *benchRows);
    // ms_compare's MindSpore vs PyTorch dtype classes; pt_compare never uses them.
    const bool crossFramework = isMindSporeDump(npuFile, true) && benchFile.header.framework == "pytorch";
    for (Pair& p : pairs) {
        if (!dataMapping && p.bench
            && !dtypeCompatible((*npuRows)[p.npu].dtype, (*benchRows)[*p.bench].dtype, crossFramework))
            p.bench.reset();
    }
    if (options.mappings && options.mappings->manual && !options.mappings->manual->pairs.empty())
        applyManualMatches(*options.mappings->manual, *npuRows, *benchRows, pairs, &table->npuOpsLost);
    if (pairs.empty())
        return makeError("compare.empty", SourceLocation { npuFile.path.string(), std::nullopt, 0, 0 },
                         "Can`t match any op.");

    const CompareMode m = *mode;
    const int colStats = m == CompareMode::RealData ? 14 : 16;
    // Tensor files only through the sides' resolvers (tensor/resolver.h), handed in by the pipeline.
    const auto npuTensors = options.npuTensors ? options.npuTensors : tensorResolverOf(npuFile);
    const auto benchTensors = options.benchTensors ? options.benchTensors : tensorResolverOf(benchFile);
    /// A real-data row whose two tensor files are compared once every row is laid out.
    struct TensorJob
    {
        std::size_t row = 0;
        const std::string* npuName = nullptr;
        const std::string* benchName = nullptr;
    };
    std::vector<TensorJob> tensorJobs;
    const std::size_t ncols = table->header.size();
    // Real data: progress counts the tensor pairs, compared below; the other modes count rows here.
    const bool rowProgress = progress && m != CompareMode::RealData;
    if (rowProgress)
        progress->setRange(pairs.size());
    std::uint64_t done = 0;
    for (const Pair& p : pairs) {
        if (progress && progress->isCancelled())
            return makeError("compare.cancelled", {}, "cancelled");
        const Row26& n = (*npuRows)[p.npu];
        const Row26* b = p.bench ? &(*benchRows)[*p.bench] : nullptr;
        std::vector<Cell> row(ncols, Cell::text(kNA));
        auto text = [](const std::string& s) { return Cell::text(s); };
        row[0] = text(n.name);
        row[1] = text(b ? b->name : kNA);
        row[2] = text(n.dtype);
        row[3] = text(b ? b->dtype : kNA);
        row[4] = text(n.shape);
        row[5] = text(b ? b->shape : kNA);
        const std::string npuReq = n.requiresGrad.value_or(kNA);
        const std::string benchReq = b ? b->requiresGrad.value_or(kNA) : kNA;
        row[6] = text(npuReq);
        row[7] = text(benchReq);
        int next = 8;
        if (m == CompareMode::Md5) {
            row[8] = text(n.md5);
            row[9] = text(b ? b->md5 : kNA);
            next = 10;
        } else {
            for (int i = 0; i < 4; ++i) {
                row[static_cast<std::size_t>(colStats + i)] = summaryCell(n.stats[static_cast<std::size_t>(i)]);
                row[static_cast<std::size_t>(colStats + 4 + i)] = b ? summaryCell(b->stats[static_cast<std::size_t>(i)]) : text(kNA);
            }
            next = colStats + 8;
            if (m == CompareMode::RealData) {
                // Until the pair is compared (and for rows without a pair): six times unsupported.
                for (std::size_t c = 8; c <= 13; ++c)
                    row[c] = text("unsupported");
                if (b && n.dataName != "-1" && b->dataName != "-1")
                    tensorJobs.push_back(TensorJob { table->rows.size(), &n.dataName, &b->dataName });
            }
        }
        row[static_cast<std::size_t>(next)] = Cell::boolean(npuReq == benchReq);
        row[static_cast<std::size_t>(next + 1)] = text("pass");
        row[static_cast<std::size_t>(next + 2)] = text("[]");
        std::size_t col = static_cast<std::size_t>(next + 3);
        if (table->stackMode)
            row[col++] = n.stack ? Cell::pyText(*n.stack) : text(kNA);
        if (m == CompareMode::RealData)
            row[col] = Cell::pyText("[" + pyStrRepr(n.dataName) + ", " + pyStrRepr(b ? b->dataName : kNA) + "]");
        table->rows.push_back(std::move(row));
        if (da) {
            msprobe26::DaRow extra;
            extra.state = n.state;
            extra.apiOrigin = n.apiOrigin;
            extra.stack = n.stackFrames;
            extra.npuP2pOp = n.p2pOp;
            extra.npuP2pPeer = n.p2pPeer;
            // result_df['Bench P2POp op'] = bench_df['op'] aligns on the pandas index, that is, on the
            // NPU parse row number: bench parse row p.npu, NaN past the end (spec §3.1 quirk).
            if (p.npu < benchRows->size()) {
                extra.benchP2pOp = (*benchRows)[p.npu].p2pOp;
                extra.benchP2pPeer = (*benchRows)[p.npu].p2pPeer;
            } else {
                extra.benchP2pOp = extra.benchP2pPeer = Cell::number(std::numeric_limits<double>::quiet_NaN());
            }
            da->push_back(std::move(extra));
        }
        table->npuEntry.push_back(n.entry);
        table->matched.push_back(b != nullptr);
        table->colors.push_back(RowColor::None);
        if (rowProgress)
            progress->advance(++done);
    }

    // The tensor pairs on -j threads (util/workgroup: a large pair's chunks go to idle threads); each job writes
    // only its own slot and the cells are set in row order afterwards, so nothing depends on the thread count.
    std::vector<std::pair<std::size_t, std::string>> unreadable; ///< rows whose tensor file could not be read
    if (!tensorJobs.empty()) {
        std::vector<msprobe26::TensorFilesOutcome> outcomes(tensorJobs.size());
        const bool completed = parallelForSplittable(
            tensorJobs.size(), options.threads,
            [&](std::size_t i, Splitter& splitter) {
                const TensorJob& job = tensorJobs[i];
                // The pair this thread is likely to take next is read ahead while a large one is computed.
                const std::size_t ahead = i + splitter.threads();
                const auto readAhead = [&] {
                    if (ahead < tensorJobs.size()) {
                        npuTensors->prefetch(*tensorJobs[ahead].npuName);
                        benchTensors->prefetch(*tensorJobs[ahead].benchName);
                    }
                };
                outcomes[i] = msprobe26::compareTensorFiles(*npuTensors, *job.npuName, *benchTensors, *job.benchName,
                                                            splitter, readAhead);
            },
            progress);
        if (!completed)
            return makeError("compare.cancelled", SourceLocation { npuFile.path.string(), std::nullopt, 0, 0 },
                             "the compare was cancelled");
        for (std::size_t i = 0; i < tensorJobs.size(); ++i) {
            const std::size_t r = tensorJobs[i].row;
            const msprobe26::RealDataMetrics& metrics = outcomes[i].metrics;
            table->rows.set(r, 8, metrics.cosine);
            table->rows.set(r, 9, metrics.eucDist);
            table->rows.set(r, 10, metrics.maxAbsErr);
            table->rows.set(r, 11, metrics.maxRelativeErr);
            table->rows.set(r, 12, metrics.oneThousandthErrRatio);
            table->rows.set(r, 13, metrics.fiveThousandthsErrRatio);
            if (!outcomes[i].unreadable.empty())
                unreadable.emplace_back(r, std::move(outcomes[i].unreadable));
        }
    }

    // pandas' fillna on the unmatched rows re-infers each object column: an NPU stat column holding only
    // numbers there becomes float64, so ints print as 4.0 (compare-spec §14, see docs).
    if (m != CompareMode::Md5) {
        for (int i = 0; i < 4; ++i) {
            const auto c = static_cast<std::size_t>(colStats + i);
            bool anyRow = false;
            bool allNumbers = true;
            bool anyFloat = false;
            for (std::size_t r = 0; r < table->rows.size(); ++r) {
                if (table->matched[r])
                    continue;
                anyRow = true;
                const Cell& cell = table->rows[r][c];
                allNumbers = allNumbers && cell.isNumber();
                anyFloat = anyFloat || cell.isFloat();
            }
            if (!anyRow || !allNumbers || !anyFloat)
                continue;
            for (std::size_t r = 0; r < table->rows.size(); ++r) {
                const CellView cell = table->rows.view(r, c);
                if (!table->matched[r] && cell.kind == CellKind::Int)
                    table->rows.set(r, c, Cell::number(static_cast<double>(cell.integer)));
            }
        }
    }

    if (m == CompareMode::Summary) {
        for (int i = 0; i < 4; ++i) {
            const int nc = colStats + i;
            const int bc = colStats + 4 + i;
            const bool ni = columnIsInt(table->rows, nc);
            const bool bi = columnIsInt(table->rows, bc);
            for (auto row : table->rows) {
                auto [d, rel] = msprobe26::statsDiff(row[static_cast<std::size_t>(nc)], row[static_cast<std::size_t>(bc)], ni, bi);
                row[static_cast<std::size_t>(8 + i)] = Cell::text(d);
                row[static_cast<std::size_t>(12 + i)] = Cell::text(rel);
            }
        }
    }

    if (da)
        applyDaVerdicts(*table);
    else
        msprobe26::applyCheckers(*table);
    // After the verdicts, which would judge an unread row by its placeholders: such a row is an error.
    const int resultColumn = table->column("Result");
    const int messageColumn = table->column("Err_message");
    for (const auto& [r, message] : unreadable) {
        if (resultColumn >= 0)
            table->rows.set(r, static_cast<std::size_t>(resultColumn), Cell::text("error"));
        if (messageColumn >= 0)
            table->rows.set(r, static_cast<std::size_t>(messageColumn), Cell::text(jsonStringList({ message })));
    }
    return std::shared_ptr<const CompareTable>(std::move(table));
}

} // namespace

Result<std::shared_ptr<const CompareTable>> compareDumps(const dump::DumpFile& npuFile, const dump::DumpFile& benchFile,
                                                           const CompareOptions& options, ProgressSink* progress)
{
    return msprobe26::compareDumpsImpl(npuFile, benchFile, options, progress, nullptr);
}

Result<DaTable> compareDumpsForDiffAnalyze(const dump::DumpFile& npu, const dump::DumpFile& bench,
                                               const CompareOptions& options)
{
    msprobe26::DaTable out;
    auto table = msprobe26::compareDumpsImpl(npu, bench, options, nullptr, &out.rows);
    if (!table)
        return table.error();
    out.table = *table;
    return out;
}

std::string jsonStringList(const std::vector<std::string>& items)
{
    // json.dumps(list): ", " between items, each str as Python spells it.
    std::string out = "[";
    for (std::size_t i = 0; i < items.size(); ++i) {
        if (i)
            out += ", ";
        appendPyJsonString(out, items[i]);
    }
    out += ']';
    return out;
}

void appendCellText(std::string& out, const CellView& cell)
{
    switch (cell.kind) {
    case CellKind::None: return;
    case CellKind::Bool: out += cell.boolean ? "True" : "False"; return;
    case CellKind::Int: {
        std::array<char, 24> digits {};
        out.append(digits.data(), std::to_chars(digits.data(), digits.data() + digits.size(), cell.integer).ptr);
        return;
    }
    case CellKind::Float:
        if (std::isnan(cell.number))
            return;
        if (std::isinf(cell.number))
            out += cell.number > 0 ? " inf" : " -inf";
        else
            appendPyFloatRepr(out, cell.number);
        return;
    case CellKind::String:
    case CellKind::PyText: out += cell.text; return;
    }
}

std::string cellText(const Cell& cell)
{
    std::string out;
    appendCellText(out, viewOf(cell));
    return out;
}

bool writeTableCsv(const CompareTable& table, const TextSink& sink)
{
    return streamCsvRows(table.header, table.rows.size(), sink, [&table](CsvStream& csv, std::size_t r) {
        const std::size_t n = table.rows.rowSize(r);
        for (std::size_t c = 0; c < n; ++c) {
            const CellView cell = table.rows.view(r, c);
            if (cell.kind == CellKind::String || cell.kind == CellKind::PyText)
                csv.field(cell.text);
            else
                appendCellText(csv.rawField(), cell); // numbers, bools, None: never quoted
        }
        csv.endRecord();
    });
}

std::string tableCsv(const CompareTable& table)
{
    return collectText([&](const TextSink& sink) { return writeTableCsv(table, sink); });
}

} // namespace probescope::compare::msprobe26
