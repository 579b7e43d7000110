// SPDX-License-Identifier: Apache-2.0
#include "core/compare/msprobe12/highlight.h"

#include "core/compare/table/flatten.h"

#include <cmath>

namespace probescope::compare {

namespace {

constexpr double kFloatEpsilon = 2.220446049250313e-16;

const char* const kNanInf = "maximum or minimum is nan, -inf, or inf";
const char* const kHugeAbs = "maximum absolute error exceeds 1e+10";
const char* const kOrderMagnitude
    = "maximum absolute error of both input/parameters and output exceed 1, with the output larger by an order of magnitude";
const char* const kThousandRed = "The input/parameters's one thousandth err ratio exceeds 0.9, while the output's is below 0.6";
const char* const kThousandYellow
    = "The output's one thousandth err ratio decreases by more than 0.1 compared to the input/parameters's";
const char* const kCosine = "The output's cosine decreases by more than 0.1 compared to the input/parameters's";
const char* const kRelRed = "maximum relative error exceeds 0.5";
const char* const kRelYellow = "The output's maximum relative error exceeds 0.1, while the input/parameters's is below 0.01";

bool isNanInfText(const Cell& c)
{
    if (c.isFloat())
        return std::isnan(c.asDouble()) || std::isinf(c.asDouble());
    if (!c.isString())
        return false;
    std::string s = c.asString();
    if (!s.empty() && s.back() == '\t')
        s.pop_back();
    return s == "nan" || s == "inf" || s == "-inf";
}

double orderOf(double x)
{
    return x < 1 ? 0 : std::log10(x);
}

struct Messages
{
    std::vector<std::string> red;
    std::vector<std::string> yellow;
};

} // namespace

void applyHighlight(CompareTable& table)
{
    table.colors.assign(table.rows.size(), RowColor::None);
    if (table.mode == CompareMode::Md5 || table.rows.empty())
        return;
    const bool tensor = table.mode == CompareMode::RealData;
    const int colD = table.column(tensor ? "MaxAbsErr" : "Max diff");
    const int colNpuMax = table.column("NPU max");
    const int colNpuMin = table.column("NPU min");
    const int colBenchMax = table.column("Bench max");
    const int colRatio = table.column("One Thousandth Err Ratio");
    const int colCos = table.column("Cosine");
    const int colErr = table.column("Err_message");
    std::vector<Messages> messages(table.rows.size());
    auto cell = [&](std::size_t row, int col) { return table.rows.cell(row, static_cast<std::size_t>(col)); };
    auto numeric3 = [&](std::size_t r) {
        return cell(r, colNpuMax).isNumeric() && cell(r, colBenchMax).isNumeric() && cell(r, colD).isNumeric();
    };

    // Batches: consecutive rows of one entry (A.9 step 1).
    std::size_t s = 0;
    while (s < table.rows.size()) {
        const auto first = categorize(cell(s, 0).asString());
        const std::string key = first ? first->second : std::string();
        std::size_t inputEnd = s + 1;
        std::size_t outputEnd = s + 1;
        std::size_t gradEnd = s + 1;
        std::size_t r = s + 1;
        for (; r < table.rows.size(); ++r) {
            const auto cat = categorize(cell(r, 0).asString());
            if (!cat)
                break;
            const std::string& k = cat->second;
            const bool joins = k == key
                || (k.find(".forward.") == std::string::npos && k.find(".backward.") == std::string::npos
                    && key.find(k) != std::string::npos);
            if (!joins)
                break;
            switch (cat->first) {
            case RowCategory::Input:
            case RowCategory::Parameters:
                ++inputEnd;
                ++outputEnd;
                ++gradEnd;
                break;
            case RowCategory::Output:
                ++outputEnd;
                ++gradEnd;
                break;
            case RowCategory::ParametersGrad:
                ++gradEnd;
                break;
            }
        }
        const std::size_t batchEnd = std::min(gradEnd, table.rows.size());
        for (std::size_t i = s; i < batchEnd; ++i) {
            if (isNanInfText(cell(i, colNpuMax)) || isNanInfText(cell(i, colNpuMin)))
                messages[i].red.push_back(kNanInf);
            else if (cell(i, colD).isNumeric() && std::fabs(cell(i, colD).asDouble()) > 1e10)
                messages[i].red.push_back(kHugeAbs);
        }
        for (std::size_t o = inputEnd; o < std::min(outputEnd, table.rows.size()); ++o) {
            if (!numeric3(o))
                continue;
            for (std::size_t in = s; in < inputEnd; ++in) {
                if (!numeric3(in))
                    continue;
                const double dI = std::fabs(cell(in, colD).asDouble());
                const double dO = std::fabs(cell(o, colD).asDouble());
                if (!(dI > dO) && orderOf(dO) - orderOf(dI) >= 1)
                    messages[o].yellow.push_back(kOrderMagnitude);
                if (tensor) {
                    if (cell(in, colRatio).isNumeric() && cell(o, colRatio).isNumeric()) {
                        const double ri = cell(in, colRatio).asDouble();
                        const double ro = cell(o, colRatio).asDouble();
                        if (ri > 0.9 && ro < 0.6)
                            messages[o].red.push_back(kThousandRed);
                        else if (ri - ro > 0.1)
                            messages[o].yellow.push_back(kThousandYellow);
                    }
                    if (cell(in, colCos).isNumeric() && cell(o, colCos).isNumeric()
                        && cell(in, colCos).asDouble() - cell(o, colCos).asDouble() > 0.1)
                        messages[o].yellow.push_back(kCosine);
                } else {
                    auto rel = [&](std::size_t row) {
                        return std::fabs(cell(row, colD).asDouble() / std::max(kFloatEpsilon, cell(row, colBenchMax).asDouble()));
                    };
                    const double rO = rel(o);
                    if (rO > 0.5)
                        messages[o].red.push_back(kRelRed);
                    else if (rO > 0.1 && rel(in) < 0.01)
                        messages[o].yellow.push_back(kRelYellow);
                }
            }
        }
        s = std::max(r, s + 1);
    }

    for (std::size_t i = 0; i < table.rows.size(); ++i) {
        const auto& list = !messages[i].red.empty() ? messages[i].red : messages[i].yellow;
        if (list.empty())
            continue;
        table.colors[i] = !messages[i].red.empty() ? RowColor::Red : RowColor::Yellow;
        const CellView err = table.rows.view(i, static_cast<std::size_t>(colErr));
        std::string text = err.isString() ? std::string(err.text) : std::string();
        for (const std::string& m : list)
            text += text.empty() ? m : "\n" + m;
        table.rows.set(i, static_cast<std::size_t>(colErr), Cell::text(std::move(text)));
    }
}

long firstFailingRow(const CompareTable& table)
{
    const int col = table.column(table.mode == CompareMode::RealData ? "Accuracy Reached or Not" : "Result");
    if (col < 0)
        return -1; // not a msprobe 1.2 table (msprobe 26 has no advisor)
    const char* failing = table.mode == CompareMode::RealData ? "No" : (table.mode == CompareMode::Md5 ? "Different" : "Warning");
    for (std::size_t i = 0; i < table.rows.size(); ++i) {
        const Cell& c = table.rows[i][static_cast<std::size_t>(col)];
        if (c.isString() && c.asString() == failing)
            return static_cast<long>(i);
    }
    return -1;
}

std::string advisorText(const CompareTable& table)
{
    const long row = firstFailingRow(table);
    if (row < 0)
        return "Line: NA\nSuspect Nodes: NA\nExpert Advice: All data in comparison result meets the accuracy requirements.\n";
    const std::string name = table.rows[static_cast<std::size_t>(row)][0].asString();
    auto has = [&](const char* s) { return name.find(s) != std::string::npos; };
    static const char* const kForwardInput = "1. Analyze the model to view the input source.\n2. Check whether an inplace API "
                                             "causes the output result to overwrite the input result. That is, the fault "
                                             "is actually caused by a computation error.\n3. The fault may be caused by "
                                             "memory corruption and further analysis is required.";
    static const char* const kForwardOutput = "This is a forward API computation error. Check the computation implementation.";
    static const char* const kBackwardInput = "Check whether the forward computation result is affected.";
    static const char* const kBackwardOutput = "This is a backward API computation error. Check the computation implementation.";
    static const char* const kDeterministic = "This torch api may be uncertainty in the calculation, can seed_all(mode=True) "
                                              "to enable deterministic computing.";
    static const char* const kBatchNorm = "Torch API batch_norm input not fixed, the following suggestions may fix it:\n1. If "
                                          "use torch.nn.functional.batch_norm, you can set parameter training=False.\n2. If "
                                          "use torch.nn.BatchNormXXX, you can set parameter affine=False.\n3. Use "
                                          "seed_all(mode=True) to enable deterministic computing.";
    const bool nondeterministic
        = has("conv2d") || has("conv3d") || has("matmul") || has("nll_loss") || has("layer_norm") || has("lstm");
    std::string advice;
    if (has("forward"))
        advice = has("input") ? kForwardInput : (nondeterministic ? kDeterministic : kForwardOutput);
    else
        advice = has("input") ? kBackwardInput : (nondeterministic ? kDeterministic : kBackwardOutput);
    if (has("Functional_batch_norm") && has("forward_input.1"))
        advice = kBatchNorm;
    return "Line: " + std::to_string(row) + "\nSuspect Nodes: " + name + "\nExpert Advice: " + advice + "\n";
}

} // namespace probescope::compare
