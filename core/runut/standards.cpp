// SPDX-License-Identifier: Apache-2.0
// Structure handling of compare_output (run-ut-spec §5.1), the standard dispatch (§5.3) and the
// text of details cells (§6.2). The tensor metrics are in metrics.cpp.
#include "core/runut/standards.h"

#include "core/runut/csvio.h"
#include "core/runut/metrics.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <string_view>
#include <utility>

namespace probescope::runut {

namespace {

constexpr std::string_view kPass = "pass";
constexpr std::string_view kWarning = "warning";
constexpr std::string_view kError = "error";
constexpr std::string_view kSkip = "SKIP";

// api_precision_standard.yaml (identical in both msprobe trees).
constexpr std::array<std::string_view, 30> kAbsoluteApis { "mul", "mul_", "__mul__", "__imul__", "__rmul__",
    "add", "add_", "__add__", "__iadd__", "__radd__", "div", "div_", "__div__", "__idiv__", "divide", "divide_",
    "leaky_relu", "leaky_relu_", "prelu", "reciprocal", "reciprocal_", "rsqrt", "rsqrt_", "square", "square_",
    "sub", "sub_", "rsub", "__isub__", "__sub__" };
constexpr std::array<std::string_view, 63> kBinaryApis { "abs", "abs_", "absolute", "absolute_", "argmin",
    "bitwise_and", "bitwise_and_", "broadcast_to", "ceil", "ceil_", "equal", "fill_", "flatten", "floor", "floor_",
    "gather", "greater", "greater_", "greater_equal", "greater_equal_", "histc", "isfinite", "isnan", "less",
    "less_", "less_equal", "less_equal_", "logical_and", "logical_and_", "logical_not", "logical_not_",
    "logical_or", "logical_or_", "masked_fill", "masked_fill_", "max_pool3d", "maximum", "minimum", "neg", "neg_",
    "nonzero", "not_equal", "not_equal_", "one_hot", "pad", "relu", "reshape", "round", "round_", "select", "sign",
    "sign_", "sort", "tile", "topk", "transpose", "transpose_", "tril", "tril_", "triu", "triu_", "type_as" };
constexpr std::array<std::string_view, 17> kUlpApis { "__matmul__", "addbmm", "addbmm_", "addmm", "addmm_",
    "baddbmm", "baddbmm_", "bilinear", "bmm", "chain_matmul", "hspmm", "linear", "matmul", "mm", "mv", "smm",
    "sspaddmm" };
constexpr std::array<std::string_view, 2> kThousandthApis { "conv1d", "conv2d" };
constexpr std::array<std::string_view, 1> kAccumulativeApis { "test_api" };

template<std::size_t N>
bool contains(const std::array<std::string_view, N>& list, std::string_view name)
{
    return std::find(list.begin(), list.end(), name) != list.end();
}

bool isFp8Name(std::string_view dtype)
{
    return dtype == "torch.float8_e4m3fn" || dtype == "torch.float8_e5m2" || dtype == "torch.hifloat8"
        || dtype == "hifloat8";
}

bool isBinaryUnsupported(std::string_view dtype)
{
    return dtype == "torch.float16" || dtype == "torch.bfloat16" || dtype == "torch.float32" || isFp8Name(dtype)
        || dtype == "torch.float64" || dtype == "torch.complex64" || dtype == "torch.complex128";
}

const char* builtinTypeName(Value::Kind k)
{
    switch (k) {
    case Value::Kind::Bool:
        return "<class 'bool'>";
    case Value::Kind::Int:
        return "<class 'int'>";
    case Value::Kind::Float:
        return "<class 'float'>";
    case Value::Kind::Str:
        return "<class 'str'>";
    default:
        return "";
    }
}

/// error beats warning beats pass; SKIP elements do not count unless every element is SKIP.
std::string aggregate(const std::vector<std::string_view>& statuses)
{
    if (statuses.empty())
        return {};
    bool error = false, warning = false, allSkip = true;
    for (const auto s : statuses) {
        error = error || s == kError;
        warning = warning || s == kWarning;
        allSkip = allSkip && s == kSkip;
    }
    if (allSkip)
        return std::string(kSkip);
    if (error)
        return std::string(kError);
    return std::string(warning ? kWarning : kPass);
}

/// A builtin output (bool, int, float, str) judged against its counterpart: both Python type names, then error when
/// the values differ, else pass with a binary error rate of 0.
void judgeBuiltin(const Value& bench, const Value& device, bool equal, DetailRow& row)
{
    row.benchDtype = builtinTypeName(bench.kind);
    row.deviceDtype = builtinTypeName(device.kind);
    if (!equal) {
        row.status = kError;
        return;
    }
    row.binaryErrRate = 0;
    row.kinds[static_cast<std::size_t>(Metric::BinaryErrRate)] = NumberKind::Int;
    row.status = kPass;
}

void compareCore(const Value& bench, const Value& device, const CompareContext& ctx, DetailRow& row)
{
    // msprobe tests isinstance(bench, type(device)): a bool bench passes against an int device.
    const bool boolAsInt = bench.kind == Value::Kind::Bool && device.kind == Value::Kind::Int;
    if (bench.kind != device.kind && !boolAsInt) {
        row.status = kError;
        row.message = "bench and npu output type is different.";
        return;
    }
    if (boolAsInt) {
        judgeBuiltin(bench, device, (bench.boolValue ? 1 : 0) == device.intValue, row);
        return;
    }
    switch (bench.kind) {
    case Value::Kind::Dict: {
        auto bk = bench.keys;
        auto dk = device.keys;
        std::sort(bk.begin(), bk.end());
        std::sort(dk.begin(), dk.end());
        bk.erase(std::unique(bk.begin(), bk.end()), bk.end());
        dk.erase(std::unique(dk.begin(), dk.end()), dk.end());
        if (bk != dk) {
            row.status = kError;
            row.message = "bench and npu output dict keys are different.";
            return;
        }
        // msprobe hands list(values()) back to _compare_core, which has no branch for a list.
        row.status = kError;
        row.message = "Unexpected output type in compare_core: <class 'list'>";
        return;
    }
    case Value::Kind::List:
        // A sequence inside an output sequence; torch returns those as tuples.
        row.status = kError;
        row.message = "Unexpected output type in compare_core: <class 'tuple'>";
        return;
    case Value::Kind::Tensor:
        detail::compareTensors(bench.tensor, device.tensor, ctx, row);
        return;
    case Value::Kind::Bool:
    case Value::Kind::Int:
    case Value::Kind::Float:
    case Value::Kind::Str: {
        bool equal = false;
        if (bench.kind == Value::Kind::Bool)
            equal = bench.boolValue == device.boolValue;
        else if (bench.kind == Value::Kind::Int)
            equal = bench.intValue == device.intValue;
        else if (bench.kind == Value::Kind::Float)
            equal = bench.floatValue == device.floatValue; // NaN != NaN, as in Python
        else
            equal = bench.text == device.text;
        judgeBuiltin(bench, device, equal, row);
        return;
    }
    case Value::Kind::None:
        row.status = kSkip;
        row.message = "Bench output is None, skip this test.";
        return;
    }
    row.status = kError;
    row.message = "Unexpected output type in compare_core.";
}

const Value* firstTensor(const Value& v)
{
    if (v.kind == Value::Kind::Tensor)
        return &v;
    if (v.kind == Value::Kind::List && !v.items.empty() && v.items.front().kind == Value::Kind::Tensor)
        return &v.items.front();
    return nullptr;
}

std::string formatInt(double v)
{
    char buf[32];
    const int n = std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(v));
    return std::string(buf, static_cast<std::size_t>(std::max(n, 0)));
}

} // namespace

std::optional<double>& DetailRow::metric(Metric m)
{
    return const_cast<std::optional<double>&>(std::as_const(*this).metric(m));
}

const std::optional<double>& DetailRow::metric(Metric m) const
{
    switch (m) {
    case Metric::Cosine:
        return cosine;
    case Metric::MaxAbsErr:
        return maxAbsErr;
    case Metric::Ratio100:
        return ratio100;
    case Metric::Ratio1000:
        return ratio1000;
    case Metric::Ratio10000:
        return ratio10000;
    case Metric::BinaryErrRate:
        return binaryErrRate;
    case Metric::Eb:
        return eb;
    case Metric::Rmse:
        return rmse;
    case Metric::SmallValueErrRatio:
        return smallValueErrRatio;
    case Metric::MaxRelErr:
        return maxRelErr;
    case Metric::MeanRelErr:
        return meanRelErr;
    case Metric::InfNanErrRate:
        return infNanErrRate;
    case Metric::RelErrRate:
        return relErrRate;
    case Metric::AbsErrRate:
        return absErrRate;
    case Metric::UlpMax:
        return ulpMax;
    case Metric::UlpMean:
        return ulpMean;
    case Metric::UlpOverRatio:
        return ulpOverRatio;
    }
    return cosine;
}

const char* standardCsvName(Standard s)
{
    switch (s) {
    case Standard::Benchmark:
        return "标杆比对法";
    case Standard::AbsoluteThreshold:
        return "绝对阈值法";
    case Standard::Binary:
        return "二进制一致法";
    case Standard::Ulp:
        return "ULP误差比对法";
    case Standard::Thousandth:
        return "双千指标法";
    case Standard::Accumulative:
        return "累积误差比对法";
    }
    return "";
}

Standard yamlStandard(std::string_view apiName)
{
    if (contains(kAbsoluteApis, apiName))
        return Standard::AbsoluteThreshold;
    if (contains(kBinaryApis, apiName))
        return Standard::Binary;
    if (contains(kUlpApis, apiName))
        return Standard::Ulp;
    if (contains(kThousandthApis, apiName))
        return Standard::Thousandth;
    if (contains(kAccumulativeApis, apiName))
        return Standard::Accumulative;
    return Standard::Benchmark;
}

Standard dispatchStandard(std::string_view apiName, std::string_view outDtype, bool inputWasFp8, Profile profile)
{
    if (isFp8Name(outDtype))
        return Standard::Ulp;
    if (inputWasFp8)
        return Standard::AbsoluteThreshold;
    if (profile == Profile::Msprobe26
        && (outDtype == "torch.float16" || outDtype == "torch.bfloat16" || outDtype == "torch.float32"
            || outDtype == "torch.float64"))
        return Standard::Benchmark;
    if (!isBinaryUnsupported(outDtype))
        return Standard::Binary;
    return yamlStandard(apiName);
}

std::string pythonFixed(double value, int precision)
{
    if (std::isnan(value))
        return "nan";
    if (std::isinf(value))
        return value > 0 ? "inf" : "-inf";
    precision = std::clamp(precision, 0, 300);
    std::string out(static_cast<std::size_t>(precision) + 320, '\0');
    const int n = std::snprintf(out.data(), out.size(), "%.*f", precision, value);
    out.resize(static_cast<std::size_t>(std::max(n, 0)));
    return out;
}

std::string numpyFloat32Str(float value)
{
    if (std::isnan(value))
        return "nan";
    if (std::isinf(value))
        return value > 0 ? "inf" : "-inf";
    if (value == 0)
        return std::signbit(value) ? "-0.0" : "0.0";
    // Shortest round-trip digits of the float32 value, then numpy's choice of notation.
    char buf[64];
    const auto res = std::to_chars(buf, buf + sizeof buf, value, std::chars_format::scientific);
    const std::string_view sci(buf, static_cast<std::size_t>(res.ptr - buf));
    const auto e = sci.find('e');
    std::string digits;
    for (const char c : sci.substr(0, e)) {
        if (c >= '0' && c <= '9')
            digits += c;
    }
    int exponent = 0;
    std::from_chars(sci.data() + e + 1 + (sci[e + 1] == '+' ? 1 : 0), sci.data() + sci.size(), exponent);
    std::string out = value < 0 ? "-" : "";
    // numpy compares the float32 magnitude with the long double constants 1e-4 and 1e16, so
    // float32(0.0001), which is just below 1e-4, prints as "1e-04".
    const double mag = std::abs(static_cast<double>(value));
    if (mag >= 1e-4 && mag < 1e16) {
        if (exponent >= 0) {
            const auto intDigits = static_cast<std::size_t>(exponent) + 1;
            if (digits.size() <= intDigits) {
                out += digits + std::string(intDigits - digits.size(), '0') + ".0";
            } else {
                out += digits.substr(0, intDigits) + "." + digits.substr(intDigits);
            }
        } else {
            out += "0." + std::string(static_cast<std::size_t>(-exponent - 1), '0') + digits;
        }
        return out;
    }
    out += digits.substr(0, 1);
    if (digits.size() > 1)
        out += "." + digits.substr(1);
    out += exponent < 0 ? "e-" : "e+";
    const int absExp = exponent < 0 ? -exponent : exponent;
    if (absExp < 10)
        out += '0';
    out += std::to_string(absExp);
    return out;
}

const std::vector<std::string>& detailsHeader()
{
    static const std::vector<std::string> header { "API Name", "Bench Dtype", "DEVICE Dtype", "Shape", "余弦相似度",
        "最大绝对误差", "双百指标", "双千指标", "双万指标", "二进制一致错误率", "误差均衡性", "均方根误差",
        "小值域错误占比", "相对误差最大值", "相对误差平均值", "inf/nan错误率", "相对误差错误率", "绝对误差错误率",
        "ULP误差最大值", "ULP误差平均值", "ULP误差大于阈值占比", "Status", "Message" };
    return header;
}

std::vector<std::string> detailCells(const DetailRow& row, int precision)
{
    std::vector<std::string> cells;
    cells.reserve(23);
    const auto text = [](const std::string& s) { return s.empty() ? std::string(kSpace) : s; };
    cells.push_back(row.name);
    cells.push_back(text(row.benchDtype));
    cells.push_back(text(row.deviceDtype));
    cells.push_back(text(row.shape));
    for (std::size_t m = 0; m < kMetricCount; ++m) {
        const auto& v = row.metric(static_cast<Metric>(m));
        if (!v) {
            cells.emplace_back(kSpace);
            continue;
        }
        switch (row.kinds[m]) {
        case NumberKind::Float64:
            cells.push_back(pythonFixed(*v, precision));
            break;
        case NumberKind::Float32:
            cells.push_back(numpyFloat32Str(static_cast<float>(*v)));
            break;
        case NumberKind::Int:
            cells.push_back(formatInt(*v));
            break;
        }
    }
    cells.push_back(row.status);
    cells.push_back(row.message);
    return cells;
}

DetailRow skipRow(std::string name, std::string message)
{
    DetailRow row;
    row.name = std::move(name);
    row.status = kSkip;
    row.message = std::move(message);
    return row;
}

CompareOutcome compareOutput(const Value& bench, const Value& device, const CompareContext& ctx,
                             std::string_view rowPrefix)
{
    CompareOutcome out;
    const auto rowName = [&](std::size_t i) {
        std::string name(rowPrefix);
        name += '.';
        name += std::to_string(i);
        return name;
    };

    // Dropout is random on both sides: only the share of zeroed elements is judged, and msprobe's
    // compare result is then a bare number, so no details row is written.
    if (ctx.fullName.find("dropout") != std::string::npos) {
        const Value* b = firstTensor(bench);
        const Value* d = firstTensor(device);
        if (b && d) {
            out.status = detail::dropoutPasses(b->tensor, d->tensor) ? kPass : kError;
            return out;
        }
    }

    if (bench.kind == Value::Kind::List) {
        // Backward without gradients on either side: SPACE, no rows.
        if (bench.items.empty() || (device.kind == Value::Kind::List && device.items.empty())
            || device.kind == Value::Kind::None)
            return out;
        if (device.kind != Value::Kind::List || bench.items.size() > device.items.size()) {
            DetailRow row;
            row.name = rowName(0);
            row.status = kError;
            row.message = "bench and npu output structure is different.";
            out.rows.push_back(std::move(row));
        } else {
            for (std::size_t i = 0; i < bench.items.size(); ++i) {
                DetailRow row;
                row.name = rowName(i);
                compareCore(bench.items[i], device.items[i], ctx, row);
                out.rows.push_back(std::move(row));
            }
        }
    } else {
        DetailRow row;
        row.name = rowName(0);
        compareCore(bench, device, ctx, row);
        out.rows.push_back(std::move(row));
    }
    std::vector<std::string_view> statuses;
    for (const auto& r : out.rows)
        statuses.push_back(r.status);
    out.status = aggregate(statuses);
    return out;
}

} // namespace probescope::runut
