// SPDX-License-Identifier: Apache-2.0
#include "core/runut/precisioncompare.h"

#include "core/util/csv.h"
#include "core/util/fileio.h"

#include "core/runut/csvio.h"

#include <algorithm>
#include <cctype>
#include <array>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <optional>
#include <string_view>
#include <system_error>
#include <unordered_map>

namespace probescope::runut {

namespace {

/// A row of the result files: API names come from the dump, so a cell a spreadsheet would run as a formula
/// ("=HYPERLINK(...)") is written with a leading apostrophe, as the compare's CSV does.
std::string guardedCsvLine(std::vector<std::string> cells)
{
    for (std::string& cell : cells)
        cell = guardFormula(std::move(cell));
    return csvLine(cells);
}

constexpr std::string_view kPass = "pass";
constexpr std::string_view kError = "error";
constexpr std::string_view kSkip = "SKIP";

// Output columns of api_precision_compare_details (§8.4).
enum OutCol : std::size_t {
    OName,
    OSmallRatio,
    OSmallStatus,
    ORmseRatio,
    ORmseStatus,
    OMaxRelRatio,
    OMaxRelStatus,
    OMeanRelRatio,
    OMeanRelStatus,
    OEbRatio,
    OEbStatus,
    OInfNan,
    OInfNanStatus,
    ORelErr,
    ORelErrStatus,
    OAbsErr,
    OAbsErrStatus,
    OBinary,
    OBinaryStatus,
    OUlpMean,
    OUlpProp,
    OUlpPropRatio,
    OUlpStatus,
    OThousandth,
    OThousandthStatus,
    OResult,
    OAlgorithm,
    OMessage,
    OCount
};

// Input columns (§6.2) that api_precision_compare reads.
enum InCol : std::size_t {
    IName,
    IDtype,
    IShape,
    IMessage,
    ISmall,
    IRmse,
    IMaxRel,
    IMeanRel,
    IEb,
    IBinary,
    IInfNan,
    IRelErr,
    IAbsErr,
    IUlpMean,
    IUlpProp,
    IThousandth,
    ICount
};

constexpr std::array<std::string_view, ICount> kInputNames { "API Name", "DEVICE Dtype", "Shape", "Message",
    "小值域错误占比", "均方根误差", "相对误差最大值", "相对误差平均值", "误差均衡性", "二进制一致错误率",
    "inf/nan错误率", "相对误差错误率", "绝对误差错误率", "ULP误差平均值", "ULP误差大于阈值占比", "双千指标" };

using Columns = std::array<std::size_t, ICount>;

Result<Columns> findColumns(const CsvTable& t)
{
    Columns cols {};
    for (std::size_t i = 0; i < ICount; ++i) {
        const auto c = t.column(kInputNames[i]);
        if (!c)
            return makeError("precision.missing-column", SourceLocation { t.path.string(), std::nullopt, 1, 0 },
                             t.path.string() + " has no column \"" + std::string(kInputNames[i])
                                 + "\" (is it an accuracy_checking_details CSV of msprobe 1.2 or later?)");
        cols[i] = *c;
    }
    return cols;
}

std::optional<Diagnostic> checkWidths(const CsvTable& t)
{
    for (const auto& row : t.rows) {
        if (row.cells.size() > t.header.size())
            return makeError("csv.row-width", SourceLocation { t.path.string(), std::nullopt, row.line, 0 },
                             "row has " + std::to_string(row.cells.size()) + " cells but the header has "
                                 + std::to_string(t.header.size()));
    }
    return std::nullopt;
}

/// A row of one input CSV seen through its column map; a short row reads as blank cells.
struct InRow
{
    const CsvRow* row = nullptr;
    const Columns* cols = nullptr;

    std::string_view operator[](InCol c) const
    {
        const std::size_t i = (*cols)[c];
        return i < row->cells.size() ? std::string_view(row->cells[i]) : std::string_view();
    }
};

bool isBlank(std::string_view s)
{
    return s.find_first_not_of(" \t\r\n") == std::string_view::npos;
}

std::string_view trimmed(std::string_view s)
{
    const auto b = s.find_first_not_of(" \t\r\n");
    if (b == std::string_view::npos)
        return {};
    const auto e = s.find_last_not_of(" \t\r\n");
    return s.substr(b, e - b + 1);
}

/// A row whose judgement cannot be made (msprobe raised); becomes a SKIP row and a result row with `what`.
struct RowFailure
{
    std::string what;
};

/// Python's float() of a cell, with the spec's "a blank cell counts as 0.0" (§8.2). The texts are those
/// of msprobe's convert_str_to_float.
std::optional<double> toFloat(std::string_view cell, RowFailure& failure)
{
    if (isBlank(cell))
        return 0.0;
    const std::string text(trimmed(cell));
    char* end = nullptr;
    const double v = std::strtod(text.c_str(), &end);
    if (end != text.c_str() + text.size()) {
        failure.what = "ERROR: Input data cannot be converted to float";
        return std::nullopt;
    }
    return v;
}

bool isFp8Name(std::string_view dtype)
{
    return dtype == "torch.float8_e4m3fn" || dtype == "torch.float8_e5m2" || dtype == "torch.hifloat8"
        || dtype == "hifloat8";
}

double minimumError(std::string_view dtype)
{
    if (dtype == "torch.float16")
        return 0x1p-11;
    if (dtype == "torch.bfloat16")
        return 0x1p-8;
    return 0x1p-14;
}

double ebThreshold(std::string_view dtype)
{
    if (dtype == "torch.float16")
        return 0x1p-20;
    if (dtype == "torch.bfloat16")
        return 0x1p-7;
    return 0x1p-14;
}

bool isUnsupportedDtype(std::string_view dtype)
{
    return dtype == "torch.float64" || dtype == "torch.complex64" || dtype == "torch.complex128";
}

/// The NPU/GPU ratio of one metric (§8.2). When a side is inf/NaN the ratio is NaN, `consistent` says
/// whether both sides agree, and `message` is msprobe's note about it.
struct Ratio
{
    double value = 0;
    bool consistent = true;
    std::string message;
};

Ratio ratioOf(double npu, double gpu, std::string_view dtype, std::string_view column)
{
    if (!std::isfinite(npu) || !std::isfinite(gpu)) {
        const bool sameInf = std::isinf(npu) && std::isinf(gpu) && npu == gpu;
        const bool bothNan = std::isnan(npu) && std::isnan(gpu);
        const bool consistent = sameInf || (bothNan && !std::isinf(npu) && !std::isinf(gpu));
        std::string message(column);
        message += consistent ? "同为同号inf或nan\n" : "inf或nan不一致\n";
        return { std::numeric_limits<double>::quiet_NaN(), consistent, std::move(message) };
    }
    return { std::abs(npu) / std::max(std::abs(gpu), minimumError(dtype)), true, {} };
}

struct Judge
{
    std::vector<std::string> cells;
    std::string status;
    int precision = 14;
    const std::vector<bool>* numericNpuColumns = nullptr;

    std::string number(double v) const { return pythonFixed(v, precision); }
};

std::string passOrError(bool pass)
{
    return std::string(pass ? kPass : kError);
}

bool judgeBenchmark(const InRow& npu, const InRow& gpu, std::string_view dtype, const BenchmarkThresholds& th,
                    Judge& j, RowFailure& failure)
{
    struct Item
    {
        InCol in;
        OutCol ratio;
        OutCol status;
        double threshold;
        const char* errorMessage;
    };
    const std::array<Item, 5> items { {
        { ISmall, OSmallRatio, OSmallStatus, th.smallValue, "ERROR: 小值域错误比值超过阈值\n" },
        { IRmse, ORmseRatio, ORmseStatus, th.rmse, "ERROR: 均方根误差比值超过阈值\n" },
        { IMaxRel, OMaxRelRatio, OMaxRelStatus, th.maxRel, "ERROR: 相对误差最大值比值超过阈值\n" },
        { IMeanRel, OMeanRelRatio, OMeanRelStatus, th.meanRel, "ERROR: 相对误差平均值比值超过阈值\n" },
        { IEb, OEbRatio, OEbStatus, th.eb, nullptr },
    } };
    bool error = false;
    // msprobe writes the inf/nan notes of all five metrics first, then the ERROR line of each failed one.
    std::string notes, errors;
    for (const auto& item : items) {
        const auto n = toFloat(npu[item.in], failure);
        if (!n)
            return false;
        const auto g = toFloat(gpu[item.in], failure);
        if (!g)
            return false;
        const Ratio r = ratioOf(*n, *g, dtype, kInputNames[item.in]);
        notes += r.message;
        const bool pass = r.consistent && (std::isnan(r.value) || r.value <= item.threshold);
        if (!pass && item.errorMessage)
            errors += item.errorMessage;
        j.cells[item.ratio] = j.number(r.value);
        j.cells[item.status] = passOrError(pass);
        // 误差均衡性 is reported but not part of the verdict (§8.2).
        if (!pass && item.in != IEb)
            error = true;
    }
    j.status = passOrError(!error);
    j.cells[OMessage] = notes + errors;
    return true;
}

/// The absolute-threshold columns; returns the three messages (msprobe's, without line ends).
bool judgeAbsolute(const InRow& npu, Judge& j, RowFailure& failure, std::vector<std::string>& messages)
{
    struct Item
    {
        InCol in;
        OutCol out;
        const char* errorMessage;
    };
    const std::array<Item, 3> items { { { IInfNan, OInfNan, "ERROR: inf/nan错误率超过阈值" },
                                        { IRelErr, ORelErr, "ERROR: 相对误差错误率超过阈值" },
                                        { IAbsErr, OAbsErr, "ERROR: 绝对误差错误率超过阈值" } } };
    bool pass = true;
    for (const auto& item : items) {
        const auto v = toFloat(npu[item.in], failure);
        if (!v)
            return false;
        j.cells[item.out] = j.number(*v);
        j.cells[item.out + 1] = passOrError(*v == 0);
        if (*v != 0) {
            pass = false;
            messages.emplace_back(item.errorMessage);
        }
    }
    j.status = passOrError(pass);
    return true;
}

bool judgeUlp(const InRow& npu, const InRow& gpu, std::string_view dtype, Judge& j, RowFailure& failure)
{
    const auto npuProp = toFloat(npu[IUlpProp], failure);
    if (!npuProp)
        return false;
    if (isFp8Name(dtype)) {
        // No GPU takes part for fp8: only the NPU proportion is judged.
        const bool pass = *npuProp < 0.001;
        j.cells[OUlpProp] = j.number(*npuProp);
        j.cells[OUlpStatus] = passOrError(pass);
        j.status = passOrError(pass);
        if (!pass)
            j.cells[OMessage] = "ERROR: ULP误差不满足标准\n";
        return true;
    }
    const auto npuMean = toFloat(npu[IUlpMean], failure);
    if (!npuMean)
        return false;
    const auto gpuMean = toFloat(gpu[IUlpMean], failure);
    if (!gpuMean)
        return false;
    const auto gpuProp = toFloat(gpu[IUlpProp], failure);
    if (!gpuProp)
        return false;
    const Ratio meanCheck = ratioOf(*npuMean, *gpuMean, dtype, kInputNames[IUlpMean]);
    const Ratio propRatio = ratioOf(*npuProp, *gpuProp, dtype, kInputNames[IUlpProp]);
    bool pass = false;
    if (meanCheck.consistent && propRatio.consistent) {
        // NaN ratios (both sides inf/NaN alike) compare false, as in Python.
        if (dtype == "torch.float32")
            pass = *npuMean < 64 || *npuProp < 0.05 || propRatio.value < 1;
        else
            pass = *npuProp < 0.001 || propRatio.value < 1;
    }
    std::string message = meanCheck.message + propRatio.message;
    if (!pass)
        message += "ERROR: ULP误差不满足标准\n";
    j.cells[OUlpMean] = j.number(*npuMean);
    j.cells[OUlpProp] = j.number(*npuProp);
    j.cells[OUlpPropRatio] = j.number(propRatio.value);
    j.cells[OUlpStatus] = passOrError(pass);
    j.cells[OMessage] = message;
    j.status = passOrError(pass);
    return true;
}

/// msprobe copies the binary and thousandth cells from the NPU row as pandas read them: a number when the
/// whole column is numeric (then written with `precision` decimals), else the text as it was.
std::string copiedCell(const InRow& npu, InCol c, double value, const Judge& j)
{
    if (j.numericNpuColumns && (*j.numericNpuColumns)[c])
        return j.number(value);
    return std::string(npu[c]);
}

/// One NPU row with its GPU row: fills the judge's cells and status, or says why it could not.
bool judgeRow(const InRow& npu, const InRow& gpu, std::string_view apiName, std::string_view dtype,
              Profile profile, Judge& j, RowFailure& failure)
{
    const bool inFp8 = profile == Profile::Msprobe26 && !isBlank(npu[IRelErr]);
    const Standard s = dispatchStandard(apiName, dtype, inFp8, profile);
    j.cells[OAlgorithm] = standardCsvName(s);
    j.cells[OMessage].clear(); // every standard assigns its message, "" when it passes
    switch (s) {
    case Standard::Benchmark:
        return judgeBenchmark(npu, gpu, dtype, benchmarkThresholds(apiName, profile), j, failure);
    case Standard::AbsoluteThreshold: {
        std::vector<std::string> messages;
        if (!judgeAbsolute(npu, j, failure, messages))
            return false;
        for (const auto& m : messages)
            j.cells[OMessage] += m;
        return true;
    }
    case Standard::Accumulative: {
        std::vector<std::string> messages;
        if (!judgeAbsolute(npu, j, failure, messages))
            return false;
        const auto eb = toFloat(npu[IEb], failure);
        if (!eb)
            return false;
        const bool ebPass = *eb <= ebThreshold(dtype);
        j.cells[OEbRatio] = j.number(*eb);
        j.cells[OEbStatus] = passOrError(ebPass);
        if (!ebPass) {
            j.status = kError;
            messages.emplace_back("ERROR: 误差均衡性超过阈值");
        }
        // Here every line ends in "\n" and the lines are also joined by "\n".
        std::string text;
        for (std::size_t i = 0; i < messages.size(); ++i)
            text += (i ? "\n" : "") + messages[i] + "\n";
        j.cells[OMessage] = text;
        return true;
    }
    case Standard::Binary: {
        // convert_str_to_float raises on a blank cell here, which makes the row SKIP.
        if (isBlank(npu[IBinary])) {
            failure.what = "ERROR: Input data is an empty string";
            return false;
        }
        const auto v = toFloat(npu[IBinary], failure);
        if (!v)
            return false;
        j.cells[OBinary] = copiedCell(npu, IBinary, *v, j);
        j.cells[OBinaryStatus] = passOrError(*v == 0);
        j.status = passOrError(*v == 0);
        if (*v != 0)
            j.cells[OMessage] = "ERROR: 二进制一致错误率超过阈值\n";
        return true;
    }
    case Standard::Thousandth: {
        const auto v = toFloat(npu[IThousandth], failure);
        if (!v)
            return false;
        j.cells[OThousandth] = copiedCell(npu, IThousandth, *v, j);
        j.cells[OThousandthStatus] = passOrError(*v >= 0.999);
        j.status = passOrError(*v >= 0.999);
        if (*v < 0.999 || std::isnan(*v))
            j.cells[OMessage] = "ERROR: 双千指标不达标\n";
        return true;
    }
    case Standard::Ulp:
        return judgeUlp(npu, gpu, dtype, j, failure);
    }
    return true;
}

/// Which input columns pandas would read as float64: every cell empty or a number (a SPACE makes text).
std::vector<bool> numericColumns(const CsvTable& t, const Columns& cols)
{
    std::vector<bool> numeric(ICount, true);
    for (std::size_t c = 0; c < ICount; ++c) {
        for (const auto& row : t.rows) {
            const std::size_t i = cols[c];
            if (i >= row.cells.size() || row.cells[i].empty())
                continue;
            const std::string& text = row.cells[i];
            char* end = nullptr;
            std::strtod(text.c_str(), &end);
            if (end != text.c_str() + text.size() || std::isspace(static_cast<unsigned char>(text.front()))) {
                numeric[c] = false;
                break;
            }
        }
    }
    return numeric;
}

/// A details row name split as msprobe's get_api_status does (6 or 7 dot-separated parts).
struct RowName
{
    std::string apiName;
    std::string apiFullName;
    std::string direction;
};

std::optional<RowName> parseRowName(std::string_view name)
{
    std::vector<std::string_view> parts;
    std::size_t start = 0;
    for (;;) {
        const auto dot = name.find('.', start);
        parts.push_back(name.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start));
        if (dot == std::string_view::npos)
            break;
        start = dot + 1;
    }
    if (parts.size() != 6 && parts.size() != 7)
        return std::nullopt;
    const std::size_t fullParts = parts.size() - 3; // <full>.<direction>.output.<i>
    RowName out;
    out.apiName = std::string(parts[1]);
    if (parts.size() == 7)
        out.apiName += "." + std::string(parts[2]);
    for (std::size_t i = 0; i < fullParts; ++i) {
        if (i)
            out.apiFullName += '.';
        out.apiFullName += parts[i];
    }
    out.direction = std::string(parts[fullParts]);
    return out;
}

/// The base API name of an api_full_name ("Torch.topk.0" -> "topk", "Aten.add.Tensor.0" -> "add.Tensor").
std::string baseApiName(std::string_view fullName)
{
    const auto first = fullName.find('.');
    const auto last = fullName.rfind('.');
    if (first == std::string_view::npos || last == first)
        return std::string(fullName);
    return std::string(fullName.substr(first + 1, last - first - 1));
}

std::string aggregate(const std::vector<std::string>& statuses)
{
    if (statuses.empty())
        return std::string(kSpace);
    if (std::all_of(statuses.begin(), statuses.end(), [](const std::string& s) { return s == kSkip; }))
        return std::string(kSkip);
    if (std::find(statuses.begin(), statuses.end(), kError) != statuses.end())
        return std::string(kError);
    if (std::find(statuses.begin(), statuses.end(), "warning") != statuses.end())
        return "warning";
    return std::string(kPass);
}

constexpr std::string_view kTopkHint = "在npu上，topk的入参sorted=False时不生效，会返回有序tensor，而cpu上会返回无序tensor。 "
                                       "如果topk精度不达标，请检查是否是该原因导致的。";

/// Groups consecutive rows of one API into its result row (msprobe's analyse_csv bookkeeping).
class ApiGrouper
{
public:
    explicit ApiGrouper(std::string& resultText)
        : m_out(resultText)
    {
    }

    void add(const RowName& name, std::string_view dtype, const std::string& status, std::string_view npuMessage)
    {
        if (m_active && name.apiFullName != m_api)
            flush();
        m_active = true;
        m_api = name.apiFullName;
        m_lastDtype = std::string(dtype);
        if (isUnsupportedDtype(dtype))
            return;
        if (name.direction == "forward") {
            m_forward.push_back(status);
            m_skipMessage = status == kSkip ? std::string(npuMessage) : std::string();
        } else if (name.direction == "backward") {
            m_backward.push_back(status);
        }
    }

    void flush()
    {
        if (!m_active)
            return;
        if (isUnsupportedDtype(m_lastDtype)) {
            m_out += guardedCsvLine({ m_api, std::string(kSkip), std::string(kSkip),
                               "This data type does not support benchmark compare." });
        } else {
            const std::string forward = aggregate(m_forward);
            const std::string backward = aggregate(m_backward);
            std::string message;
            if (forward == kError && baseApiName(m_api) == "topk")
                message += kTopkHint;
            if (forward == kSkip)
                message += m_skipMessage;
            m_out += guardedCsvLine({ m_api, forward, backward, message });
        }
        ++m_count;
        m_active = false;
        m_forward.clear();
        m_backward.clear();
        m_skipMessage.clear();
    }

    std::size_t count() const { return m_count; }

private:
    std::string& m_out;
    bool m_active = false;
    std::string m_api;
    std::string m_lastDtype;
    std::vector<std::string> m_forward, m_backward;
    std::string m_skipMessage;
    std::size_t m_count = 0;
};

std::vector<std::string> skipCells(const std::string& name, std::string message)
{
    std::vector<std::string> cells(OCount, std::string(kSpace));
    cells[OName] = name;
    cells[OResult] = kSkip;
    cells[OMessage] = std::move(message);
    return cells;
}

} // namespace

const std::vector<std::string>& precisionCompareResultHeader()
{
    static const std::vector<std::string> header { "API Name", "Forward Test Success", "Backward Test Success",
                                                   "Message" };
    return header;
}

const std::vector<std::string>& precisionCompareDetailsHeader()
{
    static const std::vector<std::string> header { "API Name", "小值域错误比值", "小值域判定结果", "均方根误差比值",
        "均方根误差判定结果", "相对误差最大值比值", "相对误差最大值判定结果", "相对误差平均值比值",
        "相对误差平均值判定结果", "误差均衡性比值", "误差均衡性判定结果", "inf/nan错误率", "inf/nan判定结果",
        "相对误差错误率", "相对误差判定结果", "绝对误差错误率", "绝对误差判定结果", "二进制一致错误率",
        "二进制一致错误率判定结果", "ULP误差平均值", "ULP误差大于阈值占比", "ULP误差大于阈值占比比值",
        "ULP误差判定结果", "双千指标", "双千指标判定结果", "比对结果", "比对算法", "Message" };
    return header;
}

int protectionLevel(std::string_view apiName)
{
    static constexpr std::array<std::string_view, 5> l1 { "embedding", "npu_fusion_attention_grad",
                                                          "npu_fusion_attention", "scatter_", "scatter_add_" };
    // "GELU" is msprobe's spelling; it never matches a PyTorch API name.
    static constexpr std::array<std::string_view, 13> l2 { "addmm", "npu_cross_entropy_loss",
        "npu_cross_entropy_loss_backward", "GELU", "layer_norm", "matmul", "mm", "index", "one_hot", "sum",
        "npu_rms_norm", "npu_rms_norm_backward", "nonzero" };
    if (std::find(l1.begin(), l1.end(), apiName) != l1.end())
        return 1;
    if (std::find(l2.begin(), l2.end(), apiName) != l2.end())
        return 2;
    return 0;
}

BenchmarkThresholds benchmarkThresholds(std::string_view apiName, Profile profile)
{
    if (profile == Profile::Msprobe12)
        return { 2, 2, 10, 2, 2 };
    switch (protectionLevel(apiName)) {
    case 1:
        return { 2, 1.5, 5.0, 1.5, 2 };
    case 2:
        return { 2, 1.2, 2.0, 1.2, 2 };
    default:
        return { 2, 2.0, 10.0, 2.0, 2 };
    }
}

Result<PrecisionCompareOutput> apiPrecisionCompare(const PrecisionCompareOptions& options, ProgressSink* progress)
{
    auto npuTable = readCsv(options.npuCsv);
    if (!npuTable)
        return npuTable.error();
    auto gpuTable = readCsv(options.gpuCsv);
    if (!gpuTable)
        return gpuTable.error();
    const auto npuCols = findColumns(*npuTable);
    if (!npuCols)
        return npuCols.error();
    const auto gpuCols = findColumns(*gpuTable);
    if (!gpuCols)
        return gpuCols.error();
    if (auto bad = checkWidths(*npuTable))
        return *bad;
    if (auto bad = checkWidths(*gpuTable))
        return *bad;

    const std::string ts = options.timestamp.empty() ? localTimestamp() : options.timestamp;
    std::error_code ec;
    std::filesystem::create_directories(options.outDir, ec);
    if (ec)
        return makeError("io.write", fileLocation(options.outDir),
                         "cannot create " + options.outDir.string() + ": " + ec.message());
    PrecisionCompareOutput out;
    out.resultCsv = options.outDir / ("api_precision_compare_result_" + ts + ".csv");
    out.detailsCsv = options.outDir / ("api_precision_compare_details_" + ts + ".csv");
    // Checked first so that a clash on the details file leaves no new result file behind.
    if (std::filesystem::exists(out.detailsCsv, ec))
        return makeError("csv.exists", fileLocation(out.detailsCsv),
                         out.detailsCsv.string() + " already exists; refusing to overwrite it");
    if (auto bad = createCsv(out.resultCsv, precisionCompareResultHeader()))
        return *bad;
    if (auto bad = createCsv(out.detailsCsv, precisionCompareDetailsHeader()))
        return *bad;

    // GPU rows by name; a name seen twice keeps its first row and the line of the second.
    struct GpuEntry
    {
        const CsvRow* row = nullptr;
        std::uint32_t duplicateLine = 0;
    };
    std::unordered_map<std::string, GpuEntry> gpuRows;
    gpuRows.reserve(gpuTable->rows.size());
    for (const auto& row : gpuTable->rows) {
        const std::string name = (*gpuCols)[IName] < row.cells.size() ? row.cells[(*gpuCols)[IName]] : std::string();
        auto [it, inserted] = gpuRows.try_emplace(name, GpuEntry { &row, 0 });
        if (!inserted && it->second.duplicateLine == 0)
            it->second.duplicateLine = row.line;
    }

    const int precision = std::clamp(options.precision, 0, 20);
    const std::vector<bool> numericNpu = numericColumns(*npuTable, *npuCols);
    std::string resultText;
    std::string detailsText;
    ApiGrouper grouper(resultText);
    bool aborted = false;
    if (progress)
        progress->setRange(npuTable->rows.size());
    std::size_t done = 0;
    for (const auto& csvRow : npuTable->rows) {
        if (progress && progress->isCancelled()) {
            out.diagnostics.push_back(makeWarning("precision.cancelled",
                                                  SourceLocation { options.npuCsv.string(), std::nullopt, csvRow.line, 0 },
                                                  "cancelled; the rows from here on were not compared"));
            break;
        }
        const InRow npu { &csvRow, &npuCols.value() };
        const std::string fullRowName(npu[IName]);
        const auto name = parseRowName(fullRowName);
        if (!name) {
            const std::string message = "The API name " + fullRowName + " is invalid.";
            detailsText += guardedCsvLine(skipCells(fullRowName, message));
            resultText += guardedCsvLine({ fullRowName, std::string(kSkip), std::string(kSkip), message });
            ++out.rows;
            ++out.apis;
            if (progress)
                progress->advance(++done);
            continue;
        }
        const auto found = gpuRows.find(fullRowName);
        if (found == gpuRows.end()) {
            out.diagnostics.push_back(makeWarning(
                "precision.missing-gpu-row", SourceLocation { options.npuCsv.string(), std::nullopt, csvRow.line, 0 },
                fullRowName + " does not exist in the GPU data (" + options.gpuCsv.string() + "); row dropped"));
            if (progress)
                progress->advance(++done);
            continue;
        }
        if (found->second.duplicateLine != 0) {
            out.diagnostics.push_back(makeError(
                "precision.duplicate-gpu-row",
                SourceLocation { options.gpuCsv.string(), std::nullopt, found->second.duplicateLine, 0 },
                fullRowName + " has multiple records in the GPU data; the analysis stops here, as msprobe's does"));
            aborted = true;
            break;
        }
        const InRow gpu { found->second.row, &gpuCols.value() };

        const std::string dtype(trimmed(npu[IDtype]));
        Judge judge;
        judge.precision = precision;
        judge.numericNpuColumns = &numericNpu;
        judge.cells.assign(OCount, std::string(kSpace));
        judge.cells[OName] = fullRowName;
        if (dtype.empty() || isUnsupportedDtype(dtype) || npu[IShape] == "(0,)") {
            judge.cells[OResult] = kSkip;
            judge.cells[OMessage] = std::string(npu[IMessage]);
            judge.status = kSkip;
        } else {
            RowFailure failure;
            if (!judgeRow(npu, gpu, name->apiName, dtype, options.profile, judge, failure)) {
                // msprobe's exception path: a SKIP row in both files at once, outside the API grouping.
                detailsText += guardedCsvLine(skipCells(fullRowName, failure.what));
                resultText += guardedCsvLine({ fullRowName, std::string(kSkip), std::string(kSkip), failure.what });
                ++out.rows;
                ++out.apis;
                if (progress)
                    progress->advance(++done);
                continue;
            }
            judge.cells[OResult] = judge.status;
        }
        detailsText += guardedCsvLine(judge.cells);
        ++out.rows;
        grouper.add(*name, dtype, judge.status, judge.cells[OMessage]);
        if (progress)
            progress->advance(++done);
    }
    // An exception in msprobe leaves the API being grouped without its result row.
    if (!aborted)
        grouper.flush();
    out.apis += grouper.count();

    if (auto bad = appendCsv(out.detailsCsv, detailsText))
        return *bad;
    if (auto bad = appendCsv(out.resultCsv, resultText))
        return *bad;
    return out;
}

} // namespace probescope::runut
