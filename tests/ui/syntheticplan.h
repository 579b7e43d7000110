// SPDX-License-Identifier: Apache-2.0
#pragma once
// A whole job's plan without dumps: `ranks` x `steps` pairs named rank0, rank1, ... in step order, for the rank
// map's test (tst_rankmap) and benchmark (probescope-benchrankmap), which feed it synthetic summaries.

#include "core/session/session.h"

#include <string>

namespace probescope::testing {

inline session::SessionPlan syntheticPlan(int ranks, int steps)
{
    session::SessionPlan plan;
    plan.pairs.reserve(std::size_t(ranks) * std::size_t(steps));
    for (int step = 0; step < steps; ++step) {
        for (int rank = 0; rank < ranks; ++rank) {
            session::RankPair p;
            p.step = step;
            p.npu.rank = rank;
            p.npu.rankLabel = "rank" + std::to_string(rank);
            p.bench = p.npu;
            plan.pairs.push_back(std::move(p));
        }
    }
    return plan;
}

} // namespace probescope::testing
