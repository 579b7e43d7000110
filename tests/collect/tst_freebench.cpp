// SPDX-License-Identifier: Apache-2.0
// Free benchmark (run-ut-spec §11): config validation, the perturbation layers on small tensors and bit
// patterns, the ratio, the preheat state machine fed with synthetic ratios, free_benchmark.csv cell by
// cell, and the debugger on real LibTorch ops and the example model (unstable op flagged, fix mode).
// Expected values are derived from the spec by hand or with plain float arithmetic, not taken from
// the code's output.
#include "collecttest.h"

#include "freebench.h"
#include "freebenchlayers.h"
#include "model.h"

#include "core/util/outputfile.h"

#include <probescope/collect/precisiondebugger.h>

#include <torch/torch.h>

#include <cmath>
#include <cstdlib>
#include <cstring>

#include <sys/wait.h>
#include <unistd.h>

using namespace probescope;
using namespace probescope::testing;
namespace fs = std::filesystem;
namespace collect = probescope::collect;
namespace fb = probescope::collect::freebench;
namespace example = probescope::example;

namespace {

std::string errorOf(const std::string& json)
{
    try {
        collect::parseConfigText(json, "config.json");
    } catch (const collect::CollectError& e) {
        EXPECT_EQ(e.id(), "collect.config");
        return e.what();
    }
    return {};
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

/// A debugger for task free_benchmark with `section` as its config section; log lines into `log`.
collect::Options freeBenchOptions(const fs::path& root, const std::string& section, std::vector<std::string>& log)
{
    writeFile(root / "config.json", R"({"task": "free_benchmark", "free_benchmark": )" + section + "}");
    collect::Options o;
    o.configPath = (root / "config.json").string();
    o.dumpPath = (root / "dump").string();
    o.log = [&log](const std::string& line) { log.push_back(line); };
    return o;
}

fs::path csvOf(const fs::path& root, int step = 0)
{
    return root / "dump" / ("step" + std::to_string(step)) / "rank" / "free_benchmark.csv";
}

const std::string kHead = "\xEF\xBB\xBF" "rank,pert_mode,stage,step,api_name,max_rel,dtype,shape,output_index\r\n";

template<typename Bits>
at::Tensor fromBits(std::initializer_list<Bits> bits, at::ScalarType type)
{
    const at::ScalarType intType = sizeof(Bits) == 2 ? at::kShort : sizeof(Bits) == 4 ? at::kInt : at::kLong;
    std::vector<std::int64_t> values(bits.begin(), bits.end());
    at::Tensor t = at::empty({ static_cast<std::int64_t>(values.size()) }, at::TensorOptions().dtype(intType));
    for (std::size_t i = 0; i < values.size(); ++i)
        t[static_cast<std::int64_t>(i)] = static_cast<std::int64_t>(static_cast<std::make_signed_t<Bits>>(values[i]));
    return t.view(type);
}

template<typename Bits>
std::vector<Bits> toBits(const at::Tensor& t)
{
    const at::ScalarType intType = sizeof(Bits) == 2 ? at::kShort : sizeof(Bits) == 4 ? at::kInt : at::kLong;
    const at::Tensor i = t.contiguous().view(intType);
    std::vector<Bits> out;
    for (std::int64_t k = 0; k < i.numel(); ++k)
        out.push_back(static_cast<Bits>(i[k].item<std::int64_t>()));
    return out;
}

std::uint32_t floatBits(float f)
{
    std::uint32_t u;
    std::memcpy(&u, &f, 4);
    return u;
}

} // namespace

// ------------------------------------------------------------------------------------------------
// Configuration (§11.1)

TEST(FreeBenchConfig, DefaultsAndEveryKey)
{
    const collect::Config d = collect::parseConfigText(R"({"task": "free_benchmark", "dump_path": "d"})");
    EXPECT_EQ(d.task, collect::Task::FreeBenchmark);
    EXPECT_EQ(d.freeBenchmark.pertMode, collect::PertMode::ImprovePrecision);
    EXPECT_FALSE(d.freeBenchmark.fix);
    EXPECT_FALSE(d.freeBenchmark.backward);
    EXPECT_FALSE(d.freeBenchmark.fuzzDeviceCpu);
    EXPECT_FALSE(d.freeBenchmark.ifPreheat);
    EXPECT_EQ(d.freeBenchmark.preheatStep, 15);
    EXPECT_EQ(d.freeBenchmark.maxSample, 20);

    const collect::Config c = collect::parseConfigText(R"({"task": "free_benchmark", "level": "L1",
        "free_benchmark": {"scope": [], "list": ["matmul"], "fuzz_device": "cpu", "pert_mode": "to_cpu",
                           "handler_type": "fix", "fuzz_level": "L1", "fuzz_stage": "forward",
                           "if_preheat": false, "preheat_step": 3, "max_sample": 4}})");
    EXPECT_EQ(c.list, std::vector<std::string> { "matmul" });
    EXPECT_TRUE(c.freeBenchmark.fuzzDeviceCpu);
    EXPECT_EQ(c.freeBenchmark.pertMode, collect::PertMode::ToCpu);
    EXPECT_TRUE(c.freeBenchmark.fix);
    EXPECT_EQ(c.freeBenchmark.preheatStep, 3);
    EXPECT_EQ(c.freeBenchmark.maxSample, 4);

    // scope holds full API names here (any number), not a two-name range.
    const collect::Config s = collect::parseConfigText(
        R"({"task": "free_benchmark", "free_benchmark": {"scope": ["Aten.mm.0.forward"], "pert_mode": "add_noise"}})");
    EXPECT_EQ(s.scope, std::vector<std::string> { "Aten.mm.0.forward" });
}

TEST(FreeBenchConfig, EveryConstraintNamesKeyAndPosition)
{
    // The rule is about handler_type: line 2, column 37 is where its value "fix" begins (counted by hand).
    const std::string fixNoise = "{\"task\": \"free_benchmark\",\n"
                                 " \"free_benchmark\": {\"handler_type\": \"fix\", \"pert_mode\": \"add_noise\"}}";
    const std::string e = errorOf(fixNoise);
    EXPECT_TRUE(contains(e, "config.json:2:37: error [collect.config]: \"handler_type\": \"fix\" needs")) << e;

    const auto fbError = [](const std::string& section) {
        return errorOf(R"({"task": "free_benchmark", "free_benchmark": )" + section + "}");
    };
    EXPECT_TRUE(contains(fbError(R"({"pert_mode": "to_cpu"})"), "\"fuzz_device\": \"cpu\" goes with"));
    EXPECT_TRUE(contains(fbError(R"({"fuzz_device": "cpu", "pert_mode": "add_noise"})"), "goes with"));
    EXPECT_TRUE(contains(fbError(R"({"fuzz_stage": "backward"})"), "needs a non-empty \"list\""));
    EXPECT_TRUE(contains(fbError(R"({"fuzz_stage": "backward", "list": []})"), "needs a non-empty \"list\""));
    EXPECT_TRUE(contains(fbError(R"({"scope": ["Aten.mm.0.forward"], "list": ["mm"]})"), "cannot both be set"));
    EXPECT_TRUE(contains(fbError(R"({"handler_type": "fix", "fuzz_stage": "backward", "list": ["mm"]})"),
                         "works in \"fuzz_stage\": \"forward\" only"));
    EXPECT_TRUE(contains(fbError(R"({"handler_type": "fix", "if_preheat": true})"), "\"if_preheat\": true"));
    EXPECT_TRUE(contains(fbError(R"({"if_preheat": 1})"), "\"if_preheat\" must be true or false"));
    EXPECT_TRUE(contains(fbError(R"({"if_preheat": "true"})"), "\"if_preheat\" must be true or false"));
    EXPECT_TRUE(contains(fbError(R"({"preheat_step": 0})"), "\"preheat_step\" must be an integer > 0"));
    EXPECT_TRUE(contains(fbError(R"({"max_sample": -2})"), "\"max_sample\" must be an integer > 0"));
    EXPECT_TRUE(contains(fbError(R"({"fuzz_level": "L2"})"), "\"fuzz_level\" must be one of L1"));
    EXPECT_TRUE(contains(fbError(R"({"pert_mode": "noise"})"), "\"pert_mode\" must be one of improve_precision"));
    EXPECT_TRUE(contains(fbError(R"({"fuzz_devic": "cpu"})"), "unknown key \"fuzz_devic\""));
    // fix with improve_precision and to_cpu is fine.
    EXPECT_EQ(fbError(R"({"handler_type": "fix"})"), "");
    EXPECT_EQ(fbError(R"({"handler_type": "fix", "pert_mode": "to_cpu", "fuzz_device": "cpu"})"), "");

    const std::string level = errorOf("{\"task\": \"free_benchmark\", \"level\": \"mix\"}");
    EXPECT_TRUE(contains(level, "config.json:1:37: error [collect.config]: free_benchmark runs at level \"L1\" only"))
        << level;
}

TEST(FreeBenchConfig, OptionsAreCheckedToo)
{
    TempDir temp;
    collect::Options o;
    o.task = collect::Task::FreeBenchmark;
    o.dumpPath = (temp.path() / "dump").string();
    collect::FreeBenchmarkConfig f;
    f.fix = true;
    f.pertMode = collect::PertMode::BitNoise;
    o.freeBenchmark = f;
    try {
        collect::PrecisionDebugger debugger(o);
        FAIL() << "no error";
    } catch (const collect::CollectError& e) {
        EXPECT_EQ(e.id(), "collect.config");
        EXPECT_TRUE(contains(e.what(), "\"handler_type\"")) << e.what();
    }
}

// ------------------------------------------------------------------------------------------------
// Perturbation layers (§11.3)

TEST(FreeBenchLayers, AddNoiseAddsEpsOnlyAboveItsSquareRoot)
{
    // float32: eps 1e-8, sqrt(eps) 1e-4. Expected values: the float sum, element by element.
    const std::vector<float> xs = { 1e-5f, 1e-3f, 0.5f, -2.0f, 3e-5f, 1.5e-4f, -1e-4f };
    const at::Tensor x = at::tensor(xs);
    const auto r = fb::addNoise(x);
    ASSERT_TRUE(r.tensor);
    ASSERT_EQ(r.tensor->scalar_type(), at::kFloat);
    for (std::size_t i = 0; i < xs.size(); ++i) {
        const float expected = std::fabs(xs[i]) > 1e-4f ? xs[i] + 1e-8f : xs[i];
        EXPECT_EQ(floatBits((*r.tensor)[static_cast<std::int64_t>(i)].item<float>()), floatBits(expected)) << i;
    }
    // 1e-3 + 1e-8 differs from 1e-3 in float32; 0.5 + 1e-8 rounds back to 0.5: the noise is below its ulp.
    EXPECT_NE((*r.tensor)[1].item<float>(), 1e-3f);
    EXPECT_EQ((*r.tensor)[2].item<float>(), 0.5f);

    // float16: eps 1e-6 (stored as the half nearest to it), sqrt 1e-3; sums rounded to half.
    const at::Tensor h = at::tensor(std::vector<float> { 1.5e-3f, 2.0f, 5e-4f, -0.0011f }).to(at::kHalf);
    const auto rh = fb::addNoise(h);
    ASSERT_TRUE(rh.tensor);
    ASSERT_EQ(rh.tensor->scalar_type(), at::kHalf);
    const float eps16 = static_cast<float>(c10::Half(1e-6f));
    for (std::int64_t i = 0; i < 4; ++i) {
        const float v = h[i].item<float>();
        const float expected = std::fabs(v) > 1e-3f ? static_cast<float>(c10::Half(v + eps16)) : v;
        EXPECT_EQ(rh.tensor->operator[](i).item<float>(), expected) << i;
    }
    EXPECT_NE(rh.tensor->operator[](0).item<float>(), h[0].item<float>()); // 1.5e-3's half ulp is 9.5e-7

    // Cancelled: unsupported dtype, empty, everything below eps.
    EXPECT_FALSE(fb::addNoise(at::tensor(std::vector<std::int64_t> { 1, 2 })).tensor);
    EXPECT_FALSE(fb::addNoise(at::empty({ 0 })).tensor);
    const auto tiny = fb::addNoise(at::tensor(std::vector<float> { 1e-9f, -5e-9f }));
    EXPECT_FALSE(tiny.tensor);
    EXPECT_FALSE(tiny.cancelReason.empty());
}

TEST(FreeBenchLayers, BitNoiseFlipsTheLastBitOfNormalElements)
{
    // float16: 1.0 (0x3C00), a subnormal (0x0001), the smallest normal itself (0x0400: not greater than
    // it, so kept), -2.0 (0xC000), +0.
    const auto h = fb::bitNoise(fromBits<std::uint16_t>({ 0x3C00, 0x0001, 0x0400, 0xC000, 0x0000, 0x0401 }, at::kHalf));
    ASSERT_TRUE(h.tensor);
    EXPECT_EQ(toBits<std::uint16_t>(*h.tensor),
              (std::vector<std::uint16_t> { 0x3C01, 0x0001, 0x0400, 0xC001, 0x0000, 0x0400 }));
    // bfloat16: 1.0 (0x3F80), smallest normal (0x0080, kept), 3.140625 (0x4049), a subnormal (0x0001).
    const auto b = fb::bitNoise(fromBits<std::uint16_t>({ 0x3F80, 0x0080, 0x4049, 0x0001 }, at::kBFloat16));
    ASSERT_TRUE(b.tensor);
    EXPECT_EQ(toBits<std::uint16_t>(*b.tensor), (std::vector<std::uint16_t> { 0x3F81, 0x0080, 0x4048, 0x0001 }));
    // float32 and float64.
    const auto f = fb::bitNoise(at::tensor(std::vector<float> { 1.0f, -0.75f }));
    ASSERT_TRUE(f.tensor);
    EXPECT_EQ(toBits<std::uint32_t>(*f.tensor), (std::vector<std::uint32_t> { 0x3F800001u, 0xBF400001u }));
    const auto d = fb::bitNoise(at::tensor(std::vector<double> { 1.0 }));
    ASSERT_TRUE(d.tensor);
    EXPECT_EQ(toBits<std::uint64_t>(*d.tensor), (std::vector<std::uint64_t> { 0x3FF0000000000001ull }));
    // Cancelled: integers, and all magnitudes below the dtype's abs_tol.
    EXPECT_FALSE(fb::bitNoise(at::tensor(std::vector<std::int32_t> { 3 })).tensor);
    EXPECT_FALSE(fb::bitNoise(at::tensor(std::vector<float> { 1e-9f })).tensor);
}

TEST(FreeBenchLayers, ChangeValueSwapsFirstAndLast)
{
    const auto one = fb::changeValue(at::tensor(std::vector<float> { 1, 2, 3 }));
    ASSERT_TRUE(one.tensor);
    EXPECT_TRUE(at::equal(*one.tensor, at::tensor(std::vector<float> { 3, 2, 1 })));
    const at::Tensor m = at::tensor(std::vector<float> { 1, 2, 3, 4 }).reshape({ 2, 2 });
    const auto two = fb::changeValue(m);
    ASSERT_TRUE(two.tensor);
    EXPECT_TRUE(at::equal(*two.tensor, at::tensor(std::vector<float> { 4, 2, 3, 1 }).reshape({ 2, 2 })));
    EXPECT_TRUE(at::equal(m, at::tensor(std::vector<float> { 1, 2, 3, 4 }).reshape({ 2, 2 }))); // a clone
    // 3-D: the rows t[0][0] and t[-1][-1] are swapped.
    const at::Tensor c = at::arange(8, at::kFloat).reshape({ 2, 2, 2 });
    const auto three = fb::changeValue(c);
    ASSERT_TRUE(three.tensor);
    EXPECT_TRUE(at::equal(*three.tensor, at::tensor(std::vector<float> { 6, 7, 2, 3, 4, 5, 0, 1 }).reshape({ 2, 2, 2 })));
    // (1, 3): t[0][0] and t[-1][-1] = t[0][2].
    const auto row = fb::changeValue(at::tensor(std::vector<float> { 1, 2, 3 }).reshape({ 1, 3 }));
    ASSERT_TRUE(row.tensor);
    EXPECT_TRUE(at::equal(*row.tensor, at::tensor(std::vector<float> { 3, 2, 1 }).reshape({ 1, 3 })));
    // Cancel conditions: 0-d, 1-D of one element, 2-D with size(1) == 0, 2-D (1, 1).
    EXPECT_FALSE(fb::changeValue(at::scalar_tensor(1.0)).tensor);
    EXPECT_FALSE(fb::changeValue(at::ones({ 1 })).tensor);
    EXPECT_FALSE(fb::changeValue(at::ones({ 3, 0 })).tensor);
    EXPECT_FALSE(fb::changeValue(at::ones({ 1, 1 })).tensor);
    EXPECT_TRUE(fb::changeValue(at::ones({ 2, 1 })).tensor); // size(0) >= 2 suffices
}

TEST(FreeBenchLayers, RatioFollowsSection11_4)
{
    // float32 forward: abs_tol = sqrt(1e-8) = 1e-4. r = [1, 2/2.5]; ratio = max(1, 2.5/2) = 1.25.
    const auto r = fb::tensorRatio(at::tensor(std::vector<float> { 1, 2 }), at::tensor(std::vector<float> { 1, 2.5 }), false);
    EXPECT_FALSE(r.flip);
    EXPECT_DOUBLE_EQ(r.value, 1.25);
    // Values below abs_tol are clamped to it: 1e-6 vs 5e-5 counts as equal.
    EXPECT_DOUBLE_EQ(fb::tensorRatio(at::tensor(std::vector<float> { 1e-6f }), at::tensor(std::vector<float> { 5e-5f }), false).value, 1.0);
    // Sign flip: o*p = -1 < -(1e-4)^2.
    EXPECT_TRUE(fb::tensorRatio(at::tensor(std::vector<float> { 1, -1 }), at::tensor(std::vector<float> { 1, 1 }), false).flip);
    // A product of -1e-9 is not a flip (> -1e-8).
    EXPECT_FALSE(fb::tensorRatio(at::tensor(std::vector<float> { 1e-5f }), at::tensor(std::vector<float> { -1e-4f }), false).flip);
    // The original is cast to the perturbed dtype first: a bf16 original against its fp32 rerun.
    const at::Tensor o = at::tensor(std::vector<float> { 1.0f + 1.0f / 256 }).to(at::kBFloat16); // rounds to 1.0
    EXPECT_DOUBLE_EQ(fb::tensorRatio(o, at::tensor(std::vector<float> { 1.0f + 1.0f / 256 }), false).value, 1.0 + 1.0 / 256);
}

TEST(FreeBenchLayers, ChunksPerSection11_4)
{
    EXPECT_EQ(fb::ratioChunks(1000), 1);
    EXPECT_EQ(fb::ratioChunks(31u << 20), 1);   // 2^(4-4) = 1
    EXPECT_EQ(fb::ratioChunks(32u << 20), 2);   // 2^(5-4)
    EXPECT_EQ(fb::ratioChunks(100u << 20), 4);  // floor(log2 100) = 6
    EXPECT_EQ(fb::ratioChunks(1ull << 40), 128);
}

// ------------------------------------------------------------------------------------------------
// Preheat (§11.6), driven with synthetic ratios

TEST(FreeBenchPreheat, SamplesTheSpecsCallsAndAdaptsThresholds)
{
    fb::Preheat p(3, 2);
    const std::string api = "Aten.mm";
    p.enterStep(0);
    for (int i = 0; i < 5; ++i)
        p.countTotal(api);
    EXPECT_EQ(p.total(api), 5);
    EXPECT_EQ(p.samplesPerStep(api), 2); // min(ceil(5/3), 2)
    EXPECT_DOUBLE_EQ(p.threshold(api, "torch.float32"), 2.05);

    // Step 1: S = {(3*0+1) mod 5, (3*1+1) mod 5} = {1, 4}.
    p.enterStep(1);
    std::vector<std::int64_t> sampled;
    for (int c = 1; c <= 5; ++c) {
        if (const auto s = p.sample(api)) {
            sampled.push_back(*s);
            p.addSample(api, "torch.float32", fb::FloatType::Float, c == 1 ? 1.001 : 1.002, true);
        }
    }
    EXPECT_EQ(sampled, (std::vector<std::int64_t> { 1, 4 }));
    // Only consistent samples, max 1.002 <= 2.05: halved distance, 1 + 1.05/2.
    EXPECT_DOUBLE_EQ(p.threshold(api, "torch.float32"), 1.525);
    EXPECT_TRUE(p.preheating(api, "torch.float32"));

    // Step 2: S = {2, (3+2) mod 5 = 0 -> 5}.
    p.enterStep(2);
    sampled.clear();
    for (int c = 1; c <= 5; ++c) {
        if (const auto s = p.sample(api)) {
            sampled.push_back(*s);
            const bool consistent = c == 2;
            p.addSample(api, "torch.float32", fb::FloatType::Float, consistent ? 1.01 : 1.3, consistent);
        }
    }
    EXPECT_EQ(sampled, (std::vector<std::int64_t> { 2, 5 }));
    // min(incon) 1.3 > max(con) 1.01: min(1.3, 1.525), preheating of this dtype stops.
    EXPECT_DOUBLE_EQ(p.threshold(api, "torch.float32"), 1.3);
    EXPECT_FALSE(p.preheating(api, "torch.float32"));

    // Step 3 >= preheat_step: no sampling.
    p.enterStep(3);
    for (int c = 1; c <= 5; ++c)
        EXPECT_FALSE(p.sample(api));
}

TEST(FreeBenchPreheat, AdjustmentRules)
{
    const auto oneSample = [](double ratio, bool consistent, fb::FloatType type, const std::string& dtype) {
        fb::Preheat p(2, 5); // total 1: k = min(ceil(1/2), 5) = 1, S = {(0 + 1) mod 1 -> 1}
        p.enterStep(0);
        p.countTotal("A.x");
        p.enterStep(1);
        EXPECT_TRUE(p.sample("A.x"));
        p.addSample("A.x", dtype, type, ratio, consistent);
        return std::pair { p.threshold("A.x", dtype), p.preheating("A.x", dtype) };
    };
    // Only consistent, above the threshold: doubled distance, 1 + 1.05 * 2.
    EXPECT_DOUBLE_EQ(oneSample(3.0, true, fb::FloatType::Float, "torch.float32").first, 3.1);
    // Only inconsistent: min(1.5, 2.05), preheating stops.
    const auto incon = oneSample(1.5, false, fb::FloatType::Float, "torch.float32");
    EXPECT_DOUBLE_EQ(incon.first, 1.5);
    EXPECT_FALSE(incon.second);
    // Never below the dtype's default: 1.0001 -> fp32's 1.0002, bf16's 1.004.
    EXPECT_DOUBLE_EQ(oneSample(1.0001, false, fb::FloatType::Float, "torch.float32").first, 1.0002);
    EXPECT_DOUBLE_EQ(oneSample(1.0001, false, fb::FloatType::BFloat16, "torch.bfloat16").first, 1.004);
    // An API first seen after step 0 has total 0: never sampled.
    fb::Preheat late(2, 2);
    late.enterStep(1);
    EXPECT_FALSE(late.sample("A.y"));
}

// ------------------------------------------------------------------------------------------------
// free_benchmark.csv (§11.8)

TEST(FreeBenchCsv, CellsAsPythonsCsvWritesThem)
{
    fb::CsvRow row;
    row.rank = 3;
    row.pertMode = "bit_noise";
    row.step = 7;
    row.apiName = "Aten.sum.0.forward";
    row.maxRel = fb::maxRelText(1.5);
    row.dtype = "torch.float16";
    row.shape = fb::torchSizeText({ 4, 8 });
    EXPECT_EQ(fb::csvLine(row), "3,bit_noise,forward,7,Aten.sum.0.forward,0.5,torch.float16,\"torch.Size([4, 8])\",\r\n");
    row.outputIndex = 1;
    row.maxRel = "symbol_flipping";
    row.shape = fb::torchSizeText({});
    EXPECT_EQ(fb::csvLine(row), "3,bit_noise,forward,7,Aten.sum.0.forward,symbol_flipping,torch.float16,torch.Size([]),1\r\n");
    EXPECT_EQ(fb::maxRelText(1.0 + 1.0 / 1024), "0.0009765625");
    EXPECT_EQ(fb::maxRelText(INFINITY), "inf");
    EXPECT_EQ(fb::pureName("Aten.matmul.40.forward"), "Aten.matmul");
    EXPECT_EQ(fb::defaultThreshold(fb::FloatType::Half) - 1, 0.0020000000000000018); // the docs' 0.002
}

TEST(FreeBenchCsv, FileHasBomHeaderAndAppendsInAFolderItClaims)
{
    TempDir temp;
    fb::CsvFile csv(temp.path() / "dump", "step0", "rank");
    const fs::path file = temp.path() / "dump" / "step0" / "rank" / "free_benchmark.csv";
    EXPECT_EQ(csv.path(), file);
    EXPECT_FALSE(fs::exists(file.parent_path())); // no row, no folder
    fb::CsvRow row;
    row.pertMode = "no_change";
    row.apiName = "Aten.a.0.forward";
    row.maxRel = "0.5";
    ASSERT_FALSE(csv.append(row));
    row.apiName = "Aten.b.0.forward";
    ASSERT_FALSE(csv.append(row));
    EXPECT_EQ(readAll(file), kHead + "0,no_change,forward,0,Aten.a.0.forward,0.5,,,\r\n"
                                     "0,no_change,forward,0,Aten.b.0.forward,0.5,,,\r\n");
}

// Issue 25: the free benchmark's CSV goes through the one output writer (util/outputfile.h).
TEST(FreeBenchCsv, AFullDiskLeavesNoFileAndNoHalfRow)
{
    TempDir temp;
    fb::CsvFile csv(temp.path(), "step0", "rank");
    const fs::path file = csv.path();
    fb::CsvRow row;
    row.pertMode = "no_change";
    row.apiName = "Aten.a.0.forward";
    row.maxRel = "0.5";
    setTestFullDisk("write:1"); // the header's write
    auto problem = csv.append(row);
    setTestFullDisk("");
    ASSERT_TRUE(problem);
    EXPECT_NE(problem->message.find(std::strerror(ENOSPC)), std::string::npos) << problem->message;
    EXPECT_TRUE(fs::is_empty(file.parent_path())); // no file, no free_benchmark.csv.tmp
    ASSERT_FALSE(csv.append(row));                 // the folder is this run's: the header is tried again
    setTestFullDisk("write:1"); // the second row's write
    row.apiName = "Aten.b.0.forward";
    problem = csv.append(row);
    setTestFullDisk("");
    ASSERT_TRUE(problem);
    EXPECT_EQ(readAll(file), kHead + "0,no_change,forward,0,Aten.a.0.forward,0.5,,,\r\n");
}

// Issue 33: the CSV's folder follows the collectors' folder rule (dumpfolder.h) and the file is never replaced.
TEST(FreeBenchCsv, AnEarlierRunsFileIsRefusedNeverReplaced)
{
    TempDir temp;
    const fs::path file = temp.path() / "step0" / "rank" / "free_benchmark.csv";
    writeFile(file, "an earlier run's finding\r\n");
    fb::CsvFile csv(temp.path(), "step0", "rank");
    fb::CsvRow row;
    row.apiName = "Aten.a.0.forward";
    const auto problem = csv.append(row);
    ASSERT_TRUE(problem);
    EXPECT_EQ(problem->id, "collect.dump-path");
    EXPECT_NE(problem->format().find("already exists"), std::string::npos) << problem->format();
    EXPECT_NE(problem->format().find((temp.path() / "step0" / "rank").string()), std::string::npos);
    EXPECT_TRUE(csv.append(row)); // and stays refused
    EXPECT_EQ(readAll(file), "an earlier run's finding\r\n");
    EXPECT_EQ(std::distance(fs::directory_iterator(file.parent_path()), fs::directory_iterator()), 1);
}

TEST(FreeBenchCsv, NeverFollowsASymlinkPlantedBelowDumpPath)
{
    TempDir temp;
    const fs::path victim = temp.path() / "victim.txt";
    writeFile(victim, "not yours\n");
    const fs::path elsewhere = temp.path() / "elsewhere";
    fs::create_directories(elsewhere);
    fb::CsvRow row;
    row.apiName = "Aten.a.0.forward";
    {
        // A symlink at the step folder would send the CSV outside dump_path.
        fs::create_directories(temp.path() / "dump1");
        fs::create_directory_symlink(elsewhere, temp.path() / "dump1" / "step0");
        fb::CsvFile csv(temp.path() / "dump1", "step0", "rank");
        const auto problem = csv.append(row);
        ASSERT_TRUE(problem);
        EXPECT_NE(problem->format().find("symlink"), std::string::npos) << problem->format();
        EXPECT_TRUE(fs::is_empty(elsewhere));
    }
    {
        // A symlink at the file's name in a folder that exists: refused with the folder, not followed.
        const fs::path file = temp.path() / "dump2" / "rank" / "free_benchmark.csv";
        fs::create_directories(file.parent_path());
        fs::create_symlink(victim, file);
        fb::CsvFile csv(temp.path() / "dump2", "", "rank");
        EXPECT_TRUE(csv.append(row));
        EXPECT_EQ(readAll(victim), "not yours\n");
        EXPECT_FALSE(fs::exists(file.string() + ".tmp"));
    }
}

// The debugger: a rerun into the dump_path of an earlier free benchmark is reported by stop(), and the earlier
// CSV is left as it was.
TEST(FreeBenchRun, ARerunIntoAUsedDumpPathIsRefusedByStop)
{
    TempDir temp;
    std::vector<std::string> log;
    const auto run = [&] {
        collect::PrecisionDebugger debugger(
            freeBenchOptions(temp.path(), R"({"pert_mode": "change_value", "list": ["cumsum"]})", log));
        const at::Tensor x = at::tensor(std::vector<float> { 1, 2, 4 });
        debugger.start();
        at::cumsum(x, 0);
        debugger.stop();
    };
    ASSERT_NO_THROW(run());
    const std::string first = readAll(csvOf(temp.path()));
    ASSERT_NE(first.find("Aten.cumsum.0.forward"), std::string::npos);
    try {
        run();
        ADD_FAILURE() << "the rerun was not refused";
    } catch (const collect::CollectError& e) {
        EXPECT_EQ(std::string(e.id()), "collect.dump-path");
        EXPECT_NE(std::string(e.what()).find("already exists"), std::string::npos) << e.what();
    }
    EXPECT_EQ(readAll(csvOf(temp.path())), first);
}

// ------------------------------------------------------------------------------------------------
// The debugger on real ops

// A child forked while the engine intercepts (a Python DataLoader worker) inherits the thread's dispatch key: its
// ops are not the training's, and none of them may be perturbed or written to the parent's CSV.
TEST(FreeBenchRun, AForkedChildIsNotBenchmarked)
{
    TempDir temp;
    std::vector<std::string> log;
    {
        collect::PrecisionDebugger debugger(
            freeBenchOptions(temp.path(), R"({"pert_mode": "change_value", "list": ["cumsum"]})", log));
        const at::Tensor x = at::tensor(std::vector<float> { 1, 2, 4 });
        debugger.start();
        const pid_t child = ::fork();
        if (child == 0) {
            const at::Tensor c = at::cumsum(x, 0); // would be a row (ratio 4) if the child were benchmarked
            ::_exit(c.equal(at::tensor(std::vector<float> { 1, 3, 7 })) ? 0 : 1);
        }
        ASSERT_GT(child, 0);
        int status = 0;
        ASSERT_EQ(::waitpid(child, &status, 0), child);
        EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        debugger.stop();
    }
    EXPECT_FALSE(fs::exists(csvOf(temp.path()).parent_path())); // no row, so no folder: nothing from the child
}

TEST(FreeBenchRun, ChangeValueRowsGolden)
{
    TempDir temp;
    std::vector<std::string> log;
    {
        collect::PrecisionDebugger debugger(
            freeBenchOptions(temp.path(), R"({"pert_mode": "change_value", "list": ["cumsum", "chunk", "sum", "relu"]})", log));
        const at::Tensor x = at::tensor(std::vector<float> { 1, 2, 4 });
        const at::Tensor six = at::tensor(std::vector<float> { 1, 2, 3, 4, 5, 6 });
        debugger.start();
        const at::Tensor c = at::cumsum(x, 0); // [1, 3, 7] vs [4, 6, 7]: r = [1/4, 1/2, 1], ratio 4
        const at::Tensor s = at::sum(x);       // 7 either way: consistent, no row
        const auto parts = six.chunk(2);       // [6,2,3 | 4,5,1] vs [1,2,3 | 4,5,6]: ratio 6 for both parts
        const at::Tensor r = at::relu(at::scalar_tensor(2.0)); // 0-d: change_value is cancelled
        debugger.stop();
        // The training's own values are untouched.
        EXPECT_TRUE(at::equal(c, at::tensor(std::vector<float> { 1, 3, 7 })));
        EXPECT_EQ(s.item<float>(), 7.0f);
        EXPECT_TRUE(at::equal(parts[0], at::tensor(std::vector<float> { 1, 2, 3 })));
        EXPECT_EQ(r.item<double>(), 2.0);
        debugger.step();
    }
    EXPECT_EQ(readAll(csvOf(temp.path())),
              kHead + "0,change_value,forward,0,Aten.cumsum.0.forward,3.0,torch.float32,torch.Size([3]),\r\n"
                      "0,change_value,forward,0,Aten.chunk.0.forward,5.0,torch.float32,torch.Size([3]),0\r\n"
                      "0,change_value,forward,0,Aten.chunk.0.forward,5.0,torch.float32,torch.Size([3]),1\r\n");
    EXPECT_NE(std::find(log.begin(), log.end(), "[msprobe] Free benchmark: Perturbation is change_value of Aten.cumsum.0.forward."),
              log.end());
    EXPECT_TRUE(std::any_of(log.begin(), log.end(), [](const std::string& l) {
        return l.starts_with("[msprobe] Free benchmark: For Aten.relu.0.forward, ") && l.ends_with(". Cancel perturbation.");
    }));
    // No dump files: only the CSV.
    EXPECT_FALSE(fs::exists(csvOf(temp.path()).parent_path() / "dump.json"));
}

TEST(FreeBenchRun, ScopeTakesExactNamesAndNoChangeIsQuiet)
{
    TempDir temp;
    std::vector<std::string> log;
    {
        collect::PrecisionDebugger debugger(
            freeBenchOptions(temp.path(), R"({"pert_mode": "change_value", "scope": ["Aten.cumsum.1.forward"]})", log));
        const at::Tensor x = at::tensor(std::vector<float> { 1, 2, 4 });
        debugger.start();
        at::cumsum(x, 0);
        at::cumsum(x * 2, 0); // [2, 6, 14] vs [8, 12, 14]: ratio 4
        debugger.stop();
    }
    EXPECT_EQ(readAll(csvOf(temp.path())),
              kHead + "0,change_value,forward,0,Aten.cumsum.1.forward,3.0,torch.float32,torch.Size([3]),\r\n");

    // no_change on deterministic CPU ops: threshold 1.0 and still nothing to report, so no file.
    TempDir quiet;
    {
        collect::PrecisionDebugger debugger(freeBenchOptions(quiet.path(), R"({"pert_mode": "no_change"})", log));
        const at::Tensor w = at::randn({ 8, 8 });
        debugger.start();
        (at::matmul(w, w).relu() * 3).sum();
        debugger.stop();
    }
    EXPECT_FALSE(fs::exists(csvOf(quiet.path())));
}

TEST(FreeBenchRun, UnstableOpOfTheExampleIsFlaggedAndWellConditionedOnesAreNot)
{
    TempDir temp;
    std::vector<std::string> log;
    at::set_num_threads(1);
    collect::seedAll(2024, false);
    example::ModelSize size;
    size.unstable = true;
    example::ExampleNet model(size);
    {
        collect::PrecisionDebugger debugger(
            freeBenchOptions(temp.path(), R"({"pert_mode": "bit_noise", "list": ["sum", "relu", "gelu", "layer_norm"]})", log));
        for (std::int64_t step = 0; step < 2; ++step) {
            const example::Batch batch = example::makeBatch(step, size);
            debugger.start();
            const auto loss = torch::nn::functional::cross_entropy(collect::call(model)(batch.images), batch.labels);
            loss.backward();
            debugger.stop();
            debugger.step();
        }
    }
    for (int step = 0; step < 2; ++step) {
        const std::string csv = readAll(csvOf(temp.path(), step));
        EXPECT_TRUE(contains(csv, ",bit_noise,forward," + std::to_string(step) + ",Aten.sum.0.forward,")) << csv;
        EXPECT_FALSE(contains(csv, "Aten.relu")) << csv;
        EXPECT_FALSE(contains(csv, "Aten.gelu")) << csv;
        // The block's two fp32 layer_norms; the third, in bf16 (--unstable-op), moves with any flipped bit.
        EXPECT_FALSE(contains(csv, "Aten.layer_norm.0.") || contains(csv, "Aten.layer_norm.1.")) << csv;
    }
    // Every checked op announced its perturbation.
    EXPECT_NE(std::find(log.begin(), log.end(), "[msprobe] Free benchmark: Perturbation is bit_noise of Aten.gelu.0.forward."),
              log.end());
}

TEST(FreeBenchRun, FixReplacesOutputsAndTrainingGoesOn)
{
    TempDir temp;
    std::vector<std::string> log;
    const at::Tensor x = at::randn({ 4, 16 }).to(at::kBFloat16).requires_grad_();
    const at::Tensor plain = at::layer_norm(x, { 16 }).detach();
    const at::Tensor wanted = at::layer_norm(x.detach().to(at::kFloat), { 16 }).to(at::kBFloat16);
    ASSERT_FALSE(at::equal(plain, wanted)); // the premise: bf16's kernel rounds differently
    {
        collect::PrecisionDebugger debugger(freeBenchOptions(temp.path(), R"({"handler_type": "fix", "list": ["layer_norm"]})", log));
        debugger.start();
        const at::Tensor y = at::layer_norm(x, { 16 });
        EXPECT_TRUE(at::equal(y.detach(), wanted));
        EXPECT_TRUE(y.requires_grad()); // the output keeps its autograd identity
        (y.to(at::kFloat) * at::arange(16, at::kFloat)).sum().backward();
        debugger.stop();
        ASSERT_TRUE(x.grad().defined());
        EXPECT_TRUE(at::isfinite(x.grad().to(at::kFloat)).all().item<bool>());
    }
    EXPECT_FALSE(fs::exists(csvOf(temp.path()))); // fix writes no rows

    // The example with --unstable-op trains on under fix mode, and its bf16 layer_norm changes the loss.
    const auto train = [](bool withDebugger, const fs::path& root, std::vector<std::string>& lines) {
        at::set_num_threads(1);
        collect::seedAll(2024, false);
        example::ModelSize size;
        size.unstable = true;
        example::ExampleNet model(size);
        torch::optim::SGD sgd(model->parameters(), torch::optim::SGDOptions(0.1));
        std::unique_ptr<collect::PrecisionDebugger> debugger;
        if (withDebugger)
            debugger = std::make_unique<collect::PrecisionDebugger>(freeBenchOptions(root, R"({"handler_type": "fix"})", lines));
        std::vector<double> losses;
        for (std::int64_t step = 0; step < 3; ++step) {
            const example::Batch batch = example::makeBatch(step, size);
            if (debugger)
                debugger->start();
            const auto loss = torch::nn::functional::cross_entropy(collect::call(model)(batch.images), batch.labels);
            loss.backward();
            if (debugger)
                debugger->stop();
            sgd.step();
            sgd.zero_grad();
            if (debugger)
                debugger->step();
            losses.push_back(loss.item<double>());
        }
        return losses;
    };
    TempDir fixRun;
    const auto plainLosses = train(false, fixRun.path(), log);
    const auto fixedLosses = train(true, fixRun.path(), log);
    ASSERT_EQ(fixedLosses.size(), 3u);
    for (const double l : fixedLosses)
        EXPECT_TRUE(std::isfinite(l));
    EXPECT_NE(plainLosses, fixedLosses);
}

TEST(FreeBenchRun, PreheatCountsInStepZeroAndSamplesLater)
{
    TempDir temp;
    std::vector<std::string> log;
    {
        collect::PrecisionDebugger debugger(freeBenchOptions(
            temp.path(), R"({"pert_mode": "change_value", "list": ["cumsum"], "if_preheat": true, "preheat_step": 2, "max_sample": 2})",
            log));
        const at::Tensor x = at::tensor(std::vector<float> { 1, 2, 4 });
        for (int step = 0; step < 3; ++step) {
            debugger.start();
            at::cumsum(x, 0);
            at::cumsum(x, 0);
            debugger.stop();
            debugger.step();
        }
    }
    // Step 0 only counts: no file. Step 1: threshold 2.05 < ratio 4, rows for both calls; total 2, k =
    // min(ceil(2/2), 2) = 1, S = {(0 + 1) mod 2} = {1}.
    EXPECT_FALSE(fs::exists(csvOf(temp.path(), 0)));
    const std::string step1 = readAll(csvOf(temp.path(), 1));
    EXPECT_TRUE(contains(step1, ",Aten.cumsum.0.forward,3.0,") && contains(step1, ",Aten.cumsum.1.forward,3.0,")) << step1;
    EXPECT_NE(std::find(log.begin(), log.end(),
                        "[msprobe] Free benchmark: preheat sample in step1api_name Aten.cumsum.0.forward, curr_called_seq: 1/2"),
              log.end());
    // Step 2 >= preheat_step: no more samples.
    EXPECT_FALSE(std::any_of(log.begin(), log.end(), [](const std::string& l) { return contains(l, "preheat sample in step2"); }));
}

TEST(FreeBenchRun, BackwardStageComparesInputGradients)
{
    TempDir temp;
    std::vector<std::string> log;
    at::Tensor gx, gy;
    {
        collect::PrecisionDebugger debugger(freeBenchOptions(
            temp.path(), R"({"pert_mode": "change_value", "fuzz_stage": "backward", "list": ["mul"]})", log));
        const at::Tensor x = at::tensor(std::vector<float> { 1, 2, 4 }).requires_grad_();
        const at::Tensor y = at::tensor(std::vector<float> { 3, 5, 7 }).requires_grad_();
        debugger.start();
        at::sum(at::mul(x, y)).backward(); // grad_output of mul: ones
        debugger.stop();
        gx = x.grad().clone();
        gy = y.grad().clone();
    }
    // The training's gradients are untouched: d/dx = y, d/dy = x.
    EXPECT_TRUE(at::equal(gx, at::tensor(std::vector<float> { 3, 5, 7 })));
    EXPECT_TRUE(at::equal(gy, at::tensor(std::vector<float> { 1, 2, 4 })));
    // change_value swaps x (the first grad-requiring input) to [4, 2, 1]: d/dx = y is unchanged, d/dy
    // becomes [4, 2, 1] against [1, 2, 4]: r = [1/4, 1, 4], ratio 4, max_rel 3.0 at index 1.
    EXPECT_EQ(readAll(csvOf(temp.path())),
              kHead + "0,change_value,backward,0,Aten.mul.0.backward,3.0,torch.float32,torch.Size([3]),1\r\n");
    EXPECT_NE(std::find(log.begin(), log.end(), "[msprobe] Free benchmark: Perturbation is change_value of Aten.mul.0.backward."),
              log.end());
}

TEST(FreeBenchRun, ToCpuSingleCompareFlagsAPositiveBias)
{
    TempDir temp;
    std::vector<std::string> log;
    {
        collect::PrecisionDebugger debugger(
            freeBenchOptions(temp.path(), R"({"pert_mode": "to_cpu", "fuzz_device": "cpu", "list": ["add"]})", log));
        const at::Tensor one = at::ones({ 4 }, at::kBFloat16);
        debugger.start();
        // 1 + 3*2^-9 = 1.005859375 rounds to bf16's 1.0078125: rel_err 0.00194 < 2^-8, but the error
        // balance +0.00194 > 1e-4 (signed: only a positive bias fails).
        at::add(one, at::full({ 4 }, 3.0 / 512, at::kBFloat16));
        // 1 + 2^-8 ties to 1.0: rel_err 2^-8 / (1 + 2^-8) < 2^-8 and a negative balance: consistent.
        at::add(one, at::full({ 4 }, 1.0 / 256, at::kBFloat16));
        debugger.stop();
    }
    EXPECT_EQ(readAll(csvOf(temp.path())), kHead + "0,to_cpu,forward,0,Aten.add.0.forward,,torch.bfloat16,torch.Size([4]),\r\n");
}

TEST(FreeBenchRun, OneDebuggerPerProcess)
{
    TempDir temp;
    std::vector<std::string> log;
    collect::PrecisionDebugger first(freeBenchOptions(temp.path(), R"({"pert_mode": "no_change"})", log));
    try {
        collect::PrecisionDebugger second(freeBenchOptions(temp.path(), R"({"pert_mode": "no_change"})", log));
        FAIL() << "no error";
    } catch (const collect::CollectError& e) {
        EXPECT_EQ(e.id(), "collect.duplicate");
    }
}

TEST(FreeBenchRun, ExampleProgramWithUnstableOp)
{
    // The example as a user runs it: --config with task free_benchmark, --unstable-op; log on stderr.
    TempDir temp;
    writeFile(temp.path() / "config.json",
              R"({"task": "free_benchmark", "free_benchmark": {"pert_mode": "bit_noise", "list": ["sum", "relu", "gelu"]}})");
    const fs::path dump = temp.path() / "dump";
    const std::string command = std::string(PROBESCOPE_EXAMPLE_TRAIN) + " --config " + (temp.path() / "config.json").string()
        + " --dump-path " + dump.string() + " --unstable-op --steps 2 > " + (temp.path() / "out.txt").string() + " 2> "
        + (temp.path() / "err.txt").string();
    ASSERT_EQ(std::system(command.c_str()), 0) << readAll(temp.path() / "err.txt");
    const std::string err = readAll(temp.path() / "err.txt");
    EXPECT_TRUE(contains(err, "[msprobe] Free benchmark: Perturbation is bit_noise of Aten.sum.0.forward.\n")) << err;
    EXPECT_TRUE(contains(readAll(temp.path() / "out.txt"), "step 1: loss "));
    for (int step = 0; step < 2; ++step) {
        const std::string csv = readAll(dump / ("step" + std::to_string(step)) / "rank" / "free_benchmark.csv");
        EXPECT_TRUE(csv.starts_with(kHead)) << csv;
        EXPECT_TRUE(contains(csv, "\r\n0,bit_noise,forward," + std::to_string(step) + ",Aten.sum.0.forward,")) << csv;
        EXPECT_FALSE(contains(csv, "Aten.relu") || contains(csv, "Aten.gelu")) << csv;
        EXPECT_FALSE(fs::exists(dump / ("step" + std::to_string(step)) / "rank" / "dump.json"));
    }
    // Without --unstable-op nothing is flagged: no file.
    const fs::path quiet = temp.path() / "quiet";
    const std::string plain = std::string(PROBESCOPE_EXAMPLE_TRAIN) + " --config " + (temp.path() / "config.json").string()
        + " --dump-path " + quiet.string() + " --steps 1 > /dev/null 2>&1";
    ASSERT_EQ(std::system(plain.c_str()), 0);
    EXPECT_FALSE(fs::exists(quiet / "step0" / "rank" / "free_benchmark.csv"));
}
