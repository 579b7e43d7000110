// SPDX-License-Identifier: Apache-2.0
// Golden tests on the real msprobe 1.2.2 dumps of ../shared/fixtures. Independent oracles: nlohmann/json
// (a second JSON parser) for entries and values, msprobe's own compare CSVs for row counts, msprobe's graph
// visualization (.vis) for the hierarchy, and the .pt files for the statistics.
#include "core/dump/dumplayout.h"
#include "core/dump/leaf.h"
#include "core/dump/rankdump.h"
#include "core/dumpinfo/dumpinfo.h"
#include "tempdir.h"
#include "testconfig.h"
#include "core/tree/constructtree.h"

#include <nlohmann/json.hpp>
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

using namespace probescope;
using namespace probescope::dump;
using probescope::testing::fixturesDir;
using probescope::testing::readAll;
using probescope::testing::TempDir;

namespace {

const char* const kFixtures[] = { "modelA_tensor_mix", "modelA_statistics_mix", "modelA_md5_mix" };
const char* const kSides[] = { "npu", "bench" };

std::shared_ptr<const RankDump> loadStep(const std::string& fixture, const std::string& side, int step)
{
    auto layout = discoverDump(fixturesDir() / fixture / side);
    EXPECT_TRUE(layout.ok()) << "fixtures not found under " << fixturesDir()
                             << " (set PROBESCOPE_FIXTURES or -DPROBESCOPE_FIXTURES_DIR)";
    if (!layout.ok())
        return nullptr;
    const RankLocation* loc = layout->find(step, std::nullopt);
    EXPECT_NE(loc, nullptr);
    if (!loc)
        return nullptr;
    auto rank = loadRank(*loc);
    EXPECT_TRUE(rank.ok()) << (rank.ok() ? "" : rank.error().format());
    return rank.ok() ? *rank : nullptr;
}

bool sameValue(const nlohmann::ordered_json& expected, JsonValue actual, std::string& where)
{
    using T = nlohmann::ordered_json::value_t;
    switch (expected.type()) {
    case T::null:
        return actual.isNull();
    case T::boolean:
        return actual.isBool() && actual.asBool() == expected.get<bool>();
    case T::number_integer:
    case T::number_unsigned:
        return actual.isInt() && actual.asInt() == expected.get<std::int64_t>();
    case T::number_float:
        return actual.type() == JsonType::Double && actual.asDouble() == expected.get<double>();
    case T::string:
        return actual.isString() && actual.asString() == expected.get<std::string>();
    case T::array: {
        if (!actual.isArray() || actual.size() != expected.size())
            return false;
        for (std::uint32_t i = 0; i < actual.size(); ++i) {
            if (!sameValue(expected[i], actual.at(i), where)) {
                where = std::to_string(i) + "." + where;
                return false;
            }
        }
        return true;
    }
    case T::object: {
        if (!actual.isObject() || actual.size() != expected.size())
            return false;
        std::uint32_t i = 0;
        for (const auto& [k, v] : expected.items()) {
            if (actual.keyAt(i) != k || !sameValue(v, actual.at(i), where)) {
                where = k + "." + where;
                return false;
            }
            ++i;
        }
        return true;
    }
    default:
        return false;
    }
}

// Data rows of a CSV written by pandas (quoted fields may hold newlines).
std::size_t csvRecords(const std::filesystem::path& p)
{
    const std::string text = readAll(p);
    std::size_t records = 0;
    bool quoted = false;
    bool any = false;
    for (char c : text) {
        if (c == '"')
            quoted = !quoted;
        else if (c == '\n' && !quoted) {
            records += any;
            any = false;
            continue;
        }
        any = true;
    }
    return records + any - 1; // minus the header
}

} // namespace

TEST(Fixtures, EveryDumpMatchesAnIndependentJsonParserEntryForEntry)
{
    for (const char* fixture : kFixtures) {
        for (const char* side : kSides) {
            for (int step : { 0, 1 }) {
                SCOPED_TRACE(std::string(fixture) + "/" + side + "/step" + std::to_string(step));
                const auto rank = loadStep(fixture, side, step);
                ASSERT_TRUE(rank);
                std::ifstream in(rank->location.dumpFile.path());
                const auto oracle = nlohmann::ordered_json::parse(in);
                const auto& data = oracle.at("data");
                EXPECT_EQ(rank->dump->header.task, oracle.at("task").get<std::string>());
                EXPECT_EQ(rank->dump->header.level, "mix");
                EXPECT_EQ(rank->dump->header.framework, "pytorch");
                ASSERT_EQ(rank->dump->entries.size(), data.size());
                std::size_t i = 0;
                for (const auto& [key, value] : data.items()) {
                    const Entry& e = rank->dump->entries[i++];
                    ASSERT_EQ(e.key, key);
                    EXPECT_NE(e.name.kind, EntryKind::Unknown) << key;
                    std::string where;
                    EXPECT_TRUE(sameValue(value, e.value, where)) << key << " differs at " << where;
                }
                EXPECT_TRUE(rank->diagnostics.empty()) << rank->diagnostics.front().format();
                EXPECT_TRUE(rank->construct.present);
                EXPECT_TRUE(rank->stack.present);
            }
        }
    }
}

TEST(Fixtures, LeafCountsEqualTheRowsOfMsprobesOwnCompareOutput)
{
    for (const char* fixture : kFixtures) {
        for (int step : { 0, 1 }) {
            SCOPED_TRACE(std::string(fixture) + "/step" + std::to_string(step));
            const auto rank = loadStep(fixture, "npu", step);
            ASSERT_TRUE(rank);
            const auto info = dumpinfo::inspectRank(*rank);
            const auto csv = fixturesDir() / fixture / "expected/nostack" / ("step" + std::to_string(step))
                / "compare_result.csv";
            // msprobe 1.2.2 writes one row per leaf of the NPU dump.
            EXPECT_EQ(info.tensorLeaves + info.otherLeaves, csvRecords(csv));
            EXPECT_EQ(info.entries, 121u);
            EXPECT_EQ(info.byKind[static_cast<int>(EntryKind::ParametersGrad)], 13u);
        }
    }
}

TEST(Fixtures, TreesMatchTheReviewedGoldenText)
{
    for (const char* fixture : kFixtures) {
        for (const char* side : kSides) {
            for (int step : { 0, 1 }) {
                const std::string name = std::string("modelA-") + side + "-step" + std::to_string(step) + ".tree";
                SCOPED_TRACE(std::string(fixture) + " vs " + name);
                const auto rank = loadStep(fixture, side, step);
                ASSERT_TRUE(rank);
                const auto tree = tree::ConstructTree::build(rank);
                tree::PrintOptions options;
                options.showExecutionIndex = true;
                EXPECT_EQ(tree::printTree(*tree, options), readAll(probescope::testing::testDataDir() / "golden" / name));
                EXPECT_TRUE(tree->diagnostics().empty());
            }
        }
    }
}

TEST(Fixtures, HierarchyAgreesWithMsprobesGraphVisualization)
{
    for (int step : { 0, 1 }) {
        SCOPED_TRACE("step" + std::to_string(step));
        const auto rank = loadStep("modelA_tensor_mix", "npu", step);
        ASSERT_TRUE(rank);
        const auto tree = tree::ConstructTree::build(rank);
        std::ifstream in(fixturesDir() / "modelA_tensor_mix/expected/graph"
                         / ("graph_build_step" + std::to_string(step) + "_rank.vis"));
        const auto vis = nlohmann::json::parse(in);
        std::size_t compared = 0;
        for (const auto& [key, node] : vis.at("node").items()) {
            const auto id = tree->find(key);
            if (!id) {
                // msprobe's synthetic grouping nodes are not dump entries.
                EXPECT_TRUE(key == "DefaultModel" || key.rfind("Apis_Between_Modules.", 0) == 0) << key;
                continue;
            }
            std::string upnode = node.at("upnode").get<std::string>();
            if (upnode == "DefaultModel" || upnode.rfind("Apis_Between_Modules.", 0) == 0)
                upnode.clear();
            const tree::NodeId parent = tree->node(*id).parent;
            const std::string ours = parent.valid() ? std::string(tree->node(parent).key) : std::string();
            EXPECT_EQ(ours, upnode) << "parent of " << key;
            // Children in the same order as msprobe's.
            std::vector<std::string> visKids;
            for (const auto& k : node.at("subnodes"))
                visKids.push_back(k.get<std::string>());
            std::vector<std::string> ourKids;
            for (tree::NodeId c : tree->children(*id)) {
                if (tree->node(c).name.kind != EntryKind::ParametersGrad) // the .vis omits them
                    ourKids.emplace_back(tree->node(c).key);
            }
            EXPECT_EQ(ourKids, visKids) << "children of " << key;
            ++compared;
        }
        EXPECT_EQ(compared, 108u);
    }
}

TEST(Fixtures, ExecutionOrderPutsTheBugBeforeEverythingItCorrupts)
{
    const auto rank = loadStep("modelA_tensor_mix", "npu", 0);
    ASSERT_TRUE(rank);
    const auto tree = tree::ConstructTree::build(rank);
    auto pos = [&](const char* key) { return tree->node(*tree->find(key)).executionIndex; };
    // gelu (the injected bug) runs inside FeedForward, before fc2 and before the module finishes.
    EXPECT_LT(pos("Functional.gelu.0.forward"), pos("Functional.linear.4.forward"));
    EXPECT_LT(pos("Functional.linear.4.forward"), pos("Module.block.ffn.FeedForward.forward.0"));
    // Every forward comes before every backward.
    EXPECT_LT(pos("Torch.ones_like.0.forward"), pos("Functional.cross_entropy.0.backward"));
    // msprobe lists conv1's parameters_grad as row 15 of its table; it is computed during backward, last of all.
    EXPECT_GT(pos("Module.conv.conv1.Conv2d.parameters_grad"), pos("Functional.gelu.0.backward"));
    EXPECT_EQ(pos("Module.conv.conv1.Conv2d.parameters_grad") + 1, pos("Module.conv.conv1.Conv2d.backward.0"));
    EXPECT_EQ(tree->executionOrder().size(), rank->dump->entries.size());
}

TEST(Fixtures, TensorStatisticsRecomputedFromPtFilesAgreeWithDumpJson)
{
    for (const char* side : kSides) {
        for (int step : { 0, 1 }) {
            SCOPED_TRACE(std::string(side) + "/step" + std::to_string(step));
            const auto rank = loadStep("modelA_tensor_mix", side, step);
            ASSERT_TRUE(rank);
            dumpinfo::InfoOptions options;
            options.verifyTensors = true;
            options.statsTolerance = 1e-5;
            const auto info = dumpinfo::inspectRank(*rank, options);
            EXPECT_EQ(info.filesMissing, 0u);
            EXPECT_EQ(info.filesVerified, info.tensorsWithFile);
            EXPECT_EQ(info.filesVerified, info.tensorLeaves);
            EXPECT_GT(info.filesVerified, 300u);
            for (const auto& d : info.diagnostics)
                ADD_FAILURE() << d.format();
        }
    }
}

TEST(Fixtures, TamperedCopiesGiveSpecificErrors)
{
    TempDir dir;
    const auto src = fixturesDir() / "modelA_tensor_mix/npu/step0/rank";
    const auto rankDir = dir.path() / "step0/rank";
    std::filesystem::create_directories(rankDir.parent_path());
    std::filesystem::copy(src, rankDir, std::filesystem::copy_options::recursive);
    std::string text = readAll(rankDir / "dump.json");
    const std::string victim = "\"Functional.conv2d.0.forward.input.1.pt\"";
    text.replace(text.find(victim), victim.size(), "\"../../../../etc/passwd\"");
    std::ofstream(rankDir / "dump.json", std::ios::binary) << text;
    std::filesystem::remove(rankDir / "dump_tensor_data/Functional.relu.0.forward.output.0.pt");
    {
        const auto pt = rankDir / "dump_tensor_data/Functional.linear.0.forward.output.0.pt";
        const std::string bytes = readAll(pt);
        std::ofstream(pt, std::ios::binary) << bytes.substr(0, bytes.size() / 2);
    }

    auto layout = discoverDump(dir.path());
    ASSERT_TRUE(layout.ok());
    auto rank = loadRank(layout->ranks[0]);
    ASSERT_TRUE(rank.ok());
    dumpinfo::InfoOptions options;
    options.verifyTensors = true;
    const auto info = dumpinfo::inspectRank(**rank, options);
    std::map<std::string, int> ids;
    for (const auto& d : info.diagnostics)
        ++ids[d.id];
    EXPECT_EQ(ids["tensor.path-escape"], 1);
    EXPECT_EQ(ids["tensor.missing"], 1);
    EXPECT_EQ(info.filesMissing, 1u);
    EXPECT_GE(ids["tensor.pt-corrupt"] + ids["tensor.truncated"], 1);
    for (const auto& d : info.diagnostics) {
        if (d.id == "tensor.path-escape") {
            EXPECT_NE(d.message.find("Functional.conv2d.0.forward"), std::string::npos) << d.message;
        }
        if (d.id == "tensor.pt-corrupt") {
            EXPECT_NE(d.location.file.find("Functional.linear.0.forward.output.0.pt"), std::string::npos);
        }
    }
}
