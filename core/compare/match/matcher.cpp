// SPDX-License-Identifier: Apache-2.0
#include "core/compare/match/matcher.h"

#include "core/compare/table/pytext.h"

#include <algorithm>
#include <deque>

namespace probescope::compare {

std::string fuzzyReduce(std::string_view name, std::string_view word)
{
    // rename_api: split at every occurrence of the word, keep the first two pieces, cut the first piece
    // at its second-to-last '.', append the second piece.
    const std::size_t first = name.find(word);
    if (first == std::string_view::npos)
        return std::string(name);
    const std::string_view head = name.substr(0, first);
    const std::size_t afterFirst = first + word.size();
    const std::size_t second = name.find(word, afterFirst);
    const std::string_view tail
        = name.substr(afterFirst, second == std::string_view::npos ? std::string_view::npos : second - afterFirst);
    std::vector<std::string_view> parts;
    std::size_t start = 0;
    while (true) {
        const std::size_t dot = head.find('.', start);
        parts.push_back(head.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start));
        if (dot == std::string_view::npos)
            break;
        start = dot + 1;
    }
    std::string reduced;
    if (parts.size() >= 3) {
        for (std::size_t i = 0; i + 2 < parts.size(); ++i) {
            if (i)
                reduced += '.';
            reduced += parts[i];
        }
    } else {
        reduced = std::string(parts[0]);
    }
    reduced += tail;
    return reduced;
}

bool fuzzyEqual(std::string_view a, std::string_view b)
{
    for (std::string_view word : { std::string_view("forward"), std::string_view("backward") }) {
        if (a.find(word) != std::string_view::npos && b.find(word) != std::string_view::npos)
            return fuzzyReduce(a, word) == fuzzyReduce(b, word);
    }
    return a == b;
}

namespace {

bool tolerated(std::string_view a, std::string_view b)
{
    if (a == b)
        return true;
    auto half = [](std::string_view s) { return s == "torch.float16" || s == "Float16"; };
    auto single = [](std::string_view s) { return s == "torch.float32" || s == "Float32"; };
    auto bf = [](std::string_view s) { return s == "torch.bfloat16" || s == "BFloat16"; };
    return (half(a) && single(b)) || (single(a) && half(b)) || (half(a) && bf(b)) || (bf(a) && half(b));
}

/// The printed text of a value (for the tolerant dtype test, which compares the texts msprobe prints).
std::string_view printed(const FlatCell& c, std::string& buffer)
{
    if (c.isText())
        return c.textView();
    buffer.clear();
    appendExcelText(buffer, c.view());
    return buffer;
}

/// Walks the rows of one category of both ops side by side; `same` decides each pair. False when the counts differ.
template<typename Same>
bool categoryMatches(const Op& npu, const Op& bench, RowCategory category, Same same)
{
    auto n = npu.rows.begin();
    auto b = bench.rows.begin();
    while (true) {
        while (n != npu.rows.end() && n->category != category)
            ++n;
        while (b != bench.rows.end() && b->category != category)
            ++b;
        const bool nEnd = n == npu.rows.end();
        const bool bEnd = b == bench.rows.end();
        if (nEnd || bEnd)
            return nEnd == bEnd;
        if (!same(*n, *b))
            return false;
        ++n;
        ++b;
    }
}

bool structsMatch(const Op& npu, const Op& bench, bool md5)
{
    // msprobe compares the struct lists of each category: [dtype, shape(, md5)] texts exactly first ...
    const auto exact = [md5](const FlatRow& a, const FlatRow& b) {
        return sameText(a.dtype(), b.dtype()) && sameText(a.shape(), b.shape()) && (!md5 || sameText(a.md5(), b.md5()));
    };
    bool equal = true;
    for (int c = 0; c < 4 && equal; ++c)
        equal = categoryMatches(npu, bench, static_cast<RowCategory>(c), exact);
    if (equal)
        return true;
    // ... then, when both have inputs, dtype and shape again with float16/float32/bfloat16 tolerated.
    const auto hasInput = [](const Op& op) {
        return std::any_of(op.rows.begin(), op.rows.end(),
                           [](const FlatRow& r) { return r.category == RowCategory::Input; });
    };
    if (!hasInput(npu) || !hasInput(bench))
        return false;
    std::string x;
    std::string y;
    const auto tolerant = [&](const FlatRow& a, const FlatRow& b) {
        return sameText(a.shape(), b.shape()) && tolerated(printed(a.dtype(), x), printed(b.dtype(), y));
    };
    for (int c = 0; c < 4; ++c) {
        if (!categoryMatches(npu, bench, static_cast<RowCategory>(c), tolerant))
            return false;
    }
    return true;
}

bool namesMatch(const Op& npu, const Op& bench, bool fuzzy)
{
    if (!fuzzy) {
        if (npu.rows.size() != bench.rows.size())
            return false;
        for (std::size_t i = 0; i < npu.rows.size(); ++i) {
            if (!npu.rows[i].sameName(bench.rows[i]))
                return false;
        }
        return true;
    }
    if (npu.rows.empty() || npu.rows.size() != bench.rows.size())
        return false;
    for (std::size_t i = 0; i < npu.rows.size(); ++i) {
        if (!fuzzyEqual(npu.rows[i].nameText(), bench.rows[i].nameText()))
            return false;
    }
    return true;
}

} // namespace

bool opsMatch(const Op& npu, const Op& bench, bool fuzzy, bool md5)
{
    // The Aten special case of 1.2.2 consults a legacy underscore-name table that never matches
    // dot-separated names: exactly one side naming Aten means no match.
    const bool npuAten = !npu.rows.empty() && npu.rows.front().nameContains("Aten");
    const bool benchAten = !bench.rows.empty() && bench.rows.front().nameContains("Aten");
    if (npuAten != benchAten)
        return false;
    return namesMatch(npu, bench, fuzzy) && structsMatch(npu, bench, md5);
}

MatchOutcome matchOps(const std::vector<const Op*>& npu, const std::vector<const Op*>& bench, bool fuzzy, bool md5,
                      const ManualPairing* manual)
{
    const auto matches = [&](std::uint32_t n, std::uint32_t b) {
        if (manual && (manual->benchOf[n] >= 0 || manual->npuOf[b] >= 0))
            return manual->benchOf[n] == static_cast<std::int64_t>(b);
        return opsMatch(*npu[n], *bench[b], fuzzy, md5);
    };
    MatchOutcome outcome;
    std::deque<std::uint32_t> n;
    std::deque<std::uint32_t> b;
    const std::size_t total = std::max(npu.size(), bench.size());
    std::size_t t = 0;
    for (; t < total; ++t) {
        bool grew = false;
        if (t < npu.size() && npu[t] && !npu[t]->rows.empty()) {
            n.push_back(static_cast<std::uint32_t>(t));
            grew = true;
        }
        if (t < bench.size() && bench[t] && !bench[t]->rows.empty()) {
            b.push_back(static_cast<std::uint32_t>(t));
            grew = true;
        }
        if ((n.empty() && b.empty()) || !grew)
            continue;
        if (n.empty() != b.empty()) {
            outcome.stoppedEarly = true;
            break;
        }
        // match_point: newest NPU op against older bench ops, then newest against newest, then older NPU
        // ops against the newest bench op.
        std::optional<std::pair<std::size_t, std::size_t>> point;
        const std::size_t lastN = n.size() - 1;
        const std::size_t lastB = b.size() - 1;
        for (std::size_t j = 0; j < lastB && !point; ++j) {
            if (matches(n[lastN], b[j]))
                point = { lastN, j };
        }
        if (!point && matches(n[lastN], b[lastB]))
            point = { lastN, lastB };
        for (std::size_t k = 0; k < lastN && !point; ++k) {
            if (matches(n[k], b[lastB]))
                point = { k, lastB };
        }
        if (!point)
            continue;
        for (std::size_t k = 0; k < point->first; ++k)
            outcome.steps.push_back({ n[k], -1 });
        outcome.steps.push_back({ n[point->first], static_cast<std::int64_t>(b[point->second]) });
        n.erase(n.begin(), n.begin() + static_cast<std::ptrdiff_t>(point->first + 1));
        b.erase(b.begin(), b.begin() + static_cast<std::ptrdiff_t>(point->second + 1));
    }
    for (std::uint32_t k : n)
        outcome.steps.push_back({ k, -1 });
    if (outcome.stoppedEarly) {
        // The op read in the stopping iteration, if any, was queued and emitted above.
        for (std::size_t i = t + 1; i < npu.size(); ++i)
            outcome.npuOpsLost += (npu[i] && !npu[i]->rows.empty()) ? 1 : 0;
    }
    return outcome;
}

} // namespace probescope::compare
