// SPDX-License-Identifier: Apache-2.0
// probescope-example-train as a user runs it: the pair it makes is compared by ProbeScope's compare
// and the perturbed GELU is the first failing node; a run killed with SIGKILL at several moments
// leaves folders ProbeScope reads; ranks from the environment; Python's torch.load as an extra oracle.
#include "collecttest.h"

#include "core/compare/pipeline/comparerun.h"
#include "core/dump/dumplayout.h"
#include "core/dump/rankdump.h"
#include "core/tensor/tensor.h"

#include <chrono>
#include <ostream>
#include <csignal>
#include <cstdlib>
#include <functional>
#include <set>
#include <thread>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>

extern char** environ;

using namespace probescope;
using namespace probescope::testing;
namespace fs = std::filesystem;

namespace {

const char* const kExample = PROBESCOPE_EXAMPLE_TRAIN;

/// Starts a program with stdout and stderr discarded; `env` entries ("NAME=value") are added.
pid_t spawn(const std::vector<std::string>& args, const std::vector<std::string>& env = {})
{
    std::vector<char*> argv;
    for (const std::string& a : args)
        argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    std::vector<std::string> envStrings;
    for (char** e = environ; *e; ++e)
        envStrings.emplace_back(*e);
    envStrings.insert(envStrings.end(), env.begin(), env.end());
    std::vector<char*> envp;
    for (std::string& e : envStrings)
        envp.push_back(e.data());
    envp.push_back(nullptr);

    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
    pid_t pid = -1;
    const int rc = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    EXPECT_EQ(rc, 0) << "cannot start " << args[0];
    return rc == 0 ? pid : -1;
}

int waitExit(pid_t pid)
{
    int status = 0;
    if (pid < 0 || ::waitpid(pid, &status, 0) != pid)
        return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int run(const std::vector<std::string>& args, const std::vector<std::string>& env = {})
{
    return waitExit(spawn(args, env));
}

std::vector<std::string> example(const fs::path& dumpPath, std::vector<std::string> more)
{
    std::vector<std::string> args = { kExample, "--dump-path", dumpPath.string(), "--steps", "1" };
    args.insert(args.end(), more.begin(), more.end());
    return args;
}

/// Runs the pair (bench, then npu with --perturb gelu) and returns the compare's first failing node.
std::string firstFailingNode(const fs::path& dir, const std::vector<std::string>& options)
{
    std::vector<std::string> npuOptions = options;
    npuOptions.insert(npuOptions.end(), { "--perturb", "gelu" });
    EXPECT_EQ(run(example(dir / "bench", options)), 0);
    EXPECT_EQ(run(example(dir / "npu", npuOptions)), 0);
    compare::CompareInput input;
    input.npuPath = dir / "npu" / "step0";
    input.benchPath = dir / "bench" / "step0";
    compare::JobOptions job;
    job.threads = 2;
    job.timestamp = "20260101000000";
    auto results = compare::runCompareJob(input, dir / "out", job);
    if (!results) {
        ADD_FAILURE() << results.error().format();
        return {};
    }
    EXPECT_EQ(results->size(), 1u);
    const compare::FirstFailure& f = results->front().firstFailure;
    EXPECT_TRUE(f.found) << f.summary;
    return f.key;
}

/// Everything ProbeScope reads of a dump root; `complete` = no diagnostics at all expected.
void expectReadable(const fs::path& root, bool lastMayBeTruncated, const std::string& when)
{
    SCOPED_TRACE(when);
    auto layout = dump::discoverDump(root);
    if (!layout) {
        // Killed before the first start(): nothing was written, and nothing is lost.
        EXPECT_FALSE(fs::exists(root / "step0" / "rank" / "dump.json")) << layout.error().format();
        return;
    }
    const auto& ranks = layout->ranks;
    for (std::size_t i = 0; i < ranks.size(); ++i) {
        auto rank = dump::loadRank(ranks[i]);
        ASSERT_TRUE(rank) << rank.error().format();
        const bool last = i + 1 == ranks.size();
        for (const Diagnostic& d : (*rank)->diagnostics) {
            const bool allowed = last && lastMayBeTruncated && d.id == "dump.truncated";
            EXPECT_TRUE(allowed) << d.format();
        }
        EXPECT_TRUE((*rank)->construct.present) << ranks[i].dir.string();
        EXPECT_TRUE((*rank)->stack.present) << ranks[i].dir.string();
        // Every complete entry's tensors were written before the entry.
        const auto& file = *(*rank)->dump;
        std::size_t tensors = 0;
        std::function<void(dump::JsonValue)> walk = [&](dump::JsonValue v) {
            if (v.isObject()) {
                if (const auto name = v.find("data_name"); name && name->isString()) {
                    auto t = tensor::loadTensorFile(file.tensorDir, name->asString());
                    EXPECT_TRUE(t) << t.error().format();
                    ++tensors;
                    return;
                }
                for (std::uint32_t k = 0; k < v.size(); ++k)
                    walk(v.at(k));
            } else if (v.isArray()) {
                for (std::uint32_t k = 0; k < v.size(); ++k)
                    walk(v.at(k));
            }
        };
        for (const auto& e : file.entries)
            walk(e.value);
        if (!last) {
            EXPECT_GT(tensors, 300u) << ranks[i].dir.string();
        }
    }
}

std::uintmax_t sizeOf(const fs::path& p)
{
    std::error_code ec;
    const auto s = fs::file_size(p, ec);
    return ec ? 0 : s;
}

} // namespace

struct PairCase
{
    const char* name;
    std::vector<std::string> options;
    const char* firstFailing;
};

void PrintTo(const PairCase& c, std::ostream* os) { *os << c.name; }

class RoundTrip : public ::testing::TestWithParam<PairCase>
{
};

TEST_P(RoundTrip, ThePerturbedGeluIsTheFirstFailingNode)
{
    ParamTempDir temp;
    EXPECT_EQ(firstFailingNode(temp.path(), GetParam().options), GetParam().firstFailing);
}

const PairCase kPairs[] = {
    { "MixTensor", { "--level", "mix", "--task", "tensor" }, "Aten.gelu.0.forward" },
    { "L0Statistics", { "--level", "L0", "--task", "statistics" }, "Module.block.ffn.act.GELU.forward.0" },
    { "L1Md5", { "--level", "L1", "--summary-mode", "md5" }, "Aten.gelu.0.forward" },
};

INSTANTIATE_TEST_SUITE_P(Example, RoundTrip, ::testing::ValuesIn(kPairs),
                         [](const ::testing::TestParamInfo<PairCase>& pair) { return std::string(pair.param.name); });

TEST(ExampleRoundTrip, OverflowCheckFindsTheInjectedInf)
{
    TempDir temp;
    const fs::path dir = temp.path();
    ASSERT_EQ(run(example(dir / "d", { "--task", "overflow_check", "--perturb", "gelu-inf", "--steps", "2" })), 0);
    DumpReadBack dump(dir / "d" / "step0" / "rank" / "dump.json");
    EXPECT_EQ(dump.keys(), (std::vector<std::string> { "Aten.gelu.0.forward" })); // overflow_nums 1
    EXPECT_FALSE(fs::exists(dir / "d" / "step1")); // collection stopped at the limit
}

TEST(ExampleRoundTrip, UsageAndConfigErrors)
{
    TempDir temp;
    const fs::path dir = temp.path();
    EXPECT_EQ(run({ kExample, "--dump-path", dir.string(), "--level", "L7" }), 2);
    writeFile(dir / "bad.json", "{\"task\": \"statistics\", \"levle\": \"L1\"}");
    EXPECT_EQ(run({ kExample, "--config", (dir / "bad.json").string() }), 1);
}

TEST(ExampleRoundTrip, RanksFromTheEnvironment)
{
    TempDir temp;
    const fs::path dir = temp.path();
    const pid_t a = spawn(example(dir / "d", {}), { "RANK=0" });
    const pid_t b = spawn(example(dir / "d", {}), { "RANK=1" });
    EXPECT_EQ(waitExit(a), 0);
    EXPECT_EQ(waitExit(b), 0);
    for (const char* rank : { "rank0", "rank1" }) {
        DumpReadBack dump(dir / "d" / "step0" / rank / "dump.json");
        EXPECT_GT(dump.keys().size(), 80u) << rank;
    }
    EXPECT_FALSE(fs::exists(dir / "d" / "step0" / "rank"));
}

struct KillMoment
{
    const char* name;
    const char* what;
    std::function<bool(const fs::path&)> reached;
};

const KillMoment kMoments[] = {
    { "DumpJsonJustCreated", "as soon as dump.json exists",
      [](const fs::path& d) { return sizeOf(d / "step0/rank/dump.json") > 0; } },
    { "ForwardOfStep0", "in the forward of step 0", [](const fs::path& d) { return sizeOf(d / "step0/rank/dump.json") > 40000; } },
    { "BackwardOfStep0", "in the backward of step 0",
      [](const fs::path& d) { return sizeOf(d / "step0/rank/dump.json") > 100000; } },
    { "StartOfStep1", "at the start of step 1", [](const fs::path& d) { return fs::exists(d / "step1/rank/dump.json"); } },
    { "Step2", "in step 2", [](const fs::path& d) { return sizeOf(d / "step2/rank/dump.json") > 90000; } },
};

void PrintTo(const KillMoment& m, std::ostream* os) { *os << m.name; } // names the case in ctest's list

class CrashSafety : public ::testing::TestWithParam<KillMoment>
{
};

TEST_P(CrashSafety, KilledRunLeavesReadableFolders)
{
    const KillMoment& m = GetParam();
    ParamTempDir temp;
    const fs::path dir = temp.path();
    const fs::path root = dir / "d";
    const pid_t pid = spawn({ kExample, "--dump-path", root.string(), "--steps", "1000", "--level", "mix", "--task", "tensor" });
    ASSERT_GT(pid, 0);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (!m.reached(root) && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::microseconds(200));
    ::kill(pid, SIGKILL);
    EXPECT_EQ(waitExit(pid), 128 + SIGKILL) << m.what;
    expectReadable(root, true, m.what);
}

INSTANTIATE_TEST_SUITE_P(Moments, CrashSafety, ::testing::ValuesIn(kMoments),
                         [](const ::testing::TestParamInfo<KillMoment>& moment) { return std::string(moment.param.name); });

TEST(CrashSafety, KilledWhileTheBackgroundWriterWritesOnASlowDisk)
{
    // A 2 MB/s disk (the PROBESCOPE_TEST_DISK_MBPS seam): the writer is behind the model, with entries
    // queued and a .pt file half written, when the process is killed.
    TempDir temp;
    const fs::path root = temp.path() / "d";
    const pid_t pid = spawn({ kExample, "--dump-path", root.string(), "--steps", "1000", "--level", "mix", "--task",
                              "tensor", "--batch", "8", "--image", "16", "--async-queue-bytes", "4000000" },
                            { "PROBESCOPE_TEST_DISK_MBPS=2" });
    ASSERT_GT(pid, 0);
    const fs::path rank = root / "step0" / "rank";
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (sizeOf(rank / "dump.json") < 30000 && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    ::kill(pid, SIGKILL);
    EXPECT_EQ(waitExit(pid), 128 + SIGKILL);
    expectReadable(root, true, "killed with the background writer behind");

    // Files were on disk (complete or cut) that no entry names yet: the kill came in the middle of an
    // entry's files, and the entries published all name complete ones (expectReadable loaded them).
    auto file = dump::readDumpJson(rank / "dump.json");
    ASSERT_TRUE(file) << file.error().format();
    std::set<std::string> named;
    std::function<void(dump::JsonValue)> walk = [&](dump::JsonValue v) {
        if (v.isObject()) {
            if (const auto name = v.find("data_name"); name && name->isString())
                named.insert(std::string(name->asString()));
            for (std::uint32_t k = 0; k < v.size(); ++k)
                walk(v.at(k));
        } else if (v.isArray()) {
            for (std::uint32_t k = 0; k < v.size(); ++k)
                walk(v.at(k));
        }
    };
    for (const auto& e : (*file)->entries)
        walk(e.value);
    EXPECT_GT(named.size(), 10u);
    std::size_t unpublished = 0;
    for (const auto& e : fs::directory_iterator(rank / "dump_tensor_data"))
        unpublished += named.count(e.path().filename().string()) == 0 ? 1 : 0;
    EXPECT_GE(unpublished, 1u);
}

TEST(PythonOracle, TorchLoadReadsTheTensorFiles)
{
    if (std::system("/usr/bin/python3 -c 'import torch' >/dev/null 2>&1") != 0)
        GTEST_SKIP() << "no Python with torch at /usr/bin/python3";
    TempDir temp;
    const fs::path dir = temp.path();
    ASSERT_EQ(run(example(dir / "d", { "--level", "mix", "--task", "tensor" })), 0);
    const fs::path script = dir / "check.py";
    writeFile(script, R"(import json, sys, torch
rank = sys.argv[1]
data = json.load(open(rank + '/dump.json'))['data']
count = 0
def walk(v):
    global count
    if isinstance(v, dict):
        if 'data_name' in v:
            t = torch.load(rank + '/dump_tensor_data/' + v['data_name'])
            assert list(t.shape) == v['shape'] and str(t.dtype) == v['dtype'], v['data_name']
            if t.dtype == torch.float32 and t.numel():
                assert t.max().item() == v['Max'] and t.min().item() == v['Min'], v['data_name']
                # torch's float32 norm, as msprobe (and ProbeScope) compute it; over the model's layout, which
                # may round differently from this contiguous copy's
                assert abs(t.norm().item() - v['Norm']) <= 1e-6 * max(1.0, v['Norm']), v['data_name']
            count += 1
            return
        for x in v.values(): walk(x)
    elif isinstance(v, list):
        for x in v: walk(x)
walk(data)
assert count > 300, count
)");
    EXPECT_EQ(run({ "/usr/bin/python3", script.string(), (dir / "d" / "step0" / "rank").string() }), 0);
}
