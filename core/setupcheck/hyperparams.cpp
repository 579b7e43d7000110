// SPDX-License-Identifier: Apache-2.0
#include "core/setupcheck/hyperparams.h"

#include "core/setupcheck/pytextutil.h"

#include <yaml-cpp/yaml.h>

#include <cmath>
#include <cstdlib>
#include <limits>
#include <vector>

namespace probescope::setupcheck {

namespace {

bool isWord(char c)
{
    // Python's \w on str: letters, digits, '_' of any script; a non-ASCII byte counts as part of a letter.
    const auto u = static_cast<unsigned char>(c);
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || u >= 0x80;
}

bool isDigit(char c)
{
    return c >= '0' && c <= '9';
}

/// The script without comment lines and trailing comments, lines joined with '\n' (universal newlines).
std::string scriptContent(std::string_view text)
{
    std::string out;
    std::size_t start = 0;
    while (start < text.size()) {
        std::size_t end = text.find_first_of("\r\n", start);
        const std::size_t lineEnd = end == std::string_view::npos ? text.size() : end;
        std::string_view line = text.substr(start, lineEnd - start);
        if (pyLstrip(line).empty() || pyLstrip(line).front() != '#') {
            const std::size_t hash = line.find('#');
            const std::string_view kept = pyRstrip(hash == std::string_view::npos ? line : line.substr(0, hash));
            if (!pyLstrip(kept).empty()) {
                out.append(kept);
                out += '\n';
            }
        }
        if (end == std::string_view::npos)
            break;
        start = end + 1;
        if (text[end] == '\r' && start < text.size() && text[start] == '\n')
            ++start;
    }
    return out;
}

/// re.search(r'msrun\s[^|]*|torchrun\s[^|]*|python\d? -m torch.distributed.launch\s[^|]*', s, re.DOTALL)
std::optional<std::string> findCommandLine(const std::string& s)
{
    auto rest = [&](std::size_t from, std::size_t ws) -> std::optional<std::string> {
        if (ws >= s.size() || !isPySpace(s[ws]))
            return std::nullopt;
        std::size_t end = s.find('|', ws + 1);
        if (end == std::string::npos)
            end = s.size();
        return s.substr(from, end - from);
    };
    for (std::size_t p = 0; p < s.size(); ++p) {
        if (s.compare(p, 5, "msrun") == 0) {
            if (auto m = rest(p, p + 5))
                return m;
        }
        if (s.compare(p, 8, "torchrun") == 0) {
            if (auto m = rest(p, p + 8))
                return m;
        }
        if (s.compare(p, 6, "python") == 0) {
            // \d? is greedy: with a digit first, then without.
            for (const std::size_t after : { p + 7, p + 6 }) {
                if (after == p + 7 && (after > s.size() || !isDigit(s[p + 6])))
                    continue;
                std::size_t q = after;
                if (s.compare(q, 9, " -m torch") != 0)
                    continue;
                q += 9;
                if (q >= s.size())
                    continue;
                ++q; // '.' matches any character
                if (s.compare(q, 11, "distributed") != 0)
                    continue;
                q += 11;
                if (q >= s.size())
                    continue;
                ++q;
                if (s.compare(q, 6, "launch") != 0)
                    continue;
                if (auto m = rest(p, q + 6))
                    return m;
            }
        }
    }
    return std::nullopt;
}

/// re.findall(r'([a-zA-Z0-9_]{1,20}_ARGS)="(.*?)"', s, re.DOTALL)
std::vector<std::pair<std::string, std::string>> findArgBlocks(const std::string& s)
{
    std::vector<std::pair<std::string, std::string>> out;
    const std::size_t lastQuote = s.rfind('"');
    if (lastQuote == std::string::npos)
        return out;
    auto nameChar = [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    };
    std::size_t p = 0;
    while (p < s.size()) {
        std::size_t run = 0;
        while (run < 20 && p + run < s.size() && nameChar(s[p + run]))
            ++run;
        bool matched = false;
        for (std::size_t k = run; k >= 1; --k) {
            if (s.compare(p + k, 7, "_ARGS=\"") != 0)
                continue;
            const std::size_t contentStart = p + k + 7;
            if (contentStart > lastQuote)
                continue;
            const std::size_t close = s.find('"', contentStart);
            out.emplace_back(s.substr(p, k + 5), s.substr(contentStart, close - contentStart));
            p = close + 1;
            matched = true;
            break;
        }
        if (!matched)
            ++p;
    }
    return out;
}

/// The last value of re.findall(rf'{name}=\s*(.+)', s) (no DOTALL: '.' stops at '\n').
std::optional<std::string> lastAssignment(const std::string& s, const std::string& name)
{
    std::optional<std::string> last;
    const std::string key = name + "=";
    std::size_t from = 0;
    while (from <= s.size()) {
        const std::size_t at = s.find(key, from);
        if (at == std::string::npos)
            break;
        const std::size_t eqEnd = at + key.size();
        std::size_t wsEnd = eqEnd;
        while (wsEnd < s.size() && isPySpace(s[wsEnd]))
            ++wsEnd;
        // \s* gives back characters until (.+) can take one that is not '\n'.
        std::optional<std::size_t> start;
        for (std::size_t t = wsEnd + 1; t-- > eqEnd;) {
            if (t < s.size() && s[t] != '\n') {
                start = t;
                break;
            }
        }
        if (!start) {
            from = at + 1;
            continue;
        }
        std::size_t end = s.find('\n', *start);
        if (end == std::string::npos)
            end = s.size();
        last = s.substr(*start, end - *start);
        from = end;
        if (from == s.size())
            break;
    }
    return last;
}

void replaceAll(std::string& s, const std::string& what, const std::string& with)
{
    if (what.empty())
        return;
    std::string out;
    std::size_t from = 0;
    for (std::size_t at = s.find(what); at != std::string::npos; at = s.find(what, from)) {
        out.append(s, from, at - from);
        out += with;
        from = at + what.size();
    }
    out.append(s, from, std::string::npos);
    s = std::move(out);
}

// ---- PyYAML's resolvers ----------------------------------------------------------------------------------------

/// [0-9_]* from i; returns the end.
std::size_t digitsUnderscore(std::string_view s, std::size_t i)
{
    while (i < s.size() && (isDigit(s[i]) || s[i] == '_'))
        ++i;
    return i;
}

/// ([eE][-+][0-9]+)? at i: the end (i when absent).
std::size_t optionalExponent(std::string_view s, std::size_t i)
{
    if (i + 2 < s.size() + 0 && (s[i] == 'e' || s[i] == 'E') && (s[i + 1] == '-' || s[i + 1] == '+')
        && isDigit(s[i + 2])) {
        std::size_t j = i + 2;
        while (j < s.size() && isDigit(s[j]))
            ++j;
        return j;
    }
    return i;
}

/// (:[0-5]?[0-9])+ at i: the end (i when absent).
std::size_t sexagesimalParts(std::string_view s, std::size_t i)
{
    std::size_t end = i;
    while (end < s.size() && s[end] == ':') {
        std::size_t j = end + 1;
        if (j + 1 < s.size() && s[j] >= '0' && s[j] <= '5' && isDigit(s[j + 1]))
            j += 2;
        else if (j < s.size() && isDigit(s[j]))
            j += 1;
        else
            break;
        end = j;
    }
    return end;
}

bool isYamlFloat(std::string_view s)
{
    std::size_t i = 0;
    const bool signed_ = !s.empty() && (s[0] == '-' || s[0] == '+');
    // [-+]?\.(inf|Inf|INF) and \.(nan|NaN|NAN)
    const std::string_view unsignedPart = s.substr(signed_ ? 1 : 0);
    if (unsignedPart == ".inf" || unsignedPart == ".Inf" || unsignedPart == ".INF")
        return true;
    if (s == ".nan" || s == ".NaN" || s == ".NAN")
        return true;
    // \.[0-9][0-9_]*([eE][-+][0-9]+)?  (no sign)
    if (s.size() >= 2 && s[0] == '.' && isDigit(s[1])) {
        const std::size_t end = optionalExponent(s, digitsUnderscore(s, 2));
        if (end == s.size())
            return true;
    }
    i = signed_ ? 1 : 0;
    if (i >= s.size() || !isDigit(s[i]))
        return false;
    const std::size_t intEnd = digitsUnderscore(s, i + 1);
    // [-+]?[0-9][0-9_]*\.[0-9_]*([eE][-+][0-9]+)?
    if (intEnd < s.size() && s[intEnd] == '.') {
        const std::size_t end = optionalExponent(s, digitsUnderscore(s, intEnd + 1));
        if (end == s.size())
            return true;
    }
    // [-+]?[0-9][0-9_]*(:[0-5]?[0-9])+\.[0-9_]*
    const std::size_t sexEnd = sexagesimalParts(s, intEnd);
    if (sexEnd > intEnd && sexEnd < s.size() && s[sexEnd] == '.' && digitsUnderscore(s, sexEnd + 1) == s.size())
        return true;
    return false;
}

bool isYamlInt(std::string_view s)
{
    std::size_t i = (!s.empty() && (s[0] == '-' || s[0] == '+')) ? 1 : 0;
    const std::string_view u = s.substr(i);
    auto all = [](std::string_view t, auto pred) {
        if (t.empty())
            return false;
        for (const char c : t) {
            if (!pred(c))
                return false;
        }
        return true;
    };
    if (u.size() > 2 && u[0] == '0' && u[1] == 'b')
        return all(u.substr(2), [](char c) { return c == '0' || c == '1' || c == '_'; });
    if (u.size() > 2 && u[0] == '0' && u[1] == 'x')
        return all(u.substr(2), [](char c) {
            return isDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') || c == '_';
        });
    if (u == "0")
        return true;
    if (u.size() > 1 && u[0] == '0')
        return all(u.substr(1), [](char c) { return (c >= '0' && c <= '7') || c == '_'; });
    if (!u.empty() && u[0] >= '1' && u[0] <= '9') {
        const std::size_t end = digitsUnderscore(u, 1);
        if (end == u.size())
            return true;
        const std::size_t sexEnd = sexagesimalParts(u, end);
        return sexEnd > end && sexEnd == u.size();
    }
    return false;
}

std::string withoutUnderscores(std::string_view s)
{
    std::string out;
    for (const char c : s) {
        if (c != '_')
            out += c;
    }
    return out;
}

/// YAML 1.1's base-60 numbers ("1:30" = 90): the parts from the right, times 60 each step.
long double sexagesimal(const std::string& v)
{
    long double value = 0;
    long double base = 1;
    const auto parts = pySplit(v, ':');
    for (auto it = parts.rbegin(); it != parts.rend(); ++it) {
        value += std::strtold(it->c_str(), nullptr) * base;
        base *= 60;
    }
    return value;
}

PyJson constructInt(std::string_view text)
{
    std::string v = withoutUnderscores(text);
    int sign = 1;
    if (!v.empty() && (v[0] == '-' || v[0] == '+')) {
        sign = v[0] == '-' ? -1 : 1;
        v.erase(0, 1);
    }
    long double value = 0;
    if (v == "0")
        return PyJson(0);
    if (v.rfind("0b", 0) == 0) {
        for (std::size_t i = 2; i < v.size(); ++i)
            value = value * 2 + (v[i] - '0');
    } else if (v.rfind("0x", 0) == 0) {
        for (std::size_t i = 2; i < v.size(); ++i) {
            const char c = v[i];
            value = value * 16 + (isDigit(c) ? c - '0' : (c | 0x20) - 'a' + 10);
        }
    } else if (v[0] == '0') {
        for (std::size_t i = 1; i < v.size(); ++i)
            value = value * 8 + (v[i] - '0');
    } else if (v.find(':') != std::string::npos) {
        value = sexagesimal(v);
    } else {
        for (const char c : v)
            value = value * 10 + (c - '0');
    }
    if (value <= static_cast<long double>(std::numeric_limits<std::int64_t>::max()))
        return PyJson(static_cast<std::int64_t>(value) * sign);
    // Beyond 64 bits Python keeps an exact int; here the nearest double (documented).
    return PyJson(static_cast<double>(value) * sign);
}

PyJson constructFloat(std::string_view text)
{
    std::string v = withoutUnderscores(text);
    for (char& c : v)
        c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    double sign = 1;
    if (!v.empty() && (v[0] == '-' || v[0] == '+')) {
        sign = v[0] == '-' ? -1 : 1;
        v.erase(0, 1);
    }
    if (v == ".inf")
        return PyJson(sign * std::numeric_limits<double>::infinity());
    if (v == ".nan")
        return PyJson(std::numeric_limits<double>::quiet_NaN());
    if (v.find(':') != std::string::npos)
        return PyJson(sign * static_cast<double>(sexagesimal(v)));
    return PyJson(sign * std::strtod(v.c_str(), nullptr));
}

struct YamlWalk
{
    PyJson& into;
    std::size_t nodes = 0;
};

constexpr std::size_t kMaxYamlNodes = 1'000'000;

PyJson scalarValue(const YAML::Node& node)
{
    const std::string& text = node.Scalar();
    const std::string& tag = node.Tag();
    if (tag == "!" || tag == "tag:yaml.org,2002:str")
        return PyJson(text);
    if (tag == "tag:yaml.org,2002:int" && isYamlInt(text))
        return constructInt(text);
    if (tag == "tag:yaml.org,2002:float" && (isYamlFloat(text) || isYamlInt(text)))
        return constructFloat(text);
    return resolvePlainScalar(text);
}

/// isinstance(x, (int, float, str, bool, list)) of a loaded YAML node (None and dicts are not).
bool isScalarOrList(const YAML::Node& node)
{
    if (node.IsSequence())
        return true;
    if (!node.IsScalar())
        return false;
    return !scalarValue(node).is_null();
}

PyJson toJson(const YAML::Node& node, YamlWalk& walk, int depth)
{
    if (++walk.nodes > kMaxYamlNodes || depth > 100)
        throw std::runtime_error("the YAML document is too large or too deep (aliases expanded)");
    if (node.IsScalar())
        return scalarValue(node);
    if (node.IsSequence()) {
        PyJson out = PyJson::array();
        for (const auto& item : node)
            out.push_back(toJson(item, walk, depth + 1));
        return out;
    }
    if (node.IsMap()) {
        PyJson out = PyJson::object();
        for (const auto& item : node)
            out[item.first.IsScalar() ? pyStr(scalarValue(item.first)) : std::string("?")] =
                toJson(item.second, walk, depth + 1);
        return out;
    }
    return PyJson();
}

void recurse(const YAML::Node& node, const std::string& prefix, YamlWalk& walk, int depth)
{
    if (++walk.nodes > kMaxYamlNodes || depth > 100)
        throw std::runtime_error("the YAML document is too large or too deep (aliases expanded)");
    if (node.IsMap()) {
        for (const auto& item : node) {
            // Keys are spelled as str() of their YAML value (documented: msprobe would fail on a non-str key).
            const std::string key = item.first.IsScalar() ? (item.first.Tag() == "!" ? item.first.Scalar()
                                                                                    : pyStr(scalarValue(item.first)))
                                                          : std::string("?");
            recurse(item.second, prefix.empty() ? key : prefix + "." + key, walk, depth + 1);
        }
    } else if (node.IsSequence()) {
        bool allScalar = true;
        for (const auto& item : node)
            allScalar = allScalar && isScalarOrList(item);
        if (allScalar) {
            walk.into[prefix] = toJson(node, walk, depth + 1);
        } else {
            std::size_t index = 0;
            for (const auto& item : node) {
                const std::string key = std::to_string(index++);
                recurse(item, prefix.empty() ? key : prefix + "." + key, walk, depth + 1);
            }
        }
    } else if (node.IsScalar()) {
        PyJson value = scalarValue(node);
        if (!value.is_null())
            walk.into[prefix] = std::move(value);
    }
}

} // namespace

PyJson resolvePlainScalar(std::string_view text)
{
    static constexpr std::string_view kBools[] = { "yes", "Yes", "YES", "no",    "No",    "NO",    "true", "True", "TRUE",
                                                   "false", "False", "FALSE", "on", "On", "ON", "off", "Off", "OFF" };
    for (std::size_t i = 0; i < std::size(kBools); ++i) {
        if (text == kBools[i]) {
            const bool value = text[0] == 'y' || text[0] == 'Y' || text[0] == 't' || text[0] == 'T'
                               || (text.size() == 2 && (text[1] == 'n' || text[1] == 'N'));
            return PyJson(value);
        }
    }
    if (isYamlFloat(text))
        return constructFloat(text);
    if (isYamlInt(text))
        return constructInt(text);
    if (text.empty() || text == "~" || text == "null" || text == "Null" || text == "NULL")
        return PyJson();
    return PyJson(std::string(text));
}

PyJson parseShellHyperparameters(std::string_view script)
{
    PyJson out = PyJson::object();
    const std::string content = scriptContent(script);
    auto command = findCommandLine(content);
    if (!command)
        return out;
    std::string line = std::move(*command);
    for (auto& [name, block] : findArgBlocks(content)) {
        std::replace(block.begin(), block.end(), '\n', ' ');
        replaceAll(line, "$" + name, block);
        if (line.size() > (std::size_t { 64 } << 20))
            break; // blocks that expand each other without end: stop, as a bound (documented)
    }
    // re.findall(r'--([\w-]+)(?:\s+([^\s\\]+))?', command_line)
    std::size_t p = 0;
    while (p + 2 < line.size()) {
        if (line[p] != '-' || line[p + 1] != '-' || !(isWord(line[p + 2]) || line[p + 2] == '-')) {
            ++p;
            continue;
        }
        std::size_t keyEnd = p + 2;
        while (keyEnd < line.size() && (isWord(line[keyEnd]) || line[keyEnd] == '-'))
            ++keyEnd;
        const std::string key = line.substr(p + 2, keyEnd - p - 2);
        std::size_t ws = keyEnd;
        while (ws < line.size() && isPySpace(line[ws]))
            ++ws;
        std::string value;
        std::size_t end = keyEnd;
        if (ws > keyEnd && ws < line.size() && line[ws] != '\\') {
            std::size_t v = ws;
            while (v < line.size() && !isPySpace(line[v]) && line[v] != '\\')
                ++v;
            value = line.substr(ws, v - ws);
            end = v;
        }
        p = end;
        // re.match(r'\$\{?(\w+)}?', value): a $VAR (or ${VAR}) is looked up in the script.
        if (!value.empty() && value[0] == '$') {
            std::size_t n = 1;
            if (n < value.size() && value[n] == '{')
                ++n;
            std::size_t nameEnd = n;
            while (nameEnd < value.size() && isWord(value[nameEnd]))
                ++nameEnd;
            if (nameEnd > n) {
                if (auto assigned = lastAssignment(content, value.substr(n, nameEnd - n)))
                    value = std::move(*assigned);
            }
        }
        if (value.empty())
            out[key] = true;
        else
            out[key] = value;
    }
    return out;
}

std::optional<Diagnostic> parseYamlHyperparameters(std::string_view text, const std::string& file, PyJson& into)
{
    YamlWalk walk { into };
    try {
        const YAML::Node root = YAML::Load(std::string(text));
        recurse(root, "", walk, 0);
    } catch (const YAML::Exception& e) {
        return makeError("config-check.yaml",
                         SourceLocation { file, std::nullopt, static_cast<std::uint32_t>(e.mark.line + 1),
                                          static_cast<std::uint32_t>(e.mark.column + 1) },
                         file + ": " + e.what());
    } catch (const std::exception& e) {
        return makeError("config-check.yaml", SourceLocation { file, std::nullopt, 0, 0 }, file + ": " + e.what());
    }
    return std::nullopt;
}

void updateHyperparameters(PyJson& into, const PyJson& add)
{
    for (const auto& [key, value] : add.items()) {
        const auto it = into.find(key);
        if (it != into.end() && !pyEqual(*it, value)) {
            // msprobe tests `"values" in ori_dict.keys()` (the whole dict, not the entry); kept.
            if (into.contains("values") && it->is_object() && it->contains("values") && (*it)["values"].is_array()) {
                (*it)["values"].push_back(value);
            } else {
                PyJson dup = PyJson::object();
                dup["description"] = "duplicate_value";
                dup["values"] = PyJson::array({ *it, value });
                *it = std::move(dup);
            }
        } else {
            into[key] = value;
        }
    }
}

} // namespace probescope::setupcheck
