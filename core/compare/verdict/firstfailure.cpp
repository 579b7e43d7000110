// SPDX-License-Identifier: Apache-2.0
#include "core/compare/verdict/firstfailure.h"

#include "core/compare/table/flatten.h"
#include "core/compare/table/pytext.h"

#include <cmath>
#include <cstdlib>
#include <limits>
#include <optional>

namespace probescope::compare {

namespace {

/// A statistic cell: its value, or none when it holds no number ("N/A", None, other text).
std::optional<double> statisticOf(const Cell& cell)
{
    if (cell.isNumber())
        return cell.asDouble();
    if (!cell.isString())
        return std::nullopt;
    std::string text = cell.asString();
    for (char& c : text)
        c = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
    std::string_view t = text;
    const bool negative = !t.empty() && t.front() == '-';
    if (!t.empty() && (t.front() == '-' || t.front() == '+'))
        t.remove_prefix(1);
    if (t == "nan")
        return std::numeric_limits<double>::quiet_NaN();
    if (t == "inf" || t == "infinity")
        return negative ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
    char* end = nullptr;
    const double v = std::strtod(text.c_str(), &end);
    if (text.empty() || end != text.c_str() + text.size())
        return std::nullopt;
    return v;
}

bool diverging(const Cell& npu, const Cell& bench)
{
    const auto n = statisticOf(npu);
    const auto b = statisticOf(bench);
    return n && b && !std::isfinite(*n) && std::isfinite(*b);
}

} // namespace

NonFiniteStatistics::NonFiniteStatistics(const CompareTable& table)
    : m_npu { table.column("NPU max"), table.column("NPU min"), table.column("NPU mean"), table.column("NPU l2norm") }
    , m_bench { table.column("Bench max"), table.column("Bench min"), table.column("Bench mean"),
                table.column("Bench l2norm") }
{
}

bool NonFiniteStatistics::diverges(const std::vector<Cell>& cells) const
{
    for (int k = 0; k < 4; ++k) {
        if (m_npu[k] < 0 || m_bench[k] < 0)
            continue;
        const auto n = static_cast<std::size_t>(m_npu[k]);
        const auto b = static_cast<std::size_t>(m_bench[k]);
        if (n < cells.size() && b < cells.size() && diverging(cells[n], cells[b]))
            return true;
    }
    return false;
}

bool NonFiniteStatistics::diverges(const CompareTable& table, std::size_t row) const
{
    if (row >= table.rows.size() || (row < table.matched.size() && !table.matched[row]))
        return false;
    for (int k = 0; k < 4; ++k) {
        if (m_npu[k] < 0 || m_bench[k] < 0)
            continue;
        if (diverging(table.rows[row][static_cast<std::size_t>(m_npu[k])],
                      table.rows[row][static_cast<std::size_t>(m_bench[k])]))
            return true;
    }
    return false;
}

bool rowFails(const CompareTable& table, std::size_t row)
{
    return rowFails(table, row, NonFiniteStatistics(table));
}

bool rowFails(const CompareTable& table, std::size_t row, const NonFiniteStatistics& nonFinite)
{
    // ProbeScope's verdict beside msprobe's (issue 33): a NaN or Inf statistic against a finite one diverges.
    if (nonFinite.diverges(table, row))
        return true;
    auto text = [&](const char* column) -> std::string {
        const int c = table.column(column);
        if (c < 0)
            return {};
        const Cell& cell = table.rows[row][static_cast<std::size_t>(c)];
        return cell.isString() ? cell.asString() : std::string();
    };
    const RowColor color = row < table.colors.size() ? table.colors[row] : RowColor::None;
    // msprobe 26 tables carry Result pass/warning/error instead of 1.2's Accuracy and highlights.
    if (table.column("Accuracy Reached or Not") < 0 && table.column("Err_message") >= 0 && text("Result") == "error")
        return true;
    switch (table.mode) {
    case CompareMode::RealData:
        return text("Accuracy Reached or Not") == "No" || color == RowColor::Red;
    case CompareMode::Summary:
        return text("Result") == "Warning" || color != RowColor::None;
    case CompareMode::Md5:
        return text("Result") == "Different";
    }
    return false;
}

namespace {

struct NodeRows
{
    bool inputFails = false;
    bool outputFails = false;
    long firstFailingOutput = -1;
    long firstFailing = -1;
};

std::string describe(const CompareTable& table, long row)
{
    const auto& cells = table.rows[static_cast<std::size_t>(row)];
    std::string out = cells[0].asString();
    auto add = [&](const char* column) {
        const int c = table.column(column);
        if (c >= 0)
            out += std::string(", ") + column + " " + excelText(cells[static_cast<std::size_t>(c)]);
    };
    switch (table.mode) {
    case CompareMode::RealData:
        add("Cosine");
        add("MaxAbsErr");
        add("MaxRelativeErr");
        break;
    case CompareMode::Summary:
        add("Max diff");
        add("MaxRelativeErr");
        break;
    case CompareMode::Md5:
        add("NPU MD5");
        add("BENCH MD5");
        break;
    }
    return out;
}

} // namespace

FirstFailure findFirstFailure(const CompareTable& table, const tree::ConstructTree& tree)
{
    std::vector<NodeRows> nodes(tree.size());
    const NonFiniteStatistics nonFinite(table);
    for (std::size_t r = 0; r < table.rows.size(); ++r) {
        if (!table.matched[r])
            continue; // nothing to judge without bench data
        const std::uint32_t entry = table.npuEntry[r];
        if (entry >= nodes.size() || !rowFails(table, r, nonFinite))
            continue;
        NodeRows& n = nodes[entry];
        if (n.firstFailing < 0)
            n.firstFailing = static_cast<long>(r);
        const auto cat = categorize(table.rows[r][0].asString());
        const bool isInput = cat && (cat->first == RowCategory::Input || cat->first == RowCategory::Parameters);
        if (isInput) {
            n.inputFails = true;
        } else {
            n.outputFails = true;
            if (n.firstFailingOutput < 0)
                n.firstFailingOutput = static_cast<long>(r);
        }
    }
    FirstFailure result;
    std::optional<tree::NodeId> firstAny;
    for (tree::NodeId id : tree.executionOrder()) {
        const NodeRows& n = nodes[id.value];
        if (n.firstFailing >= 0 && !firstAny)
            firstAny = id;
        if (n.outputFails && !n.inputFails) {
            result.found = true;
            result.node = id;
            result.key = std::string(tree.node(id).key);
            result.executionIndex = tree.node(id).executionIndex;
            result.firstFailingRow = n.firstFailingOutput;
            result.summary = "first failing node: " + result.key + " (ran #" + std::to_string(result.executionIndex)
                + "; its inputs match, its output does not: " + describe(table, n.firstFailingOutput) + ")";
            return result;
        }
    }
    if (firstAny) {
        result.node = *firstAny;
        result.key = std::string(tree.node(*firstAny).key);
        result.executionIndex = tree.node(*firstAny).executionIndex;
        result.firstFailingRow = nodes[firstAny->value].firstFailing;
        result.inputsAlreadyDiffer = true;
        result.summary = "no node fails with matching inputs: the first failing node, " + result.key + " (ran #"
            + std::to_string(result.executionIndex)
            + "), already receives differing inputs, so the runs diverged before this dump (for example in the "
              "optimizer step or outside the dumped scope): "
            + describe(table, result.firstFailingRow);
        return result;
    }
    result.summary = "no failing node: every compared row meets the accuracy rules";
    return result;
}

long earliestFailure(const std::vector<const FirstFailure*>& failures)
{
    long best = -1;
    for (std::size_t i = 0; i < failures.size(); ++i) {
        const FirstFailure* f = failures[i];
        if (!f || f->key.empty())
            continue;
        const FirstFailure* b = best < 0 ? nullptr : failures[static_cast<std::size_t>(best)];
        if (!b || (f->found && !b->found) || (f->found == b->found && f->executionIndex < b->executionIndex))
            best = static_cast<long>(i);
    }
    return best;
}

} // namespace probescope::compare
