// SPDX-License-Identifier: Apache-2.0
// Issue 25: the one output writer is complete-or-absent on a full disk and never follows a symlink; the
// full-disk test seam (PROBESCOPE_TEST_ENOSPC / setTestFullDisk) and a real 64 KiB tmpfs where one can be mounted.
#include "core/runut/csvio.h"
#include "core/util/outputfile.h"
#include "tempdir.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <sys/mount.h>
#include <vector>

using namespace probescope;
using probescope::testing::readAll;
using probescope::testing::TempDir;
namespace fs = std::filesystem;

namespace {

std::vector<std::string> namesIn(const fs::path& dir)
{
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir))
        names.push_back(e.path().filename().string());
    return names;
}

/// Turns the seam off again however the test ends.
struct FullDisk
{
    explicit FullDisk(std::string_view spec) { setTestFullDisk(spec); }
    ~FullDisk() { setTestFullDisk(""); }
};

const std::string kBig(100000, 'x');

} // namespace

TEST(OutputFullDisk, AFailedWriteFsyncOrCloseLeavesNothingUnderAnyName)
{
    TempDir dir;
    for (const char* spec : { "write:1", "1", "fsync:1", "close:1", "write:all" }) {
        SCOPED_TRACE(spec);
        const fs::path target = dir.path() / "result.csv";
        std::optional<WriteFailure> failure;
        {
            FullDisk full(spec);
            failure = writeFileAtomically(target, kBig, ReplaceMode::Never);
        }
        ASSERT_TRUE(failure);
        EXPECT_FALSE(failure->nameTaken);
        // The message names the output the user asked for, never the temporary file.
        EXPECT_NE(failure->message.find(target.string()), std::string::npos) << failure->message;
        EXPECT_NE(failure->message.find(std::strerror(ENOSPC)), std::string::npos) << failure->message;
        EXPECT_EQ(failure->message.find(".tmp"), std::string::npos) << failure->message;
        EXPECT_TRUE(namesIn(dir.path()).empty()) << "left behind: " << namesIn(dir.path()).front();
    }
    // With the seam off the same write succeeds.
    ASSERT_FALSE(writeFileAtomically(dir.path() / "result.csv", kBig, ReplaceMode::Never));
    EXPECT_EQ(readAll(dir.path() / "result.csv"), kBig);
}

TEST(OutputFullDisk, TheNthWriteFailsAndTheOthersDoNot)
{
    TempDir dir;
    FullDisk full("write:3");
    EXPECT_FALSE(writeFileAtomically(dir.path() / "a", "1", ReplaceMode::Never));
    EXPECT_FALSE(writeFileAtomically(dir.path() / "b", "2", ReplaceMode::Never));
    EXPECT_TRUE(writeFileAtomically(dir.path() / "c", "3", ReplaceMode::Never));
    EXPECT_FALSE(writeFileAtomically(dir.path() / "d", "4", ReplaceMode::Never));
    EXPECT_EQ(namesIn(dir.path()).size(), 3u);
    EXPECT_FALSE(fs::exists(dir.path() / "c"));
}

TEST(OutputFullDisk, APendingFileWrittenPieceByPieceIsRemovedAndAReplacedFileKept)
{
    TempDir dir;
    const fs::path target = dir.write("summary.json", "the earlier run's summary\n");
    std::string error;
    auto file = PendingFile::create(target, error);
    ASSERT_TRUE(file) << error;
    {
        FullDisk full("write:2");
        EXPECT_TRUE(file->write("first piece "));
        EXPECT_FALSE(file->write(kBig));
        EXPECT_FALSE(file->write("after the failure"));
    }
    const auto failure = file->claim(target, ReplaceMode::Allowed);
    ASSERT_TRUE(failure);
    EXPECT_NE(failure->message.find("summary.json: " + std::string(std::strerror(ENOSPC))), std::string::npos)
        << failure->message;
    // The file the write would have replaced keeps its bytes, and no temporary file is left.
    EXPECT_EQ(readAll(target), "the earlier run's summary\n");
    EXPECT_EQ(namesIn(dir.path()), std::vector<std::string> { "summary.json" });
}

TEST(OutputFullDisk, WriteToFreeNameStopsWithTheErrorAndLeavesNothing)
{
    TempDir dir;
    std::string error;
    std::optional<fs::path> written;
    {
        FullDisk full("fsync:all");
        written = writeToFreeName(dir.path(), "compare_result", ".csv", kBig, error);
    }
    EXPECT_FALSE(written);
    EXPECT_NE(error.find("compare_result.csv"), std::string::npos) << error;
    EXPECT_TRUE(namesIn(dir.path()).empty());
}

TEST(OutputAppend, AFullDiskCutsTheFileBackToItsLastCompleteRow)
{
    TempDir dir;
    const fs::path csv = dir.write("accuracy_checking_result.csv", "header\r\nrow 1\r\n");
    for (const char* spec : { "write:1", "close:1" }) {
        SCOPED_TRACE(spec);
        FullDisk full(spec);
        const auto failure = appendToOutput(csv, "row 2 is long " + kBig + "\r\n");
        ASSERT_TRUE(failure);
        EXPECT_NE(failure->find(csv.string()), std::string::npos) << *failure;
        EXPECT_EQ(readAll(csv), "header\r\nrow 1\r\n");
    }
    EXPECT_FALSE(appendToOutput(csv, "row 2\r\n"));
    EXPECT_EQ(readAll(csv), "header\r\nrow 1\r\nrow 2\r\n");
}

TEST(OutputAppend, NeverFollowsASymlinkPlantedAtTheName)
{
    TempDir dir;
    const fs::path victim = dir.write("victim.txt", "not yours\n");
    const fs::path link = dir.path() / "free_benchmark.csv";
    fs::create_symlink(victim, link);
    const auto failure = appendToOutput(link, "row\r\n");
    ASSERT_TRUE(failure);
    EXPECT_NE(failure->find("symlink"), std::string::npos) << *failure;
    EXPECT_EQ(readAll(victim), "not yours\n");
}

TEST(OutputAppend, RunUtCsvsAreCompleteOrAbsent)
{
    TempDir dir;
    const fs::path result = dir.path() / "accuracy_checking_result_20260101000000.csv";
    {
        FullDisk full("write:1");
        const auto bad = runut::createCsv(result, { "API name", "Forward Test Success" });
        ASSERT_TRUE(bad);
        EXPECT_EQ(bad->id, "io.write");
        EXPECT_NE(bad->message.find(std::strerror(ENOSPC)), std::string::npos) << bad->message;
    }
    EXPECT_TRUE(namesIn(dir.path()).empty()); // no file with half a header
    ASSERT_FALSE(runut::createCsv(result, { "API name", "Forward Test Success" }));
    const std::string header = readAll(result);
    {
        FullDisk full("write:1");
        const auto bad = runut::appendCsv(result, "Functional.gelu.0,pass\r\n");
        ASSERT_TRUE(bad);
        EXPECT_EQ(bad->id, "io.write");
    }
    EXPECT_EQ(readAll(result), header);
    // A name already taken is still the csv.exists refusal.
    const auto taken = runut::createCsv(result, { "API name" });
    ASSERT_TRUE(taken);
    EXPECT_EQ(taken->id, "csv.exists");
    EXPECT_EQ(readAll(result), header);
}

// A real full disk: a 64 KiB tmpfs. Needs CAP_SYS_ADMIN (the tests run as root; a container may still refuse).
TEST(OutputFullDisk, ARealSmallTmpfs)
{
    TempDir dir;
    const fs::path mnt = dir.path() / "small";
    fs::create_directories(mnt);
    if (::mount("tmpfs", mnt.c_str(), "tmpfs", 0, "size=64k") != 0)
        GTEST_SKIP() << "cannot mount a tmpfs here: " << std::strerror(errno);
    struct Unmount
    {
        fs::path at;
        ~Unmount() { ::umount2(at.c_str(), MNT_DETACH); }
    } unmount { mnt };

    const std::string huge(256 * 1024, 'y');
    const auto failure = writeFileAtomically(mnt / "compare_result.csv", huge, ReplaceMode::Never);
    ASSERT_TRUE(failure);
    EXPECT_NE(failure->message.find(std::strerror(ENOSPC)), std::string::npos) << failure->message;
    EXPECT_TRUE(namesIn(mnt).empty());

    ASSERT_FALSE(writeFileAtomically(mnt / "small.csv", "header\r\n", ReplaceMode::Never));
    EXPECT_TRUE(appendToOutput(mnt / "small.csv", huge));
    EXPECT_EQ(readAll(mnt / "small.csv"), "header\r\n");
    EXPECT_EQ(namesIn(mnt), std::vector<std::string> { "small.csv" });
}

// Issue 37: under a DeferredSync the per-file fsyncs wait for one barrier; the files are still placed whole under
// their names, and the barrier reports a failure (the seam's fsync step) naming the folder.
TEST(DeferredSync, FilesArePlacedWholeAndTheBarrierReportsFailure)
{
    TempDir dir;
    EXPECT_FALSE(syncDeferred());
    {
        DeferredSync durable(dir.path());
        EXPECT_TRUE(syncDeferred());
        {
            FullDisk full("fsync:all"); // would fail every per-file fsync: there is none now
            EXPECT_FALSE(writeFileAtomically(dir.path() / "a.csv", kBig, ReplaceMode::Never));
            const auto failure = durable.barrier();
            ASSERT_TRUE(failure);
            EXPECT_NE(failure->find(dir.path().string()), std::string::npos) << *failure;
            EXPECT_NE(failure->find(std::strerror(ENOSPC)), std::string::npos) << *failure;
        }
        EXPECT_FALSE(durable.barrier());
        EXPECT_EQ(readAll(dir.path() / "a.csv"), kBig);
        EXPECT_EQ(namesIn(dir.path()), std::vector<std::string> { "a.csv" }); // no temporary file left
    }
    EXPECT_FALSE(syncDeferred());
    DeferredSync missing(dir.path() / "no-such-folder");
    const auto failure = missing.barrier();
    ASSERT_TRUE(failure);
    EXPECT_NE(failure->find("no-such-folder"), std::string::npos) << *failure;
}
