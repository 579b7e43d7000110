// SPDX-License-Identifier: Apache-2.0
// Issue 20: never silently wrong, never stuck, never overwriting. Each numbered case of the issue is
// reproduced here (the CLI reproductions are in tests/cli/reliability.sh).
#include "core/dumpinfo/dumpinfo.h"
#include "core/compare/pipeline/comparerun.h"
#include "core/dump/dumpfile.h"
#include "core/dump/dumplayout.h"
#include "core/dump/loadreport.h"
#include "core/dump/rankdump.h"
#include "core/runut/resumecheck.h"
#include "tempdir.h"
#include "core/tensor/resolver.h"
#include "core/tensor/tensor.h"
#include "fixtureguard.h"
#include "testconfig.h"
#include "core/util/fileio.h"
#include "core/util/outputfile.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <functional>
#include <fstream>
#include <set>
#include <sstream>
#include <sys/stat.h>
#include <thread>

using namespace probescope;
using probescope::testing::TempDir;
namespace fs = std::filesystem;

namespace {

using probescope::testing::readAll;

bool hasId(const Diagnostics& list, std::string_view id)
{
    return std::any_of(list.begin(), list.end(), [&](const Diagnostic& d) { return d.id == id; });
}

const Diagnostic* findId(const Diagnostics& list, std::string_view id)
{
    for (const Diagnostic& d : list) {
        if (d.id == id)
            return &d;
    }
    return nullptr;
}

fs::path tensorPair() { return probescope::testing::fixturesDir() / "modelA_tensor_mix"; }

/// A copy of one side's step0/rank folder (dump.json, construct.json, stack.json and its 2 MB of tensors: a
/// dump_tensor_data linked to another folder is refused since issue 25).
fs::path copyRank(const fs::path& side, const fs::path& to)
{
    const fs::path from = side / "step0" / "rank";
    fs::create_directories(to);
    for (const char* name : { "dump.json", "construct.json", "stack.json" })
        fs::copy_file(from / name, to / name);
    fs::copy(from / "dump_tensor_data", to / "dump_tensor_data", fs::copy_options::recursive);
    // The fixtures are read-only: the copy must be writable (cut files) and removable.
    for (const auto& e : fs::recursive_directory_iterator(to))
        fs::permissions(e.path(), fs::perms::owner_write | fs::perms::owner_read, fs::perm_options::add);
    fs::permissions(to / "dump_tensor_data", fs::perms::owner_all, fs::perm_options::add);
    return to / "dump.json";
}

void cutFile(const fs::path& p, std::size_t bytes)
{
    const std::string text = readAll(p);
    std::ofstream(p, std::ios::binary | std::ios::trunc) << text.substr(0, bytes);
}

compare::JobOptions quickOptions()
{
    compare::JobOptions options;
    options.timestamp = "20260101000000";
    options.threads = 1;
    return options;
}

} // namespace

// ---- 2. output files claimed atomically --------------------------------------------------------

TEST(OutputFile, NeverReplacesAnExistingFile)
{
    TempDir dir;
    const fs::path target = dir.write("result.csv", "user data\n");
    const auto failure = writeFileAtomically(target, "new", ReplaceMode::Never);
    ASSERT_TRUE(failure);
    EXPECT_TRUE(failure->nameTaken);
    EXPECT_EQ(readAll(target), "user data\n");
    // No temporary file is left behind.
    EXPECT_EQ(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator()), 1);
}

TEST(OutputFile, RefusesASymlinkEvenADanglingOne)
{
    TempDir dir;
    const fs::path victim = dir.path() / "victim.txt";
    const fs::path link = dir.path() / "result.csv";
    fs::create_symlink(victim, link); // dangling: victim does not exist yet
    const auto failure = writeFileAtomically(link, "payload", ReplaceMode::Never);
    ASSERT_TRUE(failure);
    EXPECT_TRUE(failure->nameTaken);
    EXPECT_FALSE(fs::exists(victim)); // the link was not followed
    EXPECT_TRUE(fs::is_symlink(fs::symlink_status(link)));

    std::string error;
    const auto written = writeToFreeName(dir.path(), "result", ".csv", "payload", error);
    ASSERT_TRUE(written) << error;
    EXPECT_EQ(written->filename(), "result_1.csv");
    EXPECT_EQ(readAll(*written), "payload");
}

TEST(OutputFile, ConcurrentWritersAllSucceedUnderDifferentNames)
{
    TempDir dir;
    constexpr int kWriters = 8;
    std::vector<std::optional<fs::path>> names(kWriters);
    std::vector<std::thread> threads;
    for (int i = 0; i < kWriters; ++i) {
        threads.emplace_back([&, i] {
            std::string error;
            names[i] = writeToFreeName(dir.path(), "compare_result_x", ".csv", "writer " + std::to_string(i), error);
        });
    }
    for (auto& t : threads)
        t.join();
    std::set<fs::path> distinct;
    for (int i = 0; i < kWriters; ++i) {
        ASSERT_TRUE(names[i]);
        EXPECT_EQ(readAll(*names[i]), "writer " + std::to_string(i)); // nobody overwrote anybody
        distinct.insert(*names[i]);
    }
    EXPECT_EQ(distinct.size(), static_cast<std::size_t>(kWriters));
}

TEST(OutputFile, ErrnoTextNamesFileAndReason)
{
    EXPECT_EQ(errnoText("cannot create", "/x/y.csv", ENOENT), "cannot create /x/y.csv: No such file or directory");
}

TEST(CompareJob, TwoConcurrentRunsIntoOneFolderBothSucceed)
{
    PROBESCOPE_REQUIRE_FIXTURE(tensorPair());
    TempDir dir;
    compare::CompareInput input { tensorPair() / "npu" / "step0" / "rank" / "dump.json",
                                  tensorPair() / "bench" / "step0" / "rank" / "dump.json", std::nullopt };
    // A dangling symlink where the first result would go is never replaced.
    fs::create_symlink(dir.path() / "elsewhere.csv", dir.path() / "compare_result_20260101000000.csv");
    std::optional<Result<std::vector<compare::PairResult>>> a;
    std::optional<Result<std::vector<compare::PairResult>>> b;
    std::thread ta([&] { a.emplace(compare::runCompareJob(input, dir.path(), quickOptions())); });
    std::thread tb([&] { b.emplace(compare::runCompareJob(input, dir.path(), quickOptions())); });
    ta.join();
    tb.join();
    ASSERT_TRUE(*a) << a->error().format();
    ASSERT_TRUE(*b) << b->error().format();
    const fs::path csvA = (**a)[0].csvFile;
    const fs::path csvB = (**b)[0].csvFile;
    EXPECT_NE(csvA, csvB);
    EXPECT_EQ(readAll(csvA), readAll(csvB)); // both complete, same content
    EXPECT_FALSE(fs::exists(dir.path() / "elsewhere.csv"));
    const std::set<std::string> names { csvA.filename().string(), csvB.filename().string() };
    EXPECT_EQ(names, (std::set<std::string> { "compare_result_20260101000000_1.csv", "compare_result_20260101000000_2.csv" }));
}

// ---- 1. compare refuses a truncated or invalid dump unless salvage is asked for -----------------

TEST(CompareJob, RefusesATruncatedBenchDumpWithItsPosition)
{
    PROBESCOPE_REQUIRE_FIXTURE(tensorPair());
    TempDir dir;
    const fs::path bench = copyRank(tensorPair() / "bench", dir.path() / "bench");
    cutFile(bench, 30000); // the issue's reproduction: head -c 30000
    compare::CompareInput input { tensorPair() / "npu" / "step0" / "rank" / "dump.json", bench, std::nullopt };
    auto results = compare::runCompareJob(input, dir.path() / "out", quickOptions());
    ASSERT_TRUE(results) << results.error().format();
    ASSERT_EQ(results->size(), 1u);
    const compare::PairResult& r = (*results)[0];
    EXPECT_TRUE(r.refused);
    EXPECT_TRUE(r.csvFile.empty());
    EXPECT_TRUE(r.table->rows.empty());
    const Diagnostic* cut = findId(r.inputDiagnostics, "dump.truncated");
    ASSERT_NE(cut, nullptr);
    EXPECT_EQ(cut->location.file, bench.string());
    EXPECT_GT(cut->location.line, 1u);
    EXPECT_GT(cut->location.column, 0u);
    EXPECT_FALSE(fs::exists(dir.path() / "out" / "compare_result_20260101000000.csv"));
}

TEST(CompareJob, SalvageSaysWhatWasComparedAndLost)
{
    PROBESCOPE_REQUIRE_FIXTURE(tensorPair());
    TempDir dir;
    const fs::path bench = copyRank(tensorPair() / "bench", dir.path() / "bench");
    cutFile(bench, 30000);
    compare::CompareInput input { tensorPair() / "npu" / "step0" / "rank" / "dump.json", bench, std::nullopt };
    auto options = quickOptions();
    options.salvage = true;
    auto results = compare::runCompareJob(input, dir.path() / "out", options);
    ASSERT_TRUE(results) << results.error().format();
    const compare::PairResult& r = (*results)[0];
    EXPECT_FALSE(r.refused);
    ASSERT_EQ(r.salvaged.size(), 1u);
    EXPECT_NE(r.salvaged[0].find("cut after 30000 bytes"), std::string::npos) << r.salvaged[0];
    EXPECT_NE(r.salvaged[0].find("entries read"), std::string::npos) << r.salvaged[0];
    EXPECT_TRUE(hasErrors(r.inputDiagnostics)); // still an input with errors: the CLI exits 1
    EXPECT_FALSE(r.csvFile.empty());
}

TEST(CompareJob, AnEmptyBenchDumpIsNotACleanResult)
{
    PROBESCOPE_REQUIRE_FIXTURE(tensorPair());
    TempDir dir;
    const fs::path bench = dir.write("bench/dump.json", R"({"task": "tensor", "level": "mix", "data": {}})");
    compare::CompareInput input { tensorPair() / "npu" / "step0" / "rank" / "dump.json", bench, std::nullopt };
    auto results = compare::runCompareJob(input, dir.path() / "out", quickOptions());
    ASSERT_TRUE(results) << results.error().format();
    const compare::PairResult& r = (*results)[0];
    EXPECT_TRUE(r.refused);
    EXPECT_TRUE(hasId(r.inputDiagnostics, "compare.empty-dump"));
    EXPECT_EQ(r.firstFailure.summary.find("no failing node"), std::string::npos);
}

TEST(CompareJob, TypeErrorsThatInfoRejectsAreRefused)
{
    PROBESCOPE_REQUIRE_FIXTURE(tensorPair());
    const std::string original = readAll(tensorPair() / "bench" / "step0" / "rank" / "dump.json");
    struct Case
    {
        std::string from, to, id;
    };
    // The first data_name, the first shape, and a whole entry replaced by a string.
    const std::vector<Case> cases {
        { "\"data_name\": \"", "\"data_name\": 123, \"x_old\": \"", "dump.leaf-type" },
        { "\"shape\": [", "\"shape\": \"4,3,8,8\", \"x_old\": [", "dump.leaf-type" },
        { "\"Norm\": ", "\"Max\": \"abc\", \"Norm\": ", "dump.leaf-type" },
        { "\"input_args\": [", "\"input_args\": \"oops\", \"x\": [", "dump.entry-type" },
    };
    for (const Case& c : cases) {
        TempDir dir;
        const fs::path bench = copyRank(tensorPair() / "bench", dir.path() / "bench");
        std::string text = original;
        const auto at = text.find(c.from);
        ASSERT_NE(at, std::string::npos);
        text.replace(at, c.from.size(), c.to);
        std::ofstream(bench, std::ios::binary | std::ios::trunc) << text;
        compare::CompareInput input { tensorPair() / "npu" / "step0" / "rank" / "dump.json", bench, std::nullopt };
        auto results = compare::runCompareJob(input, dir.path() / "out", quickOptions());
        ASSERT_TRUE(results) << results.error().format();
        EXPECT_TRUE((*results)[0].refused) << c.to;
        EXPECT_TRUE(hasId((*results)[0].inputDiagnostics, c.id)) << c.to;
    }
}

TEST(DumpValidation, AnEntryThatIsNotAnObjectIsAnError)
{
    const std::string text = R"({"task": "statistics", "level": "L1", "data": {"Functional.relu.0.forward": "x"}})";
    auto dump = dump::parseDumpJson(text, "dump.json");
    ASSERT_TRUE(dump);
    const Diagnostic* d = findId((*dump)->diagnostics, "dump.entry-type");
    ASSERT_NE(d, nullptr);
    EXPECT_EQ(d->location.line, 1u);
    EXPECT_EQ(d->location.column, text.find("\"x\"") + 1);
}

TEST(DumpValidation, RenamedAndUnknownKeysAreReported)
{
    const std::string text = "{\"task\": \"statistics\", \"level\": \"L1\", \"data\": {\n"
                             "\"Functional.relu.0.forward\": {\"input_args\": [], \"jutput\": []}}}";
    auto dump = dump::parseDumpJson(text, "dump.json");
    ASSERT_TRUE(dump);
    const Diagnostic* d = findId((*dump)->diagnostics, "dump.unknown-key");
    ASSERT_NE(d, nullptr);
    EXPECT_NE(d->message.find("\"jutput\""), std::string::npos);
    EXPECT_EQ(d->location.line, 2u);
}

TEST(DumpValidation, ANumericLeafTypeIsAnError)
{
    const std::string text = R"({"task": "statistics", "level": "L1", "data": {"Functional.relu.0.forward":
        {"input_args": [{"type": 5, "dtype": "torch.float32", "shape": [2], "Max": 1, "Min": 0, "Mean": 0.5, "Norm": 1}]}}})";
    auto dump = dump::parseDumpJson(text, "dump.json");
    ASSERT_TRUE(dump);
    EXPECT_TRUE(hasId((*dump)->diagnostics, "dump.leaf-type"));
}

// ---- 6. invalid UTF-8 ----------------------------------------------------------------------------

TEST(DumpValidation, InvalidUtf8InAKeyOrValueIsAnErrorWithItsPosition)
{
    // One flipped byte turns "Norm" into invalid UTF-8 (the issue's reproduction): \xce is a lead byte
    // that "o" cannot follow.
    std::string text = "{\"task\": \"statistics\", \"level\": \"L1\", \"data\": {\n"
                       "\"Functional.relu.0.forward\": {\"input_args\": [{\"type\": \"torch.Tensor\", \"dtype\": "
                       "\"torch.float32\", \"shape\": [2], \"Max\": 1, \"Min\": 0, \"Mean\": 0.5, \"N\xcerm\": 1}]}}}";
    auto dump = dump::parseDumpJson(text, "dump.json");
    ASSERT_TRUE(dump);
    const Diagnostic* d = findId((*dump)->diagnostics, "json.utf8");
    ASSERT_NE(d, nullptr);
    EXPECT_EQ(d->location.line, 2u);
    EXPECT_EQ(d->location.column, text.find('\xce') - text.find('\n'));
    EXPECT_NE(d->message.find("0xce"), std::string::npos);

    // Valid multi-byte text (Chinese names, as msprobe's ensure_ascii=False writes them) is fine.
    const std::string ok = "{\"task\": \"statistics\", \"level\": \"L1\", \"data\": {\"Module.\xe6\xa8\xa1\xe5\x9e\x8b"
                           ".Linear.forward.0\": {\"input_args\": []}}}";
    auto good = dump::parseDumpJson(ok, "dump.json");
    ASSERT_TRUE(good);
    EXPECT_FALSE(hasId((*good)->diagnostics, "json.utf8"));
}

TEST(DumpValidation, OverlongAndSurrogateEncodingsAreInvalid)
{
    for (const std::string& bad : { std::string("\xc0\xaf"), std::string("\xed\xa0\x80"), std::string("\xf4\x90\x80\x80"),
                                   std::string("\xe6\xa8") }) {
        const std::string text = "{\"task\": \"statistics\", \"level\": \"L1\", \"data\": {\"Functional.relu.0.forward\": "
                                 "{\"input_args\": [], \"is_recompute\": false, \"output\": [\"" + bad + "\"]}}}";
        auto dump = dump::parseDumpJson(text, "dump.json");
        ASSERT_TRUE(dump);
        EXPECT_TRUE(hasId((*dump)->diagnostics, "json.utf8")) << ::testing::PrintToString(bad);
    }
}

TEST(LoadReport, SaysWhereTheFileWasCutAndHowManyEntriesWereRead)
{
    PROBESCOPE_REQUIRE_FIXTURE(tensorPair());
    TempDir dir;
    const fs::path bench = copyRank(tensorPair() / "bench", dir.path() / "bench");
    cutFile(bench, 30000);
    dump::RankLocation location;
    location.dir = bench.parent_path();
    location.dumpFile = bench;
    auto rank = dump::loadRank(location);
    ASSERT_TRUE(rank);
    const dump::LoadReport report = dump::loadReport(**rank);
    EXPECT_FALSE(report.clean());
    EXPECT_TRUE(report.truncated);
    EXPECT_EQ(report.fileBytes, 30000u);
    EXPECT_EQ(report.entriesRead, (*rank)->dump->entries.size());
    EXPECT_GT(report.entriesRead, 0u);
    EXPECT_NE(report.salvageText().find("cut after 30000 bytes; " + std::to_string(report.entriesRead) + " entries read"),
              std::string::npos)
        << report.salvageText();
}

// ---- 4. FIFOs and the size cap ---------------------------------------------------------------------

TEST(RegularFiles, AFifoIsRefusedAtOnceNotWaitedOn)
{
    TempDir dir;
    const fs::path fifo = dir.path() / "dump.json";
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    // Before the fix each of these blocked forever in open(); ctest's timeout would report it.
    auto mapped = MappedFile::open(fifo);
    ASSERT_FALSE(mapped);
    EXPECT_EQ(mapped.error().id, "io.read");
    EXPECT_NE(mapped.error().message.find("FIFO"), std::string::npos) << mapped.error().message;
    EXPECT_FALSE(readTextFile(fifo));
    EXPECT_FALSE(dump::readDumpJson(fifo));
    EXPECT_FALSE(compare::readCompareJson(fifo));
    const fs::path construct = dir.path() / "construct.json";
    ASSERT_EQ(::mkfifo(construct.c_str(), 0600), 0);
    EXPECT_FALSE(dump::readConstructJson(construct));
}

TEST(RegularFiles, TheJsonSizeCapIsAClearError)
{
    TempDir dir;
    const fs::path file = dir.write("dump.json", R"({"task": "tensor", "level": "L1", "data": {}})");
    EXPECT_GE(maxJsonFileBytes(), 8ull << 30); // the default is far above 1M-entry dumps
    setMaxJsonFileBytes(10);
    auto dump = dump::readDumpJson(file);
    setMaxJsonFileBytes(0); // back to the default
    ASSERT_FALSE(dump);
    EXPECT_EQ(dump.error().id, "io.too-large");
    EXPECT_EQ(dump.error().location.file, file.string());
    EXPECT_NE(dump.error().message.find("PROBESCOPE_MAX_JSON_BYTES"), std::string::npos);
    EXPECT_TRUE(dump::readDumpJson(file));
}

// ---- 3. linear-time zip directory checks ------------------------------------------------------------

namespace {

void put16(std::string& out, std::uint32_t v)
{
    out += static_cast<char>(v & 0xff);
    out += static_cast<char>((v >> 8) & 0xff);
}

void put32(std::string& out, std::uint32_t v)
{
    put16(out, v & 0xffff);
    put16(out, v >> 16);
}

std::uint32_t get32(const std::string& s, std::size_t at)
{
    std::uint32_t v = 0;
    for (int i = 3; i >= 0; --i)
        v = (v << 8) | static_cast<unsigned char>(s[at + static_cast<std::size_t>(i)]);
    return v;
}

/// The issue's reproduction: a torch.save file with `extra` empty stored records appended (names from
/// `nameOf`), rebuilt with a plain (non-zip64) end record.
std::string withExtraRecords(const std::string& pt, std::uint32_t extra, const std::function<std::string(std::uint32_t)>& nameOf)
{
    const std::size_t eocd = pt.rfind(std::string("PK\x05\x06", 4));
    const std::uint32_t entries = static_cast<unsigned char>(pt[eocd + 10]) | (static_cast<unsigned char>(pt[eocd + 11]) << 8);
    const std::uint32_t cdSize = get32(pt, eocd + 12);
    const std::uint32_t cdOffset = get32(pt, eocd + 16);
    std::string out = pt.substr(0, cdOffset);
    std::vector<std::uint32_t> offsets;
    for (std::uint32_t i = 0; i < extra; ++i) {
        offsets.push_back(static_cast<std::uint32_t>(out.size()));
        const std::string name = nameOf(i);
        out += std::string("PK\x03\x04", 4);
        put16(out, 20), put16(out, 0), put16(out, 0), put16(out, 0), put16(out, 0);
        put32(out, 0), put32(out, 0), put32(out, 0);
        put16(out, static_cast<std::uint32_t>(name.size())), put16(out, 0);
        out += name;
    }
    const std::size_t newCd = out.size();
    out += pt.substr(cdOffset, cdSize);
    for (std::uint32_t i = 0; i < extra; ++i) {
        const std::string name = nameOf(i);
        out += std::string("PK\x01\x02", 4);
        put16(out, 20), put16(out, 20), put16(out, 0), put16(out, 0), put16(out, 0), put16(out, 0);
        put32(out, 0), put32(out, 0), put32(out, 0);
        put16(out, static_cast<std::uint32_t>(name.size())), put16(out, 0), put16(out, 0), put16(out, 0), put16(out, 0);
        put32(out, 0), put32(out, offsets[i]);
        out += name;
    }
    const std::size_t cdEnd = out.size();
    out += std::string("PK\x05\x06", 4);
    put16(out, 0), put16(out, 0), put16(out, entries + extra), put16(out, entries + extra);
    put32(out, static_cast<std::uint32_t>(cdEnd - newCd)), put32(out, static_cast<std::uint32_t>(newCd)), put16(out, 0);
    return out;
}

fs::path firstFixturePt()
{
    const fs::path dir = tensorPair() / "npu" / "step0" / "rank" / "dump_tensor_data";
    return dir / "Functional.batch_norm.0.backward.input.0.pt";
}

} // namespace

TEST(PtZip, SixtyFiveThousandRecordsAreReadInLinearTime)
{
    PROBESCOPE_REQUIRE_FIXTURE(firstFixturePt());
    TempDir dir;
    const std::string pt = readAll(firstFixturePt());
    const fs::path many = dir.write("many.pt", withExtraRecords(pt, 65000, [](std::uint32_t i) {
        return "archive/extra/" + std::to_string(i);
    }));
    // Before the fix this took 164 s (quadratic duplicate-name check); the test's ctest TIMEOUT guards it.
    // The result is the tensor (extra records are ignored) or a clear error, never a hang.
    auto plain = tensor::loadPt(firstFixturePt());
    ASSERT_TRUE(plain) << plain.error().format();
    auto loaded = tensor::loadPt(many);
    if (loaded)
        EXPECT_EQ(loaded->shape, plain->shape);
    else
        EXPECT_EQ(loaded.error().id.rfind("tensor.", 0), 0u) << loaded.error().format();
}

TEST(PtZip, CaseInsensitiveTwinsAreStillRefused)
{
    PROBESCOPE_REQUIRE_FIXTURE(firstFixturePt());
    TempDir dir;
    const std::string pt = readAll(firstFixturePt());
    const fs::path twins = dir.write("twins.pt", withExtraRecords(pt, 2, [](std::uint32_t i) {
        return i == 0 ? std::string("archive/Extra") : std::string("archive/eXTRA");
    }));
    auto loaded = tensor::loadPt(twins);
    ASSERT_FALSE(loaded);
    EXPECT_NE(loaded.error().message.find("appears twice"), std::string::npos) << loaded.error().format();
}

// ---- 5. run-ut resume validates the file it resumes ---------------------------------------------------

TEST(RunUtResume, ACutLastLineIsNamedAndTheFileLeftAlone)
{
    TempDir dir;
    const std::string text = "\xEF\xBB\xBF" "API name,Forward Test Success,Backward Test Success,Message\r\n"
                             "Torch.matmul.0,pass,pass,\r\n"
                             "Tensor.transpose.4,pas";
    const fs::path csv = dir.write("accuracy_checking_result_20260101000000.csv", text);
    const auto problem = runut::checkResumableCsv(csv, 3);
    ASSERT_TRUE(problem);
    EXPECT_EQ(problem->id, "runut.resume-malformed");
    EXPECT_EQ(problem->location.file, csv.string());
    EXPECT_EQ(problem->location.line, 3u);
    EXPECT_EQ(problem->location.column, 1u);
    EXPECT_EQ(readAll(csv), text);

    const fs::path whole = dir.write("whole.csv", text.substr(0, text.rfind('\n') + 1));
    EXPECT_FALSE(runut::checkResumableCsv(whole, 3));
    const fs::path shortRow = dir.write("short.csv", text.substr(0, text.rfind('\n') + 1) + "Tensor.add.0,pass\r\n");
    const auto shortProblem = runut::checkResumableCsv(shortRow, 3);
    ASSERT_TRUE(shortProblem);
    EXPECT_EQ(shortProblem->location.line, 3u);
}

// ---- 6. legacy .pkl: invalid UTF-8 and negative shapes ---------------------------------------------

TEST(LegacyPklValidation, InvalidUtf8AndNegativeShapesAreReported)
{
    TempDir dir;
    const fs::path pkl = dir.write("dump.pkl",
                                   "[\"Torch_matmul_0_forward_input.0\", 1, [], \"torch.float32\", [2, 3], [1.5, -1.5, 0.25]]\n"
                                   "[\"Torch_matmul_0_forward_input.1\", 1, [], \"torch.float\xff" "32\", [3, 2], [1.0, -1.0, 0.0]]\n"
                                   "[\"Torch_matmul_0_forward_output\", 1, [], \"torch.float32\", [2, -2], [2.0, -2.0, 0.5]]\n");
    auto dump = dump::readLegacyPkl(pkl);
    ASSERT_TRUE(dump) << dump.error().format();
    const Diagnostic* utf8 = findId((*dump)->diagnostics, "pkl.utf8");
    ASSERT_NE(utf8, nullptr);
    EXPECT_EQ(utf8->location.line, 2u);
    const auto shape = std::find_if((*dump)->diagnostics.begin(), (*dump)->diagnostics.end(), [](const Diagnostic& d) {
        return d.id == "pkl.row" && d.message.find("non-negative") != std::string::npos;
    });
    ASSERT_NE(shape, (*dump)->diagnostics.end());
    EXPECT_EQ(shape->location.line, 3u);
}

// ---- issue 25: the tensor gate ---------------------------------------------------------------------

// In the msprobe 26 profile a .pt cut to 3,000 bytes gave the row "Result pass" and exit 0; every profile now
// reports compare.tensor-unreadable naming the file, and the row says why.
TEST(TensorGate, APtCutTo3000BytesIsAnErrorInBothMsprobeProfiles)
{
    PROBESCOPE_REQUIRE_FIXTURE(tensorPair());
    for (const Profile profile : { Profile::Msprobe12, Profile::Msprobe26 }) {
        SCOPED_TRACE(std::string(profileName(profile)));
        TempDir dir;
        const fs::path bench = copyRank(tensorPair() / "bench", dir.path() / "bench");
        const fs::path victim = bench.parent_path() / "dump_tensor_data" / "Functional.gelu.0.forward.input.0.pt";
        ASSERT_GT(fs::file_size(victim), 3000u);
        cutFile(victim, 3000);
        compare::CompareInput input { tensorPair() / "npu" / "step0" / "rank" / "dump.json", bench, std::nullopt };
        compare::JobOptions options = quickOptions();
        options.profile = profile;
        auto results = compare::runCompareJob(input, dir.path() / "out", options);
        ASSERT_TRUE(results) << results.error().format();
        ASSERT_EQ(results->size(), 1u);
        const compare::PairResult& r = (*results)[0];
        ASSERT_FALSE(r.refused);
        const Diagnostic* unreadable = findId(r.inputDiagnostics, "compare.tensor-unreadable");
        ASSERT_NE(unreadable, nullptr);
        EXPECT_NE(unreadable->message.find("Functional.gelu.0.forward.input.0.pt"), std::string::npos)
            << unreadable->message;
        const auto& table = *r.table;
        const int result = table.column("Result");
        const int message = table.column("Err_message");
        ASSERT_GE(message, 0);
        bool seen = false;
        for (std::size_t i = 0; i < table.rows.size(); ++i) {
            if (table.rows[i][0].asString() != "Functional.gelu.0.forward.input.0")
                continue;
            seen = true;
            EXPECT_NE(table.rows[i][static_cast<std::size_t>(message)].asString().find("unreadable"), std::string::npos);
            if (result >= 0) {
                EXPECT_NE(table.rows[i][static_cast<std::size_t>(result)].asString(), "pass");
            }
        }
        EXPECT_TRUE(seen);
    }
}

// A dump_tensor_data that is a link to the other side's folder compared the NPU with the bench's own tensors ("no
// failing node"): the tensor folder must lie inside its dump folder, so the pair is refused with tensor.path-escape.
TEST(TensorGate, ATensorFolderLinkedToTheOtherSidesIsRefused)
{
    PROBESCOPE_REQUIRE_FIXTURE(tensorPair());
    TempDir dir;
    const fs::path npu = copyRank(tensorPair() / "npu", dir.path() / "npu");
    const fs::path bench = copyRank(tensorPair() / "bench", dir.path() / "bench");
    fs::remove_all(dir.path() / "npu" / "dump_tensor_data");
    fs::create_directory_symlink(dir.path() / "bench" / "dump_tensor_data", dir.path() / "npu" / "dump_tensor_data");
    for (const Profile profile : { Profile::Msprobe12, Profile::Msprobe26 }) {
        SCOPED_TRACE(std::string(profileName(profile)));
        compare::JobOptions options = quickOptions();
        options.profile = profile;
        auto results = compare::runCompareJob(compare::CompareInput { npu, bench, std::nullopt }, dir.path() / "out", options);
        ASSERT_TRUE(results) << results.error().format();
        ASSERT_EQ(results->size(), 1u);
        EXPECT_TRUE((*results)[0].refused);
        const Diagnostic* escape = findId((*results)[0].inputDiagnostics, "tensor.path-escape");
        ASSERT_NE(escape, nullptr);
        EXPECT_NE(escape->location.file.find("npu/dump_tensor_data"), std::string::npos) << escape->format();
    }
    // info --verify reads through the same resolver (issue 33): the bench's tensors are not verified as the NPU's.
    auto location = dump::discoverDump(npu);
    ASSERT_TRUE(location) << location.error().format();
    auto rank = dump::loadRank(location->ranks.at(0));
    ASSERT_TRUE(rank) << rank.error().format();
    dumpinfo::InfoOptions verify;
    verify.verifyTensors = true;
    const dumpinfo::RankInfo info = dumpinfo::inspectRank(**rank, verify);
    const Diagnostic* escape = findId(info.diagnostics, "tensor.path-escape");
    ASSERT_NE(escape, nullptr) << "info --verify read the tensors of a folder linked out of the dump";
    EXPECT_EQ(info.filesVerified, 0u);
    std::size_t escapes = 0;
    for (const Diagnostic& d : info.diagnostics)
        escapes += d.id == "tensor.path-escape";
    EXPECT_EQ(escapes, 1u) << "said once, not once per tensor";
    // The same dump with its own folder verifies.
    fs::remove(dir.path() / "npu" / "dump_tensor_data");
    fs::copy(tensorPair() / "npu" / "step0" / "rank" / "dump_tensor_data", dir.path() / "npu" / "dump_tensor_data",
             fs::copy_options::recursive);
    auto clean = dump::loadRank(location->ranks.at(0));
    ASSERT_TRUE(clean);
    const dumpinfo::RankInfo ok = dumpinfo::inspectRank(**clean, verify);
    EXPECT_EQ(findId(ok.diagnostics, "tensor.path-escape"), nullptr);
    EXPECT_GT(ok.filesVerified, 0u);
}

// The resolver: names and folders stay inside the dump folder; the folder itself may be a link that stays inside.
TEST(TensorGate, TheResolverKeepsNamesAndFoldersInsideTheDump)
{
    TempDir dir;
    fs::create_directories(dir.path() / "dump/real");
    fs::create_directories(dir.path() / "other/dump_tensor_data");
    std::ofstream(dir.path() / "dump/real/a.npy") << "x";
    std::ofstream(dir.path() / "other/dump_tensor_data/a.npy") << "x";
    fs::create_directory_symlink("real", dir.path() / "dump/inside");
    fs::create_directory_symlink(dir.path() / "other/dump_tensor_data", dir.path() / "dump/outside");
    const tensor::TensorResolver inside(dir.path() / "dump", dir.path() / "dump/inside");
    EXPECT_FALSE(inside.folderProblem());
    EXPECT_TRUE(inside.resolve("a.npy"));
    EXPECT_EQ(inside.resolve("../outside/a.npy").error().id, "tensor.path-escape");
    EXPECT_EQ(inside.resolve("missing.npy").error().id, "tensor.missing");
    const tensor::TensorResolver outside(dir.path() / "dump", dir.path() / "dump/outside");
    ASSERT_TRUE(outside.folderProblem());
    EXPECT_EQ(outside.folderProblem()->id, "tensor.path-escape");
    EXPECT_EQ(outside.resolve("a.npy").error().id, "tensor.path-escape");
    EXPECT_EQ(outside.load("a.npy").error().id, "tensor.path-escape");
    // A folder that does not exist is no escape: its files are missing.
    const tensor::TensorResolver none(dir.path() / "dump", dir.path() / "dump/none");
    EXPECT_FALSE(none.folderProblem());
    EXPECT_EQ(none.resolve("a.npy").error().id, "tensor.missing");
}

// Issue 37: `probescope-cli info` prints each rank as it is inspected (formatInfoHead of discovery's table, then
// formatRankInfo of each rank's inspectLocation): the same text as formatInfo over discoverDump's layout and
// inspectLayout, a broken rank and the layout's warnings included.
TEST(DumpInfo, PrintedRankByRankIsTheSameText)
{
    TempDir dir;
    const std::string dump = R"({"task": "statistics", "level": "L1", "framework": "pytorch", "data": {)"
                             R"("Torch.add.0.forward": {"input_args": [], "output": []}}})";
    for (const char* step : { "step0", "step1" }) {
        for (const char* rank : { "rank0", "rank1", "rank2" })
            dir.write(std::string("dump/") + step + "/" + rank + "/dump.json", dump);
    }
    dir.write("dump/step1/rank3/dump.json", R"({"task": "statistics", "data": {"Torch.add.0.forward": )");
    std::filesystem::create_directories(dir.path() / "dump" / "step1" / "rank4"); // no dump: a layout warning
    auto layout = dump::discoverDump(dir.path() / "dump");
    ASSERT_TRUE(layout.ok()) << layout.error().format();
    ASSERT_EQ(layout->ranks.size(), 7u);
    ASSERT_FALSE(layout->diagnostics.empty());

    auto table = dump::discoverCompact(dir.path() / "dump"); // as the CLI walks it
    ASSERT_TRUE(table.ok()) << table.error().format();
    std::string streamed = dumpinfo::formatInfoHead(*table);
    bool errors = false;
    for (std::size_t i = 0; i < table->ranks.size(); ++i) {
        const dumpinfo::RankInfo info = dumpinfo::inspectLocation(table->ranks.at(i));
        streamed += dumpinfo::formatRankInfo(info);
        errors = errors || hasErrors(info.diagnostics);
    }
    const std::string whole = dumpinfo::formatInfo(*layout, dumpinfo::inspectLayout(*layout));
    EXPECT_EQ(streamed, whole);
    EXPECT_TRUE(errors); // the truncated rank3
    EXPECT_NE(whole.find("steps: 2 (0, 1)   ranks: 4   rank dumps: 7"), std::string::npos) << whole;
    EXPECT_NE(whole.find("step1/rank4"), std::string::npos) << whole;
}

// Issue 37: the resolver checks its folder when first used, not when made (a statistics dump never uses it): a
// folder that became a link leaving the dump after the resolver was made is refused all the same, by every thread
// that asks first at once.
TEST(TensorGate, TheResolverChecksItsFolderWhenFirstUsed)
{
    TempDir dir;
    fs::create_directories(dir.path() / "dump");
    fs::create_directories(dir.path() / "other/dump_tensor_data");
    std::ofstream(dir.path() / "other/dump_tensor_data/a.npy") << "x";
    const auto made = tensor::makeTensorResolver(dir.path() / "dump", dir.path() / "dump/dump_tensor_data");
    const tensor::TensorResolver direct(dir.path() / "dump", dir.path() / "dump/dump_tensor_data");
    fs::create_directory_symlink(dir.path() / "other/dump_tensor_data", dir.path() / "dump/dump_tensor_data");
    std::vector<std::string> ids(8);
    std::vector<std::thread> threads;
    for (std::size_t t = 0; t < ids.size(); ++t) {
        threads.emplace_back([&, t] {
            const tensor::TensorResolver& r = t % 2 ? direct : *made;
            auto file = r.resolve("a.npy");
            ids[t] = file ? "resolved " + file->path.string() : file.error().id;
        });
    }
    for (auto& th : threads)
        th.join();
    for (const std::string& id : ids)
        EXPECT_EQ(id, "tensor.path-escape");
    ASSERT_TRUE(direct.folderProblem());
    EXPECT_EQ(direct.folderProblem()->id, "tensor.path-escape");
    EXPECT_EQ(made->load("a.npy").error().id, "tensor.path-escape");
    EXPECT_FALSE(made->folderExists());
}
