// SPDX-License-Identifier: Apache-2.0
#include "core/tree/constructtree.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

using namespace probescope;
using namespace probescope::dump;
using namespace probescope::tree;

namespace {

// Builds a RankDump from entry keys (in file order) and construct links, without touching the disk.
std::shared_ptr<const RankDump> makeRank(const std::vector<std::string>& keys,
                                         const std::vector<std::pair<std::string, std::string>>& links,
                                         bool withConstruct = true)
{
    std::string text = R"({"task": "statistics", "level": "mix", "data": {)";
    for (std::size_t i = 0; i < keys.size(); ++i)
        text += (i ? ", \"" : "\"") + keys[i] + "\": {}";
    text += "}}";
    auto dump = parseDumpJson(text, "/t/dump.json");
    EXPECT_TRUE(dump.ok());
    auto rank = std::make_shared<RankDump>();
    rank->dump = *dump;
    rank->construct.present = withConstruct;
    for (const auto& [child, parent] : links) {
        rank->construct.links.emplace_back(child, parent);
        rank->construct.parentOf[child] = parent;
    }
    return rank;
}

std::vector<std::string> executionOrder(const ConstructTree& tree)
{
    std::vector<std::string> out;
    for (NodeId id : tree.executionOrder())
        out.emplace_back(tree.node(id).key);
    return out;
}

} // namespace

TEST(ConstructTree, ModulesWrittenAfterTheirChildrenStillComeFirstInTheTree)
{
    const auto rank = makeRank({ "Functional.conv2d.0.forward", "Module.m.Conv2d.forward.0", "Functional.relu.0.forward",
                                 "Module.net.Net.forward.0" },
                               { { "Functional.conv2d.0.forward", "Module.m.Conv2d.forward.0" },
                                 { "Module.m.Conv2d.forward.0", "Module.net.Net.forward.0" },
                                 { "Functional.relu.0.forward", "Module.net.Net.forward.0" },
                                 { "Module.net.Net.forward.0", "" } });
    const auto tree = ConstructTree::build(rank);
    EXPECT_EQ(printTree(*tree), "Module.net.Net.forward.0\n"
                                "  Module.m.Conv2d.forward.0\n"
                                "    Functional.conv2d.0.forward\n"
                                "  Functional.relu.0.forward\n");
    EXPECT_EQ(executionOrder(*tree),
              (std::vector<std::string> { "Functional.conv2d.0.forward", "Module.m.Conv2d.forward.0",
                                          "Functional.relu.0.forward", "Module.net.Net.forward.0" }));
    const NodeId conv = *tree->find("Functional.conv2d.0.forward");
    EXPECT_EQ(conv.value, 0u); // ids are dump.json positions: stable for a given dump
    EXPECT_EQ(tree->node(conv).depth, 2u);
    EXPECT_EQ(tree->node(conv).parentSource, ParentSource::Construct);
    EXPECT_TRUE(tree->diagnostics().empty());
}

TEST(ConstructTree, ModulesWrittenBeforeTheirChildrenAreStillPlacedWhereTheyFinish)
{
    // Newer msprobe versions write a module when it starts.
    const auto rank = makeRank({ "Module.m.Lin.forward.0", "Functional.linear.0.forward", "Functional.relu.0.forward" },
                               { { "Functional.linear.0.forward", "Module.m.Lin.forward.0" },
                                 { "Module.m.Lin.forward.0", "" },
                                 { "Functional.relu.0.forward", "" } });
    const auto tree = ConstructTree::build(rank);
    EXPECT_EQ(executionOrder(*tree), (std::vector<std::string> { "Functional.linear.0.forward", "Module.m.Lin.forward.0",
                                                                 "Functional.relu.0.forward" }));
}

TEST(ConstructTree, BackwardApisGoUnderTheBackwardOfTheModuleThatCalledThem)
{
    const auto rank = makeRank(
        { "Functional.linear.0.forward", "Module.fc.Linear.forward.0", "Module.fc.Linear.parameters_grad",
          "Functional.loss.0.forward", "Functional.loss.0.backward", "Functional.linear.0.backward",
          "Module.fc.Linear.backward.0" },
        { { "Functional.linear.0.forward", "Module.fc.Linear.forward.0" },
          { "Module.fc.Linear.forward.0", "" },
          { "Functional.loss.0.forward", "" },
          { "Functional.loss.0.backward", "" },
          { "Functional.linear.0.backward", "" }, // msprobe 1.x leaves backward APIs unparented
          { "Module.fc.Linear.backward.0", "" } });
    const auto tree = ConstructTree::build(rank);
    EXPECT_EQ(printTree(*tree), "Module.fc.Linear.forward.0\n"
                                "  Functional.linear.0.forward\n"
                                "Functional.loss.0.forward\n"
                                "Functional.loss.0.backward\n"
                                "Module.fc.Linear.backward.0\n"
                                "  Functional.linear.0.backward  (parent inferred)\n"
                                "  Module.fc.Linear.parameters_grad  (parent inferred)\n");
    // parameters_grad is written after the forward but computed in backward, right before the module's
    // backward hook fires.
    EXPECT_EQ(executionOrder(*tree),
              (std::vector<std::string> { "Functional.linear.0.forward", "Module.fc.Linear.forward.0",
                                          "Functional.loss.0.forward", "Functional.loss.0.backward",
                                          "Functional.linear.0.backward", "Module.fc.Linear.parameters_grad",
                                          "Module.fc.Linear.backward.0" }));
}

TEST(ConstructTree, IndexedParametersGradFollowTheirOwnBackwardCall)
{
    const auto rank = makeRank({ "Module.a.L.forward.0", "Module.a.L.parameters_grad.0", "Module.a.L.forward.1",
                                 "Module.a.L.parameters_grad.1", "Module.a.L.backward.1", "Module.a.L.backward.0" },
                               { { "Module.a.L.forward.0", "" }, { "Module.a.L.forward.1", "" },
                                 { "Module.a.L.backward.1", "" }, { "Module.a.L.backward.0", "" } });
    const auto tree = ConstructTree::build(rank);
    EXPECT_EQ(tree->node(*tree->find("Module.a.L.parameters_grad.0")).parent, *tree->find("Module.a.L.backward.0"));
    EXPECT_EQ(tree->node(*tree->find("Module.a.L.parameters_grad.1")).parent, *tree->find("Module.a.L.backward.1"));
}

TEST(ConstructTree, OldFormParametersGradFollowsTheLastBackwardCall)
{
    const auto rank = makeRank({ "Module.a.L.forward.0", "Module.a.L.parameters_grad", "Module.a.L.forward.1",
                                 "Module.a.L.backward.1", "Module.a.L.backward.0" },
                               { { "Module.a.L.forward.0", "" }, { "Module.a.L.forward.1", "" },
                                 { "Module.a.L.backward.1", "" }, { "Module.a.L.backward.0", "" } });
    const auto tree = ConstructTree::build(rank);
    EXPECT_EQ(tree->node(*tree->find("Module.a.L.parameters_grad")).parent, *tree->find("Module.a.L.backward.0"));
}

TEST(ConstructTree, ParametersGradWithoutBackwardEntryGoesLastInExecutionOrder)
{
    const auto rank = makeRank({ "Module.a.L.forward.0", "Module.a.L.parameters_grad", "Functional.relu.0.forward" },
                               { { "Module.a.L.forward.0", "" }, { "Functional.relu.0.forward", "" } });
    const auto tree = ConstructTree::build(rank);
    EXPECT_EQ(tree->node(*tree->find("Module.a.L.parameters_grad")).parent, *tree->find("Module.a.L.forward.0"));
    EXPECT_EQ(executionOrder(*tree).back(), "Module.a.L.parameters_grad");
}

TEST(ConstructTree, WithoutConstructJsonEverythingIsARootInFileOrder)
{
    const auto rank = makeRank({ "Functional.relu.0.forward", "Tensor.add.0.forward", "Tensor.add.0.backward" }, {},
                               false);
    const auto tree = ConstructTree::build(rank);
    EXPECT_EQ(tree->roots().size(), 3u);
    EXPECT_EQ(printTree(*tree), "Functional.relu.0.forward\nTensor.add.0.forward\nTensor.add.0.backward\n");
}

TEST(ConstructTree, UnknownParentsAndCyclesAreReportedAndBroken)
{
    const auto rank = makeRank({ "Functional.a.0.forward", "Module.x.X.forward.0", "Module.y.Y.forward.0" },
                               { { "Functional.a.0.forward", "Module.ghost.G.forward.0" },
                                 { "Module.x.X.forward.0", "Module.y.Y.forward.0" },
                                 { "Module.y.Y.forward.0", "Module.x.X.forward.0" } });
    const auto tree = ConstructTree::build(rank);
    ASSERT_EQ(tree->diagnostics().size(), 2u);
    EXPECT_EQ(tree->diagnostics()[0].id, "tree.unknown-parent");
    EXPECT_EQ(tree->diagnostics()[1].id, "tree.cycle");
    EXPECT_EQ(tree->executionOrder().size(), 3u); // every node is still reachable exactly once
    std::size_t reachable = 0;
    std::vector<NodeId> stack(tree->roots().begin(), tree->roots().end());
    while (!stack.empty()) {
        const NodeId id = stack.back();
        stack.pop_back();
        ++reachable;
        for (NodeId c : tree->children(id))
            stack.push_back(c);
    }
    EXPECT_EQ(reachable, 3u);
}

TEST(ConstructTree, RowsAndChildrenAreConsistent)
{
    const auto rank = makeRank({ "Functional.a.0.forward", "Functional.b.0.forward", "Module.m.M.forward.0" },
                               { { "Functional.a.0.forward", "Module.m.M.forward.0" },
                                 { "Functional.b.0.forward", "Module.m.M.forward.0" },
                                 { "Module.m.M.forward.0", "" } });
    const auto tree = ConstructTree::build(rank);
    const NodeId m = *tree->find("Module.m.M.forward.0");
    const auto kids = tree->children(m);
    ASSERT_EQ(kids.size(), 2u);
    for (std::uint32_t row = 0; row < kids.size(); ++row) {
        EXPECT_EQ(tree->node(kids[row]).row, row);
        EXPECT_EQ(tree->node(kids[row]).parent, m);
    }
    EXPECT_EQ(tree->node(m).row, 0u);
    EXPECT_FALSE(tree->node(m).parent.valid());
}
