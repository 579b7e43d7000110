// SPDX-License-Identifier: Apache-2.0
// run_ut's runner without LibTorch: dump.json -> API calls (run-ut-spec §2, §3.3), the black/white list
// and the config's run_ut section (§3.2), and the run loop with a fake Replayer whose outputs the tests
// construct: result/details rows (§6), resume (§7.2), workers, cancel, and the dumped-output files.
#include "core/runut/apicalls.h"
#include "core/runut/csvio.h"
#include "core/runut/runner.h"
#include "core/runut/runutconfig.h"

#include "tempdir.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <mutex>
#include <set>
#include <thread>

using namespace probescope;
using namespace probescope::runut;
using probescope::testing::readAll;
using probescope::testing::TempDir;
namespace fs = std::filesystem;

namespace {

// ---- dump.json text ----

std::string tensorDesc(int n, const std::string& dataName = {}, double max = 1.0, double min = -1.0)
{
    std::string s = R"({"type": "torch.Tensor", "dtype": "torch.float32", "shape": [)" + std::to_string(n)
        + R"(], "Max": )" + std::to_string(max) + R"(, "Min": )" + std::to_string(min)
        + R"(, "Mean": 0.0, "Norm": 1.0, "requires_grad": true)";
    if (!dataName.empty())
        s += R"(, "data_name": ")" + dataName + "\"";
    return s + "}";
}

std::string dumpText(const std::string& task, const std::vector<std::pair<std::string, std::string>>& entries)
{
    std::string s = R"({"task": ")" + task + R"(", "level": "L1", "framework": "pytorch", "dump_data_dir": )"
        + (task == "tensor" ? std::string("\"x\"") : std::string("null")) + ",\n\"data\": {\n";
    for (std::size_t i = 0; i < entries.size(); ++i)
        s += (i ? ",\n\"" : "\"") + entries[i].first + "\": " + entries[i].second;
    return s + "\n}}\n";
}

std::string fwd(const std::string& args = tensorDesc(4), const std::string& kwargs = "{}")
{
    return R"({"input_args": [)" + args + R"(], "input_kwargs": )" + kwargs + R"(, "output": [)" + tensorDesc(4) + "]}";
}

std::string bwd()
{
    return R"({"input": [)" + tensorDesc(4) + R"(], "output": [)" + tensorDesc(4) + "]}";
}

// ---- tensors ----

tensor::Tensor f32(const std::vector<float>& values)
{
    tensor::Tensor t;
    t.dtype = tensor::DType::Float32;
    t.shape = { static_cast<std::int64_t>(values.size()) };
    t.data.resize(values.size() * sizeof(float));
    std::memcpy(t.data.data(), values.data(), t.data.size());
    return t;
}

Value tensorValue(tensor::Tensor t)
{
    Value v;
    v.kind = Value::Kind::Tensor;
    v.tensor = std::move(t);
    return v;
}

/// What the fake bench returns for a call: 4 values that depend on the name only.
std::vector<float> benchValues(const std::string& fullName, int salt = 0)
{
    std::vector<float> v(4);
    const std::size_t h = std::hash<std::string> {}(fullName) % 1000;
    for (int i = 0; i < 4; ++i)
        v[i] = 0.5f + static_cast<float>((h + 37 * i + 11 * salt) % 97) / 50.0f;
    return v;
}

std::vector<float> negated(std::vector<float> v)
{
    for (float& x : v)
        x = -x;
    return v;
}

std::string npyF32(const std::vector<float>& values)
{
    std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + std::to_string(values.size()) + ",), }";
    while ((10 + header.size() + 1) % 64 != 0)
        header += ' ';
    header += '\n';
    std::string out("\x93NUMPY\x01\x00", 8);
    out += static_cast<char>(header.size() & 0xFF);
    out += static_cast<char>((header.size() >> 8) & 0xFF);
    out += header;
    out.append(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float));
    return out;
}

/**
 * A Replayer whose results the tests decide by API name:
 *  - "unsupported_op": supports() is false;  "raise_op": a skip message (an exception in msprobe);
 *  - "multi": returns two tensors and the multiple-backward message;
 *  - "bad": the device output is the negated bench (an error by any rule); "badgrad": the same for its gradient;
 *  - "linear": two positional gradients; everything else one gradient and a None (an input without grad).
 * Device equals bench otherwise, so those APIs pass (max abs error 0 < 0.001).
 */
class FakeReplayer : public Replayer
{
public:
    explicit FakeReplayer(bool jitter = false, std::atomic<int>* replays = nullptr)
        : m_jitter(jitter)
        , m_replays(replays)
    {
    }

    bool supports(const std::string&, const std::string& apiName) const override { return apiName != "unsupported_op"; }

    ReplayResult replay(const ApiCall& call) override
    {
        if (m_replays)
            ++*m_replays;
        if (m_jitter) // completion order differs from dump order across workers
            std::this_thread::sleep_for(std::chrono::microseconds(200 * (std::hash<std::string> {}(call.fullName) % 7)));
        ReplayResult r;
        if (call.apiName == "raise_op") {
            r.skipMessage = "boom: expected scalar type Long";
            return r;
        }
        // A tensor file the resolver refused (the real replayer's TensorInputError), and an exception whose text only
        // looks like one: the run tells them apart by the diagnostic, not by the words (issue 33).
        if (call.apiName == "refused_op") {
            r.skipMessage = call.fullName + ": x.pt: the tensor folder leaves the dump";
            r.inputError = makeError("tensor.path-escape", SourceLocation { "x.pt", std::nullopt, 0, 0 },
                                     "the tensor folder leaves the dump");
            return r;
        }
        if (call.apiName == "texty_op") {
            r.skipMessage = "a.py:1:1: error [tensor.lookalike]: raised by the API itself";
            return r;
        }
        const auto bench = benchValues(call.fullName);
        if (call.apiName == "multi") {
            r.benchForward.kind = r.deviceForward.kind = Value::Kind::List;
            for (int salt = 0; salt < 2; ++salt) {
                r.benchForward.items.push_back(tensorValue(f32(benchValues(call.fullName, salt))));
                r.deviceForward.items.push_back(tensorValue(f32(benchValues(call.fullName, salt))));
            }
            r.backwardMessage = "Multiple backward is not supported.";
            return r;
        }
        r.benchForward = tensorValue(f32(bench));
        r.deviceForward = tensorValue(f32(call.apiName == "bad" ? negated(bench) : bench));
        if (call.backward) {
            r.benchGrads.push_back(tensorValue(f32(benchValues(call.fullName, 1))));
            r.deviceGrads.push_back(tensorValue(
                f32(call.apiName == "badgrad" ? negated(benchValues(call.fullName, 1)) : benchValues(call.fullName, 1))));
            if (call.apiName == "linear") {
                r.benchGrads.push_back(tensorValue(f32(benchValues(call.fullName, 2))));
                r.deviceGrads.push_back(tensorValue(f32(benchValues(call.fullName, 2))));
            } else {
                r.benchGrads.emplace_back();
                r.deviceGrads.emplace_back();
            }
        }
        return r;
    }

private:
    bool m_jitter;
    std::atomic<int>* m_replays;
};

ReplayerFactory fakeFactory(bool jitter = false, std::atomic<int>* replays = nullptr)
{
    return [jitter, replays] { return std::make_unique<FakeReplayer>(jitter, replays); };
}

CsvTable readTable(const fs::path& p)
{
    auto t = readCsv(p);
    EXPECT_TRUE(t.ok()) << (t.ok() ? "" : t.error().format());
    return t.ok() ? *t : CsvTable {};
}

const CsvRow* findRow(const CsvTable& t, const std::string& name)
{
    for (const CsvRow& r : t.rows) {
        if (!r.cells.empty() && r.cells[0] == name)
            return &r;
    }
    return nullptr;
}

std::vector<std::string> cellsOf(const CsvTable& t, const std::string& name)
{
    const CsvRow* r = findRow(t, name);
    return r ? r->cells : std::vector<std::string> {};
}

/// A dump of many passing APIs with a few failing and skipped ones among them.
std::string manyApisDump(int n)
{
    std::vector<std::pair<std::string, std::string>> entries;
    for (int i = 0; i < n; ++i) {
        const std::string api = i % 9 == 4 ? "bad" : i % 11 == 7 ? "raise_op" : i % 13 == 5 ? "empty" : "relu";
        const std::string prefix = i % 13 == 5 ? "Torch." : "Functional.";
        const std::string name = prefix + api + "." + std::to_string(i);
        entries.emplace_back(name + ".forward", fwd());
        if (i % 3 != 0)
            entries.emplace_back(name + ".backward", bwd());
    }
    return dumpText("statistics", entries);
}

class CancelAfter : public ProgressSink
{
public:
    explicit CancelAfter(std::uint64_t k)
        : m_k(k)
    {
    }
    void setRange(std::uint64_t total) override { m_total = total; }
    void advance(std::uint64_t done) override { m_done = done; }
    bool isCancelled() const override { return m_done.load() >= m_k; }
    std::uint64_t total() const { return m_total; }

private:
    std::uint64_t m_k;
    std::atomic<std::uint64_t> m_done { 0 };
    std::uint64_t m_total = 0;
};

RunUtOptions optionsFor(const fs::path& dump, const fs::path& out, const std::string& stamp = "20260102030405")
{
    RunUtOptions o;
    o.apiInfo = dump;
    o.outDir = out;
    o.timestamp = stamp;
    return o;
}

} // namespace

// ---------------------------------------------------------------------------------------------------------
// API calls (§2.1, §2.2)

TEST(RunutApiCalls, SplitsForwardAndBackwardInFileOrderIgnoringModules)
{
    TempDir dir;
    const auto path = dir.write("dump.json", dumpText("statistics", {
        { "Module.fc.Linear.forward.0", fwd() },
        { "Functional.linear.0.forward", fwd() },
        { "Torch.linalg.inv.0.forward", fwd() },
        { "Aten.add.Tensor.3.forward", fwd() },
        { "Functional.linear.0.backward", bwd() },
        { "Module.fc.Linear.backward.0", bwd() },
        { "Functional.a.b.c.0.forward", fwd() },
    }));
    auto list = loadApiCalls(path, false);
    ASSERT_TRUE(list.ok()) << list.error().format();
    ASSERT_EQ(list->calls.size(), 4u);
    EXPECT_EQ(list->calls[0].fullName, "Functional.linear.0");
    EXPECT_EQ(list->calls[0].prefix, "Functional");
    EXPECT_EQ(list->calls[0].apiName, "linear");
    EXPECT_EQ(list->calls[0].callIndex, 0);
    ASSERT_NE(list->calls[0].backward, nullptr);
    EXPECT_EQ(list->calls[0].backward->key, "Functional.linear.0.backward");
    EXPECT_EQ(list->calls[0].forward->key, "Functional.linear.0.forward");
    EXPECT_EQ(list->calls[1].apiName, "linalg.inv");
    EXPECT_EQ(list->calls[1].backward, nullptr);
    EXPECT_EQ(list->calls[2].prefix, "Aten");
    EXPECT_EQ(list->calls[2].apiName, "add.Tensor");
    EXPECT_EQ(list->calls[2].callIndex, 3);
    // 5 parts: kept, but with no api name (the runner SKIPs it as msprobe does).
    EXPECT_EQ(list->calls[3].fullName, "Functional.a.b.c.0");
    EXPECT_EQ(list->calls[3].apiName, "");
    EXPECT_EQ(list->calls[3].dump, list->dump);
}

TEST(RunutApiCalls, RefusesNamesWithoutForwardOrBackwardAtTheirLine)
{
    TempDir dir;
    const auto bad = dir.write("bad/dump.json", dumpText("statistics", {
        { "Functional.relu.0.forward", fwd() },
        { "Functional.relu.0.forward.extra", fwd() },
    }));
    auto list = loadApiCalls(bad, false);
    ASSERT_FALSE(list.ok());
    EXPECT_EQ(list.error().id, "runut.entry-name");
    EXPECT_EQ(list.error().location.file, bad.string());
    EXPECT_EQ(list.error().location.line, 4u);
    EXPECT_NE(list.error().message.find("must end in \".forward\""), std::string::npos);

    const auto neither = dir.write("neither/dump.json", dumpText("statistics", { { "Functional.relu.0.sideways", fwd() } }));
    auto list2 = loadApiCalls(neither, false);
    ASSERT_FALSE(list2.ok());
    EXPECT_EQ(list2.error().id, "runut.entry-name");
    EXPECT_EQ(list2.error().location.line, 3u);

    auto missing = loadApiCalls(dir.path() / "nope.json", false);
    EXPECT_FALSE(missing.ok());
}

TEST(RunutApiCalls, RepeatedKeyKeepsFirstPositionAndLastValue)
{
    TempDir dir;
    const auto path = dir.write("dump.json", dumpText("statistics", {
        { "Functional.relu.0.forward", fwd(tensorDesc(1)) },
        { "Functional.gelu.0.forward", fwd() },
        { "Functional.relu.0.forward", fwd(tensorDesc(7)) },
    }));
    auto list = loadApiCalls(path, false);
    ASSERT_TRUE(list.ok());
    ASSERT_EQ(list->calls.size(), 2u);
    EXPECT_EQ(list->calls[0].fullName, "Functional.relu.0");
    const auto shape = list->calls[0].forward->value.find("input_args")->at(0).find("shape")->at(0);
    EXPECT_EQ(shape.asInt(), 7);
}

TEST(RunutApiCalls, ParsesNamesLikeExtractBasicApiSegments)
{
    EXPECT_EQ(parseApiName("Tensor.__mul__.7").apiName, "__mul__");
    EXPECT_EQ(parseApiName("Tensor.__mul__.7").callIndex, 7);
    EXPECT_EQ(parseApiName("NPU.npu_fusion_attention.3").prefix, "NPU");
    EXPECT_EQ(parseApiName("Torch.linalg.inv.0").apiName, "linalg.inv");
    EXPECT_EQ(parseApiName("Functional.relu").apiName, "");
    EXPECT_EQ(parseApiName("A.b.c.d.0").apiName, "");
    EXPECT_EQ(parseApiName("Functional.relu.x").apiName, "relu");
    EXPECT_EQ(parseApiName("Functional.relu.x").callIndex, -1);
    EXPECT_TRUE(isUnsupportedPrefix("Distributed"));
    EXPECT_TRUE(isUnsupportedPrefix("MindSpeed"));
    EXPECT_FALSE(isUnsupportedPrefix("VF"));
}

// ---------------------------------------------------------------------------------------------------------
// -f filter (§3.3)

TEST(RunutApiCalls, FilterDropsRepeatsIgnoringMaxAndMinOnly)
{
    TempDir dir;
    const std::string kw = R"({"dim": {"type": "int", "value": 1}})";
    const auto path = dir.write("dump.json", dumpText("statistics", {
        { "Torch.matmul.0.forward", fwd(tensorDesc(4, {}, 1.0, -1.0), kw) },
        { "Torch.matmul.1.forward", fwd(tensorDesc(4, {}, 5.0, -3.0), kw) },   // only Max/Min differ: dropped
        { "Torch.matmul.2.forward", fwd(tensorDesc(4, {}, 1.0, -1.0), R"({"dim": {"type": "int", "value": 2}})") }, // kwargs differ
        { "Torch.matmul.3.forward", fwd(tensorDesc(5)) },                      // shape differs
        { "Torch.add.0.forward", fwd(tensorDesc(4, {}, 1.0, -1.0), kw) },      // other group
        // 1 == 1.0 and key order do not matter to Python's ==; Mean does.
        { "Torch.matmul.4.forward", fwd(R"({"shape": [4], "dtype": "torch.float32", "type": "torch.Tensor", "Max": 9, "Min": 0, "Mean": 0, "Norm": 1, "requires_grad": true})", kw) },
        { "Torch.matmul.5.forward", fwd(R"({"type": "torch.Tensor", "dtype": "torch.float32", "shape": [4], "Mean": 0.5, "Norm": 1.0, "requires_grad": true})", kw) },
        // Non-dict arguments are not part of msprobe's signature: a different nested list is still a repeat.
        { "Torch.cat.0.forward", fwd("[" + tensorDesc(2) + "], {\"type\": \"int\", \"value\": 0}") },
        { "Torch.cat.1.forward", fwd("[" + tensorDesc(3) + "], {\"type\": \"int\", \"value\": 0}") },
    }));
    auto all = loadApiCalls(path, false);
    ASSERT_TRUE(all.ok());
    EXPECT_EQ(all->calls.size(), 9u);
    EXPECT_EQ(all->filteredOut, 0u);
    auto filtered = loadApiCalls(path, true);
    ASSERT_TRUE(filtered.ok());
    std::vector<std::string> names;
    for (const auto& c : filtered->calls)
        names.push_back(c.fullName);
    const std::vector<std::string> expected { "Torch.matmul.0", "Torch.matmul.2", "Torch.matmul.3", "Torch.add.0",
                                              "Torch.matmul.5", "Torch.cat.0" };
    EXPECT_EQ(names, expected);
    EXPECT_EQ(filtered->filteredOut, 3u);
}

// ---------------------------------------------------------------------------------------------------------
// Black and white lists (§3.2)

TEST(RunutLists, BlackListWinsAndHardCodedApisAreAlwaysBlack)
{
    EXPECT_FALSE(isFilteredByLists("relu", {}, {}));
    EXPECT_TRUE(isFilteredByLists("relu", {}, { "relu" }));
    EXPECT_TRUE(isFilteredByLists("relu", { "relu" }, { "relu" }));
    EXPECT_TRUE(isFilteredByLists("gelu", { "relu" }, {}));
    EXPECT_FALSE(isFilteredByLists("relu", { "relu" }, { "gelu" }));
    for (const char* api : { "to", "empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided",
                             "empty_with_format" })
        EXPECT_TRUE(isFilteredByLists(api, { api }, {})) << api;
    EXPECT_FALSE(isFilteredByLists("linalg.inv", { "linalg.inv" }, {}));
}

// ---------------------------------------------------------------------------------------------------------
// config.json run_ut section

TEST(RunutConfig, ReadsTheRunUtSection)
{
    TempDir dir;
    const std::string text = "{\n  \"task\": \"run_ut\",\n  \"level\": \"L1\",\n  \"run_ut\": {\n"
                             "    \"white_list\": [\"conv2d\", \"linalg.inv\"],\n    \"black_list\": [\"relu\"],\n"
                             "    \"error_data_path\": \""
        + dir.path().string() + "\"\n  }\n}\n";
    auto c = parseRunUtConfig(text, "config.json");
    ASSERT_TRUE(c.ok()) << c.error().format();
    ASSERT_EQ(c->whiteList.size(), 2u);
    EXPECT_EQ(c->whiteList[1].name, "linalg.inv");
    EXPECT_EQ(c->whiteList[1].where.line, 5u);
    EXPECT_EQ(c->whiteList[1].where.column, 30u);
    ASSERT_EQ(c->blackList.size(), 1u);
    EXPECT_EQ(c->blackList[0].name, "relu");
    EXPECT_EQ(c->errorDataPath, dir.path());
    EXPECT_EQ(c->section, "run_ut");
    EXPECT_TRUE(c->warnings.empty());

    auto cur = parseRunUtConfig(R"({"acc_check": {"black_list": ["gelu"]}})", "c.json");
    ASSERT_TRUE(cur.ok());
    EXPECT_EQ(cur->section, "acc_check");
    EXPECT_EQ(cur->blackList.at(0).name, "gelu");

    auto none = parseRunUtConfig(R"({"task": "statistics"})", "c.json");
    ASSERT_TRUE(none.ok());
    EXPECT_TRUE(none->whiteList.empty());
    ASSERT_EQ(none->warnings.size(), 1u);
    EXPECT_EQ(none->warnings[0].id, "runut.config");

    auto online = parseRunUtConfig(R"({"run_ut": {"is_online": false, "host": "127.0.0.1", "port": 8080, "rank_list": [0]}})", "c.json");
    ASSERT_TRUE(online.ok());
    EXPECT_EQ(online->warnings.size(), 3u);
}

TEST(RunutConfig, ErrorsNameFileLineAndColumn)
{
    struct Case
    {
        const char* text;
        std::uint32_t line, column;
        const char* needle;
    };
    const Case cases[] = {
        { "{\"run_ut\": {\n  \"white_list\": \"conv2d\"}}", 2, 17, "must be a list of API names" },
        { "{\"run_ut\": {\n  \"black_list\": [\"a\", 3]}}", 2, 23, "element 1 is not one" },
        { "{\"run_ut\": {\n  \"error_data_path\": \"/no/such/folder/x\"}}", 2, 22, "does not exist" },
        { "{\"run_ut\": {\n  \"white_lst\": []}}", 2, 16, "unknown key \"white_lst\"" },
        { "{\"run_ut\": {\n  \"is_online\": true}}", 2, 16, "online pre-check" },
        { "{\"run_ut\": [1]}", 1, 12, "must be an object" },
        { "{\"run_ut\": {\n  \"white_list\": [}}", 2, 18, "not valid JSON" },
        { "[1, 2]", 1, 1, "must be a JSON object" },
    };
    for (const Case& c : cases) {
        auto r = parseRunUtConfig(c.text, "dir/config.json");
        ASSERT_FALSE(r.ok()) << c.text;
        EXPECT_EQ(r.error().id, "runut.config") << c.text;
        EXPECT_EQ(r.error().location.file, "dir/config.json");
        EXPECT_EQ(r.error().location.line, c.line) << c.text;
        EXPECT_EQ(r.error().location.column, c.column) << c.text;
        EXPECT_NE(r.error().message.find(c.needle), std::string::npos) << r.error().format();
    }
    auto missing = readRunUtConfig("/no/such/config.json");
    ASSERT_FALSE(missing.ok());
    EXPECT_EQ(missing.error().id, "runut.config");
}

// ---------------------------------------------------------------------------------------------------------
// The run loop

TEST(RunutRunner, WritesMsprobesRowsForEveryKindOfApi)
{
    TempDir dir;
    const auto dump = dir.write("dump.json", dumpText("statistics", {
        { "Functional.relu.0.forward", fwd() },
        { "Module.fc.Linear.forward.0", fwd() },
        { "Tensor.add_.0.forward", fwd() },
        { "Distributed.all_reduce.0.forward", fwd() },
        { "Functional.odd.name.x.0.forward", fwd() },
        { "Torch.empty.0.forward", fwd() },
        { "Functional.unsupported_op.0.forward", fwd() },
        { "Functional.raise_op.0.forward", fwd() },
        { "VF.lstm.0.forward", fwd() },
        { "Tensor.multi.0.forward", fwd() },
        { "Functional.bad.0.forward", fwd() },
        { "Functional.relu.0.backward", bwd() },
        { "Tensor.multi.0.backward", bwd() },
        { "Functional.bad.0.backward", bwd() },
    }));
    std::vector<std::string> seen;
    auto summary = runUt(optionsFor(dump, dir.path() / "out"), fakeFactory(), nullptr,
                         [&](const ApiOutcome& o) { seen.push_back(o.fullName); });
    ASSERT_TRUE(summary.ok()) << summary.error().format();
    EXPECT_EQ(summary->resultCsv, dir.path() / "out" / "accuracy_checking_result_20260102030405.csv");
    EXPECT_EQ(summary->detailsCsv, dir.path() / "out" / "accuracy_checking_details_20260102030405.csv");
    EXPECT_FALSE(summary->dumpedResultCsv); // statistics dump: nothing recorded to judge
    ASSERT_FALSE(summary->diagnostics.empty());
    EXPECT_EQ(summary->diagnostics.back().id, "runut.no-dumped-data");

    const std::vector<std::string> order { "Functional.relu.0", "Tensor.add_.0", "Distributed.all_reduce.0",
                                           "Functional.odd.name.x.0", "Torch.empty.0", "Functional.unsupported_op.0",
                                           "Functional.raise_op.0", "VF.lstm.0", "Tensor.multi.0", "Functional.bad.0" };
    EXPECT_EQ(seen, order);

    const std::string resultText = readAll(summary->resultCsv);
    ASSERT_EQ(resultText.substr(0, 3), kUtf8Bom);
    EXPECT_EQ(resultText.substr(3, resultText.find('\n') - 2),
              "API name,Forward Test Success,Backward Test Success,Message\r\n");
    const CsvTable result = readTable(summary->resultCsv);
    ASSERT_EQ(result.rows.size(), order.size());
    for (std::size_t i = 0; i < order.size(); ++i)
        EXPECT_EQ(result.rows[i].cells[0], order[i]);
    using V = std::vector<std::string>;
    EXPECT_EQ(cellsOf(result, "Functional.relu.0"), (V { "Functional.relu.0", "pass", "pass" }));
    EXPECT_EQ(cellsOf(result, "Tensor.add_.0"), (V { "Tensor.add_.0", "pass", " " }));
    EXPECT_EQ(cellsOf(result, "Distributed.all_reduce.0"),
              (V { "Distributed.all_reduce.0", "SKIP", "SKIP", "API Distributed.all_reduce.0 not support for run ut. SKIP." }));
    EXPECT_EQ(cellsOf(result, "Functional.odd.name.x.0"),
              (V { "Functional.odd.name.x.0", "SKIP", "SKIP", "API Functional.odd.name.x.0 not support for run ut. SKIP." }));
    EXPECT_EQ(cellsOf(result, "Torch.empty.0"),
              (V { "Torch.empty.0", "SKIP", "SKIP", "API empty in black list or not in white list. SKIP." }));
    EXPECT_EQ(cellsOf(result, "Functional.unsupported_op.0").at(1), "SKIP");
    EXPECT_EQ(cellsOf(result, "Functional.raise_op.0"),
              (V { "Functional.raise_op.0", "SKIP", "SKIP", "boom: expected scalar type Long" }));
    EXPECT_EQ(cellsOf(result, "VF.lstm.0"), (V { "VF.lstm.0", "SKIP", "SKIP", "Bench output is None, skip this test." }));
    EXPECT_EQ(cellsOf(result, "Tensor.multi.0"), (V { "Tensor.multi.0", "pass", "SKIP", "Multiple backward is not supported." }));
    EXPECT_EQ(cellsOf(result, "Functional.bad.0"), (V { "Functional.bad.0", "error", "pass" }));

    const std::string detailsText = readAll(summary->detailsCsv);
    ASSERT_EQ(detailsText.substr(0, 3), kUtf8Bom);
    const CsvTable details = readTable(summary->detailsCsv);
    EXPECT_EQ(details.header, detailsHeader());
    ASSERT_EQ(details.header.size(), 23u);
    std::vector<std::string> rowNames;
    for (const CsvRow& r : details.rows) {
        EXPECT_EQ(r.cells.size(), 23u) << r.cells[0];
        rowNames.push_back(r.cells[0]);
    }
    const V expectedRows { "Functional.relu.0.forward.output.0", "Functional.relu.0.backward.output.0",
                           "Functional.relu.0.backward.output.1", "Tensor.add_.0.forward.output.0",
                           "Distributed.all_reduce.0.forward.output.0", "Functional.odd.name.x.0.forward.output.0",
                           "Torch.empty.0.forward.output.0", "Functional.unsupported_op.0.forward.output.0",
                           "Functional.raise_op.0.forward.output.0", "VF.lstm.0.forward.output.0",
                           "Tensor.multi.0.forward.output.0", "Tensor.multi.0.forward.output.1",
                           "Tensor.multi.0.backward.output.0", "Functional.bad.0.forward.output.0",
                           "Functional.bad.0.backward.output.0", "Functional.bad.0.backward.output.1" };
    EXPECT_EQ(rowNames, expectedRows);
    // The gradient of an input that has none is a SKIP row that does not fail the backward verdict.
    const auto noGrad = cellsOf(details, "Functional.relu.0.backward.output.1");
    EXPECT_EQ(noGrad.at(21), "SKIP");
    EXPECT_EQ(noGrad.at(22), "Bench output is None, skip this test.");
    // A skipped API: every cell SPACE except Status and Message.
    const auto skipped = cellsOf(details, "Torch.empty.0.forward.output.0");
    for (std::size_t c = 1; c < 21; ++c)
        EXPECT_EQ(skipped.at(c), " ") << c;
    EXPECT_EQ(skipped.at(21), "SKIP");
    EXPECT_EQ(skipped.at(22), "API empty in black list or not in white list. SKIP.");
    // The None bench of a prefix run_ut does not execute.
    EXPECT_EQ(cellsOf(details, "VF.lstm.0.forward.output.0").at(22), "Bench output is None, skip this test.");
    EXPECT_EQ(cellsOf(details, "Tensor.multi.0.backward.output.0").at(22), "Multiple backward is not supported.");
    EXPECT_EQ(cellsOf(details, "Functional.bad.0.forward.output.0").at(21), "error");

    EXPECT_EQ(summary->apis, 10u);
    EXPECT_EQ(summary->errors, 1u);
    EXPECT_EQ(summary->firstFailing, "Functional.bad.0");
    EXPECT_EQ(summary->resumedSkipped, 0u);
    EXPECT_FALSE(summary->cancelled);
    EXPECT_EQ(summary->passed + summary->warnings + summary->errors + summary->skipped, summary->apis);
}

TEST(RunutRunner, ConfigListsAndOptionListsAreMerged)
{
    TempDir dir;
    const auto dump = dir.write("dump.json", dumpText("statistics", {
        { "Functional.relu.0.forward", fwd() },
        { "Functional.gelu.0.forward", fwd() },
        { "Functional.linear.0.forward", fwd() },
        { "Torch.matmul.0.forward", fwd() },
    }));
    const auto config = dir.write("config.json", "{\"task\": \"run_ut\",\n \"run_ut\": {\"white_list\": [\"relu\", \"gelu\", \"unsupported_op\"],\n"
                                                 "  \"black_list\": [\"gelu\"]}}");
    auto options = optionsFor(dump, dir.path() / "out");
    options.config = config;
    options.whiteList = { "matmul" };
    auto summary = runUt(options, fakeFactory());
    ASSERT_TRUE(summary.ok()) << summary.error().format();
    const CsvTable result = readTable(summary->resultCsv);
    EXPECT_EQ(cellsOf(result, "Functional.relu.0").at(1), "pass");
    EXPECT_EQ(cellsOf(result, "Torch.matmul.0").at(1), "pass");
    EXPECT_EQ(cellsOf(result, "Functional.gelu.0").at(3), "API gelu in black list or not in white list. SKIP.");
    EXPECT_EQ(cellsOf(result, "Functional.linear.0").at(3), "API linear in black list or not in white list. SKIP.");
    // A listed name no replay knows is reported where it was written.
    bool warned = false;
    for (const Diagnostic& d : summary->diagnostics) {
        if (d.id == "runut.config-unknown-api") {
            warned = true;
            EXPECT_EQ(d.location.file, config.string());
            EXPECT_EQ(d.location.line, 2u);
            EXPECT_NE(d.message.find("unsupported_op"), std::string::npos);
        }
    }
    EXPECT_TRUE(warned);

    options.config = dir.write("bad.json", "{\"run_ut\": {\"black_list\": \"relu\"}}");
    auto bad = runUt(options, fakeFactory());
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(bad.error().id, "runut.config");
}

TEST(RunutRunner, FilterOptionReplaysOnlyTheFirstOfEqualCalls)
{
    TempDir dir;
    const auto dump = dir.write("dump.json", dumpText("statistics", {
        { "Functional.relu.0.forward", fwd(tensorDesc(4, {}, 1, 0)) },
        { "Functional.relu.1.forward", fwd(tensorDesc(4, {}, 2, 0)) },
        { "Functional.relu.2.forward", fwd(tensorDesc(8)) },
    }));
    std::atomic<int> replays { 0 };
    auto options = optionsFor(dump, dir.path() / "out");
    options.filterApi = true;
    auto summary = runUt(options, fakeFactory(false, &replays));
    ASSERT_TRUE(summary.ok());
    EXPECT_EQ(replays.load(), 2);
    EXPECT_EQ(summary->filteredOut, 1u);
    const CsvTable result = readTable(summary->resultCsv);
    ASSERT_EQ(result.rows.size(), 2u);
    EXPECT_EQ(result.rows[1].cells[0], "Functional.relu.2");
}

TEST(RunutRunner, FilesAreIdenticalWithOneOrTwoWorkers)
{
    TempDir dir;
    const auto dump = dir.write("dump.json", manyApisDump(60));
    auto one = optionsFor(dump, dir.path() / "j1");
    auto two = optionsFor(dump, dir.path() / "j2");
    two.workers = 2;
    auto four = optionsFor(dump, dir.path() / "j4");
    four.workers = 4;
    auto s1 = runUt(one, fakeFactory(true));
    auto s2 = runUt(two, fakeFactory(true));
    auto s4 = runUt(four, fakeFactory(true));
    ASSERT_TRUE(s1.ok() && s2.ok() && s4.ok());
    EXPECT_EQ(s1->apis, 60u);
    EXPECT_GT(s1->errors, 0u);
    EXPECT_GT(s1->skipped, 0u);
    const std::string r1 = readAll(s1->resultCsv);
    const std::string d1 = readAll(s1->detailsCsv);
    EXPECT_EQ(readTable(s1->resultCsv).rows.size(), 60u);
    EXPECT_EQ(r1, readAll(s2->resultCsv));
    EXPECT_EQ(d1, readAll(s2->detailsCsv));
    EXPECT_EQ(r1, readAll(s4->resultCsv));
    EXPECT_EQ(d1, readAll(s4->detailsCsv));
    EXPECT_EQ(s1->firstFailing, s2->firstFailing);
    EXPECT_EQ(s1->firstFailing, "Functional.bad.4");
}

TEST(RunutRunner, CancelledRunResumesToTheUninterruptedFiles)
{
    TempDir dir;
    const auto dump = dir.write("dump.json", manyApisDump(40));
    auto whole = runUt(optionsFor(dump, dir.path() / "whole"), fakeFactory());
    ASSERT_TRUE(whole.ok());
    for (int workers : { 1, 2 }) {
        const fs::path out = dir.path() / ("cut" + std::to_string(workers));
        auto options = optionsFor(dump, out);
        options.workers = workers;
        CancelAfter sink(13);
        std::atomic<int> replays { 0 };
        auto first = runUt(options, fakeFactory(true, &replays), &sink);
        ASSERT_TRUE(first.ok()) << first.error().format();
        EXPECT_TRUE(first->cancelled);
        EXPECT_EQ(sink.total(), 40u);
        // One worker stops right after the 13th; with two, APIs finished out of order while an earlier
        // one was in flight are written with it, so a few more may be done. Never all, never lost work.
        if (workers == 1) {
            EXPECT_EQ(first->apis, 13u);
        }
        EXPECT_GE(first->apis, 13u);
        EXPECT_LT(first->apis, 40u);
        const std::size_t written = readTable(first->resultCsv).rows.size();
        EXPECT_EQ(written, first->apis);
        EXPECT_LE(replays.load(), static_cast<int>(written)); // every API started was written

        RunUtOptions resume;
        resume.apiInfo = dump;
        resume.resumeCsv = first->resultCsv;
        resume.workers = workers;
        replays = 0;
        auto second = runUt(resume, fakeFactory(true, &replays));
        ASSERT_TRUE(second.ok()) << second.error().format();
        EXPECT_FALSE(second->cancelled);
        EXPECT_EQ(second->resumedSkipped, written);
        EXPECT_EQ(second->apis, 40u - written);
        EXPECT_EQ(second->resultCsv, first->resultCsv);
        EXPECT_EQ(readAll(first->resultCsv), readAll(whole->resultCsv)) << workers;
        EXPECT_EQ(readAll(first->detailsCsv), readAll(whole->detailsCsv)) << workers;
        // Nothing already judged was replayed again (Torch.empty calls are never replayed).
        EXPECT_LE(replays.load(), static_cast<int>(40u - written));
    }
}

TEST(RunutRunner, ResumeRefusesFilesThatDoNotFit)
{
    TempDir dir;
    const auto dump = dir.write("dump.json", manyApisDump(3));
    RunUtOptions o;
    o.apiInfo = dump;
    o.resumeCsv = dir.write("result.csv", "x");
    auto badName = runUt(o, fakeFactory());
    ASSERT_FALSE(badName.ok());
    EXPECT_EQ(badName.error().id, "runut.resume");

    o.resumeCsv = dir.write("accuracy_checking_result_20260101000000.csv", std::string(kUtf8Bom) + "API name,Forward Test Success,Backward Test Success,Message\r\n");
    auto noDetails = runUt(o, fakeFactory());
    ASSERT_FALSE(noDetails.ok());
    EXPECT_EQ(noDetails.error().id, "runut.resume");
    EXPECT_NE(noDetails.error().location.file.find("accuracy_checking_details_20260101000000.csv"), std::string::npos);

    o.resumeCsv = dir.write("w/accuracy_checking_result_20260101000000.csv", "a,b\r\nc,d\r\n");
    dir.write("w/accuracy_checking_details_20260101000000.csv", "");
    auto wrongHeader = runUt(o, fakeFactory());
    ASSERT_FALSE(wrongHeader.ok());
    EXPECT_EQ(wrongHeader.error().id, "runut.resume");
    EXPECT_EQ(wrongHeader.error().location.line, 1u);

    o.resumeCsv = dir.path() / "accuracy_checking_result_20269999999999.csv";
    EXPECT_FALSE(runUt(o, fakeFactory()).ok());
}

TEST(RunutRunner, NeverOverwritesAnExistingFile)
{
    TempDir dir;
    const auto dump = dir.write("dump.json", manyApisDump(2));
    const auto taken = dir.write("out/accuracy_checking_details_20260102030405.csv", "keep me");
    auto s = runUt(optionsFor(dump, dir.path() / "out"), fakeFactory());
    ASSERT_TRUE(s.ok()) << s.error().format();
    EXPECT_EQ(s->timestamp, "20260102030406");
    EXPECT_EQ(s->resultCsv.filename(), "accuracy_checking_result_20260102030406.csv");
    EXPECT_EQ(readAll(taken), "keep me");
    EXPECT_TRUE(isResultCsvName(s->resultCsv.filename().string()));
    // A second run in the "same second" moves on again.
    auto again = runUt(optionsFor(dump, dir.path() / "out"), fakeFactory());
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(again->timestamp, "20260102030407");
}

TEST(RunutRunner, ModuleOnlyDumpWritesHeadersAndSaysWhy)
{
    TempDir dir;
    const auto dump = dir.write("dump.json", dumpText("statistics", { { "Module.fc.Linear.forward.0", fwd() } }));
    auto s = runUt(optionsFor(dump, dir.path() / "out"), fakeFactory());
    ASSERT_TRUE(s.ok());
    EXPECT_EQ(s->apis, 0u);
    EXPECT_TRUE(readTable(s->resultCsv).rows.empty());
    ASSERT_FALSE(s->diagnostics.empty());
    EXPECT_EQ(s->diagnostics.front().id, "runut.no-apis");
}

TEST(RunutRunner, RunsStartedTogetherIntoOneFolderGetTheirOwnFiles)
{
    TempDir dir;
    const auto dump = dir.write("dump.json", manyApisDump(5));
    constexpr int kRuns = 6;
    std::vector<std::optional<Result<RunUtSummary>>> results(kRuns);
    std::vector<std::thread> threads;
    for (int i = 0; i < kRuns; ++i)
        threads.emplace_back([&, i] { results[i] = runUt(optionsFor(dump, dir.path() / "out"), fakeFactory()); });
    for (auto& t : threads)
        t.join();
    std::set<std::string> stamps;
    for (const auto& r : results) {
        ASSERT_TRUE(r && r->ok()) << (r && !r->ok() ? r->error().format() : "");
        stamps.insert((*r)->timestamp);
        EXPECT_EQ(readTable((*r)->resultCsv).rows.size(), 5u);
    }
    EXPECT_EQ(stamps.size(), static_cast<std::size_t>(kRuns));
    EXPECT_EQ(std::distance(fs::directory_iterator(dir.path() / "out"), fs::directory_iterator()), 2 * kRuns);
}

TEST(RunutRunner, RefusesBadOptions)
{
    TempDir dir;
    const auto dump = dir.write("dump.json", manyApisDump(2));
    auto o = optionsFor(dump, dir.path() / "out");
    o.workers = 0;
    EXPECT_EQ(runUt(o, fakeFactory()).error().id, "runut.option");
    o.workers = 65;
    EXPECT_EQ(runUt(o, fakeFactory()).error().id, "runut.option");
    o.workers = 1;
    o.precision = 21;
    EXPECT_EQ(runUt(o, fakeFactory()).error().id, "runut.option");
    o.precision = 14;
    o.timestamp = "2026";
    EXPECT_EQ(runUt(o, fakeFactory()).error().id, "runut.option");
    o.timestamp.clear();
    EXPECT_EQ(runUt(o, [] { return std::unique_ptr<Replayer>(); }).error().id, "runut.option");
    auto throwing = runUt(o, []() -> std::unique_ptr<Replayer> { throw std::runtime_error("no LibTorch today"); });
    ASSERT_FALSE(throwing.ok());
    EXPECT_NE(throwing.error().message.find("no LibTorch today"), std::string::npos);
    o.apiInfo = dir.path() / "missing.json";
    EXPECT_FALSE(runUt(o, fakeFactory()).ok());
}

TEST(RunutRunner, FirstFailingApiIsTheFirstForwardFailure)
{
    TempDir dir;
    const auto dump = dir.write("dump.json", dumpText("statistics", {
        { "Functional.badgrad.0.forward", fwd() },
        { "Functional.relu.0.forward", fwd() },
        { "Functional.bad.0.forward", fwd() },
        { "Functional.bad.0.backward", bwd() },
        { "Functional.badgrad.0.backward", bwd() },
    }));
    auto s = runUt(optionsFor(dump, dir.path() / "out"), fakeFactory());
    ASSERT_TRUE(s.ok());
    const CsvTable result = readTable(s->resultCsv);
    EXPECT_EQ(cellsOf(result, "Functional.badgrad.0"), (std::vector<std::string> { "Functional.badgrad.0", "pass", "error" }));
    EXPECT_EQ(s->errors, 2u);
    EXPECT_EQ(s->passed, 1u);
    // badgrad.0 comes first in the dump, but only its backward fails; bad.0's forward does.
    EXPECT_EQ(s->firstFailing, "Functional.bad.0");

    const auto onlyBackward = dir.write("b/dump.json", dumpText("statistics", {
        { "Functional.relu.0.forward", fwd() },
        { "Functional.badgrad.0.forward", fwd() },
        { "Functional.badgrad.0.backward", bwd() },
    }));
    auto s2 = runUt(optionsFor(onlyBackward, dir.path() / "out2"), fakeFactory());
    ASSERT_TRUE(s2.ok());
    EXPECT_EQ(s2->firstFailing, "Functional.badgrad.0");
}

TEST(RunutRunner, ARefusedTensorIsADamagedInputByItsDiagnosticNotItsText)
{
    TempDir dir;
    const auto dump = dir.write("dump.json", dumpText("statistics", {
        { "Functional.relu.0.forward", fwd() },
        { "Functional.texty_op.0.forward", fwd() },
        { "Functional.refused_op.0.forward", fwd() },
    }));
    auto s = runUt(optionsFor(dump, dir.path() / "out"), fakeFactory());
    ASSERT_TRUE(s.ok());
    EXPECT_EQ(s->skipped, 2u);
    std::vector<std::string> named;
    for (const Diagnostic& d : s->diagnostics) {
        if (d.id == "runut.tensor-input")
            named.push_back(d.message);
    }
    ASSERT_EQ(named.size(), 1u) << "only the API whose tensor was refused is a damaged input";
    EXPECT_NE(named.front().find("Functional.refused_op.0"), std::string::npos) << named.front();
}

TEST(RunutResultCells, MessageOnlyWhenSomethingIsSkipped)
{
    ApiVerdict v;
    v.forwardStatus = "pass";
    v.backwardStatus = "";
    v.message = "ignored";
    EXPECT_EQ(resultCells("A.b.0", v), (std::vector<std::string> { "A.b.0", "pass", " " }));
    v.backwardStatus = "SKIP";
    EXPECT_EQ(resultCells("A.b.0", v).size(), 4u);
    EXPECT_EQ(v.overall(), "pass");
    v.backwardStatus = "warning";
    EXPECT_EQ(v.overall(), "warning");
    v.forwardStatus = "error";
    EXPECT_EQ(v.overall(), "error");
    v.forwardStatus = "SKIP";
    EXPECT_EQ(v.overall(), "SKIP");
    EXPECT_TRUE(isResultCsvName("accuracy_checking_result_20240101123456.csv"));
    EXPECT_FALSE(isResultCsvName("accuracy_checking_result_2024010112345.csv"));
    EXPECT_FALSE(isResultCsvName("accuracy_checking_details_20240101123456.csv"));
    EXPECT_FALSE(isResultCsvName("accuracy_checking_result_2024010112345x.csv"));
}

// ---------------------------------------------------------------------------------------------------------
// Issue §4: the dumped device outputs judged against the replay's bench

namespace {

// relu: recorded = bench; gelu: recorded = -bench (a faulty kernel); linear: the dump recorded only the
// first of its two input gradients; chunk: two outputs; missing: its data file is gone; shaped: its
// recorded gradient has another shape. Returns the dump.json path.
fs::path writeTensorDump(const TempDir& dir)
{
    const fs::path data = dir.path() / "rank" / "dump_tensor_data";
    auto save = [&](const std::string& name, const std::vector<float>& values) {
        dir.write(fs::path("rank") / "dump_tensor_data" / name, npyF32(values));
        return name;
    };
    auto fwdWith = [&](const std::string& outputs) {
        return R"({"input_args": [)" + tensorDesc(4) + R"(], "input_kwargs": {}, "output": [)" + outputs + "]}";
    };
    const std::string relu = save("relu.out.npy", benchValues("Functional.relu.0"));
    const std::string reluGrad = save("relu.grad.npy", benchValues("Functional.relu.0", 1));
    const std::string gelu = save("gelu.out.npy", negated(benchValues("Functional.gelu.0")));
    const std::string geluGrad = save("gelu.grad.npy", benchValues("Functional.gelu.0", 1));
    const std::string linear = save("linear.out.npy", benchValues("Functional.linear.0"));
    const std::string linearGrad = save("linear.grad.npy", benchValues("Functional.linear.0", 1));
    const std::string c0 = save("chunk.0.npy", benchValues("Tensor.multi.0", 0));
    const std::string c1 = save("chunk.1.npy", benchValues("Tensor.multi.0", 1));
    const std::string shaped = save("shaped.out.npy", benchValues("Functional.shaped.0"));
    const std::string shapedGrad = save("shaped.grad.npy", { 1.0f, 2.0f, 3.0f });
    return dir.write("rank/dump.json", dumpText("tensor", {
        { "Functional.relu.0.forward", fwdWith(tensorDesc(4, relu)) },
        { "Functional.gelu.0.forward", fwdWith(tensorDesc(4, gelu)) },
        { "Functional.linear.0.forward", fwdWith(tensorDesc(4, linear)) },
        { "Tensor.multi.0.forward", fwdWith(tensorDesc(4, c0) + ", " + tensorDesc(4, c1)) },
        { "Functional.missing.0.forward", fwdWith(tensorDesc(4, "gone.npy")) },
        { "Functional.shaped.0.forward", fwdWith(tensorDesc(4, shaped)) },
        { "Functional.shaped.0.backward", R"({"input": [)" + tensorDesc(4) + R"(], "output": [)" + tensorDesc(3, shapedGrad) + "]}" },
        { "Functional.relu.0.backward", R"({"input": [)" + tensorDesc(4) + R"(], "output": [)" + tensorDesc(4, reluGrad) + ", null]}" },
        { "Functional.gelu.0.backward", R"({"input": [)" + tensorDesc(4) + R"(], "output": [)" + tensorDesc(4, geluGrad) + "]}" },
        { "Functional.linear.0.backward", R"({"input": [)" + tensorDesc(4) + R"(], "output": [)" + tensorDesc(4, linearGrad) + "]}" },
    }));
}

} // namespace

TEST(RunutRunner, JudgesTheDumpedOutputsOfATensorDump)
{
    TempDir dir;
    const fs::path data = dir.path() / "rank" / "dump_tensor_data";
    const fs::path dump = writeTensorDump(dir);
    ASSERT_TRUE(fs::exists(data / "relu.out.npy"));
    std::vector<ApiOutcome> outcomes;
    auto s = runUt(optionsFor(dump, dir.path() / "out"), fakeFactory(), nullptr,
                   [&](const ApiOutcome& o) { outcomes.push_back(o); });
    ASSERT_TRUE(s.ok()) << s.error().format();
    ASSERT_TRUE(s->dumpedResultCsv && s->dumpedDetailsCsv);
    EXPECT_EQ(s->dumpedResultCsv->filename(), "dumped_output_checking_result_20260102030405.csv");
    EXPECT_EQ(s->dumpedDetailsCsv->filename(), "dumped_output_checking_details_20260102030405.csv");

    // The replay itself passes everywhere (the fake's device equals its bench).
    EXPECT_EQ(s->errors, 0u);
    const CsvTable replay = readTable(s->resultCsv);
    EXPECT_EQ(cellsOf(replay, "Functional.gelu.0").at(1), "pass");

    const CsvTable result = readTable(*s->dumpedResultCsv);
    EXPECT_EQ(result.header, resultHeader());
    using V = std::vector<std::string>;
    EXPECT_EQ(cellsOf(result, "Functional.relu.0"), (V { "Functional.relu.0", "pass", "pass" }));
    EXPECT_EQ(cellsOf(result, "Functional.gelu.0"), (V { "Functional.gelu.0", "error", "pass" }));
    EXPECT_EQ(cellsOf(result, "Functional.linear.0"), (V { "Functional.linear.0", "pass", "pass" }));
    EXPECT_EQ(cellsOf(result, "Tensor.multi.0"), (V { "Tensor.multi.0", "pass", "SKIP", "Multiple backward is not supported." }));
    const auto missing = cellsOf(result, "Functional.missing.0");
    ASSERT_EQ(missing.size(), 4u);
    EXPECT_EQ(missing[1], "SKIP");
    EXPECT_NE(missing[3].find("tensor.missing"), std::string::npos) << missing[3];

    // A recorded gradient of another shape is not this input's (msprobe on torch < 2.0): SKIP, and a
    // backward with nothing compared is SKIP rather than msprobe's "pass" of an all-SKIP list.
    const auto shapedRow = cellsOf(result, "Functional.shaped.0");
    ASSERT_EQ(shapedRow.size(), 4u);
    EXPECT_EQ(shapedRow[1], "pass");
    EXPECT_EQ(shapedRow[2], "SKIP");
    EXPECT_EQ(shapedRow[3].rfind("The dump recorded a gradient of shape (3,) here, not one of this input's shape (4,)", 0), 0u)
        << shapedRow[3];

    const CsvTable details = readTable(*s->dumpedDetailsCsv);
    EXPECT_EQ(details.header, detailsHeader());
    const auto gap = cellsOf(details, "Functional.linear.0.backward.output.1");
    EXPECT_EQ(gap.at(21), "SKIP");
    EXPECT_EQ(gap.at(22), "The dump holds no gradient for this input, skip this test.");
    EXPECT_EQ(cellsOf(details, "Functional.gelu.0.forward.output.0").at(21), "error");
    EXPECT_EQ(cellsOf(details, "Tensor.multi.0.forward.output.1").at(21), "pass");

    EXPECT_EQ(s->dumpedErrors, 1u);
    EXPECT_EQ(s->firstDumpedFailing, "Functional.gelu.0");
    ASSERT_EQ(outcomes.size(), 6u);
    ASSERT_TRUE(outcomes[1].dumped);
    EXPECT_EQ(outcomes[1].dumped->forwardStatus, "error");
    EXPECT_EQ(outcomes[1].replay.forwardStatus, "pass");
    for (std::size_t i = 0; i < outcomes.size(); ++i)
        EXPECT_EQ(outcomes[i].index, i);

    // Switched off: only msprobe's own pair of files.
    auto off = optionsFor(dump, dir.path() / "off");
    off.judgeDumpedOutputs = false;
    auto s2 = runUt(off, fakeFactory());
    ASSERT_TRUE(s2.ok());
    EXPECT_FALSE(s2->dumpedResultCsv);
    EXPECT_EQ(std::distance(fs::directory_iterator(dir.path() / "off"), fs::directory_iterator()), 2);
    EXPECT_EQ(readAll(s2->resultCsv), readAll(s->resultCsv));
}

// ---------------------------------------------------------------------------------------------------------
// With the LibTorch replay, on the real msprobe fixtures (modelA: the npu side's Functional.gelu computes
// gelu(x + noise) while the dump records the clean x).

#ifdef PROBESCOPE_HAVE_RUNUTTORCH
#include "core/runuttorch/torchreplayer.h"
#include "fixtureguard.h"
#include "testconfig.h"

namespace {

ReplayerFactory torchFactory()
{
    return [] { return runuttorch::makeTorchReplayer(ReplayOptions {}); };
}

fs::path fixtureDump(const std::string& fixture, const std::string& side)
{
    return probescope::testing::fixturesDir() / fixture / side / "step0" / "rank" / "dump.json";
}

} // namespace

TEST(RunutFixtures, DumpedOutputsNameTheFaultyGeluOnTheNpuSideOnly)
{
    const fs::path npu = fixtureDump("modelA_tensor_mix", "npu");
    PROBESCOPE_REQUIRE_FIXTURE(npu);
    TempDir dir;
    for (const std::string side : { "npu", "bench" }) {
        auto s = runUt(optionsFor(fixtureDump("modelA_tensor_mix", side), dir.path() / side), torchFactory());
        ASSERT_TRUE(s.ok()) << s.error().format();
        ASSERT_TRUE(s->dumpedResultCsv) << side;
        const CsvTable replay = readTable(s->resultCsv);
        const CsvTable dumped = readTable(*s->dumpedResultCsv);
        ASSERT_EQ(dumped.rows.size(), replay.rows.size());
        // The replay recomputes gelu from its dumped input on healthy hardware: it passes on both sides.
        EXPECT_EQ(cellsOf(replay, "Functional.gelu.0").at(1), "pass") << side;
        std::vector<std::string> forwardErrors;
        std::size_t forwardPasses = 0;
        for (const CsvRow& row : dumped.rows) {
            if (row.cells.at(1) == "error")
                forwardErrors.push_back(row.cells[0]);
            forwardPasses += row.cells.at(1) == "pass";
        }
        if (side == "npu") {
            EXPECT_EQ(forwardErrors, std::vector<std::string> { "Functional.gelu.0" });
            EXPECT_EQ(s->firstDumpedFailing, "Functional.gelu.0");
            // The judge's cosine of the recorded output against the fp64 bench; msprobe's compare of the
            // npu and bench dumps gives 0.879928374486 for this row (fixture README).
            const auto row = cellsOf(readTable(*s->dumpedDetailsCsv), "Functional.gelu.0.forward.output.0");
            ASSERT_FALSE(row.empty());
            EXPECT_NEAR(std::stod(row.at(4)), 0.8799284, 1e-5);
        } else {
            EXPECT_TRUE(forwardErrors.empty()) << forwardErrors.front();
            EXPECT_EQ(cellsOf(dumped, "Functional.gelu.0").at(1), "pass");
        }
        EXPECT_GE(forwardPasses + 2, dumped.rows.size()) << side; // all but at most the SKIPs and gelu
    }
}

TEST(RunutFixtures, DemoPairFromTheCollectorFindsItsPerturbedGelu)
{
    // resources/demo: probescope-example-train's tensor mix dumps, the npu side with --perturb gelu.
    TempDir dir;
    for (const std::string side : { "npu", "bench" }) {
        const fs::path dump = probescope::testing::sourceDir() / "resources" / "demo" / side / "step0" / "rank" / "dump.json";
        auto o = optionsFor(dump, dir.path() / side);
        o.workers = 2;
        auto s = runUt(o, torchFactory());
        ASSERT_TRUE(s.ok()) << s.error().format();
        ASSERT_TRUE(s->dumpedResultCsv);
        EXPECT_EQ(s->errors, 0u) << side;
        std::vector<std::string> forwardErrors;
        for (const CsvRow& row : readTable(*s->dumpedResultCsv).rows) {
            if (row.cells.at(1) == "error")
                forwardErrors.push_back(row.cells[0]);
        }
        if (side == "npu") {
            EXPECT_EQ(forwardErrors, std::vector<std::string> { "Aten.gelu.0" });
            EXPECT_EQ(s->firstDumpedFailing, "Aten.gelu.0");
        } else {
            EXPECT_TRUE(forwardErrors.empty()) << forwardErrors.front();
        }
    }
}

TEST(RunutFixtures, ReplayWritesMsprobesFilesAndWorkersDoNotMatter)
{
    const fs::path npu = fixtureDump("modelA_tensor_mix", "npu");
    const fs::path golden = probescope::testing::fixturesDir() / "modelA_tensor_mix" / "expected" / "run_ut"
        / "accuracy_checking_result.csv";
    PROBESCOPE_REQUIRE_FIXTURE(npu);
    PROBESCOPE_REQUIRE_FIXTURE(golden);
    TempDir dir;
    auto one = runUt(optionsFor(npu, dir.path() / "j1"), torchFactory());
    auto twoOptions = optionsFor(npu, dir.path() / "j2");
    twoOptions.workers = 2;
    auto two = runUt(twoOptions, torchFactory());
    ASSERT_TRUE(one.ok() && two.ok());
    EXPECT_EQ(readAll(one->resultCsv), readAll(two->resultCsv));
    EXPECT_EQ(readAll(one->detailsCsv), readAll(two->detailsCsv));
    EXPECT_EQ(readAll(*one->dumpedDetailsCsv), readAll(*two->dumpedDetailsCsv));

    // msprobe 1.2.2's own files for this dump (CPU as device), byte for byte: BOM, header, row order,
    // cells, the 3- and 4-cell rows, quoted multi-line messages.
    EXPECT_EQ(readAll(one->resultCsv), readAll(golden));
    EXPECT_EQ(readAll(one->detailsCsv), readAll(golden.parent_path() / "accuracy_checking_details.csv"));
    const CsvTable ours = readTable(one->resultCsv);
    const CsvTable theirs = readTable(golden);
    ASSERT_EQ(ours.rows.size(), theirs.rows.size());
    for (std::size_t i = 0; i < ours.rows.size(); ++i)
        EXPECT_EQ(ours.rows[i].cells, theirs.rows[i].cells) << i; // names the row when the bytes differ
}

TEST(RunutFixtures, StatisticsDumpHasNoDumpedOutputsToJudge)
{
    const fs::path npu = fixtureDump("modelA_statistics_mix", "npu");
    PROBESCOPE_REQUIRE_FIXTURE(npu);
    TempDir dir;
    auto s = runUt(optionsFor(npu, dir.path() / "out"), torchFactory());
    ASSERT_TRUE(s.ok()) << s.error().format();
    EXPECT_FALSE(s->dumpedResultCsv);
    EXPECT_EQ(s->apis, 37u);
    // Random inputs: msprobe's details differ from run to run, its result file does not (fixture README).
    const fs::path golden = probescope::testing::fixturesDir() / "modelA_statistics_mix" / "expected" / "run_ut"
        / "accuracy_checking_result.csv";
    if (fs::exists(golden)) {
        EXPECT_EQ(readAll(s->resultCsv), readAll(golden));
    }
    // Generated inputs are seeded per call, so two workers write the same bytes.
    auto two = optionsFor(npu, dir.path() / "j2");
    two.workers = 2;
    auto s2 = runUt(two, torchFactory());
    ASSERT_TRUE(s2.ok());
    EXPECT_EQ(readAll(s2->detailsCsv), readAll(s->detailsCsv));
    bool noted = false;
    for (const Diagnostic& d : s->diagnostics)
        noted = noted || d.id == "runut.no-dumped-data";
    EXPECT_TRUE(noted);
}
#endif

TEST(RunutRunner, ResumeAppendsToTheDumpedOutputFilesToo)
{
    TempDir dir;
    const fs::path dump = writeTensorDump(dir);
    auto whole = runUt(optionsFor(dump, dir.path() / "whole"), fakeFactory());
    ASSERT_TRUE(whole.ok());
    CancelAfter sink(2);
    auto first = runUt(optionsFor(dump, dir.path() / "cut"), fakeFactory(), &sink);
    ASSERT_TRUE(first.ok());
    EXPECT_TRUE(first->cancelled);
    RunUtOptions resume;
    resume.apiInfo = dump;
    resume.resumeCsv = first->resultCsv;
    auto second = runUt(resume, fakeFactory());
    ASSERT_TRUE(second.ok()) << second.error().format();
    EXPECT_EQ(second->resumedSkipped, 2u);
    EXPECT_EQ(second->dumpedResultCsv, first->dumpedResultCsv);
    EXPECT_EQ(readAll(*first->dumpedResultCsv), readAll(*whole->dumpedResultCsv));
    EXPECT_EQ(readAll(*first->dumpedDetailsCsv), readAll(*whole->dumpedDetailsCsv));
    EXPECT_EQ(readAll(first->detailsCsv), readAll(whole->detailsCsv));

    // A first run without the dumped pair: resuming creates it (headers + the APIs judged now) and says so.
    auto off = optionsFor(dump, dir.path() / "off");
    off.judgeDumpedOutputs = false;
    CancelAfter sink2(2);
    auto third = runUt(off, fakeFactory(), &sink2);
    ASSERT_TRUE(third.ok());
    resume.resumeCsv = third->resultCsv;
    auto fourth = runUt(resume, fakeFactory());
    ASSERT_TRUE(fourth.ok());
    ASSERT_TRUE(fourth->dumpedResultCsv);
    EXPECT_EQ(readTable(*fourth->dumpedResultCsv).rows.size(), 4u);
    bool warned = false;
    for (const Diagnostic& d : fourth->diagnostics)
        warned = warned || d.id == "runut.resume-dumped";
    EXPECT_TRUE(warned);
    // Only one of the pair present: refused.
    fs::remove(*fourth->dumpedDetailsCsv);
    auto broken = runUt(resume, fakeFactory());
    ASSERT_FALSE(broken.ok());
    EXPECT_EQ(broken.error().id, "runut.resume");
}
