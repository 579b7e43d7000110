// SPDX-License-Identifier: Apache-2.0
// msprobe 26 compare, the matching: NPU rows paired with bench rows by key (exact), by msprobe's -fm queue walk
// (fuzzy), by --match-file, under the name mappings, and kept only where the dtypes are compatible.
#include "core/compare/msprobe26/rows26.h"

#include "core/compare/match/mapping.h"
#include "core/compare/match/mappingutil.h"

#include <algorithm>
#include <unordered_map>

namespace probescope::compare::msprobe26::detail {

namespace {

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

} // namespace

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

} // namespace probescope::compare::msprobe26::detail
