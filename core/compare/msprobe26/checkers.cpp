// SPDX-License-Identifier: Apache-2.0
// Era C Result / Err_message: the indicator checkers of compare-spec §8.1, run per dump entry.
#include "core/compare/msprobe26/msprobe26.h"

#include "core/compare/table/pytext.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <optional>
#include <string_view>

namespace probescope::compare::msprobe26 {

namespace {

enum class Level { Pass = 0, Warning = 1, Error = 2 };
enum class Ignore { None, All, Input };

constexpr const char* kMsgInfNan = "error: There is nan/inf/-inf in the maximum or minimum value of NPU.";
constexpr const char* kMsgRelativeErr = "error: The NormRelativeErr of output is greater than 0.5.";
constexpr const char* kMsgOneThousandth =
    "error: The input/parameters of One Thousandth Err Ratio > 0.9 while the output < 0.6.";
constexpr const char* kMsgRequiresGrad = "error: The Required_Grad of NPU and Bench are inconsistent";
constexpr const char* kMsgParameters = "error: The scalar parameters of NPU and Bench are inconsistent.";
constexpr const char* kMsgDtype = "error: The dtype of NPU and Bench are inconsistent.";
constexpr const char* kMsgShape = "error: The shape of NPU and Bench are inconsistent.";
constexpr const char* kMsgRelativeWarn = "warning: The norm relative error of output is 10 times that of input.";
constexpr const char* kMsgCosineWarn = "warning: The input/parameters of Cosine > 0.9, and input/parameters - output > 0.1";
constexpr const char* kMsgCrcWarn = "warning: The parameter of NPU does not match the bench.";
constexpr const char* kMsgCrcError = "error: The CRC-32 value of NPU differs from that of the bench.";

std::string lower(std::string s)
{
    for (char& c : s)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

std::string strip(std::string_view s)
{
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())))
        s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())))
        s.remove_suffix(1);
    return std::string(s);
}

std::optional<double> pyFloat(std::string s)
{
    s = strip(s);
    if (s.empty())
        return std::nullopt;
    const std::string l = lower(s);
    std::string_view body = l;
    if (body.front() == '+' || body.front() == '-')
        body.remove_prefix(1);
    if (body == "inf" || body == "infinity" || body == "nan") {
        const double v = body == "nan" ? NAN : INFINITY;
        return l.front() == '-' ? -v : v;
    }
    if (body.empty() || !(std::isdigit(static_cast<unsigned char>(body.front())) || body.front() == '.'))
        return std::nullopt;
    char* end = nullptr;
    const double v = std::strtod(s.c_str(), &end);
    if (end != s.c_str() + s.size() || (l.find('x') != std::string::npos))
        return std::nullopt;
    return v;
}

bool isInfOrNan(const Cell& c)
{
    if (c.isFloat())
        return !std::isfinite(std::get<double>(c.value));
    if (c.isString()) {
        const std::string s = lower(strip(c.asString()));
        return s == "inf" || s == "-inf" || s == "nan";
    }
    return false;
}

/// The value minmax() folds: numbers, or "12.5%" texts as 0.125; nullopt for everything else.
std::optional<double> foldValue(const Cell& c)
{
    if (c.isNumber())
        return c.asDouble();
    if (c.isString()) {
        const std::string& s = c.asString();
        if (!s.empty() && s.back() == '%') {
            if (auto v = pyFloat(s.substr(0, s.size() - 1)))
                return *v / 100;
        }
    }
    return std::nullopt;
}

/// |float(x.strip('%')) / 100|, 0 when unparseable (RelativeErr checker).
double percentValue(const Cell& c)
{
    std::string s = pyStr(c);
    s.erase(std::remove(s.begin(), s.end(), '%'), s.end());
    if (auto v = pyFloat(s))
        return *v / 100;
    return 0;
}

/// Python `a != b` for the two max cells of a scalar argument (1 == 1.0 == True).
bool pyNotEqual(const Cell& a, const Cell& b)
{
    if (a.isNumeric() && b.isNumeric())
        return a.asDouble() != b.asDouble();
    return !(a == b);
}

struct Col
{
    int npuName = -1, benchName = -1, npuDtype = -1, benchDtype = -1, npuShape = -1, benchShape = -1;
    int npuReq = -1, benchReq = -1, npuMax = -1, npuMin = -1, benchMax = -1, benchMin = -1;
    int cosine = -1, oneThousandth = -1, normRel = -1, npuMd5 = -1, benchMd5 = -1, result = -1, errMessage = -1;
};

} // namespace

void applyCheckers(CompareTable& table)
{
    Col c;
    c.npuName = table.column("NPU Name");
    c.benchName = table.column("Bench Name");
    c.npuDtype = table.column("NPU Dtype");
    c.benchDtype = table.column("Bench Dtype");
    c.npuShape = table.column("NPU Tensor Shape");
    c.benchShape = table.column("Bench Tensor Shape");
    c.npuReq = table.column("NPU Requires_grad");
    c.benchReq = table.column("Bench Requires_grad");
    c.npuMax = table.column("NPU max");
    c.npuMin = table.column("NPU min");
    c.benchMax = table.column("Bench max");
    c.benchMin = table.column("Bench min");
    c.cosine = table.column("Cosine");
    c.oneThousandth = table.column("One Thousandth Err Ratio");
    c.normRel = table.column("NormRelativeErr");
    c.npuMd5 = table.column("NPU MD5");
    c.benchMd5 = table.column("BENCH MD5");
    c.result = table.column("Result");
    c.errMessage = table.column("Err_message");
    if (c.result < 0 || c.errMessage < 0 || c.npuName < 0)
        return;
    const bool tensor = table.mode == CompareMode::RealData;
    const bool stats = table.mode == CompareMode::Summary;
    const bool md5 = table.mode == CompareMode::Md5;

    auto cell = [&](std::size_t r, int col) { return col < 0 ? Cell::none() : table.rows.cell(r, static_cast<std::size_t>(col)); };
    auto text = [&](std::size_t r, int col) { return col < 0 ? std::string() : pyStr(cell(r, col)); };
    auto benchMatched = [&](std::size_t r) {
        const std::string b = text(r, c.benchName);
        return !b.empty() && b != "N/A";
    };

    // Groups by entry, in first-appearance order.
    std::vector<std::uint32_t> order;
    std::map<std::uint32_t, std::vector<std::size_t>> groups;
    for (std::size_t r = 0; r < table.rows.size(); ++r) {
        const std::uint32_t g = r < table.npuEntry.size() ? table.npuEntry[r] : static_cast<std::uint32_t>(r);
        auto [it, inserted] = groups.try_emplace(g);
        if (inserted)
            order.push_back(g);
        it->second.push_back(r);
    }

    std::vector<Level> level(table.rows.size(), Level::Pass);
    std::vector<std::vector<std::string>> messages(table.rows.size());
    auto fire = [&](std::size_t r, Level l, const char* msg) {
        level[r] = std::max(level[r], l);
        messages[r].emplace_back(msg);
    };

    for (const std::uint32_t g : order) {
        const auto& rows = groups[g];
        std::vector<std::size_t> inputs;
        std::vector<std::size_t> outputs;
        for (const std::size_t r : rows) {
            // ptdbg 6.0 names a lone output "….forward.output" (no index): an output all the same.
            const std::string name = text(r, c.npuName);
            if (name.find(".output.") != std::string::npos || name.ends_with(".output"))
                outputs.push_back(r);
            else
                inputs.push_back(r);
        }
        Ignore ignore = Ignore::None;
        if (!inputs.empty()) {
            const std::string name = text(inputs.front(), c.npuName);
            const std::size_t d1 = name.find('.');
            std::string api;
            if (d1 != std::string::npos) {
                const std::size_t d2 = name.find('.', d1 + 1);
                api = name.substr(d1 + 1, d2 == std::string::npos ? std::string::npos : d2 - d1 - 1);
            }
            static const char* allIgnore[] = { "empty", "empty_like", "numpy", "to", "__setitem__", "empty_with_format",
                                               "new_empty_strided", "new_empty", "empty_strided" };
            static const char* inputIgnore[] = { "_reduce_scatter_base", "_all_gather_base", "all_to_all_single",
                                                 "batch_isend_irecv" };
            if (std::any_of(std::begin(allIgnore), std::end(allIgnore), [&](const char* s) { return api == s; }))
                ignore = Ignore::All;
            else if (std::any_of(std::begin(inputIgnore), std::end(inputIgnore), [&](const char* s) { return api == s; }))
                ignore = Ignore::Input;
        }
        if (ignore == Ignore::All)
            continue;
        const std::vector<std::size_t>& perRow = ignore == Ignore::Input ? outputs : rows;
        const bool crossRow = ignore == Ignore::None;

        auto foldMin = [&](const std::vector<std::size_t>& rs, int col) {
            double v = 1.0;
            for (const std::size_t r : rs) {
                if (auto x = foldValue(cell(r, col)))
                    v = std::min(v, *x);
            }
            return v;
        };
        auto foldMax = [&](const std::vector<std::size_t>& rs, int col) {
            double v = 0.0;
            for (const std::size_t r : rs) {
                if (auto x = foldValue(cell(r, col)))
                    v = std::max(v, *x);
            }
            return v;
        };

        // 1 InfNan
        if (tensor || stats) {
            for (const std::size_t r : perRow) {
                if (isInfOrNan(cell(r, c.benchMax)) || isInfOrNan(cell(r, c.benchMin)))
                    continue;
                if (isInfOrNan(cell(r, c.npuMax)) || isInfOrNan(cell(r, c.npuMin)))
                    fire(r, Level::Error, kMsgInfNan);
            }
        }
        // 2 RelativeErr
        if (stats && crossRow && c.normRel >= 0) {
            const double a = std::fabs(foldMax(inputs, c.normRel));
            if (a < 0.1) {
                for (const std::size_t r : outputs) {
                    if (std::fabs(percentValue(cell(r, c.normRel))) > 0.5)
                        fire(r, Level::Error, kMsgRelativeErr);
                }
            }
        }
        // 3 OneThousandth (the code compares with 0.1 although the message says 0.6)
        if (tensor && crossRow && !outputs.empty() && c.oneThousandth >= 0) {
            if (foldMin(inputs, c.oneThousandth) > 0.9 && foldMin(outputs, c.oneThousandth) < 0.1)
                fire(outputs.front(), Level::Error, kMsgOneThousandth);
        }
        // 4 RequiresGrad
        if (tensor || stats) {
            for (const std::size_t r : perRow) {
                const std::string a = text(r, c.npuReq);
                const std::string b = text(r, c.benchReq);
                if (benchMatched(r) && !a.empty() && !b.empty() && a != b)
                    fire(r, Level::Error, kMsgRequiresGrad);
            }
        }
        // 5 Parameters
        if ((tensor || stats) && crossRow) {
            for (const std::size_t r : inputs) {
                if (!benchMatched(r))
                    continue;
                if (text(r, c.npuDtype).find("class") == std::string::npos
                    || text(r, c.benchDtype).find("class") == std::string::npos || text(r, c.npuShape) != "[]")
                    continue;
                if (pyNotEqual(cell(r, c.npuMax), cell(r, c.benchMax)))
                    fire(r, Level::Error, kMsgParameters);
            }
        }
        // 6 DType
        if (tensor || stats) {
            for (const std::size_t r : perRow) {
                const std::string b = text(r, c.benchName);
                if (!benchMatched(r) || b.find("qkv") != std::string::npos || b.find("gate_up") != std::string::npos)
                    continue;
                if (text(r, c.npuDtype) != text(r, c.benchDtype))
                    fire(r, Level::Error, kMsgDtype);
            }
        }
        // 7 Shape
        if (tensor || stats) {
            for (const std::size_t r : perRow) {
                if (benchMatched(r) && text(r, c.npuShape) != text(r, c.benchShape))
                    fire(r, Level::Error, kMsgShape);
            }
        }
        // 8 RelativeWarn
        if (stats && crossRow && !outputs.empty() && c.normRel >= 0) {
            const double i = std::fabs(foldMax(inputs, c.normRel));
            const double o = std::fabs(foldMax(outputs, c.normRel));
            if ((i == 0 && o > 0.1) || (i != 0 && o / i > 10))
                fire(outputs.front(), Level::Warning, kMsgRelativeWarn);
        }
        // 9 CosineWarn
        if (tensor && crossRow && !outputs.empty() && c.cosine >= 0) {
            const double ci = foldMin(inputs, c.cosine);
            const double co = foldMin(outputs, c.cosine);
            if (ci > 0.9 && ci - co > 0.1)
                fire(outputs.front(), Level::Warning, kMsgCosineWarn);
        }
        // 10 CRC32
        if (md5) {
            for (const std::size_t r : perRow) {
                const std::string a = text(r, c.npuMd5);
                const std::string b = text(r, c.benchMd5);
                if (a == b)
                    continue;
                auto weak = [](const std::string& s) { return s == "N/A" || s == "Nan" || s.empty(); };
                if (weak(a) || weak(b))
                    fire(r, Level::Warning, kMsgCrcWarn);
                else
                    fire(r, Level::Error, kMsgCrcError);
            }
        }
    }

    static const char* names[] = { "pass", "warning", "error" };
    for (std::size_t r = 0; r < table.rows.size(); ++r) {
        table.rows[r][static_cast<std::size_t>(c.result)] = Cell::text(names[static_cast<int>(level[r])]);
        table.rows[r][static_cast<std::size_t>(c.errMessage)] = Cell::text(jsonStringList(messages[r]));
    }
}

} // namespace probescope::compare::msprobe26
