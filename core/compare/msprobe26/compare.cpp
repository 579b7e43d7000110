// SPDX-License-Identifier: Apache-2.0
// msprobe 26.0.0 ("Era C") compare: the table laid out from the paired rows, statistics diffs, the tensor pairs and
// the verdicts. The rows come from flatten26.cpp and match26.cpp (rows26.h); the CSV text from tabletext.cpp.
#include "core/compare/msprobe26/msprobe26.h"
#include "core/compare/msprobe26/rows26.h"

#include "core/util/pytext.h"

#include "core/compare/table/flatten.h"
#include "core/compare/match/mapping.h"
#include "core/compare/table/pytext.h"
#include "core/compare/metrics/realdata.h"
#include "core/dump/leaf.h"
#include "core/dump/rankdump.h"
#include "core/util/parallel.h"
#include "core/util/workgroup.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <optional>
#include <string_view>
#include <unordered_map>

namespace probescope::compare::msprobe26 {

double pandasToFloat(std::string_view text)
{
    // pandas' precise_xstrtod (pandas/_libs/src/parser/tokenizer.c, used by pd.to_numeric since 1.1), written
    // from its behaviour: at most 17 digits are accumulated in a double, counting leading zeros, the rest
    // are dropped (integer digits raise the exponent); the result is then scaled by one power of ten.
    // "0.003224366344511509" therefore reads as 0.0032243663445115.
    static const auto powers = [] {
        std::array<double, 309> e {};
        for (int i = 0; i <= 308; ++i)
            e[static_cast<std::size_t>(i)] = std::strtod(("1e" + std::to_string(i)).c_str(), nullptr);
        return e;
    }();
    std::size_t i = 0;
    auto at = [&](std::size_t k) { return k < text.size() ? text[k] : '\0'; };
    auto isDigit = [](char ch) { return ch >= '0' && ch <= '9'; };
    while (at(i) == ' ' || at(i) == '\t' || at(i) == '\n' || at(i) == '\r' || at(i) == '\f' || at(i) == '\v')
        ++i;
    bool negative = false;
    if (at(i) == '-' || at(i) == '+') {
        negative = at(i) == '-';
        ++i;
    }
    constexpr int maxDigits = 17;
    double number = 0;
    int exponent = 0;
    int numDigits = 0;
    while (isDigit(at(i))) {
        if (numDigits < maxDigits) {
            number = number * 10. + (at(i) - '0');
            ++numDigits;
        } else {
            ++exponent;
        }
        ++i;
    }
    if (at(i) == '.') {
        ++i;
        int decimals = 0;
        while (numDigits < maxDigits && isDigit(at(i))) {
            number = number * 10. + (at(i) - '0');
            ++numDigits;
            ++decimals;
            ++i;
        }
        while (isDigit(at(i)))
            ++i;
        exponent -= decimals;
    }
    if (numDigits == 0)
        return std::numeric_limits<double>::quiet_NaN();
    if (negative)
        number = -number;
    if (at(i) == 'e' || at(i) == 'E') {
        ++i;
        bool negExp = false;
        if (at(i) == '-' || at(i) == '+') {
            negExp = at(i) == '-';
            ++i;
        }
        int n = 0;
        int expDigits = 0;
        while (expDigits < maxDigits && isDigit(at(i))) {
            n = std::min(n * 10 + (at(i) - '0'), 100000); // beyond ±616 the result no longer changes
            ++expDigits;
            ++i;
        }
        exponent += negExp ? -n : n;
    }
    if (exponent > 308)
        return std::numeric_limits<double>::quiet_NaN(); // ERANGE: to_numeric(errors="coerce") gives NaN
    if (exponent > 0)
        return number * powers[static_cast<std::size_t>(exponent)];
    if (exponent < -308) {
        if (exponent < -616)
            return 0.;
        number /= powers[static_cast<std::size_t>(-308 - exponent)];
        return number / powers[308];
    }
    return number / powers[static_cast<std::size_t>(-exponent)];
}

namespace {

using dump::JsonValue;
using detail::kNA;
using detail::Pair;
using detail::Row26;

/// set_summary: NaN (float or any-case "nan" text) becomes the marker "Nan"; None the text "None".
Cell summaryCell(const Cell& c)
{
    if (c.isNone())
        return Cell::text("None");
    if (c.isFloat() && std::isnan(std::get<double>(c.value)))
        return Cell::text("Nan");
    if (c.isString()) {
        std::string lower = c.asString();
        for (char& ch : lower)
            ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
        if (lower == "nan")
            return Cell::text("Nan");
    }
    return c;
}

// ---------------------------------------------------------------------------------------------
// statistics-mode value classification (§6.1)

std::string lowerCopy(std::string s)
{
    for (char& ch : s)
        ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    return s;
}

/// pd.to_numeric of a string: decimal/scientific literals with optional sign and surrounding spaces.
std::optional<double> parseNumeric(std::string_view s, bool* integral = nullptr)
{
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
        s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t'))
        s.remove_suffix(1);
    if (s.empty())
        return std::nullopt;
    const std::string text(s);
    const std::string lower = lowerCopy(text);
    std::string_view body = lower;
    if (!body.empty() && (body.front() == '+' || body.front() == '-'))
        body.remove_prefix(1);
    if (body == "inf" || body == "infinity")
        return lower[0] == '-' ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
    if (body == "nan")
        return std::numeric_limits<double>::quiet_NaN();
    // digits [. digits] [e [sign] digits]
    std::size_t i = 0;
    std::size_t digits = 0;
    while (i < body.size() && body[i] >= '0' && body[i] <= '9') {
        ++i;
        ++digits;
    }
    bool isInt = true;
    if (i < body.size() && body[i] == '.') {
        isInt = false;
        ++i;
        while (i < body.size() && body[i] >= '0' && body[i] <= '9') {
            ++i;
            ++digits;
        }
    }
    if (digits == 0)
        return std::nullopt;
    if (i < body.size() && body[i] == 'e') {
        isInt = false;
        ++i;
        if (i < body.size() && (body[i] == '+' || body[i] == '-'))
            ++i;
        std::size_t e = 0;
        while (i < body.size() && body[i] >= '0' && body[i] <= '9') {
            ++i;
            ++e;
        }
        if (e == 0)
            return std::nullopt;
    }
    if (i != body.size())
        return std::nullopt;
    if (integral)
        *integral = isInt;
    return pandasToFloat(text);
}

enum class ValType { Num, Nan, Inf, NegInf, Device, NA, Other };

ValType classify(const Cell& c)
{
    const std::string s = pyStr(c);
    const std::string lower = lowerCopy(s);
    if (c.isNone() || (c.isFloat() && std::isnan(std::get<double>(c.value))) || lower == "nan")
        return ValType::Nan;
    if ((c.isFloat() && std::get<double>(c.value) == std::numeric_limits<double>::infinity()) || lower == "inf")
        return ValType::Inf;
    if ((c.isFloat() && std::get<double>(c.value) == -std::numeric_limits<double>::infinity()) || lower == "-inf")
        return ValType::NegInf;
    const bool boolText = lower == "true" || lower == "false";
    const bool numeric = c.isNumber() || (c.isString() && parseNumeric(c.asString()));
    if (numeric && !boolText)
        return ValType::Num;
    if (lower.find("npu") != std::string::npos || lower.find("cpu") != std::string::npos
        || lower.find("cuda") != std::string::npos)
        return ValType::Device;
    if (s == kNA)
        return ValType::NA;
    return ValType::Other;
}

/// The number pd.to_numeric(str(value)) gives. A float goes through its repr and pandas' parser, which
/// is not correctly rounded (pandasToFloat): msprobe 26 subtracts those parsed values, not the dump's.
double numberOf(const Cell& c)
{
    if (c.isInt())
        return static_cast<double>(std::get<std::int64_t>(c.value));
    if (c.isFloat()) {
        const double d = std::get<double>(c.value);
        return std::isfinite(d) ? pandasToFloat(pyFloatRepr(d)) : d;
    }
    if (c.isBool())
        return std::get<bool>(c.value) ? 1 : 0;
    if (c.isString())
        return parseNumeric(c.asString()).value_or(std::numeric_limits<double>::quiet_NaN());
    return std::numeric_limits<double>::quiet_NaN();
}

/// Whether pd.to_numeric(column.astype(str)) yields int64: every value's text is an integer literal.
bool columnIsInt(const CellRows& rows, int col)
{
    for (const auto& row : rows) {
        bool integral = false;
        const std::string s = pyStr(row[static_cast<std::size_t>(col)]);
        if (!parseNumeric(s, &integral) || !integral)
            return false;
    }
    return !rows.empty();
}

} // namespace

std::pair<std::string, std::string> statsDiff(const Cell& npu, const Cell& bench, bool npuIntColumn, bool benchIntColumn)
{
    if (pyStr(npu) == pyStr(bench))
        return { "0", "0" };
    const ValType a = classify(npu);
    const ValType b = classify(bench);
    using V = ValType;
    auto same = [](const char* s) { return std::pair<std::string, std::string> { s, s }; };
    if (a == V::NA || b == V::NA)
        return same(kNA);
    if (a == V::Num && b == V::Num) {
        const double n = numberOf(npu);
        const double m = numberOf(bench);
        std::string diff;
        double d = 0;
        if (npuIntColumn && benchIntColumn) {
            const auto ni = static_cast<std::int64_t>(n);
            const auto mi = static_cast<std::int64_t>(m);
            diff = std::to_string(ni - mi);
            d = static_cast<double>(ni - mi);
        } else {
            d = n - m;
            diff = pyFloatRepr(d);
        }
        if (m == 0)
            return { diff, "inf" };
        return { diff, pyFloatRepr(std::fabs(d / m * 100)) + "%" };
    }
    const bool nanRange = [&] {
        auto inRange = [](V t) { return t == V::Num || t == V::Nan || t == V::Inf || t == V::NegInf; };
        return (a == V::Nan && inRange(b)) || (b == V::Nan && inRange(a));
    }();
    if (nanRange)
        return same("Nan");
    if (a == V::Inf && (b == V::Num || b == V::NegInf))
        return same("inf");
    if (a == V::NegInf && (b == V::Num || b == V::Inf))
        return same("-inf");
    if (a == V::Num && b == V::Inf)
        return same("-inf");
    if (a == V::Num && b == V::NegInf)
        return same("inf");
    if (a == V::Device && b == V::Device)
        return same(kNA);
    if (a == V::Device || a == V::Other || b == V::Device || b == V::Other)
        return same("Diff");
    return same(kNA);
}

std::vector<std::string> headerFor(CompareMode mode, bool stackMode)
{
    std::vector<std::string> h = { "NPU Name",         "Bench Name",         "NPU Dtype",         "Bench Dtype",
                                   "NPU Tensor Shape", "Bench Tensor Shape", "NPU Requires_grad", "Bench Requires_grad" };
    const std::vector<std::string> stats8 = { "NPU max",   "NPU min",   "NPU mean",   "NPU l2norm",
                                              "Bench max", "Bench min", "Bench mean", "Bench l2norm" };
    switch (mode) {
    case CompareMode::RealData:
        h.insert(h.end(), { "Cosine", "EucDist", "MaxAbsErr", "MaxRelativeErr", "One Thousandth Err Ratio",
                            "Five Thousandths Err Ratio" });
        h.insert(h.end(), stats8.begin(), stats8.end());
        break;
    case CompareMode::Summary:
        h.insert(h.end(), { "Max diff", "Min diff", "Mean diff", "L2norm diff", "MaxRelativeErr", "MinRelativeErr",
                            "MeanRelativeErr", "NormRelativeErr" });
        h.insert(h.end(), stats8.begin(), stats8.end());
        break;
    case CompareMode::Md5:
        h.insert(h.end(), { "NPU MD5", "BENCH MD5" });
        break;
    }
    h.insert(h.end(), { "Requires_grad Consistent", "Result", "Err_message" });
    if (stackMode)
        h.push_back("NPU_Stack_Info");
    if (mode == CompareMode::RealData)
        h.push_back("Data_name");
    return h;
}

Result<CompareMode> detectMode(const dump::DumpFile& npu, const dump::DumpFile& bench)
{
    const SourceLocation where = fileLocation(npu.path);
    if (npu.header.task.empty() || bench.header.task.empty())
        return makeError("compare.task", where, "Invalid or missing 'data'/'task' in dump.json");
    if (npu.header.task != bench.header.task)
        return makeError("compare.task", where, "the NPU and bench dumps have different tasks");
    if (npu.header.task == "tensor")
        return CompareMode::RealData;
    if (npu.header.task != "statistics")
        return makeError("compare.task", where, "Compare applies only to task is tensor or statistics");
    auto hasMd5 = [](const dump::DumpFile& f) {
        for (const auto& e : f.entries) {
            if (!e.value.isObject())
                continue;
            for (std::uint32_t i = 0; i < e.value.size(); ++i) {
                const JsonValue field = e.value.at(i);
                if (field.isArray()) {
                    for (std::uint32_t k = 0; k < field.size(); ++k) {
                        if (field.at(k).isObject() && field.at(k).find("md5"))
                            return true;
                    }
                } else if (field.isObject() && field.find("md5")) {
                    return true;
                }
            }
        }
        return false;
    };
    const bool a = hasMd5(npu);
    const bool b = hasMd5(bench);
    if (a != b)
        return makeError("compare.task", where, "one dump has md5 checksums and the other has not");
    return a ? CompareMode::Md5 : CompareMode::Summary;
}

namespace {

/// calc_accuracy with first_diff_analyze (acc_compare.py:1614-1628): summary rows get no verdict, only
/// "Requires_grad inconsistent. "; md5 rows pass or are Different and keep a NaN Err_message.
void applyDaVerdicts(CompareTable& table)
{
    const auto result = static_cast<std::size_t>(table.column("Result"));
    const auto message = static_cast<std::size_t>(table.column("Err_message"));
    const auto npuReq = static_cast<std::size_t>(table.column("NPU Requires_grad"));
    const auto benchReq = static_cast<std::size_t>(table.column("Bench Requires_grad"));
    const int npuMd5 = table.column("NPU MD5");
    const int benchMd5 = table.column("BENCH MD5");
    for (std::size_t r = 0; r < table.rows.size(); ++r) {
        auto row = table.rows[r];
        const bool noBench = !table.matched[r];
        if (table.mode == CompareMode::Md5) {
            const bool equal = pyStr(row[static_cast<std::size_t>(npuMd5)]) == pyStr(row[static_cast<std::size_t>(benchMd5)]);
            row[result] = Cell::text(equal ? "pass" : noBench ? kNA : "Different");
            row[message] = noBench ? Cell::text("No bench data matched.")
                                   : Cell::number(std::numeric_limits<double>::quiet_NaN());
            continue;
        }
        std::string text = noBench ? "No bench data matched." : "";
        if (pyStr(row[npuReq]) != pyStr(row[benchReq]))
            text += "Requires_grad inconsistent. ";
        row[result] = Cell::text(noBench ? kNA : "");
        row[message] = Cell::text(text);
    }
}

/// The two dumps' rows and their pairs (gen_data_df, match_op), or the error that leaves nothing to compare.
struct PairedRows
{
    std::vector<Row26> npu;
    std::vector<Row26> bench;
    std::vector<Pair> pairs;
};

Result<PairedRows> pairRows(const dump::DumpFile& npuFile, const dump::DumpFile& benchFile, const CompareOptions& options,
                            CompareTable& table)
{
    // Only the NPU stack.json exists; bench rows never show a stack. The two sides are flattened at once on -j 2
    // and more (each job fills its own slot; the NPU's error still comes first).
    CompareOptions benchOptions = options;
    benchOptions.stack = nullptr;
    std::optional<Result<std::vector<Row26>>> sides[2];
    parallelFor(2, options.sideThreads ? std::min(resolveThreadCount(options.threads), 2u) : 1u, [&](std::size_t side) {
        sides[side] = side == 0 ? detail::flattenDump26(npuFile, options) : detail::flattenDump26(benchFile, benchOptions);
    });
    Result<std::vector<Row26>>& npuRows = *sides[0];
    if (!npuRows)
        return npuRows.error();
    Result<std::vector<Row26>>& benchRows = *sides[1];
    if (!benchRows)
        return benchRows.error();
    if (npuRows->empty() || benchRows->empty())
        return makeError("compare.empty", fileLocation(npuFile.path),
                         "No valid data found in dump.json");

    const NameMappings* mappings = options.mappings && options.mappings->any() ? options.mappings : nullptr;
    // A data mapping decides the matching whatever else is given: a left join on the mapped key, no dtype test.
    const bool dataMapping = mappings && mappings->data;
    if (dataMapping && options.fuzzy)
        table.diagnostics.push_back(makeWarning("compare.mapping-fuzzy",
                                                fileLocation(npuFile.path),
                                                "-fm has no effect on the matching with a data mapping (msprobe 26 "
                                                "matches by the mapping; backward calls are not renumbered)"));
    if (!options.fuzzy && npuFile.format != dump::DumpFormat::DebugJson) {
        detail::renumberBackward(*npuRows);
        detail::renumberBackward(*benchRows);
    }
    if (mappings)
        detail::assignMappedKeys(*npuRows, *benchRows, *mappings);
    std::vector<Pair> pairs = options.fuzzy && !dataMapping ? detail::matchFuzzy(*npuRows, *benchRows, &table.npuOpsLost)
                                                            : detail::matchExact(*npuRows, *benchRows);
    // ms_compare's MindSpore vs PyTorch dtype classes; pt_compare never uses them.
    const bool crossFramework = isMindSporeDump(npuFile, true) && benchFile.header.framework == "pytorch";
    for (Pair& p : pairs) {
        if (!dataMapping && p.bench
            && !detail::dtypeCompatible((*npuRows)[p.npu].dtype, (*benchRows)[*p.bench].dtype, crossFramework))
            p.bench.reset();
    }
    if (options.mappings && options.mappings->manual && !options.mappings->manual->pairs.empty())
        detail::applyManualMatches(*options.mappings->manual, *npuRows, *benchRows, pairs, &table.npuOpsLost);
    if (pairs.empty())
        return makeError("compare.empty", fileLocation(npuFile.path),
                         "Can`t match any op.");
    return PairedRows { std::move(*npuRows), std::move(*benchRows), std::move(pairs) };
}

/// A real-data row whose two tensor files are compared once every row is laid out.
struct TensorJob
{
    std::size_t row = 0;
    const std::string* npuName = nullptr;
    const std::string* benchName = nullptr;
};

/// One table row per pair, in pair order, and with `da` set the -da columns of each; real-data rows get their
/// metrics later (the returned tensor jobs). Statistics and md5 modes count progress here, by row.
Result<std::vector<TensorJob>> layOutRows(const PairedRows& paired, CompareTable& table, ProgressSink* progress,
                                          std::vector<msprobe26::DaRow>* da)
{
    const std::vector<Row26>* npuRows = &paired.npu;
    const std::vector<Row26>* benchRows = &paired.bench;
    const std::vector<Pair>& pairs = paired.pairs;
    const CompareMode m = table.mode;
    const int colStats = m == CompareMode::RealData ? 14 : 16;
    std::vector<TensorJob> tensorJobs;
    const std::size_t ncols = table.header.size();
    // Real data: progress counts the tensor pairs, compared below; the other modes count rows here.
    const bool rowProgress = progress && m != CompareMode::RealData;
    if (rowProgress)
        progress->setRange(pairs.size());
    std::uint64_t done = 0;
    for (const Pair& p : pairs) {
        if (progress && progress->isCancelled())
            return makeError("compare.cancelled", {}, "cancelled");
        const Row26& n = (*npuRows)[p.npu];
        const Row26* b = p.bench ? &(*benchRows)[*p.bench] : nullptr;
        std::vector<Cell> row(ncols, Cell::text(kNA));
        auto text = [](const std::string& s) { return Cell::text(s); };
        row[0] = text(n.name);
        row[1] = text(b ? b->name : kNA);
        row[2] = text(n.dtype);
        row[3] = text(b ? b->dtype : kNA);
        row[4] = text(n.shape);
        row[5] = text(b ? b->shape : kNA);
        const std::string npuReq = n.requiresGrad.value_or(kNA);
        const std::string benchReq = b ? b->requiresGrad.value_or(kNA) : kNA;
        row[6] = text(npuReq);
        row[7] = text(benchReq);
        int next = 8;
        if (m == CompareMode::Md5) {
            row[8] = text(n.md5);
            row[9] = text(b ? b->md5 : kNA);
            next = 10;
        } else {
            for (int i = 0; i < 4; ++i) {
                row[static_cast<std::size_t>(colStats + i)] = summaryCell(n.stats[static_cast<std::size_t>(i)]);
                row[static_cast<std::size_t>(colStats + 4 + i)] = b ? summaryCell(b->stats[static_cast<std::size_t>(i)]) : text(kNA);
            }
            next = colStats + 8;
            if (m == CompareMode::RealData) {
                // Until the pair is compared (and for rows without a pair): six times unsupported.
                for (std::size_t c = 8; c <= 13; ++c)
                    row[c] = text("unsupported");
                if (b && n.dataName != "-1" && b->dataName != "-1")
                    tensorJobs.push_back(TensorJob { table.rows.size(), &n.dataName, &b->dataName });
            }
        }
        row[static_cast<std::size_t>(next)] = Cell::boolean(npuReq == benchReq);
        row[static_cast<std::size_t>(next + 1)] = text("pass");
        row[static_cast<std::size_t>(next + 2)] = text("[]");
        std::size_t col = static_cast<std::size_t>(next + 3);
        if (table.stackMode)
            row[col++] = n.stack ? Cell::pyText(*n.stack) : text(kNA);
        if (m == CompareMode::RealData)
            row[col] = Cell::pyText("[" + pyStrRepr(n.dataName) + ", " + pyStrRepr(b ? b->dataName : kNA) + "]");
        table.rows.push_back(std::move(row));
        if (da) {
            msprobe26::DaRow extra;
            extra.state = n.state;
            extra.apiOrigin = n.apiOrigin;
            extra.stack = n.stackFrames;
            extra.npuP2pOp = n.p2pOp;
            extra.npuP2pPeer = n.p2pPeer;
            // result_df['Bench P2POp op'] = bench_df['op'] aligns on the pandas index, that is, on the
            // NPU parse row number: bench parse row p.npu, NaN past the end (spec §3.1 quirk).
            if (p.npu < benchRows->size()) {
                extra.benchP2pOp = (*benchRows)[p.npu].p2pOp;
                extra.benchP2pPeer = (*benchRows)[p.npu].p2pPeer;
            } else {
                extra.benchP2pOp = extra.benchP2pPeer = Cell::number(std::numeric_limits<double>::quiet_NaN());
            }
            da->push_back(std::move(extra));
        }
        table.npuEntry.push_back(n.entry);
        table.matched.push_back(b != nullptr);
        table.colors.push_back(RowColor::None);
        if (rowProgress)
            progress->advance(++done);
    }
    return tensorJobs;
}

/// The tensor pairs on -j threads (util/workgroup: a large pair's chunks go to idle threads); each job writes only
/// its own slot and the cells are set in row order afterwards, so nothing depends on the thread count. Returns the
/// rows whose tensor file could not be read, with why.
Result<std::vector<std::pair<std::size_t, std::string>>> compareTensorPairs(const std::vector<TensorJob>& tensorJobs,
                                                                           const dump::DumpFile& npuFile,
                                                                           const dump::DumpFile& benchFile,
                                                                           const CompareOptions& options,
                                                                           ProgressSink* progress, CompareTable& table)
{
    // Tensor files only through the sides' resolvers (tensor/resolver.h), handed in by the pipeline.
    const auto npuTensors = options.npuTensors ? options.npuTensors : tensorResolverOf(npuFile);
    const auto benchTensors = options.benchTensors ? options.benchTensors : tensorResolverOf(benchFile);
    std::vector<std::pair<std::size_t, std::string>> unreadable;
    if (tensorJobs.empty())
        return unreadable;
    std::vector<msprobe26::TensorFilesOutcome> outcomes(tensorJobs.size());
    const bool completed = parallelForSplittable(
        tensorJobs.size(), options.threads,
        [&](std::size_t i, Splitter& splitter) {
            const TensorJob& job = tensorJobs[i];
            // The pair this thread is likely to take next is read ahead while a large one is computed.
            const std::size_t ahead = i + splitter.threads();
            const auto readAhead = [&] {
                if (ahead < tensorJobs.size()) {
                    npuTensors->prefetch(*tensorJobs[ahead].npuName);
                    benchTensors->prefetch(*tensorJobs[ahead].benchName);
                }
            };
            outcomes[i] = msprobe26::compareTensorFiles(*npuTensors, *job.npuName, *benchTensors, *job.benchName,
                                                        splitter, readAhead);
        },
        progress);
    if (!completed)
        return makeError("compare.cancelled", fileLocation(npuFile.path),
                         "the compare was cancelled");
    for (std::size_t i = 0; i < tensorJobs.size(); ++i) {
        const std::size_t r = tensorJobs[i].row;
        const msprobe26::RealDataMetrics& metrics = outcomes[i].metrics;
        table.rows.set(r, 8, metrics.cosine);
        table.rows.set(r, 9, metrics.eucDist);
        table.rows.set(r, 10, metrics.maxAbsErr);
        table.rows.set(r, 11, metrics.maxRelativeErr);
        table.rows.set(r, 12, metrics.oneThousandthErrRatio);
        table.rows.set(r, 13, metrics.fiveThousandthsErrRatio);
        if (!outcomes[i].unreadable.empty())
            unreadable.emplace_back(r, std::move(outcomes[i].unreadable));
    }
    return unreadable;
}

/// pandas' fillna on the unmatched rows re-infers each object column: an NPU stat column holding only numbers there
/// becomes float64, so ints print as 4.0 (compare-spec §14, see docs).
void floatUnmatchedStats(CompareTable& table, int colStats)
{
    for (int i = 0; i < 4; ++i) {
        const auto c = static_cast<std::size_t>(colStats + i);
        bool anyRow = false;
        bool allNumbers = true;
        bool anyFloat = false;
        for (std::size_t r = 0; r < table.rows.size(); ++r) {
            if (table.matched[r])
                continue;
            anyRow = true;
            const Cell& cell = table.rows[r][c];
            allNumbers = allNumbers && cell.isNumber();
            anyFloat = anyFloat || cell.isFloat();
        }
        if (!anyRow || !allNumbers || !anyFloat)
            continue;
        for (std::size_t r = 0; r < table.rows.size(); ++r) {
            const CellView cell = table.rows.view(r, c);
            if (!table.matched[r] && cell.kind == CellKind::Int)
                table.rows.set(r, c, Cell::number(static_cast<double>(cell.integer)));
        }
    }
}

/// Statistics mode: the diff and relative-error columns of every row.
void fillStatsDiffs(CompareTable& table, int colStats)
{
    for (int i = 0; i < 4; ++i) {
        const int nc = colStats + i;
        const int bc = colStats + 4 + i;
        const bool ni = columnIsInt(table.rows, nc);
        const bool bi = columnIsInt(table.rows, bc);
        for (auto row : table.rows) {
            auto [d, rel] = msprobe26::statsDiff(row[static_cast<std::size_t>(nc)], row[static_cast<std::size_t>(bc)], ni, bi);
            row[static_cast<std::size_t>(8 + i)] = Cell::text(d);
            row[static_cast<std::size_t>(12 + i)] = Cell::text(rel);
        }
    }
}

/// compareDumps, or with `da` set the table msprobe 26 builds for -da (first_diff_analyze): tensor dumps
/// compared as statistics, its own Result/Err_message rules instead of the checkers, and the -da columns of
/// each row in *da.
Result<std::shared_ptr<const CompareTable>> compareDumpsImpl(const dump::DumpFile& npuFile,
                                                               const dump::DumpFile& benchFile,
                                                               const CompareOptions& options, ProgressSink* progress,
                                                               std::vector<msprobe26::DaRow>* da)
{
    auto mode = msprobe26::detectMode(npuFile, benchFile);
    if (!mode)
        return mode.error();
    if (da && *mode == CompareMode::RealData)
        mode = CompareMode::Summary; // acc_compare.py:279-280: no tensor is loaded for -da
    auto table = std::make_shared<CompareTable>();
    table->mode = *mode;
    table->stackMode = options.stackMode && options.stack;
    table->header = msprobe26::headerFor(*mode, table->stackMode);
    auto paired = pairRows(npuFile, benchFile, options, *table);
    if (!paired)
        return paired.error();

    const CompareMode m = *mode;
    const int colStats = m == CompareMode::RealData ? 14 : 16;
    auto tensorJobs = layOutRows(*paired, *table, progress, da);
    if (!tensorJobs)
        return tensorJobs.error();
    auto unreadable = compareTensorPairs(*tensorJobs, npuFile, benchFile, options, progress, *table);
    if (!unreadable)
        return unreadable.error();
    if (m != CompareMode::Md5)
        floatUnmatchedStats(*table, colStats);
    if (m == CompareMode::Summary)
        fillStatsDiffs(*table, colStats);

    if (da)
        applyDaVerdicts(*table);
    else
        msprobe26::applyCheckers(*table);
    // After the verdicts, which would judge an unread row by its placeholders: such a row is an error.
    const int resultColumn = table->column("Result");
    const int messageColumn = table->column("Err_message");
    for (const auto& [r, message] : *unreadable) {
        if (resultColumn >= 0)
            table->rows.set(r, static_cast<std::size_t>(resultColumn), Cell::text("error"));
        if (messageColumn >= 0)
            table->rows.set(r, static_cast<std::size_t>(messageColumn), Cell::text(jsonStringList({ message })));
    }
    return std::shared_ptr<const CompareTable>(std::move(table));
}

} // namespace

Result<std::shared_ptr<const CompareTable>> compareDumps(const dump::DumpFile& npuFile, const dump::DumpFile& benchFile,
                                                           const CompareOptions& options, ProgressSink* progress)
{
    return msprobe26::compareDumpsImpl(npuFile, benchFile, options, progress, nullptr);
}

Result<DaTable> compareDumpsForDiffAnalyze(const dump::DumpFile& npu, const dump::DumpFile& bench,
                                               const CompareOptions& options)
{
    msprobe26::DaTable out;
    auto table = msprobe26::compareDumpsImpl(npu, bench, options, nullptr, &out.rows);
    if (!table)
        return table.error();
    out.table = *table;
    return out;
}

} // namespace probescope::compare::msprobe26
