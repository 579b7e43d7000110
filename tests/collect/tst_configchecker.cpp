// SPDX-License-Identifier: Apache-2.0
// ConfigChecker for LibTorch programs (docs/config-check.md, "The dynamic pack"): msprobe's entries per step and
// rank, their JSON as Python's json.dumps spells it, the features torch computes, random op counts, the compare of
// two C++ packs naming the perturbed weight and step, and the refusals (an existing pack, a taken entry).
#include "probescope/collect/config.h"
#include "probescope/collect/configchecker.h"

#include "core/setupcheck/configcompare.h"
#include "core/setupcheck/pyjson.h"
#include "core/tempdir.h"
#include "core/util/pytext.h"
#include "core/util/ziparchive.h"

#include <ATen/ATen.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/module.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

namespace probescope::collect {
namespace {

struct Tiny : torch::nn::Module
{
    Tiny() { fc = register_module("fc", torch::nn::Linear(3, 2)); }
    torch::nn::Linear fc { nullptr };
};

std::vector<std::string> names(const std::filesystem::path& zip)
{
    auto reader = ZipReader::open(zip);
    EXPECT_TRUE(reader) << (reader ? "" : reader.error().message);
    std::vector<std::string> out;
    if (reader)
        for (const auto& entry : (*reader)->entries())
            out.push_back(entry.name);
    return out;
}

std::string entry(const std::filesystem::path& zip, const std::string& name)
{
    auto reader = ZipReader::open(zip);
    if (!reader || !(*reader)->find(name))
        return {};
    auto text = (*reader)->read(*(*reader)->find(name));
    return text ? *text : std::string {};
}

/// Two steps of a tiny model; `scale` multiplies fc.weight before step 0 (the perturbed side), `randCalls`
/// at::rand calls per step.
void train(const std::filesystem::path& zip, double scale, int randCalls)
{
    at::manual_seed(7);
    auto model = std::make_shared<Tiny>();
    {
        const at::NoGradGuard noGrad;
        model->fc->weight.mul_(scale);
    }
    ConfigChecker checker(model, zip.string());
    for (int step = 0; step < 2; ++step) {
        (void)at::randn({ 4, 3 });
        for (int i = 0; i < randCalls; ++i)
            (void)at::rand({ 2 });
        const at::Tensor x = at::linspace(-1.0, 1.0, 12).reshape({ 4, 3 }) * (step + 1);
        checker.beforeForward({ x }, { { "mask", c10::IValue(std::vector<at::Tensor> { at::ones({ 2 }) }) } });
        model->fc->forward(x).sum().backward();
        const at::NoGradGuard noGrad;
        for (auto& p : model->parameters()) {
            p.sub_(p.grad() * 0.1);
            p.mutable_grad().zero_();
        }
    }
}

TEST(ConfigChecker, PacksMsprobesEntriesPerStepAndRank)
{
    testing::TempDir dir;
    ConfigChecker::applyPatches();
    const auto zip = dir.path() / "pack.zip";
    ASSERT_EQ(::unsetenv("RANK"), 0);
    train(zip, 1.0, 1);
    EXPECT_EQ(names(zip), (std::vector<std::string> { "env", "dataset/step0/rank0/dataset.json",
                                                     "weights/step0/rank0/weight.json", "random/rank0.json",
                                                     "dataset/step1/rank0/dataset.json",
                                                     "weights/step1/rank0/weight.json" }));

    // weight.json: json.dumps(indent=4) of {name: {max, min, mean, norm}} with Python's float repr.
    auto weights = setupcheck::parsePyJson(entry(zip, "weights/step0/rank0/weight.json"), "weight.json");
    ASSERT_TRUE(weights) << weights.error().message;
    at::manual_seed(7);
    Tiny fresh;
    const at::Tensor w = fresh.fc->weight.detach();
    const std::string expected = "{\n    \"fc.weight\": {\n        \"max\": " + pyFloatRepr(w.max().item<double>())
                                 + ",\n        \"min\": " + pyFloatRepr(w.min().item<double>())
                                 + ",\n        \"mean\": " + pyFloatRepr(w.mean().item<double>())
                                 + ",\n        \"norm\": " + pyFloatRepr(w.norm().item<double>()) + "\n    },";
    EXPECT_EQ(entry(zip, "weights/step0/rank0/weight.json").substr(0, expected.size()), expected);
    EXPECT_EQ(setupcheck::pyJsonDumps(*weights), entry(zip, "weights/step0/rank0/weight.json"));

    // dataset.json: args by index, kwargs by name, a list of tensors by index.
    const std::string dataset = entry(zip, "dataset/step1/rank0/dataset.json");
    auto parsed = setupcheck::parsePyJson(dataset, "dataset.json");
    ASSERT_TRUE(parsed) << parsed.error().message;
    EXPECT_EQ(setupcheck::pyJsonDumps(*parsed), dataset);
    EXPECT_NE(dataset.find("\"args\": {\n        \"0\": {\n            \"max\": "), std::string::npos) << dataset;
    EXPECT_NE(dataset.find("\"kwargs\": {\n        \"mask\": {\n            \"0\": {\n                \"max\": 1.0,"),
              std::string::npos)
        << dataset;

    // random: the ops counted since applyPatches (seed and randn/rand of step 0), outermost calls only.
    const std::string random = entry(zip, "random/rank0.json");
    EXPECT_NE(random.find("\"torch.randn\": [\n        {\n            \"count\": 1,\n            \"stack\": []"),
              std::string::npos)
        << random;
    EXPECT_NE(random.find("\"torch.rand\": [\n        {\n            \"count\": 1,"), std::string::npos) << random;
    EXPECT_EQ(random.find("uniform"), std::string::npos) << random;

    // env: json.dumps(os.environ) of this process's variables, ensure_ascii escapes.
    ASSERT_EQ(::setenv("PROBESCOPE_CONFIGCHECK_PROBE", "x\"y\xc3\xa9", 1), 0);
    const auto envZip = dir.path() / "env.zip";
    { ConfigChecker envOnly(nullptr, envZip.string()); }
    EXPECT_NE(entry(envZip, "env").find("    \"PROBESCOPE_CONFIGCHECK_PROBE\": \"x\\\"y\\u00e9\""), std::string::npos)
        << entry(envZip, "env");
    EXPECT_EQ(names(envZip), std::vector<std::string> { "env" });
}

TEST(ConfigChecker, TwoPacksCompareAsMsprobeWould)
{
    testing::TempDir dir;
    ConfigChecker::applyPatches();
    train(dir.path() / "bench.zip", 1.0, 1);
    train(dir.path() / "cmp.zip", 1.001, 2);
    auto outcome = setupcheck::compareConfigPacks(dir.path() / "bench.zip", dir.path() / "cmp.zip", dir.path() / "out");
    ASSERT_TRUE(outcome) << outcome.error().message;
    std::map<std::string, std::string> summary(outcome->summary.begin(), outcome->summary.end());
    EXPECT_EQ(summary["env"], "pass");
    EXPECT_EQ(summary["dataset"], "pass") << "the inputs do not depend on the weights";
    EXPECT_EQ(summary["weights"], "error");
    EXPECT_EQ(summary["random"], "error") << "cmp calls rand twice per step";
}

TEST(ConfigChecker, RefusesAnExistingPackAndATakenEntry)
{
    testing::TempDir dir;
    const auto zip = dir.path() / "pack.zip";
    ASSERT_TRUE(writeZip(zip, { { "env", "{}" } }));
    const std::string before = entry(zip, "env");
    auto model = std::make_shared<Tiny>();
    try {
        ConfigChecker checker(model, zip.string());
        FAIL() << "an existing pack was accepted";
    } catch (const CollectError& e) {
        EXPECT_NE(std::string(e.what()).find(zip.string()), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("already exists"), std::string::npos) << e.what();
    }
    EXPECT_EQ(names(zip), std::vector<std::string> { "env" });

    // Rank 1 of a job joins the pack rank 0 made; a second rank 1 (a stale pack) is refused at its first entry.
    ConfigChecker rank1(model, zip.string(), 1);
    rank1.beforeForward({ at::ones({ 1, 3 }) });
    const auto after = names(zip);
    ASSERT_EQ(after.size(), 3U);
    ConfigChecker again(model, zip.string(), 1);
    try {
        again.beforeForward({ at::ones({ 1, 3 }) });
        FAIL() << "a second rank 1 replaced or added to rank 1's entries";
    } catch (const CollectError& e) {
        EXPECT_NE(std::string(e.what()).find(zip.string()), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find(after[1]), std::string::npos) << e.what();
    }
    EXPECT_EQ(names(zip), after);
    EXPECT_EQ(entry(zip, "env"), before);
    EXPECT_THROW(ConfigChecker(model, (dir.path() / "pack.txt").string()), CollectError);
}

} // namespace
} // namespace probescope::collect
