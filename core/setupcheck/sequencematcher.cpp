// SPDX-License-Identifier: Apache-2.0
#include "core/setupcheck/sequencematcher.h"

#include <cstdint>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace probescope::setupcheck {

namespace {

/// Code points of a UTF-8 text; an invalid byte becomes 0xDC00 + byte (Python's surrogateescape).
std::vector<std::uint32_t> codePoints(std::string_view s)
{
    std::vector<std::uint32_t> out;
    out.reserve(s.size());
    std::size_t i = 0;
    while (i < s.size()) {
        const auto c = static_cast<unsigned char>(s[i]);
        std::size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
        std::uint32_t cp = len == 1 ? c : len == 2 ? (c & 0x1F) : len == 3 ? (c & 0x0F) : (c & 0x07);
        bool ok = len > 0 && i + len <= s.size();
        for (std::size_t k = 1; ok && k < len; ++k) {
            const auto cc = static_cast<unsigned char>(s[i + k]);
            ok = (cc & 0xC0) == 0x80;
            cp = (cp << 6) | (cc & 0x3F);
        }
        if (!ok) {
            out.push_back(0xDC00u + c);
            ++i;
            continue;
        }
        out.push_back(cp);
        i += len;
    }
    return out;
}

struct Matcher
{
    const std::vector<std::uint32_t>& a;
    const std::vector<std::uint32_t>& b;
    std::unordered_map<std::uint32_t, std::vector<std::size_t>> b2j;

    Matcher(const std::vector<std::uint32_t>& aa, const std::vector<std::uint32_t>& bb)
        : a(aa), b(bb)
    {
        for (std::size_t j = 0; j < b.size(); ++j)
            b2j[b[j]].push_back(j);
        // autojunk: popular elements leave the index (they are not junk, so the extension below still crosses them).
        const std::size_t n = b.size();
        if (n >= 200) {
            const std::size_t ntest = n / 100 + 1;
            for (auto it = b2j.begin(); it != b2j.end();) {
                if (it->second.size() > ntest)
                    it = b2j.erase(it);
                else
                    ++it;
            }
        }
    }

    std::tuple<std::size_t, std::size_t, std::size_t> longest(std::size_t alo, std::size_t ahi, std::size_t blo,
                                                             std::size_t bhi) const
    {
        std::size_t besti = alo, bestj = blo, bestsize = 0;
        std::unordered_map<std::size_t, std::size_t> j2len;
        std::unordered_map<std::size_t, std::size_t> newj2len;
        for (std::size_t i = alo; i < ahi; ++i) {
            newj2len.clear();
            const auto found = b2j.find(a[i]);
            if (found != b2j.end()) {
                for (const std::size_t j : found->second) {
                    if (j < blo)
                        continue;
                    if (j >= bhi)
                        break;
                    std::size_t prev = 0;
                    if (j > 0) {
                        const auto p = j2len.find(j - 1);
                        if (p != j2len.end())
                            prev = p->second;
                    }
                    const std::size_t k = prev + 1;
                    newj2len[j] = k;
                    if (k > bestsize) {
                        besti = i - k + 1;
                        bestj = j - k + 1;
                        bestsize = k;
                    }
                }
            }
            std::swap(j2len, newj2len);
        }
        // No element is junk (isjunk is None), so only the non-junk extensions apply.
        while (besti > alo && bestj > blo && a[besti - 1] == b[bestj - 1]) {
            --besti;
            --bestj;
            ++bestsize;
        }
        while (besti + bestsize < ahi && bestj + bestsize < bhi && a[besti + bestsize] == b[bestj + bestsize])
            ++bestsize;
        return { besti, bestj, bestsize };
    }

    std::size_t matches() const
    {
        std::size_t total = 0;
        std::vector<std::tuple<std::size_t, std::size_t, std::size_t, std::size_t>> queue;
        queue.emplace_back(0, a.size(), 0, b.size());
        while (!queue.empty()) {
            const auto [alo, ahi, blo, bhi] = queue.back();
            queue.pop_back();
            const auto [i, j, k] = longest(alo, ahi, blo, bhi);
            if (k == 0)
                continue;
            total += k;
            if (alo < i && blo < j)
                queue.emplace_back(alo, i, blo, j);
            if (i + k < ahi && j + k < bhi)
                queue.emplace_back(i + k, ahi, j + k, bhi);
        }
        return total;
    }
};

} // namespace

double sequenceMatcherRatio(std::string_view a, std::string_view b)
{
    const auto ca = codePoints(a);
    const auto cb = codePoints(b);
    const std::size_t length = ca.size() + cb.size();
    if (length == 0)
        return 1.0;
    if (ca.size() > kMaxSequenceMatcherLength || cb.size() > kMaxSequenceMatcherLength)
        return ca == cb ? 1.0 : 0.0;
    const Matcher matcher(ca, cb);
    return 2.0 * static_cast<double>(matcher.matches()) / static_cast<double>(length);
}

} // namespace probescope::setupcheck
