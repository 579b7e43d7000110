// SPDX-License-Identifier: Apache-2.0
// Writing a graph db, the verdicts: the compare table's columns merged into each matched node's params and its
// precision_index (ModeAdapter.parse_result), 8.3's and 26's rules, and the collections' worst.
#include "core/graph/graphwriterparts.h"

#include "core/util/pytext.h"

#include <algorithm>
#include <cmath>
#include <set>

namespace probescope::graph::detail {

namespace {

using compare::CellKind;
using compare::CellView;
using compare::CompareMode;

/// str() of a compare cell as msprobe's graph stores it (floats as repr, nan as "nan", None as "None").
std::string cellStr(const CellView& v)
{
    switch (v.kind) {
    case CellKind::None: return "None";
    case CellKind::Bool: return v.boolean ? "True" : "False";
    case CellKind::Int: return std::to_string(v.integer);
    case CellKind::Float: return pyFloatRepr(v.number);
    case CellKind::String:
    case CellKind::PyText: return std::string(v.text);
    }
    return {};
}

/// _format_data on one merged compare value (msprobe formats the whole dict again when it writes the row).
std::string formatValue(const CellView& v, WriteFormat format)
{
    if (v.kind == CellKind::String || v.kind == CellKind::PyText) {
        std::string s(v.text);
        for (std::size_t at = 0; (at = s.find('\'', at)) != std::string::npos;)
            s.erase(at, 1);
        for (std::size_t at = 0; (at = s.find("None", at)) != std::string::npos; at += 4)
            s.replace(at, 4, "null");
        return formatDecimalString(s);
    }
    if (v.kind == CellKind::None)
        return "null";
    if (v.kind == CellKind::Float && format == WriteFormat::V83)
        return formatFloat83(v.number);
    return cellStr(v);
}

bool ignoredApi(const std::string& id)
{
    const auto first = id.find('.');
    if (first == std::string::npos)
        return false;
    const auto second = id.find('.', first + 1);
    const std::string part = id.substr(first + 1, second == std::string::npos ? std::string::npos : second - first - 1);
    static const std::set<std::string> kIgnored { "empty", "empty_like", "empty_with_format", "new_empty_strided",
                                                  "new_empty", "empty_strided" };
    return kIgnored.count(part) != 0;
}

/// ModeAdapter.parse_result for one matched NPU node: the compare columns merged into its params, and the
/// precision_index of the worst row (26: pass 0, warning 0.5, error 1).
/// get_rela_diff_summary_mode: the graph compares the statistics as Python numbers (n - b, and
/// str(abs(diff / b * 100)) + '%'), not as the table's cells; 8 values in SUMMARY_COMPARE_INDEX order.
std::optional<std::array<std::string, 8>> summaryDiffs(const MsParam& npu, const MsParam& bench, WriteFormat format)
{
    std::array<std::string, 8> out;
    auto floatText = [&](double d) {
        CellView c;
        c.kind = CellKind::Float;
        c.number = d;
        return formatValue(c, format);
    };
    for (std::size_t s = 0; s < 4; ++s) {
        const auto& n = npu.stats[s];
        const auto& b = bench.stats[s];
        if (!n || !b) {
            out[s] = "N/A";
            out[s + 4] = "N/A";
            continue;
        }
        std::string diffText;
        std::string relative;
        const double diff = n->isInt && b->isInt ? static_cast<double>(n->i - b->i) : n->d - b->d;
        if (std::isnan(diff)) {
            diffText = "Nan";
            relative = "Nan";
        } else {
            diffText = n->isInt && b->isInt ? std::to_string(n->i - b->i) : floatText(diff);
            if (b->d != 0) {
                std::string r = pyFloatRepr(std::fabs((diff / b->d) * 100)) + "%";
                // _format_data rounds a decimal string of more than 6 decimals ("0.043168169%" -> "0.043168%").
                CellView c;
                c.kind = CellKind::String;
                c.text = r;
                relative = formatValue(c, format);
            } else {
                relative = "N/A";
            }
        }
        for (std::string* t : { &diffText, &relative })
            if (*t == "inf" || *t == "-inf" || *t == "nan")
                *t += '\t';
        out[s] = diffText;
        out[s + 4] = relative;
    }
    return out;
}

/// float(x) of a compare cell as Python would take it (numbers, numeric texts); nullopt otherwise.
std::optional<double> pyFloat(const CellView& c)
{
    if (c.kind == CellKind::Float)
        return c.number;
    if (c.kind == CellKind::Int)
        return static_cast<double>(c.integer);
    if (c.kind == CellKind::Bool)
        return c.boolean ? 1.0 : 0.0;
    if (c.kind == CellKind::String || c.kind == CellKind::PyText) {
        std::string t(c.text);
        t.erase(0, t.find_first_not_of(" \t\n"));
        t.erase(t.find_last_not_of(" \t\n") + 1);
        if (t.empty())
            return std::nullopt;
        char* end = nullptr;
        const double d = std::strtod(t.c_str(), &end);
        if (end != t.c_str() + t.size())
            return std::nullopt;
        return d;
    }
    return std::nullopt;
}

/// str2float: "39.78%" -> 0.3978; 0 when it does not parse.
double str2float(const std::string& text)
{
    std::string t = text;
    while (!t.empty() && t.back() == '%')
        t.pop_back();
    while (!t.empty() && t.front() == '%')
        t.erase(0, 1);
    CellView c;
    c.kind = CellKind::String;
    c.text = t;
    const auto d = pyFloat(c);
    return d ? *d / 100 : 0.0;
}

/// msprobe 8.3's ModeAdapter.parse_result: the compare columns merged into the params and its precision_index
/// (tensor: drop of the smallest One Thousandth Err Ratio from inputs to outputs; statistics: largest output
/// relative error; md5: 1 when every input and output passes).
/// 8.3's md5 rows: get_accuracy walks the structs as inputs, outputs, parameters but the names as inputs,
/// parameters, outputs (input_data holds the parameters after the inputs), so a module with parameters gets the
/// verdict of another slot under each name after its inputs. Reproduced: name k gets (md5 of NPU slot k ==
/// md5 of bench slot k), slots paired by position within their kind.
std::unordered_map<std::string, std::string> md5Results83(const MsNode& npu, const MsNode& bench)
{
    auto md5Of = [](const MsParam& p) {
        for (const auto& [k, val] : p.values)
            if (k == "md5")
                return val;
        return std::string("None");
    };
    auto slots = [&](const MsNode& n, std::vector<const MsParam*>& names, std::vector<std::pair<int, std::size_t>>& kinds,
                     std::vector<std::string>& md5s) {
        std::vector<const MsParam*> in, params, out;
        for (const MsParam& p : n.inputs)
            (p.state == "parameters" ? params : in).push_back(&p);
        for (const MsParam& p : n.outputs)
            out.push_back(&p);
        names = in;
        names.insert(names.end(), params.begin(), params.end());
        names.insert(names.end(), out.begin(), out.end());
        std::size_t k = 0;
        for (const auto* list : { &in, &out, &params }) {
            const int kind = list == &in ? 0 : list == &out ? 1 : 2;
            for (std::size_t i = 0; i < list->size(); ++i, ++k) {
                kinds.emplace_back(kind, i);
                md5s.push_back(md5Of(*(*list)[i]));
            }
        }
    };
    std::vector<const MsParam*> namesN, namesB;
    std::vector<std::pair<int, std::size_t>> kindsN, kindsB;
    std::vector<std::string> md5N, md5B;
    slots(npu, namesN, kindsN, md5N);
    slots(bench, namesB, kindsB, md5B);
    std::unordered_map<std::string, std::string> out;
    for (std::size_t k = 0; k < namesN.size() && k < kindsN.size(); ++k) {
        std::string result = "Different";
        for (std::size_t j = 0; j < kindsB.size(); ++j)
            if (kindsB[j] == kindsN[k]) {
                result = md5N[k] == md5B[j] ? "pass" : "Different";
                break;
            }
        out.emplace(namesN[k]->key, result);
    }
    return out;
}

void judgeNode83(MsNode& node, const MsNode& bench, const Verdicts& v, CompareMode mode)
{
    const auto md5Results = mode == CompareMode::Md5 ? md5Results83(node, bench) : std::unordered_map<std::string, std::string>();
    bool anyRow = false;
    struct Side
    {
        std::vector<double> numbers;
        bool na = false;
        double maxRelative = 0;
        bool invalid = false;
        int md5 = 1;
    } sides[2];
    for (int s = 0; s < 2; ++s) {
        auto& params = s == 0 ? node.inputs : node.outputs;
        Side& side = sides[s];
        for (MsParam& p : params) {
            if (p.maxIsNone)
                continue;
            const auto it = v.rowOf.find(p.key);
            if (it != v.rowOf.end()) {
                anyRow = true;
                const std::size_t r = it->second;
                std::array<std::string, 8> diffs;
                std::array<double, 4> relatives { 0, 0, 0, 0 };
                bool ownDiffs = false;
                if (mode == CompareMode::Summary) {
                    const std::string benchName(v.table->rows.view(r, 1).text);
                    for (auto* benchParams : { &bench.inputs, &bench.outputs })
                        for (const MsParam& b : *benchParams)
                            if (b.key == benchName && !ownDiffs) {
                                if (const auto d = summaryDiffs(p, b, WriteFormat::V83)) {
                                    diffs = *d;
                                    ownDiffs = true;
                                    for (std::size_t k = 0; k < 4; ++k) {
                                        const auto& n = p.stats[k];
                                        const auto& bb = b.stats[k];
                                        if (n && bb && bb->d != 0) {
                                            const double diff = n->isInt && bb->isInt ? static_cast<double>(n->i - bb->i) : n->d - bb->d;
                                            relatives[k] = std::fabs((diff / bb->d) * 100) / 100;
                                        }
                                    }
                                }
                            }
                }
                for (std::size_t c = 0; c < v.names.size(); ++c) {
                    std::string value;
                    if (mode == CompareMode::Summary && ownDiffs && c < 8) {
                        value = diffs[c];
                    } else if (mode == CompareMode::Md5 && v.names[c] == "Result") {
                        value = md5Results.count(p.key) ? md5Results.at(p.key) : "Different";
                    } else if (mode == CompareMode::RealData && v.table12 && c < v.columns12.size() && v.columns12[c] >= 0
                               && v.rowOf12.count(p.key)) {
                        value = formatValue(v.table12->rows.view(v.rowOf12.at(p.key), static_cast<std::size_t>(v.columns12[c])),
                                            WriteFormat::V83);
                    } else if (v.columns[c] >= 0) {
                        value = formatValue(v.table->rows.view(r, static_cast<std::size_t>(v.columns[c])), WriteFormat::V83);
                    } else {
                        continue;
                    }
                    if (p.values.size() == 1 && p.values.front().first == "value")
                        continue;
                    auto found = std::find_if(p.values.begin(), p.values.end(), [&](const auto& kv) { return kv.first == v.names[c]; });
                    if (found != p.values.end())
                        found->second = value;
                    else
                        p.values.emplace_back(v.names[c], value);
                    if (mode == CompareMode::Md5 && v.names[c] == "Result" && value != "pass")
                        side.md5 = 0;
                }
                if (mode == CompareMode::Summary && s == 1) {
                    for (std::size_t k = 0; k < 4; ++k) {
                        double rel = relatives[k];
                        if (!ownDiffs) {
                            const int col = v.columns[4 + k];
                            rel = col >= 0 ? str2float(cellStr(v.table->rows.view(r, static_cast<std::size_t>(col)))) : 0;
                        }
                        if (!std::isnan(rel))
                            side.maxRelative = std::max(side.maxRelative, rel);
                    }
                }
                if (mode == CompareMode::RealData && p.shapeTruthy && v.table12 && v.oneThousandth12 >= 0
                    && v.rowOf12.count(p.key)) {
                    const CellView cell = v.table12->rows.view(v.rowOf12.at(p.key), static_cast<std::size_t>(v.oneThousandth12));
                    if (const auto t = pyFloat(cell))
                        side.numbers.push_back(*t);
                } else if (mode == CompareMode::RealData && p.shapeTruthy && v.oneThousandth >= 0) {
                    if (const auto t = pyFloat(v.table->rows.view(r, static_cast<std::size_t>(v.oneThousandth))))
                        side.numbers.push_back(*t);
                }
            }
            if (p.maxMinInvalid) {
                side.na = true;
                side.invalid = true;
            }
        }
    }
    if (!anyRow)
        return;
    double precision = 0;
    if (mode == CompareMode::Md5) {
        precision = std::min(sides[0].md5, sides[1].md5);
    } else if (mode == CompareMode::Summary) {
        precision = sides[1].invalid ? 1.0 : std::min(1.0, sides[1].maxRelative);
    } else {
        auto minOf = [](const Side& side) -> std::optional<double> {
            if (side.numbers.empty() && !side.na)
                return std::nullopt;
            double m = 1.0;
            for (const double d : side.numbers)
                m = std::min(m, d);
            return m;
        };
        const auto in = minOf(sides[0]);
        const auto out = minOf(sides[1]);
        double change = 0;
        if (sides[1].na)
            change = 1;
        else if (sides[0].na)
            change = 0;
        else if (in && out)
            change = *in - *out;
        precision = std::clamp(change, 0.0, 1.0);
    }
    if (ignoredApi(node.id))
        precision = mode == CompareMode::Md5 ? 1.0 : 0.0;
    node.precision = precision;
    node.precisionIsInteger = precision == std::floor(precision);
}

} // namespace

std::vector<std::string> indexColumns(CompareMode mode, WriteFormat format)
{
    if (format == WriteFormat::V83) {
        switch (mode) {
        case CompareMode::RealData:
            return { "Cosine", "EucDist", "MaxAbsErr", "MaxRelativeErr", "One Thousandth Err Ratio",
                     "Five Thousandths Err Ratio", "Requires_grad Consistent" };
        case CompareMode::Summary:
            return { "Max diff", "Min diff", "Mean diff", "L2norm diff", "MaxRelativeErr", "MinRelativeErr",
                     "MeanRelativeErr", "NormRelativeErr", "Requires_grad Consistent" };
        case CompareMode::Md5: return { "Result", "Requires_grad Consistent" };
        }
    }
    switch (mode) {
    case CompareMode::RealData:
        return { "Cosine", "EucDist", "MaxAbsErr", "MaxRelativeErr", "One Thousandth Err Ratio",
                 "Five Thousandths Err Ratio", "Requires_grad Consistent", "Result", "Err_message" };
    case CompareMode::Summary:
        return { "Max diff", "Min diff", "Mean diff", "L2norm diff", "MaxRelativeErr", "MinRelativeErr",
                 "MeanRelativeErr", "NormRelativeErr", "Requires_grad Consistent", "Result", "Err_message" };
    case CompareMode::Md5: return { "Result", "Requires_grad Consistent", "Result", "Err_message" };
    }
    return {};
}

void judgeNode(MsNode& node, const MsNode& bench, const Verdicts& v, CompareMode mode, WriteFormat format)
{
    if (format == WriteFormat::V83) {
        judgeNode83(node, bench, v, mode);
        return;
    }
    bool anyRow = false;
    int worst = 0; // 0 pass, 1 warning, 2 error
    for (auto* params : { &node.inputs, &node.outputs }) {
        for (MsParam& p : *params) {
            const auto it = v.rowOf.find(p.key);
            if (it == v.rowOf.end())
                continue;
            anyRow = true;
            const std::size_t r = it->second;
            for (std::size_t c = 0; c < v.columns.size(); ++c) {
                if (v.columns[c] < 0)
                    continue;
                const std::string value = formatValue(v.table->rows.view(r, static_cast<std::size_t>(v.columns[c])), format);
                auto found = std::find_if(p.values.begin(), p.values.end(), [&](const auto& kv) { return kv.first == v.names[c]; });
                if (found != p.values.end() && !(p.values.size() == 1 && p.values.front().first == "value"))
                    found->second = value;
                else if (!(p.values.size() == 1 && p.values.front().first == "value"))
                    p.values.emplace_back(v.names[c], value);
            }
            if (mode == CompareMode::Summary && !(p.values.size() == 1 && p.values.front().first == "value")) {
                const std::string benchName(v.table->rows.view(r, 1).text);
                for (auto* benchParams : { &bench.inputs, &bench.outputs })
                    for (const MsParam& b : *benchParams)
                        if (b.key == benchName)
                            if (const auto diffs = summaryDiffs(p, b, format))
                                for (std::size_t k = 0; k < 8; ++k)
                                    for (auto& kv : p.values)
                                        if (kv.first == v.names[k])
                                            kv.second = (*diffs)[k];
            }
            if (v.result >= 0) {
                const CellView res = v.table->rows.view(r, static_cast<std::size_t>(v.result));
                if (res.text == "error")
                    worst = std::max(worst, 2);
                else if (res.text == "warning")
                    worst = std::max(worst, 1);
            }
        }
    }
    if (!anyRow)
        return;
    if (ignoredApi(node.id)) {
        node.precision = mode == CompareMode::Md5 ? 1.0 : 0.0;
        node.precisionIsInteger = true;
        return;
    }
    node.precision = worst == 2 ? 1.0 : worst == 1 ? 0.5 : 0.0;
    node.precisionIsInteger = worst != 1;
}

/// _handle_api_collection_index: an Apis_Between_Modules takes the worst of its APIs (max from int 0).
void judgeCollections(MsGraph& g, bool md5Min)
{
    if (md5Min) {
        // 8.3 md5: a collection passes (1) only when all its APIs do.
        for (const std::uint32_t s : g.nodes[g.root].subs) {
            MsNode& c = g.nodes[s];
            if (c.op != kCollection)
                continue;
            double p = 1;
            for (const std::uint32_t api : c.subs)
                p = std::min(p, g.nodes[api].precision.value_or(1));
            c.precision = p;
            c.precisionIsInteger = true;
        }
        return;
    }
    for (const std::uint32_t s : g.nodes[g.root].subs) {
        MsNode& c = g.nodes[s];
        if (c.op != kCollection)
            continue;
        double p = 0;
        bool integer = true;
        for (const std::uint32_t api : c.subs) {
            const MsNode& a = g.nodes[api];
            const double v = a.precision.value_or(0);
            if (v > p) {
                p = v;
                integer = !a.precision || a.precisionIsInteger;
            }
        }
        c.precision = p;
        c.precisionIsInteger = integer;
    }
}

} // namespace probescope::graph::detail
