// SPDX-License-Identifier: Apache-2.0
// compare --match-file (issue 27 item 4, docs/graph.md "compare --match-file"): the entries a tb_graph_ascend
// .vis.config pairs are compared as it says, in both msprobe profiles and every dump mode. The shifted bench dump is
// made here from a real fixture pair: its Functional.gelu.0 call is renamed Functional.gelu.1 (keys, data names and
// tensor files), so msprobe's matching leaves it unmatched; the manual match must give back exactly the table of the
// unshifted pair.
#include "core/compare/pipeline/comparerun.h"
#include "core/compare/msprobe26/msprobe26.h"
#include "core/compare/table/pytext.h"
#include "tempdir.h"
#include "testconfig.h"

#include <gtest/gtest.h>

#include <fstream>

using namespace probescope;
using namespace probescope::compare;
using probescope::testing::readAll;
using probescope::testing::TempDir;
namespace fs = std::filesystem;

namespace {

std::string replaceAll(std::string text, const std::string& from, const std::string& to)
{
    for (std::size_t at = 0; (at = text.find(from, at)) != std::string::npos; at += to.size())
        text.replace(at, from.size(), to);
    return text;
}

fs::path fixtureRank(const std::string& mode, const std::string& side)
{
    return probescope::testing::fixturesDir() / ("modelA_" + mode + "_mix") / side / "step0/rank";
}

/// A copy of the fixture's bench rank with every `from` in a name replaced by `to`: the JSON files and the tensor
/// file names, as msprobe would have written them had the call been numbered so.
fs::path renamedBench(const std::string& mode, const fs::path& into, const std::string& from, const std::string& to)
{
    const fs::path source = fixtureRank(mode, "bench");
    fs::create_directories(into);
    for (const char* json : { "dump.json", "construct.json", "stack.json" }) {
        if (fs::exists(source / json))
            std::ofstream(into / json, std::ios::binary) << replaceAll(readAll(source / json), from, to);
    }
    if (fs::exists(source / "dump_tensor_data")) {
        fs::create_directories(into / "dump_tensor_data");
        for (const auto& f : fs::directory_iterator(source / "dump_tensor_data"))
            fs::copy_file(f.path(), into / "dump_tensor_data" / replaceAll(f.path().filename().string(), from, to));
    }
    return into / "dump.json";
}

struct MatchRun
{
    std::shared_ptr<const CompareTable> table;
    PairResult pair;
    std::string csv;
};

MatchRun compareOne(const fs::path& npu, const fs::path& bench, JobOptions options, const fs::path& out)
{
    CompareInput input;
    input.npuPath = npu;
    input.benchPath = bench;
    options.advisor = false;
    options.timestamp = "20000101000000";
    auto results = runCompareJob(input, out, options);
    EXPECT_TRUE(results.ok()) << (results.ok() ? "" : results.error().format());
    if (!results.ok() || results->size() != 1)
        return {};
    const auto& table = *results->front().table;
    const std::string csv = options.profile == Profile::Msprobe26 ? msprobe26::tableCsv(table) : tableCsv(table);
    return { results->front().table, results->front(), csv };
}

/// Whether the row named `npu` has a bench partner, and its Bench Name.
std::pair<bool, std::string> benchOf(const CompareTable& t, const std::string& npu)
{
    for (std::size_t r = 0; r < t.rows.size(); ++r) {
        if (t.rows[r][0].isString() && t.rows[r][0].asString() == npu)
            return { t.matched[r], excelText(t.rows[r][1]) };
    }
    return { false, "(no row)" };
}

bool hasDiagnostic(const Diagnostics& list, const std::string& id, const std::string& text)
{
    return std::any_of(list.begin(), list.end(), [&](const Diagnostic& d) {
        return d.id == id && d.format().find(text) != std::string::npos;
    });
}

const char* traceName(Profile p)
{
    return p == Profile::Msprobe26 ? "msprobe-26" : "msprobe-1.2";
}

} // namespace

TEST(MatchFile, ShiftedCallIsComparedInEveryModeAndProfile)
{
    for (const std::string mode : { "tensor", "statistics", "md5" }) {
        for (const Profile profile : { Profile::Msprobe12, Profile::Msprobe26 }) {
            SCOPED_TRACE(mode + " " + traceName(profile));
            TempDir dir;
            const fs::path npu = fixtureRank(mode, "npu") / "dump.json";
            const fs::path bench = renamedBench(mode, dir.path() / "bench", "Functional.gelu.0.", "Functional.gelu.1.");
            const fs::path config = dir.write("m.vis.config", R"({
    "Functional.gelu.0.forward": "Functional.gelu.1.forward",
    "Functional.gelu.0.backward": "Functional.gelu.1.backward"
})");
            JobOptions options;
            options.profile = profile;
            const MatchRun reference = compareOne(npu, fixtureRank(mode, "bench") / "dump.json", options, dir.path() / "ref");
            const MatchRun shifted = compareOne(npu, bench, options, dir.path() / "plain");
            options.matchFile = config;
            const MatchRun matched = compareOne(npu, bench, options, dir.path() / "matched");
            ASSERT_TRUE(reference.table && shifted.table && matched.table);

            // The unshifted pair compares the call; the shifted one leaves its forward rows without bench data.
            EXPECT_EQ(benchOf(*reference.table, "Functional.gelu.0.forward.output.0"),
                      std::pair(true, std::string("Functional.gelu.0.forward.output.0")));
            EXPECT_EQ(benchOf(*shifted.table, "Functional.gelu.0.forward.output.0"), std::pair(false, std::string("N/A")));
            // With the file the rows are compared against the renamed call ...
            EXPECT_EQ(benchOf(*matched.table, "Functional.gelu.0.forward.input.0"),
                      std::pair(true, std::string("Functional.gelu.1.forward.input.0")));
            EXPECT_EQ(benchOf(*matched.table, "Functional.gelu.0.backward.output.0"),
                      std::pair(true, std::string("Functional.gelu.1.backward.output.0")));
            // ... and give the unshifted pair's table, values, verdicts and all, and its first failing node.
            EXPECT_EQ(replaceAll(matched.csv, "Functional.gelu.1.", "Functional.gelu.0."), reference.csv);
            EXPECT_EQ(matched.pair.firstFailure.key, reference.pair.firstFailure.key);
            EXPECT_EQ(matched.pair.firstFailure.summary, reference.pair.firstFailure.summary);
            EXPECT_FALSE(hasDiagnostic(matched.pair.diagnostics, "compare.match-skipped", ""));
            if (mode == "statistics" && profile == Profile::Msprobe12) {
                // The gelu call is where msprobe 1.2's statistics verdicts first fail: unmatched, it cannot be.
                EXPECT_EQ(reference.pair.firstFailure.key, "Functional.gelu.0.forward");
                EXPECT_NE(shifted.pair.firstFailure.key, "Functional.gelu.0.forward");
            }
        }
    }
}

TEST(MatchFile, RenamedModuleIsComparedAndItsChildrenKeepTheirMatching)
{
    for (const Profile profile : { Profile::Msprobe12, Profile::Msprobe26 }) {
        SCOPED_TRACE(traceName(profile));
        TempDir dir;
        const fs::path npu = fixtureRank("statistics", "npu") / "dump.json";
        const fs::path bench = renamedBench("statistics", dir.path() / "bench", "Module.block.ffn.fc1.", "Module.block.ffn.up.");
        // Only the module's forward call is named: its backward and its parameters_grad stay unmatched, its child
        // Functional.linear.3 (same name on both sides) stays matched by msprobe's rules.
        const fs::path config = dir.write("m.vis.config", R"({"Module.block.ffn.fc1.Linear.forward.0": "Module.block.ffn.up.Linear.forward.0"})");
        JobOptions options;
        options.profile = profile;
        options.matchFile = config;
        const MatchRun run = compareOne(npu, bench, options, dir.path() / "out");
        ASSERT_TRUE(run.table);
        EXPECT_EQ(benchOf(*run.table, "Module.block.ffn.fc1.Linear.forward.0.input.0"),
                  std::pair(true, std::string("Module.block.ffn.up.Linear.forward.0.input.0")));
        EXPECT_EQ(benchOf(*run.table, "Module.block.ffn.fc1.Linear.forward.0.output.0"),
                  std::pair(true, std::string("Module.block.ffn.up.Linear.forward.0.output.0")));
        EXPECT_FALSE(benchOf(*run.table, "Module.block.ffn.fc1.Linear.backward.0.output.0").first);
        EXPECT_EQ(benchOf(*run.table, "Functional.linear.3.forward.output.0"),
                  std::pair(true, std::string("Functional.linear.3.forward.output.0")));
    }
}

TEST(MatchFile, StaleAndTwiceClaimedEntriesAreWarningsNamingFileAndEntry)
{
    for (const Profile profile : { Profile::Msprobe12, Profile::Msprobe26 }) {
        SCOPED_TRACE(traceName(profile));
        TempDir dir;
        const fs::path npu = fixtureRank("statistics", "npu") / "dump.json";
        const fs::path bench = renamedBench("statistics", dir.path() / "bench", "Functional.gelu.0.", "Functional.gelu.1.");
        const fs::path config = dir.write("stale.vis.config", R"({
    "Functional.gelu.7.forward": "Functional.gelu.1.forward",
    "Functional.gelu.0.forward": "Functional.gelu.1.forward",
    "Functional.relu.0.forward": "Functional.gelu.1.forward"
})");
        JobOptions options;
        options.profile = profile;
        options.matchFile = config;
        const MatchRun run = compareOne(npu, bench, options, dir.path() / "out");
        ASSERT_TRUE(run.table);
        const Diagnostics& notes = run.pair.diagnostics;
        EXPECT_TRUE(hasDiagnostic(notes, "compare.match-skipped",
                                  config.string() + ": warning [compare.match-skipped]: \"Functional.gelu.7.forward\": "
                                                    "\"Functional.gelu.1.forward\" dropped: neither side has a node "
                                                    "Functional.gelu.7.forward"))
            << (notes.empty() ? "" : notes.front().format());
        // First claim wins: relu.0 cannot take the bench gelu the entry before took, and keeps msprobe's partner.
        EXPECT_TRUE(hasDiagnostic(notes, "compare.match-skipped",
                                  "\"Functional.relu.0.forward\": \"Functional.gelu.1.forward\" dropped: bench "
                                  "Functional.gelu.1.forward is already matched with Functional.gelu.0.forward"));
        EXPECT_EQ(benchOf(*run.table, "Functional.gelu.0.forward.output.0"),
                  std::pair(true, std::string("Functional.gelu.1.forward.output.0")));
        EXPECT_EQ(benchOf(*run.table, "Functional.relu.0.forward.output.0"),
                  std::pair(true, std::string("Functional.relu.0.forward.output.0")));
    }
}

TEST(MatchFile, DamagedFileIsAnErrorWithItsPosition)
{
    TempDir dir;
    const fs::path config = dir.write("bad.vis.config", "{\n    \"Functional.gelu.0.forward\": \"x\",\n    oops\n}");
    JobOptions options;
    options.matchFile = config;
    CompareInput input;
    input.npuPath = fixtureRank("statistics", "npu") / "dump.json";
    input.benchPath = fixtureRank("statistics", "bench") / "dump.json";
    auto results = runCompareJob(input, dir.path() / "out", options);
    ASSERT_FALSE(results.ok());
    EXPECT_EQ(results.error().id, "graph.match-file");
    EXPECT_NE(results.error().format().find(config.string() + ":3:5"), std::string::npos) << results.error().format();
    EXPECT_FALSE(fs::exists(dir.path() / "out"));
}

TEST(MatchFile, Msprobe12RefusesItBesideADataMapping)
{
    TempDir dir;
    JobOptions options;
    options.matchFile = dir.write("m.vis.config", "{}");
    options.dataMapping = dir.write("map.yaml", "Functional.gelu.0.forward.input.0: Functional.gelu.0.forward.input.0\n");
    CompareInput input;
    input.npuPath = fixtureRank("statistics", "npu") / "dump.json";
    input.benchPath = fixtureRank("statistics", "bench") / "dump.json";
    auto results = runCompareJob(input, dir.path() / "out", options);
    ASSERT_FALSE(results.ok());
    EXPECT_EQ(results.error().id, "compare.option");
}

namespace {

std::string entry(double max)
{
    const std::string leaf = R"({"type": "torch.Tensor", "dtype": "torch.float32", "shape": [2], "Max": )"
        + std::to_string(max) + R"(, "Min": 0.0, "Mean": 0.5, "Norm": 1.0, "requires_grad": false})";
    return R"({"input_args": [)" + leaf + R"(], "input_kwargs": {}, "output": [)" + leaf + "]}";
}

std::string dumpOf(const std::vector<std::pair<std::string, double>>& entries)
{
    std::string text = R"({"task": "statistics", "level": "L1", "framework": "pytorch", "dump_data_dir": null, "data": {)";
    for (std::size_t i = 0; i < entries.size(); ++i)
        text += (i ? ", \"" : "\"") + entries[i].first + "\": " + entry(entries[i].second);
    return text + "}}";
}

} // namespace

TEST(MatchFile, PairTheWalkNeverReachesIsStillCompared)
{
    // msprobe 1.2's walk: relu matches the bench relu past the bench sigmoid, which is dropped; the bench queue is
    // then empty and the NPU exp grows alone, so the walk stops (exp is kept unmatched) and tanh is lost. Paired with
    // the sigmoid by hand, tanh is compared at its NPU place. msprobe 26 -fm walks the same way, row by row: it stops
    // at exp's input, so exp's output stays lost as msprobe loses it.
    TempDir dir;
    const fs::path npu = dir.write("npu/dump.json", dumpOf({ { "Functional.relu.0.forward", 1.0 },
                                                             { "Functional.gelu.0.forward", 1.0 },
                                                             { "Functional.exp.0.forward", 1.0 },
                                                             { "Functional.tanh.0.forward", 2.0 } }));
    const fs::path bench = dir.write("bench/dump.json", dumpOf({ { "Functional.sigmoid.0.forward", 4.0 },
                                                                 { "Functional.relu.0.forward", 1.0 } }));
    const fs::path config = dir.write("m.vis.config", R"({"Functional.tanh.0.forward": "Functional.sigmoid.0.forward"})");
    for (const Profile profile : { Profile::Msprobe12, Profile::Msprobe26 }) {
        SCOPED_TRACE(traceName(profile));
        JobOptions options;
        options.profile = profile;
        options.fuzzy = profile == Profile::Msprobe26;
        const MatchRun plain = compareOne(npu, bench, options, dir.path() / (std::string("plain-") + traceName(profile)));
        ASSERT_TRUE(plain.table);
        EXPECT_EQ(benchOf(*plain.table, "Functional.tanh.0.forward.input.0").second, "(no row)");
        EXPECT_EQ(plain.table->npuOpsLost, profile == Profile::Msprobe26 ? 3u : 1u);
        options.matchFile = config;
        const MatchRun run = compareOne(npu, bench, options, dir.path() / traceName(profile));
        ASSERT_TRUE(run.table);
        EXPECT_EQ(benchOf(*run.table, "Functional.tanh.0.forward.input.0"),
                  std::pair(true, std::string("Functional.sigmoid.0.forward.input.0")));
        EXPECT_EQ(benchOf(*run.table, "Functional.tanh.0.forward.output.0"),
                  std::pair(true, std::string("Functional.sigmoid.0.forward.output.0")));
        EXPECT_EQ(benchOf(*run.table, "Functional.relu.0.forward.output.0"),
                  std::pair(true, std::string("Functional.relu.0.forward.output.0")));
        EXPECT_FALSE(benchOf(*run.table, "Functional.gelu.0.forward.output.0").first);
        EXPECT_EQ(run.table->npuOpsLost, profile == Profile::Msprobe26 ? 1u : 0u);
        // The row order is the NPU order.
        EXPECT_EQ(run.table->rows[run.table->rows.size() - 1][0].asString(), "Functional.tanh.0.forward.output.0");
    }
}

TEST(MatchFile, CrossNamedMatchTakesTheBenchNodeFromItsNamesake)
{
    // NPU relu.1 with bench relu.0 on the real pair, where both sides have relu.0 and relu.1: the manual pair wins,
    // NPU relu.0 (whose namesake the file took) is left without bench data, and no second pair is invented.
    for (const Profile profile : { Profile::Msprobe12, Profile::Msprobe26 }) {
        SCOPED_TRACE(traceName(profile));
        TempDir dir;
        const fs::path config = dir.write("m.vis.config", R"({"Functional.relu.1.forward": "Functional.relu.0.forward"})");
        JobOptions options;
        options.profile = profile;
        options.matchFile = config;
        const MatchRun run = compareOne(fixtureRank("statistics", "npu") / "dump.json",
                                        fixtureRank("statistics", "bench") / "dump.json", options, dir.path() / "out");
        ASSERT_TRUE(run.table);
        EXPECT_EQ(benchOf(*run.table, "Functional.relu.1.forward.output.0"),
                  std::pair(true, std::string("Functional.relu.0.forward.output.0")));
        EXPECT_EQ(benchOf(*run.table, "Functional.relu.0.forward.output.0"), std::pair(false, std::string("N/A")));
        EXPECT_EQ(benchOf(*run.table, "Functional.relu.2.forward.output.0"),
                  std::pair(true, std::string("Functional.relu.2.forward.output.0")));
    }
}
