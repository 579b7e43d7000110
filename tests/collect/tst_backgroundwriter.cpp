// SPDX-License-Identifier: Apache-2.0
// The background writer (docs/collect.md, "Writing while the model computes"): the same bytes as writing
// in the training thread, statistics from a copy the model cannot change afterwards, the queue's bound on
// a slow disk (the PROBESCOPE_TEST_DISK_MBPS seam), and a full disk (the PROBESCOPE_TEST_ENOSPC seam)
// reported at the next call and in the dump, which ends at its last complete entry.
#include "collecttest.h"

#include "../../core/collect/ptwriter.h"
#include "core/dump/rankdump.h"
#include "core/tensor/tensor.h"
#include "core/util/outputfile.h"
#include "model.h"

#include <probescope/collect/precisiondebugger.h>

#include <torch/torch.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <sstream>

#include <csignal>

#include <sys/wait.h>
#include <unistd.h>

using namespace probescope;
using namespace probescope::testing;
namespace fs = std::filesystem;
namespace collect = probescope::collect;
namespace example = probescope::example;

namespace {

/// Every file below `dir`, by relative path, with its bytes; `dir` itself written as "DIR" (dump.json
/// names its tensor folder).
std::map<std::string, std::string> filesBelow(const fs::path& dir)
{
    std::map<std::string, std::string> out;
    const std::string root = dir.string();
    for (const auto& e : fs::recursive_directory_iterator(dir)) {
        if (!e.is_regular_file())
            continue;
        std::string bytes = readAll(e.path());
        for (std::size_t at = bytes.find(root); at != std::string::npos; at = bytes.find(root, at))
            bytes.replace(at, root.size(), "DIR");
        out[fs::relative(e.path(), dir).string()] = std::move(bytes);
    }
    return out;
}

/// Two steps of the example model dumped with the given task/level and queue bound.
fs::path dumpExample(const fs::path& root, collect::Task task, collect::Level level, std::uint64_t queueBytes,
                     const std::string& configJson = {})
{
    at::set_num_threads(1);
    collect::seedAll(2024, false);
    example::ModelSize size;
    example::ExampleNet model(size);
    torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(0.1));
    collect::Options o;
    if (!configJson.empty()) {
        writeFile(root / "config.json", configJson);
        o.configPath = (root / "config.json").string();
    }
    o.dumpPath = (root / "dump").string();
    o.task = task;
    o.level = level;
    o.model = model.ptr();
    o.asyncQueueBytes = queueBytes;
    collect::PrecisionDebugger debugger(o);
    EXPECT_EQ(debugger.writerStats().boundBytes, queueBytes);
    for (std::int64_t step = 0; step < 2; ++step) {
        const example::Batch batch = example::makeBatch(step, size);
        debugger.start();
        const auto logits = collect::call(model)(batch.images);
        torch::nn::functional::cross_entropy(logits, batch.labels).backward();
        debugger.stop();
        optimizer.step();
        optimizer.zero_grad();
        debugger.step();
    }
    if (queueBytes > 0) {
        EXPECT_GT(debugger.writerStats().entriesWritten, 100u);
        EXPECT_EQ(debugger.writerStats().entriesDropped, 0u);
        EXPECT_EQ(debugger.writerStats().queuedBytes, 0u); // step() drained it
    }
    return root / "dump";
}

/// The wait status of the forked child `pid`, or nullopt when it has not exited within 10 s (it is killed then) or
/// cannot be waited for: a child that hangs fails its test instead of hanging the suite.
std::optional<int> waitForChild(pid_t pid)
{
    int status = 0;
    for (int i = 0; i < 1000; ++i) {
        const pid_t done = ::waitpid(pid, &status, WNOHANG);
        if (done == pid)
            return status;
        if (done < 0)
            return std::nullopt;
        ::usleep(10000);
    }
    ::kill(pid, SIGKILL);
    ::waitpid(pid, &status, 0);
    return std::nullopt;
}

/// Restores the seams whatever the test's outcome.
struct SeamReset
{
    ~SeamReset()
    {
        collect::setTestDiskSpeed(0);
        setTestFullDisk("");
    }
};

} // namespace

TEST(BackgroundWriter, WritesTheSameBytesAsTheTrainingThread)
{
    struct Case
    {
        collect::Task task;
        collect::Level level;
        std::string config;
    };
    const Case cases[] = {
        { collect::Task::Tensor, collect::Level::Mix, {} },
        { collect::Task::Statistics, collect::Level::L1, {} },
        { collect::Task::Statistics, collect::Level::Mix, R"({"statistics": {"summary_mode": "md5"}})" },
    };
    for (const Case& c : cases) {
        SCOPED_TRACE(std::string(collect::toString(c.task)) + " " + collect::toString(c.level) + " " + c.config);
        TempDir temp;
        const auto inThread = filesBelow(dumpExample(temp.path() / "sync", c.task, c.level, 0, c.config));
        const auto background = filesBelow(dumpExample(temp.path() / "async", c.task, c.level, 64u << 20, c.config));
        ASSERT_GE(inThread.size(), 6u); // two steps of dump.json, construct.json, stack.json (and .pt files)
        ASSERT_EQ(inThread.size(), background.size());
        for (const auto& [name, bytes] : inThread) {
            const auto it = background.find(name);
            ASSERT_NE(it, background.end()) << name;
            EXPECT_TRUE(it->second == bytes) << name << " differs";
        }
    }
}

TEST(BackgroundWriter, StatisticsComeFromACopyTakenWhenTheOpRan)
{
    SeamReset reset;
    collect::setTestDiskSpeed(4'000'000); // 4 MB/s: the writer is still at relu when the model changes its output
    TempDir temp;
    collect::Options o;
    o.dumpPath = (temp.path() / "dump").string();
    o.task = collect::Task::Tensor;
    o.asyncQueueBytes = 64u << 20;
    collect::PrecisionDebugger debugger(o);
    auto generator = at::make_generator<at::CPUGeneratorImpl>(7);
    const at::Tensor x = at::randn({ 256, 256 }, generator); // 256 KiB
    const double expectedMax = x.relu().max().item<double>();
    debugger.start();
    at::Tensor y = x.relu();
    y.add_(1000.0); // the model changes the output in place, long before the writer reaches it
    debugger.stop();
    EXPECT_GT(debugger.writerStats().entriesWritten, 1u);

    DumpReadBack dump(debugger.rankDir() / "dump.json");
    const dump::JsonValue out = dump.entry("Aten.relu.0.forward").find("output")->at(0);
    EXPECT_EQ(out.find("Max")->asDouble(), expectedMax);
    auto saved = tensor::loadTensorFile(debugger.rankDir() / "dump_tensor_data", out.find("data_name")->asString());
    ASSERT_TRUE(saved) << saved.error().format();
    const dump::JsonValue added = dump.entry("Aten.add_.0.forward").find("input_args")->at(0);
    EXPECT_EQ(added.find("Max")->asDouble(), expectedMax); // add_'s input: read before it ran
    EXPECT_EQ(dump.entry("Aten.add_.0.forward").find("output")->at(0).find("Max")->asDouble(),
              static_cast<double>(static_cast<float>(expectedMax + 1000.0)));
}

TEST(BackgroundWriter, TheQueueStaysWithinItsBoundOnASlowDisk)
{
    SeamReset reset;
    collect::setTestDiskSpeed(40'000'000); // 40 MB/s, far slower than relu on 256 KiB
    TempDir temp;
    const std::uint64_t bound = 2u << 20;  // 2 MiB: four entries of 512 KiB (input and output)
    collect::Options o;
    o.dumpPath = (temp.path() / "dump").string();
    o.task = collect::Task::Tensor;
    o.asyncQueueBytes = bound;
    collect::PrecisionDebugger debugger(o);
    const at::Tensor x = at::ones({ 256, 256 });
    debugger.start();
    for (int i = 0; i < 24; ++i)
        x.relu();
    const collect::WriterStats during = debugger.writerStats();
    debugger.stop();
    const collect::WriterStats after = debugger.writerStats();
    EXPECT_EQ(after.boundBytes, bound);
    EXPECT_GT(after.peakQueuedBytes, bound / 2); // the queue did fill up ...
    EXPECT_LE(after.peakQueuedBytes, bound);     // ... and no further
    EXPECT_GT(after.waitSeconds, 0.0);           // the model waited for the disk
    EXPECT_LT(during.entriesWritten, 24u);       // it was not written in the training thread
    EXPECT_EQ(after.entriesWritten, 24u);        // stop() waited for all of it
    EXPECT_EQ(after.queuedBytes, 0u);
    DumpReadBack dump(debugger.rankDir() / "dump.json");
    EXPECT_EQ(dump.keys().size(), 24u);
    EXPECT_EQ(std::distance(fs::directory_iterator(debugger.rankDir() / "dump_tensor_data"), fs::directory_iterator()), 48);
}

TEST(BackgroundWriter, AnEntryLargerThanTheBoundGoesAlone)
{
    TempDir temp;
    collect::Options o;
    o.dumpPath = (temp.path() / "dump").string();
    o.task = collect::Task::Tensor;
    o.asyncQueueBytes = 100'000; // less than one entry (2 x 256 KiB)
    collect::PrecisionDebugger debugger(o);
    const at::Tensor x = at::ones({ 256, 256 });
    debugger.start();
    for (int i = 0; i < 5; ++i)
        x.relu();
    debugger.stop();
    const collect::WriterStats stats = debugger.writerStats();
    EXPECT_EQ(stats.entriesWritten, 5u);
    EXPECT_GE(stats.peakQueuedBytes, 2u * 256 * 256 * 4);
    EXPECT_LT(stats.peakQueuedBytes, 2u * 2 * 256 * 256 * 4); // never two of them at once
}

TEST(BackgroundWriter, AFullDiskIsReportedAtTheNextCallAndTheDumpEndsAtItsLastCompleteEntry)
{
    SeamReset reset;
    TempDir temp;
    collect::Options o;
    o.dumpPath = (temp.path() / "dump").string();
    o.task = collect::Task::Tensor;
    o.asyncQueueBytes = 64u << 20;
    collect::PrecisionDebugger debugger(o);
    auto generator = at::make_generator<at::CPUGeneratorImpl>(3);
    const at::Tensor x = at::randn({ 4, 3 }, generator);
    // Writes of step 0: construct.json, stack.json, dump.json, then one per .pt file; mul's input and
    // output are the 4th and 5th, relu's input the 6th, which fails.
    setTestFullDisk("write:6");
    debugger.start();
    const at::Tensor y = (x * 2).relu();
    y.sum();
    try {
        debugger.flush();
        ADD_FAILURE() << "flush() did not report the full disk";
    } catch (const collect::CollectError& e) {
        EXPECT_EQ(e.id(), "collect.io");
        EXPECT_NE(std::string(e.what()).find("No space left on device"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("Aten.relu.0.forward.input.0.pt"), std::string::npos) << e.what();
    }
    y.exp(); // not recorded: the step's dump ended at the failure
    EXPECT_NO_THROW(debugger.stop()); // reported once
    setTestFullDisk("");
    // relu and sum, whether the thread met relu's failure before or after sum was offered (exp was not recorded)
    EXPECT_EQ(debugger.writerStats().entriesDropped, 2u);

    // In the dump: cut after mul's entry, which every reader reports; construct.json and stack.json whole.
    const fs::path step0 = debugger.rankDir();
    auto layout = dump::discoverDump(temp.path() / "dump" / "step0");
    ASSERT_TRUE(layout) << layout.error().format();
    auto rank = dump::loadRank(layout->ranks.front());
    ASSERT_TRUE(rank) << rank.error().format();
    const auto& diagnostics = (*rank)->diagnostics;
    EXPECT_TRUE(std::any_of(diagnostics.begin(), diagnostics.end(),
                            [](const Diagnostic& d) { return d.id == "dump.truncated"; }));
    ASSERT_EQ((*rank)->dump->entries.size(), 1u);
    EXPECT_EQ((*rank)->dump->entries.front().key, "Aten.mul.0.forward");
    EXPECT_TRUE((*rank)->construct.present);
    EXPECT_TRUE((*rank)->stack.present);
    EXPECT_FALSE(fs::exists(step0 / "dump_tensor_data" / "Aten.relu.0.forward.input.0.pt"));

    // The next step is a new folder, written again.
    debugger.step();
    debugger.start();
    (x * 3).relu();
    EXPECT_NO_THROW(debugger.stop());
    DumpReadBack next(debugger.rankDir() / "dump.json");
    EXPECT_EQ(next.keys(), (std::vector<std::string> { "Aten.mul.0.forward", "Aten.relu.0.forward" }));
}

TEST(BackgroundWriter, AFullDiskAtStopIsThrownByStop)
{
    SeamReset reset;
    TempDir temp;
    collect::Options o;
    o.dumpPath = (temp.path() / "dump").string();
    o.task = collect::Task::Tensor;
    o.asyncQueueBytes = 64u << 20;
    collect::PrecisionDebugger debugger(o);
    const at::Tensor x = at::ones({ 8 });
    setTestFullDisk("write:4"); // mul's input
    debugger.start();
    x.mul(2);
    try {
        debugger.stop();
        ADD_FAILURE() << "stop() did not report the full disk";
    } catch (const collect::CollectError& e) {
        EXPECT_EQ(e.id(), "collect.io");
    }
    setTestFullDisk("");
    debugger.step();
    auto dump = dump::readDumpJson(temp.path() / "dump" / "step0" / "rank" / "dump.json");
    ASSERT_TRUE(dump) << dump.error().format();
    EXPECT_TRUE((*dump)->entries.empty());
    EXPECT_TRUE(std::any_of((*dump)->diagnostics.begin(), (*dump)->diagnostics.end(),
                            [](const Diagnostic& d) { return d.id == "dump.truncated"; }));
}

TEST(BackgroundWriter, ProcessEndWritesWhatADebuggerNeverDestroyedQueued)
{
    // A training script that ends without stop() or deleting its debugger (a Python process at exit, say):
    // exit() writes the queue and completes the files.
    TempDir temp;
    const fs::path dumpPath = temp.path() / "dump";
    std::fflush(nullptr); // the child must not print the parent's buffered output again
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        collect::setTestDiskSpeed(20'000'000); // 20 MB/s: the writer is behind when exit() comes
        collect::Options o;
        o.dumpPath = dumpPath.string();
        o.task = collect::Task::Tensor;
        o.asyncQueueBytes = 64u << 20;
        auto* debugger = new collect::PrecisionDebugger(o); // never deleted
        const at::Tensor x = at::ones({ 256, 256 });
        debugger->start();
        for (int i = 0; i < 8; ++i)
            x.relu();
        std::exit(debugger->writerStats().entriesWritten < 8 ? 0 : 3); // 3: nothing was left to flush
    }
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status));
    ASSERT_EQ(WEXITSTATUS(status), 0);
    DumpReadBack dump(dumpPath / "step0" / "rank" / "dump.json"); // complete: read without salvage
    ASSERT_EQ(dump.keys().size(), 8u);
    for (const std::string& key : dump.keys()) {
        const std::string name(dump.entry(key).find("output")->at(0).find("data_name")->asString());
        auto saved = tensor::loadTensorFile(dumpPath / "step0" / "rank" / "dump_tensor_data", name);
        EXPECT_TRUE(saved) << saved.error().format();
    }
}

TEST(BackgroundWriter, AForkedChildThatExitsLeavesTheParentsQueueAndFilesAlone)
{
    // fork() copies the queue but not the writer's thread: a child that exit()s must neither wait for
    // the queue forever nor complete the parent's files.
    SeamReset reset;
    collect::setTestDiskSpeed(20'000'000); // the writer is behind when the child is made
    TempDir temp;
    collect::Options o;
    o.dumpPath = (temp.path() / "dump").string();
    o.task = collect::Task::Tensor;
    o.asyncQueueBytes = 64u << 20;
    collect::PrecisionDebugger debugger(o);
    const at::Tensor x = at::ones({ 256, 256 });
    debugger.start();
    for (int i = 0; i < 4; ++i)
        x.relu();
    std::fflush(nullptr);
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0)
        std::exit(0);
    const std::optional<int> status = waitForChild(pid);
    ASSERT_TRUE(status) << "the forked child did not exit within 10 s";
    EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0);
    for (int i = 0; i < 4; ++i)
        x.relu();
    debugger.stop();
    DumpReadBack dump(debugger.rankDir() / "dump.json");
    EXPECT_EQ(dump.keys().size(), 8u);
    EXPECT_TRUE(dump::JsonDocument::parse(readAll(debugger.rankDir() / "stack.json"), "stack.json").document);
}

TEST(BackgroundWriter, AForkedChildThatDeletesTheDebuggerLeavesTheParentsFilesAlone)
{
    // A child that tears the copied debugger down (a Python child's garbage collector, say) neither takes
    // the locks a parent thread may have held at the fork nor completes the parent's dump.json.
    SeamReset reset;
    collect::setTestDiskSpeed(20'000'000);
    TempDir temp;
    collect::Options o;
    o.dumpPath = (temp.path() / "dump").string();
    o.task = collect::Task::Tensor;
    o.asyncQueueBytes = 64u << 20;
    auto debugger = std::make_unique<collect::PrecisionDebugger>(o);
    const at::Tensor x = at::ones({ 256, 256 });
    debugger->start();
    for (int i = 0; i < 4; ++i)
        x.relu();
    std::fflush(nullptr);
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        debugger.reset();
        ::_exit(0);
    }
    const std::optional<int> status = waitForChild(pid);
    ASSERT_TRUE(status) << "the forked child did not exit within 10 s";
    EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0);
    for (int i = 0; i < 4; ++i)
        x.relu();
    const fs::path rankDir = debugger->rankDir();
    debugger.reset();
    DumpReadBack dump(rankDir / "dump.json");
    EXPECT_EQ(dump.keys().size(), 8u);
}
