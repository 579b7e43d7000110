// SPDX-License-Identifier: Apache-2.0
#include "core/dump/dumpfile.h"
#include "core/dump/keyscan.h"
#include "core/dump/leaf.h"
#include "testconfig.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>

using namespace probescope;
using namespace probescope::dump;

namespace {

// Every leaf kind of compare-spec §1.4, written as msprobe writes them (json.dump, indent=1 style).
const char* const kAllLeafKinds = R"({
 "task": "statistics",
 "level": "mix",
 "framework": "pytorch",
 "dump_data_dir": null,
 "data": {
  "Functional.max_pool2d.0.forward": {
   "input_args": [
    {"type": "torch.Tensor", "dtype": "torch.float16", "shape": [2, 3], "Max": 1.5, "Min": -2, "Mean": NaN,
     "Norm": Infinity, "requires_grad": true},
    {"type": "int", "value": 3},
    {"type": "float", "value": -0.1},
    {"type": "bool", "value": false},
    null,
    {"type": "str", "value": "mean"},
    {"type": "slice", "value": [0, 5, null]},
    {"type": "torch.dtype", "value": "torch.float32"},
    {"type": "torch.Size", "value": [2, 3]},
    {"type": "ellipsis", "value": "..."},
    [{"type": "int", "value": 1}, [{"type": "int", "value": 2}]],
    {"type": "torch.device", "value": "npu:0"}
   ],
   "input_kwargs": {"ceil_mode": {"type": "bool", "value": false}, "opts": {"inner": {"type": "int", "value": 4}}},
   "is_recompute": false,
   "output": [
    {"type": "torch.Tensor", "dtype": "torch.bool", "shape": [], "Max": true, "Min": false, "Mean": null,
     "Norm": null, "requires_grad": false, "md5": "1a2b3c4d"}
   ]
  },
  "Module.conv.Conv2d.forward.0": {
   "input_args": [],
   "input_kwargs": {},
   "output": [{"type": "torch.Tensor", "dtype": "torch.float32", "shape": [1], "Max": 1.0, "Min": 1.0,
               "Mean": 1.0, "Norm": 1.0, "requires_grad": true}],
   "parameters": {"weight": {"type": "torch.Tensor", "dtype": "torch.float32", "shape": [4, 3], "Max": 0.5,
                  "Min": -0.5, "Mean": 0.0, "Norm": 2.0, "requires_grad": true}}
  },
  "Module.conv.Conv2d.parameters_grad": {
   "weight": [{"type": "torch.Tensor", "dtype": "torch.float32", "shape": [4, 3], "Max": 0.1, "Min": -0.1,
               "Mean": 0.0, "Norm": 0.3, "requires_grad": false}]
  },
  "Distributed.isend.0.forward": {
   "input_args": [{"class_type": "torch.distributed.P2POp", "op": "isend", "peer": 1, "tag": 0,
                   "tensor": {"type": "torch.Tensor", "dtype": "torch.int64", "shape": [1], "Max": 7, "Min": 7,
                              "Mean": 7.0, "Norm": 7.0}}],
   "input_kwargs": {"group": {"type": "torch.ProcessGroup", "group_ranks": [0, 1], "group_id": "ab"}},
   "output": []
  },
  "Tensor.add.3.backward": {
   "input": [{"type": "torch.Tensor", "dtype": "torch.bfloat16", "shape": [8], "Max": 0.25, "Min": 0, "Mean": 0.1,
              "Norm": 0.5, "requires_grad": false}],
   "output": [null, {"type": "torch.Tensor", "dtype": "torch.bfloat16", "shape": [8], "Max": 1, "Min": -1,
                     "Mean": 0, "Norm": 2, "requires_grad": false}]
  }
 }
})";

std::shared_ptr<const DumpFile> parseOk(std::string_view text, const char* name = "/d/step0/rank0/dump.json")
{
    auto r = parseDumpJson(text, name);
    EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().format());
    return r.ok() ? *r : nullptr;
}

std::map<std::string, LeafKind> leavesOf(const Entry& e)
{
    std::map<std::string, LeafKind> out;
    forEachLeaf(e.value, [&](const LeafPath& p, JsonValue, LeafKind k) {
        out[std::string(p.field) + (p.path.empty() ? "" : "." + p.path)] = k;
        return true;
    });
    return out;
}

} // namespace

TEST(DumpFile, ReadsHeaderAndEntriesInFileOrder)
{
    const auto dump = parseOk(kAllLeafKinds);
    ASSERT_TRUE(dump);
    EXPECT_EQ(dump->header.task, "statistics");
    EXPECT_EQ(dump->header.level, "mix");
    EXPECT_EQ(dump->header.framework, "pytorch");
    EXPECT_FALSE(dump->header.dumpDataDir);
    EXPECT_EQ(dump->tensorDir, "/d/step0/rank0/dump_tensor_data");
    ASSERT_EQ(dump->entries.size(), 5u);
    EXPECT_EQ(dump->entries[0].key, "Functional.max_pool2d.0.forward");
    EXPECT_EQ(dump->entries[1].name.kind, EntryKind::Module);
    EXPECT_EQ(dump->entries[2].name.kind, EntryKind::ParametersGrad);
    EXPECT_EQ(dump->entries[4].name.direction, Direction::Backward);
    EXPECT_EQ(dump->entries[0].line, 7u);
    EXPECT_EQ(dump->find("Tensor.add.3.backward"), &dump->entries[4]);
    EXPECT_EQ(dump->find("nope"), nullptr);
    EXPECT_TRUE(dump->diagnostics.empty()) << dump->diagnostics.front().format();
}

TEST(DumpFile, ClassifiesEveryLeafKind)
{
    const auto dump = parseOk(kAllLeafKinds);
    ASSERT_TRUE(dump);
    const auto leaves = leavesOf(dump->entries[0]);
    const std::map<std::string, LeafKind> expected = {
        { "input_args.0", LeafKind::Tensor },   { "input_args.1", LeafKind::Scalar },
        { "input_args.2", LeafKind::Scalar },   { "input_args.3", LeafKind::Scalar },
        { "input_args.4", LeafKind::Null },     { "input_args.5", LeafKind::Scalar },
        { "input_args.6", LeafKind::Slice },    { "input_args.7", LeafKind::DType },
        { "input_args.8", LeafKind::Size },     { "input_args.9", LeafKind::Ellipsis },
        { "input_args.10.0", LeafKind::Scalar }, { "input_args.10.1.0", LeafKind::Scalar },
        { "input_args.11", LeafKind::Device },  { "input_kwargs.ceil_mode", LeafKind::Scalar },
        { "input_kwargs.opts.inner", LeafKind::Scalar }, { "output.0", LeafKind::Tensor },
    };
    EXPECT_EQ(leaves, expected); // "is_recompute": false is not an argument and yields no leaf

    const auto p2p = leavesOf(dump->entries[3]);
    EXPECT_EQ(p2p.at("input_args.0"), LeafKind::P2POp);
    EXPECT_EQ(p2p.at("input_kwargs.group"), LeafKind::Other);

    const auto grad = leavesOf(dump->entries[2]);
    EXPECT_EQ(grad.at("weight.0"), LeafKind::Tensor);
    const auto backward = leavesOf(dump->entries[4]);
    EXPECT_EQ(backward.at("output.0"), LeafKind::Null);
    EXPECT_EQ(backward.at("output.1"), LeafKind::Tensor);
}

TEST(DumpFile, ReadsTensorLeavesWithSpecialValues)
{
    const auto dump = parseOk(kAllLeafKinds);
    ASSERT_TRUE(dump);
    const JsonValue in0 = dump->entries[0].value.find("input_args")->at(0);
    const auto leaf = readTensorLeaf(in0);
    ASSERT_TRUE(leaf);
    EXPECT_EQ(leaf->type, "torch.Tensor");
    EXPECT_EQ(leaf->dtype, "torch.float16");
    EXPECT_EQ(leaf->shape, (std::vector<std::int64_t> { 2, 3 }));
    EXPECT_EQ(leaf->max.kind, StatValue::Kind::Float);
    EXPECT_EQ(leaf->max.number, 1.5);
    EXPECT_EQ(leaf->min.kind, StatValue::Kind::Int);
    EXPECT_EQ(leaf->min.integer, -2);
    EXPECT_TRUE(std::isnan(leaf->mean.number));
    EXPECT_EQ(leaf->norm.number, INFINITY);
    EXPECT_EQ(leaf->requiresGrad, true);
    EXPECT_TRUE(leaf->dataName.empty());

    const auto out = readTensorLeaf(dump->entries[0].value.find("output")->at(0));
    ASSERT_TRUE(out);
    EXPECT_EQ(out->max.kind, StatValue::Kind::Bool);
    EXPECT_EQ(out->max.integer, 1);
    EXPECT_EQ(out->mean.kind, StatValue::Kind::Null);
    EXPECT_TRUE(out->shape.empty());
    EXPECT_EQ(out->md5, "1a2b3c4d");
}

TEST(DumpFile, WronglyTypedLeafFieldsAreReportedWithTheirPosition)
{
    const std::string text = R"({"task": "tensor", "level": "L1", "data": {
"Functional.relu.0.forward": {"input_args": [{"type": "torch.Tensor", "dtype": 5, "shape": [2]}],
 "output": [{"type": "torch.Tensor", "dtype": "torch.float32", "shape": "2x2"}]},
"Functional.relu.1.forward": {"input_args": [{"type": "torch.Tensor", "dtype": "torch.float32", "shape": [-1]}],
 "output": [{"type": "torch.Tensor", "dtype": "torch.float32", "shape": [1], "Max": [1], "data_name": 3}]}
}})";
    const auto dump = parseOk(text);
    ASSERT_TRUE(dump);
    ASSERT_EQ(dump->entries.size(), 2u); // the entries are still there; the problems are reported
    std::vector<std::string> messages;
    for (const auto& d : dump->diagnostics) {
        EXPECT_EQ(d.id, "dump.leaf-type");
        EXPECT_EQ(d.severity, Severity::Error);
        messages.push_back(std::to_string(d.location.line) + ": " + d.message);
    }
    ASSERT_EQ(messages.size(), 4u);
    EXPECT_EQ(messages[0], "2: entry \"Functional.relu.0.forward\", input_args.0: \"dtype\" must be a string");
    EXPECT_EQ(messages[1], "3: entry \"Functional.relu.0.forward\", output.0: \"shape\" must be a list of integers");
    EXPECT_NE(messages[2].find("input_args.0: \"shape\" must be a list of non-negative integers"), std::string::npos);
    EXPECT_NE(messages[3].find("output.0: \"Max\" must be a number or null"), std::string::npos);
}

TEST(DumpFile, FatalStructureErrors)
{
    struct Case
    {
        const char* text;
        const char* id;
    };
    const Case cases[] = {
        { "[1, 2]", "dump.not-object" },
        { R"({"task": "tensor"})", "dump.no-data" },
        { R"({"task": "tensor", "data": [1]})", "dump.data-type" },
        { R"({"task": "tensor", "da)", "dump.truncated" },
        { R"({"task": "tensor" "data": {}})", "json.syntax" },
    };
    for (const Case& c : cases) {
        auto r = parseDumpJson(c.text, "/x/dump.json");
        ASSERT_FALSE(r.ok()) << c.text;
        EXPECT_EQ(r.error().id, c.id) << c.text;
        EXPECT_EQ(r.error().location.file, "/x/dump.json");
    }
}

TEST(DumpFile, SalvagesATruncatedDumpAndSaysWhatWasLost)
{
    const std::string full = kAllLeafKinds;
    // Cut inside the fourth entry (Distributed.isend).
    const std::size_t cut = full.find("\"op\": \"isend\"");
    auto r = parseDumpJson(std::string_view(full).substr(0, cut), "/r/dump.json");
    ASSERT_TRUE(r.ok()) << r.error().format();
    const auto& dump = **r;
    EXPECT_TRUE(dump.truncated);
    ASSERT_EQ(dump.entries.size(), 3u);
    EXPECT_EQ(dump.entries[2].key, "Module.conv.Conv2d.parameters_grad");
    ASSERT_EQ(dump.diagnostics.size(), 1u);
    const Diagnostic& d = dump.diagnostics.front();
    EXPECT_EQ(d.id, "dump.truncated");
    EXPECT_EQ(d.severity, Severity::Error);
    EXPECT_EQ(d.location.offset, cut);
    EXPECT_NE(d.message.find("3 complete entries were read"), std::string::npos) << d.message;
    EXPECT_NE(d.message.find("\"Distributed.isend.0.forward\" was dropped"), std::string::npos) << d.message;
}

TEST(DumpFile, WithoutSalvageATruncatedDumpIsAnError)
{
    const std::string full = kAllLeafKinds;
    ReadOptions options;
    options.salvageTruncated = false;
    auto r = parseDumpJson(std::string_view(full).substr(0, full.size() / 2), "/r/dump.json", options);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().id, "json.truncated");
}

TEST(DumpFile, DuplicateEntryKeepsFirstPositionAndLastValue)
{
    const auto dump = parseOk(R"({"task": "statistics", "level": "L1", "data": {
"Functional.relu.0.forward": {"output": [{"type": "int", "value": 1}]},
"Functional.gelu.0.forward": {"output": []},
"Functional.relu.0.forward": {"output": [{"type": "int", "value": 2}]}}})");
    ASSERT_TRUE(dump);
    ASSERT_EQ(dump->entries.size(), 2u);
    EXPECT_EQ(dump->entries[0].key, "Functional.relu.0.forward");
    EXPECT_EQ(dump->entries[0].value.find("output")->at(0).find("value")->asInt(), 2);
    ASSERT_EQ(dump->diagnostics.size(), 1u);
    EXPECT_EQ(dump->diagnostics[0].id, "dump.duplicate-key");
    EXPECT_EQ(dump->diagnostics[0].location.line, 4u);
}

TEST(DumpFile, ReadsDebugJsonSinglePointSave)
{
    const auto dump = parseOk(R"({"task": "statistics", "level": "debug", "framework": "pytorch", "dump_data_dir": null,
"data": {
 "dict_variable.0.debug": {"key1": {"type": "str", "value": "value1"}, "key2": [{"type": "int", "value": 1}, {"type": "int", "value": 2}]},
 "loss_grad.0.debug": {"type": "torch.Tensor", "dtype": "torch.float32", "shape": [], "Max": 0.5, "Min": 0.5, "Mean": 0.5, "Norm": 0.5, "requires_grad": false}
}})",
                              "/d/debug.json");
    ASSERT_TRUE(dump);
    EXPECT_EQ(dump->format, DumpFormat::DebugJson);
    ASSERT_EQ(dump->entries.size(), 2u);
    EXPECT_EQ(dump->entries[0].name.kind, EntryKind::Debug);
    EXPECT_EQ(dump->entries[1].name.gradFlag, true);
    const auto leaves = leavesOf(dump->entries[0]);
    EXPECT_EQ(leaves.size(), 3u);
    EXPECT_EQ(leaves.count("key2.1"), 1u);
    EXPECT_EQ(leavesOf(dump->entries[1]).size(), 1u); // the entry value itself is the leaf
}

TEST(DumpFile, ReadsMindSporeDumps)
{
    const auto dump = parseOk(R"({"task": "tensor", "level": "L0", "framework": "mindspore", "dump_data_dir": "/dump/path",
"data": {"Cell.conv2.Conv2d.forward.0": {"input_args": [{"type": "mindspore.Tensor", "dtype": "Float32", "shape": [2, 16, 14, 14],
 "Max": 1.6, "Min": -1.6, "Mean": 0.1, "Norm": 30.5, "data_name": "Cell.conv2.Conv2d.forward.0.input.0.npy"}],
 "input_kwargs": {}, "output": [], "parameters": {}},
 "Cell.conv2.Conv2d.parameters_grad": {"weight": [{"type": "mindspore.Tensor", "dtype": "Float32", "shape": [32, 16, 5, 5],
 "Max": 0.1, "Min": -0.1, "Mean": 0.0, "Norm": 1.0, "data_name": "Cell.conv2.Conv2d.parameters_grad.weight.npy"}]}}})");
    ASSERT_TRUE(dump);
    EXPECT_EQ(dump->header.framework, "mindspore");
    EXPECT_EQ(*dump->header.dumpDataDir, "/dump/path");
    EXPECT_EQ(dump->entries[0].name.prefix, "Cell");
    EXPECT_EQ(dump->entries[1].name.kind, EntryKind::ParametersGrad);
    const auto leaf = readTensorLeaf(dump->entries[0].value.find("input_args")->at(0));
    ASSERT_TRUE(leaf);
    EXPECT_EQ(leaf->dtype, "Float32");
    EXPECT_EQ(leaf->dataName, "Cell.conv2.Conv2d.forward.0.input.0.npy");
    EXPECT_FALSE(leaf->requiresGrad);
}

// The viewer's early tree reads only the keys of dump.json (dump/keyscan.h).
TEST(DumpKeyScan, KeysInFileOrderTaskAndMd5WithoutTheValues)
{
    const std::string text = R"({
 "task": "statistics",
 "level": "mix",
 "framework": "pytorch",
 "dump_data_dir": null,
 "data": {
  "Functional.conv2d.0.forward": {"input_args": [{"type": "torch.Tensor", "shape": [1, 2], "Max": NaN,
     "text": "a \"quoted\" {brace} [bracket]"}], "output": []},
  "Module.a.A.forward.0": {"input_args": [[[{"md5": "0a1b"}]]]},
  "Tensor.add.1.forward": {}
 }
})";
    auto keys = scanDumpKeysIn(text, "/t/dump.json");
    ASSERT_TRUE(keys.ok()) << keys.error().format();
    const std::vector<std::string_view> expected = { "Functional.conv2d.0.forward", "Module.a.A.forward.0",
                                                     "Tensor.add.1.forward" };
    EXPECT_EQ(keys->keys, expected);
    EXPECT_EQ(keys->task, "statistics");
    EXPECT_TRUE(keys->md5Key);
    // "md5" as a value is not a member.
    auto plain = scanDumpKeysIn(R"({"task": "tensor", "data": {"K.0.forward": {"x": "md5"}}})", "/t/dump.json");
    ASSERT_TRUE(plain.ok());
    EXPECT_FALSE(plain->md5Key);
    EXPECT_EQ(plain->task, "tensor");
    // The same keys as the full reader, on a real dump.
    const auto file = probescope::testing::fixturesDir() / "modelA_statistics_mix" / "npu" / "step0" / "rank" / "dump.json";
    auto full = readDumpJson(file);
    auto scanned = scanDumpKeys(file);
    ASSERT_TRUE(full.ok() && scanned.ok());
    ASSERT_EQ(scanned->keys.size(), (*full)->entries.size());
    for (std::size_t i = 0; i < scanned->keys.size(); ++i)
        EXPECT_EQ(scanned->keys[i], (*full)->entries[i].key);
}

TEST(DumpKeyScan, WhatItCannotReadIsAnErrorNamingTheFile)
{
    for (const char* text : { "", "[]", R"({"task": "statistics"})", R"({"data": {"a.0.forward": {"x": [1, 2)",
                              R"({"data": {"esc\"aped.0.forward": {}}})", R"({"data": {"a.0.forward" {}}})" }) {
        auto keys = scanDumpKeysIn(text, "/t/dump.json");
        ASSERT_FALSE(keys.ok()) << text;
        EXPECT_EQ(keys.error().id, "dump.key-scan");
        EXPECT_EQ(keys.error().location.file, "/t/dump.json");
    }
}
