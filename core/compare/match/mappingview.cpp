// SPDX-License-Identifier: Apache-2.0
// The msprobe-1.2 profile's -cm/-am: the entry-level matcher compares whole lists of row names and structs,
// so the mapping is applied to copies of the ops ("views") that the matcher sees.
#include "core/compare/match/mapping.h"
#include "core/compare/match/mappingutil.h"
#include "core/compare/table/pytext.h"

#include <algorithm>
#include <unordered_set>

namespace probescope::compare {

namespace {

ApiPart partOf(RowCategory category)
{
    switch (category) {
    case RowCategory::Input:
        return ApiPart::Args;
    case RowCategory::Parameters:
        return ApiPart::Parameters;
    case RowCategory::Output:
        return ApiPart::Outputs;
    case RowCategory::ParametersGrad:
        return ApiPart::ParametersGrad;
    }
    return ApiPart::Args;
}

std::unordered_set<std::string> apiNames(const std::vector<Op>& ops)
{
    std::unordered_set<std::string> names;
    for (const Op& op : ops)
        names.insert(apiNameOf(op.key));
    return names;
}

/// The first usable item naming `api` on this side and whose counterpart exists on the other side.
const ApiMappingRule* ruleFor(
    const NameMappings& m, const std::string& api, bool npuSide, const std::unordered_set<std::string>& otherApis)
{
    if (!m.api)
        return nullptr;
    for (const ApiMappingRule& rule : m.api->rules) {
        const std::string& own = npuSide ? rule.msApi : rule.ptApi;
        const std::string& other = npuSide ? rule.ptApi : rule.msApi;
        if (rule.usable && own == api && otherApis.count(other))
            return &rule;
    }
    return nullptr;
}

/// Orders the rows of each category by their pt index (numbers ascending, names after them in dump order),
/// keeping the positions each category occupies: the bench lists its arguments in index order.
void orderByTarget(MappedOp& view, const std::vector<std::string>& targets)
{
    auto rank = [&](std::size_t i) {
        char* end = nullptr;
        const double v = std::strtod(targets[i].c_str(), &end);
        const bool numeric = !targets[i].empty() && end == targets[i].c_str() + targets[i].size();
        return std::pair<int, double>(numeric ? 0 : 1, numeric ? v : 0.0);
    };
    for (std::size_t c = 0; c < 4; ++c) {
        std::vector<std::size_t> slots;
        for (std::size_t i = 0; i < view.rows.size(); ++i) {
            if (static_cast<std::size_t>(view.rows[i].category) == c)
                slots.push_back(i);
        }
        std::vector<std::size_t> order = slots;
        std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return rank(a) < rank(b); });
        std::vector<FlatRow> rows;
        std::vector<std::size_t> origin;
        for (const std::size_t i : order) {
            rows.push_back(view.rows[i]);
            origin.push_back(view.origin[i]);
        }
        for (std::size_t k = 0; k < slots.size(); ++k) {
            view.rows[slots[k]] = rows[k];
            view.origin[slots[k]] = origin[k];
        }
    }
}

std::string indexBelow(const FlatRow& row, std::string_view entryKey)
{
    static constexpr const char* patterns[] = { ".input.", ".output.", ".parameters.", ".parameters_grad." };
    const std::string prefix = std::string(entryKey) + patterns[static_cast<std::size_t>(partOf(row.category))];
    const std::string name = row.nameText();
    return std::string(name.starts_with(prefix) ? name.substr(prefix.size()) : name);
}

/// One NPU op's view; `rule` is the api_mapping item applied to it, if any.
MappedOp mappedNpuOp(
    const Op& op, const NameMappings& m, const ApiMappingRule* rule, CompareMode /*mode*/, bool crossFramework)
{
    MappedOp view;
    view.op.key = op.key;
    view.op.entryIndex = op.entryIndex;
    std::vector<std::string> targets;
    for (std::size_t i = 0; i < op.rows.size(); ++i) {
        FlatRow row = op.rows[i];
        if (m.cell)
            row.setName(view.texts.store(cellMappedName(row.nameText(), *m.cell, false)));
        if (m.api)
            row.setName(view.texts.store(apiPrefixMapped(row.nameText())));
        if (rule) {
            const std::string entry = replaceFirst(std::string(op.key), rule->msApi, rule->ptApi);
            const auto key = userRuleKey(*rule, partOf(row.category),
                                         replaceFirst(op.rows[i].nameText(), rule->msApi, rule->ptApi), entry);
            if (!key)
                continue; // abandoned: shown without bench data, never matched
            row.setName(view.texts.store(*key));
            targets.push_back(indexBelow(row, entry));
        }
        if (crossFramework && row.dtype().isString())
            row.set(FlatRow::Dtype, FlatCell::text(torchDtypeName(row.dtype().textView())), view.texts);
        view.rows.push_back(row);
        view.origin.push_back(i);
    }
    if (rule)
        orderByTarget(view, targets);
    view.seal();
    return view;
}

} // namespace

std::vector<MappedOp> mappedNpuOps(const std::vector<Op>& npu, const std::vector<Op>& bench, const NameMappings& m,
    CompareMode mode, bool crossFramework)
{
    const auto benchApis = apiNames(bench);
    std::vector<MappedOp> out;
    out.reserve(npu.size());
    for (const Op& op : npu) {
        const ApiMappingRule* rule = ruleFor(m, apiNameOf(op.key), true, benchApis);
        out.push_back(mappedNpuOp(op, m, rule, mode, crossFramework));
        // An op with no row left would look like an entry without rows and shift the matcher's lock-step
        // walk; an item that keeps nothing of an op is not applied to it.
        if (rule && out.back().rows.empty() && !op.rows.empty())
            out.back() = mappedNpuOp(op, m, nullptr, mode, crossFramework);
    }
    return out;
}

std::vector<MappedOp> mappedBenchOps(
    const std::vector<Op>& bench, const std::vector<Op>& npu, const NameMappings& m, CompareMode /*mode*/)
{
    const auto npuApis = apiNames(npu);
    std::vector<MappedOp> out;
    out.reserve(bench.size());
    for (const Op& op : bench) {
        const ApiMappingRule* rule = ruleFor(m, apiNameOf(op.key), false, npuApis);
        MappedOp view;
        view.op.key = op.key;
        view.op.entryIndex = op.entryIndex;
        for (std::size_t i = 0; i < op.rows.size(); ++i) {
            if (rule) {
                const auto& listed = rule->pt[static_cast<std::size_t>(partOf(op.rows[i].category))];
                if (std::find(listed.begin(), listed.end(), indexBelow(op.rows[i], op.key)) == listed.end())
                    continue;
            }
            view.rows.push_back(op.rows[i]);
            view.origin.push_back(i);
        }
        if (view.rows.empty()) { // as for the NPU side: an item never empties an op
            for (std::size_t i = 0; i < op.rows.size(); ++i) {
                view.rows.push_back(op.rows[i]);
                view.origin.push_back(i);
            }
        }
        view.seal();
        out.push_back(std::move(view));
    }
    return out;
}

std::vector<std::optional<std::size_t>> partnerRows(const MappedOp& npu, std::size_t npuRows, const MappedOp& bench)
{
    std::vector<std::optional<std::size_t>> partner(npuRows);
    const auto n = npu.op.rowsByCategory();
    const auto b = bench.op.rowsByCategory();
    for (std::size_t i = 0; i < n.size() && i < b.size(); ++i) {
        const auto ni = static_cast<std::size_t>(n[i] - npu.op.rows.data());
        const auto bi = static_cast<std::size_t>(b[i] - bench.op.rows.data());
        partner[npu.origin[ni]] = bench.origin[bi];
    }
    return partner;
}

} // namespace probescope::compare
