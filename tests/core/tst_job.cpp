// SPDX-License-Identifier: Apache-2.0
#include "job/origin.h"
#include "job/scheduler.h"

#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <set>
#include <thread>

using namespace probescope::job;

namespace {

RankFailure failing(std::int64_t step, std::int64_t rank, std::string key, std::uint32_t exec, std::uint32_t commBefore,
                    std::string nextComm = {})
{
    RankFailure f;
    f.step = step;
    f.rank = rank;
    f.rankLabel = "rank" + std::to_string(rank);
    f.failed = true;
    f.found = true;
    f.key = std::move(key);
    f.executionIndex = exec;
    f.commBefore = commBefore;
    f.nextCommKey = std::move(nextComm);
    return f;
}

RankFailure passing(std::int64_t step, std::int64_t rank)
{
    RankFailure f;
    f.step = step;
    f.rank = rank;
    f.rankLabel = "rank" + std::to_string(rank);
    return f;
}

} // namespace

TEST(JobOrigin, NothingFails)
{
    const JobOrigin o = findJobOrigin({ passing(0, 0), passing(0, 1) });
    EXPECT_FALSE(o.fails);
    EXPECT_TRUE(o.chain.empty());
}

// The rank that receives bad data fails earlier in its own execution order than the sender; execution indices
// of different ranks cannot be compared, communication order can.
TEST(JobOrigin, OwnFailureBeatsAnEarlierReceivingNode)
{
    const JobOrigin o = findJobOrigin({
        failing(0, 0, "Distributed.recv.0.forward", 1, 1),
        failing(0, 1, "Functional.gelu.2.forward", 40, 1, "Distributed.send.0.forward"),
        passing(0, 2),
    });
    ASSERT_TRUE(o.fails);
    EXPECT_EQ(o.rank, 1);
    EXPECT_EQ(o.key, "Functional.gelu.2.forward");
    ASSERT_EQ(o.chain.size(), 2u);
    EXPECT_EQ(o.chain[0].key, "Distributed.send.0.forward");
    EXPECT_EQ(o.chain[0].role, "sent");
    EXPECT_EQ(o.chain[1].rank, 0);
    EXPECT_EQ(o.chain[1].role, "received");
}

TEST(JobOrigin, FewerCommunicationsBeforeTheFailureWins)
{
    const JobOrigin o = findJobOrigin({
        failing(0, 0, "Functional.linear.5.forward", 3, 2),
        failing(0, 1, "Functional.linear.1.forward", 90, 1),
    });
    EXPECT_EQ(o.rank, 1);
    EXPECT_EQ(o.key, "Functional.linear.1.forward");
}

TEST(JobOrigin, EarliestFailingStepWins)
{
    const JobOrigin o = findJobOrigin({
        failing(3, 0, "Functional.linear.0.forward", 0, 0),
        failing(1, 1, "Functional.linear.9.forward", 50, 4),
    });
    EXPECT_EQ(o.step, 1);
    EXPECT_EQ(o.rank, 1);
}

TEST(JobOrigin, OnlyCommunicationFailuresTakeTheFirstCollective)
{
    const JobOrigin o = findJobOrigin({
        failing(0, 0, "Distributed.all_reduce.3.forward", 30, 3),
        failing(0, 1, "Distributed.all_reduce.1.forward", 12, 1),
        failing(0, 2, "Distributed.all_reduce.3.forward", 30, 3),
    });
    EXPECT_EQ(o.rank, 1);
    EXPECT_EQ(o.key, "Distributed.all_reduce.1.forward");
    ASSERT_EQ(o.chain.size(), 2u); // the two later receivers; the origin's own node is no extra link
    EXPECT_EQ(o.chain[0].rank, 0);
    EXPECT_EQ(o.chain[1].rank, 2);
}

TEST(JobOrigin, TiesGoToTheLowerRank)
{
    const JobOrigin o = findJobOrigin({
        failing(0, 7, "Functional.gelu.1.forward", 4, 1),
        failing(0, 2, "Functional.gelu.1.forward", 4, 1),
    });
    EXPECT_EQ(o.rank, 2);
}

TEST(LocalThreadScheduler, RunsEveryPairOnceAndKeepsTheirOrder)
{
    for (unsigned threads : { 1u, 3u, 16u }) {
        LocalThreadScheduler scheduler(threads);
        std::atomic<int> calls { 0 };
        std::set<std::thread::id> workers;
        std::mutex m;
        const auto out = scheduler.run(40, [&](std::size_t i) {
            ++calls;
            std::lock_guard lock(m);
            workers.insert(std::this_thread::get_id());
            return std::to_string(i * i);
        });
        ASSERT_EQ(out.size(), 40u);
        EXPECT_EQ(calls.load(), 40);
        for (std::size_t i = 0; i < out.size(); ++i)
            EXPECT_EQ(out[i], std::to_string(i * i));
        EXPECT_LE(workers.size(), threads);
    }
    LocalThreadScheduler scheduler(4);
    EXPECT_TRUE(scheduler.run(0, [](std::size_t) { return std::string("x"); }).empty());
}
