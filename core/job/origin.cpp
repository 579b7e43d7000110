// SPDX-License-Identifier: Apache-2.0
#include "core/job/origin.h"

#include <algorithm>
#include <tuple>

namespace probescope::job {

bool isCommunicationKey(std::string_view key)
{
    return key.starts_with("Distributed.");
}

void locateFailure(RankFailure& f, const compare::FirstFailure& first, const tree::ConstructTree* tree)
{
    f.failed = true;
    f.found = first.found;
    f.key = first.key;
    f.executionIndex = first.executionIndex;
    f.commBefore = 0;
    f.nextCommKey.clear();
    f.nextCommIndex = 0;
    if (!tree)
        return;
    const auto order = tree->executionOrder();
    for (std::size_t i = 0; i < order.size(); ++i) {
        if (!isCommunicationKey(tree->node(order[i]).key))
            continue;
        if (i < first.executionIndex) {
            ++f.commBefore;
        } else {
            f.nextCommKey = std::string(tree->node(order[i]).key);
            f.nextCommIndex = static_cast<std::uint32_t>(i);
            break;
        }
    }
}

JobOrigin findJobOrigin(const std::vector<RankFailure>& ranks)
{
    JobOrigin origin;
    std::optional<std::int64_t> step;
    for (const RankFailure& r : ranks) {
        if (r.failed && !r.key.empty() && (!step || r.step < *step))
            step = r.step;
    }
    if (!step)
        return origin;
    std::vector<const RankFailure*> failing;
    for (const RankFailure& r : ranks) {
        if (r.failed && !r.key.empty() && r.step == *step)
            failing.push_back(&r);
    }
    const bool someOwn = std::any_of(failing.begin(), failing.end(), [](const RankFailure* r) {
        return !isCommunicationKey(r->key);
    });
    // A culprit (inputs pass) beats a node whose inputs already differ, as in earliestFailure.
    auto order = [](const RankFailure* r) {
        return std::make_tuple(r->commBefore, !r->found, r->executionIndex, r->rank, r->rankLabel);
    };
    const RankFailure* best = nullptr;
    for (const RankFailure* r : failing) {
        if (someOwn && isCommunicationKey(r->key))
            continue;
        if (!best || order(r) < order(best))
            best = r;
    }
    origin.fails = true;
    origin.step = best->step;
    origin.rank = best->rank;
    origin.rankLabel = best->rankLabel;
    origin.key = best->key;
    origin.executionIndex = best->executionIndex;
    origin.found = best->found;
    origin.reason = someOwn ? "first failure not caused by a communication, after " + std::to_string(best->commBefore)
            + " communication call(s), fewer than or as many as any other diverging rank"
                            : "every diverging rank first fails in a communication node; this one after the fewest ("
            + std::to_string(best->commBefore) + ")";
    if (!best->nextCommKey.empty() && best->nextCommKey != best->key)
        origin.chain.push_back({ best->rank, best->rankLabel, best->nextCommKey, best->nextCommIndex, "sent" });
    std::vector<const RankFailure*> receivers;
    for (const RankFailure* r : failing) {
        if (r != best && isCommunicationKey(r->key))
            receivers.push_back(r);
    }
    std::sort(receivers.begin(), receivers.end(), [](const RankFailure* a, const RankFailure* b) {
        return std::tie(a->commBefore, a->rank, a->rankLabel) < std::tie(b->commBefore, b->rank, b->rankLabel);
    });
    for (const RankFailure* r : receivers)
        origin.chain.push_back({ r->rank, r->rankLabel, r->key, r->executionIndex, "received" });
    return origin;
}

} // namespace probescope::job
