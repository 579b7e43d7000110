// SPDX-License-Identifier: Apache-2.0
// core/util: the helpers every layer shares (profile names, Python number text, text positions, parallelFor,
// file reading, diagnostics) and dump's one folder walker used for run files.
#include "core/dump/dumplayout.h"
#include "core/util/diagnostic.h"
#include "core/util/fileio.h"
#include "core/util/parallel.h"
#include "core/util/profile.h"
#include "core/util/pytext.h"
#include "core/util/textposition.h"

#include "tempdir.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <limits>
#include <vector>

using namespace probescope;
namespace fs = std::filesystem;

TEST(Profile, CanonicalNamesRoundTrip)
{
    for (Profile p : { Profile::Msprobe12, Profile::Msprobe26, Profile::Ptdbg }) {
        const auto parsed = parseProfile(profileName(p));
        ASSERT_TRUE(parsed.has_value()) << profileName(p);
        EXPECT_EQ(*parsed, p);
    }
    EXPECT_EQ(profileName(Profile::Msprobe12), "msprobe-1.2");
    EXPECT_EQ(profileName(Profile::Msprobe26), "msprobe-26");
    EXPECT_EQ(profileName(Profile::Ptdbg), "ptdbg");
}

TEST(Profile, OldSpellingsStayAliases)
{
    EXPECT_EQ(parseProfile("msprobe12"), Profile::Msprobe12);
    EXPECT_EQ(parseProfile("msprobe26"), Profile::Msprobe26);
    EXPECT_EQ(parseProfile("1.2"), Profile::Msprobe12);
    EXPECT_EQ(parseProfile("26"), Profile::Msprobe26);
    EXPECT_EQ(parseProfile("ptdbg_ascend"), Profile::Ptdbg);
    EXPECT_FALSE(parseProfile("msprobe-9").has_value());
    EXPECT_FALSE(parseProfile("").has_value());
    EXPECT_FALSE(parseProfile("MSPROBE-26").has_value()) << "spellings are exact, as msprobe's are";
}

TEST(PyText, FloatReprMatchesPython)
{
    // Values and texts from CPython 3: repr(x).
    const std::vector<std::pair<double, const char*>> cases = {
        { 0.1, "0.1" },         { 1e-05, "1e-05" },        { 0.0001, "0.0001" },   { 2.0, "2.0" },
        { -0.0, "-0.0" },       { 1e16, "1e+16" },         { 1e15, "1000000000000000.0" },
        { 123.456, "123.456" }, { 1.5e-7, "1.5e-07" },     { 3.141592653589793, "3.141592653589793" },
        { 1e300, "1e+300" },    { -2.5e-310, "-2.5e-310" }, { 0.30000000000000004, "0.30000000000000004" },
    };
    for (const auto& [value, text] : cases)
        EXPECT_EQ(pyFloatRepr(value), text) << value;
    EXPECT_EQ(pyFloatRepr(std::numeric_limits<double>::infinity()), "inf");
    EXPECT_EQ(pyFloatRepr(-std::numeric_limits<double>::infinity()), "-inf");
    EXPECT_EQ(pyFloatRepr(std::nan("")), "nan");
    std::string out = "x=";
    appendPyFloatRepr(out, 0.5);
    EXPECT_EQ(out, "x=0.5");
}

TEST(TextPosition, LinesAndColumnsFromOffsets)
{
    const std::string text = "ab\ncd\n\nef";
    const auto a = locate(text, 0, "f.json");
    EXPECT_EQ(a.line, 1u);
    EXPECT_EQ(a.column, 1u);
    const auto d = locate(text, 4, "f.json");
    EXPECT_EQ(d.line, 2u);
    EXPECT_EQ(d.column, 2u);
    const auto f = locate(text, 8, "f.json");
    EXPECT_EQ(f.line, 4u);
    EXPECT_EQ(f.column, 2u);
    EXPECT_EQ(f.file, "f.json");
}

TEST(Diagnostics, FormatNamesFileLineColumnAndId)
{
    Diagnostic d = makeError("dump.truncated", SourceLocation { "a/dump.json", 10, 3, 7 }, "cut short");
    EXPECT_EQ(d.format(), "a/dump.json:3:7: error [dump.truncated]: cut short");
    EXPECT_TRUE(hasErrors({ d }));
    EXPECT_FALSE(hasErrors({ makeWarning("x.y", {}, "only a warning") }));
}

TEST(Parallel, EveryIndexOnceWhateverTheThreadCount)
{
    for (unsigned threads : { 1u, 2u, 5u }) {
        std::vector<std::atomic<int>> hits(1000);
        ASSERT_TRUE(parallelFor(hits.size(), threads, [&](std::size_t i) { hits[i]++; }));
        for (std::size_t i = 0; i < hits.size(); ++i)
            ASSERT_EQ(hits[i].load(), 1) << "index " << i << " with " << threads << " threads";
    }
    EXPECT_GE(resolveThreadCount(0), 1u);
    EXPECT_EQ(resolveThreadCount(3), 3u);
}

TEST(FileIo, ReadTextFileAndItsErrorsNameTheFile)
{
    probescope::testing::TempDir dir;
    const fs::path file = dir.path() / "small.txt";
    std::ofstream(file) << "hello\n";
    auto text = readTextFile(file);
    ASSERT_TRUE(text.ok()) << text.error().format();
    EXPECT_EQ(*text, "hello\n");
    auto missing = readTextFile(dir.path() / "absent.txt");
    ASSERT_FALSE(missing.ok());
    EXPECT_NE(missing.error().format().find("absent.txt"), std::string::npos);
    EXPECT_EQ(localTimestamp().size(), 14u);
}

TEST(FileIo, LocalTimestampFormatsAGivenTimeInLocalTime)
{
    // The zone is the process's: pin it for the test and put the caller's back.
    const char* before = std::getenv("TZ");
    const std::string saved = before ? before : "";
    setenv("TZ", "UTC0", 1);
    tzset();
    EXPECT_EQ(localTimestamp(std::time_t { 0 }), "19700101000000");
    EXPECT_EQ(localTimestamp(std::time_t { 1767323045 }), "20260102030405");
    EXPECT_EQ(localTimestamp(std::time_t { 1709251199 }), "20240229235959");
    setenv("TZ", "CST-8", 1); // UTC+8, msprobe's usual zone
    tzset();
    EXPECT_EQ(localTimestamp(std::time_t { 1767323045 }), "20260102110405");
    const std::time_t now = std::time(nullptr);
    const std::string stamp = localTimestamp();
    EXPECT_TRUE(stamp == localTimestamp(now) || stamp == localTimestamp(now + 1)) << stamp;
    if (before)
        setenv("TZ", saved.c_str(), 1);
    else
        unsetenv("TZ");
    tzset();
}

TEST(Layout, RunFilesAreFoundAtEveryLevelInOrder)
{
    probescope::testing::TempDir dir;
    const fs::path root = dir.path();
    for (const char* sub : { "", "rank", "step0", "step0/rank1", "step0/rank0", "step10/rank", "step2/rank3" })
        fs::create_directories(root / sub);
    for (const char* sub : { "", "rank", "step0", "step0/rank1", "step0/rank0", "step10/rank", "step2/rank3" })
        std::ofstream(root / sub / "run.csv") << "x\n";
    fs::create_directories(root / "other");
    std::ofstream(root / "other" / "run.csv") << "not in the layout\n";
    const auto found = dump::findInLayout(root, "run.csv");
    std::vector<fs::path> expected;
    for (const char* sub : { "", "rank", "step0", "step0/rank0", "step0/rank1", "step2/rank3", "step10/rank" })
        expected.push_back((root / sub / "run.csv").lexically_normal());
    std::vector<fs::path> normal;
    for (const fs::path& f : found)
        normal.push_back(f.lexically_normal());
    EXPECT_EQ(normal, expected);
    // A file in the layout is itself; another file stands for its folder.
    EXPECT_EQ(dump::findInLayout(root / "step0" / "run.csv", "run.csv"), (std::vector<fs::path> { root / "step0" / "run.csv" }));
    EXPECT_EQ(dump::findInLayout(root / "nothing", "run.csv").size(), 0u);
}

TEST(PyText, JsonStringAsPythonDumpsIt)
{
    // json.dumps("...") in CPython 3 (ensure_ascii=True).
    auto spelled = [](std::string_view s) {
        std::string out;
        appendPyJsonString(out, s);
        return out;
    };
    EXPECT_EQ(spelled("a\"b\\c"), "\"a\\\"b\\\\c\"");
    EXPECT_EQ(spelled("l1\nl2\t\r\b\f"), "\"l1\\nl2\\t\\r\\b\\f\"");
    EXPECT_EQ(spelled(std::string("\x01\x7f", 2)), "\"\\u0001\\u007f\"");
    EXPECT_EQ(spelled("caf\xc3\xa9"), "\"caf\\u00e9\"");                   // one code point, not two bytes
    EXPECT_EQ(spelled("\xe6\xa8\xa1\xe5\x9e\x8b"), "\"\\u6a21\\u578b\""); // 模型
    EXPECT_EQ(spelled("\xf0\x9f\x98\x80"), "\"\\ud83d\\ude00\"");         // a surrogate pair above U+FFFF
    EXPECT_EQ(spelled("\xff"), "\"\\ufffd\"");                             // not UTF-8: the replacement character
}

// Readers of large files give the pages they went past back (dump.json, stack.json): what they read again must be
// the file's bytes.
TEST(MappedFile, ReleasedPagesReadBackFromTheFile)
{
    probescope::testing::TempDir dir;
    const auto path = dir.path() / "big.bin";
    std::string bytes(std::size_t { 3 } << 20, '\0');
    for (std::size_t i = 0; i < bytes.size(); ++i)
        bytes[i] = static_cast<char>('a' + (i * 7919) % 26);
    {
        std::ofstream out(path, std::ios::binary);
        out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    }
    auto file = MappedFile::open(path);
    ASSERT_TRUE(file.ok());
    ASSERT_EQ((*file)->text(), bytes);
    (*file)->release(bytes.size() / 2 + 123);
    EXPECT_EQ((*file)->text(), bytes);
    (*file)->release(bytes.size() * 2); // past the end: the whole file
    EXPECT_EQ((*file)->text(), bytes);
}
