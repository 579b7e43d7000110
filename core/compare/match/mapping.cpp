// SPDX-License-Identifier: Apache-2.0
// The -cm / -am / -lm files and the name rules of compare-spec §3.6. The layer tree is in mappinglayer.cpp.
#include "core/compare/match/mapping.h"

#include "core/compare/match/mappingutil.h"

#include <algorithm>
#include <unordered_map>

namespace probescope::compare {

namespace {

constexpr const char* kNotAvailable = "N/A";

/// Loads a mapping file. A file that holds nothing (or only comments) is an empty mapping, not an error:
/// msprobe's yaml.safe_load gives None there and each option then behaves as if given without a file; that
/// case returns a null node. Otherwise the root must be of the kind `isKind` accepts (else `wrongKind`).
Result<YAML::Node> loadMappingDocument(const std::filesystem::path& path, std::string_view what,
                                       bool (YAML::Node::*isKind)() const, const std::string& wrongKind)
{
    auto root = loadYamlFile(path, what);
    if (!root || !root->IsDefined() || root->IsNull())
        return root;
    if (!((*root).*isKind)())
        return yamlError(path, *root, wrongKind);
    return root;
}

Result<CellMapping> parseCellMapping(const std::filesystem::path& path)
{
    auto root = loadMappingDocument(path, "cell mapping", &YAML::Node::IsMap,
                                    "a cell mapping must be a YAML mapping of MindSpore cell path: PyTorch module path");
    if (!root)
        return root.error();
    CellMapping mapping;
    mapping.path = path;
    for (const auto& item : *root) {
        if (!item.first.IsScalar() || !item.second.IsScalar())
            return yamlError(path, item.first, "every item must map one cell path to one module path");
        mapping.pairs.emplace_back(item.first.Scalar(), item.second.Scalar());
    }
    return mapping;
}

Result<ApiMapping> parseApiMapping(const std::filesystem::path& path, Diagnostics* warnings)
{
    auto root = loadMappingDocument(path, "api mapping", &YAML::Node::IsSequence,
                                    "an api mapping must be a YAML list of items with ms_api and pt_api");
    if (!root)
        return root.error();
    ApiMapping mapping;
    mapping.path = path;
    // The documented keys say "outputs"; msprobe 26's remapping code reads "ms_output"/"pt_output", so both
    // spellings are accepted (the plural wins when both are given).
    static constexpr std::array<std::array<const char*, 2>, 4> listKeys = { {
        { "args", "args" },
        { "outputs", "output" },
        { "parameters", "parameters" },
        { "parameters_grad", "parameters_grad" },
    } };
    for (const auto& item : *root) {
        if (!item.IsMap())
            return yamlError(path, item, "every api mapping item must be a mapping (ms_api, pt_api, ms_args, ...)");
        ApiMappingRule rule;
        rule.where = yamlLocation(path, item.Mark());
        for (const char* key : { "ms_api", "pt_api" }) {
            const YAML::Node v = item[key];
            if (!v || !v.IsScalar() || v.Scalar().empty())
                return yamlError(path, item, std::string("the item needs \"") + key + "\" (an API name such as Functional.conv2d)");
        }
        rule.msApi = item["ms_api"].Scalar();
        rule.ptApi = item["pt_api"].Scalar();
        for (std::size_t part = 0; part < listKeys.size(); ++part) {
            for (int side = 0; side < 2; ++side) {
                const std::string prefix = side == 0 ? "ms_" : "pt_";
                const YAML::Node plural = item[prefix + listKeys[part][0]];
                const YAML::Node list = plural ? plural : item[prefix + listKeys[part][1]];
                if (!list || list.IsNull())
                    continue;
                if (!list.IsSequence())
                    return yamlError(path, list, prefix + listKeys[part][0] + " must be a list of argument indices");
                auto& target = side == 0 ? rule.ms[part] : rule.pt[part];
                for (const auto& v : list) {
                    if (!v.IsScalar())
                        return yamlError(path, v, "an argument index must be a number or a keyword name");
                    target.push_back(v.Scalar());
                }
            }
            if (rule.ms[part].size() != rule.pt[part].size())
                rule.usable = false;
        }
        if (!rule.usable && warnings)
            warnings->push_back(makeWarning("compare.mapping-ignored", rule.where,
                                            "api mapping " + rule.msApi + " -> " + rule.ptApi
                                                + " ignored: its ms_ and pt_ lists differ in length (as msprobe does)"));
        mapping.rules.push_back(std::move(rule));
    }
    return mapping;
}

Result<LayerMapping> parseLayerMapping(const std::filesystem::path& path)
{
    auto root = loadMappingDocument(path, "layer mapping", &YAML::Node::IsMap,
                                    "a layer mapping must be a YAML mapping of class name: {sub name: bench sub name}");
    if (!root)
        return root.error();
    LayerMapping mapping;
    mapping.path = path;
    for (const auto& item : *root) {
        if (!item.first.IsScalar())
            return yamlError(path, item.first, "a layer mapping key must be a class name");
        std::string cls = item.first.Scalar();
        // Old files name the top level "Cell"; msprobe renames it to "TopLayer", replacing a TopLayer item.
        if (cls == "Cell")
            cls = "TopLayer";
        std::vector<LayerRule> rules;
        if (!item.second.IsNull()) {
            if (!item.second.IsMap())
                return yamlError(path, item.second, "the rules of class " + cls + " must be a mapping of sub name: bench sub name");
            for (const auto& r : item.second) {
                if (!r.first.IsScalar() || !r.second.IsScalar())
                    return yamlError(path, r.first, "a layer rule must map one sub name to one bench sub name");
                LayerRule rule;
                rule.origin = r.first.Scalar();
                rule.target = r.second.Scalar().substr(0, r.second.Scalar().find('('));
                rule.levels = splitDots(rule.origin).size();
                rules.push_back(std::move(rule));
            }
        }
        // Longer rules first, so "a.b.c" is tried before "a"; equal lengths keep file order.
        std::stable_sort(rules.begin(), rules.end(),
                         [](const LayerRule& a, const LayerRule& b) { return a.levels > b.levels; });
        auto same = std::find_if(mapping.classes.begin(), mapping.classes.end(),
                                 [&](const auto& c) { return c.first == cls; });
        if (same != mapping.classes.end())
            same->second = std::move(rules);
        else
            mapping.classes.emplace_back(std::move(cls), std::move(rules));
    }
    return mapping;
}

/// yaml-cpp reports a node of the wrong kind by exception; it becomes an error at the node's position.
template<typename T, typename Parse>
Result<T> guarded(const std::filesystem::path& path, Parse parse)
{
    try {
        return parse();
    } catch (const YAML::Exception& e) {
        return makeError("compare.mapping", yamlLocation(path, e.mark), e.msg);
    }
}

} // namespace

Result<CellMapping> readCellMapping(const std::filesystem::path& path)
{
    return guarded<CellMapping>(path, [&] { return parseCellMapping(path); });
}

Result<ApiMapping> readApiMapping(const std::filesystem::path& path, Diagnostics* warnings)
{
    return guarded<ApiMapping>(path, [&] { return parseApiMapping(path, warnings); });
}

Result<LayerMapping> readLayerMapping(const std::filesystem::path& path)
{
    return guarded<LayerMapping>(path, [&] { return parseLayerMapping(path); });
}

std::string apiNameOf(std::string_view name)
{
    const auto parts = splitDots(name);
    return joinDots(parts, 0, 2);
}

std::string cellMappedName(std::string_view npuName, const CellMapping& mapping, bool substringFallback)
{
    if (npuName.empty())
        return kNotAvailable;
    const auto parts = splitDots(npuName);
    const bool parametersGrad = std::find(parts.begin(), parts.end(), "parameters_grad") != parts.end();
    const bool direction = npuName.find(".forward.") != std::string_view::npos
        || npuName.find(".backward.") != std::string_view::npos;
    if (!parametersGrad && !direction)
        return kNotAvailable;
    std::string name = replaceFirst(std::string(npuName), "Cell", "Module");
    if (mapping.pairs.empty())
        return name;
    // The cell path: after the first '.', up to the first .forward. / .backward. / .parameters_grad.
    const std::size_t firstDot = name.find('.');
    const std::string rest = firstDot == std::string::npos ? name : name.substr(firstDot + 1);
    std::size_t end = rest.size();
    for (std::string_view word : { ".forward.", ".backward.", ".parameters_grad." })
        end = std::min(end, rest.find(word));
    const std::string cellName = rest.substr(0, end);
    // A YAML mapping with a repeated key keeps the last value, as PyYAML's dict does.
    const auto exact = std::find_if(mapping.pairs.rbegin(), mapping.pairs.rend(),
                                    [&](const auto& p) { return p.first == cellName; });
    std::string newCell = cellName;
    if (exact != mapping.pairs.rend()) {
        newCell = exact->second;
    } else if (substringFallback) {
        for (const auto& [from, to] : mapping.pairs) {
            if (!from.empty() && newCell.find(from) != std::string::npos)
                newCell = replaceFirst(newCell, from, to);
        }
    }
    if (newCell != cellName)
        name = replaceFirst(name, cellName, newCell);
    return name;
}

std::string apiPrefixMapped(std::string_view npuName)
{
    const std::string prefix = splitDots(npuName).front();
    if (prefix == "Mint")
        return replaceAll(std::string(npuName), "Mint", "Torch");
    if (prefix == "MintFunctional")
        return replaceAll(std::string(npuName), "MintFunctional", "Functional");
    return std::string(npuName);
}

std::optional<std::string> userRuleKey(const ApiMappingRule& rule, ApiPart part, std::string_view rowName,
                                       std::string_view entryKey)
{
    static constexpr const char* patterns[] = { ".input.", ".output.", ".parameters.", ".parameters_grad." };
    const std::string pattern = patterns[static_cast<std::size_t>(part)];
    const auto& ms = rule.ms[static_cast<std::size_t>(part)];
    const auto& pt = rule.pt[static_cast<std::size_t>(part)];
    const std::string prefix = std::string(entryKey) + pattern;
    const std::string_view rest = rowName.substr(0, prefix.size()) == prefix ? rowName.substr(prefix.size()) : rowName;
    std::optional<std::string> key;
    for (std::size_t i = 0; i < ms.size() && i < pt.size(); ++i) {
        if (rest == ms[i])
            key = replaceAll(std::string(rowName), pattern + ms[i], pattern + pt[i]);
    }
    return key;
}

std::string dtypeClass(std::string_view dtype)
{
    static const std::unordered_map<std::string_view, const char*> classes = [] {
        std::unordered_map<std::string_view, const char*> m;
        for (const char* t : { "Int8", "UInt8", "Int16", "UInt16", "Int32", "UInt32", "Int64", "UInt64", "torch.int8",
                               "torch.uint8", "torch.int16", "torch.uint16", "torch.int32", "torch.uint32", "torch.int64",
                               "torch.uint64" })
            m.emplace(t, "int");
        for (const char* t : { "Float16", "Float32", "Float64", "BFloat16", "torch.float16", "torch.float32",
                               "torch.float64", "torch.bfloat16" })
            m.emplace(t, "float");
        for (const char* t : { "Bool", "torch.bool" })
            m.emplace(t, "bool");
        for (const char* t : { "Complex64", "Complex128", "torch.complex64", "torch.complex128" })
            m.emplace(t, "complex");
        return m;
    }();
    const auto it = classes.find(dtype);
    return it == classes.end() ? std::string(dtype) : it->second;
}

std::string torchDtypeName(std::string_view dtype)
{
    // MindSpore spells dtypes as capitalised words (Float32, BFloat16, UInt8); torch as torch.<lower case>.
    static constexpr std::string_view known[] = { "Float16", "Float32", "Float64", "BFloat16", "Int8",      "Int16",
                                                  "Int32",   "Int64",   "UInt8",   "UInt16",   "UInt32",    "UInt64",
                                                  "Bool",    "Complex64", "Complex128" };
    if (std::find(std::begin(known), std::end(known), dtype) == std::end(known))
        return std::string(dtype);
    std::string out = "torch.";
    for (const char c : dtype)
        out += static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    return out;
}

bool isMindSporeDump(const dump::DumpFile& dump, bool withMindTorch)
{
    return dump.header.framework == "mindspore" || (withMindTorch && dump.header.framework == "mindtorch");
}

DataMapping expandEntryMapping(const std::vector<std::pair<std::string, std::string>>& entries,
                               const RowNamesOf& rowsOf, const std::filesystem::path& source)
{
    DataMapping out;
    out.path = source;
    std::unordered_map<std::string, std::size_t> position; // a dict: first position, last value
    auto suffixOf = [](const std::string& row, const std::string& key) {
        return key.size() <= row.size() ? row.substr(key.size()) : std::string();
    };
    for (const auto& [npuKey, benchKey] : entries) {
        if (npuKey.empty())
            continue;
        std::unordered_map<std::string, std::string> benchBySuffix;
        if (benchKey != kNotAvailable) {
            for (const std::string& row : rowsOf(true, benchKey))
                benchBySuffix[suffixOf(row, benchKey)] = row;
        }
        for (const std::string& row : rowsOf(false, npuKey)) {
            const auto hit = benchBySuffix.find(suffixOf(row, npuKey));
            std::string target = hit == benchBySuffix.end() ? std::string(kNotAvailable) : hit->second;
            if (const auto p = position.find(row); p != position.end()) {
                out.pairs[p->second].second = std::move(target);
            } else {
                position.emplace(row, out.pairs.size());
                out.pairs.emplace_back(row, std::move(target));
            }
        }
    }
    return out;
}

std::string dataMappingYaml(const DataMapping& mapping)
{
    YAML::Emitter out;
    out << YAML::BeginMap;
    for (const auto& [from, to] : mapping.pairs)
        out << YAML::Key << from << YAML::Value << to;
    out << YAML::EndMap;
    return std::string(out.c_str()) + "\n";
}

} // namespace probescope::compare
