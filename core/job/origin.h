// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/compare/verdict/firstfailure.h"
#include "core/tree/constructtree.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace probescope::job {

/// What the cross-rank analysis needs of one compared pair: small enough to gather from thousands of ranks.
struct RankFailure
{
    std::int64_t step = -1;
    std::int64_t rank = -1;            ///< the NPU rank number (-1 for a bare folder)
    std::string rankLabel;             ///< the NPU rank folder as on disk
    bool failed = false;               ///< some row fails
    bool found = false;                ///< a culprit (outputs fail, inputs pass) exists
    std::string key;                   ///< the first failing node in execution order (docs/tree.md)
    std::uint32_t executionIndex = 0;
    /// Distributed.* nodes run before the first failure: the rank's position in the communication order.
    std::uint32_t commBefore = 0;
    /// The first Distributed.* node run at or after the first failure: what carried it to the other ranks.
    std::string nextCommKey;
    std::uint32_t nextCommIndex = 0;
};

/**
 * @brief Fills `failure` with a failing pair's first failure and its place among the rank's communication calls
 * (commBefore, nextCommKey/nextCommIndex, from `tree`'s execution order, the tree the compare ran over).
 *
 * The one place that turns a pair's compare into what findJobOrigin needs: the CLI's whole-job compare and the
 * desktop application's rank overview both call it. step, rank and rankLabel are the caller's.
 */
void locateFailure(RankFailure& failure, const compare::FirstFailure& first, const tree::ConstructTree* tree);

/// One link of the evidence: a communication node of one rank.
struct CommLink
{
    std::int64_t rank = -1;
    std::string rankLabel;
    std::string key;
    std::uint32_t executionIndex = 0;
    std::string role; ///< "sent" (the origin's first communication after it diverged) or "received"
};

/// Where the job began to diverge.
struct JobOrigin
{
    bool fails = false; ///< false: no pair has a failing row
    std::int64_t step = -1;
    std::int64_t rank = -1;
    std::string rankLabel;
    std::string key;
    std::uint32_t executionIndex = 0;
    bool found = false;            ///< the node is a culprit (outputs fail, inputs pass)
    std::vector<CommLink> chain;   ///< communication nodes that carried the divergence, in communication order
    std::string reason;            ///< one line for people: why this rank
};

/// Whether a dump.json key names a communication call (msprobe dumps torch.distributed as "Distributed.*").
bool isCommunicationKey(std::string_view key);

/**
 * @brief ProbeScope's cross-rank origin.
 *
 * Per rank the first failing node in execution order (compare/verdict/firstfailure.h). Ranks run in parallel, so their
 * execution indices cannot be compared; what orders them is communication: a rank whose first failure comes after
 * k communication calls had clean data until its k-th collective, and every rank passes the same collectives in
 * the same order. The earliest step with a failing rank is taken; in it the origin is, among the ranks whose first
 * failure is not itself a communication node (those diverged on their own, rather than receiving bad data), the one
 * with the fewest communication calls before its failure; then the smaller execution index; then the lower rank.
 * When every failing rank's first failure is a communication node, the same order is applied to all of them.
 * The chain is the origin's next communication node, then every other failing rank of that step whose first
 * failure is a communication node (the receiving ends), in communication order, then rank.
 */
JobOrigin findJobOrigin(const std::vector<RankFailure>& ranks);

} // namespace probescope::job
