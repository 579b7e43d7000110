// SPDX-License-Identifier: Apache-2.0
// The one node-status fold of core/session on rows and trees written in the test: a node's own status
// from its rows (OwnStatusFold), and the incremental fold of streamed own statuses (LiveNodeStatus)
// against the fold of a whole table (aggregate).
#include "core/inlinerank.h"
#include "core/session/nodestatus.h"
#include "core/tree/constructtree.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <initializer_list>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace {

using namespace probescope;
using session::Status;

Status fold(std::initializer_list<Status> rows)
{
    session::OwnStatusFold f;
    for (const Status r : rows)
        f.add(r);
    return f.result();
}

TEST(OwnStatusFold, WorstMatchedRowWinsAndPendingWaitsForAnError)
{
    EXPECT_EQ(fold({}), Status::NoData);
    EXPECT_EQ(fold({ Status::Pass }), Status::Pass);
    EXPECT_EQ(fold({ Status::Pass, Status::Warning, Status::Pass }), Status::Warning);
    EXPECT_EQ(fold({ Status::Warning, Status::Error }), Status::Error);
    // Unmatched only when no row has a bench counterpart.
    EXPECT_EQ(fold({ Status::Unmatched }), Status::Unmatched);
    EXPECT_EQ(fold({ Status::Unmatched, Status::Unmatched }), Status::Unmatched);
    EXPECT_EQ(fold({ Status::Unmatched, Status::Pass }), Status::Pass);
    // A pending row may still fail: only an error already known is final.
    EXPECT_EQ(fold({ Status::Pending }), Status::Pending);
    EXPECT_EQ(fold({ Status::Pending, Status::Pass }), Status::Pending);
    EXPECT_EQ(fold({ Status::Warning, Status::Pending }), Status::Pending);
    EXPECT_EQ(fold({ Status::Pending, Status::Error }), Status::Error);
    EXPECT_EQ(fold({ Status::Pending, Status::Unmatched }), Status::Pending);

    const std::vector<Status> rows = { Status::Pass, Status::Error, Status::Unmatched, Status::Pending };
    const std::vector<std::uint32_t> some = { 0, 2 };
    EXPECT_EQ(session::foldRowStatuses(some, rows), Status::Pass);
    const std::vector<std::uint32_t> pending = { 0, 3 };
    EXPECT_EQ(session::foldRowStatuses(pending, rows), Status::Pending);
    EXPECT_EQ(session::foldRowStatuses({}, rows), Status::NoData);
}

// root ─┬─ a ─┬─ a0
//       │     └─ a1 ─── a10
//       └─ b
// c (a second root)
std::shared_ptr<const tree::ConstructTree> smallTree()
{
    const std::vector<std::pair<std::string, std::string>> links = {
        { "Module.root.R.forward.0", "" },
        { "Module.root.a.A.forward.0", "Module.root.R.forward.0" },
        { "Functional.relu.0.forward", "Module.root.a.A.forward.0" },
        { "Module.root.a.a1.B.forward.0", "Module.root.a.A.forward.0" },
        { "Functional.gelu.0.forward", "Module.root.a.a1.B.forward.0" },
        { "Functional.add.0.forward", "Module.root.R.forward.0" },
        { "Functional.mul.0.forward", "" },
    };
    const auto rank = probescope::testing::inlineRank(links);
    return tree::ConstructTree::build(rank);
}

session::NodeStatusTable folded(const tree::ConstructTree& tree, const std::vector<Status>& own)
{
    session::NodeStatusTable t;
    t.own = own;
    session::aggregate(t, tree);
    return t;
}

TEST(LiveNodeStatus, StartsPendingAndReportsWhatAnUpdateChanged)
{
    const auto tree = smallTree();
    ASSERT_EQ(tree->size(), 7u);
    session::LiveNodeStatus live;
    live.reset(tree.get());
    EXPECT_EQ(live.counts()[std::size_t(Status::Pending)], 7u);
    std::vector<Status> own(7, Status::Pass);
    live.assign(folded(*tree, own));

    const auto gelu = tree->find("Functional.gelu.0.forward")->value;
    const std::vector<std::uint32_t> nodes = { gelu };
    const std::vector<Status> error = { Status::Error };
    auto changes = live.apply(nodes, error);
    EXPECT_EQ(changes.own, nodes);
    // gelu, its two module ancestors and the root: subtree worst and failing-below moved for each.
    std::vector<std::string> keys;
    for (const auto n : changes.any)
        keys.emplace_back(tree->node(tree::NodeId { n }).key);
    std::sort(keys.begin(), keys.end());
    EXPECT_EQ(keys, (std::vector<std::string> { "Functional.gelu.0.forward", "Module.root.R.forward.0",
                                                "Module.root.a.A.forward.0", "Module.root.a.a1.B.forward.0" }));
    const auto root = tree->find("Module.root.R.forward.0")->value;
    EXPECT_EQ(live.subtree()[root], Status::Error);
    EXPECT_EQ(live.failingBelow()[root], 1u);
    EXPECT_EQ(live.own()[root], Status::Pass);
    EXPECT_EQ(live.counts()[std::size_t(Status::Error)], 1u);
    // The same again changes nothing; out-of-range nodes and values are skipped.
    EXPECT_TRUE(live.apply(nodes, error).any.empty());
    const std::vector<std::uint32_t> bad = { 99, gelu };
    const std::vector<Status> badStatus = { Status::Error, Status(17) };
    EXPECT_TRUE(live.apply(bad, badStatus).any.empty());
}

TEST(LiveNodeStatus, RandomUpdatesFoldAsAggregateFoldsTheWholeTable)
{
    const auto tree = smallTree();
    const std::size_t n = tree->size();
    std::mt19937 random(7);
    for (int round = 0; round < 50; ++round) {
        session::LiveNodeStatus live;
        live.reset(tree.get());
        std::vector<Status> own(n, Status::Pending);
        for (int batch = 0; batch < 10; ++batch) {
            std::vector<std::uint32_t> nodes;
            std::vector<Status> statuses;
            for (int k = 0; k < 1 + int(random() % 5); ++k) {
                nodes.push_back(std::uint32_t(random() % n));
                statuses.push_back(Status(random() % 6));
                own[nodes.back()] = statuses.back();
            }
            live.apply(nodes, statuses);
            const auto expected = folded(*tree, own);
            ASSERT_EQ(live.own(), expected.own) << "round " << round;
            ASSERT_EQ(live.subtree(), expected.subtree) << "round " << round;
            ASSERT_EQ(live.failingBelow(), expected.failingBelow) << "round " << round;
            ASSERT_EQ(live.counts(), expected.counts) << "round " << round;
        }
    }
}

} // namespace
