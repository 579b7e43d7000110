// SPDX-License-Identifier: Apache-2.0
#include "core/dump/dumplayout.h"
#include "core/dump/rankdump.h"
#include "tempdir.h"

#include <gtest/gtest.h>

using namespace probescope;
using namespace probescope::dump;
using probescope::testing::TempDir;

namespace {

constexpr const char* kMinimalDump = R"({"task": "statistics", "level": "L1", "data": {}})";

std::vector<std::string> labels(const DumpLayout& layout)
{
    std::vector<std::string> out;
    for (const auto& r : layout.ranks)
        out.push_back(r.stepLabel + "/" + r.rankLabel);
    return out;
}

} // namespace

TEST(DumpLayout, FindsStepsAndRanksSortedNumerically)
{
    TempDir dir;
    for (const char* p : { "step10/rank1", "step2/rank10", "step2/rank2", "step10/rank0", "step2/rank1" })
        dir.write(std::string(p) + "/dump.json", kMinimalDump);
    dir.write("step2/rank3/readme.txt", "no dump here");
    auto layout = discoverDump(dir.path());
    ASSERT_TRUE(layout.ok()) << layout.error().format();
    EXPECT_EQ(labels(*layout), (std::vector<std::string> { "step2/rank1", "step2/rank2", "step2/rank10",
                                                           "step10/rank0", "step10/rank1" }));
    EXPECT_EQ(layout->ranks[2].step, 2);
    EXPECT_EQ(layout->ranks[2].rank, 10);
    EXPECT_EQ(layout->steps(), (std::vector<std::int64_t> { 2, 10 }));
    ASSERT_EQ(layout->diagnostics.size(), 1u);
    EXPECT_EQ(layout->diagnostics[0].id, "layout.no-dump-file");
    EXPECT_NE(layout->find(10, 1), nullptr);
    EXPECT_EQ(layout->find(3, std::nullopt), nullptr);
}

TEST(DumpLayout, AcceptsEveryLevelOfTheTree)
{
    TempDir dir;
    dir.write("step0/rank/dump.json", kMinimalDump);
    dir.write("step0/rank/construct.json", "{}");
    for (const auto& input : { dir.path(), dir.path() / "step0", dir.path() / "step0/rank",
                               dir.path() / "step0/rank/dump.json" }) {
        auto layout = discoverDump(input);
        ASSERT_TRUE(layout.ok()) << input;
        ASSERT_EQ(layout->ranks.size(), 1u) << input;
        const RankLocation& r = layout->ranks[0];
        EXPECT_EQ(r.stepLabel, "step0") << input;
        EXPECT_EQ(r.rankLabel, "rank") << input; // the non-distributed folder
        EXPECT_FALSE(r.rank) << input;
        EXPECT_EQ(r.step, 0) << input;
        EXPECT_EQ(r.format, DumpFormat::DumpJson);
    }
}

TEST(DumpLayout, BareFoldersDebugJsonProcFoldersAndLegacyPkl)
{
    TempDir dir;
    dir.write("bare/dump.json", kMinimalDump);
    dir.write("debug/step0/rank0/debug.json", R"({"task": "statistics", "level": "debug", "data": {}})");
    dir.write("procs/step0/proc4242/dump.json", kMinimalDump);
    dir.write("ptdbg/ptdbg_dump_v4.0/rank0/npu_dump.pkl", "");
    dir.write("ptdbg/ptdbg_dump_v4.0/rank1/npu_dump.pkl", "");

    auto bare = discoverDump(dir.path() / "bare");
    ASSERT_TRUE(bare.ok());
    EXPECT_EQ(bare->ranks.size(), 1u);
    EXPECT_TRUE(bare->ranks[0].stepLabel.empty());

    auto debug = discoverDump(dir.path() / "debug");
    ASSERT_TRUE(debug.ok());
    EXPECT_EQ(debug->ranks[0].format, DumpFormat::DebugJson);
    EXPECT_EQ(debug->ranks[0].rank, 0);

    auto procs = discoverDump(dir.path() / "procs");
    ASSERT_TRUE(procs.ok());
    EXPECT_EQ(procs->ranks[0].rankLabel, "proc4242");

    auto legacy = discoverDump(dir.path() / "ptdbg");
    ASSERT_TRUE(legacy.ok());
    ASSERT_EQ(legacy->ranks.size(), 2u);
    EXPECT_EQ(legacy->ranks[0].format, DumpFormat::LegacyPkl);
    EXPECT_EQ(legacy->ranks[1].rank, 1);
    EXPECT_EQ(legacy->ranks[1].dumpFile.filename(), "npu_dump.pkl");
}

TEST(DumpLayout, ErrorsNameThePath)
{
    TempDir dir;
    dir.write("empty/notes.txt", "x");
    auto missing = discoverDump(dir.path() / "nope");
    ASSERT_FALSE(missing.ok());
    EXPECT_EQ(missing.error().id, "layout.missing");
    EXPECT_EQ(missing.error().location.file, (dir.path() / "nope").string());

    auto empty = discoverDump(dir.path() / "empty");
    ASSERT_FALSE(empty.ok());
    EXPECT_EQ(empty.error().id, "layout.empty");

    auto foreign = discoverDump(dir.path() / "empty/notes.txt");
    ASSERT_FALSE(foreign.ok());
    EXPECT_EQ(foreign.error().id, "layout.unknown-file");
}

TEST(RankDump, ReadsConstructAndBothStackForms)
{
    TempDir dir;
    dir.write("old/dump.json", kMinimalDump);
    dir.write("old/construct.json", R"({"Functional.relu.0.forward": "Module.a.A.forward.0", "Module.a.A.forward.0": null,
"Module.b.B.forward.0": ["Module.a.A.forward.0", 2], "Module.c.C.forward.0": "", "megatron_micro_step_number": 4})");
    dir.write("old/stack.json", R"J({"Functional.relu.0.forward": ["File a.py, line 1, in f, \n x = 1", "File b.py, line 2, in g, \n y()"]})J");
    dir.write("new/dump.json", kMinimalDump);
    dir.write("new/stack.json",
              R"({"0": [["Functional.relu.0.forward", "Functional.relu.1.forward"], ["File a.py, line 1, in f, \n x"]],
"1": [["Module.a.A.forward.0"], ["File c.py, line 9, in h, \n z"]], "2": "bad"})");

    auto oldRank = loadRank(discoverDump(dir.path() / "old")->ranks[0]);
    ASSERT_TRUE(oldRank.ok());
    const RankDump& r = **oldRank;
    EXPECT_TRUE(r.construct.present);
    EXPECT_EQ(r.construct.links.size(), 4u);
    EXPECT_EQ(*r.construct.parent("Functional.relu.0.forward"), "Module.a.A.forward.0");
    EXPECT_EQ(*r.construct.parent("Module.a.A.forward.0"), "");
    EXPECT_EQ(*r.construct.parent("Module.b.B.forward.0"), "Module.a.A.forward.0");
    EXPECT_EQ(*r.construct.parent("Module.c.C.forward.0"), "");
    EXPECT_EQ(r.construct.megatronMicroSteps, 4);
    EXPECT_FALSE(r.stack.newForm);
    ASSERT_NE(r.stack.frames("Functional.relu.0.forward"), nullptr);
    EXPECT_EQ(r.stack.frames("Functional.relu.0.forward")->size(), 2u);

    auto newRank = loadRank(discoverDump(dir.path() / "new")->ranks[0]);
    ASSERT_TRUE(newRank.ok());
    EXPECT_TRUE((*newRank)->stack.newForm);
    EXPECT_EQ((*newRank)->stack.framesOf.size(), 3u);
    EXPECT_EQ((*newRank)->stack.frames("Functional.relu.1.forward")->at(0), "File a.py, line 1, in f, \n x");
    EXPECT_FALSE((*newRank)->construct.present);
}

TEST(RankDump, BrokenSideFilesAreReportedAndTheDumpStillLoads)
{
    TempDir dir;
    dir.write("r/dump.json", R"({"task": "statistics", "level": "mix", "data": {"Functional.relu.0.forward": {}}})");
    dir.write("r/construct.json", R"({"Functional.relu.0.forward": 5})");
    dir.write("r/stack.json", "{\"Functional.relu.0.forward\": [\"File");
    auto rank = loadRank(discoverDump(dir.path() / "r")->ranks[0]);
    ASSERT_TRUE(rank.ok());
    EXPECT_EQ((*rank)->dump->entries.size(), 1u);
    ASSERT_EQ((*rank)->diagnostics.size(), 2u);
    EXPECT_EQ((*rank)->diagnostics[0].id, "construct.type");
    EXPECT_EQ((*rank)->diagnostics[0].location.file, (dir.path() / "r/construct.json").string());
    EXPECT_EQ((*rank)->diagnostics[0].location.column, 31u);
    EXPECT_EQ((*rank)->diagnostics[1].id, "json.truncated");
    EXPECT_EQ((*rank)->diagnostics[1].location.file, (dir.path() / "r/stack.json").string());
}

TEST(RankDump, MissingOrBrokenDumpFileIsAnError)
{
    TempDir dir;
    RankLocation loc;
    loc.dir = dir.path();
    loc.dumpFile = dir.path() / "dump.json";
    auto missing = loadRank(loc);
    ASSERT_FALSE(missing.ok());
    EXPECT_EQ(missing.error().id, "io.read");
    EXPECT_EQ(missing.error().location.file, loc.dumpFile.string());

    dir.write("dump.json", "{\"task\": \"tensor\", \"data\": {\"a\": [1, 2,, 3]}}");
    auto broken = loadRank(loc);
    ASSERT_FALSE(broken.ok());
    EXPECT_EQ(broken.error().id, "json.syntax");
    EXPECT_EQ(broken.error().location.line, 1u);
    EXPECT_EQ(broken.error().location.column, 40u); // the second comma of "2,,"
}
