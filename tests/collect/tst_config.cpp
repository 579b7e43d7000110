// SPDX-License-Identifier: Apache-2.0
// config.json: msprobe's keys and values, and errors that name the key and its position.
#include "collecttest.h"

#include <probescope/collect/config.h>

#include "core/collect/msprobebook.h"
#include "core/collect/msprobescope.h"

using namespace probescope::collect;
using probescope::testing::TempDir;
using probescope::testing::writeFile;

namespace {

/// The error text for `json`, or "" when it parses.
std::string errorOf(const std::string& json)
{
    try {
        parseConfigText(json, "config.json");
    } catch (const CollectError& e) {
        EXPECT_EQ(e.id(), "collect.config");
        return e.what();
    }
    return {};
}

} // namespace

TEST(Config, MsprobeTemplateWithEverySection)
{
    // msprobe's own template keeps every task section; only the chosen task's is read.
    const Config c = parseConfigText(R"({
        "task": "statistics", "dump_path": "/home/data_dump", "rank": [], "step": [0, 2], "level": "mix",
        "seed": 1234, "is_deterministic": false, "enable_dataloader": false,
        "statistics": {"scope": [], "list": [], "data_mode": ["forward", "input"], "summary_mode": "md5"},
        "tensor": {"scope": [], "list": [], "data_mode": ["all"], "backward_input": ""},
        "overflow_check": {"overflow_nums": 1},
        "free_benchmark": {"scope": [], "list": ["conv2d"], "fuzz_device": "npu", "pert_mode": "improve_precision"},
        "run_ut": {"white_list": [], "black_list": [], "error_data_path": "./"}
    })");
    EXPECT_EQ(c.task, Task::Statistics);
    EXPECT_EQ(c.dumpPath, "/home/data_dump");
    EXPECT_EQ(c.steps, (std::vector<std::int64_t> { 0, 2 }));
    EXPECT_EQ(c.level, Level::Mix);
    EXPECT_EQ(c.summaryMode, SummaryMode::Md5);
    EXPECT_EQ(c.dataMode, (std::vector<std::string> { "forward", "input" }));
    EXPECT_TRUE(c.seedConfigured);
}

TEST(Config, TensorAndOverflowSections)
{
    const Config t = parseConfigText(R"({"task": "tensor", "dump_path": "d", "level": "L1",
        "tensor": {"scope": ["Aten.relu.0", "Aten.sum.0"], "data_mode": ["all"], "backward_input": ["x.pt"],
                   "file_format": "npy"}})");
    EXPECT_EQ(t.task, Task::Tensor);
    EXPECT_EQ(t.scope.size(), 2u);
    EXPECT_FALSE(t.seedConfigured);
    const Config o = parseConfigText(R"({"task": "overflow_check", "dump_path": "d", "overflow_check": {"overflow_nums": -1}})");
    EXPECT_EQ(o.overflowNums, -1);
}

TEST(Config, ErrorsNameKeyAndPosition)
{
    EXPECT_NE(errorOf("{\"task\": \"statistics\",\n \"levle\": \"L1\"}").find("config.json:2:11: error [collect.config]: "
                                                                           "unknown key \"levle\""),
              std::string::npos);
    EXPECT_NE(errorOf(R"({"statistics": {"scope": [], "summary": "md5"}})").find("unknown key \"summary\" in the \"statistics\" section"),
              std::string::npos);
    EXPECT_NE(errorOf(R"({"task": "tensr"})").find("\"task\" must be one of"), std::string::npos);
    EXPECT_NE(errorOf(R"({"level": "L3"})").find("\"level\" must be one of"), std::string::npos);
    EXPECT_NE(errorOf(R"({"rank": [0, -1]})").find("\"rank\" must hold integers >= 0 (element 1"), std::string::npos);
    EXPECT_NE(errorOf(R"({"step": "0"})").find("\"step\" must be a list of integers"), std::string::npos);
    EXPECT_NE(errorOf(R"({"seed": "x"})").find("\"seed\" must be an integer"), std::string::npos);
    EXPECT_NE(errorOf(R"({"is_deterministic": 1})").find("\"is_deterministic\" must be true or false"), std::string::npos);
    EXPECT_NE(errorOf(R"({"statistics": {"data_mode": ["all", "input"]}})").find("\"all\" must stand alone"),
              std::string::npos);
    EXPECT_NE(errorOf(R"({"statistics": {"data_mode": ["inputs"]}})").find("(got \"inputs\")"), std::string::npos);
    EXPECT_NE(errorOf(R"({"statistics": {"summary_mode": "sha"}})").find("\"summary_mode\" must be"), std::string::npos);
    EXPECT_NE(errorOf(R"({"statistics": {"scope": ["Aten.relu.0"]}})").find("\"scope\" must be empty or name two"),
              std::string::npos);
    EXPECT_NE(errorOf(R"({"statistics": {"scope": ["a", "b"], "list": ["relu"]}})").find("cannot both be set"),
              std::string::npos);
    EXPECT_NE(errorOf(R"({"task": "overflow_check", "overflow_check": {"overflow_nums": 0}})").find("\"overflow_nums\""),
              std::string::npos);
    EXPECT_NE(errorOf(R"({"task": "overflow_check", "overflow_check": {"scope": []}})").find("unknown key \"scope\""),
              std::string::npos);
    EXPECT_NE(errorOf("[1, 2]").find("must be a JSON object"), std::string::npos);
    EXPECT_NE(errorOf("{\"task\": ").find("not valid JSON"), std::string::npos);
}

TEST(Config, UnsupportedTasksAndLevelsAreRefusedClearly)
{
    EXPECT_EQ(errorOf(R"({"task": "free_benchmark"})"), ""); // supported now: tests/collect/tst_freebench.cpp
    EXPECT_NE(errorOf(R"({"task": "run_ut"})").find("task \"run_ut\" is recognised but not supported"), std::string::npos);
    EXPECT_NE(errorOf(R"({"level": "L2"})").find("level \"L2\""), std::string::npos);
    EXPECT_NE(errorOf(R"({"enable_dataloader": true})").find("enable_dataloader"), std::string::npos);
    EXPECT_NE(errorOf(R"({"task": "tensor", "tensor": {"online_run_ut": true}})").find("online_run_ut"), std::string::npos);
}

TEST(Config, MissingFileIsAnError)
{
    try {
        loadConfig("/nonexistent/config.json");
        FAIL() << "no error";
    } catch (const CollectError& e) {
        EXPECT_EQ(e.id(), "collect.config");
        EXPECT_NE(std::string(e.what()).find("/nonexistent/config.json"), std::string::npos);
    }
}

TEST(Config, AsyncQueueBytes)
{
    EXPECT_FALSE(parseConfigText(R"({"dump_path": "d"})").asyncQueueBytes); // unset: the default applies
    EXPECT_EQ(parseConfigText(R"({"dump_path": "d", "async_queue_bytes": 268435456})").asyncQueueBytes,
              std::optional<std::uint64_t>(268435456));
    EXPECT_EQ(parseConfigText(R"({"dump_path": "d", "async_queue_bytes": 0})").asyncQueueBytes,
              std::optional<std::uint64_t>(0));
    EXPECT_NE(errorOf("{\"dump_path\": \"d\",\n \"async_queue_bytes\": -1}")
                  .find("config.json:2:23: error [collect.config]: \"async_queue_bytes\" must be an integer >= 0"),
              std::string::npos);
    EXPECT_NE(errorOf(R"({"async_queue_bytes": "1G"})").find("\"async_queue_bytes\" must be an integer >= 0"),
              std::string::npos);
    // 1 GiB, or 1/8 of the memory on a small machine; never nothing.
    EXPECT_LE(defaultAsyncQueueBytes(), std::uint64_t(1) << 30);
    EXPECT_GE(defaultAsyncQueueBytes(), std::uint64_t(64) << 20);
}

// Issue 33: PrecisionDebugger's arguments (the C++ Options and the Python module's keywords alike) go through the one
// parser, before the task's section is chosen: the section read is the one of the task they name, as in msprobe.
TEST(Config, ArgumentsWinBeforeTheTaskSectionIsChosen)
{
    TempDir temp;
    const std::filesystem::path file = temp.path() / "config.json";
    writeFile(file, R"({"task": "statistics", "dump_path": "d", "statistics": {"list": ["gelu"]},
                        "tensor": {"list": ["relu"], "data_mode": ["forward"]}})");
    EXPECT_EQ(loadConfig(file.string()).list, std::vector<std::string> { "gelu" });
    ConfigOverrides o;
    o.task = Task::Tensor;
    o.level = Level::Mix;
    o.dumpPath = "elsewhere";
    o.step = std::vector<std::variant<std::int64_t, std::string>> { std::int64_t(3), std::string("5-1000000") };
    const Config c = loadConfig(file.string(), o);
    EXPECT_EQ(c.task, Task::Tensor);
    EXPECT_EQ(c.level, Level::Mix);
    EXPECT_EQ(c.dumpPath, "elsewhere");
    EXPECT_EQ(c.list, std::vector<std::string> { "relu" }); // the tensor section's, not the statistics one's
    EXPECT_EQ(c.dataMode, std::vector<std::string> { "forward" });
    EXPECT_EQ(c.steps, std::vector<std::int64_t> { 3 });
    ASSERT_EQ(c.stepRanges.size(), 1u);
    EXPECT_EQ(c.stepRanges[0], (std::pair<std::int64_t, std::int64_t> { 5, 1000000 }));

    // No file: msprobe's defaults, then the arguments; a task's rules apply to them (free_benchmark runs at L1).
    ConfigOverrides fb;
    fb.task = Task::FreeBenchmark;
    fb.level = Level::L0;
    fb.where = "PrecisionDebugger()";
    try {
        loadConfig("", fb);
        FAIL() << "free_benchmark at L0 was accepted";
    } catch (const CollectError& e) {
        EXPECT_EQ(e.id(), "collect.config");
        EXPECT_NE(std::string(e.what()).find("PrecisionDebugger()"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("L1"), std::string::npos) << e.what();
    }

    // The step items follow config.json's rules: bounded, ranges never expanded.
    for (const auto& bad : { std::variant<std::int64_t, std::string>(std::string("0-99999999999")),
                             std::variant<std::int64_t, std::string>(std::int64_t(1000001)),
                             std::variant<std::int64_t, std::string>(std::string("4-2")) }) {
        ConfigOverrides s;
        s.step = std::vector { bad };
        try {
            loadConfig(file.string(), s);
            ADD_FAILURE() << "accepted a bad step item";
        } catch (const CollectError& e) {
            EXPECT_NE(std::string(e.what()).find("PrecisionDebugger(): error [collect.config]: \"step\""),
                      std::string::npos) << e.what();
        }
    }
}

// Issue 33: msprobe's scope and list as the Python module applies them, in C++ (core/collect/msprobescope.h).
TEST(MsprobeScope, NamesRangesAndMixsListAsMsprobeAppliesThem)
{
    EXPECT_TRUE(MsprobeScope::isApiName("Torch.relu.0.forward"));
    EXPECT_TRUE(MsprobeScope::isApiName("Functional.linear.12.backward"));
    EXPECT_TRUE(MsprobeScope::isApiName("Torch..0.forward")); // msprobe's ".*" may be empty
    EXPECT_FALSE(MsprobeScope::isApiName("Torch.0.forward"));
    EXPECT_FALSE(MsprobeScope::isApiName("Torch.relu.forward"));
    EXPECT_FALSE(MsprobeScope::isApiName("Module.fc1.Linear.forward.0"));
    EXPECT_FALSE(MsprobeScope::isApiName("Torchx.relu.0.forward"));
    EXPECT_TRUE(MsprobeScope::isModuleName("Module.fc1.Linear.forward.0"));
    EXPECT_TRUE(MsprobeScope::isModuleName("Cell.a.B.backward.3"));
    EXPECT_FALSE(MsprobeScope::isModuleName("Module.fc1.Linear.forward"));
    EXPECT_FALSE(MsprobeScope::isModuleName("Torch.relu.0.forward"));

    // An API range (L1): from the first name to the last, both included.
    MsprobeScope range("config.json", Level::L1, { "Torch.a.0.forward", "Torch.c.0.forward" }, {});
    EXPECT_FALSE(range.check("Torch.z.0.forward"));
    EXPECT_TRUE(range.check("Torch.a.0.forward"));
    EXPECT_TRUE(range.check("Torch.b.0.forward"));
    EXPECT_TRUE(range.check("Torch.c.0.forward"));
    EXPECT_FALSE(range.check("Torch.d.0.forward"));

    // A module range (L0): open from the first module's call to the end of the last one's.
    MsprobeScope modules("config.json", Level::L0, { "Module.a.A.forward.0", "Module.b.B.forward.0" }, {});
    EXPECT_FALSE(modules.check("Module.z.Z.forward.0"));
    modules.beginModule("Module.a.A.forward.0");
    EXPECT_TRUE(modules.check("Module.a.A.forward.0"));
    modules.beginModule("Module.b.B.forward.0");
    modules.endModule("Module.b.B.forward.0");
    EXPECT_FALSE(modules.check("Module.c.C.forward.0"));

    // mix's list opens for everything inside a listed module; a module's backward is never ended by msprobe.
    MsprobeScope mix("config.json", Level::Mix, {}, { "ffn" });
    EXPECT_FALSE(mix.check("Torch.relu.0.forward"));
    mix.beginModule("Module.ffn.FFN.forward.0");
    EXPECT_TRUE(mix.check("Torch.relu.1.forward"));
    mix.endModule("Module.ffn.FFN.forward.0");
    EXPECT_FALSE(mix.check("Torch.relu.2.forward"));
    mix.beginModule("Module.ffn.FFN.backward.0");
    EXPECT_TRUE(mix.check("Torch.add.0.backward"));
    EXPECT_TRUE(mix.check("Torch.mul.5.backward"));

    const auto errorOf = [](Level level, std::vector<std::string> scope) -> std::string {
        try {
            MsprobeScope s("config.json", level, std::move(scope), {});
        } catch (const CollectError& e) {
            EXPECT_EQ(e.id(), "collect.config");
            return e.what();
        }
        return {};
    };
    EXPECT_EQ(errorOf(Level::L1, { "Module.a.A.forward.0", "Torch.b.0.forward" }),
              "config.json: error [collect.config]: \"scope\": \"Module.a.A.forward.0\" is no full API name of level L1");
    EXPECT_EQ(errorOf(Level::L0, { "Torch.b.0.forward", "Module.a.A.forward.0" }),
              "config.json: error [collect.config]: \"scope\": \"Torch.b.0.forward\" is no full module name of level L0");
    EXPECT_EQ(errorOf(Level::Debug, { "Torch.b.0.forward", "Module.a.A.forward.0" }),
              "config.json: error [collect.config]: \"scope\": both names must be APIs or both modules");
    EXPECT_EQ(errorOf(Level::Mix, { "Torch.b.0.forward", "Module.a.A.forward.0" }), "");
}

// Issue 33: the Python module's bookkeeping in the collector core (core/collect/msprobebook.h). The expected texts
// are what msprobe 1.2.2's Python dumper writes for these calls: its dicts through json.dumps(indent=1) (the
// python.module test CollectorCoreBook holds random call sequences to the same).
TEST(MsprobeBook, KeepsMsprobesEntriesParentsAndLayout)
{
    MsprobeBook book(true);
    EXPECT_EQ(book.countApi("Torch.add."), 0);
    EXPECT_EQ(book.countApi("Torch.add."), 1);
    EXPECT_EQ(book.countModule("Module.fc.Linear.forward"), 0);
    book.updateConstruct("Torch.add.0.forward"); // before any module: msprobe's initial parent ""
    book.beginModule("Module.fc.Linear.forward.0");
    book.updateConstruct("Functional.linear.0.forward");
    book.endModule();
    book.updateConstruct("Module.fc.Linear.forward.0");
    book.put("Module.fc.Linear.forward.0", { { "input_args", "[\n    1\n   ]" }, { "is_recompute", "false" } });
    book.put("Module.fc.Linear.parameters_grad", { { "weight", "[\n    null\n   ]" } }); // the placeholder
    book.put("Torch.add.0.forward", { { "output", "[]" } });
    book.put("Module.fc.Linear.parameters_grad", { { "weight", "[\n    2.5\n   ]" } }); // filled in its place
    book.setStack("Torch.add.0.forward", { "File a.py, line 3, in f, \n x = 1" });
    book.setStack("E", {});
    EXPECT_EQ(book.dumpText("statistics", "mix", std::nullopt),
              "{\n \"task\": \"statistics\",\n \"level\": \"mix\",\n \"framework\": \"pytorch\",\n \"dump_data_dir\": "
              "null,\n \"data\": {\n  \"Module.fc.Linear.forward.0\": {\n   \"input_args\": [\n    1\n   ],\n   "
              "\"is_recompute\": false\n  },\n  \"Module.fc.Linear.parameters_grad\": {\n   \"weight\": [\n    2.5\n   "
              "]\n  },\n  \"Torch.add.0.forward\": {\n   \"output\": []\n  }\n }\n}");
    EXPECT_EQ(book.constructText(), "{\n \"Torch.add.0.forward\": \"\",\n \"Functional.linear.0.forward\": "
                                    "\"Module.fc.Linear.forward.0\",\n \"Module.fc.Linear.forward.0\": null\n}");
    EXPECT_EQ(book.stackText(),
              "{\n \"Torch.add.0.forward\": [\n  \"File a.py, line 3, in f, \\n x = 1\"\n ],\n \"E\": []\n}");
    book.drop("Torch.add.0.forward");
    EXPECT_FALSE(book.has("Torch.add.0.forward"));
    EXPECT_EQ(book.entryCount(), 2u);
    book.reset();
    EXPECT_EQ(book.dumpText("tensor", "L1", std::string("d")),
              "{\n \"task\": \"tensor\",\n \"level\": \"L1\",\n \"framework\": \"pytorch\",\n \"dump_data_dir\": "
              "\"d\",\n \"data\": {}\n}");
    EXPECT_EQ(book.constructText(), "{}");
    EXPECT_EQ(book.countApi("Torch.add."), 0);
}
