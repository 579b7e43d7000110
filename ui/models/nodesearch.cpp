// SPDX-License-Identifier: Apache-2.0
#include "models/nodesearch.h"

#include <algorithm>
#include <cctype>

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

} // namespace

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
        m_scratch.assign(key);
        std::transform(m_scratch.begin(), m_scratch.end(), m_scratch.begin(), lowerAscii);
        return m_scratch.find(m_needle) != std::string::npos;
    }
    const QString text = QString::fromUtf8(key.data(), static_cast<qsizetype>(key.size()));
    if (m_regex)
        return m_expression.match(text).hasMatch();
    return text.contains(m_text, m_case);
}

NodeSearch::NodeSearch(std::shared_ptr<const tree::ConstructTree> tree)
    : m_tree(std::move(tree))
{
    if (m_tree)
        m_order = displayOrderOf(*m_tree);
}

NodeSearch::Hits NodeSearch::find(const QString& pattern, const Options& options) const
{
    Hits hits;
    if (!m_tree || pattern.isEmpty())
        return hits;
    const NameMatcher matcher(pattern, options.regex, options.caseSensitive ? Qt::CaseSensitive : Qt::CaseInsensitive);
    if (!matcher.isValid()) {
        hits.error = matcher.error();
        return hits;
    }
    for (const NodeId id : m_order) {
        if (matcher.matches(m_tree->node(id).key))
            hits.nodes.push_back(id);
    }
    return hits;
}

} // namespace probescope::ui
