// SPDX-License-Identifier: Apache-2.0
#include "core/runut/apicalls.h"

#include "core/dump/leaf.h"
#include "core/tensor/dtype.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <unordered_map>
#include <unordered_set>

namespace probescope::runut {

using dump::JsonType;
using dump::JsonValue;

namespace {

std::vector<std::string_view> splitDots(std::string_view s)
{
    std::vector<std::string_view> parts;
    std::size_t start = 0;
    while (true) {
        const std::size_t dot = s.find('.', start);
        if (dot == std::string_view::npos) {
            parts.push_back(s.substr(start));
            return parts;
        }
        parts.push_back(s.substr(start, dot - start));
        start = dot + 1;
    }
}

bool endsWith(std::string_view s, std::string_view suffix)
{
    return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// Python compares the -f signatures with ==: dicts regardless of key order, 1 == 1.0 == True, and every
// NaN of a json.load is the same float object, so NaN equals NaN inside containers. A canonical text
// with those equalities lets a hash set replace msprobe's pairwise comparison.
void canonical(JsonValue v, std::string& out, bool dropMaxMin = false)
{
    switch (v.type()) {
    case JsonType::Null: out += 'N'; return;
    case JsonType::Bool: out += v.asBool() ? "#1" : "#0"; return;
    case JsonType::Int: out += '#'; out += std::to_string(v.asInt()); return;
    case JsonType::Double: {
        const double d = v.asDouble();
        out += '#';
        if (std::isnan(d)) {
            out += "nan";
        } else if (std::isinf(d)) {
            out += d > 0 ? "inf" : "-inf";
        } else if (d == std::trunc(d) && std::fabs(d) < 9.2e18) {
            out += std::to_string(static_cast<std::int64_t>(d));
        } else {
            char buf[40];
            std::snprintf(buf, sizeof buf, "%.17g", d);
            out += buf;
        }
        return;
    }
    case JsonType::String: {
        const std::string_view s = v.asString();
        out += 'S';
        out += std::to_string(s.size());
        out += ':';
        out += s;
        return;
    }
    case JsonType::Array:
        out += '[';
        for (std::uint32_t i = 0; i < v.size(); ++i) {
            canonical(v.at(i), out);
            out += ',';
        }
        out += ']';
        return;
    case JsonType::Object: {
        // Sorted keys; a duplicate key keeps its last value, as json.load does.
        std::map<std::string_view, JsonValue> members;
        for (std::uint32_t i = 0; i < v.size(); ++i) {
            const std::string_view key = v.keyAt(i);
            if (dropMaxMin && (key == "Max" || key == "Min"))
                continue;
            members[key] = v.at(i);
        }
        out += '{';
        for (const auto& [key, value] : members) {
            out += 'K';
            out += std::to_string(key.size());
            out += ':';
            out += key;
            canonical(value, out);
            out += ',';
        }
        out += '}';
        return;
    }
    }
}

// preprocess_forward_content: only the dict elements of input_args take part (lists and None are left
// out of the signature), each without Max and Min; input_kwargs as they are.
std::string filterSignature(JsonValue forward)
{
    std::string sig = "A[";
    if (const auto args = forward.find("input_args"); args && args->isArray()) {
        for (std::uint32_t i = 0; i < args->size(); ++i) {
            const JsonValue a = args->at(i);
            if (!a.isObject())
                continue;
            canonical(a, sig, true);
            sig += ',';
        }
    }
    sig += "]K";
    if (const auto kwargs = forward.find("input_kwargs"))
        canonical(*kwargs, sig);
    else
        sig += 'N';
    return sig;
}

Diagnostic entryError(const dump::DumpFile& file, const dump::Entry& entry, std::string message)
{
    return makeError("runut.entry-name", SourceLocation { file.path.string(), entry.offset, entry.line, 0 },
                     std::move(message));
}

/// The bytes the tensor leaves of `entry` name (numel x dtype size, an unknown dtype counted as 8 bytes), or
/// nullopt past 2^63; `largest` gets the leaf with the most elements, for the message.
std::optional<std::uint64_t> tensorBytes(const dump::Entry& entry, std::string& largest)
{
    std::uint64_t total = 0;
    std::uint64_t largestCount = 0;
    bool overflow = false;
    dump::forEachLeaf(entry.value, [&](const dump::LeafPath& where, JsonValue value, dump::LeafKind kind) {
        if (kind != dump::LeafKind::Tensor)
            return true;
        const auto leaf = dump::readTensorLeaf(value);
        if (!leaf)
            return true;
        std::uint64_t count = 1;
        for (const std::int64_t d : leaf->shape) {
            if (d < 0 || __builtin_mul_overflow(count, static_cast<std::uint64_t>(d), &count))
                overflow = true;
        }
        const auto dtype = tensor::parseDType(leaf->dtype);
        std::uint64_t bytes = 0;
        if (overflow || __builtin_mul_overflow(count, dtype ? tensor::dtypeSize(*dtype) : 8, &bytes)
            || __builtin_add_overflow(total, bytes, &total)) {
            overflow = true;
        }
        if (overflow || count >= largestCount) {
            largestCount = count;
            largest = std::string(where.field) + (where.path.empty() ? "" : "." + where.path) + " shape [";
            for (std::size_t i = 0; i < leaf->shape.size(); ++i)
                largest += (i ? ", " : "") + std::to_string(leaf->shape[i]);
            largest += "] " + std::string(leaf->dtype);
        }
        return !overflow;
    });
    if (overflow)
        return std::nullopt;
    return total;
}

std::string byteText(std::uint64_t bytes)
{
    char buf[48];
    std::snprintf(buf, sizeof buf, "%.1f GiB", static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0));
    return buf;
}

} // namespace

std::uint64_t maxReplayBytes()
{
    if (const char* env = std::getenv("PROBESCOPE_RUNUT_MAX_BYTES")) {
        std::uint64_t v = 0;
        const std::string_view text(env);
        const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
        if (ec == std::errc() && ptr == text.data() + text.size() && v > 0)
            return v;
    }
    return std::uint64_t(1) << 30;
}

ApiNameParts parseApiName(std::string_view fullName)
{
    ApiNameParts parts;
    const auto segments = splitDots(fullName);
    parts.prefix = std::string(segments.front());
    if (segments.size() == 3) {
        parts.apiName = std::string(segments[1]);
    } else if (segments.size() == 4) {
        parts.apiName = std::string(segments[1]);
        parts.apiName += '.';
        parts.apiName += segments[2];
    }
    const std::string_view last = segments.back();
    std::int64_t index = 0;
    const auto [ptr, ec] = std::from_chars(last.data(), last.data() + last.size(), index);
    if (segments.size() > 1 && ec == std::errc() && ptr == last.data() + last.size() && index >= 0)
        parts.callIndex = index;
    return parts;
}

bool isUnsupportedPrefix(std::string_view prefix)
{
    return prefix == "Distributed" || prefix == "MindSpeed";
}

const std::vector<std::string>& hardCodedUnsupportedApis()
{
    static const std::vector<std::string> list { "to", "empty", "empty_like", "empty_strided", "new_empty",
                                                 "new_empty_strided", "empty_with_format" };
    return list;
}

bool isFilteredByLists(std::string_view apiName, const std::vector<std::string>& whiteList,
                       const std::vector<std::string>& blackList)
{
    const auto& hard = hardCodedUnsupportedApis();
    if (std::find(blackList.begin(), blackList.end(), apiName) != blackList.end()
        || std::find(hard.begin(), hard.end(), apiName) != hard.end())
        return true;
    return !whiteList.empty() && std::find(whiteList.begin(), whiteList.end(), apiName) == whiteList.end();
}

Result<ApiCallList> collectApiCalls(std::shared_ptr<const dump::DumpFile> dump, bool filterApi)
{
    ApiCallList list;
    list.dump = dump;
    list.diagnostics = dump->diagnostics;

    // parse_json_info_forward_backward: two dicts updated in file order. A repeated key keeps the
    // position of its first occurrence and the value of its last.
    std::vector<std::pair<std::string_view, const dump::Entry*>> forwards;
    std::unordered_map<std::string_view, std::size_t> forwardAt;
    std::unordered_map<std::string_view, const dump::Entry*> backwards;
    for (const dump::Entry& entry : dump->entries) {
        const std::string_view key = entry.key;
        if (key.find("Module") != std::string_view::npos)
            continue;
        if (key.find("forward") != std::string_view::npos) {
            if (!endsWith(key, ".forward"))
                return entryError(*dump, entry, "invalid name \"" + std::string(key)
                                                    + "\": a name holding \"forward\" must end in \".forward\"");
            const std::string_view name = key.substr(0, key.size() - 8);
            if (const auto it = forwardAt.find(name); it != forwardAt.end()) {
                forwards[it->second].second = &entry;
            } else {
                forwardAt.emplace(name, forwards.size());
                forwards.emplace_back(name, &entry);
            }
        } else if (key.find("backward") != std::string_view::npos) {
            if (!endsWith(key, ".backward"))
                return entryError(*dump, entry, "invalid name \"" + std::string(key)
                                                    + "\": a name holding \"backward\" must end in \".backward\"");
            backwards[key.substr(0, key.size() - 9)] = &entry;
        } else {
            return entryError(*dump, entry, "invalid API name \"" + std::string(key)
                                                + "\": run_ut expects names ending in .forward or .backward");
        }
    }

    std::unordered_map<std::string, std::unordered_set<std::string>> kept; // group -> signatures
    list.calls.reserve(forwards.size());
    for (const auto& [name, entry] : forwards) {
        if (filterApi) {
            const std::size_t lastDot = name.rfind('.');
            std::string group(lastDot == std::string_view::npos ? name : name.substr(0, lastDot));
            if (!kept[std::move(group)].insert(filterSignature(entry->value)).second) {
                ++list.filteredOut;
                continue;
            }
        }
        ApiCall call;
        call.fullName = std::string(name);
        auto parts = parseApiName(name);
        call.prefix = std::move(parts.prefix);
        call.apiName = std::move(parts.apiName);
        call.callIndex = parts.callIndex;
        call.forward = entry;
        if (const auto it = backwards.find(name); it != backwards.end())
            call.backward = it->second;
        call.dump = dump;
        // Bounded cost: the tensors are built as the dump names them, so their size is checked first.
        std::string largest;
        const std::optional<std::uint64_t> forwardBytes = tensorBytes(*entry, largest);
        bool fits = forwardBytes.has_value();
        std::uint64_t bytes = forwardBytes.value_or(0);
        if (fits && call.backward) {
            std::string largestBackward;
            const std::optional<std::uint64_t> more = tensorBytes(*call.backward, largestBackward);
            fits = more.has_value() && !__builtin_add_overflow(bytes, more.value_or(0), &bytes);
            if (largest.empty() || !more)
                largest = largestBackward;
        }
        if (!fits || bytes > maxReplayBytes()) {
            const std::string why = "the tensors of " + call.fullName + " would take "
                + (fits ? byteText(bytes) : std::string("more than 2^64 bytes")) + " (largest: " + largest
                + "), more than run_ut builds (" + byteText(maxReplayBytes())
                + "; PROBESCOPE_RUNUT_MAX_BYTES raises it)";
            list.diagnostics.push_back(makeError("runut.too-large",
                                                 SourceLocation { dump->path.string(), entry->offset, entry->line, 0 },
                                                 why));
            list.refused.emplace(call.fullName, "API " + call.fullName + " not replayed: " + why + ". SKIP.");
        }
        list.calls.push_back(std::move(call));
    }
    return list;
}

Result<ApiCallList> loadApiCalls(const std::filesystem::path& dumpJson, bool filterApi)
{
    // The one load step's checks (docs/reliability.md section 1): a "Max": "abc" or an entry that is "x" is an
    // error run_ut reports (exit 1), not a tensor generated from a default and judged "pass" (issue 25). Unknown
    // keys stay warnings; a file cut short is salvaged with its error, as before.
    dump::ReadOptions options;
    auto file = dump::readDumpJson(dumpJson, options);
    if (!file)
        return file.error();
    if ((*file)->format != dump::DumpFormat::DumpJson)
        return makeError("runut.dump-kind", fileLocation(dumpJson),
                         "run_ut needs a dump.json of level L1 or mix, not a debug.json");
    return collectApiCalls(*file, filterApi);
}

} // namespace probescope::runut
