// SPDX-License-Identifier: Apache-2.0
#include "core/dump/dumplayout.h"
#include "core/dump/rankdump.h"
#include "core/util/utf8text.h"
#include "tempdir.h"
#include "testconfig.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <fstream>
#include <limits>
#include <map>
#include <sys/stat.h>
#include <unistd.h>

using namespace probescope;
using namespace probescope::dump;
using probescope::testing::ScratchDir;
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

// ---- Issue 25: one discovery that refuses duplicates and says what it skipped.

TEST(DumpLayout, TwoDumpsAtOnePlaceAreRefusedNamingBoth)
{
    // The demo folder holding npu/ and bench/: step0/rank and step1/rank twice (was "rank dumps: 4").
    auto demo = discoverDump(probescope::testing::sourceDir() / "resources/demo");
    ASSERT_FALSE(demo.ok());
    EXPECT_EQ(demo.error().id, "dump.duplicate-place");
    EXPECT_NE(demo.error().message.find("resources/demo/bench/step0/rank/dump.json"), std::string::npos)
        << demo.error().message;
    EXPECT_NE(demo.error().message.find("resources/demo/npu/step0/rank/dump.json"), std::string::npos)
        << demo.error().message;

    TempDir dir;
    dir.write("numbers/step0/rank0/dump.json", kMinimalDump); // rank0 and rank00 are both rank 0
    dir.write("numbers/step0/rank00/dump.json", kMinimalDump);
    dir.write("steps/step1/rank0/dump.json", kMinimalDump);   // step1 and step01 are both step 1
    dir.write("steps/step01/rank0/dump.json", kMinimalDump);
    dir.write("pkl/rank0/a.pkl", "");                         // two .pkl dumps in one rank folder
    dir.write("pkl/rank0/b.pkl", "");
    for (const char* name : { "numbers", "steps", "pkl" }) {
        auto layout = discoverDump(dir.path() / name);
        ASSERT_FALSE(layout.ok()) << name;
        EXPECT_EQ(layout.error().id, "dump.duplicate-place") << name;
    }
    auto pkl = discoverDump(dir.path() / "pkl");
    EXPECT_NE(pkl.error().message.find("a.pkl and "), std::string::npos) << pkl.error().message;
    EXPECT_NE(pkl.error().message.find("b.pkl"), std::string::npos) << pkl.error().message;
    // Each side on its own is fine.
    EXPECT_TRUE(discoverDump(probescope::testing::sourceDir() / "resources/demo/npu").ok());
    EXPECT_TRUE(discoverDump(dir.path() / "numbers/step0/rank0").ok());
}

TEST(DumpLayout, SkippedFoldersAreSummarisedInBoundedWarnings)
{
    TempDir dir;
    dir.write("step0/rank0/dump.json", kMinimalDump);
    for (int r = 1; r <= 30; ++r)
        std::filesystem::create_directories(dir.path() / ("step0/rank" + std::to_string(r)));
    std::filesystem::create_directories(dir.path() / "step0/logs");
    std::filesystem::create_directories(dir.path() / "notes");
    auto layout = discoverDump(dir.path());
    ASSERT_TRUE(layout.ok()) << layout.error().format();
    ASSERT_EQ(layout->ranks.size(), 1u);
    std::map<std::string, std::string> byId;
    for (const Diagnostic& d : layout->diagnostics) {
        EXPECT_EQ(d.severity, Severity::Warning);
        EXPECT_FALSE(byId.count(d.id)) << "one summary per reason: " << d.id;
        byId[d.id] = d.message;
    }
    ASSERT_TRUE(byId.count("layout.no-dump-file"));
    ASSERT_TRUE(byId.count("layout.not-step-or-rank"));
    const std::string& noDump = byId["layout.no-dump-file"];
    EXPECT_NE(noDump.find("skipped 30 folders without a dump"), std::string::npos) << noDump;
    EXPECT_NE(noDump.find("step0/rank1, step0/rank10, "), std::string::npos) << noDump; // sorted by name
    EXPECT_NE(noDump.find("… and 20 more"), std::string::npos) << noDump;
    // A long name is cut, on a character boundary.
    std::string longName = "step0/x";
    for (int i = 0; i < 120; ++i)
        longName += "\xc3\xa9"; // é: the 240-byte cut falls inside one
    std::filesystem::create_directories(dir.path() / "long" / longName);
    auto cut = discoverDump(dir.path() / "long");
    ASSERT_FALSE(cut.ok()); // nothing but the empty folder
    EXPECT_LT(cut.error().message.size(), 600u) << cut.error().message;
    EXPECT_TRUE(probescope::isValidUtf8(cut.error().message)) << cut.error().message;
    EXPECT_NE(cut.error().message.find("\xc3\xa9…"), std::string::npos) << cut.error().message;
    EXPECT_LT(noDump.size(), 600u) << noDump;
    const std::string& other = byId["layout.not-step-or-rank"];
    EXPECT_NE(other.find("skipped 2 folders"), std::string::npos) << other;
    EXPECT_NE(other.find("notes"), std::string::npos) << other;
    EXPECT_NE(other.find("step0/logs"), std::string::npos) << other;
}

TEST(DumpLayout, TenThousandEmptyRankFoldersEndFastWithAClearError)
{
    ScratchDir dir;
    std::filesystem::create_directories(dir.path() / "step0");
    for (int r = 0; r < 10000; ++r)
        ::mkdir((dir.path() / ("step0/rank" + std::to_string(r))).c_str(), 0755);
    const auto start = std::chrono::steady_clock::now();
    auto layout = discoverDump(dir.path());
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    ASSERT_FALSE(layout.ok());
    EXPECT_EQ(layout.error().id, "layout.empty");
    const std::string& m = layout.error().message;
    EXPECT_NE(m.find("no dump found under " + dir.path().string()), std::string::npos) << m;
    EXPECT_NE(m.find("skipped 10000 folders without a dump"), std::string::npos) << m;
    EXPECT_NE(m.find("and 9990 more"), std::string::npos) << m;
    EXPECT_LT(m.size(), 1000u);
    EXPECT_LT(seconds, 2.0); // one listing per folder, no stat per name (0.2 s on the loaded dev machine)

    // With one real rank among them: the rank, and one warning line.
    std::ofstream(dir.path() / "step0/rank5000/dump.json") << kMinimalDump;
    auto one = discoverDump(dir.path());
    ASSERT_TRUE(one.ok()) << one.error().format();
    ASSERT_EQ(one->ranks.size(), 1u);
    EXPECT_EQ(one->ranks[0].rank, 5000);
    ASSERT_EQ(one->diagnostics.size(), 1u);
    EXPECT_NE(one->diagnostics[0].message.find("skipped 9999 folders"), std::string::npos);
}

namespace {

/// Says cancelled from its (cancelAfter + 1)-th look on, and counts the looks.
class CancelAfter : public ProgressSink
{
public:
    explicit CancelAfter(std::uint64_t looks)
        : m_cancelAfter(looks)
    {
    }
    void setRange(std::uint64_t) override { }
    void advance(std::uint64_t) override { }
    bool isCancelled() const override { return ++m_looks > m_cancelAfter; }
    std::uint64_t looks() const { return m_looks; }

private:
    std::uint64_t m_cancelAfter;
    mutable std::atomic<std::uint64_t> m_looks { 0 };
};

} // namespace

// Issue 37: the GUI plans a job off its thread with Cancel; the walk looks at the cancel before each folder it
// lists, so after a cancel a job of thousands of rank folders is not walked to the end in the background.
TEST(DumpLayout, ACancelStopsTheWalkAtTheNextFolder)
{
    ScratchDir dir;
    constexpr int kRanks = 3000;
    for (int step = 0; step < 2; ++step) {
        for (int r = 0; r < kRanks / 2; ++r) {
            const auto rank = dir.path() / ("step" + std::to_string(step)) / ("rank" + std::to_string(r));
            std::filesystem::create_directories(rank);
            std::ofstream(rank / "dump.json") << kMinimalDump;
        }
    }
    // Never cancelled: the same layout as without a sink, and the sink was looked at once per folder.
    auto plain = discoverDump(dir.path());
    ASSERT_TRUE(plain.ok()) << plain.error().format();
    CancelAfter never(std::numeric_limits<std::uint64_t>::max());
    DiscoverOptions options;
    options.progress = &never;
    auto watched = discoverDump(dir.path(), options);
    ASSERT_TRUE(watched.ok()) << watched.error().format();
    EXPECT_EQ(watched->ranks.size(), static_cast<std::size_t>(kRanks));
    EXPECT_EQ(labels(*watched), labels(*plain));
    EXPECT_EQ(never.looks(), static_cast<std::uint64_t>(kRanks + 3)); // the root, two steps, every rank folder

    // Cancelled at the 101st folder: the walk stops there (no look after the one that said so) with its own error.
    CancelAfter early(100);
    options.progress = &early;
    auto cancelled = discoverDump(dir.path(), options);
    ASSERT_FALSE(cancelled.ok());
    EXPECT_EQ(cancelled.error().id, "layout.cancelled");
    EXPECT_EQ(cancelled.error().location.file, dir.path().string());
    EXPECT_EQ(early.looks(), 101u);

    // Cancelled before it starts: not one folder is listed, even with allowEmpty.
    CancelAfter already(0);
    options.progress = &already;
    options.allowEmpty = true;
    auto none = discoverDump(dir.path() / "step0", options);
    ASSERT_FALSE(none.ok());
    EXPECT_EQ(none.error().id, "layout.cancelled");
    EXPECT_EQ(already.looks(), 1u);
}

TEST(DumpLayout, OddBytesInFolderNamesAreEscapedNeverACrash)
{
    TempDir dir;
    const std::string odd = "r\xff\xfe";
    dir.write(odd + "/step0/rank0/dump.json", kMinimalDump);
    std::filesystem::create_directories(dir.path() / odd / "step0/rank\xff");  // not a rank name
    std::filesystem::create_directories(dir.path() / odd / "step0/rank1");      // no dump
    std::filesystem::create_directories(dir.path() / odd / "x\xc3(");           // not a step name
    auto layout = discoverDump(dir.path() / odd);
    ASSERT_TRUE(layout.ok()) << layout.error().format();
    ASSERT_EQ(layout->ranks.size(), 1u);
    ASSERT_FALSE(layout->diagnostics.empty());
    for (const Diagnostic& d : layout->diagnostics)
        EXPECT_TRUE(probescope::isValidUtf8(d.message)) << d.message;
    // Above the step level the odd folders are searched too; the message escapes their bytes.
    auto above = discoverDump(dir.path());
    ASSERT_TRUE(above.ok()) << above.error().format();
    std::string all;
    for (const Diagnostic& d : above->diagnostics)
        all += d.message + "\n";
    EXPECT_NE(all.find("rank\\xff"), std::string::npos) << all;
    EXPECT_TRUE(probescope::isValidUtf8(all)) << all;

    std::filesystem::create_directories(dir.path() / "empty\xff/rank0");
    auto empty = discoverDump(dir.path() / "empty\xff");
    ASSERT_FALSE(empty.ok());
    EXPECT_EQ(empty.error().id, "layout.empty");
    EXPECT_NE(empty.error().message.find("empty\\xff"), std::string::npos) << empty.error().message;
}

TEST(DumpLayout, SymlinkLoopsAndFanOutAreListedOnce)
{
    // 40 folders of 40 links back to the root: without a record of the folders listed, 4 levels are 40^4 paths.
    ScratchDir dir;
    std::filesystem::create_directories(dir.path() / "x");
    std::ofstream(dir.path() / "x/dump.json") << kMinimalDump;
    for (int d = 0; d < 40; ++d) {
        const auto folder = dir.path() / ("d" + std::to_string(d));
        std::filesystem::create_directories(folder);
        for (int l = 0; l < 40; ++l)
            std::filesystem::create_directory_symlink(dir.path(), folder / ("l" + std::to_string(l)));
    }
    const auto start = std::chrono::steady_clock::now();
    auto layout = discoverDump(dir.path());
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    ASSERT_TRUE(layout.ok()) << layout.error().format();
    ASSERT_EQ(layout->ranks.size(), 1u); // x/dump.json once, not once per path to it
    EXPECT_LT(seconds, 2.0);
    const auto seen = std::find_if(layout->diagnostics.begin(), layout->diagnostics.end(),
                                   [](const Diagnostic& d) { return d.id == "layout.seen-before"; });
    ASSERT_NE(seen, layout->diagnostics.end());
    EXPECT_NE(seen->message.find("skipped 1600 folders already searched"), std::string::npos) << seen->message;
}

TEST(DumpLayout, UnreadableFoldersAreReported)
{
    if (::geteuid() == 0)
        GTEST_SKIP() << "root reads every folder; run as a user to check this";
    TempDir dir;
    dir.write("step0/rank0/dump.json", kMinimalDump);
    dir.write("step0/rank1/dump.json", kMinimalDump);
    ::chmod((dir.path() / "step0/rank1").c_str(), 0);
    auto layout = discoverDump(dir.path());
    ::chmod((dir.path() / "step0/rank1").c_str(), 0755);
    ASSERT_TRUE(layout.ok());
    ASSERT_EQ(layout->ranks.size(), 1u);
    ASSERT_EQ(layout->diagnostics.size(), 1u);
    EXPECT_EQ(layout->diagnostics[0].id, "layout.unreadable");
    EXPECT_NE(layout->diagnostics[0].message.find("step0/rank1 (Permission denied)"), std::string::npos);

    ::chmod(dir.path().c_str(), 0);
    auto root = discoverDump(dir.path());
    ::chmod(dir.path().c_str(), 0755);
    ASSERT_FALSE(root.ok());
    EXPECT_EQ(root.error().id, "layout.unreadable");
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

// Issue 37: a RankLocation keeps its folder and file as text (CompactPath), not as std::filesystem::path with its
// component list; what callers read of them is the path discovery found, at any number of rank folders.
TEST(DumpLayout, ManyRankFoldersKeepTheirPathsAsText)
{
    namespace fs = std::filesystem;
    TempDir tmp;
    constexpr int kRanks = 150;
    for (int step = 0; step < 2; ++step) {
        for (int rank = 0; rank < kRanks; ++rank)
            tmp.write("step" + std::to_string(step) + "/rank" + std::to_string(rank) + "/dump.json", kMinimalDump);
    }
    auto layout = discoverDump(tmp.path());
    ASSERT_TRUE(layout.ok()) << layout.error().format();
    ASSERT_EQ(layout->ranks.size(), 2u * kRanks);
    for (std::size_t i = 0; i < layout->ranks.size(); ++i) {
        const RankLocation& loc = layout->ranks[i];
        const std::string step = "step" + std::to_string(i / kRanks);
        const std::string rank = "rank" + std::to_string(i % kRanks);
        const fs::path dir = tmp.path() / step / rank;
        EXPECT_EQ(loc.dir.path(), dir);
        EXPECT_EQ(loc.dir.string(), dir.string());
        EXPECT_EQ(loc.dumpFile.string(), (dir / "dump.json").string());
        EXPECT_EQ(loc.dir / "dump.json", loc.dumpFile.path());
        EXPECT_EQ(loc.dir.filename(), fs::path(rank));
        EXPECT_EQ(loc.dumpFile.parent_path(), dir);
        EXPECT_EQ(loc.dumpFile.extension(), fs::path(".json"));
        EXPECT_EQ(loc.stepLabel, step);
        EXPECT_EQ(loc.rankLabel, rank);
        EXPECT_EQ(loc.step, std::int64_t(i / kRanks));
        EXPECT_EQ(loc.rank, std::int64_t(i % kRanks));
    }
    // Compared, ordered and converted as the paths they hold.
    const RankLocation& a = layout->ranks[0];
    const RankLocation& b = layout->ranks[1];
    EXPECT_TRUE(a.dir == a.dir.path());
    EXPECT_FALSE(a.dir == b.dir);
    EXPECT_TRUE(a.dir < b.dir);
    const fs::path asPath = a.dumpFile;
    EXPECT_EQ(asPath, tmp.path() / "step0" / "rank0" / "dump.json");
    EXPECT_TRUE(fs::is_regular_file(a.dumpFile));
}

// CompactPath compares its text as std::filesystem::path compares paths (element by element), not as strings: a
// plain string compare would put "a-b" before "a/b" and call "a//b" and "a/b" different.
TEST(DumpLayout, CompactPathOrdersAsFilesystemPath)
{
    namespace fs = std::filesystem;
    const auto agrees = [](const std::string& x, const std::string& y) {
        const fs::path px(x);
        const fs::path py(y);
        const CompactPath cx(x);
        const CompactPath cy(y);
        return (cx <=> cy) == (px <=> py) && (cx == cy) == (px == py) && (cx <=> py) == (px <=> py)
            && (cx == py) == (px == py) && (py == cx) == (py == px) && (cx < cy) == (px < py);
    };
    const std::vector<std::pair<std::string, std::string>> tricky = {
        { "a/b", "a-b" }, { "a/b", "a.b" }, { "a//b", "a/b" }, { "a/", "a" }, { "a//", "a/" }, { "/", "a" },
        { "", "/" }, { "//a", "/a" }, { "/a/", "/a" }, { "a/./b", "a/b" }, { "/x/step0/rank10", "/x/step0/rank9" },
        { "/x/step0/rank1/dump.json", "/x/step0/rank1-b/dump.json" }, { "", "" }, { "ab", "a/b" }, { "a", "a/b" },
    };
    for (const auto& [x, y] : tricky) {
        EXPECT_TRUE(agrees(x, y)) << "\"" << x << "\" vs \"" << y << "\"";
        EXPECT_TRUE(agrees(y, x)) << "\"" << y << "\" vs \"" << x << "\"";
    }
    // The cases where a string compare would have been wrong, so the test above can tell the two apart.
    EXPECT_TRUE(CompactPath("a/b") < CompactPath("a-b"));
    EXPECT_TRUE(std::string("a-b") < std::string("a/b"));
    EXPECT_TRUE(CompactPath("a//b") == CompactPath("a/b"));
    EXPECT_TRUE(CompactPath("/") > CompactPath("a"));

    // Every text of up to four characters from an alphabet with both separators and the characters that sort
    // either side of '/'.
    std::vector<std::string> texts { "" };
    for (std::size_t begin = 0, length = 0; length < 4; ++length) {
        const std::size_t end = texts.size();
        for (std::size_t i = begin; i < end; ++i) {
            for (const char c : { 'a', 'b', '-', '/', '.' })
                texts.push_back(texts[i] + c);
        }
        begin = end;
    }
    ASSERT_EQ(texts.size(), 781u);
    std::vector<fs::path> paths(texts.begin(), texts.end());
    std::vector<CompactPath> compact(texts.begin(), texts.end());
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < texts.size(); ++i) {
        for (std::size_t j = 0; j < texts.size(); ++j) {
            const bool same = (compact[i] <=> compact[j]) == (paths[i] <=> paths[j])
                && (compact[i] == compact[j]) == (paths[i] == paths[j])
                && (compact[i] <=> paths[j]) == (paths[i] <=> paths[j])
                && (compact[i] == paths[j]) == (paths[i] == paths[j]);
            if (!same && ++wrong <= 10)
                ADD_FAILURE() << "\"" << texts[i] << "\" vs \"" << texts[j] << "\"";
        }
    }
    EXPECT_EQ(wrong, 0u);
}

// Issue 37: a RankTable keeps a location as a prefix, a name and a tail, and gives back the location it was given,
// byte for byte, whatever its text: a trailing '/', "." for a dump file given alone, a dump file not below its
// folder, a .pkl, a bare step folder, a proc folder, bytes that are not UTF-8, a folder name longer than a name can be.
TEST(RankTable, GivesBackEveryLocationItWasGiven)
{
    auto location = [](const std::string& dir, const std::string& file, DumpFormat format) {
        RankLocation loc;
        loc.dir = dir;
        loc.dumpFile = file;
        loc.format = format;
        // The labels discovery gives (its applyLabels): checked below against at(), which parses them again.
        const std::filesystem::path d(dir);
        const std::string name = d.filename().string();
        const std::string parent = d.parent_path().filename().string();
        if (name.rfind("rank", 0) == 0 || name.rfind("proc", 0) == 0) {
            loc.rankLabel = name;
            if (name.size() > 4 && name.rfind("rank", 0) == 0)
                loc.rank = std::stoll(name.substr(4));
            if (parent.rfind("step", 0) == 0) {
                loc.stepLabel = parent;
                loc.step = std::stoll(parent.substr(4));
            }
        } else if (name.rfind("step", 0) == 0) {
            loc.stepLabel = name;
            loc.step = std::stoll(name.substr(4));
        }
        return loc;
    };
    const std::string longName(70000, 'x');
    const std::vector<RankLocation> given = {
        location("/data/job/npu/step0/rank10", "/data/job/npu/step0/rank10/dump.json", DumpFormat::DumpJson),
        location("/data/job/npu/step0/rank2", "/data/job/npu/step0/rank2/dump.json", DumpFormat::DumpJson),
        location("job//npu/step12/rank", "job//npu/step12/rank/debug.json", DumpFormat::DebugJson),
        location(".", "dump.json", DumpFormat::DumpJson),
        location("npu/step3", "npu/step3/dump.json", DumpFormat::DumpJson),
        location("ptdbg/rank1", "ptdbg/rank1/NAME_1.pkl", DumpFormat::LegacyPkl),
        location("run/step1/proc77", "run/step1/proc77/dump.json", DumpFormat::DumpJson),
        location("/odd/\xff\xfe/rank4", "/odd/\xff\xfe/rank4/dump.json", DumpFormat::DumpJson),
        location("a/b/", "a/b/dump.json", DumpFormat::DumpJson),
        location("/", "/dump.json", DumpFormat::DumpJson),
        location("x/" + longName, "x/" + longName + "/dump.json", DumpFormat::DumpJson),
        location("renamed", "elsewhere/npu_dump.json", DumpFormat::DumpJson),
    };
    RankTable table;
    for (const RankLocation& loc : given)
        table.push(loc);
    table.shrink();
    ASSERT_EQ(table.size(), given.size());
    for (std::size_t i = 0; i < given.size(); ++i) {
        const RankLocation got = table.at(i);
        EXPECT_EQ(got.dir.string(), given[i].dir.string()) << i;
        EXPECT_EQ(table.dirText(i), given[i].dir.string()) << i;
        EXPECT_EQ(got.dumpFile.string(), given[i].dumpFile.string()) << i;
        EXPECT_EQ(got.format, given[i].format) << i;
        EXPECT_EQ(got.rankLabel, given[i].rankLabel) << i;
        EXPECT_EQ(got.stepLabel, given[i].stepLabel) << i;
        EXPECT_EQ(got.rank, given[i].rank) << i;
        EXPECT_EQ(got.step, given[i].step) << i;
        EXPECT_EQ(table.rank(i), given[i].rank) << i;
        EXPECT_EQ(table.step(i), given[i].step) << i;
        EXPECT_EQ(std::string(table.rankLabel(i)), given[i].rankLabel) << i;
    }
    // Sorted as discovery sorts: by step (none first), rank number (none first), then rank folder name.
    table.sortByPlace();
    std::vector<std::string> order;
    for (std::size_t i = 0; i < table.size(); ++i)
        order.push_back(table.at(i).dumpFile.string());
    std::vector<RankLocation> sorted = given;
    std::stable_sort(sorted.begin(), sorted.end(), [](const RankLocation& a, const RankLocation& b) {
        return std::tuple(a.step.value_or(-1), a.rank.value_or(-1), a.rankLabel)
            < std::tuple(b.step.value_or(-1), b.rank.value_or(-1), b.rankLabel);
    });
    std::vector<std::string> expected;
    for (const RankLocation& loc : sorted)
        expected.push_back(loc.dumpFile.string());
    EXPECT_EQ(order, expected);
}
