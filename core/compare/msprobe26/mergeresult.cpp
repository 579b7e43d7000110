// SPDX-License-Identifier: Apache-2.0
#include "core/compare/msprobe26/mergeresult.h"

#include "core/compare/table/pytext.h"
#include "core/util/fileio.h"
#include "core/util/folderlist.h"
#include "core/util/xlsxreader.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cfloat>
#include <limits>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <sys/stat.h>

namespace probescope::compare::msprobe26 {

namespace {

Diagnostic mergeError(std::string id, const std::filesystem::path& file, std::string message)
{
    return makeError(std::move(id), fileLocation(file), std::move(message));
}

const std::vector<std::string> kAllIndexes { "Cosine", "EucDist", "MaxAbsErr", "MaxRelativeErr",
                                             "One Thousandth Err Ratio", "Five Thousandths Err Ratio" };
const std::vector<std::string> kSummaryIndexes { "Max diff",       "Min diff",       "Mean diff",
                                                 "L2norm diff",    "MaxRelativeErr", "MinRelativeErr",
                                                 "MeanRelativeErr", "NormRelativeErr" };
constexpr std::string_view kReqGrad = "Requires_grad Consistent";
constexpr std::string_view kNpuName = "NPU Name";
constexpr std::string_view kNpuMax = "NPU max";
constexpr std::string_view kBenchMax = "Bench max";

std::vector<std::string> headerOf(std::initializer_list<std::string_view> head, const std::vector<std::string>& mid,
                                  std::initializer_list<std::string_view> tail)
{
    std::vector<std::string> out(head.begin(), head.end());
    out.insert(out.end(), mid.begin(), mid.end());
    out.insert(out.end(), tail.begin(), tail.end());
    return out;
}

enum class DumpMode { Unknown, All, Summary, Md5 };

DumpMode dumpModeOf(const std::vector<std::string>& header)
{
    static const std::initializer_list<std::string_view> kHead = { "NPU Name",           "Bench Name",
                                                                   "NPU Dtype",          "Bench Dtype",
                                                                   "NPU Tensor Shape",   "Bench Tensor Shape",
                                                                   "NPU Requires_grad",  "Bench Requires_grad" };
    static const std::vector<std::string> kAllMid = [] {
        auto v = kAllIndexes;
        for (const char* s : { "NPU max", "NPU min", "NPU mean", "NPU l2norm", "Bench max", "Bench min", "Bench mean",
                               "Bench l2norm" })
            v.emplace_back(s);
        return v;
    }();
    static const std::vector<std::string> kSummaryMid = [] {
        auto v = kSummaryIndexes;
        for (const char* s : { "NPU max", "NPU min", "NPU mean", "NPU l2norm", "Bench max", "Bench min", "Bench mean",
                               "Bench l2norm" })
            v.emplace_back(s);
        return v;
    }();
    static const std::vector<std::string> kMd5Mid { "NPU MD5", "BENCH MD5" };
    const auto is = [&](const std::vector<std::string>& mid, std::initializer_list<std::string_view> tail) {
        return header == headerOf(kHead, mid, tail);
    };
    if (is(kAllMid, { kReqGrad, "Result", "Err_message", "Data_name" })
        || is(kAllMid, { kReqGrad, "Result", "Err_message", "NPU_Stack_Info", "Data_name" }))
        return DumpMode::All;
    if (is(kSummaryMid, { kReqGrad, "Result", "Err_message" })
        || is(kSummaryMid, { kReqGrad, "Result", "Err_message", "NPU_Stack_Info" }))
        return DumpMode::Summary;
    if (is(kMd5Mid, { kReqGrad, "Result", "Err_message" })
        || is(kMd5Mid, { kReqGrad, "Result", "Err_message", "NPU_Stack_Info" }))
        return DumpMode::Md5;
    return DumpMode::Unknown;
}

/// A value as pandas holds it after read_excel(keep_default_na=False) and its column's type inference.
struct PyValue
{
    enum class Kind { Empty, Int, Float, Text, Bool };
    Kind kind = Kind::Empty;
    double number = 0.0;
    std::string text; ///< Text; Int: its digits
    bool boolean = false;
};

/// str(value): what msprobe's replacement text `NPU:{str(npu_max)}` shows.
std::string pyString(const PyValue& v)
{
    switch (v.kind) {
    case PyValue::Kind::Empty:
        return {};
    case PyValue::Kind::Int:
        return v.text;
    case PyValue::Kind::Float:
        return pyFloatRepr(v.number);
    case PyValue::Kind::Bool:
        return v.boolean ? "True" : "False";
    case PyValue::Kind::Text:
        break;
    }
    return v.text;
}

XlsxSheetCell toCell(const PyValue& v)
{
    switch (v.kind) {
    case PyValue::Kind::Empty:
        return {};
    case PyValue::Kind::Int:
    case PyValue::Kind::Float:
        return XlsxSheetCell::ofNumber(v.number);
    case PyValue::Kind::Bool:
        return XlsxSheetCell::ofBool(v.boolean);
    case PyValue::Kind::Text:
        break;
    }
    return XlsxSheetCell::ofText(v.text);
}

bool isIntText(std::string_view t)
{
    std::size_t i = (!t.empty() && (t[0] == '-' || t[0] == '+')) ? 1 : 0;
    if (i == t.size())
        return false;
    for (; i < t.size(); ++i) {
        if (t[i] < '0' || t[i] > '9')
            return false;
    }
    return true;
}

/// pandas' xstrtod (pandas/_libs/src/parser/tokenizer.c), the parser maybe_convert_numeric uses for a text cell:
/// at most 17 digits (the leading zero of "0.00201..." counts) are accumulated in a double, the rest dropped, and
/// the result scaled by powers of ten. It is not correctly rounded: "0.0020135045051574707" reads as
/// 0.0020135045051574, which is what msprobe's merged workbook shows. Returns nullopt when the whole text is not a
/// number (trailing blanks allowed); "inf", "infinity" (any case, signed) are floatify's additions.
std::optional<double> pandasNumber(std::string_view text)
{
    const auto isDigitAscii = [](char c) { return c >= '0' && c <= '9'; };
    const auto isSpaceAscii = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; };
    std::size_t p = 0;
    const std::size_t n = text.size();
    auto at = [&](std::size_t i) { return i < n ? text[i] : '\0'; };
    while (p < n && isSpaceAscii(text[p]))
        ++p;
    bool negative = false;
    if (at(p) == '-') {
        negative = true;
        ++p;
    } else if (at(p) == '+') {
        ++p;
    }
    constexpr int kMaxDigits = 17;
    double number = 0.0;
    int exponent = 0;
    int numDigits = 0;
    int numDecimals = 0;
    while (isDigitAscii(at(p)) && numDigits <= kMaxDigits) {
        number = number * 10. + (at(p) - '0');
        ++numDigits;
        ++p;
    }
    if (at(p) == '.') {
        ++p;
        while (numDigits < kMaxDigits && isDigitAscii(at(p))) {
            number = number * 10. + (at(p) - '0');
            ++p;
            ++numDigits;
            ++numDecimals;
        }
        if (numDigits >= kMaxDigits)
            while (isDigitAscii(at(p)))
                ++p;
        exponent -= numDecimals;
    }
    if (numDigits == 0) {
        // floatify's special words.
        std::string lower;
        for (const char c : text)
            lower += static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
        if (lower == "inf" || lower == "+inf" || lower == "infinity" || lower == "+infinity")
            return std::numeric_limits<double>::infinity();
        if (lower == "-inf" || lower == "-infinity")
            return -std::numeric_limits<double>::infinity();
        return std::nullopt;
    }
    if (negative)
        number = -number;
    if (at(p) == 'e' || at(p) == 'E') {
        ++p;
        bool negExp = false;
        if (at(p) == '-') {
            negExp = true;
            ++p;
        } else if (at(p) == '+') {
            ++p;
        }
        int digits = 0;
        int e = 0;
        while (digits < kMaxDigits && isDigitAscii(at(p))) {
            e = e * 10 + (at(p) - '0');
            ++digits;
            ++p;
        }
        exponent += negExp ? -e : e;
        if (digits == 0)
            return std::nullopt; // "1e" un-consumes the 'e', which then is trailing garbage
    }
    if (exponent < DBL_MIN_EXP || exponent > DBL_MAX_EXP)
        return std::nullopt;
    double p10 = 10.;
    int k = exponent < 0 ? -exponent : exponent;
    while (k) {
        if (k & 1) {
            if (exponent < 0)
                number /= p10;
            else
                number *= p10;
        }
        k >>= 1;
        p10 *= p10;
    }
    while (p < n && isSpaceAscii(text[p]))
        ++p;
    if (p != n)
        return std::nullopt;
    return number;
}

std::optional<double> numericText(std::string_view t)
{
    if (t.empty() || t.size() > 4096)
        return std::nullopt;
    return pandasNumber(t);
}

/// One compare workbook as a table: header and rows of PyValues, column types inferred as pandas does.
struct Table
{
    std::vector<std::string> header;
    std::vector<std::vector<PyValue>> rows;
    std::optional<std::size_t> column(std::string_view name) const
    {
        for (std::size_t i = 0; i < header.size(); ++i) {
            if (header[i] == name)
                return i;
        }
        return std::nullopt;
    }
};

Result<Table> readTable(const std::filesystem::path& file)
{
    auto sheets = readXlsxSheets(file);
    if (!sheets)
        return sheets.error();
    Table table;
    if (sheets->empty() || sheets->front().rows.empty())
        return table;
    const auto& rows = sheets->front().rows;
    std::uint32_t width = 0;
    for (const auto& row : rows) {
        for (const auto& [col, value] : row.cells)
            width = std::max(width, col + 1);
    }
    if (width > 16384)
        return mergeError("merge.read", file, file.string() + ": too many columns");
    // The header: a cell's text (a number by its text); a missing one is "Unnamed: k" as pandas names it.
    for (std::uint32_t c = 0; c < width; ++c) {
        const XlsxValue* v = rows.front().at(c);
        if (!v || v->kind == XlsxValue::Kind::Empty)
            table.header.push_back("Unnamed: " + std::to_string(c));
        else if (v->kind == XlsxValue::Kind::Bool)
            table.header.emplace_back(v->text == "1" ? "True" : "False");
        else
            table.header.push_back(v->text);
    }
    // Raw cells, column by column inferred afterwards.
    std::vector<std::vector<const XlsxValue*>> raw;
    for (std::size_t r = 1; r < rows.size(); ++r) {
        std::vector<const XlsxValue*> line(width, nullptr);
        bool any = false;
        for (const auto& [col, value] : rows[r].cells) {
            if (col < width && value.kind != XlsxValue::Kind::Empty) {
                line[col] = &value;
                any = true;
            }
        }
        if (any) // pandas skips blank lines
            raw.push_back(std::move(line));
    }
    table.rows.assign(raw.size(), std::vector<PyValue>(width));
    for (std::uint32_t c = 0; c < width; ++c) {
        // maybe_convert_numeric succeeds only when every cell is a number (or a numeric text); an empty cell ("")
        // or any other text keeps the column as Python objects.
        bool numeric = !raw.empty();
        bool allBool = !raw.empty();
        bool allInt = true;
        for (const auto& line : raw) {
            const XlsxValue* v = line[c];
            const auto kind = v ? v->kind : XlsxValue::Kind::Empty;
            allBool = allBool && kind == XlsxValue::Kind::Bool;
            if (kind == XlsxValue::Kind::Number) {
                allInt = allInt && isIntText(v->text);
            } else if (kind == XlsxValue::Kind::Text && numericText(v->text)) {
                allInt = allInt && isIntText(v->text);
            } else {
                numeric = false;
            }
        }
        for (std::size_t r = 0; r < raw.size(); ++r) {
            const XlsxValue* v = raw[r][c];
            PyValue& out = table.rows[r][c];
            if (!v || v->kind == XlsxValue::Kind::Empty) {
                out.kind = PyValue::Kind::Text; // keep_default_na=False: an empty cell reads as ""
                continue;
            }
            if (v->kind == XlsxValue::Kind::Bool) {
                out.kind = PyValue::Kind::Bool;
                out.boolean = v->text == "1";
                (void)allBool;
                continue;
            }
            if (numeric) {
                // A number cell keeps openpyxl's exact value; a text cell goes through pandas' xstrtod.
                const double d = v->kind == XlsxValue::Kind::Text ? numericText(v->text).value_or(0.0)
                                                                  : std::strtod(v->text.c_str(), nullptr);
                out.number = d;
                if (allInt) {
                    out.kind = PyValue::Kind::Int;
                    out.text = std::to_string(static_cast<long long>(d));
                } else {
                    out.kind = PyValue::Kind::Float;
                }
                continue;
            }
            if (v->kind == XlsxValue::Kind::Number) {
                // openpyxl's _cast_number: an int unless the text has '.', 'e' or 'E'.
                out.number = std::strtod(v->text.c_str(), nullptr);
                if (v->text.find_first_of(".eE") == std::string::npos) {
                    out.kind = PyValue::Kind::Int;
                    out.text = v->text == "-0" ? "0" : v->text;
                } else {
                    out.kind = PyValue::Kind::Float;
                }
                continue;
            }
            out.kind = PyValue::Kind::Text;
            out.text = v->text;
        }
    }
    return table;
}

/// table_value_is_valid: a text that is not a number must not start (or continue after ';') with a formula lead.
bool valueIsSafe(const PyValue& v)
{
    if (v.kind != PyValue::Kind::Text)
        return true;
    const std::string& t = v.text;
    // float(value) succeeds: "-1.00" is a number, not a formula.
    if (!t.empty() && t.find_first_of("xXpP") == std::string::npos) {
        char* end = nullptr;
        std::strtod(t.c_str(), &end);
        while (end && (*end == ' ' || *end == '\t' || *end == '\n'))
            ++end;
        if (end && *end == '\0' && end != t.c_str())
            return true;
    }
    auto lead = [&](std::size_t at) {
        if (at >= t.size())
            return false;
        const char c = t[at];
        if (c == '+' || c == '-' || c == '=' || c == '%' || c == '@')
            return true;
        // Full-width ＋－＝％＠ (U+FF0B, U+FF0D, U+FF1D, U+FF05, U+FF20).
        if (t.compare(at, 2, "\xef\xbc") == 0 && at + 2 < t.size()) {
            const auto b = static_cast<unsigned char>(t[at + 2]);
            return b == 0x8b || b == 0x8d || b == 0x9d || b == 0x85;
        }
        if (t.compare(at, 3, "\xef\xbc\xa0") == 0)
            return true;
        return false;
    };
    if (lead(0))
        return false;
    for (std::size_t i = t.find(';'); i != std::string::npos; i = t.find(';', i + 1)) {
        if (lead(i + 1))
            return false;
    }
    return true;
}

/// The rank of `compare_result_rank{N}[-rank{N}]_{14 digits}.xlsx`; nullopt for another name.
std::optional<long long> rankOfName(std::string_view name, bool& singleRank)
{
    singleRank = false;
    constexpr std::string_view prefix = "compare_result_";
    if (name.rfind(prefix, 0) != 0)
        return std::nullopt;
    std::string_view rest = name.substr(prefix.size());
    auto tail = [](std::string_view t) {
        if (t.size() != 1 + 14 + 5 || t[0] != '_' || t.substr(15) != ".xlsx")
            return false;
        return std::all_of(t.begin() + 1, t.begin() + 15, [](char c) { return c >= '0' && c <= '9'; });
    };
    if ((rest.rfind("rank_", 0) == 0 && tail(rest.substr(4))) || (rest.rfind("rank-rank_", 0) == 0 && tail(rest.substr(9)))) {
        singleRank = true;
        return std::nullopt;
    }
    if (rest.rfind("rank", 0) != 0)
        return std::nullopt;
    rest.remove_prefix(4);
    std::size_t digits = 0;
    while (digits < rest.size() && rest[digits] >= '0' && rest[digits] <= '9')
        ++digits;
    if (digits == 0 || digits > 12)
        return std::nullopt;
    const std::string_view number = rest.substr(0, digits);
    rest.remove_prefix(digits);
    if (rest.rfind("-rank", 0) == 0 && rest.substr(5, digits) == number)
        rest.remove_prefix(5 + digits);
    if (!tail(rest))
        return std::nullopt;
    return std::stoll(std::string(number));
}

} // namespace

const std::vector<std::string>& tensorMergeIndexes()
{
    return kAllIndexes;
}

const std::vector<std::string>& statisticsMergeIndexes()
{
    return kSummaryIndexes;
}

Result<MergeConfig> loadMergeConfig(const std::filesystem::path& path)
{
    auto text = readTextFile(path);
    if (!text)
        return text.error();
    MergeConfig config;
    try {
        const YAML::Node root = YAML::Load(*text);
        if (!root || root.IsNull() || (root.IsMap() && root.size() == 0))
            return mergeError("merge.config", path, path.string() + ": config.yaml is empty, please check.");
        if (!root.IsMap())
            return mergeError("merge.config", path, path.string() + ": not a mapping of api and compare_index");
        const YAML::Node api = root["api"];
        if (!api || api.IsNull() || (api.IsSequence() && api.size() == 0) || (api.IsScalar() && api.Scalar().empty()))
            return mergeError("merge.config", path, path.string() + ": The APIs required to merge data were not found.");
        if (!api.IsSequence())
            return mergeError("merge.config", path, path.string() + ": The config format of 'api' is incorrect, please check.");
        for (const auto& item : api) {
            if (!item.IsScalar())
                return mergeError("merge.config", path, path.string() + ": an entry of 'api' is not a name");
            config.apis.push_back(item.Scalar());
        }
        const YAML::Node indexes = root["compare_index"];
        if (indexes && !indexes.IsNull()) {
            if (!indexes.IsSequence())
                return mergeError("merge.config", path,
                                  path.string() + ": The config format of 'compare_index' is incorrect, please check.");
            for (const auto& item : indexes) {
                if (!item.IsScalar())
                    return mergeError("merge.config", path, path.string() + ": an entry of 'compare_index' is not a name");
                config.indexes.push_back(item.Scalar());
            }
        }
    } catch (const YAML::Exception& e) {
        return makeError("merge.config",
                         SourceLocation { path.string(), std::nullopt, static_cast<std::uint32_t>(e.mark.line + 1),
                                          static_cast<std::uint32_t>(e.mark.column + 1) },
                         path.string() + ": " + e.what());
    }
    return config;
}

Result<std::vector<XlsxSheet>> mergeCompareResults(const std::filesystem::path& inputDir, const MergeConfig& config,
                                                   std::vector<std::string>& notes)
{
    auto entries = listFolder(inputDir, 100000);
    if (!entries)
        return entries.error();
    std::vector<std::pair<long long, std::filesystem::path>> files;
    for (const auto& entry : *entries) {
        const std::string& name = entry.name;
        if (name.size() < 5 || name.compare(name.size() - 5, 5, ".xlsx") != 0)
            continue;
        const auto path = inputDir / name;
        if (entry.kind == FolderEntry::Kind::Symlink)
            return mergeError("merge.input", path, path.string() + " is a symbolic link; refused");
        if (entry.kind != FolderEntry::Kind::File)
            return mergeError("merge.input", path, path.string() + " is not a regular file");
        bool single = false;
        const auto rank = rankOfName(name, single);
        if (single) {
            notes.push_back("Single rank compare result do not need to be merged.");
            continue;
        }
        if (!rank)
            return mergeError("merge.input", path, "Wrong compare result name: " + name + ", please check!");
        files.emplace_back(*rank, path);
    }
    std::stable_sort(files.begin(), files.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    if (files.size() < 2)
        return mergeError("merge.input", inputDir,
                          inputDir.string() + ": Number of compare result is no more than 1, no need to merge.");
    for (std::size_t i = 1; i < files.size(); ++i) {
        if (files[i].first == files[i - 1].first)
            return mergeError("merge.input", files[i].second,
                              "two compare results of rank " + std::to_string(files[i].first) + ": "
                                  + files[i - 1].second.filename().string() + " and "
                                  + files[i].second.filename().string());
    }

    // msprobe's shared compare_index list: filled with every index of the dump mode by the first rank when empty.
    std::vector<std::string> shared = config.indexes;
    std::vector<std::string> indexList;
    struct RankResult
    {
        long long rank;
        // compare index -> (full name -> value), names in first-found order
        std::vector<std::vector<std::pair<std::string, PyValue>>> perIndex;
    };
    std::vector<RankResult> ranks;
    for (const auto& [rank, path] : files) {
        auto table = readTable(path);
        if (!table)
            return table.error();
        if (table->header.empty() || table->rows.empty()) {
            notes.push_back("Rank" + std::to_string(rank) + " compare result is empty and will not shown in merged result.");
            continue;
        }
        const DumpMode mode = dumpModeOf(table->header);
        if (mode == DumpMode::Unknown) {
            notes.push_back("A valid dump task can not be identified from rank" + std::to_string(rank)
                            + " compare result, please check! The compare result will not be shown in merged result.");
            continue;
        }
        if (mode == DumpMode::Md5) {
            notes.push_back("Rank" + std::to_string(rank) + " compare result is 'md5' dump task and does not support "
                            "merging result, please check! The compare result will not be shown in merged result.");
            continue;
        }
        std::vector<std::string> valid = mode == DumpMode::All ? kAllIndexes : kSummaryIndexes;
        valid.emplace_back(kReqGrad);
        std::vector<std::string> indexes;
        if (shared.empty()) {
            shared = valid;
            indexes = shared;
        } else if (std::all_of(shared.begin(), shared.end(), [&](const std::string& s) {
                       return std::find(valid.begin(), valid.end(), s) != valid.end();
                   })) {
            indexes = shared;
        } else {
            notes.push_back("Compare indexes in rank" + std::to_string(rank)
                            + " compare result are not consistent with those in other compare results, please check!");
            continue;
        }
        const auto nameColumn = table->column(kNpuName);
        const auto npuMax = table->column(kNpuMax);
        const auto benchMax = table->column(kBenchMax);
        std::vector<std::optional<std::size_t>> indexColumns;
        for (const auto& index : indexes) {
            indexColumns.push_back(table->column(index));
            if (!indexColumns.back())
                return mergeError("merge.read", path, path.string() + ": no column '" + index + "'");
        }
        // extract_api_full_name: every NPU Name holding "<api>." (a plain substring; msprobe's pattern escapes only
        // the dots), api by api.
        std::vector<std::size_t> rowsFound;
        for (const auto& api : config.apis) {
            const std::string needle = api + ".";
            std::size_t before = rowsFound.size();
            for (std::size_t r = 0; r < table->rows.size(); ++r) {
                const PyValue& name = table->rows[r][*nameColumn];
                if (name.kind == PyValue::Kind::Text && name.text.find(needle) != std::string::npos)
                    rowsFound.push_back(r);
            }
            if (rowsFound.size() == before)
                notes.push_back(api + " not found in rank" + std::to_string(rank) + " compare result.");
        }
        RankResult result { rank, {} };
        for (std::size_t k = 0; k < indexes.size(); ++k) {
            std::vector<std::pair<std::string, PyValue>> values;
            for (const std::size_t found : rowsFound) {
                const std::string& fullName = table->rows[found][*nameColumn].text;
                if (!valueIsSafe(table->rows[found][*nameColumn]))
                    return mergeError("merge.read", path, "Malicious value [" + fullName
                                                              + "] is not allowed to be written into the merged xlsx.");
                // The value of the first row with this name (result_df.index[...][0]).
                std::size_t first = found;
                for (std::size_t r = 0; r < table->rows.size(); ++r) {
                    if (table->rows[r][*nameColumn].kind == PyValue::Kind::Text
                        && table->rows[r][*nameColumn].text == fullName) {
                        first = r;
                        break;
                    }
                }
                PyValue value = table->rows[first][*indexColumns[k]];
                if (!valueIsSafe(value))
                    return mergeError("merge.read", path, "Malicious value [" + value.text
                                                              + "] is not allowed to be written into the merged xlsx.");
                // replace_compare_index_dict: N/A, unsupported, Nan become the two maxima.
                if (value.kind == PyValue::Kind::Text
                    && (value.text == "N/A" || value.text == "unsupported" || value.text == "Nan") && npuMax && benchMax) {
                    value = PyValue { PyValue::Kind::Text, 0.0,
                                      "NPU:" + pyString(table->rows[first][*npuMax])
                                          + "  Bench:" + pyString(table->rows[first][*benchMax]),
                                      false };
                }
                const auto existing = std::find_if(values.begin(), values.end(),
                                                   [&](const auto& p) { return p.first == fullName; });
                if (existing == values.end())
                    values.emplace_back(fullName, std::move(value));
                else
                    existing->second = std::move(value);
            }
            result.perIndex.push_back(std::move(values));
        }
        if (indexList.empty())
            indexList = indexes;
        ranks.push_back(std::move(result));
    }
    if (ranks.empty())
        return mergeError("merge.input", inputDir, inputDir.string() + ": Nothing to merge.");
    if (indexList.empty())
        return mergeError("merge.input", inputDir, inputDir.string() + ": No compare index recognized, please check!");

    // df_merge: an outer merge on NPU Name, rank after rank: the first rank's names in its order, then each later
    // rank's new names appended (pandas 1.5 keeps that order for how='outer' on unsorted keys).
    std::vector<XlsxSheet> sheets;
    for (std::size_t k = 0; k < indexList.size(); ++k) {
        XlsxSheet sheet { indexList[k], { std::string(kNpuName) }, {} };
        std::vector<std::string> names;
        std::map<std::string, std::size_t, std::less<>> rowOf;
        for (const auto& rank : ranks) {
            sheet.header.push_back("rank" + std::to_string(rank.rank));
            for (const auto& [name, value] : rank.perIndex[k]) {
                if (rowOf.emplace(name, names.size()).second)
                    names.push_back(name);
            }
        }
        sheet.rows.assign(names.size(), std::vector<XlsxSheetCell>(ranks.size() + 1));
        for (std::size_t r = 0; r < names.size(); ++r)
            sheet.rows[r][0] = XlsxSheetCell::ofText(names[r]);
        for (std::size_t c = 0; c < ranks.size(); ++c) {
            for (const auto& [name, value] : ranks[c].perIndex[k])
                sheet.rows[rowOf[name]][c + 1] = toCell(value);
        }
        sheets.push_back(std::move(sheet));
    }
    return sheets;
}

Result<MergeOutcome> mergeResult(const std::filesystem::path& inputDir, const std::filesystem::path& outDir,
                                 const std::filesystem::path& configPath)
{
    struct stat st {};
    if (::stat(inputDir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
        return mergeError("merge.input", inputDir, inputDir.string() + " is not a folder");
    auto config = loadMergeConfig(configPath);
    if (!config)
        return config.error();
    MergeOutcome outcome;
    auto sheets = mergeCompareResults(inputDir, *config, outcome.notes);
    if (!sheets)
        return sheets.error();
    if (::mkdir(outDir.c_str(), 0777) != 0 && errno != EEXIST)
        return mergeError("merge.output", outDir, "cannot create folder " + outDir.string() + ": " + std::strerror(errno));
    if (::stat(outDir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
        return mergeError("merge.output", outDir, outDir.string() + " is not a folder");
    const std::string stem = "multi_ranks_compare_merge_" + localTimestamp();
    for (int attempt = 0; attempt < 1000; ++attempt) {
        const auto path = outDir / (stem + (attempt ? "_" + std::to_string(attempt) : std::string()) + ".xlsx");
        if (::lstat(path.c_str(), &st) == 0)
            continue;
        auto files = writeXlsxSheetsWithCsv(*sheets, path);
        if (!files)
            return files.error();
        outcome.files = std::move(*files);
        return outcome;
    }
    return mergeError("merge.output", outDir, "no free name for " + stem + ".xlsx in " + outDir.string());
}

} // namespace probescope::compare::msprobe26
