// SPDX-License-Identifier: Apache-2.0
// msprobe 26 `overflow_check`: every golden of ../shared/fixtures/msprobe26_workflow/overflow_check reproduced byte
// for byte (json.dump indent 2, NaN/Infinity tokens, key order), with msprobe's log lines; no file and no output
// folder when nothing is anomalous; a whole dump root; damaged dumps refused; the rules on hand-made dumps.
#include "core/overflow/overflowcheck.h"
#include "core/dump/dumplayout.h"
#include "tempdir.h"
#include "testconfig.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

using namespace probescope;
using probescope::testing::fixturesDir;
using probescope::testing::TempDir;
namespace fs = std::filesystem;

namespace {

using probescope::testing::readAll;

fs::path caseDir(const std::string& name)
{
    return fixturesDir() / "msprobe26_workflow" / "overflow_check" / name;
}

std::vector<fs::path> filesIn(const fs::path& dir, const std::string& prefix)
{
    std::vector<fs::path> out;
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        if (it->path().filename().string().starts_with(prefix))
            out.push_back(it->path());
    }
    return out;
}

/// msprobe's [INFO] lines of the analysis (console.normalized.txt without the banner and the fusion-op line), with
/// the result path as the golden writes it (out/anomaly_analyze_<NS>.json).
std::vector<std::string> goldenLog(const fs::path& dir, const fs::path& console = "expected/console.normalized.txt")
{
    std::vector<std::string> lines;
    std::istringstream in(readAll(dir / console));
    for (std::string line; std::getline(in, line);) {
        if (!line.starts_with("[INFO] ") || line.find("fusion operator") != std::string::npos)
            continue;
        lines.push_back(line.substr(7));
    }
    return lines;
}

class OverflowGolden : public ::testing::TestWithParam<std::string>
{
};

TEST_P(OverflowGolden, ReproducesMsprobe)
{
    const fs::path dir = caseDir(GetParam());
    if (!fs::exists(dir))
        GTEST_SKIP() << "fixtures not available: " << dir;
    TempDir tmp;
    const fs::path out = tmp.path() / "out";
    auto result = overflow::runOverflowCheck(dir / "inputs" / "step0", out);
    ASSERT_TRUE(result.ok()) << result.error().format();
    EXPECT_FALSE(result->refused);
    EXPECT_TRUE(result->inputDiagnostics.empty());
    const auto expected = filesIn(dir / "expected", "anomaly_analyze_");
    std::vector<std::string> log = result->log;
    if (expected.empty()) {
        EXPECT_FALSE(result->analyzeFile);
        EXPECT_FALSE(fs::exists(out)) << "no anomaly: msprobe creates no output folder";
    } else {
        ASSERT_EQ(expected.size(), 1u);
        ASSERT_TRUE(result->analyzeFile);
        EXPECT_EQ(result->analyzeFile->parent_path(), out);
        EXPECT_TRUE(result->analyzeFile->filename().string().starts_with("anomaly_analyze_"));
        EXPECT_EQ(readAll(*result->analyzeFile), readAll(expected.front())) << GetParam();
        EXPECT_EQ(filesIn(out, "").size(), 1u);
        ASSERT_FALSE(log.empty());
        EXPECT_EQ(log.back(), "The analyze result is saved in: " + result->analyzeFile->string());
        log.back() = "The analyze result is saved in: out/anomaly_analyze_<NS>.json";
    }
    EXPECT_EQ(log, goldenLog(dir));
}

INSTANTIATE_TEST_SUITE_P(Msprobe26, OverflowGolden,
                         ::testing::Values("nan_single_rank", "nan_in_input_later_culprit", "inf_single_rank",
                                           "neginf_min_only", "inf_backward_only", "allreduce_nan_rank1_2r",
                                           "p2p_send_recv_2r", "no_anomaly_2r"));

// ../shared/fixtures/msprobe26_da's OVERFLOW_* runs: msprobe 26 overflow_check on the real modelA dumps (NPU side, a
// "rank" folder), where it finds no anomaly: no file, no folder, its log.
class OverflowModelA : public ::testing::TestWithParam<std::string>
{
};

TEST_P(OverflowModelA, NoAnomalyAsMsprobe)
{
    const fs::path golden = fixturesDir() / "msprobe26_da" / ("OVERFLOW_" + GetParam() + "_npu");
    const fs::path input = fixturesDir() / GetParam() / "npu" / "step0";
    if (!fs::exists(golden) || !fs::exists(input))
        GTEST_SKIP() << "fixtures not available";
    TempDir tmp;
    auto result = overflow::runOverflowCheck(input, tmp.path() / "OUT");
    ASSERT_TRUE(result.ok()) << result.error().format();
    EXPECT_FALSE(result->refused);
    EXPECT_FALSE(result->analyzeFile);
    EXPECT_FALSE(fs::exists(tmp.path() / "OUT"));
    EXPECT_EQ(result->log, goldenLog(golden.parent_path() / golden.filename(), "console.normalized.txt"));
}

INSTANTIATE_TEST_SUITE_P(Msprobe26Da, OverflowModelA,
                         ::testing::Values("modelA_tensor_mix", "modelA_statistics_mix", "modelA_md5_mix"));

void copyTree(const fs::path& from, const fs::path& to)
{
    fs::create_directories(to);
    fs::copy(from, to, fs::copy_options::recursive);
}

// Beyond msprobe: a dump root. Step 0 is clean, step 1 holds the NaN: step 1 answers, with msprobe's file.
TEST(Overflow, DumpRootFirstAnomalousStep)
{
    if (!fs::exists(caseDir("no_anomaly_2r")))
        GTEST_SKIP();
    TempDir tmp;
    copyTree(caseDir("no_anomaly_2r") / "inputs" / "step0", tmp.path() / "root" / "step0");
    copyTree(caseDir("allreduce_nan_rank1_2r") / "inputs" / "step0", tmp.path() / "root" / "step1");
    copyTree(caseDir("p2p_send_recv_2r") / "inputs" / "step0", tmp.path() / "root" / "step2");
    auto result = overflow::runOverflowCheck(tmp.path() / "root", tmp.path() / "out");
    ASSERT_TRUE(result.ok()) << result.error().format();
    ASSERT_TRUE(result->analyzeFile);
    EXPECT_EQ(result->step, 1);
    EXPECT_EQ(readAll(*result->analyzeFile),
              readAll(filesIn(caseDir("allreduce_nan_rank1_2r") / "expected", "anomaly_analyze_").front()));
    EXPECT_EQ(filesIn(tmp.path() / "out", "").size(), 1u);
}

// A rank folder alone (dump.json directly inside) is rank 0.
TEST(Overflow, RankFolderAlone)
{
    if (!fs::exists(caseDir("inf_single_rank")))
        GTEST_SKIP();
    TempDir tmp;
    auto result = overflow::runOverflowCheck(caseDir("inf_single_rank") / "inputs" / "step0" / "rank0", tmp.path() / "o");
    ASSERT_TRUE(result.ok()) << result.error().format();
    ASSERT_TRUE(result->analyzeFile);
    EXPECT_EQ(readAll(*result->analyzeFile), readAll(filesIn(caseDir("inf_single_rank") / "expected", "anomaly_analyze_").front()));
}

TEST(Overflow, DamagedDumpIsRefusedNamingTheFile)
{
    if (!fs::exists(caseDir("allreduce_nan_rank1_2r")))
        GTEST_SKIP();
    TempDir tmp;
    copyTree(caseDir("allreduce_nan_rank1_2r") / "inputs" / "step0", tmp.path() / "step0");
    const fs::path damaged = tmp.path() / "step0" / "rank1" / "dump.json";
    const std::string text = readAll(damaged);
    std::ofstream(damaged, std::ios::binary | std::ios::trunc) << text.substr(0, text.size() / 2);
    auto result = overflow::runOverflowCheck(tmp.path() / "step0", tmp.path() / "out");
    ASSERT_TRUE(result.ok()) << result.error().format();
    EXPECT_TRUE(result->refused);
    ASSERT_FALSE(result->inputDiagnostics.empty());
    EXPECT_NE(result->inputDiagnostics.front().format().find(damaged.string()), std::string::npos)
        << result->inputDiagnostics.front().format();
    EXPECT_FALSE(result->analyzeFile);
    EXPECT_FALSE(fs::exists(tmp.path() / "out"));
}

TEST(Overflow, NoDumpIsAnError)
{
    TempDir tmp;
    fs::create_directories(tmp.path() / "empty");
    auto result = overflow::runOverflowCheck(tmp.path() / "empty", tmp.path() / "out");
    EXPECT_FALSE(result.ok());
    EXPECT_FALSE(fs::exists(tmp.path() / "out"));
}

// ---- The rules on hand-made dumps (analyzeStep directly).

std::string stat(const std::string& max, const std::string& min)
{
    return R"({"type": "torch.Tensor", "dtype": "torch.float32", "shape": [2], "Max": )" + max + R"(, "Min": )" + min
        + R"(, "Mean": 0.0, "Norm": 1.0, "requires_grad": false})";
}

std::string fwd(const std::string& in, const std::string& out, const std::string& kwargs = "{}")
{
    return R"({"input_args": [)" + in + R"(], "input_kwargs": )" + kwargs + R"(, "output": [)" + out + "]}";
}

/// A rank folder with a 26-style dump.json of `ops` (name, entry JSON) and empty construct/stack files.
void writeRank(const TempDir& tmp, const std::string& rank, const std::vector<std::pair<std::string, std::string>>& ops)
{
    std::string data;
    for (const auto& [name, entry] : ops)
        data += (data.empty() ? "" : ",\n") + ("\"" + name + "\": " + entry);
    tmp.write("step0/" + rank + "/dump.json",
              R"({"task": "statistics", "level": "L1", "framework": "pytorch", "dump_data_dir": null, "data": {)" + data + "}}");
    tmp.write("step0/" + rank + "/construct.json", "{}");
    tmp.write("step0/" + rank + "/stack.json", "{}");
}

std::string analyzedOpOf(const fs::path& file)
{
    const std::string text = readAll(file);
    const auto at = text.find("\"op_name\": \"");
    if (at == std::string::npos)
        return "";
    const auto start = at + 12;
    return text.substr(start, text.find('"', start) - start);
}

std::string rankKeyOf(const fs::path& file)
{
    const std::string text = readAll(file);
    const auto at = text.find("\"rank_");
    return at == std::string::npos ? "" : text.substr(at + 1, text.find('"', at + 1) - at - 1);
}

const std::string kClean = stat("1.0", "-1.0");
const std::string kNan = stat("NaN", "NaN");

TEST(Overflow, IgnoredOpsAndStringTokens)
{
    TempDir tmp;
    // Torch.fill makes a NaN from clean inputs but is ignored; "inf" as a string counts (str(x).lower()).
    writeRank(tmp, "rank0",
              { { "Torch.fill.0.forward", fwd(kClean, kNan) },
                { "Torch.mul.0.forward", fwd(kNan, kNan) },
                { "Torch.add.0.forward", fwd(kClean, stat("\"Inf\"", "0.0")) } });
    auto result = overflow::runOverflowCheck(tmp.path() / "step0", tmp.path() / "out");
    ASSERT_TRUE(result.ok()) << result.error().format();
    ASSERT_TRUE(result->analyzeFile);
    EXPECT_EQ(analyzedOpOf(*result->analyzeFile), "Torch.add.0.forward");
}

TEST(Overflow, BroadcastRootTypedByIntRank)
{
    TempDir tmp;
    // rank 0 broadcasts (src=0) a NaN made by its exp; rank 1 receives it. overflow_check compares the kwarg's
    // int with the rank, so rank 0 is the source and its compute op is the origin.
    const std::string kw = R"({"src": {"type": "int", "value": 0}})";
    writeRank(tmp, "rank0",
              { { "Distributed.broadcast.0.forward", fwd(kClean, kClean, kw) },
                { "Torch.mul.0.forward", fwd(kClean, kClean) },
                { "Torch.exp.0.forward", fwd(kClean, kNan) },
                { "Distributed.broadcast.1.forward", fwd(kNan, kNan, kw) } });
    writeRank(tmp, "rank1",
              { { "Distributed.broadcast.0.forward", fwd(kClean, kClean, kw) },
                { "Distributed.broadcast.1.forward", fwd(kClean, kNan, kw) },
                { "Torch.relu.0.forward", fwd(kNan, kNan) } });
    auto result = overflow::runOverflowCheck(tmp.path() / "step0", tmp.path() / "out");
    ASSERT_TRUE(result.ok()) << result.error().format();
    ASSERT_TRUE(result->analyzeFile);
    // A src kwarg alone names only the root, which has searched already: the broadcasts never pair. In the search
    // round rank 0's node forms the only group (overflow_check's inverted round test drops rank 1's ungrouped
    // node unexamined), a source with a NaN input: its compute op exp is the origin.
    EXPECT_EQ(analyzedOpOf(*result->analyzeFile), "Torch.exp.0.forward");
    EXPECT_EQ(rankKeyOf(*result->analyzeFile), "rank_0");
}

TEST(Overflow, AfterLastCommunication)
{
    TempDir tmp;
    writeRank(tmp, "rank0",
              { { "Distributed.all_reduce.0.forward", fwd(kClean, kClean) }, { "Torch.log.0.forward", fwd(kClean, kNan) } });
    writeRank(tmp, "rank1",
              { { "Distributed.all_reduce.0.forward", fwd(kClean, kClean) }, { "Torch.sqrt.0.forward", fwd(kClean, kNan) } });
    auto result = overflow::runOverflowCheck(tmp.path() / "step0", tmp.path() / "out");
    ASSERT_TRUE(result.ok()) << result.error().format();
    ASSERT_TRUE(result->analyzeFile);
    // Pass 3: each rank's first anomaly after its last communication op, ranks ascending.
    const std::string text = readAll(*result->analyzeFile);
    EXPECT_LT(text.find("\"rank_0\""), text.find("\"rank_1\""));
    EXPECT_NE(text.find("Torch.log.0.forward"), std::string::npos);
    EXPECT_NE(text.find("Torch.sqrt.0.forward"), std::string::npos);
    EXPECT_EQ(result->log.back().find("The analyze result is saved in"), 0u);
}

TEST(Overflow, ShortCommunicationNameIsAnError)
{
    TempDir tmp;
    writeRank(tmp, "rank0", { { "Distributed.all_reduce.0.forward", fwd(kClean, kClean) }, { "Distributed.send", fwd(kClean, kClean) } });
    writeRank(tmp, "rank1", { { "Distributed.all_reduce.0.forward", fwd(kClean, kClean) } });
    auto result = overflow::runOverflowCheck(tmp.path() / "step0", tmp.path() / "out");
    ASSERT_FALSE(result.ok());
    EXPECT_EQ(result.error().id, "overflow.op-name");
    EXPECT_NE(result.error().format().find("rank0"), std::string::npos);
}

// overflow_check's index of a rank's communication ops, {api: {rank: {call_cnt: node}}}, keys a node by its call
// count's text (the op name's third part): "0" and "00" are two places, while two ops of one call count ("0" forward
// and backward) share one, the later node in it. The graph interns that text (issue 37, docs/scale-out.md "fifth
// round"); this is what must not change. No op has a NaN, so the communication pass runs and logs the op it cannot
// pair.
TEST(Overflow, CallCountIsMatchedByItsText)
{
    const auto unconnected = [](const std::vector<std::string>& log) {
        std::vector<std::string> out;
        for (const std::string& line : log) {
            if (line.starts_with("Cannot find connected communication node"))
                out.push_back(line);
        }
        return out;
    };
    const std::vector<std::pair<std::string, std::string>> searching = {
        { "Distributed.all_reduce.0.forward", fwd(kClean, kClean) },
        { "Torch.mul.0.forward", fwd(kClean, kClean) },
        { "Distributed.all_reduce.1.forward", fwd(kClean, kClean) },
    };
    // The log of a run over rank 0 (searching) and rank 1 holding `ops`; no op has a NaN, so no analysis file.
    const auto logWith = [&](const std::vector<std::pair<std::string, std::string>>& ops) -> std::vector<std::string> {
        TempDir tmp;
        writeRank(tmp, "rank0", searching);
        writeRank(tmp, "rank1", ops);
        auto result = overflow::runOverflowCheck(tmp.path() / "step0", tmp.path() / "out");
        EXPECT_TRUE(result.ok()) << result.error().format();
        if (!result.ok())
            return {};
        EXPECT_FALSE(result->analyzeFile);
        EXPECT_EQ(result->log.back(), "Cannot find any anomaly node, no need to generate analyze file.");
        return result->log;
    };
    EXPECT_EQ(unconnected(logWith({ { "Distributed.all_reduce.0.forward", fwd(kClean, kClean) },
                                    { "Distributed.all_reduce.00.forward", fwd(kClean, kClean) } })),
              std::vector<std::string> {})
        << "\"0\" and \"00\" are two call counts";
    // One place for call count 0 (the backward op): rank 0's first all_reduce takes it, its second finds none.
    EXPECT_EQ(unconnected(logWith({ { "Distributed.all_reduce.0.forward", fwd(kClean, kClean) },
                                    { "Distributed.all_reduce.0.backward", fwd(kClean, kClean) } })),
              std::vector<std::string> { "Cannot find connected communication node for \"0.Distributed.all_reduce.1.forward\"." });
}

// A bare "rank" folder is rank 0 for msprobe, as "rank0" is: two folders of one step at rank 0 are refused, the later
// one (in discovery's order: the bare folder first) named with the earlier (issue 37: the check runs on discovery's
// table, not on a map of its locations).
TEST(Overflow, TwoFoldersOfOneRankAreRefusedNamingBoth)
{
    TempDir tmp;
    for (const char* rank : { "rank2", "rank0", "rank" })
        writeRank(tmp, rank, { { "Torch.relu.0.forward", fwd(kClean, kClean) } });
    auto result = overflow::runOverflowCheck(tmp.path() / "step0", tmp.path() / "out");
    ASSERT_FALSE(result.ok());
    EXPECT_EQ(result.error().id, "overflow.duplicate-rank");
    EXPECT_EQ(result.error().location.file, (tmp.path() / "step0/rank0").string());
    EXPECT_EQ(result.error().message, "this folder and " + (tmp.path() / "step0/rank").string()
                                          + " are both rank 0 of one step: which one is meant?");
    EXPECT_FALSE(fs::exists(tmp.path() / "out"));
}

// Issue 37: a step of many ranks is read in chunks (64 ranks at a time) and no rank's dump is kept; the result is
// the one of the same ranks all in memory (analyzeStep over them), and the chain is anomalyChain's.
TEST(Overflow, ManyRanksReadInChunksGiveTheSameResult)
{
    TempDir tmp;
    constexpr int kRanks = 150; // three chunks, the last one partial
    constexpr int kOrigin = 137;
    // Every rank: all_reduce, a compute op, all_reduce, relu. On rank 137 the compute op (exp) makes the NaN; the
    // second all_reduce spreads it: every other rank gets it in its output and relus it.
    for (int rank = 0; rank < kRanks; ++rank) {
        const bool origin = rank == kOrigin;
        writeRank(tmp, "rank" + std::to_string(rank),
                  { { "Distributed.all_reduce.0.forward", fwd(kClean, kClean) },
                    { origin ? "Torch.exp.0.forward" : "Torch.mul.0.forward", fwd(kClean, origin ? kNan : kClean) },
                    { "Distributed.all_reduce.1.forward", fwd(origin ? kNan : kClean, kNan) },
                    { "Torch.relu.0.forward", fwd(kNan, kNan) } });
    }
    auto result = overflow::runOverflowCheck(tmp.path() / "step0", tmp.path() / "out");
    ASSERT_TRUE(result.ok()) << result.error().format();
    ASSERT_TRUE(result->analyzeFile);
    EXPECT_EQ(analyzedOpOf(*result->analyzeFile), "Torch.exp.0.forward");
    EXPECT_EQ(rankKeyOf(*result->analyzeFile), "rank_" + std::to_string(kOrigin));

    // The same ranks, every dump in memory at once.
    auto layout = dump::discoverDump(tmp.path() / "step0");
    ASSERT_TRUE(layout.ok()) << layout.error().format();
    overflow::StepRanks ranks;
    for (const dump::RankLocation& loc : layout->ranks) {
        auto loaded = dump::loadRank(loc);
        ASSERT_TRUE(loaded.ok()) << loaded.error().format();
        ranks[static_cast<int>(*loc.rank)] = *loaded;
    }
    ASSERT_EQ(ranks.size(), std::size_t(kRanks));
    std::vector<std::string> log;
    auto whole = overflow::analyzeStep(ranks, &log);
    ASSERT_TRUE(whole.ok()) << whole.error().format();
    ASSERT_TRUE(*whole);
    EXPECT_EQ(readAll(*result->analyzeFile), **whole);
    log.push_back("The analyze result is saved in: " + result->analyzeFile->string());
    EXPECT_EQ(result->log, log);

    // The viewer's first anomaly: the origin, then every other rank where the NaN arrived (its all_reduce).
    auto first = overflow::findFirstAnomaly(tmp.path() / "step0");
    ASSERT_TRUE(first.ok()) << first.error().format();
    ASSERT_TRUE(first->anomaly);
    const auto expected = overflow::anomalyChain(ranks, kOrigin, "Torch.exp.0.forward");
    ASSERT_EQ(first->anomaly->chain.size(), std::size_t(kRanks));
    ASSERT_EQ(expected.size(), first->anomaly->chain.size());
    for (std::size_t i = 0; i < expected.size(); ++i) {
        EXPECT_EQ(first->anomaly->chain[i].rank, expected[i].rank);
        EXPECT_EQ(first->anomaly->chain[i].op, expected[i].op);
        EXPECT_EQ(first->anomaly->chain[i].origin, expected[i].origin);
    }
    EXPECT_EQ(first->anomaly->chain[1].op, "Distributed.all_reduce.1.forward");
}

} // namespace
