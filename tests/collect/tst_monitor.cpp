// SPDX-License-Identifier: Apache-2.0
// The monitor of the collection library (trainermon.h, monitorsession.h): msprobe 26's config rules, the CSV cells
// as pandas writes them, the alert rules' messages and anomaly.json as Python writes them, and the C++ TrainerMon
// on a LibTorch model, read back by core/monitor's data2db.
#include "core/collect/monitorsession.h"
#include "core/collect/monitortorch.h"
#include "core/monitor/monitordb.h"
#include "core/util/fileio.h"
#include "core/util/outputfile.h"
#include "probescope/collect/config.h"
#include "probescope/collect/trainermon.h"

#include <gtest/gtest.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/optim/adam.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <unistd.h>

using namespace probescope;
using namespace probescope::collect;
namespace fs = std::filesystem;
namespace cm = probescope::collect::monitor;

namespace {

fs::path scratch(const std::string& name)
{
    const fs::path dir = fs::temp_directory_path() / ("probescope-tst-monitor-" + std::to_string(::getpid())) / name;
    fs::remove_all(dir);
    fs::create_directories(dir);
    return dir;
}

std::string read(const fs::path& path)
{
    auto text = readTextFile(path);
    EXPECT_TRUE(static_cast<bool>(text)) << path;
    return text ? *text : std::string();
}

cm::Cell f(double v)
{
    cm::Cell c;
    c.kind = cm::Cell::Kind::Float;
    c.f = v;
    return c;
}

cm::Cell i(std::int64_t v)
{
    cm::Cell c;
    c.kind = cm::Cell::Kind::Int;
    c.i = v;
    return c;
}

cm::Cell t(std::string text)
{
    cm::Cell c;
    c.kind = cm::Cell::Kind::Text;
    c.text = std::move(text);
    return c;
}

} // namespace

TEST(MonitorConfig, DefaultsAsMsprobe)
{
    const MonitorConfig c = parseMonitorConfigText("{}");
    EXPECT_EQ(c.ops, (std::vector<std::string> { "norm", "shape", "dtype" }));
    EXPECT_EQ(c.targets, std::vector<std::string> { "" });
    EXPECT_FALSE(c.allXy);
    EXPECT_EQ(c.stepCountPerRecord, 1);
    EXPECT_EQ(c.collectTimes, 100000000);
    const MonitorConfig xy = parseMonitorConfigText(
        R"({"xy_distribution": true, "ops": ["min", "bogus", "mean"], "start_step": -3,
            "alert": {"rules": [{"rule_name": "AnomalyTurbulence"}, {"rule_name": "AnomalyNan", "args": {}}]}})");
    EXPECT_TRUE(xy.allXy);
    EXPECT_EQ(xy.ops, (std::vector<std::string> { "min", "mean", "shape", "dtype" }));
    EXPECT_EQ(xy.startStep, 0);
    ASSERT_EQ(xy.alertRules.size(), 1u); // AnomalyTurbulence without a threshold is skipped, as msprobe does
    EXPECT_EQ(xy.alertRules[0].kind, MonitorAlertRule::Kind::Nan);
    EXPECT_EQ(xy.warnings.size(), 3u);
}

TEST(MonitorConfig, ErrorsNameFileAndPosition)
{
    const auto message = [](std::string_view text) {
        try {
            parseMonitorConfigText(text, "mon.json");
        } catch (const CollectError& e) {
            EXPECT_EQ(e.id(), "collect.monitor-config");
            return std::string(e.what());
        }
        return std::string("no error");
    };
    EXPECT_EQ(message("{\n \"eps\": 1\n}"), "mon.json:2:9: error [collect.monitor-config]: \"eps\" must be a float (e.g. 1e-8)");
    EXPECT_NE(message(R"({"alert": {"rules": [{"rule_name": "AnomalyTurbulence", "args": {"threshold": -1}}]}})")
                  .find("\"threshold\" must be a number not less than 0"),
              std::string::npos);
    EXPECT_NE(message(R"({"step_count_per_record": 1000001})").find("from 1 to 1000000"), std::string::npos);
    EXPECT_NE(message(R"({"targets": ["a"]})").find("\"targets\" must be an object"), std::string::npos);
    EXPECT_NE(message(R"({"ndigits": 21})").find("at most 20"), std::string::npos);
    EXPECT_NE(message("[").find("not valid JSON"), std::string::npos);
}

TEST(MonitorConfig, SquashParamName)
{
    EXPECT_EQ(squashParamName("module.module.decoder.layers.0.mlp.linear_fc1.weight"), "layers.0.mlp.linear_fc1.weight");
    EXPECT_EQ(squashParamName("a.layers.1.b.layer.2.c"), "layer.2.c"); // the last match: ".*" is greedy
    EXPECT_EQ(squashParamName("module.embedding.word_embeddings.weight"), "embedding.word_embeddings.weight");
    EXPECT_EQ(squashParamName("module.decoder.final_layernorm.weight"), "final_layernorm.weight");
    EXPECT_EQ(squashParamName("model.output_layer.weight"), "output_layer.weight");
    EXPECT_EQ(squashParamName("layers.0.weight"), "layers.0.weight"); // no "." before it
    EXPECT_EQ(squashParamName("fc.weight"), "fc.weight");
}

TEST(MonitorSession, CsvCellsAsPandasWritesThem)
{
    const fs::path out = scratch("csv");
    MonitorConfig config = parseMonitorConfigText(R"({"ops": ["min", "nans", "mean"], "step_count_per_record": 2})");
    cm::RunInfo info;
    info.outputDir = out;
    info.timeTag = "Nov28_10-00-00";
    info.uid = "a1b2c3d4";
    cm::Session session(config, info);
    EXPECT_EQ(session.runDir(), out / "Nov28_10-00-00-rank0-a1b2c3d4");
    auto& b = session.bucket("actv:0:fc");
    b.put("0:fc.input:0/rank0/actv", { f(-1.9929821491241455), i(0), f(-4e-7), t("[2, 4, 8]"), t("torch.float32") });
    b.put("0:fc.output:0/rank0/actv", { f(0.00006), i(3), f(2.5), t("[8]"), t("torch.float32") });
    session.writeStep(1);
    // Put again: the same tag keeps its place; a missing row turns the int column "nans" into floats.
    auto& g = session.bucket("grad_reduced");
    g.put("0:fc.weight/rank0/post_grad", { f(std::nan("")), i(64), f(1e-5), t("[16, 8]"), t("torch.float32") });
    g.put("0:fc.bias/rank0/post_grad", cm::missingRow(5));
    session.writeStep(2);
    EXPECT_EQ(read(session.runDir() / "actv_0-1.csv"),
              "vpp_stage,name,step,micro_step,min,nans,mean,shape,dtype\n"
              "0,fc.input,1,0,-1.992982,0,-0.0,\"[2, 4, 8]\",torch.float32\n"
              "0,fc.output,1,0,6e-05,3,2.5,[8],torch.float32\n");
    EXPECT_EQ(read(session.runDir() / "grad_reduced_2-3.csv"),
              "vpp_stage,name,step,min,nans,mean,shape,dtype\n"
              "0,fc.weight,2,nan,64.0,1e-05,\"[16, 8]\",torch.float32\n"
              "0,fc.bias,2,nan,nan,nan,nan,nan\n");
}

TEST(MonitorSession, AlertsAndAnomalyJsonAsMsprobe)
{
    const fs::path out = scratch("alerts");
    MonitorConfig config = parseMonitorConfigText(
        R"({"ops": ["norm", "min"], "alert": {"rules": [{"rule_name": "AnomalyTurbulence", "args": {"threshold": 3}},
            {"rule_name": "AnomalyNan"}], "dump": true}})");
    cm::RunInfo info;
    info.outputDir = out;
    info.rank = 1;
    info.groupMates = { 0, 1 };
    cm::Session session(config, info);
    EXPECT_EQ(read(out / "anomaly_detected/rank1/anomaly.json"), "{}");
    auto& b = session.bucket("actv_grad");
    const std::string tag = "0:fc.output:0/rank1/actv_grad";
    b.put(tag, { f(1.0), f(-100.0) });
    session.registerCallId("other");
    session.registerCallId(tag);
    session.writeStep(0);
    b.put(tag, { f(10.0), f(-1000.0) }); // norm jumps: turbulence; min jumps too, but turbulence counts for norm/mean only
    session.registerCallId(tag);
    session.writeStep(1);
    b.put(tag, { f(std::nan("")), f(1.0) });
    session.writeStep(2);
    ASSERT_EQ(session.messages().size(), 2u);
    EXPECT_EQ(session.messages()[0], "Rule AnomalyTurbulence reports anomaly signal in ('0:fc.output:0/rank1/actv_grad', "
                                     "'norm') at step 1, current value 10.0, history mean 1.0.");
    EXPECT_EQ(session.messages()[1], "Rule AnomalyNan reports anomaly signal in ('0:fc.output:0/rank1/actv_grad', "
                                     "'norm') at step 2, current value nan, history mean 1.09.");
    EXPECT_EQ(read(out / "anomaly_detected/rank1/anomaly.json"),
              "{\n \"0:fc.output:0/rank1/actv_grad_step_1_call_0\": {\n  \"rank\": 1,\n  \"step\": 1,\n"
              "  \"micro_step\": 0,\n  \"pp_stage\": 0,\n  \"vpp_stage\": 0,\n  \"call_id\": 0,\n"
              "  \"tag_name\": \"0:fc.output:0/rank1/actv_grad\",\n  \"message\": \"" + session.messages()[0] + "\",\n"
              "  \"group_mates\": [\n   0,\n   1\n  ]\n },\n"
              " \"0:fc.output:0/rank1/actv_grad_step_2_call_-1\": {\n  \"rank\": 1,\n  \"step\": 2,\n"
              "  \"micro_step\": 0,\n  \"pp_stage\": 0,\n  \"vpp_stage\": 0,\n  \"call_id\": -1,\n"
              "  \"tag_name\": \"0:fc.output:0/rank1/actv_grad\",\n  \"message\": \"" + session.messages()[1] + "\",\n"
              "  \"group_mates\": [\n   0,\n   1\n  ]\n }\n}");
    // A second run into the same output folder: anomaly.json of the first is never replaced.
    EXPECT_THROW((void)cm::Session(config, info), CollectError);
}

TEST(TrainerMonCpp, LibTorchModelReadBackByData2db)
{
    const fs::path out = scratch("cpp");
    const fs::path configPath = out / "config.json";
    {
        const std::string text = R"({"xy_distribution": true, "wg_distribution": true, "mv_distribution": true,
            "param_distribution": true, "ops": ["norm", "max", "nans"], "targets": {"0": {}},
            "alert": {"rules": [{"rule_name": "AnomalyNan"}], "dump": true}})";
        ASSERT_FALSE(writeFileAtomically(configPath, text).has_value());
    }
    torch::manual_seed(3);
    auto model = std::make_shared<torch::nn::SequentialImpl>(torch::nn::Linear(4, 8), torch::nn::Linear(8, 2));
    torch::optim::Adam optimizer(model->parameters(), torch::optim::AdamOptions(1e-2));
    MonitorOptions options;
    options.outputDir = out / "monitor_output";
    options.rank = 0;
    TrainerMon mon(configPath.string(), options);
    mon.setMonitor({ model }, optimizer, 1);
    const auto& first = *model->children()[0];
    for (int step = 0; step < 3; ++step) {
        optimizer.zero_grad();
        at::Tensor x = torch::randn({ 3, 4 });
        if (step == 2)
            x[0][0] = std::nan("");
        const at::Tensor h = mon.forward(first, { x }, model->ptr(0)->as<torch::nn::Linear>()->forward(x));
        model->ptr(1)->as<torch::nn::Linear>()->forward(h).pow(2).mean().backward();
        mon.step();
    }
    const fs::path run = mon.runDir();
    for (const char* file : { "actv_0-0.csv", "actv_grad_2-2.csv", "grad_unreduced_1-1.csv", "grad_reduced_0-0.csv",
                              "exp_avg_1-1.csv", "exp_avg_sq_2-2.csv", "param_origin_0-0.csv", "param_updated_2-2.csv" })
        EXPECT_TRUE(fs::is_regular_file(run / file)) << file;
    // Adam's state exists from its first step on: msprobe's pre-step hook finds no moments at step 0 either.
    EXPECT_FALSE(fs::exists(run / "exp_avg_0-0.csv"));
    const std::string actv = read(run / "actv_0-0.csv");
    EXPECT_EQ(actv.substr(0, actv.find('\n')), "vpp_stage,name,step,micro_step,norm,max,nans,shape,dtype");
    EXPECT_NE(actv.find("0,0.input,0,0,"), std::string::npos) << actv;
    EXPECT_NE(actv.find(",\"[3, 8]\",torch.float32\n"), std::string::npos) << actv;
    EXPECT_NE(read(run / "grad_reduced_0-0.csv").find("0,0.weight,0,"), std::string::npos);
    EXPECT_NE(read(out / "monitor_output/anomaly_detected/rank0/anomaly.json").find("Rule AnomalyNan"), std::string::npos);
    auto db = probescope::monitor::monitorToDb(out / "monitor_output", out / "db", {});
    ASSERT_TRUE(db) << db.error().format();
    EXPECT_EQ(db->ranks, 1u);
    EXPECT_EQ(db->files, 22u); // 8 metrics x 3 steps, less exp_avg and exp_avg_sq of step 0
    EXPECT_GT(db->rows, 0u);
}
