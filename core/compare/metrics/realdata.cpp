// SPDX-License-Identifier: Apache-2.0
#include "core/compare/metrics/realdata.h"

#include "core/compare/metrics/kernels.h"
#include "core/dump/dumpfile.h"
#include "core/compare/metrics/pairside.h"
#include "core/tensor/ptnative.h"


#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <string_view>
#include <system_error>
#include <vector>

namespace probescope::compare {

std::shared_ptr<const tensor::TensorResolver> tensorResolverOf(const dump::DumpFile& dump)
{
    // The dump folder is the dump file's own; its tensor folder (dump_tensor_data, or a .pkl's .npy folder named
    // like it) must stay inside it.
    return tensor::makeTensorResolver(dump.path.parent_path(), dump.tensorDir);
}

namespace {

using tensor::DType;
using tensor::Tensor;

// np.finfo(float).eps: msprobe 1.2.2 adds this float64 constant whatever the array's dtype.
constexpr double kFloatEps = 2.220446049250313e-16;
constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr double kCosineRoundAbove = 0.9999;
// Above this size msprobe's file check refuses a .pt file (FileCheckConst.MAX_PT_SIZE).
constexpr std::uintmax_t kMaxPtBytes = 10ULL * 1024 * 1024 * 1024;

constexpr const char* kUnsupported = "unsupported";
constexpr const char* kShapeUnmatched = "shape unmatched";
constexpr const char* kNotAvailable = "N/A";
constexpr const char* kNanText = "Nan";

constexpr const char* kMsgNoBench = "No bench data matched.";
constexpr const char* kMsgNoBenchFile = "Bench does not have data file.";
constexpr const char* kMsgEmpty = "This is empty data, can not compare.";
constexpr const char* kMsgZeroD = "This is type of 0-d tensor, can not calculate 'Cosine', 'One Thousandth Err Ratio' "
                                  "and 'Five Thousandths Err Ratio'. ";
constexpr const char* kMsgShape = "Shape of NPU and bench tensor do not match. Skipped.";
constexpr const char* kMsgUnreadable = "Data is unreadable.";
constexpr const char* kMsgInfNan = "The position of inf or nan in NPU and bench Tensor do not match.";
constexpr const char* kMsgDtype = "Dtype of NPU and bench tensor do not match.";
constexpr const char* kMsgLengthOne = "This is a 1-d tensor of length 1.";
constexpr const char* kMsgNpuZero = "Cannot compare by Cosine Similarity, All the data is Zero in npu dump data.";
constexpr const char* kMsgBenchZero = "Cannot compare by Cosine Similarity, All the data is Zero in Bench dump data.";
constexpr const char* kMsgCosineNan = "Cannot compare by Cosine Similarity, the dump data has NaN.";
constexpr const char* kMsgMaxAbsNan = "Cannot compare by MaxAbsError, the data contains nan/inf/-inf in dump data.";
constexpr const char* kMsgMaxRelNan =
    "Cannot compare by MaxRelativeError, the data contains nan/inf/-inf in dump data.";
constexpr const char* kMsgFuzzy = " Fuzzy matching data, the comparison accuracy may be affected.";

// ---------------------------------------------------------------------------------------------
// Python number formatting

/// float('{:.12f}'.format(x)): std::to_chars with a precision is exact (round half to even on the
/// binary value), as Python's formatting is, and it ignores the C locale.
double roundDecimals(double x, int decimals)
{
    if (!std::isfinite(x))
        return x;
    char buffer[400]; // 309 integer digits at most, the point and the decimals
    const auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, x, std::chars_format::fixed, decimals);
    if (ec != std::errc())
        return x;
    double parsed = 0;
    std::from_chars(buffer, end, parsed);
    return parsed;
}

double formatValue(double x)
{
    return roundDecimals(x, 12);
}

bool isPySpace(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

bool equalsNoCase(std::string_view a, std::string_view b)
{
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
               return (x >= 'A' && x <= 'Z' ? static_cast<char>(x - 'A' + 'a') : x) == y;
           });
}

/// Python float(str): surrounding whitespace, a sign, nan/inf/infinity in any case, decimal literals with
/// single underscores between digits. Hexadecimal text (which strtod would take) is refused like Python does.
std::optional<double> parsePyFloat(std::string_view text)
{
    while (!text.empty() && isPySpace(text.front()))
        text.remove_prefix(1);
    while (!text.empty() && isPySpace(text.back()))
        text.remove_suffix(1);
    bool negative = false;
    if (!text.empty() && (text.front() == '+' || text.front() == '-')) {
        negative = text.front() == '-';
        text.remove_prefix(1);
    }
    if (equalsNoCase(text, "nan"))
        return negative ? -kNan : kNan;
    if (equalsNoCase(text, "inf") || equalsNoCase(text, "infinity"))
        return negative ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();

    std::string digits;
    std::size_t i = 0;
    // Digits with optional single underscores between them; returns how many digits were read.
    auto digitPart = [&]() -> int {
        int count = 0;
        while (i < text.size()) {
            const char c = text[i];
            if (c >= '0' && c <= '9') {
                digits += c;
                ++count;
                ++i;
            } else if (c == '_' && count > 0 && i + 1 < text.size() && text[i + 1] >= '0' && text[i + 1] <= '9') {
                ++i;
            } else {
                break;
            }
        }
        return count;
    };
    int mantissaDigits = digitPart();
    if (i < text.size() && text[i] == '.') {
        digits += '.';
        ++i;
        mantissaDigits += digitPart();
    }
    if (mantissaDigits == 0)
        return std::nullopt;
    if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
        digits += 'e';
        ++i;
        if (i < text.size() && (text[i] == '+' || text[i] == '-'))
            digits += text[i++];
        if (digitPart() == 0)
            return std::nullopt;
    }
    if (i != text.size())
        return std::nullopt;
    double value = 0;
    const auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    if (ptr != digits.data() + digits.size())
        return std::nullopt;
    if (ec == std::errc::result_out_of_range) {
        // Python gives inf on overflow and 0 on underflow; from_chars leaves the value untouched.
        const auto e = digits.find('e');
        const bool hugeExponent = e != std::string::npos && digits[e + 1] != '-';
        value = hugeExponent ? std::numeric_limits<double>::infinity() : 0.0;
    } else if (ec != std::errc()) {
        return std::nullopt;
    }
    return negative ? -value : value;
}

/// Python float(value) of a cell; nullopt where Python would raise.
std::optional<double> cellToFloat(const Cell& cell)
{
    if (const auto* d = std::get_if<double>(&cell.value))
        return *d;
    if (const auto* i = std::get_if<std::int64_t>(&cell.value))
        return static_cast<double>(*i);
    if (const auto* b = std::get_if<bool>(&cell.value))
        return *b ? 1.0 : 0.0;
    if (const auto* s = std::get_if<std::string>(&cell.value))
        return parsePyFloat(*s);
    return std::nullopt; // None and rendered lists: float() raises
}

bool cellIsText(const Cell& cell, std::string_view text)
{
    const auto* s = std::get_if<std::string>(&cell.value);
    return s && *s == text;
}

// ---------------------------------------------------------------------------------------------
// numpy dtypes and arithmetic

int floatRank(DType t)
{
    switch (t) {
    case DType::Float16:
        return 0;
    case DType::Float32:
        return 1;
    default:
        return 2;
    }
}

int intSize(DType t)
{
    switch (t) {
    case DType::Bool:
    case DType::UInt8:
    case DType::Int8:
        return 1;
    case DType::Int16:
        return 2;
    case DType::Int32:
        return 4;
    default:
        return 8;
    }
}

/// The smallest float type numpy considers able to hold every value of an integer type.
DType floatForInt(DType t)
{
    switch (t) {
    case DType::Bool:
    case DType::UInt8:
    case DType::Int8:
        return DType::Float16;
    case DType::Int16:
        return DType::Float32;
    default:
        return DType::Float64;
    }
}

DType widerFloat(DType a, DType b)
{
    return floatRank(a) >= floatRank(b) ? a : b;
}

/// np.result_type of two arrays (numpy 1.x, no value-based casting: both operands are arrays) for the
/// dtypes a dump can hold once bfloat16 is widened.
DType promoteTypes(DType a, DType b)
{
    if (a == b)
        return a;
    if (a == DType::Bool)
        return b;
    if (b == DType::Bool)
        return a;
    const bool fa = tensor::isFloating(a);
    const bool fb = tensor::isFloating(b);
    if (fa && fb)
        return widerFloat(a, b);
    if (fa)
        return widerFloat(a, floatForInt(b));
    if (fb)
        return widerFloat(b, floatForInt(a));
    const bool ua = a == DType::UInt8;
    const bool ub = b == DType::UInt8;
    if (ua == ub)
        return intSize(a) >= intSize(b) ? a : b;
    const DType s = ua ? b : a; // uint8 fits every signed type but int8
    return s == DType::Int8 ? DType::Int16 : s;
}

float roundToHalf(float x)
{
    return tensor::halfToFloat(tensor::floatToHalf(x));
}

/// a - b in the float type t. numpy's float16 loops compute in float32 and round back; for subtraction
/// and division that double rounding gives the correctly rounded half result.
double subIn(DType t, double a, double b)
{
    switch (t) {
    case DType::Float16:
        return roundToHalf(static_cast<float>(a) - static_cast<float>(b));
    case DType::Float32:
        return static_cast<float>(a) - static_cast<float>(b);
    default:
        return a - b;
    }
}

double divIn(DType t, double a, double b)
{
    switch (t) {
    case DType::Float16:
        return roundToHalf(static_cast<float>(a) / static_cast<float>(b));
    case DType::Float32:
        return static_cast<float>(a) / static_cast<float>(b);
    default:
        return a / b;
    }
}

/// x + np.finfo(float).eps in x's own float type (numpy 1.x casts the scalar to the array's type):
/// float16 cannot hold 2^-52 (its smallest subnormal is 2^-24), float32 can.
double addFloatEps(DType t, double x)
{
    switch (t) {
    case DType::Float16:
        return x + 0.0;
    case DType::Float32:
        return static_cast<float>(x) + static_cast<float>(kFloatEps);
    default:
        return x + kFloatEps;
    }
}

std::int64_t rawInt(const Tensor& t, std::int64_t i)
{
    const std::byte* p = t.data.data() + static_cast<std::size_t>(i) * tensor::dtypeSize(t.dtype);
    switch (t.dtype) {
    case DType::Bool:
        return std::to_integer<std::uint8_t>(*p) != 0 ? 1 : 0;
    case DType::UInt8:
        return std::to_integer<std::uint8_t>(*p);
    case DType::Int8:
        return static_cast<std::int8_t>(std::to_integer<std::uint8_t>(*p));
    case DType::Int16: {
        std::int16_t v;
        std::memcpy(&v, p, sizeof v);
        return v;
    }
    case DType::Int32: {
        std::int32_t v;
        std::memcpy(&v, p, sizeof v);
        return v;
    }
    default: {
        std::int64_t v;
        std::memcpy(&v, p, sizeof v);
        return v;
    }
    }
}

/// v reduced modulo the width of integer type t (numpy integer arithmetic wraps around).
std::int64_t wrapTo(DType t, std::int64_t v)
{
    switch (t) {
    case DType::UInt8:
        return static_cast<std::uint8_t>(v);
    case DType::Int8:
        return static_cast<std::int8_t>(v);
    case DType::Int16:
        return static_cast<std::int16_t>(v);
    case DType::Int32:
        return static_cast<std::int32_t>(v);
    default:
        return v;
    }
}

/// np.max: a NaN anywhere is the result.
void maxWithNan(double& acc, double x)
{
    if (std::isnan(acc))
        return;
    if (std::isnan(x) || x > acc)
        acc = x;
}

// ---------------------------------------------------------------------------------------------

/// A tensor as msprobe holds it after loading: bfloat16 widened to float32, values read as float64.
struct Array
{
    DType dtype = DType::Float32;
    const Tensor* source = nullptr;
    std::vector<double> values;
    bool zeroD = false;
};

std::optional<Array> toArray(const Tensor& t)
{
    const std::int64_t n = t.numel();
    if (n < 0 || static_cast<std::uint64_t>(n) * tensor::dtypeSize(t.dtype) != t.data.size())
        return std::nullopt;
    Array a;
    a.dtype = t.dtype == DType::BFloat16 ? DType::Float32 : t.dtype; // exact: bf16 is a truncated float32
    a.source = &t;
    a.zeroD = t.shape.empty();
    a.values.resize(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i)
        a.values[static_cast<std::size_t>(i)] = t.valueAt(i);
    return a;
}

void fillAll(RealDataMetrics& m, const Cell& cell)
{
    m.cosine = m.maxAbsErr = m.maxRelativeErr = m.oneThousandthErrRatio = m.fiveThousandthsErrRatio = cell;
}

RealDataMetrics failed(const char* cellText, std::string message)
{
    RealDataMetrics m;
    fillAll(m, Cell::text(cellText));
    m.message = std::move(message);
    return m;
}

/// Element i of an operand that may be a broadcast 0-d array.
std::size_t at(const Array& a, std::size_t i)
{
    return a.values.size() == 1 ? 0 : i;
}

/// MaxAbsErr of a 0-d NPU array: msprobe keeps 0-d arrays in their own dtype (only a bool NPU array is
/// cast to float, together with the bench array), so the difference is taken in the promoted type, with
/// integer wrap-around and float32/float16 rounding.
double maxAbsErrZeroD(const Array& npu, const Array& bench, std::size_t count)
{
    DType nt = npu.dtype;
    DType bt = bench.dtype;
    if (nt == DType::Bool)
        nt = bt = DType::Float64;
    const DType p = promoteTypes(nt, bt);
    double result = count == 0 ? kNan : -std::numeric_limits<double>::infinity();
    for (std::size_t i = 0; i < count; ++i) {
        double diff = 0;
        if (!tensor::isFloating(p)) {
            const std::int64_t a = rawInt(*npu.source, 0);
            const std::int64_t b = rawInt(*bench.source, static_cast<std::int64_t>(i));
            std::int64_t d = wrapTo(p, static_cast<std::int64_t>(static_cast<std::uint64_t>(a) - static_cast<std::uint64_t>(b)));
            if (d < 0)
                d = wrapTo(p, static_cast<std::int64_t>(0 - static_cast<std::uint64_t>(d)));
            diff = static_cast<double>(d);
        } else {
            diff = std::fabs(subIn(p, npu.values[0], bench.values[i]));
        }
        maxWithNan(result, diff);
    }
    return result;
}

} // namespace

namespace {

/// One side of a pair as the kernels read it (pairside.h).
using Side = PairSide;

DType loadedType(DType t)
{
    return t == DType::BFloat16 ? DType::Float32 : t; // exact: bf16 is a truncated float32
}

/**
 * A.6 steps 2.4-4 for a pair whose NPU side is not 0-d, in one streamed pass (kernels.h). nullopt when a
 * file could not be read to its end. The order of checks and messages is the one of the element-wise
 * version this replaced: emptiness, shape, inf/nan positions, dtype, then Cosine, MaxAbsErr, MaxRelErr.
 */
std::optional<RealDataMetrics> streamedMetrics(const Side& npu, const Side& bench, Splitter& splitter)
{
    RealDataMetrics m;
    if (npu.numel == 0) {
        fillAll(m, Cell::integer(0));
        m.message = kMsgEmpty;
        return m;
    }
    if (*npu.shape != *bench.shape)
        return failed(kShapeUnmatched, kMsgShape);

    const auto count = static_cast<std::uint64_t>(npu.numel);
    const kernels::RelErrRule rule = kernels::ruleMsprobe12(npu.dtype, bench.dtype);
    const kernels::PairStats stats = kernels::pairStats(npu.operand, bench.operand, count, rule, false, splitter);
    if (stats.ioFailed)
        return std::nullopt;
    if (stats.anyInvalid && stats.masksDiffer)
        return failed(kNotAvailable, kMsgInfNan);
    if (loadedType(npu.dtype) != loadedType(bench.dtype))
        m.message = kMsgDtype;

    // Cosine (A.6 step 4). A compensated sum that overflowed becomes the plain sum (inf, as BLAS gives).
    if (count == 1) {
        m.cosine = Cell::text(kUnsupported);
        m.message += kMsgLengthOne;
    } else {
        double dot = stats.dot.value();
        double npuSq = stats.npuSq.value();
        double benchSq = stats.benchSq.value();
        if (!std::isfinite(dot) || !std::isfinite(npuSq) || !std::isfinite(benchSq)) {
            double plainDot = 0;
            double plainNpu = 0;
            double plainBench = 0;
            double plainDiff = 0;
            kernels::plainSums(npu.operand, bench.operand, count, plainDot, plainNpu, plainBench, plainDiff);
            dot = std::isfinite(dot) ? dot : plainDot;
            npuSq = std::isfinite(npuSq) ? npuSq : plainNpu;
            benchSq = std::isfinite(benchSq) ? benchSq : plainBench;
        }
        const double npuNorm = std::sqrt(npuSq);
        const double benchNorm = std::sqrt(benchSq);
        if (npuNorm <= kFloatEps && benchNorm <= kFloatEps) {
            m.cosine = Cell::number(1.0);
        } else if (npuNorm <= kFloatEps) {
            m.cosine = Cell::text(kNanText);
            m.message += kMsgNpuZero;
        } else if (benchNorm <= kFloatEps) {
            m.cosine = Cell::text(kNanText);
            m.message += kMsgBenchZero;
        } else {
            const double cosine = dot / (npuNorm * benchNorm);
            if (std::isnan(cosine)) {
                m.cosine = Cell::text(kNanText);
                m.message += kMsgCosineNan;
            } else {
                double c = formatValue(cosine);
                if (c > kCosineRoundAbove)
                    c = roundDecimals(c, 6);
                m.cosine = Cell::number(c);
            }
        }
    }

    if (stats.absNan) {
        m.maxAbsErr = Cell::text(kNanText);
        m.message += kMsgMaxAbsNan;
    } else {
        m.maxAbsErr = Cell::number(formatValue(stats.maxAbs));
    }
    if (stats.relNan) {
        m.maxRelativeErr = Cell::text(kNanText);
        m.message += kMsgMaxRelNan;
    } else {
        m.maxRelativeErr = Cell::number(formatValue(stats.maxRel));
    }
    const auto size = static_cast<double>(count);
    m.oneThousandthErrRatio = Cell::number(formatValue(static_cast<double>(stats.belowOne) / size));
    m.fiveThousandthsErrRatio = Cell::number(formatValue(static_cast<double>(stats.belowFive) / size));
    return m;
}

/// The 0-d NPU case, element by element on float64 copies (one element against whatever the bench holds).
RealDataMetrics zeroDMetrics(const Tensor& npuTensor, const Tensor& benchTensor)
{
    std::optional<Array> npuArray = toArray(npuTensor);
    std::optional<Array> benchArray = toArray(benchTensor);
    if (!npuArray || !benchArray)
        return failed(kUnsupported, kMsgUnreadable);
    Array& npu = *npuArray;
    Array& bench = *benchArray;
    RealDataMetrics m;
    // msprobe skips the shape, inf/nan and dtype steps for a 0-d NPU array.
    m.message = kMsgZeroD;
    // A 0-d NPU array broadcasts against whatever the bench holds (msprobe itself raises there).
    const std::size_t count = bench.values.size();

    // Relative-error array (A.6 step 3).
    DType nt = npu.dtype;
    DType bt = bench.dtype;
    if (!tensor::isFloating(bt))
        nt = bt = DType::Float64;
    else if (!tensor::isFloating(nt))
        nt = DType::Float64; // numpy refuses to add eps in place to an integer array; widen instead
    const DType reType = promoteTypes(nt, bt);
    double maxRelative = count == 0 ? kNan : -std::numeric_limits<double>::infinity();
    for (std::size_t i = 0; i < count; ++i) {
        double n = npu.values[at(npu, i)];
        double b = bench.values[i];
        if (b == 0) {
            b = addFloatEps(bt, b);
            n = addFloatEps(nt, n);
        }
        maxWithNan(maxRelative, std::fabs(divIn(reType, subIn(reType, n, b), b)));
    }
    m.cosine = Cell::text(kUnsupported);
    // MaxAbsErr in the arrays' own dtypes for 0-d.
    const double maxAbs = maxAbsErrZeroD(npu, bench, count);
    if (std::isnan(maxAbs)) {
        m.maxAbsErr = Cell::text(kNanText);
        m.message += kMsgMaxAbsNan;
    } else {
        m.maxAbsErr = Cell::number(formatValue(maxAbs));
    }
    if (std::isnan(maxRelative)) {
        m.maxRelativeErr = Cell::text(kNanText);
        m.message += kMsgMaxRelNan;
    } else {
        m.maxRelativeErr = Cell::number(formatValue(maxRelative));
    }
    m.oneThousandthErrRatio = Cell::text(kUnsupported);
    m.fiveThousandthsErrRatio = Cell::text(kUnsupported);
    return m;
}

bool consistent(const Tensor& t)
{
    const std::int64_t n = t.numel();
    return n >= 0 && static_cast<std::uint64_t>(n) * tensor::dtypeSize(t.dtype) == t.data.size();
}

} // namespace

RealDataMetrics compareTensors(const tensor::Tensor& npuTensor, const tensor::Tensor& benchTensor)
{
    SerialSplitter serial;
    return compareTensors(npuTensor, benchTensor, serial);
}

RealDataMetrics compareTensors(const tensor::Tensor& npuTensor, const tensor::Tensor& benchTensor, Splitter& splitter)
{
    if (!consistent(npuTensor) || !consistent(benchTensor)) // only a hand-built tensor can disagree with its shape
        return failed(kUnsupported, kMsgUnreadable);
    if (npuTensor.shape.empty())
        return zeroDMetrics(npuTensor, benchTensor);
    // Memory operands never fail to read.
    return *streamedMetrics(pairSideOf(npuTensor), pairSideOf(benchTensor), splitter);
}

namespace {

/// msprobe's file checks that depend on the name: a `.pt` suffix, only letters, digits and `_.:/-`, at most
/// 255 bytes per path component. msprobe applies the character test to the whole real path; the folder part
/// is left out on purpose, so that a dump under a folder with a space still compares (msprobe reports every
/// tensor row of such a dump as "not found").
bool acceptableDataName(std::string_view name)
{
    if (name.size() < 3 || name.substr(name.size() - 3) != ".pt")
        return false;
    std::size_t component = 0;
    for (const char c : name) {
        const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'
            || c == '.' || c == ':' || c == '/' || c == '-';
        if (!ok)
            return false;
        component = c == '/' ? 0 : component + 1;
        if (component > 255)
            return false;
    }
    return true;
}

/// Whether a resolver's error means "no such file" (msprobe's "not found.") rather than a file that must not or
/// cannot be read: tensor.path-escape and tensor.path-invalid are errors of the input, never "not found".
bool isMissing(const Diagnostic& error)
{
    return error.id == "tensor.missing";
}

/// The value, or nullopt; `unreadable` then says why when the file is there but cannot be read, so the row says
/// "unreadable" rather than msprobe's "not found" (issue 20).
template<typename T>
std::optional<T> valueOrNote(Result<T> result, std::string* unreadable)
{
    if (result)
        return std::move(result).value();
    if (unreadable && !isMissing(result.error()))
        *unreadable = result.error().format();
    return std::nullopt;
}

/// The size and path-length bounds past which a file counts as not found.
bool withinBounds(std::uint64_t size, std::size_t pathLength)
{
    return size <= kMaxPtBytes && pathLength <= 4096;
}

bool withinBounds(const tensor::DataFile& file)
{
    return withinBounds(file.size, file.path.native().size());
}

/// msprobe's checks, then the name resolved by the side's resolver; nullopt = not found, or unreadable.
std::optional<tensor::DataFile> resolveChecked(const tensor::TensorResolver* tensors, const std::string& name,
                                               std::string* unreadable)
{
    if (!tensors || !acceptableDataName(name))
        return std::nullopt;
    auto resolved = valueOrNote(tensors->resolve(name), unreadable);
    if (!resolved || !withinBounds(*resolved))
        return std::nullopt;
    return resolved;
}

std::optional<Tensor> loadChecked(const tensor::TensorResolver* tensors, const std::string& name,
                                  std::string* unreadable = nullptr)
{
    if (!resolveChecked(tensors, name, unreadable))
        return std::nullopt;
    return valueOrNote(tensors->load(name), unreadable);
}

/// resolveChecked's checks on a file opened at once (TensorResolver::open: no lstat before the open), then the
/// file checked for streaming (see tensor::openPtStream).
std::optional<tensor::PtStream> openChecked(const tensor::TensorResolver* tensors, const std::string& name,
                                            tensor::ReadBuffer& buffer, std::string* unreadable = nullptr)
{
    if (!tensors || !acceptableDataName(name))
        return std::nullopt;
    auto file = valueOrNote(tensors->open(name, buffer, tensor::kPtWholeFileLimit), unreadable);
    if (!file || !withinBounds(file->size(), file->pathLength())) // the path itself is not made
        return std::nullopt;
    return valueOrNote(tensors->openPt(std::move(*file), buffer), unreadable);
}

void prefetchRow(const RealDataRow& row)
{
    if (row.dataNameCell == "-1" || row.benchDataName.empty() || !row.npuTensors || !row.benchTensors)
        return;
    const std::string npuName = row.npuName + ".pt";
    if (acceptableDataName(npuName))
        row.npuTensors->prefetch(npuName);
    if (acceptableDataName(row.benchDataName))
        row.benchTensors->prefetch(row.benchDataName);
}

} // namespace

namespace {
thread_local bool t_lastRowStreamed = false; ///< NextRowReadAhead: this thread's previous row was streamed
} // namespace

NextRowReadAhead::NextRowReadAhead(const std::function<void()>& next) : m_next(next)
{
    if (m_next && t_lastRowStreamed) {
        m_next();
        m_ran = true;
    }
}

void NextRowReadAhead::opened(bool streamed)
{
    t_lastRowStreamed = streamed;
    if (m_next && streamed && !m_ran) {
        m_next();
        m_ran = true;
    }
}

RealDataMetrics compareRealDataRow(const RealDataRow& row)
{
    SerialSplitter serial;
    return compareRealDataRow(row, serial);
}

RealDataMetrics compareRealDataRow(const RealDataRow& row, Splitter& splitter, const RealDataRow* next)
{
    // Two read buffers per thread, reused from row to row (small files are read whole into them).
    thread_local tensor::ReadBuffer npuBuffer;
    thread_local tensor::ReadBuffer benchBuffer;
    RealDataMetrics m;
    if (row.dataNameCell == "-1") {
        m = failed(kUnsupported, kMsgNoBench);
    } else if (row.benchDataName.empty()) {
        m = failed(kUnsupported, kMsgNoBenchFile);
    } else {
        const std::string npuName = row.npuName + ".pt";
        std::function<void()> readNext;
        if (next)
            readNext = [next] { prefetchRow(*next); };
        NextRowReadAhead readAhead(readNext);
        // A file that exists but cannot be read is named as unreadable, not "not found" (issue 20).
        std::string unreadable;
        std::optional<tensor::PtStream> npu = openChecked(row.npuTensors.get(), npuName, npuBuffer, &unreadable);
        std::optional<tensor::PtStream> bench =
            npu ? openChecked(row.benchTensors.get(), row.benchDataName, benchBuffer, &unreadable) : std::nullopt;
        std::optional<RealDataMetrics> computed;
        if (npu && bench && npu->shape().empty()) {
            // A 0-d NPU tensor (rare) goes through the element-wise path on loaded tensors.
            const std::optional<Tensor> npuTensor = loadChecked(row.npuTensors.get(), npuName, &unreadable);
            const std::optional<Tensor> benchTensor =
                npuTensor ? loadChecked(row.benchTensors.get(), row.benchDataName, &unreadable) : std::nullopt;
            if (npuTensor && benchTensor)
                computed = compareTensors(*npuTensor, *benchTensor);
        } else if (npu && bench) {
            readAhead.opened(!npu->memory() || !bench->memory());
            computed = streamedMetrics(pairSideOf(*npu), pairSideOf(*bench), splitter);
        }
        if (computed)
            m = std::move(*computed);
        else if (!unreadable.empty())
            m = failed(kUnsupported,
                       "Dump file: " + row.dataNameCell + " " + std::string(kUnreadableMark) + " " + unreadable);
        else
            m = failed(kUnsupported, "Dump file: " + row.dataNameCell + " not found.");
    }
    if (row.fuzzy && row.benchName != row.npuName && row.benchName != kNotAvailable)
        m.message += kMsgFuzzy;
    return m;
}

std::string accuracyReached(const Cell& cosine, const Cell& maxAbsErr)
{
    if (cellIsText(cosine, kShapeUnmatched))
        return "Unmatched";
    if (cellIsText(cosine, "None") || cellIsText(maxAbsErr, "None"))
        return "None";
    if (cellIsText(cosine, kNotAvailable) || cellIsText(maxAbsErr, kNotAvailable))
        return "No";
    const std::optional<double> cos = cellToFloat(cosine);
    const std::optional<double> maxAbs = cellToFloat(maxAbsErr);
    if (!cos || !maxAbs)
        return "None";
    // NaN ("Nan" parses) fails every comparison and so ends as Yes, as in msprobe.
    if (*cos < 0.99 && *maxAbs > 0.001)
        return "No";
    if (*cos < 0.9 || *maxAbs > 1)
        return "No";
    return "Yes";
}

} // namespace probescope::compare
