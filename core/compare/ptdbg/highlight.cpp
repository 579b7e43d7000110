// SPDX-License-Identifier: Apache-2.0
// ptdbg 6.0's fuzzy name rule and red/yellow highlight rules (acc_compare.py: fuzzy_check_name,
// find_error_rows, find_compare_result_error_rows and the check_* rules), kept with their quirks.
#include "core/compare/ptdbg/highlight.h"

#include "core/compare/table/pytext.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <string>

namespace probescope::compare::ptdbg {

namespace {

/// rename_api: the name without its call index — the text before the first `process`, less its last two
/// "."-separated pieces (Python's rsplit(".", 2)[0]), followed by the text up to the next `process`.
std::string renameApi(std::string_view name, std::string_view process)
{
    const std::size_t first = name.find(process);
    const std::string_view head = name.substr(0, first);
    const std::size_t afterStart = first + process.size();
    const std::size_t second = name.find(process, afterStart);
    const std::string_view inOut = name.substr(afterStart, second == std::string_view::npos ? std::string_view::npos
                                                                                            : second - afterStart);
    std::string_view func = head;
    const std::size_t last = head.rfind('.');
    if (last != std::string_view::npos) {
        const std::size_t before = last == 0 ? std::string_view::npos : head.rfind('.', last - 1);
        func = head.substr(0, before == std::string_view::npos ? last : before);
    }
    return std::string(func) + std::string(inOut);
}

bool has(std::string_view s, std::string_view what)
{
    return s.find(what) != std::string_view::npos;
}

bool numeric(const Cell& c)
{
    return c.isNumeric();
}

double value(const Cell& c)
{
    return c.asDouble();
}

struct Columns
{
    std::size_t npuMax, npuMin, benchMax, maxDiff, oneThousandth, cosine;
};

Columns columnsFor(bool summaryCompare)
{
    // Positions in SUMMARY_COMPARE_RESULT_HEADER / COMPARE_RESULT_HEADER.
    return summaryCompare ? Columns { 10, 11, 14, 6, 0, 0 } : Columns { 11, 12, 15, 7, 9, 6 };
}

/// check_overflow's OVERFLOW_LIST test on str(value).
bool overflowText(const Cell& c)
{
    const std::string s = pyStr(c);
    return s == "nan" || s == "inf" || s == "-inf" || s == "nan\t" || s == "inf\t" || s == "-inf\t";
}

double pyMax(double a, double b)
{
    // Python's max(a, b) keeps a unless b is greater (so a NaN b gives a).
    return b > a ? b : a;
}

} // namespace

bool fuzzyNameMatch(std::string_view npu, std::string_view bench)
{
    if (has(npu, "forward") && has(bench, "forward"))
        return renameApi(npu, "forward") == renameApi(bench, "forward");
    if (has(npu, "backward") && has(bench, "backward"))
        return renameApi(npu, "backward") == renameApi(bench, "backward");
    return npu == bench;
}

void findErrorRows(const std::vector<std::vector<Cell>>& rows, std::vector<RowColor>& colors, std::size_t start,
                   std::size_t count, std::size_t inputs, bool summaryCompare)
{
    if (start >= rows.size())
        return;
    count = std::min(count, rows.size() - start); // a Python slice past the end is shorter
    const Columns c = columnsFor(summaryCompare);
    std::set<std::size_t> red;
    std::set<std::size_t> yellow;
    auto cell = [&](std::size_t row, std::size_t column) -> const Cell& {
        static const Cell none;
        const auto& r = rows[row];
        return column < r.size() ? r[column] : none;
    };
    for (std::size_t i = 0; i < count; ++i) {
        const std::size_t num = start + i;
        if (overflowText(cell(num, c.npuMax)) || overflowText(cell(num, c.npuMin))) {
            red.insert(num);
            continue;
        }
        const Cell& diff = cell(num, c.maxDiff);
        if (numeric(diff) && value(diff) > 1e10)
            red.insert(num);
    }
    auto usable = [&](std::size_t row) {
        return numeric(cell(row, c.npuMax)) && numeric(cell(row, c.benchMax)) && numeric(cell(row, c.maxDiff));
    };
    const std::size_t inputCount = std::min(inputs, count);
    for (std::size_t n = inputCount; n < count; ++n) {
        const std::size_t out = start + n;
        if (red.count(out) || !usable(out))
            continue;
        for (std::size_t m = 0; m < inputCount; ++m) {
            const std::size_t in = start + m;
            if (!usable(in))
                continue;
            // check_order_magnitude
            const double inDiff = std::abs(value(cell(in, c.maxDiff)));
            const double outDiff = std::abs(value(cell(out, c.maxDiff)));
            if (!(inDiff > outDiff)) {
                const double inOrder = inDiff < 1 ? 0 : std::log10(inDiff);
                const double outOrder = outDiff < 1 ? 0 : std::log10(outDiff);
                if (outOrder - inOrder >= 1)
                    yellow.insert(out);
            }
            if (summaryCompare) {
                // check_max_relative_diff
                const double inRel
                    = std::abs(value(cell(in, c.maxDiff)) / pyMax(0.01, value(cell(in, c.benchMax))));
                const double outRel
                    = std::abs(value(cell(out, c.maxDiff)) / pyMax(0.01, value(cell(out, c.benchMax))));
                if (outRel > 0.5)
                    red.insert(out);
                else if (outRel > 0.1 && inRel < 0.01)
                    yellow.insert(out);
            } else {
                // check_one_thousand_error_ratio
                const Cell& inRatio = cell(in, c.oneThousandth);
                const Cell& outRatio = cell(out, c.oneThousandth);
                if (numeric(inRatio) && numeric(outRatio)) {
                    if (value(inRatio) > 0.9 && value(outRatio) < 0.6)
                        red.insert(out);
                    else if (value(inRatio) - value(outRatio) > 0.1)
                        yellow.insert(out);
                }
                // check_cosine_similarity
                const Cell& inCos = cell(in, c.cosine);
                const Cell& outCos = cell(out, c.cosine);
                if (numeric(inCos) && numeric(outCos) && value(inCos) - value(outCos) > 0.1)
                    yellow.insert(out);
            }
        }
    }
    for (const std::size_t r : red)
        colors[r] = RowColor::Red;
    for (const std::size_t y : yellow) {
        if (!red.count(y) && colors[y] != RowColor::Red)
            colors[y] = RowColor::Yellow;
    }
}

void findCompareResultErrorRows(const std::vector<std::vector<Cell>>& rows, std::vector<RowColor>& colors)
{
    // get_name_and_state: the text before "input" (or "output") names the API.
    auto nameAndState = [](const std::string& name) -> std::pair<std::string, std::string> {
        if (has(name, "input"))
            return { name.substr(0, name.find("input")), "input" };
        const std::size_t out = name.find("output");
        return { out == std::string::npos ? name : name.substr(0, out), "output" };
    };
    // The grouping is ptdbg's, including its assumptions (an API starts with one input row).
    std::size_t start = 0;
    std::size_t inputNum = 0;
    std::size_t outputNum = 0;
    std::size_t num = 0;
    std::string lastApi;
    std::string lastState;
    std::string state;
    bool haveLast = false;
    for (const auto& row : rows) {
        const auto [api, st] = nameAndState(row[0].asString());
        state = st;
        if (haveLast && !lastApi.empty()) {
            if (api == lastApi) {
                if (st == lastState) {
                    ++num;
                } else {
                    inputNum = num;
                    num = 1;
                    lastState = st;
                }
            } else {
                outputNum = num;
                findErrorRows(rows, colors, start, inputNum + outputNum, inputNum, false);
                num = 1;
                lastApi = api;
                lastState = st;
                start += inputNum + outputNum;
                inputNum = 1;
                outputNum = 0;
            }
        } else {
            num = 1;
            lastApi = api;
            lastState = st;
            haveLast = true;
        }
    }
    if (!state.empty()) {
        if (state == "input")
            inputNum = num;
        else
            outputNum = num;
        findErrorRows(rows, colors, start, inputNum + outputNum, inputNum, false);
    }
}

} // namespace probescope::compare::ptdbg
