// SPDX-License-Identifier: Apache-2.0
// Checkpoint compare (core/ckpt, docs/checkpoint-compare.md) against real msprobe 26.0.0 outputs: the shared
// fixtures (ckpt_compare/) and tests/data/ckpt (written by msprobe's own compare_checkpoints, see
// tests/data/gen/make_ckpt_cases.py). The JSON is compared as a dict with exact float equality; nlohmann/json is
// the independent reader. Hostile archives must be refused naming the file, never executed.
#include "core/ckpt/ckptcompare.h"
#include "core/tensor/dtype.h"
#include "core/tensor/ptnative.h"
#include "tempdir.h"
#include "testconfig.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <sstream>

using namespace probescope;
using probescope::testing::fixturesDir;
using probescope::testing::testDataDir;

namespace {

using probescope::testing::readAll;

/// json.dump writes NaN as a bare token, which nlohmann/json does not read: quote it on both sides.
nlohmann::json parsePyJson(std::string text)
{
    for (std::size_t p = text.find(": NaN"); p != std::string::npos; p = text.find(": NaN", p))
        text.replace(p, 5, ": \"NaN\"");
    return nlohmann::json::parse(text);
}

struct Logged
{
    std::vector<std::string> lines;
    ckpt::LogSink sink()
    {
        return [this](Severity s, const std::string& m) {
            lines.push_back((s == Severity::Warning ? "[WARNING] " : "[INFO] ") + m);
        };
    }
};

/// The lines of msprobe's log this compare writes too (not the CLI banner, not the "written to" line).
std::vector<std::string> expectedLog(const std::filesystem::path& file)
{
    std::vector<std::string> out;
    std::istringstream in(readAll(file));
    for (std::string line; std::getline(in, line);) {
        if (line.starts_with("[INFO] Loaded checkpoint") || line.starts_with("[INFO] Found ")
            || (line.starts_with("[WARNING]") && line.find("CANN") == std::string::npos))
            out.push_back(line);
    }
    return out;
}

void expectSameComparison(const std::filesystem::path& first, const std::filesystem::path& second,
                          const std::filesystem::path& expectedDir, const std::string& logName)
{
    Logged log;
    auto result = ckpt::compareCheckpoints(first, second, {}, log.sink());
    ASSERT_TRUE(result) << result.error().format();
    const auto actual = parsePyJson(ckpt::toJson(*result));
    const auto expected = parsePyJson(readAll(expectedDir / "ckpt_similarity.json"));
    ASSERT_EQ(actual.size(), expected.size());
    for (const auto& [name, metrics] : expected.items()) {
        ASSERT_TRUE(actual.contains(name)) << name;
        EXPECT_EQ(actual[name], metrics) << name << ": ours " << actual[name].dump() << " msprobe " << metrics.dump();
    }
    // Same lines; the per-parameter warnings follow Python's set order in msprobe's log, sorted names here.
    auto want = expectedLog(expectedDir / logName);
    auto got = log.lines;
    EXPECT_EQ(std::vector<std::string>(got.begin(), got.begin() + 6), std::vector<std::string>(want.begin(), want.begin() + 6));
    // console.normalized.txt lost the warnings printed on tqdm's progress line; log.txt kept them.
    if (logName == "console.normalized.txt")
        std::erase(got, "[WARNING] One tensor norm is zero.");
    std::sort(want.begin(), want.end());
    std::sort(got.begin(), got.end());
    EXPECT_EQ(got, want);
}

const std::filesystem::path kCases = fixturesDir() / "msprobe26_workflow/ckpt_compare";

} // namespace

TEST(CkptCompare, Msprobe26FixtureTp2)
{
    const auto c = kCases / "tp2";
    expectSameComparison(c / "inputs/ckptA", c / "inputs/ckptB", c / "expected", "console.normalized.txt");
}

TEST(CkptCompare, Msprobe26FixtureTp2Pp2LegacyNames)
{
    const auto c = kCases / "tp2_pp2_legacy_names";
    expectSameComparison(c / "inputs/ckptA", c / "inputs/ckptB/iter_0000200", c / "expected", "console.normalized.txt");
}

TEST(CkptCompare, VppExpertParallelBf16Parameters)
{
    const auto c = testDataDir() / "ckpt/vpp_ep_bf16";
    expectSameComparison(c / "inputs/ckptA", c / "inputs/ckptB", c / "expected", "log.txt");
}

TEST(CkptCompare, DifferentTpDtypesShapesAndNaN)
{
    // A: TP2 bf16 with legacy nested names; B: TP1 float32 given as its iter folder. Row-parallel blocks of
    // 69,632 elements interleave across the compare's 65,536-element steps.
    const auto c = testDataDir() / "ckpt/tp_change_shapes";
    expectSameComparison(c / "inputs/ckptA", c / "inputs/ckptB/iter_0000005", c / "expected", "log.txt");
}

TEST(CkptCompare, JsonIsPythonsIndentFour)
{
    ckpt::CheckpointComparison cmp;
    ckpt::ParamMetrics m;
    m.name = "w";
    m.l2 = 0.0;
    m.cos = 1.0000001192092896;
    m.numel1 = m.numel2 = 6;
    m.shape1 = m.shape2 = { 2, 3 };
    cmp.params.push_back(m);
    ckpt::ParamMetrics d;
    d.name = "s";
    d.sameShape = false;
    d.numel1 = 1;
    d.numel2 = 2;
    d.shape2 = { 2 };
    cmp.params.push_back(d);
    EXPECT_EQ(ckpt::toJson(cmp), "{\n    \"w\": {\n        \"l2\": 0.0,\n        \"cos\": 1.0000001192092896,\n"
                                 "        \"numel\": 6,\n        \"shape\": [\n            2,\n            3\n        ]\n"
                                 "    },\n    \"s\": {\n        \"l2\": null,\n        \"cos\": null,\n"
                                 "        \"numel\": [\n            1,\n            2\n        ],\n"
                                 "        \"shape\": [\n            [],\n            [\n                2\n"
                                 "            ]\n        ]\n    }\n}");
    EXPECT_EQ(ckpt::toJson({}), "{}");
    EXPECT_EQ(ckpt::pySetRepr({}), "set()");
    EXPECT_EQ(ckpt::pySetRepr({ "a", "it's" }), "{'a', \"it's\"}");
}

TEST(CkptCompare, NameMappingIsMsprobesYamlInOrder)
{
    EXPECT_EQ(ckpt::mapToMcoreName("language_model.encoder.layers.3.self_attention.query_key_value.weight"),
              "decoder.layers.3.self_attention.linear_qkv.weight");
    EXPECT_EQ(ckpt::mapToMcoreName("language_model.encoder.layers.0.self_attention.dense.bias"),
              "decoder.layers.0.self_attention.linear_proj.bias");
    EXPECT_EQ(ckpt::mapToMcoreName("decoder.layers.0.self_attention.linear_qkv.layer_norm_weight"),
              "decoder.layers.0.input_layernorm.weight");
    EXPECT_EQ(ckpt::mapToMcoreName("language_model.output_layer.word_embeddings_for_head.weight"),
              "output_layer.output_layer.weight"); // str.replace everywhere, as msprobe does
}

TEST(CkptCompare, ShardsThatCannotBeConcatenated)
{
    Logged log;
    const auto ckptDir = testDataDir() / "ckpt/shard_shape_mismatch/ckpt";
    auto result = ckpt::compareCheckpoints(ckptDir, ckptDir, {}, log.sink());
    ASSERT_FALSE(result);
    EXPECT_EQ(result.error().id, "ckpt.shard-shape");
    EXPECT_NE(result.error().location.file.find("mp_rank_01/model_optim_rng.pt"), std::string::npos);
    EXPECT_NE(result.error().message.find("linear_qkv.weight"), std::string::npos) << result.error().message;
    EXPECT_NE(result.error().message.find("(12, 4)"), std::string::npos) << result.error().message;
}

TEST(CkptCompare, MissingRankIsAnError)
{
    Logged log;
    auto result = ckpt::compareCheckpoints(kCases / "tp2/inputs/ckptA/iter_0000100/mp_rank_00", kCases / "tp2/inputs/ckptB",
                                           {}, log.sink());
    ASSERT_FALSE(result);
    EXPECT_EQ(result.error().message.find("No checkpoint rank directories found"), 0u) << result.error().message;
}

// ---- the pickle reader

namespace {

std::filesystem::path hostileFile(const std::string& name)
{
    return testDataDir() / "ckpt/hostile" / name / "iter_0000001/mp_rank_00/model_optim_rng.pt";
}

Diagnostic refusal(const std::string& name, const tensor::PickleLimits& limits = {})
{
    auto opened = tensor::openPtCheckpoint(hostileFile(name), limits);
    EXPECT_FALSE(opened) << name;
    if (opened)
        return {};
    EXPECT_EQ(opened.error().location.file, hostileFile(name).string());
    return opened.error();
}

} // namespace

TEST(CkptPickle, ReadsArgsNamespaceAndTensorsWithoutRunningAnything)
{
    auto opened = tensor::openPtCheckpoint(hostileFile("valid"));
    ASSERT_TRUE(opened) << opened.error().format();
    const tensor::PtCheckpoint& f = *opened;
    const auto args = f.find(f.root(), "args");
    ASSERT_TRUE(args);
    EXPECT_EQ(f.type(*args), tensor::PtCheckpoint::Type::Object);
    EXPECT_EQ(f.text(*args), "argparse.Namespace");
    EXPECT_EQ(f.integer(*f.attribute(*args, "seq_length")), 4096);
    EXPECT_EQ(f.type(*f.attribute(*args, "num_experts")), tensor::PtCheckpoint::Type::None);
    // an enum member: Python 3.11 pickles getattr(AttnBackend, "flash"), kept as an inert call
    const auto backend = *f.attribute(*args, "attention_backend");
    EXPECT_EQ(f.type(backend), tensor::PtCheckpoint::Type::Object);
    EXPECT_EQ(f.text(backend), "__builtin__.getattr");
    EXPECT_EQ(f.text(*f.attribute(*args, "params_dtype")), "torch.bfloat16");
    const auto model = f.find(f.root(), "model");
    ASSERT_TRUE(model);
    const auto w = f.find(*model, "decoder.final_layernorm.weight");
    ASSERT_TRUE(w);
    ASSERT_EQ(f.type(*w), tensor::PtCheckpoint::Type::Tensor);
    EXPECT_EQ(f.tensor(*w).shape, (std::vector<std::int64_t> { 2, 2 }));
    EXPECT_EQ(f.tensor(*w).dtype, tensor::DType::Float32);
    EXPECT_EQ(f.tensor(*w).storageBytes, 16u);
}

TEST(CkptPickle, ReduceOfOsSystemIsRefused)
{
    const Diagnostic d = refusal("reduce_os_system");
    EXPECT_EQ(d.id, "tensor.pickle-unsafe");
    EXPECT_NE(d.message.find("REDUCE at pickle offset"), std::string::npos) << d.message;
    EXPECT_NE(d.message.find("os.system"), std::string::npos) << d.message;
    EXPECT_TRUE(d.location.offset.has_value());
}

TEST(CkptPickle, DeepNestingIsBounded)
{
    const Diagnostic d = refusal("deep_nesting");
    EXPECT_EQ(d.id, "tensor.pickle-limit");
    EXPECT_NE(d.message.find("nests deeper"), std::string::npos) << d.message;
}

TEST(CkptPickle, HugeDeclaredLengthIsRefused)
{
    const Diagnostic d = refusal("huge_length");
    EXPECT_NE(d.message.find("declares 2147483647 bytes"), std::string::npos) << d.message;
}

TEST(CkptPickle, TruncatedPickleIsRefused)
{
    const Diagnostic d = refusal("truncated_pickle");
    EXPECT_EQ(d.id, "tensor.pt-corrupt");
    EXPECT_NE(d.message.find("damaged data.pkl record"), std::string::npos) << d.message;
}

TEST(CkptPickle, StorageOfAbsurdSizeIsRefused)
{
    const Diagnostic d = refusal("absurd_storage");
    EXPECT_NE(d.message.find("the storage record holds 16 bytes but the pickle says 1000000000000000 elements"),
              std::string::npos)
        << d.message;
}

TEST(CkptPickle, StorageMissingOrOutsideTheZipIsRefused)
{
    EXPECT_NE(refusal("missing_storage").message.find("archive/data/7 is missing"), std::string::npos);
    const Diagnostic d = refusal("storage_outside_zip");
    EXPECT_NE(d.message.find("zip record archive/data/0 points outside the file"), std::string::npos) << d.message;
}

TEST(CkptPickle, ObjectCountAndPickleSizeAreBounded)
{
    tensor::PickleLimits fewObjects;
    fewObjects.maxObjects = 20;
    EXPECT_NE(refusal("valid", fewObjects).message.find("more than 20 objects"), std::string::npos);
    tensor::PickleLimits smallPickle;
    smallPickle.maxPickleBytes = 64;
    const Diagnostic d = refusal("valid", smallPickle);
    EXPECT_EQ(d.id, "tensor.pickle-limit");
    EXPECT_NE(d.message.find("more than ProbeScope's bound of 64"), std::string::npos) << d.message;
}

TEST(CkptPickle, HostileRankFileStopsTheCompareNamingIt)
{
    Logged log;
    const auto dir = testDataDir() / "ckpt/hostile/reduce_os_system";
    auto result = ckpt::compareCheckpoints(dir, dir, {}, log.sink());
    ASSERT_FALSE(result);
    EXPECT_EQ(result.error().location.file, hostileFile("reduce_os_system").string());
    EXPECT_EQ(result.error().id, "tensor.pickle-unsafe");
}

TEST(CkptPickle, DamagedBytesNeverCrashOrHang)
{
    // Every truncation of the valid file and 3000 random byte changes in its first kilobyte (the zip header and the
    // pickle): each one is read or refused with a diagnostic naming the file; what is read can be walked.
    const std::string good = readAll(hostileFile("valid"));
    probescope::testing::TempDir dir;
    const auto path = dir.path() / "model_optim_rng.pt";
    std::uint64_t state = 0x12345678;
    const auto next = [&state] {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        return state;
    };
    int refused = 0;
    for (int round = 0; round < 3000 + static_cast<int>(good.size()); ++round) {
        std::string bytes = good;
        if (round < static_cast<int>(good.size())) {
            bytes.resize(static_cast<std::size_t>(round));
        } else {
            for (int k = 0; k < 1 + static_cast<int>(next() % 4); ++k)
                bytes[next() % std::min<std::size_t>(bytes.size(), 1024)] = static_cast<char>(next());
        }
        std::filesystem::remove(path);
        dir.write("model_optim_rng.pt", bytes);
        auto opened = tensor::openPtCheckpoint(path);
        if (!opened) {
            ++refused;
            EXPECT_EQ(opened.error().location.file, path.string());
            continue;
        }
        const tensor::PtCheckpoint& f = *opened;
        if (const auto model = f.find(f.root(), "model")) {
            for (std::size_t i = 0; i < f.size(*model); ++i) {
                const auto v = f.value(*model, i);
                if (f.type(v) == tensor::PtCheckpoint::Type::Tensor && f.tensor(v).dtype && f.tensor(v).contiguous) {
                    EXPECT_LE(f.tensor(v).numel * static_cast<std::int64_t>(tensor::dtypeSize(*f.tensor(v).dtype)),
                              static_cast<std::int64_t>(f.tensor(v).storageBytes));
                }
            }
        }
    }
    EXPECT_GT(refused, static_cast<int>(good.size()) - 2); // every truncation but the whole file
}
