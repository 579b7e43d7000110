// SPDX-License-Identifier: Apache-2.0
// Issue 25, bounded cost (docs/reliability.md "Bounds"): a deep model prints in linear space and builds in
// linear time, deep JSON nesting ends at once with json.too-deep, and run_ut refuses tensors past its cap.
#include "core/dump/dumpfile.h"
#include "core/dump/jsondocument.h"
#include "core/dump/rankdump.h"
#include "core/runut/apicalls.h"
#include "core/tree/constructtree.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <vector>

using namespace probescope;
using namespace probescope::dump;

namespace {

std::string moduleKey(std::size_t i) { return "Module.m" + std::to_string(i) + ".Block.forward.0"; }

/// A rank whose `depth` modules nest in one chain: module i is the parent of module i + 1.
std::shared_ptr<const RankDump> chain(std::size_t depth)
{
    std::string text = R"({"task": "statistics", "level": "mix", "data": {)";
    for (std::size_t i = 0; i < depth; ++i)
        text += (i ? ", \"" : "\"") + moduleKey(i) + "\": {}";
    text += "}}";
    auto dump = parseDumpJson(text, "/t/dump.json");
    EXPECT_TRUE(dump.ok());
    auto rank = std::make_shared<RankDump>();
    rank->dump = *dump;
    rank->construct.present = true;
    for (std::size_t i = 0; i < depth; ++i) {
        const std::string parent = i == 0 ? std::string() : moduleKey(i - 1);
        rank->construct.links.emplace_back(moduleKey(i), parent);
        rank->construct.parentOf[moduleKey(i)] = parent;
    }
    return rank;
}

double secondsSince(std::chrono::steady_clock::time_point start)
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::shared_ptr<const DumpFile> dumpWith(const std::string& shape, const std::string& dtype = "torch.float32")
{
    const std::string text = R"({"task": "statistics", "level": "L1", "framework": "pytorch", "data": {
"Functional.relu.0.forward": {"input_args": [{"type": "torch.Tensor", "dtype": ")" + dtype + R"(", "shape": )" + shape
        + R"(, "Max": 1.0, "Min": 0.0, "Mean": 0.5, "Norm": 1.0, "requires_grad": false}], "input_kwargs": {}, "output": []}}})";
    auto dump = parseDumpJson(text, "/t/dump.json");
    EXPECT_TRUE(dump.ok());
    return *dump;
}

} // namespace

TEST(Bounds, TreeIndentationStopsAt32LevelsAndSaysTheDepth)
{
    const auto tree = tree::ConstructTree::build(chain(40));
    const std::string text = tree::printTree(*tree);
    const std::string indent32(64, ' ');
    EXPECT_NE(text.find("\n" + indent32 + moduleKey(32) + "\n"), std::string::npos);
    EXPECT_NE(text.find("\n" + indent32 + "(depth 33) " + moduleKey(33) + "\n"), std::string::npos);
    EXPECT_NE(text.find("\n" + indent32 + "(depth 39) " + moduleKey(39) + "\n"), std::string::npos);
    EXPECT_EQ(text.find(indent32 + " "), std::string::npos); // never more than 32 levels of indentation
}

TEST(Bounds, ADeepChainBuildsAndPrintsInLinearTimeAndSpace)
{
    constexpr std::size_t kDepth = 60000;
    const auto rank = chain(kDepth);
    const auto start = std::chrono::steady_clock::now();
    const auto tree = tree::ConstructTree::build(rank);
    const std::string text = tree::printTree(*tree);
    // Quadratic before: the depth walk was 1.8e9 steps and the indentation 3.6 GB of spaces.
    EXPECT_LT(secondsSince(start), 20.0);
    EXPECT_EQ(tree->node(tree::NodeId { static_cast<std::uint32_t>(kDepth - 1) }).depth, kDepth - 1);
    EXPECT_LT(text.size(), kDepth * (moduleKey(kDepth).size() + 64 + 20));
    EXPECT_NE(text.find("(depth 59999) " + moduleKey(kDepth - 1) + "\n"), std::string::npos);
}

TEST(Bounds, DeepJsonNestingEndsAtOnceWithTooDeep)
{
    const std::string deep = std::string(1000000, '[') + std::string(1000000, ']');
    const auto start = std::chrono::steady_clock::now();
    const auto outcome = JsonDocument::parse(deep, "deep.json");
    EXPECT_LT(secondsSince(start), 5.0);
    EXPECT_FALSE(outcome.document);
    ASSERT_FALSE(outcome.diagnostics.empty());
    EXPECT_EQ(outcome.diagnostics.front().id, "json.too-deep");

    // The same inside a dump.json entry: an error with its position, not a crash or a hang.
    const std::string dump = R"({"task": "statistics", "level": "mix", "data": {"Functional.relu.0.forward": {"input_args": )"
        + std::string(100000, '[') + std::string(100000, ']') + "}}}";
    const auto parsed = parseDumpJson(dump, "/t/dump.json");
    if (parsed.ok()) {
        bool tooDeep = false;
        for (const Diagnostic& d : (*parsed)->diagnostics)
            tooDeep = tooDeep || d.id == "json.too-deep";
        EXPECT_TRUE(tooDeep);
    } else {
        EXPECT_EQ(parsed.error().id, "json.too-deep");
    }
}

TEST(Bounds, RunUtRefusesTensorsPastItsCapWithTheEntryLine)
{
    // 10^15 float32 elements: 3.6 PiB.
    auto list = runut::collectApiCalls(dumpWith("[100000, 100000, 100000]"), false);
    ASSERT_TRUE(list.ok()) << list.error().format();
    ASSERT_EQ(list->calls.size(), 1u);
    ASSERT_EQ(list->refused.count("Functional.relu.0"), 1u);
    EXPECT_NE(list->refused.at("Functional.relu.0").find("SKIP"), std::string::npos);
    const Diagnostic* error = nullptr;
    for (const Diagnostic& d : list->diagnostics)
        error = d.id == "runut.too-large" ? &d : error;
    ASSERT_TRUE(error);
    EXPECT_EQ(error->severity, Severity::Error);
    EXPECT_EQ(error->location.line, 2u);
    EXPECT_NE(error->message.find("input_args.0 shape [100000, 100000, 100000] torch.float32"), std::string::npos)
        << error->message;

    // A shape whose element count overflows 64 bits is refused too, not wrapped around.
    list = runut::collectApiCalls(dumpWith("[4294967296, 4294967296, 4294967296]"), false);
    ASSERT_TRUE(list.ok());
    EXPECT_EQ(list->refused.count("Functional.relu.0"), 1u);

    // An ordinary shape is replayed.
    list = runut::collectApiCalls(dumpWith("[2, 8]"), false);
    ASSERT_TRUE(list.ok());
    EXPECT_TRUE(list->refused.empty());
}

TEST(Bounds, RunUtCapFollowsTheEnvironment)
{
    ::setenv("PROBESCOPE_RUNUT_MAX_BYTES", "32", 1);
    EXPECT_EQ(runut::maxReplayBytes(), 32u);
    auto list = runut::collectApiCalls(dumpWith("[2, 8]"), false); // 64 bytes of float32
    ::unsetenv("PROBESCOPE_RUNUT_MAX_BYTES");
    ASSERT_TRUE(list.ok());
    EXPECT_EQ(list->refused.count("Functional.relu.0"), 1u);
    EXPECT_EQ(runut::maxReplayBytes(), std::uint64_t(1) << 30);
}
