// SPDX-License-Identifier: Apache-2.0
#include "core/setupcheck/configcompare.h"

#include "core/setupcheck/pyjson.h"
#include "core/setupcheck/pytextutil.h"
#include "core/setupcheck/sequencematcher.h"
#include "core/setupcheck/tables.h"
#include "core/util/fileio.h"
#include "core/util/folderlist.h"
#include "core/util/pytext.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <cmath>
#include <map>
#include <optional>
#include <sys/stat.h>

namespace probescope::setupcheck {

namespace {

using compare::XlsxSheet;
using compare::XlsxSheetCell;
using Cell = XlsxSheetCell;

constexpr std::string_view kPass = "pass";
constexpr std::string_view kWarning = "warning";
constexpr std::string_view kError = "error";

Diagnostic checkError(std::string id, const std::filesystem::path& file, std::string message)
{
    return makeError(std::move(id), fileLocation(file),
                     file.string() + ": " + std::move(message));
}

Cell text(std::string_view s)
{
    return Cell::ofText(std::string(s));
}

Cell number(double v)
{
    return Cell::ofNumber(v);
}

bool pathExists(const std::filesystem::path& p)
{
    struct stat st {};
    return ::stat(p.c_str(), &st) == 0;
}

/// process_pass_check: error if any row is an error, else warning if any is a warning, else pass.
std::string_view passCheck(const std::vector<std::vector<Cell>>& rows, std::size_t levelColumn)
{
    bool warning = false;
    for (const auto& row : rows) {
        const auto& level = row[levelColumn];
        if (level.kind == Cell::Kind::Text && level.text == kError)
            return kError;
        warning = warning || (level.kind == Cell::Kind::Text && level.text == kWarning);
    }
    return warning ? kWarning : kPass;
}

/// `False not in df[column].values`: only a bool False cell (or a number 0, which numpy's == also finds) fails.
std::string_view passUnlessFalse(const std::vector<std::vector<Cell>>& rows, std::size_t column)
{
    for (const auto& row : rows) {
        const auto& c = row[column];
        if ((c.kind == Cell::Kind::Bool && !c.boolean) || (c.kind == Cell::Kind::Number && c.number == 0.0))
            return kError;
    }
    return kPass;
}

// ---- env -------------------------------------------------------------------------------------------------------

PyJson envDefault(const EnvDefault& d)
{
    switch (d.kind) {
    case EnvDefault::Kind::Bool:
        return PyJson(d.number != 0);
    case EnvDefault::Kind::Int:
        return PyJson(d.number);
    case EnvDefault::Kind::Text:
        break;
    }
    return PyJson(std::string(d.text));
}

/// "npu" when any variable name holds ASCEND (get_device_type).
bool isNpu(const PyJson& env)
{
    if (!env.is_object())
        return false;
    for (const auto& [key, value] : env.items()) {
        if (key.find("ASCEND") != std::string::npos)
            return true;
    }
    return false;
}

/// A truthy Python value (for `x if x else default`).
bool truthy(const PyJson& v)
{
    if (v.is_null())
        return false;
    if (v.is_boolean())
        return v.get<bool>();
    if (v.is_string())
        return !v.get_ref<const std::string&>().empty() || pyNumber(v).has_value();
    if (const auto n = pyNumber(v))
        return *n != 0.0;
    return !v.empty();
}

Result<XlsxSheet> compareEnv(const std::filesystem::path& benchFile, const std::filesystem::path& cmpFile)
{
    // msprobe calls compare_env_data(npu_path=bench, bench_path=cmp): inside it "cmp" is the bench pack and "bench"
    // the cmp pack, so the bench_* columns show the cmp pack. Kept: it is what users of msprobe see.
    auto x = loadPyJson(benchFile); // msprobe's cmp_data
    if (!x)
        return x.error();
    auto y = loadPyJson(cmpFile); // msprobe's bench_data
    if (!y)
        return y.error();
    if (!x->is_object())
        return checkError("config-check.env", benchFile, "not a JSON object of environment variables");
    if (!y->is_object())
        return checkError("config-check.env", cmpFile, "not a JSON object of environment variables");
    const bool xNpu = isNpu(*x);
    const bool yNpu = isNpu(*y);
    XlsxSheet sheet { "env", { "bench_env_name", "cmp_env_name", "bench_value", "cmp_value", "level" }, {} };
    auto lookup = [](const PyJson& env, const EnvSide& side) {
        const auto it = env.find(std::string(side.name));
        return it != env.end() ? *it : envDefault(side.defaultValue);
    };
    for (const auto& entry : envTable()) {
        const auto& xSide = xNpu ? entry.npu : entry.gpu;
        const auto& ySide = yNpu ? entry.npu : entry.gpu;
        if (!xSide && !ySide)
            continue;
        if (xSide) {
            const PyJson xValue = lookup(*x, *xSide);
            if (!ySide) {
                sheet.rows.push_back({ text("only cmp has this env"), text(xSide->name), text(""), pyCell(xValue),
                                       text(kWarning) });
                continue;
            }
            const PyJson yValue = lookup(*y, *ySide);
            if (!pyEqual(xValue, yValue))
                sheet.rows.push_back({ text(ySide->name), text(xSide->name), pyCell(yValue), pyCell(xValue),
                                       text(kError) });
        } else {
            const auto it = y->find(std::string(ySide->name));
            const PyJson yValue = it != y->end() && truthy(*it) ? *it : envDefault(ySide->defaultValue);
            sheet.rows.push_back({ text(ySide->name), text("only bench has this env"), pyCell(yValue), text(""),
                                   text(kWarning) });
        }
    }
    return sheet;
}

// ---- pip -------------------------------------------------------------------------------------------------------

/// load_pip_txt: "name=version" per line (universal newlines); a line that is not exactly two fields maps to "".
Result<std::map<std::string, std::string, std::less<>>> loadPip(const std::filesystem::path& file)
{
    auto content = readTextFile(file);
    if (!content)
        return content.error();
    std::map<std::string, std::string, std::less<>> out;
    const std::string_view all = *content;
    std::size_t start = 0;
    while (start < all.size()) {
        std::size_t end = all.find_first_of("\r\n", start);
        if (end == std::string_view::npos)
            end = all.size();
        const auto parts = pySplit(pyStrip(all.substr(start, end - start)), '=');
        out[parts[0]] = parts.size() == 2 ? parts[1] : std::string();
        start = end + 1;
        if (end < all.size() && all[end] == '\r' && start < all.size() && all[start] == '\n')
            ++start;
    }
    return out;
}

Result<XlsxSheet> comparePip(const std::filesystem::path& benchFile, const std::filesystem::path& cmpFile)
{
    auto bench = loadPip(benchFile);
    if (!bench)
        return bench.error();
    auto cmp = loadPip(cmpFile);
    if (!cmp)
        return cmp.error();
    XlsxSheet sheet { "pip", { "package", "bench version", "cmp version", "level" }, {} };
    for (const std::string_view package : dependencyTable()) {
        const auto b = bench->find(package);
        const auto c = cmp->find(package);
        const bool hasB = b != bench->end();
        const bool hasC = c != cmp->end();
        if (hasB != hasC || (hasB && b->second != c->second)) {
            sheet.rows.push_back({ text(package), text(hasB && !b->second.empty() ? b->second : "None"),
                                   text(hasC && !c->second.empty() ? c->second : "None"), text(kError) });
        }
    }
    return sheet;
}

// ---- hyperparameters -------------------------------------------------------------------------------------------

/// to_str_if_number: ints and floats (bools too) become their str().
PyJson toStrIfNumber(const PyJson& v)
{
    if (v.is_boolean() || v.is_number())
        return PyJson(pyStr(v));
    if (v.is_string() && pyNumber(v))
        return PyJson(pyStr(v));
    return v;
}

/// refine_json_keys: last dotted segment with '-' as '_' -> the original key. Two keys that refine alike keep the
/// first one's place and the last one's key (a dict assignment), so one of them is never compared.
std::vector<std::pair<std::string, std::string>> refineKeys(const PyJson& params)
{
    std::vector<std::pair<std::string, std::string>> out;
    std::map<std::string, std::size_t, std::less<>> at;
    for (const auto& [key, value] : params.items()) {
        const std::size_t dot = key.rfind('.');
        std::string refined = dot == std::string::npos ? key : key.substr(dot + 1);
        std::replace(refined.begin(), refined.end(), '-', '_');
        if (const auto it = at.find(refined); it != at.end()) {
            out[it->second].second = key;
        } else {
            at.emplace(refined, out.size());
            out.emplace_back(std::move(refined), key);
        }
    }
    return out;
}

/// Python's str.lower() on ASCII letters (names are ASCII in practice; documented).
std::string asciiLower(std::string_view s)
{
    std::string out(s);
    for (char& c : out) {
        if (c >= 'A' && c <= 'Z')
            c = static_cast<char>(c - 'A' + 'a');
    }
    return out;
}

struct Match
{
    std::string name; ///< refined name in the cmp set
    std::string with; ///< matched_with
};

std::optional<Match> fuzzyMatch(const std::string& param, const std::vector<std::pair<std::string, std::string>>& cmp)
{
    auto has = [&](std::string_view name) {
        return std::any_of(cmp.begin(), cmp.end(), [&](const auto& p) { return p.first == name; });
    };
    if (has(param))
        return Match { param, "pure name" };
    const AliasEntry* canonical = nullptr;
    for (const auto& entry : aliasTable()) {
        if (param == entry.standard
            || std::find(entry.aliases.begin(), entry.aliases.end(), param) != entry.aliases.end()) {
            canonical = &entry;
            break;
        }
    }
    if (canonical) {
        if (has(canonical->standard))
            return Match { std::string(canonical->standard), "mapping" };
        for (const auto alias : canonical->aliases) {
            if (has(alias))
                return Match { std::string(alias), "mapping" };
        }
    }
    std::optional<std::string> best;
    double bestRatio = 0.8;
    const std::string lowered = asciiLower(param);
    for (const auto& [name, original] : cmp) {
        const double ratio = sequenceMatcherRatio(lowered, asciiLower(name));
        if (ratio > bestRatio) {
            bestRatio = ratio;
            best = name;
        }
    }
    if (best)
        return Match { *best, "similarity:" + pyFloatRepr(bestRatio) };
    return std::nullopt;
}

/// One row before sorting: the seven cells, and their Python values for the sort.
struct HyperRow
{
    std::vector<PyJson> values;
};

/// Python's `<` of two loaded values of the same kind; values of different kinds order by kind (Python would raise
/// a TypeError there and msprobe stop; documented).
int pyCompare(const PyJson& a, const PyJson& b)
{
    const auto na = pyNumber(a);
    const auto nb = pyNumber(b);
    if (na && nb)
        return *na < *nb ? -1 : *nb < *na ? 1 : 0;
    if (a.is_string() && b.is_string()) {
        const auto& sa = a.get_ref<const std::string&>();
        const auto& sb = b.get_ref<const std::string&>();
        return sa < sb ? -1 : sb < sa ? 1 : 0;
    }
    const std::string sa = pyStr(a);
    const std::string sb = pyStr(b);
    if (a.type() != b.type())
        return a.type() < b.type() ? -1 : 1;
    return sa < sb ? -1 : sb < sa ? 1 : 0;
}

std::vector<HyperRow> compareParams(const PyJson& benchParams, PyJson cmpParams, const std::string& fileName)
{
    std::vector<HyperRow> rows;
    const auto benchRefined = refineKeys(benchParams);
    const auto cmpRefined = refineKeys(cmpParams); // built once: later deletions do not shrink it, as in msprobe
    for (const auto& [refined, benchKey] : benchRefined) {
        const auto match = fuzzyMatch(refined, cmpRefined);
        std::string cmpKey;
        if (match) {
            for (const auto& [name, original] : cmpRefined) {
                if (name == match->name) {
                    cmpKey = original;
                    break;
                }
            }
        }
        const PyJson benchValue = toStrIfNumber(benchParams.at(benchKey));
        if (!cmpKey.empty()) {
            const auto it = cmpParams.find(cmpKey);
            // msprobe `del`s the matched key; a key matched twice would raise KeyError there. Here the second match
            // compares with the value the key had (documented).
            const PyJson cmpValue = toStrIfNumber(it != cmpParams.end() ? *it : PyJson());
            if (!pyEqual(benchValue, cmpValue)) {
                rows.push_back(HyperRow { { PyJson(fileName), PyJson(benchKey), PyJson(cmpKey), benchValue, cmpValue,
                                            PyJson(match->with), PyJson(std::string(kError)) } });
            }
            if (it != cmpParams.end())
                cmpParams.erase(cmpKey);
        } else {
            rows.push_back(HyperRow { { PyJson(fileName), PyJson(benchKey), PyJson("Only in benchmark"), benchValue,
                                        PyJson(""), PyJson(""), PyJson(std::string(kWarning)) } });
        }
    }
    for (const auto& [key, value] : cmpParams.items()) {
        rows.push_back(HyperRow { { PyJson(fileName), PyJson("Only in comparison"), PyJson(key), PyJson(""), value,
                                    PyJson(""), PyJson(std::string(kWarning)) } });
    }
    std::stable_sort(rows.begin(), rows.end(), [](const HyperRow& l, const HyperRow& r) {
        for (std::size_t i = 0; i < l.values.size(); ++i) {
            const int c = pyCompare(l.values[i], r.values[i]);
            if (c != 0)
                return c < 0;
        }
        return false;
    });
    return rows;
}

Result<XlsxSheet> compareHyperparameters(const std::filesystem::path& benchDir, const std::filesystem::path& cmpDir)
{
    XlsxSheet sheet { "hyperparameters",
                      { "file_name", "bench_para", "cmp_para", "bench_value", "cmp_value", "matched_with", "level" },
                      {} };
    for (const char* fileName : { "hyperparameters_static.json", "hyperparameters_dynamic.json" }) {
        const auto benchFile = benchDir / "hyperparameters" / fileName;
        const auto cmpFile = cmpDir / "hyperparameters" / fileName;
        if (!isRegularFile(benchFile) || !isRegularFile(cmpFile))
            continue;
        auto bench = loadPyJson(benchFile);
        if (!bench)
            return bench.error();
        auto cmp = loadPyJson(cmpFile);
        if (!cmp)
            return cmp.error();
        if (!bench->is_object())
            return checkError("config-check.hyperparameters", benchFile, "not a JSON object");
        if (!cmp->is_object())
            return checkError("config-check.hyperparameters", cmpFile, "not a JSON object");
        for (auto& row : compareParams(*bench, *cmp, fileName)) {
            std::vector<Cell> cells;
            for (const auto& v : row.values)
                cells.push_back(pyCell(v));
            sheet.rows.push_back(std::move(cells));
        }
    }
    return sheet;
}

// ---- dataset and weights ---------------------------------------------------------------------------------------

/// int(name.replace(prefix, "")) of a step/rank folder name; nullopt where Python raises ValueError.
std::optional<long long> numberAfter(std::string name, std::string_view prefix)
{
    for (std::size_t at = name.find(prefix); at != std::string::npos; at = name.find(prefix, at))
        name.erase(at, prefix.size());
    const std::string_view s = pyStrip(name);
    if (s.empty())
        return std::nullopt;
    std::size_t i = 0;
    bool negative = false;
    if (s[0] == '+' || s[0] == '-') {
        negative = s[0] == '-';
        ++i;
    }
    if (i == s.size())
        return std::nullopt;
    long long v = 0;
    bool lastUnderscore = true;
    for (; i < s.size(); ++i) {
        if (s[i] == '_' && !lastUnderscore) {
            lastUnderscore = true;
            continue;
        }
        if (s[i] < '0' || s[i] > '9' || v > 1'000'000'000'000LL)
            return std::nullopt;
        v = v * 10 + (s[i] - '0');
        lastUnderscore = false;
    }
    if (lastUnderscore)
        return std::nullopt;
    return negative ? -v : v;
}

/// Folder names, sorted so the order does not depend on the file system (msprobe takes os.listdir's order and then
/// sorts by (step, rank) stably; within one step and rank only one file is read, so only name ties differ).
Result<std::vector<FolderEntry>> sortedListing(const std::filesystem::path& folder)
{
    auto entries = listFolder(folder, 100000);
    if (!entries)
        return entries.error();
    std::sort(entries->begin(), entries->end(), [](const auto& a, const auto& b) { return a.name < b.name; });
    return entries;
}

constexpr std::array<std::string_view, 4> kStats { "max", "min", "mean", "norm" };

std::optional<double> relativeDiff(const PyJson& b, const PyJson& c, bool& ok)
{
    const auto nb = pyNumber(b);
    const auto nc = pyNumber(c);
    if (!nb || !nc) {
        ok = false;
        return std::nullopt;
    }
    if (*nb == 0.0)
        return std::nullopt;
    return std::fabs(*nb - *nc) / *nb;
}

Cell optionalNumber(const std::optional<double>& v)
{
    return v ? number(*v) : Cell {};
}

struct StepRankRows
{
    long long step = 0;
    long long rank = 0;
    std::vector<std::vector<Cell>> rows;
};

void appendSorted(XlsxSheet& sheet, std::vector<StepRankRows>& groups)
{
    std::stable_sort(groups.begin(), groups.end(), [](const auto& a, const auto& b) {
        return a.step != b.step ? a.step < b.step : a.rank < b.rank;
    });
    for (auto& group : groups) {
        for (auto& row : group.rows)
            sheet.rows.push_back(std::move(row));
    }
}

std::optional<Diagnostic> compareDatasetDicts(const PyJson& d1, const PyJson& d2, const std::string& tag, int depth,
                                              const std::filesystem::path& file, std::vector<std::vector<Cell>>& out,
                                              long long step, long long rank)
{
    if (depth > 100)
        return checkError("config-check.dataset", file, "nested deeper than 100 levels");
    if (!d1.is_object() || !d2.is_object())
        return checkError("config-check.dataset", file, "a value that is not a JSON object where one is compared");
    for (const auto& [key, value1] : d1.items()) {
        const std::string newTag = tag.empty() ? key : tag + "." + key;
        const auto other = d2.find(key);
        if (other == d2.end()) {
            out.push_back({ number(static_cast<double>(step)), number(static_cast<double>(rank)), text(newTag),
                            Cell::ofBool(false), {}, {}, {}, {} });
            continue;
        }
        if (!value1.is_object())
            continue;
        const bool isStats = value1.size() == 4 && std::all_of(kStats.begin(), kStats.end(), [&](std::string_view k) {
                                 return value1.contains(std::string(k));
                             });
        if (isStats) {
            const PyJson& value2 = *other;
            if (!value2.is_object())
                return checkError("config-check.dataset", file, "'" + newTag + "' is statistics on one side only");
            const bool equal = pyEqual(value1, value2);
            std::vector<Cell> row { number(static_cast<double>(step)), number(static_cast<double>(rank)), text(newTag),
                                    Cell::ofBool(equal) };
            for (const auto stat : kStats) {
                const auto b = value1.find(std::string(stat));
                const auto c = value2.find(std::string(stat));
                if (c == value2.end())
                    return checkError("config-check.dataset", file, "'" + newTag + "' has no " + std::string(stat));
                bool ok = true;
                const auto diff = relativeDiff(*b, *c, ok);
                if (!ok)
                    return checkError("config-check.dataset", file, "'" + newTag + "." + std::string(stat)
                                                                       + "' is not a number");
                row.push_back(optionalNumber(diff));
            }
            out.push_back(std::move(row));
        } else if (auto bad = compareDatasetDicts(value1, *other, newTag, depth + 1, file, out, step, rank)) {
            return bad;
        }
    }
    for (const auto& [key, value2] : d2.items()) {
        if (d1.contains(key))
            continue;
        const std::string newTag = tag.empty() ? key : tag + "." + key;
        out.push_back({ number(static_cast<double>(step)), number(static_cast<double>(rank)), text(newTag),
                        Cell::ofBool(false), {}, {}, {}, {} });
    }
    return std::nullopt;
}

Result<XlsxSheet> compareDataset(const std::filesystem::path& benchDir, const std::filesystem::path& cmpDir)
{
    XlsxSheet sheet { "dataset",
                      { "step", "rank", "tag", "equal", "max_relative_diff", "min_relative_diff", "mean_relative_diff",
                        "norm_relative_diff" },
                      {} };
    std::vector<StepRankRows> groups;
    auto steps = sortedListing(benchDir);
    if (!steps)
        return steps.error();
    for (const auto& step : *steps) {
        if (step.kind != FolderEntry::Kind::Folder)
            continue;
        auto ranks = sortedListing(benchDir / step.name);
        if (!ranks)
            return ranks.error();
        for (const auto& rank : *ranks) {
            const auto benchFile = benchDir / step.name / rank.name / "dataset.json";
            const auto cmpFile = cmpDir / step.name / rank.name / "dataset.json";
            if (!isRegularFile(benchFile) || !isRegularFile(cmpFile))
                continue;
            auto d1 = loadPyJson(benchFile);
            if (!d1)
                return d1.error();
            auto d2 = loadPyJson(cmpFile);
            if (!d2)
                return d2.error();
            const auto stepNo = numberAfter(step.name, "step");
            const auto rankNo = numberAfter(rank.name, "rank");
            if (!stepNo || !rankNo)
                return checkError("config-check.dataset", benchFile, "the folder names give no step and rank number");
            StepRankRows group { *stepNo, *rankNo, {} };
            if (auto bad = compareDatasetDicts(*d1, *d2, "", 0, benchFile, group.rows, *stepNo, *rankNo))
                return *bad;
            groups.push_back(std::move(group));
        }
    }
    appendSorted(sheet, groups);
    return sheet;
}

std::optional<Diagnostic> compareWeightFile(const PyJson& bench, const PyJson& cmp, const std::filesystem::path& file,
                                            long long step, long long rank, std::vector<std::vector<Cell>>& out)
{
    if (!bench.is_object() || !cmp.is_object())
        return checkError("config-check.weights", file, "not a JSON object of weights");
    auto row = [&](const std::string& name, Cell equal) {
        return std::vector<Cell> { number(static_cast<double>(step)), number(static_cast<double>(rank)), text(name),
                                   std::move(equal), {}, {}, {}, {} };
    };
    // msprobe iterates set(bench) | set(cmp), whose order is Python's hash order; here: bench's order, then cmp's
    // own names (documented; the README compares these rows as a set).
    for (const auto& [name, b] : bench.items()) {
        const auto c = cmp.find(name);
        if (c == cmp.end()) {
            out.push_back(row(name, text("only bench have")));
            continue;
        }
        if (!b.is_object() || !c->is_object())
            return checkError("config-check.weights", file, "weight '" + name + "' has no statistics");
        bool equal = true;
        for (const auto stat : kStats) {
            const auto bv = b.find(std::string(stat));
            const auto cv = c->find(std::string(stat));
            if (bv == b.end() || cv == c->end())
                return checkError("config-check.weights", file, "weight '" + name + "' has no " + std::string(stat));
            equal = equal && pyEqual(*bv, *cv);
        }
        auto cells = row(name, Cell::ofBool(equal));
        for (std::size_t k = 0; k < kStats.size(); ++k) {
            bool ok = true;
            const auto diff = relativeDiff(b.at(std::string(kStats[k])), c->at(std::string(kStats[k])), ok);
            if (!ok)
                return checkError("config-check.weights", file, "weight '" + name + "' has a statistic that is not a number");
            cells[4 + k] = optionalNumber(diff);
        }
        out.push_back(std::move(cells));
    }
    for (const auto& [name, c] : cmp.items()) {
        if (!bench.contains(name))
            out.push_back(row(name, text("only cmp have")));
    }
    return std::nullopt;
}

/// os_walk_for_files(bench, 10): every file under `root` less than 10 levels deep, as (relative folder, file name).
std::optional<Diagnostic> walkFiles(const std::filesystem::path& root, const std::filesystem::path& relative, int depth,
                                    std::vector<std::pair<std::filesystem::path, std::string>>& out)
{
    if (depth >= 10)
        return std::nullopt;
    auto entries = sortedListing(root / relative);
    if (!entries)
        return entries.error();
    for (const auto& entry : *entries) {
        if (entry.kind == FolderEntry::Kind::File)
            out.emplace_back(relative, entry.name);
    }
    for (const auto& entry : *entries) {
        if (entry.kind == FolderEntry::Kind::Folder) {
            if (auto bad = walkFiles(root, relative / entry.name, depth + 1, out))
                return bad;
        }
    }
    return std::nullopt;
}

Result<XlsxSheet> compareWeights(const std::filesystem::path& benchDir, const std::filesystem::path& cmpDir)
{
    XlsxSheet sheet { "weights",
                      { "step", "rank", "weight_name", "equal", "max_relative_diff", "min_relative_diff",
                        "mean_relative_diff", "norm_relative_diff" },
                      {} };
    std::vector<std::pair<std::filesystem::path, std::string>> files;
    if (auto bad = walkFiles(benchDir, {}, 0, files))
        return *bad;
    std::vector<StepRankRows> groups;
    for (const auto& [relative, name] : files) {
        if (name.size() < 5 || name.compare(name.size() - 5, 5, ".json") != 0)
            continue;
        const auto benchFile = benchDir / relative / name;
        std::vector<std::string> parts;
        for (const auto& part : relative)
            parts.push_back(part.string());
        if (parts.size() < 2)
            return checkError("config-check.weights", benchFile,
                              "Can not compare weights because the extracted file has been corrupted!");
        const auto step = numberAfter(parts[0], "step");
        const auto rank = numberAfter(parts[1], "rank");
        if (!step || !rank)
            return checkError("config-check.weights", benchFile, "the folder names give no step and rank number");
        auto bench = loadPyJson(benchFile);
        if (!bench)
            return bench.error();
        StepRankRows group { *step, *rank, {} };
        const auto cmpFile = cmpDir / relative / name;
        if (!pathExists(cmpFile)) {
            if (!bench->is_object())
                return checkError("config-check.weights", benchFile, "not a JSON object of weights");
            for (const auto& [weight, value] : bench->items())
                group.rows.push_back({ number(static_cast<double>(*step)), number(static_cast<double>(*rank)),
                                       text(weight), text("only bench have"), {}, {}, {}, {} });
        } else {
            auto cmp = loadPyJson(cmpFile);
            if (!cmp)
                return cmp.error();
            if (auto bad = compareWeightFile(*bench, *cmp, benchFile, *step, *rank, group.rows))
                return *bad;
        }
        groups.push_back(std::move(group));
    }
    appendSorted(sheet, groups);
    return sheet;
}

// ---- random ----------------------------------------------------------------------------------------------------

Result<std::map<long long, PyJson>> loadRandomStats(const std::filesystem::path& folder)
{
    std::map<long long, PyJson> out;
    auto entries = sortedListing(folder);
    if (!entries)
        return entries.error();
    for (const auto& entry : *entries) {
        const std::string& file = entry.name;
        if (file.rfind("rank", 0) != 0 || file.size() < 5 || file.compare(file.size() - 5, 5, ".json") != 0)
            continue;
        const std::string digits = file.substr(4, file.find('.') - 4);
        if (digits.empty() || !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })
            || digits.size() > 12)
            return checkError("config-check.random", folder / file, "extract rank id from " + file + " failed");
        auto data = loadPyJson(folder / file);
        if (!data)
            return data.error();
        if (!data->is_object())
            return checkError("config-check.random", folder / file, "not a JSON object of random calls");
        out[std::stoll(digits)] = std::move(*data);
    }
    return out;
}

/// Drops the last code point (Python's s[:-1]).
std::string dropLastChar(std::string_view s)
{
    if (s.empty())
        return {};
    std::size_t end = s.size() - 1;
    while (end > 0 && (static_cast<unsigned char>(s[end]) & 0xC0) == 0x80)
        --end;
    return std::string(s.substr(0, end));
}

struct Frame
{
    std::string path, func, code;
};

/// _parse_frame: frame.split(' '); path = [1][:-1], func = [5][:-1], code = ' '.join([6:]) when there are > 6 parts.
Frame parseFrame(std::string_view frame)
{
    std::vector<std::string_view> parts;
    std::size_t start = 0;
    for (std::size_t sp = frame.find(' '); sp != std::string_view::npos; sp = frame.find(' ', start)) {
        parts.push_back(frame.substr(start, sp - start));
        start = sp + 1;
    }
    parts.push_back(frame.substr(start));
    Frame out;
    if (parts.size() > 6) {
        out.path = dropLastChar(parts[1]);
        out.func = dropLastChar(parts[5]);
        const std::size_t codeStart = static_cast<std::size_t>(parts[6].data() - frame.data());
        out.code = std::string(frame.substr(codeStart));
    }
    return out;
}

std::string_view baseName(std::string_view path)
{
    const std::size_t slash = path.rfind('/');
    return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

std::vector<std::string> stackOf(const PyJson& entry)
{
    std::vector<std::string> out;
    const auto it = entry.find("stack");
    if (it == entry.end() || !it->is_array())
        return out;
    for (const auto& frame : *it)
        out.push_back(frame.is_string() ? frame.get<std::string>() : pyStr(frame));
    return out;
}

bool stackMatch(const std::vector<std::string>& s1, const std::vector<std::string>& s2)
{
    if (s1.size() != s2.size())
        return false;
    for (std::size_t i = 0; i < s1.size(); ++i) {
        const Frame f1 = parseFrame(s1[i]);
        const Frame f2 = parseFrame(s2[i]);
        const double pathScore = f1.path.empty() || f2.path.empty() ? 0.0
                                 : baseName(f1.path) == baseName(f2.path) ? 1.0
                                                                          : 0.0;
        const double funcScore = f1.func == f2.func ? 1.0 : 0.0;
        const double codeScore = sequenceMatcherRatio(f1.code, f2.code);
        const double frameScore = (pathScore + funcScore + codeScore) / 3.0;
        if (frameScore < 0.8)
            return false;
    }
    return true;
}

std::string joinStack(const std::vector<std::string>& stack)
{
    std::string out;
    for (std::size_t i = 0; i < stack.size(); ++i) {
        if (i)
            out += '\n';
        out += stack[i];
    }
    return out;
}

Result<XlsxSheet> compareRandom(const std::filesystem::path& benchDir, const std::filesystem::path& cmpDir)
{
    XlsxSheet sheet { "random", { "op", "rank", "bench_stack", "cmp_stack", "bench_count", "cmp_count", "check_result" },
                      {} };
    auto bench = loadRandomStats(benchDir);
    if (!bench)
        return bench.error();
    auto cmp = loadRandomStats(cmpDir);
    if (!cmp)
        return cmp.error();
    std::vector<long long> ranks;
    for (const auto& [rank, data] : *bench)
        ranks.push_back(rank);
    for (const auto& [rank, data] : *cmp) {
        if (!bench->count(rank))
            ranks.push_back(rank);
    }
    std::sort(ranks.begin(), ranks.end());
    const PyJson empty = PyJson::object();
    for (const long long rank : ranks) {
        const PyJson& b = bench->count(rank) ? bench->at(rank) : empty;
        const PyJson& c = cmp->count(rank) ? cmp->at(rank) : empty;
        // msprobe iterates set(bench ops) | set(cmp ops) (hash order); here bench's ops, then cmp's own.
        std::vector<std::string> ops;
        for (const auto& [op, v] : b.items())
            ops.push_back(op);
        for (const auto& [op, v] : c.items()) {
            if (!b.contains(op))
                ops.push_back(op);
        }
        const PyJson emptyList = PyJson::array();
        for (const auto& op : ops) {
            const PyJson& benchEntries = b.contains(op) && b.at(op).is_array() ? b.at(op) : emptyList;
            const PyJson& cmpEntries = c.contains(op) && c.at(op).is_array() ? c.at(op) : emptyList;
            auto count = [](const PyJson& entry) {
                const auto it = entry.find("count");
                return it == entry.end() ? PyJson() : *it;
            };
            for (const auto& be : benchEntries) {
                const auto bs = stackOf(be);
                const PyJson* matched = nullptr;
                for (const auto& ce : cmpEntries) {
                    if (stackMatch(stackOf(ce), bs)) {
                        matched = &ce;
                        break;
                    }
                }
                if (matched) {
                    sheet.rows.push_back({ text(op), number(static_cast<double>(rank)), text(joinStack(bs)),
                                           text(joinStack(stackOf(*matched))), pyCell(count(be)),
                                           pyCell(count(*matched)),
                                           Cell::ofBool(pyEqual(count(be), count(*matched))) });
                } else {
                    sheet.rows.push_back({ text(op), number(static_cast<double>(rank)), text(joinStack(bs)),
                                           text("no match stack"), pyCell(count(be)), number(0), Cell::ofBool(false) });
                }
            }
            for (const auto& ce : cmpEntries) {
                const auto cs = stackOf(ce);
                const bool any = std::any_of(benchEntries.begin(), benchEntries.end(),
                                             [&](const PyJson& be) { return stackMatch(stackOf(be), cs); });
                if (!any)
                    sheet.rows.push_back({ text(op), number(static_cast<double>(rank)), text("no match stack"),
                                           text(joinStack(cs)), number(0), pyCell(count(ce)), Cell::ofBool(false) });
            }
        }
    }
    return sheet;
}

} // namespace

Result<std::vector<XlsxSheet>> comparePackFolders(const std::filesystem::path& benchDir,
                                                  const std::filesystem::path& cmpDir)
{
    XlsxSheet summary { "summary", { "filename", "pass_check" }, {} };
    std::vector<XlsxSheet> sheets;
    auto add = [&](Result<XlsxSheet> sheet, std::string_view pass) -> std::optional<Diagnostic> {
        if (!sheet)
            return sheet.error();
        summary.rows.push_back({ text(sheet->name), text(pass) });
        sheets.push_back(std::move(*sheet));
        return std::nullopt;
    };
    auto both = [&](std::string_view entry) { return pathExists(benchDir / entry) && pathExists(cmpDir / entry); };

    if (both("env")) {
        auto sheet = compareEnv(benchDir / "env", cmpDir / "env");
        const auto pass = sheet ? passCheck(sheet->rows, 4) : kPass;
        if (auto bad = add(std::move(sheet), pass))
            return *bad;
    }
    if (both("pip")) {
        auto sheet = comparePip(benchDir / "pip", cmpDir / "pip");
        const auto pass = sheet ? passCheck(sheet->rows, 3) : kPass;
        if (auto bad = add(std::move(sheet), pass))
            return *bad;
    }
    if (both("dataset")) {
        auto sheet = compareDataset(benchDir / "dataset", cmpDir / "dataset");
        const auto pass = sheet ? passUnlessFalse(sheet->rows, 3) : kPass;
        if (auto bad = add(std::move(sheet), pass))
            return *bad;
    }
    if (both("weights")) {
        auto sheet = compareWeights(benchDir / "weights", cmpDir / "weights");
        const auto pass = sheet ? passUnlessFalse(sheet->rows, 3) : kPass;
        if (auto bad = add(std::move(sheet), pass))
            return *bad;
    }
    if (both("hyperparameters")) {
        auto sheet = compareHyperparameters(benchDir, cmpDir);
        const auto pass = sheet ? passCheck(sheet->rows, 6) : kPass;
        if (auto bad = add(std::move(sheet), pass))
            return *bad;
    }
    if (both("random")) {
        auto sheet = compareRandom(benchDir / "random", cmpDir / "random");
        const auto pass = sheet ? passUnlessFalse(sheet->rows, 6) : kPass;
        if (auto bad = add(std::move(sheet), pass))
            return *bad;
    }
    sheets.insert(sheets.begin(), std::move(summary));
    return sheets;
}

Result<PackZips> openPackZips(const std::filesystem::path& benchZip, const std::filesystem::path& cmpZip,
                              const ZipLimits& limits)
{
    auto bench = ZipReader::open(benchZip, limits);
    if (!bench)
        return bench.error();
    auto cmp = ZipReader::open(cmpZip, limits);
    if (!cmp)
        return cmp.error();
    return PackZips { std::move(*bench), std::move(*cmp) };
}

Result<ConfigCompareOutcome> compareConfigPacks(const std::filesystem::path& benchZip,
                                                const std::filesystem::path& cmpZip,
                                                const std::filesystem::path& outDir, const ZipLimits& limits)
{
    ConfigCompareOutcome outcome;
    outcome.benchDir = outDir / "bench";
    outcome.cmpDir = outDir / "cmp";
    const auto xlsx = outDir / "result.xlsx";
    // Check both zips completely before anything is created.
    auto zips = openPackZips(benchZip, cmpZip, limits);
    if (!zips)
        return zips.error();
    for (const auto& taken : { outcome.benchDir, outcome.cmpDir, xlsx }) {
        struct stat st {};
        if (::lstat(taken.c_str(), &st) == 0)
            return makeError("config-check.output", fileLocation(taken),
                             taken.string() + " already exists (nothing is replaced; choose another -o)");
    }
    if (::mkdir(outDir.c_str(), 0777) != 0 && errno != EEXIST)
        return makeError("config-check.output", fileLocation(outDir),
                         "cannot create folder " + outDir.string() + ": " + std::strerror(errno));
    if (!isFolder(outDir))
        return makeError("config-check.output", fileLocation(outDir),
                         outDir.string() + " is not a folder");
    auto benchFiles = extractZip(*zips->bench, outcome.benchDir);
    if (!benchFiles)
        return benchFiles.error();
    auto cmpFiles = extractZip(*zips->cmp, outcome.cmpDir);
    if (!cmpFiles)
        return cmpFiles.error();
    auto sheets = comparePackFolders(outcome.benchDir, outcome.cmpDir);
    if (!sheets)
        return sheets.error();
    for (const auto& row : sheets->front().rows)
        outcome.summary.emplace_back(row[0].text, row[1].text);
    auto files = compare::writeXlsxSheetsWithCsv(*sheets, xlsx);
    if (!files)
        return files.error();
    outcome.files = std::move(*files);
    return outcome;
}

} // namespace probescope::setupcheck
