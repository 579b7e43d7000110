// SPDX-License-Identifier: Apache-2.0
#include "ui/models/nodesearch.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <functional>

namespace probescope::ui {

using tree::NodeId;

namespace {

char lowerAscii(char c)
{
    return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

bool isAscii(const QString& s)
{
    return std::all_of(s.begin(), s.end(), [](QChar c) { return c.unicode() < 0x80; });
}

bool isAsciiAlnum(char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/// Skips a quantifier (and its lazy or possessive mark) at `i`, saying whether there was one and whether
/// it allows zero repeats; false for a '{' that is not a quantifier.
bool skipQuantifier(const std::string& p, std::size_t& i, bool& quantified, bool& optional)
{
    optional = false;
    quantified = false;
    if (i >= p.size())
        return true;
    const char c = p[i];
    if (c == '*' || c == '?') {
        optional = true;
        ++i;
    } else if (c == '+') {
        ++i;
    } else if (c == '{') {
        std::size_t j = i + 1;
        while (j < p.size() && ((p[j] >= '0' && p[j] <= '9') || p[j] == ','))
            ++j;
        if (j >= p.size() || p[j] != '}' || j == i + 1)
            return false;
        optional = true; // {0,n} may be; treated alike
        i = j + 1;
    } else {
        return true;
    }
    quantified = true;
    if (i < p.size() && (p[i] == '?' || p[i] == '+'))
        ++i;
    return true;
}

/// Skips a character class starting at p[i] == '['; false if it does not end.
bool skipClass(const std::string& p, std::size_t& i)
{
    std::size_t j = i + 1;
    if (j < p.size() && p[j] == '^')
        ++j;
    if (j < p.size() && p[j] == ']') // a leading ']' is a member
        ++j;
    for (; j < p.size(); ++j) {
        if (p[j] == '\\') {
            ++j;
        } else if (p[j] == '[' && j + 1 < p.size() && p[j + 1] == ':') {
            const std::size_t end = p.find(":]", j + 2);
            if (end == std::string::npos)
                return false;
            j = end + 1;
        } else if (p[j] == ']') {
            i = j + 1;
            return true;
        }
    }
    return false;
}

} // namespace

std::string requiredLiteral(const QString& pattern)
{
    // Only the top level is read: a run of plain characters with nothing optional between them must
    // appear in every match. Anything this reader does not fully understand ((?...) constructs,
    // alternation at the top level, numbered escapes) gives no literal, and the search scans every key.
    if (!isAscii(pattern))
        return {};
    const std::string p = pattern.toStdString();
    std::string best;
    std::string run;
    auto endRun = [&] {
        if (run.size() > best.size())
            best = run;
        run.clear();
    };
    static constexpr std::string_view kAtomEscapes = "dDwWsShHvVRXbBAzZGtnrfae";
    std::size_t i = 0;
    while (i < p.size()) {
        const char c = p[i];
        bool quantified = false;
        bool optional = false;
        if (c == '|')
            return {};
        if (c == '(') {
            if (i + 1 < p.size() && p[i + 1] == '?')
                return {};
            int depth = 0;
            std::size_t j = i;
            for (; j < p.size(); ++j) {
                if (p[j] == '\\') {
                    ++j;
                } else if (p[j] == '[') {
                    std::size_t k = j;
                    if (!skipClass(p, k))
                        return {};
                    j = k - 1;
                } else if (p[j] == '(') {
                    ++depth;
                } else if (p[j] == ')' && --depth == 0) {
                    break;
                }
            }
            if (j >= p.size())
                return {};
            i = j + 1;
            endRun();
            if (!skipQuantifier(p, i, quantified, optional))
                return {};
            continue;
        }
        if (c == '[') {
            if (!skipClass(p, i))
                return {};
            endRun();
            if (!skipQuantifier(p, i, quantified, optional))
                return {};
            continue;
        }
        char literal = 0;
        if (c == '\\') {
            if (i + 1 >= p.size())
                return {};
            const char e = p[i + 1];
            i += 2;
            if (isAsciiAlnum(e)) {
                if (kAtomEscapes.find(e) == std::string_view::npos)
                    return {}; // \x41, \p{..}, back-references, \Q...: not read
                endRun();
                if (!skipQuantifier(p, i, quantified, optional))
                    return {};
                continue;
            }
            literal = e;
        } else if (c == '.' || c == '^' || c == '$' || c == ')' || c == ']' || c == '}' || c == '*' || c == '+'
                   || c == '?' || c == '{') {
            ++i;
            endRun();
            if (!skipQuantifier(p, i, quantified, optional))
                return {};
            continue;
        } else {
            literal = c;
            ++i;
        }
        run.push_back(lowerAscii(literal));
        if (!skipQuantifier(p, i, quantified, optional))
            return {};
        if (quantified) {
            // An optional character leaves the run, a repeated one ends it.
            if (optional)
                run.pop_back();
            endRun();
        }
    }
    endRun();
    return best;
}


std::vector<NodeId> displayOrderOf(const tree::ConstructTree& tree)
{
    std::vector<NodeId> order;
    order.reserve(tree.size());
    // Iterative: a malformed construct.json could chain nodes deeper than the call stack allows.
    std::vector<NodeId> stack(tree.roots().rbegin(), tree.roots().rend());
    while (!stack.empty()) {
        const NodeId id = stack.back();
        stack.pop_back();
        order.push_back(id);
        const auto kids = tree.children(id);
        stack.insert(stack.end(), kids.rbegin(), kids.rend());
    }
    return order;
}

NameMatcher::NameMatcher(const QString& pattern, bool regex, Qt::CaseSensitivity sensitivity)
    : m_empty(pattern.isEmpty())
    , m_regex(regex)
    , m_case(sensitivity)
    , m_text(pattern)
{
    if (m_empty)
        return;
    if (regex) {
        m_expression.setPattern(pattern);
        m_expression.setPatternOptions(sensitivity == Qt::CaseInsensitive ? QRegularExpression::CaseInsensitiveOption
                                                                          : QRegularExpression::NoPatternOption);
        if (!m_expression.isValid()) {
            m_error = QStringLiteral("%1 (at %2)").arg(m_expression.errorString()).arg(m_expression.patternErrorOffset());
            return;
        }
        m_expression.optimize();
        return;
    }
    m_asciiFast = isAscii(pattern);
    if (m_asciiFast) {
        m_needle = pattern.toStdString();
        if (sensitivity == Qt::CaseInsensitive)
            std::transform(m_needle.begin(), m_needle.end(), m_needle.begin(), lowerAscii);
    }
}

bool NameMatcher::matches(std::string_view key) const
{
    if (m_empty)
        return true;
    if (!m_error.isEmpty())
        return false;
    if (m_asciiFast) {
        // ASCII needle bytes can only match ASCII key bytes in UTF-8, so byte-wise folding is exact.
        if (m_case == Qt::CaseSensitive)
            return key.find(m_needle) != std::string_view::npos;
        // In place: no lowered copy of the key.
        return std::search(key.begin(), key.end(), m_needle.begin(), m_needle.end(),
                           [](char k, char n) { return lowerAscii(k) == n; })
            != key.end();
    }
    const QString text = QString::fromUtf8(key.data(), static_cast<qsizetype>(key.size()));
    if (m_regex)
        return m_expression.match(text).hasMatch();
    return text.contains(m_text, m_case);
}

NodeSearch::NodeSearch(std::shared_ptr<const tree::ConstructTree> tree, std::span<const NodeId> displayOrder)
    : m_tree(std::move(tree))
{
    if (!m_tree)
        return;
    m_order = displayOrder.empty() ? displayOrderOf(*m_tree)
                                   : std::vector<NodeId>(displayOrder.begin(), displayOrder.end());
    // Sizes first (TreeNode only), then one copy per key and one lowering pass over the buffer: the
    // keys lie scattered through the dump's text, so each is read exactly once (~1 s at 1M nodes
    // when copied byte by byte).
    std::size_t bytes = 0;
    for (const NodeId id : m_order)
        bytes += m_tree->node(id).key.size() + 1;
    m_lowered.resize(bytes);
    m_start.resize(m_order.size() + 1);
    char* out = m_lowered.data();
    for (std::size_t k = 0; k < m_order.size(); ++k) {
        const std::string_view key = m_tree->node(m_order[k]).key;
        m_start[k] = static_cast<std::uint32_t>(out - m_lowered.data());
        std::memcpy(out, key.data(), key.size());
        out += key.size();
        *out++ = '\0';
    }
    m_start.back() = static_cast<std::uint32_t>(bytes);
    std::transform(m_lowered.begin(), m_lowered.end(), m_lowered.begin(), lowerAscii);
}

void NodeSearch::findLowered(const std::string& needle, std::vector<NodeId>& out) const
{
    // One scan of the whole buffer; a hit is mapped to its key and the scan resumes at the next key.
    const std::string_view all(m_lowered);
    // Boyer-Moore-Horspool skips most of the buffer for longer needles; find() (memchr on the first
    // character) stops at every 'f' of "forward" for a needle like "functional.gelu.".
    const std::boyer_moore_horspool_searcher searcher(needle.begin(), needle.end());
    std::size_t from = 0;
    while (true) {
        const std::size_t at = needle.size() < 8
            ? all.find(needle, from)
            : std::size_t(std::search(all.begin() + std::ptrdiff_t(from), all.end(), searcher) - all.begin());
        if (at == std::string_view::npos || at >= all.size())
            return;
        const auto key = std::size_t(std::upper_bound(m_start.begin(), m_start.end(), at) - m_start.begin()) - 1;
        if (at + needle.size() < m_start[key + 1]) // not across the separator
            out.push_back(m_order[key]);
        from = m_start[key + 1];
    }
}

void NodeSearch::findRegex(const QRegularExpression& expression, const std::vector<NodeId>& nodes,
                           std::vector<NodeId>& out) const
{
    QString text;
    for (const NodeId id : nodes) {
        const std::string_view key = m_tree->node(id).key;
        // Keys are ASCII in practice: widening in place reuses the buffer instead of allocating per key.
        bool ascii = true;
        text.resize(static_cast<qsizetype>(key.size()));
        QChar* data = text.data();
        for (std::size_t i = 0; i < key.size(); ++i) {
            const auto c = static_cast<unsigned char>(key[i]);
            ascii = ascii && c < 0x80;
            data[i] = QChar(c);
        }
        if (!ascii)
            text = QString::fromUtf8(key.data(), static_cast<qsizetype>(key.size()));
        if (expression.match(text).hasMatch())
            out.push_back(id);
    }
}

NodeSearch::Hits NodeSearch::find(const QString& pattern, const Options& options) const
{
    Hits hits;
    if (!m_tree || pattern.isEmpty())
        return hits;
    const Qt::CaseSensitivity sensitivity = options.caseSensitive ? Qt::CaseSensitive : Qt::CaseInsensitive;
    if (!options.regex && !options.caseSensitive && isAscii(pattern) && !pattern.contains(QChar(0))) {
        std::string needle = pattern.toStdString();
        std::transform(needle.begin(), needle.end(), needle.begin(), lowerAscii);
        findLowered(needle, hits.nodes);
        return hits;
    }
    const NameMatcher matcher(pattern, options.regex, sensitivity);
    if (!matcher.isValid()) {
        hits.error = matcher.error();
        return hits;
    }
    if (options.regex) {
        QRegularExpression expression(pattern, options.caseSensitive ? QRegularExpression::NoPatternOption
                                                                      : QRegularExpression::CaseInsensitiveOption);
        expression.optimize();
        // A literal every match contains narrows the keys in one scan of the lowered buffer; the
        // expression then runs on those alone (a match per key costs ~150 ns: 0.15 s at 1M keys).
        const std::string literal = requiredLiteral(pattern);
        if (literal.size() >= 2 && literal.find('\0') == std::string::npos) {
            std::vector<NodeId> candidates;
            findLowered(literal, candidates);
            findRegex(expression, candidates, hits.nodes);
        } else {
            findRegex(expression, m_order, hits.nodes);
        }
        return hits;
    }
    for (const NodeId id : m_order) {
        if (matcher.matches(m_tree->node(id).key))
            hits.nodes.push_back(id);
    }
    return hits;
}

} // namespace probescope::ui
